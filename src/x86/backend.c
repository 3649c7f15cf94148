/*
 * x86-64 backend: see backend.h.
 *
 * The mapping below was chosen by counting register operands in the .text
 * of Debian's riscv64 cc1 (gcc 14): a5 a0 ra sp a4 s0 a3 a1 s1 a2 s2 are the
 * eleven most used (then s3..s8, a6), in that order. The most used get the
 * callee-saved host registers, which C helpers preserve. With the guest
 * window at host address 0 (user/mm.h), r14 holds no base and takes the
 * twelfth, s3. A block may lend the host registers of guest registers it
 * does not use to others it uses often (be_choose_remap); outside the block
 * the mapping is always this.
 */
#include "x86/backend.h"

#include <stddef.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/settings.h"
#include "exec/softmmu.h"

int8_t be_guest_reg[32] = {
    [0] = -1,
    [15] = RBX, [10] = RBP, [1] = R12, [2] = R13, [14] = RSI, [8] = RDI,
    [13] = R8, [11] = R9, [9] = R10, [12] = R11, [18] = RDX,
    /* every other register: -1 (filled in below by the designated zeros) */
    [3] = -1, [4] = -1, [5] = -1, [6] = -1, [7] = -1, [16] = -1, [17] = -1,
    [19] = -1, [20] = -1, [21] = -1, [22] = -1, [23] = -1, [24] = -1, [25] = -1,
    [26] = -1, [27] = -1, [28] = -1, [29] = -1, [30] = -1, [31] = -1,
};

int8_t be_host_guest[16] = {
    [RAX] = -1, [RCX] = -1, [RDX] = 18, [RBX] = 15, [RSP] = -1, [RBP] = 10,
    [RSI] = 14, [RDI] = 8, [R8] = 13, [R9] = 11, [R10] = 9, [R11] = 12,
    [R12] = 1, [R13] = 2, [R14] = -1, [R15] = -1,
};

/* The guest register r14 holds when it is not the guest base. */
#define GUEST_IN_R14 19

int be_gbase_reg = REG_GBASE;

const int8_t *be_cur_map = be_guest_reg;

/* -- Mapped registers ------------------------------------------------------ */

void be_store_mapped(Emit *e)
{
    for (int g = 1; g < 32; g++)
        if (be_guest_reg[g] >= 0)
            emit_st64(e, be_guest_reg[g], REG_CPU, CPU_X_OFF(g));
}

void be_load_mapped(Emit *e)
{
    for (int g = 1; g < 32; g++)
        if (be_guest_reg[g] >= 0)
            emit_ld64(e, be_guest_reg[g], REG_CPU, CPU_X_OFF(g));
}

/* -- Per-block mapping --------------------------------------------------------- */

/* A swap costs two moves at the entry and two at the exit taken; a use in
 * a host register instead of CPUState saves a load or a store, and its
 * latency in a dependency chain. */
#define REMAP_MIN_USES 6

void be_choose_remap(BeCtx *c, const uint8_t uses[32])
{
    TB *tb = c->tb;
    memcpy(c->map, be_guest_reg, sizeof c->map);
    be_cur_map = c->map;
    tb->nremap = 0;
    if (!tune.remap)
        return;
    while (tb->nremap < TB_MAX_REMAP) {
        int in = -1, out = -1;
        for (int g = 1; g < 32; g++)      /* a register taken in has a host register */
            if (c->map[g] < 0 && uses[g] >= REMAP_MIN_USES &&
                (in < 0 || uses[g] > uses[in]))
                in = g;
        /* RDX: x18's host register, parked by name around divisions (trans_ext.c). */
        for (int g = 1; g < 32 && in > 0; g++)
            if (be_guest_reg[g] >= 0 && c->map[g] >= 0 && uses[g] == 0 && be_guest_reg[g] != RDX) {
                out = g;
                break;
            }
        if (in < 0 || out < 0)
            break;
        tb->remap[tb->nremap++] = (TBRemap){ .host = c->map[out], .out = (int8_t)out, .in = (int8_t)in };
        c->map[in] = c->map[out];
        c->map[out] = -1;
    }
}

void be_end_remap(void) { be_cur_map = be_guest_reg; }

/*
 * Swap each lent host register's guest register: to the block's mapping
 * (at its entry, after a call out) or back to the fixed one. Moves only, so
 * the flags survive.
 */
