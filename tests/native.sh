#!/usr/bin/env bash
# Native-reference tests: tests/native/*.c are portable C programs about
# process behaviour that qemu-riscv64 cannot show -- it cannot execve a
# riscv64 program without binfmt_misc -- so each is built twice, for the
# host with cc and for riscv64 (static), and run natively and under
# BUILD/xlat; stdout and exit status must be identical.
#   Usage: tests/native.sh BUILD_DIR
#
# A `// xlat-rootfs-args: ARGS` line near the top of a source asks for one
# more run with ARGS, xlat getting `-L ROOTFS` (a riscv64 /bin/sh for
# system() and popen()), when scripts/rootfs.sh has the rootfs ready.
# Then a few xlat-only checks: execve of a host ELF is ENOEXEC, of a
# riscv64 ELF with a missing interpreter ENOENT, and an exec'd xlat appends
# to its parent's -D log.
#
# Exit: 0 all equal; 1 any difference (nothing here is skipped).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${XLAT_TIMEOUT_NATIVE:-120}

BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }
GUEST_CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
OUT=$BUILD/native
mkdir -p "$OUT"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-native.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The rootfs only if it is already built (tests/integration fetch it).
ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/xlat/rootfs-trixie-riscv64
[[ -e $ROOT/.xlat-rootfs-stamp && -e $ROOT/usr/bin/sh ]] || ROOT=

failed=0

# compare NAME NATIVE_BIN GUEST_BIN XLAT_OPTS ARGS...: one run each, in fresh directories.
compare() {
    local name=$1 nbin=$2 gbin=$3 xopts=$4 nrc xrc
    shift 4
    local -a xo
    read -r -a xo <<<"$xopts"
    rm -rf "$WORK/cwd"; mkdir -p "$WORK/cwd"
    nrc=$(cd "$WORK/cwd" && run_capture "$WORK/native" "$nbin" "$@" </dev/null)
    rm -rf "$WORK/cwd"; mkdir -p "$WORK/cwd"
    xrc=$(cd "$WORK/cwd" && run_capture "$WORK/xlat" "$XLAT" "${xo[@]}" "$gbin" "$@" </dev/null)
    if [[ $nrc -eq $xrc ]] && cmp -s "$WORK/native" "$WORK/xlat"; then
        echo "ok   $name"
    else
        echo "FAIL $name"
        report_mismatch "$WORK/native" "$nrc" "$WORK/xlat" "$xrc" | sed 's/qemu/native/g'
        failed=1
    fi
}

for src in "$REPO"/tests/native/*.c; do
    name=$(basename "$src" .c)
    nbin=$OUT/$name.host gbin=$OUT/$name
    if ! cc -O2 -pthread -o "$nbin" "$src" >"$WORK/cc.log" 2>&1 ||
       ! "$GUEST_CC" -static -O2 -o "$gbin" "$src" >>"$WORK/cc.log" 2>&1; then
        echo "FAIL $name: does not compile"
        head -n 20 "$WORK/cc.log" | sed 's/^/    /'
        failed=1
        continue
    fi
    compare "$name" "$nbin" "$gbin" ""
    extra=$(head -n 10 "$src" | sed -n 's|^// xlat-rootfs-args:[[:space:]]*||p')
    if [[ -n $extra && -n $ROOT ]]; then
        read -r -a eargs <<<"$extra"
        compare "$name (-L rootfs: $extra)" "$nbin" "$gbin" "-L $ROOT" "${eargs[@]}"
    elif [[ -n $extra ]]; then
        echo "note $name: no rootfs built (scripts/rootfs.sh), the $extra run is left out"
    fi
done

# execve of a host binary: the kernel's answer for an ELF of another
# machine. A riscv64 ELF whose program interpreter is missing: ENOENT from
# execve itself, as the kernel's ELF loader says before the point of no return.
expect_errno() {
    local what=$1 want=$2 path=$3 got
    got=$("$XLAT" "$OUT/proc_exec" try "$path" 2>&1)
    if [[ $got == *"$path"*" $want" ]]; then
        echo "ok   $what: $want"
    else
        echo "FAIL $what: $got (want $want)"
        failed=1
    fi
}
expect_errno "execve of a host ELF" ENOEXEC /bin/true
printf 'int main(void) { return 0; }\n' >"$WORK/nointerp.c"
if "$GUEST_CC" -O2 -Wl,--dynamic-linker=/nonexistent/ld.so -o "$OUT/nointerp" \
        "$WORK/nointerp.c" >"$WORK/cc.log" 2>&1; then
    expect_errno "execve with a missing interpreter" ENOENT "$OUT/nointerp"
else
    echo "FAIL cannot build nointerp"
    failed=1
fi

# An exec'd xlat appends to the -D log it inherits (no truncation, no leak).
rm -rf "$WORK/cwd"; mkdir -p "$WORK/cwd"
(cd "$WORK/cwd" && "$XLAT" -strace -D "$WORK/log" "$OUT/proc_spawn" >/dev/null 2>&1 </dev/null)
pids=$(grep -o '^[0-9]* exit_group' "$WORK/log" | sort -u | wc -l)
if [[ $pids -ge 5 ]]; then
    echo "ok   -D log continued by $pids processes"
else
    echo "FAIL -D log: exit_group lines from $pids processes (want >= 5)"
    failed=1
fi
exit $failed
