/*
 * virtio-net on a -netdev user backend (net_slirp.h), in a virtio-mmio slot
 * of the virt machine (virtio.h has the other devices and the slot rules).
 * QEMU's `-netdev user,id=N -device virtio-net-device,netdev=N`.
 */
#ifndef XLAT_SYSTEM_HW_VIRTIO_NET_H
#define XLAT_SYSTEM_HW_VIRTIO_NET_H

#include <stddef.h>
#include <stdint.h>

/*
 * A virtio-net NIC in slot on netdev nd (a net_user_create handle; one NIC
 * per netdev), with MAC address mac, or with mac NULL QEMU's default:
 * 52:54:00:12:34:56 for the first NIC without one, ...:57 for the next, and
 * so on. Starts the netdev's slirp thread. 0, or -1 with a message in err.
 */
int virtio_net_add(unsigned slot, int nd, const uint8_t *mac, char *err, size_t errlen);

#endif
