/*
 * Guest threads, fork, exit, futex and wait (see thread.h).
 *
 * clone with CLONE_VM|CLONE_THREAD starts a host thread (pthread) that runs
 * cpu_loop() on a copy of the caller's CPUState; the child is fully set up
 * (tid, CHILD_SETTID, PARENT_SETTID) before the parent's clone returns,
 * as on Linux. A clone without CLONE_VM is a host fork(); so is CLONE_VM
 * with CLONE_VFORK (posix_spawn, vfork), the child on the stack it was
 * given, in its own copy of memory: the parent waits until the child execs
 * or exits and then receives the child's writes to guest memory (vfork.h).
 * CLONE_VM alone (a process sharing memory without waiting) is refused.
 *
 * exit (93) ends the calling thread only; the process ends when its last
 * thread does, with the status of the thread-group leader (Linux reports
 * the leader's exit code). exit_group ends everything.
 *
 * futex is the host futex on g2h(uaddr): the guest window is ordinary host
 * memory, so waiters and wakers in any guest thread -- or, for shared
 * mappings, in other processes -- meet in the host kernel. Robust lists hold
 * guest pointers, so the exit-time walk the kernel would do is done here.
 */
#define _GNU_SOURCE
#include "user/thread.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/lock.h"
#include "riscv/interp.h"
#include "user/canary.h"
#include "user/cpu_loop.h"
#include "user/fault.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/vfork.h"

/* -- Thread bookkeeping ----------------------------------------------------- */

/* Live guest threads in this process; the main thread counts from the start. */
static int live_threads = 1;

/* Exit code of the thread-group leader, once it has called exit (93). */
static int leader_status;

/* Per guest thread: CLONE_CHILD_CLEARTID / set_tid_address, robust list. */
static __thread uint64_t clear_child_tid;
static __thread uint64_t robust_head;
/* The CPUState this host thread allocated (NULL for the main thread's). */
static __thread CPUState *owned_cpu;
/* Where a clone-created thread's exit returns to, to end its host thread. */
static __thread jmp_buf thread_exit_jmp;

#define ROBUST_LIST_HEAD_SIZE 24    /* struct robust_list_head on LP64 */
#define ROBUST_LIST_LIMIT     2048  /* the kernel's bound on the walk */

static long host_futex(uint64_t ga, int op, int val, const struct timespec *ts,
                       uint64_t ga2, int val3)
{
    return syscall(SYS_futex, g2h(ga), op, val, ts, ga2 ? g2h(ga2) : NULL, val3);
}

/* -- Exit -------------------------------------------------------------------- */

_Noreturn void thread_exit_process(int status)
{
    xlat_at_exit(status, 0);               /* -d stats, perf maps, gdb */
    fflush(NULL);
    canary_check();                    /* XLAT_CANARY_CHECK=1 only */
    _exit(status & 0xff);
}

