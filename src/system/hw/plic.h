/*
 * SiFive PLIC (riscv,plic0) at VIRT_PLIC_BASE: sources 1..VIRT_PLIC_NDEV,
 * two contexts per hart (context 2h: M-mode, 2h+1: S-mode, as QEMU's virt),
 * priorities, pending bits, per-context enables, thresholds and
 * claim/complete. A context with an enabled pending source above its
 * threshold raises MEIP (M) or SEIP (S) on its hart.
 */
#ifndef XLAT_SYSTEM_HW_PLIC_H
#define XLAT_SYSTEM_HW_PLIC_H

#include <stdbool.h>

typedef struct Plic Plic;

/* Create the PLIC for machine.nharts harts and map it (machine.plic). */
Plic *plic_init(void);

/* Level of interrupt source irq changed (any thread). */
void plic_set_irq(Plic *p, unsigned irq, bool level);

#endif
