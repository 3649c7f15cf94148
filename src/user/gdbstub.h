/*
 * gdb remote stub (-g PORT): gdb-multiarch attaches over TCP before the
 * first guest instruction and controls the program. See gdbstub.c.
 */
#ifndef XLAT_USER_GDBSTUB_H
#define XLAT_USER_GDBSTUB_H

#include <stdbool.h>

#include "riscv/cpu.h"

extern bool gdb_active;                 /* a debugger is attached */

/* Listen on port, wait for gdb to connect, and stop at the entry point. */
void gdb_init(int port, CPUState *cpu);

/* The run step of cpu_loop while gdb is attached (contract of exec_run). */
enum exit_reason gdb_run(CPUState *cpu);

/* The process is ending: tell gdb (W status, or X signal if killed). */
void gdb_exit(int status, int signal);

#endif
