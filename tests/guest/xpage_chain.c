/*
 * Cross-page chaining stays exact (--tune xpage): blocks whose direct exits
 * lead into another page (a fall-through over the page end, and a jal) are
 * run until chained, then the target page is unmapped (the next call must
 * fault there, not run the stale chained code), remapped with new code (the
 * new code must run), made non-executable (fault), made executable again,
 * and rewritten in place while writable and executable (the new code runs).
 * No cache flush anywhere: the mmap/munmap/mprotect calls and the stores
 * themselves must invalidate, as they do under qemu-riscv64.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define PAGE 4096
#define A0 10
#define RA 1

static uint32_t addi(int rd, int rs1, int imm) { return (uint32_t)(imm & 0xfff) << 20 | (uint32_t)rs1 << 15 | (uint32_t)rd << 7 | 0x13; }
static uint32_t jal0(int32_t off)
{
    uint32_t i = (uint32_t)off;
    return ((i >> 20) & 1) << 31 | ((i >> 1) & 0x3ff) << 21 | ((i >> 11) & 1) << 20 |
           ((i >> 12) & 0xff) << 12 | 0x6f;
}
static const uint32_t RET = 0x00008067;      /* jalr x0, 0(ra) */

static uint8_t *base;                         /* page A, then page B */
static sigjmp_buf jb;
static volatile uintptr_t fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    fault_addr = (uintptr_t)si->si_addr;
    siglongjmp(jb, 1);
}

typedef long (*fn)(long);

/* Run f many times (so the exits get chained); the result, or -1 on SIGSEGV
 * with the fault address in page B. */
static long run(fn f)
{
    long r = 0;
    fault_addr = 0;
    if (sigsetjmp(jb, 1))
        return fault_addr - (uintptr_t)(base + PAGE) < PAGE ? -1 : -2;
    for (int i = 0; i < 2000; i++)
        r = f(0);
    return r;
}

/* Page B: a0 += k at its start, a0 += 100 * k at +16; then return. */
static void write_b(uint8_t *b, int k)
{
    uint32_t *p = (uint32_t *)b;
    p[0] = addi(A0, A0, k);
    p[1] = RET;
    p[4] = addi(A0, A0, 100 * k);
    p[5] = RET;
}

static void map_b(int k)
{
    uint8_t *b = mmap(base + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (b != base + PAGE) {
        perror("mmap B");
        _exit(1);
    }
    write_b(b, k);
    mprotect(b, PAGE, PROT_READ | PROT_EXEC);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);

    base = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* Page A: at its end, a0 += 1 and fall through into B; before that,
     * a0 += 1000 and jal into B + 16. */
    uint32_t *a_end = (uint32_t *)(base + PAGE);
    a_end[-2] = addi(A0, A0, 1);
    a_end[-1] = addi(0, 0, 0);
    a_end[-6] = addi(A0, A0, 1000);
    a_end[-5] = jal0(5 * 4 + 16);
    write_b(base + PAGE, 2);
    mprotect(base, 2 * PAGE, PROT_READ | PROT_EXEC);
    fn fall = (fn)(void *)(a_end - 2), jump = (fn)(void *)(a_end - 6);

    printf("initial: fall %ld jump %ld\n", run(fall), run(jump));

    munmap(base + PAGE, PAGE);
    printf("B unmapped: fall %ld jump %ld\n", run(fall), run(jump));

    map_b(5);
    printf("B remapped: fall %ld jump %ld\n", run(fall), run(jump));

    mprotect(base + PAGE, PAGE, PROT_READ);
    printf("B not executable: fall %ld jump %ld\n", run(fall), run(jump));

    mprotect(base + PAGE, PAGE, PROT_READ | PROT_EXEC);
    printf("B executable again: fall %ld jump %ld\n", run(fall), run(jump));

    /* Rewritten in place while chained: writable and executable. */
    mprotect(base + PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
    printf("B rwx: fall %ld jump %ld\n", run(fall), run(jump));
    write_b(base + PAGE, 7);
    printf("B rewritten: fall %ld jump %ld\n", run(fall), run(jump));
    return 0;
}
