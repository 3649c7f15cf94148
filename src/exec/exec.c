/*
 * The execution core: code buffer, TB cache, jump caches, chaining,
 * invalidation, cache flush and the dispatcher (exec_run).
 *
 * Code buffer: one memfd mapped twice, read-write (where the JIT writes) and
 * read-execute (where code runs); no page is ever writable and executable.
 * It holds the runtime stubs (x86/backend.c) and then the TBs, allocated
 * forwards: each TB's hot code below HOT_END, its out-of-line code (slow
 * paths, exit stubs) above it, so that hot code is dense in the instruction
 * cache. When either area is full everything is flushed and allocation
 * restarts.
 *
 * Lookup: cpu->pc -> this thread's jump cache (direct mapped by pc, also
 * probed by translated code for indirect jumps) -> the global hash table
 * -> translate, or interpret the block's first runs (--tune first-interp).
 * Direct exits are chained (their jmp patched to the next TB) the first
 * time they are taken, unless -d nochain or -d exec; across guest pages too
 * (--tune xpage): invalidation unlinks every jump into a dropped TB,
 * whatever page it comes from.
 *
 * Exit requests (a signal, another thread, a flush) set cpu->exit_request
 * or jit_kick. Translated code polls them only on exits that can close a
 * cycle (x86/backend.c); exec_kick also points the thread's probe table
 * (cpu->jc_probe) at jc_poison, so the next indirect exit misses into
 * run_loop, which restores the table and then looks at the request.
 * The --tune switches (user/options.h) turn each mechanism off for
 * measurement (bench/ablation).
 *
 * Locking: tb_lock protects the hash table, the page lists, chaining and
 * every jump cache write (owners fill their cache under it too; translated
 * code only reads). The translator first takes the guest mapping table
 * read lock (mm_read_lock), then tb_lock: the same order as mm.c's hook
 * (mm write lock, then exec_invalidate_range takes tb_lock).
 *
 * Flush (buffer full, fence.i): code can be overwritten only when no thread
 * runs it. Threads count themselves in cache_active from entering exec_run
 * until they leave it (or wait for a flush). The flusher raises
 * flush_pending, kicks every thread (cpu->jit_kick and exec_kick) and
 * waits, holding no lock, until cache_active is zero.
 *
 * Fork warm-up (--tune fork-warm): forked children report the blocks they
 * translate; the parent translates them before its next fork (see below).
 *
 * Invalidation drops a TB from the hash table, its pages' lists and every
 * jump cache, and unlinks the jumps into it (atomic 4-byte stores of the
 * rel32 back to the exit stub). Its code stays until the next flush, so a
 * thread still inside it finishes safely.
 *
 * Self-modifying code: the host page of every guest-writable page that holds
 * translated code is made read-only (the guest's protection in mm.c is
 * untouched). A store there faults; exec_smc_fault() (from the SIGSEGV
 * handler, any thread, any host code: JIT, interpreter, copy_to_guest)
 * invalidates the page's TBs, makes it writable and retries the store. Host
 * system calls writing into such a page fail with EFAULT instead of
 * faulting: syscall_dispatch() then calls exec_unprotect_all() and retries.
 */
#define _GNU_SOURCE
#include "exec/exec.h"
#include "exec/perfmap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "exec/tb.h"
#include "riscv/insn.h"
#include "riscv/interp.h"
#include "riscv/translate.h"
#include "user/cpu_loop.h"
#include "user/fault.h"
#include "user/mm.h"
#include "x86/disas.h"
#include "exec/settings.h"
#include "x86/backend.h"

_Static_assert(offsetof(CPUState, jit_kick) == offsetof(CPUState, exit_request) + 4 &&
               offsetof(CPUState, exit_request) % 8 == 0,
               "translated code polls exit_request and jit_kick with one 8-byte load");

#define CODE_SIZE   (256u << 20)
#define HOT_END     (160u << 20)        /* hot code below, cold (out-of-line) code above */
#define MAX_TBS     (1u << 19)
#define PCMAP_PAIRS (1u << 24)
#define HASH_BITS_MIN 12           /* the TB hash table starts this small... */
#define HASH_BITS_MAX 16           /* ...and grows to this */
#define JC_BITS_START 12           /* a jump cache starts this small (see jc_fit) */
#define PAGE_HASH_BITS 12
#define GUEST_PAGES (GUEST_SPACE_SIZE / GUEST_PAGE_SIZE)

/* -- State -------------------------------------------------------------------- */

uint8_t *code_rw;
intptr_t code_rx_delta;
JitRuntime jit_rt;
static size_t code_used, code_base;     /* next free byte; first TB byte */
static size_t cold_used = HOT_END;      /* next free byte of the cold area */

static TB *tbs;                         /* in host-address order */
static size_t ntbs;
static uint16_t (*pcmap)[2];
static size_t pcmap_used;
/* 1 << hash_bits buckets in use of a table mapped for HASH_BITS_MAX: zero
 * pages, so a short-lived process touches only the few it uses. */
static TB **tb_hash;
static unsigned hash_bits = HASH_BITS_MIN;

typedef struct PageDesc {
    uint64_t page;
    uintptr_t first;                    /* TB|index list of TBs on this page */
    struct PageDesc *next;
} PageDesc;
static PageDesc *page_hash[1u << PAGE_HASH_BITS];

/* Per guest page: wp = host page made read-only by us; gw = guest-writable
 * page we manage (a fault there is ours even if another thread already
 * unprotected it). Read lock-free by the fault handler. */
static uint64_t *wp_bits, *gw_bits;

static pthread_mutex_t tb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t flush_mutex = PTHREAD_MUTEX_INITIALIZER;
static int cache_active;
static int flush_pending;
static uint64_t flush_gen;

static CPUState **threads;              /* registered threads (tb_lock) */
static size_t nthreads, threads_cap;
static __thread CPUState *this_cpu;
enum { DF_CHAIN = 1, DF_TRACE = 2, DF_XPAGE = 4 };
static unsigned dflags_cached;          /* dispatch flags (see dflags()) */
static unsigned dflags_compute(void);

static struct {
    uint64_t translated, flushes, smc_faults, invalidated, chained, efault_retries, unchained;
    uint64_t warmed;                    /* of translated: by exec_before_fork */
    uint64_t warm_chained;              /* of chained: by exec_before_fork */
    uint64_t code_copies;               /* code buffers copied: written while shared after fork */
} stats;

/* Dispatcher counters for -d stats: per thread (no shared cache line on
 * the dispatch path), added to dstats_sum when the thread ends or prints. */
typedef struct {
    uint64_t lookups, jc_hits, direct_exits, indirect_exits, poll_exits, first_runs;
} DispatchStats;
static __thread DispatchStats dstats;
static DispatchStats dstats_sum;

