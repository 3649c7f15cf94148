/*
 * A hart's softmmu TLBs (seed 002), shared by translated code's inline
 * probe (exec/softmmu.h) and the interpreter's accesses (sys_mem.c).
 *
 * One TLB per TLB index (U, S, S with SUM, M), so a change of privilege or
 * of SUM/MPRV flushes nothing: it only selects another table (cpu->tb_flags
 * says which, riscv/priv.h). Each is direct mapped by virtual page, with a
 * tag per access kind (read, write, fetch) and the host addend of RAM
 * pages. A miss walks the page table (riscv/mmu.c), checks PMP on the
 * physical address at the effective privilege, and fills the entry: a load
 * fills the read tag, a store the write and read tags (a writable PTE is
 * readable, and the walk set A and D), a fetch the code tag; the other tags
 * stay if the page maps to the same place. So the first store to a page
 * that loads reached walks again, and sets D.
 *
 * Address spaces. The views satp translates (U, S, S with SUM) come in
 * TLB_SPACES sets, one per recently used satp value (MODE, ASID and root
 * PPN together: an ASID reused with another root never finds the old
 * root's entries); M's view is physical and there is one. A satp write
 * that names a kept space only points cpu->tlb[] at its tables (no flush:
 * the privileged spec lets a hart keep every ASID's translations until an
 * sfence.vma drops them); one that names no kept space takes the least
 * recently used one, flushed. sfence.vma with an ASID flushes that ASID's
 * spaces (the page; or all of it but its global entries, which such a
 * fence need not order and Linux's kernel mappings are); without one,
 * every space. Other changes (PMP, MXR, a reset) flush every space. The
 * jump caches follow (exec_space_changed: one set per space, and sets of
 * global code shared by the spaces of one satp.MODE). `-tune no-asid-tlb`
 * keeps one space and flushes it at every satp write.
 *
 * Sizing (the seed's policy), per table of every space: every TLB starts
 * at 2^8 entries; when it is flushed whole, if the most entries used in
 * the current window (about 100 ms) exceeded 70 % of its size it doubles
 * (up to 2^22); if it stayed under 30 % when the window ends, it shrinks
 * to the next power of two of that most (down to 2^6). A table that fills
 * past 70 % doubles at once, in place (its entries move to their new
 * index): with a space per address space, a process's or the kernel's
 * tables may not be flushed whole for long. --tune tlb-bits=N fixes the
 * size, --tune no-tlb-resize keeps 2^8.
 *
 * Code. A physical page holding translated code is watched (the core's
 * code_watch): its write tags carry TLB_CODE, so stores to it take the slow
 * path, which reports them (exec_code_written) before storing; device DMA
 * into RAM reports its pages too (tlb_dma_written). A new watch marks the
 * current spaces' entries at once and the others' when they next become
 * current.
 */
#ifndef XLAT_SYSTEM_TLB_H
#define XLAT_SYSTEM_TLB_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"

/*
 * One softmmu TLB (a privilege's view of one address space): the entries
 * translated code and the interpreter probe (cpu.tlb[idx] holds the
 * current space's table and its mask), the physical page of each, and
 * what the seed's dynamic sizing counts.
 */
#define TLB_VICTIMS 8
#define TLB_ATTR_GLOBAL 1                 /* SysTlb.attr: a global mapping (PTE G) */
typedef struct SysTlb {
    TlbEntry *table;                   /* NULL until the space is first used */
    uint64_t *pa_page;                 /* per entry: the physical page it maps */
    uint8_t *attr;                     /* per entry: TLB_ATTR_GLOBAL | superpage level << 1 */
    unsigned bits;                     /* log2 of the entries in use */
    unsigned used;                     /* entries filled since the last full flush */
    unsigned window_max;               /* the most used in this sizing window */
    uint64_t window_start;             /* ns (CLOCK_MONOTONIC) */
    /* The victim TLB: entries the table evicted, searched before a walk. */
    TlbEntry victim[TLB_VICTIMS];
    uint64_t victim_pa_page[TLB_VICTIMS];
    uint8_t victim_attr[TLB_VICTIMS];
    unsigned victim_next;
    /* -d stats: slow-path lookups, their misses in the table, the misses
     * the victims served (the rest walked: fills), flushes, resizes. */
    uint64_t lookups, misses, victim_hits, fills, flushes, resizes;
} SysTlb;

/* The views satp's translation reaches: U, S, S with SUM (TLB_IDX_M's is
 * physical). */
#define TLB_SPACE_VIEWS TLB_IDX_M
#define TLB_SPACES 8

/* Virtual addresses [lo, hi] holding superpages (of at most level: 1 is
 * 2 MiB) a space's TLBs cached; a few of them. */
