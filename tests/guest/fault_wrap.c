/*
 * Loads just below guest address 0 (a small base register, a negative
 * displacement) wrap around to the top of the address space, where nothing
 * is mapped: SIGSEGV with si_addr the wrapped address, also for a load that
 * straddles 2^64. Under xlat with the guest window at host address 0 these
 * addresses are the host kernel's (no guard below the window), so the host
 * fault must still map to exactly this guest fault. Each load runs six
 * times: its block is translated, not only interpreted.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

static sigjmp_buf jb;
static volatile uintptr_t fault_addr;
static volatile int fault_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    fault_addr = (uintptr_t)si->si_addr;
    fault_code = si->si_code;
    siglongjmp(jb, 1);
}

__attribute__((noinline)) static void ld_minus8(uintptr_t b)
{
    uint64_t v;
    __asm__ volatile("ld %0, -8(%1)" : "=r"(v) : "r"(b) : "memory");
}

__attribute__((noinline)) static void lw_minus2(uintptr_t b)
{
    uint64_t v;
    __asm__ volatile("lw %0, -2(%1)" : "=r"(v) : "r"(b) : "memory");
}

__attribute__((noinline)) static void sb_minus2048(uintptr_t b)
{
    __asm__ volatile("sb zero, -2048(%0)" : : "r"(b) : "memory");
}

static void probe(const char *what, void (*fn)(uintptr_t), uintptr_t base, int report)
{
    if (sigsetjmp(jb, 1) == 0) {
        fn(base);
        printf("%s(%lu): no fault\n", what, (unsigned long)base);
    } else if (report) {
        printf("%s(%lu): SIGSEGV si_addr %#lx code %d\n", what, (unsigned long)base,
               (unsigned long)fault_addr, fault_code);
    }
}

int main(void)
{
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    static const uintptr_t bases[] = { 0, 1, 4, 2047 };
    for (int round = 0; round < 6; round++)
        for (unsigned i = 0; i < sizeof bases / sizeof bases[0]; i++) {
            probe("ld -8", ld_minus8, bases[i], round == 5);
            probe("lw -2", lw_minus2, bases[i], round == 5);
            probe("sb -2048", sb_minus2048, bases[i], round == 5);
        }
    return 0;
}
