// Address spaces (privileged spec 1.12, 4.1.11 and 4.2.1): two ASIDs whose
// page tables map the same virtual pages to different physical pages (data,
// S-mode code reached by an indirect call, U pages through MPRV), switched
// by satp writes alone, each access seeing its own space's page; an ASID
// reused with another root; PTE changes in one space made visible by
// sfence.vma of that ASID (all of it, or one page) issued from the other;
// global mappings (data and code; the image itself is global, as a
// kernel's is) changed in both roots and fenced once with rs2 = x0, which
// reaches every space; Bare in between.
// system-variant: --tune no-asid-tlb
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
/* Far from the identity gigapages (0-1 GiB, RAM's 2-3 GiB), and on TLB
 * entries (page number mod 256) the image's pages do not use, so stale
 * entries would hit in a direct-mapped TLB of 2^8. */
#define VA_DATA   0x2000c0000UL
#define VA_CODE   0x2000c1000UL
#define VA_GDATA  0x2000c2000UL      /* global, the same in both roots */
#define VA_GCODE  0x2000c3000UL      /* global code */
#define VA_UDATA  0x2000c4000UL      /* a U page */
#define ASID_A 1
#define ASID_B 2
#define ROUNDS 40

/* The 16 test pages' roles. */
enum {
    D_A = 0, D_B = 1, D_C = 2, D_A2 = 3, D_A3 = 4,  /* VA_DATA's pages */
    C_A = 5, C_B = 6, C_C = 7, C_A2 = 8,            /* VA_CODE's */
    G_OLD = 9, G_NEW = 10, GC_OLD = 11, GC_NEW = 12, /* VA_GDATA's and VA_GCODE's */
    U_A = 13, U_B = 14,                             /* VA_UDATA's */
};
/* What each code page returns. */
enum { RET_A = 0xa, RET_B = 0xb, RET_C = 0xc, RET_A2 = 0xd, RET_GOLD = 0x10, RET_GNEW = 0x11 };

static uint64_t *root_a, *root_b, *root_c;
static uint64_t satp_a, satp_b, satp_c;

static uint64_t tp(int i) { return A(test_pages[i]); }
static uint64_t magic(int page) { return 0xa5a5000000000000UL | (uint64_t)page << 8; }

static uint64_t satp_for(uint64_t *root, uint64_t asid)
{
    return satp_of(SATP_SV39, root) | asid << 44;
}

static void sfence_asid(uint64_t asid)
{
    asm volatile("sfence.vma x0, %0" :: "r"(asid) : "memory");
}

static void sfence_page_asid(uint64_t va, uint64_t asid)
{
    asm volatile("sfence.vma %0, %1" :: "r"(va), "r"(asid) : "memory");
}

/* test_pages[page] as code: li a0, value; ret. */
static void put_code(int page, long value)
{
    volatile uint32_t *code = (volatile uint32_t *)test_pages[page];
    code[0] = (uint32_t)value << 20 | 10u << 7 | 0x13u;     /* addi a0, x0, value */
    code[1] = 0x00008067u;                                   /* jalr x0, 0(ra) */
}

static long call(uint64_t va)
{
    return ((long (*)(void))(uintptr_t)va)();
}

static uint64_t load(uint64_t va)
{
    return *(volatile uint64_t *)(uintptr_t)va;
}

static void remap(uint64_t *root, uint64_t va, int page, uint64_t flags)
{
    pt_map(root, 3, va, tp(page), flags, 0);
}

static uint64_t *build(int data, int code, int udata)
{
    const uint64_t V = PTE_V | PTE_A | PTE_D, G = PTE_G;
    uint64_t *root = pt_identity(3);
    /* The image (code, stacks, tables) global in both, as a kernel is: its
     * code is shared by the spaces, next to each one's own. */
    *pt_entry(root, 3, RAM_BASE, 2) |= G;
    remap(root, VA_DATA, data, V | PTE_R | PTE_W);
    remap(root, VA_CODE, code, V | PTE_R | PTE_X);
    remap(root, VA_GDATA, G_OLD, V | PTE_R | PTE_W | G);
    remap(root, VA_GCODE, GC_OLD, V | PTE_R | PTE_X | G);
    remap(root, VA_UDATA, udata, V | PTE_R | PTE_W | PTE_U);
    return root;
}