static void emit_swap(const TB *tb, Emit *e, bool to_block)
{
    for (int i = 0; i < tb->nremap; i++) {
        const TBRemap *r = &tb->remap[i];
        emit_st64(e, r->host, REG_CPU, CPU_X_OFF(to_block ? r->out : r->in));
        emit_ld64(e, r->host, REG_CPU, CPU_X_OFF(to_block ? r->in : r->out));
    }
}

/* Before code that leaves the block or calls out: the fixed mapping. */
static void unmap(BeCtx *c)
{
    if (c->remapped) {
        emit_swap(c->tb, &c->e, false);
        c->remapped = false;
    }
}

/* After a side exit or a call that comes back: the block's mapping again. */
static void remap(BeCtx *c)
{
    if (c->tb->nremap && !c->remapped) {
        emit_swap(c->tb, &c->e, true);
        c->remapped = true;
    }
}

BeSlow *be_slow_add(BeCtx *c, uint64_t pc)
{
    BeSlow *s = &c->slow[c->nslow++];
    *s = (BeSlow){ .pc = pc, .remapped = c->remapped, .retired = c->pending };
    return s;
}

/* cpu->instret += n (negative: -= ), flags clobbered. */
static void instret_add(Emit *e, int32_t n)
{
    if (n == 0)
        return;
    if (n >= -128 && n <= 127) {
        emit_modrm_mem(e, OPC_ARITH_EvIb | P_REXW, ARITH_ADD, REG_CPU, NO_REG, 0,
                       CPU_OFF(instret));
        emit_u8(e, (uint8_t)(int8_t)n);
    } else {
        emit_modrm_mem(e, OPC_ARITH_EvIz | P_REXW, ARITH_ADD, REG_CPU, NO_REG, 0,
                       CPU_OFF(instret));
        emit_imm32(e, (uint32_t)n);
    }
}

void be_count(BeCtx *c, uint32_t also)
{
    if (!c->count)
        return;
    instret_add(&c->e, (int32_t)(c->pending + also));
    c->pending = 0;
}

/* -- Runtime stubs ---------------------------------------------------------- */

static const int callee_saved[] = { RBX, RBP, R12, R13, R14, R15 };

static void emit_jc_probe(Emit *e, const uint8_t *miss);

/* Set on entry to translated code, and around interpreter calls (which
 * also clears the flag an FP instruction bailed on). */
void be_default_mxcsr(Emit *e)
{
    int32_t slot = CPU_OFF(jit_mxcsr) + 4;
    emit_modrm_mem(e, OPC_MOVL_EvIz, 0, REG_CPU, NO_REG, 0, slot);
    emit_imm32(e, 0x1f80);
    emit_modrm_mem(e, OPC_GRP15, EXT15_LDMXCSR, REG_CPU, NO_REG, 0, slot);
}

/*
 * The C call the runtime stubs make: spill the mapped registers, then
 * fn(cpu, rax, rcx), or with fn NULL rax(cpu), with rsp aligned down
 * (translated code keeps it only 8-byte aligned); rbx, spilled, holds the
 * old rsp. With mxcsr, the default MXCSR first (for C code that may
 * compute in floating point: the interpreter, helpers). Returns with rsp
 * restored and the result in rax.
 */
static void emit_c_call(Emit *e, const void *fn, bool mxcsr)
{
    be_store_mapped(e);
    if (mxcsr)
        be_default_mxcsr(e);
    emit_lea(e, RDI, REG_CPU, NO_REG, 0, -CPU_BIAS, false);
    if (fn) {
        emit_mov_rr(e, RSI, RAX);
        emit_mov_rr(e, RDX, RCX);
    }
    emit_mov_rr(e, RBX, RSP);
    emit_arith_ri(e, ARITH_AND, RSP, -16, false);
    if (fn)
        emit_mov_ri(e, RAX, (uint64_t)(uintptr_t)fn);
    emit_call_r(e, RAX);
    emit_mov_rr(e, RSP, RBX);
}

/* rax = cpu->pc with the return-address stack emptied: what a jump to
 * wherever the hart's state now says starts with. */
static void emit_cpu_pc_target(Emit *e)
{
    emit_ld64(e, RSP, REG_CPU, CPU_OFF(ras_base));
    emit_ld64(e, RAX, REG_CPU, CPU_OFF(pc));
}

/* After a called stub's C call: back to translated code on 0; on
 * EXIT_REDISPATCH on at cpu->pc through the jump cache (lookup: the
 * return-address stack emptied, as be_goto_cpu_pc does); else leave with
 * the result as the exit code (mapped registers already stored). */
