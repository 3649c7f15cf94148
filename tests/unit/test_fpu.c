/*
 * Host tests for the RISC-V F/D semantics (fpu.c through interp_fp()).
 *
 *   test_fpu          hand-computed corner cases, then a randomized
 *                     comparison against the host SSE unit in the four
 *                     rounding modes x86 shares with RISC-V
 *   test_fpu FILE     also check every vector in FILE, made by running
 *                     tests/guest/fp_vectors.c under qemu-riscv64:
 *                       qemu-riscv64 ./fp_vectors -v 3000 > FILE
 *
 *   test_fpu -cases   print the hand-made cases as "name rm a b c", to be
 *                     run through `qemu-riscv64 fp_vectors -c` and fed back
 *                     as a FILE (checks the expectations themselves)
 *
 * Exit status 0 when everything matches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "riscv/fpu.h"
#include "riscv/interp.h"

static int failures;

#define FAIL(...) do { if (failures++ < 50) printf(__VA_ARGS__); } while (0)

/* -- Running one instruction ---------------------------------------------- */

static enum insn_op op_by_name(const char *name)
{
    char dotted[32];
    snprintf(dotted, sizeof dotted, "%s", name);
    for (char *p = dotted; *p; p++)
        if (*p == '_')
            *p = '.';
    for (int op = 1; op < OP_COUNT; op++)
        if (strcmp(insn_table[op].name, dotted) == 0)
            return op;
    fprintf(stderr, "test_fpu: unknown instruction %s\n", name);
    exit(2);
}

static bool writes_x(enum insn_op op)
{
    enum insn_format f = insn_table[op].fmt;
    return f == FMT_FCMP || f == FMT_XF_RM || f == FMT_XF;
}

/*
 * Execute `op` with rm (instruction field) and frm on operands a, b, c
 * (f5, f6, f7; a is also x5 for integer sources). Result from f3 or x3.
 */
typedef struct Run {
    uint64_t result;
    uint32_t flags;
    enum exit_reason exit;
    bool untouched;     /* no register or flag changed */
} Run;

static Run run(enum insn_op op, unsigned rm, unsigned frm, uint64_t a, uint64_t b, uint64_t c)
{
    CPUState cpu;
    memset(&cpu, 0, sizeof cpu);
    for (int i = 0; i < 32; i++) {
        cpu.f[i] = 0x5555555555555555ull * (i + 1);
        cpu.x[i] = i ? 0xaaaaaaaaaaaaaaaaull + i : 0;
    }
    cpu.f[5] = a; cpu.f[6] = b; cpu.f[7] = c;
    cpu.x[5] = a;
    cpu.frm = frm;
    CPUState before = cpu;
    Insn in = { .op = op, .len = 4, .rd = 3, .rs1 = 5, .rs2 = 6, .rs3 = 7, .rm = rm };

    Run r = { .exit = interp_fp(&cpu, &in) };
    r.result = writes_x(op) ? cpu.x[3] : cpu.f[3];
    r.flags = cpu.fflags;
    r.untouched = memcmp(&cpu, &before, sizeof cpu) == 0;
    return r;
}

/* -- Hand-computed corner cases ------------------------------------------- */

#define B 0xffffffff00000000ull     /* NaN-box for singles */
enum { NV = FFLAG_NV, DZ = FFLAG_DZ, OF = FFLAG_OF, UF = FFLAG_UF, NX = FFLAG_NX };

typedef struct Case {
    const char *name;
    unsigned rm;
    uint64_t a, b, c, expect;
    uint32_t flags;
} Case;

