/*
 * Translation-time constants (translate_priv.h's T.known): which guest
 * registers hold a value known while translating (lui, auipc, li, addi of
 * a known register), and which of those come from the pc, so that a kept
 * translation can move with its code (x86/emit.h's relocations).
 */
#include "riscv/translate_priv.h"

/* Guest register r's value, if it is a translation-time constant here. */
bool known_value(const T *t, int r, uint64_t *v)
{
    *v = t->known_val[r];
    return t->known >> r & 1;
}

bool known_pcrel(const T *t, int r) { return t->known_pcrel >> r & 1; }

/* Register r's known value is used as a guest address: one computed from
 * the pc moves with the code (the backend marks it), an absolute one pins
 * the code where it is (emit.h). */
void note_address_use(const T *t, int r)
{
    if (!known_pcrel(t, r))
        emit_reloc_pin();
}

/* What addi or addiw of a constant writes: li, the second half of lui/auipc + addi. */
bool addi_constant(const T *t, uint64_t *v)
{
    const Insn *in = t->in;
    if (!known_value(t, in->rs1, v))
        return false;
    *v += (uint64_t)in->imm;
    if (in->op == OP_addiw)
        *v = (uint64_t)(int64_t)(int32_t)*v;
    return true;
}

/*
 * Is this lui/auipc's result overwritten by the next instruction, an addi
 * or addiw of it into the same register? That one then writes the whole
 * constant (tr_addi), and nothing can observe the register in between.
 */
bool completed_by_next(const T *t)
{
    const Insn *n = t->next;
    return n && (n->op == OP_addi || n->op == OP_addiw) && n->rd == t->in->rd &&
           n->rs1 == t->in->rd;
}

/*
 * After each instruction: rd is a known constant if lui, auipc, or addi or
 * addiw of a known register made it one; any other write (the Insn's rd, or an FP rd:
 * then conservatively the same bit) forgets it.
 */
void track_constants(T *t)
{
    const Insn *in = t->in;
    bool known = false, pcrel = false;
    uint64_t v = 0;
    if (in->rd == 0)
        return;
    switch ((enum insn_op)in->op) {
    case OP_lui:   known = true; v = (uint64_t)in->imm; break;
    case OP_auipc: known = pcrel = true; v = t->pc + (uint64_t)in->imm; break;
    case OP_addi:
        known = addi_constant(t, &v);
        pcrel = known_pcrel(t, in->rs1);
        break;
    case OP_addiw:                      /* not linear in the pc: an absolute value */
        known = addi_constant(t, &v);
        break;
    default:
        break;
    }
    t->known &= ~(1u << in->rd);
    t->known_pcrel &= ~(1u << in->rd);
    if (known) {
        t->known |= 1u << in->rd;
        t->known_pcrel |= (uint32_t)pcrel << in->rd;
        t->known_val[in->rd] = v;
    }
}
