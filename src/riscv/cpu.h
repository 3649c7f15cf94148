/*
 * Architectural state of one RISC-V hart (one guest thread in user mode),
 * and the per-vCPU state of the execution core that runs it.
 *
 * The interpreter and translated code read and write this struct directly;
 * keep the hot fields first: translated code addresses them by offset
 * (x86/backend.h).
 */
#ifndef XLAT_RISCV_CPU_H
#define XLAT_RISCV_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/guest_mem.h"
#include "exec/softmmu.h"
#include "riscv/priv.h"

/* The smallest guest page: the unit of code tracking (exec's page lists). */
#define TARGET_PAGE_BITS 12
#define TARGET_PAGE_SIZE (1ULL << TARGET_PAGE_BITS)

/* Why the execution loop stopped running guest code. */
enum exit_reason {
    EXIT_NONE = 0,
    EXIT_ECALL,     /* pc points at the ecall; the loop runs the syscall, pc += 4 */
    EXIT_EBREAK,    /* pc points at the ebreak (user mode: SIGTRAP) */
    EXIT_ILLEGAL,   /* pc points at the instruction (user mode: SIGILL) */
    EXIT_FAULT,     /* memory fault: cpu->fault says what, pc exact */
    EXIT_REQUEST,   /* the loop must look: another thread or a signal asked,
                     * or (system mode) the privileged state changed; pc is next */
    EXIT_WFI,       /* system mode: wfi done, pc is past it; sleep until an interrupt */
};

typedef struct CPUState {
    uint64_t x[32];         /* x[0] is always 0 on entry to every instruction */

    /* What translated code reads on its hot paths, right after x[]: within
     * a one-byte displacement of its CPUState pointer (x86/backend.h). */
    uint64_t guest_limit;      /* guest_mem.limit: the window check's operand */
    volatile int exit_request; /* nonzero: leave the run loop at the next instruction */
    /* Translated code polls exit_request and jit_kick with one 8-byte load. */
    volatile int jit_kick;     /* src/exec only: leave translated code (cache flush) */
    /* The jump-cache table indirect exits probe: jc, or an all-empty table while
     * an exit is requested (exec_kick: the next indirect exit misses into the loop). */
    struct JCEntry *volatile jc_probe;
    uint64_t jc_offset_mask;   /* (entries - 1) * 16: pc's entry is at byte (pc << 3) & this */
    uint64_t ras_floor;        /* the lowest rsp a guest call may push below */

    uint64_t f[32];         /* FP registers; single values are NaN-boxed */
    uint64_t pc;
    uint32_t fflags;        /* accrued exceptions: NV DZ OF UF NX = bits 4..0 */
    uint32_t frm;           /* dynamic rounding mode, 0..4 valid */

    /* LR/SC reservation: the address and the value seen by lr. */
    uint64_t res_addr;
    uint64_t res_val;
    bool     res_valid;

    MemFault fault;         /* set when exit_reason is EXIT_FAULT */

    uint64_t instret;       /* retired instruction count (interpreter) */

    /* Translated-code state (src/exec), read by generated code by offset. */
    struct JCEntry *jc;        /* this thread's jump cache (pc -> host code) */
    uint64_t jit_link;         /* the last unchained direct exit's stub data (x86/backend.h) */
    /* Return-address stack on the host stack (x86/backend.c): rsp at entry
     * to translated code (its slot holds the empty-stack sentinel). */
    uint64_t ras_base;
    uint32_t jit_mxcsr[2];     /* scratch for ldmxcsr/stmxcsr in translated FP code */
    uint32_t fence_i_count;    /* fence.i run by the interpreter (dispatch.c flushes after one) */
    uint32_t tb_flags;         /* state that changes translation (TBKey.flags): 0 in user mode;
                                * system mode: priv.h's TB_FLAGS_* */
    /* The jump caches of each tb_flags value seen lately (jump_cache.c:
     * JcSets); jc is the one of the current flags. */
    struct JcSets *jc_sets;
    uint32_t jc_flags;         /* the tb_flags of jc's blocks */

    /* The interpreter's decoded-instruction cache (interp.c), mapped at its
     * first use and unmapped by interp_cpu_exit. */
    struct DCacheEntry *dcache;
    uint64_t dcache_gen_seen;  /* the flush generation its entries are valid for */
    uint64_t exec_page;        /* 1 + the last code page found fetchable (0: none) */

    /* The softmmu TLBs translated code probes (exec/softmmu.h; system mode). */
    TlbFast tlb[TLB_NIDX];
    uint64_t tlb_hold;      /* the addend a group of accesses shares (x86/backend.h) */

    /* The privileged architecture (system mode; off in user mode). */
    RiscvPriv priv;
} CPUState;

/* FP exception flag bits (fflags). */
enum { FFLAG_NX = 1, FFLAG_UF = 2, FFLAG_OF = 4, FFLAG_DZ = 8, FFLAG_NV = 16 };

/* User-visible CSR numbers. */
enum {
    CSR_FFLAGS = 0x001, CSR_FRM = 0x002, CSR_FCSR = 0x003,
    CSR_CYCLE = 0xc00, CSR_TIME = 0xc01, CSR_INSTRET = 0xc02,
};

/*
 * Run guest code from cpu->pc in the interpreter until something needs the
 * execution loop: returns the reason, with cpu->pc at the instruction that
 * caused it (see enum exit_reason).
 */
enum exit_reason interp_run(CPUState *cpu);

/*
 * Execute exactly one instruction (for tests, the JIT's helper calls).
 * Returns EXIT_NONE if it completed normally.
 */
enum exit_reason interp_step(CPUState *cpu);

/*
 * Execute the Zicsr instruction in (decoded; at pc) as interp_step would,
 * without fetching it: translated code's CSR accesses (the translator has
 * the instruction). EXIT_REQUEST if the privileged state changed (priv.h's
 * PRIV_STOP), EXIT_ILLEGAL (cpu->pc = pc) if the access is illegal.
 */
struct Insn;
enum exit_reason interp_csr(CPUState *cpu, uint64_t pc, const struct Insn *in);

/*
 * interp_run for -d in_asm and -d exec (riscv/insn_log.c): one instruction
 * at a time, logging each pc (exec) or each distinct pc once (in_asm), at
 * most budget of them; EXIT_REQUEST when cpu->exit_request is set,
 * EXIT_NONE when the budget is spent.
 */
enum exit_reason interp_run_logged(CPUState *cpu, unsigned budget);

/*
 * Execute the straight-line code at cpu->pc: instructions until one moves
 * the pc anywhere but to the next (a taken branch, a jump), needs the loop,
 * or INTERP_STRAIGHT_MAX have run. Returns EXIT_NONE if they all completed
 * normally. The JIT's first runs of a block (dispatch.c: interp_block).
 */
#define INTERP_STRAIGHT_MAX 64
enum exit_reason interp_straight(CPUState *cpu);

#endif
