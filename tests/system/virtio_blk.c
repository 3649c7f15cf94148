// system-disk: xlat virtio-blk: sector 1 written by the bare-metal test
// A minimal virtio-mmio version-2 driver for the first virtio-blk-device
// (virtio 1.2 sections 2.7 split virtqueues, 3.1 initialization, 4.2.2
// virtio-mmio, 5.2 block device) against the image the runner made (64 KiB,
// sector 0 starting with "XLAT-BARE-METAL-DISK"): the slots' magic, version
// and device ids (the disk in the top slot, 7), reset, feature negotiation
// (VERSION_1, and FLUSH when offered), queue 0, the capacity, then read
// sector 0, write sector 1 (the runner checks the host file after the run),
// read it back, a read into a page of code that has run (the code the
// device wrote must run after fence.i), GET_ID, a read past the end
// (IOERR) and a flush. Each
// completion raises InterruptStatus bit 0 and the slot's PLIC line (irq 8),
// taken in M-mode through claim/complete and acknowledged with
// InterruptACK.
#include "sys.h"

/* The same text as the system-disk directive above. */
#define SECTOR1_TEXT "xlat virtio-blk: sector 1 written by the bare-metal test"
#define SECTOR0_TEXT "XLAT-BARE-METAL-DISK"
#define DISK_SECTORS 128                  /* 64 KiB */

/* -- virtio-mmio ------------------------------------------------------------- */

#define VIRTIO_BASE(n) (0x10001000UL + 0x1000UL * (n))
#define VIRTIO_IRQ(n)  (1 + (n))
#define SLOTS 8
#define BLK_SLOT 7

enum {
    MAGIC = 0x000, VERSION = 0x004, DEVICE_ID = 0x008, DEVICE_FEATURES = 0x010,
    DEVICE_FEATURES_SEL = 0x014, DRIVER_FEATURES = 0x020, DRIVER_FEATURES_SEL = 0x024,
    QUEUE_SEL = 0x030, QUEUE_NUM_MAX = 0x034, QUEUE_NUM = 0x038, QUEUE_READY = 0x044,
    QUEUE_NOTIFY = 0x050, INTERRUPT_STATUS = 0x060, INTERRUPT_ACK = 0x064, STATUS = 0x070,
    QUEUE_DESC = 0x080, QUEUE_DRIVER = 0x090, QUEUE_DEVICE = 0x0a0, CONFIG = 0x100,
};
#define VIRT_MAGIC 0x74726976             /* "virt" */
#define ID_BLOCK 2

#define S_ACKNOWLEDGE 1
#define S_DRIVER      2
#define S_DRIVER_OK   4
#define S_FEATURES_OK 8

#define F_VERSION_1_HI (1u << 0)          /* feature bit 32: word 1, bit 0 */
#define F_BLK_FLUSH    (1u << 9)

#define REG(r) MMIO32(VIRTIO_BASE(BLK_SLOT) + (r))

/* -- The queue (16, 2 and 4 bytes aligned; one 3-descriptor chain at a time) */

#define QSIZE 8
#define DESC_F_NEXT  1
#define DESC_F_WRITE 2

typedef struct Desc { uint64_t addr; uint32_t len; uint16_t flags, next; } Desc;
typedef struct Avail { uint16_t flags, idx, ring[QSIZE], used_event; } Avail;
typedef struct UsedElem { uint32_t id, len; } UsedElem;
typedef struct Used { uint16_t flags, idx; UsedElem ring[QSIZE]; uint16_t avail_event; } Used;

static Desc desc[QSIZE] __attribute__((aligned(16)));
static volatile Avail avail __attribute__((aligned(2)));
static volatile Used used __attribute__((aligned(4)));
static uint16_t next_avail;

#define T_IN     0
#define T_OUT    1
#define T_FLUSH  4
#define T_GET_ID 8
#define S_OK    0
#define S_IOERR 1
#define S_UNSUPP 2

