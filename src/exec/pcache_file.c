/*
 * The persistent translation cache's files: which file a module is (its
 * ELF build id and size, else a hash of its bytes), the cache directory,
 * and the cache files, read (every bound and hash checked before anything
 * in them is believed) and written (merged, then renamed into place).
 * The layout and the reasons are in pcache.c and pcache_file.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "exec/lock.h"
#include "exec/pcache.h"
#include "exec/pcache_file.h"
#include "exec/settings.h"
#include "riscv/translate.h"
#include "x86/backend.h"

#define MODULE_MAX (1ull << 30)         /* a mapped file's bytes at most */

static void module_open(Module *m);

Module modules[MAX_MODULES] LARGE_BSS;
int nmodules;
LEAF_MUTEX(module_lock)
int dir_fd = -1;
const char pcache_no_file[] = "no cache file";
uid_t pcache_owner;
uint64_t build_hash, config_hash, prog_bits, prog_key;
uint64_t dir_max = DIR_MAX_DEFAULT;

/* -- Modules ------------------------------------------------------------------------------ */

/*
 * An ELF file's GNU build id, from its program headers' notes: 1 and the
 * id (in d), 0 if it has none, or -1 if it may lie beyond the first avail
 * of the file's size bytes that d holds.
 */
static int elf_build_id(const uint8_t *d, size_t avail, size_t size, const uint8_t **id,
                        uint32_t *len)
{
    Elf64_Ehdr eh;                      /* copied: the file's offsets need not be aligned */
    if (avail < sizeof eh)
        return avail < size ? -1 : 0;
    memcpy(&eh, d, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
        (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
        return 0;
    if (eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) > avail)
        return -1;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, d + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_NOTE || ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
            continue;
        if (ph.p_offset + ph.p_filesz > avail)
            return -1;
        const uint8_t *p = d + ph.p_offset, *end = p + ph.p_filesz;
        while (end - p >= (ptrdiff_t)sizeof(Elf64_Nhdr)) {
            Elf64_Nhdr n;
            memcpy(&n, p, sizeof n);
            size_t name = (n.n_namesz + 3) & ~3u, desc = (n.n_descsz + 3) & ~3u;
            if (name > (size_t)(end - p) - sizeof n || desc > (size_t)(end - p) - sizeof n - name)
                break;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
                memcmp(p + sizeof n, "GNU", 4) == 0 && n.n_descsz >= 8 && n.n_descsz <= 31) {
                *id = p + sizeof n + name;
                *len = n.n_descsz;
                return 1;
            }
            p += sizeof n + name + desc;
        }
    }
    return 0;
}

bool pcache_identify(const uint8_t *d, size_t avail, size_t size, uint8_t id[32],
                     uint32_t *idlen)
{
    const uint8_t *bid;
    uint32_t n;
    memset(id, 0, 32);
    int found = elf_build_id(d, avail, size, &bid, &n);
    if (found > 0) {
        id[0] = 'b';
        memcpy(id + 1, bid, n);
        *idlen = n + 1;
        return true;
    }
    if (found < 0 || avail < size)
        return false;
    uint64_t h[2] = { hash_bytes(d, size, 1), hash_bytes(d, size, 2) };
    id[0] = 'h';
    memcpy(id + 1, h, sizeof h);
    *idlen = 1 + sizeof h;
    return true;
}

static int module_add(const uint8_t id[32], uint32_t idlen, uint64_t size, const struct stat *st,
                      const char *name)
{
    for (int i = 0; i < nmodules; i++)
        if (modules[i].size == size && modules[i].idlen == idlen &&
            memcmp(modules[i].id, id, idlen) == 0)
            return i;
    if (nmodules == MAX_MODULES)
        return -1;
    Module *m = &modules[nmodules];
    memset(m, 0, sizeof *m);
    memcpy(m->id, id, 32);
    m->idlen = idlen;
    m->size = size;
    if (nmodules == 0) {
        uint64_t h = hash_bytes(id, idlen, 7);
        prog_key = h | 1;
        prog_bits = 1ull << (h & 63) | 1ull << (h >> 6 & 63);
    }
    if (st) {
        m->dev = st->st_dev;
        m->ino = st->st_ino;
        m->mtime = st->st_mtim;
    }
    m->name = strdup(name ? name : "?");
    return nmodules++;
}

