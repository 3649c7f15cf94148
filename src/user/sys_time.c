/*
 * Clocks, sleeps and timers.
 *
 * timespec, timeval, itimerspec, itimerval, struct timex and struct
 * sigevent have the same layout on riscv64 and x86-64 (target.h,
 * target_conv.c), and timer ids are the kernel's small integers, so these
 * pass through with their guest buffers copied. Timers that notify by
 * signal (timer_create with SIGEV_SIGNAL, setitimer) make the host kernel
 * send a host signal to xlat, which the signal layer turns into the guest
 * signal of the same number; SIGEV_THREAD_ID names a host tid, which is the
 * guest tid. Setting the system clock is passed through like qemu does;
 * adjtimex/clock_adjtime may only read (they change host state otherwise).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Clocks and sleeping -------------------------------------------------- */

int64_t sys_clock_gettime(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (clock_gettime((clockid_t)a[0], &ts) < 0)
        return -errno;
    return copy_to_guest(a[1], &ts, sizeof ts);
}

int64_t sys_clock_getres(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (clock_getres((clockid_t)a[0], &ts) < 0)
        return -errno;
    return a[1] ? copy_to_guest(a[1], &ts, sizeof ts) : 0;
}

int64_t sys_gettimeofday(CPUState *cpu, const uint64_t *a)
{
    struct timeval tv;
    struct timezone tz;
    (void)cpu;
    if (gettimeofday(&tv, &tz) < 0)
        return -errno;
    if (a[0] && copy_to_guest(a[0], &tv, sizeof tv))
        return -EFAULT;
    if (a[1] && copy_to_guest(a[1], &tz, sizeof tz))
        return -EFAULT;
    return 0;
}

int64_t sys_times(CPUState *cpu, const uint64_t *a)
{
    struct tms t;
    (void)cpu;
    clock_t r = times(&t);
    if (r == (clock_t)-1)
        return -errno;
    if (a[0] && copy_to_guest(a[0], &t, sizeof t))
        return -EFAULT;
    return r;
}

/* Sleep with the kernel's semantics; the remaining time goes back on EINTR. */
static int64_t do_sleep(clockid_t clk, int flags, uint64_t req_ga, uint64_t rem_ga)
{
    struct timespec req, rem;
    if (copy_from_guest(&req, req_ga, sizeof req))
        return -EFAULT;
    int64_t ret = safe_syscall(SYS_clock_nanosleep, (long)clk, (long)flags, &req, &rem);
    if (ret == -EINTR && rem_ga && !(flags & TIMER_ABSTIME) &&
        copy_to_guest(rem_ga, &rem, sizeof rem))
        return -EFAULT;
    return ret;
}

int64_t sys_nanosleep(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_sleep(CLOCK_MONOTONIC, 0, a[0], a[1]);
}

int64_t sys_clock_nanosleep(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_sleep((clockid_t)a[0], (int)a[1], a[2], a[3]);
}

int64_t sys_clock_settime(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (copy_from_guest(&ts, a[1], sizeof ts))
        return -EFAULT;
    return host_ret(clock_settime((clockid_t)a[0], &ts));
}

int64_t sys_settimeofday(CPUState *cpu, const uint64_t *a)
{
    struct timeval tv;
    struct timezone tz;
    (void)cpu;
    if (a[0] && copy_from_guest(&tv, a[0], sizeof tv))
        return -EFAULT;
    if (a[1] && copy_from_guest(&tz, a[1], sizeof tz))
        return -EFAULT;
    return host_ret(syscall(SYS_settimeofday, a[0] ? &tv : NULL, a[1] ? &tz : NULL));
}

/* Read-only: a guest must not steer the host's clock discipline. */
static int64_t do_adjtime(clockid_t clk, uint64_t ga)
{
    struct timex tx;
    if (copy_from_guest(&tx, ga, sizeof tx))
        return -EFAULT;
    if (tx.modes != 0)
        return -EPERM;
    int r = clock_adjtime(clk, &tx);
    if (r < 0)
        return -errno;
    return copy_to_guest(ga, &tx, sizeof tx) ? -EFAULT : r;
}

