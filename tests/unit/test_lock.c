/*
 * exec/lock.h: locks elided while the process has one thread.
 *   - single: a held lock refuses a trylock (the exit-time cache write's
 *     from a signal handler) and takes it again once released; a hold
 *     nested in another (a handler's) releases only itself; read locks
 *     nest, as a real rwlock's do;
 *   - a fork's child starts with the holds of the fork's handlers gone;
 *   - going shared with a lock held is refused loudly (the new thread
 *     could take it);
 *   - shared: the real locks, so a second thread waits for the holder;
 *   - a leaf lock held across forks (lock_across_fork): a fork while
 *     another thread holds it waits for it, and the child gets it free.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/lock.h"
#include "check.h"

static XMutex mu = XMUTEX_INITIALIZER;
static XRwlock rw = XRWLOCK_INITIALIZER;

static void test_single(void)
{
    locks_single_thread();
    xmutex_lock(&mu);
    CHECK_EQ(xmutex_trylock(&mu), EBUSY);
    CHECK_EQ(locks_held, 1);
    xmutex_unlock(&mu);
    CHECK_EQ(xmutex_trylock(&mu), 0);
    xmutex_unlock(&mu);

    xmutex_lock(&mu);
    xmutex_lock(&mu);               /* a handler's, within the code's hold */
    xmutex_unlock(&mu);
    CHECK_EQ(xmutex_trylock(&mu), EBUSY);   /* the code still holds it */
    xmutex_unlock(&mu);
    CHECK_EQ(locks_held, 0);

    xrw_rdlock(&rw);
    xrw_rdlock(&rw);                /* a handler's read under the code's */
    CHECK_EQ(rw.readers, 2);
    xrw_unlock(&rw);
    xrw_unlock(&rw);
    xrw_wrlock(&rw);
    CHECK_EQ(rw.writer, 1);
    xrw_unlock(&rw);
    CHECK_EQ(rw.writer, 0);
    CHECK_EQ(rw.readers, 0);
    CHECK_EQ(locks_held, 0);
}

/* The fork handlers' pattern (exec.c, mm.c): hold across fork, the child
 * starts its locks over. */
static void test_fork_child(void)
{
    locks_single_thread();
    xrw_wrlock(&rw);
    xmutex_lock(&mu);
    pid_t pid = fork();
    if (pid == 0) {
        xrw_init(&rw);
        xmutex_init(&mu);
        _exit(locks_held == 0 && xmutex_trylock(&mu) == 0 ? 0 : 1);
    }
    xmutex_unlock(&mu);
    xrw_unlock(&rw);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_EQ(locks_held, 0);
}

static void test_shared_with_lock_held(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        locks_single_thread();
        xmutex_lock(&mu);
        locks_shared_from_now();    /* aborts */
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

static int entered;

static void *take(void *arg)
{
    (void)arg;
    xmutex_lock(&mu);
    __atomic_store_n(&entered, 1, __ATOMIC_SEQ_CST);
    xmutex_unlock(&mu);
    return NULL;
}

static void test_shared(void)
{
    locks_single_thread();
    locks_shared_from_now();
    CHECK(locks_shared);
    xmutex_lock(&mu);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, take, NULL) == 0);
    nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
    CHECK_EQ(__atomic_load_n(&entered, __ATOMIC_SEQ_CST), 0);  /* waits for us */
    CHECK_EQ(pthread_mutex_trylock(&mu.m), EBUSY);             /* the real one is held */
    xmutex_unlock(&mu);
    pthread_join(t, NULL);
    CHECK_EQ(entered, 1);
}

static pthread_mutex_t leaf = PTHREAD_MUTEX_INITIALIZER;
static int leaf_taken;

static void *hold_leaf(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&leaf);
    __atomic_store_n(&leaf_taken, 1, __ATOMIC_SEQ_CST);
    nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
    pthread_mutex_unlock(&leaf);
    return NULL;
}

static void test_leaf_across_fork(void)
{
    lock_across_fork(&leaf);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, hold_leaf, NULL) == 0);
    while (!__atomic_load_n(&leaf_taken, __ATOMIC_SEQ_CST))
        sched_yield();
    pid_t pid = fork();                 /* the other thread holds leaf now */
    if (pid == 0)
        _exit(pthread_mutex_trylock(&leaf) == 0 ? 0 : 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_EQ(pthread_mutex_trylock(&leaf), 0);  /* the parent's is free again */
    pthread_mutex_unlock(&leaf);
    pthread_join(t, NULL);
}

int main(void)
{
    test_single();
    test_fork_child();
    test_shared_with_lock_held();
    test_shared();
    test_leaf_across_fork();
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures != 0;
}
