/*
 * gdb for xlat-system: -gdb tcp::PORT (or tcp:HOST:PORT), -s (= -gdb
 * tcp::1234) and -S (the harts wait for gdb's continue), as QEMU's.
 *
 * Harts are gdb's threads (ids 1..N for harts 0..N-1), in all-stop mode:
 * when one stops (breakpoint, watchpoint, finished step, Ctrl-C) every
 * hart stops; a continue resumes them all; a step runs only the hart it
 * names (the others stay stopped). Connecting stops the machine, as under
 * QEMU; detaching or closing the connection lets it run on, without
 * breakpoints, and the stub waits for the next gdb. `k` ends xlat-system.
 *
 * The hart loop (hart.c) calls in at its top (gdbstub_hart_park: a held
 * hart sleeps there on a condition variable, using no host CPU) and runs
 * guest code through gdbstub_hart_run, which checks breakpoints (by pc:
 * guest memory is never patched) and watchpoints instruction by
 * instruction while any are set. See gdbstub.c.
 */
#ifndef XLAT_SYSTEM_GDBSTUB_H
#define XLAT_SYSTEM_GDBSTUB_H

#include <stdbool.h>
#include <stddef.h>

#include "riscv/cpu.h"
#include "system/hart.h"

/* -gdb is on: the harts' loops call the gdbstub_hart_* functions. */
extern bool gdbstub_enabled;

/* A -gdb device: "tcp::PORT" or "tcp:HOST:PORT" (HOST may be [v6]).
 * False with the reason in err. ("none" is the caller's: no stub.) */
bool gdbstub_parse_device(const char *dev, char *host, size_t hostlen, int *port, char *err,
                          size_t errlen);

/* Listen on host:port (before the machine is built, so a port in use ends
 * xlat-system before any guest code): false with the reason in err. */
bool gdbstub_listen(const char *host, int port, char *err, size_t errlen);

/* Start serving gdb (after the harts exist, before they run); frozen
 * (-S): the harts wait for gdb's first continue. */
void gdbstub_start(bool frozen);

/* -- The hart loop's side ------------------------------------------------------ */

/* At the loop's top: while gdb holds h, sleep (true: h slept, look again). */
bool gdbstub_hart_park(Hart *h);

/* gdb wants h to stop: leave waits (wfi, HSM's start) for the loop's top. */
bool gdbstub_hart_held(const Hart *h);

/* h is parked (its state is gdb's): another hart need not wait for it. */
bool gdbstub_hart_parked(const Hart *h);

/* h is single-stepping: it takes no interrupt (QEMU's default NOIRQ step). */
bool gdbstub_hart_stepping(const Hart *h);

/* Run h's guest code under gdb (interp_run's contract). */
enum exit_reason gdbstub_hart_run(Hart *h);

/* The machine is ending (machine_request_exit): parked harts and the gdb
 * thread look. Any thread. */
void gdbstub_wake(void);

/* After the harts have stopped: tell a connected gdb the machine's exit
 * status (W), waiting a little for the gdb thread to send it. */
void gdbstub_report_exit(void);

#endif
