/*
 * Unit test of system mode's softmmu TLBs (src/system/tlb.c) on one hart in
 * M-mode (physical addresses): the seed's sizing policy (double as soon as
 * 70 % of the entries are used, in place; shrink to fit below 30 % of the
 * window's most-used entries at a full flush, only once the 100 ms window
 * is over; floor 2^6; the mask translated code reads follows), --tune
 * tlb-bits and no-tlb-resize, the victim TLB,
 * a one-page flush, and code watches on write tags. Then in S-mode over
 * Sv39 tables built here, the address spaces: satp switches between two
 * ASIDs never return the other's translation and keep each one's entries;
 * an ASID reused with another root misses; sfence.vma by ASID, by page and
 * ASID, and by page for every ASID (the spaces not current take it when
 * they are, or a flush if they missed too many); the least recently used space goes
 * first; a code watch reaches a space that was not current; a full space
 * grows in place; global entries (a new space starts with
 * the current one's, a fence by ASID keeps them, code_global reports
 * them); and -tune no-asid-tlb.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "exec/settings.h"
#include "riscv/pmp.h"
#include "riscv/priv.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/sys_mem.h"
#include "system/tlb.h"
#include "check.h"

#define RAM_SIZE (64ULL << 20)
#define PAGE(k) (VIRT_RAM_BASE + (uint64_t)(k) * 4096)

static Hart *h;

static SysTlb *mtlb(void) { return &h->tlbs.m; }

/* Loads from n distinct pages (distinct entries while n <= the size). */
static void touch(unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        TlbHit hit;
        MemFault f;
        CHECK(tlb_lookup(&h->cpu, PAGE(k), 8, MEM_LOAD, &hit, &f));
    }
}