static const Case cases[] = {
    /* 1/3 in each mode, single and double, both signs. */
    { "fdiv_s", 0, B|0x3f800000, B|0x40400000, 0, B|0x3eaaaaab, NX },
    { "fdiv_s", 1, B|0x3f800000, B|0x40400000, 0, B|0x3eaaaaaa, NX },
    { "fdiv_s", 2, B|0x3f800000, B|0x40400000, 0, B|0x3eaaaaaa, NX },
    { "fdiv_s", 3, B|0x3f800000, B|0x40400000, 0, B|0x3eaaaaab, NX },
    { "fdiv_s", 4, B|0x3f800000, B|0x40400000, 0, B|0x3eaaaaab, NX },
    { "fdiv_s", 2, B|0xbf800000, B|0x40400000, 0, B|0xbeaaaaab, NX },
    { "fdiv_s", 3, B|0xbf800000, B|0x40400000, 0, B|0xbeaaaaaa, NX },
    { "fdiv_d", 0, 0x3ff0000000000000, 0x4008000000000000, 0, 0x3fd5555555555555, NX },
    { "fdiv_d", 3, 0x3ff0000000000000, 0x4008000000000000, 0, 0x3fd5555555555556, NX },
    { "fdiv_d", 4, 0x3ff0000000000000, 0x4008000000000000, 0, 0x3fd5555555555555, NX },
    /* Ties: 1 + 2^-24 and (1 + 2^-23) + 2^-24, and negative. */
    { "fadd_s", 0, B|0x3f800000, B|0x33800000, 0, B|0x3f800000, NX },
    { "fadd_s", 1, B|0x3f800000, B|0x33800000, 0, B|0x3f800000, NX },
    { "fadd_s", 2, B|0x3f800000, B|0x33800000, 0, B|0x3f800000, NX },
    { "fadd_s", 3, B|0x3f800000, B|0x33800000, 0, B|0x3f800001, NX },
    { "fadd_s", 4, B|0x3f800000, B|0x33800000, 0, B|0x3f800001, NX },
    { "fadd_s", 0, B|0x3f800001, B|0x33800000, 0, B|0x3f800002, NX },
    { "fadd_s", 4, B|0x3f800001, B|0x33800000, 0, B|0x3f800002, NX },
    { "fadd_s", 1, B|0x3f800001, B|0x33800000, 0, B|0x3f800001, NX },
    { "fsub_s", 4, B|0xbf800000, B|0x33800000, 0, B|0xbf800001, NX },
    { "fsub_s", 0, B|0xbf800000, B|0x33800000, 0, B|0xbf800000, NX },
    { "fsub_s", 2, B|0xbf800000, B|0x33800000, 0, B|0xbf800001, NX },
    { "fsub_s", 3, B|0xbf800000, B|0x33800000, 0, B|0xbf800000, NX },
    { "fadd_d", 4, 0x3ff0000000000000, 0x3ca0000000000000, 0, 0x3ff0000000000001, NX },
    { "fadd_d", 0, 0x3ff0000000000000, 0x3ca0000000000000, 0, 0x3ff0000000000000, NX },
    /* Subnormal results: exact (no UF), tie (UF), tininess after rounding. */
    { "fmul_s", 0, B|0x00800000, B|0x3f000000, 0, B|0x00400000, 0 },
    { "fmul_s", 0, B|0x00800001, B|0x3f000000, 0, B|0x00400000, UF|NX },
    { "fmul_s", 4, B|0x00800001, B|0x3f000000, 0, B|0x00400001, UF|NX },
    { "fmul_s", 3, B|0x00800001, B|0x3f000000, 0, B|0x00400001, UF|NX },
    { "fmul_s", 0, B|0x00ffffff, B|0x3f000000, 0, B|0x00800000, UF|NX },
    { "fcvt_s_d", 0, 0x380ffffff0000000, 0, 0, B|0x00800000, NX },
    { "fcvt_s_d", 1, 0x380ffffff0000000, 0, 0, B|0x007fffff, UF|NX },
    { "fcvt_s_d", 3, 0x380ffffff0000000, 0, 0, B|0x00800000, NX },
    { "fmul_d", 0, 0x0000000000000001, 0x3fe0000000000000, 0, 0, UF|NX },
    { "fmul_d", 3, 0x0000000000000001, 0x3fe0000000000000, 0, 1, UF|NX },
    { "fmul_d", 4, 0x0000000000000001, 0x3fe0000000000000, 0, 1, UF|NX },
    { "fmul_d", 2, 0x8000000000000001, 0x3fe0000000000000, 0, 0x8000000000000001, UF|NX },
    /* Overflow in each mode. */
    { "fmul_s", 0, B|0x7f7fffff, B|0x40000000, 0, B|0x7f800000, OF|NX },
    { "fmul_s", 1, B|0x7f7fffff, B|0x40000000, 0, B|0x7f7fffff, OF|NX },
    { "fmul_s", 2, B|0x7f7fffff, B|0x40000000, 0, B|0x7f7fffff, OF|NX },
    { "fmul_s", 3, B|0x7f7fffff, B|0x40000000, 0, B|0x7f800000, OF|NX },
    { "fmul_s", 4, B|0x7f7fffff, B|0x40000000, 0, B|0x7f800000, OF|NX },
    { "fmul_s", 1, B|0xff7fffff, B|0x40000000, 0, B|0xff7fffff, OF|NX },
    { "fmul_s", 2, B|0xff7fffff, B|0x40000000, 0, B|0xff800000, OF|NX },
    { "fmul_s", 3, B|0xff7fffff, B|0x40000000, 0, B|0xff7fffff, OF|NX },
    { "fadd_d", 1, 0x7fefffffffffffff, 0x7fefffffffffffff, 0, 0x7fefffffffffffff, OF|NX },
    { "fadd_d", 4, 0x7fefffffffffffff, 0x7c90000000000000, 0, 0x7ff0000000000000, OF|NX },
    { "fadd_d", 0, 0x7fefffffffffffff, 0x7c8fffffffffffff, 0, 0x7fefffffffffffff, NX },
    /* NaNs: canonical results, NV only for signaling inputs, NaN-boxing. */
    { "fadd_s", 0, B|0x7fa00000, B|0x3f800000, 0, B|0x7fc00000, NV },
    { "fadd_s", 0, B|0xffc00001, B|0x3f800000, 0, B|0x7fc00000, 0 },
    { "fadd_s", 0, 0x000000003f800000, B|0x3f800000, 0, B|0x7fc00000, 0 },
    { "fadd_s", 0, B|0x7f800000, B|0xff800000, 0, B|0x7fc00000, NV },
    { "fadd_d", 0, 0x7ff4000000000000, 0x3ff0000000000000, 0, 0x7ff8000000000000, NV },
    { "fadd_d", 0, 0xfff8000000000123, 0x3ff0000000000000, 0, 0x7ff8000000000000, 0 },
    { "fmul_d", 0, 0x7ff0000000000000, 0, 0, 0x7ff8000000000000, NV },
    { "fdiv_d", 0, 0x3ff0000000000000, 0, 0, 0x7ff0000000000000, DZ },
    { "fdiv_d", 0, 0xbff0000000000000, 0, 0, 0xfff0000000000000, DZ },
    { "fdiv_d", 0, 0, 0, 0, 0x7ff8000000000000, NV },
    { "fsqrt_d", 0, 0xbff0000000000000, 0, 0, 0x7ff8000000000000, NV },
    { "fsqrt_d", 0, 0x8000000000000000, 0, 0, 0x8000000000000000, 0 },
    { "fsqrt_d", 0, 0x4000000000000000, 0, 0, 0x3ff6a09e667f3bcd, NX },
    { "fsqrt_d", 3, 0x4000000000000000, 0, 0, 0x3ff6a09e667f3bcd, NX },
    { "fsqrt_d", 1, 0x4000000000000000, 0, 0, 0x3ff6a09e667f3bcc, NX },
    { "fsqrt_s", 0, B|0x40800000, 0, 0, B|0x40000000, 0 },
    { "fsqrt_s", 0, B|0x00000001, 0, 0, B|0x1a3504f3, NX },
    /* Zero signs. */
    { "fsub_d", 0, 0x3ff0000000000000, 0x3ff0000000000000, 0, 0, 0 },
    { "fsub_d", 2, 0x3ff0000000000000, 0x3ff0000000000000, 0, 0x8000000000000000, 0 },
    { "fadd_s", 0, B|0x80000000, B|0x80000000, 0, B|0x80000000, 0 },
    { "fadd_s", 0, B|0x80000000, B|0x00000000, 0, B|0x00000000, 0 },
    { "fadd_s", 2, B|0x80000000, B|0x00000000, 0, B|0x80000000, 0 },
    /* Fused multiply-add. */
    { "fmadd_s", 0, B|0x7f800000, B|0, B|0x7fc00000, B|0x7fc00000, NV },
    { "fmadd_d", 0, 0, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff8000000000000, NV },
    { "fmadd_d", 0, 0, 0x3ff0000000000000, 0x7ff8000000000000, 0x7ff8000000000000, 0 },
    { "fmadd_d", 0, 0x7ff0000000000000, 0x3ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, NV },
    { "fmadd_s", 0, B|0x3f800000, B|0x3f800000, B|0xbf800000, B|0, 0 },
    { "fmadd_s", 2, B|0x3f800000, B|0x3f800000, B|0xbf800000, B|0x80000000, 0 },
    { "fnmadd_s", 0, B|0, B|0x3f800000, B|0, B|0x80000000, 0 },
    { "fnmsub_s", 0, B|0, B|0x3f800000, B|0, B|0, 0 },
    { "fmsub_d", 0, 0, 0x3ff0000000000000, 0, 0, 0 },
    /* (1+2^-52)^2 - 1 = 2^-51 + 2^-104 exactly: a tie only a fused op sees. */
    { "fmsub_d", 0, 0x3ff0000000000001, 0x3ff0000000000001, 0x3ff0000000000000, 0x3cc0000000000000, NX },
    { "fmadd_d", 3, 0x3ff0000000000001, 0x3ff0000000000001, 0xbff0000000000000, 0x3cc0000000000001, NX },
    { "fmadd_s", 4, B|0x3f800001, B|0x3f800001, B|0xbf800000, B|0x34800001, NX },
    { "fmadd_s", 0, B|0x3f800001, B|0x3f800001, B|0xbf800000, B|0x34800000, NX },
    /* min/max: -0 < +0, one NaN returns the other, sNaN raises NV. */
    { "fmin_s", 0, B|0x00000000, B|0x80000000, 0, B|0x80000000, 0 },
    { "fmin_s", 0, B|0x80000000, B|0x00000000, 0, B|0x80000000, 0 },
    { "fmax_s", 0, B|0x80000000, B|0x00000000, 0, B|0x00000000, 0 },
    { "fmax_d", 0, 0, 0x8000000000000000, 0, 0, 0 },
    { "fmin_s", 0, B|0x7fc00000, B|0x3f800000, 0, B|0x3f800000, 0 },
    { "fmin_s", 0, B|0x7fa00000, B|0x3f800000, 0, B|0x3f800000, NV },
    { "fmax_s", 0, B|0x3f800000, B|0xffa00000, 0, B|0x3f800000, NV },
    { "fmax_s", 0, B|0x7fc00001, B|0x7fc00002, 0, B|0x7fc00000, 0 },
    { "fmin_d", 0, 0x7ff0000000000001, 0x7ff4000000000000, 0, 0x7ff8000000000000, NV },
    { "fmin_d", 0, 0xfff0000000000000, 0x3ff0000000000000, 0, 0xfff0000000000000, 0 },
    { "fmax_s", 0, 0x3f800000, B|0xbf800000, 0, B|0xbf800000, 0 },
    /* Comparisons. */
    { "feq_s", 0, B|0x7fc00000, B|0x3f800000, 0, 0, 0 },
    { "feq_s", 0, B|0x7fa00000, B|0x3f800000, 0, 0, NV },
    { "flt_s", 0, B|0x7fc00000, B|0x3f800000, 0, 0, NV },
    { "fle_d", 0, 0x3ff0000000000000, 0x7ff8000000000000, 0, 0, NV },
    { "feq_s", 0, B|0x80000000, B|0x00000000, 0, 1, 0 },
    { "fle_s", 0, B|0x00000000, B|0x80000000, 0, 1, 0 },
    { "flt_s", 0, B|0x80000000, B|0x00000000, 0, 0, 0 },
    { "flt_d", 0, 0xbff0000000000000, 0xbfe0000000000000, 0, 1, 0 },
    { "flt_d", 0, 0xfff0000000000000, 0xffefffffffffffff, 0, 1, 0 },
    { "feq_s", 0, 0x3f800000, 0x3f800000, 0, 0, 0 },
    /* fclass. */
    { "fclass_s", 0, B|0xff800000, 0, 0, 1 << 0, 0 },
    { "fclass_s", 0, B|0xbf800000, 0, 0, 1 << 1, 0 },
    { "fclass_s", 0, B|0x807fffff, 0, 0, 1 << 2, 0 },
    { "fclass_s", 0, B|0x80000000, 0, 0, 1 << 3, 0 },
    { "fclass_s", 0, B|0x00000000, 0, 0, 1 << 4, 0 },
    { "fclass_s", 0, B|0x00000001, 0, 0, 1 << 5, 0 },
    { "fclass_s", 0, B|0x00800000, 0, 0, 1 << 6, 0 },
    { "fclass_s", 0, B|0x7f800000, 0, 0, 1 << 7, 0 },
    { "fclass_s", 0, B|0x7f800001, 0, 0, 1 << 8, 0 },
    { "fclass_s", 0, B|0xffc00000, 0, 0, 1 << 9, 0 },
    { "fclass_s", 0, 0x00000000ff800000, 0, 0, 1 << 9, 0 },
    { "fclass_d", 0, 0x7ff4000000000000, 0, 0, 1 << 8, 0 },
    { "fclass_d", 0, 0x800fffffffffffff, 0, 0, 1 << 2, 0 },
    /* Float to integer: saturation, sign extension, rounding. */
    { "fcvt_w_s", 0, B|0x7fc00000, 0, 0, 0x7fffffff, NV },
    { "fcvt_w_s", 0, B|0xffc00000, 0, 0, 0x7fffffff, NV },
    { "fcvt_w_s", 0, B|0xff800000, 0, 0, 0xffffffff80000000, NV },
    { "fcvt_w_s", 0, B|0x4f000000, 0, 0, 0x7fffffff, NV },
    { "fcvt_w_s", 0, B|0xcf000000, 0, 0, 0xffffffff80000000, 0 },
    { "fcvt_w_s", 0, B|0xbf800000, 0, 0, 0xffffffffffffffff, 0 },
    { "fcvt_wu_s", 1, B|0xbf000000, 0, 0, 0, NX },
    { "fcvt_wu_s", 0, B|0xbf000000, 0, 0, 0, NX },
    { "fcvt_wu_s", 2, B|0xbf000000, 0, 0, 0, NV },
    { "fcvt_wu_s", 0, B|0xbf800000, 0, 0, 0, NV },
    { "fcvt_wu_s", 0, B|0x80000000, 0, 0, 0, 0 },
    { "fcvt_wu_s", 0, B|0x4f7fffff, 0, 0, 0xffffffffffffff00, 0 },
    { "fcvt_wu_s", 0, B|0x7fc00000, 0, 0, 0xffffffffffffffff, NV },
    { "fcvt_wu_s", 0, B|0xff800000, 0, 0, 0, NV },
    { "fcvt_lu_s", 0, B|0x5f800000, 0, 0, 0xffffffffffffffff, NV },
    { "fcvt_l_d", 0, 0x43e0000000000000, 0, 0, 0x7fffffffffffffff, NV },
    { "fcvt_l_d", 0, 0xc3e0000000000000, 0, 0, 0x8000000000000000, 0 },
    { "fcvt_l_d", 0, 0xc3e0000000000001, 0, 0, 0x8000000000000000, NV },
    { "fcvt_lu_d", 0, 0x43f0000000000000, 0, 0, 0xffffffffffffffff, NV },
    { "fcvt_lu_d", 0, 0x43efffffffffffff, 0, 0, 0xfffffffffffff800, 0 },
    { "fcvt_w_d", 0, 0x4004000000000000, 0, 0, 2, NX },
    { "fcvt_w_d", 1, 0x4004000000000000, 0, 0, 2, NX },
    { "fcvt_w_d", 2, 0x4004000000000000, 0, 0, 2, NX },
    { "fcvt_w_d", 3, 0x4004000000000000, 0, 0, 3, NX },
    { "fcvt_w_d", 4, 0x4004000000000000, 0, 0, 3, NX },
    { "fcvt_w_d", 0, 0xc004000000000000, 0, 0, (uint64_t)-2, NX },
    { "fcvt_w_d", 2, 0xc004000000000000, 0, 0, (uint64_t)-3, NX },
    { "fcvt_w_d", 3, 0xc004000000000000, 0, 0, (uint64_t)-2, NX },
    { "fcvt_w_d", 4, 0xc004000000000000, 0, 0, (uint64_t)-3, NX },
    { "fcvt_w_d", 0, 0x41dfffffffe00000, 0, 0, 0x7fffffff, NV },
    { "fcvt_w_d", 1, 0x41dfffffffe00000, 0, 0, 0x7fffffff, NX },
    { "fcvt_w_d", 1, 0xc1e0000000100000, 0, 0, 0xffffffff80000000, NX },
    { "fcvt_w_d", 2, 0xc1e0000000100000, 0, 0, 0xffffffff80000000, NV },
    { "fcvt_w_d", 0, 0x0000000000000001, 0, 0, 0, NX },
    { "fcvt_w_d", 3, 0x0000000000000001, 0, 0, 1, NX },
    { "fcvt_w_d", 2, 0x8000000000000001, 0, 0, (uint64_t)-1, NX },
    /* Integer to float. */
    { "fcvt_s_w", 0, 0x7fffffff, 0, 0, B|0x4f000000, NX },
    { "fcvt_s_w", 1, 0x7fffffff, 0, 0, B|0x4effffff, NX },
    { "fcvt_s_w", 0, 0x1234567880000000, 0, 0, B|0xcf000000, 0 },
    { "fcvt_s_wu", 0, 0x12345678ffffffff, 0, 0, B|0x4f800000, NX },
    { "fcvt_s_lu", 0, 0xffffffffffffffff, 0, 0, B|0x5f800000, NX },
    { "fcvt_s_lu", 1, 0xffffffffffffffff, 0, 0, B|0x5f7fffff, NX },
    { "fcvt_s_l", 0, 0, 0, 0, B|0, 0 },
    { "fcvt_d_l", 0, 0x8000000000000000, 0, 0, 0xc3e0000000000000, 0 },
    { "fcvt_d_l", 4, 0x0020000000000001, 0, 0, 0x4340000000000001, NX },
    { "fcvt_d_l", 0, 0x0020000000000001, 0, 0, 0x4340000000000000, NX },
    { "fcvt_d_w", 0, 0xffffffff80000000, 0, 0, 0xc1e0000000000000, 0 },
    { "fcvt_d_wu", 0, 0xffffffff80000000, 0, 0, 0x41e0000000000000, 0 },
    /* Between formats. */
    { "fcvt_d_s", 0, B|0x7fa00000, 0, 0, 0x7ff8000000000000, NV },
    { "fcvt_d_s", 0, 0x3f800000, 0, 0, 0x7ff8000000000000, 0 },
    { "fcvt_d_s", 0, B|0x00000001, 0, 0, 0x36a0000000000000, 0 },
    { "fcvt_s_d", 0, 0x7ff0000000000001, 0, 0, B|0x7fc00000, NV },
    { "fcvt_s_d", 1, 0x7fefffffffffffff, 0, 0, B|0x7f7fffff, OF|NX },
    { "fcvt_s_d", 0, 0x7fefffffffffffff, 0, 0, B|0x7f800000, OF|NX },
    { "fcvt_s_d", 0, 0x0000000000000001, 0, 0, B|0, UF|NX },
    { "fcvt_s_d", 3, 0x0000000000000001, 0, 0, B|1, UF|NX },
    /* Sign injection and moves. */
    { "fsgnj_s", 0, B|0x3f800000, B|0x80000000, 0, B|0xbf800000, 0 },
    { "fsgnjn_s", 0, 0x3f800000, B|0x3f800000, 0, B|0xffc00000, 0 },
    { "fsgnj_s", 0, B|0x3f800000, 0xbf800000, 0, B|0x3f800000, 0 },
    { "fsgnjx_s", 0, B|0xbf800000, B|0x80000000, 0, B|0x3f800000, 0 },
    { "fsgnjx_d", 0, 0xfff4000000000000, 0x8000000000000000, 0, 0x7ff4000000000000, 0 },
    { "fsgnjn_d", 0, 0x7ff4000000000000, 0x7ff4000000000000, 0, 0xfff4000000000000, 0 },
    { "fmv_x_w", 0, 0x1234567887654321, 0, 0, 0xffffffff87654321, 0 },
    { "fmv_x_w", 0, 0x1234567807654321, 0, 0, 0x07654321, 0 },
    { "fmv_w_x", 0, 0x1234567887654321, 0, 0, B|0x87654321, 0 },
    { "fmv_x_d", 0, 0x7ff4000000000001, 0, 0, 0x7ff4000000000001, 0 },
    { "fmv_d_x", 0, 0x7ff4000000000001, 0, 0, 0x7ff4000000000001, 0 },
};