static void emit_return_or_leave(Emit *e, const uint8_t *epilogue_stored, const uint8_t *lookup)
{
    be_default_mxcsr(e);                    /* no flags C code may have left */
    be_load_mapped(e);
    emit_test_rr(e, RAX, RAX);
    uint8_t *leave = emit_jcc(e, CC_NE);
    emit_ret(e);
    emit_patch_rel32(leave, e->p);
    emit_arith_ri(e, ARITH_CMP, RAX, EXIT_REDISPATCH, false);
    emit_patch_rel32(emit_jcc(e, CC_NE), epilogue_stored);
    emit_cpu_pc_target(e);
    emit_patch_rel32(emit_jmp(e), lookup);
}

/* Bytes of host stack the return-address stack may use (8 per entry). */
#define RAS_BYTES (4096 * 8)

/* With the window at host address 0, r14 is free for a guest register;
 * without a window (softmmu) it is a third scratch register, for store
 * values (be_store_scratch). */
static void set_guest_base(const uint8_t *gbase)
{
    bool zero = gbase == NULL && !guest_mem.softmmu;
    be_gbase_reg = gbase ? REG_GBASE : NO_REG;
    be_guest_reg[GUEST_IN_R14] = zero ? R14 : -1;
    be_host_guest[R14] = zero ? GUEST_IN_R14 : -1;
}

int be_store_scratch(void)
{
    return guest_mem.softmmu ? REG_T2 : REG_T0;
}

void be_gen_runtime(Emit *e, JitRuntime *rt, uint8_t *gbase)
{
    set_guest_base(gbase);
    /* enter(cpu = rdi, host = rsi): the callee-saved registers, then the
     * return-address stack's sentinel (patched below), whose slot is
     * cpu->ras_base; rsp is 16-byte aligned there. */
    rt->enter = (int (*)(CPUState *, const void *))code_rx_of(e->p);
    for (int i = 0; i < 6; i++)
        emit_push(e, callee_saved[i]);
    emit_mov_ri(e, RCX, 0x8000000000000000ULL);
    uint8_t *sentinel_imm = e->p - 8;
    emit_push(e, RCX);
    emit_lea(e, REG_CPU, RDI, NO_REG, 0, CPU_BIAS, false);
    emit_st64(e, RSP, REG_CPU, CPU_OFF(ras_base));
    emit_lea(e, RCX, RSP, NO_REG, 0, -RAS_BYTES, false);
    emit_st64(e, RCX, REG_CPU, CPU_OFF(ras_floor));
    if (gbase)
        emit_mov_ri(e, REG_GBASE, (uint64_t)(uintptr_t)gbase);
    be_default_mxcsr(e);
    emit_mov_rr(e, RAX, RSI);
    be_load_mapped(e);
    emit_jmp_r(e, RAX);

    /* epilogue: eax = exit code, rcx = link (for EXIT_CHAIN) */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->epilogue = e->p;
    be_store_mapped(e);
    emit_st64(e, RCX, REG_CPU, CPU_OFF(jit_link));
    uint8_t *epilogue_stored = e->p;        /* mapped registers already in CPUState */
    emit_ld64(e, RSP, REG_CPU, CPU_OFF(ras_base));  /* drop the RAS */
    emit_arith_ri(e, ARITH_ADD, RSP, 8, false);
    for (int i = 5; i >= 0; i--)
        emit_pop(e, callee_saved[i]);
    emit_ret(e);

    /* lookup_miss: rax = guest pc the jump cache did not have: exit to C */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->lookup_miss = e->p;
    emit_st64(e, RAX, REG_CPU, CPU_OFF(pc));
    emit_mov_ri(e, RAX, EXIT_LOOKUP);
    emit_patch_rel32(emit_jmp(e), rt->epilogue);

    /* lookup: the shared probe (--tune no-inline-jc) */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->lookup = e->p;
    emit_jc_probe(e, rt->lookup_miss);

    /* interp_call: rax = guest pc; called from translated code. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->interp_call = e->p;
    emit_c_call(e, jit_helper_interp, true);
    emit_return_or_leave(e, epilogue_stored, rt->lookup);

    /* interp_exit: rax = guest pc; jumped to. The interpreter leaves
     * cpu->pc at the next instruction: EXIT_LOOKUP resumes there. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->interp_exit = e->p;
    emit_c_call(e, jit_helper_interp, true);
    emit_mov_ri(e, RCX, EXIT_LOOKUP);
    emit_test_rr(e, RAX, RAX);
    emit_cmov(e, CC_E, RAX, RCX);
    emit_patch_rel32(emit_jmp(e), epilogue_stored);

    /* csr_call: rax = guest pc, rcx = JIT_CSR_INFO; as interp_call. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->csr_call = e->p;
    emit_c_call(e, jit_helper_csr, true);
    emit_return_or_leave(e, epilogue_stored, rt->lookup);

    /* helper_call: rax = fn, called with the CPUState; as interp_call after. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->helper_call = e->p;
    emit_c_call(e, NULL, true);
    emit_return_or_leave(e, epilogue_stored, rt->lookup);

    /* fill_call: rax = guest address, ecx = JIT_FILL_INFO; called. The
     * refill computes nothing in floating point: MXCSR stays. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->fill_call = e->p;
    emit_c_call(e, jit_helper_fill, false);
    be_load_mapped(e);
    emit_ret(e);

    /* chain_exit: called from a slot's exit stub (emit_exit_stub), whose
     * data the return address points at: EXIT_CHAIN with it as the link
     * (be_stub_exited). */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->chain_exit = e->p;
    emit_pop(e, RCX);
    emit_mov_ri(e, RAX, EXIT_CHAIN);
    emit_patch_rel32(emit_jmp(e), rt->epilogue);

    /* ras_empty: a guest return popped the sentinel (rax = target pc): put
     * it back and look the target up. */
    emit_nops(e, (unsigned)(-(uintptr_t)e->p) & 15);
    rt->ras_empty = e->p;
    uint64_t sentinel = (uint64_t)(uintptr_t)code_rx_of(e->p);
    memcpy(sentinel_imm, &sentinel, 8);
    emit_ld64(e, RSP, REG_CPU, CPU_OFF(ras_base));
    emit_mov_ri(e, RCX, sentinel);
    emit_st64(e, RCX, RSP, 0);
    emit_patch_rel32(emit_jmp(e), rt->lookup);
}

