#!/usr/bin/env bash
# `make demo`: real Debian trixie riscv64 programs from the test rootfs
# (scripts/rootfs.sh, fetched once and cached) under BUILD/xlat and under
# qemu-riscv64, side by side: each step prints its command, its output,
# whether xlat's result equals the reference, and both wall times.
#
#   scripts/demo.sh [BUILD_DIR]      (DEMO_TIMEOUT=seconds per run, default 300)
#
# Steps: static busybox; the guest's own gcc-14 compiling and linking a C
# program (driver -> cc1 -> as -> collect2 -> ld, every step a guest
# execve) and the program run; a python3 script; a bash pipeline. qemu-user
# without binfmt_misc cannot follow a guest's execve of a riscv64 program,
# so for the gcc and bash steps qemu runs the same steps one by one
# (scripts/gcc-plan.sh for gcc; a host-shell pipeline of qemu processes
# for bash) and the table says so.
#
# Exits nonzero if xlat is missing or any of its results differs from the
# reference: the table then says which, rather than showing a time for a
# wrong answer.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${DEMO_TIMEOUT:-300}
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "demo: no build dir ${1:-build}" >&2; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "demo: $XLAT is not built" >&2; exit 1; }
QEMU_ABS=$(command -v "$QEMU") || { echo "demo: $QEMU not installed (make deps)" >&2; exit 1; }

echo "demo: the Debian trixie riscv64 rootfs (scripts/rootfs.sh; the first run downloads it)..."
ROOT=$("$REPO/scripts/rootfs.sh") || { echo "demo: could not build the rootfs (see above)" >&2; exit 1; }
BB=$ROOT/usr/bin/busybox

# ---- Inputs (generated once, cached) -------------------------------------

DATA=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xlat/demo
mkdir -p "$DATA"
if [[ ! -s $DATA/big.dat ]]; then
    echo "demo: generating inputs in $DATA ..."
    # 20 MiB of pseudo-random words and numbers from a fixed LCG.
    awk 'BEGIN {
        x = 2024; m = 4294967296
        for (i = 0; i < 200000; i++) {
            w = ""
            for (j = 0; j < 3 + i % 9; j++) {
                x = (x * 69069 + 1) % m
                w = w sprintf("%c", 97 + int(x / 65536) % 26)
            }
            x = (x * 69069 + 1) % m
            printf "%s %d\n", w, int(x / 4096) % 1000000
        }
    }' >"$DATA/words.tmp" && mv "$DATA/words.tmp" "$DATA/words.txt"
    for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$DATA/words.txt"; done 2>/dev/null |
        head -c $((20 << 20)) >"$DATA/big.tmp"
    mv "$DATA/big.tmp" "$DATA/big.dat"
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/xlat-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/x/tmp" "$OUT/q/tmp"
cat >"$OUT/x/primes.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sieve of Eratosthenes, then a checksum of the primes. */
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    char *composite = calloc(n + 1, 1);
    long count = 0;
    unsigned long sum = 0;
    for (long i = 2; i <= n; i++) {
        if (composite[i])
            continue;
        count++;
        sum = sum * 31 + i;
        for (long j = i * i; j <= n; j += i)
            composite[j] = 1;
    }
    printf("%ld primes up to %ld, checksum %lx\n", count, n, sum);
    free(composite);
    return 0;
}
EOF
cp "$OUT/x/primes.c" "$OUT/q/primes.c"
cat >"$DATA/demo.py" <<'EOF'
import hashlib, json, re, threading
# JSON round trips, regular expressions and hashing, on 4 threads.
records = [{"id": i, "name": "item%05d" % i, "tags": ["t%d" % (i % 7), "x" * (i % 5)],
            "price": round(i * 1.37 % 97, 2)} for i in range(20000)]
text = json.dumps(records, sort_keys=True)
back = json.loads(text)
assert back == records
names = re.findall(r'"name": "item(\d*7)"', text)
results = [None] * 4
def work(k):
    h = hashlib.sha256()
    for r in back[k::4]:
        h.update(json.dumps(r, sort_keys=True).encode())
    results[k] = h.hexdigest()[:12]
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(len(text), "bytes of JSON;", len(names), "names end in 7; digests", results)
EOF

# ---- Steps ---------------------------------------------------------------
# step LABEL SHOWN XLAT-SNIPPET QEMU-SNIPPET HOW: the snippets are host shell
# run in $OUT/x resp. $OUT/q, with $X = xlat confined to the rootfs (--root,
# with the demo's directories bound in) and $Q = qemu with -L ROOTFS, both
# in a clean environment; xlat names guest programs by their guest paths. HOW compares "out" (stdout and status) or "file NAME"
# (that file byte for byte, and both statuses 0).

ENV="env -i PATH=/usr/bin:/bin LC_ALL=C HOME=/nonexistent"
X="$ENV TMPDIR=$OUT/x/tmp $XLAT --root $ROOT --bind $OUT --bind $DATA"
Q="$ENV TMPDIR=$OUT/q/tmp $QEMU_ABS -L $ROOT"
GCCPLAN="$ENV TMPDIR=$OUT/q/tmp QEMU=$QEMU_ABS $REPO/scripts/gcc-plan.sh $ROOT"
SHLOOP='i=0; s=0; while [ $i -lt 100000 ]; do i=$((i + 1)); s=$(((s + i * 7) % 1000003)); done; echo $s'
PIPE='seq 1 1000000 | sort -rn | sha256sum'

