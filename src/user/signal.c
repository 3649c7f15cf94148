/*
 * Guest signal delivery (user mode): see signal.h for the model.
 *
 * Sections: the riscv64 signal frame; the guest's action table and the
 * host dispositions that follow it; host masks; the host signal handler
 * and safe_syscall; delivery (frames, default actions, pending signals,
 * synchronous signals); rt_sigreturn; the system call entry. The signal
 * system calls themselves are in sys_signal.c.
 */
#define _GNU_SOURCE
#include "user/signal.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "exec/exec.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/syscall.h"
#include "user/target.h"

__thread ThreadSignals thread_signals;

#define SIGBIT(s) (1ULL << ((s) - 1))
/* The guest can never block these (the kernel drops them from masks). */
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))
/* Never blocked on the host: fault.c needs them for guest memory faults. */
#define HOST_NEVER_BLOCKED (SIGBIT(SIGSEGV) | SIGBIT(SIGBUS))

/* -- The riscv64 signal frame (arch/riscv/include/uapi/asm/{ucontext,sigcontext}.h) -- */

typedef struct target_sigcontext {
    uint64_t regs[32];          /* user_regs_struct: pc, then x1..x31 */
    uint64_t f[32];             /* union __riscv_fp_state, the D variant: f0..f31, */
    uint32_t fcsr;              /*   fcsr, */
    uint32_t fp_reserved[67];   /*   padded to the Q variant's 528 bytes (zero: no extensions) */
} target_sigcontext;

typedef struct target_ucontext {
    uint64_t uc_flags;
    uint64_t uc_link;
    target_stack_t uc_stack;
    uint64_t uc_sigmask;
    uint8_t  unused[1024 / 8 - 8];  /* room for a larger sigset_t */
    uint64_t align;                 /* uc_mcontext is 16-byte aligned */
    target_sigcontext uc_mcontext;
} target_ucontext;

typedef struct target_rt_sigframe {
    uint8_t info[128];              /* siginfo_t: the generic layout, as on x86-64 */
    target_ucontext uc;
} target_rt_sigframe;

static_assert(sizeof(target_sigcontext) == 784, "riscv64 mcontext_t is 784 bytes");
static_assert(offsetof(target_ucontext, uc_sigmask) == 40, "uc_sigmask offset");
static_assert(offsetof(target_ucontext, uc_mcontext) == 176, "uc_mcontext offset");
static_assert(sizeof(target_ucontext) == 960, "riscv64 ucontext_t is 960 bytes");
static_assert(sizeof(siginfo_t) == 128, "host siginfo_t is the generic 128 bytes");
static_assert(offsetof(siginfo_t, si_addr) == 16 && offsetof(siginfo_t, si_status) == 24,
              "host siginfo_t has the generic layout");

/* Linux puts __vdso_rt_sigreturn here; libgcc's unwinder recognizes these two words. */
static const uint32_t sigreturn_code[2] = {
    0x08b00893,     /* li a7, 139 (__NR_rt_sigreturn) */
    0x00000073,     /* ecall */
};

/* -- Signal classes ------------------------------------------------------------ */

