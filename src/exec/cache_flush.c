/*
 * Flushing the whole cache (the code buffer is full, fence.i): code can be
 * overwritten only when no thread runs it. Threads count themselves in
 * cache_active from entering exec_run until they leave it (or wait for a
 * flush). The flusher raises flush_pending, kicks every vCPU (jit_kick and
 * exec_kick) and waits, holding no lock, until cache_active is zero; then
 * it empties the TB table, the page lists and every jump cache, and starts
 * the code buffer over. flush_gen counts flushes, so that of several
 * threads finding the buffer full only one flushes.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "exec/exec.h"
#include "exec/internal.h"

pthread_mutex_t flush_mutex = PTHREAD_MUTEX_INITIALIZER;
int cache_active;
int flush_pending;
uint64_t flush_gen;

void cache_enter(void)
{
    for (;;) {
        __atomic_fetch_add(&cache_active, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&flush_pending, __ATOMIC_SEQ_CST))
            return;
        __atomic_fetch_sub(&cache_active, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&flush_pending, __ATOMIC_SEQ_CST))
            sched_yield();
    }
}

void cache_exit(void) { __atomic_fetch_sub(&cache_active, 1, __ATOMIC_SEQ_CST); }

void cache_flush(uint64_t seen_gen)
{
    pthread_mutex_lock(&flush_mutex);
    if (__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE) != seen_gen) {
        pthread_mutex_unlock(&flush_mutex);
        return;
    }
    __atomic_store_n(&flush_pending, 1, __ATOMIC_SEQ_CST);
    xmutex_lock(&tb_lock);
    for (size_t i = 0; i < nvcpus; i++) {
        vcpus[i]->jit_kick = 1;
        exec_kick(vcpus[i]);
    }
    xmutex_unlock(&tb_lock);
    while (__atomic_load_n(&cache_active, __ATOMIC_SEQ_CST) > 0)
        sched_yield();

    xmutex_lock(&tb_lock);
    if (log_mask & LOG_STATS)
        prof_keep_flushed();
    tb_cache_reset();
    for (size_t i = 0; i < nvcpus; i++)
        jc_flush_vcpu(vcpus[i]);
    code_used = code_base;
    cold_used = HOT_END;
    pcmap_used = 0;
    stats.flushes++;
    __atomic_fetch_add(&flush_gen, 1, __ATOMIC_RELEASE);
    xmutex_unlock(&tb_lock);
    xlat_log(LOG_EXEC, "xlat: code cache flush %llu\n", (unsigned long long)stats.flushes);

    __atomic_store_n(&flush_pending, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&flush_mutex);
}

void exec_flush_all(void)
{
    if (code_rw)
        cache_flush(__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE));
}