/* The kernel's handle_futex_death for one robust-list entry. */
static void robust_futex_death(uint64_t uaddr, pid_t tid, bool pi, bool pending)
{
    if ((uaddr & 3) || !guest_access_ok(uaddr, 4, PROT_READ | PROT_WRITE))
        return;
    uint32_t *p = g2h(uaddr);
    uint32_t uval = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    for (;;) {
        if (pending && !pi && uval == 0) {
            /* A lock was being taken or dropped: wake one waiter to retry. */
            host_futex(uaddr, FUTEX_WAKE, 1, NULL, 0, 0);
            return;
        }
        if ((uval & FUTEX_TID_MASK) != (uint32_t)tid)
            return;
        uint32_t mval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
        if (__atomic_compare_exchange_n(p, &uval, mval, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            break;
    }
    /* PI futexes with waiters are handed over by the host kernel itself. */
    if (!pi && (uval & FUTEX_WAITERS))
        host_futex(uaddr, FUTEX_WAKE, 1, NULL, 0, 0);
}

/* Walk the guest's robust list (struct robust_list_head at robust_head). */
static void robust_list_exit(pid_t tid)
{
    struct { uint64_t next; int64_t offset; uint64_t pending; } head;
    if (!robust_head || copy_from_guest(&head, robust_head, sizeof head))
        return;
    uint64_t entry = head.next;
    for (int n = 0; entry != robust_head && n < ROBUST_LIST_LIMIT; n++) {
        uint64_t next;
        if (copy_from_guest(&next, entry & ~1ULL, sizeof next))
            return;
        if (entry != head.pending)
            robust_futex_death((entry & ~1ULL) + (uint64_t)head.offset, tid, entry & 1, false);
        entry = next;
    }
    if (head.pending)
        robust_futex_death((head.pending & ~1ULL) + (uint64_t)head.offset, tid,
                           head.pending & 1, true);
}

/* What the kernel does for an exiting thread's memory: clear_child_tid, robust list. */
static void thread_release_guest(void)
{
    robust_list_exit(gettid());
    if (clear_child_tid) {
        uint32_t zero = 0;
        if (copy_to_guest(clear_child_tid, &zero, sizeof zero) == 0)
            host_futex(clear_child_tid, FUTEX_WAKE, 1, NULL, 0, 0);
        clear_child_tid = 0;
    }
}

/* exit: end the calling thread; the last one out ends the process. */
int64_t sys_exit(CPUState *cpu, const uint64_t *a)
{
    int status = (int)a[0] & 0xff;
    if (opt.strace)
        fputc('\n', log_file ? log_file : stderr);
    if (gettid() == getpid())
        __atomic_store_n(&leader_status, status, __ATOMIC_RELEASE);
    signal_thread_exit();
    thread_release_guest();
    if (__atomic_sub_fetch(&live_threads, 1, __ATOMIC_ACQ_REL) == 0)
        thread_exit_process(__atomic_load_n(&leader_status, __ATOMIC_ACQUIRE));
    exec_cpu_exit(cpu);                /* its jump cache and decoded-instruction cache */
    if (owned_cpu)
        longjmp(thread_exit_jmp, 1);   /* back to thread_start, which returns */
    /* The main thread: the process lives on while other threads run. */
    fault_thread_exit();
    pthread_exit(NULL);
}

int64_t sys_exit_group(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (opt.strace)
        fputc('\n', log_file ? log_file : stderr);
    /* No clear_child_tid wake here: the kernel kills the other threads
     * first, so none of them can see this thread "exit" and run on. */
    thread_exit_process((int)a[0]);
}

/* -- clone: the common argument block ---------------------------------------- */

/* clone's and clone3's arguments, in clone3's terms. */
typedef struct CloneArgs {
    uint64_t flags;
    uint64_t pidfd;         /* guest int * for CLONE_PIDFD */
    uint64_t child_tid;     /* guest pid_t * */
    uint64_t parent_tid;    /* guest pid_t * */
    uint64_t exit_signal;
    uint64_t stack;         /* new sp (0: the caller's) */
    uint64_t tls;
} CloneArgs;

/* The flags a guest thread must have, and those it may have (as qemu). */
#define THREAD_FLAGS   (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
                        CLONE_THREAD | CLONE_SYSVSEM)
#define THREAD_OPTIONAL (CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | \
                         CLONE_CHILD_CLEARTID | CLONE_DETACHED)
/* The flags a fork-like clone may have (CLONE_VM only with CLONE_VFORK). */
#define FORK_OPTIONAL  (CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | \
                        CLONE_CHILD_CLEARTID | CLONE_VFORK | CLONE_VM | CLONE_PIDFD | \
                        CLONE_PTRACE | CLONE_UNTRACED | CLONE_SYSVSEM | \
                        CLONE_CLEAR_SIGHAND_BIT)
#define CLONE_CLEAR_SIGHAND_BIT 0x100000000ULL

static int64_t clone_unsupported(uint64_t flags, const char *why)
{
    xlat_log(LOG_UNIMP, "xlat: clone flags 0x%llx not supported (%s)\n",
             (unsigned long long)flags, why);
    return -EINVAL;
}

static void put_tid(uint64_t ga, pid_t tid)
{
    if (ga)
        copy_to_guest(ga, &tid, sizeof tid);   /* the kernel ignores a fault too */
}

/* -- clone: a new guest thread ------------------------------------------------ */

