/*
 * pthread_create/join: 16 threads, each with its own argument and return
 * value; a detached thread; joining in reverse order; thread ids unique
 * and different from the process id; gettid in a thread != getpid.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 16

static pid_t tids[N];
static sem_t detached_done;

static void *square_sum(void *arg)
{
    long n = (long)arg, s = 0;
    for (long i = 1; i <= n * 1000; i++)
        s += i * i % 7;
    tids[n] = (pid_t)syscall(SYS_gettid);
    return (void *)s;
}

static void *detached(void *arg)
{
    *(int *)arg = 42;
    sem_post(&detached_done);
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        if (pthread_create(&t[i], NULL, square_sum, (void *)i) != 0) {
            puts("create failed");
            return 1;
        }
    for (int i = N - 1; i >= 0; i--) {
        void *r;
        if (pthread_join(t[i], &r) != 0) {
            puts("join failed");
            return 1;
        }
        printf("thread %2d -> %ld\n", i, (long)r);
    }

    int distinct = 1;
    for (int i = 0; i < N; i++) {
        if (tids[i] <= 0 || tids[i] == getpid())
            distinct = 0;
        for (int j = 0; j < i; j++)
            if (tids[i] == tids[j])
                distinct = 0;
    }
    printf("tids distinct and not the pid: %s\n", distinct ? "yes" : "no");

    int value = 0;
    pthread_attr_t attr;
    pthread_t d;
    sem_init(&detached_done, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&d, &attr, detached, &value);
    sem_wait(&detached_done);
    printf("detached thread wrote %d\n", value);

    /* Many short-lived threads in a row reuse stacks and tids. */
    long total = 0;
    for (long round = 0; round < 200; round++) {
        pthread_t x;
        void *r;
        pthread_create(&x, NULL, square_sum, (void *)(round % 4));
        pthread_join(x, &r);
        total += (long)r;
    }
    printf("200 create/join rounds: %ld\n", total);
    return 0;
}
