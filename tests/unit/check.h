/*
 * The unit tests' checks: each failed check prints its place and the
 * values, counts in failures, and the test goes on; main returns
 * failures != 0.
 */
#ifndef XLAT_TESTS_UNIT_CHECK_H
#define XLAT_TESTS_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond) do {                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#define CHECK_EQ(a, b) do {                                                   \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_) {                                                       \
            printf("FAIL %s:%d: %s == %#llx (%lld), expected %#llx (%lld)\n", \
                   __FILE__, __LINE__, #a, a_, (long long)a_, b_, (long long)b_); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#endif
