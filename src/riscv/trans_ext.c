/*
 * Native translation of the M, F and D extensions (called from
 * translate_insn for everything translate.c does not handle itself).
 *
 * Each translator emits a fast path for the common case and, when some
 * input is unusual, branches to a "bail" label that runs the instruction
 * in the interpreter (the backend's out-of-line slow path, as for a guest
 * access outside the window). A bail happens before the instruction has
 * changed any guest state, so the interpreter sees exactly the state
 * before it: the golden model decides every corner case.
 *
 * M: div/rem with RISC-V's results for a zero divisor and for overflow
 * (branches around idiv), mulh/mulhu/mulhsu with the one-operand
 * mul/imul. rdx, which idiv and mul clobber, holds guest s2: it is parked
 * in CPUState.x[18] meanwhile.
 *
 * A (LR/SC, AMOs) is not here yet: those still run in the interpreter
 * (they are rare in the single-threaded workloads measured so far).
 *
 * F/D: values stay in CPUState.f[]; the arithmetic runs on SSE scalar
 * instructions, which round as IEEE 754 requires for RNE/RTZ/RDN/RUP and
 * detect tininess after rounding as RISC-V does. Translated code keeps
 * MXCSR in round-to-nearest with no flag but PE set (x86/backend.c sets it
 * on entry and around interpreter calls): an RNE operation (static, or
 * dynamic with frm = RNE, the usual case) needs no ldmxcsr; another mode is
 * loaded before the op and the default restored after it. After the op,
 * stmxcsr: any of IE/ZE/OE/UE, or a NaN result, bails (x86 NaN results are
 * not RISC-V's canonical NaN, and those cases are rare; the interpreter
 * call clears the flag); PE accrues NX inline. PE left over from an earlier
 * operation only re-accrues NX, which fflags then already holds (a write to
 * fflags clears MXCSR's flags too). Single-precision
 * operands that are not NaN-boxed bail. The fused multiply-adds use FMA3
 * when the host has it. RMM, fmin/fmax and fclass stay in the
 * interpreter.
 *
 * Also here: reads and writes of the FP CSRs (fflags, frm, fcsr).
 */
#include <stddef.h>

#include "riscv/cpu.h"
#include "exec/settings.h"
#include "riscv/translate_priv.h"

#define F_OFF(r) (CPU_OFF(f) + 8 * (r))
#define MXCSR_OFF (CPU_OFF(jit_mxcsr))
/* MXCSR flag bits that bail: IE, ZE, OE, UE (DE, bit 1, is ignored). */
#define MXCSR_BAIL 0x1d
#define MXCSR_PE_BIT 5
/* MXCSR of each RISC-V rounding mode 0..3, 16 bits each: RC = 0, 3, 1, 2. */
#define MXCSR_BY_RM 0x5f803f807f801f80ull

/* -- Bail to the interpreter ---------------------------------------------- */

typedef struct Bails {
    uint8_t *jcc[8];
    int n;
} Bails;

static void bail_if(T *t, Bails *b, int cc)
{
    b->jcc[b->n++] = emit_jcc(t->e, cc);
}

/*
 * End of the instruction: the fast path jumps over one in-line jmp that
 * every bail reaches, which leads to the backend's out-of-line
 * interpreter call for this pc, which resumes here.
 */
static void bails_finish(T *t, Bails *b)
{
    if (b->n == 0)
        return;
    Emit *e = t->e;
    uint8_t *over = emit_jmp(e);
    for (int i = 0; i < b->n; i++)
        emit_patch_rel32(b->jcc[i], e->p);
    BeSlow *s = be_slow_add(t->c, t->pc);
    s->jcc = emit_jmp(e);
    emit_patch_rel32(over, e->p);
    s->resume = e->p;
}

/* -- M: division and high multiplication ------------------------------------ */

/* Guest register g into host d, reading x18 from its parking slot. */
static void load_parked(Emit *e, int d, int g)
{
    if (g == 18)
        emit_ld64(e, d, REG_CPU, CPU_X_OFF(18));
    else
        load_into(e, d, g);
}

/* Park rdx (guest s2) in its slot; then rcx = rs2, rax = rs1. */
static void park_operands(T *t)
{
    emit_st64(t->e, RDX, REG_CPU, CPU_X_OFF(18));
    load_parked(t->e, RCX, t->in->rs2);
    load_parked(t->e, RAX, t->in->rs1);
}

/* rax = result; put it in rd and bring guest s2 back to rdx. */
static void unpark_rdx(T *t, bool w32)
{
    if (w32)
        emit_movslq(t->e, RAX, RAX);
    emit_ld64(t->e, RDX, REG_CPU, CPU_X_OFF(18));
    writeback(t->e, t->in->rd, RAX);
}

