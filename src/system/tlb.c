/*
 * The harts' softmmu TLBs: see tlb.h.
 *
 * Each TLB's tables are mapped once at the largest size (2^22 entries,
 * without reserving memory) and used up to the current size, so a resize
 * only changes the mask translated code reads from CPUState: no
 * retranslation, no copy (a resize at a full flush finds every entry
 * empty; one that doubles a full table moves the entries whose new index
 * is in the upper half).
 *
 * The tables of a space (TlbSpace) are mapped when it is first used.
 * Another hart's code watch marks the entries of this hart's current space
 * and M view (it reads HartTlbs.cur); a space that was not current then
 * marks its own when it becomes current again: code_watch_gen counts the
 * watches, and a space remembers the count it has seen (the watcher bumps
 * the count before it reads cur, the hart stores cur before it reads the
 * count, so one of them marks the entry).
 *
 * A superpage translation is cached as the 4 KiB entries used, so a flush
 * of one address inside a superpage a space's TLBs hold drops them all
 * (TlbSpace.super: the spans such translations cover since its last full
 * flush, a few apart, so that a kernel's boot mapping of its physical
 * addresses does not make every user page's fence a full flush), and its
 * jump-cache entries with them.
 */
#define _GNU_SOURCE
#include "system/tlb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "exec/exec.h"
#include "exec/settings.h"
#include "riscv/mmu.h"
#include "riscv/pmp.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/sys_mem.h"

#define TLB_BITS_MIN     6
#define TLB_BITS_START   8
#define TLB_BITS_MAX     22
#define TLB_WINDOW_NS    100000000ULL   /* the sizing window: 100 ms */

/* -- Tags ----------------------------------------------------------------------------- */

static inline uint64_t *tag_of(TlbEntry *e, enum mem_access access)
{
    return access == MEM_FETCH ? &e->addr_code : access == MEM_LOAD ? &e->addr_read
                                                                     : &e->addr_write;
}

/* Does tag hold a translation of page (flags aside)? */
static inline bool tag_maps(uint64_t tag, uint64_t page)
{
    return !(tag & TLB_INVALID) && (tag & ~TLB_FLAGS) == page;
}

static inline bool entry_empty(const TlbEntry *e)
{
    return (e->addr_read & e->addr_write & e->addr_code & TLB_INVALID) != 0;
}

static unsigned tlb_index_of(const CPUState *cpu, enum mem_access access)
{
    return access == MEM_FETCH ? TB_FLAGS_FETCH_TLB(cpu->tb_flags)
                               : TB_FLAGS_DATA_TLB(cpu->tb_flags);
}

/* The TLB of index idx now: M's, or the current space's view. */
static SysTlb *view_of(HartTlbs *ts, unsigned idx)
{
    return idx == TLB_IDX_M ? &ts->m : &ts->cur->view[idx];
}

static unsigned space_index(const HartTlbs *ts, const TlbSpace *s)
{
    return (unsigned)(s - ts->space);
}

static uint64_t asid_of(uint64_t satp) { return (satp >> 44) & 0xffff; }

/* The jump caches' group of satp's space: global code is shared by the
 * spaces of one MODE; Bare has none (exec_space_changed). */
static unsigned group_of(uint64_t satp)
{
    unsigned mode = (unsigned)(satp >> 60);
    return mode == SATP_BARE ? EXEC_NO_GROUP : mode;
}

/* -- Watched code pages ----------------------------------------------------------------- */

/* One bit per 4 KiB page of RAM: it holds translated code. */
static uint64_t *code_bits;

static bool code_watched(uint64_t page)
{
    uint64_t i = page - (VIRT_RAM_BASE >> 12);
    if (page < (VIRT_RAM_BASE >> 12) || i >= machine.ram_size >> 12 || !code_bits)
        return false;
    return (__atomic_load_n(&code_bits[i / 64], __ATOMIC_ACQUIRE) >> (i % 64)) & 1;
}

