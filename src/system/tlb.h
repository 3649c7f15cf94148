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
 * Sizing (the seed's policy): every TLB starts at 2^8 entries and is
 * resized only when it is flushed whole: if the most entries used in the
 * current window (about 100 ms) exceeded 70 % of its size it doubles (up
 * to 2^22); if it stayed under 30 % when the window ends, it shrinks to
 * the next power of two of that most (down to 2^6). --tune tlb-bits=N
 * fixes the size, --tune no-tlb-resize keeps 2^8.
 *
 * Code. A physical page holding translated code is watched (the core's
 * code_watch): its write tags carry TLB_CODE, so stores to it take the slow
 * path, which reports them (exec_code_written) before storing; device DMA
 * into RAM reports its pages too (tlb_dma_written).
 */
#ifndef XLAT_SYSTEM_TLB_H
#define XLAT_SYSTEM_TLB_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"

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

/* Drop cpu's cached translations: all, or those of the page holding vaddr
 * (a superpage in the TLB drops all). Also empties the jump cache. */
void tlb_flush(CPUState *cpu, bool all, uint64_t vaddr);

/* The core's code watches on physical page numbers (GuestMemOps). */
void tlb_code_watch(uint64_t page);
bool tlb_code_unwatch(uint64_t page, bool remapped);

/* A device wrote [pa, pa+len) of RAM: translations of it are dropped. */
void tlb_dma_written(uint64_t pa, uint64_t len);

/* -d stats: fills, flushes and sizes of every hart's TLBs. */
void tlb_print_stats(void);

/* An access fault at va (physical pa) for access, logged under -d
 * guest_errors with why ("nothing there", ...). Returns false. */
bool tlb_access_fault(uint64_t va, uint64_t pa, enum mem_access access, const char *why,
                      MemFault *fault);

#endif
