/*
 * Process, identity, time, signal-state, memory and machine system calls.
 *
 * Guest signal *delivery* does not exist yet: rt_sigaction, rt_sigprocmask
 * and sigaltstack keep the guest's state in guest_sig (syscall.h) with the
 * kernel's validation, so libc startup and queries see correct values. A
 * disposition of SIG_IGN/SIG_DFL and the blocked mask are mirrored on the
 * host (except the synchronous signals xlat itself needs), so e.g. an
 * ignored SIGPIPE makes write() fail with EPIPE as it should. Sending a
 * signal to ourselves whose guest disposition is a handler fails loudly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/sys_impl.h"
#include "user/target.h"

GuestSigState guest_sig;
uint64_t guest_clear_child_tid, guest_robust_list, guest_robust_list_len;

/* -- Identity --------------------------------------------------------------- */

int64_t sys_getpid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getpid(); }
int64_t sys_getppid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return getppid(); }
int64_t sys_gettid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return gettid(); }
int64_t sys_getuid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getuid(); }
int64_t sys_geteuid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return geteuid(); }
int64_t sys_getgid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getgid(); }
int64_t sys_getegid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return getegid(); }
int64_t sys_setsid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return host_ret(setsid()); }

int64_t sys_getpgid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(getpgid((pid_t)a[0]));
}

int64_t sys_setpgid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(setpgid((pid_t)a[0], (pid_t)a[1]));
}

int64_t sys_getsid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(getsid((pid_t)a[0]));
}

int64_t sys_getgroups(CPUState *cpu, const uint64_t *a)
{
    int n = (int)a[0];
    (void)cpu;
    if (n < 0)
        return -EINVAL;
    CHECK_WINDOW(a[1], (uint64_t)n * sizeof(gid_t));
    return host_ret(getgroups(n, n ? g2h(a[1]) : NULL));
}

int64_t sys_umask(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return umask((mode_t)a[0] & 0777);
}

/* Recorded for the thread layer (CLONE_CHILD_CLEARTID, robust futexes). */
int64_t sys_set_tid_address(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    guest_clear_child_tid = a[0];
    return gettid();
}

int64_t sys_set_robust_list(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[1] != 24)   /* sizeof(struct robust_list_head) */
        return -EINVAL;
    guest_robust_list = a[0];
    guest_robust_list_len = a[1];
    return 0;
}

/* glibc copes with rseq being absent; registering it needs thread support. */
int64_t sys_rseq(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return -ENOSYS;
}

int64_t sys_prctl(CPUState *cpu, const uint64_t *a)
{
    char name[16];
    int v;
    (void)cpu;
    switch ((int)a[0]) {
    case PR_SET_NAME:
        if (copy_from_guest(name, a[1], sizeof name))
            return -EFAULT;
        name[15] = 0;
        return host_ret(prctl(PR_SET_NAME, name));
    case PR_GET_NAME:
        if (prctl(PR_GET_NAME, name) < 0)
            return -errno;
        return copy_to_guest(a[1], name, sizeof name);
    case PR_GET_PDEATHSIG:
        if (prctl(PR_GET_PDEATHSIG, &v) < 0)
            return -errno;
        return copy_to_guest(a[1], &v, sizeof v);
    case PR_SET_PDEATHSIG: case PR_GET_DUMPABLE: case PR_SET_DUMPABLE:
    case PR_GET_NO_NEW_PRIVS: case PR_SET_NO_NEW_PRIVS: case PR_GET_TIMERSLACK:
    case PR_SET_TIMERSLACK: case PR_GET_CHILD_SUBREAPER: case PR_SET_CHILD_SUBREAPER:
        return host_ret(prctl((int)a[0], a[1], a[2], a[3], a[4]));
    default:
        xlat_log(LOG_UNIMP, "xlat: unsupported prctl option %d\n", (int)a[0]);
        return -EINVAL;
    }
}

/* -- System information ------------------------------------------------------ */

int64_t sys_uname(CPUState *cpu, const uint64_t *a)
{
    struct utsname u;
    (void)cpu;
    if (uname(&u) < 0)
        return -errno;
    snprintf(u.machine, sizeof u.machine, "riscv64");
    return copy_to_guest(a[0], &u, sizeof u);
}

