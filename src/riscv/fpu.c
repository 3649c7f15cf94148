/*
 * Software floating point core for RISC-V F and D (see fpu.h for the
 * contract).
 *
 * Every operation follows one shape: unpack the operands into a class and,
 * for finite nonzero values, a sign, an unbiased exponent and a 64-bit
 * significand normalized so that bit 63 is set (value = sig * 2^(exp-63));
 * deal with NaN, infinity and zero by the RISC-V rules; compute the exact
 * result (or an exact-enough one with a sticky bit ORed into the lowest
 * bit) with unsigned __int128 arithmetic; then hand it to round_pack(),
 * the single place that rounds in any of the five modes and raises
 * NX/UF/OF. Written from the IEEE 754 and RISC-V specifications.
 */
#include "riscv/fpu.h"

#include "riscv/cpu.h"
#include "riscv/insn.h"

typedef unsigned __int128 u128;

/* -- Formats -------------------------------------------------------------- */

typedef struct FmtInfo {
    int mbits;          /* stored fraction bits */
    int ebits;          /* exponent field bits */
    int bias;
    uint64_t qnan;      /* canonical NaN */
} FmtInfo;

static const FmtInfo fmt_info[2] = {
    [FP_S] = { 23, 8, 127, FP_CANON_NAN_S },
    [FP_D] = { 52, 11, 1023, FP_CANON_NAN_D },
};

static inline unsigned sign_shift(const FmtInfo *f) { return f->mbits + f->ebits; }
static inline uint64_t exp_mask(const FmtInfo *f) { return (1ull << f->ebits) - 1; }
static inline uint64_t frac_mask(const FmtInfo *f) { return (1ull << f->mbits) - 1; }

static inline uint64_t pack_sign(const FmtInfo *f, bool sign)
{
    return (uint64_t)sign << sign_shift(f);
}

static inline uint64_t pack_inf(const FmtInfo *f, bool sign)
{
    return pack_sign(f, sign) | exp_mask(f) << f->mbits;
}

/* -- Unpacking ------------------------------------------------------------ */

enum fp_class_kind { K_ZERO, K_FINITE, K_INF, K_QNAN, K_SNAN };

typedef struct Unpacked {
    enum fp_class_kind cls;
    bool sign;
    int exp;            /* K_FINITE: value = sig * 2^(exp - 63) */
    uint64_t sig;       /* K_FINITE: bit 63 set */
} Unpacked;

static Unpacked unpack(const FmtInfo *f, uint64_t x)
{
    Unpacked u = { .sign = (x >> sign_shift(f)) & 1 };
    uint64_t frac = x & frac_mask(f);
    uint64_t ef = (x >> f->mbits) & exp_mask(f);

    if (ef == exp_mask(f)) {
        if (frac == 0)
            u.cls = K_INF;
        else
            u.cls = (frac >> (f->mbits - 1)) & 1 ? K_QNAN : K_SNAN;
    } else if (ef == 0 && frac == 0) {
        u.cls = K_ZERO;
    } else {
        u.cls = K_FINITE;
        if (ef != 0)
            frac |= 1ull << f->mbits;
        else
            ef = 1;     /* subnormal: same scale as the smallest normal */
        int lz = __builtin_clzll(frac);
        u.sig = frac << lz;
        u.exp = (int)ef - f->bias + (63 - f->mbits - lz);
    }
    return u;
}

static inline bool is_nan(const Unpacked *u) { return u->cls >= K_QNAN; }

/* -- Rounding ------------------------------------------------------------- */

/*
 * sig / 2^shift rounded to an integer in mode rm (the value's sign is
 * `sign`, which the directed modes need). *inexact says whether anything
 * nonzero was shifted out. Any shift >= 0 is allowed.
 */
