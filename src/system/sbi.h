/*
 * The SBI implementation inside xlat (-bios default): an S-mode ecall is
 * served here directly, without M-mode code. SBI 2.0: BASE, TIME, IPI,
 * RFENCE, HSM, SRST, DBCN, STA.
 */
#ifndef XLAT_SYSTEM_SBI_H
#define XLAT_SYSTEM_SBI_H

#include <stdbool.h>

struct Hart;

/* True unless -bios names firmware (or none): S-mode ecalls come here. */
extern bool sbi_builtin;

/* Serve the SBI call in h's registers (a7 EID, a6 FID, a0..a5): a0 =
 * error, a1 = value; every other register is preserved. */
void sbi_call(struct Hart *h);

/* STA: h is about to run again (steal time and preempted = 0 to its
 * record), or left its thread while runnable (preempted = 1). h's own
 * thread or the scheduler's, never while h runs elsewhere. */
void sbi_sta_resume(struct Hart *h);
void sbi_sta_preempted(struct Hart *h);

#endif
