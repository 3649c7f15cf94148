/*
 * The virtio-mmio transport (virtio 1.2, section 4.2: "Virtio Over MMIO",
 * version 2 registers) and split virtqueues, for the device models in hw/
 * (virtio_blk.c, virtio_rng.c). A device model describes itself once
 * (VirtioDevice: id, feature bits, queues, config bytes, a request
 * handler); the transport owns everything the driver writes and every
 * check of it: it validates the rings when a queue becomes ready and each
 * descriptor as it walks a chain, and hands the model a request whose
 * buffers are checked host pointers into guest RAM (VirtqReq). The model
 * never sees a guest address.
 *
 * Requests run synchronously in the QueueNotify write, on the host thread
 * of the hart that wrote it, under the transport's lock (one per slot). A
 * device whose work comes from elsewhere (virtio-net's received frames)
 * defers a chain it has nothing for (VIRTQ_DEFER) and later serves the
 * queue again from its own thread (virtio_mmio_kick).
 */
#ifndef XLAT_SYSTEM_HW_VIRTIO_MMIO_H
#define XLAT_SYSTEM_HW_VIRTIO_MMIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Transport feature bits (the transport adds them to every device's). */
#define VIRTIO_F_INDIRECT_DESC 28
#define VIRTIO_F_EVENT_IDX     29
#define VIRTIO_F_VERSION_1     32

#define VIRTQ_MAX_SIZE    1024     /* QueueNumMax of every queue (QEMU's VIRTQUEUE_MAX_SIZE) */
#define VIRTQ_MAX_SEGS    1024     /* buffers in one request, direct or indirect */
#define VIRTIO_MAX_QUEUES 2
#define VIRTIO_CONFIG_MAX 64       /* bytes of device config space */

/* A checked guest buffer: len (> 0) bytes of guest RAM at host. */
typedef struct VirtqSeg {
    uint8_t *host;
    uint32_t len;
} VirtqSeg;

/* One request (a descriptor chain), as the device model sees it. */
typedef struct VirtqReq {
    const VirtqSeg *out;       /* device-readable buffers, in chain order */
    unsigned nout;
    uint64_t out_len;          /* their total size */
    const VirtqSeg *in;        /* device-writable buffers, after all readable ones */
    unsigned nin;
    uint64_t in_len;
    const char *bad;           /* set by a handler that returns -1: why */
} VirtqReq;

typedef struct VirtioDevice {
    const char *name;          /* "virtio-blk": for messages */
    uint32_t device_id;        /* 2: block, 4: entropy */
    uint64_t features;         /* device-type feature bits offered */
    unsigned nqueues;          /* 1..VIRTIO_MAX_QUEUES */
    uint8_t config[VIRTIO_CONFIG_MAX];  /* config space (read-only to the guest) */
    unsigned config_len;
    /*
     * Serve one request of queue q: return the bytes written to req->in
     * (the used length), or -1 with req->bad set when the request is
     * malformed in a way that breaks the device (it is then marked
     * NEEDS_RESET, as QEMU's virtio_error does). A request the device
     * refuses in its own protocol (a virtio-blk IOERR) is not -1.
     * VIRTQ_DEFER: nothing to do with this chain yet; it stays at the head
     * of the avail ring and the queue is not served further until the
     * next notify or virtio_mmio_kick.
     */
    int64_t (*handle)(void *opaque, unsigned q, VirtqReq *req);
    void *opaque;
} VirtioDevice;

#define VIRTQ_DEFER (-2)

/* Put dev (copied) in slot. 0, or -1 with a message in err (slot taken,
 * out of range). */
int virtio_mmio_add(unsigned slot, const VirtioDevice *dev, char *err, size_t errlen);

/* Serve queue q of slot as a notify would, then interrupt if the driver
 * wants it. Any thread that does not hold the slot's lock (so never from a
 * handler); nothing happens unless the queue is ready, DRIVER_OK is set and
 * the device does not need reset. */
void virtio_mmio_kick(unsigned slot, unsigned q);

/* -- Buffers of a request ------------------------------------------------ */

/* Copy len bytes from offset off of the buffers segs[0..n) to buf / from
 * buf; returns how many there were room for (less at the end). */
size_t virtq_copy_from(const VirtqSeg *segs, unsigned n, uint64_t off, void *buf, size_t len);
size_t virtq_copy_to(const VirtqSeg *segs, unsigned n, uint64_t off, const void *buf,
                     size_t len);

/* Call fn(ctx, piece, piece_len) for the contiguous pieces of bytes
 * [off, off + len) of segs[0..n), in order; stop at the first nonzero
 * return and return it (0: all done; -1: the range is longer than the
 * buffers). */
int virtq_for_range(const VirtqSeg *segs, unsigned n, uint64_t off, uint64_t len,
                    int (*fn)(void *ctx, uint8_t *piece, size_t piece_len), void *ctx);

#endif