static struct { uint32_t type, reserved; uint64_t sector; } hdr;
static volatile uint8_t status_byte;
static uint8_t buf[512] __attribute__((aligned(16)));

#define A(p) ((uint64_t)(uintptr_t)(p))
static inline void fence(void) { asm volatile("fence rw, rw" ::: "memory"); }

static volatile uint64_t claimed, isr_in_handler, pending_after_claim;

static int mei_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MEI))
        return 0;
    claimed = MMIO32(PLIC_CLAIM(0));
    pending_after_claim = MMIO32(PLIC_PENDING(0));
    isr_in_handler = REG(INTERRUPT_STATUS);
    REG(INTERRUPT_ACK) = (uint32_t)isr_in_handler;
    MMIO32(PLIC_CLAIM(0)) = (uint32_t)claimed;
    return 1;
}

/* The used-buffer interrupt of the request just completed: pending in the
 * device and the PLIC, then taken through claim/complete and acknowledged. */
static void check_interrupt(void)
{
    uint32_t bit = 1u << VIRTIO_IRQ(BLK_SLOT);
    CHECK_BITS("  InterruptStatus: used buffer (bit 0)", REG(INTERRUPT_STATUS), 3, 1);
    CHECK_BITS("  PLIC: source 8 pending", MMIO32(PLIC_PENDING(0)), bit, bit);
    CHECK_BITS("  mip.MEIP set", csr_read(mip), MIP(IRQ_MEI), MIP(IRQ_MEI));
    claimed = 0;
    take_m_interrupt(mei_hook, MIP(IRQ_MEI), 1000000);
    expect_trap("  MEI taken", PRV_M, INTERRUPT | IRQ_MEI, ANY, 0);
    CHECK_EQ("  PLIC claim returns 8", claimed, VIRTIO_IRQ(BLK_SLOT));
    CHECK_BITS("  claimed: not pending", pending_after_claim, bit, 0);
    CHECK_BITS("  InterruptStatus in the handler", isr_in_handler, 1, 1);
    CHECK_EQ("  InterruptACK: InterruptStatus 0", REG(INTERRUPT_STATUS), 0);
    CHECK_BITS("  acknowledged: PLIC source 8 not pending", MMIO32(PLIC_PENDING(0)), bit, 0);
    CHECK_BITS("  mip.MEIP clear", csr_read(mip), MIP(IRQ_MEI), 0);
}

/*
 * One request: the header (device-readable), len bytes of data at data
 * (device-writable for a read; none when len is 0) and the status byte
 * (device-writable). Checks the completion and its interrupt; the status.
 */
static int request(uint32_t type, uint64_t sector, void *data, uint32_t len, int to_device)
{
    hdr.type = type;
    hdr.reserved = 0;
    hdr.sector = sector;
    status_byte = 0xff;
    unsigned n = 0;
    desc[n++] = (Desc){ A(&hdr), sizeof hdr, DESC_F_NEXT, 1 };
    if (len) {
        desc[n] = (Desc){ A(data), len, DESC_F_NEXT | (to_device ? 0 : DESC_F_WRITE), n + 1 };
        n++;
    }
    desc[n] = (Desc){ A(&status_byte), 1, DESC_F_WRITE, 0 };
    avail.ring[next_avail % QSIZE] = 0;
    fence();
    avail.idx = ++next_avail;
    fence();
    REG(QUEUE_NOTIFY) = 0;
    int done = WAIT_FOR(used.idx == next_avail, 2000000);
    fence();
    CHECK("  used index advanced", done);
    if (!done)
        return -1;
    const volatile UsedElem *e = &used.ring[(uint16_t)(next_avail - 1) % QSIZE];
    CHECK_EQ("  used id: the chain's head", e->id, 0);
    CHECK_EQ("  used len: the writable bytes", e->len, (to_device ? 0 : len) + 1);
    check_interrupt();
    return status_byte;
}

/* -- DMA into code ------------------------------------------------------------ */

