#!/usr/bin/env bash
# Integration test: Debian trixie's riscv64 busybox-static, run under
# qemu-riscv64 and under BUILD/xlat; every command's stdout and exit status
# must be identical.   Usage: tests/integration/busybox.sh BUILD_DIR
#
# Each case is a host shell snippet in which $RUN stands for the runner and
# $BB for the busybox binary, so pipelines between guest processes are built
# by the host shell and need no fork/exec inside xlat. (Inside the guest, a
# busybox sh that forks and then execs an applet would find host binaries
# through PATH under qemu; PATH therefore points nowhere.)
#
# Exit: 0 all equal; 77 busybox could not be downloaded (the reason is the
# last line printed); 1 any difference, or any other problem.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${XLAT_TIMEOUT_BUSYBOX:-120}

BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }

rc=0
BB=$("$REPO/scripts/fetch-busybox.sh") || rc=$?
if [[ $rc -eq 2 ]]; then
    echo "busybox download from Debian's archive failed (network down?)"
    exit 77
elif [[ $rc -ne 0 ]]; then
    echo "fetching busybox failed (status $rc)"
    exit 1
fi

# ---- Deterministic inputs ------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-busybox.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# 5000 lines of pseudo-random words and numbers (a fixed LCG, exact in the
# doubles awk computes with).
awk 'BEGIN {
    x = 12345; m = 4294967296
    for (i = 0; i < 5000; i++) {
        w = ""
        for (j = 0; j < 3 + i % 7; j++) {
            x = (x * 69069 + 1) % m
            w = w sprintf("%c", 97 + int(x / 65536) % 26)
        }
        x = (x * 69069 + 1) % m
        printf "%s %d\n", w, int(x / 4096) % 100000
    }
}' >lines.txt
touch -d '2020-01-01 00:00:00 UTC' lines.txt   # gzip stores the mtime

# ---- Cases ---------------------------------------------------------------

CASES=(
    "sh-builtins|\$RUN \$BB sh -c 'echo hi; for i in 1 2 3; do echo \$i; done'"
    "sh-arith|\$RUN \$BB sh -c 'x=0; i=0; while [ \$i -lt 3000 ]; do x=\$((x + i * i % 7)); i=\$((i + 1)); done; echo \$x; printf \"%s-%05d\\n\" abc 42; case foo.c in *.c) echo glob;; esac; exit 3'"
    "echo-args|\$RUN \$BB echo one 'two  three' four"
    "sha256sum|\$RUN \$BB sha256sum lines.txt"
    "sha1sum|\$RUN \$BB sha1sum lines.txt"
    "md5sum|\$RUN \$BB md5sum lines.txt"
    "sort|\$RUN \$BB sort lines.txt"
    "sort-numeric|\$RUN \$BB sort -k2,2n -k1,1 lines.txt"
    "sort-unique-reverse|\$RUN \$BB sort -u -r lines.txt"
    "wc|\$RUN \$BB wc lines.txt"
    "tr|\$RUN \$BB tr a-z A-Z <lines.txt"
    "tr-delete|\$RUN \$BB tr -d 'aeiou0-9' <lines.txt"
    "seq-sort-pipeline|\$RUN \$BB seq 1 1000 | \$RUN \$BB sort -r | \$RUN \$BB md5sum"
    "gzip|\$RUN \$BB gzip -9 -c lines.txt | \$RUN \$BB md5sum"
    "gzip-roundtrip|\$RUN \$BB gzip -c lines.txt | \$RUN \$BB gunzip -c | \$RUN \$BB sha256sum"
    "awk|\$RUN \$BB awk '{ s += \$2; n[length(\$1)]++ } END { print s; for (k = 3; k < 10; k++) print k, n[k] }' lines.txt"
    "sed|\$RUN \$BB sed -n 's/^\\([a-z]*\\)a\\([a-z]*\\) /\\2-\\1 /p' lines.txt"
    "grep-count|\$RUN \$BB grep -c 'q.*z' lines.txt"
    "missing-file|\$RUN \$BB cat /nonexistent/file"
    "bad-applet|\$RUN \$BB no-such-applet"
    # busybox sh forks and the children run these applets in-process (no
    # execve: checked under qemu with -strace), so qemu is a fair reference.
    # Not every applet is run that way: for e.g. tr, busybox execs
    # /proc/self/exe, which qemu-user cannot do (ENOEXEC) and xlat can.
    "sh-pipeline|\$RUN \$BB sh -c 'seq 1 300 | sort -nr | md5sum'"
    "sh-subst|\$RUN \$BB sh -c 'x=\$(seq 5); echo \$x; y=\$(echo a | sort); echo \$y'"
    "sh-background|\$RUN \$BB sh -c '(sleep 0.1; echo late >bg.out) & echo early; wait; read l <bg.out; echo \$l; (exit 7); echo \$?'"
)

# Both runners get the same, minimal environment; PATH leads nowhere so a
# stray execve cannot reach host programs.
QEMU_ABS=$(command -v "$QEMU") || { echo "$QEMU not installed"; exit 1; }
ENV=(env -i PATH=/nonexistent LC_ALL=C HOME=/nonexistent)

failed=0
for c in "${CASES[@]}"; do
    name=${c%%|*} snippet=${c#*|}
    qrc=$(RUN="${ENV[*]} $QEMU_ABS" BB=$BB run_capture q.out bash -c "$snippet" </dev/null)
    xrc=$(RUN="${ENV[*]} $XLAT" BB=$BB run_capture x.out bash -c "$snippet" </dev/null)
    if qemu_failed "$qrc" q.out; then
        echo "FAIL $name: qemu-riscv64 itself failed: $(describe_status "$qrc")"
        head -n 5 q.out.err | sed 's/^/    /'
        failed=$((failed + 1))
    elif [[ $qrc -eq $xrc ]] && cmp -s q.out x.out; then
        echo "ok   $name"
    else
        echo "FAIL $name"
        report_mismatch q.out "$qrc" x.out "$xrc"
        failed=$((failed + 1))
    fi
done
echo "busybox: ${#CASES[@]} cases, $failed differ"
((failed == 0))
