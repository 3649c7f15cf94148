#!/usr/bin/env bash
# Fetch (once) a Debian trixie source package with `apt-get source` and
# print the path of its unpacked tree (Debian's patches applied):
#
#   scripts/debian-source.sh PACKAGE UPSTREAM_VERSION
#   scripts/debian-source.sh xz-utils 5.8.1     # what bench/build builds
#
# The sources list is derived at run time from the machine's own, as
# peers.sh does (private-apt.sh: /etc/apt/sources.list.d/debian.sources with
# bookworm -> trixie, here with Types: deb-src), in a private apt state
# directory, so no archive host name is written into the repository and
# the host's apt is untouched. Of the trixie versions of PACKAGE whose
# upstream part is UPSTREAM_VERSION (e.g. 5.8.1-1+deb13u1 and a security
# update), the newest that the archive serves is taken (a mirror may list a
# version whose files it does not have); its .dsc, tarballs and the tree
# unpacked by dpkg-source -x are cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/xlat/src/PACKAGE-UPSTREAM_VERSION behind a
# stamp naming the Debian version, and reused from then on without asking
# the archive again (delete the directory to fetch anew).
#
# The tree is the reference copy: callers copy it before building in it.
# Diagnostics go to stderr, the path to stdout; the stamp's second line is
# the Debian version ("version: 5.8.1-1+deb13u1").
#
# Exit status: 0 ready; 2 the download failed (network, archive); 1
# anything else (missing tools, no such version).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/private-apt.sh"

PKG=${1:?usage: debian-source.sh PACKAGE UPSTREAM_VERSION}
UPSTREAM=${2:?usage: debian-source.sh PACKAGE UPSTREAM_VERSION}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
DIR=$CACHE/src/$PKG-$UPSTREAM
APTDIR=$CACHE/src/apt
STAMP=$DIR/.xlat-source-stamp
LOG=$CACHE/src/$PKG-apt.log
WANT="source: $PKG $UPSTREAM"

say() { echo "debian-source: $*" >&2; }

tree() { echo "$DIR/$PKG-$UPSTREAM"; }
ready() { [[ -f $STAMP && $(head -n 1 "$STAMP") == "$WANT" && -d $(tree) ]]; }

if ready; then tree; exit 0; fi

need() { command -v "$1" >/dev/null 2>&1 || { say "missing '$1' (apt-get install $2)"; exit 1; }; }
need apt-get apt
need dpkg-source dpkg-dev
need flock util-linux

mkdir -p "$CACHE/src"
exec 9>"$CACHE/src/.lock"
flock 9
if ready; then tree; exit 0; fi

private_apt_init "$APTDIR" amd64 deb-src || exit 1
APT=(apt-get "${APT_OPTS[@]}")

say "apt-get update (trixie deb-src, private state in $APTDIR, log $LOG)..."
private_apt_update "$LOG" || { say "apt-get update failed (network down?)"; exit 2; }

# Every trixie version of PKG with this upstream version, newest first.
mapfile -t versions < <(apt-cache "${APT_OPTS[@]}" showsrc "$PKG" 2>>"$LOG" |
    sed -n 's/^Version: //p' | grep -E "^([0-9]+:)?${UPSTREAM//./\\.}-" | sort -u |
    sort -r -V)
[[ ${#versions[@]} -gt 0 ]] || { say "trixie has no $PKG $UPSTREAM-* source (see $LOG)"; exit 1; }

STAGE=$DIR.new
got=
for v in "${versions[@]}"; do
    rm -rf "$STAGE"
    mkdir -p "$STAGE"
    say "apt-get source --download-only $PKG=$v ..."
    if (cd "$STAGE" && "${APT[@]}" source --download-only "$PKG=$v") >>"$LOG" 2>&1; then
        got=$v
        break
    fi
    say "  not served: $(grep -E '^E:' "$LOG" | tail -n 2 | head -n 1)"
done
[[ -n $got ]] || { say "no version of $PKG $UPSTREAM could be downloaded; see $LOG"; rm -rf "$STAGE"; exit 2; }

# apt checked the files' hashes against the signed index; unpack and
# apply Debian's patches.
dsc=$(ls "$STAGE"/*.dsc)
(cd "$STAGE" && dpkg-source --no-check -x "$(basename "$dsc")" "$PKG-$UPSTREAM") >>"$LOG" 2>&1 ||
    { say "dpkg-source -x $dsc failed; see $LOG"; exit 1; }
[[ -x $STAGE/$PKG-$UPSTREAM/configure ]] || { say "no configure in $STAGE/$PKG-$UPSTREAM"; exit 1; }
{
    echo "$WANT"
    echo "version: $got"
    date -u +'fetched: %Y-%m-%dT%H:%M:%SZ'
    (cd "$STAGE" && sha256sum -- *.dsc *.tar.*)
} >"$STAGE/.xlat-source-stamp"
rm -rf "$DIR"
mv "$STAGE" "$DIR"
say "ready: $(tree) ($PKG $got)"
tree
