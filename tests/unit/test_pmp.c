/*
 * Physical memory protection (src/riscv/pmp.c) on its own: regions from
 * each address mode, the matching rules of pmp_perms and, what no guest
 * can observe directly, its page_wide answer (the one a TLB may cache):
 * true only where every access in the 4 KiB page gets the same verdict.
 * tests/system/pmp.c checks the same rules from a guest.
 */
#include "check.h"

#include "riscv/pmp.h"
#include "riscv/priv.h"

#define CFG0 0x3a0
#define CFG2 0x3a2
#define ADDR(i) (0x3b0 + (i))
#define TOR   (1 << 3)
#define NA4   (2 << 3)
#define NAPOT (3 << 3)
#define LOCK  0x80

static PmpState s;

static void set(unsigned i, uint8_t cfg, uint64_t addr)
{
    uint64_t c;
    unsigned csr = i < 8 ? CFG0 : CFG2;
    pmp_csr_read(&s, csr, &c);
    c &= ~(0xffULL << (8 * (i % 8)));
    pmp_csr_write(&s, csr, c);
    pmp_csr_write(&s, ADDR(i), addr);
    pmp_csr_write(&s, csr, c | (uint64_t)cfg << (8 * (i % 8)));
}

static uint64_t napot(uint64_t base, uint64_t size) { return base >> 2 | (size / 8 - 1); }

static unsigned perms(int priv, uint64_t pa, uint64_t size, bool *wide)
{
    return pmp_perms(&s, priv, pa, size, wide);
}

static void test_empty(void)
{
    bool wide = false;
    s = (PmpState){ 0 };
    CHECK_EQ(perms(PRV_M, 0x80000000, 8, &wide), PMP_RWX);
    CHECK(wide);
    CHECK_EQ(perms(PRV_S, 0x80000000, 8, &wide), 0);
    CHECK(wide);
    CHECK(!pmp_check(&s, PRV_U, 0x1000, 1, MEM_LOAD));
    pmp_open_all(&s);
    CHECK_EQ(perms(PRV_U, 0xfffffffff000ULL, 8, &wide), PMP_RWX);
    CHECK(wide);
}

static void test_page_wide(void)
{
    bool wide;
    s = (PmpState){ 0 };
    set(0, NA4, (0x80001008ULL) >> 2);                          /* 4 bytes, no access */
    set(1, NAPOT | PMP_R | PMP_W, napot(0x80000000, 0x10000));  /* 64 KiB */
    CHECK_EQ(perms(PRV_S, 0x80001000, 8, &wide), PMP_R | PMP_W);
    CHECK(!wide);                                               /* entry 0 is in the page */
    CHECK_EQ(perms(PRV_S, 0x80001008, 4, &wide), 0);
    CHECK(!wide);
    CHECK_EQ(perms(PRV_S, 0x80001008, 8, &wide), 0);            /* partly in entry 0 */
    CHECK_EQ(perms(PRV_M, 0x80001008, 8, &wide), 0);            /* in M too */
    CHECK_EQ(perms(PRV_M, 0x80001008, 4, &wide), PMP_RWX);      /* unlocked */
    CHECK_EQ(perms(PRV_S, 0x80002000, 8, &wide), PMP_R | PMP_W);
    CHECK(wide);                                                /* all of it in entry 1 */
    CHECK_EQ(perms(PRV_S, 0x8000f000, 8, &wide), PMP_R | PMP_W);
    CHECK(wide);
    CHECK_EQ(perms(PRV_S, 0x80010000, 8, &wide), 0);            /* past it: no match */
    CHECK(wide);
    CHECK(pmp_check(&s, PRV_S, 0x80002000, 8, MEM_STORE));
    CHECK(!pmp_check(&s, PRV_S, 0x80002000, 4, MEM_FETCH));
    CHECK(!pmp_check(&s, PRV_S, 0x80001008, 4, MEM_LOAD));

    /* A region ending inside a page: not page-wide on either side. */
    s = (PmpState){ 0 };
    set(0, 0, 0);                                               /* TOR bottom: 0 */
    set(1, TOR | PMP_R, 0x80000800ULL >> 2);                    /* [0, 0x8000_0800) */
    CHECK_EQ(perms(PRV_S, 0x80000000, 8, &wide), PMP_R);
    CHECK(!wide);
    CHECK_EQ(perms(PRV_S, 0x80000800, 8, &wide), 0);
    CHECK(!wide);
    CHECK_EQ(perms(PRV_S, 0x7ffff000, 8, &wide), PMP_R);
    CHECK(wide);
}

static void test_warl(void)
{
    uint64_t v;
    s = (PmpState){ 0 };
    set(2, NAPOT | PMP_R, napot(0x80000000, 4096));
    pmp_csr_write(&s, CFG0, (uint64_t)(NAPOT | PMP_W) << 16);   /* R=0 W=1: reserved */
    pmp_csr_read(&s, CFG0, &v);
    CHECK_EQ(v, (uint64_t)(NAPOT | PMP_R) << 16);
    CHECK(!pmp_csr_read(&s, 0x3a1, &v));                        /* pmpcfg1: RV32 only */
    CHECK(pmp_csr_read(&s, 0x3ae, &v));                         /* pmpcfg14: reads 0 */
    CHECK_EQ(v, 0);
    CHECK(!pmp_csr_write(&s, ADDR(40), 5));
    pmp_csr_write(&s, ADDR(3), ~0ULL);
    pmp_csr_read(&s, ADDR(3), &v);
    CHECK_EQ(v, (1ULL << 54) - 1);

    /* Locks: the entry, and a locked TOR entry's bottom. */
    set(5, LOCK | TOR | PMP_R, 0x2000 >> 2);
    set(4, 0, 0x1000 >> 2);                                     /* cfg 4 writable; addr 4 not */
    pmp_csr_read(&s, ADDR(4), &v);
    CHECK_EQ(v, 0);
    CHECK(!pmp_csr_write(&s, ADDR(5), 0x3000 >> 2));
    pmp_csr_write(&s, CFG0, 0);
    pmp_csr_read(&s, CFG0, &v);
    CHECK_EQ(v, (uint64_t)(LOCK | TOR | PMP_R) << 40);
    bool wide;
    CHECK_EQ(perms(PRV_M, 0x1000, 8, &wide), PMP_R);            /* [0, 0x2000): binds M */
    CHECK(wide);
}

int main(void)
{
    test_empty();
    test_page_wide();
    test_warl();
    if (!failures)
        printf("test_pmp: ok\n");
    return failures != 0;
}
