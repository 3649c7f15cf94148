/*
 * x86-64 encoder: see emit.h. Relative branch targets are computed between
 * two addresses of the same (RW) view of the code buffer, so code can be
 * written at one address and run at another.
 */
#include "x86/emit.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

/* -- Primitives ------------------------------------------------------------- */

void emit_opc(Emit *e, int opc, int r, int rm, int index)
{
    int rex = 0;
    if (opc & P_REXW)
        rex |= 8;
    if (r & 8)
        rex |= 4;
    if (index > 0 && (index & 8))
        rex |= 2;
    if (rm >= 0 && (rm & 8))
        rex |= 1;
    /* spl, bpl, sil, dil need a REX prefix to be byte registers. */
    if (((opc & P_REXB_R) && (r & 15) >= 4) || ((opc & P_REXB_RM) && (rm & 15) >= 4))
        rex |= 0x40;
    if (opc & P_LOCK)
        emit_u8(e, 0xf0);
    if (opc & P_DATA16)
        emit_u8(e, 0x66);
    if (opc & P_SIMDF3)
        emit_u8(e, 0xf3);
    if (opc & P_SIMDF2)
        emit_u8(e, 0xf2);
    if (rex)
        emit_u8(e, (uint8_t)(0x40 | rex));
    if (opc & (P_EXT | P_EXT38)) {
        emit_u8(e, 0x0f);
        if (opc & P_EXT38)
            emit_u8(e, 0x38);
    }
    emit_u8(e, (uint8_t)opc);
}

void emit_modrm(Emit *e, int opc, int r, int rm)
{
    emit_opc(e, opc, r, rm, 0);
    emit_u8(e, (uint8_t)(0xc0 | (r & 7) << 3 | (rm & 7)));
}

/* The modrm (+ sib + disp) bytes of a memory operand. */
static void emit_mem_operand(Emit *e, int r, int base, int index, int shift, int32_t disp);

void emit_modrm_mem(Emit *e, int opc, int r, int base, int index, int shift, int32_t disp)
{
    emit_opc(e, opc, r, base, index);
    emit_mem_operand(e, r, base, index, shift, disp);
}

void emit_vex_mem(Emit *e, int opc, bool w, int r, int v, int base, int32_t disp)
{
    /* 3-byte VEX: inverted R X B, map 0F38 (opc has P_EXT38); W, inverted
     * vvvv, L = 0, pp = 01 (the 0x66 form). */
    emit_u8(e, 0xc4);
    emit_u8(e, (uint8_t)((r & 8 ? 0 : 0x80) | 0x40 | (base & 8 ? 0 : 0x20) | 0x02));
    emit_u8(e, (uint8_t)((w ? 0x80 : 0) | (~v & 15) << 3 | 0x01));
    emit_u8(e, (uint8_t)opc);
    emit_mem_operand(e, r, base, NO_REG, 0, disp);
}

static void emit_mem_operand(Emit *e, int r, int base, int index, int shift, int32_t disp)
{
    if (base == NO_REG) {       /* [index << shift + disp32], or the absolute [disp32] */
        assert(index != RSP);
        emit_u8(e, (uint8_t)((r & 7) << 3 | 4));
        emit_u8(e, (uint8_t)(shift << 6 | (index == NO_REG ? 4 : index & 7) << 3 | 5));
        emit_imm32(e, (uint32_t)disp);
        return;
    }
    int mod = disp == 0 && (base & 7) != RBP ? 0 : disp == (int8_t)disp ? 1 : 2;
    if (index == NO_REG && (base & 7) != RSP) {
        emit_u8(e, (uint8_t)(mod << 6 | (r & 7) << 3 | (base & 7)));
    } else {
        assert(index != RSP);
        int idx = index == NO_REG ? 4 : index & 7;
        emit_u8(e, (uint8_t)(mod << 6 | (r & 7) << 3 | 4));
        emit_u8(e, (uint8_t)(shift << 6 | idx << 3 | (base & 7)));
    }
    if (mod == 1)
        emit_u8(e, (uint8_t)disp);
    else if (mod == 2)
        emit_imm32(e, (uint32_t)disp);
}

