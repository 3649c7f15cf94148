/*
 * A store to an address far from any mapping (but inside the user address
 * space) and a load from beyond it must fault with SIGSEGV; the fault is
 * reported through a SIGSEGV exit, after output up to it.
 */
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    printf("storing to 0x2000000000\n");
    fflush(stdout);
    *(volatile uint64_t *)(uintptr_t)0x2000000000ULL = 5;
    printf("not reached\n");
    return 0;
}