static unsigned bits_after(unsigned n)
{
    touch(n);
    tlb_flush(&h->cpu, true, 0);
    return mtlb()->bits;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void sizing(void)
{
    CHECK_EQ(mtlb()->bits, 8);
    CHECK_EQ(h->cpu.tlb[TLB_IDX_M].mask, 255ULL << TLB_ENTRY_BITS);
    CHECK_EQ(bits_after(170), 8);              /* 66 %: stays */
    touch(200);                                /* 78 %: doubles at once, */
    CHECK_EQ(mtlb()->bits, 9);
    CHECK_EQ(h->cpu.tlb[TLB_IDX_M].mask, 511ULL << TLB_ENTRY_BITS);
    uint64_t walks = mtlb()->fills;
    touch(200);                                /* keeping its entries */
    CHECK_EQ(mtlb()->fills, walks);
    tlb_flush(&h->cpu, true, 0);
    CHECK_EQ(mtlb()->bits, 9);
    CHECK_EQ(bits_after(400), 10);             /* 400 fills: doubles at the 359th */
    CHECK_EQ(bits_after(10), 10);              /* under 30 %, but the window goes on */
    sleep_ms(120);
    CHECK_EQ(bits_after(10), 10);              /* window over: 400 since the resize (39 %) */
    sleep_ms(120);
    CHECK_EQ(bits_after(10), 6);               /* and the next: fit 10, floor 2^6 */
    CHECK_EQ(h->cpu.tlb[TLB_IDX_M].mask, 63ULL << TLB_ENTRY_BITS);
    CHECK_EQ(mtlb()->resizes, 3);

    tune.tlb_resize = false;
    CHECK_EQ(bits_after(60), 6);               /* no resize: stays */
    tune.tlb_resize = true;
}

static void victims_and_flushes(void)
{
    tlb_flush(&h->cpu, true, 0);
    unsigned size = 1u << mtlb()->bits;
    TlbHit hit;
    MemFault f;
    CHECK(tlb_lookup(&h->cpu, PAGE(3), 8, MEM_LOAD, &hit, &f));
    CHECK(tlb_lookup(&h->cpu, PAGE(3 + size), 8, MEM_LOAD, &hit, &f));  /* same entry */
    uint64_t walks = mtlb()->fills, victims = mtlb()->victim_hits;
    CHECK(tlb_lookup(&h->cpu, PAGE(3), 8, MEM_LOAD, &hit, &f));
    CHECK_EQ(mtlb()->victim_hits, victims + 1);             /* from the victims, */
    CHECK_EQ(mtlb()->fills, walks);                         /* no walk */
    CHECK_EQ(hit.pa, PAGE(3));
    CHECK(hit.host == machine.ram + 3 * 4096);

    /* A one-page flush drops that page, in the table or among the
     * victims (PAGE(3 + size) is a victim now), and nothing else. */
    CHECK(tlb_lookup(&h->cpu, PAGE(5), 8, MEM_LOAD, &hit, &f));
    walks = mtlb()->fills;
    tlb_flush(&h->cpu, false, PAGE(3));
    tlb_flush(&h->cpu, false, PAGE(3 + size));
    CHECK(tlb_lookup(&h->cpu, PAGE(5), 8, MEM_LOAD, &hit, &f));
    CHECK_EQ(mtlb()->fills, walks);
    CHECK(tlb_lookup(&h->cpu, PAGE(3), 8, MEM_LOAD, &hit, &f));
    CHECK_EQ(mtlb()->fills, walks + 1);
    CHECK(tlb_lookup(&h->cpu, PAGE(3 + size), 8, MEM_LOAD, &hit, &f));
    CHECK_EQ(mtlb()->fills, walks + 2);
}

static void code_watches(void)
{
    TlbHit hit;
    MemFault f;
    uint64_t page = PAGE(9) >> 12;
    CHECK(tlb_lookup(&h->cpu, PAGE(9), 8, MEM_STORE, &hit, &f));
    CHECK(!hit.code);
    tlb_code_watch(page);                      /* the filled entry learns it */
    CHECK(tlb_lookup(&h->cpu, PAGE(9) + 8, 8, MEM_STORE, &hit, &f));
    CHECK(hit.code);
    CHECK(tlb_lookup(&h->cpu, PAGE(9), 8, MEM_LOAD, &hit, &f));
    CHECK(!hit.code);                          /* loads are not stores to code */
    CHECK(tlb_code_unwatch(page, false));
    CHECK(!tlb_code_unwatch(page, false));
    CHECK(tlb_lookup(&h->cpu, PAGE(9), 8, MEM_STORE, &hit, &f));
    CHECK(!hit.code);
    tlb_dma_written(PAGE(9), 4096);            /* no watch: nothing to report */
}

/* -- Address spaces (S-mode, Sv39) ---------------------------------------------------- */

#define PT_BASE  PAGE(1024)             /* page-table pages from here */
#define VA(k)    (0x40000000ULL + (uint64_t)(k) * 4096)
#define ASID(a)  ((uint64_t)(a) << 44)
#define SV39     (8ULL << 60)
#define PTE_LEAF 0xcfULL                /* V R W X A D */
#define PTE_G    0x20ULL

static unsigned pt_next;

static uint64_t *ram_u64(uint64_t pa) { return (uint64_t *)(machine.ram + (pa - VIRT_RAM_BASE)); }

static uint64_t pt_alloc(void)
{
    uint64_t pa = PT_BASE + (uint64_t)pt_next++ * 4096;
    memset(ram_u64(pa), 0, 4096);
    return pa;
}

/* Map va -> pa (4 KiB, leaf flags) under root, making the tables on the way. */
static void map_with(uint64_t root, uint64_t va, uint64_t pa, uint64_t flags)
{
    uint64_t table = root;
    for (int level = 2; level > 0; level--) {
        uint64_t *e = ram_u64(table + ((va >> (12 + 9 * level)) & 511) * 8);
        if (!(*e & 1))
            *e = (pt_alloc() >> 12) << 10 | 1;
        table = (*e >> 10) << 12;
    }
    *ram_u64(table + ((va >> 12) & 511) * 8) = (pa >> 12) << 10 | flags;
}

static void map(uint64_t root, uint64_t va, uint64_t pa) { map_with(root, va, pa, PTE_LEAF); }

/* A root mapping VA(k) to PAGE(first + k), k < n. */
static uint64_t space_root(unsigned first, unsigned n)
{
    uint64_t root = pt_alloc();
    for (unsigned k = 0; k < n; k++)
        map(root, VA(k), PAGE(first + k));
    return root;
}

static void set_satp(uint64_t root, unsigned asid)
{
    uint64_t v = SV39 | ASID(asid) | root >> 12;
    CHECK(priv_debug_csr(&h->cpu, 0x180, true, &v));
}

/* The physical address a load at va reaches now (0: a fault). */
static uint64_t pa_of(uint64_t va)
{
    TlbHit hit;
    MemFault f;
    return tlb_lookup(&h->cpu, va, 8, MEM_LOAD, &hit, &f) ? hit.pa : 0;
}

/* Walks of the S view, over every space. */
static uint64_t s_walks(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < TLB_SPACES; i++)
        n += h->tlbs.space[i].view[TLB_IDX_S].fills;
    return n;
}

