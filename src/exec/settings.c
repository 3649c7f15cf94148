/*
 * The execution core's settings (settings.h), with their defaults: every
 * --tune mechanism on, nothing logged.
 */
#include "exec/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned log_mask;
FILE *log_file;

Tune tune = {
    .cflags = true, .nostore = true, .inline_jc = true, .xpage = true,
    .cycle_poll = true, .poison = true, .disp = true, .checked_reuse = true, .ras = true,
    .superblock = true, .fork_warm = true, .first_interp = true, .remap = true,
    .narrow = true, .zero_base = true, .tlb_resize = true, .entry_specialize = true,
    .tlb_group = true, .atomics = true, .cache = true, .cache_image = true,
    .asid_tlb = true, .tlb_fill = true, .huge_ram = true, .pv_rfence = true,
    .pause_exit = false,   /* measured no gain: 2026-12-03, README */
    .jc_bits = 16,
};

/* The on/off items, and the modes that have them (some mechanisms are
 * user mode's alone: the window, fork, the guest space at host 0; the
 * TLB is system mode's). */
enum { USER = 1, SYSTEM = 2, BOTH = 3 };
static const struct { const char *name; bool *flag; unsigned modes; } tune_items[] = {
    { "cflags", &tune.cflags, BOTH }, { "nostore", &tune.nostore, BOTH },
    { "inline-jc", &tune.inline_jc, BOTH }, { "xpage", &tune.xpage, USER },
    { "cycle-poll", &tune.cycle_poll, BOTH }, { "poison", &tune.poison, BOTH },
    { "disp", &tune.disp, BOTH }, { "checked-reuse", &tune.checked_reuse, USER },
    { "ras", &tune.ras, BOTH }, { "superblock", &tune.superblock, BOTH },
    { "fork-warm", &tune.fork_warm, USER }, { "first-interp", &tune.first_interp, BOTH },
    { "remap", &tune.remap, BOTH }, { "narrow", &tune.narrow, BOTH },
    { "zero-base", &tune.zero_base, USER }, { "tlb-resize", &tune.tlb_resize, SYSTEM },
    { "entry-specialize", &tune.entry_specialize, SYSTEM },
    { "tlb-group", &tune.tlb_group, SYSTEM },
    { "asid-tlb", &tune.asid_tlb, SYSTEM }, { "tlb-fill", &tune.tlb_fill, SYSTEM },
    { "huge-ram", &tune.huge_ram, SYSTEM }, { "pv-rfence", &tune.pv_rfence, SYSTEM },
    { "pause-exit", &tune.pause_exit, SYSTEM }, { "atomics", &tune.atomics, BOTH },
    { "cache", &tune.cache, USER }, { "cache-image", &tune.cache_image, USER },
};

/* item = "NAME=N" with lo <= N <= hi: *out = N; NULL, or what is wrong. */
static const char *tune_number(const char *item, const char *name, unsigned lo, unsigned hi,
                               unsigned *out, bool *matched)
{
    static char why[96];
    size_t n = strlen(name);
    *matched = !strncmp(item, name, n) && item[n] == '=';
    if (!*matched)
        return NULL;
    char *end;
    unsigned long v = strtoul(item + n + 1, &end, 10);
    if (*end || end == item + n + 1 || v < lo || v > hi) {
        snprintf(why, sizeof why, "--tune %s=N needs %u <= N <= %u, not '%s'", name, lo, hi,
                 item + n + 1);
        return why;
    }
    *out = (unsigned)v;
    return NULL;
}

const char *tune_parse(const char *list, bool system)
{
    static char why[96];
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        bool matched;
        const char *bad = tune_number(item, "jc-bits", 10, 18, &tune.jc_bits, &matched);
        if (bad || matched) {
            if (bad)
                return bad;
            continue;
        }
        if (system) {
            bad = tune_number(item, "tlb-bits", 6, 22, &tune.tlb_bits, &matched);
            if (bad)
                return bad;
            if (matched)
                continue;
        }
        bool on = strncmp(item, "no-", 3) != 0;
        const char *name = on ? item : item + 3;
        size_t i = 0;
        size_t n = sizeof tune_items / sizeof tune_items[0];
        while (i < n && (strcmp(tune_items[i].name, name) ||
                         !(tune_items[i].modes & (system ? SYSTEM : USER))))
            i++;
        if (i == n) {
            snprintf(why, sizeof why, "unknown --tune item '%s' (try -h)", item);
            return why;
        }
        *tune_items[i].flag = on;
    }
    return NULL;
}

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
