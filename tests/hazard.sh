#!/usr/bin/env bash
# Hazards qemu-riscv64 cannot be the reference for (it deadlocks or races on
# them itself): each tests/hazard/*.c is a self-checking guest program that
# must print "ALL OK" and exit 0 under xlat, with the JIT and with --interp,
# within the time limit (a deadlock shows up as a timeout).
# Usage: tests/hazard.sh BUILD. Exit 0 = pass.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
GUEST_CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
OUT=$BUILD/hazard
source "$REPO/tests/lib.sh"
mkdir -p "$OUT"
fail=0
for src in "$REPO"/tests/hazard/*.c; do
    name=$(basename "$src" .c)
    elf=$OUT/$name
    if [[ ! -x $elf || $src -nt $elf ]]; then
        "$GUEST_CC" -static -O2 -march=rv64gc -Wall -pthread -o "$elf" "$src" ||
            { echo "FAIL $name: cross-compile"; fail=1; continue; }
    fi
    for engine in jit interp; do
        flags=()
        [[ $engine == interp ]] && flags=(--interp)
        # Output to a file, not through a pipe: a process that outlived
        # the timeout would keep a pipe open and hang this script.
        rc=0
        (cd "$OUT" && timeout -k 5 60 "$XLAT" "${flags[@]}" "$elf" >"$OUT/$name.out" 2>&1) || rc=$?
        out=$(cat "$OUT/$name.out")
        left=$(reap_survivors "$OUT/$name.out")
        if [[ $rc -ne 0 || -n $left ]] || ! grep -q "ALL OK" <<<"$out"; then
            note=""
            [[ $rc -eq 124 ]] && note=" (timed out: a deadlock?)"
            [[ -n $left ]] && note+=" (processes outlived it)"
            echo "FAIL $name ($engine): status $rc$note"
            head -n 20 <<<"$out"
            [[ -n $left ]] && echo "$left"
            fail=1
        else
            echo "ok   $name ($engine): $(head -n 1 <<<"$out")"
        fi
    done
done
exit $fail
