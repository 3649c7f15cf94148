#!/bin/sh
# Check xlat's -strace output format (qemu-riscv64 style) on a small guest
# program: usage tests/strace_check.sh BUILD. Exit status 0 = pass.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/t.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void)
{
    write(1, "hi\n", 3);
    openat(AT_FDCWD, "/nonexistent/x", O_RDONLY);
    syscall(999);
    syscall(SYS_exit_group, 7);
}
C
riscv64-linux-gnu-gcc -static -O2 -o "$TMP/t" "$TMP/t.c" || exit 1
"$XLAT" -strace "$TMP/t" > "$TMP/out" 2> "$TMP/err"
rc=$?
fail=0
expect() {
    if ! grep -Eq "$1" "$TMP/err"; then
        echo "strace_check: missing line matching: $1"
        fail=1
    fi
}
[ "$rc" = 7 ] || { echo "strace_check: exit status $rc, want 7"; fail=1; }
[ "$(cat "$TMP/out")" = "hi" ] || { echo "strace_check: stdout differs"; fail=1; }
expect '^[0-9]+ write\(1,0x[0-9a-f]+,3\) = 3$'
expect '^[0-9]+ openat\(AT_FDCWD,"/nonexistent/x",O_RDONLY\) = -1 errno=2 \(No such file or directory\)$'
expect '^[0-9]+ Unknown syscall 999$'
expect '^[0-9]+ brk\(NULL\) = 0x[0-9a-f]{16}$'
expect '^[0-9]+ exit_group\(7\)$'
[ $fail = 0 ] && echo "strace_check: ok"
exit $fail
