#!/usr/bin/env bash
# Boot Debian trixie's linux-image-riscv64 with a busybox initramfs under
# xlat-system to a shell on the serial console, run commands there, check
# their output and power off (exit status 0): once with xlat's own SBI
# (-bios default) and once under Debian's OpenSBI (-bios fw_dynamic.bin,
# the opensbi package). The guest comes from scripts/system-guest.sh
# (fetched and cached). Usage: tests/system_boot.sh BUILD.
set -u
BUILD=${1:-build}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SYS=$BUILD/xlat-system
[[ -x $SYS ]] || { echo "FAIL $SYS is not built"; exit 1; }
if ! guest=$("$REPO/scripts/system-guest.sh" 2>"${TMPDIR:-/tmp}/system-guest.err"); then
    cat "${TMPDIR:-/tmp}/system-guest.err"
    echo "cannot fetch the guest kernel and initramfs (scripts/system-guest.sh failed)"
    exit 77
fi
KERNEL=$(sed -n 's/^KERNEL=//p' <<<"$guest")
INITRD=$(sed -n 's/^INITRD=//p' <<<"$guest")
VERSION=$(sed -n 's/^KERNEL_VERSION=//p' <<<"$guest")
VERSION_RE=$(python3 -c 'import re, sys; print(re.escape(sys.argv[1]))' "$VERSION")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/script" <<EOF
expect xlat-initramfs: ready
expect # $
send echo sum=\$((6*7))
expect sum=42
send uname -r; uname -m
expect $VERSION_RE\s+riscv64
send grep -c processor /proc/cpuinfo; grep -m1 isa /proc/cpuinfo
expect (?m)^1\s+isa\s+: rv64imafdc
send cat /sys/class/rtc/rtc0/name 2>&1; date +%Y
expect goldfish.*\s+20[0-9][0-9]
send cat /proc/interrupts | grep -c -i plic
expect (?m)^[1-9]
send poweroff -f
exit 0
EOF

fail=0
boot() {   # label xlat-system-args...
    local label=$1 start end
    shift
    start=$(date +%s.%N)
    if python3 "$REPO/tests/tools/console.py" --timeout 300 --log "$TMP/$label.log" "$TMP/script" -- \
        "$SYS" -nographic -m 256M "$@" -kernel "$KERNEL" -initrd "$INITRD" \
        -append "console=ttyS0 quiet"; then
        end=$(date +%s.%N)
        awk -v l="$label" -v s="$start" -v e="$end" \
            'BEGIN { printf "ok   %-10s booted, ran the commands and powered off in %.1f s\n", l, e - s }'
    else
        echo "FAIL $label: last lines of the console:"
        tail -n 25 "$TMP/$label.log"
        fail=1
    fi
}

boot sbi
FW=/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
if [[ -f $FW ]]; then
    boot opensbi -bios "$FW"
else
    echo "FAIL $FW is missing (the opensbi package: scripts/deps.sh installs it)"
    fail=1
fi
exit $fail
