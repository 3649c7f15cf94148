#!/usr/bin/env bash
# Print the path of Debian trixie's riscv64 busybox-static binary on stdout
# (diagnostics go to stderr).
#
# busybox-static is one of the packages of the test rootfs, so this only
# asks scripts/rootfs.sh for that tree (built once with debootstrap and
# cached in ${XDG_CACHE_HOME:-$HOME/.cache}/xlat; reused afterwards) and
# hands out its /usr/bin/busybox. It is a static binary: it runs without -L.
#
# Exit status: 0 ready; 2 the download failed (network down, archive
# unreachable); 1 anything else (missing tools, unexpected layout).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rc=0
ROOT=$("$REPO/scripts/rootfs.sh") || rc=$?
if [[ $rc -ne 0 ]]; then
    echo "fetch-busybox: scripts/rootfs.sh failed (status $rc)" >&2
    [[ $rc -eq 2 ]] && exit 2
    exit 1
fi
BUSYBOX=$ROOT/usr/bin/busybox
if [[ ! -x $BUSYBOX ]]; then
    echo "fetch-busybox: $BUSYBOX is missing from the rootfs" >&2
    exit 1
fi
echo "$BUSYBOX"
