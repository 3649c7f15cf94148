#!/usr/bin/env bash
# Integration test: the Debian trixie riscv64 bash from the test rootfs
# (scripts/rootfs.sh), run as `qemu-riscv64 -L ROOTFS ROOTFS/usr/bin/bash -c
# SCRIPT` and as `xlat --root ROOTFS --bind CWD /usr/bin/bash -c SCRIPT`; stdout, stderr and exit
# status of every case must be identical (XLAT_SHELL_SHOW=1 prints each
# passing case's output, to review what it checks).   Usage: tests/integration/rootfs_shell.sh BUILD_DIR
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
    'loops|for ((i = 0; i < 5; i++)); do [[ $i == 2 ]] && continue; echo -n "$i "; done; echo; n=0; while :; do n=$((n + 1)); ((n >= 4)) && break; done; echo n=$n; until [[ $n -le 0 ]]; do n=$((n - 1)); done; echo n=$n; select x in a b; do break; done </dev/null; echo sel=$?'
    'functions-arrays|f() { local v=$1; echo "f:$v:$#"; return $(( $# + 1 )); }; f a b; echo rc=$?; a=(x "y z" w); echo ${#a[@]} "${a[1]}" "${a[@]:1}"; declare -A m=([k]=v [j]=u); for k in $(printf "%s\n" "${!m[@]}" | sort); do echo "$k=${m[$k]}"; done; s="Hello-World"; echo ${s,,} ${s^^} ${s/World/There} ${s#*-} ${s%-*} ${#s}'
    'trap-signals|trap "echo int caught" INT; kill -INT $$; trap "echo term caught; exit 9" TERM; sleep 5 & pid=$!; kill -TERM $pid; wait $pid; echo "child status $?"; trap - INT; (trap "echo sub-usr2" USR2; kill -USR2 $BASHPID; echo sub-done); kill -TERM $$; echo not-reached'
    'trap-err-return|set -E; trap "echo err at \$LINENO" ERR; false; g() { trap "echo returning" RETURN; return 0; }; g; trap - ERR; (set -e; false; echo not-here); echo sub $?'
    'trap-chld|set -m; n=0; trap "n=\$((n + 1))" CHLD; (exit 1) & wait; (exit 2) & wait; sleep 0.2; echo "children reaped, traps fired: $((n >= 1))"'
    'subshell-status|(exit 4); echo $?; ( (exit 5) ); echo $?; x=$(exit 6); echo $?; ! true; echo $?; { false || echo or-branch; }; echo "${PIPESTATUS[@]}"; true | false | true; echo "${PIPESTATUS[@]}"'
    # The fast job is reaped before wait -n starts: bash 5.2 loses a child
    # that its SIGCHLD handler reaps between wait -n's two scans of the job
    # table (then it blocks in wait4 for the slow job, which waits for us),
    # a window any slow-enough run hits now and then, under QEMU too.
    'wait-n|mkfifo go; (read x <go; exit 4) & s=$!; (exit 3) & f=$!; while kill -0 $f 2>/dev/null; do :; done; wait -n; echo first $?; echo now >go; wait $s; echo slow $?; kill -0 $s 2>/dev/null || echo gone'
    'coproc|coproc CO { while read -r l; do echo "got $l"; done; }; echo ping >&"${CO[1]}"; read -r reply <&"${CO[0]}"; echo "$reply"; exec {CO[1]}>&-; wait $CO_PID; echo co $?'
)

failed=0
for case in "${CASES[@]}"; do
    name=${case%%|*}
    script=${case#*|}
    for runner in qemu xlat; do
        # qemu with -L; xlat confined to the rootfs, the case's directory bound in.
        cmd=("$QEMU" -L "$ROOT" "$ROOT/usr/bin/bash")
        [[ $runner == xlat ]] && cmd=("$XLAT" --root "$ROOT" --bind "$WORK/cwd" /usr/bin/bash)
        rm -rf "$WORK/cwd"; mkdir -p "$WORK/cwd"
        r=$(cd "$WORK/cwd" && run_capture "$WORK/$runner" env -i PATH=/usr/bin:/bin LANG=C \
                "${cmd[@]}" -c "$script" </dev/null)
        eval "${runner}_rc=\$r"
    done
    if qemu_failed "$qemu_rc" "$WORK/qemu"; then
        echo "FAIL $name: qemu-riscv64 itself failed ($(describe_status "$qemu_rc"))"
        head -n 5 "$WORK/qemu.err" | sed 's/^/    /'
        failed=1
    elif [[ $qemu_rc -eq $xlat_rc ]] && cmp -s "$WORK/qemu" "$WORK/xlat" &&
            cmp -s "$WORK/qemu.err" "$WORK/xlat.err"; then
        echo "ok   $name"
        if [[ ${XLAT_SHELL_SHOW:-0} == 1 ]]; then    # to review what a case checks
            sed 's/^/      /' "$WORK/qemu" "$WORK/qemu.err" | head -n 30
        fi
    else
        echo "FAIL $name"
        report_mismatch "$WORK/qemu" "$qemu_rc" "$WORK/xlat" "$xlat_rc"
        if ! cmp -s "$WORK/qemu.err" "$WORK/xlat.err"; then
            echo "    stderr diff (qemu vs xlat), first 10 lines:"
            diff -u --label qemu --label xlat "$WORK/qemu.err" "$WORK/xlat.err" | head -n 10 | sed 's/^/      /'
        fi
        failed=1
    fi
done
exit $failed
