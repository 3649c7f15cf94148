/*
 * The persistent translation cache's files (pcache_file.c) as its core
 * (pcache.c) sees them: the on-disk layout, the modules (the files whose
 * code is kept) and the cache directory. Private to the two.
 */
#ifndef XLAT_EXEC_PCACHE_FILE_H
#define XLAT_EXEC_PCACHE_FILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "exec/tb.h"
#include "x86/emit.h"             /* enum emit_reloc_kind */

#define PC_MAGIC "XLATPC05"
#define MAX_MODULES 512
#define FILE_MAX (256u << 20)           /* one cache file's bytes at most */
#define DIR_MAX_DEFAULT (1024ull << 20) /* the directory's (XLAT_CACHE_SIZE, MiB) */
#define TOUCH_AFTER 3600                /* seconds between mtime touches (LRU) */

/* -- On disk ---------------------------------------------------------------------------- */

typedef struct FileHead {
    char magic[8];
    uint64_t build;             /* xlat's own build id, hashed */
    uint64_t config;            /* the options that shape translated code, hashed */
    uint8_t id[32];             /* the module's identity */
    uint32_t idlen, pad;
    uint64_t size;              /* the module's size in bytes */
    uint64_t nent;              /* table entries, sorted by offset */
    uint64_t data_len;          /* record bytes after the table */
    uint64_t sum;               /* hash of this header (sum 0) and the table */
} FileHead;

typedef struct FileEnt {
    uint64_t off;               /* file offset of the block's first instruction */
    uint32_t pos, len;          /* its record: data + pos */
    uint64_t sum;               /* hash of the record */
} FileEnt;

/*
 * A file: FileHead, FileEnt[nent] (hashed with the header), then for each
 * entry the programs its block ran hot in (prog_bits of each, or'ed): a
 * hint that only chooses when a translation is installed, so it is not
 * hashed and a process notes itself there in place (pcache_note_programs),
 * not by rewriting the file. Then the records.
 */
#define ENT_BYTES (sizeof(FileEnt) + sizeof(uint64_t))   /* an entry's, table and progs */

static inline const uint64_t *file_progs(const FileHead *h)
{
    return (const uint64_t *)((const FileEnt *)(h + 1) + h->nent);
}

static inline const uint8_t *file_records(const FileHead *h)
{
    return (const uint8_t *)(file_progs(h) + h->nent);
}

/* Whether a file of nent entries and data_len record bytes stays within FILE_MAX. */
static inline bool pcache_file_fits(uint64_t nent, uint64_t data_len)
{
    return sizeof(FileHead) + nent * ENT_BYTES + data_len <= FILE_MAX;
}

/*
 * A record: RecHead, then, each 8-byte aligned: its slots, its pc map
 * pairs, its near relocations, its other relocations, guest bytes, hot
 * code, cold code.
 *
 * A near relocation is a rel32 field that points from one part to another
 * (hot to cold, either to the runtime stubs, cold back to hot): 10 of a
 * python3 record's 14 relocations. Each is its field's 16-bit offset in
 * its part, listed by kind, and the field holds its target's offset in the
 * target part minus the offset of its own end: one constant per kind (the
 * distance between the two parts where they are installed) moves them all.
 */
enum { NEAR_HOT_COLD, NEAR_HOT_RUNTIME, NEAR_COLD_HOT, NEAR_COLD_RUNTIME, NEAR_KINDS };
enum { PART_HOT, PART_COLD, PART_RUNTIME };

typedef struct RecHead {
    uint64_t pc;                /* where the code was when translated */
    uint32_t guest_size, host_size, cold_size;
    uint16_t ninsns, nrel;      /* nrel: the other relocations */
    uint16_t nnear[NEAR_KINDS];
    uint8_t exit_kind, nremap, pinned, hot_mod, cold_mod, nslots;
    TBRemap remap[TB_MAX_REMAP];
} RecHead;

/* Slot s of the block (s < nslots, slots 0.. in order, as TB.jmp_field). */
typedef struct RecSlot {
    uint32_t field;             /* from the entry, or IN_COLD + from the cold code's start
                                 * (a trampoline's) */
    uint32_t stub;              /* from the cold code's start */
} RecSlot;

