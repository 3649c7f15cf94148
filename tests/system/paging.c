// Virtual memory (privileged spec 1.12, 4.3-4.6): Sv39, Sv48 and Sv57
// walks from S-mode, every page-fault kind with exact sepc and stval
// (delegated) or mepc and mtval, A and D set by the walk, U pages and SUM,
// MXR, superpage alignment, reserved bits, canonical addresses, sfence.vma
// after a PTE change, U-mode code on U pages, MPRV loads and stores from M,
// and misaligned accesses across a page boundary (into a mapped page, an
// unmapped one and a read-only one).
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
#define VA_DATA 0x40000000UL
#define PG(i) (VA_DATA + (uint64_t)(i) * 0x1000)
#define FAULTS ((1UL << EXC_FETCH_PAGE) | (1UL << EXC_LOAD_PAGE) | (1UL << EXC_STORE_PAGE))

/* The 4 KiB mappings below VA_DATA + 0x20000 (see build()). */
enum {
    P_RW = 0, P_HOLE = 1, P_RO = 2, P_XO = 3, P_WO = 4, P_USER = 5, P_FRESH = 6,
    P_CODE = 7,           /* 2 pages: the probes' code, R X, A clear */
    P_UCODE = 9,          /* 2 pages: the same with U */
    P_CROSS = 11,         /* 2 pages, physically apart */
    P_EDGE = 13,          /* mapped; P_EDGE + 1 is not */
    P_RWRO = 15,          /* RW, then P_RWRO + 1 read-only */
    P_RSVD = 17,          /* a reserved bit (60) set */
    P_INVALID = 18,       /* V clear, R W set */
    P_SWAP = 19,          /* remapped by the sfence test */
    P_SPLIT = 20,         /* 2 code pages physically apart, then a hole */
    P_FRESH_RO = 23,      /* read-only, A clear */
};
#define TP(i) A(test_pages[i])
#define RAM_FREE 0x80200000UL      /* 2 MiB-aligned RAM the image does not use */
#define RAM_FREE2 0x80400000UL     /* and another 2 MiB */
#define VA_MEGA  0x40200000UL      /* 2 MiB leaf -> RAM_FREE */
#define VA_MEGA_BAD 0x40400000UL   /* 2 MiB leaf -> RAM_FREE + 4 KiB: misaligned */
#define VA_GIGA_BAD 0xc0000000UL   /* 1 GiB leaf -> RAM_FREE: misaligned */
#define VA_ALIAS 0x100000000UL     /* the image again, with U (U-mode code) */
#define VA_NEG 0xffffffffc0000000UL
#define VA_BADPT 0x40600000UL      /* its level-0 table is where nothing is */
/* An offset in the 2 MiB page whose 4 KiB page shares no direct-mapped TLB
 * slot (page number mod 256) with the image's code, data and stacks. */
#define MEGA_OFF 0xf0000UL

static int levels_now;
static uint64_t *root_now;

static uint64_t code_page(void) { return A(probe_ld) & ~0xfffUL; }

static uint64_t *build(int levels)
{
    pt_reset();
    uint64_t *root = pt_identity(levels);
    const uint64_t AD = PTE_A | PTE_D, V = PTE_V;
    pt_map(root, levels, PG(P_RW), TP(0), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_RO), TP(1), V | PTE_R | PTE_A, 0);
    pt_map(root, levels, PG(P_XO), TP(2), V | PTE_X | PTE_A, 0);
    pt_map(root, levels, PG(P_WO), TP(3), V | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_USER), TP(4), V | PTE_R | PTE_W | PTE_U | AD, 0);
    pt_map(root, levels, PG(P_FRESH), TP(5), V | PTE_R | PTE_W, 0);
    for (int i = 0; i < 2; i++) {
        pt_map(root, levels, PG(P_CODE + i), code_page() + 0x1000UL * i, V | PTE_R | PTE_X, 0);
        pt_map(root, levels, PG(P_UCODE + i), code_page() + 0x1000UL * i,
               V | PTE_R | PTE_X | PTE_U | PTE_A, 0);
    }
    pt_map(root, levels, PG(P_CROSS), TP(6), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_CROSS + 1), TP(8), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_EDGE), TP(9), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_RWRO), TP(10), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_RWRO + 1), TP(11), V | PTE_R | PTE_A, 0);
    pt_map(root, levels, PG(P_RSVD), TP(12), V | PTE_R | PTE_W | AD | 1UL << 60, 0);
    pt_map(root, levels, PG(P_INVALID), TP(13), PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, PG(P_SWAP), TP(14), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, VA_NEG, TP(7), V | PTE_R | PTE_W | AD, 0);
    pt_map(root, levels, VA_MEGA, RAM_FREE, V | PTE_R | PTE_W | AD, 1);
    pt_map(root, levels, VA_MEGA_BAD, RAM_FREE + 0x1000, V | PTE_R | PTE_W | AD, 1);
    pt_map(root, levels, VA_GIGA_BAD, RAM_FREE, V | PTE_R | PTE_W | AD, 2);
    pt_map(root, levels, PG(P_SPLIT), RAM_FREE + 0x2000, V | PTE_R | PTE_X | PTE_A, 0);
    pt_map(root, levels, PG(P_SPLIT + 1), RAM_FREE + 0x5000, V | PTE_R | PTE_X | PTE_A, 0);
    *pt_entry(root, levels, VA_BADPT, 1) = (NOTHING_ADDR >> 12) << 10 | V;
    pt_map(root, levels, PG(P_FRESH_RO), TP(1), V | PTE_R, 0);
    return root;
}

