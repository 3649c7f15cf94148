/*
 * x86-64 backend, guest memory: loads and stores through the window (user
 * mode) or the softmmu TLB's inline probe (system mode), and the A
 * extension's atomics on top of the same checks. See backend.h.
 */
#include "x86/backend.h"

#include <stddef.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/settings.h"
#include "exec/softmmu.h"

/* -- Guest memory ---------------------------------------------------------------- */

/*
 * The window check: the guest window is guest_base + [0, 2^39) with 4 GiB
 * guards on both sides (below host address 0: the kernel's half, which
 * faults the same; user/mm.h), so if the base register is below 2^39 the access at
 * base + disp (|disp| < 2^11) lands in the window or a guard: a host fault
 * there is a genuine guest fault at base + disp (exec_fault_restore).
 * Otherwise the interpreter performs the access (fault or, with a negative
 * disp, a valid access near 2^64 wrapping... which it reports exactly) and
 * translated code is left: the code after a check runs only if it passed,
 * which is what lets later accesses through the same guest register skip
 * it (--tune checked-reuse).
 */
static void window_check(BeCtx *c, int addr, int base, uint64_t pc)
{
    if (tune.checked_reuse && base > 0 && (c->checked >> base & 1))
        return;
    emit_arith_rm(&c->e, ARITH_CMP, addr, REG_CPU, CPU_OFF(guest_limit), false);
    BeSlow *s = be_slow_add(c, pc);
    s->jcc = emit_jcc(&c->e, CC_AE);
    if (base > 0)
        c->checked |= 1u << base;
}

/*
 * --tune no-disp: materialize addr + disp in rcx first, as a translator
 * without based accesses would. addr may be rcx; the value is never rcx.
 */
static int unfold_disp(BeCtx *c, int addr, int32_t *disp)
{
    if (tune.disp || *disp == 0)
        return addr;
    emit_lea(&c->e, RCX, addr, NO_REG, 0, *disp, false);
    *disp = 0;
    return RCX;
}

/*
 * The host operand [gbase + index + disp] of a guest access: index is the
 * host register holding the guest address (or NO_REG); with the window at
 * host address 0 it becomes the base, and the operand needs no SIB byte.
 */
static int guest_base_of(int *index)
{
    if (be_gbase_reg != NO_REG)
        return be_gbase_reg;
    int base = *index;
    *index = NO_REG;
    return base;
}

/*
 * The softmmu probe (exec/softmmu.h), emitted at e, of the bytes [addr +
 * disp, addr + disp + size) for the block's data TLB: rax = the entry, its
 * tag for the access kind compared with the page of the last byte (any
 * flag, or a page crossing, misses); then rcx = the addend. A miss, with
 * no branch target given (miss == NULL), refills the entry and probes
 * again (emit_refill; not with --tune no-tlb-fill), or goes to the
 * interpreter, which runs the whole instruction and comes back after it
 * (be_insn_done); else *miss is the jne to patch. Overwrites rcx even if
 * addr is rcx (probed_index: base's home has the address then).
 */
static void tlb_probe(BeCtx *c, Emit *e, int addr, int base, int32_t disp, int size, bool store,
                      uint64_t pc, uint8_t **miss)
{
    uint8_t *start = e->p;
    int32_t fast = CPU_OFF(tlb) + (int32_t)(c->tlb_idx * sizeof(TlbFast));
    int32_t tag = store ? (int32_t)offsetof(TlbEntry, addr_write)
                        : (int32_t)offsetof(TlbEntry, addr_read);
    emit_lea(e, RAX, addr, NO_REG, 0, disp, false);
    emit_shift_ri(e, SHIFT_SHR, RAX, TARGET_PAGE_BITS - TLB_ENTRY_BITS, false);
    emit_arith_rm(e, ARITH_AND, RAX, REG_CPU, fast + (int32_t)offsetof(TlbFast, mask), false);
    emit_arith_rm(e, ARITH_ADD, RAX, REG_CPU, fast + (int32_t)offsetof(TlbFast, table), false);
    emit_lea(e, RCX, addr, NO_REG, 0, disp + size - 1, false);
    emit_arith_ri(e, ARITH_AND, RCX, -(int32_t)TARGET_PAGE_SIZE, false);
    emit_modrm_mem(e, OPC_ARITH_GvEv | ARITH_CMP << 3 | P_REXW, RCX, RAX, NO_REG, 0, tag);
    if (miss) {
        *miss = emit_jcc(e, CC_NE);
    } else {
        BeSlow *s = be_slow_add(c, pc);
        s->jcc = emit_jcc(e, CC_NE);
        s->resume_next = true;
        if (tune.tlb_fill)
            s->refill = (BeRefill){
                .retry = start, .addr = addr, .base = base, .disp = disp, .tag = tag,
                .info = JIT_FILL_INFO(size, store ? MEM_STORE : MEM_LOAD, c->tlb_idx) };
    }
    emit_ld64(e, RCX, RAX, (int32_t)offsetof(TlbEntry, addend));
}

