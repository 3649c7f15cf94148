/*
 * Randomized F/D test vectors: every F and D computational instruction on
 * deterministic pseudo-random operands (a mix of special values, raw bit
 * patterns and structured values near ties, cancellation, the subnormal
 * range and overflow), in each of the five rounding modes selected through
 * frm (instructions use rm=dyn), recording result bits and fflags.
 *
 *   fp_vectors            one checksum line per (instruction, mode)
 *   fp_vectors -v [N [SEED]]  every vector: "name rm a b c result flags",
 *                         N operand sets per instruction (default 2000)
 *
 *   fp_vectors -c         read "name rm a b c" lines from stdin and print
 *                         each as a vector (to check hand-made cases)
 *
 * The -v output made under qemu-riscv64 is also what the host unit test
 * consumes: build/tests/unit/test_fpu FILE checks fpu.c against it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t (*op_fn)(uint64_t a, uint64_t b, uint64_t c, unsigned rm, unsigned *fl);

#define PRE  "csrw frm, %[rm]\n\tcsrw fflags, zero\n\t"
#define POST "\n\tcsrr %[fl], fflags"
#define OUTS [r] "=&r"(r), [fl] "=&r"(f)
#define INS  [a] "r"(a), [b] "r"(b), [c] "r"(c), [rm] "r"(rm)
#define FN(name) static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned rm, unsigned *fl)
#define BODY(text, ...) { uint64_t r; unsigned long f; (void)a; (void)b; (void)c; \
    __asm__ volatile(text : OUTS : INS : "ft0", "ft1", "ft2", "ft3"); *fl = f; return r; }

/* f3 = op(f0, f1, f2) */
#define F4(name, mn) FN(name) BODY("fmv.d.x ft0,%[a]\n\tfmv.d.x ft1,%[b]\n\tfmv.d.x ft2,%[c]\n\t" \
    PRE mn " ft3,ft0,ft1,ft2\n\tfmv.x.d %[r],ft3" POST)
/* f3 = op(f0, f1) */
#define F3(name, mn) FN(name) BODY("fmv.d.x ft0,%[a]\n\tfmv.d.x ft1,%[b]\n\t" \
    PRE mn " ft3,ft0,ft1\n\tfmv.x.d %[r],ft3" POST)
/* f3 = op(f0) */
#define F2(name, mn) FN(name) BODY("fmv.d.x ft0,%[a]\n\t" PRE mn " ft3,ft0\n\tfmv.x.d %[r],ft3" POST)
/* x = op(f0, f1) */
#define XFF(name, mn) FN(name) BODY("fmv.d.x ft0,%[a]\n\tfmv.d.x ft1,%[b]\n\t" \
    PRE mn " %[r],ft0,ft1" POST)
/* x = op(f0) */
#define XF(name, mn) FN(name) BODY("fmv.d.x ft0,%[a]\n\t" PRE mn " %[r],ft0" POST)
/* f3 = op(x) */
#define FX(name, mn) FN(name) BODY(PRE mn " ft3,%[a]\n\tfmv.x.d %[r],ft3" POST)
/* f3 = op(x) for encodings the assembler only accepts with rm omitted */
#define FXI(name, rs2) FN(name) BODY(PRE ".insn r 0x53, 7, 0x69, ft3, %[a], x" #rs2 \
    "\n\tfmv.x.d %[r],ft3" POST)

F4(op_fmadd_s, "fmadd.s")   F4(op_fmsub_s, "fmsub.s")
F4(op_fnmsub_s, "fnmsub.s") F4(op_fnmadd_s, "fnmadd.s")
F4(op_fmadd_d, "fmadd.d")   F4(op_fmsub_d, "fmsub.d")
F4(op_fnmsub_d, "fnmsub.d") F4(op_fnmadd_d, "fnmadd.d")
F3(op_fadd_s, "fadd.s") F3(op_fsub_s, "fsub.s") F3(op_fmul_s, "fmul.s") F3(op_fdiv_s, "fdiv.s")
F3(op_fadd_d, "fadd.d") F3(op_fsub_d, "fsub.d") F3(op_fmul_d, "fmul.d") F3(op_fdiv_d, "fdiv.d")
F3(op_fsgnj_s, "fsgnj.s") F3(op_fsgnjn_s, "fsgnjn.s") F3(op_fsgnjx_s, "fsgnjx.s")
F3(op_fsgnj_d, "fsgnj.d") F3(op_fsgnjn_d, "fsgnjn.d") F3(op_fsgnjx_d, "fsgnjx.d")
F3(op_fmin_s, "fmin.s") F3(op_fmax_s, "fmax.s") F3(op_fmin_d, "fmin.d") F3(op_fmax_d, "fmax.d")
F2(op_fsqrt_s, "fsqrt.s") F2(op_fsqrt_d, "fsqrt.d")
F2(op_fcvt_s_d, "fcvt.s.d")
FN(op_fcvt_d_s) BODY("fmv.d.x ft0,%[a]\n\t" PRE ".insn r 0x53, 7, 0x21, ft3, ft0, x0\n\t"
                     "fmv.x.d %[r],ft3" POST)
