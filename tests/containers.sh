#!/usr/bin/env bash
# tests/containers.sh: xlat as the riscv64 runner of podman (issue 16), the
# way qemu-user-static is used: registered with binfmt_misc (flags F, so the
# static binary is opened now and works inside any container root), never
# named on a command line. Every step runs once with Debian's
# qemu-riscv64-static registered (the reference) and once with
# BUILD/xlat-static registered with the same magic, mask and flags; stdout
# and the exit status must be equal, and each step is timed (wall clock).
#   Usage: tests/containers.sh BUILD_DIR        (make check-containers)
#
# Steps (tests/containers/ holds the sources):
#   shell    podman run IMAGE sh -c 'uname -m; echo $((6*7)) ...'
#   python3  podman run IMAGE python3 /src/work.py
#   gcc      podman run IMAGE sh -c 'gcc-14 -O2 hello.c ... && ./hello'
#   build    podman build of tests/containers/Containerfile (FROM IMAGE,
#            RUN steps compile and run hello.c, run work.py), then
#            podman run of the built image's CMD
#
# Setup, all of it private to this test:
# - podman, runc and qemu-user-static from Debian's archive (apt-get, only
#   when missing; exit 77 if they cannot be installed, or if installing
#   would remove a package, e.g. qemu-user-binfmt, which conflicts).
# - podman's storage under ${XDG_CACHE_HOME:-~/.cache}/xlat/podman (its own
#   --root, --runroot, --tmpdir and storage.conf; the user's podman storage
#   is never touched). The image IMAGE=localhost/xlat-trixie-riscv64 is
#   imported from scripts/rootfs.sh's tree once and kept, labelled with a
#   hash of the rootfs stamp, so re-runs reuse it; everything else the test
#   creates (containers, the built image) is removed.
# - On this kind of host (root without systemd and without
#   CAP_SYS_RESOURCE, hybrid cgroup v1/v2) podman needs: --runtime runc
#   (crun 1.8 stops at "cgroups in hybrid mode not supported"), explicit
#   --ulimit nofile=N:N --ulimit nproc=N:N at or below the hard limits
#   (podman's defaults, nofile=1048576 and its nproc, are refused:
#   "error setting rlimit type 7: operation not permitted"),
#   --cgroup-manager cgroupfs, --events-backend file and --network none.
# - binfmt_misc: mounted if it is not (and unmounted at the end). The
#   kernel tries the newest entry first, and the first that matches wins;
#   every other enabled entry that matches riscv64 ELF files
#   (qemu-user-binfmt's qemu-riscv64, an installed xlat-riscv64) is
#   disabled for the run and enabled again at exit, and only one of our two
#   entries is registered at a time. /tmp/xlat-binfmt.lock serializes
#   this with tests/binfmt.sh.
#
# Environment: XLAT_CT_XLAT=PATH registers another static binary in
# xlat's place (e.g. to try the harness); XLAT_CT_RUNS=N runs every step N
# times per emulator, interleaved (qemu, xlat, qemu, xlat ...), and the
# table shows medians; XLAT_CT_SHOW=1 prints each step's output;
# XLAT_CT_FLAGS overrides xlat's binfmt flags (default: those of Debian's
# /usr/lib/binfmt.d/qemu-riscv64.conf, OPF); XLAT_CT_TIMEOUT limits each
# podman command (seconds, default 900); XLAT_CT_DRIVER=vfs where overlay
# cannot work.
#
# Exit: 0 all outputs equal; 1 any difference or failure; 77 podman,
# binfmt_misc or the rootfs is not available (the reason on the last line).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "containers: no build dir ${1:-build}"; exit 1; }
XLAT_STATIC=${XLAT_CT_XLAT:-$BUILD/xlat-static}
RUNS=${XLAT_CT_RUNS:-1}
STEP_TIMEOUT=${XLAT_CT_TIMEOUT:-900}
DRIVER=${XLAT_CT_DRIVER:-overlay}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xlat
PD=$CACHE/podman/$DRIVER
IMAGE=localhost/xlat-trixie-riscv64:latest
BUILT=localhost/xlat-ct-build:$$
BINFMT=/proc/sys/fs/binfmt_misc
QEMU_CONF=/usr/lib/binfmt.d/qemu-riscv64.conf
SRC=$REPO/tests/containers

say() { echo "containers: $*"; }
skip() { say "skipped: $*"; exit 77; }
die() { say "$*"; exit 1; }

