#!/usr/bin/env bash
# The persistent translation cache (src/exec/pcache.c), differentially: a
# program dlopen's a library of ours (tests/pcache/lib.c: globals, a
# function-pointer table, a jump table) at an address that changes with its
# argument, and every run must print what a run without the cache prints,
# whatever state the cache is in:
#   cold, warm at the same address, warm at other addresses (translations
#   moved), warm with every cache file corrupted (bit flips in the records,
#   in the header, a truncated file, another xlat build's header), owned by
#   another user (refused), a cache directory of another user's (the cache
#   is off), eight processes sharing one cold directory at once, and a
#   library replaced on disk at the same path: rebuilt (a new build id),
#   patched in place keeping its build id and size, and without a build id.
# -d stats shows that warm runs install translations (and move them), and
# -d cache why a file or a record is not used.
# Usage: tests/pcache.sh BUILD. Exit 0 = pass.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
XLAT=$BUILD/xlat
CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
SYSROOT=/usr/riscv64-linux-gnu
command -v "$CC" >/dev/null || { echo "$CC is not installed"; exit 77; }
TMP=$(mktemp -d)
trap 'chmod -R u+rwx "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
export XLAT_CACHE_DIR=$TMP/cache
unset XLAT_CACHE

lib() {   # lib OUT VALUE [cc flags...]
    local out=$1 value=$2
    shift 2
    "$CC" -O2 -shared -fPIC -DVALUE="$value" "$@" -o "$out" "$REPO/tests/pcache/lib.c" || exit 1
}
lib "$TMP/libt.so" 1
"$CC" -O2 -o "$TMP/main" "$REPO/tests/pcache/main.c" -ldl || exit 1

fail=0
bad() { echo "pcache: $*"; fail=1; }
run() {   # run PAD [xlat options...]: the program's output, stderr in $TMP/err
    local pad=$1
    shift
    "$XLAT" -L "$SYSROOT" "$@" "$TMP/main" "$TMP/libt.so" "$pad" 2>"$TMP/err"
}
counter() { sed -n "s/^xlat stats: $1 *\([0-9]*\).*/\1/p" "$TMP/err" | tail -n 1; }
moved() { sed -n 's/^xlat stats: blocks from the cache *[0-9]* (\([0-9]*\) moved).*/\1/p' "$TMP/err" | tail -n 1; }
check() { # check LABEL EXPECTED PAD [xlat options...]
    local label=$1 want=$2
    shift 2
    local got
    got=$(run "$@")
    [[ $got == "$want" ]] || { bad "$label: printed '$got', want '$want'"; head -5 "$TMP/err"; }
}

want=$(XLAT_CACHE=0 run 0)
[[ $want == "value 1 work "* ]] || { echo "pcache: the program failed without the cache: $want"; exit 1; }

# Cold, then warm at the same address and at two others.
rm -rf "$XLAT_CACHE_DIR"
check cold "$want" 0 -d stats
[[ $(counter 'blocks from the cache') == 0 ]] || bad "cold: blocks came from the cache"
check warm "$want" 0 -d stats
[[ $(counter 'blocks from the cache') -gt 100 ]] || bad "warm: only '$(counter 'blocks from the cache')' blocks from the cache"
# A few blocks become hot only in warm runs; the files are small, so they
# are written too and later starts translate nothing (not one in 32 of the
# file's: without the small-file rule each start translated 10 again).
for i in 1 2 3 4 5 6; do
    check "warm run $i" "$want" 0 -d stats
done
[[ $(counter 'blocks translated') -le 2 ]] ||
    bad "warm, 7 runs on: still '$(counter 'blocks translated')' blocks translated at each start"
# The library preloaded moves libc too (it is mapped before it). Without
# start images (made for one address, pcache_image.c), so that each block
# is moved.
for pad in 3 9; do
    check "warm, library $pad pages lower, libc below it" "$want" "$pad" -d stats \
        -E LD_PRELOAD="$TMP/libt.so" --tune no-cache-image
    [[ $(moved) -gt 50 ]] || bad "warm at pad $pad: '$(moved)' blocks moved, want > 50"
