// Control and status registers (privileged spec 1.12, chapters 2-4; the
// unprivileged spec's Zicntr and F chapters): misa and the ID registers,
// read-only CSRs, mstatus/sstatus views and WARL fields (MPP = 2 refused),
// mtvec/mepc/mie WARL, satp under TVM, the counters (time at 10 MHz
// against the goldfish RTC, cycle and instret readable, instret exact),
// mcounteren/scounteren gating from S and U, and mstatus.FS: Off makes FP
// illegal, an FP write makes it Dirty and sets SD.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))

/* Probes of this file: the first instruction is the one under test. */
void probe_w_mhartid(void);
void probe_w_mvendorid(void);
uint64_t probe_r_sstatus(void);
uint64_t probe_r_satp(void);
uint64_t probe_fmv_x(void);
void probe_w_fflags(uint64_t v);
asm(".text\n"
    ".option push\n"
    ".option norvc\n"
    ".balign 4\n"
    "probe_w_mhartid:   csrw mhartid, zero\n ret\n"
    "probe_w_mvendorid: csrw mvendorid, zero\n ret\n"
    "probe_r_sstatus:   csrr a0, sstatus\n ret\n"
    "probe_r_satp:      csrr a0, satp\n ret\n"
    "probe_fmv_x:       fmv.x.d a0, f1\n ret\n"
    "probe_w_fflags:    csrw fflags, a0\n ret\n"
    ".option pop\n");

#define INSN_CSRW(csr)    (((uint32_t)(csr) << 20) | 0x1073)            /* csrrw x0, csr, x0 */
#define INSN_CSRR_A0(csr) (((uint32_t)(csr) << 20) | 0x2573)            /* csrrs a0, csr, x0 */

static long call(long fn)
{
    return (long)((uint64_t (*)(void))fn)();
}

/* -- Identification -------------------------------------------------------------- */

static void ids(void)
{
    section("misa and the ID registers");
    uint64_t misa = csr_read(misa);
    CHECK_EQ("misa.MXL = 2 (64-bit)", misa >> 62, 2);
    uint64_t want = 0;
    for (const char *e = "IMAFDCSU"; *e; e++)
        want |= 1UL << (*e - 'A');
    CHECK_BITS("misa has I M A F D C S U", misa, want, want);
    CHECK_BITS("misa has no E", misa, 1UL << ('E' - 'A'), 0);
    traps_reset();
    (void)csr_read(mvendorid);
    (void)csr_read(marchid);
    (void)csr_read(mimpid);
    (void)csr_read(0xf15);                      /* mconfigptr */
    expect_no_trap("mvendorid, marchid, mimpid, mconfigptr readable");
    CHECK_EQ("mhartid", csr_read(mhartid), 0);
    traps_reset();
    probe_w_mhartid();
    expect_trap("write to mhartid (read-only)", PRV_M, EXC_ILLEGAL, A(probe_w_mhartid),
                INSN_CSRW(0xf14));
    traps_reset();
    probe_w_mvendorid();
    expect_trap("write to mvendorid (read-only)", PRV_M, EXC_ILLEGAL, A(probe_w_mvendorid),
                INSN_CSRW(0xf11));
    traps_reset();
    asm volatile("csrw cycle, zero" ::: "memory");
    expect_trap("write to cycle (read-only)", PRV_M, EXC_ILLEGAL, ANY, INSN_CSRW(0xc00));
}

/* -- mstatus and friends ----------------------------------------------------------- */

