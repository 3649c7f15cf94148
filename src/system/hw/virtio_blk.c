/*
 * virtio-blk (virtio 1.2 section 5.2) on a raw image file, one request
 * queue, behind the virtio-mmio transport (virtio_mmio.h).
 *
 * Offered: VIRTIO_BLK_F_SEG_MAX (254, QEMU's queue-size - 2),
 * VIRTIO_BLK_F_BLK_SIZE (512), VIRTIO_BLK_F_FLUSH, and VIRTIO_BLK_F_RO for
 * a read-only disk. Config: capacity (512-byte sectors: the file's size
 * rounded up, as QEMU's block layer does; the tail past the end of the
 * file reads as zeros), seg_max, blk_size, num_queues = 1.
 *
 * Requests: IN (read), OUT (write), FLUSH (fdatasync), GET_ID (the empty
 * serial QEMU gives a drive without serial=: NUL bytes); any other type is
 * VIRTIO_BLK_S_UNSUPP. A request is a 16-byte header {type, reserved,
 * sector} in the readable buffers, the data, and a status byte at the end
 * of the writable buffers, split across descriptors in any way (the layout
 * is not fixed in virtio 1.x). As in QEMU (hw/block/virtio-blk.c): a
 * header shorter than 16 bytes or no writable byte for the status breaks
 * the device (NEEDS_RESET); a data length that is not a multiple of 512 or
 * a range past the capacity, a write to a read-only disk and a host I/O
 * error are VIRTIO_BLK_S_IOERR; the used length is the whole writable
 * size.
 *
 * Data moves between guest RAM and the file with pread/pwrite on the
 * checked buffers, synchronously (the notifying hart waits). In snapshot
 * mode the file is opened read-only and written pages (4 KiB) are copied
 * into memory on their first write (an open-addressing hash of page
 * number -> copy); reads take a page's copy when there is one. The copies
 * live until the process exits.
 */
#define _GNU_SOURCE
#include "system/hw/virtio.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/settings.h"
#include "system/hw/virtio_mmio.h"
#include "system/machine.h"

#define SECTOR      512u
#define COW_PAGE    4096u
#define BLK_SEG_MAX 254u

#define VIRTIO_ID_BLOCK 2

#define VIRTIO_BLK_F_SEG_MAX  2
#define VIRTIO_BLK_F_RO       5
#define VIRTIO_BLK_F_BLK_SIZE 6
#define VIRTIO_BLK_F_FLUSH    9

#define VIRTIO_BLK_T_IN     0
#define VIRTIO_BLK_T_OUT    1
#define VIRTIO_BLK_T_FLUSH  4
#define VIRTIO_BLK_T_GET_ID 8
#define VIRTIO_BLK_T_BARRIER 0x80000000u       /* legacy: ignored, as QEMU */

#define VIRTIO_BLK_S_OK     0
#define VIRTIO_BLK_S_IOERR  1
#define VIRTIO_BLK_S_UNSUPP 2

#define VIRTIO_BLK_ID_BYTES 20
#define BLK_HDR_LEN 16

/* Config space offsets (struct virtio_blk_config). */
#define CFG_CAPACITY   0
#define CFG_SEG_MAX    12
#define CFG_BLK_SIZE   20
#define CFG_NUM_QUEUES 34
#define CFG_LEN        36

/* Snapshot pages: page number -> private copy. */
typedef struct CowMap {
    uint64_t *keys;              /* page + 1; 0: empty */
    uint8_t **pages;
    size_t cap, used;            /* cap: a power of 2 */
} CowMap;

typedef struct Blk {
    int fd;
    uint64_t capacity;           /* sectors */
    bool readonly, snapshot;
    CowMap cow;
    char name[32];               /* "virtio-blk@10008000": for messages */
} Blk;

/* -- Host file I/O ------------------------------------------------------------ */

/* Read all of [pos, pos+len), zeros past the end of the file. */
static int pread_full(int fd, uint8_t *p, size_t len, uint64_t pos)
{
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            memset(p, 0, len);
            return 0;
        }
        p += r;
        pos += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

