/*
 * The persistent translation cache (pcache.h): what one process translated
 * from a file, reused by the next processes that map the same file.
 *
 * A distribution build is thousands of short processes that each start
 * cold: the shell, sed, the gcc driver, ld.so and libc translated again
 * every time. Here a translation of code from a mapped file is kept in
 * memory as it is made (tb_cache.c brackets translate_block with
 * pcache_capture_begin/end: the backend records every place where the
 * code depends on where it or what it names lies, emit.h's relocations),
 * written to the cache file of that file at exit (or before an execve),
 * and on a later process's miss installed instead of translated: copied
 * into the code buffer at the alignment it was made at, its rel32s to the
 * runtime stubs and between its hot and cold parts recomputed, its guest
 * addresses moved by the distance between the old and the new pc, its TB
 * pointers and host function addresses set anew.
 *
 * Files. One per mapped file, xlat build and code-shaping options, named
 * by the file's identity (its ELF build id and size, else a hash of its
 * bytes; never its path) and a hash of the options, in a directory of the
 * user's own (0700, files 0600; another owner's directory or file is
 * refused). A file is a header, a table of entries sorted by file offset
 * and the records; the header and table carry a hash checked when the
 * file is opened, each record a hash checked when it is used. Writers
 * merge the file as it is now with what they translated into a new file
 * and rename it over the old, so a reader never sees a torn file, and the
 * directory is kept under its size by removing the least recently used
 * files (a file's mtime is touched when it is opened, at most hourly).
 *
 * Trust. A record is never run on faith: its guest bytes must equal the
 * guest's code at the pc now (so a library replaced on disk, a file
 * patched in place or a page the guest wrote runs its own code), every
 * size, offset and relocation is checked against the record's bounds, a
 * moved guest address must stay in the window and fit the encoding it was
 * made with, and a record whose code depends on its address in a way the
 * relocations do not say (emit.h: pinned) is used only at that address.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/guest_mem.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "exec/pcache_file.h"
#include "riscv/translate.h"
#include "x86/backend.h"

bool pcache_on;

/* -- Settings ------------------------------------------------------------------------------ */

static uint64_t compute_config(void)
{
    Tune t = tune;
    t.cache_image = true;       /* images or not: the same translations */
    uint64_t h = hash_bytes(&t, sizeof t, 6);
    unsigned logs = log_mask & LOG_STATS;         /* blocks that count their runs */
    h = hash_bytes(&logs, sizeof logs, h);
    h = hash_bytes(be_guest_reg, sizeof be_guest_reg, h);
    h = hash_bytes(&be_gbase_reg, sizeof be_gbase_reg, h);
    h = hash_bytes(&guest_mem.limit, sizeof guest_mem.limit, h);
    uint64_t v[] = {
        translate_config_word(), code_base, (uint64_t)(jit_rt.epilogue - code_rw),
        (uint64_t)(jit_rt.lookup - code_rw), (uint64_t)(jit_rt.lookup_miss - code_rw),
        (uint64_t)(jit_rt.interp_call - code_rw), (uint64_t)(jit_rt.interp_exit - code_rw),
        (uint64_t)(jit_rt.csr_call - code_rw), (uint64_t)(jit_rt.ras_empty - code_rw),
        (uint64_t)(jit_rt.helper_call - code_rw), TB_MAX_INSNS, TB_MAX_SLOTS, CODE_SIZE, HOT_END,
    };
    return hash_bytes(v, sizeof v, h);
}

void pcache_init(int (*own_fd)(int fd), const char *dir)
{
    /* The cache is the user's who ran xlat (its ids at exec: no system
     * call, and a guest's setuid later changes nothing). */
    pcache_owner = (uid_t)getauxval(AT_EUID);
    if (!tune.cache || getauxval(AT_UID) != pcache_owner ||
        (log_mask & (LOG_IN_ASM | LOG_OUT_ASM)) || !guest_mem.ops->code_origin)
        return;
    build_hash = pcache_build_hash();
    if (!build_hash)
        return;                 /* no build id: no way to tell builds apart */
    const char *size = secure_getenv("XLAT_CACHE_SIZE");
    if (size && atoll(size) > 0)
        dir_max = (uint64_t)atoll(size) << 20;
    /* dir is made whole if need be; the default only below an
     * XDG_CACHE_HOME or HOME that exists. */
    char path[4096];
    const char *xdg = secure_getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    size_t keep;
    int n;
    if (dir && *dir)
        n = snprintf(path, sizeof path, "%s", dir), keep = 0;
    else if (xdg && *xdg == '/')
        n = snprintf(path, sizeof path, "%s/xlat/code", xdg), keep = strlen(xdg);
    else if (home && *home == '/')
        n = snprintf(path, sizeof path, "%s/.cache/xlat/code", home), keep = strlen(home);
    else
        return;
    if (n < 0 || n >= (int)sizeof path)
        return;
    dir_fd = pcache_open_dir(path, keep);
    if (dir_fd < 0)
        return;
    dir_fd = own_fd(dir_fd);
    config_hash = compute_config();
    pcache_on = true;
}

