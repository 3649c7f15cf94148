/*
 * The execution loop of one guest thread (user mode).
 *
 * cpu_loop() runs guest code (the interpreter today, translated code later)
 * until something needs the OS layer: a system call, a fault, an illegal
 * instruction, a pending signal or a request from another thread. It
 * services that and resumes. Translated code and the interpreter never do
 * the OS's work themselves; they return here with a reason.
 */
#ifndef XLAT_USER_CPU_LOOP_H
#define XLAT_USER_CPU_LOOP_H

#include <stdint.h>

#include "riscv/cpu.h"

/* Run the guest thread whose state is cpu until it exits. */
_Noreturn void cpu_loop(CPUState *cpu);

#endif
