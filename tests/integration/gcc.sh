#!/usr/bin/env bash
# Integration test: the rootfs's own gcc-14 compiling, linking and building
# a make project under xlat, each process started by a guest execve:
#   gcc (driver) -> cc1 -> as -> collect2 -> ld,   make -> gcc -> ...
#   Usage: tests/integration/gcc.sh BUILD_DIR
#
# The reference: qemu-riscv64 cannot follow the driver's execve of cc1 and
# as (without binfmt_misc it would hand the host's x86 `as` a riscv file),
# so scripts/gcc-plan.sh asks gcc under qemu for its plan (`gcc -### ...`)
# and runs each step of it individually under `qemu-riscv64 -L ROOTFS`:
# cc1, then as, then ld in place of collect2. The files xlat's gcc writes
# must be byte-identical to those.
# make's transcript is compared with the expected text, and the programs it
# and gcc built are run under both runners.
#
# Exit: 0 pass; 77 the rootfs is not available (the reason is the last
# line); 1 any difference.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${XLAT_TIMEOUT_GCC:-300}

BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }
QEMU_ABS=$(command -v "$QEMU") || { echo "$QEMU not installed"; exit 1; }

rc=0
ROOT=$("$REPO/scripts/rootfs.sh" 2>/dev/null) || rc=$?
if [[ $rc -ne 0 || ! -x $ROOT/usr/bin/gcc-14 || ! -e $ROOT/usr/lib/riscv64-linux-gnu/crt1.o ]]; then
    echo "the riscv64 rootfs (with gcc-14, libc6-dev, make) is not available (scripts/rootfs.sh status $rc)"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-gcc.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/x/tmp" "$WORK/q/tmp"

# A small C file that gives cc1 some work: loops, a switch, structs,
# floating point, inlining, string functions, varargs.
cat >"$WORK/x/x.c" <<'EOF'
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct point { double x, y; };

static double dist2(struct point a, struct point b)
{
    double dx = a.x - b.x, dy = a.y - b.y;
    return dx * dx + dy * dy;
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static const char *kind(int c)
{
    switch (c % 5) {
    case 0: return "zero";
    case 1: return "one";
    case 2: return "two";
    case 3: return "three";
    default: return "many";
    }
}

static int say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int main(int argc, char **argv)
{
    struct point p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (struct point){ i * 1.5, 10.0 - i };
    double best = 1e300;
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++)
            if (dist2(p[i], p[j]) < best)
                best = dist2(p[i], p[j]);
    char buf[64];
    snprintf(buf, sizeof buf, "%s-%s", kind(argc), kind((int)strlen(argv[0])));
    say("fib(24)=%d best=%.3f kinds=%s len=%zu\n", fib(24), best, buf, strlen(buf));
    return argc > 3 ? 4 : 0;
}
EOF
cp "$WORK/x/x.c" "$WORK/q/x.c"
printf 'int main(void) { return undeclared_name + ; }\n' >"$WORK/x/bad.c"
cp "$WORK/x/bad.c" "$WORK/q/bad.c"

# Both runners see the same environment. TMPDIR keeps gcc's temporary
# files (named in its -### plan) in the work directory.
# xlat runs confined to the rootfs (--root), with the work tree bound in.
xrun() { timeout -k 5 "$XLAT_TIMEOUT" env -i PATH=/usr/bin:/bin LC_ALL=C TMPDIR="$PWD/tmp" \
             "$XLAT" --root "$ROOT" --bind "$WORK" "$@"; }
qrun() { timeout -k 5 "$XLAT_TIMEOUT" env -i PATH=/usr/bin:/bin LC_ALL=C TMPDIR="$PWD/tmp" \
             "$QEMU_ABS" -L "$ROOT" "$@"; }

# replay GCC-ARGS...: gcc's plan for GCC-ARGS run step by step under qemu.
replay() {
    timeout -k 5 "$XLAT_TIMEOUT" env -i PATH=/usr/bin:/bin LC_ALL=C TMPDIR="$PWD/tmp" \
        QEMU="$QEMU_ABS" "$REPO/scripts/gcc-plan.sh" "$ROOT" "$@"
}

failed=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; shift; for l in "$@"; do echo "    $l"; done; failed=1; }
show() { [[ -s $1 ]] && head -n 10 "$1" | sed 's/^/      /'; return 0; }

# ---- gcc -O2 -c: driver -> cc1 -> as ------------------------------------

xrc=0 qrc=0
(cd "$WORK/x" && xrun "/usr/bin/gcc-14" -O2 -c x.c -o x.o) >"$WORK/x.out" 2>&1 || xrc=$?
(cd "$WORK/q" && replay -O2 -c x.c -o x.o) >"$WORK/q.out" 2>&1 || qrc=$?
if [[ $qrc -ne 0 || ! -s $WORK/q/x.o ]]; then
    fail gcc-c "the qemu replay failed (status $qrc)"; show "$WORK/q.out"
elif [[ $xrc -eq 0 && ! -s $WORK/x.out ]] && cmp -s "$WORK/x/x.o" "$WORK/q/x.o"; then
    ok "gcc -O2 -c (x.o identical, $(stat -c %s "$WORK/x/x.o") bytes)"
else
    fail gcc-c "xlat status $(describe_status "$xrc"), objects $(cmp "$WORK/x/x.o" "$WORK/q/x.o" 2>&1)"
    show "$WORK/x.out"
fi

# ---- gcc -O2 -o prog: + collect2 -> ld, then run the program -------------