static bool sig_default_ignored(int sig)
{
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

static bool sig_default_stops(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Default action "terminate and dump core": xlat emulates these (no host core). */
static bool sig_default_core(int sig)
{
    switch (sig) {
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE:
    case SIGSEGV: case SIGSYS: case SIGXCPU: case SIGXFSZ:
        return true;
    default:
        return false;
    }
}

/* Signals the host kernel raises for a faulting instruction (si_code > 0). */
static bool sig_host_sync(int sig)
{
    return sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

/* -- Host primitives (raw: host glibc hides signals 32 and 33) -------------------- */

struct host_ksigaction {
    void *handler;
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

#define HOST_SA_RESTORER 0x04000000

/* The host's sigreturn trampoline for handlers installed with the raw call. */
void xlat_sigrestorer(void);
__asm__(".text\n"
        ".globl xlat_sigrestorer\n"
        ".hidden xlat_sigrestorer\n"
        ".type xlat_sigrestorer, @function\n"
        ".align 16\n"
        "xlat_sigrestorer:\n"
        "    mov $15, %eax\n"          /* __NR_rt_sigreturn (x86-64) */
        "    syscall\n"
        ".size xlat_sigrestorer, .-xlat_sigrestorer\n");

static int host_sigaction(int sig, const struct host_ksigaction *act, struct host_ksigaction *old)
{
    return (int)syscall(SYS_rt_sigaction, sig, act, old, 8);
}

void signal_host_setmask(uint64_t mask)
{
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, 8);
}

uint64_t signal_host_block_all(void)
{
    uint64_t all = ~HOST_NEVER_BLOCKED, old = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
    return old;
}

/* Put a signal back on the host kernel's queue of this thread (or process). */
static void requeue(int sig, const siginfo_t *info, bool thread)
{
    siginfo_t si = *info;
    long r = thread ? syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, &si)
                    : syscall(SYS_rt_sigqueueinfo, getpid(), sig, &si);
    if (r < 0) {
        static const char msg[] = "xlat: a guest signal was lost (host queue full)\n";
        if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
            /* nothing more to do */
        }
    }
}

/* -- The guest's action table ------------------------------------------------------ */

static struct target_sigaction sigact[TARGET_NSIG + 1];
static pthread_mutex_t sigact_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t tramp_lock = PTHREAD_MUTEX_INITIALIZER;     /* sigreturn_tramp's */

/*
 * What exec left of each signal (ignored or not) is asked of the host the
 * first time the guest's action is needed (sigact_lock held): until then
 * xlat has not touched the host's disposition, which does to the signal
 * what the guest's would (an ignored one stays ignored across an exec
 * too). Asking all 62 at every start was 62 system calls; only those xlat
 * catches by default (signal_init) are asked at once.
 */
static uint64_t sigact_known;           /* bit sig - 1: sigact[sig] holds */

static void sigact_load(int sig)
{
    uint64_t bit = SIGBIT(sig);
    if (sigact_known & bit)
        return;
    struct host_ksigaction old;
    if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig != SIGBUS &&
        host_sigaction(sig, NULL, &old) == 0 && old.handler == SIG_IGN)
        sigact[sig].handler = TARGET_SIG_IGN;
    /* Known only now: a child forked while another thread is in here
     * (signal_fork_child gives it the lock free) asks again. */
    sigact_known |= bit;
}

static void host_signal_handler(int sig, siginfo_t *si, void *uctx);

/* The host disposition that makes sig follow the guest's (sigact_lock held). */
static struct host_ksigaction host_action(int sig)
{
    const struct target_sigaction *a = &sigact[sig];
    struct host_ksigaction ka = { .flags = HOST_SA_RESTORER, .restorer = xlat_sigrestorer };

    if (a->handler == TARGET_SIG_IGN) {
        ka.handler = SIG_IGN;
    } else if (a->handler == TARGET_SIG_DFL && !sig_default_core(sig)) {
        ka.handler = SIG_DFL;
    } else {
        ka.handler = (void *)host_signal_handler;
        ka.flags |= SA_SIGINFO | (a->flags & SA_RESTART);
        ka.mask = ~0ULL;            /* one signal at a time into the slot */
    }
    if (sig == SIGCHLD)
        ka.flags |= a->flags & (SA_NOCLDSTOP | SA_NOCLDWAIT);
    return ka;
}

/*
 * Make the host disposition of sig follow the guest's (sigact_lock held).
 * SIGSEGV/SIGBUS stay with fault.c, which forwards the ones sent by kill().
 */
static void host_follow(int sig)
{
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS)
        return;
    struct host_ksigaction ka = host_action(sig);
    host_sigaction(sig, &ka, NULL);
}

/*
 * At the start, for a signal whose default dumps core (the host catches it
 * to report the guest's state; sigact_lock held): sigact_load and then
 * host_follow, in one call while the disposition exec left is the default,
 * as it nearly always is (nine signals: a start made 18 calls).
 */
static void sigact_take(int sig)
{
    if (sig == SIGSEGV || sig == SIGBUS || sigact_known & SIGBIT(sig)) {
        sigact_load(sig);               /* fault.c's own; or asked already */
        return;
    }
    struct host_ksigaction ka = host_action(sig), old;     /* the guest's default: caught */
    if (host_sigaction(sig, &ka, &old) == 0 && old.handler == SIG_IGN) {
        sigact[sig].handler = TARGET_SIG_IGN;   /* ignored stays ignored across exec */
        host_follow(sig);
    }
    sigact_known |= SIGBIT(sig);
}

