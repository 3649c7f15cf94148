// Every interrupt source of the virt machine and how the hart takes them
// (privileged spec 1.12, 3.1.9 mip/mie, 3.3.3 wfi; Sstc; ACLINT; PLIC 1.0):
// MSI from the ACLINT's msip, SSI from mip/sip, MTI from mtimecmp, STI from
// stimecmp (menvcfg.STCE), MEI and SEI from the PLIC with the UART's
// THR-empty interrupt (claim returns 10), their priorities, delegation and
// global enables per mode, and wfi waking on a timer.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
#define UART_IER (UART_BASE + 1)
#define UART_IIR (UART_BASE + 2)
#define IER_THRI 0x02
#define ALL_IRQS (MIP(IRQ_SSI) | MIP(IRQ_MSI) | MIP(IRQ_STI) | MIP(IRQ_MTI) | MIP(IRQ_SEI) | \
                  MIP(IRQ_MEI))

static volatile uint64_t irq_time;          /* time CSR when the handler ran */
static volatile uint64_t claimed, pending_after_claim;

static int wait_traps(int n)
{
    return WAIT_FOR(trap_count >= n, 5000000);
}

/* A short spin with interrupts as they are: a pending enabled one lands. */
static void spin(void)
{
    WAIT_FOR(0, 2000);
}

/* -- Software interrupts ---------------------------------------------------- */

static int msi_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause == (INTERRUPT | IRQ_MSI))
        MMIO32(CLINT_MSIP(0)) = 0;
    return 1;
}

static int ssi_hook(Frame *f, int level)
{
    if (f->cause != (INTERRUPT | IRQ_SSI))
        return 0;
    if (level == PRV_M)
        csr_clear(mip, MIP(IRQ_SSI));
    else
        csr_clear(sip, MIP(IRQ_SSI));
    return 1;
}

static long spin_for_trap(long n)
{
    return WAIT_FOR(trap_count >= n, 5000000);
}

static long spin_briefly(long unused)
{
    (void)unused;
    spin();
    return 0;
}

static long s_spin_sie(long n)
{
    csr_set(sstatus, MSTATUS_SIE);
    long r = spin_for_trap(n);
    csr_clear(sstatus, MSTATUS_SIE);
    return r;
}

static void software(void)
{
    section("machine software interrupt (ACLINT msip)");
    MMIO32(CLINT_MSIP(0)) = 1;
    CHECK_EQ("msip[0] reads 1", MMIO32(CLINT_MSIP(0)), 1);
    CHECK_BITS("mip.MSIP follows msip", csr_read(mip), MIP(IRQ_MSI), MIP(IRQ_MSI));
    csr_clear(mip, MIP(IRQ_MSI));
    CHECK_BITS("mip.MSIP is read-only in mip", csr_read(mip), MIP(IRQ_MSI), MIP(IRQ_MSI));
    take_m_interrupt(msi_hook, MIP(IRQ_MSI), 5000000);
    expect_trap("MSI taken", PRV_M, INTERRUPT | IRQ_MSI, ANY, 0);
    CHECK_BITS("MSI: MPIE = 1, MIE = 0 in the handler", trap_log[0].status,
               MSTATUS_MPIE | MSTATUS_MIE, MSTATUS_MPIE);
    CHECK_EQ("msip[0] cleared by the handler", MMIO32(CLINT_MSIP(0)), 0);
    CHECK_BITS("mip.MSIP clear", csr_read(mip), MIP(IRQ_MSI), 0);

    section("supervisor software interrupt (mip.SSIP)");
    csr_set(mip, MIP(IRQ_SSI));
    CHECK_BITS("mip.SSIP writable by M", csr_read(mip), MIP(IRQ_SSI), MIP(IRQ_SSI));
    traps_reset();
    trap_hook = ssi_hook;
    csr_write(mie, MIP(IRQ_SSI));
    csr_set(mstatus, MSTATUS_MIE);
    wait_traps(1);
    csr_clear(mstatus, MSTATUS_MIE);
    expect_trap("SSI not delegated: taken in M", PRV_M, INTERRUPT | IRQ_SSI, ANY, 0);

    csr_write(mideleg, MIP(IRQ_SSI));
    csr_set(mip, MIP(IRQ_SSI));
    CHECK_BITS("sip.SSIP shows the delegated pending bit", csr_read(sip), MIP(IRQ_SSI),
               MIP(IRQ_SSI));
    traps_reset();
    csr_set(mstatus, MSTATUS_MIE | MSTATUS_SIE);
    spin();
    csr_clear(mstatus, MSTATUS_MIE | MSTATUS_SIE);
    expect_no_trap("delegated SSI is never taken in M");
    traps_reset();
    run_in_mode_m(PRV_S, spin_briefly, 0);
    expect_no_trap("delegated SSI not taken in S while SIE = 0");
    traps_reset();
    run_in_mode_m(PRV_U, spin_for_trap, 1);
    expect_trap("delegated SSI taken in S from U (SIE = 0)", PRV_S, INTERRUPT | IRQ_SSI, ANY,
                0);
    CHECK_BITS("SSI from U: SPP = U", trap_log[0].status, MSTATUS_SPP, 0);
    csr_set(mip, MIP(IRQ_SSI));
    traps_reset();
    run_in_mode_m(PRV_S, s_spin_sie, 1);
    expect_trap("delegated SSI taken in S with SIE", PRV_S, INTERRUPT | IRQ_SSI, ANY, 0);
    CHECK_BITS("SSI from S: SPP = S, SPIE = 1, SIE = 0", trap_log[0].status,
               MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, MSTATUS_SPP | MSTATUS_SPIE);
    CHECK_BITS("sip.SSIP cleared from S", csr_read(mip), MIP(IRQ_SSI), 0);
    csr_write(mideleg, 0);
    csr_write(mie, 0);
    trap_hook = 0;
}

