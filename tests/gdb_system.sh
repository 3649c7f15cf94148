#!/usr/bin/env bash
# gdb-multiarch against `xlat-system -S -gdb tcp::PORT`, on a bare-metal
# program (-bios none, M-mode from reset) that computes a value, turns on
# Sv39 and drops to S-mode, then waits for a flag gdb sets:
#   - the reset pc, priv and CSRs; a breakpoint on a function and its
#     argument register; stepi; a watchpoint; memory read and write;
#   - in S-mode under paging: priv, satp, a read and a write through a
#     virtual address whose page-table entry has no A bit (the debugger's
#     walk must leave it clear); the exit status the program computes from
#     the memory gdb wrote (both writes count), reported to gdb (W) and by
#     xlat-system;
#   - -smp 2: both harts as threads, a breakpoint hit by hart 1;
#   - attaching without -S stops the running machine; gdb's detach at its
#     end lets it run on;
#   - a small RSP client: Ctrl-C while running, D (the machine runs on),
#     closing the connection while stopped, k, no host CPU while held;
#   - bad -gdb devices, a port in use, -S without -gdb, -s.
# Usage: tests/gdb_system.sh BUILD. Exit 77 if gdb-multiarch is missing.
set -u
BUILD=${1:-build}
SYS=$BUILD/xlat-system
CC=${GUEST_CC:-riscv64-linux-gnu-gcc}
command -v gdb-multiarch >/dev/null || { echo "gdb_system: gdb-multiarch not installed (make deps)"; exit 77; }
command -v "$CC" >/dev/null || { echo "gdb_system: $CC not installed"; exit 77; }
[[ -x $SYS ]] || { echo "gdb_system: $SYS is not built"; exit 1; }
TMP=$(mktemp -d)
XPID=
trap '[[ -n $XPID ]] && kill $XPID 2>/dev/null; rm -rf "$TMP"' EXIT

cat > "$TMP/start.S" <<'S'
    .section .text.start, "ax"
    .globl _start
_start:
    csrr t0, mhartid
    bnez t0, 1f
    la sp, stack0_top
    call main
    j .
1:  la sp, stack1_top
    call hart1_main
    j .
    .bss
    .balign 16
    .space 8192
stack0_top:
    .space 8192
stack1_top:
S
cat > "$TMP/t.c" <<'C'
#include <stdint.h>
#define SYSCON  0x100000UL
#define VA_DATA 0x40000000UL
#define PTE_V 1UL
#define PTE_R 2UL
#define PTE_W 4UL
#define PTE_X 8UL
#define PTE_A 0x40UL
#define PTE_D 0x80UL

volatile long scratch[4] = { 1, 2, 3, 4 };
volatile long result;
volatile long release;              /* gdb sets it: the program may end */
volatile long hart1_ticks;
uint64_t root[512] __attribute__((aligned(4096)));
uint64_t l1[512] __attribute__((aligned(4096)));
uint64_t l0[512] __attribute__((aligned(4096)));
volatile uint64_t data_page[512] __attribute__((aligned(4096)));

__attribute__((noinline)) long compute(long n)
{
    long s = 0;
    for (long i = 1; i <= n; i++)
        s += i * i;
    return s;
}
__attribute__((noinline)) void report(long v) { result = v; }
__attribute__((noinline)) void hart1_tick(void) { hart1_ticks++; }
__attribute__((noinline)) void in_smode(void) { asm volatile("" ::: "memory"); }
__attribute__((noinline)) void wait_release(void) { while (!release) ; }

void hart1_main(void)
{
    for (;;)
        hart1_tick();
}

__attribute__((noreturn)) static void finish(long code)
{
    *(volatile uint32_t *)SYSCON = code == 0 ? 0x5555 : (uint32_t)(code << 16) | 0x3333;
    for (;;)
        ;
}

static uint64_t leaf(uint64_t pa, uint64_t flags) { return (pa >> 12) << 10 | flags; }

__attribute__((noinline)) void smode_main(void)
{
    in_smode();
    wait_release();
    long code = scratch[0] + (*(volatile uint64_t *)VA_DATA == 0x99 ? 10 : 0);
    finish(code == 1 ? 0 : code);
}

