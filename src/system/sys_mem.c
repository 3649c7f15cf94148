/*
 * System mode's side of the guest memory interface (see sys_mem.h).
 *
 * guest_mem.limit is 0: the interpreter sends every access here, and
 * translated code probes the hart's TLBs inline (guest_mem.softmmu) and
 * comes here through the interpreter when the probe misses. An access is
 * translated page by page through the hart's TLB (tlb.c: walk, PMP, fill)
 * to RAM (a host pointer) or a device register (machine_find_mmio). An
 * access that crosses a page is done byte by byte, each byte translated on
 * its own page, so a fault names the first byte that faults. Fetches and
 * AMOs need RAM. A store to a page holding translated code reports it to
 * the core (exec_code_written) before it stores.
 */
#include "system/sys_mem.h"

#include <stdio.h>
#include <string.h>

#include "exec/settings.h"
#include "exec/exec.h"
#include "riscv/mmu.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/tlb.h"

uint64_t *sys_phys_u64(uint64_t pa)
{
    return (pa & 7) ? NULL : machine_ram_ptr(pa, 8);
}

/* A device register access at physical pa (within one region). */
static bool mmio(uint64_t va, uint64_t pa, unsigned size, bool store, uint64_t *val,
                 MemFault *fault)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r || pa + size - r->base > r->size)
        return tlb_access_fault(va, pa, store ? MEM_STORE : MEM_LOAD, "nothing there", fault);
    if (store)
        r->ops->write(r->opaque, pa - r->base, size, *val);
    else
        *val = r->ops->read(r->opaque, pa - r->base, size);
    return true;
}

/* The translation of an access inside one page; a store to code reports
 * it first. */
static bool translate_access(CPUState *cpu, uint64_t va, unsigned size, enum mem_access access,
                             TlbHit *hit, MemFault *fault)
{
    if (!tlb_lookup(cpu, va, size, access, hit, fault))
        return false;
    if (hit->code)
        exec_code_written(hit->pa >> 12);
    return true;
}

/* One access inside one page. */
static bool access_page(CPUState *cpu, uint64_t va, unsigned size, bool store, uint64_t *val,
                        MemFault *fault)
{
    TlbHit hit;
    if (!translate_access(cpu, va, size, store ? MEM_STORE : MEM_LOAD, &hit, fault))
        return false;
    if (!hit.host)
        return mmio(va, hit.pa, size, store, val, fault);
    if (store)
        memcpy(hit.host, val, size);       /* little-endian host */
    else {
        *val = 0;
        memcpy(val, hit.host, size);
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
    TlbHit hit;
    if (!translate_access(cpu, addr, size, access, &hit, fault))
        return NULL;
    if (!hit.host) {
        tlb_access_fault(addr, hit.pa, access, "not memory", fault);
        return NULL;
    }
    return hit.host;
}

static bool sys_code_ok(const CPUState *cpu, uint64_t addr, uint64_t len)
{
    /* The interpreter's fetch is translated (and checked) at every
     * instruction, and a translation's pc through code_phys. */
    (void)cpu;
    (void)addr;
    (void)len;
    return true;
}

/* The TB key's physical address of the code at va: a fetch translation
 * (which fills the TLB's code tag); false if va cannot be fetched (the
 * interpreter then raises the exact fault). */
static bool sys_code_phys(const CPUState *cpu, uint64_t va, uint64_t *phys)
{
    TlbHit hit;
    MemFault f;
    if (!tlb_lookup((CPUState *)cpu, va, 2, MEM_FETCH, &hit, &f) || !hit.host)
        return false;
    *phys = hit.pa;
    return true;
}

static const void *sys_code_host(uint64_t phys)
{
    return machine_ram_ptr(phys, 2);
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
        if (write) {
            memcpy(host, (const uint8_t *)buf + done, chunk);
            tlb_dma_written(r.pa, chunk);       /* a breakpoint's ebreak, patched code */
        }
        else
            memcpy((uint8_t *)buf + done, host, chunk);
        done += chunk;
    }
    return done;
}

static void no_lock(void) {}

static const GuestMemOps sys_ops = {
    .load = sys_load,
    .store = sys_store,
    .slow = sys_slow,
    .probe_fill = tlb_probe_fill,
    .code_ok = sys_code_ok,
    .code_phys = sys_code_phys,
    .code_host = sys_code_host,
    .code_global = tlb_code_global,
    .read = sys_read,
    .code_lock = no_lock,
    .code_unlock = no_lock,
    .code_watch = tlb_code_watch,
    .code_unwatch = tlb_code_unwatch,
    .fork_prepare = no_lock,
    .fork_parent = no_lock,
    .fork_child = no_lock,
};

void sys_mem_init(void)
{
    guest_mem = (GuestMem){ .base = NULL, .limit = 0, .softmmu = true, .ops = &sys_ops };
    priv_hooks.time = machine_mtime;
    priv_hooks.mmu_changed = tlb_flush;
    priv_hooks.satp_changed = tlb_satp_changed;
    priv_hooks.sfence = tlb_sfence;
}
