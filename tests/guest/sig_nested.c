/*
 * Nested delivery: a signal raised inside a handler runs at once unless
 * the signal itself is blocked there (no SA_NODEFER), in which case it runs
 * right after the handler returns. SA_NODEFER lets a handler re-enter
 * itself. The mask inside a handler is the old mask | the signal, and the
 * frame's uc_sigmask is the old mask. (sa_mask is checked by
 * tests/sig_kernel_only.sh: qemu-riscv64 7.2 does not apply it.)
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static char trace[256];
static int depth;

static void note(const char *s)
{
    strcat(trace, s);
}

static int blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

static void on_usr2(int sig)
{
    (void)sig;
    note("[usr2]");
}

/* USR1 (sa_mask empty): USR2 inside runs nested. */
static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
    static int runs;
    ucontext_t *uc = ctx;
    (void)si;
    if (runs++) {
        note("[usr1-again]");
        return;
    }
    note("[usr1");
    printf("usr1: usr1 blocked=%d usr2 blocked=%d frame mask has usr1=%d term=%d\n",
           blocked(SIGUSR1), blocked(SIGUSR2), sigismember(&uc->uc_sigmask, SIGUSR1),
           sigismember(&uc->uc_sigmask, SIGTERM));
    raise(SIGUSR2);
    note(" after-usr2");
    raise(SIGUSR1);                 /* blocked (no SA_NODEFER): runs after we return */
    note(" after-usr1]");
}

/* SA_NODEFER: re-enters itself three deep. */
static void on_hup(int sig)
{
    (void)sig;
    char buf[16];
    snprintf(buf, sizeof buf, "[hup%d", ++depth);
    note(buf);
    if (depth < 3)
        raise(SIGHUP);
    note("]");
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    install(SIGUSR2, on_usr2, 0);
    install(SIGHUP, on_hup, SA_NODEFER);

    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);   /* visible in usr1's frame mask */
    raise(SIGUSR1);
    printf("1: %s\n", trace);
    sigprocmask(SIG_UNBLOCK, &term, NULL);
    printf("after usr1: usr1 blocked=%d term blocked=%d\n", blocked(SIGUSR1), blocked(SIGTERM));

    trace[0] = 0;
    raise(SIGHUP);
    printf("2: %s\n", trace);
    printf("after: usr2 blocked=%d hup blocked=%d\n", blocked(SIGUSR2), blocked(SIGHUP));
    return 0;
}
