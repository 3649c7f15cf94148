// Traps and their delegation (privileged spec 1.12: 3.1.6 mstatus, 3.1.8
// medeleg/mideleg, 3.1.14-16 mepc/mcause/mtval, 3.3.2 mret/sret, 4.1.1
// sstatus): the cause, epc and tval of each exception kind from M, S and U,
// which level takes it, and the status bits the trap and the return leave.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))

static uint64_t mpp_of(uint64_t status) { return (status & MSTATUS_MPP) >> MPP_SHIFT; }

/* A trap's status field: one check. */
static void expect_status(const char *what, uint64_t mask, uint64_t want)
{
    CHECK_BITS(what, trap_log[0].status, mask, want);
}

static uint64_t buf[4] __attribute__((aligned(16)));

/* -- Exceptions taken in M from M ----------------------------------------- */

static void m_exceptions(void)
{
    section("exceptions in M-mode");
    traps_reset();
    probe_unimp();
    expect_trap("illegal instruction (unimp)", PRV_M, EXC_ILLEGAL, A(probe_unimp), 0xc0001073);
    expect_status("illegal: mstatus.MPP = M", MSTATUS_MPP, MSTATUS_MPP);

    traps_reset();
    probe_c_illegal();
    expect_trap("illegal compressed (c.addi4spn imm 0)", PRV_M, EXC_ILLEGAL, A(probe_c_illegal),
                0x0004);

    traps_reset();
    csr_write(mstatus, csr_read(mstatus) | MSTATUS_MIE);
    probe_ecall();
    uint64_t st = csr_read(mstatus);
    csr_clear(mstatus, MSTATUS_MIE);
    expect_trap("ecall from M", PRV_M, EXC_ECALL_M, A(probe_ecall), 0);
    expect_status("ecall from M: MPIE = old MIE, MIE = 0", MSTATUS_MPIE | MSTATUS_MIE,
                  MSTATUS_MPIE);
    CHECK_BITS("after mret: MIE = MPIE (1)", st, MSTATUS_MIE, MSTATUS_MIE);

    traps_reset();
    probe_ebreak();
    expect_trap("ebreak", PRV_M, EXC_BREAKPOINT, A(probe_ebreak), A(probe_ebreak));
    traps_reset();
    probe_c_ebreak();
    expect_trap("c.ebreak", PRV_M, EXC_BREAKPOINT, A(probe_c_ebreak), A(probe_c_ebreak));

    section("misaligned atomics");
    buf[0] = 0x1111111111111111UL;
    buf[1] = 0;
    uint64_t p = A(buf) + 2;
    traps_reset();
    probe_amoadd_w(p, 1);
    expect_trap("amoadd.w at +2", PRV_M, EXC_STORE_MISALIGNED, A(probe_amoadd_w), p);
    traps_reset();
    probe_amoadd_d(A(buf) + 4, 1);
    expect_trap("amoadd.d at +4", PRV_M, EXC_STORE_MISALIGNED, A(probe_amoadd_d), A(buf) + 4);
    traps_reset();
    probe_sc_w(A(buf) + 1, 1);
    expect_trap("sc.w at +1", PRV_M, EXC_STORE_MISALIGNED, A(probe_sc_w), A(buf) + 1);
    traps_reset();
    probe_sc_d(A(buf) + 4, 1);
    expect_trap("sc.d at +4", PRV_M, EXC_STORE_MISALIGNED, A(probe_sc_d), A(buf) + 4);
    /* LR is a load: load address misaligned (Spike; QEMU). */
    traps_reset();
    probe_lr_w(A(buf) + 2);
    expect_trap("lr.w at +2", PRV_M, EXC_LOAD_MISALIGNED, A(probe_lr_w), A(buf) + 2);
    traps_reset();
    probe_lr_d(A(buf) + 4);
    expect_trap("lr.d at +4", PRV_M, EXC_LOAD_MISALIGNED, A(probe_lr_d), A(buf) + 4);
    traps_reset();
    CHECK_EQ("aligned lr.d", probe_lr_d(A(buf)), 0x1111111111111111UL);
    expect_no_trap("aligned lr.d");
    CHECK_EQ("memory untouched by the misaligned AMOs", buf[0], 0x1111111111111111UL);
    traps_reset();
    uint64_t old = probe_amoadd_d(A(buf), 5);
    expect_no_trap("aligned amoadd.d");
    CHECK_EQ("aligned amoadd.d: old value", old, 0x1111111111111111UL);
    CHECK_EQ("aligned amoadd.d: new value", buf[0], 0x1111111111111116UL);

    section("access faults (nothing at the address)");
    traps_reset();
    probe_ld(NOTHING_ADDR);
    expect_trap("load from nothing", PRV_M, EXC_LOAD_ACCESS, A(probe_ld), NOTHING_ADDR);
    traps_reset();
    probe_sd(NOTHING_ADDR + 8, 1);
    expect_trap("store to nothing", PRV_M, EXC_STORE_ACCESS, A(probe_sd), NOTHING_ADDR + 8);
    traps_reset();
    probe_amoadd_w(NOTHING_ADDR + 16, 1);
    expect_trap("amoadd.w on nothing", PRV_M, EXC_STORE_ACCESS, A(probe_amoadd_w),
                NOTHING_ADDR + 16);
    uint64_t ram_end = RAM_BASE + (128UL << 20);
    traps_reset();
    probe_lw(ram_end);
    expect_trap("load past the end of RAM", PRV_M, EXC_LOAD_ACCESS, A(probe_lw), ram_end);
    traps_reset();
    probe_lbu(ram_end - 1);
    expect_no_trap("load of RAM's last byte");
    traps_reset();
    probe_fetch(NOTHING_ADDR);
    expect_trap("fetch from nothing", PRV_M, EXC_FETCH_ACCESS, NOTHING_ADDR, NOTHING_ADDR);
    traps_reset();
    probe_fetch(UART_BASE);
    expect_trap("fetch from a device", PRV_M, EXC_FETCH_ACCESS, UART_BASE, UART_BASE);

    section("accesses straddling the end of RAM: tval = the part that faulted");
    traps_reset();
    probe_ld(ram_end - 4);
    expect_trap("ld of RAM's last 4 bytes and 4 more", PRV_M, EXC_LOAD_ACCESS, A(probe_ld),
                ram_end);
    traps_reset();
    probe_sd(ram_end - 2, 1);
    expect_trap("sd of RAM's last 2 bytes and 6 more", PRV_M, EXC_STORE_ACCESS, A(probe_sd),
                ram_end);
    *(volatile uint16_t *)(uintptr_t)(ram_end - 2) = 0x0513;    /* addi a0, a0, 1: low half */
    traps_reset();
    probe_fetch(ram_end - 2);
    expect_trap("a 32-bit instruction in RAM's last 2 bytes", PRV_M, EXC_FETCH_ACCESS,
                ram_end - 2, ram_end);
}