typedef struct ThreadStart {
    CPUState *cpu;          /* the child's state, owned by the child */
    CloneArgs args;
    ThreadSignals sig;      /* the parent's signal state: the mask is inherited */
    pid_t tid;              /* out: the child's tid */
    sem_t started;          /* posted once the child is set up */
} ThreadStart;

static void *thread_start(void *arg)
{
    ThreadStart *ts = arg;
    CPUState *cpu = ts->cpu;
    uint64_t flags = ts->args.flags;
    pid_t tid = gettid();

    fault_thread_init();
    owned_cpu = cpu;
    clear_child_tid = flags & CLONE_CHILD_CLEARTID ? ts->args.child_tid : 0;
    robust_head = 0;
    if (flags & CLONE_CHILD_SETTID)
        put_tid(ts->args.child_tid, tid);
    if (flags & CLONE_PARENT_SETTID)
        put_tid(ts->args.parent_tid, tid);
    ThreadSignals parent_sig = ts->sig;
    ts->tid = tid;
    sem_post(&ts->started);            /* ts is gone after this */
    if (setjmp(thread_exit_jmp) == 0) {
        signal_thread_init(&parent_sig);   /* sets the host mask from the guest's */
        cpu_loop(cpu);
    }
    /* The guest thread called exit (sys_exit); end the host thread normally. */
    free(owned_cpu);
    owned_cpu = NULL;
    fault_thread_exit();
    return NULL;
}

static int64_t clone_thread(CPUState *cpu, const CloneArgs *ca)
{
    if ((ca->flags & THREAD_FLAGS) != THREAD_FLAGS ||
        (ca->flags & ~(uint64_t)(THREAD_FLAGS | THREAD_OPTIONAL | CSIGNAL)))
        return clone_unsupported(ca->flags, "thread");

    CPUState *child = malloc(sizeof *child);
    if (!child)
        return -ENOMEM;
    *child = *cpu;
    child->x[10] = 0;                  /* a0: clone returns 0 in the child */
    child->pc = cpu->pc + 4;           /* past the ecall: the child starts in cpu_loop */
    child->res_valid = false;
    child->exit_request = 0;
    /* The exec state (jump cache, decode cache) is the new thread's own:
     * cpu_loop gives it one (exec_cpu_init). */
    if (ca->stack)
        child->x[2] = ca->stack;
    if (ca->flags & CLONE_SETTLS)
        child->x[4] = ca->tls;

    ThreadStart ts = { .cpu = child, .args = *ca, .sig = thread_signals };
    sem_init(&ts.started, 0, 0);

    /* The child starts with every host signal blocked and takes the
     * guest's mask once it is set up (signal_thread_init). */
    uint64_t old_mask = signal_host_block_all();

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 2 << 20);
    __atomic_add_fetch(&live_threads, 1, __ATOMIC_ACQ_REL);
    locks_shared_from_now();
    pthread_t th;
    int err = pthread_create(&th, &attr, thread_start, &ts);
    pthread_attr_destroy(&attr);
    if (err == 0)
        while (sem_wait(&ts.started) != 0)
            ;
    signal_host_setmask(old_mask);
    sem_destroy(&ts.started);
    if (err) {
        __atomic_sub_fetch(&live_threads, 1, __ATOMIC_ACQ_REL);
        free(child);
        return -EAGAIN;
    }
    return ts.tid;
}

/* -- clone: a new process -------------------------------------------------------- */

/* The child side of a fork-like clone: only the calling thread survives. */
static void fork_child_setup(CPUState *cpu, const CloneArgs *ca)
{
    __atomic_store_n(&live_threads, 1, __ATOMIC_RELEASE);
    leader_status = 0;
    robust_head = 0;      /* the kernel does not inherit it */
    clear_child_tid = ca->flags & CLONE_CHILD_CLEARTID ? ca->child_tid : 0;
    if (ca->flags & CLONE_CHILD_SETTID)
        put_tid(ca->child_tid, gettid());
    if (ca->stack)
        cpu->x[2] = ca->stack;
    if (ca->flags & CLONE_SETTLS)
        cpu->x[4] = ca->tls;
    signal_fork_child();
    if (ca->flags & CLONE_CLEAR_SIGHAND_BIT)   /* clone3: glibc's posix_spawn uses it */
        signal_clear_sighand();
}

