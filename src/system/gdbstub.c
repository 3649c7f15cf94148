/*
 * gdb for xlat-system (see gdbstub.h): the machine's side of the shared
 * remote protocol core (exec/gdb_rsp.c, riscv/gdb_target.c).
 *
 * One gdb thread owns the socket for the whole connection. While the
 * harts run it sleeps in poll() on the socket (Ctrl-C, the connection's
 * end) and on a pipe the harts and the machine write to (a hart stopped,
 * the machine ends). While they are stopped it runs gdb_serve().
 *
 * Holding the harts. Each hart has a `run` flag, changed under `lock`.
 * To stop the machine the flags are cleared and every hart kicked
 * (hart_kick: it leaves guest code, wfi or its HSM wait); each hart then
 * parks at its loop's top, marks itself `parked` and sleeps on
 * resume_cond. gdb touches a hart's registers and memory only once every
 * hart is parked; a parked hart leaves only when gdb sets its `run`
 * again, under the same lock, so it cannot slip out while gdb looks.
 *
 * Stops. A hart that hits a breakpoint or watchpoint, or finishes a step,
 * records the stop (the first one wins until the next resume), holds
 * every hart, wakes the gdb thread, and parks. Guest memory is never
 * patched: with any breakpoint or watchpoint set, running harts execute
 * one instruction at a time (interp_step) and compare the pc first, or a
 * straight-line run (interp_straight) when no breakpoint lies within its
 * reach; a hart with none set runs interp_run at full speed.
 *
 * Memory is read and written as the selected hart sees it: its virtual
 * addresses translated through its satp at its current privilege, without
 * permission checks, faults or A/D updates (sys_debug_access); RAM only.
 */
#define _GNU_SOURCE
#include "system/gdbstub.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exec/gdb_rsp.h"
#include "riscv/gdb_target.h"
#include "system/machine.h"
#include "system/sys_mem.h"

enum { SIG_INT = 2, SIG_TRAP = 5 };     /* gdb's signal numbers */

/* What gdb asked of one hart. */
typedef struct HartDebug {
    bool run;               /* may run guest code (set under lock; read atomically) */
    bool parked;            /* asleep in gdbstub_hart_park (under lock) */
    bool step;              /* run one instruction, then stop */
    bool skip_bp;           /* it reported the stop: its pc's breakpoint does not count */
    bool stop_after;        /* a step ended in a trap or SBI call: stop once it is taken */
} HartDebug;

bool gdbstub_enabled;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t parked_cond;     /* a hart parked (the gdb thread waits) */
    pthread_cond_t resume_cond;     /* gdb resumed harts (parked harts wait) */
    HartDebug hart[MACHINE_MAX_HARTS];
    bool stop_pending;              /* a stop since the last resume: `stop` */
    GdbStop stop;
    bool connected, serving;        /* a gdb; the harts are stopped for it */
    bool exit_reported;             /* W sent (or no gdb to send it to) */
    int listen_fd;
    int wake[2];                    /* a pipe: harts and the machine wake the gdb thread */
    GdbSession session;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .parked_cond = PTHREAD_COND_INITIALIZER,
        .resume_cond = PTHREAD_COND_INITIALIZER, .listen_fd = -1, .wake = { -1, -1 } };

static bool load_flag(const bool *f) { return __atomic_load_n(f, __ATOMIC_SEQ_CST); }
static void store_flag(bool *f, bool v) { __atomic_store_n(f, v, __ATOMIC_SEQ_CST); }

static void wake_gdb_thread(void)
{
    char c = 0;
    if (write(g.wake[1], &c, 1) < 0) {
        /* the pipe is full: the gdb thread has wake-ups to read already */
    }
}

/* -- Holding and releasing harts --------------------------------------------------- */

/* With lock held: every hart must stop; then hart_kick each (unlocked). */
static void hold_all_locked(void)
{
    for (unsigned i = 0; i < machine.nharts; i++)
        store_flag(&g.hart[i].run, false);
}

static void kick_all(void)
{
    for (unsigned i = 0; i < machine.nharts; i++)
        hart_kick(machine.harts[i]);
}

/* With lock held: sleep until every hart is parked (or the machine ends). */
static void wait_all_parked(void)
{
    for (;;) {
        unsigned n = 0;
        while (n < machine.nharts && g.hart[n].parked)
            n++;
        if (n == machine.nharts || machine.exit_requested)
            return;
        pthread_cond_wait(&g.parked_cond, &g.lock);
    }
}