/* Set (on) or clear page's bit; its old value. */
static bool code_mark(uint64_t page, bool on)
{
    uint64_t i = page - (VIRT_RAM_BASE >> 12);
    if (page < (VIRT_RAM_BASE >> 12) || i >= machine.ram_size >> 12)
        return false;
    uint64_t bit = 1ULL << (i % 64);
    uint64_t old = on ? __atomic_fetch_or(&code_bits[i / 64], bit, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_and(&code_bits[i / 64], ~bit, __ATOMIC_SEQ_CST);
    return (old & bit) != 0;
}

/* Watches made so far (see the top). */
static unsigned code_watch_gen;

/* Writable entries of page in t now send their stores to the slow path. A
 * fill racing this sees the bit (fill). */
static void view_watch(SysTlb *t, uint64_t page)
{
    if (!t->table)
        return;
    size_t entries = (size_t)1 << __atomic_load_n(&t->bits, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < entries; i++)
        if (t->pa_page[i] == page && !(t->table[i].addr_write & TLB_INVALID))
            __atomic_fetch_or(&t->table[i].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (t->victim_pa_page[v] == page && !(t->victim[v].addr_write & TLB_INVALID))
            __atomic_fetch_or(&t->victim[v].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
}

void tlb_code_watch(uint64_t page)
{
    if (code_mark(page, true))
        return;
    __atomic_fetch_add(&code_watch_gen, 1, __ATOMIC_SEQ_CST);
    for (unsigned n = 0; n < machine.nharts; n++) {
        HartTlbs *ts = &machine.harts[n]->tlbs;
        TlbSpace *cur = __atomic_load_n(&ts->cur, __ATOMIC_SEQ_CST);
        view_watch(&ts->m, page);
        for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++)
            view_watch(&cur->view[idx], page);
    }
}

/* Mark every writable entry of t whose page is watched (its space missed
 * watches while it was not current). */
static void view_watch_all(SysTlb *t)
{
    size_t entries = (size_t)1 << t->bits;
    for (size_t i = 0; i < entries; i++)
        if (!(t->table[i].addr_write & TLB_INVALID) && code_watched(t->pa_page[i]))
            __atomic_fetch_or(&t->table[i].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (!(t->victim[v].addr_write & TLB_INVALID) && code_watched(t->victim_pa_page[v]))
            __atomic_fetch_or(&t->victim[v].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
}

/* s has just become current (HartTlbs.cur stored): catch up on watches. */
static void space_sync_watches(TlbSpace *s)
{
    unsigned gen = __atomic_load_n(&code_watch_gen, __ATOMIC_SEQ_CST);
    if (s->watch_gen == gen)
        return;
    s->watch_gen = gen;
    for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++)
        view_watch_all(&s->view[idx]);
}

bool tlb_code_unwatch(uint64_t page, bool remapped)
{
    (void)remapped;             /* physical pages are never remapped */
    return code_mark(page, false);
}

void tlb_dma_written(uint64_t pa, uint64_t len)
{
    if (len == 0)
        return;
    for (uint64_t p = pa >> 12; p <= (pa + len - 1) >> 12; p++)
        if (code_watched(p))
            exec_code_written(p);
}

/* -- Sizing and flushes ------------------------------------------------------------------- */

/* cpu->tlb[], what translated code probes: the current tables and sizes. */
static void publish(CPUState *cpu)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
        const SysTlb *t = view_of(ts, idx);
        cpu->tlb[idx].mask = (((uint64_t)1 << t->bits) - 1) << TLB_ENTRY_BITS;
        cpu->tlb[idx].table = t->table;
    }
}

static unsigned ceil_log2(unsigned n)
{
    unsigned b = 0;
    while ((1u << b) < n)
        b++;
    return b;
}

/*
 * The seed's policy, at a full flush of t: double if the window's most
 * entries in use exceeded 70 % of the size; shrink to fit that most if it
 * stayed under 30 % and the window is over. A new window starts at a
 * resize and when one ends.
 */
static unsigned next_bits(SysTlb *t, uint64_t now)
{
    if (t->used > t->window_max)
        t->window_max = t->used;
    unsigned bits = t->bits, size = 1u << bits;
    bool expired = now - t->window_start > TLB_WINDOW_NS;
    if (t->window_max * 10ULL > size * 7ULL) {
        bits = bits < TLB_BITS_MAX ? bits + 1 : bits;
    } else if (expired && t->window_max * 10ULL < size * 3ULL) {
        bits = ceil_log2(t->window_max);
        if (t->window_max * 10ULL > (1ULL << bits) * 7ULL)
            bits++;                 /* just under a power of two: leave room */
        bits = bits < TLB_BITS_MIN ? TLB_BITS_MIN : bits;
    }
    if (bits != t->bits || expired) {
        t->window_start = now;
        t->window_max = 0;
    }
    return bits;
}

/* The clock the sizing reads, if it sizes at all. */
static uint64_t sizing_now(void)
{
    return tune.tlb_resize && !tune.tlb_bits ? monotonic_ns() : 0;
}

/* Map t's tables and empty them at the first size. */
static void view_init(SysTlb *t)
{
    unsigned bits = tune.tlb_bits ? tune.tlb_bits : TLB_BITS_START;
    t->table = map_noreserve(sizeof(TlbEntry) << TLB_BITS_MAX);
    t->pa_page = map_noreserve(sizeof(uint64_t) << TLB_BITS_MAX);
    t->attr = map_noreserve((size_t)1 << TLB_BITS_MAX);
    t->window_start = monotonic_ns();
    memset(t->table, 0xff, sizeof(TlbEntry) << bits);
    memset(t->victim, 0xff, sizeof t->victim);
    __atomic_store_n(&t->bits, bits, __ATOMIC_RELEASE);
}

/* Empty t, resized by the policy (publish() tells translated code). */
static void view_flush(SysTlb *t, uint64_t now)
{
    if (!t->table) {
        view_init(t);
        return;
    }
    unsigned bits = t->bits;
    if (tune.tlb_resize && !tune.tlb_bits)
        bits = next_bits(t, now);
    if (bits < t->bits) {
        /* Give back what the larger table touched. */
        size_t keep = sizeof(TlbEntry) << bits, had = sizeof(TlbEntry) << t->bits;
        madvise((uint8_t *)t->table + keep, had - keep, MADV_DONTNEED);
    }
    if (bits != t->bits)
        t->resizes++;
    memset(t->table, 0xff, sizeof(TlbEntry) << bits);
    memset(t->victim, 0xff, sizeof t->victim);
    __atomic_store_n(&t->bits, bits, __ATOMIC_RELEASE);
    t->used = 0;
    t->flushes++;
}

/* The page an entry maps (it is not empty). */
static uint64_t entry_page(const TlbEntry *e)
{
    uint64_t tag = !(e->addr_read & TLB_INVALID) ? e->addr_read
                 : !(e->addr_write & TLB_INVALID) ? e->addr_write : e->addr_code;
    return tag & ~TLB_FLAGS;
}

static bool entry_maps(const TlbEntry *e, uint64_t page)
{
    return tag_maps(e->addr_read, page) || tag_maps(e->addr_write, page) ||
           tag_maps(e->addr_code, page);
}

/* The span of ss that superpage [lo, hi] joins: one it meets or touches;
 * else a free one; else the one it grows least (a superpage may then be in
 * two spans, which is safe). */
static TlbSuperSpan *span_for(TlbSuperSpans *ss, uint64_t lo, uint64_t hi)
{
    TlbSuperSpan *best = NULL;
    uint64_t best_growth = UINT64_MAX;
    for (unsigned k = 0; k < ss->n; k++) {
        TlbSuperSpan *p = &ss->span[k];
        if (lo <= p->hi + 1 && p->lo <= hi + 1)
            return p;
        uint64_t growth = lo < p->lo ? p->lo - lo : hi - p->hi;
        if (growth < best_growth) {
            best_growth = growth;
            best = p;
        }
    }
    if (ss->n < TLB_SUPER_SPANS) {
        best = &ss->span[ss->n++];
        *best = (TlbSuperSpan){ lo, hi, 0 };
    }
    return best;
}

/* The level of a translation of page_mask + 1 bytes (0: 4 KiB). */
static unsigned super_level(uint64_t page_mask)
{
    unsigned level = 0;
    while (page_mask >> (12 + 9 * level))
        level++;
    return level;
}

/* The page mask of a translation at level (super_level's inverse). */
static uint64_t level_mask(unsigned level)
{
    return ((uint64_t)1 << (12 + 9 * level)) - 1;
}

static void spans_note(TlbSuperSpans *ss, uint64_t va, uint64_t page_mask)
{
    uint64_t lo = va & ~page_mask, hi = lo + page_mask;
    unsigned level = super_level(page_mask);
    TlbSuperSpan *p = span_for(ss, lo, hi);
    if (lo < p->lo)
        p->lo = lo;
    if (hi > p->hi)
        p->hi = hi;
    if (level > p->level)
        p->level = level;
}

/* The largest level of the spans of ss holding vaddr (spans may overlap),
 * or -1 if none does. */
static int spans_level(const TlbSuperSpans *ss, uint64_t vaddr)
{
    int level = -1;
    for (unsigned k = 0; k < ss->n; k++)
        if (vaddr - ss->span[k].lo <= ss->span[k].hi - ss->span[k].lo &&
            (int)ss->span[k].level > level)
            level = (int)ss->span[k].level;
    return level;
}

/* Drop t's translations of the page at vaddr (a 4 KiB one). */
static void view_flush_page(SysTlb *t, uint64_t vaddr)
{
    uint64_t page = vaddr & ~0xfffULL;
    TlbEntry *e = &t->table[(vaddr >> 12) & ((1u << t->bits) - 1)];
    if (entry_maps(e, page)) {
        memset(e, 0xff, sizeof *e);
        t->used -= t->used > 0;
    }
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (entry_maps(&t->victim[v], page))
            memset(&t->victim[v], 0xff, sizeof t->victim[v]);
}

/* Does the entry with attr map a page of a superpage holding vaddr? */
static bool in_same_superpage(const TlbEntry *e, uint8_t attr, uint64_t vaddr)
{
    unsigned level = attr >> 1;
    if (!level || entry_empty(e))
        return false;
    return ((entry_page(e) ^ vaddr) & ~level_mask(level)) == 0;
}

/* Drop t's translations of the page at vaddr and of every page of a
 * superpage (of at most level) holding it: the entries cached from it, at
 * the indexes of its pages or, if there are fewer entries, anywhere. */
static void view_flush_superpage(SysTlb *t, uint64_t vaddr, unsigned level)
{
    size_t entries = (size_t)1 << t->bits, pages = (size_t)1 << (9 * level);
    view_flush_page(t, vaddr);
    for (size_t k = 0; k < (pages < entries ? pages : entries); k++) {
        size_t i = pages < entries ? ((vaddr >> 12 & ~(pages - 1)) + k) & (entries - 1) : k;
        if (in_same_superpage(&t->table[i], t->attr[i], vaddr)) {
            memset(&t->table[i], 0xff, sizeof t->table[i]);
            t->used -= t->used > 0;
        }
    }
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (in_same_superpage(&t->victim[v], t->victim_attr[v], vaddr))
            memset(&t->victim[v], 0xff, sizeof t->victim[v]);
}

/* Drop t's entries of non-global mappings. */
static void view_flush_local(SysTlb *t)
{
    size_t entries = (size_t)1 << t->bits;
    for (size_t i = 0; i < entries; i++)
        if (!(t->attr[i] & TLB_ATTR_GLOBAL) && !entry_empty(&t->table[i])) {
            memset(&t->table[i], 0xff, sizeof t->table[i]);
            t->used -= t->used > 0;
        }
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (!(t->victim_attr[v] & TLB_ATTR_GLOBAL))
            memset(&t->victim[v], 0xff, sizeof t->victim[v]);
}

/* Empty every view of s (it knows every watch then). */
static void space_flush(TlbSpace *s, uint64_t now)
{
    for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++)
        view_flush(&s->view[idx], now);
    s->super.n = s->code_super.n = 0;
    s->watch_gen = __atomic_load_n(&code_watch_gen, __ATOMIC_SEQ_CST);
}

