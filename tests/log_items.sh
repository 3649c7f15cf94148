#!/usr/bin/env bash
# Each -d log item produces what it says, with the JIT (the default) and,
# where the item is the interpreter's, with --interp; -D sends it to a file.
# Usage: tests/log_items.sh BUILD.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The counters compared below are a cold process's: no persistent cache
# (but for the cache item's own runs).
export XLAT_CACHE=0

cat > "$TMP/t.c" <<'C'
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((noinline)) long loop(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ (s >> 3); return s; }
int main(void)
{
    void *p = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    syscall(999);
    long s = loop(100000);              /* TRIPS below */
    write(1, "hi\n", 3);
    return p != MAP_FAILED && s ? 0 : 2;
}
C
riscv64-linux-gnu-gcc -static -O1 -o "$TMP/t" "$TMP/t.c" || exit 1
main_addr=$(riscv64-linux-gnu-nm "$TMP/t" | awk '$3 == "main" { sub(/^0+/, "", $1); print $1 }')

fail=0
run() {   # label expected-regex (- for none) xlat-args...
    local label=$1 re=$2; shift 2
    "$XLAT" "$@" "$TMP/t" > "$TMP/out" 2> "$TMP/err"
    local rc=$?
    if [[ $rc != 0 || $(cat "$TMP/out") != hi ]]; then
        echo "log_items: $label: program failed (rc $rc)"; fail=1; return
    fi
    [[ $re = - ]] || grep -Eq "$re" "$TMP/err" || { echo "log_items: $label: no stderr line matching '$re'"; head -5 "$TMP/err"; fail=1; }
}
stat() { sed -n "s/^xlat stats: $1 *\([0-9]*\).*/\1/p" "$TMP/err"; }
# stats time: its parts read; EXPR (awk, over total start code first
# installs translating rest) holds, and the parts add up to no more than
# the whole.
check_times() {
    local label=$1 expr=$2 t
    t=$(sed -n 's/^xlat stats: time *\([0-9.]*\) ms since xlat started: its start \([0-9.]*\), translated code \([0-9.]*\), first runs \([0-9.]*\), installs \([0-9.]*\), translating \([0-9.]*\), the rest \([0-9.]*\) .*/\1 \2 \3 \4 \5 \6 \7/p' "$TMP/err")
    awk -v t="$t" "BEGIN { n = split(t, v, \" \"); total = v[1]; start = v[2]; code = v[3];
                          first = v[4]; installs = v[5]; translating = v[6]; rest = v[7];
                          exit !(n == 7 && ($expr) &&
                                 start + code + first + installs + translating <= total + 0.002) }" ||
        { echo "log_items: $label: time line '$t' (total start code first installs translating rest), want $expr"; fail=1; }
}

# in_asm: objdump-style lines (address, encoding, mnemonic) of main.
run in_asm "^ +$main_addr:[[:space:]]+[0-9a-f]{4,8}[[:space:]]+[a-z]" -d in_asm
run in_asm/interp "^ +$main_addr:[[:space:]]+[0-9a-f]{4,8}[[:space:]]+[a-z]" --interp -d in_asm
# out_asm: the host code of each translated block, disassembled (capstone).
run out_asm '^OUT: .*guest 0x' -d out_asm
grep -Eq '^ +0x[0-9a-f]+: +([0-9a-f]{2} )+ +(mov|jmp|cmp) ' "$TMP/err" ||
    { echo "log_items: out_asm: no disassembled host code"; fail=1; }
# exec: block (JIT) or instruction (interpreter) entries, main's among them.
run exec "^Trace: \[0x[0-9a-f]+\] 0*$main_addr\$" -d exec
run exec/interp "^exec pc 0x$main_addr\$" --interp -d exec
# unimp: the unknown syscall 999.
run unimp '^xlat: unimplemented syscall 999' -d unimp
# page: the program's anonymous mmap.
run page '^page: map 0x[0-9a-f]+-0x[0-9a-f]+ rw- ' -d page
# strace, as an item and as an option.
run strace '^[0-9]+ mmap\(NULL,8192,PROT_READ\|PROT_WRITE,MAP_PRIVATE\|MAP_ANONYMOUS,-1,0\) = 0x' -d strace
run -strace '^[0-9]+ write\(1,0x[0-9a-f]+,3\) = 3' -strace
# stats: the counters, and nochain zeroes the chain counter.
run stats '^xlat stats: jump cache hit rate +[0-9.]+%' -d stats
for c in 'blocks translated' 'code cache flushes' 'chains made' 'chains unmade' 'direct exits' 'indirect exits'; do
    [[ -n $(stat "$c") ]] || { echo "log_items: stats: no '$c' counter"; fail=1; }
