/*
 * What the files of the JIT core (src/exec/) share with each other and
 * with nobody else. Each part's own file says how it works:
 *
 *   code_buffer.c  the code buffer (RW and RX views), copy on write after fork
 *   tb_cache.c     TBs by key, their pages, translation, invalidation
 *   chain.c        direct jumps between TBs (goto_tb slots)
 *   jump_cache.c   per-vCPU jump caches, exit requests, the vCPU registry
 *   cache_flush.c  emptying the whole cache while no vCPU runs in it
 *   warm.c         fork warm-up (user mode: children report, parents translate)
 *   dispatch.c     the dispatcher (exec_run) and first runs in the interpreter
 *   host_fault.c   a host fault inside translated code -> exact guest state
 *   stats.c        -d stats counters
 *   exec.c         init and the fork handlers
 *
 * Locking: tb_lock protects the TB table, the page lists, chaining, the
 * vCPU registry and every jump cache write. guest_mem.ops->code_lock (user
 * mode: the mapping table's read lock) is taken before tb_lock by the
 * translator, and a mode's memory changes take their own lock first too
 * (exec_invalidate_range is called with it held). flush_mutex comes before
 * both (cache_flush.c).
 */
#ifndef XLAT_EXEC_INTERNAL_H
#define XLAT_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/lock.h"
#include "exec/settings.h"
#include "exec/tb.h"

#define CODE_SIZE   (256u << 20)
#define HOT_END     (160u << 20)        /* hot code below, cold (out-of-line) code above */
#define MAX_TBS     (1u << 19)
#define PCMAP_PAIRS (1u << 24)

/* -- code_buffer.c -- */
extern size_t code_used, code_base;     /* next free byte; first TB byte */
extern size_t cold_used;                /* next free byte of the cold area */
extern uint16_t (*pcmap)[2];
extern size_t pcmap_used;
extern int *code_owners;                /* processes sharing this buffer (fork) */
void code_buffer_init(void);
/* With tb_lock held, before any write to the code buffer: own it alone. */
void code_make_private(void);
/* After a TB was placed (tb_lock held): populate the areas ahead of it. */
void code_areas_advance(void);
/* The code buffer populated up to hot_end and cold_end (about to be written). */
void code_areas_cover(size_t hot_end, size_t cold_end);

static inline uint8_t *tb_entry_rw(const TB *tb) { return code_rw + tb->host_off; }
static inline const void *tb_entry_rx(const TB *tb) { return code_rx_of(tb_entry_rw(tb)); }

/* -- tb_cache.c -- */
extern XMutex tb_lock;
extern TB *tbs;                         /* in host-address order */
extern size_t ntbs;
void tb_cache_init(void);
/* The hash table (1 << tb_hash_bits buckets in use), for tb_lookup. */
extern TB **tb_hash;
extern unsigned tb_hash_bits;
/*
 * Most lookups of a warm start miss (a block about to be installed or
 * interpreted for the first time), and the bucket they read is a cache
 * miss in a table of megabytes. tb_filter, a Bloom filter of the keys
 * with one hash and eight bits per bucket (the next three bits of the
 * key's hash: set by every insert, cleared with the table), answers most
 * of them from a table eight times smaller.
 */