/* With lock held: record a stop unless one is pending, and hold every hart. */
static void request_stop_locked(int64_t thread, int sig, const char *detail)
{
    if (!g.stop_pending) {
        g.stop_pending = true;
        g.stop = (GdbStop){ .thread = thread, .signal = sig };
        snprintf(g.stop.detail, sizeof g.stop.detail, "%s", detail);
    }
    hold_all_locked();
}

/* With lock held: run the harts gdb's resume names. A step runs only the
 * stepping harts; a continue every hart it names. */
static void resume_locked(const GdbResume *r)
{
    bool stepping = false, any = false;
    int sig;
    for (unsigned i = 0; i < machine.nharts; i++)
        stepping |= gdb_resume_action(r, i + 1, &sig) == GDB_ACT_STEP;
    for (unsigned i = 0; i < machine.nharts; i++) {
        HartDebug *d = &g.hart[i];
        int act = gdb_resume_action(r, i + 1, &sig);     /* signals: ignored, as QEMU */
        d->step = act == GDB_ACT_STEP;
        d->skip_bp = (int64_t)i + 1 == g.stop.thread;
        d->stop_after = false;
        store_flag(&d->run, stepping ? d->step : act != GDB_ACT_NONE);
        any |= d->run;
    }
    g.stop_pending = !any;                  /* no hart to run: stopped again at once */
    g.serving = false;
    pthread_cond_broadcast(&g.resume_cond);
}

/* With lock held: gdb is gone; the machine runs on without breakpoints. */
static void release_all_locked(void)
{
    g.session.points.nbp = g.session.points.nwp = 0;
    for (unsigned i = 0; i < machine.nharts; i++) {
        HartDebug *d = &g.hart[i];
        d->step = d->skip_bp = d->stop_after = false;
        store_flag(&d->run, true);
    }
    g.stop_pending = false;
    g.connected = g.serving = false;
    pthread_cond_broadcast(&g.resume_cond);
}

/* -- The hart loop's side ------------------------------------------------------------ */

bool gdbstub_hart_park(Hart *h)
{
    HartDebug *d = &g.hart[h->id];
    if (load_flag(&d->run))
        return false;
    pthread_mutex_lock(&g.lock);
    while (!d->run && !machine.exit_requested) {
        if (!d->parked) {
            d->parked = true;
            pthread_cond_broadcast(&g.parked_cond);
        }
        pthread_cond_wait(&g.resume_cond, &g.lock);
    }
    store_flag(&d->parked, false);
    pthread_mutex_unlock(&g.lock);
    return true;
}

bool gdbstub_hart_held(const Hart *h) { return !load_flag(&g.hart[h->id].run); }
bool gdbstub_hart_parked(const Hart *h) { return load_flag(&g.hart[h->id].parked); }
bool gdbstub_hart_stepping(const Hart *h) { return g.hart[h->id].step; }

/* h stops for gdb (a breakpoint, a watchpoint, a finished step). */
static enum exit_reason hart_stops(Hart *h, const char *detail)
{
    pthread_mutex_lock(&g.lock);
    request_stop_locked(h->id + 1, SIG_TRAP, detail);
    pthread_mutex_unlock(&g.lock);
    kick_all();
    wake_gdb_thread();
    return EXIT_REQUEST;                    /* the loop's top parks it */
}

static size_t mem_read(void *opaque, CPUState *cpu, uint64_t addr, void *buf, size_t len)
{
    (void)opaque;
    return sys_debug_access(cpu, addr, buf, len, false);
}

/* One instruction under gdb's watch, or a straight-line run when nothing
 * within its reach can stop it. */
static enum exit_reason step_watched(Hart *h, HartDebug *d, const GdbPoints *p)
{
    CPUState *cpu = &h->cpu;
    const GdbWatch *w = NULL;
    uint64_t hit = 0;
    RiscvGdbAccess a;
    if (p->nwp && riscv_gdb_insn_access(cpu, mem_read, NULL, &a))
        w = gdb_watch_hit(p, a.addr, a.size, a.reads, a.writes, &hit);
    bool straight = !d->step && !p->nwp &&
                    !gdb_break_in(p, cpu->pc + 1, cpu->pc + 4 * INTERP_STRAIGHT_MAX);
    enum exit_reason r = straight ? interp_straight(cpu) : interp_step(cpu);
    bool done = r == EXIT_NONE || r == EXIT_REQUEST || r == EXIT_WFI;
    if (w && done) {
        char why[64];
        gdb_watch_reason(w, hit, why, sizeof why);
        return hart_stops(h, why);
    }
    if (d->step) {
        if (done)                           /* wfi: a step does not sleep */
            return hart_stops(h, "");
        d->stop_after = true;               /* the loop takes the trap first */
    }
    return r;
}

