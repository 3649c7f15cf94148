/*
 * Internals shared by the translator's files (translate.c: RV64I, control
 * transfers, Zb*; trans_ext.c: M, F, D, FP CSRs): the per-instruction context
 * and the guest-register operand helpers over the backend's mapping (the
 * fixed one, or the block's own: be_choose_remap).
 */
#ifndef XLAT_RISCV_TRANSLATE_PRIV_H
#define XLAT_RISCV_TRANSLATE_PRIV_H

#include <stddef.h>

#include "riscv/insn.h"
#include "x86/backend.h"

typedef struct T {
    BeCtx *c;
    Emit *e;
    const Insn *in;
    const Insn *next;           /* the block's next instruction, if decoded ahead */
    uint64_t pc;
    /* Guest registers whose value is a translation-time constant here
     * (set by lui, auipc, li or addi of a constant since the block began),
     * and the values: auipc+jalr calls become direct, chainable exits. */
    uint32_t known;
    uint64_t known_val[32];
    /* Of those, the ones computed from the pc (auipc, then addi): guest
     * addresses that move with the code (emit.h's relocations). */
    uint32_t known_pcrel;
    bool indirect_exit;         /* the block ends with a jump-cache probe */
    /* A 32-bit operation (addw, slliw, ...) sign-extends its result into rd;
     * false when only 32-bit operations read rd before it is overwritten
     * (--tune narrow: translate.c, stays_narrow). */
    bool sext;
    /* The block's instructions decoded ahead (pre[0..npre)), this one's
     * index n, and the shared TLB probe planned (tr_plan_group): the guest
     * register of the group's accesses and, bit k, which instruction
     * n0 + k is a member. */
    const Insn *pre;
    unsigned npre, n;
    unsigned group_n0;
    uint8_t group_base;
    uint64_t group_members;
} T;

/* -- trans_const.c: translation-time constants -- */

/* Guest register r's value, if it is a translation-time constant here. */
bool known_value(const T *t, int r, uint64_t *v);
/* Is r's known value computed from the pc (a guest address that moves)? */
bool known_pcrel(const T *t, int r);
/* r's known value is used as a guest address (pins the code if absolute). */
void note_address_use(const T *t, int r);
/* What addi or addiw of a constant writes. */
bool addi_constant(const T *t, uint64_t *v);
/* Is this lui/auipc completed by the next instruction (an addi of it)? */
bool completed_by_next(const T *t);
/* After each instruction: update what is known. */
void track_constants(T *t);

/* trans_group.c: this access's part in a shared TLB probe (t->c->group). */
void tr_plan_group(T *t, int size, bool store);

/* -- Operands ---------------------------------------------------------------- */

static inline int hr(int g) { return be_cur_map[g]; }

/* Host register to compute guest rd into: its own, or rax. */
static inline int dst(int g) { return hr(g) >= 0 ? hr(g) : RAX; }

/* Guest register g's value in some host register (its own, or tmp). */
static inline int src(Emit *e, int g, int tmp)
{
    if (g == 0) {
        emit_mov_ri(e, tmp, 0);
        return tmp;
    }
    if (hr(g) >= 0)
        return hr(g);
    emit_ld64(e, tmp, REG_CPU, CPU_X_OFF(g));
    return tmp;
}

/* Host register d = guest register g. */
static inline void load_into(Emit *e, int d, int g)
{
    if (g == 0)
        emit_mov_ri(e, d, 0);
    else if (hr(g) >= 0)
        emit_mov_rr(e, d, hr(g));
    else
        emit_ld64(e, d, REG_CPU, CPU_X_OFF(g));
}

/* Guest register g = host register h. */
static inline void writeback(Emit *e, int g, int h)
{
    if (g == 0)
        return;
    if (hr(g) >= 0)
        emit_mov_rr(e, hr(g), h);
    else
        emit_st64(e, h, REG_CPU, CPU_X_OFF(g));
}

/* Guest register g = constant v (clobbers tmp if needed). */
static inline void set_imm(Emit *e, int g, uint64_t v, int tmp)
{
    if (g == 0)
        return;
    if (hr(g) >= 0) {
        emit_mov_ri(e, hr(g), v);
    } else if ((int64_t)v == (int32_t)v) {
        emit_st64_imm(e, REG_CPU, CPU_X_OFF(g), (int32_t)v);
    } else {
        emit_mov_ri(e, tmp, v);
        emit_st64(e, tmp, REG_CPU, CPU_X_OFF(g));
    }
}

/* Guest register g = v, a guest address computed from the pc (marked, so
 * that a kept copy of the code can move; clobbers tmp if needed). */
static inline void set_guest_imm(Emit *e, int g, uint64_t v, int tmp)
{
    if (g == 0)
        return;
    if (hr(g) >= 0) {
        emit_mov_guest(e, hr(g), v);
    } else if (v <= INT32_MAX) {
        emit_st64_imm(e, REG_CPU, CPU_X_OFF(g), (int32_t)v);
        emit_reloc_mark(e, ER_GUEST_S32, 4, 0);
    } else {
        emit_mov_guest(e, tmp, v);
        emit_st64(e, tmp, REG_CPU, CPU_X_OFF(g));
    }
}

/* d = d op (guest register g). */
static inline void arith_src(Emit *e, int op, int d, int g, bool w32)
{
    if (g == 0)
        emit_arith_ri(e, op, d, 0, w32);
    else if (hr(g) >= 0)
        emit_arith_rr(e, op, d, hr(g), w32);
    else
        emit_arith_rm(e, op, d, REG_CPU, CPU_X_OFF(g), w32);
}

/* The host has FMA3 and the OS enabled it (set by translate_init). */
extern bool host_has_fma;

/* The privilege the block runs at (system mode: its fetch TLB, priv.h;
 * user mode's tb_flags are 0, U's). */
static inline int block_priv(const T *t)
{
    switch (TB_FLAGS_FETCH_TLB(t->c->tb->flags)) {
    case TLB_IDX_U: return PRV_U;
    case TLB_IDX_M: return PRV_M;
    default:        return PRV_S;
    }
}

/*
 * Translate one M/F/D/FP-CSR instruction natively (trans_ext.c); false if it
 * must go to the interpreter helper.
 */
bool translate_ext(T *t);

#endif
