#!/usr/bin/env bash
# Fetch (once) a Debian trixie riscv64 kernel and build a busybox initramfs
# for xlat-system (and qemu-system-riscv64 -M virt), then print where they
# are as shell-style KEY=VALUE lines on stdout:
#
#   KERNEL=.../Image-6.12.NN+deb13-riscv64   the bootable kernel: the flat
#                                            Image with the RISC-V header
#   INITRD=.../initramfs.cpio.gz             busybox initramfs (newc, gzip)
#   KERNEL_VERSION=6.12.NN+deb13-riscv64
#   KERNEL_DEB=.../linux-image-VER.deb       the kernel package, kept for its
#                                            modules (scripts/system-disk.sh)
#
#   scripts/system-guest.sh            fetch if needed, print the paths
#   scripts/system-guest.sh --force    fetch the newest kernel and rebuild
#   scripts/system-guest.sh --modules  INITRD is the initramfs with modules:
#                                      initramfs-modules.cpio.gz
#   scripts/system-guest.sh --root     INITRD is initramfs-root.cpio.gz,
#                                      which also loads ext4 (--force
#                                      combines with either)
#
# The kernel: `linux-image-riscv64` is a metapackage; its Depends names the
# real package (linux-image-6.12.NN+deb13-riscv64), whose /boot/vmlinux-VER
# is, despite the name, not an ELF file but the uncompressed `Image`
# (arch/riscv/boot/Image, with the EFI stub's "MZ" and the RISC-V boot
# header: magic "RISCV" at 0x30, "RSC\x05" at 0x38, text_offset 0x200000).
# That file is copied out as Image-VER, and the package is kept for the
# modules a root file system needs (scripts/system-disk.sh); of the rest,
# only the modules below are kept, inside the second initramfs.
#
# Modules: Debian builds virtio_mmio, virtio_blk, virtio-rng, virtio_net and
# ext4 as modules (=m; virtio itself, virtio_ring and hw_random are built
# in), so a guest with virtio-mmio disks or an ext4 root needs an initramfs
# that loads them.
# initramfs-modules.cpio.gz is the same initramfs plus MODULES and every
# module they depend on, in /lib/modules/NAME.ko, and /lib/modules/load-order
# (dependencies first); initramfs-root.cpio.gz the same with ROOT_MODULES. The package has no modules.dep (depmod makes it at
# install time), so dependencies come from each module's own .modinfo
# `depends=` field. Debian compresses modules with xz and busybox's insmod
# may not read xz, so they are stored decompressed.
#
# Packages come from the machine's own Debian archive: the sources list is
# derived at run time from /etc/apt/sources.list.d/debian.sources (suite
# bookworm -> trixie, as scripts/peers.sh does), so no archive host name is
# written in this repository. apt runs with a private state, cache and
# sources directory for riscv64, and `apt-get download` fetches exactly the
# two packages wanted (no dependency closure); `dpkg-deb -x` unpacks them.
#
# The initramfs is written by this script itself (a newc cpio made with
# printf, so no root, no cpio tool and no mknod are needed; every entry is
# owned by root and dated 0, so the same inputs give the same bytes):
# /bin/busybox (static), /bin/sh -> busybox, /dev /proc /sys /tmp /root,
# /dev/console (a character node is only a header field in newc), /init.
# /init installs busybox's applet links, mounts proc, sysfs and devtmpfs,
# insmods the modules of /lib/modules/load-order if there is one (printing
# `xlat-initramfs: modules: NAME...`). Given `root=DEV` on the kernel
# command line (with `rootfstype=` (default ext4), `ro`, `init=` (default
# /sbin/init), as the kernel itself reads them), it waits up to 10 s for DEV,
# mounts it, moves /dev, /proc and /sys there and switch_roots to init, as
# Debian's initramfs-tools would. Otherwise, or if the mount fails, it prints
# `xlat-initramfs: ready` and runs a shell on the console.
#
# Cached in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/system behind a stamp file
# written last (its first line names the packages and the /init script's
# hash, so changing either rebuilds); a cached run touches no network.
# Concurrent callers serialize on a lock. Diagnostics go to stderr.
#
# Exit status: 0 ready; 2 download failed (network, archive); 1 otherwise.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/private-apt.sh"

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
DIR=$CACHE/system
APTDIR=$DIR/apt
STAMP=$DIR/.xlat-system-stamp
LOG=$DIR/apt.log

