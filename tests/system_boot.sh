#!/usr/bin/env bash
# Boot Debian trixie's linux-image-riscv64 with a busybox initramfs under
# xlat-system to a shell on the serial console, run commands there, check
# their output and power off (exit status 0): once with xlat's own SBI
# (-bios default), a virtio-blk disk and a virtio-rng (the initramfs loads
# Debian's virtio modules; the guest reads the disk's first sector, writes
# the second, which must be in the host file afterwards, and reads
# /dev/hwrng) and a virtio-net on the user network (the guest fetches a
# file from a host HTTP server through slirp, and the host fetches one from
# the guest's busybox httpd through hostfwd, and resolves a name through
# slirp's DNS); once under Debian's OpenSBI (-bios fw_dynamic.bin, the
# opensbi package); both through the JIT; and once more through the
# interpreter alone (-interp). The guest comes from scripts/system-guest.sh
# (fetched and cached). Usage: tests/system_boot.sh BUILD.
set -u
BUILD=${1:-build}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SYS=$BUILD/xlat-system
[[ -x $SYS ]] || { echo "FAIL $SYS is not built"; exit 1; }
if ! guest=$("$REPO/scripts/system-guest.sh" --modules 2>"${TMPDIR:-/tmp}/system-guest.err"); then
    cat "${TMPDIR:-/tmp}/system-guest.err"
    echo "cannot fetch the guest kernel and initramfs (scripts/system-guest.sh failed)"
    exit 77
fi
KERNEL=$(sed -n 's/^KERNEL=//p' <<<"$guest")
INITRD_MODULES=$(sed -n 's/^INITRD=//p' <<<"$guest")
INITRD=${INITRD_MODULES%-modules.cpio.gz}.cpio.gz
VERSION=$(sed -n 's/^KERNEL_VERSION=//p' <<<"$guest")
VERSION_RE=$(python3 -c 'import re, sys; print(re.escape(sys.argv[1]))' "$VERSION")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

DNS_NAME=$(sed -n 's|^URIs: *[a-z]*://\([^/: ]*\).*|\1|p' "${XLAT_HOST_SOURCES:-/etc/apt/sources.list.d/debian.sources}" \
           2>/dev/null | head -n 1)
if [[ -n $DNS_NAME ]] && ! getent hosts "$DNS_NAME" >/dev/null; then
    echo "note: the host cannot resolve $DNS_NAME, so the guest's DNS lookup is left out"
    DNS_NAME=
fi

cat > "$TMP/shell" <<EOF
expect xlat-initramfs: ready
expect ~ # 
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
EOF
{ cat "$TMP/shell"; echo 'send poweroff -f'; echo 'exit 0'; } > "$TMP/plain"
{
    cat "$TMP/shell"
    cat <<'EOF'
send dd if=/dev/vda bs=512 count=1 2>/dev/null | head -c 12; echo
expect XLAT-DISK-OK
send echo GUEST-WROTE-THIS | dd of=/dev/vda bs=512 seek=1 conv=sync,fsync 2>/dev/null; echo wrote=$?
expect wrote=0
send head -c 16 /dev/hwrng | wc -c
expect (?m)^16\s
send ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2 && echo net-$((40+2))
expect net-42
send wget -q -O- http://10.0.2.2:HTTP_PORT/hello.txt
expect HELLO-FROM-THE-HOST
send mkdir -p /www && echo GUEST-HTTPD-OK > /www/index.html && httpd -p 8080 -h /www && echo httpd-$((40+2))
expect httpd-42
host python3 FETCH_PY http://127.0.0.1:FWD_PORT/ GUEST-HTTPD-OK
EOF
    # Name resolution through slirp's DNS (10.0.2.3, which asks the host's
    # resolver), with a name the host resolves: its own archive's host,
    # read from its sources list at run time.
    if [[ -n $DNS_NAME ]]; then
        echo "send nslookup $DNS_NAME 10.0.2.3"
        echo "expect Name:\\s+${DNS_NAME//./\\.}\\s+Address:?\\s+[0-9a-f.:]+"
    fi
    echo 'send poweroff -f'
    echo 'exit 0'
} > "$TMP/disk"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP_PORT=$(free_port)
FWD_PORT=$(free_port)
# The host's side of hostfwd: fetch URL (retrying while the guest's
# server starts) and expect TEXT.
cat > "$TMP/fetch.py" <<'EOF'
import sys, time, urllib.request
url, want = sys.argv[1], sys.argv[2].encode() + b"\n"
body = b""
for attempt in range(30):
    try:
        body = urllib.request.urlopen(url, timeout=30).read()
        break
    except OSError as e:
        print(e)
        time.sleep(1)
