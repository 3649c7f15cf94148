/*
 * Start images (pcache.h): what the processes of one program ran in one
 * file, kept as a single piece and installed all at once by the next.
 *
 * A warm start installs its blocks one by one, each when it is first
 * missed: a lookup, a record found, hashed, copied and relocated, a TB made
 * (~2,400 cycles each, most of them first touches of scattered memory;
 * /usr/bin/true installs 359 of them). An image is those blocks laid out
 * as they sit in the code buffer, in the order they first ran: hot parts
 * back to back, cold parts back to back, their guest addresses already
 * those of the place the file is mapped at, with a table of the blocks
 * (file offset, sizes, slots, pc map, guest bytes) and the relocations
 * that are left: the rel32s between the parts and to the runtime stubs
 * (listed by kind: one constant each moves them all, wherever the two
 * parts land), TB and host-function addresses. Installing it is two
 * copies, four additions per near field and a TB per block.
 *
 * Chains. The direct exits the writing process had chained to another
 * block of the image are listed (block, slot, target block) and become
 * hints (chain.c): the dispatcher chains each the first time it is taken
 * without looking its target up (a lookup that misses the cache three
 * times: python3 -c pass makes 35,000 chains).
 *
 * Files. One per (file, program), next to the file's cache file (same
 * name, the program's identity added), written at exit (or before an
 * execve) from the program's second run on (program_seen) by a process,
 * not a forked one, that ran at least IMG_MIN
 * blocks there, when it has no image yet or its image fits it badly
 * (image_wanted: mostly idle, or a small one it ran an eighth beyond),
 * from the records of the blocks it has translations of, in TB order
 * (the order they first ran); see gather for which of those an image
 * installed are kept. Blocks only
 * interpreted are not in it: an install that makes a TB costs more than
 * the one to three interpreted runs it would replace (README).
 *
 * Trust, as for a cache file: this user's own file; a header naming the
 * xlat build, the code-shaping options, the file and the program; a hash
 * of the whole image checked before anything in it is used; every offset,
 * size and relocation checked against its bounds; used only where the
 * file is mapped at the same guest address as when it was made; and each
 * block's guest bytes compared with the code there now (a block whose code
 * changed is not installed; its place in the code buffer stays unused).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/guest_mem.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "exec/pcache_file.h"
#include "riscv/translate.h"
#include "x86/backend.h"

#define IMG_MIN 8                       /* blocks a process ran in a file, for an image */
#define IMG_MAX_BYTES (64u << 20)
#define IMG_GROW_MAX 32768              /* blocks of an image that still grows (image_wanted) */

/* Module.img_state */
enum { IMG_UNTRIED, IMG_INSTALLED, IMG_ABSENT, IMG_UNUSABLE };

typedef struct ImgBlk {
    uint64_t off;               /* file offset of its first instruction */
    uint32_t hot, cold;         /* its parts' offsets in the hot and cold code */
    uint32_t guest, map;        /* its guest bytes' offset, its first pc map pair */
    uint16_t guest_size, host_size, cold_size;
    uint8_t ninsns, exit_kind, nremap, nslots, pad[2];
    TBRemap remap[TB_MAX_REMAP];
    RecSlot slots[TB_MAX_SLOTS];        /* as a record's */
} ImgBlk;

/* A field holding a TB's or host function's address. */
typedef struct ImgRel {
    uint32_t at;                /* in its part's code */
    uint32_t blk;               /* the block it belongs to (nondecreasing) */
    uint32_t val;               /* as RecReloc.val */
    uint8_t kind, part, pad[2];
} ImgRel;

/* Block src's direct exit slot (to_slot & TB_SLOT_MASK) jumps to block
 * to_slot >> 3 (blocks by their index in the image). */
typedef struct ImgChain {
    uint32_t src, to_slot;
} ImgChain;

/* The parts of an image, in file order (each but the last 8-aligned). */
typedef struct Img {
    const ImgHead *h;
    const ImgBlk *blk;
    const uint16_t (*pairs)[2];
    const uint32_t *near;       /* field offsets, nnear[0] of kind 0, then kind 1... */
    const ImgRel *rel;
    const ImgChain *chain;
    const uint8_t *guest, *hot, *cold;
} Img;

static uint64_t img_nnear(const ImgHead *h)
{
    uint64_t n = 0;
    for (int k = 0; k < NEAR_KINDS; k++)
        n += h->nnear[k];
    return n;
}

