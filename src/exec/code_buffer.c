/*
 * The code buffer: shared memory mapped twice, read-write (where the JIT
 * writes) and read-execute (where code runs); no page is ever writable and
 * executable. It holds the runtime stubs (x86/backend.c) and then the TBs,
 * allocated forwards: each TB's hot code below HOT_END, its out-of-line
 * code (slow paths, exit stubs) above it, so that hot code is dense in the
 * instruction cache. When either area is full everything is flushed
 * (cache_flush.c) and allocation restarts.
 *
 * fork(): the buffer is mapped shared (its RW and RX views), so after fork
 * parent and child map the same code: copy on write, by hand. The processes
 * mapping one code buffer are counted in MAP_SHARED memory (code_owners:
 * fork adds the child, exit takes a process away), and a process writes to
 * its code buffer (a translation, a chain patch) only while it is the
 * buffer's one owner; otherwise it first copies the buffer into new shared
 * memory of its own, moved over the same two addresses (code_make_private),
 * so the TBs it keeps stay valid and neither process ever sees the other's
 * writes. A child that only runs code its parent translated and chained
 * (fork warm-up) copies nothing: copying 1 MB of code at every fork of bash
 * took a quarter of a fork-heavy script's time. A count can only be too
 * high (a process killed outright, a failed fork), which costs a copy,
 * never a shared write.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "x86/backend.h"

uint8_t *code_rw;
intptr_t code_rx_delta;
JitRuntime jit_rt;
size_t code_used, code_base;
size_t cold_used = HOT_END;
uint16_t (*pcmap)[2];
size_t pcmap_used;
int *code_owners;

/*
 * The tables every process maps (the TB pool, the pcmap, the TB hash and
 * filter, user mode's code-page bitmaps: 245 MiB, nearly all never
 * touched) are carved from one reservation: one mmap at a start instead
 * of one each, microseconds apiece in a VM. None is ever unmapped.
 */
#define ARENA_SIZE (256u << 20)
static uint8_t *arena;
static size_t arena_used;

static void *map_fresh(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("xlat: memory");
        exit(1);
    }
    return p;
}

