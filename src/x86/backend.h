/*
 * The x86-64 backend: fixed register mapping, runtime stubs (prologue,
 * epilogue, jump-cache lookup), block exits, helper calls, and the one
 * place that emits guest memory accesses.
 *
 * Register convention inside translated code:
 *   r15  CPUState * + CPU_BIAS (below)
 *   r14  guest_base (host address of guest 0), or a guest register if that is 0
 *   rax, rcx  scratch         rsp  16-byte aligned at helper calls
 *   the other 11 (12) registers hold the most used guest registers for the
 *   whole run of translated code (across chained blocks); the rest live in
 *   CPUState.x[]. Every guest register is in its home (host register or
 *   CPUState) at every instruction boundary, so a fault needs only the
 *   mapped registers copied back (exec_fault_restore).
 *
 * Block ends (--tune, user/options.h): the exit poll sits only on exits that
 * can close a cycle (a direct exit to a block starting at or below this
 * one's start; indirect exits and guest returns unless the jump cache is
 * poisoned instead: be_return); indirect exits probe the jump cache inline through
 * cpu->jc_probe; guest calls and returns are host call and ret (see
 * be_call_direct), so rsp is only 8-byte aligned in translated code: the
 * runtime stubs align it for C calls.
 */
#ifndef XLAT_X86_BACKEND_H
#define XLAT_X86_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/tb.h"
#include "x86/emit.h"

#define REG_CPU   R15
#define REG_GBASE R14
#define REG_T0    RAX
#define REG_T1    RCX
#define REG_T2    R14      /* softmmu only (guest_mem.softmmu): a store's value */

/* Host register of guest register g, or -1 if it lives in CPUState (x0: -1).
 * Fixed once be_gen_runtime has run. */
extern int8_t be_guest_reg[32];
/* Guest register held by host register h, or -1. */
extern int8_t be_host_guest[16];

/* Base register of guest memory operands: REG_GBASE, or NO_REG with the
 * window at host address 0 (set at init; backend_mem.c's accesses). */
extern int be_gbase_reg;
/*
 * The mapping the translator uses for the block it is translating: the
 * fixed be_guest_reg, or the block's own (be_choose_remap). Translation is
 * serialized (tb_lock), so one pointer serves.
 */
extern const int8_t *be_cur_map;

/*
 * REG_CPU holds the CPUState's address plus CPU_BIAS, so that what
 * translated code touches most, x[5..31] and the hot fields after x[]
 * (riscv/cpu.h), is within a one-byte displacement: 3 bytes shorter per
 * access than a four-byte one. Offsets from REG_CPU are CPU_OFF.
 */
#define CPU_BIAS 168
#define CPU_OFF(field) ((int32_t)offsetof(CPUState, field) - CPU_BIAS)
#define CPU_X_OFF(g) (CPU_OFF(x) + 8 * (g))
_Static_assert(CPU_X_OFF(5) >= -128 && CPU_OFF(ras_floor) <= 120,
               "the hot CPUState fields fit a one-byte displacement from REG_CPU");

/* Per-block code generation state. */
/* A TLB probe's refill before its slow path (x86/backend.c: tlb_probe):
 * the access, and where its probe starts (NULL: no refill). */
typedef struct BeRefill {
    uint8_t *retry;
    int addr, base;             /* the guest address: host register addr (rcx: base's home) */
    int32_t disp;
    uint32_t info;              /* JIT_FILL_INFO */
    int32_t tag;                /* the entry's tag the probe compares */
} BeRefill;
/* An out-of-line interpreter call for pc, then back to resume (NULL: leave
 * to the dispatcher instead). */
typedef struct BeSlow {
    uint8_t *jcc;
    uint8_t *resume;
    uint64_t pc;
    bool remapped;
    bool resume_next;           /* resume after this instruction (be_insn_done sets resume) */
    uint32_t retired;           /* be_count: instructions before it not yet counted */
    BeRefill refill;
} BeSlow;
typedef struct BeStub { uint64_t target; } BeStub;     /* slot n: stub[n] */
/* An exit poll's branch to its stub; indirect: the target pc is in rax. */
typedef struct BePoll {
    uint8_t *jcc;
    uint64_t target;
    bool indirect, remapped;
    bool uncount;               /* be_count: leaves before the branch it counted */
} BePoll;