/* -- Moves -------------------------------------------------------------------- */

void emit_mov_rr(Emit *e, int rd, int rs)
{
    if (rd != rs)
        emit_modrm(e, OPC_MOVL_EvGv | P_REXW, rs, rd);
}

void emit_mov_ri(Emit *e, int rd, uint64_t imm)
{
    if (imm == 0) {
        emit_modrm(e, OPC_ARITH_GvEv | ARITH_XOR << 3, rd, rd);     /* xor r32, r32 */
    } else if (imm == (uint32_t)imm) {
        emit_opc(e, OPC_MOVL_Iv + (rd & 7), 0, rd, 0);              /* mov r32, imm32 */
        emit_imm32(e, (uint32_t)imm);
    } else if ((int64_t)imm == (int32_t)imm) {
        emit_modrm(e, OPC_MOVL_EvIz | P_REXW, 0, rd);               /* mov r64, simm32 */
        emit_imm32(e, (uint32_t)imm);
    } else {
        emit_opc(e, (OPC_MOVL_Iv | P_REXW) + (rd & 7), 0, rd, 0);   /* movabs */
        emit_imm64(e, imm);
    }
}

void emit_mov_ri64(Emit *e, int rd, uint64_t imm)
{
    emit_opc(e, (OPC_MOVL_Iv | P_REXW) + (rd & 7), 0, rd, 0);       /* movabs */
    emit_imm64(e, imm);
}

void emit_mov_guest(Emit *e, int rd, uint64_t addr)
{
    if (addr == (uint32_t)addr) {
        emit_opc(e, OPC_MOVL_Iv + (rd & 7), 0, rd, 0);              /* mov r32, imm32 */
        emit_imm32(e, (uint32_t)addr);
        emit_reloc_mark(e, ER_GUEST_U32, 4, 0);
    } else {
        emit_mov_ri64(e, rd, addr);
        emit_reloc_mark(e, ER_GUEST64, 8, 0);
    }
}

EmitRelocs *emit_relocs;

void emit_reloc_add(uint8_t *at, unsigned kind, const uint8_t *target, uint64_t aux)
{
    EmitRelocs *l = emit_relocs;
    if (l->n == l->cap) {
        unsigned cap = l->cap ? 2 * l->cap : 64;
        EmitReloc *r = realloc(l->r, cap * sizeof *r);
        if (!r) {
            l->lost = true;
            return;
        }
        l->r = r;
        l->cap = cap;
    }
    l->r[l->n++] = (EmitReloc){ .at = at, .kind = (uint8_t)kind, .target = target, .aux = aux };
}

void emit_ld64(Emit *e, int rd, int base, int32_t disp)
{
    emit_modrm_mem(e, OPC_MOVL_GvEv | P_REXW, rd, base, NO_REG, 0, disp);
}

void emit_st64(Emit *e, int rs, int base, int32_t disp)
{
    emit_modrm_mem(e, OPC_MOVL_EvGv | P_REXW, rs, base, NO_REG, 0, disp);
}

void emit_st64_imm(Emit *e, int base, int32_t disp, int32_t imm)
{
    emit_modrm_mem(e, OPC_MOVL_EvIz | P_REXW, 0, base, NO_REG, 0, disp);
    emit_imm32(e, (uint32_t)imm);
}

void emit_load_sized(Emit *e, int rd, int base, int index, int32_t disp, int size, bool sign)
{
    int opc;
    switch (size) {
    case 1:  opc = sign ? OPC_MOVSBL | P_REXW : OPC_MOVZBL; break;
    case 2:  opc = sign ? OPC_MOVSWL | P_REXW : OPC_MOVZWL; break;
    case 4:  opc = sign ? OPC_MOVSLQ : OPC_MOVL_GvEv; break;
    default: opc = OPC_MOVL_GvEv | P_REXW; break;
    }
    emit_modrm_mem(e, opc, rd, base, index, 0, disp);
}

