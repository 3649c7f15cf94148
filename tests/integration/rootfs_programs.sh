#!/usr/bin/env bash
# Integration test: real dynamically linked Debian trixie riscv64 programs
# from the cached rootfs (scripts/rootfs.sh), run as
#   RUNNER -L ROOTFS -0 NAME ROOTFS/usr/bin/NAME ARGS...
# under qemu-riscv64 and under BUILD/xlat. Stdout, stderr and the exit
# status of every case must be identical.
#   Usage: tests/integration/rootfs_programs.sh BUILD_DIR
#
# Each case is a host shell snippet in which `g NAME ARGS...` runs one guest
# program; pipelines between guest programs are built by the host shell, so
# the CASES need no fork/exec inside the guest. FORK_CASES do need them
# (clone, execve, wait4): they run only with XLAT_ROOTFS_FORK=1 and are
# reported, not counted, until xlat has processes.
#
# Each runner works in its own copy of the same input tree (cases write
# files), entered by relative paths so the -L prefix never applies to them.
#
# Exit: 0 all equal; 77 the rootfs could not be built (reason on the last
# line); 1 any difference or any other problem.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$REPO/tests/lib.sh"
XLAT_TIMEOUT=${XLAT_TIMEOUT_ROOTFS:-120}

BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "no build dir ${1:-build}"; exit 1; }
XLAT=$BUILD/xlat
[[ -x $XLAT ]] || { echo "$XLAT is not built"; exit 1; }
QEMU_ABS=$(command -v "$QEMU") || { echo "$QEMU not installed"; exit 1; }

LOG=$(mktemp "${TMPDIR:-/tmp}/xlat-rootfs-programs.XXXXXX.log")
rc=0
ROOT=$("$REPO/scripts/rootfs.sh" 2>"$LOG") || rc=$?
if [[ $rc -ne 0 ]]; then
    tail -n 3 "$LOG"
    rm -f "$LOG"
    echo "the riscv64 rootfs is not available (scripts/rootfs.sh status $rc)"
    exit 77
fi
rm -f "$LOG"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-rootfs-programs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- Deterministic inputs (one tree per runner) --------------------------

make_inputs() {
    mkdir -p "$1" && cd "$1" || return 1
    awk 'BEGIN {
        x = 12345; m = 4294967296
        for (i = 0; i < 3000; i++) {
            w = ""
            for (j = 0; j < 3 + i % 7; j++) {
                x = (x * 69069 + 1) % m
                w = w sprintf("%c", 97 + int(x / 65536) % 26)
            }
            x = (x * 69069 + 1) % m
            printf "%s %d\n", w, int(x / 4096) % 100000
        }
    }' >lines.txt
    mkdir -p tree/sub/deeper tree/empty
    printf 'alpha\nbeta\ngamma\n' >tree/a.txt
    printf 'one\ntwo\nthree\nfour\n' >tree/sub/b.txt
    printf '#!/bin/sh\necho hi\n' >tree/sub/run.sh
    chmod 755 tree/sub/run.sh
    printf 'needle in deeper\n' >tree/sub/deeper/c.txt
    ln -s ../a.txt tree/sub/link-to-a
    printf 'alpha\nBETA\ngamma\ndelta\n' >a2.txt
    cat >script.sql <<'EOF'
create table t(k integer primary key, name text, score real);
insert into t(name, score) values ('ada', 9.5), ('bob', 7.25), ('cy', 8.0), ('dee', 7.25);
select name, score from t order by score desc, name;
select count(*), sum(score), avg(score) from t;
select group_concat(name, '-') from (select name from t where score > 7.5 order by name);
create index i on t(score);
select name from t where score = 7.25 order by name;
EOF
    # Fixed times and modes, so listings and archives are reproducible.
    find . -exec touch -h -d '2021-02-03 04:05:06 UTC' {} +
    chmod 644 lines.txt a2.txt script.sql tree/a.txt tree/sub/b.txt tree/sub/deeper/c.txt
}

# ---- Cases ---------------------------------------------------------------