# It runs build/xlat-static, the same in the plain and the sanitizer suite.
[[ -z ${XLAT_SAN_SUITE:-} ]] || skip "the static build it runs is not the sanitizer build (the plain suite runs it)"
[[ $(id -u) = 0 ]] || skip "needs root (binfmt_misc registration, rootful podman)"
mkdir -p "$CACHE" || die "cannot create $CACHE"
[[ -x $XLAT_STATIC ]] || die "$XLAT_STATIC is not built (make static)"
# F pins the interpreter's own file, but a dynamic one would still look
# for its loader and libc inside the container's root.
if ! file -L "$XLAT_STATIC" | grep -qE 'static-pie linked|statically linked'; then
    die "$XLAT_STATIC is not statically linked: $(file -L "$XLAT_STATIC")"
fi

# ---- Packages --------------------------------------------------------------

PKGS=(podman runc qemu-user-static)
installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]; }
missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    sim=$(apt-get install -s --no-install-recommends "${missing[@]}" 2>&1) || {
        apt-get update -q >/dev/null 2>&1
        sim=$(apt-get install -s --no-install-recommends "${missing[@]}" 2>&1)
    } || skip "cannot install ${missing[*]}: $(tail -n 1 <<<"$sim")"
    removes=$(sed -n 's/^Remv \([^ ]*\).*/\1/p' <<<"$sim" | tr '\n' ' ')
    [[ -z $removes ]] || skip "installing ${missing[*]} would remove ${removes% }"
    apt-get install -y -q --no-install-recommends "${missing[@]}" >"$CACHE/containers-apt.log" 2>&1 ||
        skip "apt-get install ${missing[*]} failed: $(tail -n 1 "$CACHE/containers-apt.log")"
fi
[[ -r $QEMU_CONF ]] || skip "$QEMU_CONF missing (qemu-user-static)"
QEMU_LINE=$(grep '^:qemu-riscv64:' "$QEMU_CONF") || skip "no qemu-riscv64 entry in $QEMU_CONF"
QEMU_INTERP=$(cut -d: -f7 <<<"$QEMU_LINE")
FLAGS=${XLAT_CT_FLAGS:-$(cut -d: -f8 <<<"$QEMU_LINE")}
[[ -x $QEMU_INTERP ]] || skip "$QEMU_INTERP (from $QEMU_CONF) is not executable"

# ---- The rootfs ------------------------------------------------------------

ROOT=$("$REPO/scripts/rootfs.sh" 2>"$CACHE/containers-rootfs.log") ||
    skip "the riscv64 rootfs is not available: $(tail -n 1 "$CACHE/containers-rootfs.log")"
KEY=$(sha256sum <"$ROOT/.xlat-rootfs-stamp" | cut -c1-16)-import1

# ---- Private podman --------------------------------------------------------

mkdir -p "$PD" || die "cannot create $PD"
# One run at a time in this storage.
exec 9>"$PD/lock"
flock -w 3600 9 || die "another tests/containers.sh holds $PD/lock"
cat >"$PD/storage.conf" <<EOF
# Written by tests/containers.sh: this test's podman storage only.
[storage]
driver = "$DRIVER"
graphroot = "$PD/root"
runroot = "$PD/run"
EOF
export CONTAINERS_STORAGE_CONF=$PD/storage.conf
export TMPDIR=$PD/tmp-build
mkdir -p "$TMPDIR"
PODMAN=(podman --root "$PD/root" --runroot "$PD/run" --tmpdir "$PD/tmp"
        --storage-driver "$DRIVER" --cgroup-manager cgroupfs
        --events-backend file --runtime runc)