static uint64_t img_size(const ImgHead *h)
{
    return sizeof *h + (uint64_t)h->nblk * sizeof(ImgBlk) + up8((uint64_t)h->npairs * 4) +
           up8(img_nnear(h) * 4) + (uint64_t)h->nrel * sizeof(ImgRel) +
           (uint64_t)h->nchain * sizeof(ImgChain) + up8(h->guest_len) + up8(h->hot_len) +
           h->cold_len;
}

static Img img_parts(const ImgHead *h)
{
    const uint8_t *p = (const uint8_t *)(h + 1);
    Img im = { .h = h, .blk = (const void *)p };
    p += (size_t)h->nblk * sizeof(ImgBlk);
    im.pairs = (const void *)p;
    p += up8((size_t)h->npairs * 4);
    im.near = (const void *)p;
    p += up8(img_nnear(h) * 4);
    im.rel = (const void *)p;
    p += (size_t)h->nrel * sizeof(ImgRel);
    im.chain = (const void *)p;
    p += (size_t)h->nchain * sizeof(ImgChain);
    im.guest = p;
    im.hot = p + up8(h->guest_len);
    im.cold = im.hot + up8(h->hot_len);
    return im;
}

uint64_t pcache_image_sum(const uint8_t *p, size_t len)
{
    ImgHead copy;
    memcpy(&copy, p, sizeof copy);
    copy.sum = 0;
    return hash_bytes(p + sizeof copy, len - sizeof copy, hash_bytes(&copy, sizeof copy, 8));
}

/* -- Checking --------------------------------------------------------------------------- */

static uint32_t part_len(const ImgHead *h, unsigned part)
{
    return part == PART_HOT ? h->hot_len : part == PART_COLD ? h->cold_len : (uint32_t)code_base;
}

static TBShape blk_shape(const Img *im, const ImgBlk *b)
{
    return (TBShape){ b->guest_size, b->host_size, b->cold_size, b->ninsns, b->exit_kind,
                      b->nremap, b->nslots, b->remap, b->slots, im->pairs + b->map };
}

/* A block's bounds, pc map and slots; prev: the block before it (NULL). */
static bool block_ok(const Img *im, const ImgBlk *b, const ImgBlk *prev, uint64_t file_size)
{
    const ImgHead *h = im->h;
    if (b->off >= file_size || b->ninsns == 0 || b->ninsns > TB_MAX_INSNS ||
        b->guest_size == 0 || b->guest_size > 4u * TB_MAX_INSNS || b->host_size == 0 ||
        b->host_size > TRANSLATE_MAX_HOST || b->cold_size > TRANSLATE_MAX_HOST ||
        b->nremap > TB_MAX_REMAP || b->nslots > TB_MAX_SLOTS ||
        (uint64_t)b->hot + b->host_size > h->hot_len ||
        (uint64_t)b->cold + b->cold_size > h->cold_len ||
        (uint64_t)b->guest + b->guest_size > h->guest_len ||
        (uint64_t)b->map + b->ninsns > h->npairs)
        return false;
    /* In code-buffer order, as TBs must be (host_fault.c's search). */
    if (prev && (b->hot < prev->hot + prev->host_size || b->cold < prev->cold + prev->cold_size))
        return false;
    TBShape s = blk_shape(im, b);
    return pcache_shape_ok(&s);
}

/* Every near field inside its part, its target inside the other. */
static bool near_ok(const Img *im)
{
    const uint32_t *at = im->near;
    for (int k = 0; k < NEAR_KINDS; k++) {
        uint32_t from = part_len(im->h, near_from(k)), to = part_len(im->h, near_to(k));
        const uint8_t *code = near_from(k) == PART_HOT ? im->hot : im->cold;
        for (uint32_t i = 0; i < im->h->nnear[k]; i++, at++)
            if (!pcache_near_field_ok(code, *at, from, to))
                return false;
    }
    return true;
}