/* Drop s's translations of the page at vaddr, and of the superpage
 * holding it if s holds one (then true). */
static bool space_flush_page(TlbSpace *s, uint64_t vaddr)
{
    int level = spans_level(&s->super, vaddr);
    for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++) {
        if (level > 0)
            view_flush_superpage(&s->view[idx], vaddr, (unsigned)level);
        else
            view_flush_page(&s->view[idx], vaddr);
    }
    return level > 0;
}

void tlb_flush(CPUState *cpu, bool all, uint64_t vaddr)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    if (all) {
        /* The current space now holds satp's (empty) entries, whichever
         * satp they were of (a reset changes satp without a write). */
        uint64_t now = sizing_now();
        view_flush(&ts->m, now);
        space_flush(ts->cur, now);
        for (unsigned i = 0; i < TLB_SPACES; i++)
            ts->space[i].in_use = false;
        ts->cur->satp = cpu->priv.satp;
        ts->cur->in_use = true;
        ts->cur->fences_seen = ts->fences;
        exec_mapping_changed(cpu, true, 0);
        exec_space_changed(cpu, space_index(ts, ts->cur), group_of(ts->cur->satp));
    } else {
        /* The other spaces take the page when they are current again
         * (space_catch_up). A superpage covering vaddr drops its entries,
         * and the jump caches' blocks of the spans of superpages holding
         * it (a shared set may hold other pages of it). */
        uint64_t lo = UINT64_MAX, hi = 0;
        view_flush_page(&ts->m, vaddr);
        ts->fence_log[ts->fences++ % TLB_FENCE_LOG] = vaddr;
        for (unsigned i = 0; i < TLB_SPACES; i++) {
            int level = ts->space[i].in_use ? spans_level(&ts->space[i].code_super, vaddr) : -1;
            if (level > 0) {    /* the superpage of vaddr, at the spans' largest size */
                uint64_t mask = level_mask((unsigned)level);
                lo = (vaddr & ~mask) < lo ? vaddr & ~mask : lo;
                hi = (vaddr | mask) > hi ? vaddr | mask : hi;
            }
        }
        space_flush_page(ts->cur, vaddr);
        ts->cur->fences_seen = ts->fences;
        if (lo <= hi)
            exec_mapping_range_changed(cpu, lo, hi);
        else
            exec_mapping_changed(cpu, false, vaddr);
    }
    publish(cpu);
}

