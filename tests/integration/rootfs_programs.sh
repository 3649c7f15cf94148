#!/usr/bin/env bash
# Integration test: real dynamically linked Debian trixie riscv64 programs
# from the cached rootfs (scripts/rootfs.sh), run as
#   qemu-riscv64 -L ROOTFS -0 NAME ROOTFS/usr/bin/NAME ARGS...
#   xlat --root ROOTFS --bind $PWD -0 NAME /usr/bin/NAME ARGS...
# (xlat confined to the rootfs, with the case's work directory bound in at
# its own path; qemu has only -L). Stdout, stderr and the exit status of
# every case must be identical.
#   Usage: tests/integration/rootfs_programs.sh BUILD_DIR
#
# Each case is a host shell snippet in which `g NAME ARGS...` runs one guest
# program; pipelines between guest programs are built by the host shell, so
# the CASES need no fork/exec inside the guest (they may use threads).
# EXEC_CASES do (clone, execve, wait4); see there for their reference.
#
# Each runner works in its own copy of the same input tree (cases write
# files), entered by relative paths so the -L prefix never applies to them.
# XLAT_ROOTFS_VIEW=-L runs xlat with -L as qemu instead of --root.
#
# XLAT_ROOTFS_SHOW=1 prints each passing case's output (to review what it
# checks).
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
    # python3: threads with a lock, a queue, a condition variable, a
    # semaphore, an event and thread-local data; the output does not
    # depend on scheduling.
    cat >threads.py <<'EOF'
import queue, threading
q = queue.Queue()
lock = threading.Lock()
total = [0]
def worker(n):
    for i in range(2000):
        with lock:
            total[0] += i * n
    q.put((n, sum(range(n * 100))))
ts = [threading.Thread(target=worker, args=(n,)) for n in range(1, 6)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(q.get() for _ in ts), total[0], q.empty())
cond = threading.Condition()
items, out = [], []
def produce():
    for i in range(200):
        with cond:
            items.append(i)
            cond.notify()
def consume():
    while len(out) < 200:
        with cond:
            while not items:
                cond.wait()
            out.append(items.pop(0))
a, b = threading.Thread(target=consume), threading.Thread(target=produce)
a.start(); b.start(); a.join(); b.join()
sem = threading.Semaphore(2)
ev = threading.Event()
res = {}
def waiter(k):
    ev.wait()
    with sem:
        res[k] = k * k
ws = [threading.Thread(target=waiter, args=(k,)) for k in range(6)]
for w in ws: w.start()
ev.set()
for w in ws: w.join()
local = threading.local()
local.x = "main"
t = threading.Thread(target=lambda: setattr(local, "x", "thread")); t.start(); t.join()
print(out == list(range(200)), sorted(res.items()), local.x, threading.active_count())
EOF
    # python3: a handler for a self-sent signal, alarm(2), an interval
    # timer with pause(), a blocked then pending signal, KeyboardInterrupt,
    # and a death by SIGTERM (exit status 143).
    cat >signals.py <<'EOF'
import os, signal, time
got = []
def handler(signum, frame):
    got.append(signal.Signals(signum).name)
signal.signal(signal.SIGUSR1, handler)
signal.signal(signal.SIGALRM, handler)
os.kill(os.getpid(), signal.SIGUSR1)
print("after kill:", got)
signal.alarm(1)
t0 = time.monotonic()
while len(got) < 2:
    time.sleep(0.02)
