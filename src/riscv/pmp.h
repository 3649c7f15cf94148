/*
 * Physical memory protection (privileged spec 1.12, 3.7): the pmpcfg and
 * pmpaddr CSRs of a hart and the check of a physical access against them.
 *
 * A hart has PMP_ENTRIES entries, all implemented, with a granularity of
 * 4 bytes (G = 0, as QEMU's virt harts). Entry i matches the bytes of its
 * region (A = TOR: [pmpaddr[i-1], pmpaddr[i]) in units of 4 bytes; NA4:
 * 4 bytes; NAPOT: a power of two from 8 bytes, encoded in pmpaddr's low
 * ones; OFF: none). The lowest-numbered entry that matches any byte of an
 * access decides it: it must match all of them (else the access fails, in
 * any mode), and its R/W/X bits apply to S and U, and to M too when L is
 * set. An M access no entry matches succeeds; an S or U one fails.
 *
 * Each write recomputes what the check uses (every entry's region, and
 * which entries match anything), so a check is a scan of the active
 * entries only, and none when no entry is on. pmp_perms also says whether
 * its answer holds for every access inside the 4 KiB page around the
 * address, which is what lets a TLB cache the permissions of a page (the
 * interpreter's, in system/sys_mem.c; a JIT TLB later) and check only
 * pages that PMP regions split.
 *
 * The callers: system/sys_mem.c for every data access and instruction
 * fetch (after translation: physical addresses, the effective privilege
 * with MPRV applied), mmu.c for the page walk's own reads and A/D writes
 * of page-table entries (checked as S-mode accesses).
 */
#ifndef XLAT_RISCV_PMP_H
#define XLAT_RISCV_PMP_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/guest_mem.h"

#define PMP_ENTRIES 16

/* Permission bits: pmpcfg's R, W, X, and the masks pmp_perms returns. */
enum { PMP_R = 1, PMP_W = 2, PMP_X = 4, PMP_RWX = 7 };

typedef struct PmpState {
    uint8_t cfg[PMP_ENTRIES];       /* pmpcfg bytes: L 0 0 A A X W R */
    uint64_t addr[PMP_ENTRIES];     /* pmpaddr: bits 55:2 of an address */
    /* Derived from the two above at every write (pmp_csr_write): */
    uint64_t lo[PMP_ENTRIES];       /* entry i matches the bytes [lo, hi) */
    uint64_t hi[PMP_ENTRIES];
    uint32_t active;                /* bit i: entry i matches some byte */
} PmpState;

/* pmpcfg0..15 (odd ones are RV32's: false) and pmpaddr0..63: the value
 * of csr, or false if the CSR does not exist. Entries past PMP_ENTRIES
 * read 0. */
bool pmp_csr_read(const PmpState *s, unsigned csr, uint64_t *v);

/* Write csr (one that pmp_csr_read accepts), WARL: locked entries keep
 * their values, reserved encodings are refused. True if any entry
 * changed (cached permissions must then be dropped). */
bool pmp_csr_write(PmpState *s, unsigned csr, uint64_t v);

/* One entry (0) covering all memory with R, W and X for S and U: what
 * firmware leaves for a kernel it starts (xlat's own SBI). */
void pmp_open_all(PmpState *s);

/*
 * The permissions (PMP_R/W/X) an access of privilege priv (PRV_U, PRV_S,
 * PRV_M) has to the size bytes at physical address pa. *page_wide is set
 * if every access of that privilege inside pa's 4 KiB page gets the same
 * answer (one entry, or none, covers all of the page and no lower entry
 * touches it).
 */
unsigned pmp_perms(const PmpState *s, int priv, uint64_t pa, uint64_t size, bool *page_wide);

/* Is this access allowed? (pmp_perms for one access kind.) */
bool pmp_check(const PmpState *s, int priv, uint64_t pa, uint64_t size, enum mem_access access);

/* The permission bits an access kind needs (AMOs read and write; LR is a
 * load). */
static inline unsigned pmp_need(enum mem_access access)
{
    switch (access) {
    case MEM_LOAD:  return PMP_R;
    case MEM_STORE: return PMP_W;
    case MEM_AMO:   return PMP_R | PMP_W;
    default:        return PMP_X;
    }
}

#endif