/* -- Timers --------------------------------------------------------------------- */

static int mti_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MTI))
        return 0;
    irq_time = rdtime();
    set_mtimecmp(~0UL);
    return 1;
}

/* The timer for the wfi: if it lands before the wfi (a slow host), once
 * more 1 ms later, until it lands after the wfi. */
static int wfi_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MTI))
        return 0;
    irq_time = rdtime();
    set_mtimecmp(f->epc == A(probe_wfi) + 4 ? ~0UL : mtime() + 10000);
    return 1;
}

static int sti_hook(Frame *f, int level)
{
    if (f->cause != (INTERRUPT | IRQ_STI) || level != PRV_S)
        return 0;
    irq_time = rdtime();
    csr_write(stimecmp, ~0UL);
    return 1;
}

static long s_stimecmp_wait(long delta)
{
    uint64_t cmp = rdtime() + (uint64_t)delta;
    csr_write(stimecmp, cmp);
    csr_set(sstatus, MSTATUS_SIE);
    spin_for_trap(1);
    csr_clear(sstatus, MSTATUS_SIE);
    return (long)cmp;
}

static long s_probe(long fn)
{
    return (long)((uint64_t (*)(void))fn)();
}

static void timers(void)
{
    section("machine timer (mtimecmp)");
    uint64_t t1 = rdtime(), m = mtime(), t2 = rdtime();
    CHECK("time CSR and mtime are one clock (t1 <= mtime <= t2)", t1 <= m && m <= t2);
    set_mtimecmp(~0UL);
    CHECK_BITS("mtimecmp = max: MTIP clear", csr_read(mip), MIP(IRQ_MTI), 0);
    set_mtimecmp(0);
    CHECK_BITS("mtimecmp = 0: MTIP set at once", csr_read(mip), MIP(IRQ_MTI), MIP(IRQ_MTI));
    set_mtimecmp(~0UL);
    CHECK_BITS("mtimecmp = max again: MTIP clear at once", csr_read(mip), MIP(IRQ_MTI), 0);
    MMIO32(CLINT_MTIMECMP(0)) = 0x12345678;
    MMIO32(CLINT_MTIMECMP(0) + 4) = 0x7abcdef0;
    CHECK_EQ("mtimecmp: two 32-bit halves", MMIO64(CLINT_MTIMECMP(0)), 0x7abcdef012345678UL);
    csr_clear(mip, MIP(IRQ_MTI));
    set_mtimecmp(~0UL);

    traps_reset();
    trap_hook = mti_hook;
    uint64_t cmp = mtime() + 20000;             /* 2 ms */
    set_mtimecmp(cmp);
    csr_write(mie, MIP(IRQ_MTI));
    csr_set(mstatus, MSTATUS_MIE);
    wait_traps(1);
    csr_clear(mstatus, MSTATUS_MIE);
    expect_trap("MTI taken", PRV_M, INTERRUPT | IRQ_MTI, ANY, 0);
    check_range("MTI came after mtimecmp, within 2 s", irq_time, cmp, cmp + 20000000);
    CHECK_BITS("MTIP clear after the handler raised mtimecmp", csr_read(mip), MIP(IRQ_MTI), 0);

    traps_reset();
    set_mtimecmp(0);
    run_in_mode_m(PRV_U, spin_for_trap, 1);
    expect_trap("MTI taken from U with mstatus.MIE = 0", PRV_M, INTERRUPT | IRQ_MTI, ANY, 0);
    CHECK_EQ("MTI from U: MPP = U", (trap_log[0].status & MSTATUS_MPP) >> MPP_SHIFT, PRV_U);
    trap_hook = 0;

    set_mtimecmp(mtime() + 10000);
    CHECK_EQ("vectored mtvec: the timer lands at base + 4 * 7", vectored_mti_wait(100000000), 7);
    set_mtimecmp(~0UL);
    csr_write(mie, 0);

    section("supervisor timer (Sstc stimecmp)");
    csr_write(menvcfg, 0);
    csr_set(mip, MIP(IRQ_STI));
    CHECK_BITS("STCE = 0: mip.STIP writable by M", csr_read(mip), MIP(IRQ_STI), MIP(IRQ_STI));
    csr_clear(mip, MIP(IRQ_STI));
    CHECK_BITS("STCE = 0: mip.STIP cleared by M", csr_read(mip), MIP(IRQ_STI), 0);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_stimecmp);
    expect_trap("STCE = 0: stimecmp from S is illegal", PRV_M, EXC_ILLEGAL, A(probe_stimecmp),
                insn_stimecmp);

    csr_write(menvcfg, MENVCFG_STCE);
    CHECK_BITS("menvcfg.STCE reads back", csr_read(menvcfg), MENVCFG_STCE, MENVCFG_STCE);
    csr_write(stimecmp, ~0UL);
    CHECK_BITS("stimecmp = max: STIP clear", csr_read(mip), MIP(IRQ_STI), 0);
    csr_write(stimecmp, 0);
    CHECK_BITS("stimecmp = 0: STIP set", csr_read(mip), MIP(IRQ_STI), MIP(IRQ_STI));
    csr_clear(mip, MIP(IRQ_STI));
    CHECK_BITS("STCE = 1: mip.STIP is read-only", csr_read(mip), MIP(IRQ_STI), MIP(IRQ_STI));
    csr_write(stimecmp, ~0UL);
    CHECK_BITS("stimecmp = max again: STIP clear", csr_read(mip), MIP(IRQ_STI), 0);
    csr_write(mcounteren, 5);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_stimecmp);
    expect_trap("mcounteren.TM = 0: stimecmp from S is illegal", PRV_M, EXC_ILLEGAL,
                A(probe_stimecmp), insn_stimecmp);
    csr_write(mcounteren, 7);
    traps_reset();
    uint64_t v = (uint64_t)run_in_mode_m(PRV_S, s_probe, (long)probe_stimecmp);
    expect_no_trap("STCE = 1, TM = 1: stimecmp readable from S");
    CHECK_EQ("stimecmp from S", v, ~0UL);

    csr_write(mideleg, MIP(IRQ_STI));
    csr_write(mie, MIP(IRQ_STI));
    traps_reset();
    trap_hook = sti_hook;
    cmp = (uint64_t)run_in_mode_m(PRV_S, s_stimecmp_wait, 20000);
    trap_hook = 0;
    expect_trap("STI from stimecmp, delegated", PRV_S, INTERRUPT | IRQ_STI, ANY, 0);
    check_range("STI came after stimecmp, within 2 s", irq_time, cmp, cmp + 20000000);
    CHECK_BITS("STIP clear after the handler raised stimecmp", csr_read(mip), MIP(IRQ_STI), 0);
    csr_write(mie, 0);
    csr_write(mideleg, 0);
    csr_write(menvcfg, 0);
}

