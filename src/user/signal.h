/*
 * Guest signals (user mode).
 *
 * The model (the same as qemu-user's):
 *
 *  - Dispositions are process-wide (the guest's rt_sigaction table, kept in
 *    signal.c). The host disposition of each signal follows the guest's:
 *    a guest handler (or a default action that dumps core, which xlat
 *    emulates so no host core is written) gets xlat's host handler;
 *    SIG_IGN and the other defaults (terminate, stop, continue, ignore) are
 *    set on the host as they are, so the host kernel performs them exactly.
 *    The guest's SA_RESTART, SA_NOCLDSTOP and SA_NOCLDWAIT are mirrored on
 *    the host too, so the host kernel decides which interrupted system
 *    calls restart, as the guest's kernel would.
 *
 *  - Masks and pending signals are per thread (ThreadSignals, one per host
 *    thread = guest thread). The host thread's signal mask mirrors the
 *    guest's blocked mask, so the host kernel keeps blocked signals pending
 *    for us (standard signals coalesce, real-time ones queue: nothing is
 *    lost, and rt_sigpending/rt_sigtimedwait/signalfd work on the host).
 *
 *  - When an unblocked signal arrives, the host handler copies its siginfo
 *    into the thread's one-signal slot, blocks every host signal for the
 *    thread (by editing the mask its sigreturn restores) and sets
 *    cpu->exit_request. The interpreter leaves at its next taken branch;
 *    cpu_loop calls signal_process_pending(), which builds the riscv64
 *    rt_sigframe on the guest stack and reopens the host mask, letting the
 *    next pending signal in. A signal that cannot be delivered after all
 *    (blocked meanwhile) goes back to the host kernel's queue.
 *
 *  - Blocking host system calls go through safe_syscall(): if a signal is
 *    in the slot before the host syscall instruction runs, or the host
 *    kernel restarts the call (SA_RESTART), the call returns
 *    -XLAT_ERESTARTSYS and the guest's ecall is re-executed after the guest
 *    handler, so a wakeup can never be lost between the check and the
 *    blocking call. Host calls that may block and do not use safe_syscall
 *    keep that window (the signal is then seen when the call returns).
 *
 *  - Synchronous signals (faults, illegal instructions, ebreak) are
 *    delivered at once by signal_raise_sync(); blocked or ignored ones kill
 *    the process, as the kernel's force_sig does.
 *
 * Known gaps: a signal taken into the slot but not yet delivered does not
 * coalesce with a second instance of it (Linux would merge them while
 * both are pending); SIGSEGV/SIGBUS sent by kill() while blocked are held
 * by xlat, so rt_sigtimedwait and ppoll/pselect6 masks do not see them
 * (rt_sigsuspend and rt_sigpending do); a signal arriving between
 * signal_exec_prepare and the host execve is lost.
 *
 * xlat uses host signals 1..64 with the same numbers as the guest, through
 * raw system calls (host glibc hides 32 and 33 from sigaction/sigprocmask):
 * xlat itself must not rely on glibc's SIGCANCEL/SIGSETXID (no
 * pthread_cancel, and set*id calls made as raw per-thread syscalls, since
 * the guest's libc broadcasts them itself).
 */
#ifndef XLAT_USER_SIGNAL_H
#define XLAT_USER_SIGNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"
#include "user/target.h"

/*
 * What safe_syscall() returns when a signal must be handled before the
 * call (re)starts; the ecall is then re-executed. Never seen by the guest.
 */
#define XLAT_ERESTARTSYS 512

/* Per-thread signal state (one per guest thread = host thread). */
typedef struct ThreadSignals {
    CPUState *cpu;          /* this thread's CPU: exit_request target; NULL before attach */
    uint64_t blocked;       /* the guest's signal mask (bit sig-1) */
    uint64_t ss_sp;         /* sigaltstack: base, size (0 = disabled), */
    uint64_t ss_size;
    uint32_t ss_flags;      /*   and SS_AUTODISARM */

    volatile int pending;   /* nonzero: something for signal_process_pending (safe_syscall reads it) */
    volatile int slot_sig;  /* signal taken from the host, 0 if the slot is empty */
    siginfo_t slot_info;
    uint64_t held;          /* SIGSEGV/SIGBUS sent by kill(), which the host cannot block */
    siginfo_t held_info[2]; /*   [0] SIGSEGV, [1] SIGBUS */

    bool in_suspend;        /* rt_sigsuspend returned: the frame saves suspend_saved */
    uint64_t suspend_saved; /*   (the mask to restore after the handler) */
    bool sigreturned;       /* the syscall just run was rt_sigreturn: pc is set */
    int forced_sig;         /* a synchronous signal a system call raised (bad sigreturn frame) */
} ThreadSignals;

extern __thread ThreadSignals thread_signals;

/* -- Process and thread life ------------------------------------------------ */

/*
 * Once per process, before the first guest instruction (main): take over
 * the inherited host dispositions (SIG_IGN stays ignored across exec) and
 * mask, and install the host handlers xlat needs.
 */
void signal_init(void);

/* At the start of cpu_loop: this host thread now runs `cpu`. */
void signal_attach(CPUState *cpu);