/*
 * softmmu: several loads and stores of a block through one base register
 * may share one TLB probe (translate.c plans them, be_guest_load/store
 * emit them). The leader's probe covers the page of all of their bytes,
 * [base + lo, base + lo + span), and keeps the entry's addend in
 * cpu->tlb_hold; each member then checks only that the leader's probe hit
 * (the hold is odd when it did not: addends are page-aligned) and goes
 * through it. Whatever misses does the member's own probe, out of line.
 */
enum { MEM_ALONE, MEM_LEADER, MEM_MEMBER };
typedef struct BeMemGroup {
    uint8_t role;               /* of the next be_guest_load/store (then MEM_ALONE again) */
    bool store;                 /* a member stores: the leader probes the write tag */
    int32_t lo;                 /* leader: the group's lowest displacement */
    uint32_t span;              /* leader: bytes from base + lo to the group's last byte */
} BeMemGroup;

typedef struct BeCtx {
    Emit e;
    Emit cold;                  /* out-of-line code: slow paths, exit stubs */
    TB *tb;
    uint8_t *entry;             /* RW address of the TB entry */
    uint8_t *poll_jcc;          /* the entry poll's branch to its exit */
    BeSlow slow[TB_MAX_INSNS];
    int nslow;
    BeStub stub[TB_MAX_SLOTS];
    int nstub;                  /* also the next free slot */
    int nprobe;                 /* direct exits that probe the jump cache instead (system
                                 * mode, another page): they count as slots too, which
                                 * bounds a block's exits and polls */
    BePoll poll[TB_MAX_SLOTS + 1]; /* exit polls on cycle-closing exits (--tune cycle-poll) */
    int npoll;
    uint32_t checked;           /* guest registers known to be below the window limit */
    int8_t map[32];             /* this block's mapping (be_cur_map while translating) */
    bool remapped;              /* code emitted here runs with tb->remap in effect */
    uint8_t tlb_idx;            /* softmmu: the TLB loads and stores probe (exec/softmmu.h) */
    bool count;                 /* count retired instructions in cpu->instret (be_count) */
    uint32_t pending;           /* native instructions retired since the last count */
    bool interp_called;         /* the current instruction ran in the interpreter */
    BeMemGroup group;           /* softmmu: the next access's part in a shared probe */
} BeCtx;

/*
 * Per-block register mapping (--tune remap): given how often the block's
 * code uses each guest register, let up to TB_MAX_REMAP host registers
 * whose guest registers it does not use hold guest registers it uses often
 * that live in CPUState (a hash round's temporaries). The block swaps them
 * in at its entry and back before every exit, call out and slow path, so
 * everything outside it, and everything it chains to, sees the fixed
 * mapping. Sets c->map and be_cur_map; call before be_tb_start.
 */
void be_choose_remap(BeCtx *c, const uint8_t uses[32]);
/* Done translating: be_cur_map back to the fixed mapping. */
void be_end_remap(void);
/* An out-of-line interpreter call for pc (its jcc and resume set by the caller). */
BeSlow *be_slow_add(BeCtx *c, uint64_t pc);

/* Write the runtime stubs at e (once per code buffer generation) for the
 * guest window at host gbase (NULL: at host address 0, r14 then holds a
 * guest register). */
void be_gen_runtime(Emit *e, JitRuntime *rt, uint8_t *gbase);

/* Block start (exit poll, -d stats entry count) and end (out-of-line paths and
 * exit stubs, in c->cold). */
void be_tb_start(BeCtx *c);
void be_tb_finish(BeCtx *c);

/* A guest fence that orders earlier stores before later loads: mfence
 * (x86-TSO orders everything else already). */