static void check_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Case *k = &cases[i];
        enum insn_op op = op_by_name(k->name);
        /* Static mode, then the same mode through frm. */
        for (int dyn = 0; dyn < 2; dyn++) {
            Run r = dyn ? run(op, RM_DYN, k->rm, k->a, k->b, k->c)
                        : run(op, k->rm, (k->rm + 1) % 5, k->a, k->b, k->c);
            if (r.exit != EXIT_NONE || r.result != k->expect || r.flags != k->flags)
                FAIL("case %zu %s rm=%u%s a=%016llx b=%016llx c=%016llx: got %016llx/%02x, "
                     "want %016llx/%02x\n", i, k->name, k->rm, dyn ? " (dyn)" : "",
                     (unsigned long long)k->a, (unsigned long long)k->b,
                     (unsigned long long)k->c, (unsigned long long)r.result, r.flags,
                     (unsigned long long)k->expect, k->flags);
        }
    }
}

/* Reserved rounding modes trap and change nothing; x0 is never written. */
static void check_traps(void)
{
    static const char *const with_rm[] = {
        "fadd_s", "fmadd_d", "fsqrt_s", "fcvt_w_s", "fcvt_s_w", "fcvt_d_s", "fcvt_s_d", "fcvt_d_wu",
    };
    for (size_t i = 0; i < sizeof with_rm / sizeof with_rm[0]; i++) {
        enum insn_op op = op_by_name(with_rm[i]);
        const unsigned bad[][2] = { { 5, 0 }, { 6, 0 }, { 7, 5 }, { 7, 6 }, { 7, 7 } };
        for (int j = 0; j < 5; j++) {
            Run r = run(op, bad[j][0], bad[j][1], B|0x7fa00000, B|0x7fa00000, 0);
            if (r.exit != EXIT_ILLEGAL || !r.untouched)
                FAIL("%s rm=%u frm=%u: exit %d, untouched %d\n", with_rm[i], bad[j][0],
                     bad[j][1], r.exit, r.untouched);
        }
    }
    /* Instructions without a rounding mode ignore frm. */
    Run r = run(op_by_name("fmin_s"), 0, 7, B|0x3f800000, B|0x40000000, 0);
    if (r.exit != EXIT_NONE || r.result != (B|0x3f800000))
        FAIL("fmin_s with frm=7 trapped\n");

    CPUState cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.f[1] = cpu.f[2] = 0x3ff0000000000000;
    Insn in = { .op = op_by_name("feq_d"), .len = 4, .rd = 0, .rs1 = 1, .rs2 = 2 };
    if (interp_fp(&cpu, &in) != EXIT_NONE || cpu.x[0] != 0)
        FAIL("feq.d wrote x0\n");
    in = (Insn){ .op = op_by_name("fadd_d"), .len = 4, .rd = 1, .rs1 = 1, .rs2 = 2, .rm = 0 };
    cpu.fflags = FFLAG_DZ;
    interp_fp(&cpu, &in);
    if (cpu.f[1] != 0x4000000000000000 || cpu.fflags != FFLAG_DZ)
        FAIL("fadd.d f1,f1,f2 or flag accrual wrong\n");
}

