/*
 * The execution core's settings (settings.h), with their defaults: every
 * --tune mechanism on, nothing logged.
 */
#include "exec/settings.h"

unsigned log_mask;
FILE *log_file;

Tune tune = {
    .cflags = true, .nostore = true, .inline_jc = true, .xpage = true,
    .cycle_poll = true, .poison = true, .disp = true, .checked_reuse = true, .ras = true,
    .superblock = true, .fork_warm = true, .first_interp = true, .remap = true,
    .narrow = true, .zero_base = true,
    .jc_bits = 16,
};
