/*
 * -strace: one line per guest system call in qemu-riscv64's format,
 *   "PID name(arg,arg,...) = result" or "= -1 errno=N (message)",
 * written to log_file. The call is printed before it runs and the
 * result after, so output the call itself produces appears in between,
 * as with qemu. Argument formats are the per-syscall strings of
 * syscall.def (documented there).
 */
#ifndef XLAT_USER_STRACE_H
#define XLAT_USER_STRACE_H

#include <stdint.h>

/* Print "PID name(args)" (no newline). */
void strace_enter(const char *name, const char *fmt, const uint64_t *a);

/* Print " = result\n" for the call strace_enter printed. */
void strace_exit(const char *fmt, const uint64_t *a, int64_t ret);

/* Print "PID Unknown syscall N\n" (qemu's wording). */
void strace_unknown(uint64_t nr);

#endif
