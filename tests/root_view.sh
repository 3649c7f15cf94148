#!/usr/bin/env bash
# The guest's file system views (src/user/path.h), checked against what
# Linux itself does in a chroot (qemu has no --root, and its -L is what the
# first check shows to be wrong):
#   - /dev belongs to the host kernel under -L and under --root: a pty
#     through /dev/ptmx works although DIR/dev/ptmx is no device;
#   - --root confines: tests/trust/root_escape.c tries every spelling of a
#     host file outside DIR (.., dirfds, symlinks made at run time,
#     /proc/self/root and cwd, a child's /proc/<pid>/root, every descriptor,
#     a bind's ..) and must print ALL OK, under the JIT and --interp;
#   - the working directory: inside a --bind it stays where it was, outside
#     the view the guest starts at /; getcwd and relative paths agree.
# Usage: tests/root_view.sh BUILD. Exit 0 = pass.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
GUEST_CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlat-root-view.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail=0

B=$WORK/bin DIR=$WORK/root
mkdir -p "$B" "$DIR"/{tmp,etc,dev,proc,sys} "$WORK/outside"
chmod 1777 "$DIR/tmp"
: >"$DIR/dev/ptmx"                  # what a debootstrap tree has is no device either
printf 'INSIDE\n' >"$DIR/inside"
printf 'SECRET\n' >"$WORK/outside/secret"
# A host unix socket nobody listens on (reaching it says ECONNREFUSED).
printf '%s\n' '#include <string.h>' '#include <sys/socket.h>' '#include <sys/un.h>' \
    'int main(int c, char **v) { struct sockaddr_un u = { AF_UNIX }; (void)c;' \
    '  strncpy(u.sun_path, v[1], sizeof u.sun_path - 1);' \
    '  return bind(socket(AF_UNIX, SOCK_STREAM, 0), (void *)&u, sizeof u) != 0; }' >"$WORK/mksock.c"
cc -o "$WORK/mksock" "$WORK/mksock.c" && "$WORK/mksock" "$WORK/outside/sock" ||
    { echo "FAIL cannot make a host socket"; exit 1; }
for p in root_escape pty_open; do
    "$GUEST_CC" -static -O2 -Wall -o "$B/$p" "$REPO/tests/trust/$p.c" ||
        { echo "FAIL cross-compile $p"; exit 1; }
done

expect() {                          # expect WHAT PATTERN CMD...  (=LINE: the last line is LINE)
    local what=$1 pat=$2 out rc=0 ok=0
    shift 2
    out=$(cd "$WORK" && timeout -k 5 60 "$@" 2>&1) || rc=$?
    if [[ $pat == =* ]]; then
        [[ $(tail -n 1 <<<"$out") == "${pat#=}" ]] && ok=1
    elif [[ $out == *"$pat"* ]]; then
        ok=1
    fi
    if [[ $rc -eq 0 && $ok -eq 1 ]]; then
        echo "ok   $what"
    else
        echo "FAIL $what (status $rc)"
        printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
        fail=1
    fi
}

expect "pty under -L" "pty ok: 5 bytes, ping" "$XLAT" -L "$DIR" "$B/pty_open"
expect "pty under --root" "pty ok: 5 bytes, ping" "$XLAT" --root "$DIR" --bind "$B:/b" /b/pty_open
for engine in jit interp; do
    flags=()
    [[ $engine == interp ]] && flags=(--interp)
    expect "confinement ($engine)" "ALL OK" \
        "$XLAT" "${flags[@]}" --root "$DIR" --bind "$B:/b" /b/root_escape "$WORK/outside/secret" "$WORK/outside/sock"
done

# The working directory: kept inside a bind, / when outside the view.
mkdir -p "$B/sub" "$DIR/usr/bin"
cp "$B/pty_open" "$DIR/usr/bin/"
expect "cwd inside a bind" "=cwd $B/sub" \
    bash -c "cd '$B/sub' && '$XLAT' --root '$DIR' --bind '$B' ../pty_open"
expect "cwd outside the view" "=cwd /" \
    bash -c "cd '$WORK/outside' && '$XLAT' --root '$DIR' usr/bin/pty_open"
expect "XLAT_ROOT" "pty ok" env XLAT_ROOT="$DIR" "$XLAT" /usr/bin/pty_open
exit $fail
