/*
 * 32-bit results left unextended (--tune narrow): a translated addw,
 * slliw, ... may skip the sign extension when only 32-bit operations read
 * its result before it is overwritten. Each kernel below is a case where
 * the upper half is (or is not) read: the inputs have bit 31 set, so a
 * missing extension changes every printed value.
 * - only 32-bit consumers, through or/xor/add/sll/mul (may stay narrow),
 * - the result itself returned (live at the block end),
 * - read whole by srli, srai, slt, a branch, sd, an address, after
 *   passing through or/add/mv (the taint must follow),
 * - a shift amount and a mulw operand (low bits only),
 * - a faulting load after a 32-bit result: the handler prints it,
 * - a side exit with the value live on one side only.
 * Each kernel runs many times, so that it is translated.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

uint64_t k_w_only(uint64_t a, uint64_t b);
uint64_t k_live_out(uint64_t a, uint64_t b);
uint64_t k_srli(uint64_t a, uint64_t b);
uint64_t k_srai_after_add(uint64_t a, uint64_t b);
uint64_t k_slt_after_or(uint64_t a, uint64_t b);
uint64_t k_branch(uint64_t a, uint64_t b);
uint64_t k_store(uint64_t a, uint64_t b, uint64_t *p);
uint64_t k_address(uint64_t a, uint64_t b, const uint8_t *base);
uint64_t k_mv_out(uint64_t a, uint64_t b);
uint64_t k_shift_amount(uint64_t a, uint64_t b);
uint64_t k_side_exit(uint64_t a, uint64_t b);
uint64_t k_fault(uint64_t a, uint64_t b, uint64_t *p);

__asm__(
    ".text\n"
    /* sigma-like: every 32-bit result feeds or/xor/sll/mul, then a 32-bit op */
    ".globl k_w_only\n k_w_only:\n"
    "slliw t0, a0, 7\n srliw t1, a0, 3\n or t2, t0, t1\n sraiw t3, a1, 5\n"
    "xor t2, t2, t3\n sll t4, t2, a1\n mul t5, t4, t0\n addw t6, t5, t2\n"
    "subw t0, t6, a1\n sllw t1, t0, a0\n srlw t3, t1, a1\n sraw t4, t3, a0\n"
    "mulw a0, t4, t0\n addiw a0, a0, 0\n li t0, 0\n li t1, 0\n li t2, 0\n li t3, 0\n"
    "li t4, 0\n li t5, 0\n li t6, 0\n ret\n"

    ".globl k_live_out\n k_live_out:\n addw a0, a0, a1\n ret\n"

    ".globl k_srli\n k_srli:\n slliw t0, a0, 4\n srli a0, t0, 28\n li t0, 0\n ret\n"

    ".globl k_srai_after_add\n k_srai_after_add:\n"
    "addw t0, a0, a1\n add t1, t0, a1\n srai a0, t1, 20\n li t0, 0\n li t1, 0\n ret\n"

    ".globl k_slt_after_or\n k_slt_after_or:\n"
    "subw t0, a0, a1\n ori t1, t0, 1\n slt a0, t1, zero\n li t0, 0\n li t1, 0\n ret\n"

    ".globl k_branch\n k_branch:\n"
    "addw t0, a0, a1\n xor t1, t0, a1\n li t0, 0\n bltz t1, 1f\n li a0, 1\n ret\n"
    "1: li a0, 2\n ret\n"

    ".globl k_store\n k_store:\n"
    "addiw t0, a0, 5\n and t1, t0, a1\n sd t1, 0(a2)\n li t0, 0\n li t1, 0\n li a0, 0\n ret\n"

    /* a 32-bit index, used whole as an address offset: a sign extension
     * that goes missing makes it point 4 GiB away */
    ".globl k_address\n k_address:\n"
    "addw t0, a0, a1\n add t1, a2, t0\n lbu a0, 0(t1)\n li t0, 0\n li t1, 0\n ret\n"

    ".globl k_mv_out\n k_mv_out:\n"
    "slliw t0, a0, 1\n mv t1, t0\n li t0, 0\n addi a0, t1, 0\n li t1, 0\n ret\n"

    ".globl k_shift_amount\n k_shift_amount:\n"
    "addw t0, a0, a1\n sll t1, a1, t0\n srlw t2, a0, t0\n mulw t3, t0, t0\n"
    "xor t1, t1, t2\n xor a0, t1, t3\n li t0, 0\n li t2, 0\n li t3, 0\n ret\n"

    /* the 32-bit result is dead on the fall-through side only */
    ".globl k_side_exit\n k_side_exit:\n"
    "addw t0, a0, a1\n andi t2, a1, 1\n beqz t2, 1f\n li t0, 0\n li a0, 3\n ret\n"
    "1: mv a0, t0\n li t0, 0\n ret\n"

    /* t0 is overwritten after the load: the handler must see it extended */
    ".globl k_fault\n k_fault:\n"
    "addw t0, a0, a1\n ld t1, 0(a2)\n li t0, 0\n add a0, t1, a1\n ret\n");

