/* Exit status propagation: exit(3) after atexit handlers and stdio flush. */
#include <stdio.h>
#include <stdlib.h>

static void bye(void) { printf("atexit ran\n"); }

int main(void)
{
    atexit(bye);
    printf("exiting with 3 (buffered)");
    exit(3);
}