static bool tr_divrem(T *t, bool sign, bool rem, bool w32)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    if (in->rd == 0)
        return true;
    park_operands(t);
    if (w32 && !sign)
        emit_movzlq(e, RAX, RAX);
    if (w32)
        emit_modrm(e, OPC_TESTL, RCX, RCX);
    else
        emit_test_rr(e, RCX, RCX);
    uint8_t *zero = emit_jcc(e, CC_E);
    uint8_t *ovf = NULL;
    if (sign) {
        emit_arith_ri(e, ARITH_CMP, RCX, -1, w32);
        uint8_t *normal = emit_jcc(e, CC_NE);
        /* x / -1 = -x (INT_MIN / -1 = INT_MIN), x % -1 = 0 */
        if (rem)
            emit_mov_ri(e, RAX, 0);
        else
            emit_grp3(e, EXT3_NEG, RAX, w32);
        ovf = emit_jmp(e);
        emit_patch_rel32(normal, e->p);
        emit_opc(e, OPC_CQO | (w32 ? 0 : P_REXW), 0, 0, 0);
        emit_grp3(e, EXT3_IDIV, RCX, w32);
    } else {
        emit_mov_ri(e, RDX, 0);
        emit_grp3(e, EXT3_DIV, RCX, w32);
    }
    if (rem)
        emit_mov_rr(e, RAX, RDX);
    uint8_t *done = emit_jmp(e);
    emit_patch_rel32(zero, e->p);
    /* x / 0 = all ones, x % 0 = x (rax still holds x) */
    if (!rem)
        emit_mov_ri(e, RAX, (uint64_t)-1);
    emit_patch_rel32(done, e->p);
    if (ovf)
        emit_patch_rel32(ovf, e->p);
    unpark_rdx(t, w32);
    return true;
}

/* kind 0 mulh, 1 mulhu, 2 mulhsu */
static bool tr_mulh(T *t, int kind)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    if (in->rd == 0)
        return true;
    park_operands(t);
    emit_grp3(e, kind == 0 ? EXT3_IMUL : EXT3_MUL, RCX, false);
    if (kind == 2) {
        /* unsigned high part minus b if a < 0 (a as signed) */
        load_parked(e, RAX, in->rs1);
        emit_shift_ri(e, SHIFT_SAR, RAX, 63, false);
        emit_arith_rr(e, ARITH_AND, RAX, RCX, false);
        emit_arith_rr(e, ARITH_SUB, RDX, RAX, false);
    }
    emit_mov_rr(e, RAX, RDX);
    unpark_rdx(t, false);
    return true;
}

/* -- F/D: rounding mode and flags ------------------------------------------- */

static bool has_rm(const Insn *in)
{
    enum insn_format f = insn_table[in->op].fmt;
    return f == FMT_FR_RM || f == FMT_FR4 || f == FMT_F1_RM || f == FMT_XF_RM || f == FMT_FX_RM;
}

/* ldmxcsr (EXT15_LDMXCSR) or stmxcsr (EXT15_STMXCSR) of cpu->jit_mxcsr[0]. */
static void mxcsr_insn(Emit *e, int ext)
{
    emit_modrm_mem(e, OPC_GRP15, ext, REG_CPU, NO_REG, 0, MXCSR_OFF);
}

static void store_u32_imm(Emit *e, int32_t off, uint32_t v)
{
    emit_modrm_mem(e, OPC_MOVL_EvIz, 0, REG_CPU, NO_REG, 0, off);
    emit_imm32(e, v);
}

/* The MXCSR image of the rounding mode in rcx (0..3), in jit_mxcsr[0]. */
static void mxcsr_image_of_rcx(Emit *e)
{
    emit_shift_ri(e, SHIFT_SHL, RCX, 4, true);
    emit_mov_ri(e, RAX, MXCSR_BY_RM);
    emit_shift_cl(e, SHIFT_SHR, RAX, false);
    emit_modrm(e, OPC_MOVZWL, RAX, RAX);
    emit_modrm_mem(e, OPC_MOVL_EvGv, RAX, REG_CPU, NO_REG, 0, MXCSR_OFF);
}

/*
 * Put MXCSR in the instruction's rounding mode unless it is RNE, which it
 * already is (a dynamic mode is checked at run time; one other than
 * RNE/RTZ/RDN/RUP bails). Returns false if the instruction needs the
 * interpreter outright (RMM, reserved modes). *restore: whether the default
 * must be put back after the op (for a dynamic mode, only if frm != RNE).
 */
static bool fp_mode(T *t, Bails *b, bool *restore)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    int rm = has_rm(in) ? in->rm : RM_RNE;
    *restore = rm != RM_RNE;
    if (rm == RM_DYN) {
        emit_modrm_mem(e, OPC_MOVL_GvEv, RCX, REG_CPU, NO_REG, 0, CPU_OFF(frm));
        emit_test_rr(e, RCX, RCX);
        uint8_t *rne = emit_jcc(e, CC_E);
        emit_arith_ri(e, ARITH_CMP, RCX, 3, true);
        bail_if(t, b, CC_A);
        mxcsr_image_of_rcx(e);
        mxcsr_insn(e, EXT15_LDMXCSR);
        emit_patch_rel32(rne, e->p);
        return true;
    }
    if (rm > RM_RUP)
        return false;
    if (rm != RM_RNE) {
        store_u32_imm(e, MXCSR_OFF, (uint32_t)(MXCSR_BY_RM >> (16 * rm)) & 0xffff);
        mxcsr_insn(e, EXT15_LDMXCSR);
    }
    return true;
}

