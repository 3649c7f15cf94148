/* Locks elided while the process has one thread: see lock.h. */
#include <stdio.h>
#include <stdlib.h>

#include "exec/lock.h"

bool locks_shared = true;
int locks_held;

void locks_single_thread(void)
{
    locks_shared = false;
    locks_held = 0;
}

void locks_shared_from_now(void)
{
    if (locks_shared)
        return;
    if (locks_held) {
        /* The new thread could take a lock this one holds: a bug of xlat's. */
        fprintf(stderr, "xlat: internal error: a thread started with %d lock(s) held\n", locks_held);
        abort();
    }
    locks_shared = true;
}
