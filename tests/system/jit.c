// What translated code must get right beyond the instructions themselves
// (xlat-system runs guest code through its JIT; under QEMU or --interp
// these pass the same): code patched and then fence.i (as Linux's
// alternatives and jump labels do), run many times before and after so
// that it is translated; a store into the page a block runs from; a page
// table entry of code edited under a chained pair of blocks, then
// sfence.vma of the page; and a machine timer interrupt that must reach a
// tight loop that reads only memory (no CSR, no device), within a bound.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
#define LI_A0(n)  (0x00000513u | ((uint32_t)(n) & 0xfff) << 20)    /* addi a0, zero, n */
#define ADDI_A0(n) (0x00050513u | ((uint32_t)(n) & 0xfff) << 20)   /* addi a0, a0, n */
#define RET       0x00008067u                                      /* jalr zero, 0(ra) */
#define J(off)    (0x0000006fu | (((uint32_t)(off) >> 1 & 0x3ff) << 21) | \
                   (((uint32_t)(off) >> 11 & 1) << 20) | (((uint32_t)(off) >> 12 & 0xff) << 12))
#define RUNS 40           /* calls per version: well past the JIT's first interpreted runs */

typedef long (*Fn)(void);

static inline void fence_i(void) { asm volatile("fence.i" ::: "memory"); }

/* -- Patched code ----------------------------------------------------------- */

static uint32_t patch_page[1024] __attribute__((aligned(4096)));

static void patched_code(void)
{
    section("patched code, fence.i");
    Fn f = (Fn)(uintptr_t)patch_page;
    int bad = 0;
    for (int v = 1; v <= 20; v++) {
        patch_page[0] = LI_A0(v);
        patch_page[1] = RET;
        fence_i();
        for (int i = 0; i < RUNS; i++)
            bad += f() != v;
    }
    CHECK_EQ("20 versions of li a0, v; ret, each called 40 times: wrong results", bad, 0);

    /* A jump label: the first instruction flips between a jump over the
     * rest and a nop, the rest stays. */
    patch_page[0] = J(12);
    patch_page[1] = LI_A0(7);
    patch_page[2] = RET;
    patch_page[3] = LI_A0(9);
    patch_page[4] = RET;
    fence_i();
    long before = 0, after = 0;
    for (int i = 0; i < RUNS; i++)
        before += f();
    patch_page[0] = 0x00000013u;                /* nop */
    fence_i();
    for (int i = 0; i < RUNS; i++)
        after += f();
    CHECK_EQ("jump label taken: li a0, 9", before, 9 * RUNS);
    CHECK_EQ("jump label patched to a nop: li a0, 7", after, 7 * RUNS);
}

/* -- A store into the running block's page ----------------------------------- */

static uint32_t own_page[1024] __attribute__((aligned(4096)));

/*
 * own_page: a function that stores a0 into a word of its own page (after
 * its code) and loads it back: every call's store lands on a page holding
 * its translation.
 *   auipc t0, 0; sd a0, 512(t0); ld a1, 512(t0); addi a0, a1, 1; ret
 */
static void store_to_own_page(void)
{
    section("a store into the page a block runs from");
    own_page[0] = 0x00000297u;                  /* auipc t0, 0 */
    own_page[1] = 0x20a2b023u;                  /* sd a0, 512(t0) */
    own_page[2] = 0x2002b583u;                  /* ld a1, 512(t0) */
    own_page[3] = 0x00158513u;                  /* addi a0, a1, 1 */
    own_page[4] = RET;
    fence_i();
    long (*f)(long) = (long (*)(long))(uintptr_t)own_page;
    int bad = 0;
    for (long i = 0; i < 200; i++)
        bad += f(i * 3) != i * 3 + 1;
    CHECK_EQ("200 calls: wrong results", bad, 0);
    CHECK_EQ("the word it stored", *(volatile uint64_t *)&own_page[128], 199 * 3);
    /* The code is still there and runs again after a fence.i. */
    fence_i();
    CHECK_EQ("called again", f(41), 42);
}

/* -- A code mapping changed under chained blocks ------------------------------ */

#define VA_CODE 0x40000000UL

/* Two blocks in one page, the first jumping to the second (a direct exit
 * that chains), which adds n: li a0, 0; j +64 ... addi a0, a0, n; ret. */
static void chained_code(uint32_t *page, int n)
{
    page[0] = LI_A0(0);
    page[1] = J(60);
    for (int i = 2; i < 16; i++)
        page[i] = 0x00000013u;
    page[16] = ADDI_A0(n);
    page[17] = RET;
}