done
perm=$(stat -c %a "$XLAT_CACHE_DIR")
[[ $perm == 700 ]] || bad "the directory is $perm, want 700"
for f in "$XLAT_CACHE_DIR"/*.xc; do
    [[ $(stat -c %a "$f") == 600 ]] || bad "$f is $(stat -c %a "$f"), want 600"
done
ls "$XLAT_CACHE_DIR"/.*.tmp >/dev/null 2>&1 && bad "temporary files left behind"

# Without -d stats from here (its files are apart): warm the plain ones.
check "cold (plain)" "$want" 0
check "warm (plain)" "$want" 0

# Start images: the program's blocks of a file installed at once where
# the file is where it was; elsewhere the translations one by one.
check "warm (plain), images" "$want" 0 -d cache
grep -Eq 'libt.so: image: installed [1-9][0-9]* of' "$TMP/err" || bad "warm: no image installed"
check "library 5 pages lower, images" "$want" 5 -d cache,stats
grep -q 'libt.so: image: not used: made for another address' "$TMP/err" ||
    bad "moved library: its image was not refused"
[[ $(moved) -gt 20 ]] || bad "moved library: '$(moved)' blocks moved, want > 20"
check "back in place, images" "$want" 0 -d cache
grep -Eq 'libt.so: image: installed [1-9][0-9]* of' "$TMP/err" || bad "back in place: no image installed"
images() { ls "$XLAT_CACHE_DIR"/*-*-*-*.xc; }
[[ $(images | wc -l) -ge 3 ]] || bad "fewer than 3 image files: $(images | tr '\n' ' ')"
for mode in flip truncate; do
    python3 - "$mode" $(images) <<'PY'
import random, sys
mode, files = sys.argv[1], sys.argv[2:]
rng = random.Random(7)
for f in files:
    b = bytearray(open(f, "rb").read())
    if mode == "flip":            # 16 bits anywhere past the magic
        for _ in range(16):
            i = rng.randrange(8, len(b))
            b[i] ^= 1 << rng.randrange(8)
    else:
        b = b[: len(b) // 2]
    open(f, "wb").write(b)
PY
    check "images damaged ($mode)" "$want" 0 -d cache
    grep -Eq 'libt.so: image: (not used: )?(corrupted|truncated|another)' "$TMP/err" ||
        bad "images damaged ($mode): -d cache does not say why the image is not used"
    grep -q 'image: installed' "$TMP/err" && bad "images damaged ($mode): one was installed"
    check "images damaged ($mode), rewritten" "$want" 0 -d cache
    grep -Eq 'libt.so: image: installed [1-9][0-9]* of' "$TMP/err" ||
        bad "images damaged ($mode): not replaced"
done

# An image fits what runs (pcache_image.c's image_wanted): one whose blocks
# mostly sat idle in a run is replaced by what that run ran, and a small one
# grows by what a run ran beyond it; a run it fits writes none.
"$CC" -O2 -c -o "$TMP/many.o" "$REPO/tests/pcache/many.c" && "$CC" -o "$TMP/many" "$TMP/many.o" ||
    exit 1
many() {  # many N LABEL [xlat options...]: run $MANY (default $TMP/many), check its output
    local n=$1 label=$2 prog=${MANY:-$TMP/many} got want
    shift 2
    want=$(XLAT_CACHE=0 "$XLAT" -L "$SYSROOT" "$prog" "$n")
    got=$(timeout 60 "$XLAT" -L "$SYSROOT" -d cache "$@" "$prog" "$n" 2>"$TMP/err")
    [[ -n $want && $got == "$want" ]] || bad "$label: printed '$got', want '$want'"
}
wrote() { sed -n 's/^cache: .*many: wrote an image of \([0-9]*\) blocks$/\1/p' "$TMP/err"; }
installed() { sed -n 's/^cache: .*many: image: installed \([0-9]*\) of .*/\1/p' "$TMP/err"; }
# A program's first run writes no image (pcache_image.c's program_seen:
# most programs of a build run once), its second does.
many 256 "images: all 256 functions, cold"
[[ -z $(wrote) ]] && grep -q "first run: its images wait" "$TMP/err" ||
    bad "images: a program's first run wrote an image of '$(wrote)' blocks"
