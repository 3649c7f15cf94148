/*
 * The virtio-mmio transport and its devices (src/system/hw/virtio_*.c)
 * through the machine's bus, as a hart reaches them
 * (machine_find_mmio(pa)->ops), with a small driver written here: rings
 * and buffers in a fake RAM (machine.ram), fenced by PROT_NONE pages so a
 * host access past either end of it crashes the test.
 *   - empty slots (QEMU's answers), registers, feature negotiation
 *     (VERSION_1 required, nothing unoffered), config space, reset;
 *   - virtio-rng: direct, chained and indirect buffers, the level
 *     interrupt and its ACK, event index and NO_INTERRUPT suppression;
 *   - virtio-blk: read, write, flush, get id, unsupported types, IOERR for
 *     ranges past the disk or not whole sectors, any request layout;
 *     snapshot (writes kept in memory, across pages, many pages); read-only
 *     (VIRTIO_BLK_F_RO, writes IOERR, the file unchanged); image locking;
 *   - malicious rings, each refused with NEEDS_RESET, a config interrupt
 *     and a -d guest_errors line, no used entry, and a device that works
 *     again after reset; then random rings that must not crash.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "virtio_driver.h"

/* Slots: QEMU's order, from the top. */
enum { S_BLK = 7, S_SNAP = 6, S_RO = 5, S_RNG = 4, S_RO2 = 3, S_EMPTY = 0 };

#define BLK_F_RO 5
#define BLK_F_FLUSH 9

/* RAM layout (offsets): the rings, indirect tables, data. */
#define R_DESC     0x0000
#define R_AVAIL    0x4000
#define R_USED     0x6000
#define R_INDIRECT 0x10000
#define R_DATA     0x40000

/* -- A small driver ------------------------------------------------------------ */

typedef struct Drv {
    unsigned slot, qn;
    uint16_t avail_idx;            /* the driver's next avail index */
    uint16_t used_seen;
} Drv;

static void desc(unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
    desc_at(R_DESC, i, addr, len, flags, next);
}

static void queue_regs(unsigned slot, uint32_t num, uint64_t d, uint64_t a, uint64_t u)
{
    wr32(slot, QUEUE_SEL, 0);
    wr32(slot, QUEUE_NUM, num);
    wr32(slot, DESC_LO, (uint32_t)d);
    wr32(slot, DESC_HI, (uint32_t)(d >> 32));
    wr32(slot, DRIVER_LO, (uint32_t)a);
    wr32(slot, DRIVER_HI, (uint32_t)(a >> 32));
    wr32(slot, DEVICE_LO, (uint32_t)u);
    wr32(slot, DEVICE_HI, (uint32_t)(u >> 32));
}

/* Reset, negotiate features (only those offered), set up queue 0 of qn
 * entries, DRIVER_OK. */