int pcache_module_fd(int fd, const struct stat *st, const char *name)
{
    /* The headers and notes are in the first page of a linked file: read
     * once, for the magic and the identity, rather than map the whole file
     * (a map and an unmap each start). */
    uint8_t head[4096] __attribute__((aligned(8)));
    ssize_t got;
    /* ELF files only: not a JIT's memfd or a data file mapped executable. */
    if (!pcache_on || !st || !S_ISREG(st->st_mode) || st->st_size <= 0 ||
        (uint64_t)st->st_size > MODULE_MAX || (got = pread(fd, head, sizeof head, 0)) < SELFMAG ||
        memcmp(head, ELFMAG, SELFMAG) != 0)
        return -1;
    pthread_mutex_lock(&module_lock);
    int r = -1;
    for (int i = 0; i < nmodules; i++)          /* the same file again: no need to read it */
        if (modules[i].dev == st->st_dev && modules[i].ino == st->st_ino &&
            modules[i].size == (uint64_t)st->st_size &&
            modules[i].mtime.tv_sec == st->st_mtim.tv_sec &&
            modules[i].mtime.tv_nsec == st->st_mtim.tv_nsec) {
            r = i;
            goto out;
        }
    uint8_t id[32];
    uint32_t idlen;
    size_t size = (size_t)st->st_size;
    if (!pcache_identify(head, (size_t)got, size, id, &idlen)) {
        void *d = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (d == MAP_FAILED)
            goto out;
        pcache_identify(d, size, size, id, &idlen);
        munmap(d, size);
    }
    r = module_add(id, idlen, (uint64_t)size, st, name);
out:
    pthread_mutex_unlock(&module_lock);
    return r;
}

int pcache_module_bytes(const void *data, size_t size, const char *name)
{
    if (!pcache_on || size == 0)
        return -1;
    uint8_t id[32];
    uint32_t idlen;
    pcache_identify(data, size, size, id, &idlen);
    pthread_mutex_lock(&module_lock);
    int r = module_add(id, idlen, size, NULL, name);
    pthread_mutex_unlock(&module_lock);
    return r;
}

void pcache_file_name(const Module *m, uint64_t prog, char *buf, size_t len)
{
    static const char digits[16] = "0123456789abcdef";
    char hex[65];
    uint32_t n = m->idlen < 32 ? m->idlen : 32;
    for (uint32_t i = 0; i < n; i++) {     /* a snprintf a byte was 1 % of a warm start */
        hex[2 * i] = digits[m->id[i] >> 4];
        hex[2 * i + 1] = digits[m->id[i] & 15];
    }
    hex[2 * n] = 0;
    if (prog)
        snprintf(buf, len, "%s-%llx-%016llx-%016llx.xc", hex, (unsigned long long)m->size,
                 (unsigned long long)config_hash, (unsigned long long)prog);
    else
        snprintf(buf, len, "%s-%llx-%016llx.xc", hex, (unsigned long long)m->size,
                 (unsigned long long)config_hash);
}

/* -- Opening a cache file ---------------------------------------------------------------- */

/* A cache file of m's that this user owns alone, mapped and its header and
 * table checked: its bytes, else NULL (why in *why). */
const char *pcache_file_check(const uint8_t *p, size_t len, const Module *m)
{
    const FileHead *h = (const void *)p;
    if (len < sizeof *h || len > FILE_MAX)
        return "truncated";
    FileHead copy = *h;
    copy.sum = 0;
    if (memcmp(h->magic, PC_MAGIC, 8) != 0 || h->build != build_hash || h->config != config_hash)
        return "another xlat build or options";
    if (h->idlen != m->idlen || memcmp(h->id, m->id, 32) != 0 || h->size != m->size)
        return "another file's";
    if (h->nent > len / ENT_BYTES || h->data_len > len ||
        sizeof *h + h->nent * ENT_BYTES + h->data_len != len)
        return "truncated";
    if (hash_bytes(h + 1, h->nent * sizeof(FileEnt), hash_bytes(&copy, sizeof copy, 3)) != h->sum)
        return "corrupted";
    return NULL;
}