static void fill_pages(void)
{
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 4096 / 8; j++)
            ((uint64_t *)test_pages[i])[j] = 0x0101010101010101UL * (uint64_t)(i + 1) + (uint64_t)j;
    MMIO64(RAM_FREE) = 0x6d656761UL;                  /* "mega" */
    MMIO64(RAM_FREE + 0x1000) = 0x626164UL;
    MMIO64(RAM_FREE + MEGA_OFF) = 0x6f6c64UL;         /* "old" */
    MMIO64(RAM_FREE2 + MEGA_OFF) = 0x6e6577UL;        /* "new" */
    /* addi a0, a0, 1 split across two pages, then c.jr ra; and the same
     * addi's first half at the end of the second page, before a hole. */
    MMIO32(RAM_FREE + 0x2ffc) = 0x05130001;           /* c.nop, addi's low half */
    MMIO32(RAM_FREE + 0x5000) = 0x80820015;           /* addi's high half, c.jr ra */
    MMIO32(RAM_FREE + 0x5ff8) = 0x00018082;           /* c.jr ra, c.nop */
    MMIO32(RAM_FREE + 0x5ffc) = 0x05138082;           /* c.jr ra, addi's low half */
}

static uint64_t pattern(int page, int word)
{
    return 0x0101010101010101UL * (uint64_t)(page + 1) + (uint64_t)word;
}

/* Enter S with satp = mode over root and run fn(arg). */
static long in_s(int mode, uint64_t *root, long (*fn)(long), long arg)
{
    levels_now = satp_levels(mode);
    root_now = root;
    csr_write(satp, satp_of(mode, root));
    sfence_vma();
    long r = run_in_mode_m(PRV_S, fn, arg);
    csr_write(satp, 0);
    sfence_vma();
    return r;
}

static uint64_t *pte_of(uint64_t va)
{
    return pt_entry(root_now, levels_now, va, 0);
}

/* Fetching through a page of probe code: probe_ecall's ecall traps to M
 * (not delegated) at its virtual address, which M cannot read. */
static int ecall_skip_hook(Frame *f, int level)
{
    if (level == PRV_M && f->cause == EXC_ECALL_S) {
        f->epc += 4;
        return 1;
    }
    return 0;
}

/* -- What every mode gets (S-mode) ------------------------------------------ */

static uint64_t hi_va(int levels) { return 1UL << (12 + 9 * levels - 2); }