static Drv drv_init(unsigned slot, uint64_t want, unsigned qn)
{
    Drv d = { slot, qn, 0, 0 };
    memset(host(0), 0, R_DATA);
    wr32(slot, STATUS, 0);
    CHECK_EQ(rd32(slot, STATUS), 0);
    wr32(slot, STATUS, ST_ACK | ST_DRIVER);
    wr32(slot, DEV_FEATURES_SEL, 1);
    uint64_t offered = (uint64_t)rd32(slot, DEV_FEATURES) << 32;
    wr32(slot, DEV_FEATURES_SEL, 0);
    offered |= rd32(slot, DEV_FEATURES);
    uint64_t f = (want | F(VIRTIO_F_VERSION_1)) & offered;
    wr32(slot, DRV_FEATURES_SEL, 1);
    wr32(slot, DRV_FEATURES, (uint32_t)(f >> 32));
    wr32(slot, DRV_FEATURES_SEL, 0);
    wr32(slot, DRV_FEATURES, (uint32_t)f);
    wr32(slot, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK(rd32(slot, STATUS) & ST_FEATURES_OK);
    wr32(slot, QUEUE_SEL, 0);
    CHECK_EQ(rd32(slot, QUEUE_READY), 0);
    CHECK_EQ(rd32(slot, QUEUE_NUM_MAX), VIRTQ_MAX_SIZE);
    queue_regs(slot, qn, pa(R_DESC), pa(R_AVAIL), pa(R_USED));
    wr32(slot, QUEUE_READY, 1);
    CHECK_EQ(rd32(slot, QUEUE_READY), 1);
    wr32(slot, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
    return d;
}

/* Offer the chain at head and notify queue 0. */
static void submit(Drv *d, uint16_t head)
{
    put16(R_AVAIL + 4 + 2 * (d->avail_idx % d->qn), head);
    d->avail_idx++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    put16(R_AVAIL + 2, d->avail_idx);
    wr32(d->slot, QUEUE_NOTIFY, 0);
}

/* The next used entry: true with its id and length, false if none. */
static bool used(Drv *d, uint32_t *id, uint32_t *len)
{
    if (get16(R_USED + 2) == d->used_seen)
        return false;
    uint64_t e = R_USED + 4 + 8 * (d->used_seen % d->qn);
    *id = get32(e);
    *len = get32(e + 4);
    d->used_seen++;
    return true;
}

static void ack_all(unsigned slot)
{
    wr32(slot, ISR_ACK, rd32(slot, ISR));
}

/* -- Empty slots, registers, negotiation --------------------------------------- */

static void test_empty_slot(void)
{
    CHECK_EQ(rd32(S_EMPTY, MAGIC), 0x74726976);
    CHECK_EQ(rd32(S_EMPTY, VERSION), 2);
    CHECK_EQ(rd32(S_EMPTY, DEVICE_ID), 0);
    CHECK_EQ(rd32(S_EMPTY, VENDOR_ID), 0x554d4551);
    wr32(S_EMPTY, STATUS, 7);
    CHECK_EQ(rd32(S_EMPTY, STATUS), 0);
    CHECK_EQ(rd32(S_EMPTY, QUEUE_NUM_MAX), 0);
    CHECK_EQ(rd32(S_EMPTY, CONFIG), 0);
}

static void test_registers(void)
{
    unsigned s = S_RNG;
    wr32(s, STATUS, 0);
    CHECK_EQ(rd32(s, MAGIC), 0x74726976);
    CHECK_EQ(rd32(s, VERSION), 2);
    CHECK_EQ(rd32(s, DEVICE_ID), 4);
    CHECK_EQ(rd32(s, VENDOR_ID), 0x554d4551);
    wr32(s, DEV_FEATURES_SEL, 0);
    CHECK_EQ(rd32(s, DEV_FEATURES), F(VIRTIO_F_INDIRECT_DESC) | F(VIRTIO_F_EVENT_IDX));
    wr32(s, DEV_FEATURES_SEL, 1);
    CHECK_EQ(rd32(s, DEV_FEATURES), 1);                       /* VERSION_1 */
    wr32(s, DEV_FEATURES_SEL, 2);
    CHECK_EQ(rd32(s, DEV_FEATURES), 0);
    wr32(s, QUEUE_SEL, 1);
    CHECK_EQ(rd32(s, QUEUE_NUM_MAX), 0);                      /* one queue only */
    CHECK_EQ(rd32(s, QUEUE_READY), 0);
    wr32(s, QUEUE_SEL, 0);
    CHECK_EQ(rd32(s, SHM_LEN_LO), 0xffffffff);                /* no shared memory */
    CHECK_EQ(rd32(s, CONFIG), 0xffffffff);                    /* no config space */
    log_skip();
    CHECK_EQ(rd32(s, QUEUE_NUM), 0);
    CHECK(logged("read of write-only register 0x38"));
    CHECK_EQ(rd(s, STATUS, 2), 0);
    CHECK(logged("2-byte read of register 0x70"));
    CHECK_EQ(rd(s, MAGIC, 8), 0);
    wr32(s, QUEUE_PFN, 5);
    CHECK(logged("legacy register 0x40"));
    CHECK_EQ(rd32(s, 0x0c4), 0);
    CHECK(logged("bad register offset 0xc4"));
    wr32(s, MAGIC, 1);
    CHECK(logged("write to read-only register 0"));
    rd32(s, 0x0ffc);                                          /* config, far past its end */
    wr(s, 0x0ffd, 1, 1);
    wr(s, QUEUE_ALIGN, 1, 1);
    log_skip();
}

/* FEATURES_OK needs VERSION_1 and nothing unoffered. */
static void test_negotiation(void)
{
    unsigned s = S_RNG;
    wr32(s, STATUS, 0);
    wr32(s, STATUS, ST_ACK | ST_DRIVER);
    wr32(s, DRV_FEATURES_SEL, 0);
    wr32(s, DRV_FEATURES, 0);
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK_EQ(rd32(s, STATUS), ST_ACK | ST_DRIVER);
    CHECK(logged("FEATURES_OK refused"));
    wr32(s, DRV_FEATURES_SEL, 1);
    wr32(s, DRV_FEATURES, 1 | 2);                             /* VERSION_1 + bit 33 */
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK_EQ(rd32(s, STATUS), ST_ACK | ST_DRIVER);
    wr32(s, DRV_FEATURES, 1);
    wr32(s, DRV_FEATURES_SEL, 2);
    wr32(s, DRV_FEATURES, 1);                                 /* bit 64: not offered */
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK_EQ(rd32(s, STATUS), ST_ACK | ST_DRIVER);
    wr32(s, STATUS, 0);
    wr32(s, STATUS, ST_ACK | ST_DRIVER);
    wr32(s, DRV_FEATURES_SEL, 1);
    wr32(s, DRV_FEATURES, 1);
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK_EQ(rd32(s, STATUS), ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    wr32(s, STATUS, 0);
    CHECK_EQ(rd32(s, STATUS), 0);
    log_skip();
}

/* -- virtio-rng --------------------------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void test_rng(void)
{
    Drv d = drv_init(S_RNG, F(VIRTIO_F_INDIRECT_DESC), 8);
    uint32_t id = 0, len = 0;
    desc(2, pa(R_DATA), 64, D_WRITE, 0);
    CHECK(!irq_line(S_RNG));
    submit(&d, 2);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(id, 2);
    CHECK_EQ(len, 64);
    CHECK(!all_zero(host(R_DATA), 64));
    CHECK(all_zero(host(R_DATA + 64), 64));                   /* nothing past the buffer */
    CHECK_EQ(rd32(S_RNG, ISR), 1);
    CHECK(irq_line(S_RNG));
    wr32(S_RNG, ISR_ACK, 1);
    CHECK_EQ(rd32(S_RNG, ISR), 0);
    CHECK(!irq_line(S_RNG));
}

static void test_rng_chains(void)
{
    Drv d = drv_init(S_RNG, F(VIRTIO_F_INDIRECT_DESC), 8);
    uint32_t id = 0, len = 0;

    /* A chain of two, and a readable buffer that is ignored. */
    desc(0, pa(R_DATA + 0x1000), 16, D_NEXT, 1);
    desc(1, pa(R_DATA + 0x2000), 100, D_WRITE | D_NEXT, 3);
    desc(3, pa(R_DATA + 0x3000), 28, D_WRITE, 0);
    submit(&d, 0);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(id, 0);
    CHECK_EQ(len, 128);
    CHECK(all_zero(host(R_DATA + 0x1000), 16));
    CHECK(!all_zero(host(R_DATA + 0x3000), 28));

    /* Indirect: a table of three writable buffers. */
    desc_at(R_INDIRECT, 0, pa(R_DATA + 0x4000), 10, D_WRITE | D_NEXT, 2);
    desc_at(R_INDIRECT, 2, pa(R_DATA + 0x5000), 20, D_WRITE | D_NEXT, 1);
    desc_at(R_INDIRECT, 1, pa(R_DATA + 0x6000), 30, D_WRITE, 0);
    desc(5, pa(R_INDIRECT), 48, D_INDIRECT, 0);
    submit(&d, 5);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(id, 5);
    CHECK_EQ(len, 60);
    CHECK(!all_zero(host(R_DATA + 0x6000), 30));
    ack_all(S_RNG);

    /* Many requests, the ring wrapping around several times. */
    for (unsigned i = 0; i < 40; i++) {
        desc(i % 8, pa(R_DATA + 0x100 * (i % 8)), 8, D_WRITE, 0);
        submit(&d, (uint16_t)(i % 8));
        CHECK(used(&d, &id, &len) && id == i % 8 && len == 8);
    }
    CHECK_EQ(rd32(S_RNG, STATUS) & ST_NEEDS_RESET, 0);

    /* VRING_AVAIL_F_NO_INTERRUPT without EVENT_IDX: no interrupt. */
    ack_all(S_RNG);
    put16(R_AVAIL, 1);
    submit(&d, 0);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(rd32(S_RNG, ISR), 0);
    put16(R_AVAIL, 0);
}

static void test_event_idx(void)
{
    Drv d = drv_init(S_RNG, F(VIRTIO_F_EVENT_IDX), 8);
    uint32_t id = 0, len = 0;
    desc(0, pa(R_DATA), 8, D_WRITE, 0);
    put16(R_AVAIL + 4 + 2 * 8, 5);                 /* used_event: interrupt after the 6th */
    submit(&d, 0);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(rd32(S_RNG, ISR), 0);
    CHECK_EQ(get16(R_USED + 4 + 8 * 8), 1);        /* avail_event = the avail index seen */
    put16(R_AVAIL + 4 + 2 * 8, 1);                 /* interrupt when used idx passes 1 */
    submit(&d, 0);
    CHECK(used(&d, &id, &len));
    CHECK_EQ(rd32(S_RNG, ISR), 1);
    CHECK(irq_line(S_RNG));
    ack_all(S_RNG);
    CHECK(!irq_line(S_RNG));
}

/* -- virtio-blk ----------------------------------------------------------------- */

#define BLK_T_IN 0
#define BLK_T_OUT 1
#define BLK_T_FLUSH 4
#define BLK_T_GET_ID 8

static char blk_path[256], snap_path[256], ro_path[256];

static void make_image(char *path, size_t size, size_t bytes)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, size, "%s/xlat-virtio-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    uint8_t *buf = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (uint8_t)(i / 512 * 7 + i % 251);   /* differs per sector */
    if (fd < 0 || write(fd, buf, bytes) != (ssize_t)bytes) {
        perror("image");
        exit(1);
    }
    free(buf);
    close(fd);
}

static void file_read(const char *path, uint64_t off, void *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && pread(fd, buf, len, (off_t)off) == (ssize_t)len);
    close(fd);
}