/* The index register of the host operand [rcx + index + disp] after
 * tlb_probe: addr, or none if addr was rcx (the probe overwrote it: the
 * guest register's home, in CPUState, is added to rcx instead). */
static int probed_index(Emit *e, int addr, int base)
{
    if (addr != RCX)
        return addr;
    emit_arith_rm(e, ARITH_ADD, RCX, REG_CPU, CPU_X_OFF(base), false);
    return NO_REG;
}

/* One guest load or store in softmmu code. */
typedef struct Access {
    bool store, sign;
    int reg;                    /* the load's destination, the store's value */
    int addr, base;             /* host register holding guest register base's value */
    int32_t disp;
    int size;
    uint64_t pc;
} Access;

static void access_at(Emit *e, const Access *a, int host, int index)
{
    if (a->store)
        emit_store_sized(e, a->reg, host, index, a->disp, a->size);
    else
        emit_load_sized(e, a->reg, host, index, a->disp, a->size, a->sign);
}

/* The access with its own probe, at e. */
static void probed_access(BeCtx *c, Emit *e, const Access *a)
{
    tlb_probe(c, e, a->addr, a->base, a->disp, a->size, a->store, a->pc, NULL);
    access_at(e, a, RCX, probed_index(e, a->addr, a->base));
}

/* Out of line (where the hot path's jcc, if given, now goes): the access
 * with its own probe (addr reloaded first if the hot path's probe
 * overwrote it), then back to the hot path after the access. Returns the
 * jmp back to patch. */
static uint8_t *cold_access(BeCtx *c, uint8_t *jcc, const Access *a, bool reload)
{
    Emit *e = &c->cold;
    if (jcc)
        emit_patch_rel32(jcc, e->p);
    if (reload)
        emit_ld64(e, RCX, REG_CPU, CPU_X_OFF(a->base));
    probed_access(c, e, a);
    return emit_jmp(e);
}

/* A group's leader: the probe of the group's bytes, the addend kept in
 * cpu->tlb_hold; on a miss, an odd hold and the leader's own probe. */
static void group_leader(BeCtx *c, const Access *a)
{
    Emit *e = &c->e;
    uint8_t *miss;
    tlb_probe(c, e, a->addr, a->base, c->group.lo, (int)c->group.span, c->group.store, a->pc,
              &miss);
    emit_st64(e, RCX, REG_CPU, CPU_OFF(tlb_hold));
    access_at(e, a, RCX, probed_index(e, a->addr, a->base));
    Emit *cold = &c->cold;
    emit_patch_rel32(miss, cold->p);
    emit_st64_imm(cold, REG_CPU, CPU_OFF(tlb_hold), 1);
    emit_patch_rel32(cold_access(c, NULL, a, a->addr == RCX), e->p);
}

/* A group's member: through the leader's addend if its probe hit. */
static void group_member(BeCtx *c, const Access *a)
{
    Emit *e = &c->e;
    int hold = a->addr == RCX ? RAX : RCX;
    emit_ld64(e, hold, REG_CPU, CPU_OFF(tlb_hold));
    emit_modrm(e, OPC_TESTB_EbIb | P_REXB_RM, 0, hold);
    emit_u8(e, 1);
    uint8_t *odd = emit_jcc(e, CC_NE);
    access_at(e, a, hold, a->addr);
    emit_patch_rel32(cold_access(c, odd, a, false), e->p);
}

/* A softmmu access of the block: counted (-d stats) and its TLB noted. */
static void note_access(BeCtx *c)
{
    c->tb->naccess++;
    c->tb->tlb_idx = c->tlb_idx;
}

static void softmmu_access(BeCtx *c, const Access *a)
{
    note_access(c);
    uint8_t role = tune.tlb_group ? c->group.role : MEM_ALONE;
    c->group.role = MEM_ALONE;
    if (role == MEM_LEADER)
        group_leader(c, a);
    else if (role == MEM_MEMBER)
        group_member(c, a);
    else
        probed_access(c, &c->e, a);
}

/* A load or store: the softmmu probe, or the window check and the access
 * at guest_base + addr + disp. */
static void guest_access(BeCtx *c, const Access *a)
{
    if (guest_mem.softmmu) {
        softmmu_access(c, a);
        return;
    }
    window_check(c, a->addr, a->base, a->pc);
    Access w = *a;
    int index = unfold_disp(c, a->addr, &w.disp);
    int hbase = guest_base_of(&index);
    access_at(&c->e, &w, hbase, index);
}

