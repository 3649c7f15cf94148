#!/usr/bin/env bash
# Every guest test binary (cross-compiled by run.sh into BUILD/guest/) run
# under the JIT (default) and under --interp: stdout and exit status must
# be identical. Catches JIT bugs that the qemu comparison alone would blame
# on the wrong engine.
set -uo pipefail
BUILD=$(cd "${1:?usage: jit_vs_interp.sh BUILD}" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XLAT=$BUILD/xlat
shopt -s nullglob
srcs=("$REPO"/tests/guest/*.c "$REPO"/tests/guest/*.S)
ran=0 fail=0
for src in "${srcs[@]}"; do
    name=$(basename "${src%.*}")
    elf=$BUILD/guest/$name
    [[ -x $elf ]] || continue
    args=$(head -n 10 "$src" | sed -n 's/^[[:space:]]*\(\/\/\|#\|\/\*\)[[:space:]]*xlat-args:[[:space:]]*\(.*\)$/\2/p' |
           sed 's/[[:space:]]*\*\/[[:space:]]*$//' | head -n 1)
    read -r -a argv <<<"$args"
    out_j=$(cd "$BUILD/guest" && timeout -k 2 30 "$XLAT" "$elf" "${argv[@]}" 2>/dev/null </dev/null); st_j=$?
    out_i=$(cd "$BUILD/guest" && timeout -k 2 30 "$XLAT" --interp "$elf" "${argv[@]}" 2>/dev/null </dev/null); st_i=$?
    ran=$((ran + 1))
    if [[ $st_j != "$st_i" || $out_j != "$out_i" ]]; then
        echo "MISMATCH $name: jit status $st_j, interp status $st_i"
        diff <(echo "$out_i") <(echo "$out_j") | head -10
        fail=$((fail + 1))
    fi
done
if ((ran == 0)); then
    echo "no guest binaries in $BUILD/guest (run the guest tests first)"
    exit 77
fi
echo "$ran guest programs, $fail differ between the JIT and the interpreter"
((fail == 0))