/* -- Randomized comparison with the host SSE unit ------------------------- */

/* MXCSR rounding control for RISC-V RNE, RTZ, RDN, RUP. */
static const unsigned mxcsr_rc[4] = { 0 << 13, 3 << 13, 1 << 13, 2 << 13 };

/* RISC-V fflags from MXCSR status bits (IE ZE OE UE PE; DE ignored). */
static uint32_t mxcsr_flags(unsigned m)
{
    return (m & 1 ? NV : 0) | (m & 4 ? DZ : 0) | (m & 8 ? OF : 0) |
           (m & 16 ? UF : 0) | (m & 32 ? NX : 0);
}

#define SSE_OP(name, insn, type, mov)                                         \
    static uint64_t name(uint64_t a, uint64_t b, unsigned rc, uint32_t *fl)   \
    {                                                                         \
        unsigned m = 0x1f80 | rc;                                             \
        uint64_t r;                                                           \
        __asm__ volatile("ldmxcsr %[m]\n\t"                                   \
                         mov " %[a], %%xmm0\n\t" mov " %[b], %%xmm1\n\t"      \
                         insn " %%xmm1, %%xmm0\n\t" mov " %%xmm0, %[r]\n\t"   \
                         "stmxcsr %[m]"                                       \
                         : [r] "=r"(r), [m] "+m"(m)                           \
                         : [a] "r"(a), [b] "r"(b) : "xmm0", "xmm1");          \
        *fl = mxcsr_flags(m);                                                 \
        return type == 4 ? (uint32_t)r : r;                                   \
    }

