#!/usr/bin/env bash
# The isolation promise and W^X, checked against xlat itself (qemu-riscv64
# shares its address space with the guest, so it is no reference here):
#   - tests/trust/iso_*.c: self-checking guest programs (wild loads, stores,
#     AMOs, jumps, every displacement at the window's edges, mmap/mremap
#     hints, syscalls with wild buffers, /proc/<pid>/mem, ptrace...). Each
#     must print "ALL OK", exit 0, and xlat (run with XLAT_CANARY_CHECK=1)
#     must report "canary ok" on stderr: its own memory is intact. Run under
#     the JIT (window at host 0 and at a base register) and under --interp.
#   - W^X: while tests/trust/wx_run.c generates and runs code, xlat's
#     /proc/<pid>/maps is sampled; no mapping may be both writable and
#     executable.
# Usage: tests/trust.sh BUILD. Exit 0 = pass.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
GUEST_CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
OUT=$BUILD/trust
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
fail=0

build() {                       # build SRC -> $OUT/NAME (when stale)
    local src=$1 elf=$OUT/$(basename "$1" .c)
    if [[ ! -x $elf || $src -nt $elf ]]; then
        "$GUEST_CC" -static -O2 -march=rv64gc -Wall -o "$elf" "$src" -lpthread || return 1
    fi
}

# -- Isolation programs -------------------------------------------------------
for src in "$REPO"/tests/trust/iso_*.c; do
    name=$(basename "$src" .c)
    build "$src" || { echo "FAIL $name: cross-compile"; fail=1; continue; }
    # The JIT with the guest window at host address 0 (the default) and at a
    # base register (where a sanitizer's shadow or the host takes address 0).
    for engine in jit jit-based interp; do
        flags=()
        [[ $engine == interp ]] && flags=(--interp)
        [[ $engine == jit-based ]] && flags=(--tune no-zero-base)
        rc=0
        (cd "$TMP" && XLAT_CANARY_CHECK=1 timeout -k 5 60 "$XLAT" "${flags[@]}" \
            "$OUT/$name" >"$TMP/out" 2>"$TMP/err") || rc=$?
        if [[ $rc -ne 0 ]] || ! grep -q "ALL OK" "$TMP/out" || ! grep -q "canary ok" "$TMP/err"; then
            echo "FAIL $name ($engine): status $rc"
            head -n 30 "$TMP/out" "$TMP/err"
            fail=1
        else
            echo "ok   $name ($engine): $(grep -c . "$TMP/out") checks groups, $(grep 'canary ok' "$TMP/err")"
        fi
    done
done

# -- W^X ---------------------------------------------------------------------
build "$REPO/tests/trust/wx_run.c" || { echo "FAIL wx_run: cross-compile"; exit 1; }
"$XLAT" "$OUT/wx_run" >"$TMP/wx.out" 2>&1 &
pid=$!
samples=0 wx=0
while kill -0 "$pid" 2>/dev/null; do
    maps=$(cat "/proc/$pid/maps" 2>/dev/null) || break
    [[ -n $maps ]] || break
    samples=$((samples + 1))
    if awk '$2 ~ /w/ && $2 ~ /x/ { found = 1; print } END { exit !found }' <<<"$maps"; then
        wx=1
    fi
    sleep 0.05
done
rc=0
wait "$pid" || rc=$?
if [[ $wx -ne 0 ]]; then
    echo "FAIL W^X: a host mapping of xlat was writable and executable"
    fail=1
elif [[ $rc -ne 0 ]] || ! grep -q "wx_run: ok" "$TMP/wx.out" || [[ $samples -lt 5 ]]; then
    echo "FAIL W^X run: status $rc, $samples samples"; cat "$TMP/wx.out"
    fail=1
else
    echo "ok   W^X: $samples samples of /proc/$pid/maps, no w+x mapping"
fi
exit $fail
