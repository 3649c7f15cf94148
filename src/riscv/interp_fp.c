/*
 * Interpreter for the F and D instructions that do not touch memory.
 *
 * interp_fp() resolves the rounding mode, reads operands with the RISC-V
 * NaN-boxing rule (a single whose upper 32 bits are not all ones reads as
 * the canonical NaN), calls the software FP core in fpu.c, NaN-boxes single
 * results and accrues fflags. Integer results go to x[rd] unless rd is x0.
 * An instruction that traps (reserved rounding mode) changes nothing.
 */
#include "riscv/fpu.h"
#include "riscv/interp.h"

#define BOX_S 0xffffffff00000000ull

/* -- Register access ------------------------------------------------------ */

static inline uint64_t read_s(const CPUState *cpu, unsigned r)
{
    uint64_t v = cpu->f[r];
    return (v & BOX_S) == BOX_S ? (uint32_t)v : FP_CANON_NAN_S;
}

/* Operand r of format f: unboxed single or raw double. */
static inline uint64_t read_f(const CPUState *cpu, enum fp_fmt f, unsigned r)
{
    return f == FP_S ? read_s(cpu, r) : cpu->f[r];
}

static inline void write_f(CPUState *cpu, enum fp_fmt f, unsigned r, uint64_t v)
{
    cpu->f[r] = f == FP_S ? BOX_S | (uint32_t)v : v;
}

static inline void write_x(CPUState *cpu, unsigned r, uint64_t v)
{
    if (r != 0)
        cpu->x[r] = v;
}

/* Rounding mode for the instruction, or -1 if it is reserved. */
static int resolve_rm(const CPUState *cpu, const Insn *in)
{
    unsigned rm = in->rm == RM_DYN ? cpu->frm : in->rm;
    return rm <= RM_RMM ? (int)rm : -1;
}

static bool has_rm(enum insn_format fmt)
{
    return fmt == FMT_FR_RM || fmt == FMT_FR4 || fmt == FMT_F1_RM ||
           fmt == FMT_XF_RM || fmt == FMT_FX_RM;
}

/* -- Sign injection ------------------------------------------------------- */

static uint64_t sgnj(enum fp_fmt f, uint64_t a, uint64_t b, int kind)
{
    uint64_t sbit = f == FP_S ? 1ull << 31 : 1ull << 63;
    uint64_t s;
    switch (kind) {
    case 0:  s = b & sbit; break;           /* fsgnj */
    case 1:  s = ~b & sbit; break;          /* fsgnjn */
    default: s = (a ^ b) & sbit; break;     /* fsgnjx */
    }
    return (a & ~sbit) | s;
}

/* -- Dispatch ------------------------------------------------------------- */

/* The op's format and, for conversions, its integer kind. */
#define FMT_OF(op) (insn_table[op].ext == EXT_D ? FP_D : FP_S)

enum exit_reason interp_fp(CPUState *cpu, const Insn *in)
{
    const enum fp_fmt f = FMT_OF(in->op);
    const unsigned rd = in->rd, r1 = in->rs1, r2 = in->rs2, r3 = in->rs3;
    int rm = 0;
    uint32_t fl = 0;