/* -- Address spaces ------------------------------------------------------------------------- */

static TlbSpace *space_of(HartTlbs *ts, uint64_t satp)
{
    for (unsigned i = 0; i < TLB_SPACES; i++)
        if (ts->space[i].in_use && ts->space[i].satp == satp)
            return &ts->space[i];
    return NULL;
}

/* The space a new satp takes: a free one, else the least recently used. */
static TlbSpace *space_to_take(HartTlbs *ts)
{
    TlbSpace *lru = NULL;
    for (unsigned i = 0; i < TLB_SPACES; i++) {
        TlbSpace *s = &ts->space[i];
        if (s == ts->cur)
            continue;
        if (!s->in_use)
            return s;
        if (!lru || s->last_used < lru->last_used)
            lru = s;
    }
    return lru;
}

/* Copy from's global entries into the free entries of to. A store tag
 * learns of code watches here: one made since to's space was flushed may
 * have marked from's entry after it was read (space_sync_watches covers
 * the others). */
static void view_copy_globals(SysTlb *to, const SysTlb *from)
{
    size_t entries = (size_t)1 << from->bits, mask = ((size_t)1 << to->bits) - 1;
    for (size_t i = 0; i < entries; i++) {
        const TlbEntry *e = &from->table[i];
        if (!(from->attr[i] & TLB_ATTR_GLOBAL) || entry_empty(e))
            continue;
        size_t j = (entry_page(e) >> 12) & mask;
        if (!entry_empty(&to->table[j]))
            continue;
        to->table[j] = *e;
        to->pa_page[j] = from->pa_page[i];
        to->attr[j] = from->attr[i];
        if (!(e->addr_write & TLB_INVALID) && code_watched(from->pa_page[i]))
            to->table[j].addr_write |= TLB_CODE;
        to->used++;
    }
}