CASES=(
    "ls-la|g ls -la --time-style=full-iso tree tree/sub"
    "ls-lR|g ls -lR --time-style=long-iso tree"
    "ls-sort|g ls -1 -S -r tree/sub"
    "ls-prefix|g ls /usr/lib/riscv64-linux-gnu/lua"
    "ls-missing|g ls -l no-such-file"
    "cat|g cat tree/a.txt tree/sub/b.txt"
    "sort|g sort lines.txt | g sha256sum"
    "sort-keys|g sort -k2,2n -k1,1r lines.txt | g head -n 20"
    "sort-unique|g sort -u -t' ' -k1,1 lines.txt | g tail -n 5"
    "sha256sum|g sha256sum lines.txt tree/a.txt"
    "md5sum-check|g md5sum lines.txt >sums && g md5sum -c sums"
    "wc|g wc lines.txt tree/a.txt"
    "stat|g stat -c '%n %s %a %F %Y' tree/a.txt tree/sub tree/sub/link-to-a"
    "du|g du -a --apparent-size -b tree | g sort -k2"
    "tar-create-list|g tar --sort=name --owner=0 --group=0 --numeric-owner -cf t.tar tree && g tar -tvf t.tar"
    "tar-extract|g tar --sort=name --owner=0 --group=0 --numeric-owner -cf t2.tar tree && mkdir -p out && g tar -xf t2.tar -C out && g diff -r tree out/tree && echo same"
    "gzip-roundtrip|g gzip -9 -c lines.txt >l.gz && g gzip -d -c l.gz | g cmp - lines.txt && g gzip -l l.gz"
    "gzip-stdout|g gzip -n -c lines.txt | g md5sum"
    "xz-roundtrip|g xz -T1 -6 -c lines.txt >l.xz && g xz -T1 -d -c l.xz | g sha256sum && g xz -l l.xz"
    "sqlite3|g sqlite3 :memory: <script.sql"
    "sqlite3-file|g sqlite3 db.sqlite <script.sql && g sqlite3 db.sqlite 'select count(*) from t; pragma integrity_check;'"
    "lua|g lua5.4 -e 'local t = {} for w in io.lines(\"lines.txt\") do t[#t + 1] = #w end table.sort(t) print(#t, t[1], t[#t], string.format(\"%.3f\", math.pi))'"
    "perl|g perl -e 'my %h; while (<>) { my (\$w, \$n) = split; \$h{length \$w} += \$n } print join(\",\", map { \"\$_=\$h{\$_}\" } sort keys %h), \"\\n\"; printf \"%.4f\\n\", atan2(1, 1) * 4' lines.txt"
    "perl-regex|g perl -ne 'print if /^([a-z])\\1/' lines.txt"
    "python3-json-re|g python3 -c 'import json, re, sys; d = {\"k\": [1, 2.5, None, \"x\"], \"n\": {\"a\": True}}; s = json.dumps(d, sort_keys=True); print(s); print(json.loads(s) == d); print(re.findall(r\"(\\w)(\\d)\", \"a1 b2 c3\")); print(sum(int(l.split()[1]) for l in open(\"lines.txt\")))'"
    "python3-os|g python3 -c 'import os, hashlib; print(sorted(os.listdir(\"tree\"))); print(os.path.isdir(\"tree/sub\"), os.readlink(\"tree/sub/link-to-a\")); print(hashlib.sha256(open(\"lines.txt\", \"rb\").read()).hexdigest())'"
    "python3-error|g python3 -c 'import sys; print(\"out\"); sys.stderr.write(\"err\\n\"); raise SystemExit(3)'"
    "file|g file tree/a.txt tree/sub tree/sub/run.sh tree/sub/link-to-a lines.txt"
    "find|g find tree -name '*.txt' | g sort"
    "find-type|g find tree -type f -newer lines.txt -o -type d -print | g sort"
    "grep-r|g grep -rn 'e' tree | g sort"
    "grep-count|g grep -c -E '^[aeiou].*[0-9]{4}\$' lines.txt"
    "grep-missing|g grep -q nothing-here lines.txt"
    "sed|g sed -n 's/^\\([a-z]*\\)a\\([a-z]*\\) /\\2-\\1 /p' lines.txt | g head -n 30"
    "sed-inplace|cp tree/a.txt s.txt && g sed -i 's/a/A/g' s.txt && g cat s.txt"
    "gawk|g gawk '{ s += \$2; n[length(\$1)]++ } END { print s; for (k = 3; k < 10; k++) print k, n[k] }' lines.txt"
    "gawk-printf|g gawk 'BEGIN { printf \"%5.2f %x %s\\n\", 3.14159, 255, toupper(\"abc\") }'"
    "diff|g diff -u tree/a.txt a2.txt"
    "diff-same|g diff tree/a.txt tree/a.txt && echo identical"
    "bash-builtins|g bash -c 'x=0; for i in 1 2 3 4 5; do x=\$((x + i * i)); done; echo \$x; printf \"%s-%03d\\n\" abc 7; [[ abc == a* ]] && echo glob; echo \${#BASH_VERSION}' "
    "bash-script-read|g bash -c 'while read -r w n; do [[ \$n -gt 99900 ]] && echo \"\$w\"; done <lines.txt'"
)