void be_guest_load(BeCtx *c, int dst, int addr, int base, int32_t disp, int size, bool sign,
                   uint64_t pc)
{
    guest_access(c, &(Access){ .sign = sign, .reg = dst, .addr = addr, .base = base,
                               .disp = disp, .size = size, .pc = pc });
}

/* Index register and displacement for the constant guest address addr. */
static int abs_operand(BeCtx *c, uint64_t addr, int32_t *disp)
{
    if (addr <= INT32_MAX) {
        *disp = (int32_t)addr;
        return NO_REG;
    }
    emit_mov_guest(&c->e, RCX, addr);
    *disp = 0;
    return RCX;
}

/*
 * Mark an absolute access's address for the persistent cache: the
 * displacement (the instruction's last four bytes) or the mov before it,
 * with the bytes accessed, so that a moved copy is checked against the
 * window again.
 */
static void mark_abs(BeCtx *c, uint64_t addr, int size)
{
    EmitRelocs *l = emit_relocs;
    if (!l)
        return;
    if (addr > INT32_MAX) {
        if (l->n)
            l->r[l->n - 1].aux = (uint64_t)size;
        return;
    }
    int32_t d;
    memcpy(&d, c->e.p - 4, 4);
    if (d == (int32_t)addr)
        emit_reloc_mark(&c->e, ER_GUEST_S32, 4, (uint64_t)size);
    else
        l->pinned = true;               /* a disp8: not where a moved copy could say */
}

void be_guest_load_abs(BeCtx *c, int dst, uint64_t addr, int size, bool sign)
{
    int32_t disp;
    int index = abs_operand(c, addr, &disp);
    int hbase = guest_base_of(&index);
    emit_load_sized(&c->e, dst, hbase, index, disp, size, sign);
    mark_abs(c, addr, size);
}

void be_guest_store_abs(BeCtx *c, int src, uint64_t addr, int size)
{
    int32_t disp;
    int index = abs_operand(c, addr, &disp);
    int hbase = guest_base_of(&index);
    emit_store_sized(&c->e, src, hbase, index, disp, size);
    mark_abs(c, addr, size);
}

void be_guest_store(BeCtx *c, int src, int addr, int base, int32_t disp, int size, uint64_t pc)
{
    guest_access(c, &(Access){ .store = true, .reg = src, .addr = addr, .base = base,
                               .disp = disp, .size = size, .pc = pc });
}

/* -- Atomics ------------------------------------------------------------------------ */

/* A guest register as a source operand: its host register, or its home in
 * CPUState (x0's home is always 0). */
typedef struct Source { int reg; int32_t home; } Source;

static Source source_of(int g)
{
    int h = g ? be_cur_map[g] : -1;
    return (Source){ .reg = h >= 0 ? h : NO_REG, .home = CPU_X_OFF(g) };
}

/* Host register r op= source (opc: an r, r/m opcode such as OPC_ARITH_GvEv
 * | ARITH_AND << 3, with P_REXW for 64 bits). */
static void with_source(Emit *e, int opc, int r, Source s)
{
    if (s.reg != NO_REG)
        emit_modrm(e, opc, r, s.reg);
    else
        emit_modrm_mem(e, opc, r, REG_CPU, NO_REG, 0, s.home);
}

static void load_source(Emit *e, int r, Source s, int w)
{
    with_source(e, OPC_MOVL_GvEv | w, r, s);
}

/* The new value of a cmpxchg loop's op into tmp (= the old value). */
static void loop_op(Emit *e, enum be_atomic op, int tmp, Source s, int w)
{
    static const int arith[] = { [BE_XOR] = ARITH_XOR, [BE_AND] = ARITH_AND, [BE_OR] = ARITH_OR };
    /* min keeps the source where the old value is greater, and so on */
    static const int keep[] = { [BE_MIN] = CC_G, [BE_MAX] = CC_L, [BE_MINU] = CC_A,
                                [BE_MAXU] = CC_B };
    if (op <= BE_OR) {
        with_source(e, OPC_ARITH_GvEv | arith[op] << 3 | w, tmp, s);
        return;
    }
    with_source(e, OPC_ARITH_GvEv | ARITH_CMP << 3 | w, tmp, s);
    with_source(e, (OPC_CMOVCC | keep[op]) | w, tmp, s);
}

/* cpu->res_valid = v (a bool). */
static void set_reservation(Emit *e, uint8_t v)
{
    emit_modrm_mem(e, OPC_MOVB_EvIb, 0, REG_CPU, NO_REG, 0, CPU_OFF(res_valid));
    emit_u8(e, v);
}

/* The guest address in a register: addr, or (softmmu, where the probe
 * overwrote rcx) tmp loaded from base's home. */
static int address_reg(Emit *e, int addr, int base, int tmp)
{
    if (addr != RCX || !guest_mem.softmmu)
        return addr;
    emit_ld64(e, tmp, REG_CPU, CPU_X_OFF(base));
    return tmp;
}

