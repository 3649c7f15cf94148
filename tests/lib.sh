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
