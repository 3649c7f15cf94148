/*
 * libFuzzer target: a guest writing garbage to every device of the virt
 * machine (src/system/hw), through the bus as a hart reaches it
 * (machine_find_mmio(pa)->ops, any width, any alignment inside a region),
 * with rings and descriptors in guest RAM that the input fills.
 *
 * The machine: 1 MiB of RAM fenced by PROT_NONE pages (a host access past
 * either end crashes), two harts that never run (hart_create: the devices'
 * hart_set_mip and hart_kick only touch their state), the PLIC, the
 * ACLINT, the UART (input from a pipe the input writes to, output to
 * /dev/null, no mux escape, not a terminal), the goldfish RTC, sifive_test,
 * and in the virtio-mmio slots a virtio-blk on a 192 KiB + 100 byte temp
 * file in snapshot mode (slot 7), a virtio-rng (slot 6), a read-only
 * virtio-blk on the same file (slot 5), a writable virtio-blk on a file of
 * its own (slot 4, in /dev/shm if there is one: its FLUSH is fdatasync),
 * a virtio-net on a restricted slirp netdev (slot 3: no host or outside
 * socket is reachable; its slirp thread kicks the receive queue when
 * frames come); the other slots are empty. Both files are unlinked once
 * open.
 *
 * An input: one header byte, then operations until the bytes run out
 * (missing bytes read as 0).
 *   header bit 0: set up queue 0 of a disk (bits 4-5: the snapshot, the
 *     writable, the read-only, the snapshot one), bit 1: of the rng, bit
 *     6: both queues of virtio-net, each with valid requests in its avail
 *     ring (next byte: log2 of the queue size, mod 11; then for the disk
 *     its request type (byte), sector (u16) and sector count (byte), for
 *     the rng its buffer's length (byte), for the net four receive buffers
 *     and an ARP request to send, a byte changing its target); bit 2:
 *     negotiate VIRTIO_F_INDIRECT_DESC, bit 3: VIRTIO_F_EVENT_IDX. Each
 *     queue set up is notified once more after the last operation, so
 *     operations that only change RAM are served.
 *   operations (first byte mod 9):
 *     0 MMIO write  region (byte, mod the regions), size and offset kind
 *                   (byte: size 1 << (b & 3); (b >> 2) & 3: a u32, a byte, a
 *                   u16, or one of a table of offsets where devices have
 *                   registers plus a byte & 31; mod the room in the
 *                   region), offset, value (u64)
 *     1 MMIO read   region, size, offset
 *     2 virtio write  slot (byte & 7), register (byte: one of the
 *                   transport's offsets; bit 7 on a ring address register:
 *                   the value is made a RAM address), value (u32)
 *     3 virtio read   slot, register
 *     4 RAM write   offset (u24, mod RAM), length (byte), that many bytes
 *     5 descriptor  table (byte: bits 0-1 the area: disk, rng, net rx, net
 *                   tx; bit 2 the area's indirect table, bit 3 raw u64
 *                   address, else a RAM offset u32; bit 4 raw u32 length,
 *                   else u16), index (u16 mod 1024), address, length,
 *                   flags (u16), next (u16)
 *     6 avail push  area (byte & 3), head (u16): the next avail entry of
 *                   the area's ring and the index after it
 *     7 notify      byte: slot (b & 7), queue (b >> 3)
 *     8 UART input  length (byte), that many bytes into the UART's pipe
 *   After MAX_NOTIFIES QueueNotify writes (by any of 0, 2 or 7), the
 *   others are skipped.
 *
 * Every input starts from a reset machine where the devices allow it: RAM
 * zeroed (MADV_DONTNEED), the exit request cleared (sifive_test's
 * poweroff only sets it), every virtio slot's Status written 0 (a device
 * reset), the PLIC's claims completed and priorities, enables and
 * thresholds zeroed, ACLINT msip 0, mtimecmp all ones and mtime 0, the UART's
 * control registers and receive FIFO cleared, the RTC's alarm and
 * interrupt cleared and its time set back to the host's, the harts' mip
 * zeroed. What carries over: UART input still in the pipe or the backlog
 * (its reader thread runs on its own), frames slirp queued for the guest
 * (bounded: net_slirp.h), the UART's divisor latch and
 * interrupt-acknowledge state, the disks' contents (the snapshot's written
 * pages: at most 49 of 4 KiB, enough to make its page table grow once) and
 * the PLIC's source levels as the devices drive them. No check depends on
 * any of it.
 *
 * Properties: no crash, no ASan or UBSan report, no hang (libFuzzer
 * -timeout=10: a notify serves synchronously, so a request must be cheap),
 * memory bounded; and the RTC's alarm thread does not spin: after an
 * input that leaves its alarm armed, the thread's CPU clock must not move
 * (see watch_alarm_thread).
 * Built and run by tests/fuzz.sh; seeds and regressions in
 * tests/fuzz/corpus/system_mmio/.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "exec/settings.h"
#include "system/hart.h"
#include "system/hw/aclint.h"
#include "system/hw/plic.h"
#include "system/hw/rtc.h"
#include "system/hw/test_dev.h"
#include "system/hw/uart.h"
#include "system/hw/virtio.h"
#include "system/hw/virtio_net.h"
#include "system/machine.h"
#include "system/net_slirp.h"
#include "system/sys_mem.h"

#define RAM_SIZE  (1ULL << 20)
#define GUARD     4096ULL
#define NHARTS    2
#define DISK_SIZE (192 * 1024 + 100)   /* capacity rounds up: a tail past the file */