/* -- Capture ------------------------------------------------------------------------------- */

static EmitRelocs cap_log;
static PcacheOrigin cap_origin;

bool pcache_capture_begin(uint64_t pc)
{
    if (!pcache_on || !guest_mem.ops->code_origin(pc, &cap_origin))
        return false;
    cap_log.n = 0;
    cap_log.pinned = cap_log.lost = false;
    emit_relocs = &cap_log;
    return true;
}

static int part_of(const uint8_t *p, const uint8_t *hot, size_t hot_size, const uint8_t *cold,
                   size_t cold_size, uint32_t *off)
{
    if (p >= hot && p < hot + hot_size) {
        *off = (uint32_t)(p - hot);
        return PART_HOT;
    }
    if (p >= cold && p < cold + cold_size) {
        *off = (uint32_t)(p - cold);
        return PART_COLD;
    }
    if (p >= code_rw && p < code_rw + code_base) {
        *off = (uint32_t)(p - code_rw);
        return PART_RUNTIME;
    }
    return -1;
}

_Static_assert(TRANSLATE_MAX_HOST <= 65536, "a RecReloc's field offset is 16 bits");

/* A rel32 field from one part to another, as captured. */
typedef struct NearRel { uint16_t at; uint8_t kind; uint32_t target; } NearRel;

static int near_kind(int part, int tpart)
{
    if (part == PART_HOT)
        return tpart == PART_COLD ? NEAR_HOT_COLD : NEAR_HOT_RUNTIME;
    return tpart == PART_HOT ? NEAR_COLD_HOT : NEAR_COLD_RUNTIME;
}

/* The relocations of the capture as a record's: the near ones in near
 * (*nnear of them), the others returned in out; -1 if one cannot be said. */
static int convert_relocs(const TB *tb, const uint8_t *cold, RecReloc *out, NearRel *near,
                          int *nnear)
{
    const uint8_t *hot = tb_entry_rw(tb);
    /* A field patched again later (a slot pointed at its stub): the last
     * patch counts. seen: one byte per byte of hot, then cold, code. */
    static uint8_t seen[2 * TRANSLATE_MAX_HOST] LARGE_BSS;
    int n = 0;
    *nnear = 0;
    memset(seen, 0, tb->host_size + tb->cold_size);
    for (int i = (int)cap_log.n - 1; i >= 0; i--) {
        const EmitReloc *r = &cap_log.r[i];
        RecReloc rr = { .kind = r->kind };
        uint32_t at;
        int part = part_of(r->at, hot, tb->host_size, cold, tb->cold_size, &at);
        unsigned width = rel_width(r->kind);
        if (part < 0 || part == PART_RUNTIME ||
            at + width > (part == PART_HOT ? tb->host_size : tb->cold_size))
            return -1;
        uint8_t *mark = &seen[at + (part == PART_COLD ? tb->host_size : 0)];
        if (*mark)
            continue;
        *mark = 1;
        rr.at = (uint16_t)at;
        rr.part = (uint8_t)part;
        uint64_t field = 0;
        memcpy(&field, r->at, width);
        switch (r->kind) {
        case ER_REL32: {
            uint32_t t;
            int tp = part_of(r->target, hot, tb->host_size, cold, tb->cold_size, &t);
            if (tp < 0)
                return -1;
            if (tp != part)             /* else it moves with the field */
                near[(*nnear)++] = (NearRel){ (uint16_t)at, (uint8_t)near_kind(part, tp), t };
            continue;
        }
        case ER_TB:
            if (field != (uint64_t)(uintptr_t)tb + r->aux || r->aux >= sizeof(TB))
                return -1;
            rr.val = (uint32_t)r->aux;
            break;
        case ER_HOSTFN: {
            int64_t d = (int64_t)(field - (uint64_t)(uintptr_t)pcache_flush);
            if (d != (int32_t)d)
                return -1;
            rr.val = (uint32_t)d;
            break;
        }
        default:
            if (r->aux > UINT32_MAX)
                return -1;
            rr.val = (uint32_t)r->aux;
            break;
        }
        out[n++] = rr;
    }
    return n;
}

