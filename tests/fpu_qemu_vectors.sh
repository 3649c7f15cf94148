#!/bin/sh
# Check the FP core (src/riscv/fpu.c via interp_fp) against qemu-riscv64 on
# a large set of randomized vectors: tests/guest/fp_vectors.c -v records
# every F/D instruction's result and fflags in all five rounding modes under
# qemu, and BUILD/tests/unit/test_fpu replays them on the host.
# Usage: tests/fpu_qemu_vectors.sh BUILD [COUNT]. Exit 0 = pass, 77 = skip.
set -u
BUILD=${1:-build}
COUNT=${2:-10000}
TEST_FPU=$BUILD/tests/unit/test_fpu
for tool in qemu-riscv64 riscv64-linux-gnu-gcc; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "fpu_qemu_vectors: $tool not installed"
        exit 77
    fi
done
if [ ! -x "$TEST_FPU" ]; then
    echo "fpu_qemu_vectors: $TEST_FPU not built (make unit)"
    exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

riscv64-linux-gnu-gcc -static -O2 -o "$TMP/fp_vectors" tests/guest/fp_vectors.c || exit 1
for seed in 1 2; do
    qemu-riscv64 "$TMP/fp_vectors" -v "$COUNT" $seed > "$TMP/vectors" || exit 1
    "$TEST_FPU" "$TMP/vectors" 1000 || exit 1
done
