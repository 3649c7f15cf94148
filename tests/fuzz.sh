#!/usr/bin/env bash
# The fuzzers (tests/fuzz/fuzz_*.c, libFuzzer): build each with clang
# (-fsanitize=fuzzer,address,undefined, xlat's sources compiled alongside
# into BUILD/fuzz/), replay its regression corpus tests/fuzz/corpus/NAME/
# (inputs that once crashed or hung xlat, as hex text files), then fuzz for
# FUZZ_SECONDS (default 15) each. Any crash, leak-free abort or hang
# (-timeout=10) fails, and libFuzzer's reproducer is kept in BUILD/fuzz/.
#   tests/fuzz.sh BUILD              (make check: short run)
#   FUZZ_SECONDS=300 tests/fuzz.sh BUILD   (make fuzz)
# Skips (77) when clang with libFuzzer is not installed.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
OUT=$BUILD/fuzz
SECONDS_EACH=${FUZZ_SECONDS:-15}
CLANG=${CLANG:-clang}
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
CFLAGS=(-std=gnu17 -O1 -g -I"$REPO/src" -fno-omit-frame-pointer)
if [[ -n ${XLAT_SAN_SUITE:-} ]]; then
    echo "the fuzzers are sanitizer builds already (run by the plain suite)"
    exit 77
fi
mkdir -p "$OUT/obj"
# xlat handles SIGSEGV itself (guest faults, the JIT's write protection);
# neither ASan nor libFuzzer may take it over (with libFuzzer's default
# -handle_segv=1, SIGSEGV was left blocked after the first guest fault and
# the next one killed the fuzzer silently: -handle_segv=0 below).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:handle_segv=0:handle_sigbus=0:allow_user_segv_handler=1}

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
    "$CLANG" -x c -fsanitize=fuzzer -o "$OUT/probe" - >/dev/null 2>&1; then
    echo "clang with libFuzzer is not available"
    exit 77
fi

