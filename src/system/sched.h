/*
 * xlat's scheduler of harts on host threads (issue 20): -smp N harts run on
 * M host threads (-accel xlat,threads=M; default min(N, host CPUs)).
 *
 * A hart is in one of three places: on a thread (running), in the run
 * queue (runnable, waiting for a thread) or blocked (wfi with nothing
 * pending, HSM stopped or suspended, waiting for remote fences to be
 * acknowledged). Each thread takes the queue's first hart and runs it
 * (hart_run_slice) until it blocks, the machine ends, or its time slice
 * is over while others wait in the queue: then it goes to the queue's
 * tail. hart_kick, the one way anything tells a hart to look at its state
 * (an interrupt line, the timer, an IPI, hart_start, a fence, the end),
 * puts a blocked hart in the queue and wakes an idle thread for it.
 * With M >= N nothing ever waits in the queue and no slice ends: each
 * hart has a thread whenever it is runnable.
 *
 * Time a hart spends in the queue (runnable, not running) is its steal
 * time (sched_steal_ns), which the SBI's STA extension reports.
 */
#ifndef XLAT_SYSTEM_SCHED_H
#define XLAT_SYSTEM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

struct Hart;

/* Where a hart is (Hart.sched_state). */
enum { SCHED_BLOCKED, SCHED_QUEUED, SCHED_RUNNING };

/* Why hart_run_slice gave its thread back. */
enum hart_leave { LEAVE_EXIT, LEAVE_PREEMPT, LEAVE_BLOCK };

/* Threads to run the machine's harts on (0: min(harts, host CPUs)); more
 * than the harts are not made. Before sched_run. sched_threads: how many
 * it makes. */
void sched_set_threads(unsigned threads);
unsigned sched_threads(void);

/* Run every hart until the machine's run ends (the calling thread is one
 * of the M). The harts that are started are queued; the rest blocked. */
void sched_run(void);

/* h may have something to do: if it is blocked and hart_may_resume says
 * so, queue it. Any thread. */
void sched_wake(struct Hart *h);

/* Is h on a host thread right now (another hart's fence must wait for it)? */
bool sched_running(const struct Hart *h);

/* Do harts wait in the queue for a thread (a hint: read without the lock)? */
bool sched_others_waiting(void);

/* h's slice is over (others are queued): true once, at h's loop's top. */
bool sched_take_preempt(struct Hart *h);

#endif
