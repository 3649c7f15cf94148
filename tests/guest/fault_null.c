/*
 * A guest NULL dereference must kill the program with SIGSEGV (exit status
 * 139 as a shell sees it), after its earlier output has been flushed.
 */
#include <stdio.h>

int main(void)
{
    printf("before the fault\n");
    fflush(stdout);
    volatile int *p = NULL;
    *p = 1;
    printf("not reached\n");
    return 0;
}
