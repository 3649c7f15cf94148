/*
 * The page walk (see mmu.h). Levels and their checks follow the
 * privileged spec's algorithm (4.3.2), one level of 9 VPN bits at a time
 * from the root in satp.
 */
#include "riscv/mmu.h"

#define PTE_PPN_SHIFT 10
#define PTE_PPN_MASK  ((1ULL << 44) - 1)
#define PTE_RESERVED  (0x7fULL << 54)       /* bits 60:54 */
#define PTE_PBMT      (3ULL << 61)          /* Svpbmt: absent, so reserved */
#define PTE_N         (1ULL << 63)          /* Svnapot: absent, so reserved */

int mmu_effective_mode(const CPUState *cpu, enum mem_access access)
{
    const RiscvPriv *p = &cpu->priv;
    if (access != MEM_FETCH && p->mode == PRV_M && (p->mstatus & MSTATUS_MPRV))
        return (int)((p->mstatus & MSTATUS_MPP) >> 11);
    return p->mode;
}

static bool page_fault(MemFault *f, uint64_t va, enum mem_access access)
{
    *f = (MemFault){ .kind = MEM_FAULT_PROT, .access = (uint8_t)access, .addr = va };
    return false;
}

static bool access_fault(MemFault *f, uint64_t va, enum mem_access access)
{
    *f = (MemFault){ .kind = MEM_FAULT_BUS, .access = (uint8_t)access, .addr = va };
    return false;
}

/* Does leaf pte allow access at privilege mode? */
static bool leaf_allows(const CPUState *cpu, uint64_t pte, enum mem_access access, int mode)
{
    uint64_t st = cpu->priv.mstatus;
    if (mode == PRV_U && !(pte & PTE_U))
        return false;
    if (mode == PRV_S && (pte & PTE_U) && (access == MEM_FETCH || !(st & MSTATUS_SUM)))
        return false;
    switch (access) {
    case MEM_FETCH: return pte & PTE_X;
    case MEM_LOAD:  return (pte & PTE_R) || ((st & MSTATUS_MXR) && (pte & PTE_X));
    default:        return (pte & PTE_W) != 0;       /* stores and AMOs */
    }
}

/* The entry pte with A (and D for a write) set. */
static uint64_t with_ad(uint64_t pte, enum mem_access access)
{
    return pte | PTE_A | (access == MEM_STORE || access == MEM_AMO ? PTE_D : 0);
}

/* Write want into the entry at *slot if it still holds pte. */
static bool update_ad(uint64_t *slot, uint64_t pte, uint64_t want)
{
    if (want == pte)
        return true;
    return __atomic_compare_exchange_n(slot, &pte, want, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

/* The host slot of the page-table entry at physical pa, or NULL (an access
 * fault) if there is no RAM there or PMP refuses the walk's read of it: the
 * walk's own accesses are checked as S-mode ones (privileged spec 3.7.1).
 * A debugger's look (debug) is not the hart's access: PMP does not apply. */
static uint64_t *pte_slot(const CPUState *cpu, PageTableMem mem, uint64_t pa, bool debug)
{
    uint64_t *slot = mem(pa);
    return slot && (debug || pmp_check(&cpu->priv.pmp, PRV_S, pa, 8, MEM_LOAD)) ? slot : NULL;
}

/*
 * The walk of va from satp for access at privilege mode. debug (a
 * debugger's look): no permission check and no A/D update, so the guest's
 * page tables stay as they were; only the entries' validity counts.
 */
static bool walk(CPUState *cpu, uint64_t va, enum mem_access access, int mode, bool debug,
                 PageTableMem mem, MmuResult *out, MemFault *fault)
{
    uint64_t satp = cpu->priv.satp;
    unsigned smode = (unsigned)(satp >> 60);
    int levels = smode == SATP_SV39 ? 3 : smode == SATP_SV48 ? 4 : 5;
    unsigned va_bits = 12 + 9 * (unsigned)levels;
    /* Bits above the top VPN must all equal its top bit. */
    int64_t top = (int64_t)va >> (va_bits - 1);
    if (top != 0 && top != -1)
        return page_fault(fault, va, access);

    for (;;) {
        uint64_t base = (satp & PTE_PPN_MASK) << 12;
        /* A global pointer makes every mapping under it global (4.3.1). */
        bool global = false;
        for (int level = levels - 1; level >= 0; level--) {
            uint64_t vpn = (va >> (12 + 9 * level)) & 0x1ff;
            uint64_t pte_pa = base + vpn * 8;
            uint64_t *slot = pte_slot(cpu, mem, pte_pa, debug);
            if (!slot)
                return access_fault(fault, va, access);
            uint64_t pte = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            if (!(pte & PTE_V) || (!(pte & PTE_R) && (pte & PTE_W)) ||
                (pte & (PTE_RESERVED | PTE_PBMT | PTE_N)))
                return page_fault(fault, va, access);
            uint64_t ppn = (pte >> PTE_PPN_SHIFT) & PTE_PPN_MASK;
            global |= (pte & PTE_G) != 0;
            if (!(pte & (PTE_R | PTE_X))) {             /* a pointer to the next level */
                if (level == 0 || (pte & (PTE_A | PTE_D | PTE_U)))
                    return page_fault(fault, va, access);
                base = ppn << 12;
                continue;
            }
            uint64_t span = 1ULL << (12 + 9 * level);
            if (level > 0 && (ppn & ((1ULL << (9 * level)) - 1)))
                return page_fault(fault, va, access);   /* misaligned superpage */
            if (!debug && !leaf_allows(cpu, pte, access, mode))
                return page_fault(fault, va, access);
            uint64_t want = debug ? pte : with_ad(pte, access);
            if (want != pte && !pmp_check(&cpu->priv.pmp, PRV_S, pte_pa, 8, MEM_STORE))
                return access_fault(fault, va, access);
            if (!update_ad(slot, pte, want))
                goto again;                             /* changed under us: walk again */
            out->pa = (ppn << 12) | (va & (span - 1));
            out->page_mask = span - 1;
            out->global = global;
            return true;
        }
        return page_fault(fault, va, access);
    again:;
    }
}

/* va at the privilege access has now: untranslated in M-mode or with
 * paging off, else walked (debug: see walk). */
static bool translate(CPUState *cpu, uint64_t va, enum mem_access access, bool debug,
                      PageTableMem mem, MmuResult *out, MemFault *fault)
{
    int mode = mmu_effective_mode(cpu, access);
    out->mode = mode;
    /* Untranslated addresses are no address space's: satp.MODE changes
     * from Bare take effect at once. */
    out->global = false;
    if (mode == PRV_M || (cpu->priv.satp >> 60) == SATP_BARE) {
        out->pa = va;
        out->page_mask = 0xfff;
        return true;
    }
    return walk(cpu, va, access, mode, debug, mem, out, fault);
}

bool mmu_translate(CPUState *cpu, uint64_t va, enum mem_access access, PageTableMem mem,
                   MmuResult *out, MemFault *fault)
{
    return translate(cpu, va, access, false, mem, out, fault);
}

bool mmu_translate_debug(CPUState *cpu, uint64_t va, PageTableMem mem, MmuResult *out)
{
    MemFault fault;
    return translate(cpu, va, MEM_LOAD, true, mem, out, &fault);
}
