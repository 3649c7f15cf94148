/*
 * The virtio-mmio transport, version 2 (virtio 1.2 section 4.2.2), with
 * split virtqueues (section 2.7), for the eight slots of the virt machine.
 * 32-bit registers, offsets from the slot's base:
 *
 *   0x000 MagicValue "virt"    0x004 Version 2     0x008 DeviceID
 *   0x00c VendorID "QEMU"      0x010 DeviceFeatures (word DeviceFeaturesSel 0x014)
 *   0x020 DriverFeatures (word DriverFeaturesSel 0x024)
 *   0x030 QueueSel  0x034 QueueNumMax  0x038 QueueNum  0x044 QueueReady
 *   0x050 QueueNotify  0x060 InterruptStatus  0x064 InterruptACK  0x070 Status
 *   0x080/0x084 QueueDesc  0x090/0x094 QueueDriver  0x0a0/0x0a4 QueueDevice
 *   0x0ac SHMSel  0x0b0/0x0b4 SHMLen (-1: no region)  0x0fc ConfigGeneration
 *   0x100... device config space (1, 2, 4 or 8 bytes wide; past its end: all ones)
 *
 * As QEMU's hw/virtio/virtio-mmio.c in non-legacy mode: the legacy
 * registers (GuestPageSize, QueueAlign, QueuePFN), reads of write-only
 * registers, writes of read-only ones, accesses that are not 4 bytes wide
 * and unknown offsets are ignored (reads give 0) and logged under
 * -d guest_errors; the queue registers take effect when QueueReady is
 * written 1; Status 0 resets the device; InterruptStatus is level: the
 * slot's PLIC line is high while it is nonzero, and InterruptACK clears
 * bits. Every device offers VIRTIO_F_VERSION_1, VIRTIO_F_INDIRECT_DESC and
 * VIRTIO_F_EVENT_IDX; FEATURES_OK does not stick unless the driver accepted
 * VERSION_1 and nothing that was not offered.
 *
 * What the guest wrote is checked before use, and a check that fails marks
 * the device NEEDS_RESET (Status bit 0x40, a config-change interrupt after
 * DRIVER_OK, no more requests served until a reset), as QEMU's
 * virtio_error does, with a -d guest_errors line:
 *   - QueueNum: a power of 2 in 1..VIRTQ_MAX_SIZE (QEMU ignores a bad one);
 *   - QueueReady: the three rings aligned (16, 2, 4) and all in RAM;
 *   - the avail index at most QueueNum ahead, heads below QueueNum;
 *   - each descriptor: nonzero length, buffer inside RAM, readable ones
 *     before writable ones, next inside the table, the chain no longer
 *     than its table (so a loop ends), an indirect table only as a chain's
 *     first descriptor, with the feature, 16-byte entries, at most
 *     VIRTQ_MAX_SEGS, inside RAM and not nested.
 * Notifying a queue that does not exist or is not ready, or before
 * DRIVER_OK, is ignored and logged (QEMU ignores it silently).
 *
 * A notify serves the queue synchronously: on the notifying hart's host
 * thread, under the slot's lock, until the avail ring is empty (with
 * EVENT_IDX: avail_event is published and the ring checked once more);
 * then one used-buffer interrupt if the driver wants it (used_event, or
 * VRING_AVAIL_F_NO_INTERRUPT without EVENT_IDX). A chain the device defers
 * (VIRTQ_DEFER) stops the run and stays in the ring; virtio_mmio_kick runs
 * the queue again, the same way, from the device's own thread. The rings are read once
 * per field into locals, so a guest changing them meanwhile changes
 * nothing that was checked.
 */
#define _GNU_SOURCE
#include "system/hw/virtio_mmio.h"

#include <endian.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec/settings.h"
#include "system/hw/virtio.h"
#include "system/machine.h"
#include "system/tlb.h"

#define VIRTIO_MMIO_SIZE 0x1000u
#define VIRT_MAGIC       0x74726976u      /* "virt" */
#define VIRT_VERSION     2u
#define VIRT_VENDOR      0x554d4551u      /* "QEMU", as QEMU's transports say */

