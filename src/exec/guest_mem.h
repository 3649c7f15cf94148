/*
 * Guest memory as the execution core sees it: the one interface between the
 * core (interpreter, translator, dispatcher: src/riscv, src/exec, src/x86)
 * and a mode (user mode: src/user; system mode: src/system, later).
 *
 * The direct window. Guest address A with A < guest_mem.limit is the host
 * byte guest_mem.base + A. Interpreted and translated accesses check only
 * this and go straight to host memory; a mode that can fault there (user
 * mode: an unmapped or protected page of the window) catches the host fault
 * and leaves through guest_fault (below). Every access outside the window
 * goes to the mode: ops->load/store for loads and stores (a device
 * register has no host address), ops->slow for accesses that need memory
 * (the host address to use, or a MemFault).
 * User mode's window is the whole guest address space (user/mm.h), so its
 * slow path only ever faults; a mode with no window (limit 0) serves every
 * access there.
 *
 * A fault is mode-neutral: what went wrong, for which access, at which
 * address (MemFault). The core only records it in cpu->fault and returns
 * EXIT_FAULT; each mode maps it to its own outcome (user mode: a signal and
 * its si_code, fault.c; system mode: an exception cause and tval).
 *
 * Code. The core reads guest code only where ops->code_ok says it may be
 * fetched, holding ops->code_lock while it translates; it tells the mode
 * which pages hold translated code (ops->code_watch), so that the mode can
 * report writes to them (exec_code_written, exec.h).
 */
#ifndef XLAT_EXEC_GUEST_MEM_H
#define XLAT_EXEC_GUEST_MEM_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a guest access does. */
enum mem_access { MEM_LOAD, MEM_STORE, MEM_AMO, MEM_FETCH };

/* What went wrong (the user-mode and machine outcomes in brackets). */
enum mem_fault_kind {
    MEM_FAULT_NONE,
    MEM_FAULT_UNMAPPED,     /* nothing there [SEGV_MAPERR; page fault] */
    MEM_FAULT_PROT,         /* mapped, not for this access [SEGV_ACCERR, or
                             * MAPERR if the mode finds nothing mapped; page fault] */
    MEM_FAULT_BUS,          /* mapped, no memory behind it [BUS_ADRERR; access fault] */
    MEM_FAULT_MISALIGNED,   /* LR/SC/AMO not naturally aligned [BUS_ADRALN; misaligned] */
};

typedef struct MemFault {
    uint8_t  kind;          /* enum mem_fault_kind */
    uint8_t  access;        /* enum mem_access */
    uint64_t addr;          /* the guest address that faulted */
} MemFault;

struct CPUState;
struct PcacheOrigin;

typedef struct GuestMemOps {
    /* A load or store of size bytes (1, 2, 4, 8; any alignment) outside
     * the direct window: the value (zero-extended) or false with *fault
     * filled in. Device registers are reached through these. */
    bool (*load)(struct CPUState *cpu, uint64_t addr, unsigned size, uint64_t *val,
                 MemFault *fault);
    bool (*store)(struct CPUState *cpu, uint64_t addr, unsigned size, uint64_t val,
                  MemFault *fault);
    /* Host address of [addr, addr+size) outside the direct window for an
     * access that needs memory (a fetch, an LR/SC/AMO; never across a
     * page), or NULL with *fault filled in. */
    void *(*slow)(struct CPUState *cpu, uint64_t addr, unsigned size, enum mem_access access,
                  MemFault *fault);
    /* A mode with a softmmu TLB (exec/softmmu.h): translated code's probe
     * of a load or store (MEM_LOAD, MEM_STORE) of size bytes at addr, in
     * TLB tlb_idx, missed. Fill the entry so that the probe hits if the access is to
     * plain RAM now: true; else false (a fault, a device, a watched code
     * page, PMP, a page crossing: the slow path takes the instruction),
     * with nothing raised or logged. */
    bool (*probe_fill)(struct CPUState *cpu, uint64_t addr, unsigned size,
                       enum mem_access access, unsigned tlb_idx);
    /* May cpu fetch the bytes [addr, addr+len) as instructions? */
    bool (*code_ok)(const struct CPUState *cpu, uint64_t addr, uint64_t len);
    /* Where the code at virtual addr is for cpu (the TB key's phys); false
     * if it cannot be fetched. NULL: the identity (user mode). */
    bool (*code_phys)(const struct CPUState *cpu, uint64_t addr, uint64_t *phys);
    /* The host address of the code at phys (a TB key's, code_phys said
     * so); the bytes up to the end of its page follow it. NULL: the
     * window's base + phys. */
    const void *(*code_host)(uint64_t phys);
    /* Is the code at virtual addr mapped alike in every address space of
     * cpu's group (exec_space_changed; a global page)? NULL: never. */
    bool (*code_global)(const struct CPUState *cpu, uint64_t addr);
    /* The file the code at addr comes from, for the persistent translation
     * cache (exec/pcache.h); false if none. NULL: never (system mode). */
    bool (*code_origin)(uint64_t addr, struct PcacheOrigin *o);
    /* Copy guest bytes for the logs (-d in_asm): 0, or negative if unreadable. */
    int (*read)(void *dst, uint64_t addr, size_t len);
    /* Held around a translation (code_ok and the reads of the code stay
     * true meanwhile). Taken before the core's own locks. */
    void (*code_lock)(void);
    void (*code_unlock)(void);
    /* With the TB lock held: a translation now holds code of guest page
     * `page`; the mode must report writes to it (exec_code_written). */
    void (*code_watch)(uint64_t page);
    /* With the TB lock held: stop watching page; true if it was watched
     * (its TBs are then dropped). remapped: the mode changed the page's
     * mapping and set its protection itself (forget the watch only). */
    bool (*code_unwatch)(uint64_t page, bool remapped);
    /* fork(): code_lock's owner prepares, and both sides recover (called
     * inside the core's pthread_atfork handlers, in lock order). */
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
} GuestMemOps;

typedef struct GuestMem {
    uint8_t *base;          /* host address of guest address 0 (may be NULL) */
    uint64_t limit;         /* the window is [0, limit); 0: no window */
    /* No window, and translated code probes the vCPU's softmmu TLBs
     * (exec/softmmu.h) instead. Such a mode also reports every store to a
     * watched page, device DMA included, so fence.i needs no flush; and
     * since its pcs are virtual, direct chains stay inside one page. */
    bool softmmu;
    const GuestMemOps *ops;
} GuestMem;

/* Set by the mode before exec_init and before any guest code runs. */
extern GuestMem guest_mem;

static inline bool guest_mem_in_window(uint64_t addr, uint64_t len)
{
    return addr < guest_mem.limit && len <= guest_mem.limit - addr;
}

/* Host address of guest code at phys (a TB key's physical address, which
 * code_ok accepted): the translator's reads. User mode: inside the window. */
static inline const void *guest_mem_code(uint64_t phys)
{
    return guest_mem.ops->code_host ? guest_mem.ops->code_host(phys) : guest_mem.base + phys;
}

/*
 * Leaving a guest access that faulted in host memory. The core arms jmp
 * around running guest code (one sigsetjmp per run, not per access); the
 * mode's host fault handler fills fault and siglongjmps to *jmp after
 * clearing it. jmp is NULL outside guest accesses.
 */
typedef struct GuestFaultFrame {
    sigjmp_buf *jmp;
    MemFault fault;
} GuestFaultFrame;

extern __thread GuestFaultFrame guest_fault;

#endif