static uint64_t shift_round(uint64_t sig, int shift, int rm, bool sign, bool *inexact)
{
    uint64_t q, rem, half;

    if (shift == 0) {
        *inexact = false;
        return sig;
    }
    if (shift < 64) {
        q = sig >> shift;
        rem = sig & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    } else if (shift == 64) {
        q = 0;
        rem = sig;
        half = 1ull << 63;
    } else {            /* far below one half: only stickiness survives */
        q = 0;
        rem = sig != 0;
        half = 2;
    }
    *inexact = rem != 0;
    if (rem == 0)
        return q;

    bool up;
    switch (rm) {
    case RM_RNE: up = rem > half || (rem == half && (q & 1)); break;
    case RM_RDN: up = sign; break;
    case RM_RUP: up = !sign; break;
    case RM_RMM: up = rem >= half; break;
    default:     up = false; break;         /* RM_RTZ */
    }
    return q + up;
}

/* Result of an overflow: infinity or the largest finite value. */
static uint64_t overflow_result(const FmtInfo *f, bool sign, int rm)
{
    bool to_inf = rm == RM_RNE || rm == RM_RMM ||
                  (rm == RM_RUP && !sign) || (rm == RM_RDN && sign);
    return to_inf ? pack_inf(f, sign) : pack_inf(f, sign) - 1;
}

/*
 * Round sign * sig * 2^(exp-63) (sig has bit 63 set; bit 0 may be a sticky
 * bit standing for anything nonzero below it) to the format and pack it.
 */
static uint64_t round_pack(const FmtInfo *f, bool sign, int exp, uint64_t sig,
                           int rm, uint32_t *flags)
{
    const int prec = f->mbits + 1;
    const int emin = 1 - f->bias;
    int shift = 64 - prec;
    bool tiny = false, inexact;
    uint64_t bits;

    if (exp > f->bias) {
        *flags |= FFLAG_OF | FFLAG_NX;
        return overflow_result(f, sign, rm);
    }
    if (exp < emin) {
        /*
         * Tininess after rounding: tiny unless rounding to full precision
         * with an unbounded exponent would reach the smallest normal.
         */
        tiny = true;
        if (exp == emin - 1 && shift_round(sig, shift, rm, sign, &inexact) >> prec)
            tiny = false;
        int extra = emin - exp;
        shift += extra > 100 ? 100 : extra;
    }
    uint64_t q = shift_round(sig, shift, rm, sign, &inexact);
    if (exp < emin) {
        bits = q;       /* a carry into bit mbits makes it the smallest normal */
    } else {
        /* q includes the hidden bit, so a rounding carry bumps the exponent. */
        bits = ((uint64_t)(exp + f->bias - 1) << f->mbits) + q;
        if ((bits >> f->mbits) >= exp_mask(f)) {
            *flags |= FFLAG_OF | FFLAG_NX;
            return overflow_result(f, sign, rm);
        }
    }
    if (inexact) {
        *flags |= FFLAG_NX;
        if (tiny)
            *flags |= FFLAG_UF;
    }
    return bits | pack_sign(f, sign);
}

/* Collapse a nonzero 128-bit magnitude (value = x * 2^(exp - 125)) and round. */
static uint64_t round_pack128(const FmtInfo *f, bool sign, int exp, u128 x,
                              int rm, uint32_t *flags)
{
    uint64_t hi = (uint64_t)(x >> 64);
    int lead = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)x);
    uint64_t sig;

    if (lead >= 63) {
        int sh = lead - 63;
        sig = (uint64_t)(x >> sh) | (sh && (x & (((u128)1 << sh) - 1)) != 0);
    } else {
        sig = (uint64_t)x << (63 - lead);
    }
    return round_pack(f, sign, exp - 125 + lead, sig, rm, flags);
}

/* x >> d with everything shifted out ORed into bit 0. */
static u128 shr_jam128(u128 x, int d)
{
    if (d == 0)
        return x;
    if (d >= 128)
        return x != 0;
    return (x >> d) | ((x << (128 - d)) != 0);
}

/* -- NaN handling --------------------------------------------------------- */

