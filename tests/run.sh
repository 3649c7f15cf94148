#!/usr/bin/env bash
# The test runner behind `make check`:  tests/run.sh BUILD_DIR [FILTER...]
#
# Runs every test and ends with exactly one line `N passed, N failed`
# (`, N skipped` is added only when something was skipped). Exits nonzero if
# any test failed. With FILTER words, runs only the tests whose name contains
# one of them (e.g. `tests/run.sh build guest/`).
#
# Groups (one line per test: PASS/FAIL/SKIP group/name, details on failure):
#   unit/    every tests/unit/test_*.c, built by the Makefile into
#            BUILD/tests/unit/; passes on exit 0.
#   guest/   every tests/guest/*.c and *.S, cross-compiled here into
#            BUILD/guest/ and run under qemu-riscv64 and BUILD/xlat (with
#            the translation cache cold, warm, then warm with images);
#            passes when stdout and exit status are identical. Optional
#            lines near the top of a source:  `// xlat-cflags: FLAGS`
#            (extra compiler flags; -static-pie replaces -static) and
#            `// xlat-args: ARGS`.
#   script/  every tests/*.sh and tests/integration/*.sh (but this file and
#            lib.sh), run with BUILD_DIR as $1: exit 0 passes, 77 skips (its
#            last output line is the reason), anything else fails.
#
# $XLAT_FLAGS: extra options for xlat in guest tests (e.g. "--tune no-poison").
# Tests run ${XLAT_JOBS:-2} at a time; each prints its block in one piece.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/tests/lib.sh"

GUEST_CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
GUEST_CFLAGS=(-O2 -march=rv64gc_zba_zbb_zbs)
UNIT_TIMEOUT=${XLAT_UNIT_TIMEOUT:-300}
SCRIPT_TIMEOUT=${XLAT_SCRIPT_TIMEOUT:-900}

# ---- One test (run in a worker: `run.sh --job BUILD KIND:PATH`) ----------

# A directive such as `xlat-args:` from the first 10 lines of a source.
directive() {
    head -n 10 "$2" | sed -n "s/^[[:space:]]*\(\/\/\|#\|\/\*\)[[:space:]]*$1:[[:space:]]*\(.*\)$/\2/p" |
        sed 's/[[:space:]]*\*\/[[:space:]]*$//' | head -n 1
}

