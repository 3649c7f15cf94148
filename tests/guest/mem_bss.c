/*
 * The loader's bss. The data segment's file bytes end inside a page and the
 * file goes on there (symbols, section names): that rest of the page is bss
 * and must read as zeros (Linux clears it after mapping the file), as must
 * the anonymous pages after it. Our object's bss comes first in the
 * program's (after the C runtime's few bytes), so `zeros` starts in that
 * page.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char zeros[3 * 4096 + 100];
int data_word = 0x5a5a5a5a;
extern char _edata[], _end[];

int main(void)
{
    size_t nonzero = 0;
    for (size_t i = 0; i < sizeof zeros; i++)
        nonzero += zeros[i] != 0;
    printf("bss array zero: %d (%zu non-zero bytes)\n", nonzero == 0, nonzero);
    printf("array in the page the file data ends in: %d\n",
           ((uintptr_t)zeros & ~4095ul) == ((uintptr_t)_edata & ~4095ul));
    printf("data word: %#x\n", data_word);
    memset(zeros, 0x7e, sizeof zeros);
    printf("bss writable: %d\n", zeros[sizeof zeros - 1] == 0x7e);
    printf("program ends after the array: %d\n", (uintptr_t)_end >= (uintptr_t)(zeros + sizeof zeros));
    return 0;
}