xrc=0 qrc=0
(cd "$WORK/x" && xrun "/usr/bin/gcc-14" -O2 -o prog x.c) >"$WORK/x.out" 2>&1 || xrc=$?
(cd "$WORK/q" && replay -O2 -o prog x.c) >"$WORK/q.out" 2>&1 || qrc=$?
if [[ $qrc -ne 0 || ! -s $WORK/q/prog ]]; then
    fail gcc-link "the qemu replay failed (status $qrc)"; show "$WORK/q.out"
elif [[ $xrc -eq 0 && ! -s $WORK/x.out ]] && cmp -s "$WORK/x/prog" "$WORK/q/prog"; then
    ok "gcc -O2 -o prog (executable identical)"
else
    fail gcc-link "xlat status $(describe_status "$xrc"), executables $(cmp "$WORK/x/prog" "$WORK/q/prog" 2>&1)"
    show "$WORK/x.out"
fi
if [[ -x $WORK/x/prog ]]; then
    xrc=0 qrc=0
    (cd "$WORK/x" && xrun ./prog a b c d) >"$WORK/x.out" 2>&1 || xrc=$?
    (cd "$WORK/x" && qrun ./prog a b c d) >"$WORK/q.out" 2>&1 || qrc=$?
    if [[ $xrc -eq 4 && $qrc -eq 4 ]] && cmp -s "$WORK/x.out" "$WORK/q.out" &&
            grep -qx 'fib(24)=46368 best=3.250 kinds=zero-one len=8' "$WORK/x.out"; then
        ok "run prog"
    else
        fail run-prog "xlat status $xrc, qemu status $qrc"; show "$WORK/x.out"; show "$WORK/q.out"
    fi
fi

# ---- A compile error: cc1's diagnostics and status come back through wait4

xrc=0 qrc=0
(cd "$WORK/x" && xrun "/usr/bin/gcc-14" -O2 -c bad.c) >"$WORK/x.out" 2>&1 || xrc=$?
(cd "$WORK/q" && replay -O2 -c bad.c) >"$WORK/q.out" 2>&1 || qrc=$?
if [[ $xrc -eq 1 && $qrc -eq 1 ]] && cmp -s "$WORK/x.out" "$WORK/q.out" && grep -q error: "$WORK/x.out"; then
    ok "gcc error (status 1, same diagnostics)"
else
    fail gcc-error "xlat status $xrc, qemu replay status $qrc (both should be 1)"
    diff "$WORK/q.out" "$WORK/x.out" | head -n 10 | sed 's/^/      /'
fi

# ---- make: a two-file project, rebuilt incrementally and with -j2 --------

M=$WORK/x/mk
mkdir -p "$M/tmp"
cat >"$M/main.c" <<'EOF'
#include <stdio.h>
#include "util.h"
int main(void) { printf("sum=%ld sq=%d\n", sum_to(1000), square(12)); return 0; }
EOF
cat >"$M/util.c" <<'EOF'
#include "util.h"
long sum_to(long n) { long s = 0; for (long i = 1; i <= n; i++) s += i; return s; }
int square(int x) { return x * x; }
EOF
printf 'long sum_to(long n);\nint square(int x);\n' >"$M/util.h"
printf '%s\n' 'CC = gcc-14' 'CFLAGS = -O2 -Wall' 'OBJS = main.o util.o' '' \
    'app: $(OBJS)' '	$(CC) -o $@ $(OBJS)' '' '%.o: %.c util.h' '	$(CC) $(CFLAGS) -c $<' '' \
    'clean:' '	rm -f app $(OBJS)' '.PHONY: clean' >"$M/Makefile"
touch -d '2020-01-01' "$M"/*

# make_step NAME EXPECTED-OUTPUT MAKE-ARGS...: run make under xlat in $M;
# status 0 and exactly the expected transcript (sorted for -j).
make_step() {
    local name=$1 want=$2 got xrc=0
    shift 2
    got=$(cd "$M" && xrun "/usr/bin/make" --no-print-directory "$@" 2>&1) || xrc=$?
    [[ " $* " == *" -j"* ]] && got=$(sort <<<"$got")
    if [[ $xrc -eq 0 && $got == "$want" ]]; then
        ok "make $name"
    else
        fail "make $name" "status $xrc; expected:" "$(sed 's/^/  /' <<<"$want")" "got:" "$(sed 's/^/  /' <<<"$got")"
    fi
}
make_step build $'gcc-14 -O2 -Wall -c main.c\ngcc-14 -O2 -Wall -c util.c\ngcc-14 -o app main.o util.o'
make_step up-to-date "make: 'app' is up to date."
touch "$M/util.c"
make_step incremental $'gcc-14 -O2 -Wall -c util.c\ngcc-14 -o app main.o util.o'
make_step clean 'rm -f app main.o util.o' clean
make_step -j2 $'gcc-14 -O2 -Wall -c main.c\ngcc-14 -O2 -Wall -c util.c\ngcc-14 -o app main.o util.o' -j2
xrc=0 qrc=0
xo=$(cd "$M" && xrun ./app 2>&1) || xrc=$?
qo=$(cd "$M" && qrun ./app 2>&1) || qrc=$?
if [[ $xrc -eq 0 && $qrc -eq 0 && $xo == "sum=500500 sq=144" && $qo == "$xo" ]]; then
    ok "run app"
else
    fail run-app "xlat: $xrc '$xo'; qemu: $qrc '$qo'"
fi

exit $failed
