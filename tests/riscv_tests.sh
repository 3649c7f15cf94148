#!/usr/bin/env bash
# riscv-tests (../shared/riscv-tests, upstream's isa/ and env/, unmodified):
# every test of the rv64ui, um, ua, uf, ud, uc, si, mi, uzba, uzbb and uzbs
# suites built at test time in the `p` environment (bare metal, M-mode,
# physical memory) and the `v` environment (the same tests in U-mode under a
# small supervisor with virtual memory; no v tests for si and mi), run the
# way Spike runs them: `xlat-system -bios none -kernel TEST`, which exits
# with the HTIF code the test writes to tohost (0: pass).
# Usage: tests/riscv_tests.sh BUILD [SUITE...]
set -u
BUILD=${1:-build}
shift || true
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RT=${XLAT_RISCV_TESTS:-$REPO/../shared/riscv-tests}
[[ -d $RT/isa ]] || RT=/work/shared/riscv-tests
SYS=$BUILD/xlat-system
OUT=$BUILD/riscv-tests
CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
[[ -x $SYS ]] || { echo "FAIL $SYS is not built"; exit 1; }
[[ -d $RT/isa ]] || { echo "riscv-tests sources not found (../shared/riscv-tests)"; exit 77; }
mkdir -p "$OUT"

SUITES=("$@")
((${#SUITES[@]})) || SUITES=(rv64ui rv64um rv64ua rv64uf rv64ud rv64uc rv64si rv64mi
                             rv64uzba rv64uzbb rv64uzbs)
CFLAGS=(-march=rv64gc_zba_zbb_zbs -mabi=lp64d -static -mcmodel=medany -fvisibility=hidden -fno-pie -no-pie
        -nostdlib -nostartfiles -Wl,--build-id=none -I"$RT/isa/macros/scalar")

# The tests a suite's Makefrag lists (its <suite>_sc_tests).
tests_of() {
    sed -n "/^$1_sc_tests *=/,/^\$/p" "$RT/isa/$1/Makefrag" |
        sed 's/.*=//; s/\\//g' | tr -s ' \t\n' '\n' | grep -v '^$'
}

build() {   # env suite test -> path of the ELF, or nothing
    local env=$1 suite=$2 t=$3 elf="$OUT/$suite-$1-$3" src=$RT/isa/$2/$3.S
    if [[ ! -x $elf || $src -nt $elf || ${BASH_SOURCE[0]} -nt $elf ]]; then   # the flags are here
        local -a extra=(-T"$RT/env/p/link.ld" -I"$RT/env/p")   # env/v/link.ld is a symlink to it
        if [[ $env == v ]]; then
            extra=(-T"$RT/env/p/link.ld" -I"$RT/env/v" -std=gnu99 -O2
                   -DENTROPY=0x$(echo "$suite-$t" | md5sum | cut -c 1-7)
                   "$RT/env/v/entry.S" "$RT/env/v/vm.c" "$RT/env/v/string.c")
        fi
        "$CC" "${CFLAGS[@]}" "${extra[@]}" -o "$elf" "$src" >"$elf.cc.log" 2>&1 || return 1
    fi
    echo "$elf"
}

pass=0 failed=()
for suite in "${SUITES[@]}"; do
    envs=(p v)
    [[ $suite == rv64si || $suite == rv64mi ]] && envs=(p)
    for env in "${envs[@]}"; do
        for t in $(tests_of "$suite"); do
            name=$suite-$env-$t
            if ! elf=$(build "$env" "$suite" "$t"); then
                failed+=("$name (build: $(head -n 1 "$OUT/$name.cc.log"))")
                continue
            fi
            timeout 60 "$SYS" -bios none -kernel "$elf" </dev/null >"$OUT/$name.out" 2>&1
            rc=$?
            if ((rc == 0)); then
                pass=$((pass + 1))
            else
                failed+=("$name (exit $rc: test $((rc)) failed or timeout 124)")
            fi
        done
    done
done
echo "riscv-tests: $pass passed, ${#failed[@]} failed"
for f in "${failed[@]}"; do
    echo "  FAIL $f"
done
((${#failed[@]} == 0))
