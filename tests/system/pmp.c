// Physical memory protection (privileged spec 1.12, 3.7): OFF, TOR, NA4 and
// NAPOT regions checked on S and U loads, stores, AMOs, LR and fetches;
// the lowest-numbered matching entry decides; an access partly inside an
// entry fails (in M too); S with no matching entry fails, M succeeds; L
// applies an entry to M and freezes it (and a TOR entry's bottom); MPRV
// data accesses take MPP's privilege; the page walk's reads and A/D writes
// are checked as S-mode accesses; device registers are protected too; the
// WARL rules of pmpcfg and pmpaddr. Locked entries stay until reset, so
// they come last.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
#define TP(i) A(test_pages[i])

#define R 1
#define W 2
#define X 4
#define OFF   (0 << 3)
#define TOR   (1 << 3)
#define NA4   (2 << 3)
#define NAPOT (3 << 3)
#define L 0x80

/* -- Entries ------------------------------------------------------------------ */

#define ADDR_CASE(n)                                                    \
    case n:                                                             \
        if (write)                                                      \
            csr_write(pmpaddr##n, v);                                   \
        return csr_read(pmpaddr##n);

/* Write (if write) and read pmpaddr i. */
static uint64_t pmpaddr(int i, int write, uint64_t v)
{
    switch (i) {
    ADDR_CASE(0) ADDR_CASE(1) ADDR_CASE(2) ADDR_CASE(3) ADDR_CASE(4) ADDR_CASE(5)
    ADDR_CASE(6) ADDR_CASE(7) ADDR_CASE(8) ADDR_CASE(9) ADDR_CASE(10) ADDR_CASE(11)
    ADDR_CASE(12) ADDR_CASE(13) ADDR_CASE(14) ADDR_CASE(15)
    default: return 0;
    }
}

static uint8_t cfg_of(int i)
{
    uint64_t c = i < 8 ? csr_read(pmpcfg0) : csr_read(pmpcfg2);
    return (uint8_t)(c >> (8 * (i % 8)));
}

static void set_cfg(int i, uint8_t cfg)
{
    uint64_t c = i < 8 ? csr_read(pmpcfg0) : csr_read(pmpcfg2), sh = 8 * (uint64_t)(i % 8);
    c = (c & ~(0xffUL << sh)) | (uint64_t)cfg << sh;
    if (i < 8)
        csr_write(pmpcfg0, c);
    else
        csr_write(pmpcfg2, c);
}

/* Entry i = cfg over addr (pmpaddr's encoding); the spec asks for an
 * sfence.vma after a PMP change (3.7.2). */
static void entry(int i, uint8_t cfg, uint64_t addr)
{
    set_cfg(i, 0);
    pmpaddr(i, 1, addr);
    set_cfg(i, cfg);
    sfence_vma();
}

/* pmpaddr of a NAPOT region (size a power of two, >= 8, base aligned). */
static uint64_t napot(uint64_t base, uint64_t size) { return base >> 2 | (size / 8 - 1); }

/* Every unlocked entry off but 15: all memory, RWX (code, stacks). */
static void base_config(void)
{
    csr_write(pmpcfg0, 0);
    csr_write(pmpcfg2, 0);
    entry(15, NAPOT | R | W | X, ~0UL >> 10);
}

/* -- S and U probes ------------------------------------------------------------- */

static long s_ld(long a) { return (long)probe_ld((uint64_t)a); }
static long s_lw(long a) { return (long)probe_lw((uint64_t)a); }
static long s_sd(long a) { probe_sd((uint64_t)a, 0x5a5a); return 0; }
static long s_amo(long a) { return (long)probe_amoadd_d((uint64_t)a, 1); }
static long s_lr(long a) { return (long)probe_lr_d((uint64_t)a); }
static long s_fetch(long a) { return (long)probe_fetch((uint64_t)a); }

static uint64_t in_s(long (*fn)(long), uint64_t a)
{
    traps_reset();
    return (uint64_t)run_in_mode_m(PRV_S, fn, (long)a);
}

/* fn in S faults with cause at a (the probe epc). */
static void s_faults(const char *what, long (*fn)(long), uint64_t a, uint64_t cause, void *epc)
{
    in_s(fn, a);
    expect_trap(what, PRV_M, cause, A(epc), a);
}

static void s_ok(const char *what, long (*fn)(long), uint64_t a)
{
    in_s(fn, a);
    expect_no_trap(what);
}

/* A fetch fault with every entry off leaves nothing S can run: the hook
 * opens memory again, and the default handler returns to ra. */
static volatile int reopen;

static int reopen_hook(Frame *f, int level)
{
    (void)level;
    if (reopen && f->cause == EXC_FETCH_ACCESS) {
        reopen = 0;
        entry(15, NAPOT | R | W | X, ~0UL >> 10);
    }
    return 0;
}

static long s_ret7(long unused)
{
    (void)unused;
    return 7;
}

/* -- Tests ---------------------------------------------------------------------- */

static void no_match(void)
{
    section("no entry on: S fails, M succeeds");
    csr_write(pmpcfg0, 0);
    csr_write(pmpcfg2, 0);
    sfence_vma();
    traps_reset();
    CHECK_EQ("M load with every entry off", probe_ld(TP(0)), 0x1111);
    expect_no_trap("M load with every entry off");
    reopen = 1;
    trap_hook = reopen_hook;
    traps_reset();
    run_in_mode_m(PRV_S, s_ret7, 0);
    trap_hook = 0;
    expect_trap("S fetch with every entry off", PRV_M, EXC_FETCH_ACCESS, A(s_ret7), A(s_ret7));

    section("an address no entry matches");
    base_config();
    entry(0, TOR | R | W | X, TP(0) >> 2);                  /* [0, TP(0)) */
    entry(1, OFF, (TP(0) + 4096) >> 2);
    entry(2, TOR | R | W | X, ~0UL >> 10);                  /* [TP(0) + 4 KiB, top) */
    entry(15, OFF, 0);
    s_faults("S load where no entry matches", s_ld, TP(0) + 8, EXC_LOAD_ACCESS, probe_ld);
    s_ok("S load just below", s_ld, TP(0) - 8);
    traps_reset();
    CHECK_EQ("M load where no entry matches", probe_ld(TP(0) + 8), 0x1112);
    expect_no_trap("M load where no entry matches");
    traps_reset();
    run_in_mode_m(PRV_U, s_ld, (long)(TP(0) + 8));
    expect_trap("U load where no entry matches", PRV_M, EXC_LOAD_ACCESS, A(probe_ld), TP(0) + 8);
}

static void permissions(void)
{
    section("NAPOT, R only: each access kind");
    base_config();
    entry(0, NAPOT | R, napot(TP(1), 4096));
    CHECK_EQ("S load", in_s(s_ld, TP(1) + 16), 0x2224);
    expect_no_trap("S load");
    CHECK_EQ("S lr.d (a load)", in_s(s_lr, TP(1) + 16), 0x2224);
    expect_no_trap("S lr.d (a load)");
    s_faults("S store", s_sd, TP(1) + 24, EXC_STORE_ACCESS, probe_sd);
    s_faults("S AMO", s_amo, TP(1) + 32, EXC_STORE_ACCESS, probe_amoadd_d);
    in_s(s_fetch, TP(1));
    expect_trap("S fetch", PRV_M, EXC_FETCH_ACCESS, TP(1), TP(1));
    traps_reset();
    probe_sd(TP(1) + 24, 7);
    expect_no_trap("M store (entry not locked)");
    CHECK_EQ("M store landed", ((volatile uint64_t *)test_pages[1])[3], 7);

    section("NAPOT, R X and R W");
    entry(0, NAPOT | R | X, napot(TP(1), 4096));
    CHECK_EQ("S fetch from R X", in_s(s_fetch, TP(1)), 42);
    expect_no_trap("S fetch from R X");
    entry(0, NAPOT | R | W, napot(TP(1), 4096));
    s_ok("S store to R W", s_sd, TP(1) + 40);
    CHECK_EQ("S store landed", ((volatile uint64_t *)test_pages[1])[5], 0x5a5a);
    s_ok("S AMO on R W", s_amo, TP(1) + 40);
    CHECK_EQ("S AMO landed", ((volatile uint64_t *)test_pages[1])[5], 0x5a5b);
    in_s(s_fetch, TP(1));
    expect_trap("S fetch from R W", PRV_M, EXC_FETCH_ACCESS, TP(1), TP(1));
    traps_reset();
    run_in_mode_m(PRV_U, s_sd, (long)(TP(1) + 48));
    expect_no_trap("U store to R W");

    section("the lowest-numbered entry decides");
    entry(0, NAPOT | R, napot(TP(3), 4096));
    entry(1, NAPOT | R | W, napot(TP(3), 4096));
    s_faults("entry 0 (R) before entry 1 (R W)", s_sd, TP(3), EXC_STORE_ACCESS, probe_sd);
    entry(0, NAPOT | R | W, napot(TP(3), 4096));
    entry(1, NAPOT | R, napot(TP(3), 4096));
    s_ok("entry 0 (R W) before entry 1 (R)", s_sd, TP(3));
}

static void regions(void)
{
    extern char mprv_sd_insn[];
    section("NA4 and TOR: regions inside a page");
    base_config();
    entry(0, NA4, (TP(4) + 8) >> 2);                        /* 4 bytes, no access */
    entry(1, NAPOT | R | W, napot(TP(4), 4096));
    CHECK_EQ("S lw before the NA4 word", in_s(s_lw, TP(4) + 4), 0);
    expect_no_trap("S lw before the NA4 word");
    s_faults("S lw of the NA4 word", s_lw, TP(4) + 8, EXC_LOAD_ACCESS, probe_lw);
    CHECK_EQ("S lw after it", in_s(s_lw, TP(4) + 12), 0);
    expect_no_trap("S lw after it");
    s_faults("S ld half in the NA4 word", s_ld, TP(4) + 8, EXC_LOAD_ACCESS, probe_ld);
    traps_reset();
    probe_ld(TP(4) + 8);
    expect_trap("M ld half in an NA4 entry fails too", PRV_M, EXC_LOAD_ACCESS, A(probe_ld),
                TP(4) + 8);
    traps_reset();
    probe_lw(TP(4) + 8);
    expect_no_trap("M lw of the NA4 word (unlocked)");

    entry(0, OFF, 0);
    entry(1, OFF, (TP(5) + 0x100) >> 2);                    /* TOR bottom only */
    entry(2, TOR, (TP(5) + 0x200) >> 2);                    /* [+0x100, +0x200): none */
    entry(3, NAPOT | R | W, napot(TP(5), 4096));
    s_ok("S ld below the TOR region", s_ld, TP(5) + 0xf8);
    s_faults("S ld at its bottom", s_ld, TP(5) + 0x100, EXC_LOAD_ACCESS, probe_ld);
    s_faults("S ld at its top - 8", s_ld, TP(5) + 0x1f8, EXC_LOAD_ACCESS, probe_ld);
    s_ok("S ld at its top", s_ld, TP(5) + 0x200);
    s_faults("S ld across its bottom", s_ld, TP(5) + 0xfc, EXC_LOAD_ACCESS, probe_ld);
    entry(2, TOR | R, (TP(5) + 0x80) >> 2);                 /* top below bottom: matches none */
    s_ok("TOR with top <= bottom matches nothing", s_ld, TP(5) + 0x100);
    /* Entry 0 as TOR: [0, TP(5)), the code and stacks too, so only the
     * one S store of an MPRV access meets it. */
    entry(0, TOR | R, TP(5) >> 2);
    traps_reset();
    mprv_sd(TP(5) - 8, 1, MSTATUS_MPRV | (uint64_t)PRV_S << MPP_SHIFT);
    expect_trap("TOR entry 0 starts at address 0", PRV_M, EXC_STORE_ACCESS, A(mprv_sd_insn),
                TP(5) - 8);
    entry(0, OFF, 0);

    section("devices");
    entry(0, NAPOT, napot(CLINT_BASE, 0x10000));
    s_faults("S load of mtime, protected", s_ld, CLINT_MTIME, EXC_LOAD_ACCESS, probe_ld);
    traps_reset();
    probe_ld(CLINT_MTIME);
    expect_no_trap("M load of mtime");
    entry(0, OFF, 0);
}

static void mprv_and_walk(void)
{
    extern char mprv_ld_insn[], mprv_sd_insn[];
    const uint64_t S = (uint64_t)PRV_S << MPP_SHIFT;
    section("MPRV: M data accesses with MPP's privilege");
    base_config();
    entry(0, NAPOT, napot(TP(6), 4096));
    traps_reset();
    mprv_ld(TP(6), MSTATUS_MPRV | S);
    expect_trap("MPRV, MPP=S: load", PRV_M, EXC_LOAD_ACCESS, A(mprv_ld_insn), TP(6));
    traps_reset();
    mprv_sd(TP(6), 1, MSTATUS_MPRV | S);
    expect_trap("MPRV, MPP=S: store", PRV_M, EXC_STORE_ACCESS, A(mprv_sd_insn), TP(6));
    traps_reset();
    mprv_ld(TP(6), MSTATUS_MPRV | MSTATUS_MPP);
    mprv_ld(TP(6), S);
    expect_no_trap("MPRV with MPP=M, and MPP=S without MPRV");

    section("the page walk's accesses are S-mode's");
    pt_reset();
    uint64_t *root = pt_identity(3);
    const uint64_t va = 0x40000000UL;
    pt_map(root, 3, va, TP(7), PTE_V | PTE_R | PTE_W, 0);  /* A and D clear */
    uint64_t *leaf = pt_entry(root, 3, va, 0), leaf_page = A(leaf) & ~0xfffUL;
    csr_write(satp, satp_of(SATP_SV39, root));
    entry(0, NAPOT, napot(A(root), 4096));                  /* the root: no S access */
    traps_reset();
    mprv_ld(va, MSTATUS_MPRV | S);
    expect_trap("walk reads a protected root: load access fault", PRV_M, EXC_LOAD_ACCESS,
                A(mprv_ld_insn), va);
    traps_reset();
    mprv_sd(va, 1, MSTATUS_MPRV | S);
    expect_trap("and for a store, a store access fault", PRV_M, EXC_STORE_ACCESS,
                A(mprv_sd_insn), va);
    entry(0, NAPOT | R, napot(leaf_page, 4096));            /* the leaf table: S reads only */
    traps_reset();
    mprv_ld(va, MSTATUS_MPRV | S);
    expect_trap("A can't be written to a read-only table", PRV_M, EXC_LOAD_ACCESS,
                A(mprv_ld_insn), va);
    CHECK_BITS("the PTE's A is still clear", *leaf, PTE_A, 0);
    entry(0, NAPOT | R | W, napot(leaf_page, 4096));
    traps_reset();
    mprv_ld(va, MSTATUS_MPRV | S);
    expect_no_trap("writable table: the load goes through");
    CHECK_BITS("and A is set", *leaf, PTE_A | PTE_D, PTE_A);
    csr_write(satp, 0);
    entry(0, OFF, 0);
}

static void warl(void)
{
    section("WARL");
    base_config();
    entry(1, NAPOT | R, napot(TP(8), 4096));
    set_cfg(1, NAPOT | W);
    CHECK_EQ("R=0 W=1 is reserved: the byte keeps its value", cfg_of(1), NAPOT | R);
    set_cfg(1, 0x60 | NAPOT | R | W);
    CHECK_EQ("bits 6:5 read 0", cfg_of(1), NAPOT | R | W);
    set_cfg(1, 0);
    csr_write(pmpaddr1, ~0UL);
    CHECK_EQ("pmpaddr holds bits 55:2 (G = 0)", pmpaddr(1, 0, 0), ~0UL >> 10);
    CHECK_EQ("pmpcfg4 reads 0 (entries 16-23 absent)", csr_read(pmpcfg4), 0);
    csr_write(0x3c0, ~0UL);                                 /* pmpaddr16 */
    CHECK_EQ("pmpaddr16 reads 0", csr_read(0x3c0), 0);
}

static void locked(void)
{
    section("L: locked entries bind M and stay");
    base_config();
    ((volatile uint32_t *)test_pages[9])[0] = 0x00008082;   /* c.ret */
    asm volatile("fence.i" ::: "memory");
    entry(0, L | NAPOT | R, napot(TP(9), 4096));
    traps_reset();
    CHECK_EQ("M load from a locked R entry", probe_lw(TP(9)), 0x8082);
    expect_no_trap("M load from a locked R entry");
    traps_reset();
    probe_sd(TP(9) + 8, 1);
    expect_trap("M store to it", PRV_M, EXC_STORE_ACCESS, A(probe_sd), TP(9) + 8);
    traps_reset();
    probe_fetch(TP(9));
    expect_trap("M fetch from it", PRV_M, EXC_FETCH_ACCESS, TP(9), TP(9));
    uint64_t a0 = pmpaddr(0, 0, 0);
    csr_write(pmpcfg0, 0);
    pmpaddr(0, 1, 0);
    CHECK_EQ("its pmpcfg byte ignores writes", cfg_of(0), L | NAPOT | R);
    CHECK_EQ("its pmpaddr ignores writes", pmpaddr(0, 0, 0), a0);

    entry(3, OFF, TP(10) >> 2);
    entry(4, L | TOR | R, (TP(10) + 4096) >> 2);
    pmpaddr(3, 1, 0);
    CHECK_EQ("a locked TOR entry's bottom ignores writes", pmpaddr(3, 0, 0), TP(10) >> 2);
    set_cfg(3, NAPOT | R | W | X);
    CHECK_EQ("while the entry below it stays writable", cfg_of(3), NAPOT | R | W | X);
    set_cfg(3, 0);
    sfence_vma();
    traps_reset();
    probe_sd(TP(10), 1);
    expect_trap("M store to a locked TOR region", PRV_M, EXC_STORE_ACCESS, A(probe_sd), TP(10));
    s_faults("S store to it", s_sd, TP(10) + 8, EXC_STORE_ACCESS, probe_sd);
    traps_reset();
    probe_sd(TP(11), 1);
    expect_no_trap("M store just above it");
}

static void fill_pages(void)
{
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 512; j++)
            ((uint64_t *)test_pages[i])[j] = 0x1111UL * (uint64_t)(i + 1) + (uint64_t)j;
    /* TP(1): li a0, 42; ret (for S fetches) */
    ((volatile uint32_t *)test_pages[1])[0] = 0x02a00513;
    ((volatile uint32_t *)test_pages[1])[1] = 0x00008067;
    asm volatile("fence.i" ::: "memory");
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    fill_pages();
    no_match();
    fill_pages();
    permissions();
    regions();
    mprv_and_walk();
    warl();
    locked();
    base_config();
}
