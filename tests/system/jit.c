// What translated code must get right beyond the instructions themselves
// (xlat-system runs guest code through its JIT; under QEMU or --interp
// these pass the same): code patched and then fence.i (as Linux's
// alternatives and jump labels do), run many times before and after so
// that it is translated; a store into the page a block runs from; a page
// table entry of code edited under a chained pair of blocks, then
// sfence.vma of the page; and a machine timer interrupt that must reach a
// tight loop that reads only memory (no CSR, no device), within a bound;
// loads and stores through one base register (which xlat-system lets share
// one TLB probe) across two pages that are not physically contiguous, into
// an unmapped page and into a read-only one; and a 4-byte instruction that
// crosses from one virtual page into the next, run many times while the
// next page is remapped (only that page fenced), rewritten (fence.i) and
// unmapped (the fetch page fault names its second half); code in a 2 MiB
// page whose leaf is changed and fenced at another 4 KiB page of it; and
// a device mapped at virtual page 0, read and written in a loop.
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

/* -- An instruction across two pages ------------------------------------------------------ */

/* The function at VA_CROSS + 4094: addi a0, zero, n, whose upper half (the
 * immediate) is the first halfword of the next virtual page, then ret. The
 * next page is one of three physical pages, each with its own n. */
#define VA_CROSS 0x40200000UL
#define CROSS_FN (VA_CROSS + 4096 - 2)

static void cross_half(int page, int n)
{
    volatile uint16_t *h = (volatile uint16_t *)test_pages[page];
    h[0] = (uint16_t)(LI_A0(n) >> 16);
    h[1] = (uint16_t)RET;
    h[2] = (uint16_t)(RET >> 16);
}

static long s_call_cross(long runs)
{
    long sum = 0;
    for (long i = 0; i < runs; i++)
        sum += ((Fn)CROSS_FN)();
    return sum;
}

static long s_fetch_cross(long unused)
{
    (void)unused;
    return (long)probe_fetch(CROSS_FN);
}

static void crossing_insn(void)
{
    section("an instruction across two virtual pages");
    const uint64_t X = PTE_V | PTE_R | PTE_X | PTE_A | PTE_D;
    ((volatile uint16_t *)test_pages[2])[2047] = (uint16_t)LI_A0(0);
    cross_half(3, 1);
    cross_half(4, 2);
    fence_i();
    uint64_t *root = pt_identity(3);
    pt_map(root, 3, VA_CROSS, A(test_pages[2]), X, 0);
    uint64_t *next = pt_entry(root, 3, VA_CROSS + 4096, 0);
    *next = pte_leaf(A(test_pages[3]), X);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    CHECK_EQ("second half on page 1: 40 calls of addi 1", run_in_mode_m(PRV_S, s_call_cross, RUNS),
             RUNS);
    *next = pte_leaf(A(test_pages[4]), X);
    sfence_vma_addr(VA_CROSS + 4096);
    CHECK_EQ("second page remapped, only it fenced: addi 2",
             run_in_mode_m(PRV_S, s_call_cross, RUNS), 2 * RUNS);
    cross_half(4, 3);
    fence_i();
    CHECK_EQ("second half rewritten, fence.i: addi 3", run_in_mode_m(PRV_S, s_call_cross, RUNS),
             3 * RUNS);
    *next = 0;
    sfence_vma_addr(VA_CROSS + 4096);
    traps_reset();
    run_in_mode_m(PRV_S, s_fetch_cross, 0);
    expect_trap("second page unmapped: fetch page fault at its first byte", PRV_M,
                EXC_FETCH_PAGE, CROSS_FN, VA_CROSS + 4096);
    csr_write(satp, 0);
    sfence_vma();
}

/* -- Code in a superpage ---------------------------------------------------------------- */

/* A 2 MiB leaf at VA_SUPER, to one of two 2 MiB pieces of RAM the image
 * does not use, each with li a0, n; ret at SUPER_FN's offset. */
#define VA_SUPER 0x40600000UL
#define SUPER_FN (VA_SUPER + 0x5000)
#define RAM_FREE 0x80200000UL
#define RAM_FREE2 0x80400000UL

static long s_call_super(long runs)
{
    long sum = 0;
    for (long i = 0; i < runs; i++)
        sum += ((Fn)SUPER_FN)();
    return sum;
}