# Cross-compile a guest source into $elf when the source (or a shared header
# in tests/guest/) is newer. Prints compiler output on failure.
build_guest() {
    local src=$1 elf=$2 extra link=(-static)
    local -a flags
    extra=$(directive xlat-cflags "$src")
    read -r -a flags <<<"$extra"
    if [[ " $extra " == *" -static-pie "* ]]; then link=(); fi
    if [[ $src == *.S ]] && grep -qE '^[[:space:]]*_start[[:space:]]*:' "$src"; then
        link+=(-nostdlib)
    fi
    local stale=0 h
    [[ -x $elf && ! $src -nt $elf ]] || stale=1
    for h in "$REPO"/tests/guest/*.h; do
        [[ -e $h && $h -nt $elf ]] && stale=1
    done
    ((stale)) || return 0
    mkdir -p "$(dirname "$elf")"
    "$GUEST_CC" "${link[@]}" "${GUEST_CFLAGS[@]}" "${flags[@]}" -o "$elf.tmp" "$src" -lm \
        >"$elf.cc.log" 2>&1 && mv "$elf.tmp" "$elf"
}

job_unit() {                 # $1 = source tests/unit/test_X.c
    local name bin rc
    name=$(basename "$1" .c)
    bin=$BUILD/tests/unit/$name
    if [[ ! -x $bin ]]; then
        DETAIL="    not built: $bin (run make unit)"
        return 1
    fi
    XLAT_TIMEOUT=$UNIT_TIMEOUT
    rc=$(cd "$BUILD/tests/unit" && run_capture "$WORK/out" "$bin" </dev/null)
    [[ $rc -eq 0 ]] && return 0
    DETAIL="    status: $(describe_status "$rc")
$(cat "$WORK/out" "$WORK/out.err" | head -n 20 | sed 's/^/      /')"
    return 1
}

job_guest() {                # $1 = source tests/guest/X.c or X.S
    local src=$REPO/$1 name elf args qrc xrc
    name=$(basename "$1"); name=${name%.*}
    elf=$BUILD/guest/$name
    if ! build_guest "$src" "$elf"; then
        DETAIL="    cross-compile failed:
$(head -n 20 "$elf.cc.log" | sed 's/^/      /')"
        return 1
    fi
    if [[ ! -x $BUILD/xlat ]]; then
        DETAIL="    $BUILD/xlat is not built"
        return 1
    fi
    local -a argv
    args=$(directive xlat-args "$src")
    read -r -a argv <<<"$args"
    # Each run starts in the same empty directory, so tests that create
    # files see identical surroundings under both runners.
    local cwd=$WORK/cwd
    rm -rf "$cwd"; mkdir -p "$cwd"
    qrc=$(cd "$cwd" && run_capture "$WORK/qemu" "$QEMU" "$elf" "${argv[@]}" </dev/null)
    rm -rf "$cwd"; mkdir -p "$cwd"
    local -a xflags
    read -r -a xflags <<<"${XLAT_FLAGS:-}"      # extra xlat options (tests/tune_matrix.sh)
    if qemu_failed "$qrc" "$WORK/qemu"; then
        DETAIL="    qemu-riscv64 itself failed: $(describe_status "$qrc")
$(head -n 10 "$WORK/qemu.err" | sed 's/^/      /')"
        return 1
    fi
    # With the default options, three times: with the persistent
    # translation cache cold (a directory of the test's own), then warm
    # (what the first run left: every block from the cache), then warm
    # with start images (a program's images come with its second run).
    local run runs=(cold) cache=$WORK/pcache
    [[ -z ${XLAT_FLAGS:-} ]] && runs+=(warm "warm, images")
    rm -rf "$cache"
    for run in "${runs[@]}"; do
        rm -rf "$cwd"; mkdir -p "$cwd"
        xrc=$(cd "$cwd" && XLAT_CACHE_DIR=$cache run_capture "$WORK/xlat" "$BUILD/xlat" "${xflags[@]}" "$elf" "${argv[@]}" </dev/null)
        if [[ $qrc -ne $xrc ]] || ! cmp -s "$WORK/qemu" "$WORK/xlat"; then
            DETAIL="    (xlat with the translation cache $run)
$(report_mismatch "$WORK/qemu" "$qrc" "$WORK/xlat" "$xrc")"
            return 1
        fi
    done
    return 0
}

job_script() {               # $1 = tests/X.sh or tests/integration/X.sh
    local rc
    XLAT_TIMEOUT=$SCRIPT_TIMEOUT     # for describe_status
    local -a cmd=("$REPO/$1")
    [[ -x $REPO/$1 ]] || cmd=(bash "$REPO/$1")
    # stdout and stderr together, in the order the script wrote them.
    rc=0
    (cd "$REPO" && timeout -k 5 "$SCRIPT_TIMEOUT" "${cmd[@]}" "$BUILD" </dev/null >"$WORK/out" 2>&1) || rc=$?
    [[ $rc -eq 0 ]] && return 0
    if [[ $rc -eq 77 ]]; then
        SKIPREASON=$(grep -v '^[[:space:]]*$' "$WORK/out" | tail -n 1)
        [[ -n $SKIPREASON ]] || SKIPREASON="(no reason given)"
        return 77
    fi
    DETAIL="    status: $(describe_status "$rc"); last 25 lines of output:
$(tail -n 25 "$WORK/out" | sed 's/^/      /')"
    return 1
}

# The name a job reports under: unit/test_X, guest/X, script/X,
# script/integration/X.
label_of() {
    local kind=${1%%:*} path=${1#*:} base
    base=$(basename "$path"); base=${base%.*}
    case $kind in
        unit) echo "unit/$base" ;;
        guest) echo "guest/$base" ;;
        *) path=${path#tests/}; echo "script/${path%.sh}" ;;
    esac
}

run_job() {
    local kind=${1%%:*} path=${1#*:} rc=0 t0 t1 verdict
    WORK=$(mktemp -d "$RESULTS/work.XXXXXX")
    TEST=$(label_of "$1") DETAIL= SKIPREASON=
    t0=$(date +%s.%N)
    "job_$kind" "$path" || rc=$?
    t1=$(date +%s.%N)
    case $rc in
        0) verdict=PASS ;;
        77) verdict=SKIP ;;
        *) verdict=FAIL ;;
    esac
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    {
        if [[ $verdict == SKIP ]]; then
            echo "SKIP $TEST: $SKIPREASON"
        else
            echo "$verdict $TEST (${secs}s)"
        fi
        [[ $verdict == FAIL && -n $DETAIL ]] && echo "$DETAIL"
    } >"$WORK/report"
    # One writer at a time, so parallel jobs never interleave their blocks.
    flock "$RESULTS/lock" cat "$WORK/report"
    echo "$verdict $TEST" >>"$RESULTS/verdicts"
    rm -rf "$WORK"
}

if [[ ${1:-} == --job ]]; then
    BUILD=$2 RESULTS=$3
    run_job "$4"
    exit 0
fi
if [[ ${1:-} == --build-guest ]]; then        # BUILD SRC: a failure shows in its guest test
    BUILD=$2
    name=$(basename "$3"); name=${name%.*}
    build_guest "$REPO/$3" "$BUILD/guest/$name" || true
    exit 0
fi

# ---- Main: list the tests, run them in parallel, count ------------------

BUILD=${1:-build}
shift || true
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
cd "$REPO"

jobs=()
for f in tests/unit/test_*.c; do [[ -e $f ]] && jobs+=("unit:$f"); done
for f in tests/guest/*.c tests/guest/*.S; do [[ -e $f ]] && jobs+=("guest:$f"); done
for f in tests/*.sh tests/integration/*.sh; do
    [[ -e $f ]] || continue
    case $f in tests/run.sh|tests/lib.sh) continue ;; esac
    jobs+=("script:$f")
done

if (($# > 0)); then
    kept=()
    for j in "${jobs[@]}"; do
        for pat in "$@"; do
            [[ $(label_of "$j") == *"$pat"* ]] && { kept+=("$j"); break; }
        done
    done
    jobs=("${kept[@]}")
fi

RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/xlat-tests.XXXXXX")
trap 'rm -rf "$RESULTS"' EXIT
: >"$RESULTS/verdicts"

# Slow jobs first (script tests, then guest tests), so the tail of the run
# is not one long test on one core.
ordered=()
for k in script guest unit; do
    for j in "${jobs[@]}"; do [[ $j == $k:* ]] && ordered+=("$j"); done
done

echo "xlat tests: ${#ordered[@]} tests, build dir $BUILD, ${XLAT_JOBS:-2} at a time"

# Cross-compile every guest program first: script tests such as
# tune_matrix.sh and jit_vs_interp.sh run the binaries in BUILD/guest, and
# they start before the guest tests that would otherwise build them.
if [[ " ${ordered[*]} " == *" script:"* || " ${ordered[*]} " == *" guest:"* ]]; then
    for f in tests/guest/*.c tests/guest/*.S; do [[ -e $f ]] && printf '%s\0' "$f"; done |
        xargs -0 -n 1 -P "${XLAT_JOBS:-2}" "$REPO/tests/run.sh" --build-guest "$BUILD"
fi
if ((${#ordered[@]} > 0)); then
    printf '%s\0' "${ordered[@]}" |
        xargs -0 -n 1 -P "${XLAT_JOBS:-2}" "$REPO/tests/run.sh" --job "$BUILD" "$RESULTS"
fi

passed=$(grep -c '^PASS ' "$RESULTS/verdicts")
failed=$(grep -c '^FAIL ' "$RESULTS/verdicts")
skipped=$(grep -c '^SKIP ' "$RESULTS/verdicts")
# A job that died without a verdict is a failure too.
lost=$((${#ordered[@]} - passed - failed - skipped))
failed=$((failed + lost))

if ((failed > 0)); then
    echo "failed:"
    grep '^FAIL ' "$RESULTS/verdicts" | sed 's/^FAIL /  /'
    ((lost > 0)) && echo "  ($lost test(s) ended without a verdict)"
fi
if ((skipped > 0)); then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
((failed == 0))