int64_t sys_adjtimex(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_adjtime(CLOCK_REALTIME, a[0]);
}

int64_t sys_clock_adjtime(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_adjtime((clockid_t)a[0], a[1]);
}

/* -- Interval timers -------------------------------------------------------- */

int64_t sys_getitimer(CPUState *cpu, const uint64_t *a)
{
    struct itimerval v;
    (void)cpu;
    if (getitimer((int)a[0], &v) < 0)
        return -errno;
    return copy_to_guest(a[1], &v, sizeof v);
}

int64_t sys_setitimer(CPUState *cpu, const uint64_t *a)
{
    struct itimerval nv, ov;
    (void)cpu;
    if (a[1] && copy_from_guest(&nv, a[1], sizeof nv))
        return -EFAULT;
    /* A NULL new value means "disarm" (as the kernel does for compat). */
    if (!a[1])
        memset(&nv, 0, sizeof nv);
    if (setitimer((int)a[0], &nv, &ov) < 0)
        return -errno;
    return a[2] ? copy_to_guest(a[2], &ov, sizeof ov) : 0;
}

/* -- POSIX timers ------------------------------------------------------------- */

int64_t sys_timer_create(CPUState *cpu, const uint64_t *a)
{
    struct sigevent sev;
    int id;
    (void)cpu;
    if (a[1] && copy_from_guest(&sev, a[1], sizeof sev))
        return -EFAULT;
    if (!guest_access_ok(a[2], sizeof id, PROT_WRITE))
        return -EFAULT;
    int64_t r = host_ret(syscall(SYS_timer_create, (clockid_t)a[0], a[1] ? &sev : NULL, &id));
    if (r == 0 && copy_to_guest(a[2], &id, sizeof id)) {
        syscall(SYS_timer_delete, id);
        return -EFAULT;
    }
    return r;
}

int64_t sys_timer_settime(CPUState *cpu, const uint64_t *a)
{
    struct itimerspec nv, ov;
    (void)cpu;
    if (copy_from_guest(&nv, a[2], sizeof nv))
        return -EFAULT;
    int64_t r = host_ret(syscall(SYS_timer_settime, (int)a[0], (int)a[1], &nv, &ov));
    if (r == 0 && a[3] && copy_to_guest(a[3], &ov, sizeof ov))
        return -EFAULT;
    return r;
}

int64_t sys_timer_gettime(CPUState *cpu, const uint64_t *a)
{
    struct itimerspec v;
    (void)cpu;
    int64_t r = host_ret(syscall(SYS_timer_gettime, (int)a[0], &v));
    if (r == 0 && copy_to_guest(a[1], &v, sizeof v))
        return -EFAULT;
    return r;
}

int64_t sys_timer_getoverrun(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_timer_getoverrun, (int)a[0]));
}

int64_t sys_timer_delete(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_timer_delete, (int)a[0]));
}

/* -- timerfd ---------------------------------------------------------------- */

int64_t sys_timerfd_create(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(timerfd_create((int)a[0], (int)a[1]));
}

int64_t sys_timerfd_settime(CPUState *cpu, const uint64_t *a)
{
    struct itimerspec nv, ov;
    (void)cpu;
    if (copy_from_guest(&nv, a[2], sizeof nv))
        return -EFAULT;
    int64_t r = host_ret(timerfd_settime((int)a[0], (int)a[1], &nv, &ov));
    if (r == 0 && a[3] && copy_to_guest(a[3], &ov, sizeof ov))
        return -EFAULT;
    return r;
}

int64_t sys_timerfd_gettime(CPUState *cpu, const uint64_t *a)
{
    struct itimerspec v;
    (void)cpu;
    int64_t r = host_ret(timerfd_gettime((int)a[0], &v));
    if (r == 0 && copy_to_guest(a[1], &v, sizeof v))
        return -EFAULT;
    return r;
}
