#!/usr/bin/env bash
# Every documented command-line option and its environment alias does what
# -h says: -L -E -U -0 -s -cpu -g -version -h --interp -B/-R (refused), and
# QEMU_* / XLAT_* (-d/-D/-strace are in log_items.sh, -g's protocol in
# gdb_batch.sh, -perfmap/-jitdump in perfmap.sh).
# Usage: tests/options.sh BUILD.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'kill $GPID 2>/dev/null; rm -rf "$TMP"' EXIT
GPID=
fail=0
bad() { echo "options: $*"; fail=1; }

cat > "$TMP/t.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>
struct hw { long key; unsigned long value; };
int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "stack")) {    /* 24 MiB of stack */
        volatile char *p = __builtin_alloca(24 << 20);
        for (long i = 0; i < (24 << 20); i += 4096) p[i] = 1;
        puts("stack ok");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "path")) {     /* -L: absolute paths under the prefix */
        FILE *f = fopen("/xlat-options-probe", "r");
        char line[64] = "none";
        if (f) fgets(line, sizeof line, f);
        printf("probe=%s\n", line);
        return 0;
    }
    struct hw h = { 4, 0 };                          /* RISCV_HWPROBE_KEY_IMA_EXT_0 */
    long rc = syscall(258, &h, 1, 0, 0, 0);
    char line[256] = "", *isa = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "isa", 3)) { isa = strchr(line, ':') + 2; isa[strcspn(isa, "\n")] = 0; break; }
    printf("argv0=%s FOO=%s BAR=%s hwcap=%lx hwprobe=%ld:%lx isa=%s\n", argv[0],
           getenv("FOO") ? getenv("FOO") : "-", getenv("BAR") ? getenv("BAR") : "-",
           getauxval(AT_HWCAP), rc, h.value, isa);
    return 0;
}
C
riscv64-linux-gnu-gcc -static -O1 -o "$TMP/t" "$TMP/t.c" || exit 1

# Instructions of one extension each, without libc (static glibc itself
# uses C and D): exit status = the result, or death by SIGILL (132).
asm_prog() {   # name body
    printf '.option arch, +c\n.globl _start\n_start:\n%s\n  li a7, 93\n  ecall\n' "$2" > "$TMP/$1.S"
    riscv64-linux-gnu-gcc -nostdlib -static -march=rv64gc_zba_zbb_zbs -o "$TMP/$1" "$TMP/$1.S" || exit 1
}
asm_prog mul '.option norvc
  li a1, 6
  li a2, 7
  mul a0, a1, a2'
asm_prog cpop '.option norvc
  li a1, 0xff
  cpop a0, a1'
asm_prog comp '.option rvc
  c.li a0, 5'
asm_prog fp '.option norvc
  li a1, 3
  fcvt.d.l fa0, a1
  fadd.d fa0, fa0, fa0
  fcvt.l.d a0, fa0'
xrc() { "$XLAT" "$@" >/dev/null 2>&1; echo $?; }
for engine in "" --interp; do
    e=${engine:-jit}
    [[ $(xrc $engine "$TMP/mul") = 42 ]] || bad "$e: mul under max"
    [[ $(xrc $engine -cpu rv64g "$TMP/mul") = 42 ]] || bad "$e: mul under rv64g"
    [[ $(xrc $engine -cpu rv64ia "$TMP/mul") = 132 ]] || bad "$e: mul not SIGILL under rv64ia"
    [[ $(xrc $engine -cpu rv64gc_zbb "$TMP/cpop") = 8 ]] || bad "$e: cpop under zbb"
    [[ $(xrc $engine -cpu rv64gc_zba "$TMP/cpop") = 132 ]] || bad "$e: cpop not SIGILL without zbb"
    [[ $(xrc $engine -cpu rv64gc "$TMP/comp") = 5 ]] || bad "$e: c.li under rv64gc"
    [[ $(xrc $engine -cpu rv64g "$TMP/comp") = 132 ]] || bad "$e: c.li not SIGILL without C"
    [[ $(xrc $engine -cpu rv64imafd "$TMP/fp") = 6 ]] || bad "$e: fp under rv64imafd"
    [[ $(xrc $engine -cpu rv64imac "$TMP/fp") = 132 ]] || bad "$e: fp not SIGILL without F/D"
done
[[ $(QEMU_CPU=rv64ia xrc "$TMP/mul") = 132 ]] || bad "QEMU_CPU not honoured"
[[ $(XLAT_CPU=rv64ia xrc "$TMP/mul") = 132 ]] || bad "XLAT_CPU not honoured"
"$XLAT" -cpu rv64q "$TMP/mul" 2>/dev/null && bad "-cpu rv64q accepted"
"$XLAT" -cpu help | grep -q rv64gc || bad "-cpu help"

