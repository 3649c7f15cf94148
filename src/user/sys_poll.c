/*
 * Waiting on descriptors: ppoll, pselect6, epoll, and the descriptor
 * kinds they are used with (eventfd, signalfd, inotify).
 *
 * pollfd and fd_set have the same layout on both sides and are passed to
 * the host kernel in place. struct epoll_event is not: x86-64 packs it to
 * 12 bytes, riscv64 pads it to 16, so events are converted both ways
 * (target_conv.c). Signal masks given to ppoll/pselect6/epoll_pwait become
 * the guest's temporary mask for the wait (signal.h), and every wait is a
 * safe_syscall, so a signal arriving just before it interrupts it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Signal masks ----------------------------------------------------------- */

/*
 * A (guest mask pointer, size) pair. With a mask, the wait runs with it as
 * the guest's temporary mask (signal_sigmask_begin: a signal that
 * interrupts the wait is handled with it, as in the kernel); *out is then
 * the host mask to pass, and the caller must call signal_sigmask_end.
 */
static int get_sigmask(uint64_t ga, uint64_t size, uint64_t *mask, uint64_t **out)
{
    *out = NULL;
    if (!ga)
        return 0;
    if (size != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (copy_from_guest(mask, ga, sizeof *mask))
        return -EFAULT;
    *mask = signal_sigmask_begin(*mask);
    *out = mask;
    return 0;
}

/* Every wait goes through safe_syscall, so no signal is lost before it. */
static int64_t wait_call(uint64_t *pmask, int64_t r)
{
    if (pmask)
        signal_sigmask_end(r);
    return r;
}

/* An optional timespec the kernel updates with the time left. */
static int get_timeout(uint64_t ga, struct timespec *ts, struct timespec **out)
{
    *out = NULL;
    if (!ga)
        return 0;
    if (copy_from_guest(ts, ga, sizeof *ts))
        return -EFAULT;
    *out = ts;
    return 0;
}

static int64_t put_timeout(int64_t r, uint64_t ga, const struct timespec *ts)
{
    if (ga && copy_to_guest(ga, ts, sizeof *ts) && r >= 0)
        return -EFAULT;
    return r;
}

/* -- poll and select -------------------------------------------------------- */

int64_t sys_ppoll(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts, *pts;
    uint64_t mask, *pmask;
    int e;
    (void)cpu;
    if (a[1] > (uint64_t)INT_MAX / sizeof(struct pollfd))
        return -EINVAL;
    CHECK_WINDOW(a[0], a[1] * sizeof(struct pollfd));
    if ((e = get_timeout(a[2], &ts, &pts)) || (e = get_sigmask(a[3], a[4], &mask, &pmask)))
        return e;
    int64_t r = safe_syscall(SYS_ppoll, g2h(a[0]), (long)(unsigned)a[1], pts, pmask, 8L);
    return put_timeout(wait_call(pmask, r), a[2], &ts);
}

int64_t sys_pselect6(CPUState *cpu, const uint64_t *a)
{
    int n = (int)a[0];
    struct timespec ts, *pts;
    struct target_sigset_argpack pack;
    uint64_t mask, *pmask = NULL;
    struct { const void *ss; size_t len; } hpack;
    void *sets[3];
    int e;
    (void)cpu;
    if (n < 0)
        return -EINVAL;
    for (int i = 0; i < 3; i++) {
        uint64_t ga = a[1 + i];
        CHECK_WINDOW(ga, ((uint64_t)n + 63) / 64 * 8);
        sets[i] = ga ? g2h(ga) : NULL;
    }
    if ((e = get_timeout(a[4], &ts, &pts)))
        return e;
    if (a[5]) {
        if (copy_from_guest(&pack, a[5], sizeof pack))
            return -EFAULT;
        if ((e = get_sigmask(pack.ss, pack.ss_len, &mask, &pmask)))
            return e;
    }
    hpack.ss = pmask;
    hpack.len = 8;
    int64_t r = safe_syscall(SYS_pselect6, (long)n, sets[0], sets[1], sets[2], pts,
                             a[5] ? &hpack : NULL);
    return put_timeout(wait_call(pmask, r), a[4], &ts);
}

/* -- epoll ------------------------------------------------------------------ */

/* The kernel's EP_MAX_EVENTS, for the riscv64 event size. */
#define EPOLL_MAX_EVENTS ((int)(INT_MAX / sizeof(struct target_epoll_event)))
/* Events fetched per call at most (the kernel may always return fewer). */
#define EPOLL_BATCH 1024

int64_t sys_epoll_create1(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(epoll_create1((int)a[0]));
}

int64_t sys_epoll_ctl(CPUState *cpu, const uint64_t *a)
{
    struct target_epoll_event te;
    struct epoll_event he;
    (void)cpu;
    if ((int)a[1] == EPOLL_CTL_DEL && !a[3])
        return host_ret(epoll_ctl((int)a[0], EPOLL_CTL_DEL, (int)a[2], NULL));
    if (copy_from_guest(&te, a[3], sizeof te))
        return -EFAULT;
    target_epoll_to_host(&he, &te);
    return host_ret(epoll_ctl((int)a[0], (int)a[1], (int)a[2], &he));
}

/* Wait with host events, then convert the ready ones to the guest layout. */
static int64_t epoll_wait_common(const uint64_t *a, long nr, const void *timeout,
                                 uint64_t mask_ga, uint64_t mask_size)
{
    int max = (int)a[2];
    uint64_t mask, *pmask;
    int e;
    if (max <= 0 || max > EPOLL_MAX_EVENTS)
        return -EINVAL;
    CHECK_WINDOW(a[1], (uint64_t)max * sizeof(struct target_epoll_event));
    if (max > EPOLL_BATCH)
        max = EPOLL_BATCH;
    struct epoll_event *hev = malloc((size_t)max * sizeof *hev);
    if (!hev)
        return -ENOMEM;
    if ((e = get_sigmask(mask_ga, mask_size, &mask, &pmask))) {
        free(hev);
        return e;
    }
    int64_t r;
    if (nr == SYS_epoll_pwait)
        r = safe_syscall(nr, (long)(int)a[0], hev, (long)max, (long)(int)(intptr_t)timeout, pmask, 8L);
    else
        r = safe_syscall(nr, (long)(int)a[0], hev, (long)max, timeout, pmask, 8L);
    r = wait_call(pmask, r);
    for (int64_t i = 0; i < r; i++) {
        struct target_epoll_event te;
        target_epoll_from_host(&te, &hev[i]);
        if (copy_to_guest(a[1] + i * sizeof te, &te, sizeof te)) {
            r = -EFAULT;   /* the events are lost, as in the kernel */
            break;
        }
    }
    free(hev);
    return r;
}

int64_t sys_epoll_pwait(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return epoll_wait_common(a, SYS_epoll_pwait, (const void *)(intptr_t)(int)a[3], a[4], a[5]);
}

int64_t sys_epoll_pwait2(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (a[3] && copy_from_guest(&ts, a[3], sizeof ts))
        return -EFAULT;
    return epoll_wait_common(a, SYS_epoll_pwait2, a[3] ? &ts : NULL, a[4], a[5]);
}

/* -- eventfd, signalfd, inotify ------------------------------------------- */

int64_t sys_eventfd2(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_eventfd2, (unsigned)a[0], (int)a[1]));
}

/*
 * The mask is in guest signal numbers, which are the host's; reads return
 * struct signalfd_siginfo, the same 128 bytes on both.
 */
int64_t sys_signalfd4(CPUState *cpu, const uint64_t *a)
{
    uint64_t mask;
    (void)cpu;
    if (a[2] != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (copy_from_guest(&mask, a[1], sizeof mask))
        return -EFAULT;
    return host_ret(syscall(SYS_signalfd4, (int)a[0], &mask, 8, (int)a[3]));
}

int64_t sys_inotify_init1(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(inotify_init1((int)a[0]));
}

int64_t sys_inotify_add_watch(CPUState *cpu, const uint64_t *a)
{
    GuestPath gp;
    (void)cpu;
    unsigned how = PATH_LOOKUP | ((uint32_t)a[2] & IN_DONT_FOLLOW ? 0 : PATH_FOLLOW);
    int64_t r = path_get_at(AT_FDCWD, a[1], how, &gp);
    if (r)
        return r;
    r = host_ret(inotify_add_watch((int)a[0], path_host_abs(&gp), (uint32_t)a[2]));
    path_put(&gp);
    return r;
}

int64_t sys_inotify_rm_watch(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(inotify_rm_watch((int)a[0], (int)a[1]));
}
