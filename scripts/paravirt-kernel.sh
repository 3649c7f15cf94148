#!/usr/bin/env bash
# Build (once) Debian's riscv64 kernel with paravirtual steal time, for the
# benchmarks (bench/system's smp workload), never for `make check`, and
# print where it is:
#
#   KERNEL=.../Image-VER-paravirt     the flat Image, bootable as Debian's
#                                     (its System.map beside it, .System.map)
#   KERNEL_VERSION=VER                Debian's kernel version it is built from
#
# Debian builds linux-image-riscv64 without CONFIG_PARAVIRT, so its kernel
# never asks the SBI for steal time (SBI STA) and /proc/stat's steal column
# stays 0 however long its harts wait for a host thread. This is the same
# kernel version, from Debian's own source package (linux-source-6.12, the
# tarball /usr/src/linux-source-6.12.tar.xz) and Debian's own configuration
# (/boot/config-VER of the kernel package scripts/system-guest.sh fetched),
# with these changes (scripts/config, then olddefconfig):
#   PARAVIRT, PARAVIRT_TIME_ACCOUNTING   the point: steal time from SBI STA
#   VIRTIO_MMIO, VIRTIO_BLK, EXT4_FS     built in (=y), so it mounts the
#                                        bench disk without modules (Debian's
#                                        modules do not load into another build)
#   no debug info, no BTF                a smaller, faster build
#   no module signing, no trusted keys   Debian's certificates are not in the
#                                        source package
# Only the Image is built (`make Image`, cross-compiled with
# riscv64-linux-gnu-gcc; 20 minutes on two cores); the build tools it
# needs (flex, bison, bc, libssl-dev, libelf-dev) are installed by
# scripts/deps.sh. Packages come through scripts/private-apt.sh (the
# machine's own archive, suite trixie, private apt state). Cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/system/paravirt behind a stamp that
# names the version and this script's configuration; the source tree is
# deleted after the build.
#
# Exit status: 0 ready; 2 download failed; 1 otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
DIR=$CACHE/system/paravirt
APTDIR=$DIR/apt
LOG=$DIR/build.log
SRCPKG=linux-source-6.12

say() { echo "paravirt-kernel: $*" >&2; }

# The configuration changes, as scripts/config arguments.
CONFIG_CHANGES=(
    --enable PARAVIRT --enable PARAVIRT_TIME_ACCOUNTING
    --enable VIRTIO_MMIO --enable VIRTIO_BLK --enable EXT4_FS
    --disable DEBUG_INFO_BTF --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT
    --disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 --enable DEBUG_INFO_NONE
    --disable MODULE_SIG --disable MODULE_SIG_ALL
    --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
    --set-str MODULE_SIG_KEY ""
)

eval "$("$REPO/scripts/system-guest.sh")"           # KERNEL_VERSION, KERNEL_DEB
WANT="version: $KERNEL_VERSION; source: $SRCPKG; config: ${CONFIG_CHANGES[*]}"
OUT=$DIR/Image-$KERNEL_VERSION-paravirt
STAMP=$DIR/.stamp

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [[ -f $STAMP && $(head -n 1 "$STAMP") == "$WANT" && -f $OUT ]]; then
    echo "KERNEL=$OUT"
    echo "KERNEL_VERSION=$KERNEL_VERSION"
    exit 0
fi

"$REPO/scripts/deps.sh" flex bison bc libssl-dev libelf-dev xz-utils >&2

# ---- the source package --------------------------------------------------------

source "$REPO/scripts/private-apt.sh"
private_apt_init "$APTDIR" riscv64 || exit 1
: >"$LOG"
say "apt-get update and download of $SRCPKG (log $LOG)..."
apt-get "${APT_OPTS[@]}" update >>"$LOG" 2>&1 || { say "apt-get update failed"; exit 2; }
mkdir -p "$APTDIR/debs"
(cd "$APTDIR/debs" && apt-get "${APT_OPTS[@]}" download "$SRCPKG" >>"$LOG" 2>&1) ||
    { say "apt-get download $SRCPKG failed; see $LOG"; exit 2; }
srcdeb=$(ls "$APTDIR"/debs/"$SRCPKG"_*.deb)
kdeb_ver=$(dpkg-deb -f "$KERNEL_DEB" Version)
src_ver=$(dpkg-deb -f "$srcdeb" Version)
[[ $src_ver == "$kdeb_ver" ]] ||
    say "warning: $SRCPKG is $src_ver, the kernel package $kdeb_ver: building $src_ver"

# ---- unpack, configure, build ------------------------------------------------------

WORK=$DIR/work
rm -rf "$WORK"
mkdir -p "$WORK/pkg" "$WORK/kpkg"
dpkg-deb -x "$srcdeb" "$WORK/pkg"
dpkg-deb -x "$KERNEL_DEB" "$WORK/kpkg"
config=$WORK/kpkg/boot/config-$KERNEL_VERSION
[[ -f $config ]] || { say "no /boot/config-$KERNEL_VERSION in $KERNEL_DEB"; exit 1; }
say "unpacking $(basename "$srcdeb")..."
tar -C "$WORK" -xf "$WORK"/pkg/usr/src/$SRCPKG.tar.xz
TREE=$WORK/$SRCPKG
[[ -d $TREE ]] || { say "no $SRCPKG/ in the tarball"; exit 1; }
cp "$config" "$TREE/.config"
KMAKE=(make -C "$TREE" ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- -j"$(nproc)")
(cd "$TREE" && scripts/config "${CONFIG_CHANGES[@]}")
"${KMAKE[@]}" olddefconfig >>"$LOG" 2>&1 || { say "olddefconfig failed; see $LOG"; exit 1; }
for opt in PARAVIRT PARAVIRT_TIME_ACCOUNTING VIRTIO_MMIO VIRTIO_BLK EXT4_FS; do
    grep -qx "CONFIG_$opt=y" "$TREE/.config" || { say "CONFIG_$opt did not stay =y"; exit 1; }
done
say "building the Image ($(nproc) jobs; log $LOG)..."
"${KMAKE[@]}" Image >>"$LOG" 2>&1 || { say "the build failed; see the end of $LOG"; exit 1; }
cp "$TREE/System.map" "$OUT.System.map"      # for profiles of the guest kernel
cp "$TREE/arch/riscv/boot/Image" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
rm -rf "$WORK"
echo "$WANT" >"$STAMP"
echo "KERNEL=$OUT"
echo "KERNEL_VERSION=$KERNEL_VERSION"