# xlat's sources (all but the two mains), instrumented for coverage and
# checked: a fuzz_system_* target links the core and system mode, the others
# the core and user mode (as the Makefile's unit tests do).
core_objs=() user_objs=() system_objs=()
for src in $(cd "$REPO" && find src -name '*.c' ! -path src/user/main.c ! -path src/system/main.c | sort); do
    obj=$OUT/obj/$(echo "$src" | tr / _).o
    if [[ ! -e $obj || $REPO/$src -nt $obj || -n $(find "$REPO/src" -name '*.h' -newer "$obj" | head -n 1) ]]; then
        "$CLANG" "${CFLAGS[@]}" -fsanitize=fuzzer-no-link "${SAN[@]}" -c -o "$obj" "$REPO/$src" || exit 1
    fi
    case $src in
    src/user/*)   user_objs+=("$obj") ;;
    src/system/*) system_objs+=("$obj") ;;
    *)            core_objs+=("$obj") ;;
    esac
done

# fuzz_syscall and fuzz_path work in fresh directories under TMPDIR: keep those here.
export TMPDIR=$OUT/tmp
rm -rf "$TMPDIR"; mkdir -p "$TMPDIR"
# Link with the libraries xlat itself links with (the Makefile's LDLIBS).
read -r -a LIBS <<<"$(cd "$REPO" && make -s --no-print-directory \
    --eval='xlat-print-ldlibs: ; @echo $(LDLIBS)' xlat-print-ldlibs 2>/dev/null)"
[[ ${#LIBS[@]} -gt 0 ]] || LIBS=(-lm -lpthread)
fail=0
# The smallest program, for the seeds of fuzz_elf and fuzz_pcache.
printf 'void _start(void){for(;;);}\n' >"$OUT/seed.c"
for src in "$REPO"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    bin=$OUT/$name
    if [[ $name == fuzz_system_* ]]; then
        objs=("${core_objs[@]}" "${system_objs[@]}") extra=(-lfdt -lslirp)
    else
        objs=("${core_objs[@]}" "${user_objs[@]}") extra=()
    fi
    "$CLANG" "${CFLAGS[@]}" -fsanitize=fuzzer "${SAN[@]}" -o "$bin" "$src" "${objs[@]}" "${extra[@]}" "${LIBS[@]}" ||
        { echo "FAIL $name: build"; fail=1; continue; }
    corpus=$OUT/corpus-${name#fuzz_}
    regress=$REPO/tests/fuzz/corpus/${name#fuzz_}
    mkdir -p "$corpus"
    if [[ $name == fuzz_elf ]] && command -v riscv64-linux-gnu-gcc >/dev/null; then
        # Seeds: small real riscv64 ELFs (static, static-pie, dynamic).
        riscv64-linux-gnu-gcc -nostdlib -static -Os -o "$corpus/seed-static" "$OUT/seed.c" 2>/dev/null
        riscv64-linux-gnu-gcc -nostdlib -static-pie -fPIE -Os -o "$corpus/seed-pie" "$OUT/seed.c" 2>/dev/null
        riscv64-linux-gnu-gcc -nostdlib -fPIE -Os -o "$corpus/seed-dyn" "$OUT/seed.c" 2>/dev/null
    fi
    if [[ $name == fuzz_pcache && -x $BUILD/xlat ]] && command -v riscv64-linux-gnu-gcc >/dev/null; then
        # Seeds: the cache files of a small program's cold and warm runs.
        printf 'int main(void){long s=0;for(long i=0;i<100000;i++)s+=i%%7;return s==3;}\n' >"$OUT/seed-prog.c"
        riscv64-linux-gnu-gcc -static -O1 -o "$OUT/seed-prog" "$OUT/seed-prog.c" 2>/dev/null &&
            for run in cold warm; do
                XLAT_CACHE_DIR=$OUT/pcache-seed "$BUILD/xlat" "$OUT/seed-prog" 2>/dev/null
            done
        cp "$OUT"/pcache-seed/*.xc "$corpus/" 2>/dev/null
        # and ELF files with a build id, whose identity it also reads.
        riscv64-linux-gnu-gcc -nostdlib -static -Os -Wl,--build-id -o "$corpus/seed-elf" "$OUT/seed.c" 2>/dev/null
        riscv64-linux-gnu-gcc -nostdlib -shared -fPIC -Os -Wl,--build-id -o "$corpus/seed-so" "$OUT/seed.c" 2>/dev/null
    fi
    if [[ $name == fuzz_path ]]; then
        # Seeds: the spellings tests/trust/root_escape.c tries.
        i=0
        for seed in '/../../a/file' 'up/a/b/outside' '/proc/self/root/a' 'abs/b/toroot/rel/c/..' \
                    'proc_cwd/../a' '/mnt/deep/bound/../../../a' 'loop1' '/dev/fd/0' 'host'; do
            printf '\001%s' "$seed" >"$corpus/seed-$((i++))"
        done
    fi
    # The regression inputs are hex text (reviewable, small): decode them.
    rm -rf "$OUT/regress-$name"; mkdir -p "$OUT/regress-$name"
    for hex in "$regress"/*.hex; do
        [[ -e $hex ]] || continue
        xxd -r -p "$hex" >"$OUT/regress-$name/$(basename "$hex" .hex)"
    done
    if compgen -G "$OUT/regress-$name/*" >/dev/null; then
        if ! (cd "$OUT" && "$bin" -timeout=10 -handle_segv=0 -handle_bus=0 "$OUT/regress-$name"/* >"$OUT/$name.regress.log" 2>&1); then
            echo "FAIL $name: a regression input fails again"; tail -n 30 "$OUT/$name.regress.log"
            fail=1
            continue
        fi
    fi
    if (cd "$OUT" && "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -handle_segv=0 -handle_bus=0 -rss_limit_mb=4096 \
            -max_len=4096 -artifact_prefix="$OUT/$name-" "$corpus" "$OUT/regress-$name" \
            >"$OUT/$name.log" 2>&1); then
        echo "ok   $name: $(grep -o '#[0-9]*.*DONE.*' "$OUT/$name.log" | tail -n 1) ($SECONDS_EACH s)"
    else
        echo "FAIL $name: see $OUT/$name.log"; tail -n 40 "$OUT/$name.log"
        fail=1
    fi
done
rm -rf "$TMPDIR"
exit $fail
