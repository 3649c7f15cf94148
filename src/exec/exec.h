/*
 * The JIT core, as a mode (user mode, system mode) drives it. It runs guest
 * code through the translator (src/riscv/translate.c, src/x86/) and the TB
 * cache; guest memory reaches it through exec/guest_mem.h, which the mode
 * sets up first.
 *
 * exec_run() has the contract of interp_run(): run from cpu->pc until the
 * mode's loop is needed, and return why, with cpu->pc exact.
 */
#ifndef XLAT_EXEC_EXEC_H
#define XLAT_EXEC_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "riscv/cpu.h"

/* The host's CLOCK_MONOTONIC, in ns. */
static inline uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* size bytes of zero memory, mapped without reserving swap (pages are
 * touched as they are used); exits with a message if mmap fails. */
void *map_noreserve(size_t size);

/* Make the pages of [p, p + len) present and written, in one call: for
 * tables that every process touches all of. A lookup in a fresh table
 * reads a page before it writes it, two faults a page, each microseconds
 * in a VM; populating costs about one. */
void prefault(void *p, size_t len);

/* A large static array, placed after .bss (in .lbss): the small variables
 * every process writes then share a few pages of .bss, where arrays in
 * between gave most of them a page, and a fault, each (14 of a warm
 * /usr/bin/true start). For arrays most processes never touch, or populate
 * whole (prefault). */
#define LARGE_BSS __attribute__((section(".lbss")))
/* A table populated at a start begins a page: unaligned, its last part
 * costs a page more. */
#define PAGE_ALIGNED __attribute__((aligned(4096)))

/*
 * An area filled from its start onwards (the code buffer's two parts, the
 * TB pool, the pcmap), populated ahead of its use: one prefault of a
 * growing step instead of a page fault per page. A warm python3 start
 * installs 5 MB of code and 30,000 TBs, ~3,500 faults at ~1.8 us each in a
 * VM. Each step is half what the area has populated already (16 KiB to
 * 1 MiB), so at most a third of what is populated goes unused (a warm
 * /usr/bin/true's 221 TBs, 64 KiB, had 128 KiB populated with whole steps).
 * A use that jumps ahead (a start image's code, copied at once) is covered
 * exactly, and does not count towards the step: an image of 2 MB says
 * nothing of how much more code the process will write.
 */
typedef struct Frontier {
    uint8_t *base;
    size_t size;            /* the area's bytes */
    size_t populated;       /* [base, base + populated) is (or once was) */
    size_t margin;          /* the most one use may write past what is used */
    size_t jumped;          /* of populated: covered by frontier_cover */
} Frontier;
/* The area's first used bytes are in use: populate the next step when they
 * near the populated end. */
void frontier_advance(Frontier *f, size_t used);
/* The area's first used bytes are about to be written at once: populate
 * up to there. */
void frontier_cover(Frontier *f, size_t used);

/* Set up the code cache (once, after guest_mem). */
void exec_init(void);

/*
 * A vCPU's exec state (jump cache, the interpreter's decode cache, the
 * window limit translated code checks): exec_cpu_init before its first
 * run, on any thread (a CPUState copied from another vCPU shares nothing
 * after it), exec_cpu_exit before its CPUState dies. Works with or without
 * exec_init (the interpreter alone).
 */
void exec_cpu_init(CPUState *cpu);
void exec_cpu_exit(CPUState *cpu);

enum exit_reason exec_run(CPUState *cpu);

/*
 * Make cpu's thread leave translated code soon, after setting
 * cpu->exit_request (or jit_kick): poisons its jump-cache probe so the next
 * indirect exit misses into the loop (--tune poison). Async-signal-safe.
 */
void exec_kick(CPUState *cpu);

/*
 * Before a guest fork: translate the blocks earlier forked children of this
 * program reported (--tune fork-warm), so the next child inherits them.
 */
void exec_before_fork(void);

