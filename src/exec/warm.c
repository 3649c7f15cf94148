/*
 * Fork warm-up (--tune fork-warm): forked children report the blocks they
 * translate and the chains they make; the parent translates and chains them
 * before its next fork, so the children it forks from then on inherit them.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "x86/backend.h"

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
static bool warm_on;            /* --tune fork-warm */
static WarmRing *warm;          /* shared with every fork of this program */
static uint64_t warm_seen;      /* ring position this process translated up to */
static uint64_t warm_edge_seen; /* edge ring position this process chained up to */
static unsigned warm_budget;    /* pcs this process may still append */
static unsigned warm_edge_budget;

void warm_init(void) { warm_on = true; }

/* The ring, made at a program's first fork: only a forked process writes
 * to it, and most processes never fork (a shared mapping made at every
 * start cost a short one microseconds). */
static bool warm_ring(void)
{
    if (!warm) {
        void *p = mmap(NULL, sizeof *warm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        warm = p == MAP_FAILED ? NULL : p;
    }
    return warm != NULL;
}

void warm_child(void) { warm_budget = warm_edge_budget = WARM_RECORD; }

/* Called with tb_lock held after pc was translated. */
void warm_record(uint64_t pc)
{
    if (!warm || !warm_budget)
        return;
    warm_budget--;
    uint64_t i = __atomic_fetch_add(&warm->head, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&warm->pc[i % WARM_SLOTS], pc, __ATOMIC_RELAXED);
}

/* Called with tb_lock held after slot n of the block at src was chained to dst. */
void warm_record_edge(uint64_t src, int n, uint64_t dst)
{
    if (!warm || !warm_edge_budget)
        return;
    warm_edge_budget--;
    uint64_t i = __atomic_fetch_add(&warm->edge_head, 1, __ATOMIC_RELAXED);
    WarmEdge *w = &warm->edge[i % WARM_SLOTS];
    __atomic_store_n(&w->src_slot, src << 3 | (uint64_t)n, __ATOMIC_RELAXED);
    __atomic_store_n(&w->dst, dst, __ATOMIC_RELAXED);
}

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
    xmutex_lock(&tb_lock);
    for (; warm_edge_seen != head; warm_edge_seen++) {
        const WarmEdge *w = &warm->edge[warm_edge_seen % WARM_SLOTS];
        uint64_t src_slot = __atomic_load_n(&w->src_slot, __ATOMIC_RELAXED);
        uint64_t dst_pc = __atomic_load_n(&w->dst, __ATOMIC_RELAXED);
        int n = (int)(src_slot & 7);
        TBKey sk, dk;
        TB *src = tb_key_of(this_cpu, src_slot >> 3, &sk) ? tb_lookup(&sk) : NULL;
        TB *dst = tb_key_of(this_cpu, dst_pc, &dk) ? tb_lookup(&dk) : NULL;
        if (src && dst && n < TB_MAX_SLOTS && src->jmp_field[n] && !src->jmp_dest[n] &&
            be_stub_target(src, n) == dst_pc) {
            tb_link(src, n, dst, df);
            stats.warm_chained += src->jmp_dest[n] == tb_ref(dst);
        }
    }
    xmutex_unlock(&tb_lock);
    warm_edge_seen = head;
}

void exec_before_fork(void)
{
    if (!warm_on || !this_cpu || !warm_ring())
        return;
    uint64_t head = __atomic_load_n(&warm->head, __ATOMIC_RELAXED);
    if (head - warm_seen > WARM_SLOTS)
        warm_seen = head - WARM_SLOTS;
    uint64_t before = stats.translated;
    for (; warm_seen != head; warm_seen++) {
        TB *tb;
        TBKey key;
        uint64_t pc = __atomic_load_n(&warm->pc[warm_seen % WARM_SLOTS], __ATOMIC_RELAXED);
        if (!tb_key_of(this_cpu, pc, &key))
            continue;
        int r = tb_translate(this_cpu, &key, &tb);
        if (r == TR_FULL)
            break;              /* no room: leave the flush to the dispatcher */
        if (r == TR_OK)
            jc_publish(this_cpu, tb, dflags(), false);
    }
    warm_seen = head;
    stats.warmed += stats.translated - before;
    warm_chain();
}