static void status(void)
{
    section("mstatus and sstatus");
    uint64_t s = csr_read(mstatus);
    CHECK_BITS("mstatus.UXL = SXL = 2 (64-bit)", s, MSTATUS_UXL | MSTATUS_SXL,
               (2UL << 32) | (2UL << 34));
    static const char *const mpp_names[] = { "MPP = U reads back", "MPP = S reads back", 0,
                                             "MPP = M reads back" };
    for (int m = 3; m >= 0; m--) {
        if (m == 2)
            continue;
        csr_clear(mstatus, MSTATUS_MPP);
        csr_set(mstatus, (uint64_t)m << MPP_SHIFT);
        CHECK_EQ(mpp_names[m], (csr_read(mstatus) & MSTATUS_MPP) >> MPP_SHIFT, m);
    }
    csr_clear(mstatus, MSTATUS_MPP);
    csr_set(mstatus, (uint64_t)PRV_S << MPP_SHIFT);
    csr_write(mstatus, (csr_read(mstatus) & ~MSTATUS_MPP) | 2UL << MPP_SHIFT);
    uint64_t mpp = (csr_read(mstatus) & MSTATUS_MPP) >> MPP_SHIFT;
    CHECK("MPP = 2 (reserved) is refused (WARL: reads U, S or M)", mpp != 2);

    csr_set(mstatus, MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR);
    CHECK_BITS("TVM, TW, TSR writable", csr_read(mstatus), MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR,
               MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR);
    CHECK_BITS("sstatus hides MPP, MPIE, MIE, TVM, TW, TSR", csr_read(sstatus),
               MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE | MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR,
               0);
    csr_clear(mstatus, MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR);
    csr_write(sstatus, csr_read(sstatus) & ~MSTATUS_MPP);
    CHECK_BITS("sstatus writes leave MPP", csr_read(mstatus), MSTATUS_MPP, MSTATUS_MPP);
    csr_set(sstatus, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SUM | MSTATUS_MXR);
    CHECK_BITS("SPP, SPIE, SUM, MXR set through sstatus show in mstatus", csr_read(mstatus),
               MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SUM | MSTATUS_MXR,
               MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SUM | MSTATUS_MXR);
    csr_clear(mstatus, MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SUM | MSTATUS_MXR);
    CHECK_BITS("and cleared through mstatus leave sstatus", csr_read(sstatus),
               MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SUM | MSTATUS_MXR, 0);
    csr_set(mstatus, MSTATUS_SD);
    CHECK_BITS("SD is read-only (FS not dirty)", csr_read(mstatus),
               MSTATUS_SD | MSTATUS_FS, 0);

    section("trap vectors, epc, mie");
    uint64_t base = 0x80001000UL;
    uint64_t old = csr_read(mtvec);
    csr_write(mtvec, base | 1);
    CHECK_EQ("mtvec vectored", csr_read(mtvec), base | 1);
    csr_write(mtvec, base | 2);
    CHECK("mtvec mode 2 (reserved) is refused", (csr_read(mtvec) & 3) < 2);
    csr_write(mtvec, old);
    old = csr_read(stvec);
    csr_write(stvec, base | 1);
    CHECK_EQ("stvec vectored", csr_read(stvec), base | 1);
    csr_write(stvec, old);
    csr_write(mepc, 0x80001235UL);
    CHECK_EQ("mepc bit 0 reads 0", csr_read(mepc), 0x80001234UL);
    csr_write(sepc, 0x80001237UL);
    CHECK_EQ("sepc bit 0 reads 0", csr_read(sepc), 0x80001236UL);
    old = csr_swap(mscratch, 0xfedcba9876543210UL);      /* the M trap stack: put back */
    uint64_t scratch = csr_swap(mscratch, old);
    CHECK_EQ("mscratch 64 bits", scratch, 0xfedcba9876543210UL);
    csr_write(mtval, 0x123);
    CHECK_EQ("mtval writable", csr_read(mtval), 0x123);
    csr_write(mie, ~0UL);
    CHECK_EQ("mie: the six standard interrupts", csr_read(mie) & 0xfff, 0xaaa);
    csr_write(mie, 0);

    section("satp and TVM");
    traps_reset();
    run_in_mode_m(PRV_S, call, (long)probe_r_satp);
    expect_no_trap("satp readable from S");
    csr_set(mstatus, MSTATUS_TVM);
    traps_reset();
    run_in_mode_m(PRV_S, call, (long)probe_r_satp);
    csr_clear(mstatus, MSTATUS_TVM);
    expect_trap("satp from S with TVM", PRV_M, EXC_ILLEGAL, A(probe_r_satp), INSN_CSRR_A0(0x180));
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_r_sstatus);
    expect_trap("sstatus from U", PRV_M, EXC_ILLEGAL, A(probe_r_sstatus), INSN_CSRR_A0(0x100));
}

/* -- Counters ---------------------------------------------------------------------------- */

/* The time CSR and the RTC read together (within 1 ms, so a host that
 * preempts us between the two reads does not skew the comparison): the
 * CSR's value at the RTC's reading *ns. */
static uint64_t clock_pair(uint64_t *ns)
{
    uint64_t a = 0, b = ~0UL;
    for (int i = 0; i < 100 && b - a > 10000; i++) {
        a = rdtime();
        *ns = rtc_ns();
        b = rdtime();
    }
    return a + (b - a) / 2;
}