XFF(op_feq_s, "feq.s") XFF(op_flt_s, "flt.s") XFF(op_fle_s, "fle.s")
XFF(op_feq_d, "feq.d") XFF(op_flt_d, "flt.d") XFF(op_fle_d, "fle.d")
XF(op_fcvt_w_s, "fcvt.w.s") XF(op_fcvt_wu_s, "fcvt.wu.s")
XF(op_fcvt_l_s, "fcvt.l.s") XF(op_fcvt_lu_s, "fcvt.lu.s")
XF(op_fcvt_w_d, "fcvt.w.d") XF(op_fcvt_wu_d, "fcvt.wu.d")
XF(op_fcvt_l_d, "fcvt.l.d") XF(op_fcvt_lu_d, "fcvt.lu.d")
XF(op_fmv_x_w, "fmv.x.w") XF(op_fmv_x_d, "fmv.x.d")
XF(op_fclass_s, "fclass.s") XF(op_fclass_d, "fclass.d")
FX(op_fcvt_s_w, "fcvt.s.w") FX(op_fcvt_s_wu, "fcvt.s.wu")
FX(op_fcvt_s_l, "fcvt.s.l") FX(op_fcvt_s_lu, "fcvt.s.lu")
FXI(op_fcvt_d_w, 0) FXI(op_fcvt_d_wu, 1)
FX(op_fcvt_d_l, "fcvt.d.l") FX(op_fcvt_d_lu, "fcvt.d.lu")
FX(op_fmv_w_x, "fmv.w.x") FX(op_fmv_d_x, "fmv.d.x")

/* in: operand kind ('s' single, 'd' double, 'x' integer); n: operand count. */
struct op { const char *name; op_fn fn; char in; int n; int rounds; };

static const struct op ops[] = {
#define OP(id, in, n, r) { #id, op_##id, in, n, r }
    OP(fmadd_s, 's', 3, 1), OP(fmsub_s, 's', 3, 1), OP(fnmsub_s, 's', 3, 1), OP(fnmadd_s, 's', 3, 1),
    OP(fmadd_d, 'd', 3, 1), OP(fmsub_d, 'd', 3, 1), OP(fnmsub_d, 'd', 3, 1), OP(fnmadd_d, 'd', 3, 1),
    OP(fadd_s, 's', 2, 1), OP(fsub_s, 's', 2, 1), OP(fmul_s, 's', 2, 1), OP(fdiv_s, 's', 2, 1),
    OP(fadd_d, 'd', 2, 1), OP(fsub_d, 'd', 2, 1), OP(fmul_d, 'd', 2, 1), OP(fdiv_d, 'd', 2, 1),
    OP(fsqrt_s, 's', 1, 1), OP(fsqrt_d, 'd', 1, 1),
    OP(fsgnj_s, 's', 2, 0), OP(fsgnjn_s, 's', 2, 0), OP(fsgnjx_s, 's', 2, 0),
    OP(fsgnj_d, 'd', 2, 0), OP(fsgnjn_d, 'd', 2, 0), OP(fsgnjx_d, 'd', 2, 0),
    OP(fmin_s, 's', 2, 0), OP(fmax_s, 's', 2, 0), OP(fmin_d, 'd', 2, 0), OP(fmax_d, 'd', 2, 0),
    OP(fcvt_s_d, 'd', 1, 1), OP(fcvt_d_s, 's', 1, 1),
    OP(feq_s, 's', 2, 0), OP(flt_s, 's', 2, 0), OP(fle_s, 's', 2, 0),
    OP(feq_d, 'd', 2, 0), OP(flt_d, 'd', 2, 0), OP(fle_d, 'd', 2, 0),
    OP(fcvt_w_s, 's', 1, 1), OP(fcvt_wu_s, 's', 1, 1), OP(fcvt_l_s, 's', 1, 1), OP(fcvt_lu_s, 's', 1, 1),
    OP(fcvt_w_d, 'd', 1, 1), OP(fcvt_wu_d, 'd', 1, 1), OP(fcvt_l_d, 'd', 1, 1), OP(fcvt_lu_d, 'd', 1, 1),
    OP(fmv_x_w, 's', 1, 0), OP(fmv_x_d, 'd', 1, 0), OP(fclass_s, 's', 1, 0), OP(fclass_d, 'd', 1, 0),
    OP(fcvt_s_w, 'x', 1, 1), OP(fcvt_s_wu, 'x', 1, 1), OP(fcvt_s_l, 'x', 1, 1), OP(fcvt_s_lu, 'x', 1, 1),
    OP(fcvt_d_w, 'x', 1, 1), OP(fcvt_d_wu, 'x', 1, 1), OP(fcvt_d_l, 'x', 1, 1), OP(fcvt_d_lu, 'x', 1, 1),
    OP(fmv_w_x, 'x', 1, 0), OP(fmv_d_x, 'x', 1, 0),
#undef OP
};