/* The SC at [mb + mi]: rax = 0 if the reservation holds for this address
 * and the location still has the reserved value (then it stores), else 1. */
static void emit_sc(Emit *e, int mb, int mi, int addr, int base, Source v, int tmp, int w)
{
    emit_modrm_mem(e, OPC_TESTB_EbIb, 0, REG_CPU, NO_REG, 0, CPU_OFF(res_valid));
    emit_u8(e, 1);
    uint8_t *none = emit_jcc(e, CC_E);
    emit_arith_rm(e, ARITH_CMP, address_reg(e, addr, base, tmp), REG_CPU, CPU_OFF(res_addr),
                  false);
    uint8_t *other = emit_jcc(e, CC_NE);
    emit_modrm_mem(e, OPC_MOVL_GvEv | w, RAX, REG_CPU, NO_REG, 0, CPU_OFF(res_val));
    int nv = v.reg;
    if (nv == NO_REG) {
        load_source(e, tmp, v, w);
        nv = tmp;
    }
    emit_modrm_mem(e, OPC_CMPXCHG_EvGv | P_LOCK | w, nv, mb, mi, 0, 0);
    uint8_t *changed = emit_jcc(e, CC_NE);
    emit_mov_ri(e, RAX, 0);
    uint8_t *done = emit_jmp(e);
    emit_patch_rel32(none, e->p);
    emit_patch_rel32(other, e->p);
    emit_patch_rel32(changed, e->p);
    emit_mov_ri(e, RAX, 1);
    emit_patch_rel32(done, e->p);
    set_reservation(e, 0);
}

/* The LR, SC or AMO itself at host operand [mb + mi]; rax = its result. */
static void emit_atomic_op(Emit *e, enum be_atomic op, int mb, int mi, int addr, int base,
                           Source v, int tmp, int size)
{
    int w = size == 8 ? P_REXW : 0;
    switch (op) {
    case BE_LR:
        emit_modrm_mem(e, OPC_MOVL_GvEv | w, RAX, mb, mi, 0, 0);     /* 4 bytes: zero-extended */
        emit_st64(e, address_reg(e, addr, base, tmp), REG_CPU, CPU_OFF(res_addr));
        emit_st64(e, RAX, REG_CPU, CPU_OFF(res_val));
        set_reservation(e, 1);
        break;
    case BE_SC:
        emit_sc(e, mb, mi, addr, base, v, tmp, w);
        return;
    case BE_SWAP:
    case BE_ADD:
        load_source(e, RAX, v, w);
        emit_modrm_mem(e, op == BE_SWAP ? OPC_XCHG_EvGv | w : OPC_XADD_EvGv | P_LOCK | w,
                       RAX, mb, mi, 0, 0);
        break;
    default: {
        emit_modrm_mem(e, OPC_MOVL_GvEv | w, RAX, mb, mi, 0, 0);
        uint8_t *again = e->p;
        emit_modrm(e, OPC_MOVL_GvEv | w, tmp, RAX);
        loop_op(e, op, tmp, v, w);
        emit_modrm_mem(e, OPC_CMPXCHG_EvGv | P_LOCK | w, tmp, mb, mi, 0, 0);
        emit_patch_rel32(emit_jcc(e, CC_NE), again);
        break;
    }
    }
    if (size == 4)
        emit_modrm(e, OPC_MOVSLQ, RAX, RAX);
}

bool be_guest_atomic(BeCtx *c, enum be_atomic op, int addr, int base, int val, int size,
                     uint64_t pc)
{
    Emit *e = &c->e;
    Source v = source_of(val);
    bool soft = guest_mem.softmmu;
    int tmp = soft ? be_store_scratch() : RCX;      /* r14 without a window */
    bool needs_tmp = op >= BE_XOR || (op == BE_SC && v.reg == NO_REG);
    if (!soft && needs_tmp && addr == RCX)
        return false;
    if (!soft)
        window_check(c, addr, base, pc);
    /* misaligned: the interpreter raises the fault (a load's for LR) */
    emit_modrm(e, OPC_TESTB_EbIb | P_REXB_RM, 0, addr);
    emit_u8(e, (uint8_t)(size - 1));
    BeSlow *s = be_slow_add(c, pc);
    s->jcc = emit_jcc(e, CC_NE);
    s->resume_next = true;
    int mb, mi;
    if (soft) {
        note_access(c);
        tlb_probe(c, e, addr, base, 0, size, op != BE_LR, pc, NULL);
        mb = RCX;
        mi = probed_index(e, addr, base);
    } else {
        mi = addr;
        mb = guest_base_of(&mi);
    }
    emit_atomic_op(e, op, mb, mi, addr, base, v, tmp, size);
    return true;
}