int main(void)
{
    report(compute(10));                                /* 385 */
    data_page[0] = 0x1122334455667788UL;
    root[0] = leaf(0, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);              /* devices */
    root[1] = leaf((uint64_t)l1, PTE_V);
    root[2] = leaf(0x80000000UL, PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D);   /* RAM */
    l1[0] = leaf((uint64_t)l0, PTE_V);
    l0[0] = leaf((uint64_t)data_page, PTE_V | PTE_R | PTE_W);             /* no A, no D */
    asm volatile("csrw satp, %0; sfence.vma" :: "r"(8UL << 60 | (uint64_t)root >> 12));
    /* S-mode may reach memory only through PMP: one entry opens it all. */
    asm volatile("csrw pmpaddr0, %0; csrw pmpcfg0, %1" :: "r"(~0UL >> 10), "r"(0x1fUL));
    asm volatile("csrw mepc, %0; li t0, 3 << 11; csrc mstatus, t0; li t0, 1 << 11; "
                 "csrs mstatus, t0; mret" :: "r"(smode_main) : "t0");
    return 0;
}
C
if ! "$CC" -march=rv64gc -mabi=lp64 -mcmodel=medany -O1 -g -ffreestanding -fno-pic \
        -nostdlib -static -fno-pie -no-pie -Wl,-N -Wl,--build-id=none -Wl,--no-warn-rwx-segments \
        -Wl,-Ttext=0x80000000 -o "$TMP/t.elf" "$TMP/start.S" "$TMP/t.c" 2> "$TMP/cc.log"; then
    echo "gdb_system: cross-compile failed"; cat "$TMP/cc.log"; exit 1
fi
addr_of() { riscv64-linux-gnu-nm "$TMP/t.elf" | awk -v s="$1" '$3 == s { print $1 }'; }
[[ -n $(addr_of release) ]] || { echo "gdb_system: no symbols"; exit 1; }

fail=0
bad() { echo "gdb_system: $*"; fail=1; }

# start_sys LOG ARGS...: xlat-system on a free port (retried), with $port
# in its arguments as @PORT@; sets $XPID and $port.
start_sys() {
    local log=$1; shift
    for _ in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 40000 ))
        local -a argv=("${@//@PORT@/$port}")
        "$SYS" "${argv[@]}" < /dev/null > "$log.out" 2> "$log" & XPID=$!
        for _ in $(seq 50); do
            grep -q "listening on" "$log" 2>/dev/null && return 0
            kill -0 $XPID 2>/dev/null || break
            sleep 0.1
        done
        wait $XPID 2>/dev/null
    done
    echo "gdb_system: xlat-system did not listen: $(cat "$log")"
    return 1
}
# finish_sys: wait for xlat-system (at most 30 s); sets $rc.
finish_sys() {
    for _ in $(seq 300); do kill -0 $XPID 2>/dev/null || break; sleep 0.1; done
    kill -0 $XPID 2>/dev/null && { kill -9 $XPID; echo "gdb_system: xlat-system did not end"; }
    wait $XPID; rc=$?
    XPID=
}
run_gdb() {   # OUT COMMANDS...: gdb-multiarch -batch on t.elf against $port
    local out=$1; shift
    local -a ex=()
    for c in "$@"; do ex+=(-ex "$c"); done
    timeout 60 gdb-multiarch -nx -batch -ex 'set confirm off' -ex 'set pagination off' \
        -ex "target remote :$port" "${ex[@]}" "$TMP/t.elf" > "$out" 2>&1
}
# check FILE LABEL REGEX...: every REGEX is in FILE.
check() {
    local f=$1 label=$2 r ok=1; shift 2
    for r in "$@"; do
        grep -Eq -- "$r" "$f" || { bad "$label: gdb output lacks: $r"; ok=0; }
    done
    if ((ok)); then echo "gdb_system[$label]: ok"; else echo "---- gdb output"; cat "$f"; fi
}

SYSARGS=(-M virt -m 64M -nographic -bios none -kernel "$TMP/t.elf")

