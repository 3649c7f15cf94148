#!/usr/bin/env bash
# Bare-metal guest tests of xlat-system (the privileged architecture and the
# virt machine's devices): each tests/system/*.c is built here with the
# riscv64 cross compiler together with tests/system/{start.S,lib.c} and
# link.ld, run under BUILD/xlat-system with a timeout, and passes when it
# exits with status 0 (the syscon's pass; SBI SRST for S-mode tests), its
# UART output has no "FAIL", it printed its "END n checks, 0 failed" line
# and every `system-expect:` text appears in its output.
#
# Directives in a test's first 10 lines (`// NAME: VALUE`):
#   system-mode: s        start in S-mode under the SBI (-bios default; built
#                         with -DSMODE, linked at 0x80200000); else -bios none
#   system-args: ARGS     more xlat-system options (e.g. -smp 2)
#   system-variant: ARGS  one more run with these options, after the usual
#                         three (repeatable; not under $SYSTEM_EMU)
#   system-stdin: TEXT    piped into stdin (the UART's input); else /dev/null
#   system-expect: TEXT   must appear in the output (repeatable)
#   system-disk: TEXT     a disk: BUILD/.../NAME.disk (64 KiB, sector 0 starting
#                         "XLAT-BARE-METAL-DISK", the rest zeros) as the first
#                         virtio-blk-device (slot 7); after the run the host
#                         file's sector 1 must start with TEXT
#
# Usage: tests/system.sh BUILD [NAME...]   (NAME: only these tests)
# Each run builds and logs in a directory of its own under BUILD/system-tests
# (kept when a test fails, for its ELF and full log; removed otherwise).
# $SYSTEM_EMU runs the tests under another emulator with the same options
# (qemu-system-riscv64, to check a test itself against QEMU).
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
shift || true
SRC=$REPO/tests/system
SYS=${SYSTEM_EMU:-$BUILD/xlat-system}
CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
TIMEOUT=${XLAT_SYSTEM_TIMEOUT:-60}

if ! command -v "$CC" >/dev/null; then
    echo "$CC is not installed: the bare-metal tests cannot be built"
    exit 77
fi
if [[ -z ${SYSTEM_EMU:-} && ! -x $SYS ]]; then
    echo "FAIL $SYS is not built (make build/xlat-system)"
    exit 1
fi
mkdir -p "$BUILD/system-tests"
OUT=$(mktemp -d "$BUILD/system-tests/run.XXXXXX")

CFLAGS=(-march=rv64gc -mabi=lp64 -mcmodel=medany -mno-relax -mstrict-align -O2 -Wall -Wextra
        -ffreestanding -fno-builtin -fno-pic -fno-stack-protector -fno-asynchronous-unwind-tables
        -I "$SRC")
LDFLAGS=(-nostdlib -static -no-pie -Wl,-N -Wl,--build-id=none -Wl,--no-warn-rwx-segments
         -T "$SRC/link.ld")

directive() {        # NAME FILE: every value of `// NAME: VALUE` in the first 10 lines
    head -n 10 "$2" | sed -n "s|^[[:space:]]*//[[:space:]]*$1:[[:space:]]*\(.*\)$|\1|p"
}