typedef struct RecReloc {
    uint16_t at;                /* field offset in its part (< TRANSLATE_MAX_HOST) */
    uint8_t kind;               /* enum emit_reloc_kind, not ER_REL32 (near) */
    uint8_t part;               /* the field's */
    uint32_t val;               /* GUEST: bytes accessed; TB: offset in the TB;
                                 * HOSTFN: address - pcache_anchor, signed */
} RecReloc;

#define IN_COLD 0x80000000u

/* The bytes of a relocation's field. */
static inline unsigned rel_width(unsigned kind)
{
    return kind == ER_REL32 || kind == ER_GUEST_S32 || kind == ER_GUEST_U32 ? 4 : 8;
}

static inline size_t up8(size_t n) { return (n + 7) & ~(size_t)7; }

static inline unsigned rec_nnear(const RecHead *h)
{
    unsigned n = 0;
    for (int k = 0; k < NEAR_KINDS; k++)
        n += h->nnear[k];
    return n;
}

static inline size_t rec_size(const RecHead *h)
{
    return sizeof *h + up8(h->nslots * sizeof(RecSlot)) + up8(h->ninsns * 4u) +
           up8(rec_nnear(h) * 2u) + h->nrel * sizeof(RecReloc) + up8(h->guest_size) +
           up8(h->host_size) + up8(h->cold_size);
}

/*
 * A start image (pcache_image.c): ImgHead, then its blocks' table, pc map
 * pairs, near fields by kind, other relocations, chains, guest bytes, hot
 * code and cold code, each but the last 8-aligned.
 */
#define IMG_MAGIC "XLATIM02"

typedef struct ImgHead {
    char magic[8];
    uint64_t build, config;     /* as FileHead */
    uint8_t id[32];             /* the file's identity */
    uint32_t idlen, nblk;
    uint64_t size;              /* the file's size */
    uint64_t prog;              /* prog_key of the program */
    uint64_t delta;             /* guest address - file offset of the blocks */
    uint32_t hot_len, cold_len, npairs, nrel, guest_len;
    uint32_t nnear[NEAR_KINDS];
    uint32_t nchain;            /* direct exits chained to a block of the image */
    uint64_t sum;               /* hash of the whole image, this field 0 */
} ImgHead;

/* -- Hashing ------------------------------------------------------------------------------ */

/* Against accidents (a torn or damaged file), not against an adversary:
 * four independent lanes of multiply-xorshift, so that a record costs
 * little more than reading it. Scalar on purpose: SSE2 has no 64-bit
 * multiply, and GCC's vectorized lanes ran at half the speed. */
#if defined(__GNUC__) && !defined(__clang__)
#define HASH_SCALAR __attribute__((optimize("no-tree-vectorize")))
#else
#define HASH_SCALAR
#endif

static inline uint64_t hash_lane(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    return h ^ (h >> 32);
}

/* 32 bytes into the four lanes. */
static inline HASH_SCALAR void hash_32(uint64_t h[4], const uint8_t *b)
{
    for (int i = 0; i < 4; i++) {
        uint64_t w;
        memcpy(&w, b + 8 * i, 8);
        h[i] = hash_lane(h[i], w);
    }
}

static inline HASH_SCALAR uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const uint8_t *b = p;
    uint64_t len = n;
    uint64_t h[4] = { seed ^ (n * 0x9e3779b97f4a7c15ULL), seed + 0x632be59bd9b4e019ULL,
                      seed ^ 0x85ebca77c2b2ae63ULL, seed - 0x27d4eb2f165667c5ULL };
    for (; n >= 32; b += 32, n -= 32)
        hash_32(h, b);
    uint8_t tail[32] = { 0 };           /* the rest, zero-padded */
    memcpy(tail, b, n);
    hash_32(h, tail);
    uint64_t r = hash_lane(h[0] ^ (h[1] << 17 | h[1] >> 47), h[2] ^ (h[3] << 31 | h[3] >> 33));
    r = (r ^ len) * 0xc4ceb9fe1a85ec53ULL;
    return r ^ (r >> 29);
}

/* The parts of a record (pcache_record accepted it). */
typedef struct Rec {
    const RecHead *h;
    const RecSlot *slots;
    const uint16_t (*map)[2];
    const uint16_t *near;       /* nnear[0] of kind 0, then of kind 1... */
    const RecReloc *rel;
    const uint8_t *guest, *hot, *cold;
} Rec;

