#!/usr/bin/env bash
# Fetch (once) the programs xlat is measured against and print where they
# are, as shell-style KEY=VALUE lines on stdout:
#
#   QEMU7=/usr/bin/qemu-riscv64                  Debian 12's qemu-user (7.2)
#   QEMU10=.../usr/bin/qemu-riscv64              trixie's qemu-user (10.0)
#   NATIVE_ROOT=...                              trixie amd64 tree
#   NATIVE_LDSO=.../ld-linux-x86-64.so.2         its dynamic loader
#   NATIVE_LIBPATH=...:...                       its --library-path
#
# Trixie's amd64 packages come from the machine's own Debian archive: the
# sources list is derived at run time from /etc/apt/sources.list.d/
# debian.sources (suite bookworm -> trixie), so no archive host name is
# written in this repository. apt runs with a private state, cache and
# sources directory and an EMPTY dpkg status, which makes it download the
# whole dependency closure (libc6 included) without touching the host's
# package database; each .deb is then unpacked with `dpkg-deb -x`.
#
# The amd64 tree serves two roles:
#  - QEMU 10: its qemu-riscv64 is dynamically linked against trixie's
#    libraries, so it runs through the tree's own ld-linux-x86-64.so.2
#    (QEMU10 is then a wrapper script that does exactly that);
#  - the native limit: the same program versions as the riscv64 rootfs
#    (bash, sqlite3, lua5.4, python3.13, xz, busybox-static, and the
#    riscv64 cross cc1 of gcc 14), run the same way.
#
# Cached in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/peers-trixie-amd64 behind a
# stamp. Exit status: 0 ready; 2 download failed; 1 anything else.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/private-apt.sh"

PACKAGES=(
    qemu-user
    libc6 bash coreutils busybox-static python3-minimal sqlite3 lua5.4
    xz-utils gzip cpp-14-riscv64-linux-gnu
)

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
ROOT=$CACHE/peers-trixie-amd64
APTDIR=$CACHE/peers-apt
STAMP=$ROOT/.xlat-peers-stamp
LOG=$CACHE/peers-apt.log
WANT="packages: ${PACKAGES[*]}"

say() { echo "peers: $*" >&2; }

ldso() { echo "$ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"; }
libpath() { echo "$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/usr/lib"; }

# ---- QEMU 7.2: Debian 12's own qemu-user on the host ------------------------

qemu7() {
    local q=/usr/bin/qemu-riscv64
    if [[ ! -x $q ]]; then
        say "installing Debian 12's qemu-user (QEMU 7.2) with apt-get..."
        apt-get install -y qemu-user >&2 || { say "apt-get install qemu-user failed"; return 1; }
    fi
    "$q" --version | head -n 1 | grep -q 'version 7\.2' ||
        say "warning: $q is not QEMU 7.2: $("$q" --version | head -n 1)"
    echo "$q"
}

report() {
    echo "QEMU7=$(qemu7)"
    echo "QEMU10=$ROOT/qemu-riscv64"
    echo "NATIVE_ROOT=$ROOT"
    echo "NATIVE_LDSO=$(ldso)"
    echo "NATIVE_LIBPATH=$(libpath)"
}

ready() { [[ -f $STAMP ]] && [[ $(head -n 1 "$STAMP") == "$WANT" ]]; }

if ready; then report; exit 0; fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1'"; exit 1; }; }
need apt-get
need dpkg-deb
need flock

mkdir -p "$CACHE"
exec 9>"$CACHE/peers.lock"
flock 9
if ready; then report; exit 0; fi

# ---- private apt configuration ---------------------------------------------

private_apt_init "$APTDIR" amd64 || exit 1
APT=(apt-get "${APT_OPTS[@]}")

say "apt-get update (trixie, private state in $APTDIR, log $LOG)..."
private_apt_update "$LOG" || { say "apt-get update failed (network down?)"; exit 2; }

say "downloading ${PACKAGES[*]} and their dependencies..."
ok=0
for try in 1 2 3; do
    if "${APT[@]}" install -y --download-only "${PACKAGES[@]}" >>"$LOG" 2>&1; then ok=1; break; fi
    tail -n 5 "$LOG" >&2; sleep $((try * 5))
done
[[ $ok -eq 1 ]] || { say "apt-get download failed; see $LOG"; exit 2; }

# ---- unpack into a merged-/usr tree ------------------------------------------

rm -rf "$ROOT"
mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$ROOT/$d"; done
shopt -s nullglob
debs=("$APTDIR"/cache/archives/*.deb)
[[ ${#debs[@]} -gt 0 ]] || { say "apt downloaded nothing"; exit 1; }
say "unpacking ${#debs[@]} packages into $ROOT..."
for deb in "${debs[@]}"; do
    dpkg-deb -x "$deb" "$ROOT"
done

[[ -e $(ldso) ]] || { say "no $(ldso) after unpacking"; exit 1; }
[[ -x $ROOT/usr/bin/qemu-riscv64 ]] || { say "no qemu-riscv64 in trixie's qemu-user"; exit 1; }

# QEMU 10 is linked against trixie's libraries: run it through their loader.
cat >"$ROOT/qemu-riscv64" <<EOF
#!/bin/sh
# trixie's qemu-riscv64, run with trixie's own amd64 loader and libraries
exec "$(ldso)" --library-path "$(libpath)" "$ROOT/usr/bin/qemu-riscv64" "\$@"
EOF
chmod +x "$ROOT/qemu-riscv64"
"$ROOT/qemu-riscv64" --version | head -n 1 >&2

{
    echo "$WANT"
    date -u +'built: %Y-%m-%dT%H:%M:%SZ'
    for deb in "${debs[@]}"; do basename "$deb"; done
} >"$STAMP.new"
mv "$STAMP.new" "$STAMP"
say "ready: $ROOT"
report
