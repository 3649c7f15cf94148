/*
 * RISC-V as gdb sees it (for exec/gdb_rsp.h's GdbTarget): the target
 * description, register numbers as gdb's riscv port uses them, register
 * access on a CPUState, and which memory an instruction touches (for
 * watchpoints).
 *
 * Numbers: x0-x31 are 0-31, pc 32, f0-f31 33-64, CSR n is 65 + n (fflags
 * 66, frm 67, fcsr 68), the privilege level (gdb's "priv" pseudo
 * register, as QEMU's) 4161. User mode describes x, pc, f and the FP
 * CSRs; the machine (a CPUState with the privileged architecture on) adds
 * the privileged CSRs and priv.
 */
#ifndef XLAT_RISCV_GDB_TARGET_H
#define XLAT_RISCV_GDB_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "riscv/cpu.h"

enum { RISCV_GDB_PC = 32, RISCV_GDB_F0 = 33, RISCV_GDB_CSR0 = 65, RISCV_GDB_PRIV = 4161 };
#define RISCV_GDB_G_REGS 33             /* the g packet: x0-x31, pc */

/* Registers a stop reply carries: pc and sp (-1 ends). */
extern const int riscv_gdb_expedite[];

/* target.xml: user mode's (osabi GNU/Linux) or the machine's (with the
 * privileged CSRs and priv). Built once per kind. */
const char *riscv_gdb_target_xml(bool machine);

/* GdbTarget.reg_read / reg_write. CSRs and priv exist only when
 * cpu->priv.on; writes to them act as a CSR write from M-mode would (a
 * satp write drops cached translations). */
int riscv_gdb_reg_read(CPUState *cpu, int regno, uint8_t *buf);
bool riscv_gdb_reg_write(CPUState *cpu, int regno, const uint8_t *buf, size_t len);

/* The data access of the instruction at cpu->pc, fetched through read
 * (GdbTarget.mem_read's shape): false if it is no load, store or AMO or
 * cannot be read. */
typedef struct RiscvGdbAccess {
    uint64_t addr, size;
    bool reads, writes;
} RiscvGdbAccess;
bool riscv_gdb_insn_access(CPUState *cpu,
                           size_t (*read)(void *opaque, CPUState *cpu, uint64_t addr, void *buf,
                                          size_t len),
                           void *opaque, RiscvGdbAccess *out);

#endif