/* A request: header at R_DATA, data (len bytes) at R_DATA + 0x1000, status
 * at R_DATA + 0x800; descriptors 0, 1, 2. Returns the status byte. */
static uint8_t blk_req(Drv *d, uint32_t type, uint64_t sector, uint32_t len, bool dev_writes)
{
    uint8_t hdr[16] = { 0 };
    uint32_t t = htole32(type);
    uint64_t s = htole64(sector);
    memcpy(hdr, &t, 4);
    memcpy(hdr + 8, &s, 8);
    memcpy(host(R_DATA), hdr, 16);
    host(R_DATA + 0x800)[0] = 0xee;
    desc(0, pa(R_DATA), 16, D_NEXT, len ? 1 : 2);
    desc(1, pa(R_DATA + 0x1000), len, D_NEXT | (dev_writes ? D_WRITE : 0), 2);
    desc(2, pa(R_DATA + 0x800), 1, D_WRITE, 0);
    submit(d, 0);
    uint32_t id = 0, used_len = 0;
    CHECK(used(d, &id, &used_len));
    CHECK_EQ(id, 0);
    return host(R_DATA + 0x800)[0];
}

static void blk_config(unsigned s, uint64_t capacity)
{
    CHECK_EQ(rd32(s, DEVICE_ID), 2);
    CHECK_EQ(rd32(s, CONFIG) | (uint64_t)rd32(s, CONFIG + 4) << 32, capacity);
    CHECK_EQ(rd(s, CONFIG, 8), capacity);
    CHECK_EQ(rd(s, CONFIG, 1), capacity & 0xff);
    CHECK_EQ(rd32(s, CONFIG + 12), 254);                      /* seg_max */
    CHECK_EQ(rd32(s, CONFIG + 20), 512);                      /* blk_size */
    CHECK_EQ(rd(s, CONFIG + 34, 2), 1);                       /* num_queues */
    CHECK_EQ(rd32(s, CONFIG + 36), 0xffffffff);               /* past the end */
}

