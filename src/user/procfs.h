/*
 * The guest's view of /proc/self (procfs.c): files that describe the
 * process image are synthesized so they show the guest, not xlat.
 */
#ifndef XLAT_USER_PROCFS_H
#define XLAT_USER_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Remember the guest's argv and initial sp; name the host thread after the
 * program's path as it was executed (execfn), as Linux names it. */
void procfs_init(int argc, char *const argv[], uint64_t initial_sp, const char *execfn);

/* The main program: its descriptor (kept, out of the guest's way) and the
 * path it was started by (kept as is), for procfs_exe_path. */
void procfs_set_exe(int fd, const char *given);

/* The main program as /proc/self/exe names it now, into buf: canonical, a
 * guest path under --root (the given path if that cannot be found).
 * Returns its length, or -errno. */
long procfs_exe_path(char *buf, size_t len);

/* Open the main program's file (host flags; close-on-exec): through its
 * kept descriptor, so that renamed or deleted it still opens, as Linux's
 * /proc/self/exe does; by path if there is none. A descriptor or -errno. */
int procfs_exe_open(int flags);

/*
 * If `path` (the guest's string, before -L resolution) is a file procfs
 * synthesizes, open it with `flags`: returns true with *ret = fd or -errno.
 * Returns false for every other path.
 */
bool procfs_open(const char *path, int flags, int64_t *ret);

/* readlink of /proc/self/exe and friends: true with *n = length or -errno. */
bool procfs_readlink(const char *path, char *buf, size_t len, int64_t *n);

/*
 * After any open: if `fd` is a procfs mem file (a window on a process's
 * whole memory, xlat's own included), close it and return -EACCES; else
 * return fd unchanged (also any negative fd).
 */
int64_t procfs_guard_fd(int64_t fd);

#endif
