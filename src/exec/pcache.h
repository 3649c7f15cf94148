/*
 * The persistent translation cache: translations of code that comes from a
 * file (a program, ld.so, a library) kept on disk between processes, and
 * moved to wherever a later process maps that file (pcache.c says how).
 *
 * A mode names the file behind its code: it registers each file it maps
 * for execution (pcache_module_fd, pcache_module_bytes) and answers
 * guest_mem.ops->code_origin for a pc. The core captures what it
 * translates there (tb_cache.c, around translate_block) and, on a miss,
 * installs a kept translation instead of translating (tb_from_pcache).
 */
#ifndef XLAT_EXEC_PCACHE_H
#define XLAT_EXEC_PCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/tb.h"
#include "x86/emit.h"

/* Where the code at a guest address comes from (guest_mem.ops->code_origin). */
typedef struct PcacheOrigin {
    int module;             /* pcache_module_*'s number */
    uint64_t delta;         /* guest address - file offset, over [lo, hi) */
    uint64_t lo, hi;        /* the guest range mapped from the file alike */
} PcacheOrigin;

/* On, once pcache_init found a cache directory it trusts. */
extern bool pcache_on;

/* A mode that answers code_origin turns the cache on after exec_init (the
 * runtime stubs and the register mapping are fixed), unless --tune
 * no-cache: in dir (NULL: ${XDG_CACHE_HOME:-~/.cache}/xlat/code), bounded
 * by XLAT_CACHE_SIZE; own_fd moves the directory's descriptor out of the
 * guest's way (returns the new number). */
void pcache_init(int (*own_fd)(int fd), const char *dir);

/* The module number of a file mapped for execution (its build id and
 * size, else a hash of its bytes), or -1. st: the caller's fstat of fd
 * (NULL if it failed); name is for -d cache. */
struct stat;
int pcache_module_fd(int fd, const struct stat *st, const char *name);
int pcache_module_bytes(const void *data, size_t size, const char *name);

/* -- Capture (tb_cache.c, tb_lock held) -- */

/* Should the block at pc be kept? Then emit_relocs records its translation. */
bool pcache_capture_begin(uint64_t pc);
/* tb is translated (hot code at its entry, cold code at cold): keep it. */
void pcache_capture_end(const TB *tb, const uint8_t *cold, const uint16_t map[][2]);

/* -- Install (tb_cache.c, code lock and tb_lock held) -- */

/* A kept translation of the code at a pc (pcache_lookup found it). */
typedef struct PcacheHit {
    struct Module *module;
    const struct FileEnt *ent;
    PcacheOrigin origin;
} PcacheHit;

/* Is there a kept translation of the code at pc? (The code lock held.) */
bool pcache_lookup(uint64_t pc, PcacheHit *hit);

/* Was the kept translation hot in this program before (prog_bits)? */
bool pcache_hit_ours(const PcacheHit *hit);

/* What is kept for pc? The question every miss asks first, with no lock
 * (tb_lock may be held): nothing; a translation hot in this program
 * before; one hot in other programs only (run it as a cold process would,
 * pcache_file.h's prog_bits says why); or "ask pcache_lookup". */
enum { PCACHE_NONE, PCACHE_OURS, PCACHE_OTHERS, PCACHE_ASK };
int pcache_hint(uint64_t pc);
/* An executable mapping changed (exec_invalidate_range): what
 * pcache_hint remembers is stale. */
void pcache_mappings_changed(void);

/*
 * Fill tb (pc, phys, flags set) from hit if it fits the code there now,
 * hot code at code_rw + *hot_off and cold code at code_rw + *cold_off
 * (both moved up to the alignment it was made at: it may pad them), and
 * its pcmap. False if it does not fit, nothing written.
 */
bool pcache_fill(TB *tb, const PcacheHit *hit, size_t *hot_off, size_t *cold_off);

/*
 * Start images (pcache_image.c): every block this program ran in a file,
 * laid out as one piece, installed at once at the first install from that
 * file (the code lock and tb_lock held; key: the block asked for). Due:
 * not tried yet in this process.
 */
bool pcache_image_due(const PcacheHit *hit);
void pcache_image_install(const PcacheHit *hit, const TBKey *key);

/* Write what this process translated (process exit, before an execve). */
void pcache_flush(void);
/* A forked child keeps its parent's modules, not its parent's captures. */
void pcache_fork_child(void);

#endif