/* Bail unless the instruction's first nsrc FP sources (rs1, rs2, rs3), single
 * precision, are NaN-boxed. */
static void check_boxed(T *t, Bails *b, int nsrc)
{
    const int rs[3] = { t->in->rs1, t->in->rs2, t->in->rs3 };
    for (int i = 0; i < nsrc; i++) {
        emit_modrm_mem(t->e, OPC_ARITH_EvIb, ARITH_CMP, REG_CPU, NO_REG, 0, F_OFF(rs[i]) + 4);
        emit_u8(t->e, 0xff);
        bail_if(t, b, CC_NE);
    }
}

/*
 * After the op: read the flags, restore the default MXCSR if needed and
 * bail on IE/ZE/OE/UE. PE stays in jit_mxcsr[0] for fp_accrue_nx, once
 * nothing can bail any more.
 */
static void fp_flags(T *t, Bails *b, bool restore)
{
    Emit *e = t->e;
    mxcsr_insn(e, EXT15_STMXCSR);
    if (restore) {
        /* dynamic mode: frm is almost always RNE, whose image is the default */
        uint8_t *skip = NULL;
        if (t->in->rm == RM_DYN) {
            emit_modrm_mem(e, OPC_ARITH_EvIb, ARITH_CMP, REG_CPU, NO_REG, 0,
                           CPU_OFF(frm));
            emit_u8(e, 0);
            skip = emit_jcc(e, CC_E);
        }
        be_default_mxcsr(e);
        if (skip)
            emit_patch_rel32(skip, e->p);
    }
    emit_modrm_mem(e, OPC_TESTB_EbIb, 0, REG_CPU, NO_REG, 0, MXCSR_OFF);
    emit_u8(e, MXCSR_BAIL);
    bail_if(t, b, CC_NE);
}

/* fflags |= PE ? NX : 0 (clobbers rcx; flags register). */
static void fp_accrue_nx(T *t)
{
    Emit *e = t->e;
    emit_modrm_mem(e, OPC_MOVL_GvEv, RCX, REG_CPU, NO_REG, 0, MXCSR_OFF);
    emit_shift_ri(e, SHIFT_SHR, RCX, MXCSR_PE_BIT, true);
    emit_arith_ri(e, ARITH_AND, RCX, 1, true);
    emit_modrm_mem(e, OPC_ARITH_EvGv | ARITH_OR << 3, RCX, REG_CPU, NO_REG, 0,
                   CPU_OFF(fflags));
}

/* xmm0 -> f[rd], NaN-boxed for single. */
static void fp_store_result(T *t, bool dbl)
{
    Emit *e = t->e;
    int rd = t->in->rd;
    if (dbl) {
        emit_modrm_mem(e, OPC_MOVQ_WqVq, 0, REG_CPU, NO_REG, 0, F_OFF(rd));
    } else {
        emit_modrm_mem(e, OPC_MOVD_EdVd, 0, REG_CPU, NO_REG, 0, F_OFF(rd));
        store_u32_imm(e, F_OFF(rd) + 4, 0xffffffffu);
    }
}

/* Host register h -> f[rd], NaN-boxed for single. */
static void fp_store_gpr(Emit *e, int rd, int h, bool dbl)
{
    if (dbl) {
        emit_st64(e, h, REG_CPU, F_OFF(rd));
    } else {
        emit_store_sized(e, h, REG_CPU, NO_REG, F_OFF(rd), 4);
        store_u32_imm(e, F_OFF(rd) + 4, 0xffffffffu);
    }
}

static void xmm_load(Emit *e, int x, int r, bool dbl)
{
    emit_modrm_mem(e, dbl ? OPC_MOVQ_VqWq : OPC_MOVD_VdEd, x, REG_CPU, NO_REG, 0, F_OFF(r));
}

static inline int sse(int opc, bool dbl) { return opc | (dbl ? P_SIMDF2 : P_SIMDF3); }

/* -- F/D: arithmetic, conversions, compares ----------------------------------- */

/*
 * Every F/D operation that can raise a flag is translated by tr_fp, in one
 * frame: rounding mode (fp_mode), NaN-box checks of the single-precision
 * sources, the operation, the flags (fp_flags), a bail on a NaN result
 * (not RISC-V's canonical one), NX, the result, the bail path. A shape
 * names the operation's form and which of those steps it needs.
 */
