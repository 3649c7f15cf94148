#!/usr/bin/env bash
# `make demo`: run Debian's real riscv64 busybox (fetched and cached by
# scripts/fetch-busybox.sh) under qemu-riscv64 and under BUILD/xlat, on
# workloads big enough to time, and print each command, its output, whether
# xlat's output and exit status equal qemu's, and both wall times.
#
#   scripts/demo.sh [BUILD_DIR]      (DEMO_TIMEOUT=seconds per run, default 300)
#
# Exits nonzero if xlat is missing or any of its runs differs from qemu's:
# the table then says which, rather than showing a time for a wrong answer.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${DEMO_TIMEOUT:-300}
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "demo: no build dir ${1:-build}" >&2; exit 1; }
XLAT=$BUILD/xlat
QEMU_ABS=$(command -v "$QEMU") || { echo "demo: $QEMU not installed (make deps)" >&2; exit 1; }

BB=$("$REPO/scripts/fetch-busybox.sh") || {
    echo "demo: could not fetch busybox (see above)" >&2
    exit 1
}

# ---- Inputs (generated once, cached beside busybox) ---------------------

DATA=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xlat/demo
mkdir -p "$DATA"
if [[ ! -s $DATA/words.txt ]]; then
    echo "demo: generating inputs in $DATA ..."
    # 200,000 lines of pseudo-random words and numbers from a fixed LCG.
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
fi
if [[ ! -s $DATA/big.dat ]]; then
    # 20 MiB: the word list repeated, cut to size.
    # (head closes the pipe early: the pipeline's status is not the test.)
    for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$DATA/words.txt"; done 2>/dev/null |
        head -c $((20 << 20)) >"$DATA/big.tmp"
    mv "$DATA/big.tmp" "$DATA/big.dat"
fi

# ---- Workloads: label | host shell snippet ($RUN = runner, $BB = busybox) -

WORKLOADS=(
    "sha256sum, 20 MiB|\$RUN \$BB sha256sum big.dat"
    "md5sum, 20 MiB|\$RUN \$BB md5sum big.dat"
    "sort, 200k lines|\$RUN \$BB sort words.txt"
    "gzip -6, 20 MiB|\$RUN \$BB gzip -6 -c big.dat"
    "awk sum, 200k lines|\$RUN \$BB awk '{ s += \$2 } END { print NR, s }' words.txt"
    "sh loop, 100k iterations|\$RUN \$BB sh -c 'i=0; s=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); s=\$(((s + i * 7) % 1000003)); done; echo \$s'"
)

ENV=(env -i PATH=/nonexistent LC_ALL=C HOME=/nonexistent)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/xlat-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
cd "$DATA"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Show a run's output: text as its first lines, anything else as a digest.
show_output() {
    local f=$1 lines
    if [[ ! -s $f ]]; then
        echo "    (no output)"
    elif grep -qP '[^\x09\x0a\x20-\x7e]' "$f" 2>/dev/null; then
        echo "    ($(stat -c %s "$f") bytes of binary output, sha256 $(sha256sum <"$f" | cut -c1-16)...)"
    else
        lines=$(wc -l <"$f")
        head -n 3 "$f" | cut -c1-100 | sed 's/^/    /'
        ((lines > 3)) && echo "    ... ($lines lines)"
    fi
    return 0
}

echo "busybox: $BB"
echo "         $(file -b "$BB" | cut -d, -f1-3)"
echo "xlat:    $XLAT"
echo

rows=() bad=0
for w in "${WORKLOADS[@]}"; do
    label=${w%%|*} snippet=${w#*|}
    echo "\$ busybox ${snippet#*\$BB }"
    t0=$(now)
    qrc=$(RUN="${ENV[*]} $QEMU_ABS" BB=$BB run_capture "$OUT/q" bash -c "$snippet" </dev/null)
    t1=$(now)
    qt=$(secs "$t0" "$t1")
    show_output "$OUT/q"
    if [[ $qrc -ne 0 ]]; then
        echo "    qemu-riscv64 FAILED: status $(describe_status "$qrc")"
        head -n 5 "$OUT/q.err" | sed 's/^/    /'
        rows+=("$label|FAILED ($qrc)|-|")
        bad=1
        echo
        continue
    fi
    if [[ ! -x $XLAT ]]; then
        rows+=("$label|${qt}s|not built|")
        bad=1
        echo
        continue
    fi
    t0=$(now)
    xrc=$(RUN="${ENV[*]} $XLAT" BB=$BB run_capture "$OUT/x" bash -c "$snippet" </dev/null)
    t1=$(now)
    xt=$(secs "$t0" "$t1")
    if [[ $xrc -eq $qrc ]] && cmp -s "$OUT/q" "$OUT/x"; then
        echo "    xlat: same output and exit status ($qrc)"
        ratio=$(awk -v q="$qt" -v x="$xt" 'BEGIN {
            if (q <= 0 || x <= 0) print "-"
            else if (x > q) printf "%.1fx slower", x / q
            else printf "%.1fx faster", q / x }')
        rows+=("$label|${qt}s|${xt}s|$ratio")
    else
        bad=1
        echo "    xlat: DIFFERENT result:"
        report_mismatch "$OUT/q" "$qrc" "$OUT/x" "$xrc" | sed 's/^/  /'
        if [[ $xrc -eq 124 ]]; then
            rows+=("$label|${qt}s|TIMED OUT (${XLAT_TIMEOUT}s)|")
        else
            rows+=("$label|${qt}s|WRONG (status $xrc)|")
        fi
    fi
    echo
done

printf '%-28s %14s %22s %18s\n' "workload" "qemu-riscv64" "xlat" "xlat vs qemu"
printf '%-28s %14s %22s %18s\n' "--------" "------------" "----" "------------"
for r in "${rows[@]}"; do
    IFS='|' read -r label qt xt ratio <<<"$r"
    printf '%-28s %14s %22s %18s\n' "$label" "$qt" "$xt" "$ratio"
done
echo
echo "(wall times; xlat is currently the interpreter milestone, no JIT yet)"
if [[ ! -x $XLAT ]]; then
    echo "demo: $XLAT is not built yet; only qemu-riscv64 could run" >&2
fi
exit $bad