print("alarm:", got, 0.5 < time.monotonic() - t0 < 10)
signal.setitimer(signal.ITIMER_REAL, 0.1)
signal.pause()
print("itimer:", got)
old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
os.kill(os.getpid(), signal.SIGUSR1)
print("blocked:", got[-1], signal.SIGUSR1 in signal.sigpending())
signal.pthread_sigmask(signal.SIG_SETMASK, old)
print("unblocked:", got[-1])
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
signal.signal(signal.SIGTERM, signal.SIG_DFL)
print("dying", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("not reached")
EOF
    # python3: subprocess -- fork/exec, pipes both ways, wait statuses
    # (an EXEC_CASE: see there for what the reference is).
    cat >subproc.py <<'EOF'
import subprocess
r = subprocess.run(["sort", "-r"], input=b"b\na\nc\n", capture_output=True)
print(r.returncode, r.stdout)
r = subprocess.run("echo $((3*4)) | tr 1 x; echo err >&2; exit 5", shell=True,
                   capture_output=True, text=True)
print(r.returncode, repr(r.stdout), repr(r.stderr))
p = subprocess.Popen(["sha256sum"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, _ = p.communicate(b"x" * 200000)
print(p.returncode, out.split()[0].decode())
print(subprocess.check_output(["python3", "-c", "print(6 * 7)"]).decode().strip())
print(subprocess.call(["false"]), subprocess.call(["true"]))
try:
    subprocess.check_call(["sh", "-c", "kill -TERM $$"])
except subprocess.CalledProcessError as e:
    print("CalledProcessError", e.returncode)
EOF
    # Fixed times and modes, so listings and archives are reproducible.
    find . -exec touch -h -d '2021-02-03 04:05:06 UTC' {} +
    chmod 644 lines.txt a2.txt script.sql threads.py signals.py subproc.py tree/a.txt tree/sub/b.txt tree/sub/deeper/c.txt
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
    "python3-threads|g python3 threads.py"
    "python3-signals|g python3 signals.py"
    "python3-misc|g python3 -c 'import struct, zlib, base64, datetime, collections, itertools, fractions, decimal; print(struct.pack(\"<IhQ\", 1, -2, 3).hex(), zlib.crc32(b\"abc\"), base64.b64encode(b\"riscv\")); print(datetime.date(2024, 2, 29) + datetime.timedelta(days=400)); print(collections.Counter(\"mississippi\").most_common(2), list(itertools.permutations(\"abc\", 2))[:4]); print(fractions.Fraction(3, 7) + fractions.Fraction(1, 14), decimal.Decimal(1) / decimal.Decimal(7)); print(float.hex(1 / 3), 2 ** 100 % 97, round(2.675, 2), \"%.17g\" % 0.1)'"
    "perl-more|g perl -e 'my @a = sort { \$a <=> \$b } map { (\$_ * 37) % 101 } 1 .. 20; print \"@a[0..4]\\n\"; my %h = (x => 1, y => 2, z => 3); print join(\",\", @h{qw(z x)}), \"\\n\"; (my \$s = \"hello world\") =~ s/(\\w+)/\\u\$1/g; print \"\$s\\n\"; print join(\":\", unpack(\"N n C\", pack(\"N n C\", 305419896, 4660, 255))), \"\\n\"; printf \"%.6e %05.1f %s\\n\", 1234.5678, 3.14159, sprintf(\"%vd\", \"1.22.333\"); print scalar(localtime(0)), \"\\n\"; eval { die { code => 42 } }; print \"died \$@->{code}\\n\"'"
    "lua-more|g lua5.4 -e 'local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i * i) end end) print(co(), co(), co()) print(string.format(\"%5.2f|%-4s|%x\", math.pi, \"ab\", 255)) print((\"hello world\"):gsub(\"o\", function(c) return c:upper() end)) print(7 // 2, 7 % -3, 2^10, math.maxinteger, 1e308 * 10) local t = setmetatable({}, {__index = function(_, k) return k * 2 end}) print(t[21], #utf8.char(233, 8364), select(\"#\", 1, nil, 3)) print(pcall(error, {code = 1}))' | g sed 's/table: 0x[0-9a-f]*/table: ADDR/'"
    "sqlite3-json|g sqlite3 :memory: \"select json_object('a', 1, 'b', json_array(1, 2.5, 'x')); with recursive c(n) as (select 1 union all select n + 1 from c where n < 10) select sum(n), group_concat(n) from c; select printf('%08.3f', 3.14159), length(randomblob(16)), upper('abc');\""
    "sort-parallel|g sort --parallel=2 -S 64K -k2,2n lines.txt | g md5sum"
    "xz-threads|g xz -T2 -c lines.txt | g xz -d -c | g md5sum"
    "gzip-xz-levels|for l in 1 6 9; do g gzip -\$l -n -c lines.txt | g md5sum; g xz -T1 -\$l -c lines.txt | g xz -T1 -d | g cmp - lines.txt && echo xz-\$l-ok; done"
    "file-formats|g gzip -n -c lines.txt >l.gz && g xz -T1 -c lines.txt >l.xz && g tar -cf t3.tar tree && g sqlite3 f.db 'create table t(x);' && g file l.gz l.xz t3.tar f.db script.sql threads.py /usr/bin/bash /usr/bin/busybox /usr/lib/riscv64-linux-gnu/libc.so.6"
    "file-mime|g file -i -L /usr/bin/bash lines.txt tree"
    "bash-builtins|g bash -c 'x=0; for i in 1 2 3 4 5; do x=\$((x + i * i)); done; echo \$x; printf \"%s-%03d\\n\" abc 7; [[ abc == a* ]] && echo glob; echo \${#BASH_VERSION}' "
    "bash-script-read|g bash -c 'while read -r w n; do [[ \$n -gt 99900 ]] && echo \"\$w\"; done <lines.txt'"
)

# Cases whose guest programs fork and execve other programs (`x` runs
# them with PATH=/usr/bin:/bin). qemu-riscv64 without binfmt_misc cannot
# execve a riscv64 program: the host kernel runs the *host's* x86-64
# program of that name instead. For these cases the reference is therefore
# the guest program under qemu driving native host children, i.e. the same
# commands computed another way; they stick to programs whose output is the
# same on the host and in the rootfs (sort, sha256sum, gzip, dash, ...).
EXEC_CASES=(
    "bash-pipeline|x bash -c 'seq 1 100 | sort -nr | head -n 3'"
    "bash-subst|x bash -c 'echo \$(echo hi) \$(seq 3 | wc -l)'"
    "tar-gzip|x tar --sort=name --owner=0 --group=0 --numeric-owner -czf t.tgz tree && x tar -tvzf t.tgz"
    "python3-subprocess|x python3 subproc.py"
    "perl-system|x perl -e 'my \$o = qx(echo from-child); print \"got \$o\"; system(\"sh\", \"-c\", \"exit 3\"); print \$? >> 8, \"\\n\"; open(my \$p, \"-|\", \"sort\", \"-r\", \"tree/a.txt\") or die; print <\$p>; close \$p; print \"closed \$?\\n\"'"
    "find-exec|x find tree -name '*.txt' -exec wc -l {} + | x sort"
    "xargs|x find tree -type f | x sort | x xargs -n 2 echo"
)

# Both runners get the same minimal environment; PATH leads nowhere so a
# stray execve cannot reach host programs. Every guest program runs under
# its own timeout.
run_case() {   # $1 = runner command, $2 = work dir, $3 = snippet, $4 = out file
    local view=(-L "$ROOT") bin=$ROOT/usr/bin
    if [[ $1 == "$XLAT" && ${XLAT_ROOTFS_VIEW:---root} == --root ]]; then
        view=(--root "$ROOT" --bind "$2") bin=/usr/bin
    fi
    (
        cd "$2" || exit 99
        RUNNER=$1 VIEW="${view[*]}" BIN=$bin T=$XLAT_TIMEOUT bash -c '
            g() { local p=$1; shift
                  timeout -k 5 "$T" env -i PATH=/nonexistent LC_ALL=C TZ=UTC HOME=/nonexistent \
                      $RUNNER $VIEW -0 "$p" "$BIN/$p" "$@"; }
            x() { local p=$1; shift
                  timeout -k 5 "$T" env -i PATH=/usr/bin:/bin LC_ALL=C TZ=UTC HOME=/nonexistent \
                      $RUNNER $VIEW -0 "$p" "$BIN/$p" "$@"; }
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
        if [[ ${XLAT_ROOTFS_SHOW:-0} == 1 ]]; then    # to review what a case checks
            sed 's/^/      /' q.out q.out.err | head -n 30
        fi
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
for c in "${EXEC_CASES[@]}"; do
    compare "exec:${c%%|*}" "${c#*|}" || failed=$((failed + 1))
done
# Cases where qemu-riscv64 is wrong, so the reference is Linux's answer,
# written out (name|views|snippet|expected stdout+stderr), run under xlat
# in each of the views (--root, -L):
# - posix_spawn's child reports a failed execve through memory it shares
#   with its parent (CLONE_VM|CLONE_VFORK), so subprocess raises; qemu
#   forks instead and the parent sees exit status 127.
# - /dev is the host kernel's: a pty pair through /dev/ptmx works; qemu -L
#   opens the rootfs's dev/ptmx, which is no device (ENODEV).
# - --root shows no host program (the rootfs has no cc; -L and qemu find the
#   host's /usr/bin/cc).
EXPECT_CASES=(
    "python3-spawn-missing|--root -L|g python3 -c 'import subprocess
try:
    subprocess.run([\"/nonexistent\"])
except OSError as e:
    print(type(e).__name__ + \": \" + str(e))'|FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent'"
    "python3-openpty|--root -L|g python3 -c 'import os, tty
m, s = os.openpty()
tty.setraw(s)
os.write(m, b\"ping\")
print(os.isatty(s), os.read(s, 4), os.ttyname(s).startswith(\"/dev/pts/\"))'|True b'ping' True"
    "python3-which-confined|--root|g python3 -c 'import shutil; print(shutil.which(\"cc\", path=\"/usr/bin:/bin\"), shutil.which(\"gcc-14\", path=\"/usr/bin\"))'|None /usr/bin/gcc-14"
)
for c in "${EXPECT_CASES[@]}"; do
    name=${c%%|*} rest=${c#*|}
    views=${rest%%|*} rest=${rest#*|}
    snippet=${rest%|*} want=${rest##*|}
    for view in $views; do
        XLAT_ROOTFS_VIEW=$view run_case "$XLAT" "$WORK/x" "$snippet" "$WORK/x.out"
        if [[ $(cat x.out x.out.err) == "$want" ]]; then
            echo "ok   $name ($view)"
        else
            echo "FAIL $name ($view): want: $want"
            sed 's/^/    got: /' x.out x.out.err | head -n 5
            failed=$((failed + 1))
        fi
    done
done
echo "rootfs programs: $((${#CASES[@]} + ${#EXEC_CASES[@]})) compared with qemu, ${#EXPECT_CASES[@]} with Linux's answer; $failed differ"
((failed == 0))
