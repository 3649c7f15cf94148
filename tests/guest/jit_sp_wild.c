/*
 * sp outside the guest window in translated code: sp is an ordinary
 * register to the guest, and a translator that trusted it (say, checking
 * it once per block, or only where it is written) would let its accesses
 * escape. Each probe sets sp (by mv, addi, a load), then loads or stores
 * through it: the access must fault at exactly sp + offset (SIGSEGV on an
 * alternate stack, as the kernel delivers it with sp wild), or, for a value
 * inside the window, succeed; and sp set out and brought back without an
 * access must change nothing. Six rounds: the blocks are translated, not
 * only interpreted.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static sigjmp_buf jb;
static volatile uintptr_t fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    fault_addr = (uintptr_t)si->si_addr;
    siglongjmp(jb, 1);
}

/* sp = v (mv), then ld 16(sp) */
__attribute__((noinline)) static uint64_t ld_via_mv(uintptr_t v)
{
    uint64_t r;
    __asm__ volatile("mv t0, sp\n\tmv sp, %1\n\tld %0, 16(sp)\n\tmv sp, t0"
                     : "=&r"(r) : "r"(v) : "t0", "memory");
    return r;
}

/* sp = *p (a load into sp), then sd to 8(sp) */
__attribute__((noinline)) static void sd_via_load(const uintptr_t *p)
{
    __asm__ volatile("mv t0, sp\n\tld sp, 0(%0)\n\tsd zero, 8(sp)\n\tmv sp, t0"
                     : : "r"(p) : "t0", "memory");
}

/* sp = v, walked by addi, then lw 0(sp) */
__attribute__((noinline)) static uint64_t lw_via_addi(uintptr_t v)
{
    uint64_t r;
    __asm__ volatile("mv t0, sp\n\tmv sp, %1\n\taddi sp, sp, 2047\n\taddi sp, sp, -2047\n\t"
                     "lw %0, 0(sp)\n\tmv sp, t0"
                     : "=&r"(r) : "r"(v) : "t0", "memory");
    return r;
}

/* sp out of the window and back, no access: the stack must still work */
__attribute__((noinline)) static uint64_t out_and_back(uintptr_t v, uint64_t x)
{
    uint64_t r;
    __asm__ volatile("mv t0, sp\n\tmv sp, %1\n\taddi sp, sp, 64\n\tmv sp, t0\n\t"
                     "addi sp, sp, -16\n\tsd %2, 8(sp)\n\tld %0, 8(sp)\n\taddi sp, sp, 16"
                     : "=&r"(r) : "r"(v), "r"(x) : "t0", "memory");
    return r;
}

int main(void)
{
    stack_t ss = { .ss_sp = malloc(65536), .ss_size = 65536 };
    sigaltstack(&ss, NULL);
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);

    static uint64_t inside[4] = { 11, 22, 33, 44 };
    const uintptr_t wild[] = {
        (1ULL << 39) + 8, (1ULL << 39) - 16, (1ULL << 38) + 64, 0x1000, (uintptr_t)-16,
        (uintptr_t)-4096, (uintptr_t)inside,
    };
    /* (Not 1 << 63: qemu-riscv64 on x86 reports si_addr 0 for non-canonical
     * host addresses; Linux on riscv64 and xlat give the address.) */
    for (int round = 0; round < 6; round++) {
        for (unsigned i = 0; i < sizeof wild / sizeof wild[0]; i++) {
            uintptr_t v = wild[i];
            const char *what[] = { "ld 16 after mv", "sd 8 after ld", "lw 0 after addi" };
            for (int k = 0; k < 3; k++) {
                fault_addr = 0;
                uint64_t r = 0;
                if (sigsetjmp(jb, 1) == 0) {
                    if (k == 0)
                        r = ld_via_mv(v);
                    else if (k == 1)
                        sd_via_load(&v);
                    else
                        r = lw_via_addi(v);
                    if (round == 5)
                        printf("sp %#lx: %s: no fault (%llu)\n",
                               (unsigned long)(v == (uintptr_t)inside ? 1 : v), what[k],
                               (unsigned long long)r);
                } else if (round == 5) {
                    printf("sp %#lx: %s: SIGSEGV at %#lx\n", (unsigned long)(v == (uintptr_t)inside ? 1 : v),
                           what[k], (unsigned long)fault_addr);
                }
            }
            uint64_t back = out_and_back(v, 1000 + i);
            if (round == 5)
                printf("sp %#lx: out and back: %llu\n", (unsigned long)(v == (uintptr_t)inside ? 1 : v),
                       (unsigned long long)back);
        }
    }
    return 0;
}