static void test_blk(void)
{
    Drv d = drv_init(S_BLK, F(VIRTIO_F_INDIRECT_DESC), 8);
    uint8_t want[512], got[512];
    blk_config(S_BLK, 128);
    wr32(S_BLK, DEV_FEATURES_SEL, 0);
    CHECK(rd32(S_BLK, DEV_FEATURES) & F(BLK_F_FLUSH));
    CHECK(!(rd32(S_BLK, DEV_FEATURES) & F(BLK_F_RO)));

    CHECK_EQ(blk_req(&d, BLK_T_IN, 3, 1024, true), 0);
    file_read(blk_path, 3 * 512, want, 512);
    CHECK(!memcmp(host(R_DATA + 0x1000), want, 512));
    CHECK_EQ(rd32(S_BLK, ISR), 1);
    ack_all(S_BLK);

    memset(host(R_DATA + 0x1000), 0xab, 512);
    CHECK_EQ(blk_req(&d, BLK_T_OUT, 5, 512, false), 0);
    file_read(blk_path, 5 * 512, got, 512);
    memset(want, 0xab, 512);
    CHECK(!memcmp(got, want, 512));
    CHECK_EQ(blk_req(&d, BLK_T_FLUSH, 0, 0, false), 0);
    memset(host(R_DATA + 0x1000), 0x55, 20);
    CHECK_EQ(blk_req(&d, BLK_T_GET_ID, 0, 20, true), 0);
    CHECK(all_zero(host(R_DATA + 0x1000), 20));               /* the empty serial */
    CHECK_EQ(blk_req(&d, 2, 0, 0, false), 2);                 /* SCSI: UNSUPP */

    log_skip();
    CHECK_EQ(blk_req(&d, BLK_T_IN, 127, 1024, true), 1);      /* past the end: IOERR */
    CHECK(logged("not whole sectors inside the disk"));
    CHECK_EQ(blk_req(&d, BLK_T_IN, 0, 100, true), 1);         /* not whole sectors */
    CHECK_EQ(blk_req(&d, BLK_T_OUT, UINT64_MAX / 256, 512, false), 1);
    CHECK_EQ(blk_req(&d, BLK_T_IN, UINT64_MAX, 512, true), 1);
    CHECK_EQ(rd32(S_BLK, STATUS) & ST_NEEDS_RESET, 0);        /* protocol errors only */
    log_skip();
}

/* Any layout: the header in two pieces, the data in three, the last of
 * them sharing a descriptor with the status byte; all indirect. */
static void test_blk_layout(void)
{
    Drv d = drv_init(S_BLK, F(VIRTIO_F_INDIRECT_DESC), 8);
    uint8_t want[512];
    memset(host(R_DATA + 0x2000), 0, 0x2000);
    uint32_t t = htole32(BLK_T_IN);
    uint64_t sec = htole64(7);
    memcpy(host(R_DATA), &t, 4);
    memset(host(R_DATA + 4), 0, 4);                           /* reserved */
    memcpy(host(R_DATA + 0x100), &sec, 8);
    desc_at(R_INDIRECT, 0, pa(R_DATA), 8, D_NEXT, 1);
    desc_at(R_INDIRECT, 1, pa(R_DATA + 0x100), 8, D_NEXT, 2);
    desc_at(R_INDIRECT, 2, pa(R_DATA + 0x2000), 100, D_WRITE | D_NEXT, 3);
    desc_at(R_INDIRECT, 3, pa(R_DATA + 0x2800), 312, D_WRITE | D_NEXT, 4);
    desc_at(R_INDIRECT, 4, pa(R_DATA + 0x3000), 101, D_WRITE, 0);
    desc(4, pa(R_INDIRECT), 5 * 16, D_INDIRECT, 0);
    submit(&d, 4);
    uint32_t id = 0, len = 0;
    CHECK(used(&d, &id, &len));
    CHECK_EQ(id, 4);
    CHECK_EQ(len, 513);
    file_read(blk_path, 7 * 512, want, 512);
    CHECK(!memcmp(host(R_DATA + 0x2000), want, 100));
    CHECK(!memcmp(host(R_DATA + 0x2800), want + 100, 312));
    CHECK(!memcmp(host(R_DATA + 0x3000), want + 412, 100));
    CHECK_EQ(host(R_DATA + 0x3000)[100], 0);                  /* status OK */
}

