/*
 * System call dispatch (user mode).
 *
 * syscall_dispatch() looks the guest's a7 up in the table built from
 * syscall.def, prints the call for -strace, runs the handler and stores its
 * result (value or -errno) in a0. Handlers live in sys_file.c (files and
 * descriptors), sys_poll.c (poll/select/epoll, eventfd, signalfd,
 * inotify), sys_net.c (sockets), sys_time.c (clocks, sleeps, timers),
 * sys_task.c (credentials, priorities, memory locking), sys_ipc.c (SysV
 * IPC, pidfds), sys_proc.c (process, memory, misc) and the signal, thread
 * and exec files; each
 * validates its guest pointers so a bad pointer yields -EFAULT, never a host
 * crash. Unknown numbers return -ENOSYS and are reported with -d unimp.
 */
#define _GNU_SOURCE
#include "exec/exec.h"
#include "user/syscall.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/strace.h"
#include "user/sys_impl.h"
#include "user/vfork.h"

/* -- The table -------------------------------------------------------------- */

/*
 * No pointers in the table: each would be relocated at every start (xlat
 * is static-pie), and the relocated table copied into the process, three
 * page faults; the names in place and the handlers in a switch (a jump
 * table of relative offsets) need none.
 */
#define SYSCALL_TABLE_SIZE 512

typedef struct SyscallDesc {
    char name[23];
    char fmt[9];        /* strace format (syscall.def) */
} SyscallDesc;

static const SyscallDesc syscall_table[SYSCALL_TABLE_SIZE] = {
#define SYSCALL(nr, name, fn, fmt) [nr] = { #name, fmt },
#include "user/syscall.def"
#undef SYSCALL
};

/* The handler of system call nr, or NULL. */
static SyscallFn syscall_fn(uint64_t nr)
{
    switch (nr) {
#define SYSCALL(nr, name, fn, fmt) case nr: return fn;
#include "user/syscall.def"
#undef SYSCALL
    default: return NULL;
    }
}

/* One "unimplemented" message per number is enough. */
static uint8_t unimp_reported[SYSCALL_TABLE_SIZE];

static void report_unimplemented(uint64_t nr)
{
    if (!(log_mask & LOG_UNIMP))
        return;
    if (nr < SYSCALL_TABLE_SIZE) {
        if (unimp_reported[nr])
            return;
        unimp_reported[nr] = 1;
    }
    xlat_log(LOG_UNIMP, "xlat: unimplemented syscall %llu\n", (unsigned long long)nr);
}

/*
 * A host system call writing into a page xlat keeps host read-only fails
 * with EFAULT (the kernel does not take the fault to our handler): a page
 * the JIT write-protected because it holds translated code, or, in a vfork
 * child, one not yet copied for the parent (vfork.h: near a pointer
 * argument first, while that finds pages; the JIT's pages; then all).
 * Unprotect and retry.
 */
static int64_t retry_efault(CPUState *cpu, SyscallFn fn, const uint64_t *args)
{
    int64_t ret = -EFAULT;
    while (ret == -EFAULT && vfork_unprotect_args(args, 6))
        ret = fn(cpu, args);
    if (ret == -EFAULT) {
        vfork_before_exec_unprotect();
        if (exec_unwatch_all())
            ret = fn(cpu, args);
    }
    if (ret == -EFAULT && vfork_unprotect_all())
        ret = fn(cpu, args);
    return ret;
}

void syscall_dispatch(CPUState *cpu)
{
    uint64_t nr = cpu->x[17];
    const uint64_t *a = &cpu->x[10];
    SyscallFn fn = syscall_fn(nr);
    bool trace = opt.strace || (log_mask & LOG_STRACE);
    int64_t ret;

    if (!fn) {
        if (trace)
            strace_unknown(nr);
        report_unimplemented(nr);
        cpu->x[10] = (uint64_t)-ENOSYS;
        return;
    }
    /* Copy the arguments: the handler's result overwrites a0. */
    uint64_t args[6];
    memcpy(args, a, sizeof args);
    const SyscallDesc *d = &syscall_table[nr];    /* nr < SYSCALL_TABLE_SIZE: it has a handler */
    if (trace)
        strace_enter(d->name, d->fmt, args);
    ret = fn(cpu, args);
    if (ret == -EFAULT)
        ret = retry_efault(cpu, fn, args);
    if (trace)
        strace_exit(d->fmt, args, ret);
    cpu->x[10] = (uint64_t)ret;
}

/* -- Exit and death -------------------------------------------------------- */

/* exit and exit_group are in thread.c. */

void guest_die_by_signal(int sig)
{
    struct rlimit no_core = { 0, 0 };
    sigset_t set;

    xlat_at_exit(0, sig);                  /* -d stats, perf maps, gdb */
    if (log_file)
        fflush(log_file);
    fflush(stdout);
    fflush(stderr);
    /* The guest's core would be xlat's, which helps nobody (qemu does this too). */
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    /* Signals whose default action is not fatal end up here. */
    _exit(128 + sig);
}