static void setup(void)
{
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 512; j++)
            ((volatile uint64_t *)test_pages[i])[j] = magic(i) + (uint64_t)j;
    put_code(C_A, RET_A);
    put_code(C_B, RET_B);
    put_code(C_C, RET_C);
    put_code(C_A2, RET_A2);
    put_code(GC_OLD, RET_GOLD);
    put_code(GC_NEW, RET_GNEW);
    asm volatile("fence.i" ::: "memory");
    pt_reset();
    root_a = build(D_A, C_A, U_A);
    root_b = build(D_B, C_B, U_B);
    root_c = build(D_C, C_C, U_A);
    satp_a = satp_for(root_a, ASID_A);
    satp_b = satp_for(root_b, ASID_B);
    satp_c = satp_for(root_c, ASID_A);       /* ASID_A again, another root */
}

/* -- S-mode -------------------------------------------------------------------- */

/* Switch back and forth: every load, store and call sees its own space. */
static long s_switching(long rounds)
{
    long bad_load = 0, bad_call = 0, bad_store = 0;
    for (long i = 0; i < rounds; i++) {
        csr_write(satp, satp_a);
        bad_load += load(VA_DATA + 8) != magic(D_A) + 1;
        bad_call += call(VA_CODE) != RET_A;
        *(volatile uint64_t *)(uintptr_t)(VA_DATA + 16) = (uint64_t)i;
        csr_write(satp, satp_b);
        bad_load += load(VA_DATA + 8) != magic(D_B) + 1;
        bad_call += call(VA_CODE) != RET_B;
        bad_store += load(VA_DATA + 16) != magic(D_B) + 2;
        bad_store += ((volatile uint64_t *)test_pages[D_A])[2] != (uint64_t)i;
    }
    CHECK_EQ("loads through two ASIDs see their own pages (bad ones)", bad_load, 0);
    CHECK_EQ("calls through two ASIDs run their own code (bad ones)", bad_call, 0);
    CHECK_EQ("stores through A land in A's page only (bad ones)", bad_store, 0);
    return 0;
}

/* ASID_A with root C: its old translations are fenced, then C's are seen;
 * back on root A (fenced again), A's. */
static long s_reuse(long unused)
{
    (void)unused;
    csr_write(satp, satp_a);
    CHECK_EQ("A's page before the reuse", load(VA_DATA), magic(D_A));
    CHECK_EQ("A's code before the reuse", call(VA_CODE), RET_A);
    csr_write(satp, satp_c);
    sfence_asid(ASID_A);
    CHECK_EQ("ASID A on root C, fenced: C's page", load(VA_DATA), magic(D_C));
    CHECK_EQ("ASID A on root C, fenced: C's code", call(VA_CODE), RET_C);
    csr_write(satp, satp_a);
    sfence_asid(ASID_A);
    CHECK_EQ("back on root A, fenced: A's page", load(VA_DATA), magic(D_A));
    CHECK_EQ("back on root A, fenced: A's code", call(VA_CODE), RET_A);
    return 0;
}

/* Change A's PTEs while in B, fence A's ASID from B, go back to A. */
static long s_fence_other(long unused)
{
    (void)unused;
    const uint64_t V = PTE_V | PTE_A | PTE_D;
    csr_write(satp, satp_a);
    CHECK_EQ("A's page, cached", load(VA_DATA), magic(D_A));
    CHECK_EQ("A's code, cached", call(VA_CODE), RET_A);
    csr_write(satp, satp_b);
    CHECK_EQ("B's page", load(VA_DATA), magic(D_B));
    remap(root_a, VA_DATA, D_A2, V | PTE_R | PTE_W);
    remap(root_a, VA_CODE, C_A2, V | PTE_R | PTE_X);
    sfence_asid(ASID_A);
    CHECK_EQ("B's page after A's fence", load(VA_DATA), magic(D_B));
    CHECK_EQ("B's code after A's fence", call(VA_CODE), RET_B);
    csr_write(satp, satp_a);
    CHECK_EQ("A remapped and fenced by ASID: the new page", load(VA_DATA), magic(D_A2));
    CHECK_EQ("A remapped and fenced by ASID: the new code", call(VA_CODE), RET_A2);

    csr_write(satp, satp_b);
    remap(root_a, VA_DATA, D_A3, V | PTE_R | PTE_W);
    remap(root_a, VA_CODE, C_A, V | PTE_R | PTE_X);
    sfence_page_asid(VA_DATA, ASID_A);
    sfence_page_asid(VA_CODE, ASID_A);
    CHECK_EQ("B's page after A's page fences", load(VA_DATA), magic(D_B));
    csr_write(satp, satp_a);
    CHECK_EQ("A remapped, its pages fenced by ASID: the new page", load(VA_DATA), magic(D_A3));
    CHECK_EQ("A remapped, its pages fenced by ASID: the new code", call(VA_CODE), RET_A);
    remap(root_a, VA_DATA, D_A, V | PTE_R | PTE_W);
    sfence_page_asid(VA_DATA, ASID_A);
    CHECK_EQ("and back", load(VA_DATA), magic(D_A));
    return 0;
}