/* Any thread (a system-mode hart makes its TLB on its own). */
void *map_noreserve(size_t size)
{
    size = (size + 4095) & ~(size_t)4095;
    uint8_t *a = __atomic_load_n(&arena, __ATOMIC_ACQUIRE);
    if (!a) {
        uint8_t *fresh = map_fresh(ARENA_SIZE);
        if (__atomic_compare_exchange_n(&arena, &a, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            a = fresh;
        else
            munmap(fresh, ARENA_SIZE);          /* another thread's won; a holds it */
    }
    size_t at = __atomic_fetch_add(&arena_used, size, __ATOMIC_RELAXED);
    if (size > ARENA_SIZE || at > ARENA_SIZE - size)
        return map_fresh(size);
    return a + at;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14; older kernels say EINVAL: no harm */
#endif

void prefault(void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, e = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
    madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

#define AHEAD_MIN (16u << 10)
#define AHEAD_MAX (1u << 20)

void frontier_advance(Frontier *f, size_t used)
{
    if (used + f->margin <= f->populated || f->populated >= f->size)
        return;
    size_t half = (f->populated > f->jumped ? f->populated - f->jumped : 0) / 2;
    size_t step = half < AHEAD_MIN ? AHEAD_MIN : half > AHEAD_MAX ? AHEAD_MAX : half;
    size_t from = f->populated > used ? f->populated : used & ~(size_t)4095;
    size_t to = from + step < f->size ? from + step : f->size;
    prefault(f->base + from, to - from);
    f->populated = to;
}

void frontier_cover(Frontier *f, size_t used)
{
    size_t to = used + f->margin < f->size ? used + f->margin : f->size;
    if (to <= f->populated)
        return;
    prefault(f->base + f->populated, to - f->populated);
    f->jumped += to - f->populated;
    f->populated = to;
}

/* The hot and cold parts and the pcmap, populated ahead (code_areas_advance). */
static Frontier hot_area, cold_area, pcmap_area;

void code_areas_advance(void)
{
    frontier_advance(&hot_area, code_used);
    frontier_advance(&cold_area, cold_used - HOT_END);
    frontier_advance(&pcmap_area, pcmap_used * sizeof pcmap[0]);
}

void code_areas_cover(size_t hot_end, size_t cold_end)
{
    frontier_cover(&hot_area, hot_end);
    frontier_cover(&cold_area, cold_end - HOT_END);
}

uint16_t *tb_pcmap_alloc(unsigned n, uint32_t *index)
{
    *index = (uint32_t)pcmap_used;
    pcmap_used += n;
    return pcmap[*index];
}

/*
 * New views of fresh code memory: shared anonymous memory, read-write, and
 * a second mapping of the same pages (mremap with an old size of 0 makes
 * one of a shared mapping), made read-execute before it is used. No file
 * backs them, so perf takes -perfmap's /tmp/perf-PID.map for their code,
 * as for any JIT's anonymous code (a memfd's views were a file to it, one
 * it could not read: no guest symbol in perf report).
 */
static bool code_views_new(uint8_t **rw, uint8_t **rx)
{
    void *w = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (w == MAP_FAILED)
        return false;
    void *x = mremap(w, 0, CODE_SIZE, MREMAP_MAYMOVE);
    if (x != MAP_FAILED && mprotect(x, CODE_SIZE, PROT_READ | PROT_EXEC) == 0) {
        *rw = w;
        *rx = x;
        return true;
    }
    if (x != MAP_FAILED)
        munmap(x, CODE_SIZE);
    munmap(w, CODE_SIZE);
    return false;
}

/* The count of processes mapping a code buffer (code_owners) is kept in
 * the buffer's first bytes, before the runtime stubs: a fork shares it with
 * the code, a copy starts its own (one shared page fewer to make at every
 * start). */
#define OWNERS_BYTES 64

/* What a short process writes: /usr/bin/true about 30 KiB of hot code and
 * 24 KiB of cold (exit stubs of 13 bytes), in line with python3's 58:42.
 * A page of the code buffer populated that is never written costs as much
 * as one faulted in (a shared memory page: 2.5-4 us in this VM). */
#define HOT_PREFAULT (48u << 10)
#define COLD_PREFAULT (32u << 10)

void code_buffer_init(void)
{
    uint8_t *rx;
    if (!code_views_new(&code_rw, &rx)) {
        perror("xlat: code buffer");
        exit(1);
    }
    code_rx_delta = rx - code_rw;
    code_owners = (int *)code_rw;
    *code_owners = 1;
    pcmap = map_noreserve(PCMAP_PAIRS * sizeof pcmap[0]);
    Emit e = { .start = code_rw + OWNERS_BYTES, .p = code_rw + OWNERS_BYTES,
               .end = code_rw + CODE_SIZE };
    be_gen_runtime(&e, &jit_rt, guest_mem.base);
    code_base = code_used = (size_t)(e.p - code_rw + 63) & ~(size_t)63;
    /* A block's code has no fixed bound short of TRANSLATE_MAX_HOST: a page
     * ahead covers nearly all; a rare larger one faults its last pages in. */
    hot_area = (Frontier){ .base = code_rw, .size = HOT_END, .margin = 4096 };
    cold_area = (Frontier){ .base = code_rw + HOT_END, .size = CODE_SIZE - HOT_END, .margin = 4096 };
    pcmap_area = (Frontier){ .base = (uint8_t *)pcmap, .size = PCMAP_PAIRS * sizeof pcmap[0],
                             .margin = TB_MAX_INSNS * sizeof pcmap[0] };
    /* The first pages every process writes code to, in one call rather
     * than a fault each (a fault costs microseconds in a VM). */
    prefault(code_rw, HOT_PREFAULT);
    prefault(code_rw + HOT_END, COLD_PREFAULT);
    hot_area.populated = HOT_PREFAULT;
    cold_area.populated = COLD_PREFAULT;
}

/* Copy [from, to) of the code buffer into the views at rw (populated first:
 * a page at a time, the copy would fault each in). */
static void copy_code(uint8_t *rw, size_t from, size_t to)
{
    prefault(rw + from, to - from);
    memcpy(rw + from, code_rw + from, to - from);
}

static __attribute__((noreturn)) void copy_failed(void)
{
    fprintf(stderr, "xlat: cannot copy the code buffer after fork\n");
    _exit(127);
}

void code_make_private(void)
{
    if (!code_owners || __atomic_load_n(code_owners, __ATOMIC_ACQUIRE) == 1)
        return;
    uint8_t *rw, *rx;
    uint8_t *old_rx = code_rw + code_rx_delta;
    if (!code_views_new(&rw, &rx))
        copy_failed();
    copy_code(rw, 0, code_used);
    copy_code(rw, HOT_END, cold_used);
    *(int *)rw = 1;
    /* The old count's page stays mapped past the move, to leave the old
     * buffer only once this process no longer runs its code. */
    int *shared = mremap(code_rw, 0, 4096, MREMAP_MAYMOVE);
    /* Each view moved over the old one in one step: another thread running
     * code meanwhile runs the old copy or the new, both the same. */
    if (shared == MAP_FAILED ||
        mremap(rw, CODE_SIZE, CODE_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, code_rw) == MAP_FAILED ||
        mremap(rx, CODE_SIZE, CODE_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, old_rx) == MAP_FAILED)
        copy_failed();
    /* The new pages go up to the ends copied, none ahead of them. */
    hot_area.populated = code_used & ~(size_t)4095;
    cold_area.populated = (cold_used - HOT_END) & ~(size_t)4095;
    stats.code_copies++;
    __atomic_fetch_sub(shared, 1, __ATOMIC_RELEASE);   /* after the last use of its memory */
    munmap(shared, 4096);
}

void exec_process_exit(void)
{
    pcache_flush();                     /* what this process translated, for the next */
    /* tb_lock is held from here on: no thread of this process writes code
     * any more. Another thread may still run translated code until the
     * kernel ends it, so a process with more than one keeps its count (and
     * one whose lock is busy): a copy later, never a shared write. */
    if (!code_owners || xmutex_trylock(&tb_lock) != 0)
        return;
    if (nvcpus > 1) {
        xmutex_unlock(&tb_lock);
        return;
    }
    __atomic_fetch_sub(code_owners, 1, __ATOMIC_RELEASE);
    code_owners = NULL;
}

bool exec_host_pc_in_cache(uint64_t pc)
{
    uint64_t rx = (uint64_t)(uintptr_t)code_rx_of(code_rw);
    return code_rw && pc >= rx + code_base && pc < rx + CODE_SIZE;
}
