/*
 * gdb remote serial protocol stub for -g PORT (QEMU_GDB).
 *
 * main() calls gdb_init() before the first guest instruction: it listens on
 * the port, accepts one gdb connection and stops at the entry point. While
 * gdb is attached, cpu_loop() runs guest code through gdb_run():
 *
 *  - continuing with no breakpoint or watchpoint set runs at full speed
 *    (the JIT, or the interpreter with --interp);
 *  - stepping, or continuing with any breakpoint or watchpoint set, runs one
 *    instruction at a time with the interpreter (interp_step, the golden
 *    model), checking the pc against the breakpoints before each one and
 *    the access of each load/store/AMO against the watchpoints. Breakpoints
 *    are never written into guest memory, so translated code needs no
 *    invalidation and the guest cannot see them. The cost is speed while a
 *    breakpoint exists; the choice keeps the JIT untouched and exact.
 *  - a synchronous guest signal (SIGSEGV, SIGILL, SIGTRAP...) stops in gdb
 *    first; it is delivered only if gdb resumes with it (C/vCont;C), as in
 *    qemu-user;
 *  - Ctrl-C in gdb (0x03) stops the running program with SIGINT: a watcher
 *    thread reads the socket while the program runs and kicks the CPU.
 *
 * The protocol itself (packets, registers, breakpoint lists) is the shared
 * core's (exec/gdb_rsp.c, riscv/gdb_target.c); this file is how user mode
 * runs under it. Memory goes through copy_from_guest and copy_to_guest,
 * so bad addresses answer E14 instead of faulting. Threads: the debugged
 * thread is the one that was running when gdb attached (the main thread);
 * other guest threads run freely (no breakpoints) and are not listed: a
 * gap. A forked child runs undebugged.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/lock.h"
#include "exec/gdb_rsp.h"
#include "riscv/gdb_target.h"
#include "user/fault.h"
#include "user/gdbstub.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"

bool gdb_active;

static int gdb_fd = -1;
static pid_t gdb_tid;                   /* the debugged thread */
static CPUState *debugged_cpu;
static GdbSession session;

static bool stepping;                   /* s: stop after one instruction */
static bool skip_bp_once;               /* resume from a breakpoint: execute it first */
static bool stop_next;                  /* an ecall ended a step: stop once it has run */
static char stop_next_extra[64];        /* ... with this stop-reply detail (watch:) */

/* -- The target: one thread, the guest window ------------------------------ */

static int thread_count(void *opaque) { (void)opaque; return 1; }
static int64_t thread_id(void *opaque, int i) { (void)opaque; (void)i; return gdb_tid; }

static CPUState *thread_cpu(void *opaque, int64_t tid)
{
    (void)opaque;
    return tid == gdb_tid ? debugged_cpu : NULL;
}

static size_t mem_read(void *opaque, CPUState *cpu, uint64_t addr, void *buf, size_t len)
{
    (void)opaque;
    (void)cpu;
    /* Byte by byte past the first failure, so a read that runs into an
     * unmapped page returns what it could (gdb accepts a short reply). */
    if (copy_from_guest(buf, addr, len) == 0)
        return len;
    size_t got = 0;
    while (got < len && copy_from_guest((char *)buf + got, addr + got, 1) == 0)
        got++;
    return got;
}

static bool mem_write(void *opaque, CPUState *cpu, uint64_t addr, const void *buf, size_t len)
{
    (void)opaque;
    (void)cpu;
    bool ok = copy_to_guest(addr, buf, len) == 0;
    if (!opt.interp_only)
        exec_invalidate_code(addr, len);    /* gdb may have patched code */
    return ok;
}

void gdb_exit(int status, int signal);

static void kill_target(void *opaque)
{
    (void)opaque;
    gdb_exit(-1, SIGKILL);
    _exit(137);
}

static const GdbTarget user_target = {
    .g_regs = RISCV_GDB_G_REGS,
    .pc_regno = RISCV_GDB_PC,
    .expedite = riscv_gdb_expedite,
    .attached = false,                      /* we started it: kill on quit */
    .reg_read = riscv_gdb_reg_read,
    .reg_write = riscv_gdb_reg_write,
    .thread_count = thread_count,
    .thread_id = thread_id,
    .thread_cpu = thread_cpu,
    .mem_read = mem_read,
    .mem_write = mem_write,
    .kill = kill_target,
};

/* -- Serving a stop ---------------------------------------------------------- */

enum { RESUME_NONE, RESUME_CONT, RESUME_STEP };

static int pending_resume = RESUME_CONT;
static int pending_deliver;             /* signal gdb asked to deliver on resume */