/* The parts a near relocation of kind k points from and to. */
static inline unsigned near_from(int k) { return k <= NEAR_HOT_RUNTIME ? PART_HOT : PART_COLD; }
static inline unsigned near_to(int k)
{
    return k == NEAR_HOT_COLD ? PART_COLD : k == NEAR_COLD_HOT ? PART_HOT : PART_RUNTIME;
}

Rec pcache_rec_parts(const RecHead *h);

/* The code at off moved up to the alignment mod (of 64) it was made at. */
size_t pcache_align(size_t off, unsigned mod);
/* Copy the record r of the block now at pc to hot_code and cold_code, at
 * offsets hot and cold of a space whose offset 0 is the runtime stubs',
 * relocated for tb; with defer, its TB and host-function relocations are
 * appended there instead (*ndefer of them). False: it does not fit at pc. */
bool pcache_place(const Rec *r, uint64_t pc, TB *tb, uint8_t *hot_code, uint8_t *cold_code,
                  size_t hot, size_t cold, RecReloc *defer, unsigned *ndefer);
/* What a TB takes from a record or an image's block. */
typedef struct TBShape {
    uint32_t guest_size, host_size, cold_size;
    unsigned ninsns, exit_kind, nremap, nslots;
    const TBRemap *remap;
    const RecSlot *slots;
    const uint16_t (*map)[2];
} TBShape;
/* A record's shape. */
TBShape pcache_rec_shape(const Rec *r);
/* tb's shape, its code at hot and cold (code buffer offsets): sizes, slots
 * (its exit stubs claimed), pc map. */
void pcache_shape_tb(TB *tb, size_t hot, size_t cold, const TBShape *s);
/* A near field at `at` inside its part's code (from_len bytes), its
 * target inside the part it points to (to_len bytes). */
bool pcache_near_field_ok(const uint8_t *code, uint32_t at, uint32_t from_len, uint32_t to_len);
/* The guest's code at phys is these size bytes (its pages watched first). */
bool pcache_guest_same(uint64_t phys, const uint8_t *guest, size_t size);
/* Every slot's jump field and exit stub inside a block's code, every pc
 * map pair inside its host and guest code (a record's or an image's). */
bool pcache_shape_ok(const TBShape *s);
/* A host function's address from a relocation's value. */
uint64_t pcache_hostfn(uint32_t val);

/* -- Modules ------------------------------------------------------------------------------ */

/* One record this process made: the block's file offset, where its bytes
 * are in Module.cap, and their hash (taken while they are in the cache). */
typedef struct Capture { uint64_t off; size_t pos; uint32_t len; uint64_t sum; } Capture;

typedef struct Module {
    uint8_t id[32];
    uint32_t idlen;
    uint64_t size;
    dev_t dev;                  /* of the file it was last registered from */
    ino_t ino;
    struct timespec mtime;
    char *name;
    int state;                  /* 0: cache file not looked for, 1: mapped, -1: none */
    const uint8_t *map;
    size_t maplen;
    const FileEnt *ent;
    const uint64_t *progs;      /* file_progs of the mapped file */
    ino_t map_ino;              /* the mapped file's (pcache_note_programs writes to it) */
    uint64_t nent;
    const uint8_t *data;
    uint64_t data_len;
    uint8_t *cap;               /* captured records, back to back */
    size_t caplen, capmax;
    Capture *capidx;
    size_t ncap, capidxmax;
    uint64_t *hot;              /* offsets of entries installed once hot here whose */
    size_t nhot, hotmax;        /* progs lack this program (in the order installed) */
    /* Where this process runs the file's code: guest address - file offset,
     * while delta_state is 1 (0: not seen yet, -1: at several places). */
    uint64_t delta;
    int delta_state;
    int img_state;              /* this program's image of it: pcache_image.c */
    uint32_t img_blocks;        /* blocks the image held */
    size_t img_first, img_end;  /* the TBs it installed, while flush_gen is img_gen */
    uint64_t img_gen;
} Module;

