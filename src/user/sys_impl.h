/*
 * Internal interface of the syscall layer: handler prototypes (from
 * syscall.def) and the helpers the sys_*.c files share.
 */
#ifndef XLAT_USER_SYS_IMPL_H
#define XLAT_USER_SYS_IMPL_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include "riscv/cpu.h"
#include "user/mm.h"
#include "user/path.h"
#include "user/syscall.h"

/* Every handler: arguments a[0..5] (guest a0..a5), returns result or -errno. */
typedef int64_t (*SyscallFn)(CPUState *cpu, const uint64_t *a);

#define SYSCALL(nr, name, fn, fmt) int64_t fn(CPUState *cpu, const uint64_t *a);
#include "user/syscall.def"
#undef SYSCALL

/* The host call's result as the kernel returns it: value or -errno. */
static inline int64_t host_ret(long r) { return r < 0 ? -(int64_t)errno : r; }

/* -EFAULT unless [ga, ga+len) lies in the guest window. */
#define CHECK_WINDOW(ga, len) \
    do { if (!guest_range_in_window((ga), (len))) return -EFAULT; } while (0)


/*
 * Translate a guest iovec array (cnt entries at ga) into a malloc'd host
 * array in *out, with the kernel's checks (count range, negative lengths,
 * segments outside the window). 0 or -errno. (sys_file.c)
 */
struct iovec;
int iov_from_guest(uint64_t ga, int64_t cnt, struct iovec **out);

/* A guest dirfd: AT_FDCWD is the same value (-100) on both. */
static inline int dirfd_arg(uint64_t v) { return (int)v; }

#endif