done
[[ $(stat 'blocks translated') -gt 50 ]] || { echo "log_items: stats: too few blocks"; fail=1; }
chained=$(stat 'chains made')
[[ $chained -gt 0 ]] || { echo "log_items: stats: nothing chained by default"; fail=1; }
# stats block profile: loop()'s body (srai, xor, add, addi, bne) is at least
# 5 instructions and one block entry per trip, nearly all of them chained.
TRIPS=100000
execs=$(stat 'blocks executed') insns=$(stat 'insns executed (JIT)')
ind=$(sed -n 's/^xlat stats: block exits indirect .*(\([0-9]*\)).*/\1/p' "$TMP/err")
[[ -n $execs && -n $insns && -n $ind ]] || { echo "log_items: stats: no block profile"; fail=1; }
[[ ${execs:-0} -ge $TRIPS && ${execs:-0} -lt $((3 * TRIPS)) ]] ||
    { echo "log_items: stats: blocks executed $execs, want ~$TRIPS (one per loop trip)"; fail=1; }
[[ ${insns:-0} -ge $((5 * TRIPS)) && ${insns:-0} -lt $((10 * TRIPS)) ]] ||
    { echo "log_items: stats: insns executed $insns, want >= $((5 * TRIPS))"; fail=1; }
[[ ${ind:-0} -gt 0 ]] || { echo "log_items: stats: no indirect exits (returns)"; fail=1; }
grep -Eq '^xlat stats: insns per block +[0-9]+\.[0-9]{2}$' "$TMP/err" || { echo "log_items: stats: no insns per block"; fail=1; }
# first-interp: blocks that run once are interpreted, and none with it off.
[[ $(stat 'first runs interpreted') -gt 20 ]] ||
    { echo "log_items: stats: first runs interpreted '$(stat 'first runs interpreted')', want > 20"; fail=1; }
runs_insns=$(sed -n 's/^xlat stats: first runs interpreted \([0-9]*\) (\([0-9]*\) instructions)$/\1 \2/p' "$TMP/err")
read -r runs insns_first <<<"$runs_insns"
[[ -n $runs && ${insns_first:-0} -ge $runs ]] ||
    { echo "log_items: stats: first runs '$runs_insns', want at least an instruction each"; fail=1; }
check_times stats 'start > 0 && code > 0 && first > 0 && translating > 0 && installs == 0'
run no-first-interp '^xlat stats: first runs interpreted +0 \(0 instructions\)$' -d stats --tune no-first-interp
run nochain '^xlat stats: chains made +0$' -d nochain,stats
[[ $(stat 'direct exits') -gt $chained ]] || { echo "log_items: nochain: direct exits did not grow"; fail=1; }
# Chained or not, the same blocks run: chained entries are counted.
[[ $(stat 'blocks executed') = "$execs" ]] ||
    { echo "log_items: stats: blocks executed $(stat 'blocks executed') unchained, $execs chained"; fail=1; }
# -D: the log goes to the file, not stderr; QEMU_LOG / XLAT_LOG select items.
run -D - -d unimp,page -D "$TMP/log"
grep -q 'unimplemented syscall 999' "$TMP/log" || { echo "log_items: -D: file lacks the log"; fail=1; }
grep -q 'unimplemented' "$TMP/err" && { echo "log_items: -D: log also on stderr"; fail=1; }
QEMU_LOG=unimp run QEMU_LOG '^xlat: unimplemented syscall 999'
XLAT_LOG=page QEMU_LOG_FILENAME="$TMP/log2" run XLAT_LOG+QEMU_LOG_FILENAME -
grep -q '^page: map' "$TMP/log2" || { echo "log_items: QEMU_LOG_FILENAME: no page log in file"; fail=1; }
# cache: the program's cache file is missing, then read, with its translations.
XLAT_CACHE=1 XLAT_CACHE_DIR=$TMP/cache run cache-cold 'cache: .*/t: no cache file' -d cache
XLAT_CACHE=1 XLAT_CACHE_DIR=$TMP/cache run cache-warm 'cache: .*/t: [1-9][0-9]* translations' -d cache
# stats time of a warm start: the blocks come from the cache, and their installs took some.
XLAT_CACHE=1 XLAT_CACHE_DIR=$TMP/cache run cache-stats-cold - -d stats
XLAT_CACHE=1 XLAT_CACHE_DIR=$TMP/cache run cache-stats-warm - -d stats
[[ $(stat 'blocks from the cache') -gt 50 ]] || { echo "log_items: cache-stats-warm: $(stat 'blocks from the cache') from the cache"; fail=1; }
check_times cache-stats-warm 'installs > 0'
# -d help lists every item.
items=$("$XLAT" -d help | awk '{print $1}' | sort | tr '\n' ' ')
[[ $items = "cache exec in_asm nochain out_asm page stats strace unimp " ]] || { echo "log_items: -d help lists: $items"; fail=1; }
"$XLAT" -d bogus "$TMP/t" 2>/dev/null && { echo "log_items: unknown item accepted"; fail=1; }
[[ $fail = 0 ]] && echo "log_items: ok"
exit $fail
