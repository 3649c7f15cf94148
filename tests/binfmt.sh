#!/usr/bin/env bash
# scripts/xlat-binfmt: register xlat for riscv64 ELF under a unique name,
# run a static riscv64 program directly by path, unregister. Exit 77 (with
# the reason) where binfmt_misc cannot be mounted or written.
# Usage: tests/binfmt.sh BUILD.
set -u
BUILD=$(cd "${1:-build}" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
BINFMT=/proc/sys/fs/binfmt_misc
NAME=xlat-test-$$
TMP=$(mktemp -d)
mounted=0
cleanup() {
    [[ -e $BINFMT/$NAME ]] && echo -1 > "$BINFMT/$NAME"
    [[ $mounted = 1 ]] && umount "$BINFMT" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

# The script's argument checking works everywhere.
"$REPO/scripts/xlat-binfmt" --bogus >/dev/null 2>&1 && { echo "binfmt: bad argument accepted"; exit 1; }
"$REPO/scripts/xlat-binfmt" --help | grep -q -- '--install' || { echo "binfmt: no usage"; exit 1; }

[[ $(id -u) = 0 ]] || { echo "binfmt: skipped: not root"; exit 77; }
if [[ ! -e $BINFMT/register ]]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" 2>"$TMP/err" || {
        echo "binfmt: skipped: cannot mount binfmt_misc: $(cat "$TMP/err")"; exit 77; }
    mounted=1
fi
[[ -w $BINFMT/register ]] || { echo "binfmt: skipped: $BINFMT/register not writable"; exit 77; }

cat > "$TMP/t.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv) { printf("binfmt ok %d %s\n", argc, argv[1]); return 3; }
C
riscv64-linux-gnu-gcc -static -O1 -o "$TMP/t" "$TMP/t.c" || exit 1
"$REPO/scripts/xlat-binfmt" --install --name "$NAME" --xlat "$BUILD/xlat" --flags F || {
    echo "binfmt: skipped: registration refused (binfmt_misc not writable here)"; exit 77; }
grep -q '^enabled' "$BINFMT/$NAME" || { echo "binfmt: entry not enabled"; exit 1; }
grep -q "interpreter $BUILD/xlat" "$BINFMT/$NAME" || { echo "binfmt: wrong interpreter"; cat "$BINFMT/$NAME"; exit 1; }
out=$("$TMP/t" arg1); rc=$?
"$REPO/scripts/xlat-binfmt" --uninstall --name "$NAME" >/dev/null
[[ -e $BINFMT/$NAME ]] && { echo "binfmt: still registered after --uninstall"; exit 1; }
[[ $rc = 3 && $out = "binfmt ok 2 arg1" ]] || { echo "binfmt: direct run gave rc=$rc out='$out'"; exit 1; }
echo "binfmt: ok"
