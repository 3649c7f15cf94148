#!/usr/bin/env bash
# Build (once) guest 2 of xlat-system: a Debian trixie riscv64 root file
# system on an ext4 disk image, installed by debootstrap and finished inside
# the guest, that boots with systemd to a login prompt on the serial
# console. Prints shell-style KEY=VALUE lines on stdout:
#
#   DISK=.../trixie-riscv64.ext4    the raw ext4 image (boot it with
#                                   snapshot=on to keep it pristine)
#   KERNEL=... INITRD=... KERNEL_VERSION=...   from scripts/system-guest.sh
#                                   --root (its /init switches to root=)
#   APPEND='root=/dev/vda console=ttyS0'
#
#   scripts/system-disk.sh             build if needed, print the lines
#   scripts/system-disk.sh --force     rebuild the image from scratch
#   XLAT_SYSTEM=path/to/xlat-system    the emulator for the second stage
#                                      (default: build/xlat-system)
#
# How, in three steps, none needing a loop mount:
# 1. `debootstrap --foreign --variant=minbase` with systemd and login
#    downloads and unpacks trixie riscv64 into a staging tree on the host.
#    The kernel package's modules are added under /usr/lib/modules/VER with
#    modules.dep from the host's depmod, so udev in the guest can load any
#    driver. /etc gets fstab, hostname, an empty root password and a
#    first-boot script, /xlat-setup.
# 2. `mke2fs -d TREE` makes the ext4 image from the tree (the files keep
#    their owners: this script runs as root, as debootstrap must).
# 3. The image boots once under xlat-system with init=/xlat-setup, which
#    runs debootstrap's second stage (dpkg configures every package: this
#    is the slow part, many minutes under the interpreter) and powers off.
#    Its console goes to DIR/setup.log; the image is published only if the
#    script printed its completion line and the guest powered off cleanly
#    (panic=-1: a kernel panic reboots at once, which -no-reboot turns into
#    exit status 1 instead of a hang).
#
# Cached in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/system/disk behind a stamp
# written last (its first line names the package list, the setup script's
# hash and the kernel version; changing any rebuilds). Concurrent callers
# serialize on a lock. Diagnostics go to stderr.
#
# Exit status: 0 ready; 2 download failed; 1 otherwise.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
DIR=$CACHE/system/disk
STAMP=$DIR/.xlat-disk-stamp
DISK=$DIR/trixie-riscv64.ext4
XLAT_SYSTEM=${XLAT_SYSTEM:-$REPO/build/xlat-system}
SIZE=${XLAT_DISK_SIZE:-4G}
SETUP_TIMEOUT=${XLAT_SETUP_TIMEOUT:-7200}
APPEND='root=/dev/vda console=ttyS0'

# Beyond minbase: systemd as init, login and passwd for the console login,
# kmod for udev's module loading, procps and iproute2 to look around.
PACKAGES=(systemd-sysv udev kmod login passwd procps iproute2)

say() { echo "system-disk: $*" >&2; }

# The first-boot script (pid 1 after switch_root): debootstrap's second stage,
# then what a login on the serial console needs, then power off.
SETUP_SCRIPT='#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "xlat-setup: second stage"
mount -o remount,rw /
if /debootstrap/debootstrap --second-stage; then
    passwd -d root
    echo "xlat-setup: done"
else
    echo "xlat-setup: debootstrap --second-stage failed"
    tail -n 30 /debootstrap/debootstrap.log 2>/dev/null
fi
# Power off through the kernel: no init is there to ask. sysrq s, u and o
# sync, remount every file system read-only (even with daemons that the
# maintainer scripts started still holding files) and power off.
mountpoint -q /proc || mount -t proc proc /proc
sync
for key in s u o; do echo $key >/proc/sysrq-trigger; sleep 1; done
sleep 600'

guest_lines() { "$REPO/scripts/system-guest.sh" --root; }

# The stamp's first line for the guest lines $GUEST.
want() {
    local kver
    kver=$(sed -n 's/^KERNEL_VERSION=//p' <<<"$GUEST")
    echo "packages: ${PACKAGES[*]}; setup: $(printf %s "$SETUP_SCRIPT" | sha256sum | cut -c1-16); kernel: $kver; size: $SIZE"
}

report() {
    echo "DISK=$DISK"
    grep -v '^KERNEL_DEB=' <<<"$GUEST"
    echo "APPEND='$APPEND'"
}

FORCE=0
for arg in "$@"; do
    case $arg in
        --force) FORCE=1 ;;
        *) say "unknown option '$arg' (--force)"; exit 1 ;;
    esac
done