/* -- Operand generation --------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#define BOX 0xffffffff00000000ull

static const uint64_t special_d[] = {
    0, 0x8000000000000000ull, 1, 0x800fffffffffffffull, 0x000fffffffffffffull,
    0x0010000000000000ull, 0x8010000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000001ull,
    0x7ff4000000000000ull, 0xfff0000000000001ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
    0x3ff8000000000000ull, 0x4004000000000000ull, 0x3fe0000000000000ull, 0xbfe0000000000000ull,
    0x3fd5555555555555ull, 0x4008000000000000ull, 0x41e0000000000000ull, 0xc1e0000000000000ull,
    0x41dfffffffe00000ull, 0x41dfffffffc00000ull, 0xc1e0000000200000ull, 0xc1e0000000100000ull,
    0x41f0000000000000ull, 0x41efffffffffffffull, 0x43e0000000000000ull, 0xc3e0000000000000ull,
    0x43dfffffffffffffull, 0x43f0000000000000ull, 0x43efffffffffffffull, 0x4340000000000001ull,
    0xbfefffffffffffffull, 0x3fdfffffffffffffull, 0x36a0000000000000ull, 0x380fffffe0000000ull,
    0x3810000000000000ull, 0x47efffffe0000000ull, 0x47efffff00000000ull, 0xc00c000000000000ull,
};

static const uint32_t special_s[] = {
    0, 0x80000000, 1, 0x807fffff, 0x007fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
    0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7fa00000, 0xff800001, 0x3f800000,
    0xbf800000, 0x3fc00000, 0x40200000, 0x3f000000, 0xbf000000, 0x3eaaaaab, 0x40400000,
    0x4f000000, 0xcf000000, 0x4effffff, 0xcf000001, 0x4f800000, 0x4f7fffff, 0x5f000000,
    0xdf000000, 0x5effffff, 0x5f800000, 0x5f7fffff, 0xbf7fffff, 0x3effffff, 0xc0600000,
    0x3fffffff, 0x33800000, 0x34000000,
};

static const uint64_t special_x[] = {
    0, 1, (uint64_t)-1, 0x7fffffff, 0x80000000, 0xffffffff80000000ull, 0xffffffff, 0x100000000ull,
    0x7fffffffffffffffull, 0x8000000000000000ull, 0x00ffffff, 0x01000001, 0x01000003,
    0x20000001, 0x7ffffffffffffdffull, 0x0020000000000001ull, 0x0020000000000003ull,
    0xfffffffffffffc00ull, 0x8000000000000400ull, 0xfffffffffffff800ull, 0x00000000ffffff80ull,
    0x12345678ffffffc0ull, 0xfedcba987fffffc0ull,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A structured finite value: exponent from one of a few interesting bands. */
