// Writing the ACLINT's mtime (QEMU's virt machine has it writable: 8 bytes
// or either 4-byte half): it reads back from the written value on and
// keeps counting; the time CSR is the same clock; MTIP and Sstc's STIP
// compare against the new value at once; a timer interrupt comes when the
// new mtime reaches mtimecmp, also after mtime is set back before a
// deadline already reached; the goldfish RTC keeps wall time.
#include "sys.h"

#define SECOND (TICKS_PER_US * 1000000UL)
#define BIG    0x0000123456789000UL

static void set_mtime(uint64_t v) { MMIO64(CLINT_MTIME) = v; }

static volatile uint64_t irq_mtime;

static int mti_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MTI))
        return 0;
    irq_mtime = mtime();
    set_mtimecmp(~0UL);
    return 1;
}

/* Enable MTI and spin (at most 2 s of mtime) until the hook ran. */
static void wait_mti(void)
{
    irq_mtime = 0;
    take_m_interrupt(mti_hook, MIP(IRQ_MTI), 2000000);
}

static void read_back(void)
{
    section("mtime reads back what was written, and counts on");
    set_mtime(BIG);
    uint64_t m = mtime();
    check_range("64-bit write: mtime", m, BIG, BIG + SECOND);
    uint64_t prev = m, ok = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t n = mtime();
        ok &= n >= prev;
        prev = n;
    }
    CHECK("monotonic after the write (1000 reads)", ok);
    uint64_t t1 = rdtime(), m2 = mtime(), t2 = rdtime();
    CHECK("time CSR = mtime (t1 <= mtime <= t2)", t1 <= m2 && m2 <= t2);
    check_range("the time CSR moved with it", t1, BIG, BIG + SECOND);

    set_mtime(1000);
    m = mtime();
    check_range("set back: mtime", m, 1000, 1000 + SECOND);
    check_range("set back: the time CSR", rdtime(), 1000, 1000 + SECOND);

    MMIO32(CLINT_MTIME) = 0;
    MMIO32(CLINT_MTIME + 4) = 0x42;
    m = mtime();
    CHECK_EQ("high half written", m >> 32, 0x42);
    check_range("low half written (0, counting)", (uint32_t)m, 0, SECOND);
    MMIO32(CLINT_MTIME) = 0x80000000;
    m = mtime();
    CHECK_EQ("low half written: the high half stays", m >> 32, 0x42);
    check_range("low half", (uint32_t)m, 0x80000000, 0x80000000 + SECOND);
    CHECK_EQ("a 32-bit read of the high half", MMIO32(CLINT_MTIME + 4), 0x42);
}

static void compares(void)
{
    section("MTIP and STIP compare with the new mtime at once");
    set_mtime(BIG);
    set_mtimecmp(BIG + 100 * SECOND);
    CHECK_BITS("mtimecmp ahead: MTIP clear", csr_read(mip), MIP(IRQ_MTI), 0);
    set_mtime(BIG + 101 * SECOND);
    CHECK_BITS("mtime set past mtimecmp: MTIP set", csr_read(mip), MIP(IRQ_MTI), MIP(IRQ_MTI));
    set_mtime(BIG);
    CHECK_BITS("mtime set back before it: MTIP clear", csr_read(mip), MIP(IRQ_MTI), 0);
    set_mtimecmp(~0UL);

    csr_write(menvcfg, MENVCFG_STCE);
    csr_write(stimecmp, BIG + 100 * SECOND);
    CHECK_BITS("stimecmp ahead: STIP clear", csr_read(mip), MIP(IRQ_STI), 0);
    set_mtime(BIG + 101 * SECOND);
    CHECK_BITS("mtime set past stimecmp: STIP set", csr_read(mip), MIP(IRQ_STI), MIP(IRQ_STI));
    set_mtime(BIG);
    CHECK_BITS("and back: STIP clear", csr_read(mip), MIP(IRQ_STI), 0);
    csr_write(stimecmp, ~0UL);
    csr_write(menvcfg, 0);
}

static void interrupts(void)
{
    section("the timer interrupt follows the new mtime");
    set_mtime(BIG);
    uint64_t cmp = BIG + 20000;                         /* 2 ms after the write */
    set_mtimecmp(cmp);
    wait_mti();
    expect_trap("MTI taken", PRV_M, INTERRUPT | IRQ_MTI, ANY, 0);
    check_range("MTI came when mtime reached mtimecmp (within 1 s)", irq_mtime, cmp,
                cmp + SECOND);

    /* A deadline reached, then mtime set back before it: due again. */
    cmp = mtime() + 100 * SECOND;
    set_mtimecmp(cmp);
    set_mtime(cmp + 1);
    CHECK_BITS("deadline reached by a write: MTIP", csr_read(mip), MIP(IRQ_MTI), MIP(IRQ_MTI));
    set_mtime(cmp - 2000000);                            /* 200 ms before it */
    CHECK_BITS("set back before it: MTIP clear", csr_read(mip), MIP(IRQ_MTI), 0);
    wait_mti();
    expect_trap("MTI taken once mtime reaches it again", PRV_M, INTERRUPT | IRQ_MTI, ANY, 0);
    check_range("at mtimecmp (within 1 s)", irq_mtime, cmp, cmp + SECOND);

    /* wfi sleeps until the moved mtime reaches the deadline. */
    set_mtime(BIG);
    cmp = BIG + 50000;                                   /* 5 ms */
    set_mtimecmp(cmp);
    csr_write(mie, MIP(IRQ_MTI));
    int turns = 0;
    while (!(csr_read(mip) & MIP(IRQ_MTI)) && turns < 1000000) {
        probe_wfi();
        turns++;
    }
    uint64_t t = mtime();
    csr_write(mie, 0);
    CHECK("wfi: woken with MTIP, no earlier than mtimecmp", (csr_read(mip) & MIP(IRQ_MTI)) &&
          t >= cmp);
    set_mtimecmp(~0UL);
}

static void rtc(void)
{
    section("the RTC keeps wall time");
    uint64_t r0 = rtc_ns();
    set_mtime(mtime() + 3600 * SECOND);                  /* an hour ahead */
    uint64_t r1 = rtc_ns();
    CHECK("the RTC did not jump with mtime (< 1 s apart)", r1 - r0 < 1000000000UL);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    csr_write(mie, 0);
    set_mtimecmp(~0UL);
    read_back();
    compares();
    interrupts();
    rtc();
}