static void dstats_flush(void)
{
    uint64_t *src = (uint64_t *)&dstats, *dst = (uint64_t *)&dstats_sum;
    for (size_t i = 0; i < sizeof dstats / sizeof *src; i++)
        __atomic_fetch_add(&dst[i], src[i], __ATOMIC_RELAXED);
    memset(&dstats, 0, sizeof dstats);
}

/*
 * Block profile for -d stats: each TB counts its own entries (tb->execs,
 * be_tb_start), chained ones included. Instructions are execs * ninsns and
 * exits are classed by how the block ends, so a block left early (a fault,
 * a helper's exit) still counts whole: counts are per block entry. A flush
 * drops the TBs, so it first adds theirs to prof_flushed. A forked child
 * starts from its parent's counts, like the other counters.
 */
typedef struct { uint64_t execs, insns, exits[TB_EXIT_KINDS]; } BlockProfile;
static BlockProfile prof_flushed;

static void prof_add_tbs(BlockProfile *p)
{
    size_t n = __atomic_load_n(&ntbs, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = __atomic_load_n(&tbs[i].execs, __ATOMIC_RELAXED);
        p->execs += x;
        p->insns += x * tbs[i].ninsns;
        p->exits[tbs[i].exit_kind] += x;
    }
}

static void *map_noreserve(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("xlat: jit memory");
        exit(1);
    }
    return p;
}

