/*
 * Static rounding modes: every F/D instruction that has an rm field, encoded
 * with each of rne/rtz/rdn/rup/rmm, on operands chosen so the modes give
 * different answers (ties, thirds, values next to overflow, underflow and
 * integer limits). frm is set to a different mode each time, so an
 * implementation that ignores the static field is caught. Prints the
 * result bits and fflags of every execution.
 */
#include <stdint.h>
#include <stdio.h>

typedef uint64_t (*fn_t)(uint64_t a, uint64_t b, uint64_t c, unsigned frm, unsigned *fl);

#define PRE  "csrw frm, %[frm]\n\tcsrw fflags, zero\n\t"
#define POST "\n\tcsrr %[fl], fflags"
#define FN(name) static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned frm, unsigned *fl)
#define BODY(text) { uint64_t r; unsigned long f; (void)a; (void)b; (void)c; \
    __asm__ volatile(text : [r] "=&r"(r), [fl] "=&r"(f) \
                     : [a] "r"(a), [b] "r"(b), [c] "r"(c), [frm] "r"(frm) \
                     : "ft0", "ft1", "ft2", "ft3"); *fl = f; return r; }

#define LD3 "fmv.d.x ft0,%[a]\n\tfmv.d.x ft1,%[b]\n\tfmv.d.x ft2,%[c]\n\t"
#define K_F4(fn, mn, rm)  FN(fn) BODY(LD3 PRE mn " ft3,ft0,ft1,ft2," rm "\n\tfmv.x.d %[r],ft3" POST)
#define K_F3(fn, mn, rm)  FN(fn) BODY(LD3 PRE mn " ft3,ft0,ft1," rm "\n\tfmv.x.d %[r],ft3" POST)
#define K_F2(fn, mn, rm)  FN(fn) BODY(LD3 PRE mn " ft3,ft0," rm "\n\tfmv.x.d %[r],ft3" POST)
#define K_XF(fn, mn, rm)  FN(fn) BODY(LD3 PRE mn " %[r],ft0," rm POST)
#define K_FX(fn, mn, rm)  FN(fn) BODY(PRE mn " ft3,%[a]," rm "\n\tfmv.x.d %[r],ft3" POST)
/* fcvt.d.w/wu/s: the assembler does not take an rm, so encode it by hand. */
#define K_DW(fn, rs2, rm) FN(fn) BODY(PRE ".insn r 0x53, " rm ", 0x69, ft3, %[a], x" #rs2 \
                                      "\n\tfmv.x.d %[r],ft3" POST)
#define K_DS(fn, x, rm)   FN(fn) BODY(LD3 PRE ".insn r 0x53, " rm ", 0x21, ft3, ft0, x0" \
                                      "\n\tfmv.x.d %[r],ft3" POST)

