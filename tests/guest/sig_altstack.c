/*
 * sigaltstack: SA_ONSTACK handlers run on the alternate stack (others do
 * not), sigaltstack reports SS_ONSTACK there and refuses changes (EPERM),
 * a stack overflow is caught by a SIGSEGV handler on the alternate stack,
 * an altstack changed inside a handler is undone by rt_sigreturn (from
 * uc_stack), SS_DISABLE turns it off, and bad arguments fail as the kernel
 * says.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALT_SIZE (64 * 1024)

static char *alt;
static sigjmp_buf env;

static int on_alt(const void *p)
{
    return (const char *)p >= alt && (const char *)p < alt + ALT_SIZE;
}

static void on_usr(int sig)
{
    char here;
    stack_t cur, bad;
    memset(&bad, 0, sizeof bad);
    bad.ss_size = ALT_SIZE;
    bad.ss_sp = malloc(ALT_SIZE);
    sigaltstack(NULL, &cur);
    int r = sigaltstack(&bad, NULL);
    printf("%s: on alt=%d ss_flags=%d change=%d errno=%s\n", sig == SIGUSR1 ? "usr1" : "usr2",
           on_alt(&here), cur.ss_flags, r, r ? strerror(errno) : "-");
    free(bad.ss_sp);
}

static volatile int depth;

static int recurse(int n)
{
    volatile char big[4096];
    big[0] = (char)n;
    depth++;
    return recurse(n + 1) + big[0];
}

static void on_segv(int sig)
{
    char here;
    (void)sig;
    printf("segv: on alt=%d deep=%d\n", on_alt(&here), depth > 100);
    siglongjmp(env, 1);
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

int main(void)
{
    stack_t ss, old;

    sigaltstack(NULL, &old);
    printf("initial: flags=%d size=%zu\n", old.ss_flags, old.ss_size);

    memset(&ss, 0, sizeof ss);
    ss.ss_size = 1024;
    ss.ss_sp = malloc(1024);
    printf("too small: %d %s\n", sigaltstack(&ss, NULL), strerror(errno));
    ss.ss_size = ALT_SIZE;
    ss.ss_flags = 0x40;
    printf("bad flags: %d %s\n", sigaltstack(&ss, NULL), strerror(errno));
    free(ss.ss_sp);

    alt = malloc(ALT_SIZE);
    ss.ss_sp = alt;
    ss.ss_size = ALT_SIZE;
    ss.ss_flags = 0;
    printf("set: %d\n", sigaltstack(&ss, NULL));
    sigaltstack(NULL, &old);
    printf("query: flags=%d sp-ok=%d size=%zu\n", old.ss_flags, old.ss_sp == alt, old.ss_size);

    install(SIGUSR1, on_usr, SA_ONSTACK);
    install(SIGUSR2, on_usr, 0);
    raise(SIGUSR1);
    raise(SIGUSR2);

    install(SIGSEGV, on_segv, SA_ONSTACK | SA_NODEFER);
    if (sigsetjmp(env, 1) == 0)
        recurse(0);
    printf("after overflow\n");
    raise(SIGUSR1);

    ss.ss_flags = SS_DISABLE;
    printf("disable: %d\n", sigaltstack(&ss, NULL));
    sigaltstack(NULL, &old);
    printf("query: flags=%d size=%zu\n", old.ss_flags, old.ss_size);
    raise(SIGUSR1);
    return 0;
}
