/*
 * virtio-net (virtio 1.2 section 5.1) on a -netdev user backend
 * (net_slirp.h), behind the virtio-mmio transport (virtio_mmio.h): queue 0
 * receives, queue 1 transmits; no control queue, no multiqueue.
 *
 * Offered: VIRTIO_NET_F_MAC (QEMU's default 52:54:00:12:34:56, the n-th NIC
 * without mac= one more in the last byte) and VIRTIO_NET_F_STATUS (link
 * up, never changes); no checksum or segmentation offloads and no
 * mergeable receive buffers. Config: mac[6], status (8 bytes).
 *
 * Every buffer is the transport's checked segments of guest RAM. Each
 * packet starts with the 12-byte virtio_net_hdr of a version 1 device
 * (flags, gso_type, hdr_len, gso_size, csum_start, csum_offset,
 * num_buffers), split across descriptors in any way, as in QEMU
 * (hw/net/virtio-net.c):
 *   - tx: a chain whose readable part is shorter than the header breaks the
 *     device ("virtio-net header incorrect"); a header asking for checksum
 *     or segmentation offload (never negotiated) and frames over 64 KiB are
 *     dropped with a -d guest_errors line; writable buffers are ignored;
 *     the used length is 0. The frame goes to slirp on the notifying hart's
 *     thread.
 *   - rx: a chain with no writable buffer, or one shorter than the header,
 *     breaks the device; the queued frames (net_user_take) go one per chain
 *     behind a header of zeros with num_buffers = 1; a frame larger than
 *     the chain is dropped (QEMU does too without mergeable buffers). With
 *     no frame waiting the chain is deferred (VIRTQ_DEFER) and stays in the
 *     ring; the slirp thread's rx_ready serves the queue again
 *     (virtio_mmio_kick) when frames come, so they reach the guest with an
 *     interrupt as soon as it has buffers, and the guest's own notify of
 *     new buffers serves waiting frames on its thread.
 */
#define _GNU_SOURCE
#include "system/hw/virtio_net.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/settings.h"
#include "system/hw/virtio_mmio.h"
#include "system/machine.h"
#include "system/net_slirp.h"

#define VIRTIO_ID_NET 1

#define VIRTIO_NET_F_MAC    5
#define VIRTIO_NET_F_STATUS 16
#define VIRTIO_NET_S_LINK_UP 1

#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_GSO_NONE     0

#define NET_HDR_LEN  12                /* struct virtio_net_hdr_v1 */
#define NET_TX_MAX   65536u            /* largest frame sent on */

#define RXQ 0
#define TXQ 1

/* Config space offsets (struct virtio_net_config). */
#define CFG_MAC    0
#define CFG_STATUS 6
#define CFG_LEN    8

typedef struct Net {
    unsigned slot;
    int nd;
    char name[40];                 /* "virtio-net@10008000": for messages */
    uint8_t tx[NET_TX_MAX];        /* one frame out (the slot's lock serializes tx) */
} Net;

static unsigned default_macs;      /* NICs given QEMU's default address so far */

static int64_t net_rx(Net *n, VirtqReq *req)
{
    if (req->nin == 0) {
        req->bad = "virtio-net receive queue contains no in buffers";
        return -1;
    }
    if (req->in_len < NET_HDR_LEN) {
        req->bad = "virtio-net receive buffer shorter than the 12-byte header";
        return -1;
    }
    for (;;) {
        NetFrame *f = net_user_take(n->nd);
        if (!f)
            return VIRTQ_DEFER;
        if (f->len > req->in_len - NET_HDR_LEN) {
            xlat_log(LOG_GUEST_ERRORS, "%s: a %zu-byte frame does not fit a %llu-byte receive "
                     "buffer: dropped\n", n->name, f->len, (unsigned long long)req->in_len);
            free(f);
            continue;
        }
        uint8_t hdr[NET_HDR_LEN] = { [10] = 1 };      /* num_buffers = 1 (le16) */
        virtq_copy_to(req->in, req->nin, 0, hdr, sizeof hdr);
        virtq_copy_to(req->in, req->nin, NET_HDR_LEN, f->data, f->len);
        int64_t used = NET_HDR_LEN + (int64_t)f->len;
        free(f);
        return used;
    }
}

static int64_t net_tx(Net *n, VirtqReq *req)
{
    uint8_t hdr[NET_HDR_LEN];
    if (req->out_len < NET_HDR_LEN) {
        req->bad = "virtio-net header incorrect";
        return -1;
    }
    virtq_copy_from(req->out, req->nout, 0, hdr, sizeof hdr);
    uint64_t len = req->out_len - NET_HDR_LEN;
    if ((hdr[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM) || hdr[1] != VIRTIO_NET_HDR_GSO_NONE) {
        xlat_log(LOG_GUEST_ERRORS, "%s: tx header asks for offloads that were not negotiated "
                 "(flags %#x, gso_type %#x): frame dropped\n", n->name, hdr[0], hdr[1]);
        return 0;
    }
    if (len > NET_TX_MAX) {
        xlat_log(LOG_GUEST_ERRORS, "%s: a %llu-byte tx frame (at most %u): dropped\n", n->name,
                 (unsigned long long)len, NET_TX_MAX);
        return 0;
    }
    virtq_copy_from(req->out, req->nout, NET_HDR_LEN, n->tx, (size_t)len);
    net_user_send(n->nd, n->tx, (size_t)len);
    return 0;
}

static int64_t net_handle(void *opaque, unsigned q, VirtqReq *req)
{
    return q == RXQ ? net_rx(opaque, req) : net_tx(opaque, req);
}

/* The slirp thread, no lock held: frames are waiting. */
static void net_rx_ready(void *opaque)
{
    Net *n = opaque;
    virtio_mmio_kick(n->slot, RXQ);
}

int virtio_net_add(unsigned slot, int nd, const uint8_t *mac, char *err, size_t errlen)
{
    const char *id = net_user_id(nd);
    if (!id) {
        snprintf(err, errlen, "virtio-net: no such netdev");
        return -1;
    }
    if (net_user_attached(nd)) {
        snprintf(err, errlen, "netdev %s is already in use by another device", id);
        return -1;
    }
    Net *n = malloc(sizeof *n);
    if (!n) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    n->slot = slot;
    n->nd = nd;
    snprintf(n->name, sizeof n->name, "virtio-net@%llx",
             (unsigned long long)(VIRT_VIRTIO_BASE + (uint64_t)slot * 0x1000));
    VirtioDevice dev = {
        .name = "virtio-net", .device_id = VIRTIO_ID_NET,
        .features = 1ULL << VIRTIO_NET_F_MAC | 1ULL << VIRTIO_NET_F_STATUS,
        .nqueues = 2, .config_len = CFG_LEN, .handle = net_handle, .opaque = n,
    };
    static const uint8_t qemu_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
    memcpy(dev.config + CFG_MAC, mac ? mac : qemu_mac, 6);
    if (!mac)
        dev.config[CFG_MAC + 5] = (uint8_t)(qemu_mac[5] + default_macs);
    dev.config[CFG_STATUS] = VIRTIO_NET_S_LINK_UP;             /* le16 */
    if (virtio_mmio_add(slot, &dev, err, errlen) < 0) {
        free(n);
        return -1;
    }
    if (!mac)
        default_macs++;
    /* The slot is taken for good now; a failure here ends the run (main.c). */
    return net_user_attach(nd, net_rx_ready, n, err, errlen);
}