print(body)
sys.exit(body != want)
EOF
sed -i "s/HTTP_PORT/$HTTP_PORT/; s/FWD_PORT/$FWD_PORT/; s|FETCH_PY|$TMP/fetch.py|" "$TMP/disk"
mkdir -p "$TMP/www"
echo HELLO-FROM-THE-HOST > "$TMP/www/hello.txt"
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$HTTP_PORT" >"$TMP/http.log" 2>&1 &
HTTP_PID=$!
trap 'kill $HTTP_PID 2>/dev/null; rm -rf "$TMP"' EXIT
truncate -s 16M "$TMP/disk.img"
printf 'XLAT-DISK-OK' | dd of="$TMP/disk.img" conv=notrunc 2>/dev/null

fail=0
boot() {   # label script initrd xlat-system-args...
    local label=$1 script=$2 initrd=$3 start end
    shift 3
    start=$(date +%s.%N)
    if python3 "$REPO/tests/tools/console.py" --timeout 300 --log "$TMP/$label.log" "$script" -- \
        "$SYS" -nographic -m 256M "$@" -kernel "$KERNEL" -initrd "$initrd" \
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

boot sbi+virtio "$TMP/disk" "$INITRD_MODULES" \
    -drive file="$TMP/disk.img",format=raw,if=none,id=hd -device virtio-blk-device,drive=hd \
    -device virtio-rng-device \
    -netdev user,id=n0,hostfwd=tcp:127.0.0.1:"$FWD_PORT"-:8080 -device virtio-net-device,netdev=n0
if [[ $(dd if="$TMP/disk.img" bs=512 skip=1 count=1 2>/dev/null | head -c 16) != GUEST-WROTE-THIS ]]; then
    echo "FAIL sbi+virtio: the guest's write to /dev/vda is not in the disk image"
    fail=1
fi
FW=/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
if [[ -f $FW ]]; then
    boot opensbi "$TMP/plain" "$INITRD" -bios "$FW"
else
    echo "FAIL $FW is missing (the opensbi package: scripts/deps.sh installs it)"
    fail=1
fi
# The interpreter alone, the golden model the JIT is checked against.
boot interp "$TMP/plain" "$INITRD" -interp
# Four harts on one, two and four host threads (sched.h): the same CPUs
# online and the same results of four parallel jobs.
cat > "$TMP/smp" <<'EOF'
expect xlat-initramfs: ready
expect ~ # 
send nproc; grep -c processor /proc/cpuinfo; cat /sys/devices/system/cpu/online
expect (?m)^4\s+4\s+0-3
send for i in 1 2 3 4; do (dd if=/dev/zero bs=64k count=64 2>/dev/null | md5sum > /tmp/j$i) & done; wait; cat /tmp/j* | sort -u | wc -l; cat /tmp/j1
expect (?m)^1\s+b5cfa9d6c8febd618f91ac2843d50a1c
send poweroff -f
exit 0
EOF
for threads in 1 2 4; do
    boot "smp4-t$threads" "$TMP/smp" "$INITRD" -smp 4 -accel xlat,threads=$threads
done
exit $fail