enum {
    REG_MAGIC = 0x000, REG_VERSION = 0x004, REG_DEVICE_ID = 0x008, REG_VENDOR_ID = 0x00c,
    REG_DEVICE_FEATURES = 0x010, REG_DEVICE_FEATURES_SEL = 0x014,
    REG_DRIVER_FEATURES = 0x020, REG_DRIVER_FEATURES_SEL = 0x024,
    REG_GUEST_PAGE_SIZE = 0x028, REG_QUEUE_SEL = 0x030, REG_QUEUE_NUM_MAX = 0x034,
    REG_QUEUE_NUM = 0x038, REG_QUEUE_ALIGN = 0x03c, REG_QUEUE_PFN = 0x040,
    REG_QUEUE_READY = 0x044, REG_QUEUE_NOTIFY = 0x050,
    REG_INTERRUPT_STATUS = 0x060, REG_INTERRUPT_ACK = 0x064, REG_STATUS = 0x070,
    REG_QUEUE_DESC_LOW = 0x080, REG_QUEUE_DESC_HIGH = 0x084,
    REG_QUEUE_DRIVER_LOW = 0x090, REG_QUEUE_DRIVER_HIGH = 0x094,
    REG_QUEUE_DEVICE_LOW = 0x0a0, REG_QUEUE_DEVICE_HIGH = 0x0a4,
    REG_SHM_SEL = 0x0ac, REG_SHM_LEN_LOW = 0x0b0, REG_SHM_LEN_HIGH = 0x0b4,
    REG_SHM_BASE_LOW = 0x0b8, REG_SHM_BASE_HIGH = 0x0bc,
    REG_CONFIG_GENERATION = 0x0fc, REG_CONFIG = 0x100,
};

#define STATUS_DRIVER_OK   0x04
#define STATUS_FEATURES_OK 0x08
#define STATUS_NEEDS_RESET 0x40

#define ISR_USED   1u
#define ISR_CONFIG 2u

#define DESC_F_NEXT     1
#define DESC_F_WRITE    2
#define DESC_F_INDIRECT 4
#define AVAIL_F_NO_INTERRUPT 1

#define F(bit) (1ULL << (bit))

_Static_assert(VIRTQ_MAX_SIZE <= VIRTQ_MAX_SEGS, "a direct chain must fit the segment array");

typedef struct Virtq {
    /* As the driver wrote them; used when the queue becomes ready. */
    uint32_t num;
    uint64_t desc_pa, driver_pa, device_pa;
    /* While ready: the checked rings and the device's positions. */
    bool ready;
    unsigned size;                 /* num when it became ready */
    uint8_t *desc, *avail, *used;  /* host addresses of the three rings */
    uint16_t last_avail;           /* next avail ring entry to serve */
    uint16_t used_idx;             /* the used index the device published */
} Virtq;

typedef struct VirtioMmio {
    pthread_mutex_t lock;          /* every field below, and the device's state */
    bool mapped;                   /* the slot's region is on the bus */
    bool present;                  /* a device is plugged (else an empty slot) */
    unsigned slot;
    char name[48];                 /* "virtio-blk@10008000": log prefix */
    VirtioDevice dev;
    uint64_t offered;              /* dev.features + the transport's bits */
    uint32_t dev_features_sel, drv_features_sel;
    uint32_t drv_features[2];
    bool drv_features_high;        /* a bit above 63 was written */
    uint64_t features;             /* negotiated (at FEATURES_OK) */
    uint32_t queue_sel;
    uint8_t status;
    uint32_t isr;
    uint32_t generation;
    bool broken;                   /* NEEDS_RESET: no requests until reset */
    Virtq vq[VIRTIO_MAX_QUEUES];
    VirtqSeg segs[VIRTQ_MAX_SEGS]; /* the buffers of the request being served */
} VirtioMmio;