    if (has_rm(insn_table[in->op].fmt)) {
        rm = resolve_rm(cpu, in);
        if (rm < 0)
            return EXIT_ILLEGAL;
    }

#define A read_f(cpu, f, r1)
#define B read_f(cpu, f, r2)
#define C read_f(cpu, f, r3)
    switch (in->op) {
    case OP_fadd_s: case OP_fadd_d: write_f(cpu, f, rd, fp_add(f, A, B, rm, &fl)); break;
    case OP_fsub_s: case OP_fsub_d: write_f(cpu, f, rd, fp_sub(f, A, B, rm, &fl)); break;
    case OP_fmul_s: case OP_fmul_d: write_f(cpu, f, rd, fp_mul(f, A, B, rm, &fl)); break;
    case OP_fdiv_s: case OP_fdiv_d: write_f(cpu, f, rd, fp_div(f, A, B, rm, &fl)); break;
    case OP_fsqrt_s: case OP_fsqrt_d: write_f(cpu, f, rd, fp_sqrt(f, A, rm, &fl)); break;

    case OP_fmadd_s:  case OP_fmadd_d:
        write_f(cpu, f, rd, fp_fma(f, A, B, C, false, false, rm, &fl)); break;
    case OP_fmsub_s:  case OP_fmsub_d:
        write_f(cpu, f, rd, fp_fma(f, A, B, C, false, true, rm, &fl)); break;
    case OP_fnmsub_s: case OP_fnmsub_d:
        write_f(cpu, f, rd, fp_fma(f, A, B, C, true, false, rm, &fl)); break;
    case OP_fnmadd_s: case OP_fnmadd_d:
        write_f(cpu, f, rd, fp_fma(f, A, B, C, true, true, rm, &fl)); break;

    case OP_fsgnj_s:  case OP_fsgnj_d:  write_f(cpu, f, rd, sgnj(f, A, B, 0)); break;
    case OP_fsgnjn_s: case OP_fsgnjn_d: write_f(cpu, f, rd, sgnj(f, A, B, 1)); break;
    case OP_fsgnjx_s: case OP_fsgnjx_d: write_f(cpu, f, rd, sgnj(f, A, B, 2)); break;

    case OP_fmin_s: case OP_fmin_d: write_f(cpu, f, rd, fp_min(f, A, B, &fl)); break;
    case OP_fmax_s: case OP_fmax_d: write_f(cpu, f, rd, fp_max(f, A, B, &fl)); break;

    case OP_feq_s: case OP_feq_d: write_x(cpu, rd, fp_eq(f, A, B, &fl)); break;
    case OP_flt_s: case OP_flt_d: write_x(cpu, rd, fp_lt(f, A, B, &fl)); break;
    case OP_fle_s: case OP_fle_d: write_x(cpu, rd, fp_le(f, A, B, &fl)); break;
    case OP_fclass_s: case OP_fclass_d: write_x(cpu, rd, fp_class(f, A)); break;

    case OP_fcvt_w_s:  case OP_fcvt_w_d:  write_x(cpu, rd, fp_to_int(f, A, FPI_W, rm, &fl)); break;
    case OP_fcvt_wu_s: case OP_fcvt_wu_d: write_x(cpu, rd, fp_to_int(f, A, FPI_WU, rm, &fl)); break;
    case OP_fcvt_l_s:  case OP_fcvt_l_d:  write_x(cpu, rd, fp_to_int(f, A, FPI_L, rm, &fl)); break;
    case OP_fcvt_lu_s: case OP_fcvt_lu_d: write_x(cpu, rd, fp_to_int(f, A, FPI_LU, rm, &fl)); break;

    case OP_fcvt_s_w:  case OP_fcvt_d_w:
        write_f(cpu, f, rd, fp_from_int(f, cpu->x[r1], FPI_W, rm, &fl)); break;
    case OP_fcvt_s_wu: case OP_fcvt_d_wu:
        write_f(cpu, f, rd, fp_from_int(f, cpu->x[r1], FPI_WU, rm, &fl)); break;
    case OP_fcvt_s_l:  case OP_fcvt_d_l:
        write_f(cpu, f, rd, fp_from_int(f, cpu->x[r1], FPI_L, rm, &fl)); break;
    case OP_fcvt_s_lu: case OP_fcvt_d_lu:
        write_f(cpu, f, rd, fp_from_int(f, cpu->x[r1], FPI_LU, rm, &fl)); break;

    case OP_fcvt_s_d: write_f(cpu, FP_S, rd, fp_d_to_s(cpu->f[r1], rm, &fl)); break;
    case OP_fcvt_d_s: write_f(cpu, FP_D, rd, fp_s_to_d(read_s(cpu, r1), &fl)); break;

    /* Moves copy bits: no NaN-box check, no flags. */
    case OP_fmv_x_w: write_x(cpu, rd, (uint64_t)(int64_t)(int32_t)cpu->f[r1]); break;
    case OP_fmv_w_x: write_f(cpu, FP_S, rd, cpu->x[r1]); break;
    case OP_fmv_x_d: write_x(cpu, rd, cpu->f[r1]); break;
    case OP_fmv_d_x: write_f(cpu, FP_D, rd, cpu->x[r1]); break;

    default:
        return EXIT_ILLEGAL;    /* not an FP computation (loads/stores go elsewhere) */
    }
#undef A
#undef B
#undef C
    cpu->fflags |= fl;
    return EXIT_NONE;
}
