/*
 * Host (x86-64) disassembly for -d out_asm, through the Capstone library.
 */
#ifndef XLAT_X86_DISAS_H
#define XLAT_X86_DISAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Print `size` bytes of host code read at `code` (the RW view), addressed
 * as running at `addr` (the RX view): one line per instruction with its
 * address, bytes and Intel-syntax text. Undecodable bytes (e.g. data)
 * are printed as .byte lines.
 */
void host_disas(FILE *f, const void *code, size_t size, uint64_t addr);

/* Can this binary disassemble host code? (A static musl build cannot.) */
bool host_disas_available(void);

#endif