/*
 * Jump-cache probe, rax = guest pc: entry (pc >> 1) mod entries, at byte
 * (pc << 3) & cpu->jc_offset_mask (the cache grows, jump_cache.c: jc_fit) of the
 * table cpu->jc_probe (poisoned by exec_kick), compare the tag, jump to the
 * host code; on a miss, jump to `miss` with rax intact. Clobbers rcx.
 */
static void emit_jc_probe(Emit *e, const uint8_t *miss)
{
    emit_mov_rr(e, RCX, RAX);
    emit_shift_ri(e, SHIFT_SHL, RCX, 3, false);
    emit_arith_rm(e, ARITH_AND, RCX, REG_CPU, CPU_OFF(jc_offset_mask), false);
    emit_arith_rm(e, ARITH_ADD, RCX, REG_CPU, CPU_OFF(jc_probe), false);
    emit_modrm_mem(e, OPC_ARITH_GvEv | ARITH_CMP << 3 | P_REXW, RAX, RCX, NO_REG, 0, 0);
    emit_patch_rel32(emit_jcc(e, CC_NE), miss);
    emit_jmp_mem(e, RCX, offsetof(JCEntry, host));
}

/* -- Exits ------------------------------------------------------------------ */

static void set_pc(Emit *e, uint64_t pc)
{
    if (pc < 0x80000000ULL) {
        emit_st64_imm(e, REG_CPU, CPU_OFF(pc), (int32_t)pc);
        emit_reloc_mark(e, ER_GUEST_S32, 4, 0);
    } else {
        emit_mov_guest(e, RAX, pc);
        emit_st64(e, RAX, REG_CPU, CPU_OFF(pc));
    }
}

/*
 * A slot's exit stub (tb.h): a call to jit_rt.chain_exit, whose return
 * address is the stub's data: the TB's number << 3 | the slot, then the
 * target's distance from the TB's pc. 13 bytes where storing the pc and the
 * TB|slot took 37, and nothing in it but the call depends on where the
 * code or the guest's module is: a copy from the persistent cache only
 * takes its TB's number (be_stub_claim).
 */
static void stub_write(uint8_t *data, uint32_t tb_number, int slot, int32_t distance)
{
    uint32_t w[2] = { tb_number << 3 | (uint32_t)slot, (uint32_t)distance };
    memcpy(data, w, sizeof w);
}