enum { S_BLK = 7, S_RNG = 6, S_RO = 5, S_RW = 4, S_NET = 3 };

/* Transport registers (virtio_mmio.c). */
enum {
    V_DRV_FEATURES = 0x020, V_DRV_FEATURES_SEL = 0x024, V_QUEUE_SEL = 0x030,
    V_QUEUE_NUM = 0x038, V_QUEUE_READY = 0x044, V_QUEUE_NOTIFY = 0x050, V_STATUS = 0x070,
    V_DESC_LO = 0x080, V_DESC_HI = 0x084, V_DRIVER_LO = 0x090, V_DRIVER_HI = 0x094,
    V_DEVICE_LO = 0x0a0, V_DEVICE_HI = 0x0a4,
};

static const uint16_t virtio_regs[] = {
    0x000, 0x004, 0x008, 0x00c, 0x010, 0x014, 0x020, 0x024, 0x028, 0x030, 0x034, 0x038,
    0x03c, 0x040, 0x044, 0x050, 0x060, 0x064, 0x070, 0x080, 0x084, 0x090, 0x094, 0x0a0,
    0x0a4, 0x0ac, 0x0b0, 0x0b4, 0x0b8, 0x0bc, 0x0fc, 0x100, 0x108, 0x10c, 0x114, 0x122,
    0x0c4, 0xffc,
};

#define ST_ACK         1
#define ST_DRIVER      2
#define ST_DRIVER_OK   4
#define ST_FEATURES_OK 8

#define D_NEXT  1
#define D_WRITE 2

#define F_INDIRECT  28
#define F_EVENT_IDX 29
#define F_VERSION_1 32

/*
 * RAM layout of the four queue areas the seeds set up (offsets): for each
 * (0: the disk's queue, 1: the rng's, 2: virtio-net's receive queue, 3:
 * its transmit queue) the descriptor table (16 KiB: 1024 entries), the
 * avail ring, the used ring, an indirect table; then the requests'
 * buffers.
 */
#define NAREAS      4
#define AREA(q)     ((uint64_t)(q) * 0x20000)
#define A_DESC      0x0000
#define A_AVAIL     0x4000
#define A_USED      0x6000
#define A_INDIRECT  0x10000
#define R_DATA      0x80000

static int uart_in = -1;               /* the write end of the UART's input pipe */

/* A seeded queue (one per area), as the harness's driver sees it. */
typedef struct Drv {
    unsigned slot, queue, size;
    uint16_t avail_idx;
    bool on;
} Drv;

static Drv drv[NAREAS];

/*
 * QueueNotify writes an input may make (the ops and the final ones). A
 * notify serves its queue synchronously and costs up to 1024 requests (a
 * read of the whole disk each: ~60 ms here); the devices bound what one
 * notify costs, this bounds an input's work under libFuzzer's -timeout.
 */
#define MAX_NOTIFIES 16
static unsigned notifies;

/* May a write of size bytes at off in the region at base go ahead? */
static bool notify_budget(uint64_t base, uint64_t off, unsigned size)
{
    bool virtio = base >= VIRT_VIRTIO_BASE &&
                  base < VIRT_VIRTIO_BASE + 0x1000ULL * VIRT_VIRTIO_SLOTS;
    if (!virtio || off != V_QUEUE_NOTIFY || size != 4)
        return true;
    return ++notifies <= MAX_NOTIFIES;
}