int64_t sys_sysinfo(CPUState *cpu, const uint64_t *a)
{
    struct sysinfo si;
    (void)cpu;
    if (sysinfo(&si) < 0)
        return -errno;
    return copy_to_guest(a[0], &si, sizeof si);
}

int64_t sys_getrandom(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[0], a[1]);
    return host_ret(getrandom(g2h(a[0]), a[1], (unsigned)a[2]));
}

/* xlat's own address-space limits must not shrink under the guest (as qemu). */
static bool rlimit_is_emulated(int resource)
{
    return resource == RLIMIT_AS || resource == RLIMIT_DATA || resource == RLIMIT_STACK;
}

int64_t sys_prlimit64(CPUState *cpu, const uint64_t *a)
{
    struct rlimit nl, ol;
    int res = (int)a[1];
    (void)cpu;
    if (a[2] && copy_from_guest(&nl, a[2], sizeof nl))
        return -EFAULT;
    bool skip_set = a[2] && rlimit_is_emulated(res) && (a[0] == 0 || (pid_t)a[0] == getpid());
    if (skip_set && nl.rlim_cur > nl.rlim_max)
        return -EINVAL;
    if (prlimit((pid_t)a[0], res, a[2] && !skip_set ? &nl : NULL, &ol) < 0)
        return -errno;
    if (a[3] && copy_to_guest(a[3], &ol, sizeof ol))
        return -EFAULT;
    return 0;
}

int64_t sys_getrlimit(CPUState *cpu, const uint64_t *a)
{
    uint64_t args[4] = { 0, a[0], 0, a[1] };
    return a[1] ? sys_prlimit64(cpu, args) : -EFAULT;
}

int64_t sys_setrlimit(CPUState *cpu, const uint64_t *a)
{
    uint64_t args[4] = { 0, a[0], a[1], 0 };
    return a[1] ? sys_prlimit64(cpu, args) : -EFAULT;
}

int64_t sys_getrusage(CPUState *cpu, const uint64_t *a)
{
    struct rusage ru;
    (void)cpu;
    if (getrusage((int)a[0], &ru) < 0)
        return -errno;
    return copy_to_guest(a[1], &ru, sizeof ru);   /* same layout */
}

int64_t sys_sched_getaffinity(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[2], a[1]);
    return host_ret(syscall(SYS_sched_getaffinity, (pid_t)a[0], a[1], g2h(a[2])));
}

int64_t sys_sched_setaffinity(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[2], a[1]);
    return host_ret(syscall(SYS_sched_setaffinity, (pid_t)a[0], a[1], g2h(a[2])));
}

int64_t sys_sched_yield(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return sched_yield();
}

/* -- Time ---------------------------------------------------------------------- */

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
    long r = syscall(SYS_clock_nanosleep, clk, flags, &req, &rem);
    int64_t ret = host_ret(r);
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

/* -- Signal state ---------------------------------------------------------------- */

static bool sig_valid(int64_t sig) { return sig >= 1 && sig <= TARGET_NSIG; }

/* Signals xlat handles itself: never mirror guest state onto them. */
static bool sig_host_reserved(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
           sig == SIGTRAP || sig == SIGSYS || sig == SIGKILL || sig == SIGSTOP ||
           sig >= SIGRTMIN;
}

static void mirror_disposition(int sig, uint64_t handler)
{
    if (sig_host_reserved(sig))
        return;
    if (handler == TARGET_SIG_IGN)
        signal(sig, SIG_IGN);
    else
        signal(sig, SIG_DFL);   /* guest handlers cannot run yet */
}

int64_t sys_rt_sigaction(CPUState *cpu, const uint64_t *a)
{
    int sig = (int)a[0];
    struct target_sigaction act, old;
    (void)cpu;
    if (a[3] != TARGET_SIGSET_SIZE || !sig_valid((int64_t)a[0]))
        return -EINVAL;
    if (a[1] && (sig == SIGKILL || sig == SIGSTOP))
        return -EINVAL;
    if (a[1] && copy_from_guest(&act, a[1], sizeof act))
        return -EFAULT;
    old.handler = guest_sig.handler[sig];
    old.flags = guest_sig.flags[sig];
    old.mask = guest_sig.mask[sig];
    if (a[2] && copy_to_guest(a[2], &old, sizeof old))
        return -EFAULT;
    if (a[1]) {
        guest_sig.handler[sig] = act.handler;
        guest_sig.flags[sig] = act.flags;
        guest_sig.mask[sig] = act.mask & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)));
        mirror_disposition(sig, act.handler);
    }
    return 0;
}

