/*
 * System mode's guest memory for the execution core (exec/guest_mem.h):
 * no direct window; every access is translated (riscv/mmu.c) through the
 * hart's softmmu TLBs (tlb.h) and reaches RAM or a device register.
 */
#ifndef XLAT_SYSTEM_SYS_MEM_H
#define XLAT_SYSTEM_SYS_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "riscv/cpu.h"

/* Fill in guest_mem and priv_hooks for the machine (after RAM exists). */
void sys_mem_init(void);

/* Physical memory for the page walk and the loaders: 8 bytes at pa. */
uint64_t *sys_phys_u64(uint64_t pa);

/* A debugger's access to cpu's virtual memory (gdb): translated as a load
 * at the current privilege would be, without permission checks, faults or
 * A/D updates (mmu_translate_debug); RAM only, never a device register.
 * The bytes done, from the start: fewer at the first that is not RAM. */
size_t sys_debug_access(CPUState *cpu, uint64_t va, void *buf, size_t len, bool write);

/* The calling thread runs cpu: the logs (-d in_asm) read memory as it sees
 * it. */
void sys_mem_bind_thread(CPUState *cpu);

#endif
