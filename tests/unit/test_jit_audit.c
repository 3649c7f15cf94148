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
 * write-protection (self-modifying code) path. Then random sequences of
 * instructions with forward branches inside them (audit_seq), run to
 * their final ecall by both engines.
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

/*
 * FP register values: random bits, and (half the time) special doubles and
 * NaN-boxed singles: zeros, infinities, quiet and signaling NaNs,
 * subnormals, the extremes, values at integer conversion boundaries.
 */
static uint64_t rnd_fp(void)
{
    static const uint64_t special_d[] = {
        0, 0x8000000000000000ULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL,
        0x7ff8000000000000ULL, 0x7ff4000000000000ULL, 0xfff8000000000001ULL,
        0x0000000000000001ULL, 0x000fffffffffffffULL, 0x8008000000000000ULL,
        0x0010000000000000ULL, 0x7fefffffffffffffULL, 0x3ff0000000000000ULL,
        0xbfe0000000000000ULL, 0x41e0000000000000ULL, 0xc1e0000000000000ULL,
        0x41f0000000000000ULL, 0x43e0000000000000ULL, 0xc3e0000000000000ULL,
        0x43f0000000000000ULL, 0x41dfffffffc00000ULL, 0x3fe0000000000001ULL,
        0x36a0000000000000ULL, 0x47e0000000000000ULL, 0x3810000000000000ULL,
    };
    static const uint32_t special_s[] = {
        0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00000, 0xffc00001,
        0x00000001, 0x007fffff, 0x80400000, 0x00800000, 0x7f7fffff, 0x3f800000,
        0xbf000000, 0x4f000000, 0xcf000000, 0x4f800000, 0x5f000000, 0xdf000000,
        0x5f800000, 0x3f000001, 0x0d800000, 0x71000000,
    };
    switch (rnd() % 6) {
    case 0:  return special_d[rnd() % (sizeof special_d / sizeof special_d[0])];
    case 1:  return 0xffffffff00000000ULL | special_s[rnd() % (sizeof special_s / sizeof special_s[0])];
    case 2:  return 0xffffffff00000000ULL | (rnd() & 0xffffffff);
    case 3:  /* a small-magnitude double: products and sums stay normal or go subnormal */
        return (rnd() & 0x800fffffffffffffULL) | ((uint64_t)(0x3c0 + rnd() % 0x80) << 52);
    default: return rnd();
    }
}

static int failures, cases;

/*
 * A vCPU with init's architectural state and the one exec state (jump
 * cache, decode cache) every case shares: exec_cpu_init'd once, not per
 * case (each would map its own caches).
 */
static CPUState exec_state;

static void load_state(CPUState *c, const CPUState *init)
{
    static bool ready;
    if (!ready) {
        exec_cpu_init(&exec_state);
        ready = true;
    }
    *c = *init;
    c->guest_limit = exec_state.guest_limit;
    c->jc = c->jc_probe = exec_state.jc;
    c->jc_sets = exec_state.jc_sets;
    c->jc_flags = exec_state.jc_flags;
    c->jc_offset_mask = exec_state.jc_offset_mask;
    c->dcache = exec_state.dcache;
}

/* After a run: keep the decode cache it may have mapped. */
static void keep_state(const CPUState *c)
{
    exec_state.dcache = c->dcache;
}