/*
 * A new guest thread (clone with CLONE_VM): call in the new host thread
 * before cpu_loop, with a copy of the parent's thread_signals taken in the
 * parent at clone time. The child inherits the mask; its altstack is
 * cleared and it has nothing pending (Linux). Create the host thread with
 * every host signal blocked (signal_host_block_all / signal_host_setmask
 * around pthread_create) so nothing lands on it before this runs; this
 * sets the host mask from the guest mask.
 */
void signal_thread_init(const ThreadSignals *parent);

/* In the child of a fork: pending signals are not inherited. */
void signal_fork_child(void);

/*
 * A guest thread ends (exit, before the host thread does): a
 * process-directed signal it had taken goes back to the process.
 */
void signal_thread_exit(void);

/* clone3 CLONE_CLEAR_SIGHAND: every handler back to SIG_DFL (SIG_IGN stays). */
void signal_clear_sighand(void);

/*
 * Just before the host execve of a new xlat: the host mask becomes the
 * guest's and a signal taken from the host goes back to it (pending
 * signals and the mask survive execve; handlers do not).
 */
void signal_exec_prepare(void);

/* Block every host signal for this thread (except synchronous faults); returns the old mask. */
uint64_t signal_host_block_all(void);
/* Set this thread's host mask (raw, all 64 signals). */
void signal_host_setmask(uint64_t mask);

/* -- The execution loop's entry points -------------------------------------- */

/*
 * The ecall at cpu->pc: run the system call unless a signal is already
 * pending, restart it after the signal if it says so (pc stays on the
 * ecall, a0 restored), otherwise advance pc past it (rt_sigreturn sets pc
 * itself).
 */
void signal_do_syscall(CPUState *cpu);

/*
 * Deliver whatever is pending and unblocked for this thread: build guest
 * handler frames (cpu then resumes in the handler) or perform default
 * actions. Cheap when nothing is pending: call after every exit from guest
 * code. Does not clear cpu->exit_request.
 */
void signal_process_pending(CPUState *cpu);

/*
 * A synchronous signal caused by the instruction at cpu->pc (SIGSEGV,
 * SIGBUS, SIGILL, SIGTRAP, SIGFPE) with si_code `code` and si_addr `addr`:
 * delivered now, or the process dies of it if it is blocked, ignored or
 * has the default action (with a one-line message on stderr).
 */
void signal_raise_sync(CPUState *cpu, int sig, int code, uint64_t addr);

/*
 * For fault.c: a SIGSEGV/SIGBUS that is not a guest memory fault but was
 * sent by kill()/tgkill()/sigqueue() (si_code <= 0).
 */
void signal_host_async(int sig, siginfo_t *si, void *uctx);

/* -- For the system call handlers ------------------------------------------- */

/* The guest's action for sig (1..64) and setting it (the host follows). */
void signal_get_action(int sig, struct target_sigaction *old);
void signal_set_action(int sig, const struct target_sigaction *act);

/* Set this thread's guest mask (SIGKILL/SIGSTOP dropped); the host follows. */
void signal_set_blocked(uint64_t mask);

/*
 * Calls that wait with a temporary mask (rt_sigsuspend, ppoll, pselect6,
 * epoll_pwait): begin returns the host mask to pass to the host call (with
 * safe_syscall); end gets its result. If a signal interrupted it, the
 * handler runs with the temporary mask and its frame saves the original,
 * which comes back at rt_sigreturn, as on Linux.
 */
uint64_t signal_sigmask_begin(uint64_t guest_mask);
void signal_sigmask_end(int64_t ret);

/* rt_sigsuspend with guest_mask: -EINTR once a signal was taken (or -XLAT_ERESTARTSYS). */
int64_t signal_suspend(uint64_t guest_mask);

/*
 * sigaltstack at guest sp: old (if not NULL) gets the current setting, ss
 * (if not NULL) replaces it. 0 or -EPERM/-EINVAL/-ENOMEM.
 */
int signal_altstack(uint64_t sp, const target_stack_t *ss, target_stack_t *old,
                    uint64_t min_size);
/* SS_DISABLE, SS_ONSTACK or 0 for guest sp. */
int signal_sas_flags(uint64_t sp);

/* rt_sigreturn: restore the frame at sp; returns the restored a0. */
int64_t signal_sigreturn(CPUState *cpu);

/* Raise synchronous sig at the next signal_process_pending (from a syscall). */
void signal_force(int sig);

/* "SEGV" for SIGSEGV: the abbreviation of a standard signal (1-31), else
 * NULL (glibc's sigabbrev_np, which not every libc has). */
const char *signal_abbrev(int sig);

/* -- Blocking host system calls --------------------------------------------- */

/*
 * Make the host system call nr with up to 6 arguments, unless a signal is
 * pending for this thread: returns the result or -errno, and
 * -XLAT_ERESTARTSYS if a signal arrived before the call started (or the host
 * restarted it). Return that value to the syscall layer unchanged.
 */
long safe_syscall_base(volatile int *pending, long nr, ...);
#define safe_syscall(...) safe_syscall_base(&thread_signals.pending, __VA_ARGS__)

#endif