run_steps() {
    step "busybox sha256sum, 20 MiB" "busybox sha256sum big.dat" \
        "\$X /usr/bin/busybox sha256sum $DATA/big.dat" "\$Q $BB sha256sum $DATA/big.dat" out
    step "busybox sh loop, 100k iter." "busybox sh -c '$SHLOOP'" \
        "\$X /usr/bin/busybox sh -c '$SHLOOP'" "\$Q $BB sh -c '$SHLOOP'" out
    step "gcc -O2 -c (cc1, as)*" "gcc-14 -O2 -c primes.c" \
        "\$X /usr/bin/gcc-14 -O2 -c primes.c" "\$GCCPLAN -O2 -c primes.c" "file primes.o"
    step "gcc -O2 -o (+ collect2, ld)*" "gcc-14 -O2 -o primes primes.c" \
        "\$X /usr/bin/gcc-14 -O2 -o primes primes.c" "\$GCCPLAN -O2 -o primes primes.c" "file primes"
    step "./primes 30000000" "./primes 30000000" \
        "\$X ./primes 30000000" "\$Q ../x/primes 30000000" out
    step "python3 json/re/threads" "python3 demo.py" \
        "\$X /usr/bin/python3 $DATA/demo.py" "\$Q $ROOT/usr/bin/python3 $DATA/demo.py" out
    step "bash pipeline*" "bash -c '$PIPE'" \
        "\$X /usr/bin/bash -c '$PIPE'" \
        "\$Q $ROOT/usr/bin/seq 1 1000000 | \$Q $ROOT/usr/bin/sort -rn | \$Q $ROOT/usr/bin/sha256sum" out
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Show a run's output: its first lines.
show_output() {
    if [[ ! -s $1 ]]; then
        echo "    (no output)"
    else
        head -n 3 "$1" | cut -c1-110 | sed 's/^/    /'
        (($(wc -l <"$1") > 3)) && echo "    ... ($(wc -l <"$1") lines)"
    fi
    return 0
}

# timed DIR OUTFILE SNIPPET: run SNIPPET in DIR; prints "STATUS SECONDS".
timed() {
    local t0 t1 rc
    t0=$(now)
    rc=$(cd "$1" && X=$X Q=$Q GCCPLAN=$GCCPLAN run_capture "$2" bash -c "$3" </dev/null)
    t1=$(now)
    echo "$rc $(secs "$t0" "$t1")"
}

echo "rootfs:  $ROOT"
echo "xlat:    $XLAT"
echo
rows=() bad=0
step() {
    local label=$1 shown=$2 xsnip=$3 qsnip=$4 how=$5 xrc xt qrc qt same=0 f ratio
    echo "\$ $shown"
    read -r xrc xt < <(timed "$OUT/x" "$OUT/x.out" "$xsnip")
    read -r qrc qt < <(timed "$OUT/q" "$OUT/q.out" "$qsnip")
    show_output "$OUT/x.out"
    if [[ $how == out ]]; then
        [[ $xrc -eq $qrc ]] && cmp -s "$OUT/x.out" "$OUT/q.out" && same=1
    else
        f=${how#file }
        [[ $xrc -eq 0 && $qrc -eq 0 && -s $OUT/q/$f ]] && cmp -s "$OUT/x/$f" "$OUT/q/$f" && same=1
        ((same)) && echo "    $f: $(file -b "$OUT/x/$f" | cut -d, -f1-2), identical to qemu's"
    fi
    if ((same)); then
        ratio=$(awk -v q="$qt" -v x="$xt" 'BEGIN {
            if (q <= 0 || x <= 0) print "-"
            else if (x > q) printf "%.1fx slower", x / q
            else printf "%.1fx faster", q / x }')
        rows+=("$label|${qt}s|${xt}s|$ratio")
    else
        bad=1
        echo "    xlat: DIFFERENT result from qemu's:"
        report_mismatch "$OUT/q.out" "$qrc" "$OUT/x.out" "$xrc" | sed 's/^/  /'
        head -n 5 "$OUT/q.out.err" | sed 's/^/      qemu stderr: /'
        rows+=("$label|${qt}s|WRONG (status $xrc)|")
    fi
    echo
}
run_steps

printf '%-30s %12s %12s %14s\n' "step" "qemu-riscv64" "xlat" "xlat vs qemu"
printf '%-30s %12s %12s %14s\n' "----" "------------" "----" "------------"
for r in "${rows[@]}"; do
    IFS='|' read -r label qt xt ratio <<<"$r"
    printf '%-30s %12s %12s %14s\n' "$label" "$qt" "$xt" "$ratio"
done
echo
echo "(wall times. * qemu-user cannot follow a guest's execve of a riscv64 program"
echo " without binfmt_misc: under xlat the guest's gcc and bash exec cc1, as, ld,"
echo " seq, sort ... themselves; for qemu those steps run one by one, each as its"
echo " own qemu-riscv64 process -- scripts/gcc-plan.sh for gcc.)"
exit $bad
