/*
 * The Linux system call layer (user mode).
 */
#ifndef XLAT_USER_SYSCALL_H
#define XLAT_USER_SYSCALL_H

#include <stddef.h>
#include <stdint.h>

#include "riscv/cpu.h"

/*
 * Perform the system call the guest asked for with ecall: number in a7
 * (x17), arguments in a0..a5 (x10..x15), result (or -errno) written to a0.
 * Does not advance pc. exit/exit_group do not return.
 */
void syscall_dispatch(CPUState *cpu);

/*
 * Terminate the whole process as if killed by host signal `sig` (the exit
 * status a shell sees is 128+sig), the way Linux ends a process whose
 * signal disposition is the default. Does not return.
 */
void guest_die_by_signal(int sig) __attribute__((noreturn));


#endif
