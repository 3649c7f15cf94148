/*
 * User mode's process-wide options from the command line and environment
 * (QEMU-style). The settings the execution core shares with every mode
 * (logging, --tune) are in exec/settings.h.
 */
#ifndef XLAT_USER_OPTIONS_H
#define XLAT_USER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "exec/settings.h"      /* -d items, the -D file, --tune: the core's */

typedef struct Options {
    const char *ld_prefix;      /* -L / QEMU_LD_PREFIX, NULL if none */
    bool        strace;         /* -strace */
    bool        interp_only;    /* --interp: run the interpreter, not the JIT */
    uint64_t    stack_size;     /* -s, default 8 MiB */
    const char *argv0;          /* -0 */
    const char *cache_dir;      /* --cache-dir / XLAT_CACHE_DIR: the translation cache's */
    const char *cpu_model;      /* -cpu ISA string as given, NULL for the default (max) */
    int         gdb_port;       /* -g: wait for gdb on this TCP port (0: no gdbstub) */
    bool        perfmap;        /* -perfmap: write /tmp/perf-PID.map */
    bool        jitdump;        /* -jitdump: write jit-PID.dump for perf inject */
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


#endif
