#!/usr/bin/env bash
# Build (once) a Debian trixie riscv64 root file system for running real
# Debian programs under xlat and qemu-riscv64 -L, and print its path.
#
#   scripts/rootfs.sh            fetch if needed, print the rootfs path
#   scripts/rootfs.sh --force    throw away the cached tree and rebuild it
#
# How: debootstrap's first stage (--foreign, default mirror) downloads the
# base system plus the packages below into DIR/var/cache/apt/archives and
# unpacks only the "required" set. The second stage would have to run
# riscv64 code as root inside the tree, so instead every downloaded .deb is
# unpacked with `dpkg-deb -x`. Maintainer scripts never run: no
# alternatives (/usr/bin/awk, /usr/bin/cc ...) and no compiled .pyc files;
# callers name programs by their real path (gawk, gcc-14, python3.13).
#
# The tree is cached in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/
# rootfs-trixie-riscv64 behind a stamp file written last, so an interrupted
# build is redone and a finished one is reused; the stamp's first line is
# the package list, so changing the list rebuilds. A rebuild happens in a
# staging directory beside the tree and replaces it only when complete, so
# programs still running from the old tree are not pulled from under them.
# Concurrent callers serialize on a lock. Diagnostics go to stderr, the
# path to stdout.
#
# Exit status: 0 ready; 2 the download failed (network, archive);
# 1 anything else (missing tools, not root, unexpected layout).
set -euo pipefail

# libc6-dev (crt*.o, libc.so, headers), libgcc-14-dev and linux-libc-dev
# let the guest's gcc link programs; make builds small projects;
# libpython3.13-stdlib brings the modules python3-minimal lacks (queue ...);
# stress-ng is bench/system's TLB shootdown load.
PACKAGES=(
    bash coreutils busybox-static python3-minimal perl-base sqlite3 lua5.4
    xz-utils gzip file findutils grep sed gawk diffutils gcc-14 cpp-14
    binutils libc6-dev libgcc-14-dev linux-libc-dev make libpython3.13-stdlib
    stress-ng
)

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
ROOT=$CACHE/rootfs-trixie-riscv64
STAMP=$ROOT/.xlat-rootfs-stamp
LOG=$CACHE/rootfs-debootstrap.log
TRIES=${XLAT_FETCH_TRIES:-3}
# The stamp records the package list, so adding a package rebuilds.
WANT="packages: ${PACKAGES[*]}"

say() { echo "rootfs: $*" >&2; }

ready() { [[ -f $STAMP ]] && [[ $(head -n 1 "$STAMP") == "$WANT" ]]; }

# What maintainer scripts would have configured that programs rely on:
# base-passwd's /etc/passwd and /etc/group (ls -l, tar and id name users
# by them; under xlat --root the guest sees no other). And an empty
# /usr/lib/python3/dist-packages (the python3 package's, not installed
# here): python3's site module reads that directory, and under -L a path
# the tree lacks is the host's, as with qemu-riscv64 -L, so a guest
# python3 with its default prefix ran a Debian host's *.pth hooks
# (setuptools' _distutils_hack ...): 17 % more instructions in `python3 -c
# pass`, and modules that depend on what the host has installed.
# Idempotent, so an existing tree gets it too.
configure_tree() {
    local f
    for f in passwd group; do
        if [[ ! -e $1/etc/$f && -e $1/usr/share/base-passwd/$f.master ]]; then
            cp "$1/usr/share/base-passwd/$f.master" "$1/etc/$f.xlat-tmp" &&
                mv "$1/etc/$f.xlat-tmp" "$1/etc/$f"
        fi
    done
    mkdir -p "$1/usr/lib/python3/dist-packages"
}

FORCE=0
[[ ${1:-} == --force ]] && FORCE=1

if [[ $FORCE -eq 0 ]] && ready; then
    configure_tree "$ROOT"
    echo "$ROOT"
    exit 0
fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1' (apt-get install $2)"; exit 1; }; }
need debootstrap debootstrap
need dpkg-deb dpkg
need flock util-linux
[[ $(id -u) -eq 0 ]] || { say "debootstrap must run as root"; exit 1; }

mkdir -p "$CACHE"
exec 9>"$CACHE/rootfs.lock"
flock 9
if [[ $FORCE -eq 0 ]] && ready; then     # another caller finished meanwhile
    echo "$ROOT"
    exit 0
fi

# Debian 12's debootstrap knows trixie; older ones only know sid's script.
SCRIPT=
[[ -e /usr/share/debootstrap/scripts/trixie ]] || SCRIPT=/usr/share/debootstrap/scripts/sid

STAGE=$ROOT.new
ok=0
for ((try = 1; try <= TRIES; try++)); do
    # A half-built tree confuses debootstrap: always start from scratch.
    rm -rf "$STAGE"
    say "debootstrap trixie riscv64 into $STAGE (try $try/$TRIES, log $LOG)..."
    if debootstrap --foreign --arch=riscv64 --variant=minbase \
            --include="$(IFS=,; echo "${PACKAGES[*]}")" \
            trixie "$STAGE" $SCRIPT >"$LOG" 2>&1; then
        ok=1
        break
    fi
    say "debootstrap failed; last lines of $LOG:"
    tail -n 5 "$LOG" >&2 || true
    sleep $((try * 5))
done
if [[ $ok -ne 1 ]]; then
    say "could not download from Debian's archive after $TRIES tries (network down?)"
    exit 2
fi

# The second stage cannot run: unpack every downloaded package ourselves.
# dpkg-deb -x keeps the merged-/usr symlinks (bin -> usr/bin ...) intact.
shopt -s nullglob
debs=("$STAGE"/var/cache/apt/archives/*.deb)
[[ ${#debs[@]} -gt 0 ]] || { say "no .deb under $STAGE/var/cache/apt/archives"; exit 1; }
say "unpacking ${#debs[@]} packages..."
for deb in "${debs[@]}"; do
    dpkg-deb -x "$deb" "$STAGE"
done

# Sanity: the merged-/usr layout survived and the programs callers rely on
# are riscv64 ELF files.
for link in bin lib sbin; do
    [[ -L $STAGE/$link ]] || { say "$STAGE/$link is not a symlink (merged /usr broken)"; exit 1; }
done
for prog in usr/bin/bash usr/bin/busybox usr/bin/python3.13 usr/bin/sqlite3 \
            usr/bin/lua5.4 usr/bin/xz usr/bin/gcc-14 \
            usr/libexec/gcc/riscv64-linux-gnu/14/cc1 lib/ld-linux-riscv64-lp64d.so.1 \
            usr/lib/riscv64-linux-gnu/crt1.o usr/bin/make usr/lib/python3.13/queue.py; do
    [[ -e $STAGE/$prog ]] || { say "missing $STAGE/$prog after unpacking"; exit 1; }
done
if command -v file >/dev/null && ! file -L "$STAGE/usr/bin/bash" | grep -q 'RISC-V'; then
    say "$STAGE/usr/bin/bash is not a RISC-V binary"
    exit 1
fi

configure_tree "$STAGE"
{
    echo "$WANT"
    date -u +'built: %Y-%m-%dT%H:%M:%SZ'
    for deb in "${debs[@]}"; do basename "$deb"; done
} >"$STAGE/.xlat-rootfs-stamp"
# Swap the finished tree in; the old one is removed after the swap.
rm -rf "$ROOT.old"
[[ -e $ROOT ]] && mv "$ROOT" "$ROOT.old"
mv "$STAGE" "$ROOT"
rm -rf "$ROOT.old"
say "ready: $ROOT"
echo "$ROOT"