static inline bool bit_test(const uint64_t *b, uint64_t i)
{
    return (__atomic_load_n(&b[i / 64], __ATOMIC_ACQUIRE) >> (i % 64)) & 1;
}
static inline void bit_set(uint64_t *b, uint64_t i)   { __atomic_fetch_or(&b[i / 64], 1ULL << (i % 64), __ATOMIC_RELEASE); }
static inline void bit_clear(uint64_t *b, uint64_t i) { __atomic_fetch_and(&b[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE); }

static inline uint8_t *tb_entry_rw(const TB *tb) { return code_rw + tb->host_off; }
static inline const void *tb_entry_rx(const TB *tb) { return code_rx_of(tb_entry_rw(tb)); }
/* Entry (pc >> 1) mod entries, as translated code finds it (x86/backend.c:
 * emit_jc_probe): entries are 16 bytes, so its byte offset is (pc << 3) masked. */
_Static_assert(sizeof(JCEntry) == 16, "a jump-cache entry's offset is its index << 4");
static inline size_t jc_entries(const CPUState *cpu) { return cpu->jc_offset_mask / sizeof(JCEntry) + 1; }
static inline void jc_set_entries(CPUState *cpu, size_t n) { cpu->jc_offset_mask = (n - 1) * sizeof(JCEntry); }
static inline size_t jc_index(const CPUState *cpu, uint64_t pc)
{
    return ((pc << 3) & cpu->jc_offset_mask) / sizeof(JCEntry);
}

/* -- Fork warm-up ----------------------------------------------------------------- */

/*
 * A forked child runs code its parent never ran (a shell's subshell, exit,
 * redirection and pipeline paths), so every child would translate the
 * same few hundred blocks again: half the time of a fork-heavy shell
 * script. The processes forked from one program (an execve starts a new
 * xlat, and a new ring) share a ring of guest pcs in MAP_SHARED memory: a
 * forked process appends the pc of each of its first WARM_RECORD
 * translations, interpreted runs (--tune first-interp) and jump-cache
 * fills, and exec_before_fork() translates whatever was appended since it
 * last looked and puts it in its jump cache, so the children it forks from
 * then on inherit those blocks, and find them (a child's first returns
 * miss the return-address stack, which starts empty). A pc
 * is only a hint: the forking process translates its own memory at that
 * address, exactly as if its guest had jumped there, so a stale, foreign or
 * torn entry costs one translation, never correctness. Each fork
 * translates at most WARM_SLOTS blocks.
 *
 * A child also appends the direct exits it chains (block pc, slot, target
 * pc), and the forking process chains the same exit of its own block at
 * that pc if that exit's stub leaves for that target (be_stub_leaves_for):
 * otherwise every child would stop at the same hundred unchained exits and
 * patch them again. A torn or foreign edge fails that check.
 */
#define WARM_SLOTS  4096
#define WARM_RECORD 1024

typedef struct { uint64_t src_slot, dst; } WarmEdge;   /* src_slot: pc << 3 | slot */
typedef struct {
    uint64_t head, edge_head;
    uint64_t pc[WARM_SLOTS];
    WarmEdge edge[WARM_SLOTS];
} WarmRing;
static WarmRing *warm;          /* shared with every fork of this program */
static uint64_t warm_seen;      /* ring position this process translated up to */
static uint64_t warm_edge_seen; /* edge ring position this process chained up to */
static unsigned warm_budget;    /* pcs this process may still append */
static unsigned warm_edge_budget;

static void warm_init(void)
{
    void *p = mmap(NULL, sizeof *warm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    warm = p == MAP_FAILED ? NULL : p;
}

static void warm_child(void) { warm_budget = warm_edge_budget = WARM_RECORD; }

/* Called with tb_lock held after pc was translated. */
static void warm_record(uint64_t pc)
{
    if (!warm || !warm_budget)
        return;
    warm_budget--;
    uint64_t i = __atomic_fetch_add(&warm->head, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&warm->pc[i % WARM_SLOTS], pc, __ATOMIC_RELAXED);
}

/* Called with tb_lock held after slot n of the block at src was chained to dst. */
static void warm_record_edge(uint64_t src, int n, uint64_t dst)
{
    if (!warm || !warm_edge_budget)
        return;
    warm_edge_budget--;
    uint64_t i = __atomic_fetch_add(&warm->edge_head, 1, __ATOMIC_RELAXED);
    WarmEdge *w = &warm->edge[i % WARM_SLOTS];
    __atomic_store_n(&w->src_slot, src << 3 | (uint64_t)n, __ATOMIC_RELAXED);
    __atomic_store_n(&w->dst, dst, __ATOMIC_RELAXED);
}

static int translate(uint64_t pc, TB **out);
enum { TR_OK, TR_FULL, TR_NOEXEC, TR_INTERP };
static void tb_link(TB *src, int n, TB *dst, unsigned df);
static TB *hash_lookup(uint64_t pc);
static inline unsigned dflags(void);
static void jc_publish(CPUState *cpu, const TB *tb, unsigned df, bool record_lookup);

/* The chains children made, made here (translate() has run for both ends). */
static void warm_chain(void)
{
    uint64_t head = __atomic_load_n(&warm->edge_head, __ATOMIC_RELAXED);
    if (head - warm_edge_seen > WARM_SLOTS)
        warm_edge_seen = head - WARM_SLOTS;
    unsigned df = dflags();
    if (!(df & DF_CHAIN)) {
        warm_edge_seen = head;
        return;
    }
    pthread_mutex_lock(&tb_lock);
    for (; warm_edge_seen != head; warm_edge_seen++) {
        const WarmEdge *w = &warm->edge[warm_edge_seen % WARM_SLOTS];
        uint64_t src_slot = __atomic_load_n(&w->src_slot, __ATOMIC_RELAXED);
        uint64_t dst_pc = __atomic_load_n(&w->dst, __ATOMIC_RELAXED);
        int n = (int)(src_slot & 7);
        TB *src = hash_lookup(src_slot >> 3), *dst = hash_lookup(dst_pc);
        if (src && dst && n < TB_MAX_SLOTS && src->jmp_field[n] && !src->jmp_dest[n] &&
            be_stub_leaves_for(tb_entry_rw(src) + src->jmp_stub[n], dst_pc)) {
            tb_link(src, n, dst, df);
            stats.warm_chained += src->jmp_dest[n] == dst;
        }
    }
    pthread_mutex_unlock(&tb_lock);
    warm_edge_seen = head;
}

void exec_before_fork(void)
{
    if (!warm)
        return;
    uint64_t head = __atomic_load_n(&warm->head, __ATOMIC_RELAXED);
    if (head - warm_seen > WARM_SLOTS)
        warm_seen = head - WARM_SLOTS;
    uint64_t before = stats.translated;
    for (; warm_seen != head; warm_seen++) {
        TB *tb;
        int r = translate(__atomic_load_n(&warm->pc[warm_seen % WARM_SLOTS], __ATOMIC_RELAXED),
                          &tb);
        if (r == TR_FULL)
            break;              /* no room: leave the flush to the dispatcher */
        if (r == TR_OK && this_cpu)
            jc_publish(this_cpu, tb, dflags(), false);
    }
    warm_seen = head;
    stats.warmed += stats.translated - before;
    warm_chain();
}

/* -- Threads -------------------------------------------------------------------- */

/*
 * An empty jump cache is all zeros but entry 0, whose tag is 1: tag 0
 * could only match guest pc 0, which indexes entry 0. So a new table is
 * fresh zero pages that fault in as they are filled (a thread start or an
 * execve does not write 1 MiB up front), and clearing is a memset.
 */
static void jc_clear(JCEntry *jc, size_t n)
{
    memset(jc, 0, n * sizeof *jc);
    jc[0].pc = 1;
}

static size_t jc_bytes(void) { return ((size_t)1 << tune.jc_bits) * sizeof(JCEntry); }

static JCEntry *jc_alloc(void)
{
    JCEntry *jc = mmap(NULL, jc_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    if (jc == MAP_FAILED) {
        perror("xlat: jump cache");
        exit(1);
    }
    jc[0].pc = 1;
    return jc;
}

/*
 * The table exec_kick points a thread's probe at: as large as a jump cache,
 * every tag empty, never written after init (shared by all threads).
 */
static JCEntry *jc_poison;

void exec_kick(CPUState *cpu)
{
    if (cpu->jc && tune.poison)
        __atomic_store_n(&cpu->jc_probe, jc_poison, __ATOMIC_SEQ_CST);
}

/*
 * Undo exec_kick, then look at the request: in this order, a request that
 * races the restore is either seen here or leaves the probe poisoned
 * (its flag is stored before its poison).
 */
static bool exit_requested(CPUState *cpu)
{
    if (cpu->jc_probe != cpu->jc)
        __atomic_store_n(&cpu->jc_probe, cpu->jc, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&cpu->exit_request, __ATOMIC_SEQ_CST) != 0;
}

/*
 * A jump cache is mapped at its full size (--tune jc-bits) but starts with
 * 2^JC_BITS_START entries in use, and grows fourfold (emptied: entries
 * must sit at their pc's index for invalidation to find them) while more
 * TBs exist than half its entries: a process that runs a few thousand
 * blocks, like most of those a shell script starts, then faults in 16
 * pages of it, not 256. Translated code reads the mask from CPUState.
 * With tb_lock held, on the owner's thread.
 */
static void jc_fit(CPUState *cpu)
{
    size_t full = (size_t)1 << tune.jc_bits;
    size_t n = jc_entries(cpu);
    if (n == full || ntbs <= n / 2)
        return;
    jc_clear(cpu->jc, n);
    jc_set_entries(cpu, n * 4 < full ? n * 4 : full);
}

/* With tb_lock held, on cpu's thread: tb's jump cache entry. */
static void jc_fill(CPUState *cpu, const TB *tb)
{
    jc_fit(cpu);
    JCEntry *j = &cpu->jc[jc_index(cpu, tb->pc)];
    j->host = tb_entry_rx(tb);
    __atomic_store_n(&j->pc, tb->pc, __ATOMIC_RELEASE);
}

/*
 * tb (just looked up or translated) into cpu's jump cache, unless another
 * thread invalidated it meanwhile or -d exec traces every dispatch; a
 * lookup also goes to the fork warm-up (warm_record). Takes tb_lock.
 */
static void jc_publish(CPUState *cpu, const TB *tb, unsigned df, bool record_lookup)
{
    if (df & DF_TRACE)
        return;
    pthread_mutex_lock(&tb_lock);
    if (tb->valid) {
        jc_fill(cpu, tb);
        if (record_lookup)
            warm_record(tb->pc);
    }
    pthread_mutex_unlock(&tb_lock);
}

static void thread_setup(CPUState *cpu)
{
    cpu->jc = jc_alloc();
    jc_set_entries(cpu, (size_t)1 << (tune.jc_bits < JC_BITS_START ? tune.jc_bits : JC_BITS_START));
    cpu->jc_probe = cpu->jc;
    cpu->guest_limit = GUEST_SPACE_SIZE;
    cpu->jit_kick = 0;
    pthread_mutex_lock(&tb_lock);
    if (nthreads == threads_cap) {
        threads_cap = threads_cap ? 2 * threads_cap : 16;
        threads = realloc(threads, threads_cap * sizeof *threads);
    }
    threads[nthreads++] = cpu;
    pthread_mutex_unlock(&tb_lock);
    this_cpu = cpu;
}

void exec_thread_exit(CPUState *cpu)
{
    if (this_cpu != cpu)
        return;
    dstats_flush();
    pthread_mutex_lock(&tb_lock);
    for (size_t i = 0; i < nthreads; i++)
        if (threads[i] == cpu)
            threads[i] = threads[--nthreads];
    pthread_mutex_unlock(&tb_lock);
    munmap(cpu->jc, jc_bytes());
    cpu->jc = NULL;
    cpu->jc_probe = NULL;
    this_cpu = NULL;
}

static int code_buffer_create(void);
static void code_buffer_map(int fd);

/*
 * fork(): only the calling thread lives on in the child, outside the cache.
 * The code buffer is a memfd mapped shared (its RW and RX views), so after
 * fork parent and child map the same code: copy on write, by hand. The
 * processes mapping one code buffer are counted in MAP_SHARED memory
 * (code_owners: fork adds the child, exit takes a process away), and a
 * process writes to its code buffer (a translation, a chain patch) only
 * while it is the buffer's one owner; otherwise it first copies the buffer
 * into a new memfd of its own, mapped over the same two addresses
 * (code_make_private), so the TBs it keeps stay valid and neither process
 * ever sees the other's writes. A child that only runs code its parent
 * translated and chained (fork warm-up) copies nothing: copying 1 MB of
 * code at every fork of bash took a quarter of a fork-heavy script's time.
 * A count can only be too high (a process killed outright, a failed fork),
 * which costs a copy, never a shared write.
 */
static int *code_owners;

static int *owners_alloc(void)
{
    int *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("xlat: code buffer");
        exit(1);
    }
    *p = 1;
    return p;
}

/* Copy [from, to) of the code buffer into fd at the same offset. */
static bool copy_code(int fd, size_t from, size_t to)
{
    while (from < to) {
        ssize_t n = pwrite(fd, code_rw + from, to - from, (off_t)from);
        if (n <= 0)
            return false;
        from += (size_t)n;
    }
    return true;
}

/* With tb_lock held, before any write to the code buffer: own it alone. */
static void code_make_private(void)
{
    if (!code_owners || __atomic_load_n(code_owners, __ATOMIC_ACQUIRE) == 1)
        return;
    int fd = code_buffer_create();
    if (fd < 0 || !(copy_code(fd, 0, code_used) && copy_code(fd, HOT_END, cold_used))) {
        fprintf(stderr, "xlat: cannot copy the code buffer after fork\n");
        _exit(127);
    }
    code_buffer_map(fd);
    stats.code_copies++;
    int *shared = code_owners;
    code_owners = owners_alloc();
    __atomic_fetch_sub(shared, 1, __ATOMIC_RELEASE);   /* after the last use of its memory */
    munmap(shared, sizeof *shared);
}

void exec_process_exit(void)
{
    /* tb_lock is held from here on: no thread of this process writes code
     * any more. Another thread may still run translated code until the
     * kernel ends it, so a process with more than one keeps its count (and
     * one whose lock is busy): a copy later, never a shared write. */
    if (!code_owners || pthread_mutex_trylock(&tb_lock) != 0)
        return;
    if (nthreads > 1) {
        pthread_mutex_unlock(&tb_lock);
        return;
    }
    __atomic_fetch_sub(code_owners, 1, __ATOMIC_RELEASE);
    code_owners = NULL;
}

/*
 * The locks in the order everything else takes them: flush_mutex (a
 * flusher waits for threads that may need the mapping lock to translate),
 * then mm's lock, then tb_lock (a translator holds mm's read lock when it
 * takes tb_lock). Taking tb_lock before mm's lock deadlocked a fork from one
 * thread against a translation in another.
 */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&flush_mutex);
    mm_fork_prepare();
    pthread_mutex_lock(&tb_lock);
    if (code_owners)
        __atomic_fetch_add(code_owners, 1, __ATOMIC_ACQ_REL);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&tb_lock);
    mm_fork_parent();
    pthread_mutex_unlock(&flush_mutex);
}

