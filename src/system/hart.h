/*
 * A hart of the virt machine: the CPUState the execution core runs (with
 * the privileged state of riscv/priv.h in it), the machine-level timer
 * compare of the ACLINT, the HSM state of the SBI, and what a hart waiting
 * in wfi sleeps on.
 *
 * hart_run() is a hart's loop: it runs guest code through the JIT (or the
 * interpreter, -interp) and turns each exit into what the
 * machine does: a trap into the guest (exceptions, interrupts), an SBI
 * call served by xlat (an S-mode ecall with -bios default), a wfi sleep.
 *
 * Interrupt lines: devices set or clear bits of cpu->priv.mip through
 * hart_set_mip (any thread); the hart notices at its next exit check
 * (exit_request is raised) or wakes from wfi.
 */
#ifndef XLAT_SYSTEM_HART_H
#define XLAT_SYSTEM_HART_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"
#include "system/tlb.h"

/* SBI HSM states (SBI 2.0 chapter 9). */
enum { HSM_STARTED = 0, HSM_STOPPED = 1, HSM_START_PENDING = 2, HSM_STOP_PENDING = 3,
       HSM_SUSPENDED = 4 };

typedef struct Hart {
    CPUState cpu;                      /* first: a CPUState * is a Hart * */
    unsigned id;                       /* mhartid */
    pthread_t thread;

    pthread_mutex_t lock;              /* wake-ups, hsm, mtimecmp */
    pthread_cond_t wake;
    uint64_t mtimecmp;                 /* ACLINT: MTIP while mtime >= this */
    int hsm_state;
    uint64_t start_addr, start_opaque; /* HSM hart_start's arguments */

    int remote_flush;                  /* another hart's RFENCE: flush before running */

    HartTlbs tlbs;                     /* its softmmu TLBs (tlb.h) */
} Hart;

static inline Hart *hart_of(CPUState *cpu) { return (Hart *)cpu; }

/* Set (on) or clear the bits mask of h's mip; wakes h if it now has an
 * interrupt to look at. Any thread. */
void hart_set_mip(Hart *h, uint64_t mask, bool on);

/* h's timer compares changed (mtimecmp, stimecmp): re-arm its wake-up. */
void hart_timer_changed(Hart *h);

/* Make h leave guest code and look at its state soon. Any thread. */
void hart_kick(Hart *h);

/* Create hart id (reset state, stopped unless it is the boot hart). */
Hart *hart_create(unsigned id);

/* Run h's loop on the calling thread until the machine's run ends. */
void hart_run(Hart *h);

/* The exception a memory fault is (its cause), and an illegal
 * instruction's tval: the bits at cpu->pc, or 0 if they cannot be fetched. */
uint64_t hart_fault_cause(const MemFault *f);
uint64_t hart_insn_bits_at(CPUState *cpu);

/* Guest code runs through the JIT (exec_run), not the interpreter alone
 * (-interp). Set before the harts exist. */
extern bool hart_use_jit;

/* Run cpu's guest code until an exit, as the hart loop does (the gdb
 * stub's path without breakpoints too): exec_run or interp_run, or
 * instruction by instruction while -d exec (or -d in_asm without the JIT)
 * logs it. */
enum exit_reason hart_run_code(CPUState *cpu);

/* Start every hart's host thread (the boot hart's too) and wait for the
 * machine's run to end. */
void harts_run_all(void);

/* Have h flush its translations before it next runs guest code, and wait
 * until it has (or is not running). From another hart's SBI RFENCE. */
void hart_remote_flush(Hart *h);

#endif
