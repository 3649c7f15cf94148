#!/bin/sh
# Signals ignored across exec stay ignored for the guest, as Linux keeps
# them (execve resets handled signals only): sigaction reports SIG_IGN,
# raising one does nothing, a child the guest forks and execs inherits it,
# and one the guest sets back to SIG_DFL acts again. xlat asks the host
# what exec left of a signal only when the guest first needs it (a start
# used to ask all 62), so this covers signals asked for at once (SIGQUIT,
# whose default xlat emulates), later (SIGUSR1, a real-time one) and never
# (SIGUSR2: only the exec'd child looks).
# Usage: tests/sig_inherited.sh BUILD. Exit status 0 = pass.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/t.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int ignored(int sig)
{
    struct sigaction old;
    sigaction(sig, NULL, &old);
    return old.sa_handler == SIG_IGN;
}

int main(int argc, char **argv)
{
    if (argc > 1) {                         /* the exec'd child */
        printf("child: usr2 ignored=%d rt ignored=%d term ignored=%d\n", ignored(SIGUSR2),
               ignored(SIGRTMIN + 3), ignored(SIGTERM));
        raise(SIGUSR2);
        printf("child: alive after usr2\n");
        return 0;
    }
    printf("quit ignored=%d usr1 ignored=%d rt ignored=%d term ignored=%d\n",
           ignored(SIGQUIT), ignored(SIGUSR1), ignored(SIGRTMIN + 3), ignored(SIGTERM));
    raise(SIGQUIT);
    raise(SIGUSR1);
    raise(SIGRTMIN + 3);
    printf("alive after quit, usr1, rt\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    signal(SIGUSR1, SIG_DFL);
    printf("usr1 ignored=%d after SIG_DFL\n", ignored(SIGUSR1));
    fflush(stdout);
    raise(SIGUSR1);
    printf("not reached\n");
    return 0;
}
C
cat > "$TMP/expected" <<'OUT'
quit ignored=1 usr1 ignored=1 rt ignored=1 term ignored=0
alive after quit, usr1, rt
child: usr2 ignored=1 rt ignored=1 term ignored=0
child: alive after usr2
child status 0
usr1 ignored=0 after SIG_DFL
OUT
riscv64-linux-gnu-gcc -static -O2 -o "$TMP/t" "$TMP/t.c" || exit 1
fail=0
for engine in "" --interp; do
    # SIGRTMIN + 3 is 37 in glibc (its SIGRTMIN is 34 on Linux).
    # (timeout outside: it catches some signals itself, and the program it
    # starts would inherit its handlers reset to the default.)
    # (In a subshell whose stderr is dropped: a shell reports the kill there.)
    (timeout 20 sh -c "trap '' QUIT USR1 USR2 37; exec \"$XLAT\" $engine \"$TMP/t\"" \
        > "$TMP/out" 2> "$TMP/err"; echo $? > "$TMP/rc") 2> /dev/null
    rc=$(cat "$TMP/rc")
    # The last raise(SIGUSR1) kills it by the signal: 128 + 10.
    if [ "$rc" != $((128 + 10)) ] || ! cmp -s "$TMP/expected" "$TMP/out"; then
        echo "sig_inherited${engine:+ ($engine)}: exit $rc (want 138), output differs:"
        diff -u "$TMP/expected" "$TMP/out" | sed 's/^/  /'
        head -5 "$TMP/err" | sed 's/^/  stderr: /'
        fail=1
    fi
done
[ $fail = 0 ] && echo "sig_inherited: ok"
exit $fail