static void atfork_child(void)
{
    mm_fork_child();
    warm_child();
    nthreads = 0;
    if (this_cpu)
        threads[nthreads++] = this_cpu;
    cache_active = 0;
    flush_pending = 0;
    pthread_mutex_init(&tb_lock, NULL);
    pthread_mutex_init(&flush_mutex, NULL);
}

/* -- Init ---------------------------------------------------------------------------- */

/* A memfd of the code buffer's size, or -1. */
static int code_buffer_create(void)
{
    int fd = memfd_create("xlat-code", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, CODE_SIZE) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Map memfd fd as the code buffer (and close it): anywhere the first time,
 * over the old views after a fork. */
static void code_buffer_map(int fd)
{
    if (fd < 0) {
        perror("xlat: code buffer");
        exit(1);
    }
    void *want_rw = code_rw, *want_rx = code_rw ? (void *)code_rx_of(code_rw) : NULL;
    int fixed = code_rw ? MAP_FIXED : 0;
    void *rw = mmap(want_rw, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | fixed, fd, 0);
    void *rx = mmap(want_rx, CODE_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED | fixed, fd, 0);
    if (rw == MAP_FAILED || rx == MAP_FAILED) {
        perror("xlat: code buffer");
        exit(1);
    }
    close(fd);
    code_rw = rw;
    code_rx_delta = (uint8_t *)rx - (uint8_t *)rw;
}

void exec_init(void)
{
    code_buffer_map(code_buffer_create());
    code_owners = owners_alloc();
    interp_small_cache();

    Emit e = { .start = code_rw, .p = code_rw, .end = code_rw + CODE_SIZE };
    be_gen_runtime(&e, &jit_rt, guest_base);
    code_base = code_used = (size_t)(e.p - code_rw + 63) & ~(size_t)63;

    tbs = map_noreserve(MAX_TBS * sizeof(TB));
    tb_hash = map_noreserve(sizeof *tb_hash << HASH_BITS_MAX);
    pcmap = map_noreserve(PCMAP_PAIRS * sizeof pcmap[0]);
    wp_bits = map_noreserve(GUEST_PAGES / 8);
    gw_bits = map_noreserve(GUEST_PAGES / 8);
    jc_poison = jc_alloc();
    if (tune.fork_warm)
        warm_init();
    dflags_cached = dflags_compute();
    translate_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* -- Hash table and page lists (tb_lock held) ------------------------------------------- */

static inline size_t hash_pc(uint64_t pc) { return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> (64 - hash_bits)); }
static inline size_t hash_page(uint64_t p) { return (size_t)((p * 0x9e3779b97f4a7c15ULL) >> (64 - PAGE_HASH_BITS)); }

static TB *hash_lookup(uint64_t pc)
{
    for (TB *tb = tb_hash[hash_pc(pc)]; tb; tb = tb->hash_next)
        if (tb->pc == pc)
            return tb;
    return NULL;
}

static void hash_insert(TB *tb)
{
    size_t h = hash_pc(tb->pc);
    tb->hash_next = tb_hash[h];
    tb_hash[h] = tb;
}

/* Before inserting TB number ntbs: keep chains about two long. */
static void hash_fit(void)
{
    if (ntbs < (2u << hash_bits) || hash_bits == HASH_BITS_MAX)
        return;
    memset(tb_hash, 0, sizeof *tb_hash << hash_bits);
    hash_bits = hash_bits + 2 < HASH_BITS_MAX ? hash_bits + 2 : HASH_BITS_MAX;
    for (size_t i = 0; i < ntbs; i++)
        if (tbs[i].valid)
            hash_insert(&tbs[i]);
}

static void hash_remove(TB *tb)
{
    for (TB **pp = &tb_hash[hash_pc(tb->pc)]; *pp; pp = &(*pp)->hash_next)
        if (*pp == tb) {
            *pp = tb->hash_next;
            return;
        }
}

static PageDesc *page_find(uint64_t page, bool alloc)
{
    PageDesc **head = &page_hash[hash_page(page)];
    for (PageDesc *pd = *head; pd; pd = pd->next)
        if (pd->page == page)
            return pd;
    if (!alloc)
        return NULL;
    PageDesc *pd = calloc(1, sizeof *pd);
    pd->page = page;
    pd->next = *head;
    *head = pd;
    return pd;
}

static void page_remove_tb(uint64_t page, TB *tb)
{
    PageDesc *pd = page_find(page, false);
    if (!pd)
        return;
    for (uintptr_t *pp = &pd->first; *pp;) {
        TB *t = (TB *)(*pp & ~(uintptr_t)3);
        int i = (int)(*pp & 3);
        if (t == tb) {
            *pp = t->page_next[i];
            return;
        }
        pp = &t->page_next[i];
    }
}

/* -- Chaining (tb_lock held) ---------------------------------------------------------- */

static void patch_jump(TB *src, int n, const uint8_t *target_rw)
{
    code_make_private();
    emit_store_rel32(tb_entry_rw(src) + src->jmp_field[n], target_rw);
}

/* The page of src's exit (its last page) is dst's only page. */
static bool same_page(const TB *src, const TB *dst)
{
    uint64_t last = src->page[1] != TB_NO_PAGE ? src->page[1] : src->page[0];
    return dst->page[1] == TB_NO_PAGE && dst->page[0] == last;
}

static void tb_link(TB *src, int n, TB *dst, unsigned df)
{
    if (!src->valid || !dst->valid || src->jmp_dest[n] || !src->jmp_field[n])
        return;
    if (!(df & DF_XPAGE) && !same_page(src, dst))
        return;
    src->jmp_dest[n] = dst;
    src->jmp_next[n] = dst->jmp_in;
    dst->jmp_in = (uintptr_t)src | (uintptr_t)n;
    patch_jump(src, n, tb_entry_rw(dst));
    stats.chained++;
    warm_record_edge(src->pc, n, dst->pc);
}

static void tb_invalidate(TB *tb)
{
    if (!tb->valid)
        return;
    tb->valid = false;
    stats.invalidated++;
    hash_remove(tb);
    for (int i = 0; i < 2; i++)
        if (tb->page[i] != TB_NO_PAGE)
            page_remove_tb(tb->page[i], tb);
    const void *host = tb_entry_rx(tb);
    for (size_t i = 0; i < nthreads; i++) {
        JCEntry *j = &threads[i]->jc[jc_index(threads[i], tb->pc)];
        if (j->host == host)
            __atomic_store_n(&j->pc, 1, __ATOMIC_RELEASE);
    }
    /* Jumps into tb go back to their exit stubs. */
    for (uintptr_t in = tb->jmp_in; in;) {
        TB *src = (TB *)(in & ~(uintptr_t)TB_SLOT_MASK);
        int n = (int)(in & TB_SLOT_MASK);
        in = src->jmp_next[n];
        patch_jump(src, n, tb_entry_rw(src) + src->jmp_stub[n]);
        src->jmp_dest[n] = NULL;
        src->jmp_next[n] = 0;
        stats.unchained++;
    }
    tb->jmp_in = 0;
    /* And tb leaves the incoming lists of its destinations. */
    for (int n = 0; n < TB_MAX_SLOTS; n++) {
        TB *dst = tb->jmp_dest[n];
        if (!dst)
            continue;
        uintptr_t me = (uintptr_t)tb | (uintptr_t)n;
        for (uintptr_t *pp = &dst->jmp_in; *pp;) {
            TB *t = (TB *)(*pp & ~(uintptr_t)TB_SLOT_MASK);
            if (*pp == me) {
                *pp = tb->jmp_next[n];
                break;
            }
            pp = &t->jmp_next[*pp & TB_SLOT_MASK];
        }
        tb->jmp_dest[n] = NULL;
    }
}

static void page_invalidate(PageDesc *pd)
{
    while (pd->first)
        tb_invalidate((TB *)(pd->first & ~(uintptr_t)3));
}

/* -- Invalidation entry points --------------------------------------------------------- */

/* One page of invalidate_range. */
static void page_drop(PageDesc *pd, bool mapping_changed)
{
    page_invalidate(pd);
    if (mapping_changed) {
        bit_clear(wp_bits, pd->page);
        bit_clear(gw_bits, pd->page);
    }
}

/*
 * Both entry points: drop the TBs of [start, start+len), taking tb_lock.
 * With mapping_changed (exec_invalidate_range: mm changed the range and set
 * its host protection itself), forget the write protection too; otherwise
 * (exec_invalidate_code: the pages are unchanged, only their contents may
 * be) keep it: a page left host read-only with its bits cleared would turn
 * the guest's next store into a spurious SIGSEGV.
 */
static void invalidate_range(uint64_t start, uint64_t len, bool mapping_changed)
{
    uint64_t first = start / GUEST_PAGE_SIZE;
    uint64_t last = (start + len - 1) / GUEST_PAGE_SIZE;
    if (!code_rw || len == 0)
        return;
    pthread_mutex_lock(&tb_lock);
    if (last - first < ((uint64_t)1 << PAGE_HASH_BITS)) {
        /* A small range (every mmap and mprotect of a program's start):
         * look its pages up rather than walk the whole table. */
        for (uint64_t p = first; p <= last; p++) {
            PageDesc *pd = page_find(p, false);
            if (pd)
                page_drop(pd, mapping_changed);
        }
    } else {
        for (size_t b = 0; b < ((size_t)1 << PAGE_HASH_BITS); b++)
            for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
                if (pd->page >= first && pd->page <= last)
                    page_drop(pd, mapping_changed);
    }
    pthread_mutex_unlock(&tb_lock);
}

void exec_invalidate_range(uint64_t start, uint64_t len) { invalidate_range(start, len, true); }

void exec_invalidate_code(uint64_t start, uint64_t len) { invalidate_range(start, len, false); }

/* Make one write-protected page writable again, dropping its TBs. */
static void unprotect_page_locked(uint64_t page)
{
    PageDesc *pd = page_find(page, false);
    if (pd)
        page_invalidate(pd);
    mprotect(g2h(page * GUEST_PAGE_SIZE), GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE);
    bit_clear(wp_bits, page);
}

bool exec_smc_fault(void *addr)
{
    if (!code_rw || !host_in_window(addr))
        return false;
    uint64_t page = h2g(addr) / GUEST_PAGE_SIZE;
    if (!bit_test(gw_bits, page))
        return false;
    pthread_mutex_lock(&tb_lock);
    if (bit_test(wp_bits, page)) {
        unprotect_page_locked(page);
        stats.smc_faults++;
    }
    pthread_mutex_unlock(&tb_lock);
    return true;                /* retry: the page is writable now */
}

bool exec_page_write_protected(uint64_t page)
{
    return code_rw && page < GUEST_PAGES && bit_test(wp_bits, page);
}

bool exec_unprotect_all(void)
{
    bool any = false;
    if (!code_rw)
        return false;
    pthread_mutex_lock(&tb_lock);
    for (size_t b = 0; b < ((size_t)1 << PAGE_HASH_BITS); b++)
        for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
            if (bit_test(wp_bits, pd->page)) {
                unprotect_page_locked(pd->page);
                any = true;
            }
    if (any)
        stats.efault_retries++;
    pthread_mutex_unlock(&tb_lock);
    return any;
}

/* -- Flush ------------------------------------------------------------------------------- */

static void cache_enter(void)
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

static void cache_exit(void) { __atomic_fetch_sub(&cache_active, 1, __ATOMIC_SEQ_CST); }

/* Flush everything unless someone else did since generation seen_gen.
 * Called outside the cache (not counted in cache_active). */
static void flush(uint64_t seen_gen)
{
    pthread_mutex_lock(&flush_mutex);
    if (__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE) != seen_gen) {
        pthread_mutex_unlock(&flush_mutex);
        return;
    }
    __atomic_store_n(&flush_pending, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&tb_lock);
    for (size_t i = 0; i < nthreads; i++) {
        threads[i]->jit_kick = 1;
        exec_kick(threads[i]);
    }
    pthread_mutex_unlock(&tb_lock);
    while (__atomic_load_n(&cache_active, __ATOMIC_SEQ_CST) > 0)
        sched_yield();

    pthread_mutex_lock(&tb_lock);
    memset(tb_hash, 0, sizeof *tb_hash << hash_bits);
    for (size_t b = 0; b < ((size_t)1 << PAGE_HASH_BITS); b++)
        for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
            pd->first = 0;
    for (size_t i = 0; i < nthreads; i++)
        jc_clear(threads[i]->jc, jc_entries(threads[i]));
    if (log_mask & LOG_STATS)
        prof_add_tbs(&prof_flushed);
    __atomic_store_n(&ntbs, 0, __ATOMIC_RELEASE);
    code_used = code_base;
    cold_used = HOT_END;
    pcmap_used = 0;
    stats.flushes++;
    __atomic_fetch_add(&flush_gen, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&tb_lock);
    xlat_log(LOG_EXEC, "xlat: code cache flush %llu\n", (unsigned long long)stats.flushes);

    __atomic_store_n(&flush_pending, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&flush_mutex);
}