void be_fence_store_load(BeCtx *c);

/* cpu->pc = pc (clobbers rax). */
void be_set_pc(BeCtx *c, uint64_t pc);
/* Leave translated code with exit code `code` (cpu->pc already set). */
void be_exit(BeCtx *c, int code);
/* Direct exit through the next goto_tb slot to guest pc target. */
void be_goto_tb(BeCtx *c, uint64_t target);
/* A slot's exit stub (TB.jmp_stub) is BE_STUB_BYTES long and leaves with
 * EXIT_CHAIN. The guest pc it leaves for: */
#define BE_STUB_BYTES 13
#define BE_STUB_DATA  5                 /* the data's offset in it, after the call */
uint64_t be_stub_target(const TB *tb, int slot);
/* Make the stub at stub (RW view), copied from another TB's slot, tb's. */
void be_stub_claim(uint8_t *stub, const TB *tb, int slot);
/* After EXIT_CHAIN: set cpu->pc to the stub's target; returns TB|slot. */
uintptr_t be_stub_exited(CPUState *cpu);
/* Slots left in this block. */
static inline int be_free_slots(const BeCtx *c) { return TB_MAX_SLOTS - c->nstub - c->nprobe; }
/*
 * A conditional branch at guest pc: be_branch_begin before the compare (its
 * exit poll, if the branch can close a cycle, clobbers the flags; the poll
 * leaves with cpu->pc = pc, the branch not yet taken; next = 0 when the
 * block goes on past the branch), then jcc cc through a slot to taken (the
 * jcc itself is the patched jump): be_branch_end also leaves through
 * another slot to next, be_side_exit falls through into the rest of the
 * block.
 */
void be_branch_begin(BeCtx *c, uint64_t pc, uint64_t taken, uint64_t next);
void be_branch_end(BeCtx *c, int cc, uint64_t taken, uint64_t next);
void be_side_exit(BeCtx *c, int cc, uint64_t taken);
/* Indirect exit: rax holds the target pc. */
void be_goto_ptr(BeCtx *c);

/*
 * Return-address stack (--tune ras): a guest call (the link register
 * already set to ret_pc) is a host call, to the target block through slot 0
 * (be_call_direct) or to an inline jump-cache probe of the target in rax
 * (be_call_ptr). The host return address is a landing right after it, which
 * continues through slot 1 at ret_pc if the guest really returned there
 * (rax), else probes for rax. A guest return (be_return, target in rax) is
 * a host ret, which the CPU's own return predictor gets right. The host
 * stack is only a hint: every landing checks, an empty stack returns to
 * jit_rt.ras_empty, a call deeper than the limit drops the whole stack,
 * and leaving translated code resets it.
 */
void be_call_direct(BeCtx *c, uint64_t target, uint64_t ret_pc);
void be_call_ptr(BeCtx *c, uint64_t ret_pc);
void be_return(BeCtx *c);

/*
 * Execute the instruction at pc with the interpreter (everything the
 * translator does not handle natively): a call to the shared runtime stub
 * (jit_rt.interp_call: spill, call, reload, leave on a nonzero exit
 * reason), so each site costs a few bytes of code, not a hundred.
 */
void be_call_interp(BeCtx *c, uint64_t pc);

/* The same for the CSR instruction at pc that info (JIT_CSR_INFO)
 * describes, through jit_rt.csr_call (no fetch, no decode). */
void be_call_csr(BeCtx *c, uint64_t pc, uint64_t info);

/*
 * Call fn(cpu) (the shared stub jit_rt.helper_call spills and reloads the
 * mapped registers): translated code goes on if it returns 0, and leaves
 * with its result as the exit code otherwise.
 */
void be_call_helper(BeCtx *c, uint64_t (*fn)(CPUState *));

/* Leave the block for guest pc cpu->pc (a helper set it) through the jump
 * cache, with the return-address stack emptied: its landings belong to
 * code of the privilege before. */
void be_goto_cpu_pc(BeCtx *c);