static void emit_exit_stub(Emit *e, const TB *tb, int slot, uint64_t target)
{
    /* A direct target is within a jal's reach (1 MiB) of the block. */
    int32_t distance = (int32_t)(target - tb->pc);
    emit_patch_rel32(emit_call(e), jit_rt.chain_exit);
    stub_write(e->p, tb_number(tb), slot, distance);
    e->p += BE_STUB_BYTES - BE_STUB_DATA;
}

void be_stub_claim(uint8_t *stub, const TB *tb, int slot)
{
    int32_t distance;
    memcpy(&distance, stub + BE_STUB_DATA + 4, 4);
    stub_write(stub + BE_STUB_DATA, tb_number(tb), slot, distance);
}

uint64_t be_stub_target(const TB *tb, int slot)
{
    int32_t distance;
    memcpy(&distance, code_rw + tb->host_off + tb->jmp_stub[slot] + BE_STUB_DATA + 4, 4);
    return tb->pc + (uint64_t)(int64_t)distance;
}

uintptr_t be_stub_exited(CPUState *cpu)
{
    uint32_t w[2];
    memcpy(w, (const void *)(uintptr_t)cpu->jit_link, sizeof w);
    TB *tb = tb_numbered(w[0] >> 3);
    cpu->pc = tb->pc + (uint64_t)(int64_t)(int32_t)w[1];
    return (uintptr_t)tb | (w[0] & TB_SLOT_MASK);
}

static void exit_with(Emit *e, int code)
{
    emit_mov_ri(e, RAX, (uint64_t)code);
    emit_patch_rel32(emit_jmp(e), jit_rt.epilogue);
}

void be_set_pc(BeCtx *c, uint64_t pc) { set_pc(&c->e, pc); }
void be_exit(BeCtx *c, int code)
{
    unmap(c);
    exit_with(&c->e, code);
}

/*
 * Exit poll (exit_request and jit_kick, adjacent ints: one 8-byte compare)
 * on a cycle-closing exit, branching to a stub that leaves with EXIT_POLL
 * and cpu->pc = target (indirect: rax). Nothing with --tune no-cycle-poll:
 * then every block polls at its entry.
 */
static uint8_t *emit_poll_test(Emit *e)
{
    /* exit_request and jit_kick are adjacent ints: one 8-byte compare. */
    emit_modrm_mem(e, OPC_ARITH_EvIb | P_REXW, ARITH_CMP, REG_CPU, NO_REG, 0,
                   CPU_OFF(exit_request));
    emit_u8(e, 0);
    return emit_jcc(e, CC_NE);
}

static void exit_poll(BeCtx *c, uint64_t target, bool indirect)
{
    if (!tune.cycle_poll)
        return;
    _Static_assert(sizeof c->poll / sizeof c->poll[0] > TB_MAX_SLOTS,
                   "a poll per exit: every exit but the last takes a slot (be_free_slots)");
    BePoll *p = &c->poll[c->npoll++];
    p->jcc = emit_poll_test(&c->e);
    p->target = target;
    p->indirect = indirect;
    p->remapped = c->remapped;
    p->uncount = false;
}

/* The next slot's target and the field its patchable jump will have. */
static void slot_add(BeCtx *c, uint8_t *field, uint64_t target)
{
    int slot = c->nstub++;
    c->tb->jmp_field[slot] = (uint32_t)(field - c->entry);
    c->stub[slot].target = target;
}

/*
 * May a direct exit to target chain (a goto_tb slot)? In system mode only
 * inside the block's own virtual page (see guest_mem.h: the next page may
 * map elsewhere next time), so neither from nor to a block of an
 * instruction that crosses into the next page (tb.h's TBKey: the
 * target's may, at the page's last halfword); such exits probe the jump
 * cache instead, as indirect ones do, which the mode empties whenever a
 * translation changes.
 */
static bool chainable(const BeCtx *c, uint64_t target)
{
    return !guest_mem.softmmu ||
           (target / TARGET_PAGE_SIZE == c->tb->pc / TARGET_PAGE_SIZE &&
            target % TARGET_PAGE_SIZE != TARGET_PAGE_SIZE - 2 && c->tb->next_page == TB_NO_PAGE);
}

/* A direct exit that does not chain: rax = target, then the jump-cache
 * probe (an exit request poisons it: no poll needed with --tune poison). */