void exec_flush_all(void)
{
    if (code_rw)
        flush(__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE));
}

/* -- Translation ---------------------------------------------------------------------------- */

uint16_t *tb_pcmap_alloc(unsigned n, uint32_t *index)
{
    *index = (uint32_t)pcmap_used;
    pcmap_used += n;
    return pcmap[*index];
}

static void log_tb(const TB *tb)
{
    if (log_mask & LOG_IN_ASM) {
        fprintf(log_file, "IN: \n");
        for (unsigned i = 0; i < tb->ninsns; i++)
            log_insn(tb->pc + pcmap[tb->pcmap + i][1]);
        fprintf(log_file, "\n");
    }
    if (log_mask & LOG_OUT_ASM) {
        const uint8_t *p = tb_entry_rw(tb);
        fprintf(log_file, "OUT: [guest 0x%llx, %u bytes at %p]\n",
                (unsigned long long)tb->pc, tb->host_size, tb_entry_rx(tb));
        host_disas(log_file, p, tb->host_size, (uint64_t)(uintptr_t)tb_entry_rx(tb));
        fprintf(log_file, "  -- out of line --\n");
        host_disas(log_file, code_rw + tb->cold_off, tb->cold_size,
                   (uint64_t)(uintptr_t)code_rx_of(code_rw + tb->cold_off));
        fprintf(log_file, "\n");
    }
}