static void dump(const char *what, const CPUState *c, enum exit_reason r)
{
    printf("  %s: exit %d pc %#llx fflags %#x fault %d/%d@%#llx res %d:%#llx\n", what, r,
           (unsigned long long)c->pc, c->fflags, c->fault.kind, c->fault.access,
           (unsigned long long)c->fault.addr, c->res_valid, (unsigned long long)c->res_addr);
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
    bool stop_at_pc = ra == EXIT_ILLEGAL || ra == EXIT_EBREAK ||
                      (ra == EXIT_FAULT && a->fault.addr == a->pc);
    bool normal_a = ra == EXIT_ECALL || (rb == EXIT_NONE && a->pc != SLOT && a->pc == b->pc &&
                                         stop_at_pc);
    bool normal_b = rb == EXIT_NONE;
    if (normal_a != normal_b && !(ra == rb))
        return false;
    if (!normal_a && ra != rb)
        return false;
    if (a->pc != b->pc || memcmp(a->x, b->x, sizeof a->x) || memcmp(a->f, b->f, sizeof a->f) ||
        a->fflags != b->fflags || a->frm != b->frm || a->res_valid != b->res_valid ||
        (a->res_valid && (a->res_addr != b->res_addr || a->res_val != b->res_val)))
        return false;
    if (!normal_a && ra == EXIT_FAULT &&
        (a->fault.kind != b->fault.kind || a->fault.access != b->fault.access ||
         a->fault.addr != b->fault.addr))
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
        init.f[i] = rnd_fp();
    init.fflags = rnd() % 2 ? 0 : rnd() & 0x1f;
    init.frm = rnd() % 8 ? rnd() % 4 : rnd() % 8;           /* mostly valid modes */
    if (is_mem(in) && rnd() % 8) {
        /* Base register into the data page (aligned half the time). */
        uint64_t off = rnd() % (DATA_LEN - 16);
        if (rnd() % 2)
            off &= ~7ULL;
        init.x[in->rs1] = DATA + off - (uint64_t)(insn_table[in->op].fmt == FMT_LR ||
                                                   insn_table[in->op].fmt == FMT_AMO ? 0 : in->imm);
        if (in->rs1 == 0)
            init.x[0] = 0;
    } else if (is_mem(in) && rnd() % 2 && in->rs1 != 0) {     /* x0 stays 0 */
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

    CPUState jit;
    load_state(&jit, &init);
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason rj = exec_run(&jit);
    keep_state(&jit);
    memcpy(data_jit, g2h(DATA), DATA_LEN);

    CPUState ref;
    load_state(&ref, &init);
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason ri = interp_step(&ref);
    keep_state(&ref);

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

/* -- Random sequences ---------------------------------------------------------- */

/*
 * Random runs of 32-bit instructions with forward branches inside the run,
 * ending in an ecall: the JIT (whole blocks, chained) against interp_run
 * from the same state. x5 is the memory base (DATA + 0x800, never written),
 * so loads, stores and atomics hit the data page; no CSRs (time, cycle and
 * instret are not reproducible), no jumps (no way back into the run).
 */
#define SEQ_BASE 5

static bool seq_allowed(const Insn *in)
{
    switch (insn_table[in->op].fmt) {
    case FMT_CSR: case FMT_CSRI: case FMT_J: case FMT_NONE:
        return false;
    case FMT_L:
        if (in->op == OP_jalr)
            return false;
        break;
    default:
        break;
    }
    return in->op != OP_illegal && in->rd != SEQ_BASE;
}

/* B-type word with offset off (bytes, even, |off| < 4096). */
static uint32_t set_branch_offset(uint32_t w, int32_t off)
{
    uint32_t u = (uint32_t)off;
    w &= 0x01fff07fu;
    w |= ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 | ((u >> 1) & 0xf) << 8 |
         ((u >> 11) & 1) << 7;
    return w;
}

static uint32_t seq_word(int i, int n)
{
    for (;;) {
        int op = 1 + (int)(rnd() % (OP_COUNT - 1));
        if ((insn_table[op].match & 3) != 3)
            continue;                                   /* 32-bit encodings only */
        uint32_t w = insn_table[op].match | ((uint32_t)rnd() & ~insn_table[op].mask);
        Insn in;
        if (!insn_decode(w, &in) || in.op != op)
            continue;
        enum insn_format f = insn_table[op].fmt;
        if (f == FMT_L || f == FMT_S || f == FMT_FL || f == FMT_FS || f == FMT_LR ||
            f == FMT_AMO)
            w = (w & ~(31u << 15)) | SEQ_BASE << 15;
        if (f == FMT_B)                                 /* forward, at most to the ecall */
            w = set_branch_offset(w, 4 * (1 + (int)(rnd() % (uint64_t)(n - i))));
        if (!insn_decode(w, &in) || in.op != op || !seq_allowed(&in))
            continue;
        return w;
    }
}

static void audit_seq(void)
{
    static uint8_t data0[DATA_LEN], data_jit[DATA_LEN];
    int n = 2 + (int)(rnd() % 30);
    uint32_t words[33];
    for (int i = 0; i < n; i++)
        words[i] = seq_word(i, n);
    words[n] = ECALL;
    memcpy(g2h(SLOT), words, 4 * (size_t)(n + 1));

    CPUState init;
    memset(&init, 0, sizeof init);
    for (int i = 1; i < 32; i++)
        init.x[i] = rnd_value();
    init.x[SEQ_BASE] = DATA + 0x800;
    for (int i = 0; i < 32; i++)
        init.f[i] = rnd_fp();
    init.fflags = rnd() % 2 ? 0 : rnd() & 0x1f;
    init.frm = rnd() % 8 ? rnd() % 4 : rnd() % 8;
    init.pc = SLOT;
    for (size_t i = 0; i < DATA_LEN; i++)
        data0[i] = (uint8_t)rnd();

    CPUState jit;
    load_state(&jit, &init);
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason rj = exec_run(&jit);
    keep_state(&jit);
    memcpy(data_jit, g2h(DATA), DATA_LEN);

    CPUState ref;
    load_state(&ref, &init);
    memcpy(g2h(DATA), data0, DATA_LEN);
    enum exit_reason ri = interp_run(&ref);
    keep_state(&ref);

    cases++;
    if (!same(&jit, rj, &ref, ri) || rj != ri || memcmp(data_jit, g2h(DATA), DATA_LEN)) {
        if (++failures <= 10) {
            printf("FAIL sequence of %d:\n", n);
            for (int i = 0; i < n; i++) {
                Insn in;
                char text[96];
                insn_decode(words[i], &in);
                insn_disasm(&in, SLOT + 4 * (uint64_t)i, text, sizeof text);
                printf("  %#llx: %08x %s\n", (unsigned long long)(SLOT + 4 * (uint64_t)i),
                       words[i], text);
            }
            dump("initial", &init, EXIT_NONE);
            dump("jit", &jit, rj);
            dump("interp", &ref, ri);
            if (memcmp(data_jit, g2h(DATA), DATA_LEN))
                printf("  data page differs\n");
        }
    }
    static uint32_t ecalls[GUEST_PAGE_SIZE / 4];
    if (!ecalls[0])
        for (size_t i = 0; i < GUEST_PAGE_SIZE / 4; i++)
            ecalls[i] = ECALL;
    memcpy(g2h(CODE), ecalls, sizeof ecalls);
}

static bool skip(const Insn *in)
{
    if (in->op == OP_ecall)
        return true;                            /* the stop marker itself */
    if ((insn_table[in->op].fmt == FMT_B || insn_table[in->op].fmt == FMT_J) && in->imm == 0)
        return true;                            /* a jump to itself never reaches the ecall */
    if (insn_table[in->op].fmt == FMT_CSR || insn_table[in->op].fmt == FMT_CSRI)
        return ((unsigned)in->imm & 0xfff) == CSR_TIME;     /* not reproducible */
    return false;
}

int main(int argc, char **argv)
{
    int per_op = argc > 1 ? atoi(argv[1]) : 300;
    log_file = stdout;
    if (getenv("AUDIT_LOG"))
        log_mask = LOG_IN_ASM;          /* show what the JIT translated */
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
    /* Random sequences with branches. */
    int single = cases;
    for (int i = 0; i < per_op * 10; i++)
        audit_seq();
    printf("jit audit: %d single-instruction cases, %d sequences, %d mismatches\n", single,
           cases - single, failures);
    return failures ? 1 : 0;
}
