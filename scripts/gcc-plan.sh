#!/usr/bin/env bash
# Run the rootfs's gcc-14 under qemu-riscv64 the only way qemu-user can
# without binfmt_misc: ask the driver for its plan (`gcc -### ARGS`), then
# run each step of it (cc1, as, collect2's ld) as its own
# `qemu-riscv64 -L ROOTFS` process, in the current directory. This is the
# reference that xlat's gcc, which follows the driver's execve itself, is
# compared with (tests/integration/gcc.sh, scripts/demo.sh).
#
#   scripts/gcc-plan.sh ROOTFS GCC-ARGS...     (QEMU=qemu-riscv64 by default)
#
# Two adjustments: collect2 only execs ld with the same arguments, so ld is
# run directly; and qemu 7.2 does not apply -L to access(2), so the driver
# under qemu cannot find libc's start files (Scrt1.o, crti.o ...) and names
# them bare: they get their ROOTFS path here. Temporary files go to $TMPDIR.
# Exit status: that of the first step that fails (as the driver's), 0 if
# all succeed, 99 if the driver could not even print its plan.
set -uo pipefail

ROOT=$1
shift
QEMU=${QEMU:-qemu-riscv64}
plan=$(mktemp "${TMPDIR:-/tmp}/gcc-plan.XXXXXX")
trap 'rm -f "$plan"' EXIT

if ! "$QEMU" -L "$ROOT" "$ROOT/usr/bin/gcc-14" -### "$@" 2>"$plan"; then
    echo "gcc-plan: gcc -### failed:" >&2
    cat "$plan" >&2
    exit 99
fi
while IFS= read -r line; do
    [[ $line == " "* ]] || continue            # the steps; the rest is info
    eval "w=($line)"                             # gcc quotes them for a shell
    case ${w[0]} in
        */collect2) w[0]=$ROOT/usr/bin/ld ;;
        */*) ;;
        *) w[0]=$ROOT/usr/bin/${w[0]} ;;         # as, found through PATH
    esac
    for i in "${!w[@]}"; do
        if [[ ${w[i]} =~ ^[A-Za-z]*crt[1in]\.o$ && -e $ROOT/usr/lib/riscv64-linux-gnu/${w[i]} ]]; then
            w[i]=$ROOT/usr/lib/riscv64-linux-gnu/${w[i]}
        fi
    done
    "$QEMU" -L "$ROOT" "${w[@]}" || exit $?
done <"$plan"
exit 0
