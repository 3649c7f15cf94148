/*
 * Jumping into a non-executable page (a data array) must fault with SIGSEGV,
 * even though the page is readable.
 */
#include <stdint.h>
#include <stdio.h>

static uint32_t code[4] = { 0x00008067 };   /* ret */

int main(void)
{
    printf("before the jump into data\n");
    fflush(stdout);
    ((void (*)(void))(uintptr_t)code)();
    printf("not reached\n");
    return 0;
}
