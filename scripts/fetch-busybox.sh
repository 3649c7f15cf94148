#!/usr/bin/env bash
# Fetch Debian trixie's riscv64 busybox-static and print the path of the
# binary on stdout (diagnostics go to stderr).
#
# Real riscv64 programs come from Debian's riscv64 archive, fetched with
# debootstrap's first stage and its default mirror. The result is cached
# outside the repository, in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat, behind a
# stamp file, so every run after the first is instant. Concurrent callers
# (the demo, several tests) serialize on a lock file.
#
# Exit status: 0 fetched (or cached); 2 the download failed (network down,
# archive unreachable); 1 anything else (missing tools, unexpected layout).
set -euo pipefail

CACHE=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xlat
ROOT=$CACHE/trixie-riscv64          # debootstrap target
BUSYBOX=$CACHE/bin/busybox           # the binary we hand out
STAMP=$CACHE/busybox.stamp
TRIES=${XLAT_FETCH_TRIES:-3}

say() { echo "fetch-busybox: $*" >&2; }

if [[ -f $STAMP && -x $BUSYBOX ]]; then
    echo "$BUSYBOX"
    exit 0
fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1' (run scripts/deps.sh)"; exit 1; }; }
need debootstrap
need dpkg-deb
[[ $(id -u) -eq 0 ]] || { say "debootstrap must run as root"; exit 1; }

mkdir -p "$CACHE/bin"
exec 9>"$CACHE/fetch.lock"
flock 9
# Another caller may have finished while we waited for the lock.
if [[ -f $STAMP && -x $BUSYBOX ]]; then
    echo "$BUSYBOX"
    exit 0
fi

# Debian 12's debootstrap knows trixie (scripts/trixie -> sid); fall back
# to the sid script by name if an older one does not.
SCRIPT=
if [[ ! -e /usr/share/debootstrap/scripts/trixie ]]; then
    SCRIPT=sid
fi

# bookworm's debian-archive-keyring carries trixie's release keys, so the
# Release file is verified as usual (no --no-check-gpg).
log=$CACHE/debootstrap.log
ok=0
for ((try = 1; try <= TRIES; try++)); do
    say "downloading trixie riscv64 base + busybox-static (try $try/$TRIES)..."
    # A failed try may leave a half-unpacked target; start it again but keep
    # the .debs already downloaded (debootstrap reuses them when valid).
    if [[ -d $ROOT ]]; then
        find "$ROOT" -mindepth 1 -maxdepth 1 ! -name var -exec rm -rf {} +
    fi
    # The first stage downloads the .debs into var/cache/apt/archives and
    # unpacks the base; we only take busybox from its .deb.
    # The time limit keeps a hanging network (wget retries for long) from
    # stalling a test run.
    if timeout 900 debootstrap --foreign --arch=riscv64 --variant=minbase \
            --include=busybox-static trixie "$ROOT" $SCRIPT >"$log" 2>&1; then
        ok=1
        break
    fi
    say "debootstrap failed; last lines of $log:"
    tail -n 5 "$log" >&2 || true
    ((try < TRIES)) && sleep $((try * 5))
done
if [[ $ok -ne 1 ]]; then
    if grep -qiE "couldn't download|failed getting release|unable to resolve|could not resolve|connection|temporary failure|timed out|download" "$log"; then
        say "could not download from Debian's archive ($TRIES tries; network down?)"
        exit 2
    fi
    say "debootstrap failed for another reason; see $log"
    exit 1
fi

deb=$(ls "$ROOT"/var/cache/apt/archives/busybox-static_*_riscv64.deb 2>/dev/null | head -n 1)
if [[ -z $deb ]]; then
    say "busybox-static .deb not found under $ROOT/var/cache/apt/archives"
    exit 1
fi
tmp=$(mktemp -d "$CACHE/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
src=
for p in "$tmp/bin/busybox" "$tmp/usr/bin/busybox"; do
    [[ -x $p ]] && src=$p && break
done
if [[ -z $src ]]; then
    say "no busybox binary inside $deb"
    exit 1
fi
if command -v file >/dev/null && ! file -L "$src" | grep -q 'RISC-V'; then
    say "$src is not a RISC-V binary: $(file -L "$src")"
    exit 1
fi
cp "$src" "$BUSYBOX.new" && mv "$BUSYBOX.new" "$BUSYBOX"
basename "$deb" >"$STAMP"
say "cached $(cat "$STAMP") as $BUSYBOX"
echo "$BUSYBOX"