/* The near relocations into the record r (offsets by kind; fields in its
 * copies of the code made part-relative). */
static void put_near(const NearRel *near, int n, const Rec *r)
{
    uint16_t *at = (uint16_t *)r->near;
    for (int k = 0; k < NEAR_KINDS; k++)
        for (int i = 0; i < n; i++) {
            if (near[i].kind != k)
                continue;
            int32_t v = (int32_t)(near[i].target - (near[i].at + 4u));
            memcpy((uint8_t *)(near_from(k) == PART_HOT ? r->hot : r->cold) + near[i].at, &v, 4);
            *at++ = near[i].at;
        }
}

void pcache_capture_end(const TB *tb, const uint8_t *cold, const uint16_t map[][2])
{
    emit_relocs = NULL;
    Module *m = &modules[cap_origin.module];
    pcache_note_delta(m, cap_origin.delta);
    if (cap_log.lost || tb->pc + tb->guest_size > cap_origin.hi || tb->next_page != TB_NO_PAGE)
        return;
    static RecReloc *rel;                /* scratch, grown as needed (tb_lock) */
    static NearRel *near;
    static size_t relmax, nearmax;
    int nnear = 0;
    int nrel = pcache_grow((void **)&rel, &relmax, cap_log.n + 1, sizeof *rel) &&
               pcache_grow((void **)&near, &nearmax, cap_log.n + 1, sizeof *near)
               ? convert_relocs(tb, cold, rel, near, &nnear) : -1;
    if (nrel < 0 || nrel > UINT16_MAX)
        return;
    RecHead h = {
        .pc = tb->pc, .guest_size = tb->guest_size, .host_size = tb->host_size,
        .cold_size = tb->cold_size, .nrel = (uint16_t)nrel, .ninsns = tb->ninsns,
        .exit_kind = tb->exit_kind, .nremap = tb->nremap, .pinned = cap_log.pinned,
        .hot_mod = (uint8_t)(tb->host_off % 64), .cold_mod = (uint8_t)(tb->cold_off % 64),
    };
    memcpy(h.remap, tb->remap, sizeof h.remap);
    RecSlot slots[TB_MAX_SLOTS];
    while (h.nslots < TB_MAX_SLOTS && tb->jmp_field[h.nslots]) {
        unsigned s = h.nslots++;
        slots[s].field = tb->jmp_field[s] < tb->host_size ? tb->jmp_field[s]
                         : IN_COLD | (uint32_t)(tb->host_off + tb->jmp_field[s] - tb->cold_off);
        slots[s].stub = (uint32_t)(tb->host_off + tb->jmp_stub[s] - tb->cold_off);
    }
    for (int i = 0; i < nnear; i++)
        h.nnear[near[i].kind]++;
    size_t len = rec_size(&h);
    if (!pcache_grow((void **)&m->cap, &m->capmax, m->caplen + len, 1) ||
        !pcache_grow((void **)&m->capidx, &m->capidxmax, m->ncap + 1, sizeof *m->capidx))
        return;
    uint8_t *p = m->cap + m->caplen;
    memset(p, 0, len);
    memcpy(p, &h, sizeof h);
    Rec r = pcache_rec_parts((const RecHead *)p);
    memcpy((void *)r.slots, slots, h.nslots * sizeof *slots);
    memcpy((void *)r.map, map, h.ninsns * 4u);
    memcpy((void *)r.rel, rel, (size_t)nrel * sizeof *rel);
    memcpy((void *)r.guest, guest_mem_code(tb->phys), h.guest_size);
    memcpy((void *)r.hot, tb_entry_rw(tb), h.host_size);
    memcpy((void *)r.cold, cold, h.cold_size);
    put_near(near, nnear, &r);
    m->capidx[m->ncap++] = (Capture){ .off = tb->pc - cap_origin.delta, .pos = m->caplen,
                                      .len = (uint32_t)len, .sum = hash_bytes(p, len, 4) };
    m->caplen += len;
}

