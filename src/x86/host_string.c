/*
 * memcpy and memmove for the musl build (see the Makefile). musl's x86-64
 * memcpy copies a byte at a time up to an 8-byte boundary, then with
 * `rep movsq`, then a byte at a time again: a warm process copies
 * thousands of kept translations of 50-300 bytes (pcache_fill), and that
 * memcpy cost python3's start 9 % against glibc's 2.6 %. Here: up to 64
 * bytes with overlapping 8- or 16-byte moves, all loads before the stores
 * (so any overlap is safe), 16 at a time up to 256, then `rep movsb`
 * (fast on every x86-64 since Ivy Bridge, ERMS). Both are defined so that
 * a static link takes neither from musl's memcpy.o (its memmove calls into
 * it). Built with glibc, this file is empty (-DXLAT_MUSL: the Makefile).
 */
#ifdef XLAT_MUSL               /* the Makefile's musl objects */
#include <stddef.h>
#include <stdint.h>

#define NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

typedef unsigned char V16 __attribute__((vector_size(16), aligned(1), may_alias));
typedef uint64_t U64 __attribute__((aligned(1), may_alias));
typedef uint32_t U32 __attribute__((aligned(1), may_alias));
typedef uint16_t U16 __attribute__((aligned(1), may_alias));

/* n <= 64: every load before any store. */
static inline void copy_small(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n >= 32) {
        V16 a = *(const V16 *)s, b = *(const V16 *)(s + 16);
        V16 c = *(const V16 *)(s + n - 32), e = *(const V16 *)(s + n - 16);
        *(V16 *)d = a, *(V16 *)(d + 16) = b, *(V16 *)(d + n - 32) = c, *(V16 *)(d + n - 16) = e;
    } else if (n >= 16) {
        V16 a = *(const V16 *)s, b = *(const V16 *)(s + n - 16);
        *(V16 *)d = a, *(V16 *)(d + n - 16) = b;
    } else if (n >= 8) {
        U64 a = *(const U64 *)s, b = *(const U64 *)(s + n - 8);
        *(U64 *)d = a, *(U64 *)(d + n - 8) = b;
    } else if (n >= 4) {
        U32 a = *(const U32 *)s, b = *(const U32 *)(s + n - 4);
        *(U32 *)d = a, *(U32 *)(d + n - 4) = b;
    } else if (n >= 2) {
        U16 a = *(const U16 *)s, b = *(const U16 *)(s + n - 2);
        *(U16 *)d = a, *(U16 *)(d + n - 2) = b;
    } else if (n) {
        *d = *s;
    }
}

/* Forward: right for any overlap with d below s. */
static NO_LIBCALL void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n <= 64) {
        copy_small(d, s, n);
    } else if (n <= 256) {
        V16 last = *(const V16 *)(s + n - 16);
        unsigned char *end = d + n - 16;
        for (; d < end; d += 16, s += 16)
            *(V16 *)d = *(const V16 *)s;
        *(V16 *)end = last;
    } else {
        __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    }
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    copy_forward(dst, src, n);
    return dst;
}

NO_LIBCALL void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if ((uintptr_t)d - (uintptr_t)s >= n) {        /* d below s, or apart */
        copy_forward(d, s, n);
        return dst;
    }
    if (n <= 64) {
        copy_small(d, s, n);
        return dst;
    }
    /* d above s and overlapping: from the end, each load below the stores so far. */
    while (n >= 16) {
        n -= 16;
        *(V16 *)(d + n) = *(const V16 *)(s + n);
    }
    while (n--)
        d[n] = s[n];
    return dst;
}
#endif
