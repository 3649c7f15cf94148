/*
 * Loading a riscv64 ELF program and building its initial stack.
 */
#ifndef XLAT_USER_LOADER_H
#define XLAT_USER_LOADER_H

#include <stddef.h>
#include <stdint.h>

/* What the loader learned about the program; the stack builder's input. */
typedef struct GuestImage {
    uint64_t entry;        /* where execution starts (the interpreter's entry if PT_INTERP) */
    uint64_t prog_entry;   /* the program's own e_entry + load bias (AT_ENTRY) */
    uint64_t load_bias;    /* 0 for ET_EXEC, chosen base for ET_DYN */
    uint64_t phdr;         /* guest address of the program headers (AT_PHDR) */
    uint64_t phnum, phent;
    uint64_t interp_base;  /* AT_BASE: load address of PT_INTERP, 0 if none */
    uint64_t brk;          /* end of the highest segment, page aligned */
    const char *path;      /* host path of the program */
} GuestImage;

/*
 * Load the ELF file open on fd (named path, for /proc/self/maps) into the
 * guest window. On error returns -1 and writes a one-line reason (no
 * trailing newline) to err, e.g. "not a riscv64 ELF (e_machine 62)" or
 * "truncated program header table".
 */
int elf_load_fd(int fd, const char *path, GuestImage *img, char *err, size_t errlen);

/*
 * Same, from bytes already in memory (used by the unit tests and fuzzers).
 * `path` is only for AT_EXECFN/diagnostics.
 */
int elf_load_mem(const uint8_t *data, size_t size, const char *path,
                 GuestImage *img, char *err, size_t errlen);

/*
 * Map the guest stack (stack_size bytes) and lay out argc, argv, envp and
 * auxv exactly as Linux does for a riscv64 process. execfn is AT_EXECFN
 * (img->path if NULL). Returns the initial guest sp, or 0 after printing
 * a message if the stack cannot be mapped or the strings do not fit.
 */
uint64_t stack_setup(const GuestImage *img, int argc, char *const argv[],
                     char *const envp[], const char *execfn, uint64_t stack_size);

/*
 * Where stack_setup() put the auxiliary vector: guest address and length in
 * bytes, AT_NULL pair included (for /proc/self/auxv). 0 before stack_setup.
 */
extern uint64_t stack_auxv_addr, stack_auxv_len;

#endif
