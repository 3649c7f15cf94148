/*
 * Watched code pages (see code_watch.h): two bitmaps over the window's
 * pages, read lock-free by the fault handler. wp: host page made read-only
 * by us; gw: guest-writable page we manage (a fault there is ours even if
 * another thread already unprotected it).
 */
#include "user/code_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "exec/exec.h"
#include "user/mm.h"

#define GUEST_PAGES (GUEST_SPACE_SIZE / GUEST_PAGE_SIZE)

static uint64_t *wp_bits, *gw_bits;

static inline bool bit_test(const uint64_t *b, uint64_t i)
{
    return (__atomic_load_n(&b[i / 64], __ATOMIC_ACQUIRE) >> (i % 64)) & 1;
}
static inline void bit_set(uint64_t *b, uint64_t i)   { __atomic_fetch_or(&b[i / 64], 1ULL << (i % 64), __ATOMIC_RELEASE); }
static inline void bit_clear(uint64_t *b, uint64_t i) { __atomic_fetch_and(&b[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE); }

void code_watch_init(void)
{
    wp_bits = map_noreserve(GUEST_PAGES / 8);
    gw_bits = map_noreserve(GUEST_PAGES / 8);
}

/* Write-protect the host page of guest page `page` if the guest may write it. */
void code_watch_page(uint64_t page)
{
    if (page >= GUEST_PAGES || bit_test(wp_bits, page))
        return;
    int prot = guest_prot_at(page * GUEST_PAGE_SIZE);
    if (prot < 0 || !(prot & PROT_WRITE))
        return;
    /* Bits first: another thread's store may fault as soon as the page is
     * read-only, and code_watch_fault reads gw_bits without a lock. */
    bit_set(gw_bits, page);
    bit_set(wp_bits, page);
    if (mprotect(g2h(page * GUEST_PAGE_SIZE), GUEST_PAGE_SIZE, PROT_READ) != 0) {
        bit_clear(wp_bits, page);
        bit_clear(gw_bits, page);
    }
}

bool code_unwatch_page(uint64_t page, bool remapped)
{
    if (page >= GUEST_PAGES)
        return false;
    bool was = bit_test(wp_bits, page);
    if (remapped) {                     /* mm.c set the host protection */
        bit_clear(wp_bits, page);
        bit_clear(gw_bits, page);
        return was;
    }
    if (was) {
        mprotect(g2h(page * GUEST_PAGE_SIZE), GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE);
        bit_clear(wp_bits, page);
    }
    return was;
}

bool code_watch_fault(void *addr)
{
    if (!wp_bits || !host_in_window(addr))
        return false;
    uint64_t page = h2g(addr) / GUEST_PAGE_SIZE;
    if (!bit_test(gw_bits, page))
        return false;
    exec_code_written(page);
    return true;                /* retry: the page is writable now */
}

bool code_watch_protected(uint64_t page)
{
    return wp_bits && page < GUEST_PAGES && bit_test(wp_bits, page);
}