static void test_snapshot(void)
{
    Drv d = drv_init(S_SNAP, 0, 8);
    uint8_t orig[4096], got[4096];
    blk_config(S_SNAP, 2048);
    file_read(snap_path, 0, orig, sizeof orig);

    /* Sector 9: the second sector of page 1; its neighbours keep the file's bytes. */
    memset(host(R_DATA + 0x1000), 0x11, 512);
    CHECK_EQ(blk_req(&d, BLK_T_OUT, 9, 512, false), 0);
    file_read(snap_path, 9 * 512, got, 512);
    file_read(snap_path, 8 * 512, orig, 4096);
    CHECK(got[0] != 0x11);                                    /* the file is unchanged */
    CHECK_EQ(blk_req(&d, BLK_T_IN, 8, 4096, true), 0);
    CHECK(!memcmp(host(R_DATA + 0x1000), orig, 512));
    CHECK_EQ(host(R_DATA + 0x1200)[0], 0x11);
    CHECK_EQ(host(R_DATA + 0x1200)[511], 0x11);
    CHECK(!memcmp(host(R_DATA + 0x1400), orig + 1024, 3072));

    /* A write across a page boundary (sectors 14..17), read back. */
    for (unsigned i = 0; i < 2048; i++)
        host(R_DATA + 0x1000)[i] = (uint8_t)(i * 13);
    CHECK_EQ(blk_req(&d, BLK_T_OUT, 14, 2048, false), 0);
    memset(host(R_DATA + 0x1000), 0, 2048);
    CHECK_EQ(blk_req(&d, BLK_T_IN, 14, 2048, true), 0);
    bool same = true;
    for (unsigned i = 0; i < 2048; i++)
        same &= host(R_DATA + 0x1000)[i] == (uint8_t)(i * 13);
    CHECK(same);

    /* Many pages (the page table grows), each readable afterwards. */
    for (unsigned p = 20; p < 250; p++) {
        memset(host(R_DATA + 0x1000), (int)p, 512);
        CHECK_EQ(blk_req(&d, BLK_T_OUT, p * 8, 512, false), 0);
    }
    for (unsigned p = 20; p < 250; p += 23) {
        CHECK_EQ(blk_req(&d, BLK_T_IN, p * 8, 512, true), 0);
        CHECK_EQ(host(R_DATA + 0x1000)[0], p & 0xff);
        CHECK_EQ(host(R_DATA + 0x1000)[511], p & 0xff);
    }
    file_read(snap_path, 20 * 4096, got, 512);
    CHECK(got[0] != 20 || got[1] != 20);
    CHECK_EQ(blk_req(&d, BLK_T_FLUSH, 0, 0, false), 0);
}

static void test_readonly(void)
{
    Drv d = drv_init(S_RO, 0, 8);
    uint8_t want[512], got[512];
    blk_config(S_RO, 16);
    wr32(S_RO, DEV_FEATURES_SEL, 0);
    CHECK(rd32(S_RO, DEV_FEATURES) & F(BLK_F_RO));
    CHECK_EQ(blk_req(&d, BLK_T_IN, 1, 512, true), 0);
    file_read(ro_path, 512, want, 512);
    CHECK(!memcmp(host(R_DATA + 0x1000), want, 512));
    memset(host(R_DATA + 0x1000), 0x77, 512);
    log_skip();
    CHECK_EQ(blk_req(&d, BLK_T_OUT, 1, 512, false), 1);       /* IOERR */
    CHECK(logged("write to a read-only disk"));
    file_read(ro_path, 512, got, 512);
    CHECK(!memcmp(got, want, 512));
    CHECK_EQ(blk_req(&d, BLK_T_FLUSH, 0, 0, false), 0);
    CHECK_EQ(blk_req(&d, BLK_T_IN, 15, 512, true), 0);        /* the partial last sector */
    file_read(ro_path, 15 * 512, want, 412);
    CHECK(!memcmp(host(R_DATA + 0x1000), want, 412));
    CHECK(all_zero(host(R_DATA + 0x1000 + 412), 100));        /* past the end of the file */
    CHECK_EQ(rd32(S_RO, STATUS) & ST_NEEDS_RESET, 0);
}