static bool probe_sees_current(void)
{
    return h->cpu.tlb[TLB_IDX_S].table == h->tlbs.cur->view[TLB_IDX_S].table &&
           h->cpu.tlb[TLB_IDX_U].table == h->tlbs.cur->view[TLB_IDX_U].table;
}

static void enter_s_mode(void)
{
    pmp_open_all(&h->cpu.priv.pmp);
    CHECK(priv_debug_set_mode(&h->cpu, PRV_S));
    CHECK_EQ(TB_FLAGS_DATA_TLB(h->cpu.tb_flags), TLB_IDX_S);
}

static void asid_switches(uint64_t ra, uint64_t rb)
{
    HartTlbs *ts = &h->tlbs;
    set_satp(ra, 1);
    CHECK_EQ(pa_of(VA(0)), PAGE(100));
    CHECK_EQ(pa_of(VA(1)), PAGE(101));
    TlbSpace *a = ts->cur;
    set_satp(rb, 2);
    CHECK(ts->cur != a);
    CHECK(probe_sees_current());
    CHECK_EQ(pa_of(VA(0)), PAGE(200));                 /* never A's */
    CHECK_EQ(pa_of(VA(1)), PAGE(201));
    uint64_t walks = s_walks(), kept = ts->satp_kept;
    for (int i = 0; i < 10; i++) {
        set_satp(ra, 1);
        CHECK_EQ(pa_of(VA(0)), PAGE(100));
        CHECK_EQ(pa_of(VA(1)), PAGE(101));
        set_satp(rb, 2);
        CHECK_EQ(pa_of(VA(0)), PAGE(200));
    }
    CHECK_EQ(s_walks(), walks);                        /* each kept its entries */
    CHECK_EQ(ts->satp_kept, kept + 20);
    CHECK(probe_sees_current());

    /* ASID 1 again, with another root: a space of its own, no A entry. */
    uint64_t rc = space_root(300, 2), news = ts->satp_new;
    set_satp(rc, 1);
    CHECK_EQ(ts->satp_new, news + 1);
    CHECK(ts->cur != a);
    CHECK_EQ(pa_of(VA(0)), PAGE(300));
    CHECK_EQ(s_walks(), walks + 1);
}

static void asid_fences(uint64_t ra, uint64_t rb)
{
    /* sfence.vma x0, ASID 1 from B: A walks again, B does not. */
    set_satp(ra, 1);
    CHECK_EQ(pa_of(VA(0)), PAGE(100));
    set_satp(rb, 2);
    CHECK_EQ(pa_of(VA(0)), PAGE(200));
    map(ra, VA(0), PAGE(110));                         /* A's PTE changes */
    CHECK_EQ(priv_sfence_vma(&h->cpu, 0, 1, false, true), PRIV_STOP);
    uint64_t walks = s_walks();
    CHECK_EQ(pa_of(VA(0)), PAGE(200));
    CHECK_EQ(s_walks(), walks);                        /* B kept its entries */
    set_satp(ra, 1);
    CHECK_EQ(pa_of(VA(0)), PAGE(110));
    CHECK_EQ(pa_of(VA(1)), PAGE(101));
    CHECK_EQ(s_walks(), walks + 2);                    /* A's all went */

    /* sfence.vma VA(0), ASID 1 from B: that page of A only. */
    map(ra, VA(0), PAGE(111));
    set_satp(rb, 2);
    CHECK_EQ(priv_sfence_vma(&h->cpu, VA(0), 1, true, true), PRIV_STOP);
    set_satp(ra, 1);
    walks = s_walks();
    CHECK_EQ(pa_of(VA(1)), PAGE(101));
    CHECK_EQ(s_walks(), walks);
    CHECK_EQ(pa_of(VA(0)), PAGE(111));
    CHECK_EQ(s_walks(), walks + 1);

    /* sfence.vma VA(1) (rs2 = x0) in A: that page of every space. */
    map(ra, VA(1), PAGE(112));
    map(rb, VA(1), PAGE(212));
    set_satp(rb, 2);
    CHECK_EQ(pa_of(VA(1)), PAGE(201));                 /* cached, stale: allowed */
    set_satp(ra, 1);
    CHECK_EQ(priv_sfence_vma(&h->cpu, VA(1), 0, true, false), PRIV_STOP);
    CHECK_EQ(pa_of(VA(1)), PAGE(112));
    set_satp(rb, 2);
    CHECK_EQ(pa_of(VA(1)), PAGE(212));
    walks = s_walks();
    CHECK_EQ(pa_of(VA(0)), PAGE(200));                 /* B's other page stayed */
    CHECK_EQ(s_walks(), walks);

    /* More page fences than B can catch up on while A is current: B is
     * flushed whole when it is current again. */
    set_satp(ra, 1);
    for (unsigned k = 0; k <= TLB_FENCE_LOG; k++)
        CHECK_EQ(priv_sfence_vma(&h->cpu, VA(1000 + k), 0, true, false), PRIV_STOP);
    set_satp(rb, 2);
    walks = s_walks();
    CHECK_EQ(pa_of(VA(0)), PAGE(200));
    CHECK_EQ(s_walks(), walks + 1);

    /* sfence.vma x0, x0: every space (the others are given up). */
    CHECK_EQ(priv_sfence_vma(&h->cpu, 0, 0, false, false), PRIV_STOP);
    uint64_t news = h->tlbs.satp_new;
    set_satp(ra, 1);
    CHECK_EQ(h->tlbs.satp_new, news + 1);
    walks = s_walks();
    CHECK_EQ(pa_of(VA(0)), PAGE(111));
    CHECK_EQ(s_walks(), walks + 1);
}

