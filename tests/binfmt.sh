#!/usr/bin/env bash
# binfmt_misc: scripts/xlat-binfmt and xlat started by the kernel.
#   Usage: tests/binfmt.sh BUILD
# First the script alone (everywhere): bad arguments and flags refused, F
# refused for a dynamically linked xlat, --persist writing and removing a
# binfmt.d file. Then, as root with binfmt_misc writable, the static build
# (build/xlat-static, which make check builds; BUILD/xlat when BUILD is
# build-static) registered under a unique name with the flags F, PF, OF,
# POCF and P in turn, running a small static riscv64 program directly:
# argv[0] as given with P and the path without, no descriptor left open
# with O, the caller's credentials, and with C a setuid file's, AT_SECURE
# set for the guest and xlat's QEMU_*/XLAT_* variables ignored (an
# unprivileged caller must not steer a privileged xlat); F inside a chroot
# that holds only the program (without F, no xlat there: it fails). Last, a
# chroot into the Debian rootfs without /proc compiles and runs a program
# with its gcc (skipped with a note when scripts/rootfs.sh has not built it).
# Every entry is removed on exit. Registrations are serialized with other
# tests through flock on /tmp/xlat-binfmt.lock (the newest riscv64 entry
# wins). Exit 77 with the reason where binfmt_misc cannot be used.
set -u
BUILD=$(cd "${1:-build}" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
XB=$REPO/scripts/xlat-binfmt
BINFMT=/proc/sys/fs/binfmt_misc
NAME=xlat-test-$$
TMP=$(mktemp -d)
ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/xlat/rootfs-trixie-riscv64
mounted=0
cleanup() {
    local e
    for e in "$BINFMT/$NAME" "$BINFMT/$NAME"-*; do
        [[ -e $e ]] && echo -1 > "$e"
    done
    [[ $mounted = 1 ]] && umount "$BINFMT" 2>/dev/null
    rm -f "$ROOT/tmp/$NAME".* 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE   # (the EXIT trap then unregisters)
fail() { echo "binfmt: $*"; exit 1; }

# -- The script alone --------------------------------------------------------

MAGIC='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xf3\x00'
MASK='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
if [[ $(basename "$BUILD") = build-static ]]; then STATIC=$BUILD/xlat; else STATIC=$REPO/build/xlat-static; fi
# A dynamically linked xlat (the musl build's build/xlat is static-pie, and
# xlat-dynamic beside it is not), else any dynamically linked program.
DYN=$(command -v true)
for c in "$BUILD/xlat-dynamic" "$BUILD/xlat" "$REPO/build/xlat-dynamic" "$REPO/build/xlat"; do
    if [[ -x $c ]] && file -L "$c" | grep -q 'dynamically linked'; then DYN=$c; break; fi
done

"$XB" --bogus >/dev/null 2>&1 && fail "bad argument accepted"
"$XB" --help | grep -q -- '--persist' || fail "no usage"
"$XB" --install --no-proc >/dev/null 2>&1 && fail "--no-proc without --persist accepted"

# F with a dynamic xlat: refused, saying why, before touching anything.
out=$("$XB" --install --name "$NAME-dyn" --xlat "$DYN" --flags F --persist "$TMP/d" 2>&1) &&
    fail "F accepted for dynamic $DYN: $out"
[[ $out == *"dynamically linked"* && $out == *"make static"* ]] || fail "F refused without the reason: $out"
[[ -e $BINFMT/$NAME-dyn || -e $TMP/d ]] && fail "refused registration left an entry"
# Without --flags the default (POF) leaves F out for it, with a note.
out=$("$XB" --print --name "$NAME" --xlat "$DYN" 2>&1) || fail "--print of dynamic $DYN: $out"
[[ $out == *"flag F is left out"* && $out == *":$DYN:PO" ]] || fail "default flags for a dynamic xlat: $out"

for f in X PX FF0 ' P' p; do
    out=$("$XB" --print --name "$NAME" --xlat "$DYN" --flags "$f" 2>&1) && fail "flags '$f' accepted: $out"
    [[ $out == *"flags must be from P O C F"* ]] || fail "flags '$f' refused without the reason: $out"
done
# Canonical order, and C implies O (as the kernel says). --print takes a
# path that does not exist yet (make install's staged DESTDIR).
for pair in C:OC FP:PF CPF:POCF '':'' OOF:OF; do
    out=$("$XB" --print --name "$NAME" --xlat /staged/xlat --flags "${pair%%:*}" 2>&1) ||
        fail "flags '${pair%%:*}' refused: $out"
    [[ $out == ":$NAME:M::$MAGIC:$MASK:/staged/xlat:${pair#*:}" ]] || fail "flags '${pair%%:*}' gave: $out"
done

# --persist DIR writes DIR/NAME.conf for systemd-binfmt; --uninstall removes it.
"$XB" --install --no-proc --persist "$TMP/binfmt.d" --name "$NAME" --xlat "$DYN" --flags PO >/dev/null ||
    fail "--persist refused"
conf=$TMP/binfmt.d/$NAME.conf
[[ -f $conf ]] || fail "--persist wrote no $conf"
[[ $(grep -v '^[#;]' "$conf") == ":$NAME:M::$MAGIC:$MASK:$DYN:PO" ]] || fail "wrong $conf: $(cat "$conf")"
"$XB" --uninstall --no-proc --persist "$TMP/binfmt.d" --name "$NAME" >/dev/null || fail "--uninstall --persist failed"
[[ -e $conf ]] && fail "--uninstall --persist left $conf"

# -- Registered --------------------------------------------------------------

[[ $(id -u) = 0 ]] || { echo "binfmt: skipped: not root (script checks passed)"; exit 77; }
# Before mounting: a test that held the lock may unmount binfmt_misc as it ends.
exec 9>/tmp/xlat-binfmt.lock
flock -w 900 9 || fail "another test held /tmp/xlat-binfmt.lock for 15 minutes"
if [[ ! -e $BINFMT/register ]]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" 2>"$TMP/err" || {
        echo "binfmt: skipped: cannot mount binfmt_misc: $(cat "$TMP/err")"; exit 77; }
    mounted=1
fi
[[ -w $BINFMT/register ]] || { echo "binfmt: skipped: $BINFMT/register not writable"; exit 77; }
[[ -x $STATIC ]] || fail "$STATIC is not built (make static; make check builds it)"

# Prints its arguments, the descriptors open from 3 up, and its ids.
cat > "$TMP/t.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    printf("argv");
    for (int i = 0; i < argc; i++)
        printf(" [%s]", argv[i]);
    printf("\nfds");
    for (int fd = 3; fd < 256; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            printf(" %d", fd);
    printf("\nids %d %d %d %d\n", (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
    printf("secure %lu\n", getauxval(AT_SECURE));
    return 3;
}
C
riscv64-linux-gnu-gcc -static -O1 -o "$TMP/t" "$TMP/t.c" || fail "cannot cross-compile the test program"
chmod 755 "$TMP"            # the setuid runs below are other users
mkdir "$TMP/chroot" && cp "$TMP/t" "$TMP/chroot/t"
cp "$TMP/t" "$TMP/t-nobody" && chown 65534:65534 "$TMP/t-nobody" && chmod 6755 "$TMP/t-nobody"
cp "$TMP/t" "$TMP/t-root" && chmod 6755 "$TMP/t-root"

# The same program run by xlat itself: the descriptors it sees without binfmt.
base_fds=$("$STATIC" "$TMP/t" 9>&- </dev/null | sed -n 's/^fds//p')
ids="$(id -u) $(id -u) $(id -g) $(id -g)"

# Other riscv64 entries registered after ours would take over; name them when a check fails.
others() {
    local e
    for e in "$BINFMT"/*; do
        case ${e##*/} in register|status|"$NAME"*) continue ;; esac
        grep -q '^magic 7f454c460201010000000000000000000200f300' "$e" 2>/dev/null && printf ' %s' "${e##*/}"
    done
}
check() {                    # check WHAT EXPECTED ACTUAL
    [[ $2 == "$3" ]] && return 0
    echo "binfmt: $FL: $1: expected '$2', got '$3'"
    local o; o=$(others)
    [[ -n $o ]] && echo "  (other riscv64 binfmt entries:$o)"
    exit 1
}

for FL in F PF OF POCF P; do
    n=$NAME-$FL
    "$XB" --install --name "$n" --xlat "$STATIC" --flags "$FL" >/dev/null 2>"$TMP/err" || {
        grep -q 'Permission denied\|Operation not permitted\|Read-only' "$TMP/err" &&
            { echo "binfmt: skipped: registration refused: $(cat "$TMP/err")"; exit 77; }
        fail "$FL: registration failed: $(cat "$TMP/err")"; }
    grep -q '^enabled' "$BINFMT/$n" || fail "$FL: entry not enabled"
    check "interpreter" "interpreter $STATIC" "$(grep '^interpreter' "$BINFMT/$n")"
    check "flags" "flags: $FL" "$(grep '^flags' "$BINFMT/$n")"

    # argv[0]: what the caller gave with P (exec -a), the path without.
    out=$(exec -a zero0 "$TMP/t" a1 9>&- </dev/null); rc=$?
    check "exit status" 3 "$rc"
    if [[ $FL = *P* ]]; then want="argv [zero0] [a1]"; else want="argv [$TMP/t] [a1]"; fi
    check "argv" "$want" "$(sed -n '/^argv/p' <<<"$out")"
    # O: the kernel's descriptor for the program is xlat's, never the guest's.
    check "open descriptors" "fds$base_fds" "$(sed -n '/^fds/p' <<<"$out")"
    check "ids" "ids $ids" "$(sed -n '/^ids/p' <<<"$out")"

    # C: ids from the program's file (setuid nobody run by root, setuid root
    # run by nobody); without C, the caller's.
    out=$("$TMP/t-nobody" 9>&- </dev/null | sed -n 's/^ids //p')
    if [[ $FL = *C* ]]; then want="0 65534 0 65534"; else want="0 0 0 0"; fi
    check "ids of a setuid-nobody file run by root" "$want" "$out"
    # (With C, also a log file the caller could not write: xlat must ignore it.)
    rm -f "$TMP/log"
    env=()
    [[ $FL = *C* ]] && env=(QEMU_LOG=in_asm QEMU_LOG_FILENAME="$TMP/log" XLAT_LOG_FILENAME="$TMP/log")
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env "${env[@]}" "$TMP/t-root" 9>&- </dev/null)
    if [[ $FL = *C* ]]; then want="65534 0 65534 0"; else want="65534 65534 65534 65534"; fi
    check "ids of a setuid-root file run by nobody" "$want" "$(sed -n 's/^ids //p' <<<"$out")"
    if [[ $FL = *C* ]]; then want=1; else want=0; fi
    check "AT_SECURE of a setuid-root file run by nobody" "$want" "$(sed -n 's/^secure //p' <<<"$out")"
    if [[ $FL = *C* ]]; then
        check "-D log file named by nobody's QEMU_LOG_FILENAME for a setuid-root run" "absent" \
            "$([[ -e $TMP/log ]] && echo "written by $(stat -c %U "$TMP/log")" || echo absent)"
    fi

    # F: xlat is pinned, so a chroot without it (and without /proc) runs the program.
    out=$(chroot "$TMP/chroot" /t a1 9>&- </dev/null 2>&1); rc=$?
    if [[ $FL = *F* ]]; then
        check "chroot exit status" 3 "$rc"
        check "chroot argv" "argv [/t] [a1]" "$(sed -n '/^argv/p' <<<"$out")"
    else
        [[ $rc != 3 ]] || fail "$FL: the chroot ran the program although xlat is not in it"
    fi

    "$XB" --uninstall --name "$n" >/dev/null
    [[ -e $BINFMT/$n ]] && fail "$FL: still registered after --uninstall"
done

# The Debian rootfs as a plain chroot without /proc: bash runs gcc (cc1, as,
# collect2, ld: guest execs of riscv64 programs) and the program it built.
if [[ -e $ROOT/.xlat-rootfs-stamp && -x $ROOT/usr/bin/gcc-14 ]]; then
    FL=default
    "$XB" --install --name "$NAME-root" --xlat "$STATIC" >/dev/null || fail "rootfs: registration failed"
    [[ -e $ROOT/proc/self ]] && fail "rootfs: $ROOT/proc is mounted; this checks a chroot without /proc"
    out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp chroot "$ROOT" /usr/bin/bash -c \
        "cd /tmp && printf 'int main(){return 42;}' > $NAME.c && gcc-14 -o $NAME.out $NAME.c && ./$NAME.out; echo rc=\$?" \
        9>&- </dev/null 2>&1)
    check "chroot $ROOT: bash, gcc-14, the program" "rc=42" "$out"
    "$XB" --uninstall --name "$NAME-root" >/dev/null
else
    echo "binfmt: note: no rootfs at $ROOT (scripts/rootfs.sh), chroot with gcc not checked"
fi
echo "binfmt: ok"
