/*
 * virtio-rng (virtio 1.2 section 5.4, the entropy device): one request
 * queue, no config space, no feature bits of its own. Each request's
 * device-writable buffers are filled with bytes from the host's getrandom
 * (QEMU's default backend is rng-random on /dev/urandom: the same pool),
 * at most RNG_MAX_REQUEST bytes of them, and its used length is the number
 * of bytes written; readable buffers are ignored, as QEMU does.
 * Synchronous, like every request here: the cap bounds what one notify
 * costs the notifying hart (a chain may name up to 1024 buffers of all of
 * RAM each, and a queue up to 1024 chains: without it, one QueueNotify
 * could keep the hart in getrandom for hours). Drivers ask for far less
 * (Linux: a cache line's worth per request), and the spec lets the device
 * write fewer bytes than the buffers hold.
 */
#define _GNU_SOURCE
#include "system/hw/virtio.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>

#include "exec/settings.h"
#include "system/hw/virtio_mmio.h"

#define VIRTIO_ID_RNG 4
#define RNG_MAX_REQUEST 4096u          /* bytes per request */

static int fill_random(void *ctx, uint8_t *p, size_t len)
{
    uint64_t *done = ctx;
    while (len) {
        ssize_t r = getrandom(p, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
        *done += (uint64_t)r;
    }
    return 0;
}

static int64_t rng_handle(void *opaque, unsigned q, VirtqReq *req)
{
    (void)opaque;
    (void)q;
    uint64_t done = 0, want = req->in_len < RNG_MAX_REQUEST ? req->in_len : RNG_MAX_REQUEST;
    if (virtq_for_range(req->in, req->nin, 0, want, fill_random, &done) < 0)
        xlat_log(LOG_GUEST_ERRORS, "virtio-rng: host getrandom failed after %llu bytes\n",
                 (unsigned long long)done);
    return (int64_t)done;
}

int virtio_rng_add(unsigned slot, char *err, size_t errlen)
{
    VirtioDevice dev = {
        .name = "virtio-rng", .device_id = VIRTIO_ID_RNG, .nqueues = 1,
        .handle = rng_handle,
    };
    return virtio_mmio_add(slot, &dev, err, errlen);
}
