/*
 * The two locks every dispatch takes: tb_lock (exec/internal.h) and user
 * mode's mapping lock (mm_lock). A short process takes them thousands of
 * times (a warm /usr/bin/true: ~2,300 tb_lock and ~1,000 mm_lock pairs,
 * ~3 % of its run in musl's locked instructions), with never a second
 * thread to keep out.
 *
 * So while the process has one thread they are not taken: each only
 * counts its holders, which keeps a trylock from a signal handler (the
 * exit-time cache write) from getting in while the interrupted code holds
 * the lock, and the compiler from moving accesses across it. Before the
 * process gets a second thread, locks_shared_from_now() switches to the
 * real locks; it must be called with none of them held (the thread
 * creators call it from a system call or at start, outside every lock).
 * The switch is one way; a process starts shared unless its main says it
 * has one thread (user mode; system mode's harts are threads).
 */
#ifndef XLAT_EXEC_LOCK_H
#define XLAT_EXEC_LOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

extern bool locks_shared;
extern int locks_held;          /* while not shared: locks held, all told */

typedef struct XMutex {
    pthread_mutex_t m;
    int held;                   /* while not shared: the holds (counted: a signal
                                 * handler's hold within the code's undoes only itself) */
} XMutex;

typedef struct XRwlock {
    pthread_rwlock_t rw;
    int readers, writer;        /* while not shared: the holders */
} XRwlock;

#define XMUTEX_INITIALIZER { PTHREAD_MUTEX_INITIALIZER, 0 }
#define XRWLOCK_INITIALIZER { PTHREAD_RWLOCK_INITIALIZER, 0, 0 }

/*
 * A plain mutex that no code holds while it takes another lock (a leaf)
 * and that a fork's child may need: taken around every fork, after the
 * fork handlers registered later (the core's, which take the locks above
 * it), so that the child never starts with it held by a thread it does
 * not have. A guest thread closing a file while another forked left the
 * child waiting forever on own_fd's list. Register each once, from a
 * constructor (before any thread or fork).
 */
void lock_across_fork(pthread_mutex_t *m);
/* A file's leaf mutex, defined and registered. */
#define LEAF_MUTEX(name)                                                       \
    static pthread_mutex_t name = PTHREAD_MUTEX_INITIALIZER;                   \
    static __attribute__((constructor)) void name##_held_across_fork(void) { lock_across_fork(&name); }

/* The process has one thread (and holds no lock): stop taking them. */
void locks_single_thread(void);
/* A second thread is about to exist: take the real locks from now on. */
void locks_shared_from_now(void);

/* An elided hold or release: a count, and a compiler barrier as the real
 * lock's call is (a signal handler on this thread sees the count and the
 * protected data in program order). */
static inline void lock_hold(int *count)
{
    ++*count;
    locks_held++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void lock_release(int *count)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    --*count;
    locks_held--;
}

/* A lock (re)made with holds counted on it: in a fork's child, the holds
 * the fork took are gone. */
static inline void locks_forget(int holds)
{
    if (!locks_shared)
        locks_held -= holds;
}

static inline void xmutex_init(XMutex *l)
{
    pthread_mutex_init(&l->m, NULL);
    locks_forget(l->held);
    l->held = 0;
}

static inline void xmutex_lock(XMutex *l)
{
    if (__builtin_expect(locks_shared, 0)) {
        pthread_mutex_lock(&l->m);
        return;
    }
    lock_hold(&l->held);
}

static inline int xmutex_trylock(XMutex *l)
{
    if (locks_shared)
        return pthread_mutex_trylock(&l->m);
    if (l->held)
        return EBUSY;
    lock_hold(&l->held);
    return 0;
}

static inline void xmutex_unlock(XMutex *l)
{
    if (__builtin_expect(locks_shared, 0)) {
        pthread_mutex_unlock(&l->m);
        return;
    }
    lock_release(&l->held);
}

static inline void xrw_init(XRwlock *l)
{
    pthread_rwlock_init(&l->rw, NULL);
    locks_forget(l->readers + l->writer);
    l->readers = l->writer = 0;
}

static inline void xrw_rdlock(XRwlock *l)
{
    if (__builtin_expect(locks_shared, 0)) {
        pthread_rwlock_rdlock(&l->rw);
        return;
    }
    lock_hold(&l->readers);
}

static inline void xrw_wrlock(XRwlock *l)
{
    if (__builtin_expect(locks_shared, 0)) {
        pthread_rwlock_wrlock(&l->rw);
        return;
    }
    lock_hold(&l->writer);
}

static inline void xrw_unlock(XRwlock *l)
{
    if (__builtin_expect(locks_shared, 0)) {
        pthread_rwlock_unlock(&l->rw);
        return;
    }
    lock_release(l->writer ? &l->writer : &l->readers);
}

#endif