/*
 * Talk to gdb until it resumes the program (send_stop: send the stop
 * reply first; else gdb asks with '?'). Returns the resume mode; *deliver
 * is the signal gdb asked to deliver (0 none).
 */
static int serve(int stop_sig, const char *stop_extra, int *deliver, bool send_stop)
{
    GdbStop st = { .thread = gdb_tid, .signal = stop_sig };
    snprintf(st.detail, sizeof st.detail, "%s", stop_extra ? stop_extra : "");
    GdbResume r = gdb_serve(&session, &st, send_stop);
    *deliver = 0;
    switch (r.kind) {
    case GDB_DETACH:
        close(gdb_fd);
        /* fall through */
    case GDB_CLOSED:                        /* gdb went away: let the program run */
        gdb_active = false;
        return RESUME_CONT;
    default:
        return gdb_resume_action(&r, gdb_tid, deliver) == GDB_ACT_STEP ? RESUME_STEP
                                                                       : RESUME_CONT;
    }
}

/* The watchpoint the instruction at cpu->pc is about to trigger, or NULL;
 * *hit is the accessed address. Decoded from the instruction, so reads
 * (Z3) are caught as well as writes, and a write of an unchanged value
 * still stops, as with hardware watchpoints. */
static const GdbWatch *watch_hit(CPUState *cpu, uint64_t *hit)
{
    RiscvGdbAccess a;
    if (!riscv_gdb_insn_access(cpu, mem_read, NULL, &a))
        return NULL;
    return gdb_watch_hit(&session.points, a.addr, a.size, a.reads, a.writes, hit);
}

/* -- Ctrl-C while the program runs ------------------------------------------------ */

/*
 * While the debugged thread runs (outside serve()), a watcher thread owns
 * the socket: a 0x03 byte from gdb sets interrupt_pending and kicks the CPU
 * out of translated code (exit_request + exec_kick), and gdb_run() then
 * stops with SIGINT. The mutex hands the socket between the two threads.
 */
static pthread_mutex_t sock_lock = PTHREAD_MUTEX_INITIALIZER;
static bool running;                    /* the watcher may read the socket */
static volatile int interrupt_pending;

static void *watcher(void *arg)
{
    (void)arg;
    while (gdb_active) {
        struct pollfd p = { .fd = gdb_fd, .events = POLLIN };
        if (poll(&p, 1, 100) <= 0)
            continue;
        pthread_mutex_lock(&sock_lock);
        unsigned char c;
        if (running && recv(gdb_fd, &c, 1, MSG_DONTWAIT) == 1 && c == 3) {
            interrupt_pending = 1;
            debugged_cpu->exit_request = 1;
            if (!opt.interp_only)
                exec_kick(debugged_cpu);
        }
        pthread_mutex_unlock(&sock_lock);
        if (!running)
            usleep(10000);                  /* serve() reads it */
    }
    return NULL;
}

static void set_running(bool on)
{
    pthread_mutex_lock(&sock_lock);
    running = on;
    pthread_mutex_unlock(&sock_lock);
}

static void stop(int sig, const char *extra)
{
    set_running(false);
    pending_resume = serve(sig, extra, &pending_deliver, true);
    stepping = pending_resume == RESUME_STEP;
    skip_bp_once = true;
    set_running(gdb_active);
}

/* gdb pressed Ctrl-C: true if the caller should stop now (with SIGINT). */
static bool take_interrupt(CPUState *cpu, enum exit_reason *r)
{
    if (!interrupt_pending)
        return false;
    interrupt_pending = 0;
    if (*r == EXIT_REQUEST || *r == EXIT_NONE) {
        cpu->exit_request = 0;              /* cpu_loop still runs pending signals */
        return true;
    }
    stop_next = true;                       /* after the ecall/fault is handled */
    strcpy(stop_next_extra, "");
    return false;
}

/* A synchronous guest signal: gdb sees it first; deliver it only if asked. */
static enum exit_reason signal_stop(CPUState *cpu, enum exit_reason r)
{
    GuestSignal s = fault_signal_of(cpu, r);
    stop(s.signo, NULL);
    if (pending_deliver) {
        if (r == EXIT_ILLEGAL || r == EXIT_EBREAK)
            return r;
        /* gdb may deliver another signal than the fault's (same code and address). */
        signal_raise_sync(cpu, pending_deliver, s.code, s.addr);
        pending_deliver = 0;
        return EXIT_NONE;
    }
    return EXIT_NONE;                        /* dropped: re-run the instruction */
}

