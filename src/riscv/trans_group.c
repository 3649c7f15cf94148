/*
 * Shared TLB probes (softmmu: x86/backend.h, BeMemGroup): which loads and
 * stores of a block through one base register the translator lets share
 * their leader's probe (tr_plan_group, called by translate.c's tr_load and
 * tr_store before each access).
 */
#include "riscv/insn.h"
#include "exec/guest_mem.h"
#include "riscv/translate_priv.h"

/* How far ahead a group's members may be, and how many bytes they may span
 * (a wider group crosses a page more often: then each member probes alone). */
#define GROUP_LOOKAHEAD 16
#define GROUP_MAX_SPAN  128

/* The size of integer load or store op (0: not one), and whether it stores. */
static int mem_size(unsigned op, bool *store)
{
    *store = false;
    switch (op) {
    case OP_sb: *store = true; /* fall through */
    case OP_lb: case OP_lbu: return 1;
    case OP_sh: *store = true; /* fall through */
    case OP_lh: case OP_lhu: return 2;
    case OP_sw: *store = true; /* fall through */
    case OP_lw: case OP_lwu: return 4;
    case OP_sd: *store = true; /* fall through */
    case OP_ld: return 8;
    default: return 0;
    }
}

/* May a group's members follow in into the code after it? Not past what
 * can change translations or PMP (CSRs, fences, sfence.vma, xret, AMOs,
 * traps) or leave the block; conditional branches leave only when taken. */
static bool group_passes(const Insn *in)
{
    switch ((enum insn_op)in->op) {
    case OP_jal: case OP_jalr: case OP_ecall: case OP_ebreak: case OP_illegal:
    case OP_sret: case OP_mret: case OP_wfi: case OP_sfence_vma: case OP_fence:
        return false;
    default:
        break;
    }
    enum insn_ext ext = insn_table[in->op].ext;
    return ext != EXT_A && ext != EXT_ZICSR && ext != EXT_ZIFENCEI;
}

/*
 * This access (t->in, an integer load or store through rs1 with offset
 * imm): a member of the group planned earlier, the leader of a group of
 * later accesses through the same register (while it keeps its value and
 * nothing in between may change the mapping), or alone. Sets the
 * backend's c->group for the access.
 */
void tr_plan_group(T *t, int size, bool store)
{
    const Insn *in = t->in;
    BeMemGroup *g = &t->c->group;
    if (t->group_members && in->rs1 == t->group_base && t->n > t->group_n0 &&
        t->n - t->group_n0 < 64 && (t->group_members >> (t->n - t->group_n0) & 1)) {
        g->role = MEM_MEMBER;
        return;
    }
    t->group_members = 0;
    g->role = MEM_ALONE;
    if (!guest_mem.softmmu || (!store && in->rd == in->rs1))
        return;
    int64_t lo = in->imm, hi = in->imm + size;
    bool any_store = store;
    uint64_t members = 0;
    for (unsigned j = t->n + 1; j < t->npre && j - t->n <= GROUP_LOOKAHEAD; j++) {
        const Insn *m = &t->pre[j];
        if (!group_passes(m))
            break;
        bool m_store;
        int m_size = mem_size(m->op, &m_store);
        if (m_size && m->rs1 == in->rs1) {
            int64_t m_lo = m->imm < lo ? m->imm : lo;
            int64_t m_hi = m->imm + m_size > hi ? m->imm + m_size : hi;
            if (m_hi - m_lo <= GROUP_MAX_SPAN) {
                lo = m_lo, hi = m_hi;
                any_store |= m_store;
                members |= 1ULL << (j - t->n);
            }
        }
        if (m->rd == in->rs1 && !m_store)      /* the base changes (the load's address did not) */
            break;
    }
    if (!members)
        return;
    t->group_n0 = t->n;
    t->group_base = in->rs1;
    t->group_members = members;
    *g = (BeMemGroup){ .role = MEM_LEADER, .store = any_store, .lo = (int32_t)lo,
                       .span = (uint32_t)(hi - lo) };
}
