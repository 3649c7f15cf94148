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
        -ex 'set var scale = 3.5' -ex 'set $t0 = 0x1234' -ex 'print $t0' \
        -ex 'x/2i $pc' \
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
    check '^\$4 = 4660$'
    check '^=> 0x[0-9a-f]+ <main\+[0-9]+>:'
    check 'Hardware watchpoint 2: counter'
    check 'Old value = 0'
    check 'New value = 1'
    check '^\$5 = 1$'
    check 'Breakpoint 3, work \(n=42\) at .*t\.c:7'
    check '^\$6 = 2$'
    check '^\* 1 +Thread [0-9a-f.]+ .*work'
    check "exited with code 0*$(printf %o $want_rc)\\]|exited with code $(printf %02d $want_rc)|exited normally"
    [[ $rc -eq $want_rc ]] || { echo "gdb_batch[$label]: xlat exit $rc, want $want_rc"; ok=0; }
    grep -q "var=42 r=861 7" "$TMP/prog.out" || { echo "gdb_batch[$label]: program output wrong"; ok=0; }
    if [[ $ok = 0 ]]; then
        fail=1
        echo "---- gdb output ($label)"; cat "$TMP/gdb.out"; echo "---- xlat stderr"; cat "$TMP/prog.err"
    else
        echo "gdb_batch[$label]: ok"
    fi
}
run_gdb jit
run_gdb interp --interp

start_xlat() {   # prog: start xlat -g on a free port, set $port and $XPID
    for try in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 40000 ))
        "$XLAT" -g "$port" "$1" 2> "$TMP/s.err" & XPID=$!
        for _ in $(seq 50); do grep -q "waiting for gdb" "$TMP/s.err" && break; sleep 0.1; done
        grep -q "waiting for gdb" "$TMP/s.err" && break
    done
}

# stepi over an ecall stops right after it (the syscall ran once).
printf '.globl _start\n_start:\n  li a7, 172\n  ecall\n  li a0, 3\n  li a7, 93\n  ecall\n' > "$TMP/s.S"
riscv64-linux-gnu-gcc -nostdlib -static -march=rv64g -o "$TMP/s" "$TMP/s.S" || exit 1
start_xlat "$TMP/s"
timeout 60 gdb-multiarch -nx -batch -ex "target remote :$port" -ex 'stepi' -ex 'stepi' \
    -ex 'print $pc - _start' -ex 'print $a7' -ex 'stepi' -ex 'print $a0' -ex 'continue' "$TMP/s" > "$TMP/s.out" 2>&1
wait $XPID; rc=$?; XPID=
if grep -q '^\$1 = 8$' "$TMP/s.out" && grep -q '^\$2 = 172$' "$TMP/s.out" && grep -q '^\$3 = 3$' "$TMP/s.out" && [[ $rc = 3 ]]; then
    echo "gdb_batch[ecall step]: ok"
else
    echo "gdb_batch[ecall step]: wrong (rc $rc)"; cat "$TMP/s.out"; fail=1
fi

# A guest SIGSEGV stops in gdb first, at the faulting load; continuing
# delivers it, and gdb sees the program die of it.
printf '.globl _start\n_start:\n  li a0, 0\n  ld a1, 0(a0)\n  li a7, 93\n  ecall\n' > "$TMP/f.S"
riscv64-linux-gnu-gcc -nostdlib -static -march=rv64g -o "$TMP/f" "$TMP/f.S" || exit 1
start_xlat "$TMP/f"
timeout 60 gdb-multiarch -nx -batch -ex "target remote :$port" -ex 'continue' \
    -ex 'print $pc - _start' -ex 'continue' "$TMP/f" > "$TMP/f.out" 2>&1
wait $XPID; rc=$?; XPID=
if grep -q 'Program received signal SIGSEGV' "$TMP/f.out" && grep -q '^\$1 = 4$' "$TMP/f.out" &&
   grep -q 'Program terminated with signal SIGSEGV' "$TMP/f.out" && [[ $rc = 139 ]]; then
    echo "gdb_batch[signal]: ok"
else
    echo "gdb_batch[signal]: wrong (rc $rc)"; cat "$TMP/f.out"; fail=1
fi

# Ctrl-C (0x03) stops a running program with SIGINT, in both engines. gdb
# -batch cannot press Ctrl-C, so a small RSP client does.
cat > "$TMP/rsp.py" <<'PY'
import os, socket, sys, time
sys.path.insert(0, os.environ['XLAT_TOOLS'])
from rsp_client import send, recv
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.settimeout(10)
send(s, '?'); print(recv(s))
send(s, 'vCont;c')
time.sleep(0.5)
s.sendall(b'\x03')
print(recv(s))
send(s, 'k')
PY
printf '.globl _start\n_start:\n  li a0, 0\n1:\n  addi a0, a0, 1\n  j 1b\n' > "$TMP/l.S"
riscv64-linux-gnu-gcc -nostdlib -static -march=rv64g -o "$TMP/l" "$TMP/l.S" || exit 1
for engine in "" --interp; do
    for try in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 40000 ))
        "$XLAT" $engine -g "$port" "$TMP/l" 2> "$TMP/l.err" & XPID=$!
        for _ in $(seq 50); do grep -q "waiting for gdb" "$TMP/l.err" && break; sleep 0.1; done
        grep -q "waiting for gdb" "$TMP/l.err" && break
    done
    XLAT_TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tools" timeout 30 python3 "$TMP/rsp.py" "$port" > "$TMP/l.out" 2>&1
    wait $XPID; rc=$?; XPID=
    if [[ $(sed -n 2p "$TMP/l.out") == T02thread:* && $rc = 137 ]]; then
        echo "gdb_batch[interrupt ${engine:-jit}]: ok"
    else
        echo "gdb_batch[interrupt ${engine:-jit}]: wrong (rc $rc)"; cat "$TMP/l.out"; fail=1
    fi
done
exit $fail
