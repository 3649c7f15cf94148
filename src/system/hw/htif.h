/*
 * The HTIF exit of riscv-tests and Spike-style bare-metal programs: a
 * program whose ELF has a `tohost` symbol ends by writing (code << 1) | 1
 * there; xlat-system then exits with code (0: pass), as Spike does.
 */
#ifndef XLAT_SYSTEM_HW_HTIF_H
#define XLAT_SYSTEM_HW_HTIF_H

#include <stdint.h>

/* Watch the tohost word at physical address tohost (in RAM). */
void htif_init(uint64_t tohost);

#endif
