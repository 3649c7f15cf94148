/*
 * JIT audit (rv8 style): every instruction of the table, translated and run
 * by the JIT, against the interpreter (the golden model) from the same
 * random state.
 *
 * For each table entry: random instruction words (the entry's match bits
 * plus random operand bits, kept if they decode to that entry), plus random
 * 16-bit compressed words. Each is stored in a code page otherwise filled
 * with ecall, so the JIT runs exactly the instruction (and, for a jump, the
 * target's ecall) and stops. Registers get random values (with a bias to
 * corner cases, and for memory instructions a base register that points
 * into a data page, or anywhere, or near the window's end). Both engines
 * start from the same CPUState and data page; then pc, x[], f[], fflags,
 * the reservation, the exit reason and fault details, and the data page
 * must be equal. A mismatch prints the instruction, the state and both
 * results. Rewriting the code page each time also exercises the JIT's
 * write-protection (self-modifying code) path.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "exec/exec.h"
#include "riscv/cpu.h"
#include "riscv/insn.h"
#include "user/fault.h"
#include "user/mm.h"
#include "user/options.h"

__attribute__((weak)) Options opt;

#define CODE     0x10000ULL         /* one page, RWX, all ecall but the test slot */
#define SLOT     (CODE + 0x800)
#define DATA     0x40000ULL         /* 8 KiB RW */
#define DATA_LEN 0x2000ULL
#define ECALL    0x00000073u

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t rnd_value(void)
{
    static const uint64_t special[] = {
        0, 1, 2, (uint64_t)-1, (uint64_t)-2, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
        0x7fffffff, 0x80000000, 0xffffffff, 0xffffffff80000000ULL, 31, 32, 63, 64,
        0x100000000ULL, 0xff, 0x8000, 0xffff,
    };
    switch (rnd() % 4) {
    case 0:  return special[rnd() % (sizeof special / sizeof special[0])];
    case 1:  return rnd() & 0xff;
    default: return rnd();
    }
}

static int failures, cases;

static void dump(const char *what, const CPUState *c, enum exit_reason r)
{
    printf("  %s: exit %d pc %#llx fflags %#x fault %d/%d@%#llx res %d:%#llx\n", what, r,
           (unsigned long long)c->pc, c->fflags, c->fault_signal, c->fault_code,
           (unsigned long long)c->fault_addr, c->res_valid, (unsigned long long)c->res_addr);
    for (int i = 0; i < 32; i++)
        printf("    x%-2d %016llx%s", i, (unsigned long long)c->x[i], i % 4 == 3 ? "\n" : "");
    for (int i = 0; i < 32; i++)
        printf("    f%-2d %016llx%s", i, (unsigned long long)c->f[i], i % 4 == 3 ? "\n" : "");
}

static bool same(const CPUState *a, enum exit_reason ra, const CPUState *b, enum exit_reason rb)
{
    /* The JIT stops at the ecall after the instruction, the interpreter
     * right after it: both at the same pc. */
    /* A jump to a target that is not an ecall: the JIT goes on and stops
     * (fetch fault, illegal...) at the target, where the interpreter is. */
    bool normal_a = ra == EXIT_ECALL || (rb == EXIT_NONE && a->pc != SLOT && a->pc == b->pc &&
                                         a->fault_addr == a->pc);
    bool normal_b = rb == EXIT_NONE;
    if (normal_a != normal_b && !(ra == rb))
        return false;
    if (!normal_a && ra != rb)
        return false;
    if (a->pc != b->pc || memcmp(a->x, b->x, sizeof a->x) || memcmp(a->f, b->f, sizeof a->f) ||
        a->fflags != b->fflags || a->frm != b->frm || a->res_valid != b->res_valid ||
        (a->res_valid && (a->res_addr != b->res_addr || a->res_val != b->res_val)))
        return false;
    if (!normal_a && (a->fault_signal != b->fault_signal || a->fault_code != b->fault_code ||
                      a->fault_addr != b->fault_addr))
        return false;
    return true;
}

static bool is_mem(const Insn *in)
{
    switch (insn_table[in->op].fmt) {
    case FMT_L: case FMT_S: case FMT_LR: case FMT_AMO: case FMT_FL: case FMT_FS:
        return in->op != OP_jalr;
    default:
        return false;
    }
}

