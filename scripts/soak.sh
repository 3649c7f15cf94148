#!/usr/bin/env bash
# Run the whole test command (`bash .ci/run`, CI=true: plain and sanitizer
# suites) N times in a row on a fresh clone of HEAD, to catch flaky tests.
#
#   scripts/soak.sh [N] [LOGDIR]     (default 20 runs, logs in /tmp/xlat-soak)
#
# SOAK_CI=false runs `make check` as a user does (the plain suite only)
# instead of CI's plain + sanitizer suites, in about half the time.
#
# Each run's full log is kept as LOGDIR/run-K.log; the summary prints every
# run's result line and ends with "soak: P of N runs passed". Runs at low
# priority (nice 19) so the machine stays usable. Exit status: 0 only if all
# runs passed.
set -uo pipefail
n=${1:-20}
logdir=${2:-/tmp/xlat-soak}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$logdir"
work=$(mktemp -d /tmp/xlat-soak-clone.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/xlat"
echo "soak: $(git -C "$work/xlat" log -1 --format='%h %s'), $n runs, logs in $logdir"
passed=0
for ((k = 1; k <= n; k++)); do
    start=$SECONDS
    if (cd "$work/xlat" && CI=${SOAK_CI:-true} nice -n 19 bash .ci/run) >"$logdir/run-$k.log" 2>&1; then
        status=PASS
        passed=$((passed + 1))
    else
        status=FAIL
    fi
    echo "run $k: $status in $((SECONDS - start)) s: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logdir/run-$k.log" | tr '\n' ' ')"
    grep -E '^FAIL ' "$logdir/run-$k.log" | sed 's/^/    /'
done
echo "soak: $passed of $n runs passed"
[[ $passed == "$n" ]]
