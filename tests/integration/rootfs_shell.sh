#!/usr/bin/env bash
# Integration test: the Debian trixie riscv64 bash from the test rootfs
# (scripts/rootfs.sh), run as `RUNNER -L ROOTFS ROOTFS/usr/bin/bash -c
# SCRIPT` under qemu-riscv64 and under BUILD/xlat; stdout and exit status
# of every case must be identical.   Usage: tests/integration/rootfs_shell.sh BUILD_DIR
#
# The scripts fork, exec external programs, build pipelines, wait for
# jobs, run #! scripts and nested shells: inside xlat that is clone (fork),
# execve (re-exec of xlat), wait4 and pipes. (qemu-riscv64 execs the
# *host's* programs for external commands -- it has no binfmt_misc here --
# so the cases stick to commands whose output is the same everywhere and
# to files in a scratch directory, never absolute paths that differ
# between the host and the rootfs.)
#
# Exit: 0 all equal; 77 the rootfs is not available (the reason is the last
# line printed); 1 any difference.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${XLAT_TIMEOUT_SHELL:-120}

BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }

rc=0
ROOT=$("$REPO/scripts/rootfs.sh" 2>"${TMPDIR:-/tmp}/xlat-rootfs-shell.$$.log") || rc=$?
if [[ $rc -ne 0 || ! -x $ROOT/usr/bin/bash ]]; then
    tail -n 3 "${TMPDIR:-/tmp}/xlat-rootfs-shell.$$.log" 2>/dev/null
    rm -f "${TMPDIR:-/tmp}/xlat-rootfs-shell.$$.log"
    echo "the riscv64 rootfs is not available (scripts/rootfs.sh status $rc)"
    exit 77
fi
rm -f "${TMPDIR:-/tmp}/xlat-rootfs-shell.$$.log"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-rootfs-shell.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- Cases: name|script (run by the guest's bash -c) ------------------------

CASES=(
    'basics|echo $((6*7)); for i in 1 2 3; do echo $i; done | sort -r; (cd /; pwd); x=$(echo sub); echo $x; true && echo ok'
    'pipeline|seq 1 300 | sort -rn | head -n 5 | tr "\n" " "; echo; echo a b c | wc -w'
    'pipefail|false | true; echo plain $?; set -o pipefail; false | true; echo pipefail $?; exit 3'
    'subshells|a=1; (a=2; echo inner $a); echo outer $a; echo $(echo $(echo nested)); { echo group; } | cat'
    'redirections|echo one >f; echo two >>f; cat f; cat <f | wc -l; cat <<EOF
here $((1+1))
EOF
rm f; ls f 2>/dev/null || echo gone'
    'jobs|sleep 0.1 & wait $!; echo waited $?; (exit 7) & wait $!; echo bg $?; for i in 1 2 3; do (exit $i) & done; wait; echo all'
    'not-found|nosuchcommand 2>/dev/null; echo $?; ./nofile 2>/dev/null; echo $?'
    'script|printf "#!/bin/bash\necho script \$0 \$1 \$#\nexit 5\n" >s.sh; chmod +x s.sh; ./s.sh one two; echo status $?; bash s.sh three; echo $?'
    'nested-shell|bash -c "echo inner \$0 \$1; exit 6" zero one; echo status $?'
    'exec|bash -c "exec echo replaced"; (exec true) && echo exec-true'
    'procsub|cat <(echo procsub); diff <(echo a) <(echo a) && echo same'
    'read|echo "1 2" | { read a b; echo $((a+b)); }; printf "x\ny\n" | while read l; do echo "[$l]"; done'
    'traps|trap "echo got USR1" USR1; kill -USR1 $$; echo after; trap "echo on exit" EXIT; exit 2'
    'xargs|printf "%s\n" c a b | sort | xargs echo; seq 3 | xargs -n1 expr 10 +'
)

failed=0
for case in "${CASES[@]}"; do
    name=${case%%|*}
    script=${case#*|}
    for runner in qemu xlat; do
        cmd=("$QEMU")
        [[ $runner == xlat ]] && cmd=("$XLAT")
        rm -rf "$WORK/cwd"; mkdir -p "$WORK/cwd"
        r=$(cd "$WORK/cwd" && run_capture "$WORK/$runner" env -i PATH=/usr/bin:/bin LANG=C \
                "${cmd[@]}" -L "$ROOT" "$ROOT/usr/bin/bash" -c "$script" </dev/null)
        eval "${runner}_rc=\$r"
    done
    if qemu_failed "$qemu_rc" "$WORK/qemu"; then
        echo "FAIL $name: qemu-riscv64 itself failed ($(describe_status "$qemu_rc"))"
        head -n 5 "$WORK/qemu.err" | sed 's/^/    /'
        failed=1
    elif [[ $qemu_rc -eq $xlat_rc ]] && cmp -s "$WORK/qemu" "$WORK/xlat"; then
        echo "ok   $name"
    else
        echo "FAIL $name"
        report_mismatch "$WORK/qemu" "$qemu_rc" "$WORK/xlat" "$xlat_rc"
        failed=1
    fi
done
exit $failed