/* Run one instruction word through both engines and compare. */
static void audit_word(uint32_t word, const Insn *in)
{
    static uint8_t data0[DATA_LEN], data_jit[DATA_LEN];
    CPUState init;
    memset(&init, 0, sizeof init);
    for (int i = 1; i < 32; i++)
        init.x[i] = rnd_value();
    for (int i = 0; i < 32; i++)
        init.f[i] = rnd() % 3 ? rnd() : 0xffffffff00000000ULL | (rnd() & 0xffffffff);
    init.fflags = rnd() & 0x1f;
    init.frm = rnd() % 5;
    if (is_mem(in) && rnd() % 8) {
        /* Base register into the data page (aligned half the time). */
        uint64_t off = rnd() % (DATA_LEN - 16);
        if (rnd() % 2)
            off &= ~7ULL;
        init.x[in->rs1] = DATA + off - (uint64_t)(insn_table[in->op].fmt == FMT_LR ||
                                                   insn_table[in->op].fmt == FMT_AMO ? 0 : in->imm);
        if (in->rs1 == 0)
            init.x[0] = 0;
    } else if (is_mem(in) && rnd() % 2) {
        init.x[in->rs1] = GUEST_SPACE_SIZE - (rnd() % 64);     /* the window's end */
    }
    if (rnd() % 4 == 0) {                                      /* a live reservation */
        init.res_valid = true;
        init.res_addr = init.x[in->rs1];
        init.res_val = rnd_value();
    }
    init.pc = SLOT;
    for (size_t i = 0; i < DATA_LEN; i++)
        data0[i] = (uint8_t)rnd();

    /* Code: the word (or halfword) in the slot. Host writes to a
     * write-protected code page go through the SMC fault path. */
    if ((word & 3) == 3) {
        memcpy(g2h(SLOT), &word, 4);
    } else {
        uint32_t w = (word & 0xffff) | (ECALL & 0xffff0000u);  /* keep the page valid after it */
        memcpy(g2h(SLOT), &w, 2);
        uint16_t tail[3] = { 0x0073, 0x0000, 0x0073 };         /* ecall realigned at SLOT+2 */
        memcpy(g2h(SLOT + 2), tail, sizeof tail);
    }

    /* One CPUState for the JIT across cases: it owns this thread's jump cache. */
    static CPUState jit;
    struct JCEntry *jc = jit.jc;
    uint64_t mask = jit.jc_mask, limit = jit.guest_limit;
    jit = init;
    jit.jc = jc;
    jit.jc_mask = mask;
    jit.guest_limit = limit;
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason rj = exec_run(&jit);
    memcpy(data_jit, g2h(DATA), DATA_LEN);

    CPUState ref = init;
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason ri = interp_step(&ref);

    cases++;
    if (!same(&jit, rj, &ref, ri) || memcmp(data_jit, g2h(DATA), DATA_LEN)) {
        if (++failures <= 10) {
            char text[96];
            insn_disasm(in, SLOT, text, sizeof text);
            printf("FAIL %s (%#x): %s\n", insn_table[in->op].name, word, text);
            dump("initial", &init, EXIT_NONE);
            dump("jit", &jit, rj);
            dump("interp", &ref, ri);
            if (memcmp(data_jit, g2h(DATA), DATA_LEN))
                printf("  data page differs\n");
        }
    }
    /* Back to a page of ecalls (random stores may have hit it too). */
    static uint32_t ecalls[GUEST_PAGE_SIZE / 4];
    if (!ecalls[0])
        for (size_t i = 0; i < GUEST_PAGE_SIZE / 4; i++)
            ecalls[i] = ECALL;
    if (memcmp(g2h(CODE), ecalls, sizeof ecalls))
        memcpy(g2h(CODE), ecalls, sizeof ecalls);
}

static bool skip(const Insn *in)
{
    if (in->op == OP_ecall)
        return true;                            /* the stop marker itself */
    if (insn_table[in->op].fmt == FMT_CSR || insn_table[in->op].fmt == FMT_CSRI)
        return ((unsigned)in->imm & 0xfff) == CSR_TIME;     /* not reproducible */
    return false;
}

int main(int argc, char **argv)
{
    int per_op = argc > 1 ? atoi(argv[1]) : 300;
    opt.log_file = stdout;
    if (getenv("AUDIT_LOG"))
        opt.log_mask = LOG_IN_ASM;          /* show what the JIT translated */
    mm_init();
    fault_init();
    exec_init();
    if (guest_map_fixed(CODE, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, "code") != 0 ||
        guest_map_fixed(DATA, DATA_LEN, PROT_READ | PROT_WRITE, "data") != 0) {
        printf("FAIL: guest_map_fixed\n");
        return 1;
    }
    for (uint64_t a = CODE; a < CODE + GUEST_PAGE_SIZE; a += 4)
        memcpy(g2h(a), &(uint32_t){ ECALL }, 4);

    for (int op = 1; op < OP_COUNT; op++) {
        int done = 0;
        for (int tries = 0; done < per_op && tries < per_op * 20; tries++) {
            uint32_t word = insn_table[op].match | ((uint32_t)rnd() & ~insn_table[op].mask);
            Insn in;
            if (!insn_decode(word, &in) || in.op != op || skip(&in))
                continue;
            audit_word(word, &in);
            done++;
        }
    }
    /* Compressed forms (and reserved 16-bit encodings). */
    for (int i = 0; i < per_op * 40; i++) {
        uint32_t half = (uint32_t)rnd() & 0xffff;
        if ((half & 3) == 3)
            continue;
        Insn in;
        insn_decode(half, &in);
        if (skip(&in))
            continue;
        audit_word(half, &in);
    }
    printf("jit audit: %d cases, %d mismatches\n", cases, failures);
    return failures ? 1 : 0;
}
