#!/usr/bin/env bash
# A guest execve in a chroot without /proc and without binfmt_misc: xlat
# cannot re-execute itself through /proc/self/exe there, so it uses the name
# it was started by (`chroot DIR /xlat /t`). The program execs itself with
# another argv[0] and a marker argument; the child must run and say so.
# Needs root (chroot) and the static build (make static; make check builds
# it). Usage: tests/chroot_exec.sh BUILD. Exit 0 = pass, 77 = not root.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
if [[ $(basename "$BUILD") = build-static ]]; then STATIC=$BUILD/xlat; else STATIC=$REPO/build/xlat-static; fi
[[ -x $STATIC ]] || { echo "FAIL $STATIC is not built (make static)"; exit 1; }
[[ $(id -u) = 0 ]] || { echo "chroot_exec: skipped: not root (chroot needs it)"; exit 77; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/xlat-chroot.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

cat >"$DIR/t.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        printf("child ran as %s\n", argv[0]);
        return 7;
    }
    fflush(stdout);
    execl("/t", "renamed", "child", (char *)0);
    perror("execl");
    return 1;
}
C
riscv64-linux-gnu-gcc -static -O1 -o "$DIR/t" "$DIR/t.c" || { echo "FAIL cross-compile"; exit 1; }
cp "$STATIC" "$DIR/xlat"
[[ ! -e $DIR/proc/self ]] || { echo "FAIL the chroot has a /proc"; exit 1; }
out=$(chroot "$DIR" /xlat /t 2>&1); rc=$?
if [[ $rc -eq 7 && $out == "child ran as renamed" ]]; then
    echo "ok   exec in a chroot without /proc"
    exit 0
fi
echo "FAIL exec in a chroot without /proc: status $rc, output: $out"
exit 1