/* More address spaces than kept: the least recently used goes. */
static void asid_lru(void)
{
    HartTlbs *ts = &h->tlbs;
    uint64_t roots[TLB_SPACES + 1];
    for (unsigned i = 0; i <= TLB_SPACES; i++) {
        roots[i] = space_root(400 + 2 * i, 1);
        set_satp(roots[i], 10 + i);
        CHECK_EQ(pa_of(VA(0)), PAGE(400 + 2 * i));
    }
    /* 10 went (the oldest); 11 .. 10 + TLB_SPACES stayed. */
    uint64_t news = ts->satp_new;
    for (unsigned i = 1; i <= TLB_SPACES; i++)
        set_satp(roots[i], 10 + i);
    CHECK_EQ(ts->satp_new, news);
    set_satp(roots[0], 10);
    CHECK_EQ(ts->satp_new, news + 1);
    CHECK_EQ(pa_of(VA(0)), PAGE(400));
}

/* A watch made while a space was not current reaches it when it is. */
static void asid_code_watch(uint64_t ra, uint64_t rb)
{
    TlbHit hit;
    MemFault f;
    set_satp(ra, 1);
    CHECK(tlb_lookup(&h->cpu, VA(1), 8, MEM_STORE, &hit, &f));
    CHECK(!hit.code);
    set_satp(rb, 2);
    tlb_code_watch(PAGE(112) >> 12);
    set_satp(ra, 1);
    CHECK(tlb_lookup(&h->cpu, VA(1), 8, MEM_STORE, &hit, &f));
    CHECK(hit.code);
    CHECK(tlb_code_unwatch(PAGE(112) >> 12, false));
}

/* A space's table past 70 % full doubles in place, entries kept, and
 * keeps its size when it is current again. */
static void asid_grow(uint64_t rb)
{
    uint64_t rg = space_root(600, 200);               /* 200 of 256 entries */
    set_satp(rg, 30);
    TlbSpace *g = h->tlbs.cur;
    unsigned bits = g->view[TLB_IDX_S].bits;
    CHECK_EQ(bits, 8);                                 /* a space never used before */
    for (unsigned k = 0; k < 200; k++)
        CHECK_EQ(pa_of(VA(k)), PAGE(600 + k));
    CHECK_EQ(g->view[TLB_IDX_S].bits, bits + 1);
    set_satp(rb, 2);
    set_satp(rg, 30);
    CHECK(h->tlbs.cur == g);
    CHECK_EQ(h->cpu.tlb[TLB_IDX_S].mask, ((2ULL << bits) - 1) << TLB_ENTRY_BITS);
    uint64_t walks = s_walks();
    for (unsigned k = 0; k < 200; k++)
        CHECK_EQ(pa_of(VA(k)), PAGE(600 + k));
    CHECK_EQ(s_walks(), walks);
}