/*
 * Take s for satp. Global mappings are the same in every address space (of
 * one MODE), so it starts with the current space's global entries: a new
 * process's kernel accesses then hit at once instead of walking again.
 * The superpages they may come from are the current space's.
 */
static void space_take(CPUState *cpu, TlbSpace *s, uint64_t satp)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    space_flush(s, sizing_now());
    s->satp = satp;
    s->in_use = true;
    s->fences_seen = ts->fences;
    if (group_of(satp) != EXEC_NO_GROUP && group_of(satp) == group_of(ts->cur->satp)) {
        for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++)
            view_copy_globals(&s->view[idx], &ts->cur->view[idx]);
        s->super = ts->cur->super;
        s->code_super = ts->cur->code_super;
    }
    exec_space_mapping_changed(cpu, space_index(ts, s), true, 0);
}

/* Apply the page fences s missed while it was not current. */
static void space_catch_up(HartTlbs *ts, TlbSpace *s)
{
    if (ts->fences - s->fences_seen > TLB_FENCE_LOG)
        space_flush(s, sizing_now());
    else
        for (uint64_t k = s->fences_seen; k < ts->fences; k++)
            space_flush_page(s, ts->fence_log[k % TLB_FENCE_LOG]);
    s->fences_seen = ts->fences;
}

static void space_enter(CPUState *cpu, TlbSpace *s)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    space_catch_up(ts, s);
    __atomic_store_n(&ts->cur, s, __ATOMIC_SEQ_CST);
    s->last_used = ++ts->clock;
    space_sync_watches(s);
    publish(cpu);
    exec_space_changed(cpu, space_index(ts, s), group_of(s->satp));
}

void tlb_satp_changed(CPUState *cpu)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    uint64_t satp = cpu->priv.satp;
    if (!tune.asid_tlb) {
        ts->satp_flushed++;
        tlb_flush(cpu, true, 0);
        return;
    }
    if (satp == ts->cur->satp) {
        ts->satp_same++;
        return;
    }
    TlbSpace *s = space_of(ts, satp);
    if (s) {
        ts->satp_kept++;
    } else {
        s = space_to_take(ts);
        space_take(cpu, s, satp);
        ts->satp_new++;
    }
    space_enter(cpu, s);
}

void tlb_sfence(CPUState *cpu, bool one_addr, uint64_t vaddr, bool one_asid, uint64_t asid)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    if (one_asid)
        one_addr ? ts->sfence_page_asid++ : ts->sfence_asid++;
    else
        one_addr ? ts->sfence_page++ : ts->sfence_all++;
    if (!one_asid || !tune.asid_tlb) {
        tlb_flush(cpu, !one_addr, vaddr);
        return;
    }
    /* Only that ASID's spaces, whatever their root; other spaces keep
     * their global entries, which the spec lets such a fence leave. */
    for (unsigned i = 0; i < TLB_SPACES; i++) {
        TlbSpace *s = &ts->space[i];
        if (!s->in_use || asid_of(s->satp) != (asid & 0xffff))
            continue;
        if (one_addr) {
            exec_space_mapping_changed(cpu, i, space_flush_page(s, vaddr), vaddr);
            continue;
        }
        for (unsigned idx = 0; idx < TLB_SPACE_VIEWS; idx++)
            view_flush_local(&s->view[idx]);
        exec_space_mapping_changed(cpu, i, true, 0);
    }
    publish(cpu);
}

