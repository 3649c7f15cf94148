/*
 * -d stats: the JIT's counters, the dispatcher's (per thread, summed when
 * a vCPU ends or they are printed) and the block profile.
 *
 * Block profile: each TB counts its own entries (tb->execs, be_tb_start),
 * chained ones included. Instructions are execs * ninsns and exits are
 * classed by how the block ends, so a block left early (a fault, a
 * helper's exit) still counts whole: counts are per block entry. A flush
 * drops the TBs, so it first adds theirs to prof_flushed. A forked child
 * starts from its parent's counts, like the other counters.
 */
#include <stdio.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/internal.h"

struct ExecStats stats;
__thread DispatchStats dstats;
static DispatchStats dstats_sum;

/* The clock and the TSC when xlat started (before main): at exit, the two
 * elapsed times give the TSC's rate. */
static uint64_t start_ticks, start_ns;
/* The TSC when the guest's first instruction ran (exec_run first entered):
 * what came before is xlat's own start (0: not yet). */
static uint64_t guest_ticks;

static __attribute__((constructor)) void stats_clock_start(void)
{
    start_ticks = stats_ticks();
    start_ns = monotonic_ns();
}

void stats_guest_started(void)
{
    if (!__atomic_load_n(&guest_ticks, __ATOMIC_RELAXED))
        __atomic_store_n(&guest_ticks, stats_ticks(), __ATOMIC_RELAXED);
}

/*
 * Where the time since xlat started went: its own start (up to the guest's
 * first instruction: options, its memory, the program's loading), then
 * the dispatch loop's parts (DF_TIME), summed over the threads, and what
 * remains: xlat's own work in dispatch, system calls and the kernel (page
 * faults). A forked child counts from its parent's start, as its other
 * counters do.
 */
static void print_times(FILE *f, const DispatchStats *d)
{
    uint64_t now = stats_ticks(), ns = monotonic_ns() - start_ns, ticks = now - start_ticks;
    uint64_t guest = __atomic_load_n(&guest_ticks, __ATOMIC_RELAXED);
    double ms_per_tick = ticks ? (double)ns / 1e6 / (double)ticks : 0.0;
    double start = (double)((guest ? guest : now) - start_ticks) * ms_per_tick;
    double code = (double)d->t_code * ms_per_tick, first = (double)d->t_first * ms_per_tick;
    double inst = (double)d->t_install * ms_per_tick, tr = (double)d->t_translate * ms_per_tick;
    double total = (double)ns / 1e6, rest = total - start - code - first - inst - tr;
    fprintf(f, "xlat stats: time                  %.3f ms since xlat started: its start %.3f, "
               "translated code %.3f, first runs %.3f, installs %.3f, translating %.3f, "
               "the rest %.3f (xlat's own work, system calls or devices, the host kernel)\n",
            total, start, code, first, inst, tr, rest > 0 ? rest : 0.0);
}

void dstats_flush(void)
{
    uint64_t *src = (uint64_t *)&dstats, *dst = (uint64_t *)&dstats_sum;
    for (size_t i = 0; i < sizeof dstats / sizeof *src; i++)
        __atomic_fetch_add(&dst[i], src[i], __ATOMIC_RELAXED);
    memset(&dstats, 0, sizeof dstats);
}

typedef struct {
    uint64_t execs, insns, exits[TB_EXIT_KINDS];
    uint64_t accesses[TLB_NIDX];        /* softmmu: inline TLB probes, by TLB */
} BlockProfile;
static BlockProfile prof_flushed;

static void prof_add_tbs(BlockProfile *p)
{
    size_t n = __atomic_load_n(&ntbs, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = __atomic_load_n(&tbs[i].execs, __ATOMIC_RELAXED);
        p->execs += x;
        p->insns += x * tbs[i].ninsns;
        p->exits[tbs[i].exit_kind] += x;
        p->accesses[tbs[i].tlb_idx % TLB_NIDX] += x * tbs[i].naccess;
    }
}

