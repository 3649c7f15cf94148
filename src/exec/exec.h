/*
 * The execution core: runs guest code through the translator (src/riscv/
 * translate.c, src/x86/) and the translation-block cache (src/exec/).
 *
 * exec_run() has the contract of interp_run(): run from cpu->pc until the
 * execution loop is needed, and return why, with cpu->pc exact.
 *
 * The other entry points are hooks for the OS layer: invalidation when
 * executable guest memory changes, host faults inside translated code, and
 * writes to write-protected pages that hold translated code.
 */
#ifndef XLAT_EXEC_EXEC_H
#define XLAT_EXEC_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"

/* Set up the code cache (once, after mm_init). */
void exec_init(void);

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

/* Forget the calling thread's jump cache; call before its CPUState dies. */
void exec_thread_exit(CPUState *cpu);

/*
 * Drop every translation of guest code in [start, start+len). Called by
 * mm.c with the mapping table write-locked when an executable range is
 * unmapped, replaced or changes protection (see exec_invalidate_code).
 */
void exec_invalidate_range(uint64_t start, uint64_t len);

/*
 * Drop the translations of [start, start+len) whose contents may have
 * changed without a store the JIT saw (riscv_flush_icache, a debugger):
 * the mapping is unchanged, so the pages keep their write protection.
 */
void exec_invalidate_code(uint64_t start, uint64_t len);

/* Drop every translation (fence.i). Must be called outside translated code. */
void exec_flush_all(void);

/*
 * Signal-handler hooks (fault.c). exec_smc_fault: a write to host address
 * addr faulted; if the page is write-protected because it holds translated
 * code, invalidate it, make it writable again and return true (retry the
 * write). exec_host_pc_in_cache: is pc inside translated code?
 * exec_fault_restore: a guest access in translated code faulted: write the
 * guest registers and exact pc into the CPUState (in the faulting thread).
 */
bool exec_smc_fault(void *addr);
bool exec_host_pc_in_cache(uint64_t pc);
void exec_fault_restore(void *ucontext);

/*
 * A host system call returned EFAULT: make every page that the JIT
 * write-protected writable again (dropping its translations), so the caller
 * can retry. Returns false if there was none (the EFAULT is real).
 */
bool exec_unprotect_all(void);

/*
 * Is the host page of guest page number `page` (address / GUEST_PAGE_SIZE)
 * read-only because the JIT protects translated code there? Lock-free, for
 * the fault handler and vfork.c, which must leave such pages to
 * exec_smc_fault.
 */
bool exec_page_write_protected(uint64_t page);

/* Counters for -d exec / stats. */
void exec_print_stats(void);

/* The process is ending (exit_group, a fatal signal): after the -d stats and
 * the other tools, the last thing it does before it goes. */
void exec_process_exit(void);

#endif
