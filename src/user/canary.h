/*
 * Canaries in xlat's memory for the isolation tests (canary.c): enabled by
 * XLAT_CANARY_CHECK=1, checked at process exit.
 */
#ifndef XLAT_USER_CANARY_H
#define XLAT_USER_CANARY_H

#include <stddef.h>

/* Place the canaries (after mm_init: some sit beside the guest window). */
void canary_init(void);

/* Also guard [p, p+len) of xlat's own memory (filled with the pattern now). */
void canary_add(const char *where, void *p, size_t len);

/* Verify every canary: prints "xlat: canary ok" or exits 99. */
void canary_check(void);

#endif
