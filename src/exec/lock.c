/* Locks elided while the process has one thread, and leaf locks held
 * across a fork: see lock.h. */
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

/* -- Leaf locks across a fork ---------------------------------------------------- */

#define FORK_LEAVES 8

static pthread_mutex_t *leaves[FORK_LEAVES];
static int nleaves;

static void leaves_prepare(void)
{
    for (int i = 0; i < nleaves; i++)
        pthread_mutex_lock(leaves[i]);
}

static void leaves_parent(void)
{
    for (int i = nleaves - 1; i >= 0; i--)
        pthread_mutex_unlock(leaves[i]);
}

static void leaves_child(void)
{
    for (int i = 0; i < nleaves; i++)
        pthread_mutex_init(leaves[i], NULL);
}

void lock_across_fork(pthread_mutex_t *m)
{
    if (nleaves == FORK_LEAVES) {
        fprintf(stderr, "xlat: internal error: more than %d leaf locks\n", FORK_LEAVES);
        abort();
    }
    if (nleaves == 0)
        pthread_atfork(leaves_prepare, leaves_parent, leaves_child);
    leaves[nleaves++] = m;
}