/* -- Input bytes ---------------------------------------------------------- */

typedef struct In {
    const uint8_t *p;
    size_t n;
} In;

static uint64_t get(In *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++) {
        uint64_t b = 0;
        if (in->n) {
            b = *in->p++;
            in->n--;
        }
        v |= b << (8 * i);
    }
    return v;
}

static uint8_t get8(In *in) { return (uint8_t)get(in, 1); }

/* -- The bus --------------------------------------------------------------- */

static uint64_t slot_pa(unsigned slot) { return VIRT_VIRTIO_BASE + 0x1000ULL * slot; }
static uint64_t ram_pa(uint64_t off) { return VIRT_RAM_BASE + off; }

static uint64_t bus_read(uint64_t pa, unsigned size)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r)
        abort();
    return r->ops->read(r->opaque, pa - r->base, size);
}

static void bus_write(uint64_t pa, unsigned size, uint64_t v)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r)
        abort();
    r->ops->write(r->opaque, pa - r->base, size, v);
}

static uint32_t vrd(unsigned slot, uint64_t reg)
{
    return (uint32_t)bus_read(slot_pa(slot) + reg, 4);
}

static void vwr(unsigned slot, uint64_t reg, uint32_t v)
{
    bus_write(slot_pa(slot) + reg, 4, v);
}

static void put_le(uint64_t off, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        machine.ram[off + i] = (uint8_t)(v >> (8 * i));
}

static void desc_at(uint64_t table, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
                    uint16_t next)
{
    uint64_t d = table + 16ULL * i;
    put_le(d, addr, 8);
    put_le(d + 8, len, 4);
    put_le(d + 12, flags, 2);
    put_le(d + 14, next, 2);
}

static uint64_t host_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* -- The machine ------------------------------------------------------------ */

static void ram_setup(void)
{
    uint8_t *p = mmap(NULL, RAM_SIZE + 2 * GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + GUARD, RAM_SIZE, PROT_READ | PROT_WRITE) < 0) {
        perror("fuzz_system_mmio: mmap");
        abort();
    }
    machine.ram = p + GUARD;
    machine.ram_size = RAM_SIZE;
}

/* A disk image in dir: a pattern, so reads bring something back. */
static void make_image(char *path, size_t len, const char *dir)
{
    snprintf(path, len, "%s/fuzz_system_mmio.XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("fuzz_system_mmio: mkstemp");
        abort();
    }
    static uint8_t image[DISK_SIZE];
    for (size_t i = 0; i < sizeof image; i++)
        image[i] = (uint8_t)(i * 7 + (i >> 9));
    if (write(fd, image, sizeof image) != (ssize_t)sizeof image)
        abort();
    close(fd);
}

/* The snapshot and read-only disks share one image; the writable one has
 * its own, in /dev/shm when there is one (its FLUSH is an fdatasync). */