# What the guest is told: AT_HWCAP, riscv_hwprobe, /proc/cpuinfo.
out=$("$XLAT" "$TMP/t")
[[ $out == *"hwcap=112d hwprobe=0:3b isa=rv64imafdc_zicsr_zifencei_zba_zbb_zbs" ]] || bad "default ISA report: $out"
out=$("$XLAT" -cpu rv64gc "$TMP/t")
[[ $out == *"hwcap=112d hwprobe=0:3 isa=rv64imafdc_zicsr_zifencei" ]] || bad "rv64gc ISA report: $out"
out=$("$XLAT" -cpu rv64gc_zba_zbs --interp "$TMP/t")
[[ $out == *"hwprobe=0:2b isa=rv64imafdc_zicsr_zifencei_zba_zbs" ]] || bad "zba_zbs ISA report: $out"

# -E -U -0 and their environment aliases.
out=$(BAR=gone "$XLAT" -E FOO=one -U BAR -0 myname "$TMP/t")
[[ $out == "argv0=myname FOO=one BAR=- "* ]] || bad "-E/-U/-0: $out"
out=$(BAR=gone QEMU_SET_ENV=FOO=two,X=1 QEMU_UNSET_ENV=BAR QEMU_ARGV0=envname "$XLAT" "$TMP/t")
[[ $out == "argv0=envname FOO=two BAR=- "* ]] || bad "QEMU_SET_ENV/UNSET_ENV/ARGV0: $out"
out=$(XLAT_SET_ENV=FOO=three "$XLAT" "$TMP/t")
[[ $out == "argv0=$TMP/t FOO=three "* ]] || bad "XLAT_SET_ENV: $out"

# -s / QEMU_STACK_SIZE: 24 MiB of stack needs more than the default 8 MiB.
[[ $(xrc "$TMP/t" stack) != 0 ]] || bad "24 MiB stack fit in the default"
[[ $(xrc -s 64M "$TMP/t" stack) = 0 ]] || bad "-s 64M"
[[ $(QEMU_STACK_SIZE=64M xrc "$TMP/t" stack) = 0 ]] || bad "QEMU_STACK_SIZE"
"$XLAT" -s 1 "$TMP/t" 2>/dev/null && bad "-s 1 accepted"

# -L / QEMU_LD_PREFIX.
mkdir -p "$TMP/root"
echo inroot > "$TMP/root/xlat-options-probe"
[[ $("$XLAT" -L "$TMP/root" "$TMP/t" path) = probe=inroot ]] || bad "-L"
[[ $(QEMU_LD_PREFIX="$TMP/root" "$XLAT" "$TMP/t" path) = probe=inroot ]] || bad "QEMU_LD_PREFIX"
[[ $("$XLAT" "$TMP/t" path) = probe=none ]] || bad "no -L found the probe"

# -strace / QEMU_STRACE.
QEMU_STRACE=1 "$XLAT" "$TMP/t" 2>&1 >/dev/null | grep -q ' exit_group(0)' || bad "QEMU_STRACE"

# -version, -h, -B/-R, unknown options.
"$XLAT" -version | grep -Eq '^xlat version [0-9]' || bad "-version"
help=$("$XLAT" -h)
for o in -L -E -U -0 -s -d -D -strace -cpu -g -perfmap -jitdump -B -R --interp -version; do
    grep -q -- "^  $o\\b\\|, $o\\b\\|^  $o " <<< "$help" || bad "-h does not document $o"
done
"$XLAT" -B 0x1000 "$TMP/t" 2>&1 | grep -q 'not supported' || bad "-B not refused clearly"
"$XLAT" -R 1G "$TMP/t" 2>&1 | grep -q 'not supported' || bad "-R not refused clearly"
"$XLAT" -nosuch "$TMP/t" 2>/dev/null && bad "unknown option accepted"

# -g / QEMU_GDB: waits for gdb before the first instruction.
port=$(( 20000 + RANDOM % 40000 ))
QEMU_GDB=$port "$XLAT" "$TMP/t" > "$TMP/gout" 2> "$TMP/gerr" & GPID=$!
sleep 1
grep -q "waiting for gdb on port $port" "$TMP/gerr" || bad "QEMU_GDB: no wait message"
[[ -s $TMP/gout ]] && bad "QEMU_GDB: program ran before gdb attached"
kill $GPID 2>/dev/null; wait $GPID 2>/dev/null; GPID=
"$XLAT" -g nonsense "$TMP/t" 2>/dev/null && bad "-g nonsense accepted"

[[ $fail = 0 ]] && echo "options: ok"
exit $fail