/* Global pages, cached in both spaces, remapped in both roots: one
 * sfence.vma with rs2 = x0 in one space reaches the other. */
static long s_global(long unused)
{
    (void)unused;
    const uint64_t V = PTE_V | PTE_A | PTE_D | PTE_G;
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        csr_write(satp, satp_a);
        bad += load(VA_GDATA) != magic(G_OLD) || call(VA_GCODE) != RET_GOLD;
        csr_write(satp, satp_b);
        bad += load(VA_GDATA) != magic(G_OLD) || call(VA_GCODE) != RET_GOLD;
    }
    CHECK_EQ("a global page and global code in both spaces (bad ones)", bad, 0);
    csr_write(satp, satp_a);
    remap(root_a, VA_GDATA, G_NEW, V | PTE_R | PTE_W);
    remap(root_b, VA_GDATA, G_NEW, V | PTE_R | PTE_W);
    remap(root_a, VA_GCODE, GC_NEW, V | PTE_R | PTE_X);
    remap(root_b, VA_GCODE, GC_NEW, V | PTE_R | PTE_X);
    sfence_vma_addr(VA_GDATA);
    sfence_vma_addr(VA_GCODE);
    CHECK_EQ("global page remapped, fenced (rs2 = x0) here", load(VA_GDATA), magic(G_NEW));
    CHECK_EQ("global code remapped, fenced here", call(VA_GCODE), RET_GNEW);
    csr_write(satp, satp_b);
    CHECK_EQ("the other space sees the new global page", load(VA_GDATA), magic(G_NEW));
    CHECK_EQ("the other space runs the new global code", call(VA_GCODE), RET_GNEW);

    remap(root_a, VA_GCODE, GC_OLD, V | PTE_R | PTE_X);
    remap(root_b, VA_GCODE, GC_OLD, V | PTE_R | PTE_X);
    sfence_vma();
    CHECK_EQ("global code back, fenced whole (x0, x0) in B", call(VA_GCODE), RET_GOLD);
    csr_write(satp, satp_a);
    CHECK_EQ("and in A", call(VA_GCODE), RET_GOLD);
    return 0;
}

/* Bare between the two: physical addresses, then each space again. */
static long s_bare(long unused)
{
    (void)unused;
    csr_write(satp, satp_a);
    CHECK_EQ("A before Bare", load(VA_DATA), magic(D_A));
    csr_write(satp, 0);
    CHECK_EQ("Bare: physical", load(tp(D_B)), magic(D_B));
    csr_write(satp, satp_b);
    CHECK_EQ("B after Bare", load(VA_DATA), magic(D_B));
    CHECK_EQ("B's code after Bare", call(VA_CODE), RET_B);
    csr_write(satp, satp_a);
    CHECK_EQ("A after Bare", load(VA_DATA), magic(D_A));
    return 0;
}

/* -- M-mode: the U view through MPRV -------------------------------------------- */

static void m_user_view(void)
{
    long bad = 0;
    for (int i = 0; i < ROUNDS; i++) {
        csr_write(satp, satp_a);
        bad += mprv_ld(VA_UDATA + 8, MSTATUS_MPRV) != magic(U_A) + 1;   /* MPP = U */
        csr_write(satp, satp_b);
        bad += mprv_ld(VA_UDATA + 8, MSTATUS_MPRV) != magic(U_B) + 1;
    }
    CHECK_EQ("U-mode loads (MPRV) through two ASIDs see their own pages (bad ones)", bad, 0);
    csr_write(satp, 0);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    setup();
    section("switching ASIDs without sfence.vma");
    run_in_mode_m(PRV_S, s_switching, ROUNDS);
    section("an ASID reused with another root");
    run_in_mode_m(PRV_S, s_reuse, 0);
    section("sfence.vma of one ASID from another");
    run_in_mode_m(PRV_S, s_fence_other, 0);
    section("global mappings");
    run_in_mode_m(PRV_S, s_global, 0);
    section("Bare in between");
    run_in_mode_m(PRV_S, s_bare, 0);
    section("the U view");
    m_user_view();
    csr_write(satp, 0);
    sfence_vma();
}
