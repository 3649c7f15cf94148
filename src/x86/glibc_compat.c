/*
 * The glibc entry points Debian's libcapstone calls beyond standard C, for
 * a musl build of xlat that dlopens it (src/x86/disas.c; the Makefile
 * exports these). libcapstone.so names libc.so.6 as needed, which musl's
 * loader takes for itself; every other function it uses is standard C.
 * Built with glibc, this file is empty (-DXLAT_MUSL: the Makefile).
 */
#ifdef XLAT_MUSL               /* the Makefile's musl objects */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int32_t **__ctype_tolower_loc(void);
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...);
char *__strcpy_chk(char *dst, const char *src, size_t dstlen);

/* <ctype.h>'s tolower as glibc's table: indexed by any char or EOF, -128..255
 * (filled once: disassembling threads may ask at the same time). */
static int32_t lower_table[384];
static const int32_t *lower_at = lower_table + 128;
static pthread_once_t lower_once = PTHREAD_ONCE_INIT;

static void lower_fill(void)
{
    for (int c = -128; c < 256; c++)
        lower_table[c + 128] = c >= 0 ? tolower(c) : c;
}

const int32_t **__ctype_tolower_loc(void)
{
    pthread_once(&lower_once, lower_fill);
    return &lower_at;
}

/* The _FORTIFY_SOURCE checks: an overflow aborts, as glibc's do. */
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, slen, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= slen)
        abort();
    return n;
}

char *__strcpy_chk(char *dst, const char *src, size_t dstlen)
{
    size_t n = strlen(src);
    if (n >= dstlen)
        abort();
    return memcpy(dst, src, n + 1);
}
#endif
