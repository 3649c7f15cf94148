/*
 * Canaries in xlat's own memory, for the isolation tests (tests/trust.sh).
 *
 * With XLAT_CANARY_CHECK=1 in the environment, canary_init fills known
 * patterns into the places a guest escaping its window would most likely
 * hit: a .data and a .bss array, two heap blocks (small and mmap-sized),
 * and two host pages placed immediately outside the guard regions around
 * the guest window (where an off-by-one in a bounds check would land).
 * Other modules may add their own with canary_add. (CPU state and the code
 * cache change legitimately, so they carry no canary; the tests check them
 * by the guest's own results instead.) At
 * process exit canary_check verifies every byte and prints "xlat: canary
 * ok" to stderr, or "xlat: CANARY CORRUPTED" with the place and exits 99.
 *
 * Without the variable both functions do nothing. The patterns depend on
 * the address, so a block copied from elsewhere does not pass.
 */
#define _GNU_SOURCE
#include "user/canary.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/mm.h"

#define CANARY_BYTES 4096

typedef struct Canary {
    const char *where;
    uint8_t *p;
    size_t len;
} Canary;

static bool canary_on;
static uint8_t canary_data[CANARY_BYTES] = { 1 };   /* in .data */
static uint8_t canary_bss[CANARY_BYTES];            /* in .bss */
static Canary canaries[8];
static int ncanaries;

static uint8_t pattern(const uint8_t *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL;
    return (uint8_t)(x >> 56) ^ 0xa5;
}

static void add(const char *where, void *p, size_t len)
{
    if (p == NULL || p == MAP_FAILED || ncanaries == (int)(sizeof canaries / sizeof canaries[0]))
        return;
    uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        b[i] = pattern(b + i);
    canaries[ncanaries++] = (Canary){ where, b, len };
}

/* A page at a fixed host address, if that address is free. */
static void *page_at(void *addr)
{
    void *p = mmap(addr, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && p != addr) {
        munmap(p, GUEST_PAGE_SIZE);
        return NULL;
    }
    return p;
}

void canary_init(void)
{
    const char *v = getenv("XLAT_CANARY_CHECK");
    if (v == NULL || strcmp(v, "1") != 0)
        return;
    canary_on = true;
    add(".data", canary_data, sizeof canary_data);
    add(".bss", canary_bss, sizeof canary_bss);
    add("heap", malloc(CANARY_BYTES), CANARY_BYTES);
    add("heap (large)", malloc(1 << 20), 1 << 20);
    /* (none below with the window at host address 0: that is the kernel's half) */
    add("page below the low guard",
        page_at(g2h(0 - GUEST_GUARD_SIZE - GUEST_PAGE_SIZE)), GUEST_PAGE_SIZE);
    add("page above the high guard",
        page_at(g2h(GUEST_SPACE_SIZE + GUEST_GUARD_SIZE)), GUEST_PAGE_SIZE);
}

void canary_add(const char *where, void *p, size_t len)
{
    if (canary_on)
        add(where, p, len);
}

void canary_check(void)
{
    if (!canary_on)
        return;
    for (int c = 0; c < ncanaries; c++) {
        for (size_t i = 0; i < canaries[c].len; i++) {
            uint8_t *b = canaries[c].p + i;
            if (*b != pattern(b)) {
                fprintf(stderr, "xlat: CANARY CORRUPTED: %s at %p\n", canaries[c].where, (void *)b);
                _exit(99);
            }
        }
    }
    fprintf(stderr, "xlat: canary ok (%d regions)\n", ncanaries);
}
