#!/bin/sh
# Signal behaviour where qemu-riscv64 7.2 (the usual reference) differs
# from Linux, checked against what the riscv64 kernel does: sa_mask is
# blocked while the handler runs (a signal in it waits until the handler
# returns), and a SIGSEGV sent by kill() while blocked shows in sigpending
# and is delivered by sigsuspend (xlat holds it itself: the host cannot
# block SIGSEGV, which it needs for guest memory faults).
# Usage: tests/sig_kernel_only.sh BUILD. Exit status 0 = pass.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/t.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char trace[128];

static int blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

static void on_usr2(int sig) { (void)sig; strcat(trace, "[usr2]"); }
static void on_segv(int sig) { (void)sig; strcat(trace, "[segv]"); }

static void on_term(int sig)
{
    (void)sig;
    strcat(trace, "[term");
    printf("in term: usr2 blocked=%d hup blocked=%d term blocked=%d\n",
           blocked(SIGUSR2), blocked(SIGHUP), blocked(SIGTERM));
    raise(SIGUSR2);
    strcat(trace, " after-raise]");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sa.sa_handler = on_term;
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGTERM, &sa, NULL);

    raise(SIGTERM);
    printf("order: %s\n", trace);
    printf("after: usr2 blocked=%d hup blocked=%d\n", blocked(SIGUSR2), blocked(SIGHUP));

    trace[0] = 0;
    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, SIGSEGV);
    sigprocmask(SIG_BLOCK, &s, NULL);
    kill(getpid(), SIGSEGV);
    sigpending(&p);
    printf("segv pending=%d trace=%s\n", sigismember(&p, SIGSEGV), trace);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    printf("segv unblocked: %s\n", trace);

    trace[0] = 0;
    sigprocmask(SIG_BLOCK, &s, NULL);
    kill(getpid(), SIGSEGV);
    sigset_t none;
    sigemptyset(&none);
    int r = sigsuspend(&none);
    sigprocmask(SIG_BLOCK, NULL, &p);
    printf("sigsuspend: %d %s still blocked=%d\n", r, trace, sigismember(&p, SIGSEGV));
    return 0;
}
C
cat > "$TMP/expected" <<'OUT'
in term: usr2 blocked=1 hup blocked=1 term blocked=1
order: [term after-raise][usr2]
after: usr2 blocked=0 hup blocked=0
segv pending=1 trace=
segv unblocked: [segv]
sigsuspend: -1 [segv] still blocked=1
OUT
riscv64-linux-gnu-gcc -static -O2 -o "$TMP/t" "$TMP/t.c" || exit 1
fail=0
for engine in "" --interp; do
    timeout 20 "$XLAT" $engine "$TMP/t" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    if [ "$rc" != 0 ] || ! cmp -s "$TMP/expected" "$TMP/out"; then
        echo "sig_kernel_only${engine:+ ($engine)}: exit $rc, output differs:"
        diff -u "$TMP/expected" "$TMP/out" | sed 's/^/  /'
        head -5 "$TMP/err" | sed 's/^/  stderr: /'
        fail=1
    fi
done
[ $fail = 0 ] && echo "sig_kernel_only: ok"
exit $fail
