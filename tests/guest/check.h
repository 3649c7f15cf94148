/*
 * Shared by the sysx_* guest tests: print a system call's result the same
 * way under qemu and xlat (the value, or -1 and errno), for the runner to
 * compare.
 */
#ifndef XLAT_TESTS_GUEST_CHECK_H
#define XLAT_TESTS_GUEST_CHECK_H

#include <errno.h>
#include <stdio.h>

static void check(const char *what, long r)
{
    if (r < 0)
        printf("%s: -1 errno=%d\n", what, errno);
    else
        printf("%s: %ld\n", what, r);
}

#endif