/* What the kernel keeps of sa_flags (UAPI_SA_FLAGS; riscv has no SA_RESTORER). */
#define TARGET_SA_KNOWN (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | \
                         SA_NODEFER | SA_RESETHAND | 0x800 /* SA_EXPOSE_TAGBITS */)

void signal_get_action(int sig, struct target_sigaction *old)
{
    pthread_mutex_lock(&sigact_lock);
    sigact_load(sig);
    *old = sigact[sig];
    pthread_mutex_unlock(&sigact_lock);
}

void signal_set_action(int sig, const struct target_sigaction *act)
{
    pthread_mutex_lock(&sigact_lock);
    sigact_known |= SIGBIT(sig);
    sigact[sig].handler = act->handler;
    sigact[sig].flags = act->flags & TARGET_SA_KNOWN;
    sigact[sig].mask = act->mask & ~UNBLOCKABLE;
    host_follow(sig);
    pthread_mutex_unlock(&sigact_lock);
}

/* The action for delivering sig now; SA_RESETHAND takes effect here. */
static struct target_sigaction take_action(int sig)
{
    pthread_mutex_lock(&sigact_lock);
    sigact_load(sig);
    struct target_sigaction a = sigact[sig];
    if (a.handler > TARGET_SIG_IGN && (a.flags & SA_RESETHAND)) {
        sigact[sig].handler = TARGET_SIG_DFL;
        host_follow(sig);
    }
    pthread_mutex_unlock(&sigact_lock);
    return a;
}

void signal_clear_sighand(void)
{
    pthread_mutex_lock(&sigact_lock);
    for (int sig = 1; sig <= TARGET_NSIG; sig++) {
        if (sigact[sig].handler > TARGET_SIG_IGN) {
            sigact[sig] = (struct target_sigaction){ TARGET_SIG_DFL, 0, 0 };
            host_follow(sig);
        }
    }
    pthread_mutex_unlock(&sigact_lock);
}

/* -- Masks ----------------------------------------------------------------------- */

/* Open the host mask to the guest's, unless a signal waits in the slot. */
static void host_mask_sync(ThreadSignals *ts)
{
    if (ts->slot_sig)
        return;
    signal_host_setmask(ts->blocked & ~HOST_NEVER_BLOCKED);
}

/* Wake signal_process_pending for held SIGSEGV/SIGBUS the new mask unblocks. */
static void check_held(ThreadSignals *ts)
{
    if (__atomic_load_n(&ts->held, __ATOMIC_ACQUIRE) & ~ts->blocked)
        ts->pending = 1;
}

void signal_set_blocked(uint64_t mask)
{
    ThreadSignals *ts = &thread_signals;
    ts->blocked = mask & ~UNBLOCKABLE;
    host_mask_sync(ts);
    check_held(ts);
}

uint64_t signal_sigmask_begin(uint64_t guest_mask)
{
    ThreadSignals *ts = &thread_signals;
    ts->suspend_saved = ts->blocked;
    ts->in_suspend = true;
    ts->blocked = guest_mask & ~UNBLOCKABLE;
    return ts->blocked & ~HOST_NEVER_BLOCKED;
}

void signal_sigmask_end(int64_t ret)
{
    ThreadSignals *ts = &thread_signals;
    /* Interrupted by a signal: signal_process_pending restores the mask
     * once the handler's frame holds it. */
    if (ret == -EINTR && ts->pending)
        return;
    ts->blocked = ts->suspend_saved;
    ts->in_suspend = false;
    host_mask_sync(ts);
    check_held(ts);
}

int64_t signal_suspend(uint64_t guest_mask)
{
    ThreadSignals *ts = &thread_signals;
    uint64_t host = signal_sigmask_begin(guest_mask);
    /* A held SIGSEGV/SIGBUS the new mask lets through ends the wait at once. */
    if (__atomic_load_n(&ts->held, __ATOMIC_ACQUIRE) & ~ts->blocked) {
        ts->pending = 1;
        return -EINTR;
    }
    int64_t r = safe_syscall(SYS_rt_sigsuspend, &host, 8L);
    signal_sigmask_end(r);
    return r;
}

/* -- The host handler and safe_syscall ---------------------------------------------- */

/*
 * safe_syscall_base(pending, nr, a1..a6): rdi = pending, rsi = nr, then the
 * six arguments in rdx, rcx, r8, r9 and on the stack. The host handler
 * moves a thread interrupted in [safe_syscall_start, safe_syscall_end) to
 * safe_syscall_restart: the check has not been made or the host kernel
 * wants to restart the call (it backs rip up onto the syscall instruction).
 */