static void superpage_code(void)
{
    section("code in a 2 MiB page, its leaf changed");
    const uint64_t X = PTE_V | PTE_R | PTE_X | PTE_A | PTE_D;
    for (int n = 1; n <= 2; n++) {
        volatile uint32_t *code = (volatile uint32_t *)((n == 1 ? RAM_FREE : RAM_FREE2) + 0x5000);
        code[0] = LI_A0(n);
        code[1] = RET;
    }
    fence_i();
    uint64_t *root = pt_identity(3);
    pt_map(root, 3, VA_SUPER, RAM_FREE, X, 1);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    CHECK_EQ("first piece: 40 calls of li 1", run_in_mode_m(PRV_S, s_call_super, RUNS), RUNS);
    *pt_entry(root, 3, VA_SUPER, 1) = pte_leaf(RAM_FREE2, X);
    sfence_vma_addr(VA_SUPER + 0x1000);
    CHECK_EQ("leaf to the second, sfence.vma of another 4 KiB page of it: li 2",
             run_in_mode_m(PRV_S, s_call_super, RUNS), 2 * RUNS);
    csr_write(satp, 0);
    sfence_vma();
}

/* -- Loads and stores that share a TLB probe ---------------------------------------- */

/* xlat-system lets accesses through one base register in a block share one
 * TLB probe (the whole range must lie in one page). Two virtual pages that
 * are not physically contiguous: a group that straddles them must reach
 * each byte through its own page, a group running into an unmapped or
 * read-only page must fault at the exact instruction with the earlier
 * ones retired. */
#define VA_GROUP 0x40100000UL
#define GROUP_BASE (VA_GROUP + 4096 - 16)     /* base + 0, 8 in page 0; + 16 in page 1 */

uint64_t grp_ld3(uint64_t base);              /* a0 = t0 + 2 t1 + 4 t2 (0 for a faulting load) */
uint64_t grp_ldsd(uint64_t base);             /* ld t0, 0; sd t0, 8; ld t1, 16: t0 + 2 t1 */
void grp_sd3(uint64_t base, uint64_t v);      /* sd v, v + 1, v + 2 at 0, 8, 16 */
extern const uint32_t grp_ld3_third, grp_ldsd_store;
asm(".text\n.globl grp_ld3\ngrp_ld3:\n"
    "  li t0, 0\n  li t1, 0\n  li t2, 0\n"
    "  ld t0, 0(a0)\n  ld t1, 8(a0)\n"
    ".globl grp_ld3_third\ngrp_ld3_third:\n"
    "  ld t2, 16(a0)\n"
    "  slli t1, t1, 1\n  slli t2, t2, 2\n  add a0, t0, t1\n  add a0, a0, t2\n  ret\n"
    ".globl grp_ldsd\ngrp_ldsd:\n"
    "  li t0, 0\n  li t1, 0\n  ld t0, 0(a0)\n"
    ".globl grp_ldsd_store\ngrp_ldsd_store:\n"
    "  sd t0, 8(a0)\n  ld t1, 16(a0)\n"
    "  slli t1, t1, 1\n  add a0, t0, t1\n  ret\n"
    ".globl grp_sd3\ngrp_sd3:\n"
    "  sd a1, 0(a0)\n  addi a1, a1, 1\n  sd a1, 8(a0)\n  addi a1, a1, 1\n  sd a1, 16(a0)\n"
    "  ret\n");

static uint64_t *group_page(int i) { return (uint64_t *)test_pages[i]; }

/* Page 0 of the pair is test_pages[2], page 1 test_pages[5]; test_pages[3]
 * (what follows page 0 in physical memory) holds values no access may see. */
static void group_fill(void)
{
    for (int i = 0; i < 512; i++) {
        group_page(2)[i] = 0x1000 + (uint64_t)i;
        group_page(3)[i] = 0xdead0000 + (uint64_t)i;
        group_page(5)[i] = 0x5000 + (uint64_t)i;
    }
}

/* S-mode: RUNS calls of each; how many gave the right answer (and, for the
 * faulting ones, trapped once at the right place), as bits of a mask. */
static long s_groups(long unused)
{
    (void)unused;
    long ok = 0, n;
    uint64_t want = 0x1000 + 510 + 2 * (0x1000 + 511) + 4 * 0x5000;
    for (n = 0; n < RUNS && grp_ld3(GROUP_BASE) == want; n++) {}
    ok |= (n == RUNS) << 0;
    for (n = 0; n < RUNS && grp_ld3(VA_GROUP + 64) == 0x1008 + 2 * 0x1009 + 4 * 0x100a; n++) {}
    ok |= (n == RUNS) << 1;
    for (n = 0; n < RUNS; n++) {
        grp_sd3(GROUP_BASE, 100 * (uint64_t)n);
        if (group_page(2)[510] != 100 * (uint64_t)n || group_page(2)[511] != 100 * (uint64_t)n + 1 ||
            group_page(5)[0] != 100 * (uint64_t)n + 2 || group_page(3)[0] != 0xdead0000)
            break;
    }
    ok |= (n == RUNS) << 2;
    return ok;
}

/* S-mode, page 1 unmapped: the third load faults each time. */
static long s_group_fault(long unused)
{
    (void)unused;
    long n, good = 0;
    uint64_t want = 0x1000 + 510 + 2 * (0x1000 + 511);
    for (n = 0; n < RUNS; n++) {
        traps_reset();
        uint64_t v = grp_ld3(GROUP_BASE);
        good += v == want && trap_count == 1 && trap_log[0].cause == EXC_LOAD_PAGE &&
                trap_log[0].epc == A(&grp_ld3_third) && trap_log[0].tval == VA_GROUP + 4096;
    }
    return good;
}

