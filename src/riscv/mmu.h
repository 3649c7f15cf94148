/*
 * Sv39, Sv48 and Sv57 address translation (privileged spec 1.12, 4.3-4.6):
 * the page walk of one access, with the checks of the effective privilege
 * (mstatus.MPRV/MPP for M-mode loads and stores), U-bit pages and SUM, MXR,
 * superpage alignment and reserved bits, and the A and D bits set in the
 * page table entry by the walk itself (as QEMU's virt harts do; Svade's
 * fault-instead is not offered).
 *
 * Page-table entries are read and written through the machine's physical
 * memory (PageTableMem); an entry outside RAM, or one PMP does not let
 * S-mode read (or write, to set A/D), is an access fault. The translated
 * address itself is not checked here: PMP on it is the caller's (pmp.h).
 */
#ifndef XLAT_RISCV_MMU_H
#define XLAT_RISCV_MMU_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"

/* The host address of the 8 bytes at physical address pa, if RAM. */
typedef uint64_t *(*PageTableMem)(uint64_t pa);

/* What a successful translation says about the page it found. */
/* Page-table entry bits (privileged spec 4.3.1). */
#define PTE_V (1ULL << 0)
#define PTE_R (1ULL << 1)
#define PTE_W (1ULL << 2)
#define PTE_X (1ULL << 3)
#define PTE_U (1ULL << 4)
#define PTE_G (1ULL << 5)
#define PTE_A (1ULL << 6)
#define PTE_D (1ULL << 7)

typedef struct MmuResult {
    uint64_t pa;            /* physical address of va */
    uint64_t page_mask;     /* size of the mapping - 1 (4 KiB, or a superpage) */
    int mode;               /* the effective privilege the check was for */
    bool global;            /* a G bit on the walk's way: in every address space */
} MmuResult;

/*
 * Translate va for access: true with *out, or false with *fault (kind
 * MEM_FAULT_PROT for a page fault, MEM_FAULT_BUS for an access fault).
 */
bool mmu_translate(CPUState *cpu, uint64_t va, enum mem_access access, PageTableMem mem,
                   MmuResult *out, MemFault *fault);

/*
 * A debugger's translation of va (gdb reading or writing guest memory):
 * as a load at the hart's current privilege would be translated (physical
 * in M-mode or with paging off), but without permission checks and
 * without setting A or D bits; false if nothing valid maps va.
 */
bool mmu_translate_debug(CPUState *cpu, uint64_t va, PageTableMem mem, MmuResult *out);

/* The privilege level whose rules an access follows (MPRV applied). */
int mmu_effective_mode(const CPUState *cpu, enum mem_access access);

#endif
