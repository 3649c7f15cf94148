/*
 * The process-wide options (see options.h), with their defaults. main.c
 * fills them from the command line and environment; unit tests, which do
 * not link main.c, see the defaults.
 */
#include "user/options.h"

Options opt = {
    .stack_size = 8ULL << 20,
};