extern uint64_t *tb_filter;
static inline uint64_t tb_hash_of(uint64_t pc, uint32_t flags)
{
    return (pc ^ (uint64_t)flags << 48) * 0x9e3779b97f4a7c15ULL;
}
/* A key hash's bucket (its top tb_hash_bits bits) and filter bit (three more). */
static inline size_t tb_bucket(uint64_t hash) { return (size_t)(hash >> (64 - tb_hash_bits)); }
static inline size_t tb_filter_bit(uint64_t hash) { return (size_t)(hash >> (61 - tb_hash_bits)); }
static inline size_t tb_hash_key(uint64_t pc, uint32_t flags) { return tb_bucket(tb_hash_of(pc, flags)); }
/* The TB of key, or NULL (tb_lock held). Inline: every dispatch looks. */
static inline TB *tb_lookup(const TBKey *key)
{
    uint64_t h = tb_hash_of(key->pc, key->flags);
    size_t f = tb_filter_bit(h);
    if (!(tb_filter[f / 64] >> (f % 64) & 1))
        return NULL;
    for (TB *tb = tb_hash[tb_bucket(h)]; tb; tb = tb->hash_next)
        if (tb->pc == key->pc && tb->phys == key->phys && tb->flags == key->flags &&
            tb->next_page == key->next_page)
            return tb;
    return NULL;
}
/* Translate the block at key (unless it exists): TR_OK with *out, or why not. */
enum { TR_OK, TR_FULL, TR_NOEXEC, TR_INTERP, TR_NONE };
int tb_translate(CPUState *cpu, const TBKey *key, TB **out);
/* The block at key from the persistent cache (pcache.c), if it has one
 * that fits: TR_OK with *out (as tb_translate's). One kept for other
 * programs only is installed once the dispatcher's first runs of it are
 * over: TR_INTERP while they are not (*counted: this run was counted, by
 * the caller or here). Else TR_NONE. */
int tb_from_pcache(const TBKey *key, TB **out, unsigned df, bool *counted);
void tb_invalidate(TB *tb);             /* tb_lock held */
/* A new TB for key, and the TB with its code in place published (tb_lock
 * held, room checked: tb_translate and the cache's installs). */
TB *tb_new(const TBKey *key);
void tb_publish(TB *tb, const TBKey *key);
/* Empty the table and page lists for a flush (tb_lock held). */
void tb_cache_reset(void);

/* -- chain.c (tb_lock held, but tb_link_hinted) -- */
void tb_link(TB *src, int n, TB *dst, unsigned df);
/* Unchain every jump into tb and tb's own jumps. */
void tb_unlink_all(TB *tb);
/* Slot n of src, while unchained, is to be chained to dst when taken. */
void tb_hint(TB *src, int n, TB *dst);
/* Where slot n of src jumps: chained, else hinted; NULL. */
TB *tb_chain_target(const TB *src, int n);
/* The hinted TB of link's exit (be_stub_exited), chained now, if it is
 * the TB of pc under flags; else NULL. Takes tb_lock. */
TB *tb_link_hinted(uintptr_t link, uint64_t pc, uint32_t flags, unsigned df);

/* -- jump_cache.c -- */
extern CPUState **vcpus;                /* registered vCPUs (tb_lock) */
extern size_t nvcpus;
extern __thread CPUState *this_cpu;     /* the vCPU this thread runs (or last ran) */
void jump_cache_init(void);
static inline size_t jc_entries(const CPUState *cpu) { return cpu->jc_offset_mask / sizeof(JCEntry) + 1; }
/* Entry (pc >> 1) mod entries, as translated code finds it (x86/backend.c:
 * emit_jc_probe): entries are 16 bytes, so its byte offset is (pc << 3) masked. */
static inline size_t jc_index(const CPUState *cpu, uint64_t pc)
{
    return ((pc << 3) & cpu->jc_offset_mask) / sizeof(JCEntry);
}
void jc_clear(JCEntry *jc, size_t n);
void jc_publish(CPUState *cpu, const TB *tb, unsigned df, bool record_lookup);
/* Drop tb from every vCPU's jump cache (tb_lock held). */
void jc_forget_tb(const TB *tb);
/* cpu->tb_flags is not what its jump cache was filled under: switch to
 * the cache of these flags (translated code's probe compares only the
 * pc). Takes tb_lock. */
void jc_flags_changed(CPUState *cpu);
/* Empty all of cpu's jump caches (tb_lock held). */
void jc_flush_vcpu(CPUState *cpu);
/*
 * Undo exec_kick, then look at the request: in this order, a request that
 * races the restore is either seen here or leaves the probe poisoned (its
 * flag is stored before its poison). Inline: every dispatch asks.
 */
