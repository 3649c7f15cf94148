#!/usr/bin/env bash
# Install what building and testing xlat needs on Debian 12 (`make deps`;
# `make check` and `make demo` call it first), and any packages named as
# arguments. Idempotent and instant when
# everything is present: packages are checked with dpkg-query, and apt-get
# (update + install) runs only for what is missing. Runs apt as root, through
# sudo when not root, and otherwise prints what to install.
set -euo pipefail

PKGS=(
    gcc make libc6-dev               # host build
    libcapstone-dev                  # host disassembler for -d out_asm
    musl-tools                       # user mode's xlat is linked with musl (Makefile)
    libfdt-dev                       # xlat-system builds the guest's device tree with libfdt
    libslirp-dev                     # ... and its user-mode network (-netdev user) with libslirp
    gcc-riscv64-linux-gnu            # guest test programs
    libc6-dev-riscv64-cross          # static riscv64 glibc for them
    binutils-riscv64-linux-gnu       # objdump, the disassembler reference
    qemu-user                        # qemu-riscv64, the behaviour reference
    qemu-system-misc                 # qemu-system-riscv64: make demo times xlat-system beside it
    gdb-multiarch                    # tests/gdb_batch.sh drives xlat -g with it
    clang libclang-rt-14-dev xxd     # tests/fuzz.sh: libFuzzer targets, hex corpus
    opensbi                          # fw_dynamic.bin: xlat-system -bios FILE's firmware
    python3                          # bench/run, tests/tools/console.py
    debootstrap                      # fetches real riscv64 Debian programs
    debian-archive-keyring           # ... and verifies them
    e2fsprogs kmod                   # scripts/system-disk.sh: mke2fs -d, depmod
    linux-perf                       # tests/perfmap.sh: perf report names translated code
    file coreutils diffutils util-linux gzip
)

PKGS+=("$@")                         # and what a caller names (scripts/paravirt-kernel.sh)

installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

missing=()
for p in "${PKGS[@]}"; do
    installed "$p" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}" >&2
if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "deps: not root and no sudo; as root, run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