static int pwrite_full(int fd, const uint8_t *p, size_t len, uint64_t pos)
{
    while (len) {
        ssize_t r = pwrite(fd, p, len, (off_t)pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        pos += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

/* -- Snapshot pages ------------------------------------------------------------ */

static size_t cow_slot(const CowMap *c, uint64_t page)
{
    size_t i = (size_t)((page * 0x9e3779b97f4a7c15ULL) >> 20) & (c->cap - 1);
    while (c->keys[i] && c->keys[i] != page + 1)
        i = (i + 1) & (c->cap - 1);
    return i;
}

static uint8_t *cow_find(const CowMap *c, uint64_t page)
{
    if (!c->cap)
        return NULL;
    size_t i = cow_slot(c, page);
    return c->keys[i] ? c->pages[i] : NULL;
}

/* Double the table (or make the first). false: out of memory. */
static bool cow_grow(CowMap *c)
{
    CowMap n = { calloc(c->cap ? 2 * c->cap : 64, sizeof *n.keys),
                 calloc(c->cap ? 2 * c->cap : 64, sizeof *n.pages),
                 c->cap ? 2 * c->cap : 64, c->used };
    if (!n.keys || !n.pages) {
        free(n.keys);
        free(n.pages);
        return false;
    }
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->keys[i])
            continue;
        size_t j = cow_slot(&n, c->keys[i] - 1);
        n.keys[j] = c->keys[i];
        n.pages[j] = c->pages[i];
    }
    free(c->keys);
    free(c->pages);
    *c = n;
    return true;
}

/* The private copy of page, made from the file if there is none. NULL:
 * out of memory or a host read error. */
static uint8_t *cow_get(Blk *b, uint64_t page)
{
    CowMap *c = &b->cow;
    uint8_t *p = cow_find(c, page);
    if (p)
        return p;
    if (2 * (c->used + 1) > c->cap && !cow_grow(c))
        return NULL;
    if (!(p = malloc(COW_PAGE)) || pread_full(b->fd, p, COW_PAGE, page * COW_PAGE) < 0) {
        free(p);
        return NULL;
    }
    size_t i = cow_slot(c, page);
    c->keys[i] = page + 1;
    c->pages[i] = p;
    c->used++;
    return p;
}

/* -- Data transfer ------------------------------------------------------------- */

typedef struct BlkIo {
    Blk *b;
    uint64_t pos;                /* byte offset in the image */
    bool write;
} BlkIo;

/* One piece of guest memory <-> the snapshot view, page by page. */
static int snapshot_piece(BlkIo *io, uint8_t *p, size_t len)
{
    while (len) {
        uint64_t page = io->pos / COW_PAGE;
        size_t in_page = (size_t)(io->pos % COW_PAGE);
        size_t n = COW_PAGE - in_page < len ? COW_PAGE - in_page : len;
        uint8_t *copy = io->write ? cow_get(io->b, page) : cow_find(&io->b->cow, page);
        if (io->write && !copy)
            return -1;
        if (io->write)
            memcpy(copy + in_page, p, n);
        else if (copy)
            memcpy(p, copy + in_page, n);
        else if (pread_full(io->b->fd, p, n, io->pos) < 0)
            return -1;
        io->pos += n;
        p += n;
        len -= n;
    }
    return 0;
}

static int io_piece(void *ctx, uint8_t *p, size_t len)
{
    BlkIo *io = ctx;
    if (io->b->snapshot)
        return snapshot_piece(io, p, len);
    int r = io->write ? pwrite_full(io->b->fd, p, len, io->pos)
                      : pread_full(io->b->fd, p, len, io->pos);
    if (r == 0)
        io->pos += len;
    return r;
}

/* IN or OUT of the data part of req at sector. */
static uint8_t blk_rw(Blk *b, const VirtqReq *req, uint64_t sector, bool write)
{
    const VirtqSeg *segs = write ? req->out : req->in;
    unsigned n = write ? req->nout : req->nin;
    uint64_t off = write ? BLK_HDR_LEN : 0;
    uint64_t len = write ? req->out_len - BLK_HDR_LEN : req->in_len - 1;
    if (len % SECTOR || sector > b->capacity || len / SECTOR > b->capacity - sector) {
        xlat_log(LOG_GUEST_ERRORS, "%s: %s of %llu bytes at sector %llu: not whole sectors "
                 "inside the disk (%llu sectors)\n", b->name, write ? "write" : "read",
                 (unsigned long long)len, (unsigned long long)sector,
                 (unsigned long long)b->capacity);
        return VIRTIO_BLK_S_IOERR;
    }
    if (write && b->readonly) {
        xlat_log(LOG_GUEST_ERRORS, "%s: write to a read-only disk\n", b->name);
        return VIRTIO_BLK_S_IOERR;
    }
    BlkIo io = { b, sector * SECTOR, write };
    if (virtq_for_range(segs, n, off, len, io_piece, &io) == 0)
        return VIRTIO_BLK_S_OK;
    xlat_log(LOG_GUEST_ERRORS, "%s: host %s error at byte %llu: %s\n", b->name,
             write ? "write" : "read", (unsigned long long)io.pos, strerror(errno));
    return VIRTIO_BLK_S_IOERR;
}

static uint8_t blk_flush(const Blk *b)
{
    if (b->readonly || b->snapshot || fdatasync(b->fd) == 0)
        return VIRTIO_BLK_S_OK;
    return VIRTIO_BLK_S_IOERR;
}

static uint8_t blk_get_id(const VirtqReq *req)
{
    static const uint8_t serial[VIRTIO_BLK_ID_BYTES];     /* empty, as QEMU's default */
    uint64_t room = req->in_len - 1;
    virtq_copy_to(req->in, req->nin, 0, serial, room < sizeof serial ? room : sizeof serial);
    return VIRTIO_BLK_S_OK;
}

static int64_t blk_handle(void *opaque, unsigned q, VirtqReq *req)
{
    Blk *b = opaque;
    (void)q;
    uint8_t hdr[BLK_HDR_LEN];
    if (req->out_len < BLK_HDR_LEN) {
        req->bad = "virtio-blk request outhdr too short";
        return -1;
    }
    if (req->in_len < 1) {
        req->bad = "virtio-blk request inhdr too short";
        return -1;
    }
    virtq_copy_from(req->out, req->nout, 0, hdr, sizeof hdr);
    uint32_t type;
    uint64_t sector;
    memcpy(&type, hdr, 4);
    memcpy(&sector, hdr + 8, 8);
    type = le32toh(type) & ~VIRTIO_BLK_T_BARRIER;
    sector = le64toh(sector);
    uint8_t status;
    switch (type) {
    case VIRTIO_BLK_T_IN:     status = blk_rw(b, req, sector, false); break;
    case VIRTIO_BLK_T_OUT:    status = blk_rw(b, req, sector, true); break;
    case VIRTIO_BLK_T_FLUSH:  status = blk_flush(b); break;
    case VIRTIO_BLK_T_GET_ID: status = blk_get_id(req); break;
    default:                  status = VIRTIO_BLK_S_UNSUPP; break;
    }
    virtq_copy_to(req->in, req->nin, req->in_len - 1, &status, 1);
    return (int64_t)req->in_len;
}

/* -- Setup --------------------------------------------------------------------- */

/* QEMU's image locking, simplified to one whole-file OFD lock: writers
 * exclusive, readers shared. */
static int lock_image(int fd, bool writable)
{
    struct flock fl = { .l_type = writable ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET };
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static int open_image(const char *path, bool writable, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "Could not open '%s': %s", path, strerror(errno));
        return -1;
    }
    off_t end = lseek(fd, 0, SEEK_END);
    if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) || end < 0) {
        snprintf(err, errlen, "'%s' is not a regular file or block device", path);
        close(fd);
        return -1;
    }
    if (lock_image(fd, writable) < 0 && (errno == EAGAIN || errno == EACCES)) {
        snprintf(err, errlen, "Failed to get \"%s\" lock on '%s': Is another process using "
                 "the image?", writable ? "write" : "shared read", path);
        close(fd);
        return -1;
    }
    *size = (uint64_t)end;
    return fd;
}

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int virtio_blk_add(unsigned slot, const char *path, bool snapshot, bool readonly, char *err,
                   size_t errlen)
{
    uint64_t size;
    int fd = open_image(path, !readonly && !snapshot, &size, err, errlen);
    if (fd < 0)
        return -1;
    Blk *b = malloc(sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    *b = (Blk){ .fd = fd, .capacity = (size + SECTOR - 1) / SECTOR, .readonly = readonly,
                .snapshot = snapshot && !readonly };
    snprintf(b->name, sizeof b->name, "virtio-blk@%llx",
             (unsigned long long)(VIRT_VIRTIO_BASE + (uint64_t)slot * 0x1000));
    VirtioDevice dev = {
        .name = "virtio-blk", .device_id = VIRTIO_ID_BLOCK,
        .features = 1ULL << VIRTIO_BLK_F_SEG_MAX | 1ULL << VIRTIO_BLK_F_BLK_SIZE
                  | 1ULL << VIRTIO_BLK_F_FLUSH | (readonly ? 1ULL << VIRTIO_BLK_F_RO : 0),
        .nqueues = 1, .config_len = CFG_LEN, .handle = blk_handle, .opaque = b,
    };
    put_le(dev.config + CFG_CAPACITY, b->capacity, 8);
    put_le(dev.config + CFG_SEG_MAX, BLK_SEG_MAX, 4);
    put_le(dev.config + CFG_BLK_SIZE, SECTOR, 4);
    put_le(dev.config + CFG_NUM_QUEUES, 1, 2);
    if (virtio_mmio_add(slot, &dev, err, errlen) < 0) {
        close(fd);
        free(b);
        return -1;
    }
    return 0;
}
