/*
 * The virt machine's console: an ns16550a UART at VIRT_UART0_BASE, PLIC irq
 * VIRT_UART0_IRQ, between the guest and two host file descriptors.
 */
#ifndef XLAT_SYSTEM_HW_UART_H
#define XLAT_SYSTEM_HW_UART_H

#include <stdbool.h>

/*
 * Map the UART: transmitted bytes are written to out_fd, received bytes
 * are read from in_fd by a thread of the UART's own (in_fd < 0: no input).
 * With mux_escape (-nographic), input goes through QEMU's ctrl-a escapes
 * (ctrl-a h lists them; ctrl-a x ends the run). If in_fd is a terminal it
 * is put in raw mode (ctrl-c reaches the guest when mux_escape is set),
 * restored at exit and on SIGINT, SIGTERM, SIGQUIT and SIGHUP (for those
 * whose disposition is still the default when uart_init runs).
 */
void uart_init(int in_fd, int out_fd, bool mux_escape);

/* Put the terminal uart_init made raw back as it was (async-signal-safe:
 * for a signal handler of the caller's own). */
void uart_restore_tty(void);

#endif