/* Every other relocation inside its block's part, in block order. */
static bool rels_ok(const Img *im)
{
    const ImgHead *h = im->h;
    for (uint32_t i = 0; i < h->nrel; i++) {
        const ImgRel *r = &im->rel[i];
        if (r->blk >= h->nblk || (i && r->blk < im->rel[i - 1].blk) || r->part > PART_COLD ||
            (r->kind != ER_TB && r->kind != ER_HOSTFN) || (r->kind == ER_TB && r->val >= sizeof(TB)))
            return false;
        const ImgBlk *b = &im->blk[r->blk];
        uint32_t lo = r->part == PART_HOT ? b->hot : b->cold;
        uint32_t size = r->part == PART_HOT ? b->host_size : b->cold_size;
        if (r->at < lo || r->at - lo > size || size - (r->at - lo) < 8)
            return false;
    }
    return true;
}

/* Every chain from a slot its block has to a block of the image. */
static bool chains_ok(const Img *im)
{
    for (uint32_t i = 0; i < im->h->nchain; i++) {
        const ImgChain *c = &im->chain[i];
        if (c->src >= im->h->nblk || c->to_slot >> 3 >= im->h->nblk ||
            (c->to_slot & TB_SLOT_MASK) >= im->blk[c->src].nslots)
            return false;
    }
    return true;
}

/* Why the image at p (len bytes) is not m's for this program, or NULL. */
const char *pcache_image_check(const uint8_t *p, size_t len, const Module *m)
{
    if (len < sizeof(ImgHead))
        return "truncated";
    const ImgHead *h = (const void *)p;
    if (memcmp(h->magic, IMG_MAGIC, 8) != 0 || h->build != build_hash || h->config != config_hash)
        return "another xlat build or options";
    if (h->idlen != m->idlen || memcmp(h->id, m->id, 32) != 0 || h->size != m->size ||
        h->prog != prog_key)
        return "another file's or program's";
    if (h->nblk > MAX_TBS || img_size(h) != len)
        return "truncated";
    if (pcache_image_sum(p, len) != h->sum)
        return "corrupted";
    Img im = img_parts(h);
    for (uint32_t i = 0; i < h->nblk; i++)
        if (!block_ok(&im, &im.blk[i], i ? &im.blk[i - 1] : NULL, m->size))
            return "a malformed block";
    if (!near_ok(&im) || !rels_ok(&im))
        return "a malformed relocation";
    return chains_ok(&im) ? NULL : "a malformed chain";
}

/* -- Installing --------------------------------------------------------------------------- */

bool pcache_image_due(const PcacheHit *hit)
{
    return hit->module->img_state == IMG_UNTRIED && tune.cache_image;
}

/* Can block b be the code at key now? */
static bool block_fits(const Img *im, const ImgBlk *b, const PcacheOrigin *o, const TBKey *key)
{
    uint64_t pc = key->pc, end = pc + b->guest_size;
    return pc >= o->lo && end <= o->hi && end >= pc && !tb_lookup(key) &&
           pcache_guest_same(key->phys, im->guest + b->guest, b->guest_size);
}

/* The TB of block b, its code at hot and cold; rel..end: its relocations. */
static TB *block_install(const Img *im, const ImgBlk *b, const TBKey *key, size_t hot,
                          size_t cold, const ImgRel *rel, const ImgRel *end)
{
    TB *tb = tb_new(key);
    TBShape s = blk_shape(im, b);
    pcache_shape_tb(tb, hot + b->hot, cold + b->cold, &s);
    for (; rel < end; rel++) {
        if (rel->kind != ER_TB)
            continue;
        uint64_t v = (uint64_t)(uintptr_t)tb + rel->val;
        memcpy(code_rw + (rel->part == PART_HOT ? hot : cold) + rel->at, &v, 8);
    }
    tb_publish(tb, key);
    return tb;
}

/* The image's chains between blocks installed (tb_of: by block, NULL
 * for one not installed), as hints. */
static void hint_chains(const Img *im, TB *const *tb_of)
{
    for (uint32_t i = 0; i < im->h->nchain; i++) {
        const ImgChain *c = &im->chain[i];
        TB *src = tb_of[c->src], *dst = tb_of[c->to_slot >> 3];
        if (src && dst)
            tb_hint(src, (int)(c->to_slot & TB_SLOT_MASK), dst);
    }
}

/* The near fields and host-function addresses of the code copied to hot
 * and cold. */
