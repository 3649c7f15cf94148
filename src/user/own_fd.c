/*
 * xlat's own descriptors (see own_fd.h): a short sorted list, guarded by a
 * lock because guest threads close and dup in parallel.
 */
#define _GNU_SOURCE
#include "user/own_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/lock.h"

#define OWN_MAX 32

static int own[OWN_MAX];
static int nown;
LEAF_MUTEX(own_lock)

static int own_index(int fd)
{
    for (int i = 0; i < nown; i++)
        if (own[i] == fd)
            return i;
    return -1;
}

void own_fd_record(int fd)
{
    if (fd < 0)
        return;
    pthread_mutex_lock(&own_lock);
    if (own_index(fd) < 0 && nown < OWN_MAX) {
        int i = nown++;
        while (i > 0 && own[i - 1] > fd) {      /* keep the list sorted */
            own[i] = own[i - 1];
            i--;
        }
        own[i] = fd;
    }
    pthread_mutex_unlock(&own_lock);
}

void own_fd_forget(int fd)
{
    pthread_mutex_lock(&own_lock);
    int i = own_index(fd);
    if (i >= 0) {
        for (; i + 1 < nown; i++)
            own[i] = own[i + 1];
        nown--;
    }
    pthread_mutex_unlock(&own_lock);
}

bool own_fd_is(int fd)
{
    pthread_mutex_lock(&own_lock);
    bool r = own_index(fd) >= 0;
    pthread_mutex_unlock(&own_lock);
    return r;
}

/*
 * The highest free descriptor number below the soft limit, and below 1024
 * (the usual soft limit, and FD_SETSIZE): the kernel sizes a process's
 * descriptor table to its highest open descriptor and copies it at every
 * fork, and with a limit of 20,000 one descriptor at the top made each
 * fork of the guest 90-160 us slower. A guest with a higher limit sees
 * these few numbers taken, as under the usual limit. -1 if none is free.
 */
#define OWN_TOP 1024

static int free_slot_from_top(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    long top = (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > OWN_TOP ? OWN_TOP : (long)rl.rlim_cur) - 1;
    for (long fd = top; fd > top - 4 * OWN_MAX && fd > 2; fd--)
        if (fcntl((int)fd, F_GETFD) < 0 && errno == EBADF)
            return (int)fd;
    return -1;
}

int own_fd_take(int fd)
{
    int slot = free_slot_from_top();
    if (slot > fd && dup3(fd, slot, O_CLOEXEC) == slot) {
        close(fd);
        fd = slot;
    } else {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    own_fd_record(fd);
    return fd;
}

void own_fd_close(int fd)
{
    own_fd_forget(fd);
    close(fd);
}

int own_fd_close_range(unsigned lo, unsigned hi, unsigned flags)
{
    pthread_mutex_lock(&own_lock);
    int snapshot[OWN_MAX], n = nown;
    for (int i = 0; i < n; i++)
        snapshot[i] = own[i];
    pthread_mutex_unlock(&own_lock);
    /* Close [lo, hi] in the runs between xlat's descriptors (sorted). */
    unsigned from = lo;
    for (int i = 0; i < n && from <= hi; i++) {
        unsigned fd = (unsigned)snapshot[i];
        if (fd < from)
            continue;
        if (fd > hi)
            break;
        if (fd > from && syscall(SYS_close_range, from, fd - 1, flags) != 0)
            return -errno;
        from = fd + 1;                 /* fd < 2^20: no wrap */
    }
    if (from <= hi && syscall(SYS_close_range, from, hi, flags) != 0)
        return -errno;
    return 0;
}