/* -- External interrupts (PLIC) -------------------------------------------------- */

static int ext_hook(Frame *f, int level)
{
    unsigned ctx = level == PRV_M ? 0 : 1;
    if (f->cause != (INTERRUPT | (level == PRV_M ? IRQ_MEI : IRQ_SEI)))
        return 0;
    claimed = MMIO32(PLIC_CLAIM(ctx));
    pending_after_claim = MMIO32(PLIC_PENDING(0));
    MMIO8(UART_IER) = 0;                        /* the device stops asking */
    MMIO32(PLIC_CLAIM(ctx)) = (uint32_t)claimed;
    return 1;
}

static void plic_reset(void)
{
    MMIO8(UART_IER) = 0;
    MMIO32(PLIC_ENABLE(0)) = 0;
    MMIO32(PLIC_ENABLE(1)) = 0;
    MMIO32(PLIC_THRESHOLD(0)) = 0;
    MMIO32(PLIC_THRESHOLD(1)) = 0;
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 1;
}

static void external(void)
{
    section("machine external interrupt (PLIC context 0, UART THR empty)");
    plic_reset();
    CHECK_EQ("UART priority reads back", MMIO32(PLIC_PRIORITY(UART_IRQ)), 1);
    MMIO32(PLIC_ENABLE(0)) = 1u << UART_IRQ;
    CHECK_EQ("context 0 enable reads back", MMIO32(PLIC_ENABLE(0)), 1u << UART_IRQ);
    CHECK_BITS("no MEIP while the UART is quiet", csr_read(mip), MIP(IRQ_MEI), 0);
    MMIO8(UART_IER) = IER_THRI;
    CHECK_BITS("IER.ETBEI: the UART reports THR empty", MMIO8(UART_IIR), 0x0f, 0x02);
    MMIO8(UART_IER) = 0;
    MMIO8(UART_IER) = IER_THRI;                 /* reading IIR acknowledged it: again */
    CHECK_BITS("PLIC pending bit 10", MMIO32(PLIC_PENDING(0)), 1u << UART_IRQ, 1u << UART_IRQ);
    CHECK_BITS("mip.MEIP set", csr_read(mip), MIP(IRQ_MEI), MIP(IRQ_MEI));
    csr_clear(mip, MIP(IRQ_MEI));
    CHECK_BITS("mip.MEIP is read-only", csr_read(mip), MIP(IRQ_MEI), MIP(IRQ_MEI));
    MMIO32(PLIC_THRESHOLD(0)) = 1;
    CHECK_BITS("threshold 1 masks priority 1", csr_read(mip), MIP(IRQ_MEI), 0);
    MMIO32(PLIC_THRESHOLD(0)) = 0;
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 0;
    CHECK_BITS("priority 0 never interrupts", csr_read(mip), MIP(IRQ_MEI), 0);
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 1;
    CHECK_BITS("priority 1 again: MEIP", csr_read(mip), MIP(IRQ_MEI), MIP(IRQ_MEI));

    traps_reset();
    trap_hook = ext_hook;
    claimed = 0xdead;
    csr_write(mie, MIP(IRQ_MEI));
    csr_set(mstatus, MSTATUS_MIE);
    wait_traps(1);
    csr_clear(mstatus, MSTATUS_MIE);
    expect_trap("MEI taken", PRV_M, INTERRUPT | IRQ_MEI, ANY, 0);
    CHECK_EQ("claim returns the UART's source 10", claimed, UART_IRQ);
    CHECK_BITS("pending bit clear once claimed", pending_after_claim, 1u << UART_IRQ, 0);
    CHECK_BITS("MEIP clear after complete (device quiet)", csr_read(mip), MIP(IRQ_MEI), 0);
    CHECK_EQ("claim with nothing pending returns 0", MMIO32(PLIC_CLAIM(0)), 0);

    MMIO8(UART_IER) = IER_THRI;
    uint32_t id = MMIO32(PLIC_CLAIM(0));
    CHECK_EQ("claim by polling", id, UART_IRQ);
    CHECK_BITS("claimed: MEIP clear while the line stays high", csr_read(mip), MIP(IRQ_MEI), 0);
    MMIO32(PLIC_CLAIM(0)) = id;
    CHECK_BITS("completed with the line high: MEIP again", csr_read(mip), MIP(IRQ_MEI),
               MIP(IRQ_MEI));
    MMIO32(PLIC_ENABLE(0)) = 0;
    CHECK_BITS("source disabled: MEIP clear", csr_read(mip), MIP(IRQ_MEI), 0);
    CHECK_EQ("claim of a disabled source returns 0", MMIO32(PLIC_CLAIM(0)), 0);

    section("supervisor external interrupt (PLIC context 1)");
    MMIO32(PLIC_ENABLE(1)) = 1u << UART_IRQ;
    CHECK_BITS("context 1 drives mip.SEIP", csr_read(mip), MIP(IRQ_SEI), MIP(IRQ_SEI));
    CHECK_BITS("and not MEIP", csr_read(mip), MIP(IRQ_MEI), 0);
    csr_clear(mip, MIP(IRQ_SEI));
    CHECK_BITS("clearing the software SEIP leaves the PLIC's", csr_read(mip), MIP(IRQ_SEI),
               MIP(IRQ_SEI));
    csr_write(mideleg, MIP(IRQ_SEI));
    csr_write(mie, MIP(IRQ_SEI));
    traps_reset();
    claimed = 0xdead;
    run_in_mode_m(PRV_S, s_spin_sie, 1);
    expect_trap("SEI taken in S (delegated)", PRV_S, INTERRUPT | IRQ_SEI, ANY, 0);
    CHECK_EQ("S claim returns 10", claimed, UART_IRQ);
    CHECK_BITS("SEIP clear after complete", csr_read(mip), MIP(IRQ_SEI), 0);
    trap_hook = 0;
    csr_write(mideleg, 0);
    csr_write(mie, 0);

    section("software-written SEIP beside the PLIC's");
    csr_set(mip, MIP(IRQ_SEI));
    CHECK_BITS("M sets mip.SEIP", csr_read(mip), MIP(IRQ_SEI), MIP(IRQ_SEI));
    MMIO8(UART_IER) = IER_THRI;                 /* the PLIC's S output rises ... */
    MMIO8(UART_IER) = 0;                        /* ... and falls */
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 2;
    CHECK_BITS("the software SEIP survives PLIC activity", csr_read(mip), MIP(IRQ_SEI),
               MIP(IRQ_SEI));
    csr_write(mie, MIP(IRQ_SEI));
    traps_reset();
    probe_wfi();                                /* returns: SEIP is pending and enabled */
    expect_no_trap("wfi woke on the software SEIP (MIE = 0)");
    csr_write(mie, 0);
    csr_clear(mip, MIP(IRQ_SEI));
    CHECK_BITS("M clears mip.SEIP", csr_read(mip), MIP(IRQ_SEI), 0);
    plic_reset();
}

