/*
 * Telling host profilers about translated code: -perfmap writes
 * /tmp/perf-PID.map ("HOSTADDR SIZE name" per block, read by perf report),
 * -jitdump writes ./jit-PID.dump (the jitdump format with JIT_CODE_LOAD
 * records, for `perf record -k mono` + `perf inject --jit`). Blocks are
 * named by the mode's namer (user mode: the guest symbol they start in,
 * user/symbols.c).
 */
#ifndef XLAT_EXEC_PERFMAP_H
#define XLAT_EXEC_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern int perfmap_enabled;             /* nonzero if either output is on */

/* Writes a name for the block at guest_pc into buf (len bytes). */
typedef void (*PerfmapNamer)(uint64_t guest_pc, char *buf, size_t len);

/* Open the outputs asked for (-perfmap, -jitdump); blocks named by namer. */
void perfmap_init(bool perf_map, bool jitdump, PerfmapNamer namer);

/* A block for guest_pc now lives at host [code, code+size). */
void perfmap_add(uint64_t guest_pc, const void *code, uint32_t size);

/* Flush the outputs (at exit). */
void perfmap_close(void);

#endif