/*
 * A new process. CLONE_VFORK: the parent waits for the child's execve or
 * exit; with CLONE_VM too, the child's writes to guest memory until then
 * are copied back into the parent (vfork.c), where the kernel would have
 * made them in shared memory. The parent resumes with its own registers.
 */
static int64_t clone_fork(CPUState *cpu, const CloneArgs *ca)
{
    uint64_t flags = ca->flags;
    bool vfork = flags & CLONE_VFORK, shared_vm = flags & CLONE_VM;
    if (flags & ~(uint64_t)(FORK_OPTIONAL | CSIGNAL))
        return clone_unsupported(ca->flags, "process");
    if ((flags & CLONE_PIDFD) && (flags & CLONE_PARENT_SETTID) &&
        ca->pidfd == ca->parent_tid)
        return -EINVAL;
    /*
     * Another exit signal would need a raw clone, which skips the fork
     * handlers that give the child its own locks and code buffer.
     */
    if (ca->exit_signal != SIGCHLD)
        return clone_unsupported(ca->flags | ca->exit_signal, "exit signal other than SIGCHLD");

    if (log_file)
        fflush(log_file);          /* no half-written strace line in both */
    /* The fork lock first: it also keeps exec_before_fork (its ring
     * position is per process, not per thread) to one thread at a time. */
    VforkLink link;
    vfork_fork_begin(&link, vfork);
    exec_before_fork();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        vfork_fork_parent(&link);
        vfork_wait(&link);             /* nobody holds the other end: returns at once */
        return -err;
    }
    if (pid == 0) {
        /* Tracking first: what the kernel writes into shared memory for
         * the child (CHILD_SETTID, PARENT_SETTID) goes back too. */
        vfork_fork_child(&link, shared_vm);
        if (shared_vm && (flags & CLONE_PARENT_SETTID))
            put_tid(ca->parent_tid, gettid());
        fork_child_setup(cpu, ca);
        return 0;
    }
    vfork_fork_parent(&link);
    if (flags & CLONE_PARENT_SETTID)
        put_tid(ca->parent_tid, pid);
    if (flags & CLONE_PIDFD) {         /* before the wait: the child may be reaped after it */
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0)
            copy_to_guest(ca->pidfd, &fd, sizeof fd);
    }
    vfork_wait(&link);                 /* CLONE_VFORK: until the child execs or exits */
    return pid;
}

static int64_t do_clone(CPUState *cpu, const CloneArgs *ca)
{
    if ((ca->flags & (CLONE_VM | CLONE_VFORK | CLONE_THREAD)) == CLONE_VM)
        return clone_unsupported(ca->flags, "CLONE_VM without CLONE_THREAD or CLONE_VFORK");
    if (ca->flags & CLONE_VM && !(ca->flags & CLONE_VFORK))
        return clone_thread(cpu, ca);
    if (ca->flags & (CLONE_THREAD | CLONE_SIGHAND))
        return clone_unsupported(ca->flags, "CLONE_THREAD/SIGHAND need CLONE_VM");
    return clone_fork(cpu, ca);
}

/*
 * clone(flags, newsp, parent_tid, tls, child_tid): riscv's argument order.
 * Only the low 32 bits of flags count (the kernel's lower_32_bits), and
 * CLONE_PIDFD's descriptor goes where parent_tid points.
 */
int64_t sys_clone(CPUState *cpu, const uint64_t *a)
{
    uint32_t flags = (uint32_t)a[0];
    CloneArgs ca = {
        .flags = flags & ~(uint32_t)CSIGNAL, .exit_signal = flags & CSIGNAL,
        .stack = a[1], .parent_tid = a[2], .tls = a[3], .child_tid = a[4], .pidfd = a[2],
    };
    return do_clone(cpu, &ca);
}

/* struct clone_args (include/uapi/linux/sched.h): every field a u64. */
struct target_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    uint64_t set_tid, set_tid_size, cgroup;
};
#define CLONE_ARGS_SIZE_VER0 64

