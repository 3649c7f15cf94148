/*
 * The F/D instructions without a rounding mode (sign injection, min/max,
 * compares, fclass, moves) on every pair drawn from a list of special
 * operands: signed zeros, subnormals, extremes, infinities, quiet and
 * signaling NaNs with payloads, and singles that are not NaN-boxed.
 * Also checks that fflags accrue across instructions instead of being
 * replaced. Prints result bits and fflags for each.
 */
#include <stdint.h>
#include <stdio.h>

typedef uint64_t (*fn_t)(uint64_t a, uint64_t b, unsigned *fl);

#define FN(name) static uint64_t name(uint64_t a, uint64_t b, unsigned *fl)
#define BODY(text) { uint64_t r; unsigned long f; (void)b; \
    __asm__ volatile("fmv.d.x ft0,%[a]\n\tfmv.d.x ft1,%[b]\n\tcsrw fflags, zero\n\t" text \
                     "\n\tcsrr %[fl], fflags" \
                     : [r] "=&r"(r), [fl] "=&r"(f) : [a] "r"(a), [b] "r"(b) \
                     : "ft0", "ft1", "ft3"); *fl = f; return r; }
#define FF(name, mn) FN(name) BODY(mn " ft3,ft0,ft1\n\tfmv.x.d %[r],ft3")
#define XFF(name, mn) FN(name) BODY(mn " %[r],ft0,ft1")
#define XF(name, mn) FN(name) BODY(mn " %[r],ft0")
/* rs1 == rs2 forms (fmv/fneg/fabs): implementations often special-case them. */
#define FSAME(name, mn) FN(name) BODY(mn " ft3,ft0,ft0\n\tfmv.x.d %[r],ft3")
/* fmv.w.x / fmv.d.x then read back raw. */
#define FX(name, mn) FN(name) BODY(mn " ft3,%[a]\n\tfmv.x.d %[r],ft3")

FF(fsgnj_s, "fsgnj.s") FF(fsgnjn_s, "fsgnjn.s") FF(fsgnjx_s, "fsgnjx.s")
FF(fsgnj_d, "fsgnj.d") FF(fsgnjn_d, "fsgnjn.d") FF(fsgnjx_d, "fsgnjx.d")
FF(fmin_s, "fmin.s") FF(fmax_s, "fmax.s") FF(fmin_d, "fmin.d") FF(fmax_d, "fmax.d")
XFF(feq_s, "feq.s") XFF(flt_s, "flt.s") XFF(fle_s, "fle.s")
XFF(feq_d, "feq.d") XFF(flt_d, "flt.d") XFF(fle_d, "fle.d")
XF(fclass_s, "fclass.s") XF(fclass_d, "fclass.d") XF(fmv_x_w, "fmv.x.w") XF(fmv_x_d, "fmv.x.d")
FSAME(fmv_s, "fsgnj.s") FSAME(fneg_s, "fsgnjn.s") FSAME(fabs_s, "fsgnjx.s")
FSAME(fmv_d, "fsgnj.d") FSAME(fneg_d, "fsgnjn.d") FSAME(fabs_d, "fsgnjx.d")
FX(fmv_w_x, "fmv.w.x") FX(fmv_d_x, "fmv.d.x")

#define B 0xffffffff00000000ull

static const uint64_t vals_s[] = {
    B|0x00000000, B|0x80000000, B|0x00000001, B|0x807fffff, B|0x00800000, B|0x7f7fffff,
    B|0xff7fffff, B|0x3f800000, B|0xbf800000, B|0x7f800000, B|0xff800000, B|0x7fc00000,
    B|0xffc12345, B|0x7f800001, B|0xffa00000, 0x000000003f800000, 0x7fffffffbf800000,
    0xfffffffeffc00000,
};
static const uint64_t vals_d[] = {
    0, 0x8000000000000000, 1, 0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff,
    0xffefffffffffffff, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
    0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000012345, 0x7ff0000000000001,
    0xfff4000000000000, 0xffffffff3f800000, 0x3ff0000000000001,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct op { const char *name; fn_t fn; char in; int n; };
static const struct op ops[] = {
    { "fsgnj.s", fsgnj_s, 's', 2 }, { "fsgnjn.s", fsgnjn_s, 's', 2 }, { "fsgnjx.s", fsgnjx_s, 's', 2 },
    { "fsgnj.d", fsgnj_d, 'd', 2 }, { "fsgnjn.d", fsgnjn_d, 'd', 2 }, { "fsgnjx.d", fsgnjx_d, 'd', 2 },
    { "fmin.s", fmin_s, 's', 2 }, { "fmax.s", fmax_s, 's', 2 },
    { "fmin.d", fmin_d, 'd', 2 }, { "fmax.d", fmax_d, 'd', 2 },
    { "feq.s", feq_s, 's', 2 }, { "flt.s", flt_s, 's', 2 }, { "fle.s", fle_s, 's', 2 },
    { "feq.d", feq_d, 'd', 2 }, { "flt.d", flt_d, 'd', 2 }, { "fle.d", fle_d, 'd', 2 },
    { "fclass.s", fclass_s, 's', 1 }, { "fclass.d", fclass_d, 'd', 1 },
    { "fmv.x.w", fmv_x_w, 's', 1 }, { "fmv.x.d", fmv_x_d, 'd', 1 },
    { "fmv.s", fmv_s, 's', 1 }, { "fneg.s", fneg_s, 's', 1 }, { "fabs.s", fabs_s, 's', 1 },
    { "fmv.d", fmv_d, 'd', 1 }, { "fneg.d", fneg_d, 'd', 1 }, { "fabs.d", fabs_d, 'd', 1 },
    { "fmv.w.x", fmv_w_x, 'd', 1 }, { "fmv.d.x", fmv_d_x, 'd', 1 },
};

/* fflags must accumulate: NV from an sNaN compare, then NX from an add. */
static void accrual(void)
{
    unsigned long f1, f2, fcsr;
    __asm__ volatile("csrw fcsr, zero\n\t"
                     "fmv.d.x ft0, %[snan]\n\tfeq.d t0, ft0, ft0\n\tcsrr %[f1], fflags\n\t"
                     "fmv.d.x ft0, %[one]\n\tfmv.d.x ft1, %[tiny]\n\tfadd.d ft0, ft0, ft1\n\t"
                     "csrr %[f2], fflags\n\tcsrwi frm, 3\n\tcsrr %[fcsr], fcsr\n\tcsrw fcsr, zero"
                     : [f1] "=&r"(f1), [f2] "=&r"(f2), [fcsr] "=&r"(fcsr)
                     : [snan] "r"(0x7ff4000000000000ull), [one] "r"(0x3ff0000000000000ull),
                       [tiny] "r"(1ull)
                     : "t0", "ft0", "ft1");
    printf("accrual: after feq %02lx, after fadd %02lx, fcsr %03lx\n", f1, f2, fcsr);
}

int main(void)
{
    for (size_t i = 0; i < N(ops); i++) {
        const struct op *o = &ops[i];
        const uint64_t *v = o->in == 's' ? vals_s : vals_d;
        size_t n = o->in == 's' ? N(vals_s) : N(vals_d);
        for (size_t x = 0; x < n; x++) {
            printf("%-8s %016llx", o->name, (unsigned long long)v[x]);
            for (size_t y = 0; y < (o->n == 2 ? n : 1); y++) {
                unsigned fl;
                uint64_t r = o->fn(v[x], v[y], &fl);
                printf(o->n == 2 ? " %llx/%x" : " -> %016llx/%02x", (unsigned long long)r, fl);
            }
            printf("\n");
        }
    }
    accrual();
    return 0;
}
