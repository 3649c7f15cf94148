/*
 * Regression: riscv_flush_icache (what __builtin___clear_cache calls) on a
 * page whose code the JIT had translated, and so write-protected, must
 * leave the page writable for the guest. xlat once dropped its record of
 * the protection there but left the host page read-only, so the guest's
 * next store to its own RWX page was reported as a SIGSEGV.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

/* li a0, v ; ret */
static void write_fn(uint32_t *p, int v)
{
    p[0] = ((uint32_t)(v & 0xfff) << 20) | (10 << 7) | 0x13;
    p[1] = 0x00008067u;
}

int main(void)
{
    uint32_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    for (int i = 0; i < 4; i++) {
        write_fn(page, 100 + i);
        __builtin___clear_cache((char *)page, (char *)(page + 2));
        long r = ((long (*)(void))(uintptr_t)page)();          /* translated */
        __builtin___clear_cache((char *)page, (char *)(page + 2)); /* no store between */
        page[512] = (uint32_t)i;                                  /* store to the page */
        printf("round %d: returned %ld, stored %u\n", i, r, page[512]);
    }
    return 0;
}
