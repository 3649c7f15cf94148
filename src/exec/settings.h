/*
 * The execution core's settings, the same for every mode (user mode's
 * command line fills them; src/user/options.h has the rest): what -d logs
 * and where (-D), and the JIT's --tune switches. Defaults in settings.c.
 */
#ifndef XLAT_EXEC_SETTINGS_H
#define XLAT_EXEC_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* -d log items (bit mask). */
enum {
    LOG_IN_ASM = 1 << 0,   /* guest code as objdump prints it */
    LOG_EXEC   = 1 << 1,   /* each executed pc */
    LOG_UNIMP  = 1 << 2,   /* unimplemented syscalls and instructions */
    LOG_PAGE   = 1 << 3,   /* guest memory map changes */
    LOG_STRACE = 1 << 4,   /* same as -strace */
    LOG_OUT_ASM = 1 << 5,  /* host code of each new translation block (disassembled) */
    LOG_NOCHAIN = 1 << 6,  /* do not chain translation blocks */
    LOG_STATS   = 1 << 7,  /* print execution counters at exit */
    LOG_INT     = 1 << 8,  /* system mode: traps and interrupts taken */
    LOG_MMU     = 1 << 9,  /* system mode: page faults and translation changes */
    LOG_GUEST_ERRORS = 1 << 10,  /* system mode: accesses to nothing, bad device use */
    LOG_CACHE   = 1 << 11, /* user mode: the persistent translation cache's files and misses */
};

/*
 * --tune: the per-block overhead mechanisms of the JIT (seed 000), each on by
 * default and switchable for measurement (`--tune no-NAME`, `--tune jc-bits=N`).
 */
typedef struct Tune {
    bool cflags;        /* dispatch flags cached, not recomputed per dispatch */
    bool nostore;       /* no per-block bookkeeping stores (cpu->pc at entry / indirect hits) */
    bool inline_jc;     /* indirect exits probe the jump cache inline (else a shared stub) */
    bool xpage;         /* direct exits chain across guest pages */
    bool cycle_poll;    /* exit poll only on cycle-closing exits (else at every block entry) */
    bool poison;        /* exit requests poison the jump cache: indirect exits need no poll */
    bool disp;          /* guest displacement folded into the host addressing mode */
    bool superblock;    /* blocks go on past conditional branches (side exits) */
    bool ras;           /* guest calls and returns are host call and ret (return-address stack) */
    bool checked_reuse;  /* a window check per base register and block, not per access */
    bool fork_warm;     /* forked children report their translations to the forking process */
    bool remap;         /* a block may map guest registers to host registers its own way */
    bool first_interp;  /* a block's first runs are interpreted, translated when it runs again */
    bool narrow;        /* a 32-bit result read only by 32-bit consumers is not sign-extended */
    bool zero_base;     /* the guest window at host address 0: no base register (user/mm.h) */
    bool tlb_resize;    /* system mode: softmmu TLBs size themselves (system/tlb.h) */
    bool entry_specialize; /* system mode: trap, ecall and xret entries per privilege (seed 004) */
    bool tlb_group;     /* system mode: accesses through one base register share a TLB probe */
    bool asid_tlb;      /* system mode: TLBs kept per address space; else a satp write flushes */
    bool tlb_fill;      /* system mode: a probe's miss refills and retries; else the interpreter */
    bool huge_ram;      /* system mode: guest RAM in transparent huge pages (MADV_HUGEPAGE) */
    bool pv_rfence;     /* system mode: remote fences do not wait for harts off their threads */
    bool atomics;       /* LR, SC and AMOs translated (else the interpreter runs each) */
    bool pause_exit;    /* system mode: a hart spinning on pause yields its thread to waiting harts (off) */
    bool cache;         /* user mode: translations of files' code kept on disk (exec/pcache.c) */
    bool cache_image;   /* user mode: and installed a program's file at a time (pcache_image.c) */
    unsigned jc_bits;   /* log2 of jump cache entries (10..18, default 16) */
    unsigned tlb_bits;  /* system mode: log2 of every TLB's entries, fixed (0: sized) */
} Tune;

extern Tune tune;

/*
 * Apply --tune's comma-separated list: NAME or no-NAME (the bools above
 * that the mode has), jc-bits=N, and in system mode tlb-bits=N. NULL, or
 * what is wrong with it (a static buffer).
 */
const char *tune_parse(const char *list, bool system);

/* The -d items enabled, and the -D file (NULL: stderr). */
extern unsigned log_mask;
extern FILE *log_file;

/* A -d item a mode offers: its name, its bits, a line of help. */
typedef struct LogItem {
    const char *name;
    unsigned mask;
    const char *help;
} LogItem;

/*
 * Add the comma-separated -d items of list to log_mask, from the n items a
 * mode offers. "help" prints them and exits 0. Returns NULL, or the first
 * unknown item (in a static buffer).
 */
const char *log_items_parse(const LogItem *items, size_t n, const char *list);

/* Log to the -D file (stderr by default) if any bit of mask is enabled. */
#define xlat_log(mask, ...) \
    do { if (log_mask & (mask)) fprintf(log_file ? log_file : stderr, __VA_ARGS__); } while (0)

#endif