say() { echo "system-guest: $*" >&2; }

# ---- the initramfs's /init ---------------------------------------------------

INIT_SCRIPT='#!/bin/sh
# xlat-system test initramfs (scripts/system-guest.sh)
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>/dev/console
if [ -f /lib/modules/load-order ]; then
    for m in $(cat /lib/modules/load-order); do
        insmod /lib/modules/$m.ko || echo "xlat-initramfs: insmod $m failed"
    done
    echo "xlat-initramfs: modules:" $(cat /lib/modules/load-order)
fi
root= rootfstype=ext4 rootflags=rw init=/sbin/init
for arg in $(cat /proc/cmdline); do
    case $arg in
        root=*) root=${arg#root=} ;;
        rootfstype=*) rootfstype=${arg#rootfstype=} ;;
        ro) rootflags=ro ;;
        init=*) init=${arg#init=} ;;
    esac
done
if [ -n "$root" ]; then
    n=0
    while [ ! -b "$root" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
    mkdir -p /newroot
    if mount -t "$rootfstype" -o "$rootflags" "$root" /newroot; then
        echo "xlat-initramfs: switching to $root ($rootfstype, $rootflags), init $init"
        for d in dev proc sys; do mkdir -p /newroot/$d; mount --move /$d /newroot/$d; done
        exec switch_root /newroot "$init"
    fi
    echo "xlat-initramfs: cannot mount $root as $rootfstype; staying in the initramfs"
fi
echo "xlat-initramfs: ready"
exec setsid cttyhack sh'

# The modules of initramfs-modules.cpio.gz and initramfs-root.cpio.gz (their
# dependencies come along). ext4 asks for crc32c through the crypto API (a
# softdep, not a depends=), so crc32c_generic is named before it. ext4 is
# kept out of the first: loading it takes the interpreter half a minute.
MODULES="virtio_mmio virtio_blk virtio_rng virtio_net"
ROOT_MODULES="$MODULES crc32c_generic ext4"

WANT="packages: linux-image-riscv64 busybox-static; init: $(printf %s "$INIT_SCRIPT" | sha256sum | cut -c1-16); modules: $MODULES; root: $ROOT_MODULES"

ready() { [[ -f $STAMP ]] && [[ $(head -n 1 "$STAMP") == "$WANT" ]]; }

# KEY=VALUE lines from the stamp (written at the end); with --modules or
# --root, INITRD is that variant's initramfs.
report() {
    if [[ -n $VARIANT ]]; then
        sed -n -e '/^out: INITRD=/d' -e 's/^out: //p' -e "s/^out-$VARIANT: //p" "$STAMP"
    else
        sed -n 's/^out: //p' "$STAMP"
    fi
}

FORCE=0
VARIANT=
for arg in "$@"; do
    case $arg in
        --force) FORCE=1 ;;
        --modules) VARIANT=modules ;;
        --root) VARIANT=root ;;
        *) say "unknown option '$arg' (--force, --modules, --root)"; exit 1 ;;
    esac
done
if [[ $FORCE -eq 0 ]] && ready; then report; exit 0; fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1' ($2)"; exit 1; }; }
need apt-get apt
need dpkg-deb dpkg
need flock util-linux
need gzip gzip
need xz xz-utils

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [[ $FORCE -eq 0 ]] && ready; then report; exit 0; fi

# ---- private apt for trixie riscv64 ------------------------------------------

private_apt_init "$APTDIR" riscv64 || exit 1
mkdir -p "$APTDIR/debs"

# retry N CMD...: run CMD up to N times (network hiccups), logging to $LOG.
retry() {
    local n=$1 try; shift
    for ((try = 1; try <= n; try++)); do
        "$@" >>"$LOG" 2>&1 && return 0
        tail -n 3 "$LOG" >&2
        sleep $((try * 5))
    done
    return 1
}

: >"$LOG"
say "apt-get update (trixie riscv64, private state in $APTDIR, log $LOG)..."
retry 3 apt-get "${APT_OPTS[@]}" update || { say "apt-get update failed (network down?)"; exit 2; }

