/*
 * Thread-local storage: __thread variables (initialized and zeroed) have
 * one copy per thread, errno is per thread, pthread keys hold per-thread
 * values and their destructors run at thread exit. tp (x4) is set per
 * thread by clone's CLONE_SETTLS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 6

static __thread long tls_init = 1000;
static __thread long tls_zero;
static __thread char tls_buf[64];
static pthread_key_t key;
static int destructor_calls;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

static void destructor(void *p)
{
    pthread_mutex_lock(&lock);
    destructor_calls++;
    pthread_mutex_unlock(&lock);
    free(p);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    long *v = malloc(sizeof *v);
    *v = id * 11;
    pthread_setspecific(key, v);
    tls_init += id;
    tls_zero = id * 3;
    snprintf(tls_buf, sizeof tls_buf, "thread-%ld", id);
    errno = (int)id + 1;
    pthread_barrier_wait(&barrier);       /* everyone has written theirs */
    void *tp;
    __asm__("mv %0, tp" : "=r"(tp));
    long ok = tls_init == 1000 + id && tls_zero == id * 3 && errno == (int)id + 1 &&
              *(long *)pthread_getspecific(key) == id * 11 && (void *)&tls_zero > (void *)0 &&
              tp != NULL;
    char line[128];
    snprintf(line, sizeof line, "%s: init %ld zero %ld errno %d key %ld %s\n", tls_buf,
             tls_init, tls_zero, errno, *(long *)pthread_getspecific(key), ok ? "ok" : "BAD");
    return strdup(line);
}

int main(void)
{
    pthread_t t[N];
    void *addr_main = &tls_zero;
    pthread_key_create(&key, destructor);
    pthread_barrier_init(&barrier, NULL, N);
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < N; i++) {
        void *line;
        pthread_join(t[i], &line);
        fputs(line, stdout);
        free(line);
    }
    printf("main: init %ld zero %ld (unchanged), destructors %d, main's copy %s\n", tls_init,
           tls_zero, destructor_calls, addr_main == (void *)&tls_zero ? "stable" : "moved");
    return 0;
}
