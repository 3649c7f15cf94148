// system-mode: s
// system-args: -smp 2
// system-variant: -accel xlat,threads=1
// system-expect: DBCN console_write works
// system-expect: [write_byte!]
// An S-mode payload under the SBI (-bios default; SBI spec 2.0): the boot
// state (a0 = hartid, a1 = the device tree), BASE (spec version 2.0,
// probe_extension), DBCN console_write and console_write_byte, HSM
// (hart_get_status, hart_start of the second hart with its a0/a1, hart_stop,
// hart_suspend retentive and not, each ended by an IPI),
// IPI send_ipi to this hart, TIME set_timer, RFENCE, what is preserved
// across a call, and SRST: the run ends with system_reset(shutdown) (lib.c).
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))

enum {
    EXT_BASE = 0x10, EXT_TIME = 0x54494d45, EXT_IPI = 0x735049, EXT_RFENCE = 0x52464e43,
    EXT_HSM = 0x48534d, EXT_SRST = 0x53525354, EXT_DBCN = 0x4442434e,
};
enum { SBI_ERR_NOT_SUPPORTED = -2, SBI_ERR_INVALID_PARAM = -3, SBI_ERR_INVALID_ADDRESS = -5,
       SBI_ERR_ALREADY_AVAILABLE = -6 };
enum { HSM_STARTED = 0, HSM_STOPPED = 1, HSM_SUSPENDED = 4 };

static volatile uint64_t sec_hartid, sec_opaque, sec_satp, sec_sstatus;
static volatile int sec_running, sec_woken, sec_release;
static volatile long sec_suspend_ret = 1, sec_bad_type, sec_bad_addr;

enum { OPAQUE_WFI = 0x1234, OPAQUE_SUSPEND = 0x5001, OPAQUE_NON_RETENTIVE = 0x5002,
       OPAQUE_RESUMED = 0x5003 };

/* Hart 1: note its start state, then sleep in wfi until an IPI (sie.SSIE
 * with SIE clear: wfi wakes, no trap), then wait to be let go. */
void secondary_main(uint64_t hartid, uint64_t opaque)
{
    sec_hartid = hartid;
    sec_opaque = opaque;
    sec_satp = csr_read(satp);
    sec_sstatus = csr_read(sstatus);
    csr_write(sie, MIP(IRQ_SSI));
    __atomic_store_n(&sec_running, 1, __ATOMIC_SEQ_CST);
    if (opaque == OPAQUE_WFI) {
        while (!(csr_read(sip) & MIP(IRQ_SSI)))
            asm volatile("wfi");
        csr_clear(sip, MIP(IRQ_SSI));
        __atomic_store_n(&sec_woken, 1, __ATOMIC_SEQ_CST);
    }
    if (opaque == OPAQUE_SUSPEND || opaque == OPAQUE_NON_RETENTIVE) {
        sec_bad_type = sbi_call(EXT_HSM, 3, 1, 0, 0).error;
        sec_bad_addr = sbi_call(EXT_HSM, 3, 0x80000000, 0x1000, 0).error;
        if (opaque == OPAQUE_SUSPEND) {             /* until hart 0's IPI */
            sec_suspend_ret = sbi_call(EXT_HSM, 3, 0, 0, 0).error;
            csr_clear(sip, MIP(IRQ_SSI));
        } else {                                    /* on at secondary_entry */
            sbi_call(EXT_HSM, 3, 0x80000000, (long)A(secondary_entry), OPAQUE_RESUMED);
            sec_suspend_ret = 0xbad;                /* not reached */
        }
    }
    csr_write(sie, 0);
    while (!__atomic_load_n(&sec_release, __ATOMIC_SEQ_CST))
        ;
}