extern char safe_syscall_start[], safe_syscall_end[], safe_syscall_restart[];
__asm__(".text\n"
        ".globl safe_syscall_base\n"
        ".type safe_syscall_base, @function\n"
        ".globl safe_syscall_start, safe_syscall_end, safe_syscall_restart\n"
        ".hidden safe_syscall_start, safe_syscall_end, safe_syscall_restart\n"
        "safe_syscall_base:\n"
        "    .cfi_startproc\n"
        "    push %rbp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    .cfi_rel_offset %rbp, 0\n"
        "    mov %rdi, %rbp\n"
        "    mov %rsi, %rax\n"
        "    mov %rdx, %rdi\n"
        "    mov %rcx, %rsi\n"
        "    mov %r8, %rdx\n"
        "    mov %r9, %r10\n"
        "    mov 16(%rsp), %r8\n"
        "    mov 24(%rsp), %r9\n"
        "safe_syscall_start:\n"
        "    cmpl $0, (%rbp)\n"
        "    jnz safe_syscall_restart\n"
        "    syscall\n"
        "safe_syscall_end:\n"
        "    pop %rbp\n"
        "    .cfi_remember_state\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    .cfi_restore %rbp\n"
        "    ret\n"
        "    .cfi_restore_state\n"
        "safe_syscall_restart:\n"
        "    mov $-512, %rax\n"       /* -XLAT_ERESTARTSYS */
        "    pop %rbp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    .cfi_restore %rbp\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size safe_syscall_base, .-safe_syscall_base\n");

static_assert(XLAT_ERESTARTSYS == 512, "safe_syscall_base returns -512");

/* Note the signal for this thread's loop; optionally keep further host signals out. */
static void note_pending(ThreadSignals *ts, ucontext_t *uc, bool block_all)
{
    if (block_all) {
        uint64_t all = ~HOST_NEVER_BLOCKED;
        memcpy(&uc->uc_sigmask, &all, sizeof all);   /* restored by the host sigreturn */
    }
    ts->pending = 1;
    uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    if (rip >= (uintptr_t)safe_syscall_start && rip < (uintptr_t)safe_syscall_end)
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)safe_syscall_restart;
    CPUState *cpu = ts->cpu;
    if (cpu) {
        cpu->exit_request = 1;
        exec_kick(cpu);             /* after the flag: see exec_kick */
    }
}

/* A host SIGILL/SIGFPE/SIGTRAP/SIGSYS raised by xlat's own code: a bug. */
static void internal_signal(int sig, const ucontext_t *uc)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "xlat: internal error: host signal %d at host pc %#llx\n",
                     sig, (unsigned long long)uc->uc_mcontext.gregs[REG_RIP]);
    if (n > 0 && write(STDERR_FILENO, buf, (size_t)n) < 0) {
        /* nothing more to do */
    }
    struct host_ksigaction dfl = { .handler = SIG_DFL };
    host_sigaction(sig, &dfl, NULL);   /* returning re-executes the instruction: death */
}

static void host_signal_handler(int sig, siginfo_t *si, void *uctx)
{
    ucontext_t *uc = uctx;
    ThreadSignals *ts = &thread_signals;
    int saved_errno = errno;

    if (si->si_code > 0 && sig_host_sync(sig)) {
        internal_signal(sig, uc);
    } else if (!ts->cpu) {
        /* Not (yet) a guest thread: let another thread take it. */
        requeue(sig, si, false);
        uint64_t all = ~HOST_NEVER_BLOCKED;
        memcpy(&uc->uc_sigmask, &all, sizeof all);
    } else {
        if (ts->slot_sig) {
            requeue(sig, si, true);    /* only in a race with host_mask_sync */
        } else {
            ts->slot_info = *si;
            ts->slot_sig = sig;
        }
        note_pending(ts, uc, true);
    }
    errno = saved_errno;
}

void signal_host_async(int sig, siginfo_t *si, void *uctx)
{
    ThreadSignals *ts = &thread_signals;
    ts->held_info[sig == SIGSEGV ? 0 : 1] = *si;
    __atomic_or_fetch(&ts->held, SIGBIT(sig), __ATOMIC_RELEASE);
    if (!(ts->blocked & SIGBIT(sig)))
        note_pending(ts, uctx, false);
}

static uint64_t sigreturn_tramp(void);

