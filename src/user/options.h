/*
 * Process-wide options from the command line and environment (QEMU-style).
 */
#ifndef XLAT_USER_OPTIONS_H
#define XLAT_USER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
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
    unsigned jc_bits;   /* log2 of jump cache entries (10..18, default 16) */
} Tune;

extern Tune tune;

typedef struct Options {
    const char *ld_prefix;      /* -L / QEMU_LD_PREFIX, NULL if none */
    unsigned    log_mask;       /* -d items */
    FILE       *log_file;       /* -D file, default stderr */
    bool        strace;         /* -strace */
    bool        interp_only;    /* --interp: run the interpreter, not the JIT */
    uint64_t    stack_size;     /* -s, default 8 MiB */
    const char *argv0;          /* -0 */
    const char *cpu_model;      /* -cpu ISA string as given, NULL for the default (max) */
    int         gdb_port;       /* -g: wait for gdb on this TCP port (0: no gdbstub) */
    bool        perfmap;        /* -perfmap: write /tmp/perf-PID.map */
    bool        jitdump;        /* -jitdump: write jit-PID.dump for perf inject */
    const char *exe_path;       /* the main program as /proc/self/exe names it (canonical;
                                   a guest path under --root) */
    const char *self_exe;       /* xlat's own file, to re-execute when /proc is not mounted
                                   (NULL if unknown) */
    bool        binfmt;         /* started by binfmt_misc for a registered file: a guest
                                   execve goes back to the kernel (sys_exec.c) */
    char      **exec_args;      /* options that give an exec'd xlat these settings
                                   (NULL-terminated; main.c builds it, sys_exec.c uses it) */
} Options;

extern Options opt;

/* The process is ending with exit status, or of signal sig (at_exit.c). */
void xlat_at_exit(int status, int sig);

/* Log to the -D file (stderr by default) if any bit of mask is enabled. */
#define xlat_log(mask, ...) \
    do { if (opt.log_mask & (mask)) fprintf(opt.log_file, __VA_ARGS__); } while (0)

#endif
