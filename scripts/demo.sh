#!/usr/bin/env bash
# `make demo`: real Debian trixie riscv64 programs from the test rootfs
# (scripts/rootfs.sh, fetched once and cached) under BUILD/xlat and under
# qemu-riscv64, side by side: each step prints its command, its output,
# whether xlat's result equals the reference, and both wall times.
#
#   scripts/demo.sh [BUILD_DIR]      (DEMO_TIMEOUT=seconds per run, default 300;
#                                     in system mode, per step at the console)
#
# Steps: static busybox; the guest's own gcc-14 compiling and linking a C
# program (driver -> cc1 -> as -> collect2 -> ld, every step a guest
# execve) and the program run; a python3 script; a bash pipeline. qemu-user
# without binfmt_misc cannot follow a guest's execve of a riscv64 program,
# so for the gcc and bash steps qemu runs the same steps one by one
# (scripts/gcc-plan.sh for gcc; a host-shell pipeline of qemu processes
# for bash) and the table says so.
#
# Then system mode: Debian trixie's kernel and a busybox initramfs
# (scripts/system-guest.sh, fetched once and cached) booted under
# BUILD/xlat-system and under qemu-system-riscv64 -M virt with the same
# options and firmware (Debian's OpenSBI); a few commands run at the shell of
# each, their output is shown once, and a table gives the time to the prompt,
# of the commands and to poweroff. Without qemu-system-riscv64 its column is
# skipped.
#
# Exits nonzero if xlat is missing or any of its results differs from the
# reference: the table then says which, rather than showing a time for a
# wrong answer (and likewise if xlat-system fails to boot, run the commands
# and power off, or prints other output than QEMU).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${DEMO_TIMEOUT:-300}
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "demo: no build dir ${1:-build}" >&2; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "demo: $XLAT is not built" >&2; exit 1; }
QEMU_ABS=$(command -v "$QEMU") || { echo "demo: $QEMU not installed (make deps)" >&2; exit 1; }

echo "demo: the Debian trixie riscv64 rootfs (scripts/rootfs.sh; the first run downloads it)..."
ROOT=$("$REPO/scripts/rootfs.sh") || { echo "demo: could not build the rootfs (see above)" >&2; exit 1; }
BB=$ROOT/usr/bin/busybox

# ---- Inputs (generated once, cached) -------------------------------------

DATA=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xlat/demo
mkdir -p "$DATA"
if [[ ! -s $DATA/big.dat ]]; then
    echo "demo: generating inputs in $DATA ..."
    # 20 MiB of pseudo-random words and numbers from a fixed LCG.
    awk 'BEGIN {
        x = 2024; m = 4294967296
        for (i = 0; i < 200000; i++) {
            w = ""
            for (j = 0; j < 3 + i % 9; j++) {
                x = (x * 69069 + 1) % m
                w = w sprintf("%c", 97 + int(x / 65536) % 26)
            }
            x = (x * 69069 + 1) % m
            printf "%s %d\n", w, int(x / 4096) % 1000000
        }
    }' >"$DATA/words.tmp" && mv "$DATA/words.tmp" "$DATA/words.txt"
    for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$DATA/words.txt"; done 2>/dev/null |
        head -c $((20 << 20)) >"$DATA/big.tmp"
    mv "$DATA/big.tmp" "$DATA/big.dat"
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/xlat-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/x/tmp" "$OUT/q/tmp"
cat >"$OUT/x/primes.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sieve of Eratosthenes, then a checksum of the primes. */
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    char *composite = calloc(n + 1, 1);
    long count = 0;
    unsigned long sum = 0;
    for (long i = 2; i <= n; i++) {
        if (composite[i])
            continue;
        count++;
        sum = sum * 31 + i;
        for (long j = i * i; j <= n; j += i)
            composite[j] = 1;
    }
    printf("%ld primes up to %ld, checksum %lx\n", count, n, sum);
    free(composite);
    return 0;
}
EOF
cp "$OUT/x/primes.c" "$OUT/q/primes.c"
cat >"$DATA/demo.py" <<'EOF'
import hashlib, json, re, threading
# JSON round trips, regular expressions and hashing, on 4 threads.
records = [{"id": i, "name": "item%05d" % i, "tags": ["t%d" % (i % 7), "x" * (i % 5)],
            "price": round(i * 1.37 % 97, 2)} for i in range(20000)]
