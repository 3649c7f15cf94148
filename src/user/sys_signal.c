/*
 * The signal system calls: rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigsuspend, rt_sigtimedwait, rt_sigqueueinfo, rt_tgsigqueueinfo,
 * rt_sigreturn, sigaltstack, kill, tkill, tgkill.
 *
 * The state they work on lives in signal.c (see signal.h). Signal numbers,
 * siginfo_t and sigset_t (8 bytes in the kernel ABI) are the same on
 * riscv64 and x86-64; only struct sigaction (no sa_restorer on riscv) and
 * stack_t (same layout, own struct) are the target's. Sending signals goes
 * straight to the host kernel: the host dispositions follow the guest's,
 * so a signal to ourselves comes back through the host handler and is
 * delivered when the call returns, as on Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/target.h"

#define SIGBIT(s) (1ULL << ((s) - 1))

static bool sig_valid(uint64_t sig) { return sig >= 1 && sig <= TARGET_NSIG; }

/* -- Actions and masks --------------------------------------------------------- */

int64_t sys_rt_sigaction(CPUState *cpu, const uint64_t *a)
{
    int sig = (int)a[0];
    struct target_sigaction act, old;
    (void)cpu;
    if (a[3] != TARGET_SIGSET_SIZE || !sig_valid(a[0]))
        return -EINVAL;
    if (a[1] && (sig == SIGKILL || sig == SIGSTOP))
        return -EINVAL;
    if (a[1] && copy_from_guest(&act, a[1], sizeof act))
        return -EFAULT;
    signal_get_action(sig, &old);
    if (a[1])
        signal_set_action(sig, &act);
    if (a[2] && copy_to_guest(a[2], &old, sizeof old))
        return -EFAULT;
    return 0;
}

int64_t sys_rt_sigprocmask(CPUState *cpu, const uint64_t *a)
{
    uint64_t set, old = thread_signals.blocked;
    (void)cpu;
    if (a[3] != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (a[1]) {
        if (copy_from_guest(&set, a[1], sizeof set))
            return -EFAULT;
        switch ((int)a[0]) {
        case SIG_BLOCK:   set |= old; break;
        case SIG_UNBLOCK: set = old & ~set; break;
        case SIG_SETMASK: break;
        default: return -EINVAL;
        }
        signal_set_blocked(set);
    }
    if (a[2] && copy_to_guest(a[2], &old, sizeof old))
        return -EFAULT;
    return 0;
}

int64_t sys_rt_sigpending(CPUState *cpu, const uint64_t *a)
{
    uint64_t set = 0;
    (void)cpu;
    if (a[1] > TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (syscall(SYS_rt_sigpending, &set, 8) < 0)
        return -errno;
    set = (set | __atomic_load_n(&thread_signals.held, __ATOMIC_ACQUIRE)) & thread_signals.blocked;
    return copy_to_guest(a[0], &set, a[1]);
}

int64_t sys_sigaltstack(CPUState *cpu, const uint64_t *a)
{
    target_stack_t ss, old;
    if (a[0] && copy_from_guest(&ss, a[0], sizeof ss))
        return -EFAULT;
    int r = signal_altstack(cpu->x[2], a[0] ? &ss : NULL, &old, TARGET_MINSIGSTKSZ);
    if (r == 0 && a[1] && copy_to_guest(a[1], &old, sizeof old))
        return -EFAULT;
    return r;
}

int64_t sys_rt_sigreturn(CPUState *cpu, const uint64_t *a)
{
    (void)a;
    return signal_sigreturn(cpu);
}

/* -- Waiting for signals ---------------------------------------------------------- */

int64_t sys_rt_sigsuspend(CPUState *cpu, const uint64_t *a)
{
    uint64_t set;
    (void)cpu;
    if (a[1] != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (copy_from_guest(&set, a[0], sizeof set))
        return -EFAULT;
    return signal_suspend(set);
}

int64_t sys_rt_sigtimedwait(CPUState *cpu, const uint64_t *a)
{
    uint64_t set;
    struct timespec ts;
    siginfo_t info;
    (void)cpu;
    if (a[3] != TARGET_SIGSET_SIZE)
        return -EINVAL;
    if (copy_from_guest(&set, a[0], sizeof set))
        return -EFAULT;
    if (a[2] && copy_from_guest(&ts, a[2], sizeof ts))
        return -EFAULT;
    set &= ~(SIGBIT(SIGKILL) | SIGBIT(SIGSTOP));
    int64_t r = safe_syscall(SYS_rt_sigtimedwait, &set, &info, a[2] ? &ts : NULL, 8L);
    if (r > 0 && a[1] && copy_to_guest(a[1], &info, sizeof info))
        return -EFAULT;
    return r;
}

/* -- Sending signals ---------------------------------------------------------------- */

int64_t sys_kill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_kill, (pid_t)a[0], (int)a[1]));
}

int64_t sys_tkill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_tkill, (pid_t)a[0], (int)a[1]));
}

int64_t sys_tgkill(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_tgkill, (pid_t)a[0], (pid_t)a[1], (int)a[2]));
}

int64_t sys_rt_sigqueueinfo(CPUState *cpu, const uint64_t *a)
{
    siginfo_t info;
    (void)cpu;
    if (copy_from_guest(&info, a[2], sizeof info))
        return -EFAULT;
    return host_ret(syscall(SYS_rt_sigqueueinfo, (pid_t)a[0], (int)a[1], &info));
}

int64_t sys_rt_tgsigqueueinfo(CPUState *cpu, const uint64_t *a)
{
    siginfo_t info;
    (void)cpu;
    if (copy_from_guest(&info, a[3], sizeof info))
        return -EFAULT;
    return host_ret(syscall(SYS_rt_tgsigqueueinfo, (pid_t)a[0], (pid_t)a[1], (int)a[2], &info));
}