static void boot(uint64_t hartid, uint64_t dtb)
{
    section("boot state");
    CHECK_EQ("a0 = boot hart id 0", hartid, 0);
    const volatile uint8_t *fdt = (const volatile uint8_t *)(uintptr_t)dtb;
    uint32_t magic = (uint32_t)fdt[0] << 24 | fdt[1] << 16 | fdt[2] << 8 | fdt[3];
    CHECK_EQ("a1 points at a device tree (magic 0xd00dfeed)", magic, 0xd00dfeed);
    CHECK_EQ("satp = 0 at entry", csr_read(satp), 0);
    traps_reset();
    probe_csrr_mstatus();
    expect_trap("we are in S: csrr mstatus is illegal", PRV_S, EXC_ILLEGAL,
                A(probe_csrr_mstatus), insn_csrr_mstatus);
    traps_reset();
    (void)rdtime();
    expect_no_trap("time readable from S");
}

static void base(void)
{
    section("BASE");
    SbiRet r = sbi_call(EXT_BASE, 0, 0, 0, 0);
    CHECK_EQ("get_spec_version: error", r.error, 0);
    CHECK_EQ("get_spec_version: 2.0", r.value, 2UL << 24);
    r = sbi_call(EXT_BASE, 1, 0, 0, 0);
    CHECK_EQ("get_impl_id: error", r.error, 0);
    r = sbi_call(EXT_BASE, 2, 0, 0, 0);
    CHECK_EQ("get_impl_version: error", r.error, 0);
    static const struct { long eid; const char *name; } exts[] = {
        { EXT_BASE, "probe_extension(BASE)" }, { EXT_TIME, "probe_extension(TIME)" },
        { EXT_IPI, "probe_extension(IPI)" }, { EXT_RFENCE, "probe_extension(RFENCE)" },
        { EXT_HSM, "probe_extension(HSM)" }, { EXT_SRST, "probe_extension(SRST)" },
        { EXT_DBCN, "probe_extension(DBCN)" },
    };
    for (unsigned i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        r = sbi_call(EXT_BASE, 3, exts[i].eid, 0, 0);
        CHECK(exts[i].name, r.error == 0 && r.value != 0);
    }
    r = sbi_call(EXT_BASE, 3, 0x12345678, 0, 0);
    CHECK_EQ("probe_extension(unknown): 0", r.value, 0);
    CHECK_EQ("probe_extension(unknown): no error", r.error, 0);
    for (long fid = 4; fid <= 6; fid++) {
        r = sbi_call(EXT_BASE, fid, 0, 0, 0);
        CHECK_EQ(fid == 4 ? "get_mvendorid: error" : fid == 5 ? "get_marchid: error"
                                                              : "get_mimpid: error",
                 r.error, 0);
    }
    r = sbi_call(0x0a000000, 0, 0, 0, 0);
    CHECK_EQ("an unknown extension: SBI_ERR_NOT_SUPPORTED", r.error, SBI_ERR_NOT_SUPPORTED);
    r = sbi_call(EXT_BASE, 99, 0, 0, 0);
    CHECK_EQ("an unknown BASE function: SBI_ERR_NOT_SUPPORTED", r.error, SBI_ERR_NOT_SUPPORTED);

    /* Everything but a0 and a1 is preserved. */
    register long a0 asm("a0") = 0, a1 asm("a1") = 0;
    register long a2 asm("a2") = 0x2222, a3 asm("a3") = 0x3333, a4 asm("a4") = 0x4444;
    register long a5 asm("a5") = 0x5555, a6 asm("a6") = 0, a7 asm("a7") = EXT_BASE;
    register long t0 asm("t0") = 0x7070, s2 asm("s2") = 0x5252;
    asm volatile("ecall"
                 : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), "+r"(a6),
                   "+r"(a7), "+r"(t0), "+r"(s2)
                 :
                 : "memory");
    CHECK("a2..a7, t0, s2 preserved across a call",
          a2 == 0x2222 && a3 == 0x3333 && a4 == 0x4444 && a5 == 0x5555 && a6 == 0 &&
              a7 == EXT_BASE && t0 == 0x7070 && s2 == 0x5252);
}

