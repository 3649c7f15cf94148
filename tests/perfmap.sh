#!/usr/bin/env bash
# -perfmap names translated blocks by guest symbol, in a static program and
# in a dynamically linked one (symbols of the libc that the guest's ld.so
# maps); -jitdump writes a jitdump file with code-load records. A block's
# first run is interpreted (--tune first-interp), so the names looked for
# are of code that runs many times.
# Usage: tests/perfmap.sh BUILD.
set -u
BUILD=${1:-build}
XLAT=$(cd "$BUILD" && pwd)/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/t.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) long perfmap_hot_function(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i * i;
    return s;
}
int main(int argc, char **argv)
{
    char buf[64];
    volatile long n = 1000;             /* a call per trip, not one hoisted */
    int trips = argc > 1 ? atoi(argv[1]) : 20;
    for (int k = 0; k < trips; k++)
        snprintf(buf, sizeof buf, "%ld", perfmap_hot_function(n));
    puts(buf);
    return strlen(buf) == 9 ? 0 : 1;
}
C
riscv64-linux-gnu-gcc -static -O1 -o "$TMP/t" "$TMP/t.c" || exit 1
fail=0
check() {   # file pattern label
    grep -Eq "$2" "$1" || { echo "perfmap: $3: no line matching '$2'"; fail=1; }
}

# Static program: a child shell's pid names the map file.
(cd "$TMP" && exec "$XLAT" -perfmap ./t > out) & pid=$!
wait $pid || { echo "perfmap: xlat failed"; fail=1; }
map=/tmp/perf-$pid.map
if [[ -f $map ]]; then
    check "$map" '^[0-9a-f]+ [0-9a-f]+ perfmap_hot_function\+0x0$' static
    check "$map" '^[0-9a-f]+ [0-9a-f]+ perfmap_hot_function\+0x[0-9a-f]*[1-9a-f][0-9a-f]*$' static
    check "$map" '^[0-9a-f]+ [0-9a-f]+ (snprintf|__vsnprintf_internal|__printf_buffer|__vfprintf_internal)\+' static
    rm -f "$map"
else
    echo "perfmap: $map not written"; fail=1
fi
grep -q '^332833500$' "$TMP/out" || { echo "perfmap: wrong program output"; fail=1; }

# perf itself names the samples in translated code by the map: it reads a
# map only for code in memory no file backs (a memfd's it took for a file).
if perf record -q -o "$TMP/perf.probe" -- true 2>/dev/null; then
    (cd "$TMP" && exec perf record -q -F 2000 -o perf.data -- \
        bash -c 'echo $$ > pid; exec "$0" -perfmap ./t 200000' "$XLAT" > /dev/null 2>&1)
    map=/tmp/perf-$(cat "$TMP/pid" 2>/dev/null).map
    perf report -i "$TMP/perf.data" --stdio --sort sym 2>/dev/null > "$TMP/report"
    grep -q 'perfmap_hot_function' "$TMP/report" ||
        { echo "perfmap: perf report does not name perfmap_hot_function:"; head -20 "$TMP/report"; fail=1; }
    rm -f "$map"
else
    echo "perfmap: note: perf record cannot run here (linux-perf missing or not permitted), perf report not checked"
fi

# Dynamic program: libc's own symbols come from its mapping.
ROOTFS=${XLAT_ROOTFS:-$HOME/.cache/xlat/rootfs-trixie-riscv64}
if [[ -d $ROOTFS/usr/lib/riscv64-linux-gnu ]]; then
    riscv64-linux-gnu-gcc -O1 -o "$TMP/d" "$TMP/t.c" || exit 1
    (cd "$TMP" && exec "$XLAT" -L "$ROOTFS" -perfmap ./d > dout) & pid=$!
    wait $pid || { echo "perfmap: dynamic xlat failed"; fail=1; }
    map=/tmp/perf-$pid.map
    if [[ -f $map ]]; then
        check "$map" '^[0-9a-f]+ [0-9a-f]+ perfmap_hot_function\+' dynamic
        check "$map" '^[0-9a-f]+ [0-9a-f]+ (snprintf|__vsnprintf_internal|__vfprintf_internal|__printf_buffer)\+' dynamic-libc
        rm -f "$map"
    else
        echo "perfmap: $map not written (dynamic)"; fail=1
    fi
else
    echo "perfmap: no rootfs, dynamic case not run"
fi

# jitdump: header magic and at least one code-load record naming main.
(cd "$TMP" && exec "$XLAT" -jitdump ./t > /dev/null) & pid=$!
wait $pid
dump=$TMP/jit-$pid.dump
if [[ -f $dump ]]; then
    magic=$(od -An -tx4 -N4 "$dump" | tr -d ' ')
    [[ $magic = 4a695444 ]] || { echo "perfmap: jitdump magic $magic"; fail=1; }
    grep -aq 'perfmap_hot_function+0x' "$dump" || { echo "perfmap: jitdump lacks the function name"; fail=1; }
else
    echo "perfmap: $dump not written"; fail=1
fi
[[ $fail = 0 ]] && echo "perfmap: ok"
exit $fail