int64_t sys_clone3(CPUState *cpu, const uint64_t *a)
{
    struct target_clone_args k;
    uint64_t size = a[1];
    memset(&k, 0, sizeof k);
    if (size < CLONE_ARGS_SIZE_VER0 || size > 4096)
        return size < CLONE_ARGS_SIZE_VER0 ? -EINVAL : -E2BIG;
    if (copy_from_guest(&k, a[0], size < sizeof k ? size : sizeof k))
        return -EFAULT;
    for (uint64_t off = sizeof k; off < size; off++) {  /* unknown tail must be 0 */
        uint8_t b;
        if (copy_from_guest(&b, a[0] + off, 1))
            return -EFAULT;
        if (b)
            return -E2BIG;
    }
    if (k.exit_signal & ~(uint64_t)CSIGNAL || (k.flags & CSIGNAL) ||
        ((k.flags & CLONE_THREAD) && k.exit_signal))
        return -EINVAL;
    if (k.set_tid_size || (k.stack == 0) != (k.stack_size == 0))
        return k.set_tid_size ? clone_unsupported(k.flags, "set_tid") : -EINVAL;
    CloneArgs ca = {
        .flags = k.flags, .pidfd = k.pidfd, .child_tid = k.child_tid,
        .parent_tid = k.parent_tid, .exit_signal = k.exit_signal,
        .stack = k.stack ? k.stack + k.stack_size : 0,   /* the stack grows down */
        .tls = k.tls,
    };
    return do_clone(cpu, &ca);
}

/* -- Thread identity --------------------------------------------------------------- */

int64_t sys_gettid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return gettid();
}

int64_t sys_set_tid_address(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    clear_child_tid = a[0];
    return gettid();
}

int64_t sys_set_robust_list(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[1] != ROBUST_LIST_HEAD_SIZE)
        return -EINVAL;
    robust_head = a[0];
    return 0;
}

/* Only the caller's own list is known here (other threads keep theirs). */
int64_t sys_get_robust_list(CPUState *cpu, const uint64_t *a)
{
    uint64_t len = ROBUST_LIST_HEAD_SIZE;
    (void)cpu;
    if (a[0] != 0 && (pid_t)a[0] != gettid())
        return kill((pid_t)a[0], 0) < 0 ? -ESRCH : -EPERM;
    if (copy_to_guest(a[2], &len, sizeof len) || copy_to_guest(a[1], &robust_head, 8))
        return -EFAULT;
    return 0;
}

/* -- futex ---------------------------------------------------------------------------- */

/* Which futex commands read a timeout pointer in argument 4 (else it is val2). */
static bool futex_has_timeout(int cmd)
{
    return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
           cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI;
}

static bool futex_has_uaddr2(int cmd)
{
    return cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE || cmd == FUTEX_WAKE_OP ||
           cmd == FUTEX_WAIT_REQUEUE_PI || cmd == FUTEX_CMP_REQUEUE_PI;
}

int64_t sys_futex(CPUState *cpu, const uint64_t *a)
{
    int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
    struct timespec ts, *tsp = NULL;
    uint64_t uaddr2 = 0;
    (void)cpu;

    switch (cmd) {
    case FUTEX_WAIT: case FUTEX_WAKE: case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE:
    case FUTEX_WAKE_OP: case FUTEX_LOCK_PI: case FUTEX_UNLOCK_PI: case FUTEX_TRYLOCK_PI:
    case FUTEX_WAIT_BITSET: case FUTEX_WAKE_BITSET: case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_CMP_REQUEUE_PI: case FUTEX_LOCK_PI2:
        break;
    default:
        xlat_log(LOG_UNIMP, "xlat: unsupported futex op %d\n", op);
        return -ENOSYS;
    }
    CHECK_WINDOW(a[0], 4);
    if (futex_has_uaddr2(cmd)) {
        CHECK_WINDOW(a[4], 4);
        uaddr2 = a[4];
    }
    if (futex_has_timeout(cmd) && a[3]) {
        if (copy_from_guest(&ts, a[3], sizeof ts))   /* same layout as the host's */
            return -EFAULT;
        tsp = &ts;
    }
    const void *arg4 = futex_has_timeout(cmd) ? (const void *)tsp : (const void *)(uintptr_t)a[3];
    /* Waits can block: a signal must interrupt them (safe_syscall). */
    return safe_syscall(SYS_futex, g2h(a[0]), (long)op, (long)(uint32_t)a[2], arg4,
                        uaddr2 ? g2h(uaddr2) : NULL, (long)(uint32_t)a[5]);
}