/* -- ecall from S and U; mret and sret ------------------------------------ */

static long do_ecall(long ret)
{
    probe_ecall();
    return ret;
}

static long do_unimp(long ret)
{
    probe_unimp();
    return ret;
}

static long do_ebreak(long ret)
{
    probe_ebreak();
    return ret;
}

/* mret to M itself with these status bits: the status after. */
static uint64_t mret_to_m(uint64_t set)
{
    uint64_t out;
    asm volatile("li t0, %[mask]\n"
                 "csrc mstatus, t0\n"
                 "csrs mstatus, %[set]\n"
                 "la t0, 1f\n"
                 "csrw mepc, t0\n"
                 "mret\n"
                 "1: csrr %[out], mstatus\n"
                 : [out] "=r"(out)
                 : [set] "r"(set), [mask] "i"(MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE)
                 : "t0", "memory");
    csr_clear(mstatus, MSTATUS_MIE);
    return out;
}

/* sret to S itself (from S) with these status bits: the status after. */
static uint64_t sret_to_s(uint64_t set)
{
    uint64_t out;
    asm volatile("li t0, %[mask]\n"
                 "csrc sstatus, t0\n"
                 "csrs sstatus, %[set]\n"
                 "la t0, 1f\n"
                 "csrw sepc, t0\n"
                 "sret\n"
                 "1: csrr %[out], sstatus\n"
                 : [out] "=r"(out)
                 : [set] "r"(set), [mask] "i"(MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE)
                 : "t0", "memory");
    csr_clear(sstatus, MSTATUS_SIE);
    return out;
}

static long s_sret_self(long set)
{
    return (long)sret_to_s((uint64_t)set);
}

static long s_probe(long fn)
{
    ((void (*)(void))fn)();
    return 0;
}

