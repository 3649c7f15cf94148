/*
 * Signals sent to ourselves and default actions: raise/kill with a handler
 * (si_code, si_pid), SA_RESETHAND (the second one takes the default
 * action), deaths by default action seen by the parent as the signal
 * (128+N for a shell), ignored defaults, SIG_IGN, a SIGSEGV sent by kill
 * (not a fault: si_code SI_USER) held while blocked, and SIGCHLD with
 * si_pid/si_status for an exiting child.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int hits, last_code, pid_ok;

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    (void)sig;
    hits++;
    last_code = si->si_code;
    pid_ok = si->si_pid == getpid();
}

static void install(int sig, int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sig;
    sa.sa_flags = SA_SIGINFO | flags;
    sigaction(sig, &sa, NULL);
}

/* Run fn in a child and describe how it ended. */
static void child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(42);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        printf("%-22s killed by %d\n", what, WTERMSIG(st));
    else
        printf("%-22s exit %d\n", what, WEXITSTATUS(st));
}

static void term_default(void) { raise(SIGTERM); }
static void usr1_default(void) { signal(SIGUSR1, SIG_DFL); kill(getpid(), SIGUSR1); }
static void rt_default(void) { raise(SIGRTMIN + 3); }
static void do_abort(void) { abort(); }
static void segv_by_kill(void) { kill(getpid(), SIGSEGV); }
static void chld_default(void) { raise(SIGCHLD); raise(SIGURG); raise(SIGWINCH); raise(SIGCONT); }
static void term_ignored(void) { signal(SIGTERM, SIG_IGN); raise(SIGTERM); }
static void resethand(void)
{
    install(SIGUSR2, SA_RESETHAND);
    raise(SIGUSR2);
    printf("  resethand: first handled hits=%d\n", hits);
    fflush(stdout);
    raise(SIGUSR2);
}

static volatile int chld_code, chld_status, chld_pid;

static void on_chld(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    chld_code = si->si_code;
    chld_status = si->si_status;
    chld_pid = si->si_pid;
}

int main(void)
{
    install(SIGUSR1, 0);
    raise(SIGUSR1);
    printf("raise: hits=%d code=%d pid-ok=%d\n", hits, last_code, pid_ok);
    kill(getpid(), SIGUSR1);
    printf("kill: hits=%d code=%d pid-ok=%d\n", hits, last_code, pid_ok);
    sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 1 });
    printf("sigqueue: hits=%d code=%d pid-ok=%d\n", hits, last_code, pid_ok);

    /* A SIGSEGV from kill() is an ordinary signal: held while blocked. */
    install(SIGSEGV, 0);
    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, SIGSEGV);
    sigprocmask(SIG_BLOCK, &s, NULL);
    kill(getpid(), SIGSEGV);
    sigpending(&p);
    printf("segv blocked: hits=%d\n", hits);   /* qemu 7.2 omits it from sigpending */
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    printf("segv unblocked: hits=%d code=%d\n", hits, last_code);
    signal(SIGSEGV, SIG_DFL);

    child("SIGTERM default", term_default);
    child("SIGUSR1 default", usr1_default);
    child("SIGRTMIN+3 default", rt_default);
    child("abort", do_abort);
    child("SIGSEGV by kill", segv_by_kill);
    child("ignored by default", chld_default);
    child("SIG_IGN", term_ignored);
    child("SA_RESETHAND", resethand);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGCHLD, &sa, NULL);
    sigemptyset(&s);
    sigaddset(&s, SIGCHLD);
    sigprocmask(SIG_BLOCK, &s, NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(7);
    sigset_t none;
    sigemptyset(&none);
    while (!chld_pid)
        sigsuspend(&none);
    printf("SIGCHLD: code=%d status=%d pid-ok=%d\n", chld_code, chld_status, chld_pid == pid);
    waitpid(pid, NULL, 0);
    return 0;
}