static void test_add_errors(void)
{
    char err[256];
    CHECK_EQ(virtio_mmio_free_slot(), 7);
    CHECK_EQ(virtio_blk_add(S_BLK, blk_path, false, false, err, sizeof err), 0);
    CHECK_EQ(virtio_blk_add(S_SNAP, snap_path, true, false, err, sizeof err), 0);
    CHECK_EQ(virtio_blk_add(S_RO, ro_path, false, true, err, sizeof err), 0);
    CHECK_EQ(virtio_rng_add(S_RNG, err, sizeof err), 0);
    CHECK_EQ(virtio_blk_add(S_RO2, ro_path, false, true, err, sizeof err), 0); /* shared */
    CHECK_EQ(virtio_mmio_free_slot(), 2);

    CHECK_EQ(virtio_blk_add(2, blk_path, false, false, err, sizeof err), -1);
    CHECK(strstr(err, "lock") != NULL);                       /* slot 7 writes it */
    CHECK_EQ(virtio_blk_add(2, ro_path, false, false, err, sizeof err), -1);
    CHECK(strstr(err, "lock") || strstr(err, "Permission denied")); /* 5, 3 read it */
    CHECK_EQ(virtio_blk_add(2, "/nonexistent/disk.img", false, true, err, sizeof err), -1);
    CHECK(strstr(err, "Could not open") != NULL);
    CHECK_EQ(virtio_blk_add(2, "/tmp", false, true, err, sizeof err), -1);
    CHECK_EQ(virtio_rng_add(S_BLK, err, sizeof err), -1);
    CHECK(strstr(err, "taken") != NULL);
    CHECK_EQ(virtio_rng_add(8, err, sizeof err), -1);
    CHECK(strstr(err, "does not exist") != NULL);
    CHECK_EQ(virtio_mmio_free_slot(), 2);
}

/* -- Malicious rings ------------------------------------------------------------ */

/* After a refused request: NEEDS_RESET, a config interrupt, nothing used,
 * the reason logged; after a reset the device serves again. */
static void expect_refused(Drv *d, const char *why, int line)
{
    uint32_t id = 0, len = 0;
    unsigned s = d->slot;
    bool ok = (rd32(s, STATUS) & ST_NEEDS_RESET) && (rd32(s, ISR) & 2) && irq_line(s)
              && !used(d, &id, &len) && logged(why);
    if (!ok) {
        printf("FAIL %s:%d: malicious ring not refused as expected (%s)\n", __FILE__, line, why);
        failures++;
    }
    ack_all(s);
    submit(d, 0);                                             /* ignored: needs reset */
    CHECK(!used(d, &id, &len));
    log_skip();
    *d = drv_init(s, F(VIRTIO_F_INDIRECT_DESC), d->qn);
    if (s == S_BLK) {
        CHECK_EQ(blk_req(d, BLK_T_FLUSH, 0, 0, false), 0);
    } else {
        desc(0, pa(R_DATA), 8, D_WRITE, 0);
        submit(d, 0);
        CHECK(used(d, &id, &len) && len == 8);
    }
    ack_all(s);
}

#define REFUSED(d, why) expect_refused(d, why, __LINE__)

static void test_bad_chains(void)
{
    Drv d = drv_init(S_RNG, F(VIRTIO_F_INDIRECT_DESC), 8);
    uint64_t end = pa(RAM_SIZE);
    struct { uint64_t addr; uint32_t len; } outside[] = {
        { 0x1000, 16 }, { VIRT_RAM_BASE - 8, 16 }, { end - 8, 16 }, { end, 1 },
        { UINT64_MAX - 4, 16 }, { pa(0), 0xffffffff }, { pa(RAM_SIZE - 0x1000), 0x1001 },
    };
    for (unsigned i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        desc(0, outside[i].addr, outside[i].len, D_WRITE, 0);
        submit(&d, 0);
        REFUSED(&d, "buffer outside RAM");
    }
    desc(0, pa(R_DATA), 0, D_WRITE, 0);
    submit(&d, 0);
    REFUSED(&d, "zero-sized buffer");
    desc(0, pa(R_DATA), 8, D_WRITE | D_NEXT, 1);              /* 0 -> 1 -> 0 */
    desc(1, pa(R_DATA), 8, D_WRITE | D_NEXT, 0);
    submit(&d, 0);
    REFUSED(&d, "chain loops");
    desc(0, pa(R_DATA), 8, D_WRITE | D_NEXT, 0);              /* 0 -> 0 */
    submit(&d, 0);
    REFUSED(&d, "chain loops");
    desc(0, pa(R_DATA), 8, D_WRITE | D_NEXT, 8);
    submit(&d, 0);
    REFUSED(&d, "next descriptor beyond the table");
    desc(0, pa(R_DATA), 8, D_WRITE | D_NEXT, 1);
    desc(1, pa(R_DATA), 8, D_NEXT, 2);
    submit(&d, 0);
    REFUSED(&d, "device-readable buffer after a device-writable one");
    submit(&d, 8);
    REFUSED(&d, "avail ring names descriptor 8 of 8");
    put16(R_AVAIL + 2, (uint16_t)(d.avail_idx + 9));          /* 9 new buffers in 8 slots */
    wr32(S_RNG, QUEUE_NOTIFY, 0);
    REFUSED(&d, "avail index moved from 1 to 10");
}