enum fp_shape {
    FP_ARITH,       /* fadd/fsub/fmul/fdiv: xmm0 = f[rs1] opc f[rs2] */
    FP_SQRT,        /* fsqrt: xmm0 = opc f[rs1] */
    FP_FMA,         /* fmadd/fmsub/fnmsub/fnmadd: one FMA3 instruction opc */
    FP_CVT_FF,      /* fcvt.s.d, fcvt.d.s (dbl: the result's precision) */
    FP_FROM_INT,    /* fcvt.{s,d}.{w,wu,l,lu}: kind 0 w, 1 wu, 2 l, 3 lu */
    FP_TO_INT,      /* fcvt.{w,wu,l,lu}.{s,d}: kind as above; dbl: the source's */
    FP_CMP,         /* feq (kind 0), flt (1), fle (2) */
};

static const struct FpShape {
    uint8_t nsrc;           /* FP sources: rs1, rs2, rs3 */
    bool x_result;          /* rax -> x[rd], not xmm0 -> f[rd] */
    bool nan_result;        /* the result may be a NaN: bail on one */
    bool inexact;           /* may raise PE: accrue NX */
} fp_shapes[] = {
    [FP_ARITH]    = { 2, false, true,  true },
    [FP_SQRT]     = { 1, false, true,  true },
    [FP_FMA]      = { 3, false, true,  true },
    [FP_CVT_FF]   = { 1, false, true,  true },
    [FP_FROM_INT] = { 0, false, false, true },
    [FP_TO_INT]   = { 1, true,  false, true },
    [FP_CMP]      = { 2, true,  false, false },
};

/* The operation itself: its result in xmm0 or rax, MXCSR's flags set. */
static void fp_op(T *t, Bails *b, enum fp_shape shape, int opc, bool dbl, int kind)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    int pd = dbl ? P_DATA16 : 0;
    switch (shape) {
    case FP_ARITH:
        xmm_load(e, 0, in->rs1, dbl);
        emit_modrm_mem(e, sse(opc, dbl), 0, REG_CPU, NO_REG, 0, F_OFF(in->rs2));
        break;
    case FP_SQRT:
        emit_modrm_mem(e, sse(opc, dbl), 0, REG_CPU, NO_REG, 0, F_OFF(in->rs1));
        break;
    case FP_FMA:
        xmm_load(e, 0, in->rs1, dbl);
        xmm_load(e, 1, in->rs2, dbl);
        emit_vex_mem(e, opc, dbl, 0, 1, REG_CPU, F_OFF(in->rs3));
        break;
    case FP_CVT_FF:
        emit_modrm_mem(e, sse(OPC_SSE_CVTS2S, !dbl), 0, REG_CPU, NO_REG, 0, F_OFF(in->rs1));
        break;
    case FP_FROM_INT:
        load_into(e, RAX, in->rs1);
        if (kind == 1)
            emit_movzlq(e, RAX, RAX);
        if (kind == 3) {
            emit_test_rr(e, RAX, RAX);
            bail_if(t, b, CC_S);                    /* >= 2^63: no signed convert */
        }
        emit_modrm(e, sse(OPC_SSE_CVTSI2S, dbl) | (kind == 0 ? 0 : P_REXW), 0, RAX);
        break;
    case FP_TO_INT:
        /* out of range or NaN: IE (fp_flags bails, the interpreter saturates) */
        emit_modrm_mem(e, sse(OPC_SSE_CVTS2SI, dbl) | (kind == 0 ? 0 : P_REXW), RAX, REG_CPU,
                       NO_REG, 0, F_OFF(in->rs1));
        break;
    case FP_CMP:
        if (kind == 0) {
            xmm_load(e, 0, in->rs1, dbl);
            emit_modrm_mem(e, OPC_UCOMISS | pd, 0, REG_CPU, NO_REG, 0, F_OFF(in->rs2));
            emit_setcc(e, CC_E, RAX);
            emit_setcc(e, CC_NP, RCX);
            emit_arith_rr(e, ARITH_AND, RAX, RCX, true);
        } else {
            /* a < b  <=>  b above a (unordered: CF = ZF = 1) */
            xmm_load(e, 0, in->rs2, dbl);
            emit_modrm_mem(e, OPC_COMISS | pd, 0, REG_CPU, NO_REG, 0, F_OFF(in->rs1));
            emit_setcc(e, kind == 1 ? CC_A : CC_AE, RAX);
        }
        break;
    }
}

/* fcvt to int after the flags: rax as RISC-V wants it, or a bail. */
static void fp_int_result(T *t, Bails *b, int kind)
{
    Emit *e = t->e;
    if (kind == 0) {
        emit_movslq(e, RAX, RAX);
    } else if (kind == 1) {
        emit_mov_rr(e, RCX, RAX);
        emit_shift_ri(e, SHIFT_SHR, RCX, 32, false);
        bail_if(t, b, CC_NE);                       /* negative or >= 2^32 */
        emit_movslq(e, RAX, RAX);
    } else if (kind == 3) {
        emit_test_rr(e, RAX, RAX);
        bail_if(t, b, CC_S);                        /* negative */
    }
}