/* -- Install ------------------------------------------------------------------------------- */

void pcache_note_delta(Module *m, uint64_t delta)
{
    if (m->delta_state == 0)
        m->delta = delta, m->delta_state = 1;
    else if (m->delta != delta)
        m->delta_state = -1;
}

uint64_t pcache_hostfn(uint32_t val)
{
    return (uint64_t)(uintptr_t)pcache_flush + (uint64_t)(int64_t)(int32_t)val;
}

/* Does a moved guest address still fit its field and the window? */
static bool guest_fits(unsigned kind, uint64_t v, uint64_t bytes)
{
    if ((kind == ER_GUEST_S32 && v > INT32_MAX) || (kind == ER_GUEST_U32 && v > UINT32_MAX))
        return false;
    return guest_mem_in_window(v, bytes);
}

/* Move the near relocations of the copy at hot_code and cold_code, which
 * sit at offsets hot and cold of a space whose offset 0 is the runtime
 * stubs' (the code buffer, or an image's parts: pcache_image.c). */
static void relocate_near(const Rec *r, uint8_t *hot_code, uint8_t *cold_code, size_t hot,
                          size_t cold)
{
    const size_t base[] = { [PART_HOT] = hot, [PART_COLD] = cold, [PART_RUNTIME] = 0 };
    const uint16_t *at = r->near;
    for (int k = 0; k < NEAR_KINDS; k++) {
        size_t from = base[near_from(k)];
        uint32_t by = (uint32_t)(base[near_to(k)] - from);
        uint8_t *code = near_from(k) == PART_HOT ? hot_code : cold_code;
        for (unsigned i = r->h->nnear[k]; i; i--, at++) {
            uint32_t v;
            memcpy(&v, code + *at, 4);
            v += by;
            memcpy(code + *at, &v, 4);
        }
    }
}

/* Apply the other relocations to the copy at hot and cold, for tb, or
 * (defer not NULL) the guest addresses only, the others appended to
 * defer; false (a guest address that no longer fits) leaves it unused. */
static bool relocate(const RecHead *h, const RecReloc *rel, TB *tb, uint8_t *hot, uint8_t *cold,
                     uint64_t delta, RecReloc *defer, unsigned *ndefer)
{
    for (uint32_t i = 0; i < h->nrel; i++) {
        const RecReloc *r = &rel[i];
        uint8_t *f = (r->part == PART_HOT ? hot : cold) + r->at;
        uint64_t v = 0;
        switch (r->kind) {
        case ER_GUEST_S32:
        case ER_GUEST_U32: {
            int32_t old;
            memcpy(&old, f, 4);
            v = (r->kind == ER_GUEST_S32 ? (uint64_t)(int64_t)old : (uint64_t)(uint32_t)old) + delta;
            if (!guest_fits(r->kind, v, r->val))
                return false;
            uint32_t w = (uint32_t)v;
            memcpy(f, &w, 4);
            continue;
        }
        case ER_GUEST64:
            memcpy(&v, f, 8);
            v += delta;
            if (!guest_fits(r->kind, v, r->val))
                return false;
            break;
        case ER_TB:
            v = (uint64_t)(uintptr_t)tb + r->val;
            break;
        case ER_HOSTFN:
            v = pcache_hostfn(r->val);
            break;
        }
        if (defer && (r->kind == ER_TB || r->kind == ER_HOSTFN))
            defer[(*ndefer)++] = *r;
        else
            memcpy(f, &v, 8);
    }
    return true;
}

bool pcache_place(const Rec *r, uint64_t pc, TB *tb, uint8_t *hot_code, uint8_t *cold_code,
                  size_t hot, size_t cold, RecReloc *defer, unsigned *ndefer)
{
    memcpy(hot_code, r->hot, r->h->host_size);
    memcpy(cold_code, r->cold, r->h->cold_size);
    relocate_near(r, hot_code, cold_code, hot, cold);
    return relocate(r->h, r->rel, tb, hot_code, cold_code, pc - r->h->pc, defer, ndefer);
}

size_t pcache_align(size_t off, unsigned mod)
{
    return off + ((mod - off % 64) & 63);
}