/* -- Process and thread life -------------------------------------------------------- */

void signal_init(void)
{
    ThreadSignals *ts = &thread_signals;
    uint64_t mask = 0;

    /* What exec leaves: ignored signals stay ignored, the mask stays. */
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, 8);
    ts->blocked = mask & ~UNBLOCKABLE;
    pthread_mutex_lock(&sigact_lock);
    for (int sig = 1; sig <= TARGET_NSIG; sig++)
        if (sig_default_core(sig))
            sigact_take(sig);           /* the others are asked when needed (sigact_load) */
    pthread_mutex_unlock(&sigact_lock);
    /* Map the trampoline now, as Linux maps its vDSO at exec: mapped later,
     * it could land in a hole the program expects to stay unmapped. */
    sigreturn_tramp();
}

void signal_attach(CPUState *cpu)
{
    ThreadSignals *ts = &thread_signals;
    ts->cpu = cpu;
    host_mask_sync(ts);
    if (ts->slot_sig || ts->held)
        ts->pending = 1;
}

void signal_thread_init(const ThreadSignals *parent)
{
    ThreadSignals *ts = &thread_signals;
    ts->blocked = parent->blocked;
    ts->ss_sp = ts->ss_size = 0;
    ts->ss_flags = SS_DISABLE;
    ts->in_suspend = false;
    host_mask_sync(ts);
}

void signal_thread_exit(void)
{
    ThreadSignals *ts = &thread_signals;
    signal_host_block_all();
    ts->cpu = NULL;
    int sig = ts->slot_sig;
    /* A signal for the whole process must reach another thread. */
    if (sig && ts->slot_info.si_code != SI_TKILL)
        requeue(sig, &ts->slot_info, false);
    ts->slot_sig = 0;
    ts->pending = 0;
}

void signal_fork_child(void)
{
    ThreadSignals *ts = &thread_signals;
    pthread_mutex_init(&sigact_lock, NULL);
    /* Another thread may have been mapping the trampoline: here it is
     * mapped again if the address was not set yet (tramp_lock is not a
     * leaf lock to hold across the fork: mm.c's lock is taken under it). */
    pthread_mutex_init(&tramp_lock, NULL);
    ts->slot_sig = 0;
    ts->held = 0;
    ts->pending = 0;
    host_mask_sync(ts);
}

void signal_exec_prepare(void)
{
    ThreadSignals *ts = &thread_signals;
    signal_host_block_all();
    /* Pending signals survive execve. */
    if (ts->slot_sig)
        requeue(ts->slot_sig, &ts->slot_info, true);
    ts->slot_sig = 0;
    signal_host_setmask((ts->in_suspend ? ts->suspend_saved : ts->blocked) & ~HOST_NEVER_BLOCKED);
}

/* -- Delivery ------------------------------------------------------------------------ */

static bool on_sig_stack(const ThreadSignals *ts, uint64_t sp)
{
    if (ts->ss_flags & TARGET_SS_AUTODISARM)
        return false;
    return sp > ts->ss_sp && sp - ts->ss_sp <= ts->ss_size;
}

int signal_sas_flags(uint64_t sp)
{
    const ThreadSignals *ts = &thread_signals;
    if (!ts->ss_size)
        return SS_DISABLE;
    return on_sig_stack(ts, sp) ? SS_ONSTACK : 0;
}

int signal_altstack(uint64_t sp, const target_stack_t *ss, target_stack_t *old, uint64_t min_size)
{
    ThreadSignals *ts = &thread_signals;
    if (old) {
        memset(old, 0, sizeof *old);
        old->ss_sp = ts->ss_sp;
        old->ss_size = ts->ss_size;
        old->ss_flags = signal_sas_flags(sp) | (int32_t)(ts->ss_flags & TARGET_SS_AUTODISARM);
    }
    if (!ss)
        return 0;
    if (on_sig_stack(ts, sp))
        return -EPERM;
    uint32_t flags = (uint32_t)ss->ss_flags;
    uint32_t mode = flags & ~TARGET_SS_AUTODISARM;
    if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
        return -EINVAL;
    uint64_t base = ss->ss_sp, size = ss->ss_size;
    if (mode == SS_DISABLE) {
        base = size = 0;
    } else if (size < min_size) {
        return -ENOMEM;
    }
    ts->ss_sp = base;
    ts->ss_size = size;
    ts->ss_flags = flags;
    return 0;
}