/* -- PLIC arbitration: the UART (10) and the goldfish RTC's alarm (11) ------------ */

#define RTC_ALARM_LOW 0x08
#define RTC_ALARM_HIGH 0x0c
#define RTC_IRQ_ENABLED 0x10
#define RTC_CLEAR_INTERRUPT 0x1c
#define RTC_IRQ 11

static void rtc_fire(void)
{
    MMIO32(RTC_BASE + RTC_IRQ_ENABLED) = 1;
    MMIO32(RTC_BASE + RTC_ALARM_HIGH) = 0;
    MMIO32(RTC_BASE + RTC_ALARM_LOW) = 1;       /* long past: fires now */
}

static void arbitration(void)
{
    section("PLIC arbitration between two sources");
    plic_reset();
    MMIO32(PLIC_ENABLE(0)) = ~0u;
    CHECK_BITS("enable bit of source 0 is read-only 0", MMIO32(PLIC_ENABLE(0)), 1, 0);
    MMIO32(PLIC_ENABLE(0)) = 1u << UART_IRQ | 1u << RTC_IRQ;
    MMIO32(PLIC_PRIORITY(RTC_IRQ)) = 2;
    MMIO8(UART_IER) = IER_THRI;
    rtc_fire();
    CHECK("the RTC alarm raises source 11",
          WAIT_FOR(MMIO32(PLIC_PENDING(0)) & 1u << RTC_IRQ, 5000000));
    CHECK_BITS("both pending", MMIO32(PLIC_PENDING(0)), 3u << UART_IRQ, 3u << UART_IRQ);
    MMIO32(PLIC_THRESHOLD(0)) = 1;
    uint32_t first = MMIO32(PLIC_CLAIM(0));
    uint32_t second = MMIO32(PLIC_CLAIM(0));
    MMIO32(PLIC_THRESHOLD(0)) = 0;
    uint32_t third = MMIO32(PLIC_CLAIM(0));
    uint32_t fourth = MMIO32(PLIC_CLAIM(0));
    CHECK_EQ("threshold 1: the priority-2 source 11", first, RTC_IRQ);
    CHECK_EQ("threshold 1: then nothing (10 has priority 1)", second, 0);
    CHECK_EQ("threshold 0: source 10", third, UART_IRQ);
    CHECK_EQ("both claimed: 0", fourth, 0);
    MMIO32(RTC_BASE + RTC_CLEAR_INTERRUPT) = 1;
    MMIO32(PLIC_CLAIM(0)) = RTC_IRQ;
    MMIO32(PLIC_CLAIM(0)) = UART_IRQ;
    MMIO32(PLIC_PRIORITY(RTC_IRQ)) = 1;
    rtc_fire();
    WAIT_FOR(MMIO32(PLIC_PENDING(0)) & 1u << RTC_IRQ, 5000000);
    CHECK_EQ("equal priorities: the lower id (10) first", MMIO32(PLIC_CLAIM(0)), UART_IRQ);
    CHECK_EQ("then 11", MMIO32(PLIC_CLAIM(0)), RTC_IRQ);
    MMIO32(RTC_BASE + RTC_CLEAR_INTERRUPT) = 1;
    MMIO32(RTC_BASE + RTC_IRQ_ENABLED) = 0;
    MMIO8(UART_IER) = 0;
    MMIO32(PLIC_CLAIM(0)) = RTC_IRQ;
    MMIO32(PLIC_CLAIM(0)) = UART_IRQ;
    CHECK_EQ("all completed, lines low: nothing pending", MMIO32(PLIC_PENDING(0)) & 3u << UART_IRQ,
             0);
    CHECK_BITS("MEIP clear", csr_read(mip), MIP(IRQ_MEI), 0);
    MMIO32(PLIC_PRIORITY(RTC_IRQ)) = 0;
    plic_reset();
}