lim() { local h; h=$(ulimit -H "$1"); [[ $h = unlimited || $h -gt 4096 ]] && h=4096; echo "$h"; }
NOFILE=$(lim -n) NPROC=$(lim -u)
# For both podman run and podman build.
CTR=(--platform linux/riscv64 --pull=never --network none
     --ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")
T=(timeout -k 10 "$STEP_TIMEOUT")

WORK=$(mktemp -d "${TMPDIR}/xlat-containers.XXXXXX")
mounted=0
disabled=()
registered=
cleanup() {
    [[ -n $registered && -e $BINFMT/$registered ]] && echo -1 >"$BINFMT/$registered"
    local e
    for e in "${disabled[@]}"; do [[ -e $BINFMT/$e ]] && echo 1 >"$BINFMT/$e"; done
    [[ $mounted = 1 ]] && umount "$BINFMT" 2>/dev/null
    "${PODMAN[@]}" rm -af >/dev/null 2>&1
    "${PODMAN[@]}" rmi -f "$BUILT" >/dev/null 2>&1
    "${PODMAN[@]}" image prune -f >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Stale state from an interrupted run: no container of ours survives it.
"${PODMAN[@]}" rm -af >/dev/null 2>&1
if ! "${PODMAN[@]}" info >"$WORK/info" 2>&1; then
    skip "podman cannot start here: $(grep -m1 -i error "$WORK/info" || tail -n 1 "$WORK/info")"
fi

have=$("${PODMAN[@]}" image inspect --format '{{index .Labels "xlat.rootfs"}}' "$IMAGE" 2>/dev/null)
if [[ $have != "$KEY" ]]; then
    say "importing $ROOT as $IMAGE (once per rootfs)"
    "${PODMAN[@]}" rmi -f "$IMAGE" >/dev/null 2>&1
    # Not imported: the downloaded .debs, debootstrap's leftovers, and
    # whatever other tests left in the tree's /tmp.
    if ! tar -C "$ROOT" --exclude=./.xlat-rootfs-stamp --exclude=./debootstrap \
            --exclude='./var/cache/apt/archives/*.deb' --exclude='./tmp/*' -c . |
         "${PODMAN[@]}" import -q --os linux --arch riscv64 \
            --change "LABEL xlat.rootfs=$KEY" --change 'CMD ["/bin/bash"]' \
            - "$IMAGE" >"$WORK/import" 2>&1; then
        cat "$WORK/import"
        die "podman import failed"
    fi
fi
"${PODMAN[@]}" image prune -f >/dev/null 2>&1

# ---- binfmt_misc -----------------------------------------------------------

# Registrations are serialized with the other tests that make them
# (tests/binfmt.sh) through this lock, held until exit: an entry of theirs
# (newer, so tried first) would take over our containers' programs, and a
# test that mounted binfmt_misc unmounts it, with our entry, as it ends.
exec 8>/tmp/xlat-binfmt.lock
flock -w 900 8 || die "another test held /tmp/xlat-binfmt.lock for 15 minutes"
if [[ ! -e $BINFMT/register ]]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" 2>"$WORK/err" ||
        skip "cannot mount binfmt_misc: $(cat "$WORK/err")"
    mounted=1
fi
[[ -w $BINFMT/register ]] || skip "$BINFMT/register is not writable"
[[ $(cat "$BINFMT/status") = enabled ]] || skip "binfmt_misc is disabled ($BINFMT/status)"
RV_MAGIC=7f454c460201010000000000000000000200f300
for e in "$BINFMT"/*; do
    e=${e##*/}
    [[ $e = register || $e = status ]] && continue
    if grep -qx enabled "$BINFMT/$e" && grep -qx "magic $RV_MAGIC" "$BINFMT/$e"; then
        echo 0 >"$BINFMT/$e" && disabled+=("$e") && say "disabled $e for the run"
    fi
done

# register EMU: make EMU (qemu or xlat) the one handler of riscv64 ELF.
register() {
    [[ -n $registered ]] && echo -1 >"$BINFMT/$registered"
    registered=xlat-ct-$1-$$
    case $1 in
    qemu) printf '%s\n' "${QEMU_LINE/#:qemu-riscv64:/:$registered:}" >"$BINFMT/register" ||
              die "cannot register $QEMU_INTERP" ;;
    xlat) "$REPO/scripts/xlat-binfmt" --install --name "$registered" --xlat "$XLAT_STATIC" \
              --flags "$FLAGS" >"$WORK/reg" 2>&1 ||
              { cat "$WORK/reg"; die "scripts/xlat-binfmt could not register $XLAT_STATIC"; } ;;
    esac
    grep -qx enabled "$BINFMT/$registered" && grep -qx "magic $RV_MAGIC" "$BINFMT/$registered" ||
        { cat "$BINFMT/$registered"; die "$registered: not enabled with riscv64's magic"; }
}

# ---- Steps -----------------------------------------------------------------