GUEST=$(guest_lines) || { say "scripts/system-guest.sh failed"; exit 2; }
WANT=$(want)
ready() { [[ -f $STAMP && -f $DISK ]] && [[ $(head -n 1 "$STAMP") == "$WANT" ]]; }
if [[ $FORCE -eq 0 ]] && ready; then report; exit 0; fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1' (apt-get install $2)"; exit 1; }; }
need debootstrap debootstrap
need mke2fs e2fsprogs
need depmod kmod
need dpkg-deb dpkg
need flock util-linux
[[ $(id -u) -eq 0 ]] || { say "debootstrap must run as root"; exit 1; }
[[ -x $XLAT_SYSTEM ]] || { say "no $XLAT_SYSTEM (make)"; exit 1; }

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [[ $FORCE -eq 0 ]] && ready; then report; exit 0; fi

KVER=$(sed -n 's/^KERNEL_VERSION=//p' <<<"$GUEST")
KERNEL=$(sed -n 's/^KERNEL=//p' <<<"$GUEST")
INITRD=$(sed -n 's/^INITRD=//p' <<<"$GUEST")
KERNEL_DEB=$(sed -n 's/^KERNEL_DEB=//p' <<<"$GUEST")

# ---- 1. the tree -----------------------------------------------------------------

TREE=$DIR/tree
LOG=$DIR/debootstrap.log
SCRIPT=
[[ -e /usr/share/debootstrap/scripts/trixie ]] || SCRIPT=/usr/share/debootstrap/scripts/sid
ok=0
for try in 1 2 3; do
    rm -rf "$TREE"
    say "debootstrap --foreign trixie riscv64 into $TREE (try $try/3, log $LOG)..."
    if debootstrap --foreign --arch=riscv64 --variant=minbase \
            --include="$(IFS=,; echo "${PACKAGES[*]}")" \
            trixie "$TREE" $SCRIPT >"$LOG" 2>&1; then
        ok=1
        break
    fi
    tail -n 5 "$LOG" >&2 || true
    sleep $((try * 5))
done
[[ $ok -eq 1 ]] || { say "could not download from Debian's archive (network down?)"; exit 2; }

say "adding the modules of $KVER..."
MODTMP=$DIR/kernel-pkg
rm -rf "$MODTMP"
dpkg-deb -x "$KERNEL_DEB" "$MODTMP"
mkdir -p "$TREE/usr/lib/modules"
cp -a "$MODTMP/usr/lib/modules/$KVER" "$TREE/usr/lib/modules/"
rm -rf "$MODTMP"
depmod -b "$TREE" "$KVER"
[[ -s $TREE/usr/lib/modules/$KVER/modules.dep ]] || { say "depmod wrote no modules.dep"; exit 1; }

echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$TREE/etc/fstab"
echo xlat >"$TREE/etc/hostname"
printf %s "$SETUP_SCRIPT" >"$TREE/xlat-setup"
chmod 0755 "$TREE/xlat-setup"

# ---- 2. the image ----------------------------------------------------------------

IMG=$DIR/stage.ext4
rm -f "$IMG"
say "mke2fs -d: $(du -sh "$TREE" | cut -f1) into a $SIZE ext4 image..."
mke2fs -q -F -t ext4 -L xlat-root -d "$TREE" "$IMG" "$SIZE"
rm -rf "$TREE"

# ---- 3. the second stage, inside the guest ----------------------------------------

SETUP_LOG=$DIR/setup.log
say "second stage inside xlat-system (log $SETUP_LOG, up to ${SETUP_TIMEOUT}s)..."
start=$(date +%s)
rc=0
timeout "$SETUP_TIMEOUT" "$XLAT_SYSTEM" -m 2G -nographic -no-reboot \
    -kernel "$KERNEL" -initrd "$INITRD" \
    -append "$APPEND init=/xlat-setup panic=-1" \
    -drive "file=$IMG,format=raw,if=virtio" \
    -device virtio-rng-device </dev/null >"$SETUP_LOG" 2>&1 || rc=$?
say "second stage: exit status $rc after $(($(date +%s) - start)) s"
if [[ $rc -ne 0 ]] || ! grep -q '^xlat-setup: done' "$SETUP_LOG"; then
    tail -n 30 "$SETUP_LOG" >&2
    say "the second stage did not finish (see $SETUP_LOG)"
    exit 1
fi
mv "$IMG" "$DISK"
{
    echo "$WANT"
    date -u +'built: %Y-%m-%dT%H:%M:%SZ'
    echo "setup seconds: $(($(date +%s) - start))"
} >"$STAMP.new"
mv "$STAMP.new" "$STAMP"
say "ready: $DISK"
report