#define MODES(K, id, mn) K(id##_0, mn, "rne") K(id##_1, mn, "rtz") K(id##_2, mn, "rdn") \
                         K(id##_3, mn, "rup") K(id##_4, mn, "rmm")
#define MODESN(K, id, arg) K(id##_0, arg, "0") K(id##_1, arg, "1") K(id##_2, arg, "2") \
                           K(id##_3, arg, "3") K(id##_4, arg, "4")

MODES(K_F4, fmadd_s, "fmadd.s") MODES(K_F4, fmsub_s, "fmsub.s")
MODES(K_F4, fnmsub_s, "fnmsub.s") MODES(K_F4, fnmadd_s, "fnmadd.s")
MODES(K_F4, fmadd_d, "fmadd.d") MODES(K_F4, fmsub_d, "fmsub.d")
MODES(K_F4, fnmsub_d, "fnmsub.d") MODES(K_F4, fnmadd_d, "fnmadd.d")
MODES(K_F3, fadd_s, "fadd.s") MODES(K_F3, fsub_s, "fsub.s")
MODES(K_F3, fmul_s, "fmul.s") MODES(K_F3, fdiv_s, "fdiv.s")
MODES(K_F3, fadd_d, "fadd.d") MODES(K_F3, fsub_d, "fsub.d")
MODES(K_F3, fmul_d, "fmul.d") MODES(K_F3, fdiv_d, "fdiv.d")
MODES(K_F2, fsqrt_s, "fsqrt.s") MODES(K_F2, fsqrt_d, "fsqrt.d")
MODES(K_F2, fcvt_s_d, "fcvt.s.d") MODESN(K_DS, fcvt_d_s, 0)
MODES(K_XF, fcvt_w_s, "fcvt.w.s") MODES(K_XF, fcvt_wu_s, "fcvt.wu.s")
MODES(K_XF, fcvt_l_s, "fcvt.l.s") MODES(K_XF, fcvt_lu_s, "fcvt.lu.s")
MODES(K_XF, fcvt_w_d, "fcvt.w.d") MODES(K_XF, fcvt_wu_d, "fcvt.wu.d")
MODES(K_XF, fcvt_l_d, "fcvt.l.d") MODES(K_XF, fcvt_lu_d, "fcvt.lu.d")
MODES(K_FX, fcvt_s_w, "fcvt.s.w") MODES(K_FX, fcvt_s_wu, "fcvt.s.wu")
MODES(K_FX, fcvt_s_l, "fcvt.s.l") MODES(K_FX, fcvt_s_lu, "fcvt.s.lu")
MODESN(K_DW, fcvt_d_w, 0) MODESN(K_DW, fcvt_d_wu, 1)
MODES(K_FX, fcvt_d_l, "fcvt.d.l") MODES(K_FX, fcvt_d_lu, "fcvt.d.lu")

#define B 0xffffffff00000000ull

/* Operand sets, by operand kind. */
static const uint64_t vs[][3] = {   /* single */
    { B|0x3f800000, B|0x40400000, B|0xbeaaaaab },   /* 1, 3, -1/3 */
    { B|0xbf800000, B|0x40400000, B|0x3eaaaaab },
    { B|0x3f800001, B|0x3f800001, B|0xbf800000 },   /* fma residual tie */
    { B|0x3f800000, B|0x33800000, B|0x3f800000 },   /* 1 + 2^-24 tie */
    { B|0xbf800001, B|0x33800000, B|0x80000000 },
    { B|0x7f7fffff, B|0x40000000, B|0x7f7fffff },   /* overflow */
    { B|0xff7fffff, B|0x3f800001, B|0xff7fffff },
    { B|0x00800001, B|0x3f000000, B|0x00000001 },   /* subnormal tie */
    { B|0x00ffffff, B|0x3f000000, B|0x80000001 },
    { B|0x40200000, B|0x3fc00000, B|0xc0200000 },   /* 2.5, 1.5 */
    { B|0xc0200000, B|0x40000000, B|0x3f000000 },
    { B|0x4effffff, B|0x4f000000, B|0xcf000000 },   /* near 2^31 */
    { B|0x3f800000, B|0x3f800000, B|0xbf800000 },   /* exact zero sum */
    { B|0x7fa00000, B|0x3f800000, B|0x3f800000 },   /* sNaN */
    { B|0x40000000, B|0x00000000, B|0x7fc00000 },
    { 0x0000000040000000, B|0x3f800000, B|0x3f800000 },  /* unboxed */
};
static const uint64_t vd[][3] = {   /* double */
    { 0x3ff0000000000000, 0x4008000000000000, 0xbfd5555555555555 },
    { 0xbff0000000000000, 0x4008000000000000, 0x3fd5555555555555 },
    { 0x3ff0000000000001, 0x3ff0000000000001, 0xbff0000000000000 },
    { 0x3ff0000000000000, 0x3ca0000000000000, 0x3ff0000000000000 },
    { 0xbff0000000000001, 0x3ca0000000000000, 0x8000000000000000 },
    { 0x7fefffffffffffff, 0x4000000000000000, 0x7fefffffffffffff },
    { 0xffefffffffffffff, 0x3ff0000000000001, 0xffefffffffffffff },
    { 0x0010000000000001, 0x3fe0000000000000, 0x0000000000000001 },
    { 0x380ffffff0000000, 0x3ff0000000000000, 0x380fffffe8000000 },
    { 0x4004000000000000, 0x3ff8000000000000, 0xc004000000000000 },
    { 0xc004000000000000, 0x4000000000000000, 0x3fe0000000000000 },
    { 0x41dfffffffe00000, 0xc1e0000000100000, 0x43dfffffffffffff },
    { 0x43efffffffffffff, 0x43f0000000000000, 0xc3e0000000000001 },
    { 0x3ff0000000000000, 0x3ff0000000000000, 0xbff0000000000000 },
    { 0x7ff4000000000000, 0x3ff0000000000000, 0x3ff0000000000000 },
    { 0x47efffffefffffff, 0x36a8000000000000, 0xc7efffffe0000000 },
};
static const uint64_t vx[] = {
    0x7fffffff, 0x80000001, 0xffffffff, 0x01000001, 0x01000003, (uint64_t)-0x1000001,
    0x7fffffffffffffff, 0x8000000000000001, 0xffffffffffffffff, 0x0020000000000001,
    0x0020000000000003, 0xffdfffffffffffff, 0x123456789abcdef1, 0x00000000fffffe80, 0, 1,
};

struct op { const char *name; fn_t fn[5]; char in; };
#define OP(id, in) { #id, { id##_0, id##_1, id##_2, id##_3, id##_4 }, in }

static const struct op ops[] = {
    OP(fmadd_s, 's'), OP(fmsub_s, 's'), OP(fnmsub_s, 's'), OP(fnmadd_s, 's'),
    OP(fmadd_d, 'd'), OP(fmsub_d, 'd'), OP(fnmsub_d, 'd'), OP(fnmadd_d, 'd'),
    OP(fadd_s, 's'), OP(fsub_s, 's'), OP(fmul_s, 's'), OP(fdiv_s, 's'),
    OP(fadd_d, 'd'), OP(fsub_d, 'd'), OP(fmul_d, 'd'), OP(fdiv_d, 'd'),
    OP(fsqrt_s, 's'), OP(fsqrt_d, 'd'), OP(fcvt_s_d, 'd'), OP(fcvt_d_s, 's'),
    OP(fcvt_w_s, 's'), OP(fcvt_wu_s, 's'), OP(fcvt_l_s, 's'), OP(fcvt_lu_s, 's'),
    OP(fcvt_w_d, 'd'), OP(fcvt_wu_d, 'd'), OP(fcvt_l_d, 'd'), OP(fcvt_lu_d, 'd'),
    OP(fcvt_s_w, 'x'), OP(fcvt_s_wu, 'x'), OP(fcvt_s_l, 'x'), OP(fcvt_s_lu, 'x'),
    OP(fcvt_d_w, 'x'), OP(fcvt_d_wu, 'x'), OP(fcvt_d_l, 'x'), OP(fcvt_d_lu, 'x'),
};

int main(void)
{
    static const char *const mode[5] = { "rne", "rtz", "rdn", "rup", "rmm" };

    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const struct op *o = &ops[i];
        for (int k = 0; k < 16; k++) {
            uint64_t a, b, c;
            if (o->in == 'x') {
                a = vx[k]; b = c = 0;
            } else {
                const uint64_t *v = o->in == 's' ? vs[k] : vd[k];
                a = v[0]; b = v[1]; c = v[2];
            }
            printf("%-9s %016llx %016llx %016llx:", o->name, (unsigned long long)a,
                   (unsigned long long)b, (unsigned long long)c);
            for (int m = 0; m < 5; m++) {
                unsigned fl;
                uint64_t r = o->fn[m](a, b, c, (m + 2 + k % 3) % 5, &fl);
                printf(" %s=%016llx/%02x", mode[m], (unsigned long long)r, fl);
            }
            printf("\n");
        }
    }
    return 0;
}