STEPS=(shell python3 gcc build)
step_cmd() {
    local run=("${T[@]}" "${PODMAN[@]}" run --rm "${CTR[@]}" -v "$SRC:/src:ro")
    case $1 in
    shell)   "${run[@]}" "$IMAGE" sh -c 'uname -m; echo $((6*7)); id -un; ls /usr/bin/gcc-14; sh -c "echo \$0 \$1" zero one' ;;
    python3) "${run[@]}" "$IMAGE" python3 /src/work.py arg ;;
    gcc)     "${run[@]}" "$IMAGE" sh -c 'cd /tmp && gcc-14 -O2 -Wall -o hello /src/hello.c -lm && ./hello run "two words"' ;;
    build)   "${T[@]}" "${PODMAN[@]}" build --no-cache --layers=false "${CTR[@]}" \
                 -f "$SRC/Containerfile" -t "$BUILT" "$SRC" &&
             "${T[@]}" "${PODMAN[@]}" run --rm "${CTR[@]}" "$BUILT" &&
             "${PODMAN[@]}" rmi "$BUILT" >/dev/null ;;
    esac
}
# What is compared of a build's output: not the layer and image ids.
normalize() {
    sed -E '/^--> [0-9a-f]+$/d; /^[0-9a-f]{64}$/d; s/^(COMMIT|Successfully tagged) .*/\1/' "$1"
}

now() { date +%s.%N; }
declare -A SECS
for ((r = 1; r <= RUNS; r++)); do
    for emu in qemu xlat; do
        register "$emu"
        for s in "${STEPS[@]}"; do
            out=$WORK/$s.$emu.$r
            t0=$(now)
            step_cmd "$s" >"$out.raw" 2>"$out.err"
            echo $? >"$out.rc"
            t1=$(now)
            SECS[$s.$emu.$r]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
            normalize "$out.raw" >"$out"
        done
    done
done
echo -1 >"$BINFMT/$registered"
registered=

# ---- Compare and report ----------------------------------------------------

failed=0
for s in "${STEPS[@]}"; do
    for ((r = 1; r <= RUNS; r++)); do
        q=$WORK/$s.qemu.$r x=$WORK/$s.xlat.$r
        if [[ $(cat "$q.rc") != 0 ]]; then
            say "FAIL $s (run $r): the reference (qemu-riscv64-static) failed, status $(cat "$q.rc")"
            head -n 20 "$q.err" | sed 's/^/    qemu stderr: /'
            failed=$((failed + 1))
        elif [[ $(cat "$q.rc") != $(cat "$x.rc") ]] || ! cmp -s "$q" "$x"; then
            say "FAIL $s (run $r): qemu status $(cat "$q.rc"), xlat status $(cat "$x.rc")"
            diff -u --label qemu --label xlat "$q" "$x" | head -n 30 | sed 's/^/    /'
            head -n 20 "$x.err" | sed 's/^/    xlat stderr: /'
            failed=$((failed + 1))
        elif ((r == 1)); then
            say "ok   $s ($(wc -l <"$q") lines equal)"
            [[ -n ${XLAT_CT_SHOW:-} ]] && sed 's/^/    /' "$q"
        fi
    done
done

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
printf '%-10s %12s %12s %8s\n' step "qemu (s)" "xlat (s)" qemu/xlat
tq=0 tx=0
for s in "${STEPS[@]}"; do
    q=$(for ((r = 1; r <= RUNS; r++)); do echo "${SECS[$s.qemu.$r]}"; done | median)
    x=$(for ((r = 1; r <= RUNS; r++)); do echo "${SECS[$s.xlat.$r]}"; done | median)
    tq=$(awk -v a="$tq" -v b="$q" 'BEGIN { print a + b }') tx=$(awk -v a="$tx" -v b="$x" 'BEGIN { print a + b }')
    printf '%-10s %12.2f %12.2f %8s\n' "$s" "$q" "$x" "$(awk -v a="$q" -v b="$x" 'BEGIN { printf "%.1fx", a / b }')"
done
printf '%-10s %12.2f %12.2f %8s\n' total "$tq" "$tx" "$(awk -v a="$tq" -v b="$tx" 'BEGIN { printf "%.1fx", a / b }')"
echo "($( ((RUNS > 1)) && echo "medians of $RUNS interleaved runs; " )$("$(readlink -f "$QEMU_INTERP")" --version | head -n 1); xlat-static of $(date -u -r "$XLAT_STATIC" +'%F %H:%M UTC') (HEAD $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)); $(podman --version); binfmt flags: qemu $(cut -d: -f8 <<<"$QEMU_LINE"), xlat $FLAGS)"
echo "containers: $((${#STEPS[@]} * RUNS)) steps compared; $failed differ"
((failed == 0))
