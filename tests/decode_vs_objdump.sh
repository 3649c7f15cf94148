#!/bin/sh
# Differential test of our decoder + disassembler against GNU objdump.
#
# Usage: tests/decode_vs_objdump.sh [BUILD_DIR] [SEED] [N]
#
# tests/tools/disasm_tool (built here from decode.c + disasm.c) generates
# instructions: N random variants of every table entry, every compressed
# halfword, and random 32-bit words. They are assembled as .word/.half data
# into one object (-march=rv64gc_zba_zbb_zbs, so objdump decodes Zb*; local
# mapping symbols stripped so objdump treats the data as code), disassembled
# by riscv64-linux-gnu-objdump and by our tool, and compared line by line.
#
# Then all of .text of a small static program (glibc + libm) is compared the
# same way, with no exceptions allowed.
#
# Lines must be identical, except for these known, intended differences:
#   - objdump prints an FP op with a reserved static rounding mode (101/110)
#     with an "unknown" operand; our decoder rejects it (illegal instruction,
#     as on hardware and QEMU) and prints ".4byte".
#   - encodings objdump refuses (".4byte"/".2byte") that the ISA defines and
#     QEMU executes: fence and fence.i with non-zero fm/rd/rs1/imm (reserved
#     fields, executed as a plain fence / fence.i); fcvt.d.s/d.w/d.wu with a rounding mode other than
#     rne. We decode and print them.
#   - privileged instructions we do not implement (hypervisor loads and
#     fences, Svinval, dret): illegal for us. (mret, sret, wfi and
#     sfence.vma are in the table and must match.)
#   - c.addi16sp with a zero immediate: reserved (QEMU rejects it too), but
#     objdump prints "add sp,sp,0".
# Each such line is counted and the counts printed. Exit 0 only if there is
# no other difference.
set -eu

BUILD=${1:-build}
SEED=${2:-1}
N=${3:-300}
CROSS=${CROSS:-riscv64-linux-gnu-}
SRC=$(cd "$(dirname "$0")/.." && pwd)

for tool in "${CROSS}as" "${CROSS}objdump" "${CROSS}strip"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "decode_vs_objdump: SKIP: $tool not installed"
        exit 77
    fi
done

mkdir -p "$BUILD/tests/tools"
TOOL=$BUILD/tests/tools/disasm_tool
${CC:-cc} -std=gnu17 -O2 -Wall -Wextra -Werror -I"$SRC/src" -o "$TOOL" \
    "$SRC/tests/tools/disasm_tool.c" "$SRC/src/riscv/decode.c" "$SRC/src/riscv/isa.c" "$SRC/src/riscv/disasm.c" -lpthread

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$TOOL" gen "$SEED" "$N" > "$tmp/list"
awk 'BEGIN { print ".globl _start"; print "_start:" }
     $1 == "W" { print ".word 0x" $2 }
     $1 == "H" { print ".half 0x" $2 }' "$tmp/list" > "$tmp/t.S"
"${CROSS}as" -march=rv64gc_zba_zbb_zbs "$tmp/t.S" -o "$tmp/t.o"
"${CROSS}strip" -x "$tmp/t.o"

# objdump lines "   addr:\ttext" -> "addr:\ttext", without " <symbol+off>" and
# without the " # address" comments objdump derives from earlier lui/auipc.
"${CROSS}objdump" -d -z --no-show-raw-insn "$tmp/t.o" |
    awk '/^ *[0-9a-f]+:\t/ { sub(/^ +/, ""); sub(/ # .*$/, ""); sub(/ <[^>]*>$/, ""); print }' > "$tmp/objdump.txt"
"$TOOL" dis < "$tmp/list" > "$tmp/ours.txt"

n_obj=$(wc -l < "$tmp/objdump.txt")
n_ours=$(wc -l < "$tmp/ours.txt")
if [ "$n_obj" != "$n_ours" ]; then
    echo "decode_vs_objdump: FAIL: objdump printed $n_obj lines, we printed $n_ours"
    exit 1
fi

