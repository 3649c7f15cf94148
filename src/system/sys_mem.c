/*
 * System mode's side of the guest memory interface (see sys_mem.h).
 *
 * guest_mem.limit is 0, so the interpreter sends every access here. An
 * access is translated page by page (hart TLB, else mmu_translate) to a
 * physical address, which is RAM (a host pointer), a device register
 * (machine_find_mmio) or nothing (an access fault, logged under -d
 * guest_errors). An access that crosses a page is done byte by byte, each
 * byte translated on its own page, so a fault names the first byte that
 * faults. Fetches and AMOs need RAM. A superpage is cached as the 4 KiB
 * entries used, so a one-address flush inside one empties the TLB.
 *
 * PMP (riscv/pmp.h) is checked here, on the physical address, for every
 * access at the privilege it is made with (MPRV applied): at a TLB fill,
 * whose entry then keeps the answer if PMP gives it for the whole page,
 * and otherwise at every access through that entry. A refused access is
 * an access fault (logged under -d mmu).
 */
#include "system/sys_mem.h"

#include <stdio.h>
#include <string.h>

#include "exec/settings.h"
#include "riscv/mmu.h"
#include "riscv/pmp.h"
#include "system/hart.h"
#include "system/machine.h"

uint64_t *sys_phys_u64(uint64_t pa)
{
    return (pa & 7) ? NULL : machine_ram_ptr(pa, 8);
}

/*
 * The virtual addresses that superpage translations in each hart's TLB
 * cover since its last full flush (lo > hi: none). The TLB holds them as
 * 4 KiB entries, and one leaf PTE maps all of a superpage's, so an
 * sfence.vma of one address inside drops the whole TLB.
 */
static struct { uint64_t lo, hi; } super_span[MACHINE_MAX_HARTS];

void sys_tlb_flush(CPUState *cpu, bool all, uint64_t vaddr)
{
    Hart *h = hart_of(cpu);
    if (!all && vaddr - super_span[h->id].lo <= super_span[h->id].hi - super_span[h->id].lo)
        all = true;
    if (all) {
        memset(h->tlb, 0xff, sizeof h->tlb);
        super_span[h->id].lo = UINT64_MAX;
        super_span[h->id].hi = 0;
        return;
    }
    SysTlbEntry *e = &h->tlb[(vaddr >> 12) % SYS_TLB_SIZE];
    if (e->vpage == vaddr >> 12)
        e->vpage = UINT64_MAX;
}

static void note_superpage(const Hart *h, uint64_t va, uint64_t page_mask)
{
    uint64_t lo = va & ~page_mask, hi = lo + page_mask;
    if (lo < super_span[h->id].lo)
        super_span[h->id].lo = lo;
    if (hi > super_span[h->id].hi)
        super_span[h->id].hi = hi;
}

static const char *access_name(enum mem_access access)
{
    return access == MEM_FETCH ? "fetch" : access == MEM_LOAD ? "load" : "store";
}

static bool no_memory(uint64_t va, uint64_t pa, enum mem_access access, MemFault *fault)
{
    xlat_log(LOG_GUEST_ERRORS, "xlat-system: %s at physical %#llx (virtual %#llx): nothing there\n",
             access_name(access), (unsigned long long)pa, (unsigned long long)va);
    *fault = (MemFault){ .kind = MEM_FAULT_BUS, .access = (uint8_t)access, .addr = va };
    return false;
}

/* Does PMP let an access of size bytes at physical pa through? If not, an
 * access fault. *page_wide (if wanted): the answer holds for the page. */
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

/* A TLB miss: walk, check PMP, and fill e. PMP's answer is kept with the
 * entry when it holds for the whole page; otherwise the entry says so and
 * every access through it is checked (lookup). */
static const SysTlbEntry *fill(CPUState *cpu, SysTlbEntry *e, uint64_t va, unsigned size,
                               enum mem_access access, int mode, MemFault *fault)
{
    Hart *h = hart_of(cpu);
    MmuResult r;
    if (!mmu_translate(cpu, va, access, sys_phys_u64, &r, fault)) {
        xlat_log(LOG_MMU, "mmu: %s %s fault at %#llx (pc %#llx)\n", access_name(access),
                 fault->kind == MEM_FAULT_BUS ? "access" : "page", (unsigned long long)va,
                 (unsigned long long)cpu->pc);
        return NULL;
    }
    bool page_wide;
    if (!pmp_allows(cpu, va, r.pa, size, access, mode, &page_wide, fault))
        return NULL;
    uint64_t pa_page = r.pa >> 12;
    uint8_t *host = machine_ram_ptr(pa_page << 12, 4096);
    if (!host && !machine_find_mmio(r.pa)) {
        no_memory(va, r.pa, access, fault);
        return NULL;
    }
    if (r.page_mask > 0xfff)
        note_superpage(h, va, r.page_mask);
    bool same = e->vpage == va >> 12 && e->mode == mode && e->pa_page == pa_page;
    *e = (SysTlbEntry){ .vpage = va >> 12, .pa_page = pa_page, .host = host,
                        .mode = (uint8_t)mode, .pmp_exact = !page_wide,
                        .allow = (uint8_t)((same ? e->allow : 0) | (1u << access)) };
    return e;
}

/* The TLB entry of va for an access of size bytes (inside one page),
 * walking and filling on a miss; NULL with *fault if the access faults. */