/* Write-protect the host page of guest page `page` if the guest may write it. */
static void protect_page_locked(uint64_t page)
{
    if (bit_test(wp_bits, page))
        return;
    int prot = guest_prot_at(page * GUEST_PAGE_SIZE);
    if (prot < 0 || !(prot & PROT_WRITE))
        return;
    /* Bits first: another thread's store may fault as soon as the page is
     * read-only, and exec_smc_fault reads gw_bits without tb_lock. */
    bit_set(gw_bits, page);
    bit_set(wp_bits, page);
    if (mprotect(g2h(page * GUEST_PAGE_SIZE), GUEST_PAGE_SIZE, PROT_READ) != 0) {
        bit_clear(wp_bits, page);
        bit_clear(gw_bits, page);
    }
}

/* Is the first instruction at pc fully fetchable from executable pages? */
static bool first_insn_ok(uint64_t pc)
{
    if (pc & 1 || !guest_access_ok(pc, 2, PROT_EXEC))
        return false;
    if (insn_length(*(const uint16_t *)g2h(pc)) == 4 && !guest_access_ok(pc + 2, 2, PROT_EXEC))
        return false;
    return true;
}

static int translate(uint64_t pc, TB **out)
{
    mm_read_lock();
    pthread_mutex_lock(&tb_lock);
    int r = TR_OK;
    TB *tb = hash_lookup(pc);
    if (tb)
        goto done;
    if (!first_insn_ok(pc)) {
        r = TR_NOEXEC;
        goto done;
    }
    if (ntbs == MAX_TBS || pcmap_used + TB_MAX_INSNS > PCMAP_PAIRS ||
        code_used + TRANSLATE_MAX_HOST + 64 > HOT_END ||
        cold_used + TRANSLATE_MAX_HOST + 64 > CODE_SIZE) {
        r = TR_FULL;
        goto done;
    }
    code_make_private();
    tb = &tbs[ntbs];
    memset(tb, 0, sizeof *tb);
    tb->pc = pc;
    size_t off = code_used;             /* blocks back to back, no padding */
    tb->host_off = (uint32_t)off;
    Emit e = { .start = code_rw + off, .p = code_rw + off, .end = code_rw + HOT_END };
    Emit cold = { .start = code_rw + cold_used, .p = code_rw + cold_used,
                  .end = code_rw + CODE_SIZE };
    uint16_t map[TB_MAX_INSNS][2];
    /* Write-protect before reading the code, not after: a store by another
     * thread in between would otherwise leave this TB stale. (It now faults
     * and waits for tb_lock, then drops this TB.) The first instruction may
     * end on the next page. */
    protect_page_locked(pc / GUEST_PAGE_SIZE);
    if (pc % GUEST_PAGE_SIZE == GUEST_PAGE_SIZE - 2)
        protect_page_locked(pc / GUEST_PAGE_SIZE + 1);
    translate_block(tb, &e, &cold, map);
    tb->host_size = (uint32_t)(e.p - e.start);
    tb->cold_off = (uint32_t)cold_used;
    tb->cold_size = (uint32_t)(cold.p - cold.start);
    uint16_t *dst = tb_pcmap_alloc(tb->ninsns, &tb->pcmap);
    memcpy(dst, map, tb->ninsns * sizeof map[0]);
    code_used = off + tb->host_size;
    cold_used = (cold_used + tb->cold_size + 15) & ~(size_t)15;

    tb->page[0] = pc / GUEST_PAGE_SIZE;
    tb->page[1] = (pc + tb->guest_size - 1) / GUEST_PAGE_SIZE;
    if (tb->page[1] == tb->page[0])
        tb->page[1] = TB_NO_PAGE;
    for (int i = 0; i < 2; i++) {
        if (tb->page[i] == TB_NO_PAGE)
            continue;
        PageDesc *pd = page_find(tb->page[i], true);
        tb->page_next[i] = pd->first;
        pd->first = (uintptr_t)tb | (uintptr_t)i;
        protect_page_locked(tb->page[i]);
    }
    tb->valid = true;
    hash_fit();
    hash_insert(tb);
    __atomic_store_n(&ntbs, ntbs + 1, __ATOMIC_RELEASE);
    stats.translated++;
    warm_record(pc);
    if (perfmap_enabled) {
        perfmap_add(pc, tb_entry_rx(tb), tb->host_size);
        perfmap_add(pc, code_rx_of(code_rw + tb->cold_off), tb->cold_size);
    }
    if (log_mask & (LOG_IN_ASM | LOG_OUT_ASM))
        log_tb(tb);
done:
    pthread_mutex_unlock(&tb_lock);
    mm_read_unlock();
    *out = tb;
    return r;
}

