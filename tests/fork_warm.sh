#!/usr/bin/env bash
# Fork warm-up (--tune fork-warm): forked children report the blocks they
# translate, interpret and look up, and the exits they chain, and the
# forking process translates, looks up and chains them before its next fork.
# The guest program tests/guest/proc_fork_warm.c (compared with
# qemu-riscv64 as a guest test, and under every --tune setting by
# tune_matrix.sh) checks that the hints never change what runs; this
# checks that the warm-up happens at all: with -d stats, some process
# reports warmed blocks and chains, and none does with --tune no-fork-warm.
# And that the code buffer, shared after fork until written, is copied
# when a process writes to it (a child rewrites code) but not at every
# fork: its 34 processes report at most 15 copies (each made one before).
# Usage: tests/fork_warm.sh BUILD. Exit 0 = pass.
set -u
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
ELF=$BUILD/guest/proc_fork_warm
[[ -x $ELF ]] || { echo "fork_warm: $ELF not built"; exit 1; }
fail=0
stats_on=$("$XLAT" -d stats "$ELF" 2>&1 >/dev/null) || stats_on="run failed"
stats_off=$("$XLAT" -d stats --tune no-fork-warm "$ELF" 2>&1 >/dev/null) || stats_off="run failed"
largest() {        # STATS COUNTER: the largest value of "xlat stats: COUNTER N" of all processes
    sed -n "s/^xlat stats: $2 *\([0-9]*\)\( .*\)\{0,1\}$/\1/p" <<<"$1" | sort -n | tail -n 1
}
on=$(largest "$stats_on" "blocks warmed (fork)")
off=$(largest "$stats_off" "blocks warmed (fork)")
chains_on=$(largest "$stats_on" "chains warmed (fork)")
chains_off=$(largest "$stats_off" "chains warmed (fork)")
copies=$(largest "$stats_on" "code buffer copies")
# The 30 children run child_work(), about 20 blocks the parent never runs,
# chained to each other.
[[ $on =~ ^[0-9]+$ && $on -ge 10 ]] || { echo "fork_warm: default: blocks warmed '$on', want >= 10"; fail=1; }
[[ $off == 0 ]] || { echo "fork_warm: --tune no-fork-warm: blocks warmed '$off', want 0"; fail=1; }
[[ $chains_on =~ ^[0-9]+$ && $chains_on -ge 5 ]] ||
    { echo "fork_warm: default: chains warmed '$chains_on', want >= 5"; fail=1; }
[[ $chains_off == 0 ]] || { echo "fork_warm: --tune no-fork-warm: chains warmed '$chains_off', want 0"; fail=1; }
[[ $copies =~ ^[0-9]+$ && $copies -ge 1 && $copies -le 15 ]] ||
    { echo "fork_warm: code buffer copies '$copies', want 1..15"; fail=1; }
[[ $fail == 0 ]] && echo "fork_warm: ok (warmed $on blocks, $chains_on chains; $copies code buffer copies)"
exit $fail
