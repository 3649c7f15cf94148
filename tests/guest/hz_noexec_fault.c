/*
 * Hazard: a block is translated and run, then its page is made
 * non-executable (mprotect PROT_READ|PROT_WRITE): the next call must fault
 * at the exact pc, with si_addr the pc (SEGV_ACCERR). Also a block that
 * runs across a page boundary, whose second page alone loses PROT_EXEC:
 * the fault is at the first instruction of that page, after the first
 * page's instructions ran. Offsets are printed relative to the mapping.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static sigjmp_buf jb;
static volatile uintptr_t f_addr, f_pc, f_a0;
static volatile int f_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    f_addr = (uintptr_t)si->si_addr;
    f_code = si->si_code;
    f_pc = ((ucontext_t *)uc)->uc_mcontext.__gregs[0];
    f_a0 = ((ucontext_t *)uc)->uc_mcontext.__gregs[10];
    siglongjmp(jb, 1);
}

#define ADDI_A0_1 ((1u << 20) | (10 << 15) | (10 << 7) | 0x13)
#define INSN_RET  0x00008067u

static void call(const char *what, uint8_t *base, uint32_t *entry, long a0)
{
    if (sigsetjmp(jb, 1) == 0) {
        long r = ((long (*)(long))(uintptr_t)entry)(a0);
        printf("%s: returned %ld\n", what, r);
    } else {
        printf("%s: SIGSEGV code %d at +%#lx, pc +%#lx, a0 %ld\n", what, f_code,
               (unsigned long)(f_addr - (uintptr_t)base), (unsigned long)(f_pc - (uintptr_t)base),
               (long)f_a0);
    }
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);

    uint8_t *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    /* One page: a0 += 3; ret. */
    uint32_t *f = (uint32_t *)(m + 0x100);
    f[0] = ADDI_A0_1; f[1] = ADDI_A0_1; f[2] = ADDI_A0_1; f[3] = INSN_RET;
    __builtin___clear_cache((char *)f, (char *)(f + 4));
    for (int i = 0; i < 3; i++)
        call("page exec", m, f, 10);
    mprotect(m, 4096, PROT_READ | PROT_WRITE);
    call("page no-exec", m, f, 10);
    call("page no-exec again", m, f, 10);
    mprotect(m, 4096, PROT_READ | PROT_EXEC);
    call("page exec again", m, f, 20);

    /* Across pages: 4 instructions at the end of page 1, 2 on page 2. */
    uint32_t *g = (uint32_t *)(m + 2 * 4096 - 16);
    for (int i = 0; i < 5; i++)
        g[i] = ADDI_A0_1;
    g[5] = INSN_RET;
    __builtin___clear_cache((char *)g, (char *)(g + 6));
    for (int i = 0; i < 3; i++)
        call("cross-page exec", m, g, 0);
    mprotect(m + 2 * 4096, 4096, PROT_READ | PROT_WRITE);
    call("second page no-exec", m, g, 0);
    mprotect(m + 2 * 4096, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);
    call("second page exec again", m, g, 100);
    munmap(m + 2 * 4096, 4096);
    call("second page unmapped", m, g, 0);
    return 0;
}