typedef struct TlbSuperSpan { uint64_t lo, hi; unsigned level; } TlbSuperSpan;
#define TLB_SUPER_SPANS 4
typedef struct TlbSuperSpans { TlbSuperSpan span[TLB_SUPER_SPANS]; unsigned n; } TlbSuperSpans;

/* The TLBs of one address space (one satp value). */
typedef struct TlbSpace {
    uint64_t satp;                     /* MODE, ASID and root PPN its entries are of */
    bool in_use;                       /* else free: flushed before it is used again */
    uint64_t last_used;                /* HartTlbs.clock when it last became current */
    unsigned watch_gen;                /* the code watches its entries know of (tlb.c) */
    uint64_t fences_seen;              /* HartTlbs.fences applied to it */
    TlbSuperSpans super;               /* the superpages its entries cover */
    TlbSuperSpans code_super;          /* those it fetched from (jump caches) */
    SysTlb view[TLB_SPACE_VIEWS];
} TlbSpace;

/* A hart's TLBs. */
#define TLB_FENCE_LOG 1024
typedef struct HartTlbs {
    TlbSpace *cur;                     /* the space of satp (other harts read it) */
    TlbSpace space[TLB_SPACES];
    SysTlb m;                          /* M-mode's view: physical addresses */
    uint64_t clock;                    /* counts switches, for the LRU choice */
    /* Pages fenced in every space (rs2 = x0): the other spaces apply them
     * when they are current again (all of it if they missed too many). */
    uint64_t fence_log[TLB_FENCE_LOG];
    uint64_t fences;
    /* -d stats: satp writes that kept the space, found a kept one, took a
     * new (flushed) one, flushed everything (-tune no-asid-tlb);
     * sfence.vma by kind. */
    uint64_t satp_same, satp_kept, satp_new, satp_flushed;
    uint64_t sfence_all, sfence_page, sfence_asid, sfence_page_asid;
} HartTlbs;

/* Where one access goes: RAM (host) or a device register (host NULL). */
typedef struct TlbHit {
    uint8_t *host;          /* the byte at va, or NULL: a device page */
    uint64_t pa;            /* physical address of va */
    bool code;              /* a store to a watched code page (report it first) */
} TlbHit;

/* Set up cpu's TLBs (empty, at their first size). */
void tlb_init(CPUState *cpu);

/*
 * Translate the access of size bytes at va (inside one page) through cpu's
 * TLB for its kind, walking and filling on a miss: true with *hit, or
 * false with *fault (page fault, access fault, PMP refusal, nothing there).
 */
bool tlb_lookup(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                TlbHit *hit, MemFault *fault);

/* Translated code's probe of a load or store (MEM_LOAD, MEM_STORE) in TLB
 * idx missed: the lookup above, quiet; true if the probe hits now (plain
 * RAM, no flag; never across a page). The core's GuestMemOps.probe_fill. */
bool tlb_probe_fill(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                    unsigned idx);

/* Drop cpu's cached translations in every address space: all, or those of
 * the page holding vaddr (a superpage in a space's TLBs drops all of that
 * space's). Also empties the jump caches. */
void tlb_flush(CPUState *cpu, bool all, uint64_t vaddr);

/* cpu's satp was written: make its space current (kept, or a flushed one;
 * every space flushed with -tune no-asid-tlb). */
void tlb_satp_changed(CPUState *cpu);

/* sfence.vma: with one_asid, only the spaces of that ASID (the page of
 * vaddr with one_addr, else all); without, every space. */
void tlb_sfence(CPUState *cpu, bool one_addr, uint64_t vaddr, bool one_asid, uint64_t asid);

/* Is the code at va in a global page (for cpu's fetches, as its TLB holds
 * it now; false if it does not)? The core's GuestMemOps.code_global. */
bool tlb_code_global(const CPUState *cpu, uint64_t va);

/* The core's code watches on physical page numbers (GuestMemOps). */
void tlb_code_watch(uint64_t page);
bool tlb_code_unwatch(uint64_t page, bool remapped);

/* A device wrote [pa, pa+len) of RAM: translations of it are dropped. */
void tlb_dma_written(uint64_t pa, uint64_t len);

/* -d stats: fills, flushes and sizes of every hart's TLBs, and how its
 * satp writes found their spaces. */
void tlb_print_stats(void);

/* An access fault at va (physical pa) for access, logged under -d
 * guest_errors with why ("nothing there", ...). Returns false. */
bool tlb_access_fault(uint64_t va, uint64_t pa, enum mem_access access, const char *why,
                      MemFault *fault);

#endif