enum exit_reason gdbstub_hart_run(Hart *h)
{
    CPUState *cpu = &h->cpu;
    HartDebug *d = &g.hart[h->id];
    if (!load_flag(&d->run))
        return EXIT_REQUEST;
    if (d->stop_after) {
        d->stop_after = false;
        return hart_stops(h, "");
    }
    const GdbPoints *p = &g.session.points;
    if (!d->step && p->nbp == 0 && p->nwp == 0)
        return hart_run_code(cpu);
    for (;;) {
        int bp = d->skip_bp ? -1 : gdb_break_at(p, cpu->pc);
        d->skip_bp = false;
        if (bp >= 0) {
            char why[16];
            gdb_break_reason(bp, why, sizeof why);
            return hart_stops(h, why);
        }
        enum exit_reason r = step_watched(h, d, p);
        if (r != EXIT_NONE)
            return r;
        if (cpu->exit_request)
            return EXIT_REQUEST;            /* an interrupt, a kick */
    }
}

void gdbstub_wake(void)
{
    if (!gdbstub_enabled)
        return;
    pthread_mutex_lock(&g.lock);
    pthread_cond_broadcast(&g.resume_cond);
    pthread_cond_broadcast(&g.parked_cond);
    pthread_mutex_unlock(&g.lock);
    wake_gdb_thread();
}

/* -- The target gdb_rsp serves ---------------------------------------------------------- */

static int thread_count(void *opaque) { (void)opaque; return (int)machine.nharts; }
static int64_t thread_id(void *opaque, int i) { (void)opaque; return i + 1; }

static CPUState *thread_cpu(void *opaque, int64_t tid)
{
    (void)opaque;
    return tid >= 1 && tid <= machine.nharts ? &machine.harts[tid - 1]->cpu : NULL;
}

static void thread_name(void *opaque, int64_t tid, char *buf, size_t cap)
{
    (void)opaque;
    const Hart *h = machine.harts[tid - 1];
    bool started = __atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE) == HSM_STARTED;
    snprintf(buf, cap, "hart %u, %s", h->id,
             !started ? "stopped (HSM)" : (const char *[]){ "U-mode", "S-mode", "?", "M-mode" }
                                              [h->cpu.priv.mode & 3]);
}

static bool mem_write(void *opaque, CPUState *cpu, uint64_t addr, const void *buf, size_t len)
{
    (void)opaque;
    return sys_debug_access(cpu, addr, (void *)buf, len, true) == len;
}

static void kill_machine(void *opaque)
{
    (void)opaque;
    fprintf(stderr, "xlat-system: terminated by gdb\n");
    exit(0);                                /* as QEMU's k; atexit restores the tty */
}

static GdbTarget machine_target = {
    .g_regs = RISCV_GDB_G_REGS,
    .pc_regno = RISCV_GDB_PC,
    .expedite = riscv_gdb_expedite,
    .attached = true,                       /* gdb detaches on quit: the machine runs on */
    .reg_read = riscv_gdb_reg_read,
    .reg_write = riscv_gdb_reg_write,
    .thread_count = thread_count,
    .thread_id = thread_id,
    .thread_cpu = thread_cpu,
    .thread_name = thread_name,
    .mem_read = mem_read,
    .mem_write = mem_write,
    .kill = kill_machine,
};

/* -- The gdb thread ------------------------------------------------------------------------ */

/* With lock held: the machine ended: send W once. */
static void report_exit_locked(void)
{
    if (g.connected && !g.exit_reported) {
        pthread_mutex_unlock(&g.lock);
        gdb_send_exit(&g.session, machine.exit_status, 0);
        pthread_mutex_lock(&g.lock);
    }
    g.exit_reported = true;
    pthread_cond_broadcast(&g.parked_cond);        /* gdbstub_report_exit waits on it */
}

static void drain_wake_pipe(void)
{
    char buf[64];
    while (read(g.wake[0], buf, sizeof buf) > 0)
        ;
}

/* A byte from gdb while the harts run: Ctrl-C stops them; false if the
 * connection ended. */
static bool read_while_running(int fd)
{
    unsigned char c;
    ssize_t n = recv(fd, &c, 1, 0);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    if (c == 3) {
        pthread_mutex_lock(&g.lock);
        request_stop_locked(g.session.last.thread, SIG_INT, "");
        pthread_mutex_unlock(&g.lock);
        kick_all();
    }
    return true;                            /* acks and other bytes: ignored */
}

/*
 * The harts run: wait for a stop (true, *stop filled, every hart parked)
 * or the end of the connection or of the machine (false).
 */
