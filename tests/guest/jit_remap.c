/*
 * Blocks that keep guest registers living in CPUState (t3..t6, s3..s5) in
 * host registers their code leaves free (--tune remap): the values must be
 * right after every way out of such a block, and in a signal frame taken
 * inside one. Each kernel below computes with t3..t6 (six uses and more in
 * its first basic block, so the block takes them) while registers the
 * block does not use give up their host registers: ra and sp (the signal
 * frame is built from sp), and s0, s1, a1, a2 if more are needed, which
 * hold known values checked at the end:
 * - a loop with a side exit taken every fourth trip,
 * - a system call (getpid) in the middle,
 * - an AMO (run by the interpreter) in the middle,
 * - an indirect jump out,
 * - a load that faults in the middle: the handler prints the registers.
 * Each kernel runs several times first, so that it is translated.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

uint64_t k_loop(uint64_t n);
uint64_t k_syscall(uint64_t x);
uint64_t k_amo(uint64_t x, uint64_t *p);
uint64_t k_indirect(uint64_t x);
uint64_t k_fault(uint64_t *p);

/* The known values of the registers that give up their host registers. */
#define S0 "0x5a5a0001"
#define S1 "0x5a5a0002"
#define A1 "0x5a5a0003"
#define A2 "0x5a5a0004"

/* Save s0/s1, set s0, s1, a1, a2, start t3..t6 from a0; the block that
 * follows (after the j) uses t3..t6 heavily and s0, s1, a1, a2 not at all. */
#define PROLOGUE \
    "addi sp, sp, -16\n sd s0, 0(sp)\n sd s1, 8(sp)\n" \
    "li s0, " S0 "\n li s1, " S1 "\n li a1, " A1 "\n li a2, " A2 "\n" \
    "mv t3, a0\n addi t4, a0, 1\n addi t5, a0, 2\n addi t6, a0, 3\n j 1f\n 1:\n"
/* Fold t3..t6 and s0, s1, a1, a2 (must still hold their values) into a0. */
#define EPILOGUE \
    "add t3, t3, t4\n add t5, t5, t6\n xor t3, t3, t5\n mv a0, t3\n" \
    "li t0, " S0 "\n bne s0, t0, 9f\n li t0, " S1 "\n bne s1, t0, 9f\n" \
    "li t0, " A1 "\n bne a1, t0, 9f\n li t0, " A2 "\n bne a2, t0, 9f\n j 8f\n" \
    "9: li a0, -1\n" \
    "8: ld s0, 0(sp)\n ld s1, 8(sp)\n addi sp, sp, 16\n ret\n"
#define MIX \
    "add t3, t3, t4\n xor t4, t4, t5\n add t5, t5, t6\n xor t6, t6, t3\n" \
    "slli t3, t3, 1\n srli t4, t4, 1\n add t5, t5, t3\n sub t6, t6, t4\n"

__asm__(
    ".text\n .globl k_loop\n k_loop:\n" PROLOGUE
    "mv t2, a0\n"
    "2:\n" MIX
    "andi t0, t2, 3\n beqz t0, 3f\n"          /* side exit every fourth trip */
    MIX "addi t2, t2, -1\n bnez t2, 2b\n j 4f\n"
    "3:\n addi t3, t3, 7\n xori t4, t4, 9\n addi t2, t2, -1\n bnez t2, 2b\n"
    "4:\n" EPILOGUE

    ".globl k_syscall\n k_syscall:\n" PROLOGUE MIX
    "mv t1, a0\n li a7, 172\n ecall\n sltu a0, zero, a0\n add t3, t3, a0\n mv a0, t1\n"
    MIX EPILOGUE

    ".globl k_amo\n k_amo:\n mv t1, a1\n" PROLOGUE MIX
    "amoadd.d t0, t3, (t1)\n add t4, t4, t0\n"
    MIX EPILOGUE

    ".globl k_indirect\n k_indirect:\n" PROLOGUE MIX
    "la t1, 5f\n jr t1\n"
    "5:\n" MIX EPILOGUE

    ".globl k_fault\n k_fault:\n" PROLOGUE
    "mv t1, a0\n li t3, 0x33\n li t4, 0x44\n li t5, 0x55\n li t6, 0x66\n"
    "add t3, t3, t3\n add t4, t4, t4\n add t5, t5, t5\n add t6, t6, t6\n"
    "ld t0, 0(t1)\n"                          /* faults when t1 is bad */
    "add t3, t3, t0\n add t4, t4, t3\n add t5, t5, t4\n add t6, t6, t5\n"
    EPILOGUE);

static sigjmp_buf jb;
static volatile uint64_t seen[9];

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
    (void)sig; (void)si;
    ucontext_t *uc = uc_;
    unsigned long *r = uc->uc_mcontext.__gregs;     /* [0] = pc, [n] = xn */
    const int regs[9] = { 28, 29, 30, 31, 8, 9, 11, 12, 1 };  /* t3..t6, s0, s1, a1, a2, ra */
    for (int i = 0; i < 9; i++)
        seen[i] = r[regs[i]];
    siglongjmp(jb, 1);
}

int main(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < 6; i++)
        sum += k_loop(40 + (uint64_t)i);
    printf("loop: %llx\n", (unsigned long long)sum);

    sum = 0;
    for (int i = 0; i < 6; i++)
        sum += k_syscall((uint64_t)i * 3);
    printf("syscall: %llx\n", (unsigned long long)sum);

    uint64_t cell = 1;
    sum = 0;
    for (int i = 0; i < 6; i++)
        sum += k_amo((uint64_t)i, &cell);
    printf("amo: %llx, cell %llx\n", (unsigned long long)sum, (unsigned long long)cell);

    sum = 0;
    for (int i = 0; i < 6; i++)
        sum += k_indirect((uint64_t)i);
    printf("indirect: %llx\n", (unsigned long long)sum);

    uint64_t ok = 7;
    sum = 0;
    for (int i = 0; i < 6; i++)
        sum += k_fault(&ok);
    printf("fault kernel, no fault: %llx\n", (unsigned long long)sum);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(jb, 1) == 0) {
        k_fault((uint64_t *)16);
        printf("no fault?\n");
    } else {
        printf("registers at the fault: t3 %llx t4 %llx t5 %llx t6 %llx\n",
               (unsigned long long)seen[0], (unsigned long long)seen[1],
               (unsigned long long)seen[2], (unsigned long long)seen[3]);
        printf("  s0 %llx s1 %llx a1 %llx a2 %llx, ra is main's: %s\n",
               (unsigned long long)seen[4], (unsigned long long)seen[5],
               (unsigned long long)seen[6], (unsigned long long)seen[7],
               seen[8] > (uint64_t)(uintptr_t)main && seen[8] < (uint64_t)(uintptr_t)main + 4096
                   ? "yes" : "no");
    }
    return 0;
}