/*
 * MXCSR = the host default (round to nearest, no flags). Translated code
 * keeps this mode between instructions and lets only PE accumulate (see
 * riscv/trans_ext.c). Clobbers cpu->jit_mxcsr[1].
 */
void be_default_mxcsr(Emit *e);

/* Spill / reload the mapped guest registers to / from CPUState. */
void be_store_mapped(Emit *e);
void be_load_mapped(Emit *e);

/*
 * Guest memory access of `size` bytes at guest address (value of host
 * register addr, which holds guest register base) + disp: a load into host
 * register dst (sign- or zero-extended) or a store of host register src.
 * addr must not be rax. If the address register is outside the window,
 * the interpreter executes the instruction at pc instead (out of line) and
 * translated code is left for the dispatcher: so after one access, base is
 * known to be inside the window for the rest of the block, until it is
 * written (be_forget), and its next accesses need no check.
 */
void be_guest_load(BeCtx *c, int dst, int addr, int base, int32_t disp, int size, bool sign,
                   uint64_t pc);
void be_guest_store(BeCtx *c, int src, int addr, int base, int32_t disp, int size, uint64_t pc);

/*
 * The same at a guest address known at translation time (a global reached
 * through auipc): no window check, the caller has checked that the whole
 * access lies inside the window. Clobbers rcx if addr does not fit a
 * 32-bit displacement.
 */
void be_guest_load_abs(BeCtx *c, int dst, uint64_t addr, int size, bool sign);
void be_guest_store_abs(BeCtx *c, int src, uint64_t addr, int size);

/* The A extension's accesses (be_guest_atomic). */
enum be_atomic {
    BE_LR, BE_SC, BE_SWAP, BE_ADD,
    BE_XOR, BE_AND, BE_OR, BE_MIN, BE_MAX, BE_MINU, BE_MAXU,     /* a cmpxchg loop */
};

/*
 * An LR, SC or AMO of size 4 or 8 at the guest address in host register
 * addr (guest register base's value; no displacement), with guest register
 * val as the source of an SC or AMO: rax = the result (LR, AMO: the old
 * value, sign-extended from 32 bits; SC: 0 if it stored, else 1). Host
 * locked instructions, so atomic against the interpreter's __atomic
 * operations and other host threads; the reservation is the interpreter's
 * (cpu->res_*). A misaligned address, a TLB miss or a flagged page runs the
 * instruction in the interpreter, which raises the exact fault. False, with
 * nothing emitted, where user mode has no temporary register for it (addr
 * in rcx): the caller then calls the interpreter.
 */
bool be_guest_atomic(BeCtx *c, enum be_atomic op, int addr, int base, int val, int size,
                     uint64_t pc);

/*
 * Without a window (guest_mem.softmmu) every access probes the vCPU's TLB
 * inline (c->tlb_idx) and a miss runs the instruction in the interpreter,
 * then goes on after it: the translator calls be_insn_done after each
 * instruction, and puts a store's value in be_store_scratch() (rax with a
 * window, r14 without: the probe needs rax and rcx) if it needs a scratch
 * register for it. An address register that is rcx must hold guest
 * register base, whose home is then CPUState.
 */
void be_insn_done(BeCtx *c);
int be_store_scratch(void);

/*
 * Exact instret (c->count: system mode, where minstret is architectural,
 * in blocks translated with TB_FLAGS_COUNT).
 * The translator counts its native instructions in c->pending and adds
 * them to cpu->instret (be_count: one add) before anything can look at it
 * or leave the block: before a control transfer (counting it too, as it
 * retires by transferring), an interpreter call (which counts its own
 * instruction) and the block's end. A slow path adds what was pending
 * before its instruction and, resuming, takes back that and its
 * instruction, which the hot path counts later; an exit poll before a
 * branch takes back the branch.
 */
void be_count(BeCtx *c, uint32_t also);

/* Guest register g was written: its next access checks the window again. */
static inline void be_forget(BeCtx *c, int g) { c->checked &= ~(1u << g); }

#endif