static void counters(void)
{
    section("time, cycle, instret");
    uint64_t r0, t0 = clock_pair(&r0);
    while (rtc_ns() - r0 < 100000000)           /* 100 ms of the RTC */
        ;
    uint64_t r1, t1 = clock_pair(&r1);
    uint64_t ticks = t1 - t0, ns = r1 - r0;
    check_range("time ticks per 100 ms of RTC (10 MHz: 1000000, +-20%)", ticks * 100000000 / ns,
                800000, 1200000);
    t0 = rdtime();
    uint64_t m = mtime();
    t1 = rdtime();
    CHECK("time CSR = ACLINT mtime", t0 <= m && m <= t1);
    uint64_t c0 = csr_read(cycle), i0 = csr_read(instret);
    uint64_t c1 = csr_read(cycle), i1 = csr_read(instret);
    CHECK("cycle advances", c1 > c0);
    CHECK("instret advances", i1 > i0);
    CHECK("mcycle, minstret readable", csr_read(mcycle) >= c1 && csr_read(minstret) >= i1);
    CHECK_EQ("instret counts li + 1000 turns of (addi, bnez) exactly",
             instret_loop(1000), 2002);
    csr_write(minstret, 1000);
    check_range("minstret writable", csr_read(minstret), 1000, 1010);
    CHECK_EQ("mhpmcounter3 reads 0", csr_read(mhpmcounter3), 0);
    csr_write(mcountinhibit, 4);                /* IR */
    uint64_t inhibit = csr_read(mcountinhibit);
    uint64_t frozen = instret_loop(100);
    csr_write(mcountinhibit, 0);
    CHECK("mcountinhibit.IR: minstret stops (or the bit is hardwired to 0)",
          inhibit == 0 ? frozen == 202 : (inhibit & 4) && frozen == 0);
    CHECK_EQ("mcountinhibit cleared: minstret counts again", instret_loop(100), 202);

    section("counter enables from S and U");
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_rdtime);
    run_in_mode_m(PRV_U, call, (long)probe_rdcycle);
    run_in_mode_m(PRV_U, call, (long)probe_rdinstret);
    expect_no_trap("U reads time, cycle, instret with both enables set");
    csr_write(scounteren, 0);
    static const struct { long fn; const uint32_t *insn; const char *u, *s; } probes[] = {
        { (long)probe_rdtime, &insn_rdtime, "U rdtime, scounteren.TM = 0",
          "S rdtime, mcounteren.TM = 0" },
        { (long)probe_rdcycle, &insn_rdcycle, "U rdcycle, scounteren.CY = 0",
          "S rdcycle, mcounteren.CY = 0" },
        { (long)probe_rdinstret, &insn_rdinstret, "U rdinstret, scounteren.IR = 0",
          "S rdinstret, mcounteren.IR = 0" },
    };
    for (int i = 0; i < 3; i++) {
        traps_reset();
        run_in_mode_m(PRV_U, call, probes[i].fn);
        expect_trap(probes[i].u, PRV_M, EXC_ILLEGAL, (uint64_t)probes[i].fn, *probes[i].insn);
    }
    traps_reset();
    run_in_mode_m(PRV_S, call, (long)probe_rdtime);
    expect_no_trap("S rdtime with scounteren = 0 (it gates U only)");
    csr_write(scounteren, 7);
    csr_write(mcounteren, 0);
    for (int i = 0; i < 3; i++) {
        traps_reset();
        run_in_mode_m(PRV_S, call, probes[i].fn);
        expect_trap(probes[i].s, PRV_M, EXC_ILLEGAL, (uint64_t)probes[i].fn, *probes[i].insn);
    }
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_rdtime);
    expect_trap("U rdtime, mcounteren.TM = 0 (scounteren.TM = 1)", PRV_M, EXC_ILLEGAL,
                A(probe_rdtime), insn_rdtime);
    csr_write(mcounteren, 2);
    traps_reset();
    run_in_mode_m(PRV_S, call, (long)probe_rdtime);
    expect_no_trap("mcounteren = TM only: S rdtime");
    traps_reset();
    run_in_mode_m(PRV_S, call, (long)probe_rdcycle);
    expect_trap("mcounteren = TM only: S rdcycle", PRV_M, EXC_ILLEGAL, A(probe_rdcycle),
                insn_rdcycle);
    csr_write(mcounteren, 7);
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_rdhpm3);
    expect_trap("U hpmcounter3 with its enable bits clear", PRV_M, EXC_ILLEGAL, A(probe_rdhpm3),
                insn_rdhpm3);
    csr_write(mcounteren, 0xf);
    csr_write(scounteren, 0xf);
    traps_reset();
    uint64_t v = (uint64_t)run_in_mode_m(PRV_U, call, (long)probe_rdhpm3);
    expect_no_trap("U hpmcounter3 with bit 3 set");
    CHECK_EQ("hpmcounter3 reads 0", v, 0);
    csr_write(mcounteren, 7);
    csr_write(scounteren, 7);
}

