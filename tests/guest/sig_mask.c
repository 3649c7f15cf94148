/*
 * Signal masks: a blocked signal stays pending (rt_sigpending shows it)
 * and is delivered when unblocked, before sigprocmask returns; standard
 * signals coalesce, real-time ones queue in order with their values;
 * SIGKILL/SIGSTOP cannot be blocked; sigsuspend runs the handler with its
 * temporary mask and restores the old one; sigtimedwait takes a blocked
 * signal without running the handler and times out with EAGAIN.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char trace[512];

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
    char buf[64];
    (void)ctx;
    if (sig >= SIGRTMIN)
        snprintf(buf, sizeof buf, "[rt+%d v=%d]", sig - SIGRTMIN, si->si_value.sival_int);
    else
        snprintf(buf, sizeof buf, "[%d code=%d]", sig, si->si_code);
    strcat(trace, buf);
}

static void show(const char *what)
{
    printf("%s: %s\n", what, trace);
    trace[0] = 0;
}

static sigset_t set_of(int a, int b)
{
    sigset_t s;
    sigemptyset(&s);
    if (a)
        sigaddset(&s, a);
    if (b)
        sigaddset(&s, b);
    return s;
}

static int pending(int sig)
{
    sigset_t p;
    sigpending(&p);
    return sigismember(&p, sig);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sig;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGRTMIN + 1, &sa, NULL);

    /* Blocked, pending, delivered at unblock; two raises coalesce. */
    sigset_t s = set_of(SIGUSR1, 0), old;
    sigprocmask(SIG_BLOCK, &s, &old);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("pending usr1=%d usr2=%d\n", pending(SIGUSR1), pending(SIGUSR2));
    show("while blocked");
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    show("after unblock");
    printf("pending usr1=%d\n", pending(SIGUSR1));

    /* Real-time signals queue, in order, with their values. */
    s = set_of(SIGRTMIN + 1, 0);
    sigprocmask(SIG_BLOCK, &s, NULL);
    for (int i = 1; i <= 3; i++)
        sigqueue(getpid(), SIGRTMIN + 1, (union sigval){ .sival_int = i * 10 });
    show("rt blocked");
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    show("rt unblocked");

    /* Lower-numbered pending signals come first. */
    s = set_of(SIGUSR1, SIGUSR2);
    sigprocmask(SIG_BLOCK, &s, NULL);
    raise(SIGUSR2);
    raise(SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    show("order");

    /* SIGKILL and SIGSTOP are silently dropped from masks. */
    s = set_of(SIGKILL, SIGSTOP);
    sigprocmask(SIG_BLOCK, &s, NULL);
    sigprocmask(SIG_BLOCK, NULL, &old);
    printf("kill blocked=%d stop blocked=%d\n", sigismember(&old, SIGKILL),
           sigismember(&old, SIGSTOP));
    printf("bad how: %d %s\n", sigprocmask(99, &s, NULL), strerror(errno));

    /* sigsuspend: the handler runs, -1/EINTR, the old mask is back. */
    s = set_of(SIGUSR1, 0);
    sigprocmask(SIG_BLOCK, &s, NULL);
    raise(SIGUSR1);
    sigset_t none = set_of(0, 0);
    int r = sigsuspend(&none);
    printf("sigsuspend=%d %s\n", r, strerror(errno));
    show("suspended");
    sigprocmask(SIG_BLOCK, NULL, &old);
    printf("usr1 blocked again=%d\n", sigismember(&old, SIGUSR1));

    /* sigtimedwait takes the blocked signal itself. */
    raise(SIGUSR1);
    siginfo_t si;
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    r = sigtimedwait(&s, &si, &ts);
    printf("sigtimedwait=%d signo=%d code=%d pid-ok=%d\n", r, si.si_signo, si.si_code,
           si.si_pid == getpid());
    show("handler ran?");
    r = sigtimedwait(&s, &si, &ts);
    printf("sigtimedwait=%d %s\n", r, strerror(errno));
    sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 7 });
    r = sigwaitinfo(&s, &si);
    printf("sigwaitinfo=%d code=%d value=%d\n", r, si.si_code, si.si_value.sival_int);
    return 0;
}