static long s_core(long levels)
{
    uint64_t v;
    traps_reset();
    v = probe_ld(PG(P_RW) + 16);
    expect_no_trap("load through a 4 KiB page");
    CHECK_EQ("the mapped page's data", v, pattern(0, 2));
    probe_sd(PG(P_RW) + 24, 0x5151);
    CHECK_EQ("a store lands in the physical page", ((uint64_t *)test_pages[0])[3], 0x5151);
    v = probe_ld(VA_NEG + 8);
    CHECK_EQ("a sign-extended (top) address", v, pattern(7, 1));
    v = probe_ld(hi_va((int)levels));
    CHECK_EQ("the highest VPN's lower half (bit va_bits-2)", v, pattern(15, 0));
    expect_no_trap("none of those faulted");

    uint64_t bad = 1UL << (12 + 9 * levels);          /* bit va_bits: not sign-extended */
    traps_reset();
    probe_ld(bad);
    expect_trap("non-canonical load", PRV_S, EXC_LOAD_PAGE, A(probe_ld), bad);
    traps_reset();
    probe_ld(PG(P_HOLE) + 8);
    expect_trap("load from an unmapped page", PRV_S, EXC_LOAD_PAGE, A(probe_ld), PG(P_HOLE) + 8);
    traps_reset();
    probe_sd(PG(P_HOLE) + 16, 1);
    expect_trap("store to an unmapped page", PRV_S, EXC_STORE_PAGE, A(probe_sd),
                PG(P_HOLE) + 16);
    traps_reset();
    probe_fetch(PG(P_HOLE) + 4);
    expect_trap("fetch from an unmapped page", PRV_S, EXC_FETCH_PAGE, PG(P_HOLE) + 4,
                PG(P_HOLE) + 4);

    uint64_t *code = pte_of(PG(P_CODE));
    uint64_t va = PG(P_CODE) + (A(probe_ecall) & 0xfff);
    traps_reset();
    trap_hook = ecall_skip_hook;
    probe_fetch(va);
    trap_hook = 0;
    expect_trap("code run through a mapping (ecall at its VA)", PRV_M, EXC_ECALL_S, va, 0);
    CHECK_BITS("the walk set A on the code page", *code, PTE_A, PTE_A);

    uint64_t *fresh = pte_of(PG(P_FRESH));
    CHECK_BITS("fresh PTE: A and D clear", *fresh, PTE_A | PTE_D, 0);
    probe_ld(PG(P_FRESH));
    CHECK_BITS("after a load: A set, D clear", *fresh, PTE_A | PTE_D, PTE_A);
    probe_sd(PG(P_FRESH) + 8, 2);
    CHECK_BITS("after a store: A and D set", *fresh, PTE_A | PTE_D, PTE_A | PTE_D);
    *fresh &= ~(PTE_A | PTE_D);
    sfence_vma();
    probe_amoadd_d(PG(P_FRESH) + 16, 1);
    CHECK_BITS("after an AMO: A and D set", *fresh, PTE_A | PTE_D, PTE_A | PTE_D);
    uint64_t *fresh_ro = pte_of(PG(P_FRESH_RO));
    traps_reset();
    probe_sd(PG(P_FRESH_RO), 1);
    expect_trap("store to a read-only page with A clear", PRV_S, EXC_STORE_PAGE, A(probe_sd),
                PG(P_FRESH_RO));
    CHECK_BITS("the faulting store set neither A nor D", *fresh_ro, PTE_A | PTE_D, 0);
    traps_reset();
    probe_ld(PG(P_FRESH_RO));
    expect_no_trap("then a load");
    CHECK_BITS("the load set A only", *fresh_ro, PTE_A | PTE_D, PTE_A);
    return 0;
}

/* -- Sv39 in detail (S-mode) ------------------------------------------------------ */

