/*
 * The virt machine's virtio devices, as the command line adds them: the
 * virtio-mmio slots at VIRT_VIRTIO_BASE + n * 0x1000 (PLIC irq
 * VIRT_VIRTIO_IRQ + n, n < VIRT_VIRTIO_SLOTS), each holding at most one
 * device. The transport is virtio 1.x over MMIO (version 2; see
 * virtio_mmio.h); the devices are virtio-blk (virtio_blk.c) and virtio-rng
 * (virtio_rng.c).
 *
 * Use: add the devices (main.c, from -drive/-device), then call
 * virtio_mmio_init_empty_slots() once so the remaining slots answer as
 * QEMU's empty transports do. All of it before any hart runs.
 */
#ifndef XLAT_SYSTEM_HW_VIRTIO_H
#define XLAT_SYSTEM_HW_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A virtio-blk disk on the raw image file path in slot. readonly: the file
 * is opened read-only and the device offers VIRTIO_BLK_F_RO (QEMU's
 * readonly=on: the guest sees a read-only disk, and a write it sends
 * anyway fails with VIRTIO_BLK_S_IOERR). snapshot: the file is opened
 * read-only and the guest's writes stay in memory, dropped at exit
 * (QEMU's snapshot=on / -snapshot). Otherwise the file is opened
 * read-write; a file that cannot be is an error, as in QEMU. The file is
 * locked (shared for read-only and snapshot use, exclusive for writing),
 * so two xlat-system runs cannot write one image. Returns 0, or -1 with a
 * message in err.
 */
int virtio_blk_add(unsigned slot, const char *path, bool snapshot, bool readonly, char *err,
                   size_t errlen);

/* A virtio-rng entropy source (host getrandom) in slot. 0, or -1 + err. */
int virtio_rng_add(unsigned slot, char *err, size_t errlen);

/*
 * The slot QEMU would give the next -device virtio-*-device: the highest
 * free one (QEMU fills its virtio-mmio buses from the top address down, and
 * the kernel probes them in that order, so the first disk is vda either
 * way). -1 when all are taken.
 */
int virtio_mmio_free_slot(void);

/* Map every slot without a device as an empty transport: magic, version 2,
 * vendor "QEMU", device id 0 (no driver binds), other registers read 0 and
 * ignore writes. Call once, after the last *_add. */
void virtio_mmio_init_empty_slots(void);

#endif