# The metapackage's Depends names the versioned kernel package.
KPKG=$(apt-cache "${APT_OPTS[@]}" depends linux-image-riscv64 2>>"$LOG" |
       sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-riscv64\)$/\1/p' | head -n 1)
[[ -n $KPKG ]] || { say "cannot resolve linux-image-riscv64's kernel package; see $LOG"; exit 1; }
KVER=${KPKG#linux-image-}
say "kernel package: $KPKG; downloading it and busybox-static..."
(cd "$APTDIR/debs" && retry 3 apt-get "${APT_OPTS[@]}" download "$KPKG" busybox-static) ||
    { say "apt-get download failed; see $LOG"; exit 2; }

# ---- unpack --------------------------------------------------------------------

STAGE=$DIR/stage
rm -rf "$STAGE"
mkdir -p "$STAGE/pkg"
shopt -s nullglob
debs=("$APTDIR"/debs/*.deb)
[[ ${#debs[@]} -eq 2 ]] || { say "expected 2 packages, got ${#debs[@]}"; exit 1; }
for deb in "${debs[@]}"; do
    dpkg-deb -x "$deb" "$STAGE/pkg"
done

KSRC=$STAGE/pkg/boot/vmlinux-$KVER
[[ -f $KSRC ]] || { say "no /boot/vmlinux-$KVER in $KPKG"; exit 1; }
# The RISC-V Image header: "RISCV\0\0\0" at 0x30 and "RSC\x05" at 0x38.
magic=$(od -An -tx1 -j 48 -N 12 "$KSRC" | tr -d ' \n')
[[ $magic == 524953435600000052534305 ]] ||
    { say "$KSRC has no RISC-V Image header (bytes 0x30..0x3b: $magic)"; exit 1; }
BUSYBOX=$STAGE/pkg/usr/bin/busybox
[[ -f $BUSYBOX ]] || { say "no /usr/bin/busybox in busybox-static"; exit 1; }

# ---- modules: MODULES and their dependencies, decompressed ---------------------

KMOD=$STAGE/pkg/usr/lib/modules/$KVER          # merged /usr (trixie)
[[ -d $KMOD ]] || KMOD=$STAGE/pkg/lib/modules/$KVER
[[ -d $KMOD ]] || { say "no /lib/modules/$KVER in $KPKG"; exit 1; }
MODSTAGE=$STAGE/modules
mkdir -p "$MODSTAGE"

# modfile NAME: the file of module NAME (its name may spell _ as -).
modfile() {
    local f
    f=$(find "$KMOD/kernel" \( -name "$1.ko*" -o -name "${1//_/-}.ko*" \) -print -quit)
    [[ -n $f ]] && echo "$f"
}

# add_module NAME: unpack NAME into MODSTAGE and append it to ORDER after
# the modules it depends on.
add_module() {
    local n=${1//-/_} f deps d
    [[ -n ${SEEN[$n]:-} ]] && return 0
    SEEN[$n]=1
    f=$(modfile "$n") || { say "no module $n in $KPKG"; exit 1; }
    case $f in
        *.xz)  xz -dc "$f" ;;
        *.gz)  gzip -dc "$f" ;;
        *.ko)  cat "$f" ;;
        *)     say "$f: unknown module compression"; exit 1 ;;
    esac >"$MODSTAGE/$n.ko"
    deps=$(tr '\0' '\n' <"$MODSTAGE/$n.ko" | sed -n 's/^depends=//p' | head -n 1)
    for d in ${deps//,/ }; do add_module "$d"; done
    ORDER+=("$n")
}
# load_order NAME MODULES...: MODSTAGE/load-order-NAME, the modules and
# their dependencies, dependencies first.
load_order() {
    local name=$1 m; shift
    declare -gA SEEN=()
    ORDER=()
    for m in "$@"; do add_module "$m"; done
    printf '%s\n' "${ORDER[@]}" >"$MODSTAGE/load-order-$name"
    say "modules ($name): ${ORDER[*]}"
}
# shellcheck disable=SC2086
load_order modules $MODULES
# shellcheck disable=SC2086
load_order root $ROOT_MODULES

# ---- the initramfs: a newc cpio written directly -------------------------------

CPIO=$STAGE/initramfs.cpio
INO=1000

# pad4 N: the zero bytes that bring N up to a multiple of 4.
pad4() { head -c $(( (4 - $1 % 4) % 4 )) /dev/zero; }

# entry NAME MODE SIZE RDEVMAJ RDEVMIN [DATAFILE]: one newc header, the
# name, then the file's data, each padded to 4 bytes.
entry() {
    local name=$1 mode=$2 size=$3 rmaj=$4 rmin=$5 data=${6:-}
    local nlen=$(( ${#name} + 1 ))
    INO=$((INO + 1))
    printf '070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x' \
        "$INO" "$mode" 0 0 1 0 "$size" 0 0 "$rmaj" "$rmin" "$nlen" 0
    printf '%s\0' "$name"
    pad4 $((110 + nlen))
    if [[ -n $data ]]; then
        cat "$data"
        pad4 "$size"
    fi
}

dir()  { entry "$1" $((0040000 | 0755)) 0 0 0; }
file() { entry "$1" $((0100000 | $2)) "$(stat -c %s "$3")" 0 0 "$3"; }
link() { printf %s "$2" >"$STAGE/link"; entry "$1" $((0120000 | 0777)) "${#2}" 0 0 "$STAGE/link"; }
cdev() { entry "$1" $((0020000 | 0600)) 0 "$2" "$3"; }

# write_cpio [LOAD_ORDER]: the archive, with the modules LOAD_ORDER lists, on
# stdout.
write_cpio() {
    INO=1000
    for d in bin dev proc sys tmp root; do dir "$d"; done
    cdev dev/console 5 1
    file bin/busybox 0755 "$BUSYBOX"
    link bin/sh busybox
    file init 0755 "$STAGE/init"
    if [[ -n ${1:-} ]]; then
        dir lib
        dir lib/modules
        for m in $(cat "$1"); do file "lib/modules/$m.ko" 0644 "$MODSTAGE/$m.ko"; done
        file lib/modules/load-order 0644 "$1"
    fi
    entry TRAILER!!! 0 0 0 0
}

printf %s "$INIT_SCRIPT" >"$STAGE/init"
write_cpio >"$CPIO"
gzip -9 -n -c "$CPIO" >"$CPIO.gz"
for v in modules root; do
    write_cpio "$MODSTAGE/load-order-$v" >"$CPIO-$v"
    gzip -9 -n -c "$CPIO-$v" >"$CPIO-$v.gz"
done

# ---- publish ---------------------------------------------------------------------

KERNEL=$DIR/Image-$KVER
INITRD=$DIR/initramfs.cpio.gz
INITRD_MODULES=$DIR/initramfs-modules.cpio.gz
INITRD_ROOT=$DIR/initramfs-root.cpio.gz
KERNEL_DEB=$DIR/$KPKG.deb
cp "$KSRC" "$KERNEL.new" && mv "$KERNEL.new" "$KERNEL"
mv "$APTDIR"/debs/"$KPKG"_*.deb "$KERNEL_DEB"
mv "$CPIO.gz" "$INITRD"
mv "$CPIO-modules.gz" "$INITRD_MODULES"
mv "$CPIO-root.gz" "$INITRD_ROOT"
for f in "$DIR"/Image-* "$DIR"/linux-image-*.deb; do
    [[ $f == "$KERNEL" || $f == "$KERNEL_DEB" ]] || rm -f "$f"
done
{
    echo "$WANT"
    date -u +'built: %Y-%m-%dT%H:%M:%SZ'
    for deb in "${debs[@]}"; do echo "deb: $(basename "$deb")"; done
    echo "out: KERNEL=$KERNEL"
    echo "out: INITRD=$INITRD"
    echo "out-modules: INITRD=$INITRD_MODULES"
    echo "out-root: INITRD=$INITRD_ROOT"
    echo "out: KERNEL_VERSION=$KVER"
    echo "out: KERNEL_DEB=$KERNEL_DEB"
} >"$STAMP.new"
mv "$STAMP.new" "$STAMP"
rm -rf "$STAGE" "$APTDIR"          # the lists are only needed to fetch
say "ready: $(stat -c %s "$KERNEL") bytes kernel, $(stat -c %s "$INITRD") bytes initramfs," \
    "$(stat -c %s "$INITRD_MODULES") with modules, $(stat -c %s "$INITRD_ROOT") for a root disk"
report
