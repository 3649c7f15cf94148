/*
 * The execution core's settings (settings.h), with their defaults: every
 * --tune mechanism on, nothing logged.
 */
#include "exec/settings.h"

#include <stdlib.h>
#include <string.h>

unsigned log_mask;
FILE *log_file;

Tune tune = {
    .cflags = true, .nostore = true, .inline_jc = true, .xpage = true,
    .cycle_poll = true, .poison = true, .disp = true, .checked_reuse = true, .ras = true,
    .superblock = true, .fork_warm = true, .first_interp = true, .remap = true,
    .narrow = true, .zero_base = true,
    .jc_bits = 16,
};

const char *log_items_parse(const LogItem *items, size_t n, const char *list)
{
    static char bad[64];
    char *copy = strdup(list), *save = NULL;
    const char *unknown = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && !unknown;
         item = strtok_r(NULL, ",", &save)) {
        size_t i;
        if (!strcmp(item, "help")) {
            for (i = 0; i < n; i++)
                printf("%-13s %s\n", items[i].name, items[i].help);
            exit(0);
        }
        for (i = 0; i < n && strcmp(item, items[i].name); i++)
            ;
        if (i < n) {
            log_mask |= items[i].mask;
        } else {
            snprintf(bad, sizeof bad, "%s", item);
            unknown = bad;
        }
    }
    free(copy);
    return unknown;
}