SSE_OP(sse_adds, "addss", 4, "movq") SSE_OP(sse_subs, "subss", 4, "movq")
SSE_OP(sse_muls, "mulss", 4, "movq") SSE_OP(sse_divs, "divss", 4, "movq")
SSE_OP(sse_sqrts, "sqrtss", 4, "movq")
SSE_OP(sse_addd, "addsd", 8, "movq") SSE_OP(sse_subd, "subsd", 8, "movq")
SSE_OP(sse_muld, "mulsd", 8, "movq") SSE_OP(sse_divd, "divsd", 8, "movq")
SSE_OP(sse_sqrtd, "sqrtsd", 8, "movq")
SSE_OP(sse_cvtds, "cvtsd2ss", 4, "movq")
SSE_OP(sse_cvtsd, "cvtss2sd", 8, "movq")

/* int64 -> float/double in the current rounding mode. */
#define SSE_I2F(name, insn, type)                                             \
    static uint64_t name(uint64_t a, uint64_t b, unsigned rc, uint32_t *fl)   \
    {                                                                         \
        unsigned m = 0x1f80 | rc;                                             \
        uint64_t r;                                                           \
        (void)b;                                                              \
        __asm__ volatile("ldmxcsr %[m]\n\t" insn " %[a], %%xmm0\n\t"          \
                         "movq %%xmm0, %[r]\n\tstmxcsr %[m]"                  \
                         : [r] "=r"(r), [m] "+m"(m) : [a] "r"(a) : "xmm0");   \
        *fl = mxcsr_flags(m);                                                 \
        return type == 4 ? (uint32_t)r : r;                                   \
    }