static void modes(void)
{
    section("ecall from S and U; mret");
    traps_reset();
    long r = run_in_mode_m(PRV_S, do_ecall, 42);
    CHECK_EQ("run_in_mode(S) returns the function's value", r, 42);
    expect_trap("ecall from S", PRV_M, EXC_ECALL_S, A(probe_ecall), 0);
    CHECK_EQ("ecall from S: MPP = S", mpp_of(trap_log[0].status), PRV_S);

    traps_reset();
    r = run_in_mode_m(PRV_U, do_ecall, 43);
    CHECK_EQ("run_in_mode(U) returns the function's value", r, 43);
    expect_trap("ecall from U", PRV_M, EXC_ECALL_U, A(probe_ecall), 0);
    CHECK_EQ("ecall from U: MPP = U", mpp_of(trap_log[0].status), PRV_U);

    traps_reset();
    run_in_mode_m(PRV_S, do_ebreak, 0);
    expect_trap("ebreak from S (not delegated)", PRV_M, EXC_BREAKPOINT, A(probe_ebreak),
                A(probe_ebreak));

    uint64_t st = mret_to_m(MSTATUS_MPP | MSTATUS_MPIE);
    CHECK_BITS("mret (MPP=M, MPIE=1): MIE=1 MPIE=1 MPP=U", st,
               MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP, MSTATUS_MIE | MSTATUS_MPIE);
    st = mret_to_m(MSTATUS_MPP);
    CHECK_BITS("mret (MPP=M, MPIE=0): MIE=0 MPIE=1 MPP=U", st,
               MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP, MSTATUS_MPIE);

    /* MPRV is cleared by an mret to a less-privileged mode (satp is Bare,
     * so M's own accesses meanwhile are not translated). */
    traps_reset();
    csr_set(mstatus, MSTATUS_MPRV);
    run_in_mode_m(PRV_U, do_ecall, 0);
    uint64_t mprv_after = csr_read(mstatus) & MSTATUS_MPRV;
    csr_clear(mstatus, MSTATUS_MPRV);
    CHECK_BITS("mret to U cleared MPRV (status at U's ecall)", trap_log[0].status,
               MSTATUS_MPRV, 0);
    CHECK_EQ("MPRV still clear after returning to M", mprv_after, 0);

    section("privileged instructions where they are illegal");
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_mret);
    expect_trap("mret in S", PRV_M, EXC_ILLEGAL, A(probe_mret), insn_mret);
    traps_reset();
    run_in_mode_m(PRV_U, s_probe, (long)probe_sret);
    expect_trap("sret in U", PRV_M, EXC_ILLEGAL, A(probe_sret), insn_sret);
    traps_reset();
    run_in_mode_m(PRV_U, s_probe, (long)probe_wfi);
    expect_trap("wfi in U", PRV_M, EXC_ILLEGAL, A(probe_wfi), insn_wfi);
    traps_reset();
    run_in_mode_m(PRV_U, s_probe, (long)probe_sfence);
    expect_trap("sfence.vma in U", PRV_M, EXC_ILLEGAL, A(probe_sfence), insn_sfence);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_csrr_mstatus);
    expect_trap("csrr mstatus in S", PRV_M, EXC_ILLEGAL, A(probe_csrr_mstatus),
                insn_csrr_mstatus);
    csr_set(mstatus, MSTATUS_TSR);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_sret);
    csr_clear(mstatus, MSTATUS_TSR);
    expect_trap("sret in S with TSR", PRV_M, EXC_ILLEGAL, A(probe_sret), insn_sret);
    csr_set(mstatus, MSTATUS_TW);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_wfi);
    csr_clear(mstatus, MSTATUS_TW);
    expect_trap("wfi in S with TW", PRV_M, EXC_ILLEGAL, A(probe_wfi), insn_wfi);
    csr_set(mstatus, MSTATUS_TVM);
    traps_reset();
    run_in_mode_m(PRV_S, s_probe, (long)probe_sfence);
    csr_clear(mstatus, MSTATUS_TVM);
    expect_trap("sfence.vma in S with TVM", PRV_M, EXC_ILLEGAL, A(probe_sfence), insn_sfence);

    section("sret");
    traps_reset();
    st = (uint64_t)run_in_mode_m(PRV_S, s_sret_self, (long)(MSTATUS_SPP | MSTATUS_SPIE));
    expect_no_trap("sret to S in S");
    CHECK_BITS("sret (SPP=S, SPIE=1): SIE=1 SPIE=1 SPP=U", st,
               MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP, MSTATUS_SIE | MSTATUS_SPIE);
    st = (uint64_t)run_in_mode_m(PRV_S, s_sret_self, (long)MSTATUS_SPP);
    CHECK_BITS("sret (SPP=S, SPIE=0): SIE=0 SPIE=1 SPP=U", st,
               MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP, MSTATUS_SPIE);
}

/* -- Delegation ---------------------------------------------------------------- */