static inline bool exit_requested(CPUState *cpu)
{
    if (cpu->jc_probe != cpu->jc)
        __atomic_store_n(&cpu->jc_probe, cpu->jc, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&cpu->exit_request, __ATOMIC_SEQ_CST) != 0;
}

/* -- cache_flush.c -- */
extern pthread_mutex_t flush_mutex;
extern int cache_active, flush_pending;
extern uint64_t flush_gen;
void cache_enter(void);
void cache_exit(void);
/* Flush everything unless someone else did since generation seen_gen
 * (outside the cache). */
void cache_flush(uint64_t seen_gen);

/* -- warm.c -- */
void warm_init(void);
void warm_child(void);
void warm_record(uint64_t pc);          /* tb_lock held */
void warm_record_edge(uint64_t src, int n, uint64_t dst);

/* -- dispatch.c -- */
void dispatch_init(void);
enum { DF_CHAIN = 1, DF_TRACE = 2, DF_XPAGE = 4, DF_TIME = 8 };
extern unsigned dflags_cached;
unsigned dflags_compute(void);
/* Dispatch flags: what the dispatcher needs from the options, computed once
 * (they cannot change while the process runs), or on every dispatch with
 * --tune no-cflags. */
static inline unsigned dflags(void)
{
    return tune.cflags ? dflags_cached : dflags_compute();
}
/* The key of the block at pc for cpu, or false if pc cannot be fetched. */
bool tb_key_of(const CPUState *cpu, uint64_t pc, TBKey *key);
/* With tb_lock held: is this a run of pc to interpret, one of a block's
 * first runs? (Counts it.) */
bool interp_run_of(uint64_t pc, unsigned df);

/* -- stats.c -- */
extern struct ExecStats {
    uint64_t translated, flushes, smc_faults, invalidated, chained, efault_retries, unchained;
    uint64_t warmed;                    /* of translated: by exec_before_fork */
    uint64_t warm_chained;              /* of chained: by exec_before_fork */
    uint64_t hint_chained;              /* of chained: as a start image hinted */
    uint64_t code_copies;               /* code buffers copied: written while shared after fork */
    uint64_t pcache_hits;               /* blocks installed from the persistent cache */
    uint64_t pcache_moved;              /* of those: at another guest address than made */
} stats;
/* Dispatcher counters: per thread (no shared cache line on the dispatch
 * path), added to the sum when the thread's vCPU ends or they are printed. */
typedef struct {
    uint64_t lookups, jc_hits, direct_exits, indirect_exits, poll_exits, first_runs;
    uint64_t first_insns;               /* instructions the first runs interpreted */
    /* DF_TIME (-d stats): where the dispatch loop's time went, in TSC ticks */
    uint64_t t_code, t_first, t_install, t_translate;
} DispatchStats;
extern __thread DispatchStats dstats;
void dstats_flush(void);
/* The time stamp counter: a few cycles to read, constant rate on every
 * host xlat runs on; stats.c converts it against the clock at exit. */
static inline uint64_t stats_ticks(void) { return __builtin_ia32_rdtsc(); }
/* The guest's first instruction runs now (-d stats: xlat's own start ends). */
void stats_guest_started(void);
/* Time a part of the dispatch loop when DF_TIME is on: t0 = time_start(df),
 * the part, then time_add(df, &dstats.t_..., t0). */
static inline uint64_t time_start(unsigned df) { return df & DF_TIME ? stats_ticks() : 0; }
static inline void time_add(unsigned df, uint64_t *acc, uint64_t t0)
{
    if (df & DF_TIME)
        *acc += stats_ticks() - t0;
}
/* A flush drops the TBs and their counts: keep them (with -d stats). */
void prof_keep_flushed(void);

#endif