SSE_I2F(sse_cvtls, "cvtsi2ssq", 4) SSE_I2F(sse_cvtld, "cvtsi2sdq", 8)

/* double/float -> int64 in the current rounding mode (x86: no saturation). */
#define SSE_F2I(name, insn)                                                   \
    static uint64_t name(uint64_t a, uint64_t b, unsigned rc, uint32_t *fl)   \
    {                                                                         \
        unsigned m = 0x1f80 | rc;                                             \
        uint64_t r;                                                           \
        (void)b;                                                              \
        __asm__ volatile("ldmxcsr %[m]\n\tmovq %[a], %%xmm0\n\t"              \
                         insn " %%xmm0, %[r]\n\tstmxcsr %[m]"                 \
                         : [r] "=r"(r), [m] "+m"(m) : [a] "r"(a) : "xmm0");   \
        *fl = mxcsr_flags(m);                                                 \
        return r;                                                             \
    }
SSE_F2I(sse_cvtdl, "cvtsd2si") SSE_F2I(sse_cvtsl, "cvtss2si")

typedef uint64_t (*sse_fn)(uint64_t, uint64_t, unsigned, uint32_t *);

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random value of a format: raw bits, or an exponent from an edgy band. */
static uint64_t rnd_value(bool dbl, int band)
{
    int mb = dbl ? 52 : 23, bias = dbl ? 1023 : 127;
    uint64_t r = rnd();
    if (r % 8 == 0)
        return dbl ? rnd() : (uint32_t)rnd();
    int e;
    switch (band) {
    case 0:  e = bias + (int)(rnd() % 9) - 4; break;
    case 1:  e = (int)(rnd() % 3); break;
    case 2:  e = 2 * bias - (int)(rnd() % 3); break;
    case 3:  e = bias - 30 + (int)(rnd() % 100); break;
    default: e = (int)(rnd() % (2 * bias + 2)); break;
    }
    uint64_t frac = rnd() & ((1ull << mb) - 1);
    if ((r >> 8) % 3 == 0)
        frac &= ~((1ull << (rnd() % mb)) - 1);
    return (uint64_t)e << mb | frac | ((r >> 20) & 1) << (dbl ? 63 : 31);
}

