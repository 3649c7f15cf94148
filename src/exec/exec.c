/*
 * The JIT core's setup and its fork handlers. How the parts work is in
 * their own files (the list is in exec/internal.h); what a mode calls is in
 * exec/exec.h.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "riscv/interp.h"
#include "riscv/translate.h"

/*
 * The locks in the order everything else takes them: flush_mutex (a
 * flusher waits for threads that may need the mode's code lock to
 * translate), then the mode's lock, then tb_lock (a translator holds the
 * code lock when it takes tb_lock). Taking tb_lock before user mode's
 * mapping lock deadlocked a fork from one thread against a translation in
 * another.
 */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&flush_mutex);
    guest_mem.ops->fork_prepare();
    xmutex_lock(&tb_lock);
    if (code_owners)
        __atomic_fetch_add(code_owners, 1, __ATOMIC_ACQ_REL);
}

static void atfork_parent(void)
{
    xmutex_unlock(&tb_lock);
    guest_mem.ops->fork_parent();
    pthread_mutex_unlock(&flush_mutex);
}

/* Only the forking thread lives on in the child, outside the cache. */
static void atfork_child(void)
{
    guest_mem.ops->fork_child();
    warm_child();
    pcache_fork_child();
    nvcpus = 0;
    if (this_cpu)
        vcpus[nvcpus++] = this_cpu;
    cache_active = 0;
    flush_pending = 0;
    xmutex_init(&tb_lock);
    pthread_mutex_init(&flush_mutex, NULL);
}

void exec_before_exec(void) { pcache_flush(); }

void exec_init(void)
{
    code_buffer_init();
    interp_small_cache();
    tb_cache_init();
    dispatch_init();
    jump_cache_init();
    if (tune.fork_warm)
        warm_init();
    dflags_cached = dflags_compute();
    translate_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