# -- One hart: breakpoints, registers, CSRs, memory, paging ---------------------
start_sys "$TMP/one.err" "${SYSARGS[@]}" -S -gdb tcp::@PORT@ || exit 1
run_gdb "$TMP/one.gdb" \
    'print/x $pc' 'print $priv' 'print/x $mhartid' 'print/x (unsigned long)$misa >> 62' \
    'break report' 'continue' 'print $a0' 'stepi' 'print (long)$pc - (long)&report' \
    'watch result' 'continue' 'delete' \
    'x/4gx &scratch' 'set var scratch[0] = 7' 'print scratch[0]' \
    'break in_smode' 'continue' 'print $priv' 'print (unsigned long)$satp >> 60' \
    'print/x $mepc == (long)&smode_main' \
    'x/gx 0x40000000' 'print l0[0] & 0xc0' 'print l0[0] & 1' \
    'set {long}0x40000000 = 0x99' 'print/x data_page[0]' 'print l0[0] & 0xc0' \
    'set var release = 1' 'delete' 'continue'
finish_sys
check "$TMP/one.gdb" "one hart" \
    '^\$1 = 0x80000000$' '^\$2 = (3|prv:3)' '^\$3 = 0x0$' '^\$4 = 0x2$' \
    'Breakpoint 1, report \(v=385\)' '^\$5 = 385$' '^\$6 = (2|4)$' \
    'Hardware watchpoint 2: result' 'Old value = 0' 'New value = 385' \
    '<scratch>:[[:space:]]+0x0+1[[:space:]]+0x0+2' '^\$7 = 7$' \
    'Breakpoint 3, .*in_smode' '^\$8 = (1|prv:1)' '^\$9 = 8$' '^\$10 = 0x1$' \
    '0x40000000:[[:space:]]+0x1122334455667788' '^\$11 = 0$' '^\$12 = 1$' \
    '^\$13 = 0x99$' '^\$14 = 0$' \
    'exited with code 021'     # 17 in octal: 7 from scratch[0], 10 for the virtual write
[[ $rc == 17 ]] || bad "one hart: xlat-system exit $rc, want 17"

# -- Two harts as threads -------------------------------------------------------------
start_sys "$TMP/smp.err" "${SYSARGS[@]}" -smp 2 -S "-gdb tcp::@PORT@" || exit 1
run_gdb "$TMP/smp.gdb" \
    'info threads' 'thread 2' 'print/x $mhartid' 'break hart1_tick' 'continue' \
    'print/x $mhartid' 'delete' 'set var release = 1' 'continue'
finish_sys
check "$TMP/smp.gdb" "smp 2" \
    '^\* 1 +Thread 1 \(hart 0, M-mode\)' '^  2 +Thread 2 \(hart 1, M-mode\)' \
    '^\$1 = 0x1$' 'Thread 2 .*hit Breakpoint 1, hart1_tick' '^\$2 = 0x1$' \
    'exited normally'
[[ $rc == 0 ]] || bad "smp 2: xlat-system exit $rc, want 0"

# -- Attaching to a running machine (no -S) stops it; gdb's detach at the
# end of the batch (qAttached: 1) lets it run on. --------------------------------
start_sys "$TMP/att.err" "${SYSARGS[@]}" -smp 2 -gdb=tcp::@PORT@ || exit 1
sleep 0.5                                   # hart 0 reaches wait_release in S-mode
run_gdb "$TMP/att.gdb" 'info threads' 'bt' 'info registers priv' 'set var release = 1'
finish_sys
check "$TMP/att.gdb" "attach running" \
    'in wait_release \(\)' 'Thread 1 \(hart 0, S-mode\)' 'in smode_main \(\)' \
    'priv +0x1[[:space:]]+prv:1 \[Supervisor\]' 'Inferior 1 .* detached'
[[ $rc == 0 ]] || bad "attach running: xlat-system exit $rc, want 0"

# -- A raw RSP client: Ctrl-C, D, closing, k, an idle held machine -------------------
cat > "$TMP/rsp.py" <<'PY'
import os, socket, sys, time
sys.path.insert(0, os.environ['XLAT_TOOLS'])
from rsp_client import send, recv
def cpu_ticks(pid):
    f = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()
    return int(f[11]) + int(f[12])
mode, port, pid, release, scratch = sys.argv[1:6]
s = socket.create_connection(('127.0.0.1', int(port)))
s.settimeout(10)
send(s, '?'); print(recv(s))
if mode == 'interrupt':        # run, Ctrl-C, let it finish, detach
    send(s, 'vCont;c')
    time.sleep(0.5)
    s.sendall(b'\x03')
    print(recv(s))
    send(s, 'M%s,8:0100000000000000' % release); print(recv(s))
    send(s, 'D'); print(recv(s))
