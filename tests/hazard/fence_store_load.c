/*
 * The store-buffering litmus test (SB) with a full fence, on two threads:
 *
 *     thread A: x = 1; fence rw,rw; a = y        thread B: y = 1; fence rw,rw; b = x
 *
 * RVWMO forbids a == 0 && b == 0 here. x86-TSO allows it without a barrier
 * (each store may still be in its core's store buffer when the other
 * core's load reads memory), so a fence that orders a store before a
 * later load must become one on the host (an mfence); without it this
 * outcome shows up within a few thousand rounds on a multi-core host.
 * Each round the two threads meet at a spin barrier, then race. Also the
 * same with fence.tso, which allows the outcome, as a check that the
 * race really happens here (reported, not required: a single-core host
 * never shows it). Self-checking: prints ALL OK.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 200000

static volatile long x, y, a, b;
static volatile long round_go, done_a, done_b;

#define FENCE_RW_RW() __asm__ volatile("fence rw, rw" ::: "memory")
#define FENCE_TSO()   __asm__ volatile("fence.tso" ::: "memory")

static volatile int tso;          /* the rounds with fence.tso instead */

static void *thread_b(void *arg)
{
    (void)arg;
    for (long r = 1; r <= 2 * ROUNDS; r++) {
        while (__atomic_load_n(&round_go, __ATOMIC_ACQUIRE) != r)
            ;
        y = 1;
        if (tso)
            FENCE_TSO();
        else
            FENCE_RW_RW();
        b = x;
        __atomic_store_n(&done_b, r, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* ROUNDS rounds from round number first: how many ended with a == b == 0. */
static long run(long first)
{
    long both_zero = 0;
    for (long r = first; r < first + ROUNDS; r++) {
        x = y = 0;
        __atomic_store_n(&round_go, r, __ATOMIC_RELEASE);
        x = 1;
        if (tso)
            FENCE_TSO();
        else
            FENCE_RW_RW();
        a = y;
        while (__atomic_load_n(&done_b, __ATOMIC_ACQUIRE) != r)
            ;
        both_zero += a == 0 && b == 0;
    }
    return both_zero;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread_b, NULL)) {
        perror("pthread_create");
        return 1;
    }
    long full = run(1);
    __atomic_store_n(&tso, 1, __ATOMIC_SEQ_CST);
    long with_tso = run(1 + ROUNDS);
    pthread_join(t, NULL);
    printf("fence rw,rw: a = b = 0 in %ld of %d rounds; fence.tso: %ld\n", full, ROUNDS,
           with_tso);
    if (full) {
        printf("FAIL: fence rw,rw let a store pass a later load\n");
        return 1;
    }
    printf("ALL OK\n");
    return 0;
}