/* The guest address of the sigreturn trampoline ("[vdso]"), mapped once. */
static uint64_t sigreturn_tramp(void)
{
    static uint64_t addr;
    uint64_t a = __atomic_load_n(&addr, __ATOMIC_ACQUIRE);
    if (a)
        return a;
    pthread_mutex_lock(&tramp_lock);
    if (!addr) {
        uint64_t ga = guest_find_free(GUEST_PAGE_SIZE, 0);
        if (ga && guest_map_fixed(ga, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, "[vdso]") == 0) {
            memcpy(g2h(ga), sigreturn_code, sizeof sigreturn_code);
            if (guest_mprotect(ga, GUEST_PAGE_SIZE, PROT_READ | PROT_EXEC) == 0)
                __atomic_store_n(&addr, ga, __ATOMIC_RELEASE);
        }
    }
    a = addr;
    pthread_mutex_unlock(&tramp_lock);
    return a;
}

static void save_regs(target_sigcontext *sc, const CPUState *cpu)
{
    sc->regs[0] = cpu->pc;
    for (int i = 1; i < 32; i++)
        sc->regs[i] = cpu->x[i];
    memcpy(sc->f, cpu->f, sizeof sc->f);
    sc->fcsr = (cpu->frm << 5) | cpu->fflags;
}

static void restore_regs(CPUState *cpu, const target_sigcontext *sc)
{
    cpu->pc = sc->regs[0];
    for (int i = 1; i < 32; i++)
        cpu->x[i] = sc->regs[i];
    cpu->x[0] = 0;
    memcpy(cpu->f, sc->f, sizeof cpu->f);
    cpu->fflags = sc->fcsr & 0x1f;
    cpu->frm = (sc->fcsr >> 5) & 7;
}

/*
 * Build the rt_sigframe for sig and enter the handler (the kernel's
 * setup_rt_frame + signal_setup_done). False if the frame could not be
 * written (the caller forces SIGSEGV).
 */
static bool setup_frame(CPUState *cpu, int sig, const siginfo_t *info,
                        const struct target_sigaction *act)
{
    ThreadSignals *ts = &thread_signals;
    target_rt_sigframe f;
    uint64_t tramp = sigreturn_tramp();
    uint64_t sp = cpu->x[2];

    if (!tramp)
        return false;
    if (on_sig_stack(ts, sp) && !on_sig_stack(ts, sp - sizeof f))
        return false;                       /* the alternate stack overflowed */
    if ((act->flags & SA_ONSTACK) && signal_sas_flags(sp) == 0)
        sp = ts->ss_sp + ts->ss_size;
    sp = (sp - sizeof f) & ~15ULL;

    memset(&f, 0, sizeof f);
    memcpy(f.info, info, sizeof f.info);
    f.uc.uc_stack.ss_sp = ts->ss_sp;
    f.uc.uc_stack.ss_size = ts->ss_size;
    f.uc.uc_stack.ss_flags = (int32_t)(ts->ss_size ? ts->ss_flags : ts->ss_flags | SS_DISABLE);
    f.uc.uc_sigmask = ts->in_suspend ? ts->suspend_saved : ts->blocked;
    save_regs(&f.uc.uc_mcontext, cpu);
    if (copy_to_guest(sp, &f, sizeof f))
        return false;

    if (ts->ss_flags & TARGET_SS_AUTODISARM) {
        ts->ss_sp = ts->ss_size = 0;
        ts->ss_flags = SS_DISABLE;
    }
    ts->in_suspend = false;
    ts->blocked |= act->mask | ((act->flags & SA_NODEFER) ? 0 : SIGBIT(sig));
    ts->blocked &= ~UNBLOCKABLE;

    cpu->x[1] = tramp;                      /* ra */
    cpu->x[2] = sp;
    cpu->x[10] = (uint64_t)sig;
    cpu->x[11] = sp + offsetof(target_rt_sigframe, info);
    cpu->x[12] = sp + offsetof(target_rt_sigframe, uc);
    cpu->pc = act->handler;
    cpu->res_valid = false;                 /* a trap breaks any LR/SC pair */
    return true;
}

static const char *si_code_name(int code)
{
    switch (code) {
    case SI_USER:    return "SI_USER";
    case SI_KERNEL:  return "SI_KERNEL";
    case SI_QUEUE:   return "SI_QUEUE";
    case SI_TIMER:   return "SI_TIMER";
    case SI_MESGQ:   return "SI_MESGQ";
    case SI_ASYNCIO: return "SI_ASYNCIO";
    case SI_SIGIO:   return "SI_SIGIO";
    case SI_TKILL:   return "SI_TKILL";
    default:         return NULL;
    }
}