static long s_permissions(long unused)
{
    (void)unused;
    uint64_t v;
    section("permissions");
    traps_reset();
    v = probe_ld(PG(P_RO));
    expect_no_trap("load from a read-only page");
    CHECK_EQ("read-only page's data", v, pattern(1, 0));
    probe_sd(PG(P_RO) + 8, 1);
    expect_trap("store to a read-only page", PRV_S, EXC_STORE_PAGE, A(probe_sd), PG(P_RO) + 8);
    traps_reset();
    probe_amoadd_w(PG(P_RO) + 16, 1);
    expect_trap("AMO on a read-only page", PRV_S, EXC_STORE_PAGE, A(probe_amoadd_w),
                PG(P_RO) + 16);
    traps_reset();
    v = probe_lr_d(PG(P_RO) + 16);
    expect_no_trap("lr.d on a read-only page (LR is a load)");
    CHECK_EQ("lr.d on a read-only page: its data", v, pattern(1, 2));
    traps_reset();
    probe_lr_w(PG(P_XO));
    expect_trap("lr.w on an execute-only page", PRV_S, EXC_LOAD_PAGE, A(probe_lr_w), PG(P_XO));
    traps_reset();
    probe_sc_w(PG(P_RO) + 16, 1);
    expect_trap("sc.w on a read-only page", PRV_S, EXC_STORE_PAGE, A(probe_sc_w),
                PG(P_RO) + 16);
    traps_reset();
    probe_fetch(PG(P_RW));
    expect_trap("fetch from a page without X", PRV_S, EXC_FETCH_PAGE, PG(P_RW), PG(P_RW));
    traps_reset();
    probe_ld(PG(P_WO));
    expect_trap("load from W-only (reserved) PTE", PRV_S, EXC_LOAD_PAGE, A(probe_ld), PG(P_WO));
    traps_reset();
    probe_sd(PG(P_WO), 1);
    expect_trap("store to W-only (reserved) PTE", PRV_S, EXC_STORE_PAGE, A(probe_sd), PG(P_WO));
    traps_reset();
    probe_ld(PG(P_INVALID));
    expect_trap("load through a PTE with V clear", PRV_S, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_INVALID));
    traps_reset();
    probe_ld(PG(P_RSVD));
    expect_trap("load through a PTE with reserved bit 60", PRV_S, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_RSVD));

    section("MXR");
    traps_reset();
    probe_ld(PG(P_XO) + 8);
    expect_trap("load from an execute-only page", PRV_S, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_XO) + 8);
    csr_set(sstatus, MSTATUS_MXR);
    traps_reset();
    v = probe_ld(PG(P_XO) + 8);
    csr_clear(sstatus, MSTATUS_MXR);
    expect_no_trap("with MXR: load from an execute-only page");
    CHECK_EQ("execute-only page's data under MXR", v, pattern(2, 1));
    csr_set(sstatus, MSTATUS_MXR);
    traps_reset();
    probe_sd(PG(P_XO), 1);
    csr_clear(sstatus, MSTATUS_MXR);
    expect_trap("MXR does not allow stores", PRV_S, EXC_STORE_PAGE, A(probe_sd), PG(P_XO));

    section("SUM: S-mode and U pages");
    traps_reset();
    probe_ld(PG(P_USER));
    expect_trap("S load from a U page without SUM", PRV_S, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_USER));
    traps_reset();
    probe_sd(PG(P_USER) + 8, 1);
    expect_trap("S store to a U page without SUM", PRV_S, EXC_STORE_PAGE, A(probe_sd),
                PG(P_USER) + 8);
    csr_set(sstatus, MSTATUS_SUM);
    traps_reset();
    v = probe_ld(PG(P_USER));
    probe_sd(PG(P_USER) + 8, 0x5a5a);
    expect_no_trap("with SUM: S load and store on a U page");
    CHECK_EQ("U page's data under SUM", v, pattern(4, 0));
    CHECK_EQ("S store under SUM landed", ((uint64_t *)test_pages[4])[1], 0x5a5a);
    uint64_t uva = PG(P_UCODE) + (A(probe_ecall) & 0xfff);
    traps_reset();
    probe_fetch(uva);
    expect_trap("S fetch from a U page faults even with SUM", PRV_S, EXC_FETCH_PAGE, uva, uva);
    csr_clear(sstatus, MSTATUS_SUM);

    section("superpages");
    traps_reset();
    v = probe_ld(VA_MEGA);
    expect_no_trap("load through an aligned 2 MiB page");
    CHECK_EQ("2 MiB page's data", v, 0x6d656761UL);
    v = probe_ld(VA_MEGA + 0x1000);
    CHECK_EQ("2 MiB page: offset 4 KiB", v, 0x626164UL);
    traps_reset();
    probe_ld(VA_MEGA_BAD + 8);
    expect_trap("misaligned 2 MiB page", PRV_S, EXC_LOAD_PAGE, A(probe_ld), VA_MEGA_BAD + 8);
    traps_reset();
    probe_ld(VA_GIGA_BAD + 0x10);
    expect_trap("misaligned 1 GiB page", PRV_S, EXC_LOAD_PAGE, A(probe_ld), VA_GIGA_BAD + 0x10);

    uint64_t *mega = pt_entry(root_now, 3, VA_MEGA, 1), old = *mega;
    CHECK_EQ("2 MiB page, 960 KiB in: before", probe_ld(VA_MEGA + MEGA_OFF), 0x6f6c64UL);
    *mega = pte_leaf(RAM_FREE2, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    sfence_vma_addr(VA_MEGA);
    CHECK_EQ("2 MiB leaf changed, sfence.vma of its first address: 960 KiB in sees it",
             probe_ld(VA_MEGA + MEGA_OFF), 0x6e6577UL);
    *mega = old;
    sfence_vma();

    section("instructions across a page boundary");
    uint64_t split = PG(P_SPLIT) + 0xffe;
    traps_reset();
    CHECK_EQ("addi split over two pages physically apart ran", probe_fetch(split), split + 1);
    CHECK_EQ("c.jr in a page's last halfword before a hole ran",
             probe_fetch(PG(P_SPLIT + 1) + 0xffc), PG(P_SPLIT + 1) + 0xffc);
    expect_no_trap("none of those faulted");
    traps_reset();
    probe_fetch(PG(P_SPLIT + 1) + 0xffe);
    expect_trap("32-bit instruction running into a hole", PRV_S, EXC_FETCH_PAGE,
                PG(P_SPLIT + 1) + 0xffe, PG(P_SPLIT + 2));

    section("a page-table entry where nothing is: access faults (to M)");
    traps_reset();
    probe_ld(VA_BADPT + 8);
    expect_trap("load", PRV_M, EXC_LOAD_ACCESS, A(probe_ld), VA_BADPT + 8);
    traps_reset();
    probe_sd(VA_BADPT + 16, 1);
    expect_trap("store", PRV_M, EXC_STORE_ACCESS, A(probe_sd), VA_BADPT + 16);
    traps_reset();
    probe_fetch(VA_BADPT + 24);
    expect_trap("fetch", PRV_M, EXC_FETCH_ACCESS, VA_BADPT + 24, VA_BADPT + 24);

    section("sfence.vma after a PTE change");
    uint64_t *pte = pte_of(PG(P_SWAP));
    CHECK_EQ("before: the first page", probe_ld(PG(P_SWAP)), pattern(14, 0));
    *pte = pte_leaf(TP(15), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    sfence_vma_addr(PG(P_SWAP));
    CHECK_EQ("after sfence.vma va: the new page", probe_ld(PG(P_SWAP)), pattern(15, 0));
    *pte = 0;
    sfence_vma();
    traps_reset();
    probe_ld(PG(P_SWAP));
    expect_trap("after unmapping and sfence.vma: a fault", PRV_S, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_SWAP));
    *pte = pte_leaf(TP(14), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    sfence_vma();
    CHECK_EQ("mapped again", probe_ld(PG(P_SWAP)), pattern(14, 0));
    return 0;
}

static long s_misaligned(long unused)
{
    (void)unused;
    section("misaligned accesses across a page boundary (Sv39)");
    uint8_t *p0 = test_pages[6], *p1 = test_pages[8];
    for (int i = 0; i < 8; i++) {
        p0[0xff8 + i] = (uint8_t)(0x10 + i);
        p1[i] = (uint8_t)(0x20 + i);
    }
    traps_reset();
    uint64_t v = probe_ld(PG(P_CROSS) + 0xffc);
    CHECK_EQ("ld across two pages physically apart", v, 0x2322212017161514UL);
    v = probe_lw(PG(P_CROSS) + 0xffe);
    CHECK_EQ("lw across", v, 0x21201716UL);
    probe_sd(PG(P_CROSS) + 0xffb, 0x8877665544332211UL);
    CHECK_EQ("sd across: first page's bytes", p0[0xffb] | p0[0xfff] << 8, 0x11 | 0x55 << 8);
    CHECK_EQ("sd across: second page's bytes", p1[0] | p1[2] << 8, 0x66 | 0x88 << 8);
    expect_no_trap("none of those faulted");

    traps_reset();
    probe_ld(PG(P_EDGE) + 0xffc);
    expect_trap("ld into an unmapped page", PRV_S, EXC_LOAD_PAGE, A(probe_ld), PG(P_EDGE + 1));
    traps_reset();
    probe_sd(PG(P_EDGE) + 0xffa, 1);
    expect_trap("sd into an unmapped page", PRV_S, EXC_STORE_PAGE, A(probe_sd), PG(P_EDGE + 1));
    traps_reset();
    v = probe_ld(PG(P_RWRO) + 0xffc);
    expect_no_trap("ld from RW into read-only: fine");
    CHECK_EQ("its value", v, (pattern(11, 0) << 32) | (pattern(10, 511) >> 32));
    traps_reset();
    probe_sw(PG(P_RWRO) + 0xffe, 1);
    expect_trap("sw into a read-only page", PRV_S, EXC_STORE_PAGE, A(probe_sw), PG(P_RWRO + 1));
    return 0;
}

/* U-mode code (through VA_ALIAS): loads from a U page and a non-U page. */
static long u_load(long va)
{
    return (long)probe_ld((uint64_t)va);
}

static void sv39_detail(uint64_t *root)
{
    in_s(SATP_SV39, root, s_permissions, 0);
    in_s(SATP_SV39, root, s_misaligned, 0);

    section("U-mode code on U pages");
    pt_map(root, 3, VA_ALIAS, RAM_BASE, PTE_RWX_AD | PTE_U, 2);
    code_alias = VA_ALIAS - RAM_BASE;
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    traps_reset();
    uint64_t v = (uint64_t)run_in_mode_m(PRV_U, u_load, (long)PG(P_USER) + 16);
    expect_no_trap("U load from a U page");
    CHECK_EQ("U page's data from U", v, pattern(4, 2));
    traps_reset();
    run_in_mode_m(PRV_U, u_load, (long)PG(P_RW));
    expect_trap("U load from a non-U page", PRV_S, EXC_LOAD_PAGE, A(probe_ld) + code_alias,
                PG(P_RW));
    code_alias = 0;
    csr_write(satp, 0);
    sfence_vma();
}

/* -- M-mode: MPRV, undelegated faults, satp ------------------------------------------ */

static void mprv(uint64_t *root)
{
    extern char mprv_ld_insn[], mprv_sd_insn[];
    const uint64_t S = (uint64_t)PRV_S << MPP_SHIFT, U = (uint64_t)PRV_U << MPP_SHIFT;
    section("MPRV: M-mode loads and stores translated as MPP's");
    levels_now = 3;
    root_now = root;
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    traps_reset();
    uint64_t v = mprv_ld(PG(P_RW) + 32, MSTATUS_MPRV | S);
    expect_no_trap("MPRV, MPP=S: load");
    CHECK_EQ("MPRV load read the mapped page", v, pattern(0, 4));
    mprv_sd(PG(P_RW) + 40, 0xabcd, MSTATUS_MPRV | S);
    CHECK_EQ("MPRV store wrote the mapped page", ((uint64_t *)test_pages[0])[5], 0xabcd);
    v = mprv_ld(TP(1) + 8, MSTATUS_MPP);
    CHECK_EQ("MPP=M with MPRV clear: physical", v, pattern(1, 1));
    v = mprv_ld(TP(1) + 8, MSTATUS_MPRV | MSTATUS_MPP);
    CHECK_EQ("MPRV with MPP=M: untranslated", v, pattern(1, 1));
    expect_no_trap("none of those faulted");
    traps_reset();
    mprv_ld(PG(P_RW), MSTATUS_MPRV | U);
    expect_trap("MPRV, MPP=U on a non-U page: taken in M", PRV_M, EXC_LOAD_PAGE,
                A(mprv_ld_insn), PG(P_RW));
    traps_reset();
    mprv_sd(PG(P_RO), 1, MSTATUS_MPRV | S);
    expect_trap("MPRV store to a read-only page", PRV_M, EXC_STORE_PAGE, A(mprv_sd_insn),
                PG(P_RO));
    traps_reset();
    mprv_ld(PG(P_USER), MSTATUS_MPRV | S);
    expect_trap("MPRV, MPP=S on a U page without SUM", PRV_M, EXC_LOAD_PAGE, A(mprv_ld_insn),
                PG(P_USER));
    traps_reset();
    v = mprv_ld(PG(P_USER), MSTATUS_MPRV | S | MSTATUS_SUM);
    expect_no_trap("MPRV, MPP=S, SUM on a U page");
    CHECK_EQ("its data", v, pattern(4, 0));
    v = mprv_ld(PG(P_XO), MSTATUS_MPRV | S | MSTATUS_MXR);
    CHECK_EQ("MPRV with MXR: execute-only page", v, pattern(2, 0));
    v = mprv_ld(PG(P_USER) + 8, MSTATUS_MPRV | U);
    CHECK_EQ("MPRV, MPP=U on a U page", v, pattern(4, 1));
    expect_no_trap("none of those faulted");
    CHECK_BITS("MPRV clear afterwards", csr_read(mstatus), MSTATUS_MPRV, 0);
    csr_write(satp, 0);
    sfence_vma();
}

static long s_load(long va)
{
    return (long)probe_ld((uint64_t)va);
}

static void undelegated(uint64_t *root)
{
    section("page faults not delegated: taken in M");
    csr_write(medeleg, 0);
    traps_reset();
    in_s(SATP_SV39, root, s_load, (long)PG(P_HOLE) + 0x18);
    expect_trap("S load from an unmapped page", PRV_M, EXC_LOAD_PAGE, A(probe_ld),
                PG(P_HOLE) + 0x18);
    CHECK_EQ("MPP = S", (trap_log[0].status & MSTATUS_MPP) >> MPP_SHIFT, PRV_S);
    csr_write(medeleg, FAULTS);
}

static void satp_warl(uint64_t *root)
{
    section("satp");
    static const int modes[] = { SATP_SV39, SATP_SV48, SATP_SV57 };
    static const char *const names[] = { "Sv39 written and read back", "Sv48 written and read back",
                                         "Sv57 written and read back" };
    for (int i = 0; i < 3; i++) {
        csr_write(satp, satp_of(modes[i], root));
        CHECK_EQ(names[i], csr_read(satp), satp_of(modes[i], root));
    }
    csr_write(satp, satp_of(SATP_SV39, root));
    csr_write(satp, satp_of(11, root));
    CHECK_EQ("mode 11 (reserved) is ignored: satp keeps Sv39", csr_read(satp),
             satp_of(SATP_SV39, root));
    csr_write(satp, satp_of(1, root));
    CHECK_EQ("mode 1 (reserved) is ignored", csr_read(satp), satp_of(SATP_SV39, root));
    csr_write(satp, 0);
    CHECK_EQ("Bare", csr_read(satp), 0);
}

/* -- Larger pages of Sv48 --------------------------------------------------------------- */

#define VA_TERA 0x0000008000000000UL   /* Sv48 level-3 leaf (512 GiB) */

static long s_tera(long unused)
{
    (void)unused;
    traps_reset();
    uint64_t v = probe_lbu(VA_TERA + UART_BASE + 5);
    expect_no_trap("UART LSR read through a 512 GiB page at physical 0");
    CHECK_BITS("LSR through the 512 GiB page: THRE", v, 0x20, 0x20);
    traps_reset();
    probe_ld(2 * VA_TERA + 8);
    expect_trap("misaligned 512 GiB page", PRV_S, EXC_LOAD_PAGE, A(probe_ld), 2 * VA_TERA + 8);
    return 0;
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    fill_pages();
    csr_write(medeleg, FAULTS);
    static const int modes[] = { SATP_SV39, SATP_SV48, SATP_SV57 };
    static const char *const names[] = { "Sv39", "Sv48", "Sv57" };
    for (int i = 0; i < 3; i++) {
        section(names[i]);
        fill_pages();
        int levels = satp_levels(modes[i]);
        uint64_t *root = build(levels);
        pt_map(root, levels, hi_va(levels), TP(15), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 0);
        in_s(modes[i], root, s_core, levels);
        if (modes[i] == SATP_SV48) {
            pt_map(root, 4, VA_TERA, 0, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 3);
            pt_map(root, 4, 2 * VA_TERA, RAM_BASE, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 3);
            in_s(modes[i], root, s_tera, 0);
        }
    }
    fill_pages();
    uint64_t *root = build(3);
    sv39_detail(root);
    fill_pages();
    root = build(3);
    mprv(root);
    undelegated(root);
    satp_warl(root);
    csr_write(medeleg, 0);

    section("misaligned accesses across a page boundary (M, Bare)");
    uint8_t *p = test_pages[2];
    for (int i = 0; i < 8; i++)
        p[0xffc + i] = (uint8_t)(0x30 + i);     /* pages 2 and 3 are adjacent */
    traps_reset();
    CHECK_EQ("ld across a page boundary", probe_ld(TP(2) + 0xffc), 0x3736353433323130UL);
    probe_sd(TP(2) + 0xffd, 0x0102030405060708UL);
    CHECK_EQ("sd across a page boundary", *(uint64_t *)(p + 0xff8) >> 40 |
             (*(uint64_t *)(p + 0x1000) & 0xffffffffffUL) << 24, 0x0102030405060708UL);
    expect_no_trap("none of those faulted");
}