static void probe_exit(Emit *e, uint64_t target)
{
    emit_mov_guest(e, RAX, target);
    if (tune.inline_jc)
        emit_jc_probe(e, jit_rt.lookup_miss);
    else
        emit_patch_rel32(emit_jmp(e), jit_rt.lookup);
}

/* A direct exit to target from e (the block's code or its cold code):
 * a patchable jmp through the next slot, or a probe_exit. */
static void exit_to(BeCtx *c, Emit *e, uint64_t target)
{
    if (chainable(c, target)) {
        slot_add(c, emit_jmp_patchable(e), target);
    } else {
        c->nprobe++;
        probe_exit(e, target);
    }
}

/* A patchable jump (jmp, or jcc if cc >= 0) through the next slot to
 * target; to a probe_exit (out of line for a jcc) if it cannot chain. */
static void slot_jump(BeCtx *c, uint64_t target, int cc)
{
    if (cc < 0) {
        exit_to(c, &c->e, target);
    } else if (chainable(c, target)) {
        slot_add(c, emit_jcc_patchable(&c->e, cc), target);
    } else {
        emit_patch_rel32(emit_jcc(&c->e, cc), c->cold.p);
        exit_to(c, &c->cold, target);
    }
}

void be_goto_tb(BeCtx *c, uint64_t target)
{
    unmap(c);
    /* A cycle of blocks has an edge to a block starting at or below its
     * source's start: poll there (and at indirect exits). */
    if (target <= c->tb->pc)
        exit_poll(c, target, false);
    slot_jump(c, target, -1);
}

void be_branch_begin(BeCtx *c, uint64_t pc, uint64_t taken, uint64_t next)
{
    if (taken <= c->tb->pc || (next && next <= c->tb->pc)) {
        exit_poll(c, pc, false);
        if (tune.cycle_poll)
            c->poll[c->npoll - 1].uncount = c->count;
    }
}

void be_branch_end(BeCtx *c, int cc, uint64_t taken, uint64_t next)
{
    unmap(c);
    slot_jump(c, taken, cc);
    slot_jump(c, next, -1);
}

/*
 * In a block with its own mapping, the taken side goes through a cold
 * trampoline that restores the fixed mapping and holds the slot's jump, so
 * the path that stays in the block pays nothing for it.
 */
void be_side_exit(BeCtx *c, int cc, uint64_t taken)
{
    if (!c->remapped) {
        slot_jump(c, taken, cc);
        return;
    }
    emit_patch_rel32(emit_jcc(&c->e, cc), c->cold.p);
    emit_swap(c->tb, &c->cold, false);
    exit_to(c, &c->cold, taken);
}

/*
 * With --tune poison, an exit request makes the probe miss (exec_kick), so
 * indirect exits need no poll; the inline probe (--tune inline-jc) gives
 * every indirect exit its own host branch; cpu->pc is stored only on a
 * miss unless --tune no-nostore.
 */
void be_goto_ptr(BeCtx *c)
{
    unmap(c);
    if (!tune.nostore)
        emit_st64(&c->e, RAX, REG_CPU, CPU_OFF(pc));
    if (!tune.poison)
        exit_poll(c, 0, true);
    if (tune.inline_jc)
        emit_jc_probe(&c->e, jit_rt.lookup_miss);
    else
        emit_patch_rel32(emit_jmp(&c->e), jit_rt.lookup);
}

/* -- Return-address stack ------------------------------------------------------ */

/* Past the depth limit, start over from an empty stack. */
static void ras_limit(BeCtx *c)
{
    emit_arith_rm(&c->e, ARITH_CMP, RSP, REG_CPU, CPU_OFF(ras_floor), false);
    uint8_t *ok = emit_jcc8(&c->e, CC_A);
    emit_ld64(&c->e, RSP, REG_CPU, CPU_OFF(ras_base));
    emit_patch_rel8(ok, c->e.p);
}

/* Where a host ret lands: continue at ret_pc if that is the guest's target. */
static void ras_landing(BeCtx *c, uint64_t ret_pc)
{
    if (ret_pc <= INT32_MAX && ret_pc > INT8_MAX) {
        emit_arith_ri(&c->e, ARITH_CMP, RAX, (int32_t)ret_pc, false);  /* cmp rax, simm32 */
        emit_reloc_mark(&c->e, ER_GUEST_S32, 4, 0);
    } else {
        emit_mov_guest(&c->e, RCX, ret_pc);
        emit_arith_rr(&c->e, ARITH_CMP, RAX, RCX, false);
    }
    emit_patch_rel32(emit_jcc(&c->e, CC_NE), jit_rt.lookup);
    slot_jump(c, ret_pc, -1);
}