static const SysTlbEntry *lookup(CPUState *cpu, uint64_t va, unsigned size,
                                 enum mem_access access, MemFault *fault)
{
    Hart *h = hart_of(cpu);
    int mode = mmu_effective_mode(cpu, access);
    SysTlbEntry *e = &h->tlb[(va >> 12) % SYS_TLB_SIZE];
    if (!(e->vpage == va >> 12 && e->mode == mode && (e->allow & (1u << access))))
        return fill(cpu, e, va, size, access, mode, fault);
    if (e->pmp_exact &&
        !pmp_allows(cpu, va, e->pa_page << 12 | (va & 0xfff), size, access, mode, NULL, fault))
        return NULL;
    return e;
}

/* A device register access at physical pa (within one region). */
static bool mmio(uint64_t va, uint64_t pa, unsigned size, bool store, uint64_t *val,
                 MemFault *fault)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r || pa + size - r->base > r->size)
        return no_memory(va, pa, store ? MEM_STORE : MEM_LOAD, fault);
    if (store)
        r->ops->write(r->opaque, pa - r->base, size, *val);
    else
        *val = r->ops->read(r->opaque, pa - r->base, size);
    return true;
}

/* One access inside one page. */
static bool access_page(CPUState *cpu, uint64_t va, unsigned size, bool store, uint64_t *val,
                        MemFault *fault)
{
    const SysTlbEntry *e = lookup(cpu, va, size, store ? MEM_STORE : MEM_LOAD, fault);
    if (!e)
        return false;
    uint64_t off = va & 0xfff;
    if (!e->host)
        return mmio(va, (e->pa_page << 12) | off, size, store, val, fault);
    if (store)
        memcpy(e->host + off, val, size);       /* little-endian host */
    else {
        *val = 0;
        memcpy(val, e->host + off, size);
    }
    return true;
}

static bool sys_access(CPUState *cpu, uint64_t va, unsigned size, bool store, uint64_t *val,
                       MemFault *fault)
{
    if ((va & 0xfff) + size <= 0x1000)
        return access_page(cpu, va, size, store, val, fault);
    uint8_t bytes[8];
    if (store)
        memcpy(bytes, val, 8);
    else {
        /* Loads: fault before any byte is used. */
        memset(bytes, 0, 8);
    }
    for (unsigned i = 0; i < size; i++) {
        uint64_t b = bytes[i];
        if (!access_page(cpu, va + i, 1, store, &b, fault))
            return false;
        bytes[i] = (uint8_t)b;
    }
    if (!store) {
        *val = 0;
        memcpy(val, bytes, size);
    }
    return true;
}

static bool sys_load(CPUState *cpu, uint64_t addr, unsigned size, uint64_t *val, MemFault *f)
{
    return sys_access(cpu, addr, size, false, val, f);
}

static bool sys_store(CPUState *cpu, uint64_t addr, unsigned size, uint64_t val, MemFault *f)
{
    return sys_access(cpu, addr, size, true, &val, f);
}

static void *sys_slow(CPUState *cpu, uint64_t addr, unsigned size, enum mem_access access,
                      MemFault *fault)
{
    /* never across a page (guest_mem.h) */
    const SysTlbEntry *e = lookup(cpu, addr, size, access, fault);
    if (!e)
        return NULL;
    if (!e->host) {
        no_memory(addr, e->pa_page << 12, access, fault);
        return NULL;
    }
    return e->host + (addr & 0xfff);
}

static bool sys_code_ok(const CPUState *cpu, uint64_t addr, uint64_t len)
{
    /* The interpreter's fetch is translated (and checked) at every
     * instruction; this is only its cache's note. */
    (void)cpu;
    (void)addr;
    (void)len;
    return true;
}

/* The hart this thread runs, whose view of memory the logs read. */
static __thread CPUState *thread_cpu;

void sys_mem_bind_thread(CPUState *cpu)
{
    thread_cpu = cpu;
}

/* The logs' read (-d in_asm): the bound hart's virtual addresses, as a
 * debugger sees them (no faults, no A/D updates, RAM only). */
static int sys_read(void *dst, uint64_t addr, size_t len)
{
    return thread_cpu && sys_debug_access(thread_cpu, addr, dst, len, false) == len ? 0 : -1;
}

size_t sys_debug_access(CPUState *cpu, uint64_t va, void *buf, size_t len, bool write)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = va + done;
        MmuResult r;
        if (!mmu_translate_debug(cpu, a, sys_phys_u64, &r))
            break;
        size_t chunk = 0x1000 - (a & 0xfff);
        chunk = chunk < len - done ? chunk : len - done;
        uint8_t *host = machine_ram_ptr(r.pa, chunk);
        if (!host)
            break;                          /* devices: reads may have effects */
        if (write)
            memcpy(host, (const uint8_t *)buf + done, chunk);
        else
            memcpy((uint8_t *)buf + done, host, chunk);
        done += chunk;
    }
    return done;
}

static void no_lock(void) {}
static void no_watch(uint64_t page) { (void)page; }
static bool no_unwatch(uint64_t page, bool remapped) { (void)page; (void)remapped; return false; }

static const GuestMemOps sys_ops = {
    .load = sys_load,
    .store = sys_store,
    .slow = sys_slow,
    .code_ok = sys_code_ok,
    .read = sys_read,
    .code_lock = no_lock,
    .code_unlock = no_lock,
    .code_watch = no_watch,
    .code_unwatch = no_unwatch,
    .fork_prepare = no_lock,
    .fork_parent = no_lock,
    .fork_child = no_lock,
};

static void mmu_changed(CPUState *cpu, bool all, uint64_t vaddr)
{
    sys_tlb_flush(cpu, all, vaddr);
}

void sys_mem_init(void)
{
    guest_mem = (GuestMem){ .base = NULL, .limit = 0, .ops = &sys_ops };
    priv_hooks.time = machine_mtime;
    priv_hooks.mmu_changed = mmu_changed;
}