bool pcache_own_file(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == pcache_owner;
}

const uint8_t *pcache_map_owned(const char *name, size_t min, size_t *len, ino_t *ino,
                                const char **why, bool touch)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *why = pcache_no_file;
        return NULL;
    }
    struct stat st;
    const uint8_t *p = NULL;
    if (fstat(fd, &st) != 0 || !pcache_own_file(&st) || (st.st_mode & 077)) {
        *why = "not this user's own file (refused)";
        goto out;
    }
    if ((uint64_t)st.st_size < min || (uint64_t)st.st_size > FILE_MAX) {
        *why = "truncated";
        goto out;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        *why = "cannot map";
        goto out;
    }
    p = map;
    *len = (size_t)st.st_size;
    if (ino)
        *ino = st.st_ino;
    if (touch && time(NULL) - st.st_mtime > TOUCH_AFTER)
        futimens(fd, NULL);             /* recently used (eviction goes by mtime) */
out:
    close(fd);
    return p;
}

const uint8_t *pcache_map_file(const Module *m, size_t *len, ino_t *ino, const char **why,
                               bool touch)
{
    char name[128];
    pcache_file_name(m, 0, name, sizeof name);
    const uint8_t *p = pcache_map_owned(name, sizeof(FileHead), len, ino, why, touch);
    if (p && (*why = pcache_file_check(p, *len, m)) != NULL) {
        munmap((void *)p, *len);
        p = NULL;
    }
    return p;
}

int pcache_module_state(Module *m)
{
    int state = __atomic_load_n(&m->state, __ATOMIC_ACQUIRE);
    if (state == 0) {                   /* threads may ask at once (the code lock is shared) */
        pthread_mutex_lock(&module_lock);
        if (m->state == 0)
            module_open(m);
        state = m->state;
        pthread_mutex_unlock(&module_lock);
    }
    return state;
}

/* With module_lock held. */
static void module_open(Module *m)
{
    const char *why = NULL;
    size_t len = 0;
    ino_t ino = 0;
    const uint8_t *p = pcache_map_file(m, &len, &ino, &why, true);
    if (!p) {
        __atomic_store_n(&m->state, -1, __ATOMIC_RELEASE);
        xlat_log(LOG_CACHE, "cache: %s: %s\n", m->name, why);
        return;
    }
    const FileHead *h = (const void *)p;
    m->map = p;
    m->maplen = len;
    m->ent = (const void *)(h + 1);
    m->nent = h->nent;
    m->progs = file_progs(h);
    m->map_ino = ino;
    m->data = file_records(h);
    m->data_len = h->data_len;
    __atomic_store_n(&m->state, 1, __ATOMIC_RELEASE);
    xlat_log(LOG_CACHE, "cache: %s: %llu translations\n", m->name, (unsigned long long)m->nent);
}

const FileEnt *pcache_find(const FileEnt *ent, uint64_t n, uint64_t off)
{
    if (n == 0)
        return NULL;
    /* The last entry at or below off, in steps without a branch on the
     * comparison (a conditional move): which way a probe goes is a coin
     * toss, and most of a warm start's questions are misses. */
    const FileEnt *b = ent;
    while (n > 1) {
        uint64_t half = n / 2;
        b = b[half].off <= off ? b + half : b;
        n -= half;
    }
    return b->off == off ? b : NULL;
}

static uint32_t part_size(const RecHead *h, unsigned part)
{
    return part == PART_HOT ? h->host_size : part == PART_COLD ? h->cold_size : (uint32_t)code_base;
}

bool pcache_near_field_ok(const uint8_t *code, uint32_t at, uint32_t from_len, uint32_t to_len)
{
    if (at > from_len || from_len - at < 4)
        return false;
    int32_t v;
    memcpy(&v, code + at, 4);
    int64_t target = (int64_t)v + at + 4;
    return target >= 0 && target < to_len;
}