/* -- Dispatch -------------------------------------------------------------------------------- */

/*
 * Dispatch flags: what the dispatcher needs from the options, computed once
 * (they cannot change while the process runs), or on every dispatch with
 * --tune no-cflags.
 */
static unsigned dflags_compute(void)
{
    unsigned f = 0;
    if (!(log_mask & (LOG_NOCHAIN | LOG_EXEC)))
        f |= DF_CHAIN;
    if (log_mask & LOG_EXEC)
        f |= DF_TRACE;
    if (tune.xpage)
        f |= DF_XPAGE;
    return f;
}

static inline unsigned dflags(void)
{
    return tune.cflags ? dflags_cached : dflags_compute();
}

/*
 * First runs in the interpreter (--tune first-interp): most blocks a process
 * start runs, run once or a few times (the dynamic loader's relocation and
 * libc's start: 60% of /usr/bin/true's 1,700 blocks run once, 80% at most
 * four times), and translating a block costs about as much as interpreting
 * it a few dozen times. So a block's first INTERP_RUNS runs are interpreted
 * and it is translated when it runs again (/usr/bin/true: 1 run -26%, then
 * 3 runs another -11%; more gained nothing).
 *
 * The runs are counted in a direct-mapped table by pc. A pc whose slot
 * another pc holds is translated at once, and a pc gives its slot back when
 * it is translated: a collision never makes a block run interpreted more
 * often (resetting the count instead made cc1, with its tens of thousands
 * of blocks, 55% slower). Not while -d logs translations or traces blocks
 * (every block run must show there).
 */
#define SEEN_BITS 13
#define INTERP_RUNS 3
static uint64_t seen_pc[1u << SEEN_BITS];      /* 0: free */
static uint8_t seen_runs[1u << SEEN_BITS];

/* With tb_lock held: is this a run of pc to interpret? (Counts it.) */
static bool interp_run_of(uint64_t pc, unsigned df)
{
    if (!tune.first_interp || pc == 0 || (df & DF_TRACE) ||
        (log_mask & (LOG_IN_ASM | LOG_OUT_ASM)))
        return false;
    size_t i = (pc >> 1) & ((1u << SEEN_BITS) - 1);
    if (seen_pc[i] == 0) {
        seen_pc[i] = pc;
        seen_runs[i] = 0;
    }
    if (seen_pc[i] != pc)
        return false;
    if (seen_runs[i] < INTERP_RUNS) {
        seen_runs[i]++;
        warm_record(pc);    /* every run: the parent may have run it before the fork */
        return true;
    }
    seen_pc[i] = 0;
    return false;
}

/* fence.i, translated or interpreted: drop every translation (from run_loop,
 * inside the cache). */
static void flush_for_fence_i(void)
{
    cache_exit();
    flush(__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE));
    cache_enter();
}

/*
 * Interpret the straight-line code at cpu->pc: until an instruction moves
 * the pc elsewhere or needs the loop (a system call, a fault), at most
 * TB_MAX_INSNS instructions. A fence.i in there flushes the translations,
 * as a translated one would.
 */
static enum exit_reason interp_block(CPUState *cpu)
{
    _Static_assert(INTERP_STRAIGHT_MAX == TB_MAX_INSNS, "a block's interpreted runs end where it would");
    uint32_t fences = cpu->fence_i_count;
    dstats.first_runs++;
    enum exit_reason er = interp_straight(cpu);
    if (cpu->fence_i_count != fences)
        flush_for_fence_i();
    return er;
}

/*
 * The TB for pc: from the hash table (if the jump cache has pc too, there
 * is nothing else to do), or a new translation.
 */