many 256 "images: all 256 functions, second run"
all=$(wrote)
[[ ${all:-0} -ge 256 ]] || bad "images: a second run of 256 functions wrote an image of '$all' blocks"
many 256 "images: all, warm"
[[ $(installed) == "${all:-x}" && -z $(wrote) ]] ||
    bad "images: a warm run of all installed '$(installed)' of $all blocks, wrote '$(wrote)'"
many 16 "images: 16 functions"
few=$(wrote)
[[ -n $few && $few -lt $((all / 4)) ]] ||
    bad "images: a run of 16 functions, its image mostly idle, wrote '$few' blocks (all: $all)"
many 16 "images: 16 functions again"
[[ $(installed) == "${few:-x}" && -z $(wrote) ]] ||
    bad "images: the next run of 16 installed '$(installed)' of $few blocks, wrote '$(wrote)'"
many 256 "images: all again"
[[ $(installed) == "${few:-x}" && $(wrote) -ge ${all:-1} ]] ||
    bad "images: a run of all after 16 installed '$(installed)', wrote '$(wrote)' blocks (all: $all)"

# Chains: an image lists the exits its writer had chained to its blocks,
# and a warm run chains them as hinted, without looking the targets up
# (chain.c). A hint is checked against the exit's target: images whose
# chains all name the wrong block (their hash made right again) are
# followed by none, and the run is still right.
chains_run() { XLAT_CACHE_DIR=$TMP/chains many 256 "$1" -d stats; }  # in its own cache
hinted() { counter 'chains hinted (cache)'; }
chains_run "chains: cold"
chains_run "chains: second run"    # (writes the images)
made=$(counter 'chains made')
chains_run "chains: warm"
[[ $(hinted) -ge $((made * 3 / 4)) ]] ||
    bad "chains: a warm run chained '$(hinted)' exits as hinted, of '$made' its writer had made"
