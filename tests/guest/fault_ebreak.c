/*
 * ebreak must kill the program with SIGTRAP.
 */
#include <stdio.h>

int main(void)
{
    printf("before ebreak\n");
    fflush(stdout);
    __asm__ volatile("ebreak");
    printf("not reached\n");
    return 0;
}