static void relocate_parts(const Img *im, size_t hot, size_t cold)
{
    const size_t base[] = { [PART_HOT] = hot, [PART_COLD] = cold, [PART_RUNTIME] = 0 };
    const uint32_t *at = im->near;
    for (int k = 0; k < NEAR_KINDS; k++) {
        uint8_t *code = code_rw + base[near_from(k)];
        uint32_t by = (uint32_t)(base[near_to(k)] - base[near_from(k)]);
        for (uint32_t i = im->h->nnear[k]; i; i--, at++) {
            uint32_t v;
            memcpy(&v, code + *at, 4);
            v += by;
            memcpy(code + *at, &v, 4);
        }
    }
    for (uint32_t i = 0; i < im->h->nrel; i++) {
        const ImgRel *r = &im->rel[i];
        if (r->kind != ER_HOSTFN)
            continue;
        uint64_t v = pcache_hostfn(r->val);
        memcpy(code_rw + base[r->part] + r->at, &v, 8);
    }
}

/* Install the image im where o maps its file: why not, or NULL. */
static const char *image_install(const Img *im, const PcacheOrigin *o, uint32_t flags,
                                 uint32_t *installed)
{
    const ImgHead *h = im->h;
    if (h->delta != o->delta)
        return "made for another address";
    size_t hot = pcache_align(code_used, 0), cold = pcache_align(cold_used, 0);
    if (ntbs + h->nblk > MAX_TBS || pcmap_used + h->npairs > PCMAP_PAIRS ||
        hot + h->hot_len + TRANSLATE_MAX_HOST + 64 > HOT_END ||
        cold + h->cold_len + TRANSLATE_MAX_HOST + 64 > CODE_SIZE)
        return "no room";
    TB **tb_of = calloc(h->nblk ? h->nblk : 1, sizeof *tb_of);
    if (!tb_of)
        return "no memory";
    code_make_private();
    code_areas_cover(hot + h->hot_len, cold + h->cold_len);
    memcpy(code_rw + hot, im->hot, h->hot_len);
    memcpy(code_rw + cold, im->cold, h->cold_len);
    relocate_parts(im, hot, cold);
    code_used = hot + h->hot_len;
    cold_used = (cold + h->cold_len + 15) & ~(size_t)15;
    const ImgRel *rel = im->rel, *rend = rel + h->nrel;
    for (uint32_t i = 0; i < h->nblk; i++) {
        const ImgBlk *b = &im->blk[i];
        const ImgRel *first = rel;
        while (rel < rend && rel->blk == i)
            rel++;
        TBKey key = { .pc = b->off + h->delta, .phys = b->off + h->delta,
                      .next_page = TB_NO_PAGE, .flags = flags };
        if (block_fits(im, b, o, &key)) {
            tb_of[i] = block_install(im, b, &key, hot, cold, first, rel);
            (*installed)++;
        }
    }
    hint_chains(im, tb_of);
    free(tb_of);
    stats.pcache_hits += *installed;
    return NULL;
}

void pcache_image_install(const PcacheHit *hit, const TBKey *key)
{
    Module *m = hit->module;
    m->img_state = IMG_UNUSABLE;
    if (guest_mem.ops->code_phys || !prog_key)
        return;                         /* (a mode whose pcs are its addresses only) */
    char name[160];
    pcache_file_name(m, prog_key, name, sizeof name);
    size_t len = 0;
    const char *why;
    const uint8_t *p = pcache_map_owned(name, sizeof(ImgHead), &len, NULL, &why, true);
    if (!p) {
        if (why == pcache_no_file)
            m->img_state = IMG_ABSENT;
        xlat_log(LOG_CACHE, "cache: %s: image: %s\n", m->name, why);
        return;
    }
    uint32_t n = 0;
    why = pcache_image_check(p, len, m);
    if (!why) {
        Img im = img_parts((const void *)p);
        m->img_blocks = im.h->nblk;
        m->img_first = ntbs;
        why = image_install(&im, &hit->origin, key->flags, &n);
        if (!why) {
            pcache_note_delta(m, hit->origin.delta);    /* (a process may run only these) */
            m->img_state = IMG_INSTALLED;
            m->img_end = ntbs;
            m->img_gen = flush_gen;
            xlat_log(LOG_CACHE, "cache: %s: image: installed %u of %u blocks\n", m->name, n,
                     im.h->nblk);
        }
    }
    if (why)
        xlat_log(LOG_CACHE, "cache: %s: image: not used: %s\n", m->name, why);
    munmap((void *)p, len);
}