/* A page of code the device overwrites: translations of it must go. */
static uint32_t code_page[1024] __attribute__((aligned(4096)));

static void dma_into_code(void)
{
    section("read into a page of code that has run");
    long (*f)(void) = (long (*)(void))(uintptr_t)code_page;
    code_page[0] = 0x00100513u;             /* li a0, 1 */
    code_page[1] = 0x00008067u;             /* ret */
    asm volatile("fence.i" ::: "memory");
    long before = 0;
    for (int i = 0; i < 40; i++)            /* translated by now under a JIT */
        before += f();
    CHECK_EQ("  the old code ran: li a0, 1", before, 40);
    /* Sector 2 gets li a0, 2; ret, then is read over the code. */
    uint32_t *words = (uint32_t *)buf;
    for (unsigned i = 0; i < sizeof buf / 4; i++)
        words[i] = 0x00000013u;             /* nop */
    words[0] = 0x00200513u;                 /* li a0, 2 */
    words[1] = 0x00008067u;
    CHECK_EQ("  sector 2 written", request(T_OUT, 2, buf, sizeof buf, 1), S_OK);
    CHECK_EQ("  read into the code page", request(T_IN, 2, code_page, sizeof buf, 0), S_OK);
    asm volatile("fence.i" ::: "memory");
    long after = 0;
    for (int i = 0; i < 40; i++)
        after += f();
    CHECK_EQ("  the code the device wrote runs: li a0, 2", after, 80);
}

/* -- The test ----------------------------------------------------------------- */

static void probe_slots(void)
{
    section("virtio-mmio slots");
    for (unsigned n = 0; n < SLOTS; n++) {
        CHECK_EQ("magic \"virt\"", MMIO32(VIRTIO_BASE(n) + MAGIC), VIRT_MAGIC);
        CHECK_EQ("version 2", MMIO32(VIRTIO_BASE(n) + VERSION), 2);
        CHECK_EQ(n == BLK_SLOT ? "slot 7: block device (2)" : "no device (0)",
                 MMIO32(VIRTIO_BASE(n) + DEVICE_ID), n == BLK_SLOT ? ID_BLOCK : 0);
    }
}