bool tlb_code_global(const CPUState *cpu, uint64_t va)
{
    HartTlbs *ts = &hart_of((CPUState *)cpu)->tlbs;
    const SysTlb *t = view_of(ts, tlb_index_of(cpu, MEM_FETCH));
    uint64_t page = va & ~0xfffULL;
    size_t i = (va >> 12) & ((1u << t->bits) - 1);
    if (tag_maps(t->table[i].addr_code, page))
        return t->attr[i] & TLB_ATTR_GLOBAL;
    for (unsigned v = 0; v < TLB_VICTIMS; v++)
        if (tag_maps(t->victim[v].addr_code, page))
            return t->victim_attr[v] & TLB_ATTR_GLOBAL;
    return false;
}

void tlb_init(CPUState *cpu)
{
    HartTlbs *ts = &hart_of(cpu)->tlbs;
    if (!code_bits) {
        size_t pages = machine.ram_size >> 12;
        code_bits = map_noreserve((pages + 63) / 64 * 8);
    }
    view_init(&ts->m);
    ts->cur = &ts->space[0];
    space_flush(ts->cur, 0);
    ts->cur->satp = cpu->priv.satp;
    ts->cur->in_use = true;
    publish(cpu);
}

/* -- Lookup and fill ----------------------------------------------------------------------- */

static const char *access_name(enum mem_access access)
{
    return access == MEM_FETCH ? "fetch" : access == MEM_LOAD ? "load" :
           access == MEM_AMO ? "atomic access" : "store";
}

bool tlb_access_fault(uint64_t va, uint64_t pa, enum mem_access access, const char *why,
                      MemFault *fault)
{
    xlat_log(LOG_GUEST_ERRORS, "xlat-system: %s at physical %#llx (virtual %#llx): %s\n",
             access_name(access), (unsigned long long)pa, (unsigned long long)va, why);
    *fault = (MemFault){ .kind = MEM_FAULT_BUS, .access = (uint8_t)access, .addr = va };
    return false;
}

static bool no_memory(uint64_t va, uint64_t pa, enum mem_access access, MemFault *fault)
{
    return tlb_access_fault(va, pa, access, "nothing there", fault);
}

/* Does PMP let an access of size bytes at physical pa through at mode? If
 * not, an access fault (logged unless quiet). *page_wide (if wanted): the
 * answer holds for the page. */
static bool pmp_allows(const CPUState *cpu, uint64_t va, uint64_t pa, unsigned size,
                       enum mem_access access, int mode, bool *page_wide, MemFault *fault,
                       bool quiet)
{
    bool wide;
    unsigned need = pmp_need(access);
    bool ok = (pmp_perms(&cpu->priv.pmp, mode, pa, size, &wide) & need) == need;
    if (page_wide)
        *page_wide = wide;
    if (ok)
        return true;
    if (!quiet)
        xlat_log(LOG_MMU, "pmp: %c-mode %s at physical %#llx (virtual %#llx, pc %#llx) refused\n",
             "USHM"[mode & 3], access_name(access), (unsigned long long)pa,
             (unsigned long long)va, (unsigned long long)cpu->pc);
    *fault = (MemFault){ .kind = MEM_FAULT_BUS, .access = (uint8_t)access, .addr = va };
    return false;
}

/* A miss in t at entry i: walk, check PMP, fill the tags access needs
 * (faults logged unless quiet). */
static bool fill(CPUState *cpu, SysTlb *t, size_t i, uint64_t va, unsigned size,
                 enum mem_access access, MemFault *fault, bool quiet)
{
    MmuResult r;
    if (!mmu_translate(cpu, va, access, sys_phys_u64, &r, fault)) {
        if (!quiet)
            xlat_log(LOG_MMU, "mmu: %s %s fault at %#llx (pc %#llx)\n", access_name(access),
                 fault->kind == MEM_FAULT_BUS ? "access" : "page", (unsigned long long)va,
                 (unsigned long long)cpu->pc);
        return false;
    }
    bool page_wide;
    if (!pmp_allows(cpu, va, r.pa, size, access, r.mode, &page_wide, fault, quiet))
        return false;
    uint64_t pa_page = r.pa >> 12, page = va & ~0xfffULL;
    uint8_t *host = machine_ram_ptr(pa_page << 12, 4096);
    if (!host && !machine_find_mmio(r.pa))
        return quiet ? false : no_memory(va, r.pa, access, fault);
    if (r.page_mask > 0xfff) {
        TlbSpace *s = hart_of(cpu)->tlbs.cur;
        spans_note(&s->super, va, r.page_mask);
        if (access == MEM_FETCH)
            spans_note(&s->code_super, va, r.page_mask);
    }