static bool wait_for_stop(int fd, GdbStop *stop)
{
    for (;;) {
        pthread_mutex_lock(&g.lock);
        if (g.stop_pending || machine.exit_requested) {
            wait_all_parked();
            bool ended = machine.exit_requested;
            if (ended)
                report_exit_locked();
            else
                g.serving = true;
            *stop = g.stop;
            pthread_mutex_unlock(&g.lock);
            return !ended;
        }
        pthread_mutex_unlock(&g.lock);
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = g.wake[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0)
            continue;                       /* EINTR */
        if (p[1].revents)
            drain_wake_pipe();
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !read_while_running(fd))
            return false;
    }
}

/* Stop the machine for gdb and wait until every hart is parked. */
static void stop_machine(int sig)
{
    pthread_mutex_lock(&g.lock);
    request_stop_locked(1, sig, "");
    pthread_mutex_unlock(&g.lock);
    kick_all();
    pthread_mutex_lock(&g.lock);
    wait_all_parked();
    pthread_mutex_unlock(&g.lock);
}

/* One gdb connection, from its first packet to its end. */
static void serve_connection(int fd)
{
    stop_machine(SIG_TRAP);                 /* QEMU stops the machine on connect too */
    pthread_mutex_lock(&g.lock);
    gdb_session_init(&g.session, fd, &machine_target, NULL);
    g.connected = g.serving = true;
    GdbStop stop = g.stop;
    bool ended = machine.exit_requested;
    pthread_mutex_unlock(&g.lock);
    bool send_stop = false;                 /* gdb asks with '?' first */
    while (!ended) {
        GdbResume r = gdb_serve(&g.session, &stop, send_stop);
        send_stop = true;
        if (r.kind != GDB_RESUME)
            break;                          /* D or the connection's end */
        pthread_mutex_lock(&g.lock);
        resume_locked(&r);
        pthread_mutex_unlock(&g.lock);
        if (!wait_for_stop(fd, &stop)) {
            ended = machine.exit_requested;
            if (!ended)
                stop_machine(SIG_TRAP);     /* gone while running: points go with it */
            break;
        }
    }
    pthread_mutex_lock(&g.lock);
    if (!ended)
        release_all_locked();
    g.connected = false;
    pthread_mutex_unlock(&g.lock);
}

static void *gdb_thread(void *arg)
{
    (void)arg;
    while (!machine.exit_requested) {
        int fd = gdb_accept(g.listen_fd);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            perror("xlat-system: gdb: accept");
            return NULL;
        }
        serve_connection(fd);
        close(fd);
    }
    return NULL;
}

/* -- Setup ------------------------------------------------------------------------------------ */

bool gdbstub_parse_device(const char *dev, char *host, size_t hostlen, int *port, char *err,
                          size_t errlen)
{
    const char *colon = strncmp(dev, "tcp:", 4) ? NULL : strrchr(dev + 4, ':');
    if (!colon) {
        snprintf(err, errlen, "'%s' is not tcp::PORT or tcp:HOST:PORT", dev);
        return false;
    }
    const char *h = dev + 4;
    size_t n = (size_t)(colon - h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {      /* [IPv6] */
        h++;
        n -= 2;
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || p < 1 || p > 65535 || n >= hostlen) {
        snprintf(err, errlen, "'%s': the port must be a number 1..65535 (options such as "
                 ",server are not supported)", dev);
        return false;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int)p;
    return true;
}

bool gdbstub_listen(const char *host, int port, char *err, size_t errlen)
{
    g.listen_fd = gdb_listen(host, port, err, errlen);
    if (g.listen_fd < 0)
        return false;
    if (pipe2(g.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return false;
    }
    machine_target.xml = riscv_gdb_target_xml(true);
    gdbstub_enabled = true;
    fprintf(stderr, "xlat-system: gdb: listening on tcp:%s:%d\n", host, port);
    return true;
}

void gdbstub_start(bool frozen)
{
    pthread_mutex_lock(&g.lock);
    if (frozen)
        request_stop_locked(1, SIG_TRAP, "");
    else
        release_all_locked();
    pthread_mutex_unlock(&g.lock);
    pthread_t t;
    if (pthread_create(&t, NULL, gdb_thread, NULL) != 0) {
        perror("xlat-system: gdb thread");
        exit(1);
    }
    pthread_detach(t);
}

void gdbstub_report_exit(void)
{
    if (!gdbstub_enabled)
        return;
    gdbstub_wake();
    pthread_mutex_lock(&g.lock);
    /* A gdb serving a stopped machine is not listening for W: let it go. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 2;
    while (g.connected && !g.serving && !g.exit_reported)
        if (pthread_cond_timedwait(&g.parked_cond, &g.lock, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&g.lock);
}