bool pcache_guest_same(uint64_t phys, const uint8_t *guest, size_t size)
{
    /* Watched before compared, as translate reads (tb_cache.c). */
    for (uint64_t pg = phys >> TARGET_PAGE_BITS; pg <= (phys + size - 1) >> TARGET_PAGE_BITS; pg++)
        guest_mem.ops->code_watch(pg);
    return memcmp(guest_mem_code(phys), guest, size) == 0;
}

/* Why the record r cannot be the block at pc (origin o) now, or NULL. */
static const char *unfit(const Rec *r, uint64_t pc, const PcacheOrigin *o, uint64_t phys)
{
    const RecHead *h = r->h;
    if (h->pinned && pc != h->pc)
        return "made for another address";
    if (pc + h->guest_size > o->hi || pc + h->guest_size < pc)
        return "longer than the mapping";
    return pcache_guest_same(phys, r->guest, h->guest_size) ? NULL : "other guest code now";
}

/*
 * A miss without locks. The first runs of the blocks no earlier process
 * kept (a thousand in /usr/bin/true) each took the code lock for the
 * lookup and tb_lock again after it. Each thread remembers the last origin
 * a locked lookup found and the generation of the executable mappings it
 * was found in (pcache_mappings_changed bumps it, under the mode's lock on
 * its mappings); within that range, the file's table answers alone (a
 * module's mapped table never changes). An answer from a range remapped
 * meanwhile only sends a block to its first runs, or to pcache_lookup,
 * which asks the mode again.
 */
static uint64_t origin_gen = 1;
static __thread PcacheOrigin last_origin;
static __thread uint64_t last_gen;          /* 0: none remembered */
static __thread uint64_t found_pc;          /* the entry pcache_hint found there, */
static __thread const FileEnt *found_ent;   /* which pcache_lookup takes if the origin holds */

void pcache_mappings_changed(void)
{
    __atomic_fetch_add(&origin_gen, 1, __ATOMIC_RELEASE);
}

/* Was e (an entry of m's) hot in this program before? */
static bool ours(const Module *m, const FileEnt *e)
{
    return (m->progs[e - m->ent] & prog_bits) == prog_bits;
}

bool pcache_hit_ours(const PcacheHit *hit)
{
    return ours(hit->module, hit->ent);
}

int pcache_hint(uint64_t pc)
{
    if (last_gen != __atomic_load_n(&origin_gen, __ATOMIC_ACQUIRE) || pc < last_origin.lo ||
        pc >= last_origin.hi)
        return PCACHE_ASK;
    Module *m = &modules[last_origin.module];
    if (pcache_module_state(m) != 1)
        return PCACHE_NONE;
    found_ent = pcache_find(m->ent, m->nent, pc - last_origin.delta);
    found_pc = pc;
    return !found_ent ? PCACHE_NONE : ours(m, found_ent) ? PCACHE_OURS : PCACHE_OTHERS;
}

bool pcache_lookup(uint64_t pc, PcacheHit *hit)
{
    PcacheOrigin *o = &hit->origin;
    uint64_t gen = __atomic_load_n(&origin_gen, __ATOMIC_ACQUIRE);    /* the code lock held */
    if (!guest_mem.ops->code_origin(pc, o))
        return false;
    bool same = last_gen && o->module == last_origin.module && o->delta == last_origin.delta;
    last_origin = *o;
    last_gen = gen;
    Module *m = &modules[o->module];
    hit->module = m;
    if (pcache_module_state(m) != 1)
        hit->ent = NULL;
    else if (same && found_pc == pc && found_ent)
        hit->ent = found_ent;               /* found just before, in the same file at the same place */
    else
        hit->ent = pcache_find(m->ent, m->nent, pc - o->delta);
    return hit->ent != NULL;
}

void pcache_shape_tb(TB *tb, size_t hot, size_t cold, const TBShape *s)
{
    tb->guest_size = (uint16_t)s->guest_size;
    tb->host_off = (uint32_t)hot;
    tb->host_size = (uint16_t)s->host_size;
    tb->cold_off = (uint32_t)cold;
    tb->cold_size = (uint16_t)s->cold_size;
    tb->ninsns = (uint8_t)s->ninsns;
    tb->exit_kind = (uint8_t)s->exit_kind;
    tb->nremap = (uint8_t)s->nremap;
    memcpy(tb->remap, s->remap, sizeof tb->remap);
    for (unsigned i = 0; i < s->nslots; i++) {
        uint32_t f = s->slots[i].field & ~IN_COLD;
        tb->jmp_field[i] = s->slots[i].field & IN_COLD ? (uint32_t)(cold + f - hot) : f;
        tb->jmp_stub[i] = (uint32_t)(cold + s->slots[i].stub - hot);
        be_stub_claim(code_rw + cold + s->slots[i].stub, tb, (int)i);
    }
    memcpy(tb_pcmap_alloc(tb->ninsns, &tb->pcmap), s->map, tb->ninsns * 4u);
}