/*
 * opc: the SSE opcode (FP_ARITH, FP_SQRT) or FMA3 one (FP_FMA); dbl and
 * kind as fp_shape says. A compare has no rounding mode (fp_mode emits
 * nothing for it); FMA needs the host's FMA3.
 */
static bool tr_fp(T *t, enum fp_shape shape, int opc, bool dbl, int kind)
{
    const struct FpShape *s = &fp_shapes[shape];
    Emit *e = t->e;
    Bails b = { .n = 0 };
    bool restore;
    if (shape == FP_FMA && !host_has_fma)
        return false;
    if (!fp_mode(t, &b, &restore))
        return false;
    if (shape == FP_CVT_FF ? dbl : !dbl)            /* single-precision sources */
        check_boxed(t, &b, s->nsrc);
    fp_op(t, &b, shape, opc, dbl, kind);
    fp_flags(t, &b, restore);
    if (shape == FP_TO_INT)
        fp_int_result(t, &b, kind);
    if (s->nan_result) {
        emit_modrm(e, OPC_UCOMISS | (dbl ? P_DATA16 : 0), 0, 0);   /* NaN result? */
        bail_if(t, &b, CC_P);
    }
    if (s->inexact)
        fp_accrue_nx(t);
    if (s->x_result)
        writeback(e, t->in->rd, RAX);
    else
        fp_store_result(t, dbl);
    bails_finish(t, &b);
    return true;
}

/* -- F/D: sign injection, moves, loads and stores ---------------------------- */

/* kind 0 fsgnj, 1 fsgnjn, 2 fsgnjx */
static bool tr_fp_sgnj(T *t, bool dbl, int kind)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    Bails b = { .n = 0 };
    int sbit = dbl ? 63 : 31;
    if (!dbl)
        check_boxed(t, &b, 2);
    emit_load_sized(e, RAX, REG_CPU, NO_REG, F_OFF(in->rs1), dbl ? 8 : 4, false);
    emit_load_sized(e, RCX, REG_CPU, NO_REG, F_OFF(in->rs2), dbl ? 8 : 4, false);
    if (kind == 1)
        emit_grp3(e, EXT3_NOT, RCX, !dbl);
    emit_shift_ri(e, SHIFT_SHR, RCX, (unsigned)sbit, !dbl);
    emit_shift_ri(e, SHIFT_SHL, RCX, (unsigned)sbit, !dbl);
    if (kind == 2) {
        emit_arith_rr(e, ARITH_XOR, RAX, RCX, !dbl);
    } else {
        emit_bt_ri(e, BT_BTR, RAX, (unsigned)sbit);
        emit_arith_rr(e, ARITH_OR, RAX, RCX, !dbl);
    }
    fp_store_gpr(e, in->rd, RAX, dbl);
    bails_finish(t, &b);
    return true;
}

/* fmv.x.w / fmv.x.d (to_x) and fmv.w.x / fmv.d.x */
static bool tr_fmv(T *t, bool dbl, bool to_x)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    if (to_x) {
        if (in->rd == 0)
            return true;
        int d = dst(in->rd);
        emit_load_sized(e, d, REG_CPU, NO_REG, F_OFF(in->rs1), dbl ? 8 : 4, true);
        writeback(e, in->rd, d);
    } else {
        fp_store_gpr(e, in->rd, src(e, in->rs1, RAX), dbl);
    }
    return true;
}

static bool tr_fp_load(T *t, bool dbl)
{
    const Insn *in = t->in;
    if (in->rs1 == 0)
        return false;
    int a = src(t->e, in->rs1, RCX);
    be_guest_load(t->c, RAX, a, in->rs1, (int32_t)in->imm, dbl ? 8 : 4, false, t->pc);
    fp_store_gpr(t->e, in->rd, RAX, dbl);
    return true;
}

static bool tr_fp_store(T *t, bool dbl)
{
    const Insn *in = t->in;
    if (in->rs1 == 0)
        return false;
    int v = be_store_scratch();
    emit_ld64(t->e, v, REG_CPU, F_OFF(in->rs2));
    int a = src(t->e, in->rs1, RCX);
    be_guest_store(t->c, v, a, in->rs1, (int32_t)in->imm, dbl ? 8 : 4, t->pc);
    return true;
}

/* -- FP CSRs ------------------------------------------------------------------- */

/* 32-bit op on host register r and the CPUState field at off. */
static void field_u32(Emit *e, int opc, int r, int32_t off)
{
    emit_modrm_mem(e, opc, r, REG_CPU, NO_REG, 0, off);
}

/* A CSR instruction that writes: rcx = the value it writes, from rax (the
 * old value) and rs1 or its immediate (csrrw: the source; csrrs: old |
 * source; csrrc: old & ~source). */
