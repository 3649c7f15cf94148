/*
 * Architectural state of one RISC-V hart (one guest thread in user mode).
 *
 * The interpreter and (later) translated code read and write this struct
 * directly; keep the hot fields first and the layout stable, since the JIT
 * will address them by offset.
 */
#ifndef XLAT_RISCV_CPU_H
#define XLAT_RISCV_CPU_H

#include <stdbool.h>
#include <stdint.h>

/* Why the execution loop stopped running guest code. */
enum exit_reason {
    EXIT_NONE = 0,
    EXIT_ECALL,     /* pc points at the ecall; the loop runs the syscall, pc += 4 */
    EXIT_EBREAK,    /* pc points at the ebreak: SIGTRAP */
    EXIT_ILLEGAL,   /* pc points at the instruction: SIGILL, fault_addr = pc */
    EXIT_FAULT,     /* memory fault: fault_signal/fault_code/fault_addr, pc exact */
    EXIT_REQUEST,   /* another thread or a signal asked the loop to look */
};

typedef struct CPUState {
    uint64_t x[32];         /* x[0] is always 0 on entry to every instruction */

    /* What translated code reads on its hot paths, right after x[]: within
     * a one-byte displacement of its CPUState pointer (x86/backend.h). */
    uint64_t guest_limit;      /* GUEST_SPACE_SIZE: the window check's operand */
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

    /* Set when exit_reason is EXIT_FAULT or EXIT_ILLEGAL. */
    int      fault_signal;  /* SIGSEGV, SIGBUS, SIGILL, ... */
    int      fault_code;    /* si_code: SEGV_MAPERR, SEGV_ACCERR, ILL_ILLOPC ... */
    uint64_t fault_addr;    /* si_addr */

    uint64_t instret;       /* retired instruction count (interpreter) */

    /* Translated-code state (src/exec), read by generated code by offset. */
    struct JCEntry *jc;        /* this thread's jump cache (pc -> host code) */
    uint64_t jit_link;         /* TB|slot of the last unchained direct exit */
    /* Return-address stack on the host stack (x86/backend.c): rsp at entry
     * to translated code (its slot holds the empty-stack sentinel). */
    uint64_t ras_base;
    uint32_t jit_mxcsr[2];     /* scratch for ldmxcsr/stmxcsr in translated FP code */
    uint32_t fence_i_count;    /* fence.i run by the interpreter (exec.c flushes after one) */
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
 * Execute exactly one instruction (for tests and, later, JIT audits).
 * Returns EXIT_NONE if it completed normally.
 */
enum exit_reason interp_step(CPUState *cpu);

/*
 * Execute the straight-line code at cpu->pc: instructions until one moves
 * the pc anywhere but to the next (a taken branch, a jump), needs the loop,
 * or INTERP_STRAIGHT_MAX have run. Returns EXIT_NONE if they all completed
 * normally. The JIT's first runs of a block (exec.c: interp_block).
 */
#define INTERP_STRAIGHT_MAX 64
enum exit_reason interp_straight(CPUState *cpu);

#endif