    TlbEntry *e = &t->table[i];
    bool same = t->pa_page[i] == pa_page && entry_maps(e, page);
    if (!same) {
        if (entry_empty(e)) {
            t->used++;
        } else if (!entry_maps(e, page)) {     /* another page's: keep it as a victim */
            unsigned v = t->victim_next++ % TLB_VICTIMS;
            t->victim[v] = *e;
            t->victim_pa_page[v] = t->pa_page[i];
            t->victim_attr[v] = t->attr[i];
        }
        e->addr_read = e->addr_write = e->addr_code = TLB_EMPTY;
    }
    t->pa_page[i] = pa_page;
    t->attr[i] = (uint8_t)((r.global ? TLB_ATTR_GLOBAL : 0) | super_level(r.page_mask) << 1);
    e->addend = host ? (uint64_t)(uintptr_t)host - page : 0;
    uint64_t tag = page | (host ? 0 : TLB_MMIO) | (page_wide ? 0 : TLB_PMP);
    t->fills++;
    switch (access) {
    case MEM_FETCH:
        e->addr_code = tag;
        break;
    case MEM_LOAD:
        e->addr_read = tag;
        break;
    case MEM_STORE:
    case MEM_AMO:
        /* A writable page is readable (W without R is reserved, in PTEs
         * and in PMP), and the walk has set A and D. */
        e->addr_read = tag;
        __atomic_store_n(&e->addr_write, tag | (code_watched(pa_page) ? TLB_CODE : 0),
                         __ATOMIC_SEQ_CST);
        if (code_watched(pa_page))      /* tlb_code_watch may have scanned before the store */
            __atomic_fetch_or(&e->addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
        break;
    }
    return true;
}

/* Is t past 70 % full (and may it grow)? */
static bool view_full(const SysTlb *t)
{
    return tune.tlb_resize && !tune.tlb_bits && t->bits < TLB_BITS_MAX &&
           t->used * 10ULL > (1ULL << t->bits) * 7ULL;
}

/*
 * Double t in place: an entry whose page has the new index bit set moves
 * to the upper half. Another hart's code watch may scan t meanwhile: the
 * new size is stored first, and each moved entry is checked against the
 * watches after it is written, so either the watcher's scan or this check
 * sees it (the same argument as space_sync_watches').
 */
static void view_grow(SysTlb *t)
{
    size_t n = (size_t)1 << t->bits;
    memset(&t->table[n], 0xff, n * sizeof *t->table);   /* may be a shrink's zeros */
    __atomic_store_n(&t->bits, t->bits + 1, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < n; i++) {
        TlbEntry *e = &t->table[i];
        if (entry_empty(e) || !((entry_page(e) >> 12) & n))
            continue;
        t->pa_page[i + n] = t->pa_page[i];
        t->attr[i + n] = t->attr[i];
        t->table[i + n] = *e;
        memset(e, 0xff, sizeof *e);
        if (!(t->table[i + n].addr_write & TLB_INVALID) && code_watched(t->pa_page[i + n]))
            __atomic_fetch_or(&t->table[i + n].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
    }
    t->resizes++;
    t->window_start = monotonic_ns();  /* a resize starts a sizing window */
    t->window_max = 0;
}

/* A miss at entry i: is the page's translation for access among the
 * victims? Then it and entry i trade places. */
static bool victim_swap(SysTlb *t, size_t i, uint64_t page, enum mem_access access)
{
    for (unsigned v = 0; v < TLB_VICTIMS; v++) {
        if (!tag_maps(*tag_of(&t->victim[v], access), page))
            continue;
        TlbEntry e = t->table[i];
        uint64_t pa = t->pa_page[i];
        uint8_t attr = t->attr[i];
        if (entry_empty(&e))
            t->used++;                  /* the table holds one more */
        t->table[i] = t->victim[v];
        t->pa_page[i] = t->victim_pa_page[v];
        t->attr[i] = t->victim_attr[v];
        t->victim[v] = e;
        t->victim_pa_page[v] = pa;
        t->victim_attr[v] = attr;
        return true;
    }
    return false;
}

static bool lookup(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                   TlbHit *hit, MemFault *fault, bool quiet)
{
    SysTlb *t = view_of(&hart_of(cpu)->tlbs, tlb_index_of(cpu, access));
    size_t i = (va >> 12) & ((1u << t->bits) - 1);
    TlbEntry *e = &t->table[i];
    uint64_t *tagp = tag_of(e, access);
    uint64_t tag = __atomic_load_n(tagp, __ATOMIC_ACQUIRE);
    t->lookups++;
    if (!tag_maps(tag, va & ~0xfffULL)) {
        t->misses++;
        if (view_full(t)) {
            view_grow(t);
            publish(cpu);
            i = (va >> 12) & ((1u << t->bits) - 1);
            e = &t->table[i];
            tagp = tag_of(e, access);
        }
        if (victim_swap(t, i, va & ~0xfffULL, access))
            t->victim_hits++;
        else if (!fill(cpu, t, i, va, size, access, fault, quiet))
            return false;
        tag = __atomic_load_n(tagp, __ATOMIC_ACQUIRE);
    } else if ((tag & TLB_PMP) &&
               !pmp_allows(cpu, va, t->pa_page[i] << 12 | (va & 0xfff), size, access,
                           mmu_effective_mode(cpu, access), NULL, fault, quiet)) {
        return false;
    }
    hit->pa = t->pa_page[i] << 12 | (va & 0xfff);
    hit->host = (tag & TLB_MMIO) ? NULL : (uint8_t *)(uintptr_t)(va + e->addend);
    hit->code = false;
    if (tag & TLB_CODE) {
        hit->code = code_watched(t->pa_page[i]);
        if (!hit->code)                 /* unwatched since: stores go inline again */
            __atomic_fetch_and(tagp, ~TLB_CODE, __ATOMIC_SEQ_CST);
    }
    return true;
}

bool tlb_lookup(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                TlbHit *hit, MemFault *fault)
{
    return lookup(cpu, va, size, access, hit, fault, false);
}

bool tlb_probe_fill(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                    unsigned idx)
{
    TlbHit hit;
    MemFault fault;
    if ((va & 0xfff) + size > 0x1000 || tlb_index_of(cpu, access) != idx ||
        !lookup(cpu, va, size, access, &hit, &fault, true))
        return false;
    /* What the probe compares (exec/softmmu.h), in the table it reads. */
    const TlbFast *f = &cpu->tlb[idx];
    const TlbEntry *e = (const TlbEntry *)((uintptr_t)f->table + ((va >> 7) & f->mask));
    uint64_t tag = access == MEM_LOAD ? e->addr_read : e->addr_write;
    return tag == (va & ~0xfffULL);
}

/* -- Statistics ----------------------------------------------------------------------------- */

/* The counts of index idx over all of a hart's spaces (the size: now's). */
static SysTlb view_totals(HartTlbs *ts, unsigned idx)
{
    if (idx == TLB_IDX_M)
        return ts->m;
    SysTlb sum = ts->cur->view[idx];
    sum.lookups = sum.misses = sum.victim_hits = sum.fills = sum.flushes = sum.resizes = 0;
    for (unsigned i = 0; i < TLB_SPACES; i++) {
        const SysTlb *t = &ts->space[i].view[idx];
        sum.lookups += t->lookups;
        sum.misses += t->misses;
        sum.victim_hits += t->victim_hits;
        sum.fills += t->fills;
        sum.flushes += t->flushes;
        sum.resizes += t->resizes;
    }
    return sum;
}

static void print_spaces(FILE *f, unsigned n, const HartTlbs *ts)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < TLB_SPACES; i++)
        kept += ts->space[i].in_use;
    fprintf(f, "tlb: hart %u satp writes: %llu to a kept space, %llu to a new (flushed) one, "
               "%llu to the same, %llu flushed all (no-asid-tlb); %u of %u spaces kept now\n",
            n, (unsigned long long)ts->satp_kept, (unsigned long long)ts->satp_new,
            (unsigned long long)ts->satp_same, (unsigned long long)ts->satp_flushed, kept,
            TLB_SPACES);
    fprintf(f, "tlb: hart %u sfence.vma: %llu all, %llu one page, %llu one ASID, "
               "%llu one page of one ASID\n",
            n, (unsigned long long)ts->sfence_all, (unsigned long long)ts->sfence_page,
            (unsigned long long)ts->sfence_asid, (unsigned long long)ts->sfence_page_asid);
}