static void csr_new_value(Emit *e, const Insn *in)
{
    enum insn_op op = (enum insn_op)in->op;
    if (op == OP_csrrwi || op == OP_csrrsi || op == OP_csrrci)
        emit_mov_ri(e, RCX, in->rs1);
    else
        load_into(e, RCX, in->rs1);
    if (op == OP_csrrs || op == OP_csrrsi) {
        emit_arith_rr(e, ARITH_OR, RCX, RAX, false);
    } else if (op == OP_csrrc || op == OP_csrrci) {
        emit_grp3(e, EXT3_NOT, RCX, false);
        emit_arith_rr(e, ARITH_AND, RCX, RAX, false);
    }
}

/*
 * csrr{w,s,c}[i] on fflags, frm and fcsr (frflags, fsrm, ...: libm switches
 * rounding modes and clears flags often). Same semantics as exec_csr in
 * interp.c: the old value to rd, a write unless csrrs/csrrc with source 0.
 * Counters and unknown CSRs stay in the interpreter.
 */
static bool tr_csr_fp(T *t)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    unsigned csr = (unsigned)in->imm & 0xfff;
    enum insn_op op = (enum insn_op)in->op;
    const int32_t FFLAGS = CPU_OFF(fflags), FRM = CPU_OFF(frm);
    if (csr != CSR_FFLAGS && csr != CSR_FRM && csr != CSR_FCSR)
        return false;
    bool write = op == OP_csrrw || op == OP_csrrwi || in->rs1 != 0;

    /* rax = old value */
    field_u32(e, OPC_MOVL_GvEv, RAX, csr == CSR_FFLAGS ? FFLAGS : FRM);
    emit_arith_ri(e, ARITH_AND, RAX, csr == CSR_FFLAGS ? 0x1f : 7, true);
    if (csr == CSR_FCSR) {
        emit_shift_ri(e, SHIFT_SHL, RAX, 5, true);
        field_u32(e, OPC_MOVL_GvEv, RCX, FFLAGS);
        emit_arith_ri(e, ARITH_AND, RCX, 0x1f, true);
        emit_arith_rr(e, ARITH_OR, RAX, RCX, true);
    }
    if (!write) {
        writeback(e, in->rd, RAX);
        return true;
    }
    csr_new_value(e, in);
    writeback(e, in->rd, RAX);
    if (csr == CSR_FCSR) {
        emit_mov_rr(e, RAX, RCX);
        emit_arith_ri(e, ARITH_AND, RAX, 0x1f, true);
        field_u32(e, OPC_MOVL_EvGv, RAX, FFLAGS);
        emit_shift_ri(e, SHIFT_SHR, RCX, 5, true);
        emit_arith_ri(e, ARITH_AND, RCX, 7, true);
        field_u32(e, OPC_MOVL_EvGv, RCX, FRM);
    } else {
        emit_arith_ri(e, ARITH_AND, RCX, csr == CSR_FFLAGS ? 0x1f : 7, true);
        field_u32(e, OPC_MOVL_EvGv, RCX, csr == CSR_FFLAGS ? FFLAGS : FRM);
    }
    if (csr != CSR_FRM) {
        be_default_mxcsr(e);   /* fflags written: PE left in MXCSR must not re-accrue NX */
    }
    return true;
}

/*
 * The trap handler's CSRs (system mode): csrr/csrw/csrrw/csrrs/csrrc and
 * the immediate forms on sscratch, sepc, scause, stval (from S or M) and
 * mscratch, mepc, mcause, mtval (from M), as plain fields of CPUState:
 * every trap entry and return of a kernel reads and writes them. The
 * block's privilege is known, so the access check is done here; an epc
 * keeps bit 0 clear (IALIGN 16), the others are written as they are (as
 * priv.c's csr_set). Anything else stays with priv.c.
 */
static bool tr_csr_trap(T *t)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    unsigned csr = (unsigned)in->imm & 0xfff;
    enum insn_op op = (enum insn_op)in->op;
    if (!guest_mem.softmmu || (csr & 0xdfc) != 0x140 || block_priv(t) < (int)((csr >> 8) & 3))
        return false;
    static const int32_t s_off[4] = {
        CPU_OFF(priv.sscratch), CPU_OFF(priv.sepc), CPU_OFF(priv.scause), CPU_OFF(priv.stval) };
    static const int32_t m_off[4] = {
        CPU_OFF(priv.mscratch), CPU_OFF(priv.mepc), CPU_OFF(priv.mcause), CPU_OFF(priv.mtval) };
    int32_t off = ((csr >> 8) & 3) == 3 ? m_off[csr & 3] : s_off[csr & 3];
    bool write = op == OP_csrrw || op == OP_csrrwi || in->rs1 != 0;
    emit_ld64(e, RAX, REG_CPU, off);                /* the old value */
    if (write) {
        csr_new_value(e, in);
        if ((csr & 3) == 1)
            emit_arith_ri(e, ARITH_AND, RCX, -2, false);        /* epc */
        emit_st64(e, RCX, REG_CPU, off);
    }
    writeback(e, in->rd, RAX);
    return true;
}

