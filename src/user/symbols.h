/*
 * Guest ELF symbol tables, for naming translated code (-perfmap, -jitdump):
 * the main program's and every file the guest maps executable (its ld.so
 * loading shared libraries), each with its load bias.
 */
#ifndef XLAT_USER_SYMBOLS_H
#define XLAT_USER_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read the function symbols (.symtab, else .dynsym) of the ELF file at path,
 * loaded with bias (guest address = st_value + bias). */
void symbols_add_file(const char *path, uint64_t bias);

/* The guest mapped offset `off` of file descriptor fd executable at addr:
 * find the PT_LOAD it holds, derive the bias, read the symbols. */
void symbols_add_mapping(int fd, uint64_t off, uint64_t addr);

/* The program interpreter (PT_INTERP of exe, looked up under prefix first,
 * as -L does) was loaded at base. */
void symbols_add_interp(const char *exe, const char *prefix, uint64_t base);

/* Name pc as "symbol+0xoff" (or "0xPC" when unknown) into buf. */
void symbols_name(uint64_t pc, char *buf, size_t len);

#endif
