/*
 * A misaligned AMO is not emulated by Linux: SIGBUS.
 */
#include <stdint.h>
#include <stdio.h>

static uint64_t buf[2];

int main(void)
{
    printf("before the misaligned amoadd.d\n");
    fflush(stdout);
    uint64_t r;
    __asm__ volatile("amoadd.d %0, %2, (%1)" : "=r"(r) : "r"((char *)buf + 4), "r"(1ULL) : "memory");
    printf("not reached %llu\n", (unsigned long long)r);
    return 0;
}