static void test_bad_indirect(void)
{
    Drv d = drv_init(S_RNG, F(VIRTIO_F_INDIRECT_DESC), 8);
    static const struct { uint64_t addr; uint32_t len; uint16_t flags; const char *why; } bad[] = {
        { 0, 17, D_INDIRECT, "not a nonzero multiple of 16" },
        { 0, 0, D_INDIRECT, "not a nonzero multiple of 16" },
        { 1, 32, D_INDIRECT, "indirect table outside RAM" },
        { 0, 1025 * 16, D_INDIRECT, "longer than 1024" },
        { 0, 32, D_INDIRECT | D_NEXT, "indirect descriptor with NEXT" },
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        desc(0, bad[i].addr == 1 ? pa(RAM_SIZE - 16) : pa(R_INDIRECT), bad[i].len, bad[i].flags, 1);
        submit(&d, 0);
        REFUSED(&d, bad[i].why);
    }
    desc_at(R_INDIRECT, 0, pa(R_INDIRECT), 16, D_INDIRECT, 0);    /* nested */
    desc(0, pa(R_INDIRECT), 16, D_INDIRECT, 0);
    submit(&d, 0);
    REFUSED(&d, "indirect descriptor inside a chain or an indirect table");
    desc(0, pa(R_DATA), 8, D_WRITE | D_NEXT, 1);                  /* indirect after direct */
    desc(1, pa(R_INDIRECT), 16, D_INDIRECT, 0);
    desc_at(R_INDIRECT, 0, pa(R_DATA), 8, D_WRITE, 0);
    submit(&d, 0);
    REFUSED(&d, "indirect descriptor inside a chain");
    desc_at(R_INDIRECT, 0, pa(R_DATA), 8, D_WRITE | D_NEXT, 1);   /* a loop in the table */
    desc_at(R_INDIRECT, 1, pa(R_DATA), 8, D_WRITE | D_NEXT, 0);
    desc(0, pa(R_INDIRECT), 32, D_INDIRECT, 0);
    submit(&d, 0);
    REFUSED(&d, "chain loops");
    desc_at(R_INDIRECT, 0, pa(R_DATA), 8, D_WRITE | D_NEXT, 1);   /* next past the table */
    desc_at(R_INDIRECT, 1, pa(R_DATA), 8, D_WRITE | D_NEXT, 2);
    desc(0, pa(R_INDIRECT), 32, D_INDIRECT, 0);
    submit(&d, 0);
    REFUSED(&d, "next descriptor beyond the table");

    d = drv_init(S_RNG, 0, 8);                                    /* not negotiated */
    desc_at(R_INDIRECT, 0, pa(R_DATA), 8, D_WRITE, 0);
    desc(0, pa(R_INDIRECT), 16, D_INDIRECT, 0);
    submit(&d, 0);
    REFUSED(&d, "VIRTIO_F_INDIRECT_DESC was not negotiated");
}

static void test_bad_blk(void)
{
    Drv d = drv_init(S_BLK, 0, 8);
    desc(0, pa(R_DATA), 8, D_NEXT, 1);                        /* 8-byte header */
    desc(1, pa(R_DATA + 0x800), 1, D_WRITE, 0);
    submit(&d, 0);
    REFUSED(&d, "outhdr too short");
    d = drv_init(S_BLK, 0, 8);
    memset(host(R_DATA), 0, 16);
    desc(0, pa(R_DATA), 16, 0, 0);                            /* no status byte */
    submit(&d, 0);
    REFUSED(&d, "inhdr too short");
}

