/*
 * Unit test of system mode's softmmu TLBs (src/system/tlb.c) on one hart in
 * M-mode (physical addresses): the seed's sizing policy (double above 70 %
 * of the window's most-used entries at a full flush; shrink to fit below
 * 30 % only once the 100 ms window is over; floor 2^6; the mask translated
 * code reads follows), --tune tlb-bits and no-tlb-resize, the victim TLB,
 * a one-page flush, and code watches on write tags.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "exec/settings.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/sys_mem.h"
#include "system/tlb.h"
#include "check.h"

#define RAM_SIZE (64ULL << 20)
#define PAGE(k) (VIRT_RAM_BASE + (uint64_t)(k) * 4096)

static Hart *h;

static SysTlb *mtlb(void) { return &h->tlb[TLB_IDX_M]; }

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
    CHECK_EQ(bits_after(200), 9);              /* 78 %: doubles */
    CHECK_EQ(h->cpu.tlb[TLB_IDX_M].mask, 511ULL << TLB_ENTRY_BITS);
    CHECK_EQ(bits_after(400), 10);
    CHECK_EQ(bits_after(10), 10);              /* under 30 %, but the window goes on */
    sleep_ms(120);
    CHECK_EQ(bits_after(10), 6);               /* window over: fit 10, floor 2^6 */
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
    printf("test_system_tlb: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