void tlb_print_stats(void)
{
    static const char *const names[TLB_NIDX] = { "U", "S", "S+SUM", "M" };
    FILE *f = log_file ? log_file : stderr;
    uint64_t inline_accesses[TLB_NIDX] = { 0 };
    if (hart_use_jit)
        exec_stats_accesses(inline_accesses);
    fprintf(f, "tlb: accesses: translated code's inline probes (estimated from block counts)\n"
               "tlb: and the interpreter's; misses: not in the table; walks: nor a victim;\n"
               "tlb: counts over every address space, the size of the current one's\n");
    for (unsigned n = 0; n < machine.nharts; n++) {
        HartTlbs *ts = &machine.harts[n]->tlbs;
        for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
            SysTlb t = view_totals(ts, idx);
            if (!t.lookups)
                continue;
            /* Translated code's misses come through lookup too. */
            uint64_t accesses = inline_accesses[idx] + t.lookups;
            fprintf(f, "tlb: hart %u %-5s %12llu accesses %9llu misses (%.3f%%) %8llu victim hits "
                       "%8llu walks %6llu flushes %4llu resizes, 2^%u entries now\n",
                    n, names[idx], (unsigned long long)accesses, (unsigned long long)t.misses,
                    accesses ? 100.0 * (double)t.misses / (double)accesses : 0.0,
                    (unsigned long long)t.victim_hits, (unsigned long long)t.fills,
                    (unsigned long long)t.flushes, (unsigned long long)t.resizes, t.bits);
        }
        print_spaces(f, n, ts);
    }
}