/* In S: enable SIE, take what fn raises, return sstatus after the return. */
static long s_with_sie(long fn)
{
    csr_set(sstatus, MSTATUS_SIE);
    ((void (*)(void))fn)();
    uint64_t st = csr_read(sstatus);
    csr_clear(sstatus, MSTATUS_SIE);
    return (long)st;
}

/* In S: run fn in U through sret, and return sstatus after coming back. */
static long s_runs_u(long fn)
{
    long r = run_in_mode_s(PRV_U, (long (*)(long))fn, 7);
    uint64_t st = csr_read(sstatus);
    return r == 7 ? (long)st : -1;
}

static void delegation(void)
{
    section("medeleg: exceptions delegated to S");
    csr_write(medeleg, (1UL << EXC_ILLEGAL) | (1UL << EXC_BREAKPOINT) | (1UL << EXC_ECALL_U));
    CHECK_EQ("medeleg reads back", csr_read(medeleg),
             (1UL << EXC_ILLEGAL) | (1UL << EXC_BREAKPOINT) | (1UL << EXC_ECALL_U));
    uint64_t mcause_before = csr_read(mcause);

    traps_reset();
    uint64_t st = (uint64_t)run_in_mode_m(PRV_S, s_with_sie, (long)probe_unimp);
    expect_trap("illegal in S, delegated", PRV_S, EXC_ILLEGAL, A(probe_unimp), 0xc0001073);
    expect_status("delegated from S: SPP=S, SPIE=old SIE (1), SIE=0",
                  MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE, MSTATUS_SPP | MSTATUS_SPIE);
    CHECK_BITS("after sret: SIE=1, SPIE=1, SPP=U", st,
               MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP, MSTATUS_SIE | MSTATUS_SPIE);
    CHECK_EQ("mcause untouched by the delegated trap", csr_read(mcause), mcause_before);

    traps_reset();
    run_in_mode_m(PRV_U, do_unimp, 0);
    expect_trap("illegal in U, delegated", PRV_S, EXC_ILLEGAL, A(probe_unimp), 0xc0001073);
    expect_status("delegated from U: SPP=U", MSTATUS_SPP, 0);

    traps_reset();
    run_in_mode_m(PRV_U, do_ebreak, 0);
    expect_trap("ebreak in U, delegated", PRV_S, EXC_BREAKPOINT, A(probe_ebreak),
                A(probe_ebreak));

    traps_reset();
    st = (uint64_t)run_in_mode_m(PRV_S, s_runs_u, (long)do_ecall);
    expect_trap("ecall from U (sret'd to by S), delegated", PRV_S, EXC_ECALL_U, A(probe_ecall),
                0);
    expect_status("ecall from U: SPP=U", MSTATUS_SPP, 0);
    CHECK_BITS("S after sret from its U run: SPP=U", st, MSTATUS_SPP, 0);

    traps_reset();
    run_in_mode_m(PRV_S, do_ecall, 0);
    expect_trap("ecall from S is not delegated (medeleg[9] clear)", PRV_M, EXC_ECALL_S,
                A(probe_ecall), 0);

    traps_reset();
    probe_unimp();
    expect_trap("illegal in M stays in M despite medeleg", PRV_M, EXC_ILLEGAL, A(probe_unimp),
                0xc0001073);

    csr_write(medeleg, ~0UL);
    CHECK_BITS("medeleg[11] (ecall from M) is read-only 0", csr_read(medeleg), 1UL << 11, 0);
    csr_write(medeleg, 0);

    section("mideleg");
    csr_write(mideleg, MIP(IRQ_SSI) | MIP(IRQ_STI) | MIP(IRQ_SEI));
    CHECK_EQ("mideleg: SSI, STI, SEI delegable", csr_read(mideleg),
             MIP(IRQ_SSI) | MIP(IRQ_STI) | MIP(IRQ_SEI));
    csr_write(mie, MIP(IRQ_SSI) | MIP(IRQ_MSI));
    CHECK_EQ("sie shows the delegated mie bits only", csr_read(sie), MIP(IRQ_SSI));
    csr_write(mie, 0);
    csr_write(mideleg, MIP(IRQ_SSI));
    csr_write(sie, ~0UL);
    CHECK_EQ("sie writes reach only the delegated mie bits", csr_read(mie), MIP(IRQ_SSI));
    csr_write(mie, 0);
    csr_write(mideleg, 0);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)dtb;
    CHECK_EQ("a0 at entry = mhartid = 0", hartid, 0);
    m_exceptions();
    modes();
    delegation();
}
