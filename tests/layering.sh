#!/usr/bin/env bash
# The layout's rules (README "Layout"), checked on the sources and on the
# objects of BUILD:
#   1. only src/user/ includes src/user/ headers, only src/system/
#      src/system/ headers;
#   2. no core object (src/riscv, src/exec, src/x86) needs a symbol that only
#      a mode's objects define (user or system): the core links without them;
#   3. the JIT core and the backend reach the guest ISA only through its
#      interface headers (riscv/cpu.h, interp.h, translate.h, insn.h);
#   4. every source file stays under 1,000 lines.
# Usage: tests/layering.sh BUILD.
set -u
BUILD=${1:-build}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
fail=0

for mode in user system; do
    bad=$(grep -rln "#include \"$mode/" src --include='*.[ch]' | grep -v "^src/$mode/")
    if [[ -n $bad ]]; then
        echo "FAIL: $mode-mode headers included outside src/$mode/:"
        echo "$bad"
        fail=1
    fi
done

core_objs=$(find "$BUILD/src/riscv" "$BUILD/src/exec" "$BUILD/src/x86" -name '*.o' 2>/dev/null)
user_objs=$(find "$BUILD/src/user" "$BUILD/src/system" -name '*.o' 2>/dev/null)
if [[ -z $core_objs || -z $user_objs ]]; then
    echo "FAIL: no objects under $BUILD/src (build first)"
    exit 1
fi
# shellcheck disable=SC2086
need=$(nm -u $core_objs | awk 'NF == 2 { print $2 }' | sort -u)
# shellcheck disable=SC2086
core_def=$(nm --defined-only $core_objs | awk 'NF == 3 { print $3 }' | sort -u)
# shellcheck disable=SC2086
user_def=$(nm --defined-only $user_objs | awk 'NF == 3 { print $3 }' | sort -u)
leak=$(comm -12 <(echo "$need") <(comm -23 <(echo "$user_def") <(echo "$core_def")))
if [[ -n $leak ]]; then
    echo "FAIL: core objects use symbols only a mode defines:"
    for s in $leak; do
        # shellcheck disable=SC2086
        echo "  $s: $(for o in $core_objs; do nm -u "$o" | grep -qw "$s" && echo -n "${o#"$BUILD"/} "; done)"
    done
    fail=1
fi

isa=$(grep -rhoE '#include "riscv/[a-z_]+\.h"' src/exec src/x86 | sort -u |
      grep -vE '"riscv/(cpu|interp|translate|insn)\.h"')
if [[ -n $isa ]]; then
    echo "FAIL: src/exec or src/x86 reaches into the ISA beyond its interface:"
    echo "$isa"
    fail=1
fi

long=$(find src -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 1000')
if [[ -n $long ]]; then
    echo "FAIL: files over 1,000 lines:"
    echo "$long"
    fail=1
fi

((fail == 0)) && echo "layering: ok ($(echo "$core_objs" | wc -l) core objects, $(echo "$user_objs" | wc -l) user and system objects)"
exit $fail