static void dbcn(void)
{
    section("DBCN");
    static const char msg[] = "DBCN console_write works\n";
    SbiRet r = sbi_call(EXT_DBCN, 0, sizeof msg - 1, (long)A(msg), 0);
    CHECK_EQ("console_write: error", r.error, 0);
    CHECK_EQ("console_write: bytes written", r.value, sizeof msg - 1);
    long e = 0;
    for (const char *p = "[write_byte!]\n"; *p; p++)
        e |= sbi_call(EXT_DBCN, 2, *p, 0, 0).error;
    CHECK_EQ("console_write_byte: error", e, 0);
    r = sbi_call(EXT_DBCN, 0, 8, 0x1000, 0);
    CHECK_EQ("console_write of memory that is not RAM: SBI_ERR_INVALID_PARAM", r.error,
             SBI_ERR_INVALID_PARAM);
}

static void hsm(void)
{
    section("HSM");
    SbiRet r = sbi_call(EXT_HSM, 2, 0, 0, 0);
    CHECK_EQ("hart_get_status(0): error", r.error, 0);
    CHECK_EQ("hart_get_status(0): STARTED", r.value, HSM_STARTED);
    r = sbi_call(EXT_HSM, 2, 1, 0, 0);
    CHECK_EQ("hart_get_status(1): STOPPED", r.value, HSM_STOPPED);
    r = sbi_call(EXT_HSM, 2, 7, 0, 0);
    CHECK_EQ("hart_get_status(7), no such hart: SBI_ERR_INVALID_PARAM", r.error,
             SBI_ERR_INVALID_PARAM);
    r = sbi_call(EXT_HSM, 0, 0, (long)A(secondary_entry), 0);
    CHECK_EQ("hart_start(0), running: SBI_ERR_ALREADY_AVAILABLE", r.error,
             SBI_ERR_ALREADY_AVAILABLE);
    r = sbi_call(EXT_HSM, 0, 1, 0x1000, 0);
    CHECK_EQ("hart_start(1) at an address with no memory: SBI_ERR_INVALID_ADDRESS", r.error,
             SBI_ERR_INVALID_ADDRESS);
    CHECK_EQ("and hart 1 stays STOPPED", sbi_call(EXT_HSM, 2, 1, 0, 0).value, HSM_STOPPED);
    r = sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), 0x1234);
    CHECK_EQ("hart_start(1): error", r.error, 0);
    CHECK("hart 1 runs", WAIT_FOR(__atomic_load_n(&sec_running, __ATOMIC_SEQ_CST), 5000000));
    CHECK_EQ("hart 1: a0 = its hart id", sec_hartid, 1);
    CHECK_EQ("hart 1: a1 = opaque", sec_opaque, 0x1234);
    CHECK_EQ("hart 1: satp = 0", sec_satp, 0);
    CHECK_BITS("hart 1: sstatus.SIE = 0", sec_sstatus, MSTATUS_SIE, 0);
    r = sbi_call(EXT_HSM, 2, 1, 0, 0);
    CHECK_EQ("hart_get_status(1): STARTED", r.value, HSM_STARTED);
    WAIT_FOR(0, 20000);                         /* let it reach its wfi */
    r = sbi_call(EXT_RFENCE, 1, 3, 0, 0);
    CHECK_EQ("remote_sfence_vma(harts 0, 1) while hart 1 sleeps", r.error, 0);
    r = sbi_call(EXT_IPI, 0, 2, 0, 0);
    CHECK_EQ("send_ipi(hart 1)", r.error, 0);
    CHECK("the IPI woke hart 1 from wfi",
          WAIT_FOR(__atomic_load_n(&sec_woken, __ATOMIC_SEQ_CST), 5000000));
    r = sbi_call(EXT_RFENCE, 1, 3, 0, 0);
    CHECK_EQ("remote_sfence_vma(harts 0, 1) while hart 1 runs", r.error, 0);
    __atomic_store_n(&sec_release, 1, __ATOMIC_SEQ_CST);
    CHECK("hart 1 stops (hart_stop)",
          WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));

    sec_running = sec_release = 0;
    r = sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), 0x5678);
    CHECK_EQ("hart_start(1) again after it stopped", r.error, 0);
    CHECK("hart 1 runs again", WAIT_FOR(__atomic_load_n(&sec_running, __ATOMIC_SEQ_CST), 5000000));
    CHECK_EQ("hart 1: a1 = the new opaque", sec_opaque, 0x5678);
    __atomic_store_n(&sec_release, 1, __ATOMIC_SEQ_CST);
    CHECK("and stops again",
          WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));

    sec_running = sec_release = 0;
    sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), OPAQUE_SUSPEND);
    CHECK("hart 1 suspends itself (retentive)",
          WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_SUSPENDED, 5000000));
    CHECK_EQ("hart_suspend(reserved type 1): SBI_ERR_INVALID_PARAM", sec_bad_type,
             SBI_ERR_INVALID_PARAM);
    CHECK_EQ("hart_suspend(non-retentive at no memory): SBI_ERR_INVALID_ADDRESS", sec_bad_addr,
             SBI_ERR_INVALID_ADDRESS);
    WAIT_FOR(0, 20000);
    CHECK_EQ("and stays suspended", sbi_call(EXT_HSM, 2, 1, 0, 0).value, HSM_SUSPENDED);
    sbi_call(EXT_IPI, 0, 2, 0, 0);
    CHECK("an IPI resumes it: hart_suspend returns success",
          WAIT_FOR(sec_suspend_ret == 0, 5000000) &&
          sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STARTED);
    __atomic_store_n(&sec_release, 1, __ATOMIC_SEQ_CST);
    CHECK("hart 1 stops", WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));

    sec_running = sec_release = 0;
    sec_suspend_ret = 1;
    sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), OPAQUE_NON_RETENTIVE);
    CHECK("hart 1 suspends itself (non-retentive)",
          WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_SUSPENDED, 5000000));
    sec_running = 0;
    sbi_call(EXT_IPI, 0, 2, 0, 0);
    CHECK("an IPI resumes it at resume_addr",
          WAIT_FOR(__atomic_load_n(&sec_running, __ATOMIC_SEQ_CST), 5000000));
    CHECK_EQ("with a1 = opaque", sec_opaque, OPAQUE_RESUMED);
    CHECK_EQ("and satp = 0", sec_satp, 0);
    CHECK_BITS("and sstatus.SIE = 0", sec_sstatus, MSTATUS_SIE, 0);
    CHECK_EQ("not after its call", sec_suspend_ret, 1);
    __atomic_store_n(&sec_release, 1, __ATOMIC_SEQ_CST);
    CHECK("hart 1 stops", WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));
}