void be_call_direct(BeCtx *c, uint64_t target, uint64_t ret_pc)
{
    unmap(c);
    if (target <= c->tb->pc)
        exit_poll(c, target, false);
    ras_limit(c);
    if (chainable(c, target)) {
        slot_add(c, emit_call_patchable(&c->e), target);
        ras_landing(c, ret_pc);
        return;
    }
    c->nprobe++;
    uint8_t *call = emit_call(&c->e);
    ras_landing(c, ret_pc);
    emit_patch_rel32(call, c->e.p);
    probe_exit(&c->e, target);
}

void be_call_ptr(BeCtx *c, uint64_t ret_pc)
{
    unmap(c);
    ras_limit(c);
    uint8_t *call = emit_call(&c->e);
    ras_landing(c, ret_pc);
    emit_patch_rel32(call, c->e.p);
    be_goto_ptr(c);
}

void be_return(BeCtx *c)
{
    unmap(c);
    if (!tune.nostore)
        emit_st64(&c->e, RAX, REG_CPU, CPU_OFF(pc));
    /*
     * No poll with a poisoned jump cache: a return the host stack pairs
     * with its call goes on to the instruction after that call, so a cycle
     * through it also goes through the call and back to its block's start:
     * a backward direct exit (polled), an indirect jump or call (a probe).
     * A return it does not pair lands in a probe (ras_empty, or a landing
     * whose check fails).
     */
    if (!tune.poison)
        exit_poll(c, 0, true);
    emit_ret(&c->e);
}

/* -- Block start and end ----------------------------------------------------- */

void be_tb_start(BeCtx *c)
{
    /* --tune no-nostore: the "current block" store user mode never reads. */
    if (!tune.nostore)
        be_set_pc(c, c->tb->pc);
    if (!tune.cycle_poll)
        c->poll_jcc = emit_poll_test(&c->e);
    /*
     * -d stats (decided at translation: nothing is emitted otherwise):
     * tb->execs += 1 on every entry, chained ones included, after the entry
     * poll (an entry that leaves at once is entered again); rax is scratch
     * here. A plain add, not lock add: threads running the same block may
     * lose a few counts to each other, which a profile can afford.
     */
    if (log_mask & LOG_STATS) {
        emit_mov_ri64(&c->e, RAX, (uint64_t)(uintptr_t)&c->tb->execs);
        emit_reloc_mark(&c->e, ER_TB, 8, offsetof(TB, execs));
        emit_modrm_mem(&c->e, OPC_ARITH_EvIb | P_REXW, ARITH_ADD, RAX, NO_REG, 0, 0);
        emit_u8(&c->e, 1);
    }
    remap(c);
}

void be_insn_done(BeCtx *c)
{
    for (int i = c->nslow - 1; i >= 0 && c->slow[i].resume_next; i--) {
        c->slow[i].resume = c->e.p;
        c->slow[i].resume_next = false;
    }
}

/*
 * A probe's miss (rax = its entry, rcx = the page of the access's last
 * byte), before s's slow path: if the entry maps another page or none,
 * refill it (fill_call) and probe again. On to the slow path if the entry
 * maps the page with a flag (a device, watched code, PMP: a refill cannot
 * help; the returned jcc, taken before the swap to the fixed mapping) or
 * the refill found no plain RAM (*swapped, after it).
 */
static uint8_t *emit_refill(BeCtx *c, Emit *e, const BeSlow *s, uint8_t **swapped)
{
    const BeRefill *r = &s->refill;
    emit_modrm_mem(e, OPC_ARITH_GvEv | ARITH_XOR << 3 | P_REXW, RCX, RAX, NO_REG, 0, r->tag);
    emit_arith_ri(e, ARITH_CMP, RCX, (int32_t)TLB_FLAGS, false);
    uint8_t *flagged = emit_jcc(e, CC_BE);
    if (r->addr == RCX) {
        emit_ld64(e, RAX, REG_CPU, CPU_X_OFF(r->base));
        emit_lea(e, RAX, RAX, NO_REG, 0, r->disp, false);
    } else {
        emit_lea(e, RAX, r->addr, NO_REG, 0, r->disp, false);
    }
    if (s->remapped)
        emit_swap(c->tb, e, false);
    emit_mov_ri(e, RCX, r->info);
    emit_patch_rel32(emit_call(e), jit_rt.fill_call);
    emit_test_rr(e, RAX, RAX);
    *swapped = emit_jcc(e, CC_E);
    if (s->remapped)
        emit_swap(c->tb, e, true);
    if (r->addr == RCX)
        emit_ld64(e, RCX, REG_CPU, CPU_X_OFF(r->base));
    emit_patch_rel32(emit_jmp(e), r->retry);
    return flagged;
}

