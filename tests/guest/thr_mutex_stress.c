/*
 * 8 threads x 100000 increments of shared counters, three ways: under a
 * pthread mutex, under a raw lr.w/sc.w spinlock, and with atomic_fetch_add
 * (amoadd). Every count must be exact: LR/SC and AMOs are atomic between
 * guest threads, and futex-based mutexes wake their waiters.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 8
#define ITERS   100000

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long mutex_count;
static int spin;                 /* 0 free, 1 held */
static long spin_count;
static atomic_long atomic_count;
static atomic_int ready;

static void spin_lock(int *lock)
{
    int tmp, one = 1;
    for (unsigned tries = 0;; tries++) {
        __asm__ volatile(
            "1: lr.w.aq %0, (%1)\n"
            "   bnez    %0, 2f\n"
            "   sc.w.rl %0, %2, (%1)\n"
            "   bnez    %0, 1b\n"
            "2:\n"
            : "=&r"(tmp) : "r"(lock), "r"(one) : "memory");
        if (tmp == 0)
            return;
        if (tries % 64 == 63)
            sched_yield();          /* the holder may be descheduled */
    }
}

static void spin_unlock(int *lock)
{
    __asm__ volatile("amoswap.w.rl zero, zero, (%0)" : : "r"(lock) : "memory");
}

static void *worker(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ready, 1);
    while (atomic_load(&ready) < THREADS)
        sched_yield();
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&mutex);
        mutex_count++;
        pthread_mutex_unlock(&mutex);

        spin_lock(&spin);
        spin_count++;
        spin_unlock(&spin);

        atomic_fetch_add_explicit(&atomic_count, 1, memory_order_relaxed);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            puts("pthread_create failed");
            return 1;
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("mutex  %ld\n", mutex_count);
    printf("spin   %ld\n", spin_count);
    printf("atomic %ld\n", (long)atomic_load(&atomic_count));
    return mutex_count == (long)THREADS * ITERS && spin_count == (long)THREADS * ITERS &&
           atomic_load(&atomic_count) == (long)THREADS * ITERS ? 0 : 1;
}
