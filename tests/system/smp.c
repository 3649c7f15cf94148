// system-args: -smp 2
// system-variant: -accel xlat,threads=1
// system-variant: -tune no-atomics
// system-repeat: 100 -accel xlat,threads=1
// Two harts in M-mode (-bios none starts both at the entry; start.S parks
// hart 1 in secondary_main, which serves hart 0's requests through a
// mailbox): mhartid per hart, the ACLINT's msip and mtimecmp per hart
// (hart 1 woken from wfi by hart 0's msip write, its own timer not
// hart 0's), the PLIC's context 2 (hart 1's M-mode) driving hart 1's MEIP
// only, and AMOs and LR/SC from both harts at once on one word.
#include "sys.h"

enum { CMD_MIP = 1, CMD_WAIT_MSIP, CMD_TIMER, CMD_AMO, CMD_LRSC };

static volatile uint64_t h1_a0, h1_hartid;
static volatile uint64_t cmd, cmd_arg, cmd_result, cmd_seq, done_seq;
static volatile uint32_t counter_amo, counter_lrsc;

static void amo_loop(long n)
{
    for (long i = 0; i < n; i++)
        __atomic_fetch_add(&counter_amo, 1, __ATOMIC_RELAXED);      /* amoadd.w */
}

static void lrsc_loop(long n)
{
    for (long i = 0; i < n; i++) {
        uint32_t tmp, fail;
        asm volatile("1: lr.w %0, (%2)\n"
                     "addiw %0, %0, 1\n"
                     "sc.w %1, %0, (%2)\n"
                     "bnez %1, 1b\n"
                     : "=&r"(tmp), "=&r"(fail)
                     : "r"(&counter_lrsc)
                     : "memory");
    }
}

/* Hart 1: serve the mailbox. No traps: interrupts stay globally off and
 * wfi wakes on what mie enables. */
void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)opaque;
    h1_a0 = hartid;
    h1_hartid = csr_read(mhartid);
    uint64_t seen = 0;
    for (;;) {
        while (__atomic_load_n(&cmd_seq, __ATOMIC_ACQUIRE) == seen)
            ;
        seen = cmd_seq;
        uint64_t r = 0;
        switch (cmd) {
        case CMD_MIP:
            r = csr_read(mip);
            break;
        case CMD_WAIT_MSIP:
            csr_write(mie, MIP(IRQ_MSI));
            while (!(csr_read(mip) & MIP(IRQ_MSI)) && r < 1000000) {
                asm volatile("wfi");
                r++;
            }
            MMIO32(CLINT_MSIP(1)) = 0;
            csr_write(mie, 0);
            break;
        case CMD_TIMER: {
            uint64_t cmp = mtime() + 20000;
            MMIO64(CLINT_MTIMECMP(1)) = cmp;
            csr_write(mie, MIP(IRQ_MTI));
            while (!(csr_read(mip) & MIP(IRQ_MTI)))
                asm volatile("wfi");
            r = rdtime() >= cmp;
            MMIO64(CLINT_MTIMECMP(1)) = ~0UL;
            csr_write(mie, 0);
            break;
        }
        case CMD_AMO:
            amo_loop((long)cmd_arg);
            break;
        case CMD_LRSC:
            lrsc_loop((long)cmd_arg);
            break;
        }
        cmd_result = r;
        __atomic_store_n(&done_seq, seen, __ATOMIC_RELEASE);
    }
}

static void post(uint64_t c, uint64_t arg)
{
    cmd = c;
    cmd_arg = arg;
    __atomic_fetch_add(&cmd_seq, 1, __ATOMIC_RELEASE);
}

static int wait_done(void)
{
    return WAIT_FOR(__atomic_load_n(&done_seq, __ATOMIC_ACQUIRE) == cmd_seq, 5000000);
}

static uint64_t on_hart1(uint64_t c, uint64_t arg)
{
    post(c, arg);
    return wait_done() ? cmd_result : 0xdead;
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)dtb;
    section("two harts");
    CHECK_EQ("hart 0: a0", hartid, 0);
    CHECK_EQ("hart 0: mhartid", csr_read(mhartid), 0);
    on_hart1(CMD_MIP, 0);
    CHECK_EQ("hart 1: a0", h1_a0, 1);
    CHECK_EQ("hart 1: mhartid", h1_hartid, 1);
    MMIO64(CLINT_MTIMECMP(0)) = ~0UL;
    MMIO64(CLINT_MTIMECMP(1)) = ~0UL;

    section("ACLINT per hart");
    post(CMD_WAIT_MSIP, 0);
    WAIT_FOR(0, 20000);                         /* hart 1 reaches its wfi */
    MMIO32(CLINT_MSIP(1)) = 1;
    CHECK_BITS("msip[1] leaves hart 0's MSIP clear", csr_read(mip), MIP(IRQ_MSI), 0);
    CHECK("hart 1 woke from wfi on its MSIP", wait_done());
    check_range("in few wfi turns (0: msip came before the wfi)", cmd_result, 0, 3);
    CHECK_EQ("hart 1 cleared msip[1]", MMIO32(CLINT_MSIP(1)), 0);
    CHECK_EQ("hart 1's timer: woken after its mtimecmp", on_hart1(CMD_TIMER, 0), 1);
    CHECK_BITS("hart 0's MTIP untouched by hart 1's timer", csr_read(mip), MIP(IRQ_MTI), 0);
    MMIO64(CLINT_MTIMECMP(1)) = 0;
    CHECK_BITS("mtimecmp[1] = 0: hart 1's MTIP", on_hart1(CMD_MIP, 0), MIP(IRQ_MTI),
               MIP(IRQ_MTI));
    CHECK_BITS("but not hart 0's", csr_read(mip), MIP(IRQ_MTI), 0);
    MMIO64(CLINT_MTIMECMP(1)) = ~0UL;

    section("PLIC context 2: hart 1's M-mode");
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 1;
    MMIO32(PLIC_THRESHOLD(2)) = 0;
    MMIO32(PLIC_ENABLE(2)) = 1u << UART_IRQ;
    MMIO8(UART_BASE + 1) = 0x02;                /* THR empty */
    CHECK_BITS("hart 1: MEIP", on_hart1(CMD_MIP, 0), MIP(IRQ_MEI), MIP(IRQ_MEI));
    CHECK_BITS("hart 0: no MEIP", csr_read(mip), MIP(IRQ_MEI), 0);
    uint32_t id = MMIO32(PLIC_CLAIM(2));
    CHECK_EQ("claim through context 2", id, UART_IRQ);
    CHECK_BITS("claimed: hart 1's MEIP clear", on_hart1(CMD_MIP, 0), MIP(IRQ_MEI), 0);
    MMIO8(UART_BASE + 1) = 0;
    MMIO32(PLIC_CLAIM(2)) = id;
    MMIO32(PLIC_ENABLE(2)) = 0;

    section("atomics from both harts");
    const long n = 200000;
    post(CMD_AMO, (uint64_t)n);
    amo_loop(n);
    CHECK("hart 1 done", wait_done());
    CHECK_EQ("amoadd.w: no update lost", counter_amo, 2 * n);
    post(CMD_LRSC, (uint64_t)n);
    lrsc_loop(n);
    CHECK("hart 1 done", wait_done());
    CHECK_EQ("lr.w/sc.w: no update lost", counter_lrsc, 2 * n);
}