static sigjmp_buf jb;
static volatile uint64_t seen_t0;

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
    (void)sig; (void)si;
    ucontext_t *uc = uc_;
    seen_t0 = uc->uc_mcontext.__gregs[5];          /* [n] = xn: t0 is x5 */
    siglongjmp(jb, 1);
}

#define RUNS 40

int main(void)
{
    static const uint64_t as[4] = { 0x89abcdefull, 0xfffffffff0f0f0f1ull,
                                    0x7fffffffull, 0x123456789abcdef0ull };
    static const uint64_t bs[4] = { 0x7654321ull, 0x80000000ull, 3, 0xdeadbeefcafef00dull };
    uint64_t sum[12] = { 0 };
    for (int r = 0; r < RUNS; r++) {
        for (int i = 0; i < 4; i++) {
            uint64_t a = as[i] + (uint64_t)r, b = bs[(i + r) % 4];
            uint64_t cell = 0;
            sum[0] += k_w_only(a, b);
            sum[1] += k_live_out(a, b);
            sum[2] += k_srli(a, b);
            sum[3] += k_srai_after_add(a, b);
            sum[4] += k_slt_after_or(a, b);
            sum[5] += k_branch(a, b);
            k_store(a, b, &cell);
            sum[6] += cell;
            sum[7] += k_mv_out(a, b);
            sum[8] += k_shift_amount(a, b);
            sum[9] += k_side_exit(a, b);
            sum[10] += k_fault(a, b, &cell);
        }
    }
    static const char *const names[11] = {
        "32-bit consumers only", "live at the end", "srli", "srai after add",
        "slt after or", "branch after xor", "sd after and", "mv then addi",
        "shift amount, mulw", "side exit", "fault kernel, no fault",
    };
    for (int i = 0; i < 11; i++)
        printf("%-24s %016llx\n", names[i], (unsigned long long)sum[i]);

    /* 0x80000010 + 0x7ffffff0 = 0 in 32 bits; 0x10 - 0x20 = -16 */
    static uint8_t bytes[64];
    for (int i = 0; i < 64; i++)
        bytes[i] = (uint8_t)(i * 3 + 1);
    uint64_t asum = 0;
    for (int r = 0; r < RUNS; r++)
        asum += k_address(0x10 + (uint64_t)(r % 8), (uint64_t)-0x10, bytes + 32) +
                k_address(0x10, (uint64_t)-0x20 + (uint64_t)(r % 8), bytes + 32);
    printf("%-24s %016llx\n", "address", (unsigned long long)asum);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(jb, 1) == 0) {
        k_fault(0x80000000ull, 0x12345, (uint64_t *)16);
        printf("no fault?\n");
    } else {
        printf("t0 at the fault: %016llx\n", (unsigned long long)seen_t0);
    }
    return 0;
}