static long s_call_code(long runs)
{
    long sum = 0;
    for (long i = 0; i < runs; i++)
        sum += ((Fn)VA_CODE)();
    return sum;
}

#define VA_ALIAS (VA_CODE + 0x1000)

static long s_call_both(long runs)
{
    long sum = 0;
    for (long i = 0; i < runs; i++)
        sum += ((Fn)VA_CODE)() + ((Fn)VA_ALIAS)();
    return sum;
}

static void remapped_code(void)
{
    section("a code mapping edited under chained blocks");
    chained_code((uint32_t *)test_pages[0], 1);
    chained_code((uint32_t *)test_pages[1], 2);
    fence_i();
    uint64_t *root = pt_identity(3);
    uint64_t *pte = pt_entry(root, 3, VA_CODE, 0);
    *pte = pte_leaf(A(test_pages[0]), PTE_V | PTE_R | PTE_X | PTE_A | PTE_D);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    CHECK_EQ("page A: 40 calls of li 0; j; addi 1", run_in_mode_m(PRV_S, s_call_code, RUNS), RUNS);
    *pte = pte_leaf(A(test_pages[1]), PTE_V | PTE_R | PTE_X | PTE_A | PTE_D);
    sfence_vma_addr(VA_CODE);
    CHECK_EQ("remapped to page B, sfence.vma of the page: addi 2",
             run_in_mode_m(PRV_S, s_call_code, RUNS), 2 * RUNS);
    *pte = pte_leaf(A(test_pages[0]), PTE_V | PTE_R | PTE_X | PTE_A | PTE_D);
    sfence_vma();
    CHECK_EQ("back to page A, sfence.vma of everything",
             run_in_mode_m(PRV_S, s_call_code, RUNS), RUNS);
    /* The same physical page at a second address: a chain or a cached
     * translation of one alias must not follow the other's mapping. */
    uint64_t *pte2 = pt_entry(root, 3, VA_ALIAS, 0);
    *pte2 = pte_leaf(A(test_pages[0]), PTE_V | PTE_R | PTE_X | PTE_A | PTE_D);
    sfence_vma();
    CHECK_EQ("page A at two addresses, called in turn", run_in_mode_m(PRV_S, s_call_both, RUNS),
             2 * RUNS);
    *pte = pte_leaf(A(test_pages[1]), PTE_V | PTE_R | PTE_X | PTE_A | PTE_D);
    sfence_vma_addr(VA_CODE);
    CHECK_EQ("one alias remapped to page B: 2 + 1 a turn", run_in_mode_m(PRV_S, s_call_both, RUNS),
             3 * RUNS);
    csr_write(satp, 0);
    sfence_vma();
}

/* -- A timer interrupt in a tight loop ------------------------------------------ */

static volatile uint64_t stop_flag;
static volatile uint64_t taken_at;

static int mti_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MTI))
        return 0;
    taken_at = mtime();
    set_mtimecmp(UINT64_MAX);
    stop_flag = 1;
    return 1;
}

/* Spins on a memory word only: lw, beqz (no CSR, no device access). */
static uint64_t spin_until_flag(void)
{
    uint64_t turns = 0;
    asm volatile("1: addi %0, %0, 1\n"
                 "   lw t0, 0(%1)\n"
                 "   beqz t0, 1b\n"
                 : "+r"(turns) : "r"(&stop_flag) : "t0", "memory");
    return turns;
}

static void timer_in_tight_loop(void)
{
    section("a timer interrupt in a tight loop");
    traps_reset();
    trap_hook = mti_hook;
    stop_flag = 0;
    uint64_t due = mtime() + 20000 * TICKS_PER_US / 10;     /* 2 ms */
    set_mtimecmp(due);
    csr_write(mie, MIP(IRQ_MTI));
    csr_set(mstatus, MSTATUS_MIE);
    uint64_t turns = spin_until_flag();
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, 0);
    trap_hook = 0;
    CHECK("the loop turned before the interrupt", turns > 1);
    CHECK_EQ("the machine timer interrupt came", trap_count, 1);
    /* Within 50 ms of its due time: the host's timer slack and one poll
     * interval, on a loaded machine. */
    check_range("taken within 50 ms of mtimecmp (ticks)", taken_at - due, 0, 50000 * TICKS_PER_US);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    patched_code();
    store_to_own_page();
    remapped_code();
    timer_in_tight_loop();
}
