/*
 * The process-wide options (see options.h), with their defaults. main.c
 * fills them from the command line and environment; unit tests, which do
 * not link main.c, see the defaults.
 */
#include "user/options.h"

Options opt = {
    .stack_size = 8ULL << 20,
};

Tune tune = {
    .cflags = true, .nostore = true, .inline_jc = true, .xpage = true,
    .cycle_poll = true, .poison = true, .disp = true, .checked_reuse = true, .ras = true,
    .superblock = true, .fork_warm = true, .first_interp = true, .remap = true,
    .narrow = true, .zero_base = true,
    .jc_bits = 16,
};