/* Every near relocation's field inside its part and its target inside the other. */
static bool near_ok(const Rec *r)
{
    const RecHead *h = r->h;
    const uint16_t *at = r->near;
    for (int k = 0; k < NEAR_KINDS; k++) {
        unsigned from = near_from(k);
        const uint8_t *code = from == PART_HOT ? r->hot : r->cold;
        for (unsigned i = 0; i < h->nnear[k]; i++, at++)
            if (!pcache_near_field_ok(code, *at, part_size(h, from), part_size(h, near_to(k))))
                return false;
    }
    return true;
}

/* The other relocations' fields inside their parts. */
static bool relocs_ok(const RecHead *h, const RecReloc *rel)
{
    for (uint32_t i = 0; i < h->nrel; i++) {
        const RecReloc *r = &rel[i];
        unsigned width = rel_width(r->kind);
        if (r->part > PART_COLD || r->at > part_size(h, r->part) ||
            part_size(h, r->part) - r->at < width)
            return false;
        switch (r->kind) {
        case ER_GUEST_S32:
        case ER_GUEST_U32:
        case ER_GUEST64:
            break;                      /* checked as they are moved */
        case ER_TB:
            if (r->val >= sizeof(TB))
                return false;
            break;
        case ER_HOSTFN:
            break;
        default:
            return false;
        }
    }
    return true;
}

Rec pcache_rec_parts(const RecHead *h)
{
    const uint8_t *p = (const uint8_t *)(h + 1);
    Rec r = { .h = h, .slots = (const void *)p };
    p += up8(h->nslots * sizeof(RecSlot));
    r.map = (const void *)p;
    p += up8(h->ninsns * 4u);
    r.near = (const void *)p;
    p += up8(rec_nnear(h) * 2u);
    r.rel = (const void *)p;
    r.guest = (const uint8_t *)(r.rel + h->nrel);
    r.hot = r.guest + up8(h->guest_size);
    r.cold = r.hot + up8(h->host_size);
    return r;
}

bool pcache_shape_ok(const TBShape *s)
{
    for (unsigned i = 0; i < s->nslots; i++) {
        uint32_t f = s->slots[i].field & ~IN_COLD, stub = s->slots[i].stub;
        uint32_t size = s->slots[i].field & IN_COLD ? s->cold_size : s->host_size;
        if (s->slots[i].field == 0 || f + 4 > size || stub > s->cold_size ||
            s->cold_size - stub < BE_STUB_BYTES)
            return false;
    }
    for (unsigned i = 0; i < s->ninsns; i++)
        if (s->map[i][0] >= s->host_size || s->map[i][1] >= s->guest_size)
            return false;
    return true;
}

TBShape pcache_rec_shape(const Rec *r)
{
    const RecHead *h = r->h;
    return (TBShape){ h->guest_size, h->host_size, h->cold_size, h->ninsns, h->exit_kind,
                      h->nremap, h->nslots, h->remap, r->slots, r->map };
}

/* The record of an entry if its bounds, sizes and hash hold, else NULL. */
const RecHead *pcache_record(const uint8_t *data, uint64_t data_len, const FileEnt *fe)
{
    if ((uint64_t)fe->pos + fe->len > data_len || fe->len < sizeof(RecHead) || fe->pos % 8)
        return NULL;
    const RecHead *h = (const void *)(data + fe->pos);
    if (h->ninsns == 0 || h->ninsns > TB_MAX_INSNS || h->guest_size > 4u * TB_MAX_INSNS ||
        h->host_size == 0 || h->host_size > TRANSLATE_MAX_HOST ||
        h->cold_size > TRANSLATE_MAX_HOST || h->nremap > TB_MAX_REMAP ||
        h->nslots > TB_MAX_SLOTS || h->hot_mod >= 64 || h->cold_mod >= 64 ||
        rec_size(h) != fe->len || hash_bytes(h, fe->len, 4) != fe->sum)
        return NULL;
    Rec r = pcache_rec_parts(h);
    TBShape s = pcache_rec_shape(&r);
    return near_ok(&r) && relocs_ok(h, r.rel) && pcache_shape_ok(&s) ? h : NULL;
}

