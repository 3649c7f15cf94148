/*
 * Harts on host threads (see sched.h). One lock guards the run queue and
 * every hart's sched_state; a hart's state is also read without it
 * (sched_wake's fast path, sched_running), which is safe because the
 * blocking side and the waking side each store first and load second with
 * sequentially consistent atomics: a thread that blocks its hart stores
 * SCHED_BLOCKED, then looks at what would wake it (hart_may_resume); a
 * waker stores what it changed (mip, a fence, an HSM state), then loads
 * sched_state. One of the two sees the other's store, so no wake-up is
 * lost.
 *
 * Slices: while harts wait in the queue, a slicer thread wakes every
 * SLICE_NS and preempts each running hart that has had the whole slice
 * (a kick: it leaves translated code at its next poll and its loop's top
 * returns LEAVE_PREEMPT). With threads >= harts the queue stays empty and
 * the slicer sleeps.
 */
#define _GNU_SOURCE
#include "system/sched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/sbi.h"

#define SLICE_NS 4000000ULL              /* 4 ms, about a Linux host's slice */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;       /* idle threads */
static pthread_cond_t waiting = PTHREAD_COND_INITIALIZER;    /* the slicer */
static Hart *queue_head, *queue_tail;
static unsigned nthreads, idle_threads;

void sched_set_threads(unsigned threads) { nthreads = threads; }

unsigned sched_threads(void)
{
    unsigned n = nthreads;
    if (!n) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 && (unsigned long)cpus < machine.nharts ? (unsigned)cpus : machine.nharts;
    }
    return n < machine.nharts ? n : machine.nharts;
}

/* With the lock: h to the queue (its head if first), a thread woken. */
static void enqueue(Hart *h, bool first)
{
    __atomic_store_n(&h->sched_state, SCHED_QUEUED, __ATOMIC_SEQ_CST);
    h->queued_at = monotonic_ns();
    h->queue_next = NULL;
    if (!queue_head) {
        queue_head = queue_tail = h;
    } else if (first) {
        h->queue_next = queue_head;
        queue_head = h;
    } else {
        queue_tail->queue_next = h;
        queue_tail = h;
    }
    /* An idle thread takes it; the slicer is told in any case: an idle
     * thread already woken for another hart may take that one instead,
     * and then this one waits until a slice ends. */
    if (idle_threads)
        pthread_cond_signal(&work);
    pthread_cond_signal(&waiting);
}

/* With the lock: the queue's first hart, now running, or NULL. */
static Hart *dequeue(void)
{
    Hart *h = queue_head;
    if (!h)
        return NULL;
    queue_head = h->queue_next;
    if (!queue_head)
        queue_tail = NULL;
    uint64_t t = monotonic_ns();
    h->steal_ns += t - h->queued_at;
    h->slice_start = t;
    __atomic_store_n(&h->preempt, 0, __ATOMIC_RELAXED);  /* a slice asked of its last run */
    h->pauses = 0;
    __atomic_store_n(&h->sched_state, SCHED_RUNNING, __ATOMIC_SEQ_CST);
    return h;
}

void sched_wake(Hart *h)
{
    if (__atomic_load_n(&h->sched_state, __ATOMIC_SEQ_CST) != SCHED_BLOCKED)
        return;
    pthread_mutex_lock(&lock);
    if (h->sched_state == SCHED_BLOCKED && hart_may_resume(h))
        enqueue(h, false);
    pthread_mutex_unlock(&lock);
}

bool sched_running(const Hart *h)
{
    return __atomic_load_n(&h->sched_state, __ATOMIC_SEQ_CST) == SCHED_RUNNING;
}

bool sched_others_waiting(void)
{
    return __atomic_load_n(&queue_head, __ATOMIC_RELAXED) != NULL;
}

bool sched_take_preempt(Hart *h)
{
    return __atomic_exchange_n(&h->preempt, 0, __ATOMIC_ACQ_REL) != 0;
}

/* With the lock: h left its thread for why. */
static void put_back(Hart *h, enum hart_leave why)
{
    switch (why) {
    case LEAVE_PREEMPT:
        sbi_sta_preempted(h);           /* before another thread may take it */
        enqueue(h, false);
        break;
    case LEAVE_BLOCK:
        __atomic_store_n(&h->sched_state, SCHED_BLOCKED, __ATOMIC_SEQ_CST);
        if (hart_may_resume(h))
            enqueue(h, true);           /* woken meanwhile: on at once */

        break;
    case LEAVE_EXIT:
        __atomic_store_n(&h->sched_state, SCHED_BLOCKED, __ATOMIC_SEQ_CST);
        break;
    }
}

static void *run_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        Hart *h = dequeue();
        if (!h) {
            if (machine.exit_requested)
                break;
            idle_threads++;
            pthread_cond_wait(&work, &lock);
            idle_threads--;
            continue;
        }
        pthread_mutex_unlock(&lock);
        enum hart_leave why = hart_run_slice(h);
        pthread_mutex_lock(&lock);
        put_back(h, why);
        if (why == LEAVE_EXIT)
            pthread_cond_broadcast(&work);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Preempts running harts that had their slice while others wait. */
static void *slicer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!machine.exit_requested) {
        if (!queue_head) {
            pthread_cond_wait(&waiting, &lock);
            continue;
        }
        pthread_mutex_unlock(&lock);
        struct timespec ts = { 0, (long)SLICE_NS };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&lock);
        if (!queue_head)
            continue;
        uint64_t t = monotonic_ns();
        for (unsigned i = 0; i < machine.nharts; i++) {
            Hart *h = machine.harts[i];
            if (h->sched_state == SCHED_RUNNING && t - h->slice_start >= SLICE_NS) {
                __atomic_store_n(&h->preempt, 1, __ATOMIC_RELEASE);
                hart_kick(h);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* The machine is ending: every thread looks again (sched_run's caller
 * wakes the slicer through machine_request_exit's kicks). */
static void wake_all(void)
{
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&work);
    pthread_cond_broadcast(&waiting);
    pthread_mutex_unlock(&lock);
}

void sched_run(void)
{
    unsigned n = nthreads = sched_threads();
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < machine.nharts; i++)
        enqueue(machine.harts[i], false);   /* stopped ones block at their first look */
    pthread_mutex_unlock(&lock);
    pthread_t threads[MACHINE_MAX_HARTS], slice;
    bool slicing = n < machine.nharts;
    if (slicing && pthread_create(&slice, NULL, slicer, NULL) != 0)
        slicing = false;
    for (unsigned i = 1; i < n; i++)
        if (pthread_create(&threads[i], NULL, run_thread, NULL) != 0) {
            perror("xlat-system: hart thread");
            exit(1);
        }
    run_thread(NULL);
    machine_request_exit(machine.exit_status, machine.reboot);
    wake_all();
    for (unsigned i = 1; i < n; i++)
        pthread_join(threads[i], NULL);
    if (slicing)
        pthread_join(slice, NULL);
}
