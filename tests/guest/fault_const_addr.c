/*
 * Loads and stores at addresses known when the block is translated (lui or
 * auipc, then the access): xlat emits them without a window check, so an
 * unmapped page inside the window must still give SIGSEGV at the exact
 * address and pc, and one outside it must too.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>

static sigjmp_buf jb;
static volatile uint64_t f_addr, f_pc;

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    f_addr = (uint64_t)si->si_addr;
    f_pc = ((ucontext_t *)ucv)->uc_mcontext.__gregs[0];
    siglongjmp(jb, 1);
}

extern char ld_at[], sd_at[], ld_far_at[];
uint64_t global_word = 0x1234;

static void probe(const char *what, void (*fn)(void), const char *insn)
{
    if (sigsetjmp(jb, 1) == 0) {
        fn();
        printf("%s: no fault\n", what);
        return;
    }
    printf("%s: SIGSEGV at 0x%llx, pc %s\n", what, (unsigned long long)f_addr,
           f_pc == (uint64_t)(uintptr_t)insn ? "exact" : "WRONG");
}

static __attribute__((noinline)) void load_unmapped(void)
{
    __asm__ volatile("lui t1, 0x7123\n\t"
                     "addi t1, t1, 8\n"
                     "ld_at:\n\t"
                     "ld t2, 16(t1)" ::: "t1", "t2", "memory");
}

static __attribute__((noinline)) void store_unmapped(void)
{
    __asm__ volatile("lui t1, 0x7123\n"
                     "sd_at:\n\t"
                     "sw zero, -4(t1)" ::: "t1", "memory");
}

static __attribute__((noinline)) void load_far(void)
{
    __asm__ volatile("lui t1, 0x80000\n"           /* 0xffffffff80000000 */
                     "ld_far_at:\n\t"
                     "ld t2, 0(t1)" ::: "t1", "t2", "memory");
}

int main(void)
{
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
    sigaction(SIGSEGV, &sa, NULL);
    probe("ld through lui", load_unmapped, ld_at);
    probe("sw through lui", store_unmapped, sd_at);
    probe("ld far through lui", load_far, ld_far_at);

    uint64_t v;
    __asm__ volatile("lla t1, global_word\n\t"
                     "ld %0, 0(t1)\n\t"
                     "addi %0, %0, 1\n\t"
                     "sd %0, 0(t1)" : "=&r"(v) : : "t1", "memory");
    printf("global through auipc: 0x%llx\n", (unsigned long long)global_word);
    return 0;
}
