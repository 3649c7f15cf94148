/*
 * The program break and the allocator on top of it: brk/sbrk growing and
 * shrinking (pages given back come back zeroed), a failing brk leaving the
 * break where it was, and malloc/realloc/free of small and large blocks
 * (glibc uses brk for small ones, mmap for large ones and mremap when a
 * large block grows).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG 4096UL

static void test_sbrk(void)
{
    char *b0 = sbrk(0);
    char *b1 = sbrk(3 * PG + 100);
    printf("sbrk returns the old break: %d\n", b1 == b0);
    char *b2 = sbrk(0);
    printf("break moved by the increment: %d\n", b2 == b0 + 3 * PG + 100);
    memset(b0, 0x6b, 3 * PG + 100);
    printf("heap writable: %d\n", b0[3 * PG + 99] == 0x6b);
    /* shrink below a page boundary, then grow again: fresh zero pages */
    sbrk(-(long)(3 * PG + 100));
    printf("shrunk back: %d\n", sbrk(0) == b0);
    sbrk(3 * PG);
    int zero = 1;
    for (size_t i = ((uintptr_t)b0 + PG - 1) / PG * PG - (uintptr_t)b0; i < 3 * PG; i++)
        zero &= b0[i] == 0;
    printf("regrown whole pages zeroed: %d\n", zero);
    sbrk(-(long)(3 * PG));

    /* brk below the start of the heap and far above fail */
    errno = 0;
    int r = brk((char *)b0 - 0x10000000);
    printf("brk below heap start: %d errno %d, break unchanged: %d\n", r, errno, sbrk(0) == b0);
    errno = 0;
    r = brk((void *)((uintptr_t)1 << 62));
    printf("brk absurdly high: %d errno %d, break unchanged: %d\n", r, errno, sbrk(0) == b0);
    r = brk(b0 + 10 * PG);
    printf("brk to an address: %d, break there: %d\n", r, sbrk(0) == b0 + 10 * PG);
    b0[10 * PG - 1] = 1;
    brk(b0);
}

static unsigned long fill_check(unsigned char *p, size_t n, unsigned seed)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i += 97) {
        p[i] = (unsigned char)(i * seed);
    }
    for (size_t i = 0; i < n; i += 97)
        s += p[i];
    return s;
}

static void test_malloc(void)
{
    /* many small blocks from the brk heap */
    void *blocks[2000];
    unsigned long total = 0;
    for (int i = 0; i < 2000; i++) {
        size_t n = 16 + (size_t)(i * 37 % 500);
        blocks[i] = malloc(n);
        memset(blocks[i], i & 0xff, n);
        total += n;
    }
    int ok = 1;
    for (int i = 0; i < 2000; i++) {
        ok &= ((unsigned char *)blocks[i])[0] == (i & 0xff);
        free(blocks[i]);
    }
    printf("small blocks: %lu bytes, intact: %d\n", total, ok);

    /* large blocks come from mmap */
    size_t big = 64UL << 20;
    unsigned char *p = malloc(big);
    printf("64 MiB malloc: %d\n", p != NULL);
    printf("checksum %lu\n", fill_check(p, big, 3));
    p[big - 1] = 42;
    /* growing a large block: glibc uses mremap */
    unsigned char *q = realloc(p, 3 * big);
    printf("realloc to 192 MiB: %d, kept: %d %d\n", q != NULL, q[big - 1] == 42, q[97] == (unsigned char)(97 * 3));
    q[3 * big - 1] = 7;
    q = realloc(q, big / 2);
    printf("realloc shrink kept: %d\n", q[97] == (unsigned char)(97 * 3));
    free(q);

    unsigned char *c = calloc(1, 10UL << 20);
    int zero = 1;
    for (size_t i = 0; i < (10UL << 20); i += 4093)
        zero &= c[i] == 0;
    printf("calloc 10 MiB zeroed: %d\n", zero);
    free(c);
}

int main(void)
{
    test_sbrk();
    test_malloc();
    return 0;
}