# Need fork/exec/wait inside the guest (other work in progress).
FORK_CASES=(
    "bash-pipeline|g bash -c '/usr/bin/seq 1 100 | /usr/bin/sort -nr | /usr/bin/head -n 3'"
    "bash-subst|g bash -c 'echo \$(/usr/bin/echo hi)'"
    "tar-gzip|g tar -czf t.tgz tree && g tar -tzf t.tgz"
    "python3-subprocess|g python3 -c 'import subprocess; print(subprocess.run([\"/usr/bin/echo\", \"x\"], capture_output=True).stdout)'"
    "xz-threads|g xz -T2 -c lines.txt | g xz -d -c | g md5sum"
)

# Both runners get the same minimal environment; PATH leads nowhere so a
# stray execve cannot reach host programs. Every guest program runs under
# its own timeout.
run_case() {   # $1 = runner command, $2 = work dir, $3 = snippet, $4 = out file
    (
        cd "$2" || exit 99
        RUNNER=$1 ROOT=$ROOT T=$XLAT_TIMEOUT bash -c '
            g() { local p=$1; shift
                  timeout -k 5 "$T" env -i PATH=/nonexistent LC_ALL=C TZ=UTC HOME=/nonexistent \
                      $RUNNER -L "$ROOT" -0 "$p" "$ROOT/usr/bin/$p" "$@"; }
            '"$3"
    ) </dev/null >"$4" 2>"$4.err"
}

make_inputs "$WORK/q" && make_inputs "$WORK/x" || { echo "cannot create inputs"; exit 1; }
cd "$WORK"

compare() {   # $1 = name, $2 = snippet; prints a verdict, returns 1 on mismatch
    local name=$1 snippet=$2 qrc=0 xrc=0
    run_case "$QEMU_ABS" "$WORK/q" "$snippet" "$WORK/q.out" || qrc=$?
    run_case "$XLAT" "$WORK/x" "$snippet" "$WORK/x.out" || xrc=$?
    if qemu_failed "$qrc" q.out; then
        echo "FAIL $name: qemu-riscv64 itself failed: $(describe_status "$qrc")"
        head -n 5 q.out.err | sed 's/^/    /'
        return 1
    fi
    if [[ $qrc -eq $xrc ]] && cmp -s q.out x.out && cmp -s q.out.err x.out.err; then
        echo "ok   $name"
        return 0
    fi
    echo "FAIL $name"
    report_mismatch q.out "$qrc" x.out "$xrc"
    if ! cmp -s q.out.err x.out.err; then
        echo "    stderr diff (qemu vs xlat), first 10 lines:"
        diff -u --label qemu --label xlat q.out.err x.out.err | head -n 10 | sed 's/^/      /'
    fi
    return 1
}

failed=0
for c in "${CASES[@]}"; do
    compare "${c%%|*}" "${c#*|}" || failed=$((failed + 1))
done
if [[ ${XLAT_ROOTFS_FORK:-0} == 1 ]]; then
    pending=0
    for c in "${FORK_CASES[@]}"; do
        compare "fork:${c%%|*}" "${c#*|}" || pending=$((pending + 1))
    done
    echo "rootfs programs (need fork/exec, not counted): ${#FORK_CASES[@]} cases, $pending differ"
fi
echo "rootfs programs: ${#CASES[@]} cases, $failed differ"
((failed == 0))
