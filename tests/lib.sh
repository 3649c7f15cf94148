# Shared helpers for tests/run.sh and the script tests (source it; it is not
# a test itself). A "runner" is the command that runs a riscv64 program:
# `qemu-riscv64` (the behaviour reference) or `BUILD/xlat`. The comparison
# helpers run the same command under both and check that stdout and the exit
# status (128+N for a death by signal, as the shell reports it) are equal.

XLAT_TIMEOUT=${XLAT_TIMEOUT:-30}     # seconds per program run
QEMU=${QEMU:-qemu-riscv64}

# run_capture OUT CMD... : run CMD under a timeout, stdout to OUT and stderr
# to OUT.err, and print its exit status. The caller chooses stdin.
run_capture() {
    local out=$1 rc=0
    shift
    timeout -k 5 "$XLAT_TIMEOUT" "$@" >"$out" 2>"$out.err" || rc=$?
    echo "$rc"
}

# holders_of FILE: the pids of the processes with FILE open.
holders_of() {
    local fd
    for fd in /proc/[0-9]*/fd/*; do
        [[ $(readlink "$fd" 2>/dev/null) == "$1" ]] && { fd=${fd#/proc/}; echo "${fd%%/*}"; }
    done | sort -u
}
# reap_survivors FILE: processes that still hold FILE (the output file of
# a run that ended: its timeout kills only its own process group, and one
# stuck in the kernel survives even SIGKILL): print each with its threads'
# states, kernel wait channels and stacks, then kill them.
reap_survivors() {
    local pids pid t
    pids=$(holders_of "$1")
    [[ -n $pids ]] || return 0
    sleep 1                                  # one that was just exiting
    pids=$(holders_of "$1")
    for pid in $pids; do
        echo "    left behind: $(ps -o pid=,ppid=,pgid=,stat=,wchan:32=,args= -p "$pid")"
        for t in /proc/"$pid"/task/*; do
            echo "      thread ${t##*/}: $(cut -d' ' -f3 "$t/stat" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null)"
            sed 's/^/        /' "$t/stack" 2>/dev/null | head -n 12
        done
        kill -9 "$pid" 2>/dev/null
    done
}

# describe_status RC: a human reading of an exit status.
describe_status() {
    local rc=$1
    case $rc in
        124) echo "124 (timed out after ${XLAT_TIMEOUT}s)" ;;
        126|127) echo "$rc (could not run)" ;;
        *) if ((rc > 128 && rc < 160)); then
               echo "$rc (signal $((rc - 128)) $(kill -l $((rc - 128)) 2>/dev/null))"
           else
               echo "$rc"
           fi ;;
    esac
}

# report_mismatch QOUT QRC XOUT XRC: print why two runs differ: both statuses,
# the head of a diff of stdout, and the head of xlat's stderr.
report_mismatch() {
    local qout=$1 qrc=$2 xout=$3 xrc=$4
    echo "    qemu status: $(describe_status "$qrc")"
    echo "    xlat status: $(describe_status "$xrc")"
    if ! cmp -s "$qout" "$xout"; then
        echo "    stdout diff (qemu vs xlat), first 20 lines:"
        diff -u --label qemu --label xlat "$qout" "$xout" | head -n 20 | sed 's/^/      /'
    fi
    if [[ -s $xout.err ]]; then
        echo "    xlat stderr, first 10 lines:"
        head -n 10 "$xout.err" | sed 's/^/      /'
    fi
}

# qemu_failed RC OUT: true if qemu itself could not run the program (timed
# out, or printed one of its own errors to OUT.err): the test is then broken,
# which is a failure, never a skip.
qemu_failed() {
    [[ $1 -eq 124 ]] || grep -q '^qemu-riscv64: ' "$2.err" 2>/dev/null
}
