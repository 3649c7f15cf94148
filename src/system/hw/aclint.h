/*
 * The ACLINT of the virt machine in its CLINT layout (sifive,clint0 /
 * riscv,clint0) at VIRT_ACLINT_BASE: per-hart machine software interrupt
 * (msip → MIP_MSIP), per-hart machine timer compare (Hart.mtimecmp) and the
 * shared mtime counter (machine_mtime()).
 */
#ifndef XLAT_SYSTEM_HW_ACLINT_H
#define XLAT_SYSTEM_HW_ACLINT_H

/* Map the ACLINT for machine.nharts harts (after they are created). */
void aclint_init(void);

#endif