void emit_store_sized(Emit *e, int rs, int base, int index, int32_t disp, int size)
{
    int opc;
    switch (size) {
    case 1:  opc = OPC_MOVB_EvGv; break;
    case 2:  opc = OPC_MOVL_EvGv | P_DATA16; break;
    case 4:  opc = OPC_MOVL_EvGv; break;
    default: opc = OPC_MOVL_EvGv | P_REXW; break;
    }
    emit_modrm_mem(e, opc, rs, base, index, 0, disp);
}

void emit_movslq(Emit *e, int rd, int rs) { emit_modrm(e, OPC_MOVSLQ, rd, rs); }
void emit_movzlq(Emit *e, int rd, int rs) { emit_modrm(e, OPC_MOVL_EvGv, rs, rd); }

void emit_lea(Emit *e, int rd, int base, int index, int shift, int32_t disp, bool w32)
{
    emit_modrm_mem(e, OPC_LEA | (w32 ? 0 : P_REXW), rd, base, index, shift, disp);
}

/* -- Arithmetic ----------------------------------------------------------------- */

void emit_arith_rr(Emit *e, int op, int rd, int rs, bool w32)
{
    emit_modrm(e, (OPC_ARITH_GvEv | op << 3) | (w32 ? 0 : P_REXW), rd, rs);
}

void emit_arith_ri(Emit *e, int op, int rd, int32_t imm, bool w32)
{
    int w = w32 ? 0 : P_REXW;
    if (imm == (int8_t)imm) {
        emit_modrm(e, OPC_ARITH_EvIb | w, op, rd);
        emit_u8(e, (uint8_t)imm);
    } else {
        emit_modrm(e, OPC_ARITH_EvIz | w, op, rd);
        emit_imm32(e, (uint32_t)imm);
    }
}

void emit_arith_rm(Emit *e, int op, int rd, int base, int32_t disp, bool w32)
{
    emit_modrm_mem(e, (OPC_ARITH_GvEv | op << 3) | (w32 ? 0 : P_REXW), rd, base, NO_REG, 0, disp);
}

void emit_shift_ri(Emit *e, int op, int rd, unsigned n, bool w32)
{
    emit_modrm(e, OPC_SHIFT_Ib | (w32 ? 0 : P_REXW), op, rd);
    emit_u8(e, (uint8_t)n);
}

void emit_shift_cl(Emit *e, int op, int rd, bool w32)
{
    emit_modrm(e, OPC_SHIFT_cl | (w32 ? 0 : P_REXW), op, rd);
}

void emit_setcc(Emit *e, int cc, int rd)
{
    emit_modrm(e, OPC_SETCC | cc, 0, rd);
    emit_modrm(e, OPC_MOVZBL | P_REXB_RM, rd, rd);
}

void emit_cmov(Emit *e, int cc, int rd, int rs) { emit_modrm(e, (OPC_CMOVCC | cc) | P_REXW, rd, rs); }

void emit_imul_rr(Emit *e, int rd, int rs, bool w32)
{
    emit_modrm(e, OPC_IMUL_GvEv | (w32 ? 0 : P_REXW), rd, rs);
}

void emit_test_rr(Emit *e, int a, int b) { emit_modrm(e, OPC_TESTL | P_REXW, b, a); }

void emit_grp3(Emit *e, int ext, int rd, bool w32)
{
    emit_modrm(e, OPC_GRP3_Ev | (w32 ? 0 : P_REXW), ext, rd);
}

void emit_bswap(Emit *e, int rd) { emit_opc(e, (OPC_BSWAP | P_REXW) + (rd & 7), 0, rd, 0); }

void emit_bitop_rr(Emit *e, int opc, int rd, int rs, bool w32)
{
    emit_modrm(e, opc | (w32 ? 0 : P_REXW), rd, rs);
}

