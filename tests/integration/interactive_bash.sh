#!/usr/bin/env bash
# Integration test: `xlat --root ROOTFS /usr/bin/bash -i` is a working
# interactive shell on a real terminal.   Usage: tests/integration/interactive_bash.sh BUILD_DIR
#
# The guest bash runs in a tmux pane (a pty, so bash turns on job control
# and readline). We type with `tmux send-keys` and read the screen with
# `tmux capture-pane`: echo, a pipeline, cd + pwd, a for loop, readline's
# history (Up) and completion (Tab), ctrl-C during a `sleep` (must stop
# only the sleep: the rest of the line is dropped, the prompt comes back
# at once), ctrl-Z + jobs + fg + ctrl-C (process groups, TIOCSPGRP,
# SIGTSTP/SIGCONT, SIGCHLD), and `exit 3` (the status reaches the host).
# There is no qemu comparison: this checks that the shell works, as a
# person would.
#
# Exit: 0 pass; 77 no tmux or no rootfs (the reason is the last line);
# 1 a step did not show what it should (the screen is printed).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }

if ! command -v tmux >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y -q tmux >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q tmux >/dev/null 2>&1; }
    fi
    command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed and could not be installed"; exit 77; }
fi

rc=0
ROOT=$("$REPO/scripts/rootfs.sh" 2>/dev/null) || rc=$?
if [[ $rc -ne 0 || ! -x $ROOT/usr/bin/bash ]]; then
    echo "the riscv64 rootfs is not available (scripts/rootfs.sh status $rc)"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-ibash.XXXXXX")
SOCK=xlat-ibash-$$             # a private tmux server, never the user's
T=(tmux -L "$SOCK")
cleanup() { "${T[@]}" kill-server 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
echo "cd-target-ok" >"$WORK/marker.txt"

# The pane runs bash under xlat, then reports its exit status and lingers
# so the last screen can still be read.
"${T[@]}" -f /dev/null new-session -d -s t -x 100 -y 50 \
    "env -i TERM=xterm PATH=/usr/bin:/bin HOME=$WORK LC_ALL=C PS1='xs\$ ' \
     $XLAT --root $ROOT --bind $WORK /usr/bin/bash --norc --noprofile -i; echo EXITED:\$?; sleep 600" ||
    { echo "tmux could not start a session"; exit 1; }
"${T[@]}" set-option -t t history-limit 5000 >/dev/null

screen() { "${T[@]}" capture-pane -p -J -S - -t t; }
keys() { "${T[@]}" send-keys -t t "$@"; }

# wait_for REGEX [SECONDS]: poll the screen until an (extended) regex
# matches a line.
wait_for() {
    local re=$1 limit=${2:-20} i
    for ((i = 0; i < limit * 10; i++)); do
        screen | grep -qE -- "$re" && return 0
        sleep 0.1
    done
    return 1
}
# count REGEX: how many screen lines match.
count() { screen | grep -cE -- "$1"; }

failed=0
fail() {
    echo "FAIL $1"
    echo "    screen:"
    screen | grep -v '^$' | tail -n 25 | sed 's/^/      /'
    failed=1
}
ok() { echo "ok   $1"; }

# step NAME COMMAND REGEX: type COMMAND, wait for REGEX.
step() {
    keys -l "$2"; keys Enter
    if wait_for "$3"; then ok "$1"; else fail "$1"; fi
}

wait_for '^xs\$ ' 60 || { fail "prompt"; exit 1; }
ok prompt

step echo 'echo hello-$((6*7))' '^hello-42$'
step pipeline "printf '%s\\n' cherry apple banana | sort | tr '\\n' , ; echo" '^apple,banana,cherry,$'
step cd-pwd "cd $WORK/ && pwd && cat marker.txt" '^cd-target-ok$'
step for-loop 'for i in 1 2 3; do echo loop-$i; done | tr "\n" " "; echo' '^loop-1 loop-2 loop-3 $'

# readline: recall the last line with Up, complete a command name with Tab.
keys -l 'echo hist-$((1+1))'; keys Enter
wait_for '^hist-2$' || fail history-first
keys Up; keys Enter
if wait_for '^hist-2$' && sleep 0.5 && [[ $(count '^hist-2$') -eq 2 ]]; then ok history-up; else fail history-up; fi
keys -l 'printf %s-%s tab compl'; keys Enter     # settle the screen first
wait_for '^tab-complxs\$ ' || fail tab-setup
keys -l 'ech'; keys Tab; keys -l 'tabbed-$((5*5))'; keys Enter
if wait_for '^tabbed-25$'; then ok tab-completion; else fail tab-completion; fi

# ctrl-C kills the foreground sleep only; bash drops the rest of the line
# (as it does natively) and prompts again at once. (A long sleep, so that
# a slow machine cannot pass for a working ctrl-C.)
keys -l 'sleep 20; echo not-reached'; keys Enter
sleep 1.5
start=$(date +%s%N)
keys C-c
keys -l 'echo after-int-$?'; keys Enter
if wait_for '^after-int-130$' 10; then
    elapsed=$((($(date +%s%N) - start) / 1000000))
    if [[ $(count 'not-reached$') -eq 1 ]]; then  # the typed line only
        ok "ctrl-C (${elapsed} ms)"
    else
        fail "ctrl-C (the rest of the line ran)"
    fi
else
    fail ctrl-C
fi

# Job control: stop a foreground job, list it, resume it, interrupt it.
keys -l 'sleep 30'; keys Enter
sleep 1.5
keys C-z
if wait_for 'Stopped +sleep 30'; then ok ctrl-Z; else fail ctrl-Z; fi
step jobs 'jobs -l; echo jobs-listed' '^jobs-listed$'
keys -l 'fg'; keys Enter
sleep 1
keys C-c
step fg-then-ctrl-C 'echo fg-status-$?; jobs; echo no-jobs-left' '^no-jobs-left$'
[[ $(count 'Stopped') -eq 2 ]] || fail "job still listed after fg + ctrl-C"
screen | grep -qE '^fg-status-130$' || fail "fg status"

# A background job and its completion notice (SIGCHLD while at the prompt).
step background '(sleep 0.3; echo bg-done) & wait; echo waited-$?' '^waited-0$'

keys -l 'exit 3'; keys Enter
if wait_for '^EXITED:3$' 20; then ok exit-status; else fail exit-status; fi

exit $failed
