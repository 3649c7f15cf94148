#!/usr/bin/env bash
# The dispatch mechanisms (--tune, see xlat -h) must not change behaviour:
# every guest test binary (cross-compiled by run.sh into BUILD/guest/) runs
# with all mechanisms on (the default) and once with each switched off, and
# with the smallest jump cache; stdout and exit status must equal those of
# the default run (which the guest/ tests compare with qemu-riscv64).
# The whole guest set (about 30 s on two cores).
set -uo pipefail
BUILD=$(cd "${1:?usage: tune_matrix.sh BUILD}" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XLAT=$BUILD/xlat
CONFIGS=(no-cflags no-nostore no-inline-jc no-xpage no-cycle-poll no-poison no-disp no-checked-reuse no-ras no-superblock
         no-fork-warm no-first-interp no-remap no-narrow no-zero-base no-atomics jc-bits=10 no-poison,no-inline-jc no-cycle-poll,no-poison)
shopt -s nullglob
srcs=("$REPO"/tests/guest/*.c "$REPO"/tests/guest/*.S)
ran=0 fail=0

run() {     # run ELF ARGS... with XLAT_TUNE=$tune: "status\nstdout"
    local out st
    out=$(cd "$BUILD/guest" && XLAT_TUNE=$tune timeout -k 2 30 "$XLAT" "$@" 2>/dev/null </dev/null); st=$?
    printf '%s\n%s' "$st" "$out"
}

for src in "${srcs[@]}"; do
    name=$(basename "${src%.*}")
    elf=$BUILD/guest/$name
    [[ -x $elf ]] || continue
    args=$(head -n 10 "$src" | sed -n 's/^[[:space:]]*\(\/\/\|#\|\/\*\)[[:space:]]*xlat-args:[[:space:]]*\(.*\)$/\2/p' |
           sed 's/[[:space:]]*\*\/[[:space:]]*$//' | head -n 1)
    read -r -a argv <<<"$args"
    tune=
    ref=$(run "$elf" "${argv[@]}")
    for tune in "${CONFIGS[@]}"; do
        got=$(run "$elf" "${argv[@]}")
        ran=$((ran + 1))
        if [[ $got != "$ref" ]]; then
            echo "MISMATCH $name with --tune $tune (first line: exit status)"
            diff <(echo "$ref") <(echo "$got") | head -10
            fail=$((fail + 1))
        fi
    done
done
if ((ran == 0)); then
    echo "no guest binaries in $BUILD/guest (run the guest tests first)"
    exit 77
fi
echo "$ran runs ($((ran / ${#CONFIGS[@]})) programs x ${#CONFIGS[@]} --tune settings), $fail mismatches"
((fail == 0))