static void mirror_mask(uint64_t blocked)
{
    sigset_t set;
    sigemptyset(&set);
    for (int sig = 1; sig < 32; sig++)
        if ((blocked >> (sig - 1) & 1) && !sig_host_reserved(sig))
            sigaddset(&set, sig);
    pthread_sigmask(SIG_SETMASK, &set, NULL);
}

int64_t sys_rt_sigprocmask(CPUState *cpu, const uint64_t *a)
{
    uint64_t set, old = guest_sig.blocked;
    const uint64_t unblockable = (1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1));
    (void)cpu;
    if (a[3] != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (a[1]) {
        if (copy_from_guest(&set, a[1], sizeof set))
            return -EFAULT;
        switch ((int)a[0]) {
        case SIG_BLOCK:   guest_sig.blocked |= set; break;
        case SIG_UNBLOCK: guest_sig.blocked &= ~set; break;
        case SIG_SETMASK: guest_sig.blocked = set; break;
        default: return -EINVAL;
        }
        guest_sig.blocked &= ~unblockable;
    }
    if (a[2] && copy_to_guest(a[2], &old, sizeof old)) {
        guest_sig.blocked = old;
        return -EFAULT;
    }
    if (a[1])
        mirror_mask(guest_sig.blocked);
    return 0;
}

int64_t sys_sigaltstack(CPUState *cpu, const uint64_t *a)
{
    target_stack_t ss, old;
    (void)cpu;
    memset(&old, 0, sizeof old);
    old.ss_sp = guest_sig.altstack_sp;
    old.ss_size = guest_sig.altstack_size;
    old.ss_flags = guest_sig.altstack_size ? guest_sig.altstack_flags : SS_DISABLE;
    if (a[0]) {
        if (copy_from_guest(&ss, a[0], sizeof ss))
            return -EFAULT;
        int mode = ss.ss_flags & ~TARGET_SS_AUTODISARM;
        if (mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK)
            return -EINVAL;
        if (mode == SS_DISABLE) {
            ss.ss_sp = 0;
            ss.ss_size = 0;
        } else if (ss.ss_size < TARGET_MINSIGSTKSZ) {
            return -ENOMEM;
        }
    }
    if (a[1] && copy_to_guest(a[1], &old, sizeof old))
        return -EFAULT;
    if (a[0]) {
        guest_sig.altstack_sp = ss.ss_sp;
        guest_sig.altstack_size = ss.ss_size;
        guest_sig.altstack_flags = ss.ss_flags & TARGET_SS_AUTODISARM;
    }
    return 0;
}

/* Default action is to ignore (or continue): nothing happens. */
static bool sig_default_ignored(int sig)
{
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

static bool sig_default_stops(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * A signal sent to this process. What Linux would do depends on the
 * guest's disposition, which only xlat knows.
 */
static int64_t signal_self(int sig, long (*send)(const uint64_t *), const uint64_t *a)
{
    if (sig == 0 || sig_host_reserved(sig) || (guest_sig.blocked >> (sig - 1) & 1) ||
        sig_default_stops(sig))
        return host_ret(send(a));   /* pending/stopping/fault signals: the host does it */
    uint64_t h = guest_sig.handler[sig];
    if (h == TARGET_SIG_IGN || (h == TARGET_SIG_DFL && sig_default_ignored(sig)))
        return 0;
    if (h == TARGET_SIG_DFL)
        guest_die_by_signal(sig);
    fprintf(stderr, "xlat: cannot deliver signal %d to a guest handler (not implemented yet)\n",
            sig);
    return -ENOSYS;
}

static long send_kill(const uint64_t *a)   { return kill((pid_t)a[0], (int)a[1]); }
static long send_tkill(const uint64_t *a)  { return syscall(SYS_tkill, (pid_t)a[0], (int)a[1]); }
static long send_tgkill(const uint64_t *a) { return syscall(SYS_tgkill, (pid_t)a[0], (pid_t)a[1], (int)a[2]); }

int64_t sys_kill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if ((pid_t)a[0] == getpid() && sig_valid((int64_t)a[1]))
        return signal_self((int)a[1], send_kill, a);
    return host_ret(send_kill(a));
}

int64_t sys_tkill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if ((pid_t)a[0] == gettid() && sig_valid((int64_t)a[1]))
        return signal_self((int)a[1], send_tkill, a);
    return host_ret(send_tkill(a));
}