elif mode == 'close':          # write memory, close while stopped
    send(s, 'M%s,8:0500000000000000' % scratch); print(recv(s))
    send(s, 'M%s,8:0100000000000000' % release); print(recv(s))
    s.close()
elif mode == 'idle':           # held: no host CPU for a second, then k
    t0 = cpu_ticks(pid); time.sleep(1); t1 = cpu_ticks(pid)
    print('ticks', t1 - t0)
    send(s, 'k')
PY
rsp() {   # MODE: run the client against $port, output in $TMP/rsp.out
    XLAT_TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tools" timeout 30 python3 "$TMP/rsp.py" "$1" "$port" "$XPID" "$(addr_of release)" \
        "$(addr_of scratch)" > "$TMP/rsp.out" 2>&1
}
start_sys "$TMP/int.err" "${SYSARGS[@]}" -smp 2 -S -gdb tcp::@PORT@ || exit 1
rsp interrupt
finish_sys
if [[ $(sed -n 1p "$TMP/rsp.out") == T05thread:1\;* && $(sed -n 2p "$TMP/rsp.out") == T02thread:* &&
      $(sed -n 3,4p "$TMP/rsp.out" | tr '\n' ' ') == "OK OK " && $rc == 0 ]]; then
    echo "gdb_system[interrupt, detach]: ok"
else
    bad "interrupt, detach: rc $rc"; cat "$TMP/rsp.out"
fi
start_sys "$TMP/close.err" "${SYSARGS[@]}" -S -gdb tcp::@PORT@ || exit 1
rsp close
finish_sys
[[ $rc == 5 ]] && echo "gdb_system[close while stopped]: ok" ||
    { bad "close while stopped: rc $rc, want 5"; cat "$TMP/rsp.out"; }
start_sys "$TMP/idle.err" "${SYSARGS[@]}" -smp 2 -S -gdb tcp::@PORT@ || exit 1
rsp idle
finish_sys
ticks=$(awk '/^ticks/ { print $2 }' "$TMP/rsp.out")
if [[ $rc == 0 && -n $ticks && $ticks -lt 10 ]] && grep -q "terminated by gdb" "$TMP/idle.err"; then
    echo "gdb_system[idle while held, k]: ok ($ticks ticks in 1 s)"
else
    bad "idle while held, k: rc $rc, ticks ${ticks:-none}"; cat "$TMP/rsp.out" "$TMP/idle.err"
fi

# -- Refusals ---------------------------------------------------------------------------
expect_refusal() {   # LABEL REGEX ARGS...: xlat-system exits non-zero at once, saying REGEX
    local label=$1 want=$2; shift 2
    local out rc=0
    out=$(timeout 10 "$SYS" "${SYSARGS[@]}" "$@" < /dev/null 2>&1) || rc=$?
    if [[ $rc != 0 && $rc != 124 ]] && grep -Eq -- "$want" <<<"$out"; then
        echo "gdb_system[refuse $label]: ok"
    else
        bad "refuse $label: status $rc, output: $out"
    fi
}
expect_refusal "-gdb foo" "-gdb: 'foo' is not tcp::PORT" -gdb foo
expect_refusal "-gdb tcp::99999" "-gdb: .*port must be" -gdb tcp::99999
expect_refusal "-gdb tcp::1234,server" "-gdb: .*port must be" -gdb tcp::1234,server
expect_refusal "-S alone" "-S: .*-gdb" -S
start_sys "$TMP/busy.err" "${SYSARGS[@]}" -S -gdb tcp::@PORT@ || exit 1
expect_refusal "port in use" "-gdb tcp::$port: cannot listen on port $port: Address already in use" \
    -gdb tcp::"$port"
kill $XPID; wait $XPID 2>/dev/null; XPID=
# -s is -gdb tcp::1234 (which may be taken on this machine: either answer names 1234).
"$SYS" "${SYSARGS[@]}" -s -S < /dev/null > /dev/null 2> "$TMP/s.err" & XPID=$!
for _ in $(seq 50); do [[ -s $TMP/s.err ]] && break; sleep 0.1; done
kill $XPID 2>/dev/null; wait $XPID 2>/dev/null; XPID=
grep -Eq "listening on tcp::1234|tcp::1234: cannot listen on port 1234" "$TMP/s.err" &&
    echo "gdb_system[-s]: ok" || bad "-s: $(cat "$TMP/s.err")"
exit $fail