static uint64_t nan_result(const FmtInfo *f, const Unpacked *a, const Unpacked *b,
                           uint32_t *flags)
{
    if (a->cls == K_SNAN || (b && b->cls == K_SNAN))
        *flags |= FFLAG_NV;
    return f->qnan;
}

static uint64_t invalid(const FmtInfo *f, uint32_t *flags)
{
    *flags |= FFLAG_NV;
    return f->qnan;
}

/* -- Add, sub ------------------------------------------------------------- */

/*
 * sa*A*2^(ea-125) + sb*B*2^(eb-125), both nonzero with their leading bit at
 * 125 and at least a few clear low bits, rounded once. Exact cancellation
 * gives +0, or -0 when rounding down.
 */
static uint64_t add_aligned(const FmtInfo *f, bool sa, int ea, u128 A,
                            bool sb, int eb, u128 B, int rm, uint32_t *flags)
{
    if (ea < eb || (ea == eb && A < B)) {
        bool ts = sa; sa = sb; sb = ts;
        int te = ea; ea = eb; eb = te;
        u128 tx = A; A = B; B = tx;
    }
    B = shr_jam128(B, ea - eb > 200 ? 200 : ea - eb);
    u128 s = sa == sb ? A + B : A - B;
    if (s == 0)
        return pack_sign(f, rm == RM_RDN);
    return round_pack128(f, sa, ea, s, rm, flags);
}

static uint64_t add_common(const FmtInfo *f, uint64_t a, uint64_t b, bool negb,
                           int rm, uint32_t *flags)
{
    Unpacked ua = unpack(f, a), ub = unpack(f, b);
    ub.sign ^= negb;
    if (is_nan(&ua) || is_nan(&ub))
        return nan_result(f, &ua, &ub, flags);
    if (ua.cls == K_INF) {
        if (ub.cls == K_INF && ua.sign != ub.sign)
            return invalid(f, flags);
        return pack_inf(f, ua.sign);
    }
    if (ub.cls == K_INF)
        return pack_inf(f, ub.sign);
    if (ua.cls == K_ZERO && ub.cls == K_ZERO)
        return pack_sign(f, ua.sign == ub.sign ? ua.sign : rm == RM_RDN);
    if (ua.cls == K_ZERO)
        return b ^ pack_sign(f, negb);
    if (ub.cls == K_ZERO)
        return a;
    return add_aligned(f, ua.sign, ua.exp, (u128)ua.sig << 62,
                       ub.sign, ub.exp, (u128)ub.sig << 62, rm, flags);
}

uint64_t fp_add(enum fp_fmt fm, uint64_t a, uint64_t b, int rm, uint32_t *flags)
{
    return add_common(&fmt_info[fm], a, b, false, rm, flags);
}

uint64_t fp_sub(enum fp_fmt fm, uint64_t a, uint64_t b, int rm, uint32_t *flags)
{
    return add_common(&fmt_info[fm], a, b, true, rm, flags);
}

/* -- Mul, div, sqrt ------------------------------------------------------- */

uint64_t fp_mul(enum fp_fmt fm, uint64_t a, uint64_t b, int rm, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked ua = unpack(f, a), ub = unpack(f, b);
    bool sign = ua.sign ^ ub.sign;

    if (is_nan(&ua) || is_nan(&ub))
        return nan_result(f, &ua, &ub, flags);
    if (ua.cls == K_INF || ub.cls == K_INF) {
        if (ua.cls == K_ZERO || ub.cls == K_ZERO)
            return invalid(f, flags);
        return pack_inf(f, sign);
    }
    if (ua.cls == K_ZERO || ub.cls == K_ZERO)
        return pack_sign(f, sign);
    /* Product in [2^126, 2^128): value = p * 2^(ea+eb-126). */
    u128 p = (u128)ua.sig * ub.sig;
    return round_pack128(f, sign, ua.exp + ub.exp - 1, p, rm, flags);
}

