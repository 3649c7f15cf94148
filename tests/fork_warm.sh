#!/usr/bin/env bash
# Fork warm-up (--tune fork-warm): forked children report the blocks they
# translate and the forking process translates them before its next fork.
# The guest program tests/guest/proc_fork_warm.c (compared with
# qemu-riscv64 as a guest test, and under every --tune setting by
# tune_matrix.sh) checks that the hints never change what runs; this
# checks that the warm-up happens at all: with -d stats, some process
# reports warmed blocks, and none does with --tune no-fork-warm.
# Usage: tests/fork_warm.sh BUILD. Exit 0 = pass.
set -u
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
ELF=$BUILD/guest/proc_fork_warm
[[ -x $ELF ]] || { echo "fork_warm: $ELF not built"; exit 1; }
fail=0
most_warmed() {     # xlat args...: the largest "blocks warmed" of all processes
    local err
    err=$("$XLAT" -d stats "$@" "$ELF" 2>&1 >/dev/null) || { echo "run failed"; return; }
    sed -n 's/^xlat stats: blocks warmed (fork) *\([0-9]*\)$/\1/p' <<<"$err" | sort -n | tail -n 1
}
on=$(most_warmed)
off=$(most_warmed --tune no-fork-warm)
# The 30 children run child_work(), about 20 blocks the parent never runs.
[[ $on =~ ^[0-9]+$ && $on -ge 10 ]] || { echo "fork_warm: default: blocks warmed '$on', want >= 10"; fail=1; }
[[ $off == 0 ]] || { echo "fork_warm: --tune no-fork-warm: blocks warmed '$off', want 0"; fail=1; }
[[ $fail == 0 ]] && echo "fork_warm: ok (warmed $on blocks)"
exit $fail