static uint32_t negotiate(void)
{
    section("initialization");
    REG(STATUS) = 0;
    CHECK_EQ("reset: status 0", REG(STATUS), 0);
    REG(STATUS) = S_ACKNOWLEDGE;
    REG(STATUS) = S_ACKNOWLEDGE | S_DRIVER;
    REG(DEVICE_FEATURES_SEL) = 1;
    uint32_t hi = REG(DEVICE_FEATURES);
    REG(DEVICE_FEATURES_SEL) = 0;
    uint32_t lo = REG(DEVICE_FEATURES);
    CHECK_BITS("VIRTIO_F_VERSION_1 offered", hi, F_VERSION_1_HI, F_VERSION_1_HI);
    /* VERSION_1, and FLUSH when offered (a flush needs it negotiated). */
    uint32_t want = lo & F_BLK_FLUSH;
    REG(DRIVER_FEATURES_SEL) = 1;
    REG(DRIVER_FEATURES) = F_VERSION_1_HI;
    REG(DRIVER_FEATURES_SEL) = 0;
    REG(DRIVER_FEATURES) = want;
    REG(STATUS) = S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK;
    CHECK_BITS("VERSION_1 accepted: FEATURES_OK reads back", REG(STATUS), S_FEATURES_OK,
               S_FEATURES_OK);

    REG(QUEUE_SEL) = 0;
    uint32_t max = REG(QUEUE_NUM_MAX);
    CHECK("queue 0: QueueNumMax >= 8", max >= QSIZE);
    CHECK_EQ("queue 0 not ready yet", REG(QUEUE_READY), 0);
    REG(QUEUE_NUM) = QSIZE;
    REG(QUEUE_DESC) = (uint32_t)A(desc);
    REG(QUEUE_DESC + 4) = (uint32_t)(A(desc) >> 32);
    REG(QUEUE_DRIVER) = (uint32_t)A(&avail);
    REG(QUEUE_DRIVER + 4) = (uint32_t)(A(&avail) >> 32);
    REG(QUEUE_DEVICE) = (uint32_t)A(&used);
    REG(QUEUE_DEVICE + 4) = (uint32_t)(A(&used) >> 32);
    REG(QUEUE_READY) = 1;
    CHECK_EQ("QueueReady reads 1", REG(QUEUE_READY), 1);
    REG(STATUS) = S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK;
    CHECK_EQ("DRIVER_OK: status 0xf", REG(STATUS), 0xf);
    CHECK_EQ("no interrupt yet", REG(INTERRUPT_STATUS), 0);
    return want;
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    MMIO32(PLIC_PRIORITY(VIRTIO_IRQ(BLK_SLOT))) = 1;
    /* Enabled once, before any request: QEMU 7.2's PLIC does not
     * re-evaluate its outputs on an enable write. mie.MEIE gates it. */
    MMIO32(PLIC_ENABLE(0)) = 1u << VIRTIO_IRQ(BLK_SLOT);
    MMIO32(PLIC_THRESHOLD(0)) = 0;
    probe_slots();
    uint32_t features = negotiate();
    uint64_t cap = REG(CONFIG) | (uint64_t)REG(CONFIG + 4) << 32;
    CHECK_EQ("capacity: 128 sectors (64 KiB)", cap, DISK_SECTORS);

    section("read sector 0");
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = 0xa5;
    CHECK_EQ("  status OK", request(T_IN, 0, buf, sizeof buf, 0), S_OK);
    int same = 1;
    for (unsigned i = 0; i < sizeof buf; i++)
        same &= buf[i] == (i < sizeof SECTOR0_TEXT - 1 ? (uint8_t)SECTOR0_TEXT[i] : 0);
    CHECK("  sector 0: \"" SECTOR0_TEXT "\", then zeros", same);

    section("write sector 1");
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = i < sizeof SECTOR1_TEXT - 1 ? (uint8_t)SECTOR1_TEXT[i] : (uint8_t)(i * 7 + 3);
    CHECK_EQ("  status OK", request(T_OUT, 1, buf, sizeof buf, 1), S_OK);

    section("read sector 1 back");
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = 0;
    CHECK_EQ("  status OK", request(T_IN, 1, buf, sizeof buf, 0), S_OK);
    same = 1;
    for (unsigned i = 0; i < sizeof buf; i++)
        same &= buf[i] == (i < sizeof SECTOR1_TEXT - 1 ? (uint8_t)SECTOR1_TEXT[i]
                                                        : (uint8_t)(i * 7 + 3));
    CHECK("  sector 1: what was written", same);

    dma_into_code();

    section("GET_ID");
    for (unsigned i = 0; i < 20; i++)
        buf[i] = 0xa5;
    int st = request(T_GET_ID, 0, buf, 20, 0);
    if (st == S_UNSUPP) {
        put_str("skip GET_ID: unsupported\n");
    } else {
        CHECK_EQ("  status OK", st, S_OK);
        /* QEMU writes strlen + 1 bytes of the serial, xlat all 20. */
        CHECK_EQ("  no serial=: the empty string", buf[0], 0);
    }

    section("read past the capacity");
    CHECK_EQ("  status IOERR", request(T_IN, cap, buf, sizeof buf, 0), S_IOERR);

    section("flush");
    if (features & F_BLK_FLUSH)
        CHECK_EQ("  status OK", request(T_FLUSH, 0, 0, 0, 0), S_OK);
    else
        put_str("skip flush: VIRTIO_BLK_F_FLUSH not offered\n");

    REG(STATUS) = 0;
    CHECK_EQ("reset at the end: status 0", REG(STATUS), 0);
    MMIO32(PLIC_ENABLE(0)) = 0;
}
