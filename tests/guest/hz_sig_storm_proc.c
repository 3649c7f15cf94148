/*
 * Signals under load, sent from ANOTHER PROCESS (hz_sig_storm.c sends from
 * a thread of the same process). The parent forks a sender child; the
 * child queues N real-time signals with sigqueue() (they queue, so none
 * may be lost; it retries on EAGAIN) at the parent while the parent
 *   1. does write/read round trips on a pipe (syscalls, SA_RESTART),
 *   2. runs freshly generated code, each function once (translation),
 *   3. spins in an asm loop that keeps s1 and s2 in a fixed relation at
 *      every instruction boundary; the handler checks the relation against
 *      the interrupted pc in its ucontext (consistent registers).
 * The child keeps at most 4 signals in flight (the handler writes a credit
 * byte to a pipe per signal, the child blocks on it), so the signals land
 * all over the parent's work rather than in one batch. Each carries its
 * sequence number: the handler checks that they arrive once each, in order
 * (Linux queues one signal number FIFO), from the child, with si_code
 * SI_QUEUE.
 *   4. standard signals (SIGUSR1, which coalesce): the child sends bursts of
 *      1..4 and waits for an ack before the next burst; the parent acks only
 *      once its handler has run since the burst began, so every burst must
 *      be delivered. The parent waits in sigsuspend, in the asm loop, in
 *      generated code, or in a blocking read, by turns.
 * Each phase has a 10 s watchdog (alarm): a lost signal or a deadlock
 * fails the test instead of hanging it. Only exact counts are printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define N 5000          /* real-time signals per phase (phases 1-3) */
#define BURSTS 1000     /* SIGUSR1 bursts in phase 4 */
#define WATCHDOG 10     /* seconds per phase */
#define WINDOW 4        /* real-time signals in flight at most */

static pid_t child;
static const char *phase_name = "start";
static volatile int received;     /* SIGRTMIN handled this phase */
static int credit[2];             /* pipe: a byte per SIGRTMIN handled */
static volatile int out_of_order, bad_info, bad_regs;
static int out_of_order_total;
static volatile int usr1;         /* SIGUSR1 handler runs */
static volatile int in_loop, stop;

extern char spin_loop[], spin_top[], spin_l1[], spin_end[];

/* s1 and s2 count together; between the two addis s1 == s2 + 1. */
__asm__(".text\n.globl spin_loop, spin_top, spin_l1, spin_end\n"
        "spin_loop:\n"
        "  addi sp, sp, -16\n  sd s1, 0(sp)\n  sd s2, 8(sp)\n  li s1, 0\n  li s2, 0\n"
        "spin_top:\n  addi s1, s1, 1\n"
        "spin_l1:\n  addi s2, s2, 1\n"
        "  lw t0, 0(a0)\n  beqz t0, spin_top\n"
        "  ld s1, 0(sp)\n  ld s2, 8(sp)\n  addi sp, sp, 16\n  ret\n"
        "spin_end:\n");
void spin_loop_fn(volatile int *stop) __asm__("spin_loop");

/* If the signal interrupted the asm loop, s1 and s2 must match the pc. */
static void check_regs(const ucontext_t *uc)
{
    if (!in_loop)
        return;
    uintptr_t pc = uc->uc_mcontext.__gregs[0];
    uint64_t s1 = uc->uc_mcontext.__gregs[9], s2 = uc->uc_mcontext.__gregs[18];
    /* From spin_top on: at spin_loop itself (a signal taken on the call)
         * s1 and s2 are still the caller's. */
        if (pc >= (uintptr_t)spin_top && pc < (uintptr_t)spin_end) {
        uint64_t want = pc == (uintptr_t)spin_l1 ? s2 + 1 : s2;
        if (s1 != want)
            bad_regs++;
    }
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    check_regs(uc);
    if (si->si_code != SI_QUEUE || si->si_pid != child)
        bad_info++;
    if (si->si_value.sival_int != received)
        out_of_order++;
    if (++received == N)
        stop = 1;               /* ends phase 3's loop */
    int saved_errno = errno;
    if (write(credit[1], "c", 1) != 1)
        bad_info++;
    errno = saved_errno;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    check_regs(uc);
    if (si->si_code != SI_USER || si->si_pid != child)
        bad_info++;
    usr1++;
    stop = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    char buf[160];
    int n = snprintf(buf, sizeof buf, "watchdog: stuck in %s (received %d, usr1 %d)\n",
                     phase_name, received, usr1);
    if (n > 0 && write(STDOUT_FILENO, buf, (size_t)n) < 0)
        n = 0;
    kill(child, SIGKILL);
    _exit(1);
}

static void xread(int fd, char *c)
{
    ssize_t r;
    while ((r = read(fd, c, 1)) < 0 && errno == EINTR)
        ;
    if (r != 1)
        _exit(3);               /* the other side died */
}