python3 - "$TMP"/chains/*-*-*-*.xc <<'PY' || bad "chains: could not rewrite the images"
# Every chain of every image pointed at the next block; the hash made
# right again (pcache_file.h's hash_bytes, pcache_image_sum).
import struct, sys
M = (1 << 64) - 1
def lane(h, w):
    h = ((h ^ w) * 0xff51afd7ed558ccd) & M
    return h ^ (h >> 32)
def rot(x, r):
    return ((x << r) | (x >> (64 - r))) & M
def hash_bytes(b, seed):
    n = len(b)
    h = [seed ^ (n * 0x9e3779b97f4a7c15 & M), (seed + 0x632be59bd9b4e019) & M,
         seed ^ 0x85ebca77c2b2ae63, (seed - 0x27d4eb2f165667c5) & M]
    full = n - n % 32
    for off in range(0, full + 32, 32):
        chunk = b[off:off + 32] if off < full else b[full:] + bytes(32 - (n - full))
        h = [lane(h[i], w) for i, w in enumerate(struct.unpack("<4Q", chunk))]
    r = lane(h[0] ^ rot(h[1], 17), h[2] ^ rot(h[3], 31))
    r = ((r ^ n) * 0xc4ceb9fe1a85ec53) & M
    return r ^ (r >> 29)
up8 = lambda n: (n + 7) & ~7
HEAD, BLK, REL, CHAIN = 136, 96, 16, 8      # sizeof ImgHead, ImgBlk, ImgRel, ImgChain
for f in sys.argv[1:]:
    b = bytearray(open(f, "rb").read())
    nblk, = struct.unpack_from("<I", b, 60)
    hot_len, cold_len, npairs, nrel, guest_len = struct.unpack_from("<5I", b, 88)
    nnear = sum(struct.unpack_from("<4I", b, 108))
    nchain, = struct.unpack_from("<I", b, 124)
    at = HEAD + nblk * BLK + up8(npairs * 4) + up8(nnear * 4) + nrel * REL
    size = at + nchain * CHAIN + up8(guest_len) + up8(hot_len) + cold_len
    if size != len(b):
        sys.exit(f"{f}: {len(b)} bytes, the layout says {size}: has the image format changed?")
    for i in range(nchain):
        src, to_slot = struct.unpack_from("<2I", b, at + i * CHAIN)
        to_slot = ((to_slot >> 3) + 1) % nblk << 3 | (to_slot & 7)
        struct.pack_into("<2I", b, at + i * CHAIN, src, to_slot)
    head = bytearray(b[:HEAD])
    head[128:136] = bytes(8)
    struct.pack_into("<Q", b, 128, hash_bytes(bytes(b[HEAD:]), hash_bytes(bytes(head), 8)))
    open(f, "wb").write(b)
PY
chains_run "chains: each naming the wrong block"
grep -Eq 'many: image: installed [1-9][0-9]* of' "$TMP/err" ||
    bad "chains: the rewritten image was not installed: $(grep 'many: image' "$TMP/err")"
[[ $(hinted) == 0 ]] || bad "chains: '$(hinted)' exits chained to the wrong block as hinted"

# Corruption: each file damaged alike, then the runs must still be right.
cache_files() {   # cache_files DIR: its files of translations (not images, not programs' marks)
    local f name dashes
    for f in "$1"/*.xc; do
        name=${f##*/}
        dashes=${name//[^-]/}
        [[ ${#dashes} -le 2 && $name != prog-* ]] && echo "$f"
    done
}
damage() {   # damage MODE: every cache file but the images
    python3 - "$1" $(cache_files "$XLAT_CACHE_DIR") <<'PY'
import random, sys
mode, files = sys.argv[1], sys.argv[2:]
rng = random.Random(42)
for f in files:
    b = bytearray(open(f, "rb").read())
    if mode == "flip":            # 64 bits in the records (after header, table, progs)
        nent = int.from_bytes(b[72:80], "little")
        lo = 96 + 32 * nent
        for _ in range(64):
            i = rng.randrange(lo, len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif mode == "header":        # one bit of the table's hash
        b[88] ^= 4
    elif mode == "truncate":
        b = b[: len(b) // 2]
    elif mode == "build":         # another xlat's build id
        b[8] ^= 0xff
    elif mode == "table":         # an entry's record position, past the end
        b[96 + 8 : 96 + 12] = (0x7ffffff0).to_bytes(4, "little")
    elif mode == "progs":         # every entry's programs: a hint, not checked
        nent = int.from_bytes(b[72:80], "little")
        for i in range(96 + 24 * nent, 96 + 32 * nent):
            b[i] ^= 0xa5
    open(f, "wb").write(b)
PY
}
progs() {   # progs DIR: "FILE OFFSET PROGRAMS" for each entry of each of its cache_files
    python3 - $(cache_files "$1") <<'PY'
import os, sys
for f in sys.argv[1:]:
    name = os.path.basename(f)
    b = open(f, "rb").read()
    nent = int.from_bytes(b[72:80], "little")
    for i in range(nent):
        off = int.from_bytes(b[96 + 24 * i : 104 + 24 * i], "little")
        progs = int.from_bytes(b[96 + 24 * nent + 8 * i : 104 + 24 * nent + 8 * i], "little")
        print(name, off, progs)
PY
}
for mode in flip header truncate build table progs; do
    check "warm (plain)" "$want" 0
    damage $mode
    check "cache files damaged ($mode)" "$want" 0 -d cache
    case $mode in
    flip|table) grep -q 'not used: a corrupted' "$TMP/err" || [[ $mode == table ]] ||
                    bad "$mode: -d cache names no corrupted record" ;;
    header) grep -q ': corrupted' "$TMP/err" || bad "header: -d cache does not say corrupted" ;;
    truncate) grep -q ': truncated' "$TMP/err" || bad "truncate: -d cache does not say truncated" ;;
    build) grep -q 'another xlat build' "$TMP/err" || bad "build: -d cache does not say another build" ;;
    progs) grep -Eq 'corrupted|truncated' "$TMP/err" && bad "progs: a hint made a file unusable"
           grep -Eq 'libt.so: [0-9]+ translations' "$TMP/err" || bad "progs: the file was not used" ;;
    esac
    check "after $mode, rewritten" "$want" 0 -d cache
    grep -Eq 'libt.so: [0-9]+ translations' "$TMP/err" || bad "after $mode: the file was not replaced"
