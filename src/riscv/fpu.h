/*
 * Software IEEE 754 binary32/binary64 arithmetic with exact RISC-V F/D
 * semantics: the golden model, used by the interpreter (interp_fp.c), which
 * translated code calls for the FP cases trans_ext.c does not translate
 * natively.
 *
 * Every function works on raw bit patterns: a single-precision value is the
 * low 32 bits of the argument (the caller strips or checks NaN-boxing), and a
 * single-precision result is returned in the low 32 bits with the upper bits
 * zero (the caller NaN-boxes it). `rm` is a resolved rounding mode RM_RNE ..
 * RM_RMM (never RM_DYN); exception flags are ORed into *flags using the
 * FFLAG_* bits of cpu.h.
 *
 * RISC-V rules implemented here, all matching QEMU's softfloat in its RISC-V
 * configuration: every NaN result is the canonical NaN; signaling NaN inputs
 * raise NV; tininess is detected after rounding and UF needs inexactness;
 * fma(inf, 0, c) raises NV even when c is a quiet NaN; min/max follow IEEE
 * 754-2019 minimumNumber/maximumNumber; float-to-integer conversions
 * saturate (NaN gives the maximum).
 */
#ifndef XLAT_RISCV_FPU_H
#define XLAT_RISCV_FPU_H

#include <stdbool.h>
#include <stdint.h>

/* Operand format. */
enum fp_fmt { FP_S = 0, FP_D = 1 };

/* Integer side of a conversion. */
enum fp_int_kind { FPI_W, FPI_WU, FPI_L, FPI_LU };

#define FP_CANON_NAN_S 0x7fc00000u
#define FP_CANON_NAN_D 0x7ff8000000000000ull

/* fclass result bits. */
enum {
    FCLASS_NEG_INF = 1 << 0, FCLASS_NEG_NORMAL = 1 << 1,
    FCLASS_NEG_SUBNORMAL = 1 << 2, FCLASS_NEG_ZERO = 1 << 3,
    FCLASS_POS_ZERO = 1 << 4, FCLASS_POS_SUBNORMAL = 1 << 5,
    FCLASS_POS_NORMAL = 1 << 6, FCLASS_POS_INF = 1 << 7,
    FCLASS_SNAN = 1 << 8, FCLASS_QNAN = 1 << 9,
};

uint64_t fp_add(enum fp_fmt f, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_sub(enum fp_fmt f, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_mul(enum fp_fmt f, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_div(enum fp_fmt f, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_sqrt(enum fp_fmt f, uint64_t a, int rm, uint32_t *flags);

/*
 * Fused (±a*b) ± c with one rounding: neg_prod negates the product, neg_c
 * negates c. fmadd = (0,0), fmsub = (0,1), fnmsub = (1,0), fnmadd = (1,1).
 */
uint64_t fp_fma(enum fp_fmt f, uint64_t a, uint64_t b, uint64_t c,
                bool neg_prod, bool neg_c, int rm, uint32_t *flags);

uint64_t fp_min(enum fp_fmt f, uint64_t a, uint64_t b, uint32_t *flags);
uint64_t fp_max(enum fp_fmt f, uint64_t a, uint64_t b, uint32_t *flags);

/* feq is quiet (NV only for sNaN); flt and fle signal NV on any NaN. */
bool fp_eq(enum fp_fmt f, uint64_t a, uint64_t b, uint32_t *flags);
bool fp_lt(enum fp_fmt f, uint64_t a, uint64_t b, uint32_t *flags);
bool fp_le(enum fp_fmt f, uint64_t a, uint64_t b, uint32_t *flags);

unsigned fp_class(enum fp_fmt f, uint64_t a);

/*
 * Float to integer, saturating. The result is what RISC-V writes to rd:
 * 32-bit kinds (W and WU) are sign-extended to 64 bits.
 */
uint64_t fp_to_int(enum fp_fmt f, uint64_t a, enum fp_int_kind k, int rm,
                   uint32_t *flags);

/* Integer to float. `v` is the x register; 32-bit kinds use its low half. */
uint64_t fp_from_int(enum fp_fmt f, uint64_t v, enum fp_int_kind k, int rm,
                     uint32_t *flags);

/* fcvt.s.d and fcvt.d.s. */
uint64_t fp_d_to_s(uint64_t a, int rm, uint32_t *flags);
uint64_t fp_s_to_d(uint64_t a, uint32_t *flags);

#endif