static void xwrite(int fd, char c)
{
    ssize_t r;
    while ((r = write(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (r != 1)
        _exit(3);
}

/* ---- The sender child ----------------------------------------------------- */

/* A short busy delay of random length, so the signals land at varied
 * points of the parent's work. */
static void jitter(void)
{
    static uint32_t rnd = 1;
    rnd = rnd * 1103515245u + 12345u;
    for (volatile uint32_t j = (rnd >> 16) % 2048; j; j--)
        ;
}

static void sender(pid_t parent, int cmd, int back)
{
    char c;
    for (int phase = 0; phase < 3; phase++) {
        xread(cmd, &c);                           /* "start" */
        for (int i = 0; i < N; i++) {
            union sigval v = { .sival_int = i };
            if (i >= WINDOW)
                xread(credit[0], &c);             /* signal i - WINDOW handled */
            jitter();
            while (sigqueue(parent, SIGRTMIN, v) != 0) {
                if (errno != EAGAIN)
                    _exit(4);
                usleep(100);                      /* the parent's queue is full */
            }
        }
        for (int i = 0; i < WINDOW; i++)
            xread(credit[0], &c);                 /* the last ones handled */
    }
    xread(cmd, &c);
    for (int b = 0; b < BURSTS; b++) {
        for (int k = 0; k <= b % 4; k++)
            if (kill(parent, SIGUSR1) != 0)
                _exit(5);
        xwrite(back, 'd');                        /* burst sent */
        xread(cmd, &c);                           /* ack: it was delivered */
        if (c != (char)b)
            _exit(6);
    }
    _exit(0);
}

/* ---- The parent ------------------------------------------------------------ */

static uint32_t *code;
static int gen;

/* Write a new function (li a0, gen ; ret), run it; 1 if it answers wrong. */
static int run_new_code(void)
{
    int i = gen++;
    uint32_t *f = code + (i % 65536) * 4;
    f[0] = ((uint32_t)(i & 0x7ff) << 20) | (10 << 7) | 0x13;
    f[1] = 0x00008067u;
    __builtin___clear_cache((char *)f, (char *)(f + 2));
    return ((long (*)(void))(uintptr_t)f)() != (i & 0x7ff);
}

static void begin(const char *name, int cmd)
{
    phase_name = name;
    received = 0;
    out_of_order = 0;
    stop = 0;
    alarm(WATCHDOG);
    xwrite(cmd, 's');
}

static void report(const char *what)
{
    alarm(0);
    out_of_order_total += out_of_order;
    printf("%s: %d signals received, %d out of order\n", what, received, out_of_order);
    fflush(stdout);             /* shown even if a later watchdog fires */
}

int main(void)
{
    int to_child[2], to_parent[2], fds[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0 || pipe(fds) != 0 || pipe(credit) != 0)
        return 2;
    code = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE | PROT_EXEC,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 2;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sa.sa_sigaction = on_rt;
    sigaction(SIGRTMIN, &sa, NULL);
    sa.sa_sigaction = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGALRM, on_alarm);

    sigset_t usr1_set, old;
    sigemptyset(&usr1_set);
    sigaddset(&usr1_set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1_set, &old);      /* until phase 4 */

    fflush(stdout);
    pid_t parent = getpid();
    child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        signal(SIGALRM, SIG_DFL);
        sender(parent, to_child[0], to_parent[1]);
    }

    /* 1. syscalls */
    begin("phase 1 (syscalls)", to_child[1]);
    long pipe_errors = 0;
    char c = 'x';
    while (received < N)
        if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
            pipe_errors++;
    report("phase 1 (syscalls)");
    printf("pipe errors: %ld\n", pipe_errors);

    /* 2. translation */
    long wrong = 0;
    begin("phase 2 (translation)", to_child[1]);
    while (received < N)
        wrong += run_new_code();
    report("phase 2 (translation)");
    printf("generated code wrong results: %ld\n", wrong);

    /* 3. a tight loop; the handler of the last signal ends it. */
    begin("phase 3 (tight loop)", to_child[1]);
    in_loop = 1;
    spin_loop_fn(&stop);
    in_loop = 0;
    report("phase 3 (tight loop)");

    /* 4. SIGUSR1 bursts, each acked once delivered. SIGUSR1 is blocked
     * except while waiting, so the count is read only when it cannot move. */
    phase_name = "phase 4 (SIGUSR1 bursts)";
    alarm(WATCHDOG);
    xwrite(to_child[1], 's');
    int acked = 0;
    for (int b = 0; b < BURSTS; b++) {
        int seen = usr1;
        stop = 0;
        switch (b % 4) {
        case 0:                                   /* sigsuspend */
            while (usr1 == seen)
                sigsuspend(&old);
            xread(to_parent[0], &c);
            break;
        case 1:                                   /* the asm loop */
            in_loop = 1;
            sigprocmask(SIG_SETMASK, &old, NULL);
            spin_loop_fn(&stop);
            sigprocmask(SIG_BLOCK, &usr1_set, NULL);
            in_loop = 0;
            xread(to_parent[0], &c);
            break;
        case 2:                                   /* generated code */
            sigprocmask(SIG_SETMASK, &old, NULL);
            while (usr1 == seen)
                wrong += run_new_code();
            sigprocmask(SIG_BLOCK, &usr1_set, NULL);
            xread(to_parent[0], &c);
            break;
        case 3:                                   /* a blocking read */
            sigprocmask(SIG_SETMASK, &old, NULL);
            xread(to_parent[0], &c);
            while (usr1 == seen)
                ;
            sigprocmask(SIG_BLOCK, &usr1_set, NULL);
            break;
        }
        /* The whole burst has been sent: let any coalesced rest of it in
         * now, so it cannot stand in for the next burst. */
        sigprocmask(SIG_SETMASK, &old, NULL);
        sigprocmask(SIG_BLOCK, &usr1_set, NULL);
        xwrite(to_child[1], (char)b);
        acked++;
    }
    int status = 0, child_rc = -1;
    pid_t w;
    while ((w = waitpid(child, &status, 0)) < 0 && errno == EINTR)
        ;
    if (w == child)
        child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    alarm(0);
    printf("phase 4 (SIGUSR1 bursts): %d bursts, each delivered; child exit %d\n", acked,
           child_rc);
    printf("generated code wrong results: %ld\n", wrong);
    printf("bad siginfo: %d\n", bad_info);
    printf("handlers saw inconsistent registers: %d times\n", bad_regs);
    return bad_regs || bad_info || out_of_order_total || wrong || pipe_errors || acked != BURSTS ||
           child_rc != 0;
}