/*
 * Drop every translation of guest code in the physical range [start,
 * start+len) (user mode: guest addresses). Called by the mode, with its
 * memory lock held, when an executable range is unmapped, replaced or
 * changes protection: its pages' watches are forgotten (code_unwatch with
 * remapped set).
 */
void exec_invalidate_range(uint64_t start, uint64_t len);

/*
 * Drop the translations of [start, start+len) whose contents may have
 * changed without a store the mode reported (riscv_flush_icache, a
 * debugger): the mapping is unchanged, so the watches stay.
 */
void exec_invalidate_code(uint64_t start, uint64_t len);

/*
 * A store reached watched page `page` (guest_mem.ops->code_watch): drop its
 * translations and its watch (code_unwatch), with no translation running
 * in between. Any thread, including a signal handler's.
 */
void exec_code_written(uint64_t page);

/*
 * A host system call must write to watched pages: unwatch every page
 * (dropping its translations). Returns false if none was watched.
 */
bool exec_unwatch_all(void);

/*
 * cpu's translation of virtual addresses changed (a softmmu TLB flush: all,
 * or the page holding vaddr): forget the jump-cache entries it may have
 * made wrong. On cpu's own thread. (Blocks are keyed by physical address
 * and stay.)
 */
void exec_mapping_changed(CPUState *cpu, bool all, uint64_t vaddr);
/* The same for the pages of [lo, hi] (a superpage: its span may be wide,
 * but the sets hold blocks of few pages in it). */
void exec_mapping_range_changed(CPUState *cpu, uint64_t lo, uint64_t hi);

/*
 * Address spaces (system mode: one per TLB slot, the mode's numbers, 0 at
 * first): a jump cache maps virtual pcs of one address space, so cpu has
 * sets per (tb_flags, space). Code in pages the mode calls global
 * (GuestMemOps.code_global) is the same in every space of one group
 * (system mode: satp.MODE), so a set that holds only such code serves the
 * whole group. exec_space_changed: space (of group, or EXEC_NO_GROUP) is
 * cpu's now (its sets become current; translated code may go on through
 * them, as after exec_flags_changed). exec_space_mapping_changed: the
 * non-global translations of space changed (all, or the page of vaddr),
 * whether or not it is cpu's now; exec_mapping_changed covers every space
 * and global code. On cpu's own thread.
 */
#define EXEC_NO_GROUP (~0u)
void exec_space_changed(CPUState *cpu, unsigned space, unsigned group);
void exec_space_mapping_changed(CPUState *cpu, unsigned space, bool all, uint64_t vaddr);

/* cpu->tb_flags changed (system mode: the privilege, SUM, FS): the jump
 * cache of the new flags becomes cpu's, on cpu's thread (translated code
 * may go on through it: priv.h's entries). */
void exec_flags_changed(CPUState *cpu);

/* Drop every translation (fence.i). Must be called outside translated code. */
void exec_flush_all(void);

/*
 * Signal-handler hooks. exec_host_pc_in_cache: is pc inside translated
 * code? exec_fault_restore: a guest access in translated code faulted:
 * write the guest registers and exact pc into the CPUState (in the
 * faulting thread).
 */
bool exec_host_pc_in_cache(uint64_t pc);
void exec_fault_restore(void *ucontext);

/* Counters for -d exec / stats. */
void exec_print_stats(void);

/* -d stats, softmmu: the loads and stores translated code has probed each
 * TLB for inline (block entries x the block's accesses: an estimate for
 * blocks left at a side exit). */
void exec_stats_accesses(uint64_t out[TLB_NIDX]);

/* The process is ending (exit_group, a fatal signal): after the -d stats and
 * the other tools, the last thing it does before it goes. */
void exec_process_exit(void);

/* The process is about to execve: keep what it translated (the persistent
 * cache's captures; exec_process_exit does the same at its end). */
void exec_before_exec(void);

#endif