/* -- wait ---------------------------------------------------------------------------- */

int64_t sys_wait4(CPUState *cpu, const uint64_t *a)
{
    int status;
    struct target_rusage ru;
    (void)cpu;
    long r = safe_syscall(SYS_wait4, (long)(pid_t)a[0], a[1] ? &status : NULL, (long)(int)a[2],
                          a[3] ? &ru : NULL);
    if (r < 0)
        return r;
    if (r > 0 && a[1] && copy_to_guest(a[1], &status, sizeof status))
        return -EFAULT;
    if (r > 0 && a[3] && copy_to_guest(a[3], &ru, sizeof ru))
        return -EFAULT;
    return r;
}

/*
 * waitid(idtype, id, infop, options, rusage). The kernel fills signo, errno,
 * code, pid, uid and status of infop (generic siginfo: the same offsets on
 * x86-64), and leaves the rest alone.
 */
int64_t sys_waitid(CPUState *cpu, const uint64_t *a)
{
    siginfo_t si;
    struct target_rusage ru;
    (void)cpu;
    memset(&si, 0, sizeof si);
    long r = safe_syscall(SYS_waitid, (long)(int)a[0], (long)(pid_t)a[1], a[2] ? &si : NULL,
                          (long)(int)a[3], a[4] ? &ru : NULL);
    if (r < 0)
        return r;
    if (a[2]) {
        const uint8_t *p = (const uint8_t *)&si;
        if (copy_to_guest(a[2], p, 12) || copy_to_guest(a[2] + 16, p + 16, 12))
            return -EFAULT;
    }
    if (a[4] && copy_to_guest(a[4], &ru, sizeof ru))
        return -EFAULT;
    return r;
}

/* -- Scheduling ------------------------------------------------------------------------- */

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

/* struct sched_param is one int on both; pass the guest's pointer on. */
int64_t sys_sched_setparam(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], sizeof(int));
    return host_ret(syscall(SYS_sched_setparam, (pid_t)a[0], a[1] ? g2h(a[1]) : NULL));
}

int64_t sys_sched_getparam(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], sizeof(int));
    return host_ret(syscall(SYS_sched_getparam, (pid_t)a[0], a[1] ? g2h(a[1]) : NULL));
}

int64_t sys_sched_setscheduler(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[2], sizeof(int));
    return host_ret(syscall(SYS_sched_setscheduler, (pid_t)a[0], (int)a[1],
                            a[2] ? g2h(a[2]) : NULL));
}

int64_t sys_sched_getscheduler(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_sched_getscheduler, (pid_t)a[0]));
}

int64_t sys_sched_get_priority_max(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_sched_get_priority_max, (int)a[0]));
}

int64_t sys_sched_get_priority_min(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_sched_get_priority_min, (int)a[0]));
}

int64_t sys_sched_rr_get_interval(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (syscall(SYS_sched_rr_get_interval, (pid_t)a[0], &ts) < 0)
        return -errno;
    return copy_to_guest(a[1], &ts, sizeof ts);
}

/* struct sched_attr: the same u32/u64 fields; its first u32 is its size. */
int64_t sys_sched_setattr(CPUState *cpu, const uint64_t *a)
{
    uint32_t size;
    (void)cpu;
    if (copy_from_guest(&size, a[1], sizeof size))
        return -EFAULT;
    CHECK_WINDOW(a[1], size < 48 ? 48 : size);
    return host_ret(syscall(SYS_sched_setattr, (pid_t)a[0], g2h(a[1]), (unsigned)a[2]));
}

int64_t sys_sched_getattr(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(syscall(SYS_sched_getattr, (pid_t)a[0], g2h(a[1]), (unsigned)a[2],
                            (unsigned)a[3]));
}

/*
 * Guest threads are host threads and guest memory is host memory, so the
 * host's barriers order guest accesses too: pass membarrier through.
 */
int64_t sys_membarrier(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_membarrier, (int)a[0], (unsigned)a[1], (int)a[2]));
}
