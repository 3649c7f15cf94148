/*
 * xlat's own host descriptors among the guest's.
 *
 * xlat keeps a few descriptors open for itself (the -D log, the --root
 * directories, a vfork child's channel to its parent). The guest must not be
 * able to close, replace or inherit them, and must not see its own
 * descriptor numbers shift because of them. own_fd_take() moves a descriptor
 * high up (just below RLIMIT_NOFILE's soft limit, or 1024 if that is
 * higher: own_fd.c says why), where the kernel's lowest-free allocation
 * does not reach for a long time, makes it close-on-exec and records it.
 * The guest's close, close_range and dup2/dup3 then treat a recorded
 * number as if it were beyond the limit (EBADF).
 */
#ifndef XLAT_USER_OWN_FD_H
#define XLAT_USER_OWN_FD_H

#include <stdbool.h>

/*
 * Move fd up out of the guest's way and record it. Returns the new
 * descriptor (fd is closed), or fd itself, recorded, if no higher slot was
 * free. Never fails for a valid fd.
 */
int own_fd_take(int fd);

/* Forget a recorded descriptor and close it. */
void own_fd_close(int fd);

/* Record a descriptor as xlat's without moving it (one opened elsewhere). */
void own_fd_record(int fd);
void own_fd_forget(int fd);

/* Is fd one of xlat's own? */
bool own_fd_is(int fd);

/*
 * close_range(lo, hi, flags) on the host, skipping xlat's own descriptors:
 * 0 or -errno.
 */
int own_fd_close_range(unsigned lo, unsigned hi, unsigned flags);

#endif