const char *signal_abbrev(int sig)
{
    static const char *const abbrev[32] = {
        [SIGHUP] = "HUP", [SIGINT] = "INT", [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
        [SIGTRAP] = "TRAP", [SIGABRT] = "ABRT", [SIGBUS] = "BUS", [SIGFPE] = "FPE",
        [SIGKILL] = "KILL", [SIGUSR1] = "USR1", [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
        [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM", [SIGTERM] = "TERM", [SIGSTKFLT] = "STKFLT",
        [SIGCHLD] = "CHLD", [SIGCONT] = "CONT", [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
        [SIGTTIN] = "TTIN", [SIGTTOU] = "TTOU", [SIGURG] = "URG", [SIGXCPU] = "XCPU",
        [SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH",
        [SIGIO] = "IO", [SIGPWR] = "PWR", [SIGSYS] = "SYS",
    };
    return sig > 0 && sig < 32 ? abbrev[sig] : NULL;
}

/* -strace: "--- SIGSEGV {si_signo=SIGSEGV, si_code=1, si_addr=0x...} ---" as qemu. */
static void strace_signal(int sig, const siginfo_t *si)
{
    if (!(opt.strace || (log_mask & LOG_STRACE)))
        return;
    FILE *f = log_file ? log_file : stderr;
    const char *abbr = signal_abbrev(sig);
    char name[16];
    if (abbr)
        snprintf(name, sizeof name, "SIG%s", abbr);
    else
        snprintf(name, sizeof name, "%d", sig);
    fprintf(f, "--- %s {si_signo=%s, si_code=", name, name);
    const char *code = si_code_name(si->si_code);
    if (code)
        fputs(code, f);
    else
        fprintf(f, "%d", si->si_code);
    if (si->si_code <= 0 || sig == SIGCHLD)
        fprintf(f, ", si_pid=%u, si_uid=%u", (unsigned)si->si_pid, (unsigned)si->si_uid);
    else if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP)
        fprintf(f, ", si_addr=0x%016llx", (unsigned long long)(uintptr_t)si->si_addr);
    fputs("} ---\n", f);
}

/* Die of sig as the default action would (exit status 128+sig). */
static _Noreturn void die_of(int sig)
{
    struct host_ksigaction dfl = { .handler = SIG_DFL };
    uint64_t set = SIGBIT(sig);
    host_sigaction(sig, &dfl, NULL);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, 8);
    guest_die_by_signal(sig);
}

/* A synchronous signal nobody can take: say where, then die of it. */
static _Noreturn void die_sync(const CPUState *cpu, int sig, uint64_t addr)
{
    const char *abbr = signal_abbrev(sig);
    fprintf(stderr, "xlat: guest SIG%s at pc 0x%llx", abbr ? abbr : "?",
            (unsigned long long)cpu->pc);
    if (sig == SIGSEGV || sig == SIGBUS)
        fprintf(stderr, " (address 0x%llx)", (unsigned long long)addr);
    fputc('\n', stderr);
    die_of(sig);
}

/* The frame for sig could not be built: the kernel's force_sigsegv. */
static void force_sigsegv(CPUState *cpu, int sig)
{
    if (sig == SIGSEGV)
        die_sync(cpu, SIGSEGV, cpu->x[2]);
    signal_raise_sync(cpu, SIGSEGV, SI_KERNEL, 0);
}

static void default_action(int sig)
{
    if (sig_default_ignored(sig))
        return;
    if (sig_default_stops(sig)) {
        kill(getpid(), SIGSTOP);            /* only in a race with rt_sigaction */
        return;
    }
    die_of(sig);
}

/* An asynchronous signal taken from the host (or held): deliver or act. */
static void deliver_async(CPUState *cpu, int sig, const siginfo_t *info, bool from_slot)
{
    ThreadSignals *ts = &thread_signals;
    if (ts->blocked & SIGBIT(sig)) {
        /* Blocked since it arrived (a handler's sa_mask): back to the host. */
        if (from_slot)
            requeue(sig, info, true);
        return;
    }
    struct target_sigaction act = take_action(sig);
    if (act.handler == TARGET_SIG_IGN)
        return;
    if (act.handler == TARGET_SIG_DFL) {
        default_action(sig);
        return;
    }
    strace_signal(sig, info);
    if (!setup_frame(cpu, sig, info, &act))
        force_sigsegv(cpu, sig);
}

/* Take one held SIGSEGV/SIGBUS the guest does not block (SIGBUS first, as the kernel). */
static int take_held(ThreadSignals *ts, siginfo_t *info)
{
    uint64_t ready = __atomic_load_n(&ts->held, __ATOMIC_ACQUIRE) & ~ts->blocked;
    if (!ready)
        return 0;
    int sig = (ready & SIGBIT(SIGBUS)) ? SIGBUS : SIGSEGV;
    *info = ts->held_info[sig == SIGSEGV ? 0 : 1];
    __atomic_and_fetch(&ts->held, ~SIGBIT(sig), __ATOMIC_RELEASE);
    return sig;
}

void signal_process_pending(CPUState *cpu)
{
    ThreadSignals *ts = &thread_signals;
    if (__builtin_expect(!ts->pending, 1))
        return;
    while (ts->pending) {
        siginfo_t info;
        ts->pending = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        int forced = ts->forced_sig;
        if (forced) {
            ts->forced_sig = 0;
            signal_raise_sync(cpu, forced, SI_KERNEL, 0);
        }
        int sig;
        while ((sig = take_held(ts, &info)))
            deliver_async(cpu, sig, &info, false);
        sig = ts->slot_sig;
        if (sig) {
            info = ts->slot_info;
            ts->slot_sig = 0;
            deliver_async(cpu, sig, &info, true);
        }
        /* Let the next host signal in: it lands in the slot at once. */
        host_mask_sync(ts);
    }
    if (ts->in_suspend) {       /* woken, but no handler ran after all */
        ts->blocked = ts->suspend_saved;
        ts->in_suspend = false;
        host_mask_sync(ts);
    }
}

void signal_raise_sync(CPUState *cpu, int sig, int code, uint64_t addr)
{
    ThreadSignals *ts = &thread_signals;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = sig;
    info.si_code = code;
    info.si_addr = (void *)(uintptr_t)addr;

    struct target_sigaction act = take_action(sig);
    /* force_sig: a blocked or ignored synchronous signal kills. */
    if ((ts->blocked & SIGBIT(sig)) || act.handler <= TARGET_SIG_IGN)
        die_sync(cpu, sig, addr);
    strace_signal(sig, &info);
    if (!setup_frame(cpu, sig, &info, &act))
        force_sigsegv(cpu, sig);
}

void signal_force(int sig)
{
    ThreadSignals *ts = &thread_signals;
    ts->forced_sig = sig;
    ts->pending = 1;
}

/* -- rt_sigreturn ---------------------------------------------------------------------- */

int64_t signal_sigreturn(CPUState *cpu)
{
    ThreadSignals *ts = &thread_signals;
    target_ucontext uc;
    uint64_t frame = cpu->x[2];

    if (copy_from_guest(&uc, frame + offsetof(target_rt_sigframe, uc), sizeof uc)) {
        signal_force(SIGSEGV);              /* badframe */
        return 0;
    }
    ts->blocked = uc.uc_sigmask & ~UNBLOCKABLE;
    ts->in_suspend = false;
    restore_regs(cpu, &uc.uc_mcontext);
    cpu->res_valid = false;
    /* The kernel ignores every error here but a fault (none: uc is a copy). */
    signal_altstack(cpu->x[2], &uc.uc_stack, NULL, TARGET_MINSIGSTKSZ);
    host_mask_sync(ts);
    check_held(ts);
    ts->sigreturned = true;
    return (int64_t)cpu->x[10];
}

/* -- The system call entry -------------------------------------------------------------- */

void signal_do_syscall(CPUState *cpu)
{
    ThreadSignals *ts = &thread_signals;
    if (ts->pending)
        return;             /* the signal first; the ecall runs when it returns */
    uint64_t a0 = cpu->x[10];
    ts->sigreturned = false;
    syscall_dispatch(cpu);
    if (ts->sigreturned)
        return;
    if (cpu->x[10] == (uint64_t)-XLAT_ERESTARTSYS) {
        cpu->x[10] = a0;    /* re-executed after the handler, as the kernel does */
        return;
    }
    cpu->pc += 4;           /* ecall has no compressed form */
}