int64_t sys_tgkill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if ((pid_t)a[0] == getpid() && (pid_t)a[1] == gettid() && sig_valid((int64_t)a[2]))
        return signal_self((int)a[2], send_tgkill, a);
    return host_ret(send_tgkill(a));
}

/* -- Memory ---------------------------------------------------------------------- */

int64_t sys_brk(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_brk(a[0]);
}

int64_t sys_mmap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mmap(a[0], a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
}

int64_t sys_munmap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_munmap(a[0], a[1]);
}

int64_t sys_mprotect(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mprotect(a[0], a[1], (int)a[2]);
}

int64_t sys_mremap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mremap(a[0], a[1], a[2], (int)a[3], a[4]);
}

int64_t sys_madvise(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_madvise(a[0], a[1], (int)a[2]);
}

/* -- RISC-V specific -------------------------------------------------------------- */

/* What every (identical) xlat hart offers: RV64GC + Zba/Zbb/Zbs. */
static bool hwprobe_value(int64_t key, uint64_t *value)
{
    switch (key) {
    case RISCV_HWPROBE_KEY_MVENDORID:
    case RISCV_HWPROBE_KEY_MARCHID:
    case RISCV_HWPROBE_KEY_MIMPID:
        *value = 0;
        return true;
    case RISCV_HWPROBE_KEY_BASE_BEHAVIOR:
        *value = RISCV_HWPROBE_BASE_BEHAVIOR_IMA;
        return true;
    case RISCV_HWPROBE_KEY_IMA_EXT_0:
        *value = RISCV_HWPROBE_IMA_FD | RISCV_HWPROBE_IMA_C | RISCV_HWPROBE_EXT_ZBA |
                 RISCV_HWPROBE_EXT_ZBB | RISCV_HWPROBE_EXT_ZBS;
        return true;
    case RISCV_HWPROBE_KEY_CPUPERF_0:
        *value = RISCV_HWPROBE_MISALIGNED_UNKNOWN;
        return true;
    case RISCV_HWPROBE_KEY_ZICBOZ_BLOCK_SIZE:
        *value = 0;   /* no Zicboz */
        return true;
    default:
        return false;
    }
}

int64_t sys_riscv_hwprobe(CPUState *cpu, const uint64_t *a)
{
    uint64_t pairs = a[0], count = a[1], setsize = a[2], cpus = a[3];
    (void)cpu;
    if (a[4] != 0)
        return -EINVAL;
    if (setsize || cpus) {
        /* All harts are alike; only check that the set names an online cpu. */
        uint8_t set[128] = { 0 };
        bool any = false;
        if (setsize > sizeof set)
            setsize = sizeof set;
        if (copy_from_guest(set, cpus, setsize))
            return -EFAULT;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < ncpu && i < (long)setsize * 8; i++)
            any |= set[i / 8] >> (i % 8) & 1;
        if (!any)
            return -EINVAL;
    }
    for (uint64_t i = 0; i < count; i++) {
        struct target_hwprobe p;
        uint64_t ga = pairs + i * sizeof p;
        if (copy_from_guest(&p, ga, sizeof p))
            return -EFAULT;
        if (!hwprobe_value(p.key, &p.value)) {
            p.key = -1;
            p.value = 0;
        }
        if (copy_to_guest(ga, &p, sizeof p))
            return -EFAULT;
    }
    return 0;
}

int64_t sys_riscv_flush_icache(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[2] & ~(uint64_t)TARGET_SYS_RISCV_FLUSH_ICACHE_LOCAL)
        return -EINVAL;
    /*
     * The interpreter always fetches from guest memory, so there is nothing
     * to flush. JIT hook: invalidate translations of [a[0], a[1]) here once
     * the code cache exists.
     */
    return 0;
}
