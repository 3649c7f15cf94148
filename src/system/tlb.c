/*
 * The harts' softmmu TLBs: see tlb.h.
 *
 * Each TLB's tables are mapped once at the largest size (2^22 entries,
 * without reserving memory) and used up to the current size, so a resize
 * only changes the mask translated code reads from CPUState: no
 * retranslation, no copy (a resize happens at a full flush, when every
 * entry is empty anyway).
 *
 * A superpage translation is cached as the 4 KiB entries used, so a flush
 * of one address inside a superpage the TLBs hold drops them all
 * (Hart.super_span: the span such translations cover since the last full
 * flush).
 */
#define _GNU_SOURCE
#include "system/tlb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

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

void tlb_code_watch(uint64_t page)
{
    if (code_mark(page, true))
        return;
    /* Writable entries of the page, in every hart's TLBs, now send their
     * stores to the slow path. A fill racing this sees the bit (fill). */
    for (unsigned n = 0; n < machine.nharts; n++) {
        Hart *h = machine.harts[n];
        for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
            SysTlb *t = &h->tlb[idx];
            size_t entries = (size_t)1 << __atomic_load_n(&t->bits, __ATOMIC_ACQUIRE);
            for (size_t i = 0; i < entries; i++)
                if (t->pa_page[i] == page && !(t->table[i].addr_write & TLB_INVALID))
                    __atomic_fetch_or(&t->table[i].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
            for (unsigned v = 0; v < TLB_VICTIMS; v++)
                if (t->victim_pa_page[v] == page && !(t->victim[v].addr_write & TLB_INVALID))
                    __atomic_fetch_or(&t->victim[v].addr_write, TLB_CODE, __ATOMIC_SEQ_CST);
        }
    }
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

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void set_size(CPUState *cpu, unsigned idx, unsigned bits)
{
    SysTlb *t = &hart_of(cpu)->tlb[idx];
    __atomic_store_n(&t->bits, bits, __ATOMIC_RELEASE);
    cpu->tlb[idx].mask = (((uint64_t)1 << bits) - 1) << TLB_ENTRY_BITS;
    cpu->tlb[idx].table = t->table;
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

static void flush_one_tlb(CPUState *cpu, unsigned idx, uint64_t now)
{
    SysTlb *t = &hart_of(cpu)->tlb[idx];
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
    set_size(cpu, idx, bits);
    t->used = 0;
    t->flushes++;
}

static bool entry_maps(const TlbEntry *e, uint64_t page)
{
    return tag_maps(e->addr_read, page) || tag_maps(e->addr_write, page) ||
           tag_maps(e->addr_code, page);
}

static void note_superpage(Hart *h, uint64_t va, uint64_t page_mask)
{
    uint64_t lo = va & ~page_mask, hi = lo + page_mask;
    if (lo < h->super_span.lo)
        h->super_span.lo = lo;
    if (hi > h->super_span.hi)
        h->super_span.hi = hi;
}

void tlb_flush(CPUState *cpu, bool all, uint64_t vaddr)
{
    Hart *h = hart_of(cpu);
    if (!all && vaddr - h->super_span.lo <= h->super_span.hi - h->super_span.lo)
        all = true;
    if (all) {
        uint64_t now = tune.tlb_resize && !tune.tlb_bits ? now_ns() : 0;
        for (unsigned idx = 0; idx < TLB_NIDX; idx++)
            flush_one_tlb(cpu, idx, now);
        h->super_span.lo = UINT64_MAX;
        h->super_span.hi = 0;
    } else {
        uint64_t page = vaddr & ~0xfffULL;
        for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
            SysTlb *t = &h->tlb[idx];
            TlbEntry *e = &t->table[(vaddr >> 12) & ((1u << t->bits) - 1)];
            if (entry_maps(e, page)) {
                memset(e, 0xff, sizeof *e);
                t->used -= t->used > 0;
            }
            for (unsigned v = 0; v < TLB_VICTIMS; v++)
                if (entry_maps(&t->victim[v], page))
                    memset(&t->victim[v], 0xff, sizeof t->victim[v]);
        }
    }
    exec_mapping_changed(cpu, all, vaddr);
}

void tlb_init(CPUState *cpu)
{
    Hart *h = hart_of(cpu);
    if (!code_bits) {
        size_t pages = machine.ram_size >> 12;
        code_bits = map_noreserve((pages + 63) / 64 * 8);
    }
    unsigned bits = tune.tlb_bits ? tune.tlb_bits : TLB_BITS_START;
    for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
        SysTlb *t = &h->tlb[idx];
        t->table = map_noreserve(sizeof(TlbEntry) << TLB_BITS_MAX);
        t->pa_page = map_noreserve(sizeof(uint64_t) << TLB_BITS_MAX);
        t->bits = bits;
        t->window_start = now_ns();
        memset(t->table, 0xff, sizeof(TlbEntry) << bits);
        memset(t->victim, 0xff, sizeof t->victim);
        set_size(cpu, idx, bits);
    }
    h->super_span.lo = UINT64_MAX;
    h->super_span.hi = 0;
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
 * not, an access fault. *page_wide (if wanted): the answer holds for the
 * page. */
static bool pmp_allows(const CPUState *cpu, uint64_t va, uint64_t pa, unsigned size,
                       enum mem_access access, int mode, bool *page_wide, MemFault *fault)
{
    bool wide;
    unsigned need = pmp_need(access);
    bool ok = (pmp_perms(&cpu->priv.pmp, mode, pa, size, &wide) & need) == need;
    if (page_wide)
        *page_wide = wide;
    if (ok)
        return true;
    xlat_log(LOG_MMU, "pmp: %c-mode %s at physical %#llx (virtual %#llx, pc %#llx) refused\n",
             "USHM"[mode & 3], access_name(access), (unsigned long long)pa,
             (unsigned long long)va, (unsigned long long)cpu->pc);
    *fault = (MemFault){ .kind = MEM_FAULT_BUS, .access = (uint8_t)access, .addr = va };
    return false;
}

/* A miss in t at entry i: walk, check PMP, fill the tags access needs. */
static bool fill(CPUState *cpu, SysTlb *t, size_t i, uint64_t va, unsigned size,
                 enum mem_access access, MemFault *fault)
{
    Hart *h = hart_of(cpu);
    MmuResult r;
    if (!mmu_translate(cpu, va, access, sys_phys_u64, &r, fault)) {
        xlat_log(LOG_MMU, "mmu: %s %s fault at %#llx (pc %#llx)\n", access_name(access),
                 fault->kind == MEM_FAULT_BUS ? "access" : "page", (unsigned long long)va,
                 (unsigned long long)cpu->pc);
        return false;
    }
    bool page_wide;
    if (!pmp_allows(cpu, va, r.pa, size, access, r.mode, &page_wide, fault))
        return false;
    uint64_t pa_page = r.pa >> 12, page = va & ~0xfffULL;
    uint8_t *host = machine_ram_ptr(pa_page << 12, 4096);
    if (!host && !machine_find_mmio(r.pa))
        return no_memory(va, r.pa, access, fault);
    if (r.page_mask > 0xfff)
        note_superpage(h, va, r.page_mask);

    TlbEntry *e = &t->table[i];
    bool same = t->pa_page[i] == pa_page && entry_maps(e, page);
    if (!same) {
        if (entry_empty(e)) {
            t->used++;
        } else if (!entry_maps(e, page)) {     /* another page's: keep it as a victim */
            unsigned v = t->victim_next++ % TLB_VICTIMS;
            t->victim[v] = *e;
            t->victim_pa_page[v] = t->pa_page[i];
        }
        e->addr_read = e->addr_write = e->addr_code = TLB_EMPTY;
    }
    t->pa_page[i] = pa_page;
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

/* A miss at entry i: is the page's translation for access among the
 * victims? Then it and entry i trade places. */
static bool victim_swap(SysTlb *t, size_t i, uint64_t page, enum mem_access access)
{
    for (unsigned v = 0; v < TLB_VICTIMS; v++) {
        if (!tag_maps(*tag_of(&t->victim[v], access), page))
            continue;
        TlbEntry e = t->table[i];
        uint64_t pa = t->pa_page[i];
        if (entry_empty(&e))
            t->used++;                  /* the table holds one more */
        t->table[i] = t->victim[v];
        t->pa_page[i] = t->victim_pa_page[v];
        t->victim[v] = e;
        t->victim_pa_page[v] = pa;
        return true;
    }
    return false;
}

bool tlb_lookup(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                TlbHit *hit, MemFault *fault)
{
    Hart *h = hart_of(cpu);
    SysTlb *t = &h->tlb[tlb_index_of(cpu, access)];
    size_t i = (va >> 12) & ((1u << t->bits) - 1);
    TlbEntry *e = &t->table[i];
    uint64_t *tagp = tag_of(e, access);
    uint64_t tag = __atomic_load_n(tagp, __ATOMIC_ACQUIRE);
    t->lookups++;
    if (!tag_maps(tag, va & ~0xfffULL)) {
        t->misses++;
        if (victim_swap(t, i, va & ~0xfffULL, access))
            t->victim_hits++;
        else if (!fill(cpu, t, i, va, size, access, fault))
            return false;
        tag = __atomic_load_n(tagp, __ATOMIC_ACQUIRE);
    } else if ((tag & TLB_PMP) &&
               !pmp_allows(cpu, va, t->pa_page[i] << 12 | (va & 0xfff), size, access,
                           mmu_effective_mode(cpu, access), NULL, fault)) {
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

/* -- Statistics ----------------------------------------------------------------------------- */

void tlb_print_stats(void)
{
    static const char *const names[TLB_NIDX] = { "U", "S", "S+SUM", "M" };
    FILE *f = log_file ? log_file : stderr;
    uint64_t inline_accesses[TLB_NIDX] = { 0 };
    if (hart_use_jit)
        exec_stats_accesses(inline_accesses);
    fprintf(f, "tlb: accesses: translated code's inline probes (estimated from block counts)\n"
               "tlb: and the interpreter's; misses: not in the table; walks: nor a victim\n");
    for (unsigned n = 0; n < machine.nharts; n++)
        for (unsigned idx = 0; idx < TLB_NIDX; idx++) {
            const SysTlb *t = &machine.harts[n]->tlb[idx];
            if (!t->lookups)
                continue;
            /* Translated code's misses come through lookup too. */
            uint64_t accesses = inline_accesses[idx] + t->lookups;
            fprintf(f, "tlb: hart %u %-5s %12llu accesses %9llu misses (%.3f%%) %8llu victim hits "
                       "%8llu walks %6llu flushes %4llu resizes, 2^%u entries now\n",
                    n, names[idx], (unsigned long long)accesses, (unsigned long long)t->misses,
                    accesses ? 100.0 * (double)t->misses / (double)accesses : 0.0,
                    (unsigned long long)t->victim_hits, (unsigned long long)t->fills,
                    (unsigned long long)t->flushes, (unsigned long long)t->resizes, t->bits);
        }
}