void emit_bt_ri(Emit *e, int ext, int rd, unsigned bit)
{
    emit_modrm(e, OPC_BT_EvIb | P_REXW, ext, rd);
    emit_u8(e, (uint8_t)bit);
}

/* -- Control flow ------------------------------------------------------------- */

void emit_push(Emit *e, int r) { emit_opc(e, OPC_PUSH_r32 + (r & 7), 0, r, 0); }
void emit_pop(Emit *e, int r)  { emit_opc(e, OPC_POP_r32 + (r & 7), 0, r, 0); }
void emit_ret(Emit *e)         { emit_u8(e, OPC_RET); }
void emit_call_r(Emit *e, int r) { emit_modrm(e, OPC_GRP5, EXT5_CALLN_Ev, r); }
void emit_jmp_r(Emit *e, int r)  { emit_modrm(e, OPC_GRP5, EXT5_JMPN_Ev, r); }

void emit_jmp_mem(Emit *e, int base, int32_t disp)
{
    emit_modrm_mem(e, OPC_GRP5, EXT5_JMPN_Ev, base, NO_REG, 0, disp);
}

uint8_t *emit_jcc(Emit *e, int cc)
{
    emit_opc(e, OPC_JCC_long | cc, 0, 0, 0);
    uint8_t *f = e->p;
    emit_imm32(e, 0);
    return f;
}

uint8_t *emit_jcc8(Emit *e, int cc)
{
    emit_u8(e, (uint8_t)(OPC_JCC_short | cc));
    uint8_t *f = e->p;
    emit_u8(e, 0);
    return f;
}

void emit_patch_rel8(uint8_t *field, const uint8_t *target)
{
    ptrdiff_t rel = target - (field + 1);
    assert(rel >= INT8_MIN && rel <= INT8_MAX);
    *field = (uint8_t)(int8_t)rel;
}

static uint8_t *emit_rel32_insn(Emit *e, uint8_t opc)
{
    emit_u8(e, opc);
    uint8_t *f = e->p;
    emit_imm32(e, 0);
    return f;
}

uint8_t *emit_jmp(Emit *e)  { return emit_rel32_insn(e, OPC_JMP_long); }
uint8_t *emit_call(Emit *e) { return emit_rel32_insn(e, OPC_CALL_Jz); }

/*
 * Nop padding so that the rel32 field at p + opc_len does not cross a
 * cache line: a store to it is then one atomic write that another thread's
 * instruction fetch sees whole (x86 makes unaligned 4-byte accesses within
 * a cache line atomic), without the 4-byte alignment that padded a jump in
 * two of three cases.
 */
static void pad_rel32(Emit *e, unsigned opc_len)
{
    unsigned line = (unsigned)((uintptr_t)(e->p + opc_len) & 63);
    if (line > 60)
        emit_nops(e, 64 - line);
}

uint8_t *emit_jmp_patchable(Emit *e)
{
    pad_rel32(e, 1);
    return emit_jmp(e);
}

uint8_t *emit_call_patchable(Emit *e)
{
    pad_rel32(e, 1);
    return emit_call(e);
}

uint8_t *emit_jcc_patchable(Emit *e, int cc)
{
    pad_rel32(e, 2);                    /* 0f 8x, then rel32 */
    return emit_jcc(e, cc);
}

void emit_nops(Emit *e, unsigned n)
{
    /* The recommended multi-byte nops (0f 1f /0 forms) for 1..3 bytes. */
    while (n) {
        if (n >= 3) {
            emit_u8(e, 0x0f); emit_u8(e, 0x1f); emit_u8(e, 0x00);   /* nopl (%rax) */
            n -= 3;
        } else if (n == 2) {
            emit_u8(e, 0x66); emit_u8(e, OPC_NOP);                  /* xchg %ax,%ax */
            n -= 2;
        } else {
            emit_u8(e, OPC_NOP);
            n--;
        }
    }
}

void emit_mfence(Emit *e)
{
    emit_u8(e, 0x0f);
    emit_u8(e, 0xae);
    emit_u8(e, 0xf0);
}