/* -- The directory ------------------------------------------------------------------------ */

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const Elf64_Phdr *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (end - p >= (ptrdiff_t)sizeof(Elf64_Nhdr)) {
            const Elf64_Nhdr *n = (const void *)p;
            size_t name = (n->n_namesz + 3) & ~3u, desc = (n->n_descsz + 3) & ~3u;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4) {
                *(uint64_t *)arg = hash_bytes(p + sizeof *n + name, n->n_descsz, 5);
                return 1;
            }
            p += sizeof *n + name + desc;
        }
    }
    return 1;                   /* the first object is xlat itself: stop there */
}

uint64_t pcache_build_hash(void)
{
    uint64_t h = 0;
    dl_iterate_phdr(build_id_cb, &h);
    return h;
}

/* mkdir -p of path's components after its first `keep` bytes (which must
 * name a directory that exists: a HOME that is not there is not made),
 * each new one 0700. */
static bool make_dirs(char *path, size_t keep)
{
    struct stat st;
    char c = path[keep];
    path[keep] = 0;
    bool base = keep == 0 || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    path[keep] = c;
    if (!base)
        return false;
    for (char *s = path + keep + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        int r = mkdir(path, 0700);
        *s = '/';
        if (r != 0 && errno != EEXIST)
            return false;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

/* The directory, if it is this user's alone (a group- or world-accessible
 * one of ours is made 0700); made first only if it is not there (every
 * start used to try each component's mkdir). */
int pcache_open_dir(char *path, size_t keep)
{
    /* openat: musl's open follows O_CLOEXEC with an fcntl for old kernels */
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(AT_FDCWD, path, flags);
    if (fd < 0 && errno == ENOENT) {
        if (!make_dirs(path, keep))
            return -1;
        fd = openat(AT_FDCWD, path, flags);
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != pcache_owner ||
        ((st.st_mode & 077) && fchmod(fd, 0700) != 0)) {
        if (fd >= 0)
            close(fd);
        xlat_log(LOG_CACHE, "cache: %s is not this user's own directory: off\n", path);
        return -1;
    }
    return fd;
}

bool pcache_grow(void **p, size_t *max, size_t need, size_t unit)
{
    if (need <= *max)
        return true;
    size_t n = *max ? *max : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * unit);
    if (!q)
        return false;
    *p = q;
    *max = n;
    return true;
}

/* -- Writing -------------------------------------------------------------------------------- */

typedef struct OutEnt {
    uint64_t off;
    const uint8_t *rec;
    uint32_t len, seq;
    uint64_t sum, progs;
} OutEnt;

/* By offset, then in the order captured. */
static int cmp_out(const void *a, const void *b)
{
    const OutEnt *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_off(const void *a, const void *b)
{
    const OutEnt *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* This process's captures of m into out, one per offset (the last), sorted. */
static size_t our_entries(const Module *m, OutEnt *out, size_t *data)
{
    for (size_t i = 0; i < m->ncap; i++) {
        const Capture *c = &m->capidx[i];
        out[i] = (OutEnt){ c->off, m->cap + c->pos, c->len, (uint32_t)i, c->sum, prog_bits };
    }
    qsort(out, m->ncap, sizeof *out, cmp_out);
    size_t n = 0;
    for (size_t i = 0; i < m->ncap && pcache_file_fits(n + 1, *data + out[i].len); i++) {
        if (i + 1 < m->ncap && out[i + 1].off == out[i].off)
            continue;
        out[n++] = out[i];
        *data += out[i].len;
    }
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Add the old file's entries for other offsets to out[0..ours) (sorted),
 * sorted again; a record damaged since it was written is dropped (writes
 * are rare enough that checking them all costs little). The programs an
 * entry ran hot in carry over, to a new record of its block too, and
 * this program joins those of m's hot list. */
static size_t old_entries(const Module *m, const FileHead *oh, OutEnt *out, size_t ours,
                          size_t *data)
{
    const FileEnt *ent = (const void *)(oh + 1);
    const uint64_t *progs = file_progs(oh);
    const uint8_t *od = file_records(oh);
    size_t n = ours;
    if (m->nhot)                        /* (NULL when empty: no qsort of NULL) */
        qsort(m->hot, m->nhot, sizeof *m->hot, cmp_u64);
    for (uint64_t i = 0; i < oh->nent; i++) {
        OutEnt key = { .off = ent[i].off };
        OutEnt *mine = bsearch(&key, out, ours, sizeof *out, cmp_off);
        if (mine)
            mine->progs |= progs[i];
        if (mine || !pcache_file_fits(n + 1, *data + ent[i].len) ||
            !pcache_record(od, oh->data_len, &ent[i]))
            continue;
        bool hot = m->nhot && bsearch(&ent[i].off, m->hot, m->nhot, sizeof *m->hot, cmp_u64);
        out[n++] = (OutEnt){ ent[i].off, od + ent[i].pos, ent[i].len, 0, ent[i].sum,
                             progs[i] | (hot ? prog_bits : 0) };
        *data += ent[i].len;
    }
    qsort(out, n, sizeof *out, cmp_off);
    return n;
}

typedef struct WriteModule { const Module *m; const OutEnt *out; size_t n, data; } WriteModule;

/* Header, table, progs, then the records straight from where they are. */
static bool write_file(int fd, void *arg)
{
    const WriteModule *w = arg;
    const Module *m = w->m;
    const OutEnt *out = w->out;
    size_t n = w->n, data = w->data;
    size_t head = sizeof(FileHead) + n * ENT_BYTES;
    FileHead *h = calloc(1, head);
    if (!h)
        return false;
    *h = (FileHead){ .build = build_hash, .config = config_hash, .idlen = m->idlen,
                     .size = m->size, .nent = n, .data_len = data };
    memcpy(h->magic, PC_MAGIC, 8);
    memcpy(h->id, m->id, 32);
    FileEnt *ent = (FileEnt *)(h + 1);
    uint64_t *progs = (uint64_t *)(ent + n);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        ent[i] = (FileEnt){ .off = out[i].off, .pos = (uint32_t)pos, .len = out[i].len,
                            .sum = out[i].sum };
        progs[i] = out[i].progs;
        pos += out[i].len;
    }
    h->sum = hash_bytes(ent, n * sizeof *ent, hash_bytes(h, sizeof *h, 3));
    bool ok = write(fd, h, head) == (ssize_t)head;
    free(h);
    struct iovec iov[256];
    for (size_t i = 0; ok && i < n;) {
        size_t k = 0, bytes = 0;
        for (; k < 256 && i < n; k++, i++) {
            iov[k] = (struct iovec){ (void *)out[i].rec, out[i].len };
            bytes += out[i].len;
        }
        ok = writev(fd, iov, (int)k) == (ssize_t)bytes;     /* short: no space; not kept */
    }
    return ok;
}

/* What this process wrote to the directory since it last told the ledger. */
static uint64_t written;

bool pcache_write_new(const char *name, bool (*fill)(int fd, void *arg), void *arg)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
    int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = fill(fd, arg);
    off_t size = lseek(fd, 0, SEEK_CUR);
    close(fd);
    ok = ok && renameat(dir_fd, tmp, dir_fd, name) == 0;
    if (!ok)
        unlinkat(dir_fd, tmp, 0);
    else if (size > 0)
        written += (uint64_t)size;
    return ok;
}

/* The file of m's entries (ours, then the current file's others), written
 * to a new file renamed into place. */
bool pcache_write_module(Module *m)
{
    size_t oldlen = 0;
    const char *why;
    const uint8_t *old = pcache_map_file(m, &oldlen, NULL, &why, false);
    const FileHead *oh = (const void *)old;
    OutEnt *out = malloc((m->ncap + (old ? oh->nent : 0) + 1) * sizeof *out);
    bool ok = false;
    if (out) {
        size_t data = 0;
        size_t ours = our_entries(m, out, &data);
        size_t n = old ? old_entries(m, oh, out, ours, &data) : ours;
        char name[128];
        pcache_file_name(m, 0, name, sizeof name);
        WriteModule w = { m, out, n, data };
        ok = pcache_write_new(name, write_file, &w);
        xlat_log(LOG_CACHE, "cache: %s: %s %zu translations (%zu new, %zu newly hot here)\n",
                 m->name, ok ? "wrote" : "could not write", n, ours, m->nhot);
        free(out);
    }
    if (old)
        munmap((void *)old, oldlen);
    return ok;
}

/* Write progs[first..last] with this program's bits in the entries idx[] names. */
static bool note_run(int fd, const Module *m, const uint64_t *idx, size_t n)
{
    size_t first = (size_t)idx[0], len = (size_t)(idx[n - 1] - first + 1);
    uint64_t *buf = malloc(len * sizeof *buf);
    if (!buf)
        return false;
    memcpy(buf, m->progs + first, len * sizeof *buf);
    for (size_t i = 0; i < n; i++)
        buf[idx[i] - first] |= prog_bits;
    off_t at = (off_t)((const uint8_t *)(m->progs + first) - m->map);
    bool ok = pwrite(fd, buf, len * sizeof *buf, at) == (ssize_t)(len * sizeof *buf);
    free(buf);
    return ok;
}

/* The entries of m's hot list that its file has, as indices in order. */
static size_t hot_entries(const Module *m, uint64_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nhot; i++) {
        const FileEnt *e = pcache_find(m->ent, m->nent, m->hot[i]);
        if (e)
            idx[n++] = (uint64_t)(e - m->ent);
    }
    qsort(idx, n, sizeof *idx, cmp_u64);
    return n;
}

/*
 * This program's bits into the progs of m's hot entries, in place in the
 * file m mapped (if another process renamed a new one over it since, the
 * notes go with the old one: only a hint lost). The progs are outside what
 * the header's hash covers: a process reading them as they are written
 * may see any mix of old and new, and a hint picks only when a block is
 * installed. Costs an open and a write per run of entries at most
 * NOTE_GAP apart instead of rewriting the file: a program that made a few
 * of a shared libc's blocks hot notes them without rewriting libc's file
 * of every other program's (and a new program's hundreds of notes were a
 * write each: 250 for a hello world's ld.so and libc, now 3). The entries
 * between the noted ones of a run are written back as the map shows them:
 * a bit another process set there meanwhile may be lost, which costs that
 * program one block run as a cold start runs it, until it notes it again.
 */
#define NOTE_GAP 32

void pcache_note_programs(const Module *m)
{
    if (!m->nhot || m->state != 1)
        return;
    char name[128];
    pcache_file_name(m, 0, name, sizeof name);
    int fd = openat(dir_fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    size_t noted = 0;
    uint64_t *idx = malloc(m->nhot * sizeof *idx);
    if (idx && fstat(fd, &st) == 0 && pcache_own_file(&st) &&
        st.st_ino == m->map_ino && (size_t)st.st_size == m->maplen) {
        size_t n = hot_entries(m, idx);
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && idx[j] - idx[j - 1] <= NOTE_GAP; j++)
                ;
            if (!note_run(fd, m, idx + i, j - i))
                break;
            noted += j - i;
        }
    }
    free(idx);
    close(fd);
    xlat_log(LOG_CACHE, "cache: %s: noted this program in %zu translations\n", m->name, noted);
}