static void devices_add(void)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    char shared[4096], own[4096], err[256];
    make_image(shared, sizeof shared, tmp);
    make_image(own, sizeof own, access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp);
    if (virtio_blk_add(S_BLK, shared, true, false, err, sizeof err) < 0 ||
        virtio_blk_add(S_RO, shared, false, true, err, sizeof err) < 0 ||
        virtio_blk_add(S_RW, own, false, false, err, sizeof err) < 0 ||
        virtio_rng_add(S_RNG, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_system_mmio: %s\n", err);
        abort();
    }
    /* restrict=on: slirp answers ARP, DHCP and pings of its own addresses
     * and drops the rest, so the guest reaches no host or outside socket;
     * no IPv6 either (no hostfwd, no TFTP root). */
    int nd = net_user_create("user,id=fuzz,restrict=on,ipv6=off", err, sizeof err);
    if (nd < 0 || virtio_net_add(S_NET, nd, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_system_mmio: %s\n", err);
        abort();
    }
    unlink(shared);                    /* the devices keep their descriptors */
    unlink(own);
}

/* -- Device threads must not spin -------------------------------------------- */

/*
 * The RTC's alarm thread sleeps until its alarm, so while an armed alarm
 * is not due it uses no CPU. rtc_init() creates it: it is the one thread
 * /proc/self/task gains across the call, and its CPU clock is read by its
 * thread id (Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), what
 * glibc's pthread_getcpuclockid makes).
 */
#define MAX_TASKS 64
static bool have_alarm_clock;
static clockid_t alarm_clock;

static unsigned list_tasks(long *tids)
{
    unsigned n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d)) && n < MAX_TASKS;)
        if (e->d_name[0] != '.')
            tids[n++] = atol(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void rtc_init_watched(void)
{
    long before[MAX_TASKS], after[MAX_TASKS];
    unsigned nb = list_tasks(before);
    rtc_init();
    unsigned na = list_tasks(after);
    for (unsigned i = 0; i < na; i++) {
        bool old = false;
        for (unsigned j = 0; j < nb; j++)
            old |= after[i] == before[j];
        if (!old) {
            alarm_clock = (clockid_t)(~(unsigned)after[i] << 3 | 6u);
            have_alarm_clock = true;
        }
    }
    struct timespec ts;
    if (!have_alarm_clock || clock_gettime(alarm_clock, &ts) < 0) {
        fprintf(stderr, "fuzz_system_mmio: the RTC alarm thread's CPU clock is not readable: "
                "not watched\n");
        have_alarm_clock = false;
    }
}

/* The alarm thread's CPU time over a sleep of ns. */
static uint64_t alarm_cpu_over(long ns)
{
    uint64_t c0 = host_ns(alarm_clock);
    const struct timespec t = { 0, ns };
    nanosleep(&t, NULL);
    return host_ns(alarm_clock) - c0;
}

/* An input that leaves the alarm armed: after 100 us for the thread to
 * finish with the input's writes (each woke it: tens of us under ASan),
 * 100 us of its time (idle: none); if it used a third of that, 10 ms, of
 * which it must not use 2 (a spin gets more even on a loaded host). */
static void watch_alarm_thread(void)
{
    if (!have_alarm_clock || !(bus_read(VIRT_RTC_BASE + 0x18, 4) & 1))
        return;
    alarm_cpu_over(100000);
    if (alarm_cpu_over(100000) < 33000)
        return;
    uint64_t used = alarm_cpu_over(10000000);
    if (used > 2000000) {
        fprintf(stderr, "fuzz_system_mmio: the RTC alarm thread used %llu us of CPU in 10 ms "
                "with its alarm armed: it spins\n", (unsigned long long)(used / 1000));
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    log_mask = LOG_GUEST_ERRORS | LOG_UNIMP;       /* the messages' formatting runs too */
    log_file = fopen("/dev/null", "w");
    machine_mtime();
    ram_setup();
    sys_mem_init();
    machine.nharts = NHARTS;
    for (unsigned i = 0; i < NHARTS; i++)
        machine.harts[i] = hart_create(i);
    plic_init();
    aclint_init();
    int fds[2];
    int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (!log_file || out < 0 || pipe2(fds, O_CLOEXEC) < 0 ||
        fcntl(fds[1], F_SETFL, O_NONBLOCK) < 0) {
        perror("fuzz_system_mmio: setup");
        abort();
    }
    uart_in = fds[1];
    uart_init(fds[0], out, false);
    rtc_init_watched();
    sifive_test_init();
    devices_add();
    virtio_mmio_init_empty_slots();
    return 0;
}

/* Back to a machine as close to reset as the devices' registers allow. */
static void machine_reset(void)
{
    pthread_mutex_lock(&machine.lock);
    machine.exit_requested = false;
    machine.exit_status = 0;
    machine.reboot = false;
    pthread_mutex_unlock(&machine.lock);

    /* Devices first: virtio-net's queue is served from slirp's thread too. */
    for (unsigned s = 0; s < VIRT_VIRTIO_SLOTS; s++)
        vwr(s, V_STATUS, 0);
    if (madvise(machine.ram, RAM_SIZE, MADV_DONTNEED) < 0)
        abort();
    memset(drv, 0, sizeof drv);

    /* PLIC: complete every claim (context 0 with everything enabled), then
     * priorities, enables and thresholds 0. */
    uint64_t plic = VIRT_PLIC_BASE;
    for (unsigned w = 0; w < 3; w++)
        bus_write(plic + 0x2000 + 4 * w, 4, UINT32_MAX);
    for (unsigned irq = 1; irq <= VIRT_PLIC_NDEV; irq++)
        bus_write(plic + 0x200004, 4, irq);
    for (unsigned ctx = 0; ctx < 2 * NHARTS; ctx++) {
        for (unsigned w = 0; w < 3; w++)
            bus_write(plic + 0x2000 + 0x80 * ctx + 4 * w, 4, 0);
        bus_write(plic + 0x200000 + 0x1000 * ctx, 4, 0);
    }
    for (unsigned irq = 1; irq <= VIRT_PLIC_NDEV; irq++)
        bus_write(plic + 4 * irq, 4, 0);

    for (unsigned h = 0; h < NHARTS; h++) {
        bus_write(VIRT_ACLINT_BASE + 4 * h, 4, 0);
        bus_write(VIRT_ACLINT_BASE + 0x4000 + 8 * h, 8, UINT64_MAX);
    }
    bus_write(VIRT_ACLINT_BASE + 0xbff8, 8, 0);    /* mtime, which inputs may set */

    uint64_t u = VIRT_UART0_BASE;
    bus_write(u + 3, 1, 0);            /* LCR (DLAB off) */
    bus_write(u + 1, 1, 0);            /* IER */
    bus_write(u + 2, 1, 0x03);         /* FCR: FIFO on, cleared */
    bus_write(u + 2, 1, 0);            /* off: empty again */
    bus_write(u + 4, 1, 0);            /* MCR: no loopback */
    bus_write(u + 7, 1, 0);            /* SCR */
    bus_read(u + 5, 1);                /* LSR: errors cleared */
    bus_read(u + 6, 1);                /* MSR: deltas cleared */

    uint64_t rtc = VIRT_RTC_BASE;
    bus_write(rtc + 0x10, 4, 0);       /* IRQ_ENABLED */
    bus_write(rtc + 0x14, 4, 1);       /* CLEAR_ALARM */
    bus_write(rtc + 0x1c, 4, 1);       /* CLEAR_INTERRUPT */
    bus_write(rtc + 0x0c, 4, 0);       /* ALARM_HIGH */
    uint64_t now = host_ns(CLOCK_REALTIME);
    bus_write(rtc + 0x04, 4, now >> 32);   /* the time: the host's again */
    bus_write(rtc + 0x00, 4, (uint32_t)now);

    for (unsigned h = 0; h < NHARTS; h++) {
        __atomic_store_n(&machine.harts[h]->cpu.priv.mip, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&machine.harts[h]->cpu.exit_request, 0, __ATOMIC_SEQ_CST);
    }
}

/* -- Seeds: a driver's valid setup ------------------------------------------ */

/* Reset slot's device and negotiate features. */
static void drv_begin(unsigned slot, uint64_t features)
{
    vwr(slot, V_STATUS, 0);
    vwr(slot, V_STATUS, ST_ACK | ST_DRIVER);
    vwr(slot, V_DRV_FEATURES_SEL, 1);
    vwr(slot, V_DRV_FEATURES, (uint32_t)(features >> 32));
    vwr(slot, V_DRV_FEATURES_SEL, 0);
    vwr(slot, V_DRV_FEATURES, (uint32_t)features);
    vwr(slot, V_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
}

static void drv_ok(unsigned slot)
{
    vwr(slot, V_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
}

/* Queue queue of slot in area q, size entries, ready. */
static void drv_queue(unsigned q, unsigned slot, unsigned queue, unsigned size)
{
    vwr(slot, V_QUEUE_SEL, queue);
    vwr(slot, V_QUEUE_NUM, size);
    uint64_t a = ram_pa(AREA(q));
    vwr(slot, V_DESC_LO, (uint32_t)(a + A_DESC));
    vwr(slot, V_DESC_HI, (uint32_t)((a + A_DESC) >> 32));
    vwr(slot, V_DRIVER_LO, (uint32_t)(a + A_AVAIL));
    vwr(slot, V_DRIVER_HI, (uint32_t)((a + A_AVAIL) >> 32));
    vwr(slot, V_DEVICE_LO, (uint32_t)(a + A_USED));
    vwr(slot, V_DEVICE_HI, (uint32_t)((a + A_USED) >> 32));
    vwr(slot, V_QUEUE_READY, 1);
    drv[q] = (Drv){ slot, queue, size, 0, true };
}

static void queue_setup(unsigned q, unsigned slot, unsigned size, uint64_t features)
{
    drv_begin(slot, features);
    drv_queue(q, slot, 0, size);
    drv_ok(slot);
}

static void avail_push(unsigned q, uint16_t head)
{
    Drv *d = &drv[q];
    unsigned size = d->on ? d->size : 8;
    put_le(AREA(q) + A_AVAIL + 4 + 2 * (d->avail_idx % size), head, 2);
    d->avail_idx++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    put_le(AREA(q) + A_AVAIL + 2, d->avail_idx, 2);
}

/* The disk's first request: header, data, status in descriptors 0, 1, 2. */
static void seed_blk(In *in, unsigned slot, unsigned size, uint64_t features)
{
    static const uint32_t types[4] = { 0, 1, 4, 8 };     /* IN, OUT, FLUSH, GET_ID */
    queue_setup(0, slot, size, features);
    uint8_t t = get8(in);
    uint32_t type = types[t & 3];
    uint64_t sector = get(in, 2) % 400, nsec = get8(in) % 8 + 1;
    uint64_t hdr = R_DATA, data = R_DATA + 0x1000, status = R_DATA + 0x10000;
    put_le(hdr, type, 4);
    put_le(hdr + 8, sector, 8);
    uint32_t dlen = type == 8 ? 20 : (uint32_t)(512 * nsec);
    desc_at(AREA(0) + A_DESC, 0, ram_pa(hdr), 16, D_NEXT, 1);
    desc_at(AREA(0) + A_DESC, 1, ram_pa(data), dlen, (type == 1 ? 0 : D_WRITE) | D_NEXT, 2);
    desc_at(AREA(0) + A_DESC, 2, ram_pa(status), 1, D_WRITE, 0);
    avail_push(0, 0);
}

/* The rng's first request: one writable buffer. */
static void seed_rng(In *in, unsigned size, uint64_t features)
{
    queue_setup(1, S_RNG, size, features);
    desc_at(AREA(1) + A_DESC, 0, ram_pa(R_DATA + 0x20000), get8(in) + 1u, D_WRITE, 0);
    avail_push(1, 0);
}

/* virtio-net: four receive buffers, and one frame to send, an ARP request
 * for the gateway 10.0.2.2 from 10.0.2.15 (slirp answers it); the next
 * byte changes the frame's last address byte. */
static void seed_net(In *in, unsigned size, uint64_t features)
{
    static const uint8_t arp[42] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x08, 0x06,
        0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56,
        10, 0, 2, 15, 0, 0, 0, 0, 0, 0, 10, 0, 2, 2,
    };
    drv_begin(S_NET, features);
    drv_queue(2, S_NET, 0, size);
    drv_queue(3, S_NET, 1, size);
    drv_ok(S_NET);
    uint64_t rx = R_DATA + 0x30000, tx = R_DATA + 0x38000;
    for (unsigned i = 0; i < 4 && i < size; i++) {
        desc_at(AREA(2) + A_DESC, i, ram_pa(rx + 0x800 * i), 1526, D_WRITE, 0);
        avail_push(2, (uint16_t)i);
    }
    memcpy(machine.ram + tx + 12, arp, sizeof arp);       /* after a header of zeros */
    machine.ram[tx + 12 + 41] = (uint8_t)(2 + get8(in));
    desc_at(AREA(3) + A_DESC, 0, ram_pa(tx), 12 + sizeof arp, 0, 0);
    avail_push(3, 0);
}

/* -- Operations -------------------------------------------------------------- */

static const MmioRegion *pick_region(In *in)
{
    return &machine.regions[get8(in) % machine.nregions];
}

/* Offsets where some device has registers (PLIC: pending, enables,
 * thresholds and claims; ACLINT: mtimecmp, mtime; virtio: config). */
static const uint32_t hot_offsets[] = {
    0x0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xf0, 0x100,
    0x110, 0x120, 0x1000, 0x2000, 0x2080, 0x2100, 0x2180, 0x4000, 0x4010, 0xbff0,
    0x200000, 0x201000, 0x202000, 0x203000, 0x204000,
};

/* The offset of an access: how (2 bits) picks a raw u32, a byte, a u16, or
 * a hot offset plus a byte's low 5 bits; all kept inside the region. */
static uint64_t pick_offset(In *in, const MmioRegion *r, unsigned size, unsigned how)
{
    uint64_t off;
    switch (how & 3) {
    case 0:  off = get(in, 4); break;
    case 1:  off = get8(in); break;
    case 2:  off = get(in, 2); break;
    default:
        off = hot_offsets[get8(in) % (sizeof hot_offsets / sizeof hot_offsets[0])];
        off += get8(in) & 0x1f;
        break;
    }
    return off % (r->size - size + 1);                  /* inside the region, as the bus */
}

static void op_mmio(In *in, bool write)
{
    const MmioRegion *r = pick_region(in);
    uint8_t b = get8(in);
    unsigned size = 1u << (b & 3);
    uint64_t off = pick_offset(in, r, size, b >> 2);
    if (!write) {
        r->ops->read(r->opaque, off, size);
        return;
    }
    uint64_t v = get(in, 8);
    if (notify_budget(r->base, off, size))
        r->ops->write(r->opaque, off, size, v);
}

static void op_virtio(In *in, bool write)
{
    unsigned slot = get8(in) & 7;
    uint8_t b = get8(in);
    uint16_t reg = virtio_regs[(b & 0x7f) % (sizeof virtio_regs / sizeof virtio_regs[0])];
    if (!write) {
        vrd(slot, reg);
        return;
    }
    uint32_t v = (uint32_t)get(in, 4);
    if ((b & 0x80) && (reg == V_DESC_LO || reg == V_DRIVER_LO || reg == V_DEVICE_LO))
        v = (uint32_t)ram_pa(v % RAM_SIZE);
    if (notify_budget(slot_pa(slot), reg, 4))
        vwr(slot, reg, v);
}

static void op_ram(In *in)
{
    uint64_t off = get(in, 3) % RAM_SIZE;
    size_t len = get8(in);
    if (len > in->n)
        len = in->n;
    if (len > RAM_SIZE - off)
        len = RAM_SIZE - off;
    memcpy(machine.ram + off, in->p, len);
    in->p += len;
    in->n -= len;
}

static void op_desc(In *in)
{
    uint8_t how = get8(in);
    uint64_t table = AREA(how & 3) + (how & 4 ? A_INDIRECT : A_DESC);
    unsigned i = (unsigned)(get(in, 2) % 1024);
    uint64_t addr = how & 8 ? get(in, 8) : ram_pa(get(in, 4) % RAM_SIZE);
    uint32_t len = (uint32_t)(how & 16 ? get(in, 4) : get(in, 2));
    uint16_t flags = (uint16_t)get(in, 2), next = (uint16_t)get(in, 2);
    desc_at(table, i, addr, len, flags, next);
}

static void op_notify(unsigned slot, uint32_t q)
{
    if (notify_budget(slot_pa(slot & 7), V_QUEUE_NOTIFY, 4))
        vwr(slot & 7, V_QUEUE_NOTIFY, q);
}

static void op_uart_input(In *in)
{
    size_t len = get8(in);
    if (len > in->n)
        len = in->n;
    if (len && write(uart_in, in->p, len) < 0 && errno != EAGAIN)
        abort();
    in->p += len;
    in->n -= len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    In in = { data, size };
    machine_reset();
    notifies = 0;

    uint8_t h = get8(&in);
    uint64_t features = 1ULL << F_VERSION_1 | (h & 4 ? 1ULL << F_INDIRECT : 0)
                      | (h & 8 ? 1ULL << F_EVENT_IDX : 0);
    if (h & 0x43) {
        unsigned qsize = 1u << (get8(&in) % 11);
        static const unsigned disks[4] = { S_BLK, S_RW, S_RO, S_BLK };
        if (h & 1)
            seed_blk(&in, disks[h >> 4 & 3], qsize, features);
        if (h & 2)
            seed_rng(&in, qsize, features);
        if (h & 0x40)
            seed_net(&in, qsize, features);
    }

    while (in.n) {
        switch (get8(&in) % 9) {
        case 0: op_mmio(&in, true); break;
        case 1: op_mmio(&in, false); break;
        case 2: op_virtio(&in, true); break;
        case 3: op_virtio(&in, false); break;
        case 4: op_ram(&in); break;
        case 5: op_desc(&in); break;
        case 6: { unsigned q = get8(&in) & 3; avail_push(q, (uint16_t)get(&in, 2)); break; }
        case 7: { uint8_t b = get8(&in); op_notify(b & 7, b >> 3); break; }
        case 8: op_uart_input(&in); break;
        }
    }
    static const unsigned order[NAREAS] = { 0, 1, 3, 2 };     /* net: send, then receive */
    for (unsigned i = 0; i < NAREAS; i++)
        if (drv[order[i]].on)
            op_notify(drv[order[i]].slot, drv[order[i]].queue);
    watch_alarm_thread();
    return 0;
}