static bool is_nan_bits(uint64_t v, bool dbl)
{
    return dbl ? (v & ~(1ull << 63)) > 0x7ff0000000000000ull
               : (v & 0x7fffffff) > 0x7f800000;
}

typedef struct SseCheck {
    const char *name;   /* RISC-V instruction */
    sse_fn sse;
    char in;            /* 's', 'd' or 'x' operands */
    char out;           /* 's', 'd' or 'x' result */
    int nargs;
} SseCheck;

static const SseCheck sse_checks[] = {
    { "fadd_s", sse_adds, 's', 's', 2 }, { "fsub_s", sse_subs, 's', 's', 2 },
    { "fmul_s", sse_muls, 's', 's', 2 }, { "fdiv_s", sse_divs, 's', 's', 2 },
    { "fsqrt_s", sse_sqrts, 's', 's', 1 },
    { "fadd_d", sse_addd, 'd', 'd', 2 }, { "fsub_d", sse_subd, 'd', 'd', 2 },
    { "fmul_d", sse_muld, 'd', 'd', 2 }, { "fdiv_d", sse_divd, 'd', 'd', 2 },
    { "fsqrt_d", sse_sqrtd, 'd', 'd', 1 },
    { "fcvt_s_d", sse_cvtds, 'd', 's', 1 }, { "fcvt_d_s", sse_cvtsd, 's', 'd', 1 },
    { "fcvt_s_l", sse_cvtls, 'x', 's', 1 }, { "fcvt_d_l", sse_cvtld, 'x', 'd', 1 },
    { "fcvt_l_d", sse_cvtdl, 'd', 'x', 1 }, { "fcvt_l_s", sse_cvtsl, 's', 'x', 1 },
};