text = json.dumps(records, sort_keys=True)
back = json.loads(text)
assert back == records
names = re.findall(r'"name": "item(\d*7)"', text)
results = [None] * 4
def work(k):
    h = hashlib.sha256()
    for r in back[k::4]:
        h.update(json.dumps(r, sort_keys=True).encode())
    results[k] = h.hexdigest()[:12]
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(len(text), "bytes of JSON;", len(names), "names end in 7; digests", results)
EOF

# ---- Steps ---------------------------------------------------------------
# step LABEL SHOWN XLAT-SNIPPET QEMU-SNIPPET HOW: the snippets are host shell
# run in $OUT/x resp. $OUT/q, with $X = xlat confined to the rootfs (--root,
# with the demo's directories bound in) and $Q = qemu with -L ROOTFS, both
# in a clean environment; xlat names guest programs by their guest paths. HOW compares "out" (stdout and status) or "file NAME"
# (that file byte for byte, and both statuses 0).

ENV="env -i PATH=/usr/bin:/bin LC_ALL=C HOME=/nonexistent"
X="$ENV TMPDIR=$OUT/x/tmp $XLAT --root $ROOT --bind $OUT --bind $DATA"
Q="$ENV TMPDIR=$OUT/q/tmp $QEMU_ABS -L $ROOT"
GCCPLAN="$ENV TMPDIR=$OUT/q/tmp QEMU=$QEMU_ABS $REPO/scripts/gcc-plan.sh $ROOT"
SHLOOP='i=0; s=0; while [ $i -lt 100000 ]; do i=$((i + 1)); s=$(((s + i * 7) % 1000003)); done; echo $s'
PIPE='seq 1 1000000 | sort -rn | sha256sum'