done

# Another user's file is refused; another user's directory turns the cache off.
if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1; then
    chown nobody "$XLAT_CACHE_DIR"/*.xc
    check "files of another owner" "$want" 0 -d cache
    grep -q "not this user's own file" "$TMP/err" || bad "another owner's file: not refused"
    chown root "$XLAT_CACHE_DIR"/*.xc
    other=$TMP/other
    mkdir -p "$other" && chown nobody "$other" && chmod 700 "$other"
    XLAT_CACHE_DIR=$other check "a directory of another owner" "$want" 0 -d cache,stats
    grep -q "not this user's own directory" "$TMP/err" || bad "another owner's directory: used"
    [[ $(counter 'blocks from the cache') == 0 ]] || bad "another owner's directory: blocks came from it"
    [[ -z $(ls -A "$other") ]] || bad "another owner's directory: written to"
else
    echo "pcache: (the other-owner checks need root and a nobody user: not run)"
fi

# Eight processes on one cold directory at once, then warm: no torn file.
rm -rf "$XLAT_CACHE_DIR"
for i in 1 2 3 4 5 6 7 8; do (run $((i * 7)) >"$TMP/par$i") & done
wait
for i in 1 2 3 4 5 6 7 8; do
    [[ $(cat "$TMP/par$i") == "$want" ]] || bad "parallel run $i printed '$(cat "$TMP/par$i")'"
done
check "warm after the parallel runs" "$want" 0 -d cache
grep -Eq 'corrupted|truncated' "$TMP/err" && bad "parallel writers left a damaged file"
ls "$XLAT_CACHE_DIR"/.*.tmp >/dev/null 2>&1 && bad "parallel writers left temporary files"

# The bound (XLAT_CACHE_SIZE): a writer adds what it wrote to the
# directory's ledger and lists the directory only when that passes the
# bound (pcache_file.c's pcache_account). Six programs run twice each
# (their images come with the second), ~210 KiB of cache files each, into
# a 1 MiB directory: it never holds more than 1 MiB, the oldest program's
# files go first and the newest's stay; the runs are right.
# Under a large bound, only the first writer lists it (no ledger yet). A
# damaged ledger is listed again; a writer's temporary file left an hour
# and more ago goes, a newer one stays (its writer may be at work).
for i in 1 2 3 4 5 6; do
    "$CC" -o "$TMP/many$i" "$TMP/many.o" -Wl,--build-id=0x5eed000${i}5eed000$i || exit 1
done
bytes() { find "$TMP/bound" -name '*.xc' -printf '%s\n' | awk '{t += $1} END {print t + 0}'; }
files_of() { ls "$TMP/bound/"*"5eed000${1}5eed000$1-"*.xc 2>/dev/null | wc -l; }
listed() { grep -c '^cache: listed' "$TMP/err"; }
bounded() {  # bounded I SIZE_MIB: many$I's run into $TMP/bound, output checked
    MANY=$TMP/many$1 XLAT_CACHE_DIR=$TMP/bound XLAT_CACHE_SIZE=$2 many 256 "bound: many$1"
}
rm -rf "$TMP/bound"
for i in 1 2 3 4 5 6; do
    bounded $i 1
    bounded $i 1
    ((size = $(bytes), size <= 1048576)) || bad "bound: after many$i, 1 MiB holds $size bytes"
done
(($(files_of 1) == 0 && $(files_of 6) >= 1)) ||
    bad "bound: many1's files: $(files_of 1) (evicted first), many6's: $(files_of 6) (the last)"
rm -rf "$TMP/bound"
for i in 1 2 3 4; do
    bounded $i 1024
    ((i == 1 || $(listed) == 0)) || bad "bound: writer $i of a large directory listed it"
done
[[ $(cat "$TMP/bound/size") =~ ^[0-9]{20}$ ]] || bad "bound: the ledger holds '$(cat "$TMP/bound/size")'"
((10#$(cat "$TMP/bound/size") >= $(bytes))) || bad "bound: the ledger says less than the files hold"
echo garbage >"$TMP/bound/size"
touch -d '2 hours ago' "$TMP/bound/.old.1.tmp"
touch "$TMP/bound/.new.2.tmp"
bounded 5 1024
(($(listed) == 1)) || bad "bound: a damaged ledger was not listed again"
state() { [[ -e $1 ]] && echo stayed || echo went; }
[[ ! -e $TMP/bound/.old.1.tmp && -e $TMP/bound/.new.2.tmp ]] ||
    bad "bound: temporary files: the stale one $(state "$TMP/bound/.old.1.tmp"), the new one $(state "$TMP/bound/.new.2.tmp")"

# The library replaced at the same path between runs runs its new code.
replaced() {   # LABEL: the library at $TMP/libt.so is new; its value is 2
    local label=$1 got
    got=$(run 0 -d stats)
    [[ $got == "value 2 "* ]] || bad "$label: printed '$got', want value 2"
    local two
    two=$(XLAT_CACHE=0 run 0)
    [[ $got == "$two" ]] || bad "$label: printed '$got', without the cache '$two'"
}
check "warm before replacing" "$want" 0
lib "$TMP/libt.so" 2
replaced "rebuilt library"
# Patched in place: VALUE 3's code under VALUE 2's build id, same size
# (the cache finds VALUE 2's file and must see that the code differs).
run 0 >/dev/null                        # warm with VALUE 2's code
lib "$TMP/lib3.so" 3
python3 - "$TMP/libt.so" "$TMP/lib3.so" <<'PY' || bad "the VALUE 2 and 3 libraries differ in size or have no build id"
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
note = (4).to_bytes(4, "little") + (20).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"GNU\0"
i, k = a.find(note), b.find(note)
if len(a) != len(b) or i < 0 or i != k:
    sys.exit(1)
out = bytearray(b)
out[i + 16:i + 36] = a[i + 16:i + 36]
open(sys.argv[1], "wb").write(out)
PY
got=$(run 0)
three=$(XLAT_CACHE=0 run 0)
[[ $got == "value 3 "* && $got == "$three" ]] ||
    bad "patched in place (same build id and size): printed '$got', want '$three'"
# No build id: the file's bytes are its identity.
lib "$TMP/libt.so" 2 -Wl,--build-id=none
check "no build id, cold" "$(XLAT_CACHE=0 run 0)" 0
check "no build id, warm" "$(XLAT_CACHE=0 run 0)" 0 -d stats
[[ $(counter 'blocks from the cache') -gt 100 ]] || bad "no build id: nothing from the cache"
lib "$TMP/libt.so" 4 -Wl,--build-id=none
got=$(run 0)
four=$(XLAT_CACHE=0 run 0)
[[ $got == "value 4 "* && $got == "$four" ]] || bad "no build id, replaced: printed '$got', want '$four'"
# The build id's note past the first page (xlat reads one page for it, then
# the whole file): its PT_NOTE moved to a copy at the end of the file. The
# cache file must still be named by the build id ('b', 0x62), not a hash.
lib "$TMP/libt.so" 5
bid=$(python3 - "$TMP/libt.so" <<'PY'
import struct, sys
path = sys.argv[1]
d = bytearray(open(path, "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    at = phoff + i * phentsize
    ptype, = struct.unpack_from("<I", d, at)
    off, = struct.unpack_from("<Q", d, at + 8)
    size, = struct.unpack_from("<Q", d, at + 32)
    note = bytes(d[off:off + size])
    k = note.find(b"GNU\0")
    if ptype == 4 and k >= 12 and struct.unpack_from("<I", note, k - 4)[0] == 3:
        namesz, descsz = struct.unpack_from("<II", note, k - 12)
        new = max(len(d), 8192)
        new += -new % 8
        d += bytes(new - len(d)) + note
        struct.pack_into("<Q", d, at + 8, new)
        open(path, "wb").write(d)
        print(note[k + 4:k + 4 + descsz].hex())
        break
PY
)
[[ -n $bid ]] || bad "no PT_NOTE with a build id in the test library"
rm -rf "$XLAT_CACHE_DIR"
got=$(run 0)
[[ $got == "value 5 "* ]] || bad "build id past the first page: printed '$got'"
ls "$XLAT_CACHE_DIR/62$bid-$(printf %x "$(stat -c %s "$TMP/libt.so")")-"*.xc >/dev/null 2>&1 ||
    bad "build id past the first page: no cache file named by it ($(ls "$XLAT_CACHE_DIR" | tr '\n' ' '))"

# Off switches, and the settings an exec'd xlat inherits (a guest execve
# starts xlat again, with the guest's environment, not xlat's).
"$CC" -O2 -static -o "$TMP/exec" "$REPO/tests/pcache/exec.c" || exit 1
through_exec() {  # the guest's environment without them: only xlat can pass them on
    "$XLAT" -L "$SYSROOT" -U XLAT_CACHE -U XLAT_CACHE_DIR "$@" "$TMP/exec" "$TMP/main" "$TMP/libt.so" 0 \
        >/dev/null 2>&1
}
for off in "XLAT_CACHE=0" "--tune no-cache"; do
    rm -rf "$XLAT_CACHE_DIR"
    if [[ $off == XLAT_CACHE=0 ]]; then XLAT_CACHE=0 run 0 >/dev/null; else run 0 --tune no-cache >/dev/null; fi
    if [[ $off == XLAT_CACHE=0 ]]; then XLAT_CACHE=0 through_exec; else through_exec --tune no-cache; fi
    [[ -z $(ls -A "$XLAT_CACHE_DIR" 2>/dev/null) ]] || bad "$off: the cache was written"
done
rm -rf "$XLAT_CACHE_DIR" "$TMP/dir2"
XLAT_CACHE_DIR=$TMP/dir2 through_exec
[[ $(ls "$TMP/dir2"/*.xc 2>/dev/null | wc -l) -ge 3 ]] || bad "XLAT_CACHE_DIR did not reach the exec'd xlat"
[[ -z $(ls -A "$XLAT_CACHE_DIR" 2>/dev/null) ]] || bad "the exec'd xlat wrote to the default directory"
rm -rf "$TMP/dir3"
through_exec --cache-dir "$TMP/dir3"
[[ $(ls "$TMP/dir3"/*.xc 2>/dev/null | wc -l) -ge 3 ]] || bad "--cache-dir did not reach the exec'd xlat"

# Blocks kept for another program only (FileEnt.progs): run as a cold
# start would, interpreted first and installed once hot here, so a program
# installs no more than it would translate cold (here `other`, whose loop in
# the library runs 3 times, with main's cache, where that loop is hot);
# and what became hot here is noted in the files, so its next start
# installs it at once, as with a cache of its own.
"$CC" -O2 -DWORK=3 -o "$TMP/otherprog" "$REPO/tests/pcache/main.c" -ldl || exit 1
other() {   # other CACHE_DIR: other's output; its stats in $TMP/err
    XLAT_CACHE_DIR=$1 "$XLAT" -d stats -L "$SYSROOT" "$TMP/otherprog" "$TMP/libt.so" 0 2>"$TMP/err"
}
want_other=$(XLAT_CACHE=0 "$XLAT" -L "$SYSROOT" "$TMP/otherprog" "$TMP/libt.so" 0)
rm -rf "$TMP/own" "$TMP/mains"
[[ $(other "$TMP/own") == "$want_other" ]] || bad "other, cold: wrong output"
own_hot=$(counter 'blocks translated')
[[ $(other "$TMP/own") == "$want_other" ]] || bad "other, warm: wrong output"
own_first=$(counter 'first runs interpreted')
XLAT_CACHE_DIR=$TMP/mains run 0 -d stats >/dev/null
XLAT_CACHE_DIR=$TMP/mains run 0 -d stats >/dev/null
progs "$TMP/mains" >"$TMP/progs-before"
[[ $(XLAT_CACHE_DIR=$TMP/mains "$XLAT" -d stats,cache -L "$SYSROOT" "$TMP/otherprog" "$TMP/libt.so" 0 \
      2>"$TMP/err") == "$want_other" ]] || bad "other with main's cache: wrong output"
grep -q 'noted this program in [1-9]' "$TMP/err" ||
    bad "other with main's cache noted itself in no file in place (-d cache)"
took=$(( $(counter 'blocks from the cache') + $(counter 'blocks translated') ))
((took <= own_hot + 20)) ||
    bad "other with main's cache installed or translated $took blocks; cold it translates $own_hot"
[[ $(other "$TMP/mains") == "$want_other" ]] || bad "other with main's cache, again: wrong output"
first=$(counter 'first runs interpreted')
((first <= own_first + 50)) ||
    bad "other's blocks hot in it were not noted: $first first runs, $own_first with its own cache"
# Notes go out a run of nearby entries at a time, the entries between
# written back as the writer saw them: notes only add programs, so main's
# stay (pcache_file.c's note_run).
progs "$TMP/mains" >"$TMP/progs-after"
python3 - "$TMP/progs-before" "$TMP/progs-after" <<'PY' || bad "other's notes took programs from entries"
import sys
before, after = (dict(l.rsplit(" ", 1) for l in open(f).read().splitlines()) for f in sys.argv[1:])
lost = [k for k, v in before.items() if k in after and int(v) & ~int(after[k])]
gained = [k for k, v in before.items() if k in after and int(after[k]) & ~int(v)]
if lost or not gained:
    print(f"pcache: notes: {len(gained)} entries gained programs, {len(lost)} lost some")
    sys.exit(1)
PY

# The musl build asks cpuid one leaf and tries lzcnt and tzcnt instead of
# asking (src/riscv/translate.c); the glibc build reads its loader's table:
# both must see the same host features, so their files carry the same
# options hash in their names (a differing bit would make one emit an
# instruction the host lacks, or not use one it has).
if [[ -x $BUILD/xlat-dynamic ]]; then
    rm -rf "$TMP/musl" "$TMP/glibc"
    XLAT_CACHE_DIR=$TMP/musl run 0 >/dev/null
    XLAT_CACHE_DIR=$TMP/glibc XLAT=$BUILD/xlat-dynamic run 0 >/dev/null
    names() { ls "$1" | sed 's/.*-//' | sort -u; }
    [[ -n $(names "$TMP/musl") && $(names "$TMP/musl") == "$(names "$TMP/glibc")" ]] ||
        bad "the musl and glibc builds hash their options differently: $(names "$TMP/musl") vs $(names "$TMP/glibc")"
fi

[[ $fail == 0 ]] && echo "pcache: ok"
exit $fail