/* -- A: LR, SC, AMOs ------------------------------------------------------------ */

/* Through the backend's locked instructions (be_guest_atomic); an LR with
 * rl set first orders earlier stores before it (TSO would not). */
static bool tr_atomic(T *t, enum be_atomic op, int size)
{
    const Insn *in = t->in;
    if (in->rs1 == 0 || !tune.atomics)
        return false;                       /* absolute address: rare, the interpreter */
    if (op == BE_LR && (in->rm & 1))
        be_fence_store_load(t->c);
    int a = src(t->e, in->rs1, RCX);
    if (!be_guest_atomic(t->c, op, a, in->rs1, in->rs2, size, t->pc))
        return false;
    writeback(t->e, in->rd, RAX);
    return true;
}

/* -- Dispatch ------------------------------------------------------------------ */

bool translate_ext(T *t)
{
    switch ((enum insn_op)t->in->op) {
    case OP_div:    return tr_divrem(t, true, false, false);
    case OP_divu:   return tr_divrem(t, false, false, false);
    case OP_rem:    return tr_divrem(t, true, true, false);
    case OP_remu:   return tr_divrem(t, false, true, false);
    case OP_divw:   return tr_divrem(t, true, false, true);
    case OP_divuw:  return tr_divrem(t, false, false, true);
    case OP_remw:   return tr_divrem(t, true, true, true);
    case OP_remuw:  return tr_divrem(t, false, true, true);
    case OP_mulh:   return tr_mulh(t, 0);
    case OP_mulhu:  return tr_mulh(t, 1);
    case OP_mulhsu: return tr_mulh(t, 2);
    case OP_csrrw: case OP_csrrs: case OP_csrrc:
    case OP_csrrwi: case OP_csrrsi: case OP_csrrci:
        if (tr_csr_trap(t))
            return true;
        break;
    case OP_lr_w:      return tr_atomic(t, BE_LR, 4);
    case OP_lr_d:      return tr_atomic(t, BE_LR, 8);
    case OP_sc_w:      return tr_atomic(t, BE_SC, 4);
    case OP_sc_d:      return tr_atomic(t, BE_SC, 8);
    case OP_amoswap_w: return tr_atomic(t, BE_SWAP, 4);
    case OP_amoswap_d: return tr_atomic(t, BE_SWAP, 8);
    case OP_amoadd_w:  return tr_atomic(t, BE_ADD, 4);
    case OP_amoadd_d:  return tr_atomic(t, BE_ADD, 8);
    case OP_amoxor_w:  return tr_atomic(t, BE_XOR, 4);
    case OP_amoxor_d:  return tr_atomic(t, BE_XOR, 8);
    case OP_amoand_w:  return tr_atomic(t, BE_AND, 4);
    case OP_amoand_d:  return tr_atomic(t, BE_AND, 8);
    case OP_amoor_w:   return tr_atomic(t, BE_OR, 4);
    case OP_amoor_d:   return tr_atomic(t, BE_OR, 8);
    case OP_amomin_w:  return tr_atomic(t, BE_MIN, 4);
    case OP_amomin_d:  return tr_atomic(t, BE_MIN, 8);
    case OP_amomax_w:  return tr_atomic(t, BE_MAX, 4);
    case OP_amomax_d:  return tr_atomic(t, BE_MAX, 8);
    case OP_amominu_w: return tr_atomic(t, BE_MINU, 4);
    case OP_amominu_d: return tr_atomic(t, BE_MINU, 8);
    case OP_amomaxu_w: return tr_atomic(t, BE_MAXU, 4);
    case OP_amomaxu_d: return tr_atomic(t, BE_MAXU, 8);
    default:
        break;
    }
    /* The rest is F, D and the FP CSRs: in the interpreter while FS is not
     * Dirty (it checks FS and makes it Dirty; riscv/priv.h). */
    if (t->c->tb->flags & TB_FLAGS_FP_GATED)
        return false;
    switch ((enum insn_op)t->in->op) {
    case OP_flw: return tr_fp_load(t, false);
    case OP_fld: return tr_fp_load(t, true);
    case OP_fsw: return tr_fp_store(t, false);
    case OP_fsd: return tr_fp_store(t, true);

    case OP_fadd_s:  return tr_fp(t, FP_ARITH, OPC_SSE_ADD, false, 0);
    case OP_fsub_s:  return tr_fp(t, FP_ARITH, OPC_SSE_SUB, false, 0);
    case OP_fmul_s:  return tr_fp(t, FP_ARITH, OPC_SSE_MUL, false, 0);
    case OP_fdiv_s:  return tr_fp(t, FP_ARITH, OPC_SSE_DIV, false, 0);
    case OP_fsqrt_s: return tr_fp(t, FP_SQRT, OPC_SSE_SQRT, false, 0);
    case OP_fadd_d:  return tr_fp(t, FP_ARITH, OPC_SSE_ADD, true, 0);
    case OP_fsub_d:  return tr_fp(t, FP_ARITH, OPC_SSE_SUB, true, 0);
    case OP_fmul_d:  return tr_fp(t, FP_ARITH, OPC_SSE_MUL, true, 0);
    case OP_fdiv_d:  return tr_fp(t, FP_ARITH, OPC_SSE_DIV, true, 0);
    case OP_fsqrt_d: return tr_fp(t, FP_SQRT, OPC_SSE_SQRT, true, 0);

    case OP_fmadd_s:  return tr_fp(t, FP_FMA, OPC_VFMADD213S, false, 0);
    case OP_fmsub_s:  return tr_fp(t, FP_FMA, OPC_VFMSUB213S, false, 0);
    case OP_fnmsub_s: return tr_fp(t, FP_FMA, OPC_VFNMADD213S, false, 0);
    case OP_fnmadd_s: return tr_fp(t, FP_FMA, OPC_VFNMSUB213S, false, 0);
    case OP_fmadd_d:  return tr_fp(t, FP_FMA, OPC_VFMADD213S, true, 0);
    case OP_fmsub_d:  return tr_fp(t, FP_FMA, OPC_VFMSUB213S, true, 0);
    case OP_fnmsub_d: return tr_fp(t, FP_FMA, OPC_VFNMADD213S, true, 0);
    case OP_fnmadd_d: return tr_fp(t, FP_FMA, OPC_VFNMSUB213S, true, 0);

    case OP_fcvt_s_d: return tr_fp(t, FP_CVT_FF, 0, false, 0);
    case OP_fcvt_d_s: return tr_fp(t, FP_CVT_FF, 0, true, 0);
    case OP_fcvt_s_w:  return tr_fp(t, FP_FROM_INT, 0, false, 0);
    case OP_fcvt_s_wu: return tr_fp(t, FP_FROM_INT, 0, false, 1);
    case OP_fcvt_s_l:  return tr_fp(t, FP_FROM_INT, 0, false, 2);
    case OP_fcvt_s_lu: return tr_fp(t, FP_FROM_INT, 0, false, 3);
    case OP_fcvt_d_w:  return tr_fp(t, FP_FROM_INT, 0, true, 0);
    case OP_fcvt_d_wu: return tr_fp(t, FP_FROM_INT, 0, true, 1);
    case OP_fcvt_d_l:  return tr_fp(t, FP_FROM_INT, 0, true, 2);
    case OP_fcvt_d_lu: return tr_fp(t, FP_FROM_INT, 0, true, 3);
    case OP_fcvt_w_s:  return tr_fp(t, FP_TO_INT, 0, false, 0);
    case OP_fcvt_wu_s: return tr_fp(t, FP_TO_INT, 0, false, 1);
    case OP_fcvt_l_s:  return tr_fp(t, FP_TO_INT, 0, false, 2);
    case OP_fcvt_lu_s: return tr_fp(t, FP_TO_INT, 0, false, 3);
    case OP_fcvt_w_d:  return tr_fp(t, FP_TO_INT, 0, true, 0);
    case OP_fcvt_wu_d: return tr_fp(t, FP_TO_INT, 0, true, 1);
    case OP_fcvt_l_d:  return tr_fp(t, FP_TO_INT, 0, true, 2);
    case OP_fcvt_lu_d: return tr_fp(t, FP_TO_INT, 0, true, 3);

    case OP_feq_s: return tr_fp(t, FP_CMP, 0, false, 0);
    case OP_flt_s: return tr_fp(t, FP_CMP, 0, false, 1);
    case OP_fle_s: return tr_fp(t, FP_CMP, 0, false, 2);
    case OP_feq_d: return tr_fp(t, FP_CMP, 0, true, 0);
    case OP_flt_d: return tr_fp(t, FP_CMP, 0, true, 1);
    case OP_fle_d: return tr_fp(t, FP_CMP, 0, true, 2);

    case OP_fsgnj_s:  return tr_fp_sgnj(t, false, 0);
    case OP_fsgnjn_s: return tr_fp_sgnj(t, false, 1);
    case OP_fsgnjx_s: return tr_fp_sgnj(t, false, 2);
    case OP_fsgnj_d:  return tr_fp_sgnj(t, true, 0);
    case OP_fsgnjn_d: return tr_fp_sgnj(t, true, 1);
    case OP_fsgnjx_d: return tr_fp_sgnj(t, true, 2);

    case OP_csrrw: case OP_csrrs: case OP_csrrc:
    case OP_csrrwi: case OP_csrrsi: case OP_csrrci:
        return tr_csr_fp(t);

    case OP_fmv_x_w: return tr_fmv(t, false, true);
    case OP_fmv_x_d: return tr_fmv(t, true, true);
    case OP_fmv_w_x: return tr_fmv(t, false, false);
    case OP_fmv_d_x: return tr_fmv(t, true, false);
    default:
        return false;
    }
}
