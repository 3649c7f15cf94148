#!/usr/bin/env bash
# Guest 2 of xlat-system (`make check-system-full`, outside make check: the
# first run builds the disk, an hour under the interpreter; later boots take
# minutes): Debian trixie's kernel with a trixie root file system on
# virtio-blk (scripts/system-disk.sh), booted with systemd to a login prompt
# on the serial console. The test logs in as root, checks that systemd came
# up, that dpkg and apt work offline (the package database is consistent,
# a cached package reinstalls), that the disk is the root, and powers off
# through systemd (exit status 0). The disk is booted with snapshot=on, so
# the cached image stays pristine. Each phase's time goes to stdout.
# Lives in tests/full/, which tests/run.sh (make check) does not scan.
# Usage: tests/full/system_full.sh BUILD.
set -u
BUILD=${1:-build}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SYS=$BUILD/xlat-system
[[ -x $SYS ]] || { echo "FAIL $SYS is not built"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if ! guest=$(XLAT_SYSTEM=$SYS "$REPO/scripts/system-disk.sh" 2>"$TMP/disk.err"); then
    cat "$TMP/disk.err"
    echo "FAIL cannot build the guest disk (scripts/system-disk.sh failed)"
    exit 1
fi
val() { sed -n "s/^$1=//p" <<<"$guest"; }
KERNEL=$(val KERNEL)
INITRD=$(val INITRD)
DISK=$(val DISK)
APPEND=$(val APPEND | tr -d "'")

# Each command is typed at a fresh prompt (P), and its check looks past the
# terminal's escape sequences (bash's bracketed-paste mode wraps output).
P='expect root@xlat:~# '
cat > "$TMP/script" <<EOF
mark start
expect Welcome to .*Debian GNU/Linux
mark systemd
expect xlat login:
mark login-prompt
send root
$P
mark shell
send findmnt -n -o SOURCE,FSTYPE / ; echo host-\$(cat /etc/hostname)
expect /dev/vda\s+ext4\s+host-xlat
$P
send systemctl is-system-running --wait; systemctl --failed --no-legend --plain | cut -d' ' -f1
expect (running|degraded)\s
$P
send echo pid1=\$(cat /proc/1/comm)
expect pid1=systemd
$P
send dpkg --audit && echo audit-ok-\$((6*7))
expect audit-ok-42
$P
send dpkg-query -W -f='\${Status}\n' systemd dpkg apt | sort -u | sed 's/^/status: /'
expect status: install ok installed\s
$P
send apt-get check -q && echo apt-check-\$((6*7))
expect apt-check-42
$P
send deb=\$(ls /var/cache/apt/archives/*.deb | head -n 1); dpkg -i "\$deb" >/dev/null && echo reinstalled-\$((6*7))
expect reinstalled-42
$P
send apt-cache policy systemd | grep -c Installed | sed 's/^/installed: /'
expect installed: 1\s
$P
mark checks
send poweroff
exit 0
EOF

# run LABEL EMULATOR ARGS...: the script against one emulator; prints its
# phases' times.
run() {
    local label=$1 start end
    shift
    start=$(date +%s.%N)
    if python3 "$REPO/tests/tools/console.py" --timeout 900 --log "$TMP/$label.log" \
            --times "$TMP/$label.times" "$TMP/script" -- "$@" -nographic -m 1G \
            -kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" \
            -drive "file=$DISK,format=raw,if=none,id=hd,snapshot=on" \
            -device virtio-blk-device,drive=hd -device virtio-rng-device; then
        end=$(date +%s.%N)
        echo "ok   $label: systemd to a login prompt, logged in, checks, poweroff in" \
             "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", e - s }') s"
        awk '{ printf "     %-13s at %6.1f s\n", $1, $2 }' "$TMP/$label.times"
        return 0
    fi
    echo "FAIL $label: last lines of the console:"
    tail -n 40 "$TMP/$label.log"
    return 1
}

fail=0
run xlat-system "$SYS" || fail=1
# The same boot under QEMU 7.2 with Debian's OpenSBI, for the times beside
# (SYSTEM_FULL_QEMU=0 leaves it out).
FW=/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
if [[ ${SYSTEM_FULL_QEMU:-1} != 0 ]] && command -v qemu-system-riscv64 >/dev/null && [[ -f $FW ]]; then
    run qemu-system-riscv64 qemu-system-riscv64 -M virt -bios "$FW" || fail=1
fi
exit $fail