/* Global entries: inherited by a new space, kept by a fence by ASID. */
static void asid_globals(void)
{
    TlbHit hit;
    MemFault f;
    uint64_t r1 = pt_alloc(), r2 = pt_alloc();
    for (int i = 0; i < 2; i++) {
        uint64_t root = i ? r2 : r1;
        map_with(root, VA(50), PAGE(700), PTE_LEAF | PTE_G);
        map(root, VA(51), PAGE(701 + i));
    }
    set_satp(r1, 40);
    CHECK_EQ(pa_of(VA(50)), PAGE(700));
    CHECK_EQ(pa_of(VA(51)), PAGE(701));
    CHECK(tlb_lookup(&h->cpu, VA(50), 2, MEM_FETCH, &hit, &f));
    CHECK(tlb_lookup(&h->cpu, VA(51), 2, MEM_FETCH, &hit, &f));
    CHECK(tlb_code_global(&h->cpu, VA(50)));
    CHECK(!tlb_code_global(&h->cpu, VA(51)));
    CHECK(!tlb_code_global(&h->cpu, VA(52)));           /* not in the TLB */

    uint64_t walks = s_walks();
    set_satp(r2, 41);                                  /* a new space */
    CHECK_EQ(pa_of(VA(50)), PAGE(700));
    CHECK_EQ(s_walks(), walks);                        /* inherited */
    CHECK(tlb_code_global(&h->cpu, VA(50)));
    CHECK_EQ(pa_of(VA(51)), PAGE(702));
    CHECK_EQ(s_walks(), walks + 1);                    /* not global: walked */

    CHECK_EQ(priv_sfence_vma(&h->cpu, 0, 41, false, true), PRIV_STOP);
    walks = s_walks();
    CHECK_EQ(pa_of(VA(50)), PAGE(700));
    CHECK_EQ(s_walks(), walks);                        /* a fence by ASID keeps it */
    CHECK_EQ(pa_of(VA(51)), PAGE(702));
    CHECK_EQ(s_walks(), walks + 1);

    /* Bare in between: nothing is inherited across a MODE change. */
    uint64_t bare = 0;
    CHECK(priv_debug_csr(&h->cpu, 0x180, true, &bare));
    CHECK_EQ(pa_of(PAGE(5)), PAGE(5));
    uint64_t r3 = pt_alloc();
    map_with(r3, VA(50), PAGE(700), PTE_LEAF | PTE_G);
    walks = s_walks();
    set_satp(r3, 42);
    CHECK_EQ(pa_of(VA(50)), PAGE(700));
    CHECK_EQ(s_walks(), walks + 1);
}

/* -tune no-asid-tlb: every satp write flushes, one space. */
static void no_asid_tlb(uint64_t ra, uint64_t rb)
{
    tune.asid_tlb = false;
    uint64_t flushed = h->tlbs.satp_flushed;
    set_satp(ra, 1);
    TlbSpace *only = h->tlbs.cur;
    CHECK_EQ(pa_of(VA(0)), PAGE(111));
    set_satp(rb, 2);
    CHECK(h->tlbs.cur == only);
    CHECK_EQ(pa_of(VA(0)), PAGE(200));
    uint64_t walks = s_walks();
    set_satp(ra, 1);
    CHECK_EQ(pa_of(VA(0)), PAGE(111));
    CHECK_EQ(s_walks(), walks + 1);                    /* flushed: walked again */
    CHECK_EQ(h->tlbs.satp_flushed, flushed + 3);
    CHECK(probe_sees_current());
    tune.asid_tlb = true;
}

static void address_spaces(void)
{
    enter_s_mode();
    uint64_t ra = space_root(100, 2), rb = space_root(200, 2);
    asid_switches(ra, rb);
    asid_fences(ra, rb);
    asid_lru();
    asid_code_watch(ra, rb);
    asid_grow(rb);
    asid_globals();
    no_asid_tlb(ra, rb);
}

int main(void)
{
    machine.ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    CHECK(machine.ram != MAP_FAILED);
    machine.ram_size = RAM_SIZE;
    sys_mem_init();
    machine.nharts = 1;
    machine.harts[0] = h = hart_create(0);
    CHECK_EQ(h->cpu.priv.mode, PRV_M);
    sizing();
    victims_and_flushes();
    code_watches();
    address_spaces();
    printf("test_system_tlb: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
