/*
 * A hart of the virt machine: the CPUState the execution core runs (with
 * the privileged state of riscv/priv.h in it), the machine-level timer
 * compare of the ACLINT, the HSM state of the SBI, the remote fences other
 * harts sent it, and the scheduler's view of it (sched.h).
 *
 * hart_run_slice() is a hart's loop: it runs guest code through the JIT
 * (or the interpreter, -interp) and turns each exit into what the machine
 * does: a trap into the guest (exceptions, interrupts), an SBI call served
 * by xlat (an S-mode ecall with -bios default); a wfi with nothing
 * pending, or a stopped hart, gives its host thread back to the scheduler.
 *
 * Interrupt lines: devices set or clear bits of cpu->priv.mip through
 * hart_set_mip (any thread); the hart notices at its next exit check
 * (exit_request is raised) or, blocked, is queued to run (hart_kick).
 */
#ifndef XLAT_SYSTEM_HART_H
#define XLAT_SYSTEM_HART_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"
#include "system/sched.h"
#include "system/tlb.h"

/* SBI HSM states (SBI 2.0 chapter 9). */
enum { HSM_STARTED = 0, HSM_STOPPED = 1, HSM_START_PENDING = 2, HSM_STOP_PENDING = 3,
       HSM_SUSPENDED = 4 };
enum { HSM_SUSPEND_RETENTIVE = 0, HSM_SUSPEND_NON_RETENTIVE = 0x80000000u };

/* The sfence.vma of another hart's RFENCE call: the pages [start, start +
 * size) (size 0: every page), of one ASID or of all. */
typedef struct HartFence {
    uint64_t start, size;
    uint64_t asid;
    bool by_asid;
} HartFence;

/* A hart's pending remote fences: up to HART_FENCES, then everything. */
#define HART_FENCES 4
typedef struct HartFences {
    unsigned n;                        /* HART_FENCES + 1: flush everything */
    HartFence f[HART_FENCES];
    uint32_t waiters;                  /* harts waiting for these (ids as bits) */
} HartFences;

#define STA_OFF UINT64_MAX

typedef struct Hart {
    CPUState cpu;                      /* first: a CPUState * is a Hart * */
    unsigned id;                       /* mhartid */

    pthread_mutex_t lock;              /* hsm, mtimecmp, the fence records */
    uint64_t mtimecmp;                 /* ACLINT: MTIP while mtime >= this */
    int hsm_state;
    uint64_t start_addr, start_opaque; /* HSM hart_start's (or hart_suspend's) */
    uint32_t suspend_type;             /* HSM hart_suspend's, while HSM_SUSPENDED */

    /* Remote sfence.vma from other harts' SBI RFENCE (hart_remote_fence),
     * applied before the hart next runs guest code: fence_pending says
     * there are some, fences (under lock) what they are and who waits. */
    int fence_pending;
    HartFences fences;
    uint32_t acks_pending;             /* harts this one waits for (ids as bits) */

    /* sched.c's (its lock; sched_state is also read without it). */
    int sched_state;                   /* SCHED_BLOCKED, _QUEUED, _RUNNING */
    int blocked_on;                    /* hart.c's: why it gave its thread back */
    int preempt;                       /* the slice is over: leave the thread */
    struct Hart *queue_next;
    uint64_t queued_at, slice_start;   /* CLOCK_MONOTONIC ns */
    uint64_t steal_ns;                 /* time runnable but not running, in all */
    unsigned pauses;                   /* pause instructions while others waited */
    uint64_t sta_shmem;                /* SBI STA record's address, or STA_OFF */

    HartTlbs tlbs;                     /* its softmmu TLBs (tlb.h) */

    /* -d stats (hart_print_stats), each counted by the hart's own thread. */
    struct {
        uint64_t slices, preempted, pause_exits;
        uint64_t rfences, waited_for, recorded, wait_ns;   /* as the sender */
        uint64_t applied, flushed_all;                     /* as a target */
    } stats;
} Hart;

static inline Hart *hart_of(CPUState *cpu) { return (Hart *)cpu; }

/* -d stats: each hart's slices and remote fences, at exit. */
void hart_print_stats(void);

/* Set (on) or clear the bits mask of h's mip; wakes h if it now has an
 * interrupt to look at. Any thread. */
void hart_set_mip(Hart *h, uint64_t mask, bool on);

/* h's timer compares changed (mtimecmp, stimecmp): re-arm its wake-up. */
void hart_timer_changed(Hart *h);

/* Make h leave guest code and look at its state soon. Any thread. */
void hart_kick(Hart *h);

/* Create hart id (reset state, stopped unless it is the boot hart). */
Hart *hart_create(unsigned id);

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

/* Run the machine's harts (sched.c, on its threads) with the timer
 * thread beside them until the machine's run ends. */
void harts_run_all(void);

/* Run h on the calling thread until it blocks (wfi with nothing pending,
 * HSM stopped or suspended), its slice is over or the machine ends: the
 * scheduler's (sched.c) unit of work. */
enum hart_leave hart_run_slice(Hart *h);

/* h, blocked, has something to do now (sched.c asks with its lock held,
 * h on no thread). */
bool hart_may_resume(Hart *h);

/*
 * self's SBI RFENCE: every hart of targets (hart ids as bits) applies the
 * fence f (NULL: fence.i, nothing to apply: every store to code dropped
 * its translations already) before it next runs guest code. Waits for
 * the targets that are running now to have applied it, not for those
 * that are not on a host thread (seed 003's paravirtual flush), unless
 * -tune no-pv-rfence: then for every target that is started, as firmware
 * IPIs would. If self's slice ends first, acks_pending stays nonzero and
 * the hart loop goes on waiting when self runs again.
 */
void hart_remote_fence(Hart *self, uint32_t targets, const HartFence *f);

#endif
