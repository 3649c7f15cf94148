/*
 * libFuzzer target: the persistent translation cache's file reader
 * (src/exec/pcache_file.c) on arbitrary bytes, as a cache file.
 *
 * Hashes only catch accidents; a file written by someone who can write the
 * user's cache directory can carry the right ones. So the input's hashes
 * are made right here before it is read (the header's, every entry's
 * whose record lies inside the file), and the reader's own checks must
 * then stop everything malformed: pcache_file_check on the whole file,
 * pcache_record on every entry, and every part of an accepted record
 * (pcache_rec_parts) read within the file. Never a crash, a hang or a
 * read outside the input (ASan). The same bytes as a mapped ELF file too:
 * its identity (build id or hash) from the first page must be the one
 * from the whole file. An input that starts as a start image does
 * (pcache_image.c) is read as one: its hash made right, then
 * pcache_image_check must stop everything malformed, reading only
 * inside the input.
 * Built and run by tests/fuzz.sh (seeded with real cache files).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/pcache_file.h"

static uint8_t *buf;
static size_t buf_cap;

/* Make the input's hashes right where its lengths allow. */
static void fix_sums(uint8_t *p, size_t len)
{
    FileHead *h = (FileHead *)p;
    if (len < sizeof *h || h->nent > (len - sizeof *h) / ENT_BYTES)
        return;
    FileEnt *ent = (FileEnt *)(h + 1);
    const uint8_t *data = file_records(h);
    size_t avail = len - (size_t)(data - p);
    for (uint64_t i = 0; i < h->nent; i++)
        if ((uint64_t)ent[i].pos + ent[i].len <= avail)
            ent[i].sum = hash_bytes(data + ent[i].pos, ent[i].len, 4);
    FileHead copy = *h;
    copy.sum = 0;
    h->sum = hash_bytes(ent, h->nent * sizeof(FileEnt), hash_bytes(&copy, sizeof copy, 3));
}

/* Touch every byte of an accepted record's parts (ASan checks the reads). */
static unsigned touch(const uint8_t *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

/* The input as a mapped file: its identity from a first part alone (xlat
 * reads a page), when that says, is the one from all of it. */
static void identity(const uint8_t *p, size_t size)
{
    uint8_t whole[32], head[32];
    uint32_t nwhole, nhead;
    if (!pcache_identify(p, size, size, whole, &nwhole))
        abort();                        /* all of the file is always enough */
    const size_t cuts[] = { 64, 512, size / 2 };
    for (unsigned i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        if (cuts[i] < size && pcache_identify(p, cuts[i], size, head, &nhead) &&
            (nhead != nwhole || memcmp(head, whole, 32) != 0))
            abort();
}

/* The input as a start image of its own file and program. */
static int image(uint8_t *p, size_t size)
{
    ImgHead *h = (ImgHead *)p;
    Module m = { 0 };
    memcpy(m.id, h->id, sizeof m.id);
    m.idlen = h->idlen;
    m.size = h->size;
    build_hash = h->build;
    config_hash = h->config;
    prog_key = h->prog;
    h->sum = pcache_image_sum(p, size);
    (void)pcache_image_check(p, size, &m);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > FILE_MAX)
        return 0;
    if (size > buf_cap) {
        free(buf);
        buf = malloc(size);
        if (!buf)
            abort();
        buf_cap = size;
    }
    /* An 8-aligned copy, as a mapped file is, with its hashes right. */
    memcpy(buf, data, size);
    identity(buf, size);
    if (size >= sizeof(ImgHead) && memcmp(buf, IMG_MAGIC, 8) == 0)
        return image(buf, size);
    fix_sums(buf, size);
    Module m = { 0 };
    if (size >= sizeof(FileHead)) {
        const FileHead *h = (const FileHead *)buf;
        memcpy(m.id, h->id, sizeof m.id);
        m.idlen = h->idlen;
        m.size = h->size;
        build_hash = h->build;
        config_hash = h->config;
    }
    if (pcache_file_check(buf, size, &m))
        return 0;
    const FileHead *h = (const FileHead *)buf;
    const FileEnt *ent = (const FileEnt *)(h + 1);
    const uint64_t *progs = file_progs(h);
    const uint8_t *recs = file_records(h);
    volatile unsigned sink = 0;
    for (uint64_t i = 0; i < h->nent; i++) {
        const RecHead *r = pcache_record(recs, h->data_len, &ent[i]);
        if (!r)
            continue;
        Rec parts = pcache_rec_parts(r);
        sink += touch((const uint8_t *)parts.slots, r->nslots * sizeof(RecSlot));
        sink += touch((const uint8_t *)parts.map, r->ninsns * 4u);
        sink += touch((const uint8_t *)parts.near, rec_nnear(r) * 2u);
        sink += touch((const uint8_t *)parts.rel, r->nrel * sizeof(RecReloc));
        sink += touch(parts.guest, r->guest_size) + touch(parts.hot, r->host_size) +
                touch(parts.cold, r->cold_size);
        const FileEnt *f = pcache_find(ent, h->nent, ent[i].off);
        if (f && f->off != ent[i].off)
            abort();
        sink += (unsigned)progs[i];     /* each entry's hint is inside the file too */
    }
    (void)sink;
    return 0;
}