typedef struct DirFile { char name[256]; struct timespec mtime; off_t size; } DirFile;

static int cmp_mtime(const void *a, const void *b)
{
    const struct timespec *x = &((const DirFile *)a)->mtime, *y = &((const DirFile *)b)->mtime;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* A writer's temporary file (pcache_write_new) that outlived it by far: its
 * writer was killed between creating and renaming it (a write takes
 * milliseconds). */
#define STALE_TMP_SECONDS 3600

static bool stale_tmp(const char *name, size_t len, const struct stat *st)
{
    return name[0] == '.' && len > 5 && strcmp(name + len - 4, ".tmp") == 0 &&
           S_ISREG(st->st_mode) && st->st_mtime + STALE_TMP_SECONDS < time(NULL);
}

/* The cache files of the directory (a stat each), into *out; their bytes. */
static uint64_t list_files(DirFile **out, size_t *count)
{
    int fd = dup(dir_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    DirFile *f = NULL;
    size_t n = 0, max = 0;
    uint64_t total = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        size_t len = strlen(e->d_name);
        if (len < 4 || len >= sizeof f->name ||
            fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (stale_tmp(e->d_name, len, &st)) {
            unlinkat(dir_fd, e->d_name, 0);
            continue;
        }
        if (strcmp(e->d_name + len - 3, ".xc") != 0 ||
            !pcache_grow((void **)&f, &max, n + 1, sizeof *f))
            continue;
        snprintf(f[n].name, sizeof f[n].name, "%s", e->d_name);
        f[n].mtime = st.st_mtim;
        f[n].size = st.st_size;
        total += (uint64_t)st.st_size;
        n++;
    }
    closedir(d);
    *out = f;
    *count = n;
    return total;
}

/*
 * List the directory and, past 7/8 of dir_max, remove the least recently
 * used files down to 3/4 of it (a file's mtime is its last use); the bytes
 * left. The margin: the next list is then due 1/8 of dir_max of writes
 * later, not at the next write.
 */
static uint64_t evict(void)
{
    DirFile *f = NULL;
    size_t n = 0;
    uint64_t total = list_files(&f, &n);
    xlat_log(LOG_CACHE, "cache: listed %zu files, %llu KiB\n", n, (unsigned long long)total >> 10);
    if (total > dir_max / 8 * 7) {
        qsort(f, n, sizeof *f, cmp_mtime);
        for (size_t i = 0; i < n && total > dir_max / 4 * 3; i++)
            if (unlinkat(dir_fd, f[i].name, 0) == 0) {
                total -= (uint64_t)f[i].size;
                xlat_log(LOG_CACHE, "cache: evicted %s\n", f[i].name);
            }
    }
    free(f);
    return total;
}

/*
 * The ledger: a file of the directory holding a bound on the bytes of its
 * cache files, in decimal. A process that wrote files adds their sizes to
 * it, under its lock, and lists the directory only when the sum passes
 * dir_max (listing stats every file: 21 ms for the 9,500 files of a full
 * 1 GiB directory, which every writing process of a build paid when each
 * write listed it). The bound errs high only: a file renamed over an
 * older one counts both until the next list sets the ledger to what is
 * there. A ledger missing, unreadable or not ours: the directory is listed.
 */
#define LEDGER "size"
#define LEDGER_LEN 21                   /* 20 digits and a newline */

static bool ledger_read(int fd, uint64_t *bound)
{
    char buf[LEDGER_LEN + 1];
    if (pread(fd, buf, LEDGER_LEN, 0) != LEDGER_LEN || buf[LEDGER_LEN - 1] != '\n')
        return false;
    buf[LEDGER_LEN - 1] = '\0';
    char *end;
    errno = 0;
    *bound = strtoull(buf, &end, 10);
    return errno == 0 && *end == '\0' && end != buf;
}

void pcache_account(void)
{
    if (!written)
        return;
    uint64_t add = written;
    written = 0;
    int fd = openat(dir_fd, LEDGER, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !pcache_own_file(&st) || flock(fd, LOCK_EX) != 0) {
        if (fd >= 0)
            close(fd);
        evict();
        return;
    }
    uint64_t bound;
    if (ledger_read(fd, &bound) && bound + add <= dir_max)
        bound += add;
    else
        bound = evict();                /* under the lock: one lister at a time */
    char buf[LEDGER_LEN + 1];
    snprintf(buf, sizeof buf, "%020llu\n", (unsigned long long)bound);
    if (pwrite(fd, buf, LEDGER_LEN, 0) != LEDGER_LEN)
        ftruncate(fd, 0);               /* unreadable: the next writer lists */
    close(fd);                          /* (and unlocks) */
}