# Run test $name (its ELF, directives and argv set by the loop below) under
# one variant of xlat-system's options, and check its output.
run_variant() {
    local variant=$1 label=$name log=$OUT/$name.log rc=0 text
    local -a vargs=() cmd=() problems=() dargs=()
    if [[ -n $variant ]]; then
        read -r -a vargs <<<"$variant"
        label="$name ($variant)"
        log=$OUT/$name.${variant//[^a-z0-9]/_}.log
    fi
    local disk=$OUT/$name.disk
    if [[ -n $disk_text ]]; then
        printf 'XLAT-BARE-METAL-DISK' >"$disk" && truncate -s 64K "$disk"
        # The -device form, not if=virtio: QEMU's virt puts if=virtio on PCI.
        dargs=(-drive "file=$disk,format=raw,if=none,id=disk" -device virtio-blk-device,drive=disk)
        # QEMU's virt makes its virtio-mmio transports legacy (version 1) by default.
        [[ -n ${SYSTEM_EMU:-} ]] && dargs+=(-global virtio-mmio.force-legacy=false)
    fi
    cmd=("$SYS" -M virt -m 128M -nographic -bios "$bios" "${vargs[@]}" "${argv[@]}" "${dargs[@]}"
         -kernel "$elf")
    if [[ -n $stdin ]]; then
        printf '%s' "$stdin" | timeout -k 5 "$TIMEOUT" "${cmd[@]}" >"$log" 2>&1 || rc=$?
    else
        timeout -k 5 "$TIMEOUT" "${cmd[@]}" </dev/null >"$log" 2>&1 || rc=$?
    fi
    if ((rc == 124)); then
        problems+=("timed out after ${TIMEOUT}s")
    elif ((rc != 0)); then
        problems+=("exit status $rc")
    fi
    grep -q 'FAIL' "$log" && problems+=("FAIL in the output")
    grep -q '^END [0-9]* checks, 0 failed' "$log" || problems+=("no 'END n checks, 0 failed' line")
    while IFS= read -r text; do
        [[ -z $text ]] && continue
        grep -qF -- "$text" "$log" || problems+=("missing output: $text")
    done < <(directive system-expect "$src")
    if [[ -n $disk_text ]] &&
            ! cmp -s -n "${#disk_text}" <(printf '%s' "$disk_text") <(tail -c +513 "$disk"); then
        problems+=("sector 1 of $disk does not start with: $disk_text")
    fi
    if ((${#problems[@]} == 0)); then
        echo "ok   $label: $(grep -c '^ok ' "$log") checks"
        return 0
    fi
    echo "FAIL $label: $(IFS=';'; echo "${problems[*]}")"
    grep 'FAIL' "$log" | head -n 40 | sed 's/^/    /'
    echo "    last lines of $log:"
    tail -n 8 "$log" | sed 's/^/      /'
    return 1
}

# Every test runs through the JIT with its mechanisms on, through the
# interpreter (the golden model), and through the JIT with the smallest
# fixed TLB, blocks translated on their first run and the generic entry
# paths; under another emulator, once.
VARIANTS=("" "--interp" "--tune tlb-bits=6,no-first-interp,no-entry-specialize")
[[ -n ${SYSTEM_EMU:-} ]] && VARIANTS=("")

fail=0 ran=0
for src in "$SRC"/*.c; do
    name=$(basename "$src" .c)
    [[ $name == lib ]] && continue
    if (($# > 0)); then
        want=0
        for n in "$@"; do [[ $n == "$name" ]] && want=1; done
        ((want)) || continue
    fi
    ran=$((ran + 1))
    mode=$(directive system-mode "$src" | head -n 1)
    args=$(directive system-args "$src" | head -n 1)
    stdin=$(directive system-stdin "$src" | head -n 1)
    disk_text=$(directive system-disk "$src" | head -n 1)
    elf=$OUT/$name.elf log=$OUT/$name.log
    extra=() bios=none
    if [[ $mode == s ]]; then
        extra=(-DSMODE -Wl,--defsym=LOAD_ADDR=0x80200000)
        bios=default
    fi
    if ! "$CC" "${CFLAGS[@]}" "${extra[@]}" "${LDFLAGS[@]}" -o "$elf" \
            "$SRC/start.S" "$SRC/lib.c" "$src" >"$OUT/$name.cc.log" 2>&1; then
        echo "FAIL $name: cross-compile"
        head -n 20 "$OUT/$name.cc.log" | sed 's/^/    /'
        fail=1
        continue
    fi
    read -r -a argv <<<"$args"
    own=()
    [[ -z ${SYSTEM_EMU:-} ]] && mapfile -t own < <(directive system-variant "$src")
    for variant in "${VARIANTS[@]}" "${own[@]}"; do
        run_variant "$variant" || fail=1
    done
    # `// system-repeat: N ARGS`: a hazard test (harts racing on host
    # threads) runs N times in a row with ARGS, every run passing (a tenth
    # as many on the sanitizer build).
    while read -r count repeat_args; do
        [[ -z $count || -n ${SYSTEM_EMU:-} ]] && continue
        [[ ${XLAT_SAN_SUITE:-} == 1 ]] && count=$(( (count + 9) / 10 ))
        for ((k = 1; k <= count; k++)); do
            if ! out=$(run_variant "$repeat_args"); then
                echo "$out" | sed "s/^FAIL /FAIL (run $k of $count) /"
                fail=1
                continue 2
            fi
        done
        echo "ok   $name ($repeat_args): $count runs in a row"
    done < <(directive system-repeat "$src")
done
((ran > 0)) || { echo "FAIL no test matched: $*"; exit 1; }
# -d in_asm and -d exec on one of them (traps, from reset in M-mode): its
# entry is shown once, objdump-style, and each run of it is an exec line.
if [[ -z ${SYSTEM_EMU:-} && -f $OUT/traps.elf ]]; then
    entry=$(riscv64-linux-gnu-nm "$OUT/traps.elf" | awk '$3 == "_start" { sub(/^0+/, "", $1); print $1 }')
    timeout -k 5 "$TIMEOUT" "$SYS" -M virt -m 128M -nographic -bios none -d in_asm,exec \
        -D "$OUT/logged.log" -kernel "$OUT/traps.elf" </dev/null >"$OUT/logged.out" 2>&1
    shown=$(grep -cE "^ *$entry:[[:space:]]+[0-9a-f]{4,8}[[:space:]]+[a-z]" "$OUT/logged.log")
    if [[ -n $entry && $shown == 1 ]] && grep -q "^exec pc 0x$entry\$" "$OUT/logged.log" &&
            grep -q '^END [0-9]* checks, 0 failed' "$OUT/logged.out"; then
        echo "ok   -d in_asm,exec: $(grep -c '^exec pc' "$OUT/logged.log") instructions run," \
             "$(grep -cE '^ *[0-9a-f]+:' "$OUT/logged.log") distinct shown"
    else
        echo "FAIL -d in_asm,exec: _start ($entry) shown $shown times (want 1), or no exec line"
        fail=1
    fi
fi
if ((fail)); then
    echo "(ELFs and logs kept in $OUT)"
else
    rm -rf "$OUT"
fi
exit $fail