static VirtioMmio slots[VIRT_VIRTIO_SLOTS] = {
    [0 ... VIRT_VIRTIO_SLOTS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static uint64_t slot_base(unsigned slot)
{
    return VIRT_VIRTIO_BASE + (uint64_t)slot * VIRTIO_MMIO_SIZE;
}

/* -- Errors and interrupts ------------------------------------------------- */

static void guest_error(const VirtioMmio *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void guest_error(const VirtioMmio *m, const char *fmt, ...)
{
    if (!(log_mask & LOG_GUEST_ERRORS))
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(log_file ? log_file : stderr, "%s: %s\n", m->name, msg);
}

static void update_irq(const VirtioMmio *m)
{
    machine_set_irq(VIRT_VIRTIO_IRQ + m->slot, m->isr != 0);
}

/* The device cannot go on: NEEDS_RESET, and tell a running driver. */
static void device_error(VirtioMmio *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void device_error(VirtioMmio *m, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    guest_error(m, "%s; device needs reset", msg);
    m->broken = true;
    m->status |= STATUS_NEEDS_RESET;
    if (m->status & STATUS_DRIVER_OK) {
        m->generation++;
        m->isr |= ISR_CONFIG;
        update_irq(m);
    }
}

static void device_reset(VirtioMmio *m)
{
    for (unsigned q = 0; q < VIRTIO_MAX_QUEUES; q++)
        m->vq[q] = (Virtq){ .num = VIRTQ_MAX_SIZE };
    m->dev_features_sel = m->drv_features_sel = 0;
    m->drv_features[0] = m->drv_features[1] = 0;
    m->drv_features_high = false;
    m->features = 0;
    m->queue_sel = 0;
    m->status = 0;
    m->isr = 0;
    m->broken = false;
    update_irq(m);
}

/* -- Rings (little-endian; alignment checked when the queue became ready) -- */

typedef struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
} Desc;

static uint16_t load16(const uint8_t *p, int order)
{
    return le16toh(__atomic_load_n((const uint16_t *)(const void *)p, order));
}

static void store16(uint8_t *p, uint16_t v, int order)
{
    __atomic_store_n((uint16_t *)(void *)p, htole16(v), order);
}

static void store32(uint8_t *p, uint32_t v)
{
    __atomic_store_n((uint32_t *)(void *)p, htole32(v), __ATOMIC_RELAXED);
}

/* avail: flags, idx, ring[size], used_event. used: flags, idx,
 * ring[size] of {id, len}, avail_event. */
static uint16_t avail_flags(const Virtq *vq) { return load16(vq->avail, __ATOMIC_RELAXED); }
static uint16_t avail_idx(const Virtq *vq) { return load16(vq->avail + 2, __ATOMIC_ACQUIRE); }
static uint16_t used_event(const Virtq *vq) { return load16(vq->avail + 4 + 2 * vq->size, __ATOMIC_RELAXED); }

static uint16_t avail_head(const Virtq *vq, uint16_t i)
{
    return load16(vq->avail + 4 + 2 * (i % vq->size), __ATOMIC_RELAXED);
}

static void set_avail_event(Virtq *vq, uint16_t v)
{
    store16(vq->used + 4 + 8 * vq->size, v, __ATOMIC_RELAXED);
}

/* Entry i of a descriptor table (i is inside it: callers check). */
static Desc read_desc(const uint8_t *table, unsigned i)
{
    uint8_t raw[16];
    memcpy(raw, table + 16 * (size_t)i, sizeof raw);
    Desc d;
    memcpy(&d.addr, raw, 8);
    memcpy(&d.len, raw + 8, 4);
    memcpy(&d.flags, raw + 12, 2);
    memcpy(&d.next, raw + 14, 2);
    d.addr = le64toh(d.addr);
    d.len = le32toh(d.len);
    d.flags = le16toh(d.flags);
    d.next = le16toh(d.next);
    return d;
}

static void push_used(Virtq *vq, uint16_t head, uint32_t len)
{
    uint8_t *e = vq->used + 4 + 8 * (size_t)(vq->used_idx % vq->size);
    store32(e, head);
    store32(e + 4, len);
    vq->used_idx++;
    store16(vq->used + 2, vq->used_idx, __ATOMIC_RELEASE);
}

/* Raise the used-buffer interrupt for the buffers old..used_idx if the
 * driver asked for it. */
static void notify_used(VirtioMmio *m, const Virtq *vq, uint16_t old)
{
    uint16_t now = vq->used_idx;
    if (now == old)
        return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);     /* used idx before used_event/flags */
    bool want;
    if (m->features & F(VIRTIO_F_EVENT_IDX))
        want = (uint16_t)(now - used_event(vq) - 1) < (uint16_t)(now - old);
    else
        want = !(avail_flags(vq) & AVAIL_F_NO_INTERRUPT);
    if (want) {
        m->isr |= ISR_USED;
        update_irq(m);
    }
}

/* -- Descriptor chains ------------------------------------------------------ */

/* Switch *table to the indirect table d names. false: malformed (reported). */
static bool enter_indirect(VirtioMmio *m, unsigned q, uint16_t head, const Desc *d,
                           const uint8_t **table, unsigned *tlen)
{
    const char *why = NULL;
    if (!(m->features & F(VIRTIO_F_INDIRECT_DESC)))
        why = "indirect descriptor, but VIRTIO_F_INDIRECT_DESC was not negotiated";
    else if (d->flags & DESC_F_NEXT)
        why = "indirect descriptor with NEXT set";
    else if (d->len == 0 || d->len % 16)
        why = "indirect table size is not a nonzero multiple of 16";
    else if (d->len / 16 > VIRTQ_MAX_SEGS)
        why = "indirect table longer than 1024 descriptors";
    else if (!(*table = machine_ram_ptr(d->addr, d->len)))
        why = "indirect table outside RAM";
    if (why) {
        device_error(m, "queue %u, chain %u: %s (table %#llx, %u bytes)", q, head, why,
                     (unsigned long long)d->addr, d->len);
        return false;
    }
    *tlen = d->len / 16;
    return true;
}

/* What is wrong with descriptor d as entry n of a chain, or NULL. */
static const char *bad_desc(const Desc *d, unsigned n, unsigned tlen, bool seen_write)
{
    if (n > tlen)
        return "chain loops or is longer than its table";
    if (d->flags & DESC_F_INDIRECT)
        return "indirect descriptor inside a chain or an indirect table";
    if (d->len == 0)
        return "zero-sized buffer";
    if (!machine_ram_ptr(d->addr, d->len))
        return "buffer outside RAM";
    if (seen_write && !(d->flags & DESC_F_WRITE))
        return "device-readable buffer after a device-writable one";
    if ((d->flags & DESC_F_NEXT) && d->next >= tlen)
        return "next descriptor beyond the table";
    return NULL;
}

/* Walk the chain at head into m->segs and req. false: malformed (reported). */
static bool collect(VirtioMmio *m, unsigned q, uint16_t head, VirtqReq *req)
{
    const Virtq *vq = &m->vq[q];
    const uint8_t *table = vq->desc;
    unsigned tlen = vq->size, i = head, n = 0;
    Desc d = read_desc(table, i);
    if (d.flags & DESC_F_INDIRECT) {
        if (!enter_indirect(m, q, head, &d, &table, &tlen))
            return false;
        d = read_desc(table, i = 0);
    }
    *req = (VirtqReq){ .out = m->segs };
    for (;;) {
        const char *why = bad_desc(&d, ++n, tlen, req->nin > 0);
        if (why) {
            device_error(m, "queue %u, chain %u, descriptor %u: %s (%#llx, %u bytes, flags %#x, "
                         "next %u)", q, head, i, why, (unsigned long long)d.addr, d.len,
                         d.flags, d.next);
            return false;
        }
        m->segs[n - 1] = (VirtqSeg){ machine_ram_ptr(d.addr, d.len), d.len };
        if (d.flags & DESC_F_WRITE) {
            req->nin++;
            req->in_len += d.len;
        } else {
            req->nout++;
            req->out_len += d.len;
        }
        if (!(d.flags & DESC_F_NEXT))
            break;
        d = read_desc(table, i = d.next);
    }
    req->in = m->segs + req->nout;
    return true;
}

/* The device has written req's device-writable buffers (DMA into RAM):
 * translated code there is stale. */
static void dma_written(const VirtqReq *req)
{
    for (unsigned k = 0; k < req->nin; k++)
        tlb_dma_written(VIRT_RAM_BASE + (uint64_t)(req->in[k].host - machine.ram), req->in[k].len);
}

/* Serve the chain at head; false: the device deferred it (VIRTQ_DEFER). */
static bool serve(VirtioMmio *m, unsigned q, uint16_t head)
{
    Virtq *vq = &m->vq[q];
    if (head >= vq->size) {
        device_error(m, "queue %u: avail ring names descriptor %u of %u", q, head, vq->size);
        return true;
    }
    VirtqReq req;
    if (!collect(m, q, head, &req))
        return true;
    int64_t n = m->dev.handle(m->dev.opaque, q, &req);
    if (n == VIRTQ_DEFER)
        return false;
    dma_written(&req);
    if (n < 0) {
        device_error(m, "queue %u, chain %u: %s", q, head, req.bad ? req.bad : "bad request");
        return true;
    }
    push_used(vq, head, (uint64_t)n < req.in_len ? (uint32_t)n : (uint32_t)req.in_len);
    return true;
}

/* Serve queue q until its avail ring is empty, then interrupt if wanted. */
static void queue_run(VirtioMmio *m, unsigned q)
{
    Virtq *vq = &m->vq[q];
    uint16_t old_used = vq->used_idx;
    while (!m->broken) {
        uint16_t avail = avail_idx(vq);
        uint16_t pending = (uint16_t)(avail - vq->last_avail);
        if (pending > vq->size) {
            device_error(m, "queue %u: avail index moved from %u to %u (queue size %u)", q,
                         vq->last_avail, avail, vq->size);
            break;
        }
        if (pending == 0) {
            if (!(m->features & F(VIRTIO_F_EVENT_IDX)))
                break;
            set_avail_event(vq, avail);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* avail_event before the re-read */
            if (avail_idx(vq) == avail)
                break;
            continue;
        }
        if (!serve(m, q, avail_head(vq, vq->last_avail++))) {
            vq->last_avail--;                /* deferred: it stays for the next kick */
            break;
        }
    }
    notify_used(m, vq, old_used);
}

/* -- Registers -------------------------------------------------------------- */

static Virtq *selected_queue(VirtioMmio *m)
{
    return m->queue_sel < m->dev.nqueues ? &m->vq[m->queue_sel] : NULL;
}

static bool valid_queue_size(uint32_t n)
{
    return n >= 1 && n <= VIRTQ_MAX_SIZE && (n & (n - 1)) == 0;
}

/* QueueReady = 1: check and take the queue registers. */
static void queue_enable(VirtioMmio *m, Virtq *vq)
{
    unsigned q = (unsigned)(vq - m->vq), n = vq->num;
    uint8_t *desc = machine_ram_ptr(vq->desc_pa, 16ULL * n);
    uint8_t *avail = machine_ram_ptr(vq->driver_pa, 6ULL + 2ULL * n);
    uint8_t *used = machine_ram_ptr(vq->device_pa, 6ULL + 8ULL * n);
    const char *why = !valid_queue_size(n) ? "size is not a power of 2 in 1..1024"
        : (vq->desc_pa % 16 || vq->driver_pa % 2 || vq->device_pa % 4) ? "rings misaligned"
        : (!desc || !avail || !used) ? "ring outside RAM" : NULL;
    if (why) {
        device_error(m, "queue %u made ready: %s (size %u, desc %#llx, driver %#llx, "
                     "device %#llx)", q, why, n, (unsigned long long)vq->desc_pa,
                     (unsigned long long)vq->driver_pa, (unsigned long long)vq->device_pa);
        return;
    }
    vq->size = n;
    vq->desc = desc;
    vq->avail = avail;
    vq->used = used;
    vq->last_avail = vq->used_idx = 0;
    vq->ready = true;
}

static void queue_write(VirtioMmio *m, uint64_t off, uint32_t v)
{
    Virtq *vq = selected_queue(m);
    if (!vq) {
        guest_error(m, "write of %#x to register %#llx of queue %u, which does not exist", v,
                    (unsigned long long)off, m->queue_sel);
        return;
    }
    if (off == REG_QUEUE_READY) {
        if (!v)
            vq->ready = false;
        else if (!vq->ready)
            queue_enable(m, vq);
        return;
    }
    if (vq->ready)
        guest_error(m, "queue %u: register %#llx written while ready (used at the next "
                    "QueueReady)", m->queue_sel, (unsigned long long)off);
    if (off == REG_QUEUE_NUM) {
        vq->num = v;
        if (!valid_queue_size(v))
            device_error(m, "queue %u: size %u is not a power of 2 in 1..%u", m->queue_sel, v,
                         VIRTQ_MAX_SIZE);
        return;
    }
    uint64_t *a = off < REG_QUEUE_DRIVER_LOW ? &vq->desc_pa
                : off < REG_QUEUE_DEVICE_LOW ? &vq->driver_pa : &vq->device_pa;
    *a = off & 4 ? (*a & 0xffffffffULL) | (uint64_t)v << 32 : (*a & ~0xffffffffULL) | v;
}

static void queue_notify(VirtioMmio *m, uint32_t q)
{
    const char *why = q >= m->dev.nqueues ? "the queue does not exist"
        : !m->vq[q].ready ? "the queue is not ready"
        : m->broken ? "the device needs reset"
        : !(m->status & STATUS_DRIVER_OK) ? "DRIVER_OK is not set" : NULL;
    if (why) {
        guest_error(m, "notify of queue %u ignored: %s", q, why);
        return;
    }
    queue_run(m, q);
}

static void driver_features_write(VirtioMmio *m, uint32_t v)
{
    if (m->status & STATUS_FEATURES_OK)
        guest_error(m, "DriverFeatures written after FEATURES_OK: ignored");
    else if (m->drv_features_sel < 2)
        m->drv_features[m->drv_features_sel] = v;
    else if (v)
        m->drv_features_high = true;
}

static void status_write(VirtioMmio *m, uint32_t v)
{
    if (v == 0) {
        device_reset(m);
        return;
    }
    if ((v & STATUS_FEATURES_OK) && !(m->status & STATUS_FEATURES_OK)) {
        uint64_t f = (uint64_t)m->drv_features[1] << 32 | m->drv_features[0];
        if (!(f & F(VIRTIO_F_VERSION_1)) || (f & ~m->offered) || m->drv_features_high) {
            guest_error(m, "FEATURES_OK refused: driver features %#llx (offered %#llx, "
                        "VIRTIO_F_VERSION_1 required)", (unsigned long long)f,
                        (unsigned long long)m->offered);
            v &= ~(uint32_t)STATUS_FEATURES_OK;
        } else {
            m->features = f;
        }
    }
    m->status = (uint8_t)(v | (m->status & STATUS_NEEDS_RESET));
}

static uint32_t reg_read(VirtioMmio *m, uint64_t off)
{
    const Virtq *vq = selected_queue(m);
    switch (off) {
    case REG_MAGIC:             return VIRT_MAGIC;
    case REG_VERSION:           return VIRT_VERSION;
    case REG_DEVICE_ID:         return m->dev.device_id;
    case REG_VENDOR_ID:         return VIRT_VENDOR;
    case REG_DEVICE_FEATURES:
        return m->dev_features_sel < 2 ? (uint32_t)(m->offered >> (32 * m->dev_features_sel)) : 0;
    case REG_QUEUE_NUM_MAX:     return vq ? VIRTQ_MAX_SIZE : 0;
    case REG_QUEUE_READY:       return vq && vq->ready;
    case REG_INTERRUPT_STATUS:  return m->isr;
    case REG_STATUS:            return m->status;
    case REG_CONFIG_GENERATION: return m->generation;
    case REG_SHM_LEN_LOW: case REG_SHM_LEN_HIGH:        /* no shared memory regions */
    case REG_SHM_BASE_LOW: case REG_SHM_BASE_HIGH:
        return UINT32_MAX;
    case REG_DEVICE_FEATURES_SEL: case REG_DRIVER_FEATURES: case REG_DRIVER_FEATURES_SEL:
    case REG_QUEUE_SEL: case REG_QUEUE_NUM: case REG_QUEUE_NOTIFY: case REG_INTERRUPT_ACK:
    case REG_QUEUE_DESC_LOW: case REG_QUEUE_DESC_HIGH: case REG_QUEUE_DRIVER_LOW:
    case REG_QUEUE_DRIVER_HIGH: case REG_QUEUE_DEVICE_LOW: case REG_QUEUE_DEVICE_HIGH:
    case REG_SHM_SEL:
        guest_error(m, "read of write-only register %#llx", (unsigned long long)off);
        return 0;
    case REG_GUEST_PAGE_SIZE: case REG_QUEUE_ALIGN: case REG_QUEUE_PFN:
        guest_error(m, "read of legacy register %#llx in non-legacy mode",
                    (unsigned long long)off);
        return 0;
    default:
        guest_error(m, "read of bad register offset %#llx", (unsigned long long)off);
        return 0;
    }
}

static void reg_write(VirtioMmio *m, uint64_t off, uint32_t v)
{
    switch (off) {
    case REG_DEVICE_FEATURES_SEL: m->dev_features_sel = v; break;
    case REG_DRIVER_FEATURES:     driver_features_write(m, v); break;
    case REG_DRIVER_FEATURES_SEL: m->drv_features_sel = v; break;
    case REG_QUEUE_SEL:           m->queue_sel = v; break;
    case REG_QUEUE_NUM: case REG_QUEUE_READY:
    case REG_QUEUE_DESC_LOW: case REG_QUEUE_DESC_HIGH: case REG_QUEUE_DRIVER_LOW:
    case REG_QUEUE_DRIVER_HIGH: case REG_QUEUE_DEVICE_LOW: case REG_QUEUE_DEVICE_HIGH:
        queue_write(m, off, v);
        break;
    case REG_QUEUE_NOTIFY:        queue_notify(m, v); break;
    case REG_INTERRUPT_ACK:       m->isr &= ~v; update_irq(m); break;
    case REG_STATUS:              status_write(m, v); break;
    case REG_SHM_SEL:             break;
    case REG_GUEST_PAGE_SIZE: case REG_QUEUE_ALIGN: case REG_QUEUE_PFN:
        guest_error(m, "write to legacy register %#llx in non-legacy mode",
                    (unsigned long long)off);
        break;
    case REG_MAGIC: case REG_VERSION: case REG_DEVICE_ID: case REG_VENDOR_ID:
    case REG_DEVICE_FEATURES: case REG_QUEUE_NUM_MAX: case REG_INTERRUPT_STATUS:
    case REG_CONFIG_GENERATION: case REG_SHM_LEN_LOW: case REG_SHM_LEN_HIGH:
    case REG_SHM_BASE_LOW: case REG_SHM_BASE_HIGH:
        guest_error(m, "write to read-only register %#llx", (unsigned long long)off);
        break;
    default:
        guest_error(m, "write to bad register offset %#llx", (unsigned long long)off);
        break;
    }
}

/* Config space: little-endian bytes; past its end reads all ones (QEMU). */
static uint64_t config_read(const VirtioMmio *m, uint64_t off, unsigned size)
{
    if (off + size > m->dev.config_len)
        return size >= 8 ? UINT64_MAX : (1ULL << (8 * size)) - 1;
    uint64_t v = 0;
    memcpy(&v, m->dev.config + off, size);
    return le64toh(v);
}

static uint64_t mmio_read(void *opaque, uint64_t off, unsigned size)
{
    VirtioMmio *m = opaque;
    if (!m->present)                        /* an empty slot: QEMU's answers */
        return off == REG_MAGIC ? VIRT_MAGIC : off == REG_VERSION ? VIRT_VERSION
             : off == REG_VENDOR_ID ? VIRT_VENDOR : 0;
    pthread_mutex_lock(&m->lock);
    uint64_t v = 0;
    if (off >= REG_CONFIG)
        v = config_read(m, off - REG_CONFIG, size);
    else if (size != 4)
        guest_error(m, "%u-byte read of register %#llx (registers are 4 bytes)", size,
                    (unsigned long long)off);
    else
        v = reg_read(m, off);
    pthread_mutex_unlock(&m->lock);
    return v;
}

static void mmio_write(void *opaque, uint64_t off, unsigned size, uint64_t val)
{
    VirtioMmio *m = opaque;
    if (!m->present)
        return;
    pthread_mutex_lock(&m->lock);
    if (off >= REG_CONFIG)
        guest_error(m, "write to config space offset %#llx: read-only",
                    (unsigned long long)(off - REG_CONFIG));
    else if (size != 4)
        guest_error(m, "%u-byte write of register %#llx (registers are 4 bytes)", size,
                    (unsigned long long)off);
    else
        reg_write(m, off, (uint32_t)val);
    pthread_mutex_unlock(&m->lock);
}

static const MmioOps virtio_mmio_ops = { mmio_read, mmio_write };

/* -- Slots ---------------------------------------------------------------- */

static void slot_map(VirtioMmio *m, unsigned slot)
{
    m->slot = slot;
    m->mapped = true;
    machine_add_mmio(slot_base(slot), VIRTIO_MMIO_SIZE, &virtio_mmio_ops, m, m->name);
}

int virtio_mmio_add(unsigned slot, const VirtioDevice *dev, char *err, size_t errlen)
{
    if (slot >= VIRT_VIRTIO_SLOTS) {
        snprintf(err, errlen, "virtio-mmio slot %u does not exist (0..%u)", slot,
                 VIRT_VIRTIO_SLOTS - 1);
        return -1;
    }
    VirtioMmio *m = &slots[slot];
    if (m->mapped) {
        snprintf(err, errlen, "virtio-mmio slot %u is taken by %s", slot, m->name);
        return -1;
    }
    if (!dev->nqueues || dev->nqueues > VIRTIO_MAX_QUEUES || dev->config_len > VIRTIO_CONFIG_MAX
        || !dev->handle) {
        snprintf(err, errlen, "%s: bad device description", dev->name);
        return -1;
    }
    m->dev = *dev;
    m->present = true;
    m->offered = dev->features | F(VIRTIO_F_VERSION_1) | F(VIRTIO_F_INDIRECT_DESC)
               | F(VIRTIO_F_EVENT_IDX);
    snprintf(m->name, sizeof m->name, "%s@%llx", dev->name, (unsigned long long)slot_base(slot));
    m->slot = slot;
    device_reset(m);
    slot_map(m, slot);
    return 0;
}

void virtio_mmio_kick(unsigned slot, unsigned q)
{
    if (slot >= VIRT_VIRTIO_SLOTS || !slots[slot].present)
        return;
    VirtioMmio *m = &slots[slot];
    pthread_mutex_lock(&m->lock);
    if (q < m->dev.nqueues && m->vq[q].ready && !m->broken && (m->status & STATUS_DRIVER_OK))
        queue_run(m, q);
    pthread_mutex_unlock(&m->lock);
}

int virtio_mmio_free_slot(void)
{
    for (int s = VIRT_VIRTIO_SLOTS - 1; s >= 0; s--)
        if (!slots[s].mapped)
            return s;
    return -1;
}

void virtio_mmio_init_empty_slots(void)
{
    for (unsigned s = 0; s < VIRT_VIRTIO_SLOTS; s++) {
        VirtioMmio *m = &slots[s];
        if (m->mapped)
            continue;
        snprintf(m->name, sizeof m->name, "virtio-mmio@%llx", (unsigned long long)slot_base(s));
        slot_map(m, s);
    }
}

/* -- Buffers of a request ---------------------------------------------------- */

int virtq_for_range(const VirtqSeg *segs, unsigned n, uint64_t off, uint64_t len,
                    int (*fn)(void *ctx, uint8_t *piece, size_t piece_len), void *ctx)
{
    for (unsigned i = 0; i < n && len; i++) {
        if (off >= segs[i].len) {
            off -= segs[i].len;
            continue;
        }
        size_t chunk = segs[i].len - off < len ? segs[i].len - off : (size_t)len;
        int r = fn(ctx, segs[i].host + off, chunk);
        if (r)
            return r;
        len -= chunk;
        off = 0;
    }
    return len ? -1 : 0;
}

typedef struct CopyCtx {
    uint8_t *buf;
    size_t done;
    bool to_guest;
} CopyCtx;

static int copy_piece(void *ctx, uint8_t *piece, size_t len)
{
    CopyCtx *c = ctx;
    if (c->to_guest)
        memcpy(piece, c->buf + c->done, len);
    else
        memcpy(c->buf + c->done, piece, len);
    c->done += len;
    return 0;
}

size_t virtq_copy_from(const VirtqSeg *segs, unsigned n, uint64_t off, void *buf, size_t len)
{
    CopyCtx c = { buf, 0, false };
    virtq_for_range(segs, n, off, len, copy_piece, &c);
    return c.done;
}

size_t virtq_copy_to(const VirtqSeg *segs, unsigned n, uint64_t off, const void *buf,
                     size_t len)
{
    CopyCtx c = { (uint8_t *)buf, 0, true };
    virtq_for_range(segs, n, off, len, copy_piece, &c);
    return c.done;
}