/* -- Writing ------------------------------------------------------------------------------ */

/* An image as it is made: its parts in growing buffers. */
typedef struct ImgOut {
    ImgBlk *blk;
    size_t nblk, blkmax;
    uint16_t (*pairs)[2];
    size_t npairs, pairsmax;
    uint32_t *near[NEAR_KINDS];
    size_t nnear[NEAR_KINDS], nearmax[NEAR_KINDS];
    ImgRel *rel;
    size_t nrel, relmax;
    ImgChain *chain;
    size_t nchain, chainmax;
    uint8_t *guest, *hot, *cold;
    size_t guest_len, guestmax, hot_len, hotmax, cold_len, coldmax;
} ImgOut;

/* The record of m's block at off: this process's capture, else the file's. */
static bool find_record(const Module *m, const Capture *caps, size_t ncaps, uint64_t off, Rec *r)
{
    size_t lo = 0, hi = ncaps;
    while (lo < hi) {                   /* the last capture at off */
        size_t mid = (lo + hi) / 2;
        if (caps[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && caps[lo - 1].off == off) {
        *r = pcache_rec_parts((const RecHead *)(m->cap + caps[lo - 1].pos));
        return true;
    }
    const FileEnt *e = m->state == 1 ? pcache_find(m->ent, m->nent, off) : NULL;
    const RecHead *h = e ? pcache_record(m->data, m->data_len, e) : NULL;
    if (h)
        *r = pcache_rec_parts(h);
    return h != NULL;
}

static bool out_grow(ImgOut *o, const RecHead *h, size_t hot, size_t cold)
{
    bool ok = pcache_grow((void **)&o->blk, &o->blkmax, o->nblk + 1, sizeof *o->blk) &&
              pcache_grow((void **)&o->pairs, &o->pairsmax, o->npairs + h->ninsns, 4) &&
              pcache_grow((void **)&o->rel, &o->relmax, o->nrel + h->nrel, sizeof *o->rel) &&
              pcache_grow((void **)&o->guest, &o->guestmax, o->guest_len + h->guest_size, 1) &&
              pcache_grow((void **)&o->hot, &o->hotmax, hot + h->host_size, 1) &&
              pcache_grow((void **)&o->cold, &o->coldmax, cold + h->cold_size + 16, 1);
    for (int k = 0; ok && k < NEAR_KINDS; k++)
        ok = pcache_grow((void **)&o->near[k], &o->nearmax[k], o->nnear[k] + h->nnear[k], 4);
    return ok;
}

/* Block r, now at pc (file offset off), onto the end of the image. */
static bool out_block(ImgOut *o, const Rec *r, uint64_t off, uint64_t pc)
{
    const RecHead *h = r->h;
    size_t hot = pcache_align(o->hot_len, h->hot_mod), cold = pcache_align(o->cold_len, h->cold_mod);
    if (h->pinned && pc != h->pc)
        return true;                    /* not made for this address: left out */
    static RecReloc *defer;             /* (tb_lock held) */
    static size_t defermax;
    if (!out_grow(o, h, hot, cold) || !pcache_grow((void **)&defer, &defermax, h->nrel + 1u,
                                                    sizeof *defer))
        return false;
    unsigned ndefer = 0;
    if (!pcache_place(r, pc, NULL, o->hot + hot, o->cold + cold, hot, cold, defer, &ndefer))
        return true;                    /* an address that does not fit: left out */
    size_t cold_end = (cold + h->cold_size + 15) & ~(size_t)15;
    /* The alignment padding zeroed: no stale heap bytes in the file. */
    memset(o->hot + o->hot_len, 0, hot - o->hot_len);
    memset(o->cold + o->cold_len, 0, cold - o->cold_len);
    memset(o->cold + cold + h->cold_size, 0, cold_end - cold - h->cold_size);
    const uint16_t *at = r->near;
    for (int k = 0; k < NEAR_KINDS; k++)
        for (unsigned i = 0; i < h->nnear[k]; i++)
            o->near[k][o->nnear[k]++] = *at++ + (uint32_t)(near_from(k) == PART_HOT ? hot : cold);
    for (unsigned i = 0; i < ndefer; i++)
        o->rel[o->nrel++] = (ImgRel){
            .at = defer[i].at + (uint32_t)(defer[i].part == PART_HOT ? hot : cold),
            .blk = (uint32_t)o->nblk, .val = defer[i].val, .kind = defer[i].kind,
            .part = defer[i].part };
    ImgBlk *b = &o->blk[o->nblk++];
    *b = (ImgBlk){ .off = off, .hot = (uint32_t)hot, .cold = (uint32_t)cold,
                   .guest = (uint32_t)o->guest_len, .map = (uint32_t)o->npairs,
                   .guest_size = (uint16_t)h->guest_size, .host_size = (uint16_t)h->host_size,
                   .cold_size = (uint16_t)h->cold_size, .ninsns = (uint8_t)h->ninsns,
                   .exit_kind = h->exit_kind, .nremap = h->nremap, .nslots = h->nslots };
    memcpy(b->remap, h->remap, sizeof b->remap);
    memcpy(b->slots, r->slots, h->nslots * sizeof *r->slots);
    memcpy(o->pairs + o->npairs, r->map, h->ninsns * 4u);
    o->npairs += h->ninsns;
    memcpy(o->guest + o->guest_len, r->guest, h->guest_size);
    o->guest_len += h->guest_size;
    o->hot_len = hot + h->host_size;
    o->cold_len = cold_end;
    return true;
}

static void out_free(ImgOut *o)
{
    free(o->blk);
    free(o->pairs);
    free(o->rel);
    free(o->chain);
    free(o->guest);
    free(o->hot);
    free(o->cold);
    for (int k = 0; k < NEAR_KINDS; k++)
        free(o->near[k]);
}

static int cmp_cap(const void *a, const void *b)
{
    const Capture *x = a, *y = b;
    return x->off != y->off ? (x->off < y->off ? -1 : 1) : (x->pos > y->pos) - (x->pos < y->pos);
}

/* Is TB i one of m's (valid, where m is mapped)? */
static bool tb_of_module(const Module *m, size_t i)
{
    return tbs[i].valid && tbs[i].pc >= m->delta && tbs[i].pc - m->delta < m->size &&
           tbs[i].next_page == TB_NO_PAGE;
}

/* m's TBs from its image this process installed: [*first, *end). */
static void image_tbs(const Module *m, size_t *first, size_t *end)
{
    bool ours = m->img_state == IMG_INSTALLED && m->img_gen == flush_gen && m->img_end <= ntbs;
    *first = ours ? m->img_first : 0;
    *end = ours ? m->img_end : 0;
}

/* How a process used m's blocks: ran of them ran, beyond of those
 * outside its image's TBs; idle of its image's TBs did not run. */
typedef struct ImgUse { size_t ran, beyond, idle; } ImgUse;

static ImgUse image_use(const Module *m)
{
    size_t first, end;
    image_tbs(m, &first, &end);
    ImgUse u = { 0 };
    for (size_t i = 0; i < ntbs; i++) {
        if (!tb_of_module(m, i))
            continue;
        bool in_image = i >= first && i < end;
        if (tbs[i].used) {
            u.ran++;
            u.beyond += !in_image;
        } else
            u.idle += in_image;
    }
    return u;
}

/*
 * An image's blocks each cost about half what a block installed alone
 * does (README: ~1,200 cycles against ~2,400), whether they run or not:
 * it pays while more of them run than sit idle. So the image's blocks
 * that did not run are kept only while they are no more than those that
 * did (a program whose runs differ converges on what most of them share,
 * not on the union of all they ever ran: sh would install thousands of
 * blocks for `sh -c :`, and a cc1 compiling a conftest.c the 156,000 of
 * large compiles for the 56,000 it runs: 0.23 s instead of 0.14 s).
 */
static bool keep_idle(const ImgUse *u)
{
    return u->idle <= u->ran - u->beyond;
}

/* Is block b (made from a record) TB tb's translation, so that tb's slot
 * n is b's? The same build translates the same guest bytes the same way;
 * this catches a record of other bytes at its offset. */
static bool same_shape(const ImgBlk *b, const TB *tb)
{
    if (b->guest_size != tb->guest_size || b->host_size != tb->host_size ||
        b->cold_size != tb->cold_size || b->ninsns != tb->ninsns)
        return false;
    for (unsigned n = 0; n < b->nslots; n++)
        if (tb->jmp_stub[n] + tb->host_off - tb->cold_off != b->slots[n].stub)
            return false;
    return true;
}

/* The chains between o's blocks this process made or was hinted (blk_of:
 * each TB's block in o, UINT32_MAX for none). */
static bool gather_chains(ImgOut *o, const uint32_t *blk_of)
{
    for (size_t i = 0; i < ntbs; i++) {
        const ImgBlk *b = blk_of[i] != UINT32_MAX ? &o->blk[blk_of[i]] : NULL;
        if (!b || !same_shape(b, &tbs[i]))
            continue;
        for (unsigned n = 0; n < b->nslots; n++) {
            const TB *dst = tb_chain_target(&tbs[i], (int)n);
            uint32_t to = dst ? blk_of[dst - tbs] : UINT32_MAX;
            if (to == UINT32_MAX)
                continue;
            if (!pcache_grow((void **)&o->chain, &o->chainmax, o->nchain + 1, sizeof *o->chain))
                return false;
            o->chain[o->nchain++] = (ImgChain){ blk_of[i], to << 3 | n };
        }
    }
    return true;
}

/* The blocks of m's image, in TB order (the order they first ran): those
 * this process ran, and those its image installed that it did not run
 * while keep_idle says so; and the chains between them. */
static bool gather(const Module *m, const ImgUse *u, ImgOut *o)
{
    size_t first, end;
    image_tbs(m, &first, &end);
    bool idle_too = keep_idle(u);
    Capture *caps = malloc((m->ncap + 1) * sizeof *caps);
    uint32_t *blk_of = malloc((ntbs + 1) * sizeof *blk_of);
    if (!caps || !blk_of) {
        free(caps);
        free(blk_of);
        return false;
    }
    memset(blk_of, 0xff, (ntbs + 1) * sizeof *blk_of);
    if (m->ncap)                        /* (none: no index either) */
        memcpy(caps, m->capidx, m->ncap * sizeof *caps);
    qsort(caps, m->ncap, sizeof *caps, cmp_cap);
    bool ok = true;
    for (size_t i = 0; ok && i < ntbs; i++) {
        const TB *tb = &tbs[i];
        uint64_t off = tb->pc - m->delta;
        Rec r;
        if (!tb_of_module(m, i) || !(tb->used || (idle_too && i >= first && i < end)) ||
            !find_record(m, caps, m->ncap, off, &r))
            continue;
        size_t before = o->nblk;
        ok = out_block(o, &r, off, tb->pc) && o->hot_len + o->cold_len < IMG_MAX_BYTES;
        if (o->nblk > before)
            blk_of[i] = (uint32_t)before;
    }
    ok = ok && gather_chains(o, blk_of);
    free(caps);
    free(blk_of);
    return ok;
}

/*
 * Should this process write its image of m? When it ran enough blocks
 * there and has none, or its image fits it badly: more of the image's
 * blocks sat idle than ran (each costs more installed than it saves
 * running), or it ran an eighth more beyond the image than the image held
 * and the image is small. A rewrite costs ~5 us a block (gathering and
 * checking the records, writing the file: 0.7 s for cc1's 129,000) and
 * saves a later process ~0.5 us a block it runs: a large image grows no
 * more, or a program whose runs differ (cc1 compiling a conftest.c, then
 * a large file) would rewrite it at every other start. Counted before
 * anything else: finding the records costs more.
 */
static bool image_wanted(const Module *m, const ImgUse *u)
{
    if (u->ran < IMG_MIN)
        return false;
    switch (m->img_state) {
    case IMG_INSTALLED:                 /* (a few more go one by one, as without one) */
        return !keep_idle(u) ||
               (m->img_blocks < IMG_GROW_MAX &&
                u->beyond >= (m->img_blocks / 8 > 4 ? m->img_blocks / 8 : 4));
    case IMG_UNTRIED: {                 /* installed nothing from the file: if there is none */
        char name[160];
        pcache_file_name(m, prog_key, name, sizeof name);
        return faccessat(dir_fd, name, F_OK, 0) != 0;
    }
    case IMG_UNUSABLE:                  /* (made elsewhere: the larger stays) */
        return u->ran > m->img_blocks;
    default:
        return true;
    }
}

typedef struct ImgWrite { const uint8_t *p; size_t len; } ImgWrite;

static bool write_image(int fd, void *arg)
{
    const ImgWrite *w = arg;
    return write(fd, w->p, w->len) == (ssize_t)w->len;
}

/* The image of o for m, written. */
static bool image_write(const Module *m, const ImgOut *o)
{
    ImgHead h = { .build = build_hash, .config = config_hash, .idlen = m->idlen,
                  .nblk = (uint32_t)o->nblk, .size = m->size, .prog = prog_key,
                  .delta = m->delta, .hot_len = (uint32_t)o->hot_len,
                  .cold_len = (uint32_t)o->cold_len, .npairs = (uint32_t)o->npairs,
                  .nrel = (uint32_t)o->nrel, .nchain = (uint32_t)o->nchain,
                  .guest_len = (uint32_t)o->guest_len };
    memcpy(h.magic, IMG_MAGIC, 8);
    memcpy(h.id, m->id, 32);
    for (int k = 0; k < NEAR_KINDS; k++)
        h.nnear[k] = (uint32_t)o->nnear[k];
    size_t len = (size_t)img_size(&h);
    uint8_t *p = calloc(1, len);
    if (!p)
        return false;
    memcpy(p, &h, sizeof h);
    Img im = img_parts((const ImgHead *)p);
    memcpy((void *)im.blk, o->blk, o->nblk * sizeof *o->blk);
    memcpy((void *)im.pairs, o->pairs, o->npairs * 4);
    uint32_t *near = (uint32_t *)im.near;
    for (int k = 0; k < NEAR_KINDS; k++) {
        if (o->nnear[k])                /* (a kind no block had: no buffer) */
            memcpy(near, o->near[k], o->nnear[k] * 4);
        near += o->nnear[k];
    }
    if (o->nrel)
        memcpy((void *)im.rel, o->rel, o->nrel * sizeof *o->rel);
    if (o->nchain)
        memcpy((void *)im.chain, o->chain, o->nchain * sizeof *o->chain);
    memcpy((void *)im.guest, o->guest, o->guest_len);
    memcpy((void *)im.hot, o->hot, o->hot_len);
    memcpy((void *)im.cold, o->cold, o->cold_len);
    ((ImgHead *)p)->sum = pcache_image_sum(p, len);
    char name[160];
    pcache_file_name(m, prog_key, name, sizeof name);
    ImgWrite w = { p, len };
    bool ok = pcache_write_new(name, write_image, &w);
    free(p);
    return ok;
}

static bool forked;     /* a forked process: its blocks are mostly its parent's */

void pcache_image_fork_child(void)
{
    forked = true;
}

/*
 * Has this program run before? Its first run leaves a mark, an empty file
 * named by the options and the program, and writes no image: most
 * programs a build runs once (configure's conftests), and each would
 * leave images of ld.so and libc no later process installs (120 KiB a
 * program; its run took a quarter longer writing them). Its next run
 * writes them. A program that installed an image has run before.
 */
static bool image_installed(void)
{
    for (int i = 0; i < nmodules; i++)
        if (modules[i].img_state == IMG_INSTALLED)
            return true;
    return false;
}

/* Was the program's mark there? If not, leave it. */
static bool program_marked(void)
{
    char name[64];
    snprintf(name, sizeof name, "prog-%016llx-%016llx.xc", (unsigned long long)config_hash,
             (unsigned long long)prog_key);
    struct stat st;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && pcache_own_file(&st))
        return true;
    int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    xlat_log(LOG_CACHE, "cache: this program's first run: its images wait for the next\n");
    return false;
}

static bool program_seen(void)
{
    static int seen = -1;
    if (seen < 0)
        seen = image_installed() || program_marked();
    return seen;
}

void pcache_image_flush(void)
{
    if (!prog_key || guest_mem.ops->code_phys || forked || !tune.cache_image)
        return;
    for (int i = 0; i < nmodules; i++) {
        Module *m = &modules[i];
        if (m->delta_state != 1)
            continue;
        ImgUse u = image_use(m);        /* (one walk of the TBs for both) */
        if (!image_wanted(m, &u))
            continue;
        if (!program_seen())
            return;
        ImgOut o = { 0 };
        if (gather(m, &u, &o) && o.nblk >= IMG_MIN) {
            bool ok = image_write(m, &o);
            xlat_log(LOG_CACHE, "cache: %s: %s an image of %zu blocks\n", m->name,
                     ok ? "wrote" : "could not write", o.nblk);
        }
        out_free(&o);
    }
}