/* A queue set up with bad registers: NEEDS_RESET, never ready. */
static void bad_queue(uint32_t num, uint64_t dsc, uint64_t avl, uint64_t usd, const char *why,
                      int line)
{
    unsigned s = S_RNG;
    wr32(s, STATUS, 0);
    wr32(s, STATUS, ST_ACK | ST_DRIVER);
    wr32(s, DRV_FEATURES_SEL, 1);
    wr32(s, DRV_FEATURES, 1);
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    queue_regs(s, num, dsc, avl, usd);
    wr32(s, QUEUE_READY, 1);
    wr32(s, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
    wr32(s, QUEUE_NOTIFY, 0);
    if (!(rd32(s, STATUS) & ST_NEEDS_RESET) || rd32(s, QUEUE_READY) || !logged(why)) {
        printf("FAIL %s:%d: bad queue accepted (%s)\n", __FILE__, line, why);
        failures++;
    }
    wr32(s, STATUS, 0);
    CHECK_EQ(rd32(s, STATUS), 0);
    log_skip();
}

static void test_bad_queues(void)
{
    uint64_t dsc = pa(R_DESC), avl = pa(R_AVAIL), usd = pa(R_USED);
    bad_queue(3, dsc, avl, usd, "size 3 is not a power of 2", __LINE__);
    bad_queue(0, dsc, avl, usd, "size 0 is not a power of 2", __LINE__);
    bad_queue(2048, dsc, avl, usd, "size 2048", __LINE__);
    bad_queue(0xffffffff, dsc, avl, usd, "size 4294967295", __LINE__);
    bad_queue(8, pa(RAM_SIZE - 64), avl, usd, "ring outside RAM", __LINE__);
    bad_queue(8, dsc, pa(RAM_SIZE - 8), usd, "ring outside RAM", __LINE__);
    bad_queue(8, dsc, avl, 0x1000, "ring outside RAM", __LINE__);
    bad_queue(1024, dsc, avl, UINT64_MAX - 3, "ring outside RAM", __LINE__);
    bad_queue(8, dsc + 8, avl, usd, "rings misaligned", __LINE__);
    bad_queue(8, dsc, avl + 1, usd, "rings misaligned", __LINE__);
    bad_queue(8, dsc, avl, usd + 2, "rings misaligned", __LINE__);

    /* Notifies of queues that are not there or not ready: ignored, logged. */
    Drv d = drv_init(S_RNG, 0, 8);
    uint32_t id = 0, len = 0;
    log_skip();
    wr32(S_RNG, QUEUE_NOTIFY, 1);
    CHECK(logged("notify of queue 1 ignored: the queue does not exist"));
    wr32(S_RNG, QUEUE_NOTIFY, 0xffffffff);
    wr32(S_RNG, QUEUE_READY, 0);
    desc(0, pa(R_DATA), 8, D_WRITE, 0);
    submit(&d, 0);
    CHECK(logged("the queue is not ready"));
    CHECK(!used(&d, &id, &len));
    CHECK_EQ(rd32(S_RNG, STATUS) & ST_NEEDS_RESET, 0);
    d = drv_init(S_RNG, 0, 8);
    wr32(S_RNG, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);  /* DRIVER_OK dropped */
    desc(0, pa(R_DATA), 8, D_WRITE, 0);
    submit(&d, 0);
    CHECK(logged("DRIVER_OK is not set"));
    CHECK(!used(&d, &id, &len));
}

/* Random descriptor tables, heads and indices: anything but a crash or a
 * host access outside RAM (the guard pages, and ASan under SAN=1). */
static uint64_t rnd_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static uint64_t rnd_addr(void)
{
    switch (rnd() % 12) {
    case 0:  return pa(rnd() % RAM_SIZE);
    case 1:  return pa(RAM_SIZE) - rnd() % 64;
    case 2:  return VIRT_RAM_BASE - rnd() % 64;
    case 3:  return rnd();
    case 4:  return pa(R_INDIRECT + 16 * (rnd() % 8));
    default: return pa(R_DATA + rnd() % 0x10000);
    }
}

static void fuzz_rings(unsigned slot, unsigned rounds)
{
    unsigned refused = 0, served = 0;
    for (unsigned r = 0; r < rounds; r++) {
        drv_init(slot, F(VIRTIO_F_INDIRECT_DESC) | (r & 1 ? F(VIRTIO_F_EVENT_IDX) : 0), 8);
        for (unsigned i = 0; i < 8; i++) {
            uint32_t len = rnd() % 8 ? (uint32_t)(rnd() % 1100) : (uint32_t)rnd();
            uint16_t flags = (uint16_t)(rnd() % 4 | (rnd() % 6 ? 0 : D_INDIRECT));
            desc(i, rnd_addr(), len, flags, (uint16_t)(rnd() % 9));
            desc_at(R_INDIRECT, i, rnd_addr(), len, flags ^ D_INDIRECT, (uint16_t)(rnd() % 9));
        }
        if (slot == S_BLK)
            memcpy(host(R_DATA), &(uint32_t){ (uint32_t)(rnd() % 10) }, 4);
        for (unsigned k = 0; k < 4; k++) {
            put16(R_AVAIL + 4 + 2 * k, (uint16_t)(rnd() % 10));
            put16(R_AVAIL + 2, (uint16_t)(rnd() % 3 ? k + 1 : rnd()));
            wr32(slot, QUEUE_NOTIFY, 0);
        }
        refused += (rd32(slot, STATUS) & ST_NEEDS_RESET) != 0;
        served += get16(R_USED + 2);
        log_skip();
    }
    printf("fuzz slot %u: %u rounds, %u refused, %u requests served\n", slot, rounds, refused,
           served);
    CHECK(refused > 0 && served > 0);
}

int main(void)
{
    log_mask = LOG_GUEST_ERRORS;
    log_file = open_memstream(&log_buf, &log_len);
    ram_setup();
    machine.nharts = 1;                    /* no hart: the PLIC records the lines */
    plic_init();
    make_image(blk_path, sizeof blk_path, 128 * 512);
    make_image(snap_path, sizeof snap_path, 2048 * 512);
    make_image(ro_path, sizeof ro_path, 16 * 512 - 100);   /* rounded up to 16 sectors */
    chmod(ro_path, 0444);

    test_add_errors();
    virtio_mmio_init_empty_slots();
    test_empty_slot();
    test_registers();
    test_negotiation();
    test_rng();
    test_rng_chains();
    test_event_idx();
    test_blk();
    test_blk_layout();
    test_snapshot();
    test_readonly();
    test_bad_chains();
    test_bad_indirect();
    test_bad_blk();
    test_bad_queues();
    fuzz_rings(S_RNG, 3000);
    fuzz_rings(S_BLK, 3000);

    unlink(blk_path);
    unlink(snap_path);
    unlink(ro_path);
    printf("test_system_virtio: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