run_steps() {
    step "busybox sha256sum, 20 MiB" "busybox sha256sum big.dat" \
        "\$X /usr/bin/busybox sha256sum $DATA/big.dat" "\$Q $BB sha256sum $DATA/big.dat" out
    step "busybox sh loop, 100k iter." "busybox sh -c '$SHLOOP'" \
        "\$X /usr/bin/busybox sh -c '$SHLOOP'" "\$Q $BB sh -c '$SHLOOP'" out
    step "gcc -O2 -c (cc1, as)*" "gcc-14 -O2 -c primes.c" \
        "\$X /usr/bin/gcc-14 -O2 -c primes.c" "\$GCCPLAN -O2 -c primes.c" "file primes.o"
    step "gcc -O2 -o (+ collect2, ld)*" "gcc-14 -O2 -o primes primes.c" \
        "\$X /usr/bin/gcc-14 -O2 -o primes primes.c" "\$GCCPLAN -O2 -o primes primes.c" "file primes"
    step "./primes 30000000" "./primes 30000000" \
        "\$X ./primes 30000000" "\$Q ../x/primes 30000000" out
    step "python3 json/re/threads" "python3 demo.py" \
        "\$X /usr/bin/python3 $DATA/demo.py" "\$Q $ROOT/usr/bin/python3 $DATA/demo.py" out
    step "bash pipeline*" "bash -c '$PIPE'" \
        "\$X /usr/bin/bash -c '$PIPE'" \
        "\$Q $ROOT/usr/bin/seq 1 1000000 | \$Q $ROOT/usr/bin/sort -rn | \$Q $ROOT/usr/bin/sha256sum" out
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Show a run's output: its first lines.
show_output() {
    if [[ ! -s $1 ]]; then
        echo "    (no output)"
    else
        head -n 3 "$1" | cut -c1-110 | sed 's/^/    /'
        (($(wc -l <"$1") > 3)) && echo "    ... ($(wc -l <"$1") lines)"
    fi
    return 0
}

# timed DIR OUTFILE SNIPPET: run SNIPPET in DIR; prints "STATUS SECONDS".
timed() {
    local t0 t1 rc
    t0=$(now)
    rc=$(cd "$1" && X=$X Q=$Q GCCPLAN=$GCCPLAN run_capture "$2" bash -c "$3" </dev/null)
    t1=$(now)
    echo "$rc $(secs "$t0" "$t1")"
}

echo "rootfs:  $ROOT"
echo "xlat:    $XLAT"
echo
rows=() bad=0
step() {
    local label=$1 shown=$2 xsnip=$3 qsnip=$4 how=$5 xrc xt qrc qt same=0 f ratio
    echo "\$ $shown"
    read -r xrc xt < <(timed "$OUT/x" "$OUT/x.out" "$xsnip")
    read -r qrc qt < <(timed "$OUT/q" "$OUT/q.out" "$qsnip")
    show_output "$OUT/x.out"
    if [[ $how == out ]]; then
        [[ $xrc -eq $qrc ]] && cmp -s "$OUT/x.out" "$OUT/q.out" && same=1
    else
        f=${how#file }
        [[ $xrc -eq 0 && $qrc -eq 0 && -s $OUT/q/$f ]] && cmp -s "$OUT/x/$f" "$OUT/q/$f" && same=1
        ((same)) && echo "    $f: $(file -b "$OUT/x/$f" | cut -d, -f1-2), identical to qemu's"
    fi
    if ((same)); then
        ratio=$(awk -v q="$qt" -v x="$xt" 'BEGIN {
            if (q <= 0 || x <= 0) print "-"
            else if (x > q) printf "%.1fx slower", x / q
            else printf "%.1fx faster", q / x }')
        rows+=("$label|${qt}s|${xt}s|$ratio")
    else
        bad=1
        echo "    xlat: DIFFERENT result from qemu's:"
        report_mismatch "$OUT/q.out" "$qrc" "$OUT/x.out" "$xrc" | sed 's/^/  /'
        head -n 5 "$OUT/q.out.err" | sed 's/^/      qemu stderr: /'
        rows+=("$label|${qt}s|WRONG (status $xrc)|")
    fi
    echo
}
run_steps

printf '%-30s %12s %12s %14s\n' "step" "qemu-riscv64" "xlat" "xlat vs qemu"
printf '%-30s %12s %12s %14s\n' "----" "------------" "----" "------------"
for r in "${rows[@]}"; do
    IFS='|' read -r label qt xt ratio <<<"$r"
    printf '%-30s %12s %12s %14s\n' "$label" "$qt" "$xt" "$ratio"
done
echo
echo "(wall times. * qemu-user cannot follow a guest's execve of a riscv64 program"
echo " without binfmt_misc: under xlat the guest's gcc and bash exec cc1, as, ld,"
echo " seq, sort ... themselves; for qemu those steps run one by one, each as its"
echo " own qemu-riscv64 process -- scripts/gcc-plan.sh for gcc.)"
# ---- System mode -----------------------------------------------------------
# Debian trixie's kernel with the busybox initramfs of scripts/system-guest.sh
# booted under BUILD/xlat-system and under qemu-system-riscv64 -M virt, with
# the same options and the same firmware (Debian's OpenSBI, the opensbi
# package's fw_dynamic.bin, given as -bios to both). In each, the commands of
# SYS_CMDS run at the shell on the serial console, one at a time (the next
# is typed when the prompt is back), then `poweroff -f`. tests/tools/console.py
# types them and notes when each prompt came back (--times). Each line of
# SYS_CMDS is CHECK|COMMAND: CHECK "same" means xlat-system's output must equal
# QEMU's; "cpu" means the output describes the emulated CPU, so QEMU's lines
# that differ are shown. One boot each: this is a demo, not a benchmark.

SYS=$BUILD/xlat-system
QSYS=qemu-system-riscv64
FW=/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
SYS_CMDS=(
    "same|uname -a"
    "cpu|cat /proc/cpuinfo | head"
    "same|seq 1 5000 | awk '{s+=\$1} END {print s}'"
    "same|md5sum /bin/busybox"
)

system_demo() {
    local guest kernel initrd version qsys_abs="" bios sd=$OUT/sys xrc qrc=- c
    echo
    echo "==== system mode: xlat-system and qemu-system-riscv64 boot Debian's kernel ===="
    [[ -x $SYS ]] || { echo "demo: $SYS is not built (it needs libfdt: make deps)"; return 1; }
    echo "demo: the guest kernel and initramfs (scripts/system-guest.sh; the first run downloads the kernel)..."
    guest=$("$REPO/scripts/system-guest.sh") || { echo "demo: scripts/system-guest.sh failed (see above)"; return 1; }
    kernel=$(sed -n 's/^KERNEL=//p' <<<"$guest")
    initrd=$(sed -n 's/^INITRD=//p' <<<"$guest")
    version=$(sed -n 's/^KERNEL_VERSION=//p' <<<"$guest")
    qsys_abs=$(command -v "$QSYS") ||
        echo "demo: $QSYS is not installed (qemu-system-misc; make deps): its column is skipped"
    if [[ -f $FW ]]; then
        bios=(-bios "$FW")
    else
        bios=()
        echo "demo: $FW is missing (the opensbi package; make deps): each runs its default firmware"
    fi
    local opts=(-M virt -nographic -m 512M -smp 1 "${bios[@]}" -kernel "$kernel" -initrd "$initrd"
                -append "console=ttyS0 quiet")
    mkdir -p "$sd"
    {
        echo 'expect xlat-initramfs: ready'
        echo 'expect ~ # '
        echo 'mark prompt'
        for c in "${SYS_CMDS[@]}"; do
            echo "send ${c#*|}"
            echo 'expect ~ # '
            echo 'mark command'
        done
        echo 'send poweroff -f'
        echo 'exit 0'
    } >"$sd/script"
    printf '%s\n' "${SYS_CMDS[@]}" >"$sd/commands"
    echo "kernel:   Debian trixie's $version: ${kernel//$HOME/\~}"
    echo "initrd:   a busybox shell: ${initrd//$HOME/\~}"
    if [[ ${#bios[@]} -gt 0 ]]; then
        echo "firmware: $FW (Debian's OpenSBI), as -bios for both"
    fi
    local shown="${opts[*]:0:${#opts[@]}-1}"
    echo "\$ ${SYS#"$REPO"/} ${shown//$HOME/\~} \"console=ttyS0 quiet\""
    [[ -n $qsys_abs ]] && echo "  and $QSYS with the same options"
    echo
    # The boots run one after the other, each to poweroff.
    echo "booting under xlat-system..."
    xrc=0
    python3 "$REPO/tests/tools/console.py" --timeout "$XLAT_TIMEOUT" --log "$sd/x.log" \
        --times "$sd/x.times" "$sd/script" -- "$SYS" "${opts[@]}" || xrc=$?
    if [[ -n $qsys_abs ]]; then
        echo "booting under $QSYS..."
        qrc=0
        python3 "$REPO/tests/tools/console.py" --timeout "$XLAT_TIMEOUT" --log "$sd/q.log" \
            --times "$sd/q.times" "$sd/script" -- "$qsys_abs" "${opts[@]}" || qrc=$?
    fi
    echo
    python3 - "$sd" "$xrc" "$qrc" <<'EOF'
import re, sys

sd, xrc, qrc = sys.argv[1], sys.argv[2], sys.argv[3]
cmds = [l.rstrip("\n").split("|", 1) for l in open(f"{sd}/commands")]
ESC = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def outputs(log):
    """Each command's output, from the console log: after the prompt, the
    shell's echo of the command (wrapped at 80 columns), then the output."""
    text = ESC.sub("", open(log, errors="replace").read()).replace("\r", "")
    segs = text.split("xlat-initramfs: ready", 1)[-1].split("~ # ")[1:]
    res = []
    for (_, cmd), seg in zip(cmds, segs):
        i = n = 0
        while i < len(seg) and n < len(cmd):
            n += seg[i] != "\n"
            i += 1
        res.append(seg[i + 1:] if seg[i:i + 1] == "\n" else seg[i:])
    return res


def times(path):
    try:
        return [(l.split()[0], float(l.split()[1])) for l in open(path)]
    except OSError:
        return []


x_out, x_t = outputs(f"{sd}/x.log"), times(f"{sd}/x.times")
runq = qrc != "-"
q_out, q_t = (outputs(f"{sd}/q.log"), times(f"{sd}/q.times")) if runq else ([], [])
bad = xrc != "0"


def secs(t, i):   # time from mark i-1 (or the start) to mark i
    if i >= len(t):
        return None
    return t[i][1] - (t[i - 1][1] if i else 0)


def fmt(v):
    return "-" if v is None else f"{v:.2f} s"


for k, (check, cmd) in enumerate(cmds):
    if k >= len(x_out):
        break
    line = f"~ # {cmd}"
    note = f"xlat-system {fmt(secs(x_t, k + 1))}"
    if runq:
        note += f", qemu {fmt(secs(q_t, k + 1))}"
    print(f"{line:<52} ({note})")
    xo = x_out[k].rstrip("\n").split("\n")
    for l in xo:
        print("    " + l.expandtabs(8) if l else "")
    if not runq or k >= len(q_out):
        continue
    qo = q_out[k].rstrip("\n").split("\n")
    if qo == xo:
        print("    (the same under qemu)")
    elif check == "cpu":
        print("    under qemu, where it differs (another CPU model):")
        for l in qo:
            if l not in xo:
                print("    " + l.expandtabs(8))
    else:
        bad = True
        print("    DIFFERENT under qemu:")
        for l in qo:
            print("    " + l.expandtabs(8))

for name, rc, log in (("xlat-system", xrc, "x.log"), ("qemu-system-riscv64", qrc, "q.log")):
    if rc not in ("0", "-"):
        print(f"\n{name} did not reach the end of the script (status {rc}); its console's last lines:")
        tail = ESC.sub("", open(f"{sd}/{log}", errors="replace").read()).replace("\r", "")
        for l in tail.rstrip("\n").split("\n")[-15:]:
            print("    " + l)


def phases(t):
    n = len(cmds)
    p = t[0][1] if t and t[0][0] == "prompt" else None
    c = t[n][1] - p if p is not None and len(t) > n else None
    e = t[-1][1] if t and t[-1][0] == "exit" else None
    return [p, c, e]


xp = phases(x_t) if xrc == "0" else [None] * 3
qp = phases(q_t) if qrc == "0" else [None] * 3
qhead = "qemu-system-riscv64" if runq else "qemu (not installed)"
print()
print(f"{'system mode':<30} {qhead:>20} {'xlat-system':>12} {'xlat-system vs qemu':>20}")
print(f"{'-----------':<30} {'-' * len(qhead):>20} {'-----------':>12} {'-------------------':>20}")
labels = ["time to the shell prompt", f"the {len(cmds)} commands", "start to poweroff"]
for label, q, x in zip(labels, qp, xp):
    if q and x:
        ratio = f"{x / q:.1f}x slower" if x > q else f"{q / x:.1f}x faster"
    else:
        ratio = "-"
    xs = fmt(x) if xrc == "0" else "FAILED"
    qs = fmt(q) if qrc in ("0", "-") else "FAILED"
    print(f"{label:<30} {qs:>20} {xs:>12} {ratio:>20}")
print()
print("(wall times, one boot each: a demo, not a benchmark -- no repeats, no")
print(" interleaving, and other load on this machine shows up in them; `make")
print(" bench-system` measures.)")
sys.exit(1 if bad else 0)
EOF
}
system_demo || bad=1
exit $bad
