/*
 * Conversions between host (x86-64) and riscv64 structure layouts, and the
 * static checks for the structures the syscall layer passes through
 * unchanged. The layouts themselves are in target.h; tests/unit/
 * test_target.c checks these functions on crafted values.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timex.h>
#include <time.h>

#include "user/target.h"

/* -- Pass-through layouts: checked here, field by field where it matters -- */

static_assert(sizeof(struct statfs) == TARGET_STATFS_SIZE, "statfs size");
static_assert(offsetof(struct statfs, f_type) == 0 && offsetof(struct statfs, f_bsize) == 8 &&
              offsetof(struct statfs, f_blocks) == 16 && offsetof(struct statfs, f_ffree) == 48 &&
              offsetof(struct statfs, f_fsid) == 56 && offsetof(struct statfs, f_namelen) == 64 &&
              offsetof(struct statfs, f_frsize) == 72 && offsetof(struct statfs, f_flags) == 80 &&
              offsetof(struct statfs, f_spare) == 88, "statfs = asm-generic statfs (64-bit words)");
static_assert(sizeof(struct cmsghdr) == 16 && offsetof(struct cmsghdr, cmsg_level) == 8 &&
              offsetof(struct cmsghdr, cmsg_type) == 12, "cmsghdr");
static_assert(sizeof(struct msghdr) == sizeof(struct target_msghdr) &&
              offsetof(struct msghdr, msg_iov) == offsetof(struct target_msghdr, msg_iov) &&
              offsetof(struct msghdr, msg_flags) == offsetof(struct target_msghdr, msg_flags),
              "msghdr shape");
static_assert(sizeof(struct mmsghdr) == sizeof(struct target_mmsghdr), "mmsghdr");
static_assert(sizeof(struct pollfd) == 8, "pollfd");
static_assert(sizeof(fd_set) == 128, "fd_set");
static_assert(sizeof(struct itimerspec) == 32 && sizeof(struct itimerval) == 32, "itimer*");
static_assert(sizeof(struct sigevent) == TARGET_SIGEVENT_SIZE &&
              offsetof(struct sigevent, sigev_signo) == 8 &&
              offsetof(struct sigevent, sigev_notify) == 12, "sigevent");
static_assert(sizeof(struct signalfd_siginfo) == TARGET_SIGNALFD_SIGINFO_SIZE, "signalfd_siginfo");
static_assert(sizeof(struct inotify_event) == 16, "inotify_event header");
static_assert(sizeof(struct timex) == TARGET_TIMEX_SIZE, "timex");
static_assert(sizeof(struct ucred) == 12 && sizeof(struct linger) == 8, "ucred/linger");
static_assert(sizeof(struct epoll_event) == 12, "x86-64 epoll_event is packed");
static_assert(SOCK_NONBLOCK == O_NONBLOCK && SOCK_CLOEXEC == O_CLOEXEC, "socket type flags");
static_assert(EPOLL_CLOEXEC == O_CLOEXEC, "epoll flags");

/* -- struct stat ---------------------------------------------------------- */

void target_stat_from_host(struct target_stat *t, const struct stat *h)
{
    memset(t, 0, sizeof *t);
    t->st_dev = h->st_dev;
    t->st_ino = h->st_ino;
    t->st_mode = h->st_mode;
    t->st_nlink = (uint32_t)h->st_nlink;
    t->st_uid = h->st_uid;
    t->st_gid = h->st_gid;
    t->st_rdev = h->st_rdev;
    t->st_size = h->st_size;
    t->st_blksize = (int32_t)h->st_blksize;
    t->st_blocks = h->st_blocks;
    t->st_atime_ = h->st_atim.tv_sec;
    t->st_atime_nsec = h->st_atim.tv_nsec;
    t->st_mtime_ = h->st_mtim.tv_sec;
    t->st_mtime_nsec = h->st_mtim.tv_nsec;
    t->st_ctime_ = h->st_ctim.tv_sec;
    t->st_ctime_nsec = h->st_ctim.tv_nsec;
}

/* -- struct epoll_event --------------------------------------------------- */

void target_epoll_from_host(struct target_epoll_event *t, const void *host_packed)
{
    const struct epoll_event *h = host_packed;
    memset(t, 0, sizeof *t);
    t->events = h->events;
    t->data = h->data.u64;
}

void target_epoll_to_host(void *host_packed, const struct target_epoll_event *t)
{
    struct epoll_event *h = host_packed;
    h->events = t->events;
    h->data.u64 = t->data;
}
