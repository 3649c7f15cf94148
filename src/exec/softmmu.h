/*
 * The softmmu TLB as translated code probes it (seed 002): a mode without a
 * direct window (system mode) keeps, per vCPU and per TLB index (a
 * privilege level's view of memory), a direct-mapped table of these entries
 * and its size as a mask in CPUState, and the backend emits an inline probe
 * for every guest load and store (x86/backend.c):
 *
 *     entry = table + ((va >> 12) << 5 & mask)
 *     hit   = entry->addr_{read,write} == (va + size - 1) & ~0xfff
 *     host  = va + entry->addend
 *
 * A tag is the page's virtual address with flag bits below it: any flag
 * (TLB_INVALID, TLB_MMIO, TLB_CODE, TLB_PMP) fails the inline compare and
 * sends the access to the slow path, which is the interpreter running the
 * instruction through the mode (system/sys_mem.c: walk, fill, device
 * access, fault). An access that crosses a page compares its last byte's
 * page with the first's entry and misses too. The mode owns the tables,
 * their fill, flushes and size; the core only reads them.
 */
#ifndef XLAT_EXEC_SOFTMMU_H
#define XLAT_EXEC_SOFTMMU_H

#include <stdint.h>

/* Tag flag bits (the low 12 bits of a tag). */
#define TLB_INVALID (1ULL << 0)     /* no translation here (an empty tag is all ones) */
#define TLB_MMIO    (1ULL << 1)     /* a device page: no host address */
#define TLB_CODE    (1ULL << 2)     /* write tag only: the page holds translated code */
#define TLB_PMP     (1ULL << 3)     /* PMP splits the page: check every access */
#define TLB_FLAGS   0xfffULL
#define TLB_EMPTY   UINT64_MAX

/* One entry, 32 bytes as QEMU's CPUTLBEntry: the probe's index is va >> 7. */
typedef struct TlbEntry {
    uint64_t addr_read;     /* page | flags for loads (and LR) */
    uint64_t addr_write;    /* for stores and AMOs */
    uint64_t addr_code;     /* for fetches */
    uint64_t addend;        /* host address - virtual address (RAM pages) */
} TlbEntry;

#define TLB_ENTRY_BITS 5
_Static_assert(sizeof(TlbEntry) == 1u << TLB_ENTRY_BITS, "the probe scales the page number by 32");

/* What translated code reads of one TLB: the byte mask of an index and the
 * table (QEMU's CPUTLBDescFast). */
typedef struct TlbFast {
    uint64_t mask;          /* (entries - 1) << TLB_ENTRY_BITS */
    TlbEntry *table;
} TlbFast;

/* TLB indexes (the mode's privilege views; system/sys_mem.c): U, S, S with
 * mstatus.SUM, M. */
enum { TLB_IDX_U, TLB_IDX_S, TLB_IDX_SUM, TLB_IDX_M, TLB_NIDX };

#endif