/* -- Priorities ----------------------------------------------------------------------- */

static long u_wait4(long n)
{
    return spin_for_trap(n);
}

static void priorities(void)
{
    section("priorities: MEI > MSI > MTI > SEI > SSI > STI");
    plic_reset();
    MMIO32(PLIC_ENABLE(0)) = 1u << UART_IRQ;
    MMIO8(UART_IER) = IER_THRI;                 /* MEI */
    MMIO32(CLINT_MSIP(0)) = 1;                  /* MSI */
    set_mtimecmp(0);                            /* MTI */
    csr_set(mip, MIP(IRQ_SEI) | MIP(IRQ_SSI) | MIP(IRQ_STI));
    CHECK_BITS("all six pending", csr_read(mip), ALL_IRQS, ALL_IRQS);
    traps_reset();
    csr_write(mie, ALL_IRQS);                   /* the handler disables each */
    csr_set(mstatus, MSTATUS_MIE);
    wait_traps(6);
    csr_clear(mstatus, MSTATUS_MIE);
    CHECK_EQ("six interrupts taken", trap_count, 6);
    static const uint64_t order[] = { IRQ_MEI, IRQ_MSI, IRQ_MTI, IRQ_SEI, IRQ_SSI, IRQ_STI };
    static const char *const names[] = { "1st: MEI", "2nd: MSI", "3rd: MTI", "4th: SEI",
                                         "5th: SSI", "6th: STI" };
    for (int i = 0; i < 6; i++)
        CHECK_EQ(names[i], trap_log[i].cause, INTERRUPT | order[i]);

    section("priorities across levels: from U, M's MTI before S's SEI, SSI, STI");
    csr_write(mideleg, MIP(IRQ_SEI) | MIP(IRQ_SSI) | MIP(IRQ_STI));
    MMIO8(UART_IER) = 0;
    MMIO32(CLINT_MSIP(0)) = 0;
    csr_set(mip, MIP(IRQ_SEI) | MIP(IRQ_SSI) | MIP(IRQ_STI));
    traps_reset();
    csr_write(mie, MIP(IRQ_MTI) | MIP(IRQ_SEI) | MIP(IRQ_SSI) | MIP(IRQ_STI));
    run_in_mode_m(PRV_U, u_wait4, 4);
    CHECK_EQ("four interrupts taken", trap_count, 4);
    static const uint64_t order2[] = { IRQ_MTI, IRQ_SEI, IRQ_SSI, IRQ_STI };
    static const int level2[] = { PRV_M, PRV_S, PRV_S, PRV_S };
    static const char *const names2[] = { "1st: MTI in M", "2nd: SEI in S", "3rd: SSI in S",
                                          "4th: STI in S" };
    for (int i = 0; i < 4; i++)
        CHECK_EQ(names2[i], trap_log[i].cause | (uint64_t)trap_log[i].level << 56,
                 INTERRUPT | order2[i] | (uint64_t)level2[i] << 56);
    csr_write(mie, 0);
    csr_write(mideleg, 0);
    csr_clear(mip, MIP(IRQ_SEI) | MIP(IRQ_SSI) | MIP(IRQ_STI));
    set_mtimecmp(~0UL);
    plic_reset();
}