/* -- The FPU's enable ----------------------------------------------------------------------- */

static long s_fs_off_fadd(long unused)
{
    (void)unused;
    csr_clear(sstatus, MSTATUS_FS);
    probe_fadd();
    return (long)csr_read(sstatus);
}

static void fpu(void)
{
    section("mstatus.FS");
    csr_clear(mstatus, MSTATUS_FS);
    CHECK_BITS("FS = Off: sstatus.FS = 0, SD = 0", csr_read(sstatus), MSTATUS_FS | MSTATUS_SD, 0);
    traps_reset();
    probe_fadd();
    expect_trap("FS = Off: fadd.d", PRV_M, EXC_ILLEGAL, A(probe_fadd), insn_fadd);
    traps_reset();
    probe_frcsr();
    expect_trap("FS = Off: frcsr", PRV_M, EXC_ILLEGAL, A(probe_frcsr), insn_frcsr);
    traps_reset();
    probe_fmv(1);
    expect_trap("FS = Off: fmv.d.x", PRV_M, EXC_ILLEGAL, A(probe_fmv), 0xf20500d3);

    csr_set(mstatus, 1UL << 13);                /* Initial */
    CHECK_BITS("FS = Initial reads back, SD = 0", csr_read(mstatus), MSTATUS_FS | MSTATUS_SD,
               1UL << 13);
    traps_reset();
    probe_fmv(0x4008000000000000UL);            /* 3.0 */
    expect_no_trap("FS = Initial: fmv.d.x");
    CHECK_BITS("an FP register write makes FS Dirty and sets SD", csr_read(mstatus),
               MSTATUS_FS | MSTATUS_SD, MSTATUS_FS | MSTATUS_SD);
    CHECK_BITS("sstatus shows FS = Dirty and SD", csr_read(sstatus), MSTATUS_FS | MSTATUS_SD,
               MSTATUS_FS | MSTATUS_SD);
    CHECK_EQ("the FP register holds the value", probe_fmv_x(), 0x4008000000000000UL);
    csr_clear(mstatus, MSTATUS_FS);
    csr_set(mstatus, 2UL << 13);                /* Clean */
    CHECK_BITS("FS = Clean: SD = 0", csr_read(mstatus), MSTATUS_FS | MSTATUS_SD, 2UL << 13);
    probe_w_fflags(1);
    CHECK_BITS("an fflags write makes FS Dirty", csr_read(mstatus), MSTATUS_FS | MSTATUS_SD,
               MSTATUS_FS | MSTATUS_SD);
    CHECK_EQ("fflags reads back", csr_read(fflags), 1);
    csr_write(fflags, 0);

    traps_reset();
    uint64_t st = (uint64_t)run_in_mode_m(PRV_S, s_fs_off_fadd, 0);
    expect_trap("S clears sstatus.FS: fadd.d illegal", PRV_M, EXC_ILLEGAL, A(probe_fadd),
                insn_fadd);
    CHECK_BITS("S's sstatus.FS = Off", st, MSTATUS_FS, 0);
    CHECK_BITS("and mstatus.FS with it", csr_read(mstatus), MSTATUS_FS, 0);
    csr_set(mstatus, MSTATUS_FS);
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_fmv_x);
    expect_no_trap("FS on: U fmv.x.d");
    csr_clear(mstatus, MSTATUS_FS);
    traps_reset();
    run_in_mode_m(PRV_U, call, (long)probe_fmv_x);
    expect_trap("FS = Off: U fmv.x.d", PRV_M, EXC_ILLEGAL, A(probe_fmv_x), 0xe2008553);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    ids();
    status();
    counters();
    fpu();
}
