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
    LOG_OUT_ASM = 1 << 5,  /* host code of each new translation block (hex) */
    LOG_NOCHAIN = 1 << 6,  /* do not chain translation blocks */
};

typedef struct Options {
    const char *ld_prefix;      /* -L / QEMU_LD_PREFIX, NULL if none */
    unsigned    log_mask;       /* -d items */
    FILE       *log_file;       /* -D file, default stderr */
    bool        strace;         /* -strace */
    bool        interp_only;    /* --interp: run the interpreter, not the JIT */
    uint64_t    stack_size;     /* -s, default 8 MiB */
    const char *argv0;          /* -0 */
    const char *exe_path;       /* host path of the main program */
    char      **exec_args;      /* options that give an exec'd xlat these settings
                                   (NULL-terminated; main.c builds it, sys_exec.c uses it) */
} Options;

extern Options opt;

/* Log to the -D file (stderr by default) if any bit of mask is enabled. */
#define xlat_log(mask, ...) \
    do { if (opt.log_mask & (mask)) fprintf(opt.log_file, __VA_ARGS__); } while (0)

#endif