static int find_tb(CPUState *cpu, uint64_t pc, TB **out, unsigned df)
{
    bool in_jc = cpu->jc[jc_index(cpu, pc)].pc == pc;
    dstats.lookups++;
    pthread_mutex_lock(&tb_lock);
    TB *tb = hash_lookup(pc);
    if (tb && in_jc) {
        pthread_mutex_unlock(&tb_lock);
        dstats.jc_hits++;
        *out = tb;
        return TR_OK;
    }
    bool first = !tb && interp_run_of(pc, df);
    pthread_mutex_unlock(&tb_lock);
    if (first)
        return TR_INTERP;
    bool translated = !tb;
    if (!tb) {
        int r = translate(pc, &tb);
        if (r != TR_OK)
            return r;
    }
    jc_publish(cpu, tb, df, !translated);   /* a child's lookup: its parent fills its cache too */
    *out = tb;
    return TR_OK;
}

uint64_t jit_helper_interp(CPUState *cpu, uint64_t pc);
uint64_t jit_helper_interp(CPUState *cpu, uint64_t pc)
{
    cpu->pc = pc;
    return interp_step(cpu);
}

/* Not inlined into exec_run: its locals would then live across sigsetjmp. */
static __attribute__((noinline)) enum exit_reason run_loop(CPUState *cpu)
{
    uintptr_t link = 0;
    for (;;) {
        unsigned df = dflags();
        if (exit_requested(cpu))
            return EXIT_REQUEST;
        if (__atomic_load_n(&flush_pending, __ATOMIC_SEQ_CST)) {
            cache_exit();
            cache_enter();
            link = 0;
        }
        uint64_t gen = __atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE);
        TB *tb = NULL;
        int r = find_tb(cpu, cpu->pc, &tb, df);
        if (r == TR_FULL) {
            cache_exit();
            flush(gen);
            cache_enter();
            link = 0;
            continue;
        }
        if (r == TR_INTERP) {
            enum exit_reason er = interp_block(cpu);
            if (er != EXIT_NONE)
                return er;
            link = 0;
            continue;
        }
        if (r == TR_NOEXEC) {
            /* Let the interpreter raise the exact fetch fault. */
            enum exit_reason er = interp_step(cpu);
            if (er != EXIT_NONE)
                return er;
            continue;
        }
        if (link && (df & DF_CHAIN)) {
            pthread_mutex_lock(&tb_lock);
            tb_link((TB *)(link & ~(uintptr_t)TB_SLOT_MASK), (int)(link & TB_SLOT_MASK), tb, df);
            pthread_mutex_unlock(&tb_lock);
        }
        if (df & DF_TRACE)
            fprintf(log_file, "Trace: [%p] %016llx\n", tb_entry_rx(tb),
                    (unsigned long long)tb->pc);
        int code = jit_rt.enter(cpu, tb_entry_rx(tb));
        link = 0;
        switch (code) {
        case EXIT_CHAIN:
            dstats.direct_exits++;
            link = cpu->jit_link;
            break;
        case EXIT_LOOKUP:
            dstats.indirect_exits++;
            break;
        case EXIT_POLL:
            dstats.poll_exits++;
            if (cpu->exit_request)
                return EXIT_REQUEST;
            cpu->jit_kick = 0;
            break;
        case EXIT_FENCEI:
            flush_for_fence_i();
            break;
        default:
            return (enum exit_reason)code;
        }
    }
}

enum exit_reason exec_run(CPUState *cpu)
{
    if (this_cpu != cpu)
        thread_setup(cpu);
    sigjmp_buf jb;
    sigjmp_buf *const outer = guest_fault.jmp;
    cache_enter();
    if (sigsetjmp(jb, 0)) {
        /* A guest access in translated code faulted: exec_fault_restore
         * already put the registers and pc in *cpu. */
        guest_fault.jmp = outer;
        cache_exit();
        guest_fault_record(cpu);
        return EXIT_FAULT;
    }
    guest_fault.jmp = &jb;
    enum exit_reason r = run_loop(cpu);
    guest_fault.jmp = outer;
    cache_exit();
    return r;
}

/* -- Faults in translated code ------------------------------------------------------------- */

bool exec_host_pc_in_cache(uint64_t pc)
{
    uint64_t rx = (uint64_t)(uintptr_t)code_rx_of(code_rw);
    return code_rw && pc >= rx + code_base && pc < rx + CODE_SIZE;
}

/* ucontext register index of each host register. */
static const int greg_index[16] = {
    [RAX] = REG_RAX, [RCX] = REG_RCX, [RDX] = REG_RDX, [RBX] = REG_RBX,
    [RSP] = REG_RSP, [RBP] = REG_RBP, [RSI] = REG_RSI, [RDI] = REG_RDI,
    [R8] = REG_R8, [R9] = REG_R9, [R10] = REG_R10, [R11] = REG_R11,
    [R12] = REG_R12, [R13] = REG_R13, [R14] = REG_R14, [R15] = REG_R15,
};

void exec_fault_restore(void *ucontext)
{
    ucontext_t *uc = ucontext;
    greg_t *g = uc->uc_mcontext.gregs;
    CPUState *cpu = (CPUState *)(uintptr_t)(g[REG_R15] - CPU_BIAS);
    uint64_t off = (uint64_t)g[REG_RIP] - (uint64_t)(uintptr_t)code_rx_of(code_rw);

    /* The TB holding off: the last one starting at or below it. */
    size_t lo = 0, hi = __atomic_load_n(&ntbs, __ATOMIC_ACQUIRE);
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (tbs[mid].host_off <= off)
            lo = mid;
        else
            hi = mid;
    }
    const TB *tb = &tbs[lo];
    uint64_t rel = off - tb->host_off;
    unsigned i = 0;
    while (i + 1 < tb->ninsns && pcmap[tb->pcmap + i + 1][0] <= rel)
        i++;
    cpu->pc = tb->pc + pcmap[tb->pcmap + i][1];
    /* Guest accesses run with the block's own mapping in effect: a host
     * register it gave away holds another guest register, and the one it
     * displaced is in CPUState already (be_choose_remap). */
    for (int h = 0; h < 16; h++) {
        int gr = be_host_guest[h];
        for (int r = 0; r < tb->nremap; r++)
            if (tb->remap[r].host == h)
                gr = tb->remap[r].in;
        if (gr > 0)
            cpu->x[gr] = (uint64_t)g[greg_index[h]];
    }
}

/* -d stats, at exit: live threads other than the caller are not summed. */
void exec_print_stats(void)
{
    dstats_flush();
    DispatchStats d = dstats_sum;
    FILE *f = log_file;
    fprintf(f, "xlat stats: blocks translated     %llu\n", (unsigned long long)stats.translated);
    fprintf(f, "xlat stats: blocks warmed (fork)  %llu\n", (unsigned long long)stats.warmed);
    fprintf(f, "xlat stats: chains warmed (fork)  %llu\n", (unsigned long long)stats.warm_chained);
    fprintf(f, "xlat stats: first runs interpreted %llu\n", (unsigned long long)d.first_runs);
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