void exec_stats_accesses(uint64_t out[TLB_NIDX])
{
    BlockProfile p = prof_flushed;
    prof_add_tbs(&p);
    memcpy(out, p.accesses, sizeof p.accesses);
}

void prof_keep_flushed(void) { prof_add_tbs(&prof_flushed); }

/* -d stats, at exit: live threads other than the caller are not summed. */
void exec_print_stats(void)
{
    dstats_flush();
    DispatchStats d = dstats_sum;
    FILE *f = log_file;
    fprintf(f, "xlat stats: blocks translated     %llu\n", (unsigned long long)stats.translated);
    fprintf(f, "xlat stats: blocks warmed (fork)  %llu\n", (unsigned long long)stats.warmed);
    fprintf(f, "xlat stats: blocks from the cache %llu (%llu moved)\n",
            (unsigned long long)stats.pcache_hits, (unsigned long long)stats.pcache_moved);
    fprintf(f, "xlat stats: chains warmed (fork)  %llu\n", (unsigned long long)stats.warm_chained);
    fprintf(f, "xlat stats: chains hinted (cache) %llu\n", (unsigned long long)stats.hint_chained);
    fprintf(f, "xlat stats: first runs interpreted %llu (%llu instructions)\n",
            (unsigned long long)d.first_runs, (unsigned long long)d.first_insns);
    fprintf(f, "xlat stats: blocks invalidated    %llu\n", (unsigned long long)stats.invalidated);
    fprintf(f, "xlat stats: code cache flushes    %llu\n", (unsigned long long)stats.flushes);
    fprintf(f, "xlat stats: code bytes            %zu in line, %zu out of line\n",
            code_used - code_base, cold_used - HOT_END);
    fprintf(f, "xlat stats: code buffer copies    %llu (written while shared after fork)\n",
            (unsigned long long)stats.code_copies);
    fprintf(f, "xlat stats: chains made           %llu\n", (unsigned long long)stats.chained);
    fprintf(f, "xlat stats: chains unmade         %llu\n", (unsigned long long)stats.unchained);
    fprintf(f, "xlat stats: dispatcher lookups    %llu\n", (unsigned long long)d.lookups);
    fprintf(f, "xlat stats: jump cache hit rate   %.1f%% (%llu hits, dispatcher)\n",
            d.lookups ? 100.0 * (double)d.jc_hits / (double)d.lookups : 0.0,
            (unsigned long long)d.jc_hits);
    fprintf(f, "xlat stats: direct exits          %llu\n", (unsigned long long)d.direct_exits);
    fprintf(f, "xlat stats: indirect exits        %llu\n", (unsigned long long)d.indirect_exits);
    fprintf(f, "xlat stats: poll exits            %llu\n", (unsigned long long)d.poll_exits);
    fprintf(f, "xlat stats: smc faults            %llu\n", (unsigned long long)stats.smc_faults);
    fprintf(f, "xlat stats: efault retries        %llu\n", (unsigned long long)stats.efault_retries);
    print_times(f, &d);

    BlockProfile p = prof_flushed;
    if (code_rw)
        prof_add_tbs(&p);
    double n = p.execs ? (double)p.execs : 1.0;
    fprintf(f, "xlat stats: blocks executed       %llu\n", (unsigned long long)p.execs);
    fprintf(f, "xlat stats: insns executed (JIT)  %llu\n", (unsigned long long)p.insns);
    fprintf(f, "xlat stats: insns per block       %.2f\n", (double)p.insns / n);
    fprintf(f, "xlat stats: block exits indirect  %.1f%% (%llu)   direct %.1f%%   other %.1f%%\n",
            100.0 * (double)p.exits[TB_EXIT_INDIRECT] / n,
            (unsigned long long)p.exits[TB_EXIT_INDIRECT],
            100.0 * (double)p.exits[TB_EXIT_DIRECT] / n, 100.0 * (double)p.exits[TB_EXIT_OTHER] / n);
}
