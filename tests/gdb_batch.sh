#!/usr/bin/env bash
# gdb-multiarch against `xlat -g PORT`: break at main, next, read pc, a
# local variable and an FP register, set a watchpoint that fires, step,
# continue to the exit status. Runs with the JIT (default) and --interp.
# Usage: tests/gdb_batch.sh BUILD. Exit 77 if gdb-multiarch is missing.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
command -v gdb-multiarch >/dev/null || { echo "gdb_batch: gdb-multiarch not installed (make deps)"; exit 77; }
TMP=$(mktemp -d)
trap 'kill $XPID 2>/dev/null; rm -rf "$TMP"' EXIT
XPID=

cat > "$TMP/t.c" <<'C'
#include <stdio.h>
volatile long counter;
double scale = 2.5;
__attribute__((noinline)) long work(long n)
{
    for (long i = 0; i < n; i++)
        counter += i;
    return counter;
}
int main(void)
{
    long var = 41;
    var += 1;
    long r = work(var);
    printf("var=%ld r=%ld %g\n", var, r, scale * 2);
    return (int)(r & 0x3f);
}
C
riscv64-linux-gnu-gcc -static -g -O0 -o "$TMP/t" "$TMP/t.c" || exit 1
want_rc=$(( (41 * 42 / 2) & 0x3f ))

fail=0
run_gdb() {   # $1 = label, rest = xlat options
    local label=$1; shift
    local port out
    for try in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 40000 ))
        "$XLAT" "$@" -g "$port" "$TMP/t" > "$TMP/prog.out" 2> "$TMP/prog.err" &
        XPID=$!
        for _ in $(seq 50); do
            grep -q "waiting for gdb" "$TMP/prog.err" 2>/dev/null && break
            kill -0 $XPID 2>/dev/null || break
            sleep 0.1
        done
        grep -q "waiting for gdb" "$TMP/prog.err" && break
        wait $XPID 2>/dev/null
    done
    timeout 60 gdb-multiarch -nx -batch \
        -ex 'set confirm off' -ex 'set pagination off' \
        -ex "target remote :$port" \
        -ex 'break main' -ex 'continue' \
        -ex 'next' -ex 'next' \
        -ex 'info registers pc' -ex 'print var' \
        -ex 'print scale' -ex 'info registers fcsr' \
        -ex 'print $sp != 0' \
        -ex 'watch counter' -ex 'continue' -ex 'print counter' -ex 'delete' \
        -ex 'break 7' -ex 'continue' -ex 'print i' -ex 'stepi' -ex 'info threads' -ex 'delete' \
        -ex 'continue' \
        "$TMP/t" > "$TMP/gdb.out" 2>&1
    wait $XPID; local rc=$?
    XPID=
    local ok=1
    check() { grep -Eq "$1" "$TMP/gdb.out" || { echo "gdb_batch[$label]: gdb output lacks: $1"; ok=0; }; }
    check 'Breakpoint 1, main \(\) at .*t\.c:12'
    check 'pc[[:space:]]+0x[0-9a-f]+[[:space:]]+0x[0-9a-f]+ <main\+[0-9]+>'
    check '^\$1 = 42$'
    check '^\$2 = 2.5$'
    check 'fcsr +0x0'
    check '^\$3 = 1$'
    check 'Hardware watchpoint 2: counter'
    check 'Old value = 0'
    check 'New value = 1'
    check 'Breakpoint 3, work \(n=42\) at .*t\.c:7'
    check '^\$5 = 2$'
    check '^\* 1 +Thread [0-9a-f.]+ .*work'
    check "exited with code 0*$(printf %o $want_rc)\\]|exited with code $(printf %02d $want_rc)|exited normally"
    [[ $rc -eq $want_rc ]] || { echo "gdb_batch[$label]: xlat exit $rc, want $want_rc"; ok=0; }
    grep -q "var=42 r=861 5" "$TMP/prog.out" || { echo "gdb_batch[$label]: program output wrong"; ok=0; }
    if [[ $ok = 0 ]]; then
        fail=1
        echo "---- gdb output ($label)"; cat "$TMP/gdb.out"; echo "---- xlat stderr"; cat "$TMP/prog.err"
    else
        echo "gdb_batch[$label]: ok"
    fi
}
run_gdb jit
run_gdb interp --interp
exit $fail
