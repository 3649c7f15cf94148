/*
 * The guest CPU's ISA (-cpu / QEMU_CPU): which extensions are enabled.
 *
 * isa_mask has one bit per enum insn_ext plus ISA_C for compressed
 * instructions. insn_decode() turns every instruction of a disabled
 * extension into an illegal one, so the interpreter and the JIT (both
 * decode through it) raise SIGILL alike; the auxv (AT_HWCAP), riscv_hwprobe
 * and /proc/cpuinfo report the same set.
 */
#ifndef XLAT_RISCV_ISA_H
#define XLAT_RISCV_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "riscv/insn.h"

#define ISA_BIT(ext) (1u << (ext))
#define ISA_C        (1u << EXT_COUNT)
#define ISA_ALL      ((ISA_C << 1) - 1)

extern uint32_t isa_mask;               /* default ISA_ALL ("max") */

/*
 * Parse an ISA string ("rv64gc", "rv64imafdc_zba_zbb", "rv64", "max",
 * "help" is the caller's). Zicsr and Zifencei are always on (libc needs
 * them, and older ISA strings imply them). Returns false, with a reason in
 * err, on an unknown or unsupported extension.
 */
bool isa_parse(const char *s, uint32_t *mask, char *err, size_t errlen);

/* The ISA string of isa_mask, as /proc/cpuinfo prints it. */
void isa_string(char *buf, size_t len);

/* Linux ELF_HWCAP bits (one per single-letter extension). */
uint64_t isa_hwcap(void);

static inline bool isa_has(uint32_t bit) { return (isa_mask & bit) != 0; }

#endif
