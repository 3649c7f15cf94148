// system-mode: s
// system-args: -smp 2
// system-variant: -accel xlat,threads=1
// system-variant: -accel xlat,threads=1 -tune no-pv-rfence
// system-variant: -tune no-pv-rfence
// system-repeat: 100 -accel xlat,threads=1
// system-repeat: 50 -accel xlat,threads=2
// SBI RFENCE between two harts under Sv39 (SBI spec 2.0 chapter 8): hart 1
// keeps reading a virtual page while hart 0 points its leaf at another
// physical page and fences hart 1 (one page, a range around it, the whole
// space, by ASID); after the call returns, hart 1's next read must see the
// new page, whether it was running at the time or waiting for a host
// thread (with threads=1 it is off its thread whenever hart 0 runs: the
// paravirtual fence must be applied before it runs again). Then both harts
// fence each other at once (no deadlock), and hart 0 fences hart 1 while
// it spins with interrupts off (the wait is bounded).
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
enum { EXT_RFENCE = 0x52464e43, EXT_HSM = 0x48534d };
enum { HSM_STOPPED = 1 };

#define VA_DATA 0x40000000UL
#define ASID    5UL
#define ROUNDS  8

/* What hart 0 asks of hart 1. */
enum { CMD_READ = 1, CMD_FENCE_BACK, CMD_SPIN, CMD_STOP };

static uint64_t *root;
static volatile uint64_t cmd, cmd_seq, ack_seq, seen, spin_turns, spin_stop;

static uint64_t *pte_data;
static uint64_t page_value(int i) { return 0xabc000 + (uint64_t)i; }

/* RFENCE fid to the harts of mask (base 0). */
static SbiRet fence_harts(long mask, long fid, uint64_t start, uint64_t size, uint64_t asid)
{
    register long a0 asm("a0") = mask, a1 asm("a1") = 0;
    register long a2 asm("a2") = (long)start, a3 asm("a3") = (long)size;
    register long a4 asm("a4") = (long)asid;
    register long a6 asm("a6") = fid, a7 asm("a7") = EXT_RFENCE;
    asm volatile("ecall" : "+r"(a0), "+r"(a1) : "r"(a2), "r"(a3), "r"(a4), "r"(a6), "r"(a7)
                 : "memory");
    return (SbiRet){ a0, a1 };
}

/* Hart 1: its satp is hart 0's tree with ASID; serve commands, reading
 * the page all the while (its TLB keeps the translation). */
void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)hartid;
    csr_write(satp, opaque);
    sfence_vma();
    uint64_t done = 0;
    for (;;) {
        while (__atomic_load_n(&cmd_seq, __ATOMIC_ACQUIRE) == done)
            (void)*(volatile uint64_t *)VA_DATA;
        done = cmd_seq;
        switch (cmd) {
        case CMD_READ:
            seen = *(volatile uint64_t *)VA_DATA;
            break;
        case CMD_FENCE_BACK:      /* hart 0 fences this hart meanwhile */
            for (int i = 0; i < 200; i++) {
                SbiRet r = fence_harts(1, 1, 0, 0, 0);     /* hart 0, everything */
                if (r.error)
                    seen = 0xbad;
            }
            break;
        case CMD_SPIN:            /* interrupts off, no memory access */
            csr_clear(sstatus, MSTATUS_SIE);
            __atomic_store_n(&ack_seq, done, __ATOMIC_RELEASE);
            for (uint64_t n = 0;; n++)
                if (n % 65536 == 0 && __atomic_load_n(&spin_stop, __ATOMIC_ACQUIRE))
                    break;
            break;
        case CMD_STOP:
            __atomic_store_n(&ack_seq, done, __ATOMIC_RELEASE);
            return;               /* secondary_entry calls hart_stop */
        }
        __atomic_store_n(&ack_seq, done, __ATOMIC_RELEASE);
    }
}

static int ask(uint64_t what)
{
    cmd = what;
    uint64_t n = __atomic_add_fetch(&cmd_seq, 1, __ATOMIC_ACQ_REL);
    return WAIT_FOR(__atomic_load_n(&ack_seq, __ATOMIC_ACQUIRE) == n, 5000000);
}

