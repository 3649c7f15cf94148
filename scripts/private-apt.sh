# Sourced by the scripts that fetch Debian trixie packages (peers.sh,
# system-guest.sh, debian-source.sh): a private apt state directory whose
# sources list is the host's own (/etc/apt/sources.list.d/debian.sources,
# or $XLAT_HOST_SOURCES) with bookworm turned into trixie, so no archive
# host name is written into the repository and the host's apt is never
# touched.
#
#   private_apt_init DIR ARCH [TYPES]
#                                empty DIR, write its sources list, and set
#                                APT_OPTS, the options apt-get and apt-cache
#                                need to use it for packages of ARCH. TYPES
#                                (default: the host's, normally "deb") is
#                                the sources' Types: "deb-src" for
#                                `apt-get source`.
#   private_apt_update LOG       apt-get update with APT_OPTS, up to three
#                                tries (the archive is sometimes slow);
#                                1 if all failed, LOG has the last one's output.
# Needs a say() function for warnings.

HOST_SOURCES=${XLAT_HOST_SOURCES:-/etc/apt/sources.list.d/debian.sources}

private_apt_init() {
    local dir=$1 arch=$2 types=${3:-}
    [[ -r $HOST_SOURCES ]] || { say "cannot read $HOST_SOURCES (need a Debian host)"; return 1; }
    grep -q bookworm "$HOST_SOURCES" || say "warning: $HOST_SOURCES names no bookworm suite"
    rm -rf "$dir"
    mkdir -p "$dir"/{state/lists/partial,cache/archives/partial,sources.list.d,preferences.d}
    : >"$dir/state/status"
    if [[ -n $types ]]; then
        sed -e 's/bookworm/trixie/g' -e "s/^Types:.*/Types: $types/" "$HOST_SOURCES"
    else
        sed 's/bookworm/trixie/g' "$HOST_SOURCES"
    fi >"$dir/sources.list.d/debian.sources"
    APT_OPTS=(-q
         -o Dir::State="$dir/state"
         -o Dir::State::status="$dir/state/status"
         -o Dir::Cache="$dir/cache"
         -o Dir::Etc::SourceList=/dev/null
         -o Dir::Etc::SourceParts="$dir/sources.list.d"
         -o Dir::Etc::Preferences=/dev/null
         -o Dir::Etc::PreferencesParts="$dir/preferences.d"
         -o APT::Architecture="$arch"
         -o APT::Architectures::="$arch"
         -o APT::Install-Recommends=false
         -o APT::Get::AllowUnauthenticated=false)
}

private_apt_update() {
    local log=$1 try
    for try in 1 2 3; do
        apt-get "${APT_OPTS[@]}" update >"$log" 2>&1 && return 0
        tail -n 5 "$log" >&2
        sleep $((try * 5))
    done
    return 1
}