static uint64_t structured(char in, int band_hint)
{
    int mb = in == 's' ? 23 : 52, bias = in == 's' ? 127 : 1023;
    uint64_t r = rnd();
    int band = band_hint >= 0 ? band_hint : (int)(r % 5);
    int e;
    switch (band) {
    case 0:  e = bias + (int)(rnd() % 9) - 4; break;               /* near 1 */
    case 1:  e = (int)(rnd() % 4); break;                           /* subnormal edge */
    case 2:  e = 2 * bias - (int)(rnd() % 3); break;                /* overflow edge */
    case 3:  e = bias + (int)(rnd() % 70); break;                   /* integer range */
    default: e = 1 + (int)(rnd() % (2 * bias)); break;
    }
    uint64_t frac = rnd() & ((1ull << mb) - 1);
    switch ((r >> 8) % 4) {                                         /* few bits: ties */
    case 0:  frac &= ~((1ull << (mb - 3)) - 1); break;
    case 1:  frac |= (1ull << (mb / 2)) - 1; break;
    default: break;
    }
    uint64_t v = (uint64_t)e << mb | frac | ((r >> 20) & 1) << (mb + (in == 's' ? 8 : 11));
    return in == 's' ? BOX | v : v;
}

static uint64_t operand(char in, int band)
{
    uint64_t r = rnd() % 16;
    if (in == 'x') {
        if (r < 5)
            return special_x[rnd() % COUNT(special_x)];
        if (r < 8)
            return rnd();
        if (r < 12)
            return (uint64_t)(int64_t)(int32_t)rnd() >> (rnd() % 40);
        return rnd() >> (rnd() % 64);
    }
    if (r < 5) {
        if (in == 'd')
            return special_d[rnd() % COUNT(special_d)];
        return BOX | special_s[rnd() % COUNT(special_s)];
    }
    if (r < 7) {                                   /* raw bits; singles: some unboxed */
        uint64_t v = rnd();
        return in == 's' && (v & 7) ? BOX | (uint32_t)v : v;
    }
    return structured(in, band);
}

/* -- Driver --------------------------------------------------------------- */

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void run_op(const struct op *o, int count, int verbose)
{
    uint64_t hash[5];
    for (int m = 0; m < 5; m++)
        hash[m] = 0xcbf29ce484222325ull;

    for (int i = 0; i < count; i++) {
        int band = (int)(rnd() % 7) - 2;           /* share a band half the time */
        uint64_t a = operand(o->in, band), b = operand(o->in, band), c = operand(o->in, band);
        if (o->n == 3 && rnd() % 4 == 0) {         /* c ~ -(a*b): deep cancellation */
            unsigned fl;
            c = o->in == 's' ? op_fmul_s(a, b, 0, rnd() % 5, &fl) ^ 0x80000000u
                             : op_fmul_d(a, b, 0, rnd() % 5, &fl) ^ (1ull << 63);
        }
        if (o->n < 3)
            c = 0;
        if (o->n < 2)
            b = 0;
        for (unsigned m = 0; m < (o->rounds ? 5u : 1u); m++) {
            unsigned fl;
            uint64_t r = o->fn(a, b, c, m, &fl);
            hash[m] = hash_mix(hash_mix(hash[m], r), fl);
            if (verbose)
                printf("%s %u %016llx %016llx %016llx %016llx %02x\n", o->name, m,
                       (unsigned long long)a, (unsigned long long)b,
                       (unsigned long long)c, (unsigned long long)r, fl);
        }
    }
    if (!verbose)
        for (int m = 0; m < (o->rounds ? 5 : 1); m++)
            printf("%-10s rm=%d %016llx\n", o->name, m, (unsigned long long)hash[m]);
}

static void run_stdin(void)
{
    char name[32];
    unsigned rm;
    unsigned long long a, b, c;
    while (scanf("%31s %u %llx %llx %llx", name, &rm, &a, &b, &c) == 5) {
        for (size_t i = 0; i < COUNT(ops); i++) {
            if (strcmp(ops[i].name, name) != 0)
                continue;
            unsigned fl;
            uint64_t r = ops[i].fn(a, b, c, rm, &fl);
            printf("%s %u %016llx %016llx %016llx %016llx %02x\n", name, rm, a, b, c,
                   (unsigned long long)r, fl);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-c") == 0) {
        run_stdin();
        return 0;
    }
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int count = verbose && argc > 2 ? atoi(argv[2]) : 2000;
    if (verbose && argc > 3)
        rng_state += strtoull(argv[3], NULL, 0) * 0x2545f4914f6cdd1dull;

    for (size_t i = 0; i < COUNT(ops); i++)
        run_op(&ops[i], count, verbose);
    return 0;
}
