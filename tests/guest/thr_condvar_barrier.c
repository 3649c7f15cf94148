/*
 * Condition variables, barriers, semaphores and rwlocks between threads:
 * a bounded producer/consumer queue (pthread_cond_wait/signal/broadcast),
 * a pthread_barrier reused over many rounds, a counting semaphore and a
 * timed wait that must time out. All of it rests on futex WAIT/WAKE (and
 * WAIT_BITSET for the timed cases).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

#define PRODUCERS 3
#define CONSUMERS 3
#define ITEMS     20000      /* per producer */
#define QSIZE     8
#define BTHREADS  6
#define ROUNDS    300

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long queue[QSIZE];
static int qhead, qcount, producers_left = PRODUCERS;
static long consumed_sum, consumed_n;

static void *producer(void *arg)
{
    long base = (long)arg * 1000000;
    for (long i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&qlock);
        while (qcount == QSIZE)
            pthread_cond_wait(&not_full, &qlock);
        queue[(qhead + qcount++) % QSIZE] = base + i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    producers_left--;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (qcount == 0 && producers_left > 0)
            pthread_cond_wait(&not_empty, &qlock);
        if (qcount == 0) {
            pthread_mutex_unlock(&qlock);
            return NULL;
        }
        long v = queue[qhead];
        qhead = (qhead + 1) % QSIZE;
        qcount--;
        consumed_sum += v;
        consumed_n++;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&qlock);
    }
}

static pthread_barrier_t barrier;
static long slots[BTHREADS];
static long barrier_errors;

static void *barrier_worker(void *arg)
{
    long id = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        slots[id] = r * 10 + id;
        pthread_barrier_wait(&barrier);
        /* Everyone has written round r: check all slots. */
        for (int j = 0; j < BTHREADS; j++)
            if (slots[j] != r * 10 + j)
                __atomic_fetch_add(&barrier_errors, 1, __ATOMIC_RELAXED);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static sem_t sem;
static long sem_total;

static void *sem_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        sem_wait(&sem);
        __atomic_fetch_add(&sem_total, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (long i = 0; i < PRODUCERS; i++)
        pthread_create(&p[i], NULL, producer, (void *)i);
    for (long i = 0; i < CONSUMERS; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(c[i], NULL);
    printf("queue: %ld items, sum %ld\n", consumed_n, consumed_sum);

    pthread_t b[BTHREADS];
    pthread_barrier_init(&barrier, NULL, BTHREADS);
    for (long i = 0; i < BTHREADS; i++)
        pthread_create(&b[i], NULL, barrier_worker, (void *)i);
    for (int i = 0; i < BTHREADS; i++)
        pthread_join(b[i], NULL);
    printf("barrier: %d rounds, %ld errors\n", ROUNDS, barrier_errors);

    pthread_t s[4];
    sem_init(&sem, 0, 0);
    for (long i = 0; i < 4; i++)
        pthread_create(&s[i], NULL, sem_worker, NULL);
    for (int i = 0; i < 4000; i++)
        sem_post(&sem);
    for (int i = 0; i < 4; i++)
        pthread_join(s[i], NULL);
    printf("semaphore: %ld\n", sem_total);

    /* Timed waits that must time out (futex with a timeout). */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&qlock);
    int r = pthread_cond_timedwait(&not_empty, &qlock, &ts);
    pthread_mutex_unlock(&qlock);
    printf("cond_timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : "?");
    r = sem_timedwait(&sem, &ts);
    printf("sem_timedwait: %s\n", r < 0 && errno == ETIMEDOUT ? "ETIMEDOUT" : "?");

    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    pthread_rwlock_rdlock(&rw);
    printf("rwlock: tryrdlock %d, trywrlock %s\n", pthread_rwlock_tryrdlock(&rw),
           pthread_rwlock_trywrlock(&rw) == EBUSY ? "EBUSY" : "?");
    return 0;
}