void be_tb_finish(BeCtx *c)
{
    Emit *e = &c->cold;
    for (int i = 0; i < c->nslow; i++) {
        emit_patch_rel32(c->slow[i].jcc, e->p);
        uint8_t *swapped = NULL;
        if (c->slow[i].refill.retry) {
            uint8_t *flagged = emit_refill(c, e, &c->slow[i], &swapped);
            emit_patch_rel32(flagged, e->p);    /* e->p after the refill: two statements */
        }
        if (c->slow[i].remapped)
            emit_swap(c->tb, e, false);
        if (swapped)
            emit_patch_rel32(swapped, e->p);
        if (c->count)
            instret_add(e, (int32_t)c->slow[i].retired);
        emit_mov_guest(e, RAX, c->slow[i].pc);
        if (c->slow[i].resume) {
            emit_patch_rel32(emit_call(e), jit_rt.interp_call);
            if (c->count)
                instret_add(e, -(int32_t)(c->slow[i].retired + 1));
            if (c->slow[i].remapped)
                emit_swap(c->tb, e, true);
            emit_patch_rel32(emit_jmp(e), c->slow[i].resume);
        } else {
            emit_patch_rel32(emit_jmp(e), jit_rt.interp_exit);
        }
    }
    for (int slot = 0; slot < c->nstub; slot++) {
        emit_patch_rel32(c->entry + c->tb->jmp_field[slot], e->p);
        c->tb->jmp_stub[slot] = (uint32_t)(e->p - c->entry);
        emit_exit_stub(e, c->tb, slot, c->stub[slot].target);
    }
    for (int i = 0; i < c->npoll; i++) {
        emit_patch_rel32(c->poll[i].jcc, e->p);
        if (c->poll[i].remapped)
            emit_swap(c->tb, e, false);
        if (c->poll[i].uncount)
            instret_add(e, -1);
        if (c->poll[i].indirect)
            emit_st64(e, RAX, REG_CPU, CPU_OFF(pc));
        else
            set_pc(e, c->poll[i].target);
        exit_with(e, EXIT_POLL);
    }
    if (c->poll_jcc) {
        emit_patch_rel32(c->poll_jcc, e->p);
        set_pc(e, c->tb->pc);
        exit_with(e, EXIT_POLL);
    }
}

void be_fence_store_load(BeCtx *c) { emit_mfence(&c->e); }

/* -- Helper calls ------------------------------------------------------------ */

/* The interpreter's stub for the instruction at pc (rax = pc, and rcx =
 * info for a stub that takes it), with the fixed mapping around it: it
 * counts its own instruction and may write any register. */
static void call_for_insn(BeCtx *c, uint8_t *stub, uint64_t pc, bool with_info, uint64_t info)
{
    be_count(c, 0);
    c->interp_called = true;
    unmap(c);
    emit_mov_guest(&c->e, RAX, pc);
    if (with_info)
        emit_mov_ri(&c->e, RCX, info);
    emit_patch_rel32(emit_call(&c->e), stub);
    remap(c);
    c->checked = 0;
}

void be_call_interp(BeCtx *c, uint64_t pc)
{
    call_for_insn(c, jit_rt.interp_call, pc, false, 0);
}

void be_call_csr(BeCtx *c, uint64_t pc, uint64_t info)
{
    call_for_insn(c, jit_rt.csr_call, pc, true, info);
}

void be_goto_cpu_pc(BeCtx *c)
{
    emit_cpu_pc_target(&c->e);
    be_goto_ptr(c);
}

void be_call_helper(BeCtx *c, uint64_t (*fn)(CPUState *))
{
    unmap(c);
    emit_mov_ri64(&c->e, RAX, (uint64_t)(uintptr_t)fn);
    emit_reloc_mark(&c->e, ER_HOSTFN, 8, 0);
    emit_patch_rel32(emit_call(&c->e), jit_rt.helper_call);
    remap(c);
    c->checked = 0;
}