/* -- wfi -------------------------------------------------------------------------------- */

static void wfi(void)
{
    section("wfi");
    traps_reset();
    csr_write(mie, MIP(IRQ_MTI));
    uint64_t cmp = mtime() + 50000;             /* 5 ms */
    set_mtimecmp(cmp);
    int turns = 0;
    while (!(csr_read(mip) & MIP(IRQ_MTI)) && turns < 1000000) {
        probe_wfi();
        turns++;
    }
    uint64_t t = rdtime();
    expect_no_trap("wfi with MIE = 0 takes no trap");
    CHECK_BITS("woken with MTIP pending", csr_read(mip), MIP(IRQ_MTI), MIP(IRQ_MTI));
    CHECK("woken no earlier than mtimecmp", t >= cmp);
    check_range("one wfi slept until the timer (0: it came before the wfi)", turns, 0, 1);

    traps_reset();
    trap_hook = wfi_hook;
    cmp = mtime() + 50000;
    set_mtimecmp(cmp);
    csr_set(mstatus, MSTATUS_MIE);
    probe_wfi();
    csr_clear(mstatus, MSTATUS_MIE);
    trap_hook = 0;
    int n = trap_count;
    CHECK("wfi with MIE = 1: the timer interrupt came", n >= 1);
    if (n >= 1 && n <= TRAP_LOG) {
        CHECK_EQ("its mcause", trap_log[n - 1].cause, INTERRUPT | IRQ_MTI);
        CHECK_EQ("its mepc: the instruction after the wfi", trap_log[n - 1].epc,
                 A(probe_wfi) + 4);
    }
    CHECK("the interrupt came no earlier than mtimecmp", irq_time >= cmp);
    csr_write(mie, 0);
    set_mtimecmp(~0UL);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    csr_write(mie, 0);
    set_mtimecmp(~0UL);
    software();
    timers();
    external();
    arbitration();
    priorities();
    wfi();
}
