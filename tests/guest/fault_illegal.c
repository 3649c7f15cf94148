/*
 * Executing an illegal instruction (the all-zero word) must kill the
 * program with SIGILL.
 */
#include <stdio.h>

int main(void)
{
    printf("before the illegal instruction\n");
    fflush(stdout);
    __asm__ volatile(".word 0");
    printf("not reached\n");
    return 0;
}