bool pcache_fill(TB *tb, const PcacheHit *hit, size_t *hot_off, size_t *cold_off)
{
    Module *m = hit->module;
    const PcacheOrigin o = hit->origin;
    uint64_t off = tb->pc - o.delta;
    const RecHead *h = pcache_record(m->data, m->data_len, hit->ent);
    Rec r = h ? pcache_rec_parts(h) : (Rec){ 0 };
    const char *why = h ? unfit(&r, tb->pc, &o, tb->phys) : "a corrupted or malformed record";
    if (why) {
        xlat_log(LOG_CACHE, "cache: %s+%#llx: not used: %s\n", m->name, (unsigned long long)off, why);
        return false;
    }
    uint64_t delta = tb->pc - h->pc;
    size_t hot = pcache_align(*hot_off, h->hot_mod), cold = pcache_align(*cold_off, h->cold_mod);
    if (!pcache_place(&r, tb->pc, tb, code_rw + hot, code_rw + cold, hot, cold, NULL, NULL)) {
        xlat_log(LOG_CACHE, "cache: %s+%#llx: not used: an address out of reach\n", m->name,
                 (unsigned long long)off);
        return false;
    }
    pcache_note_delta(m, o.delta);
    TBShape s = pcache_rec_shape(&r);
    pcache_shape_tb(tb, hot, cold, &s);
    if (!ours(m, hit->ent) && pcache_grow((void **)&m->hot, &m->hotmax, m->nhot + 1, sizeof *m->hot))
        m->hot[m->nhot++] = hit->ent->off;     /* hot here too: pcache_flush notes it */
    *hot_off = hot;
    *cold_off = cold;
    stats.pcache_hits++;
    stats.pcache_moved += delta != 0;
    return true;
}

/*
 * Writing merges the whole file anew, so a write costs what the file weighs
 * (a compiler's is tens of MB): for a few translations its file lacks, a
 * warm process would spend more than the next ones save. So a process
 * writes only when its new translations are at least one in WRITE_FRACTION
 * of the file's, and never into a full file; a translation not kept is only
 * translated again, as without the cache. (With a fixed floor instead,
 * every cc1 of a configure run rewrote cc1's full 64 MB file at exit.) The
 * kept translations that became hot in this program are noted in place
 * otherwise (pcache_note_programs). A small file is rewritten for any new
 * translation: that costs about what translating one block again costs at
 * every later start (ld.so's file lacked one block that each warm
 * /usr/bin/true translated again, 1 of its 343). It stays small, so a
 * program whose new translations differ at each start rewrites little.
 */
#define WRITE_FRACTION 32
#define SMALL_FILE (256u << 10)

static bool worth_writing(const Module *m)
{
    if (!m->ncap)
        return false;
    if (m->state != 1)
        return true;
    return (m->ncap * WRITE_FRACTION >= m->nent || m->maplen + m->caplen <= SMALL_FILE) &&
           pcache_file_fits(m->nent + m->ncap, m->data_len + m->caplen);
}

void pcache_flush(void)
{
    if (!pcache_on || xmutex_trylock(&tb_lock) != 0)
        return;
    for (int i = 0; i < nmodules; i++) {
        Module *m = &modules[i];
        if (!worth_writing(m) || !pcache_write_module(m))  /* (with the notes of its hot list) */
            pcache_note_programs(m);
    }
    pcache_image_flush();       /* (from the captures too) */
    for (int i = 0; i < nmodules; i++)
        modules[i].ncap = modules[i].caplen = modules[i].nhot = 0;
    xmutex_unlock(&tb_lock);
    pcache_account();
}

void pcache_fork_child(void)
{
    pcache_image_fork_child();
    for (int i = 0; i < nmodules; i++)
        modules[i].ncap = modules[i].caplen = modules[i].nhot = 0;
}
