/*
 * What every riscv64 ELF loader checks of an ELF header, whatever it loads
 * (user mode's programs and interpreters, system mode's kernels and
 * bare-metal images), and the loaders' error convention.
 */
#ifndef XLAT_RISCV_ELF_HEADER_H
#define XLAT_RISCV_ELF_HEADER_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* Formats a message into err (when err and errlen are given) and returns
 * -1, so a check can `return elf_error(err, errlen, ...)`. */
int elf_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The header h of a file of size bytes is a 64-bit little-endian current-
 * version RISC-V ELF whose program header table (1 to max_phdr_bytes bytes
 * of Elf64_Phdr entries) lies inside the file. The type (ET_EXEC, ET_DYN)
 * is the caller's to check. 0, or -1 with the reason in err. */
int riscv_elf_check_header(const Elf64_Ehdr *h, size_t size, size_t max_phdr_bytes, char *err,
                           size_t errlen);

#endif