/* S-mode, page 0 read-only: the store between two loads faults each time. */
static long s_group_readonly(long unused)
{
    (void)unused;
    long n, good = 0;
    uint64_t want = 0x1000 + 2 * 0x1002;
    for (n = 0; n < RUNS; n++) {
        traps_reset();
        uint64_t v = grp_ldsd(VA_GROUP);
        good += v == want && trap_count == 1 && trap_log[0].cause == EXC_STORE_PAGE &&
                trap_log[0].epc == A(&grp_ldsd_store) && trap_log[0].tval == VA_GROUP + 8 &&
                group_page(2)[1] == 0x1001;
    }
    return good;
}

static void shared_probes(void)
{
    section("loads and stores that share a TLB probe");
    group_fill();
    uint64_t *root = pt_identity(3);
    uint64_t *pte0 = pt_entry(root, 3, VA_GROUP, 0), *pte1 = pt_entry(root, 3, VA_GROUP + 4096, 0);
    *pte0 = pte_leaf(A(test_pages[2]), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    *pte1 = pte_leaf(A(test_pages[5]), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    uint64_t saved_medeleg = csr_read(medeleg);
    csr_write(medeleg, 1UL << EXC_LOAD_PAGE | 1UL << EXC_STORE_PAGE);
    long ok = run_in_mode_m(PRV_S, s_groups, 0);
    CHECK("three loads straddling two pages see each page's own bytes", ok & 1);
    CHECK("three loads inside one page", ok & 2);
    CHECK("three stores straddling two pages reach each page", ok & 4);
    *pte1 = 0;
    sfence_vma_addr(VA_GROUP + 4096);
    group_fill();
    CHECK_EQ("the page after unmapped: the third load faults there, the first two retired",
             run_in_mode_m(PRV_S, s_group_fault, 0), RUNS);
    *pte0 = pte_leaf(A(test_pages[2]), PTE_V | PTE_R | PTE_A | PTE_D);
    sfence_vma_addr(VA_GROUP);
    CHECK_EQ("a read-only page: the store between two loads faults, the loads retire",
             run_in_mode_m(PRV_S, s_group_readonly, 0), RUNS);
    csr_write(medeleg, saved_medeleg);
    csr_write(satp, 0);
    sfence_vma();
}

/* -- A device at virtual page 0 ------------------------------------------------ */

/* S-mode, the UART at VA 0: its scratch register written and read back,
 * each turn a new value; how many turns saw their own value and an idle
 * transmitter. Page 0's tag is the flags alone, so a miss path that tests
 * "flagged" by xor-ing the tag into the page must not take it twice. */
static long s_uart_at_zero(long turns)
{
    volatile uint8_t *uart;
    asm("li %0, 0" : "=r"(uart));   /* through a register: x0-based accesses are not probed */
    long good = 0;
    for (long n = 0; n < turns; n++) {
        uart[7] = (uint8_t)n;
        good += uart[7] == (uint8_t)n && (uart[5] & 0x60) == 0x60;
    }
    return good;
}

static void device_at_zero(void)
{
    section("a device mapped at virtual page 0");
    uint64_t *root = pt_alloc();
    pt_map(root, 3, RAM_BASE, RAM_BASE, PTE_RWX_AD, 2);
    pt_map(root, 3, 0, UART_BASE, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 0);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    long turns = 20 * RUNS;
    CHECK_EQ("the UART's scratch and status registers through VA 0, translated",
             run_in_mode_m(PRV_S, s_uart_at_zero, turns), turns);
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

/* One try: the loop's turns before the timer, due 2 ms from now, stopped it. */
static uint64_t spin_into_timer(uint64_t *due)
{
    traps_reset();
    trap_hook = mti_hook;
    stop_flag = 0;
    *due = mtime() + 20000 * TICKS_PER_US / 10;     /* 2 ms */
    set_mtimecmp(*due);
    csr_write(mie, MIP(IRQ_MTI));
    csr_set(mstatus, MSTATUS_MIE);
    uint64_t turns = spin_until_flag();
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, 0);
    trap_hook = 0;
    return turns;
}

static void timer_in_tight_loop(void)
{
    section("a timer interrupt in a tight loop");
    /* A loaded host may hold the hart's thread past the due time before
     * the loop starts (the interrupt then comes first, which is right but
     * shows nothing): try again, a few times. */
    uint64_t due, turns = 0;
    for (int i = 0; i < 5 && turns <= 1; i++)
        turns = spin_into_timer(&due);
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
    shared_probes();
    crossing_insn();
    superpage_code();
    device_at_zero();
    timer_in_tight_loop();
}