static int ssi_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_SSI))
        return 0;
    csr_clear(sip, MIP(IRQ_SSI));
    return 1;
}

static volatile uint64_t sti_time;

static int sti_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_STI))
        return 0;
    sti_time = rdtime();
    sbi_call(EXT_TIME, 0, -1, 0, 0);
    return 1;
}

static void ipi_and_timer(void)
{
    section("IPI");
    trap_hook = ssi_hook;
    csr_write(sie, MIP(IRQ_SSI));
    csr_set(sstatus, MSTATUS_SIE);
    traps_reset();
    SbiRet r = sbi_call(EXT_IPI, 0, 1, 0, 0);
    WAIT_FOR(trap_count > 0, 5000000);
    CHECK_EQ("send_ipi(mask 1, base 0): error", r.error, 0);
    expect_trap("the IPI is a supervisor software interrupt", PRV_S, INTERRUPT | IRQ_SSI, ANY,
                0);
    traps_reset();
    r = sbi_call(EXT_IPI, 0, 0, -1, 0);
    WAIT_FOR(trap_count > 0, 5000000);
    CHECK_EQ("send_ipi(base -1: every hart): error", r.error, 0);
    expect_trap("and it reaches this hart", PRV_S, INTERRUPT | IRQ_SSI, ANY, 0);
    r = sbi_call(EXT_IPI, 0, 1, 5, 0);
    CHECK_EQ("send_ipi to hart 5 (none): SBI_ERR_INVALID_PARAM", r.error, SBI_ERR_INVALID_PARAM);
    r = sbi_call(EXT_IPI, 0, 4, 0, 0);
    CHECK_EQ("send_ipi to hart 2 (none of 2): SBI_ERR_INVALID_PARAM", r.error,
             SBI_ERR_INVALID_PARAM);
    csr_clear(sstatus, MSTATUS_SIE);
    csr_write(sie, 0);
    CHECK_BITS("SSIP clear", csr_read(sip), MIP(IRQ_SSI), 0);

    section("TIME");
    r = sbi_call(EXT_TIME, 0, 0, 0, 0);
    CHECK_EQ("set_timer(0): error", r.error, 0);
    CHECK("set_timer(0): STIP pending", WAIT_FOR(csr_read(sip) & MIP(IRQ_STI), 100000));
    sbi_call(EXT_TIME, 0, -1, 0, 0);
    CHECK_BITS("set_timer(-1): STIP clear", csr_read(sip), MIP(IRQ_STI), 0);
    trap_hook = sti_hook;
    csr_write(sie, MIP(IRQ_STI));
    traps_reset();
    uint64_t when = rdtime() + 20000;           /* 2 ms */
    sbi_call(EXT_TIME, 0, (long)when, 0, 0);
    csr_set(sstatus, MSTATUS_SIE);
    WAIT_FOR(trap_count > 0, 5000000);
    csr_clear(sstatus, MSTATUS_SIE);
    csr_write(sie, 0);
    trap_hook = 0;
    expect_trap("set_timer(now + 2 ms): a supervisor timer interrupt", PRV_S,
                INTERRUPT | IRQ_STI, ANY, 0);
    check_range("it came after the time asked for, within 2 s", sti_time, when,
                when + 20000000);
    CHECK_BITS("STIP clear after set_timer(-1)", csr_read(sip), MIP(IRQ_STI), 0);
    traps_reset();
    (void)csr_read(stimecmp);
    expect_no_trap("Sstc: stimecmp accessible from S under the SBI");
    csr_write(stimecmp, 0);
    CHECK_BITS("stimecmp = 0: STIP", csr_read(sip), MIP(IRQ_STI), MIP(IRQ_STI));
    csr_write(stimecmp, ~0UL);
    CHECK_BITS("stimecmp = max: no STIP", csr_read(sip), MIP(IRQ_STI), 0);

    section("RFENCE");
    r = sbi_call(EXT_RFENCE, 0, 3, 0, 0);
    CHECK_EQ("remote_fence_i(harts 0, 1)", r.error, 0);
    r = sbi_call(EXT_RFENCE, 1, 1, 0, 0);
    CHECK_EQ("remote_sfence_vma(hart 0)", r.error, 0);
    r = sbi_call(EXT_RFENCE, 1, 1, 5, 0);
    CHECK_EQ("remote_sfence_vma(hart 5): SBI_ERR_INVALID_PARAM", r.error, SBI_ERR_INVALID_PARAM);

    section("SRST");
    r = sbi_call(EXT_SRST, 0, 3, 0, 0);
    CHECK_EQ("system_reset(reserved type 3): SBI_ERR_INVALID_PARAM", r.error,
             SBI_ERR_INVALID_PARAM);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    boot(hartid, dtb);
    base();
    dbcn();
    hsm();
    ipi_and_timer();
    /* finish(): SRST system_reset(shutdown, no reason) ends the run with 0. */
}
