/*
 * Death by a default-disposition signal: abort() raises SIGABRT, so the
 * status a shell sees is 128 + 6 = 134. Earlier output must be flushed.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    printf("about to abort\n");
    fflush(stdout);
    abort();
}