/* ROUNDS times: the leaf to the other page, fenced by fence(), then what
 * hart 1 reads. How many rounds it saw the new page. */
static long remap_rounds(SbiRet (*fence)(void))
{
    long good = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int page = (r + 1) % 2;
        *pte_data = pte_leaf(A(test_pages[page]), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
        asm volatile("fence rw, rw" ::: "memory");
        SbiRet ret = fence();
        good += ret.error == 0 && ask(CMD_READ) && seen == page_value(page);
    }
    return good;
}

static SbiRet fence_page(void) { return fence_harts(2, 1, VA_DATA, 4096, 0); }
static SbiRet fence_range(void) { return fence_harts(2, 1, VA_DATA - 8192, 5 * 4096, 0); }
static SbiRet fence_all(void) { return fence_harts(2, 1, 0, UINT64_MAX, 0); }
static SbiRet fence_asid_page(void) { return fence_harts(2, 2, VA_DATA, 4096, ASID); }
static SbiRet fence_asid_all(void) { return fence_harts(2, 2, 0, 0, ASID); }

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    for (int i = 0; i < 2; i++)
        *(volatile uint64_t *)test_pages[i] = page_value(i);
    root = pt_alloc();
    pt_map(root, 3, RAM_BASE, RAM_BASE, PTE_RWX_AD, 2);
    pte_data = pt_entry(root, 3, VA_DATA, 0);
    *pte_data = pte_leaf(A(test_pages[0]), PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
    uint64_t satp = satp_of(SATP_SV39, root) | ASID << 44;

    section("hart 1 reads a page hart 0 remaps");
    SbiRet r = sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), (long)satp);
    CHECK_EQ("hart_start(1)", r.error, 0);
    CHECK("hart 1 reads the first page", ask(CMD_READ) && seen == page_value(0));
    CHECK_EQ("remote_sfence_vma of the page: hart 1 sees each new page",
             remap_rounds(fence_page), ROUNDS);
    CHECK_EQ("of a range around it", remap_rounds(fence_range), ROUNDS);
    CHECK_EQ("of everything (size 2^64 - 1)", remap_rounds(fence_all), ROUNDS);
    CHECK_EQ("remote_sfence_vma_asid of the page, hart 1's ASID", remap_rounds(fence_asid_page),
             ROUNDS);
    CHECK_EQ("remote_sfence_vma_asid of everything (start and size 0)",
             remap_rounds(fence_asid_all), ROUNDS);

    section("fences both ways at once");
    cmd = CMD_FENCE_BACK;
    uint64_t n = __atomic_add_fetch(&cmd_seq, 1, __ATOMIC_ACQ_REL);
    long failed = 0;
    for (int i = 0; i < 200; i++)
        failed += fence_all().error != 0;
    CHECK_EQ("hart 0's 200 fences of hart 1 returned", failed, 0);
    CHECK("and hart 1's 200 of hart 0",
          WAIT_FOR(__atomic_load_n(&ack_seq, __ATOMIC_ACQUIRE) == n, 5000000) && seen != 0xbad);

    section("a fence of a hart spinning with interrupts off");
    cmd = CMD_SPIN;
    n = __atomic_add_fetch(&cmd_seq, 1, __ATOMIC_ACQ_REL);
    CHECK("hart 1 spins", WAIT_FOR(__atomic_load_n(&ack_seq, __ATOMIC_ACQUIRE) == n, 5000000));
    uint64_t t0 = rdtime();
    failed = 0;
    for (int i = 0; i < 20; i++)
        failed += fence_all().error != 0;
    CHECK_EQ("20 remote_sfence_vma returned", failed, 0);
    check_range("within 2 s (ticks)", rdtime() - t0, 0, 2000000 * TICKS_PER_US);
    __atomic_store_n(&spin_stop, 1, __ATOMIC_RELEASE);
    CHECK("hart 1 stops", ask(CMD_STOP) &&
          WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));
}
