/*
 * tests/pcache.sh's program for start images: 256 functions of a few
 * blocks each, of which it runs the first N (each often enough to be
 * translated), so that runs with different N run different numbers of
 * blocks in the same file.
 *   many N
 */
#include <stdio.h>
#include <stdlib.h>

#define F(i)                                                     \
    __attribute__((noinline)) static long f##i(long x)           \
    {                                                            \
        if (x & 1)                                               \
            x = x * (2 * (i) + 3) + (i);                         \
        else                                                     \
            x = (x >> 1) ^ (i);                                  \
        return x;                                                \
    }
#define F4(i) F(i##0) F(i##1) F(i##2) F(i##3)
#define F16(i) F4(i##0) F4(i##1) F4(i##2) F4(i##3)
F16(1) F16(2) F16(3) F16(4)
F16(5) F16(6) F16(7) F16(8)
F16(9) F16(10) F16(11) F16(12)
F16(13) F16(14) F16(15) F16(16)

#define R(i) f##i,
#define R4(i) R(i##0) R(i##1) R(i##2) R(i##3)
#define R16(i) R4(i##0) R4(i##1) R4(i##2) R4(i##3)
static long (*const table[])(long) = {
    R16(1) R16(2) R16(3) R16(4) R16(5) R16(6) R16(7) R16(8)
    R16(9) R16(10) R16(11) R16(12) R16(13) R16(14) R16(15) R16(16)
};

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0, x = 7;
    if (n < 0 || n > (long)(sizeof table / sizeof *table))
        return 2;
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            x = table[i](x + k);
    printf("%ld\n", x);
    return 0;
}