extern Module modules[MAX_MODULES];
extern int nmodules;
extern int dir_fd;                      /* the cache directory */
extern uid_t pcache_owner;              /* its user's id: xlat's effective uid at exec */
extern uint64_t build_hash, config_hash, dir_max;
/*
 * The program this process runs (the first module, its main executable),
 * as two bits of 64: a file's progs are Bloom filters of the programs in
 * which each block ran hot (was translated, or installed after its first
 * runs). A block kept for other programs only is run the way a cold
 * process would (interpreted at first) and installed instead of
 * translated once it is hot here: /usr/bin/true with a cache that python3
 * filled installed 894 blocks instead of its own 343, most of them run
 * once (an install costs about what six interpreted runs do), and took
 * 20 % longer. A full filter only installs everything at once again.
 * 0: no program yet.
 */
extern uint64_t prog_bits;
/* The same program's identity whole (its hash), naming its images. */
extern uint64_t prog_key;

/* The identity of a file of size bytes: 'b' + its ELF build id, or 'h' +
 * a hash of all its bytes. d holds the first avail of them: false if that
 * is not enough to say (the build id may lie further, or there is none). */
bool pcache_identify(const uint8_t *d, size_t avail, size_t size, uint8_t id[32],
                     uint32_t *idlen);
/* xlat's own build id, hashed (0: it has none). */
uint64_t pcache_build_hash(void);
/* The cache directory at path (made below its first keep bytes if need
 * be), if it is this user's alone: its descriptor, else -1. */
int pcache_open_dir(char *path, size_t keep);

/* m's code runs at guest address - file offset = delta here. */
void pcache_note_delta(Module *m, uint64_t delta);
/* Write this program's images of the modules it ran (pcache_flush). */
void pcache_image_flush(void);
/* A forked child writes no images: its parent's run is the program's. */
void pcache_image_fork_child(void);
/* The hash an image of len bytes at p carries (its sum). */
uint64_t pcache_image_sum(const uint8_t *p, size_t len);
/* Why the image file at p (len bytes) is not m's for this program, or NULL. */
const char *pcache_image_check(const uint8_t *p, size_t len, const Module *m);
/* A cache file's name: m's (prog 0), or m's image for program prog. */
void pcache_file_name(const Module *m, uint64_t prog, char *buf, size_t len);
/* The why of pcache_map_owned when there is no such file. */
extern const char pcache_no_file[];
struct stat;
/* A regular file of this user's (the cache directory's files are). */
bool pcache_own_file(const struct stat *st);
/* Map the cache file name if this user owns it alone and it holds between
 * min and FILE_MAX bytes: its bytes (*len of them; munmap them), else NULL
 * and why. touch: mark it recently used. */
const uint8_t *pcache_map_owned(const char *name, size_t min, size_t *len, ino_t *ino,
                                const char **why, bool touch);
/* Write a new cache file name through fill, renamed into place whole. */
bool pcache_write_new(const char *name, bool (*fill)(int fd, void *arg), void *arg);
/* Map m's cache file, if it holds in every way its header says: its bytes
 * (munmap them) and, if ino is not NULL, its inode number; else NULL and
 * why. touch: mark it recently used. */
const uint8_t *pcache_map_file(const Module *m, size_t *len, ino_t *ino, const char **why,
                               bool touch);
/* Why the cache file image p (len bytes) is not m's, or NULL. */
const char *pcache_file_check(const uint8_t *p, size_t len, const Module *m);
/* m's cache file looked up once, by the first thread to ask: m->state. */
int pcache_module_state(Module *m);
/* The entry for file offset off, or NULL. */
const FileEnt *pcache_find(const FileEnt *ent, uint64_t n, uint64_t off);
/* The record of an entry if its bounds, sizes, hash, relocations, slots
 * and pc map hold (all a record says but its guest code), else NULL. */
const RecHead *pcache_record(const uint8_t *data, uint64_t data_len, const FileEnt *fe);
/* Write m's captures merged with its file as it is now; false if not written. */
bool pcache_write_module(Module *m);
/* Note this program in the progs of m's hot list, in place in m's file. */
void pcache_note_programs(const Module *m);
/* Add what this process wrote to the directory's ledger; past dir_max,
 * list it and remove the least recently used files. */
void pcache_account(void);
/* Grow *p (of *max units of unit bytes) to hold need units. */
bool pcache_grow(void **p, size_t *max, size_t need, size_t unit);

#endif