# Phase 2: a real program. All of .text of a static glibc+libm binary must
# disassemble exactly as objdump prints it (no exceptions).
check_real_program() {
    printf '#include <stdio.h>\n#include <math.h>\n#include <stdlib.h>\n%s\n' \
        'int main(int c, char **v) { printf("%f %ld\n", sin(c * 1.5), strtol(v[0], 0, 10)); return 0; }' \
        > "$tmp/prog.c"
    "${CROSS}gcc" -static -O2 -o "$tmp/prog" "$tmp/prog.c" -lm
    "${CROSS}objdump" -d -z --no-show-raw-insn -j .text "$tmp/prog" |
        awk '/^ *[0-9a-f]+:\t/ { sub(/^ +/, ""); sub(/ # .*$/, ""); sub(/ <[^>]*>$/, ""); print }' \
        > "$tmp/prog_objdump.txt"
    "${CROSS}objdump" -d -z -j .text "$tmp/prog" |
        awk -F'\t' '/^ *[0-9a-f]+:\t/ { gsub(/ /, "", $2); print (length($2) == 8 ? "W " : "H ") $2 }' \
        > "$tmp/prog_list"
    start=$(head -n 1 "$tmp/prog_objdump.txt" | cut -d: -f1)
    "$TOOL" dis "$start" < "$tmp/prog_list" > "$tmp/prog_ours.txt"
    if ! diff "$tmp/prog_objdump.txt" "$tmp/prog_ours.txt" > "$tmp/prog_diff"; then
        echo "decode_vs_objdump: FAIL: static program .text differs (objdump <, ours >):"
        head -n 40 "$tmp/prog_diff"
        return 1
    fi
    echo "decode_vs_objdump: static program: $(wc -l < "$tmp/prog_list") instructions identical"
}
if command -v "${CROSS}gcc" >/dev/null 2>&1; then
    check_real_program
else
    echo "decode_vs_objdump: ${CROSS}gcc not installed, real-program phase skipped"
fi

paste -d '\n' "$tmp/objdump.txt" "$tmp/ours.txt" | awk '
    function allowed_extra(t) {
        # Our text for encodings objdump calls unknown; see the header.
        if (t ~ /^fence(\.i|\.tso)?(\t|$)/) return "fence/fence.i reserved fields"
        if (t ~ /^fcvt\.d\.(s|w|wu)\t.*,(rtz|rdn|rup|rmm|dyn)$/) return "fcvt.d exact conversion rm"
        return ""
    }
    NR % 2 == 1 { theirs = $0; next }
    {
        ours = $0; total++
        if (ours == theirs) next
        split(theirs, a, "\t"); t = substr(theirs, length(a[1]) + 2)
        split(ours, b, "\t"); o = substr(ours, length(b[1]) + 2)
        why = ""
        if (t ~ /^\.[24]byte\t/ && o !~ /^\.[24]byte\t/) {
            why = allowed_extra(o)
            if (why != "") why = why ": " o
        } else if (o ~ /^\.4byte\t/ && t ~ /^f.*,unknown$/ && t !~ /^fence/) {
            why = "reserved rounding mode (we reject)"
        } else if (o ~ /^\.4byte\t/ && t ~ /^(uret|dret|sinval|sfence\.(w|inval)|hfence|hinval|hlv|hlvx|hsv)/) {
            why = "privileged instruction we do not implement (hypervisor, Svinval, debug)"
        } else if (o ~ /^\.2byte\t/ && t == "add\tsp,sp,0") {
            why = "c.addi16sp with imm 0 is reserved (we reject)"
        }
        if (why != "") {
            split(why, k, ": "); cat[k[1]]++
            if (!(k[1] in example)) example[k[1]] = theirs "  |  ours: " o
            next
        }
        bad++
        if (bad <= 30) printf "  objdump: %s\n  ours:    %s\n", theirs, ours
    }
    END {
        for (c in cat) printf "  allowed difference (%d): %s, e.g. %s\n", cat[c], c, example[c]
        printf "decode_vs_objdump: %d instructions compared, %d unexpected differences\n", total, bad
        exit bad != 0
    }'