enum exit_reason gdb_run(CPUState *cpu)
{
    if (gettid() != gdb_tid)                 /* other threads: undebugged */
        return opt.interp_only ? interp_run(cpu) : exec_run(cpu);
    for (;;) {
        if (!gdb_active)
            return opt.interp_only ? interp_run(cpu) : exec_run(cpu);
        const GdbPoints *points = &session.points;
        if (!stepping && points->nbp == 0 && points->nwp == 0) {
            enum exit_reason r = opt.interp_only ? interp_run(cpu) : exec_run(cpu);
            if (take_interrupt(cpu, &r)) {
                stop(SIGINT, NULL);
                continue;
            }
            if (r == EXIT_FAULT || r == EXIT_ILLEGAL || r == EXIT_EBREAK)
                return gdb_active ? signal_stop(cpu, r) : r;
            return r;
        }
        enum exit_reason none = EXIT_NONE;
        if (take_interrupt(cpu, &none)) {
            stop(SIGINT, NULL);
            continue;
        }
        if (stop_next) {
            stop_next = false;
            stop(SIGTRAP, stop_next_extra[0] ? stop_next_extra : NULL);
            continue;
        }
        int bp = skip_bp_once ? -1 : gdb_break_at(points, cpu->pc);
        if (bp >= 0) {
            char why[16];
            gdb_break_reason(bp, why, sizeof why);
            stop(SIGTRAP, why);
            continue;
        }
        skip_bp_once = false;
        uint64_t hit = 0;
        const GdbWatch *w = points->nwp ? watch_hit(cpu, &hit) : NULL;
        char extra[64];
        if (w)
            gdb_watch_reason(w, hit, extra, sizeof extra);
        enum exit_reason r = interp_step(cpu);
        if (r == EXIT_FAULT || r == EXIT_ILLEGAL || r == EXIT_EBREAK)
            return signal_stop(cpu, r);
        if (w) {
            if (r == EXIT_ECALL) {           /* the syscall first, then stop */
                stop_next = true;
                strcpy(stop_next_extra, extra);
                return r;
            }
            stop(SIGTRAP, extra);
            continue;
        }
        if (r != EXIT_NONE) {
            /* An ecall (or exit request) for cpu_loop: a step over an ecall
             * stops once the syscall has run, at the next call. */
            if (stepping && r == EXIT_ECALL) {
                stop_next = true;
                stop_next_extra[0] = '\0';
            }
            return r;
        }
        if (stepping) {
            stop(SIGTRAP, NULL);
            continue;
        }
        if (cpu->exit_request)
            return EXIT_REQUEST;
    }
}

/* -- Setup and exit --------------------------------------------------------------- */

/* A forked child runs undebugged (gdb follows the parent). */
static void gdb_atfork_child(void)
{
    if (gdb_active)
        close(gdb_fd);
    gdb_active = false;
}

void gdb_init(int port, CPUState *cpu)
{
    char err[128];
    int ls = gdb_listen(NULL, port, err, sizeof err);
    if (ls < 0) {
        fprintf(stderr, "xlat: gdbstub: %s\n", err);
        exit(1);
    }
    fprintf(stderr, "xlat: waiting for gdb on port %d\n", port);
    gdb_fd = gdb_accept(ls);
    close(ls);
    if (gdb_fd < 0) {
        perror("xlat: gdbstub: accept");
        exit(1);
    }
    /* Keep the socket out of the guest's descriptor range. */
    int hi = fcntl(gdb_fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        close(gdb_fd);
        gdb_fd = hi;
    }
    static GdbTarget target;
    target = user_target;
    target.xml = riscv_gdb_target_xml(false);
    gdb_session_init(&session, gdb_fd, &target, NULL);
    pthread_atfork(NULL, NULL, gdb_atfork_child);
    gdb_tid = gettid();
    gdb_active = true;
    debugged_cpu = cpu;
    /* Stopped at the entry point: gdb asks why with '?'. */
    pending_resume = serve(SIGTRAP, NULL, &pending_deliver, false);
    stepping = pending_resume == RESUME_STEP;
    skip_bp_once = true;
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);                       /* guest signals go to guest threads */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    locks_shared_from_now();
    if (gdb_active && pthread_create(&t, NULL, watcher, NULL) == 0)
        pthread_detach(t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    set_running(gdb_active);
}

void gdb_exit(int status, int signal)
{
    if (!gdb_active || gettid() != gdb_tid)
        return;
    if (signal != SIGKILL)
        gdb_send_exit(&session, status, signal);
    gdb_active = false;
    close(gdb_fd);
}