uint64_t fp_div(enum fp_fmt fm, uint64_t a, uint64_t b, int rm, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked ua = unpack(f, a), ub = unpack(f, b);
    bool sign = ua.sign ^ ub.sign;

    if (is_nan(&ua) || is_nan(&ub))
        return nan_result(f, &ua, &ub, flags);
    if (ua.cls == K_INF)
        return ub.cls == K_INF ? invalid(f, flags) : pack_inf(f, sign);
    if (ub.cls == K_INF)
        return pack_sign(f, sign);
    if (ub.cls == K_ZERO) {
        if (ua.cls == K_ZERO)
            return invalid(f, flags);
        *flags |= FFLAG_DZ;
        return pack_inf(f, sign);
    }
    if (ua.cls == K_ZERO)
        return pack_sign(f, sign);
    /* q = sigA * 2^64 / sigB lies in (2^63, 2^65); the remainder is sticky. */
    u128 n = (u128)ua.sig << 64;
    u128 q = n / ub.sig;
    bool sticky = n % ub.sig != 0;
    /* value = q * 2^(ea - eb - 64); round_pack128 wants 2^(exp - 125). */
    return round_pack128(f, sign, ua.exp - ub.exp + 59, q << 2 | sticky, rm, flags);
}

/* floor(sqrt(m)) and whether it is exact, for m < 2^128. */
static uint64_t isqrt128(u128 m, bool *exact)
{
    u128 res = 0, bit = (u128)1 << 126;
    while (bit) {
        if (m >= res + bit) {
            m -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    *exact = m == 0;
    return (uint64_t)res;
}

uint64_t fp_sqrt(enum fp_fmt fm, uint64_t a, int rm, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked ua = unpack(f, a);

    if (is_nan(&ua))
        return nan_result(f, &ua, NULL, flags);
    if (ua.cls == K_ZERO)
        return a;
    if (ua.sign)
        return invalid(f, flags);
    if (ua.cls == K_INF)
        return a;
    /* value = m * 2^k with k even; sqrt = isqrt(m) * 2^(k/2). */
    u128 m;
    int k;
    if (((ua.exp - 127) & 1) == 0) {
        m = (u128)ua.sig << 64;
        k = ua.exp - 127;
    } else {
        m = (u128)ua.sig << 63;
        k = ua.exp - 126;
    }
    bool exact;
    uint64_t r = isqrt128(m, &exact);   /* bit 63 set since m >= 2^126 */
    return round_pack(f, false, k / 2 + 63, r | !exact, rm, flags);
}

/* -- Fused multiply-add --------------------------------------------------- */

uint64_t fp_fma(enum fp_fmt fm, uint64_t a, uint64_t b, uint64_t c,
                bool neg_prod, bool neg_c, int rm, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked ua = unpack(f, a), ub = unpack(f, b), uc = unpack(f, c);
    bool sp = ua.sign ^ ub.sign ^ neg_prod;
    bool sc = uc.sign ^ neg_c;
    bool inf_zero = (ua.cls == K_INF && ub.cls == K_ZERO) ||
                    (ua.cls == K_ZERO && ub.cls == K_INF);

    if (is_nan(&ua) || is_nan(&ub) || is_nan(&uc)) {
        /* RISC-V: inf * 0 is invalid even when the addend is a quiet NaN. */
        if (ua.cls == K_SNAN || ub.cls == K_SNAN || uc.cls == K_SNAN || inf_zero)
            *flags |= FFLAG_NV;
        return f->qnan;
    }
    if (inf_zero)
        return invalid(f, flags);
    if (ua.cls == K_INF || ub.cls == K_INF) {
        if (uc.cls == K_INF && sc != sp)
            return invalid(f, flags);
        return pack_inf(f, sp);
    }
    if (uc.cls == K_INF)
        return pack_inf(f, sc);
    if (ua.cls == K_ZERO || ub.cls == K_ZERO) {
        if (uc.cls == K_ZERO)
            return pack_sign(f, sp == sc ? sp : rm == RM_RDN);
        return c ^ pack_sign(f, neg_c);
    }
    /*
     * The exact product has at most 106 significant bits and at least 22
     * clear low bits, so normalizing its leading bit down to 125 is exact.
     */
    u128 p = (u128)ua.sig * ub.sig;
    int ep = ua.exp + ub.exp;
    if (p >> 127) {
        p >>= 2;
        ep += 1;
    } else {
        p >>= 1;
    }
    if (uc.cls == K_ZERO)
        return round_pack128(f, sp, ep, p, rm, flags);
    return add_aligned(f, sp, ep, p, sc, uc.exp, (u128)uc.sig << 62, rm, flags);
}

/* -- Min, max, compare, classify ------------------------------------------ */

/* Total order key for non-NaN values; -0 and +0 compare equal. */
static int64_t order_key(const FmtInfo *f, uint64_t x)
{
    uint64_t mag = x & ((1ull << sign_shift(f)) - 1);
    return (x >> sign_shift(f)) & 1 ? -(int64_t)mag : (int64_t)mag;
}

static uint64_t minmax(enum fp_fmt fm, uint64_t a, uint64_t b, bool want_max,
                       uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked ua = unpack(f, a), ub = unpack(f, b);

    if (ua.cls == K_SNAN || ub.cls == K_SNAN)
        *flags |= FFLAG_NV;
    if (is_nan(&ua) && is_nan(&ub))
        return f->qnan;
    if (is_nan(&ua))
        return b;
    if (is_nan(&ub))
        return a;
    int64_t ka = order_key(f, a), kb = order_key(f, b);
    if (ka == kb)               /* equal, or +0 vs -0: -0 is the smaller */
        return want_max ? (ua.sign ? b : a) : (ua.sign ? a : b);
    return (ka > kb) == want_max ? a : b;
}

uint64_t fp_min(enum fp_fmt fm, uint64_t a, uint64_t b, uint32_t *flags)
{
    return minmax(fm, a, b, false, flags);
}

uint64_t fp_max(enum fp_fmt fm, uint64_t a, uint64_t b, uint32_t *flags)
{
    return minmax(fm, a, b, true, flags);
}

/* Returns false and raises NV as required if either operand is a NaN. */
static bool ordered(const FmtInfo *f, uint64_t a, uint64_t b, bool signaling,
                    uint32_t *flags)
{
    Unpacked ua = unpack(f, a), ub = unpack(f, b);
    if (!is_nan(&ua) && !is_nan(&ub))
        return true;
    if (signaling || ua.cls == K_SNAN || ub.cls == K_SNAN)
        *flags |= FFLAG_NV;
    return false;
}

bool fp_eq(enum fp_fmt fm, uint64_t a, uint64_t b, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    return ordered(f, a, b, false, flags) && order_key(f, a) == order_key(f, b);
}

bool fp_lt(enum fp_fmt fm, uint64_t a, uint64_t b, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    return ordered(f, a, b, true, flags) && order_key(f, a) < order_key(f, b);
}

bool fp_le(enum fp_fmt fm, uint64_t a, uint64_t b, uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    return ordered(f, a, b, true, flags) && order_key(f, a) <= order_key(f, b);
}

unsigned fp_class(enum fp_fmt fm, uint64_t a)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked u = unpack(f, a);
    bool subnormal = ((a >> f->mbits) & exp_mask(f)) == 0;

    switch (u.cls) {
    case K_QNAN: return FCLASS_QNAN;
    case K_SNAN: return FCLASS_SNAN;
    case K_INF:  return u.sign ? FCLASS_NEG_INF : FCLASS_POS_INF;
    case K_ZERO: return u.sign ? FCLASS_NEG_ZERO : FCLASS_POS_ZERO;
    default:
        if (subnormal)
            return u.sign ? FCLASS_NEG_SUBNORMAL : FCLASS_POS_SUBNORMAL;
        return u.sign ? FCLASS_NEG_NORMAL : FCLASS_POS_NORMAL;
    }
}

/* -- Conversions ---------------------------------------------------------- */

static uint64_t int_max(enum fp_int_kind k)
{
    switch (k) {
    case FPI_W:  return INT32_MAX;
    case FPI_WU: return UINT32_MAX;
    case FPI_L:  return INT64_MAX;
    default:     return UINT64_MAX;
    }
}

/* Magnitude of the most negative value of a signed kind. */
static uint64_t int_min_mag(enum fp_int_kind k)
{
    return k == FPI_W ? 1ull << 31 : 1ull << 63;
}

static bool is_signed_kind(enum fp_int_kind k) { return k == FPI_W || k == FPI_L; }

/* Saturated value for an invalid conversion of something with this sign. */
static uint64_t int_saturate(enum fp_int_kind k, bool neg, uint32_t *flags)
{
    *flags |= FFLAG_NV;
    if (!neg)
        return int_max(k);
    return is_signed_kind(k) ? -int_min_mag(k) : 0;
}

static uint64_t int_result(enum fp_int_kind k, uint64_t v)
{
    return k == FPI_W || k == FPI_WU ? (uint64_t)(int64_t)(int32_t)(uint32_t)v : v;
}

uint64_t fp_to_int(enum fp_fmt fm, uint64_t a, enum fp_int_kind k, int rm,
                   uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    Unpacked u = unpack(f, a);

    switch (u.cls) {
    case K_QNAN:
    case K_SNAN: return int_result(k, int_saturate(k, false, flags));
    case K_INF:  return int_result(k, int_saturate(k, u.sign, flags));
    case K_ZERO: return 0;
    default:     break;
    }
    if (u.exp > 63)
        return int_result(k, int_saturate(k, u.sign, flags));
    int shift = 63 - u.exp;
    bool inexact;
    uint64_t q = shift_round(u.sig, shift > 100 ? 100 : shift, rm, u.sign, &inexact);
    uint64_t r;

    if (q == 0) {
        r = 0;          /* rounded to zero: never invalid, even if negative */
    } else if (u.sign) {
        if (!is_signed_kind(k) || q > int_min_mag(k))
            return int_result(k, int_saturate(k, true, flags));
        r = -q;
    } else {
        if (q > int_max(k))
            return int_result(k, int_saturate(k, false, flags));
        r = q;
    }
    if (inexact)
        *flags |= FFLAG_NX;
    return int_result(k, r);
}

uint64_t fp_from_int(enum fp_fmt fm, uint64_t v, enum fp_int_kind k, int rm,
                     uint32_t *flags)
{
    const FmtInfo *f = &fmt_info[fm];
    bool neg = false;
    uint64_t mag;

    switch (k) {
    case FPI_W:  neg = (int32_t)v < 0; mag = neg ? -(uint64_t)(int32_t)v : (uint32_t)v; break;
    case FPI_WU: mag = (uint32_t)v; break;
    case FPI_L:  neg = (int64_t)v < 0; mag = neg ? -v : v; break;
    default:     mag = v; break;
    }
    if (mag == 0)
        return 0;
    int lz = __builtin_clzll(mag);
    return round_pack(f, neg, 63 - lz, mag << lz, rm, flags);
}

/* Conversion between formats: only finite nonzero values need rounding. */
static uint64_t convert(const FmtInfo *from, const FmtInfo *to, uint64_t a,
                        int rm, uint32_t *flags)
{
    Unpacked u = unpack(from, a);

    switch (u.cls) {
    case K_QNAN:
    case K_SNAN: return nan_result(to, &u, NULL, flags);
    case K_INF:  return pack_inf(to, u.sign);
    case K_ZERO: return pack_sign(to, u.sign);
    default:     return round_pack(to, u.sign, u.exp, u.sig, rm, flags);
    }
}

uint64_t fp_d_to_s(uint64_t a, int rm, uint32_t *flags)
{
    return convert(&fmt_info[FP_D], &fmt_info[FP_S], a, rm, flags);
}

uint64_t fp_s_to_d(uint64_t a, uint32_t *flags)
{
    return convert(&fmt_info[FP_S], &fmt_info[FP_D], a, RM_RNE, flags);
}