static void check_sse(int iterations)
{
    for (size_t k = 0; k < sizeof sse_checks / sizeof sse_checks[0]; k++) {
        const SseCheck *c = &sse_checks[k];
        enum insn_op op = op_by_name(c->name);
        int bad = 0;
        for (int i = 0; i < iterations && bad < 5; i++) {
            int band = (int)(rnd() % 6);
            uint64_t a, b;
            if (c->in == 'x') {
                a = rnd() >> (rnd() % 64);
                a = rnd() & 1 ? -a : a;
                b = 0;
            } else {
                a = rnd_value(c->in == 'd', band);
                b = c->nargs > 1 ? rnd_value(c->in == 'd', rnd() % 4 ? band : 5) : 0;
            }
            unsigned m = rnd() % 4;
            uint32_t sfl;
            uint64_t want = c->sse(a, c->nargs > 1 ? b : a, mxcsr_rc[m], &sfl);
            uint64_t box = c->in == 's' ? B : 0;
            Run r = run(op, m, 0, a | box, b | box, 0);
            uint64_t got = c->out == 's' ? (uint32_t)r.result : r.result;
            bool ok;
            if (c->out == 'x') {
                /* x86 gives the "integer indefinite" 2^63 with IE on overflow. */
                ok = (sfl & NV) ? (r.flags & NV) != 0 : got == want && r.flags == sfl;
            } else if (is_nan_bits(want, c->out == 'd')) {
                ok = got == (c->out == 'd' ? FP_CANON_NAN_D : FP_CANON_NAN_S) && r.flags == sfl;
            } else {
                ok = got == want && r.flags == sfl;
            }
            if (!ok) {
                bad++;
                FAIL("sse %s rm=%u a=%016llx b=%016llx: got %016llx/%02x, sse %016llx/%02x\n",
                     c->name, m, (unsigned long long)a, (unsigned long long)b,
                     (unsigned long long)got, r.flags, (unsigned long long)want, sfl);
            }
        }
    }
}

/* -- Vectors recorded under qemu-riscv64 ---------------------------------- */

static void check_vector_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        perror(path);
        exit(2);
    }
    char name[32];
    unsigned rm, fl;
    unsigned long long a, b, c, want;
    long n = 0;
    enum insn_op op = OP_illegal;
    char last[32] = "";
    while (fscanf(fp, "%31s %u %llx %llx %llx %llx %x", name, &rm, &a, &b, &c, &want, &fl) == 7) {
        if (strcmp(name, last) != 0) {
            op = op_by_name(name);
            snprintf(last, sizeof last, "%s", name);
        }
        Run r = run(op, RM_DYN, rm, a, b, c);
        n++;
        if (r.exit != EXIT_NONE || r.result != want || r.flags != fl)
            FAIL("vector %s rm=%u a=%016llx b=%016llx c=%016llx: got %016llx/%02x, "
                 "qemu %016llx/%02x\n", name, rm, a, b, c,
                 (unsigned long long)r.result, r.flags, want, fl);
    }
    fclose(fp);
    printf("test_fpu: %ld vectors from %s checked\n", n, path);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-cases") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            printf("%s %u %llx %llx %llx\n", cases[i].name, cases[i].rm,
                   (unsigned long long)cases[i].a, (unsigned long long)cases[i].b,
                   (unsigned long long)cases[i].c);
        return 0;
    }
    check_cases();
    check_traps();
    check_sse(argc > 2 ? atoi(argv[2]) : 20000);
    if (argc > 1)
        check_vector_file(argv[1]);
    if (failures)
        printf("test_fpu: %d failures\n", failures);
    return failures != 0;
}
