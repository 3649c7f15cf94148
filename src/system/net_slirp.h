/*
 * User-mode networking: QEMU's `-netdev user,id=ID[,hostfwd=...]` over
 * libslirp, the backend a network device (hw/virtio_net.c) attaches to.
 * A netdev is a virtual 10.0.2.0/24 with QEMU's defaults: the host (the
 * gateway) at 10.0.2.2, a DNS forwarder at 10.0.2.3, DHCP leases from
 * 10.0.2.15, IPv6 fec0::/64 (host fec0::2, DNS fec0::3); the guest's TCP
 * and UDP go out through host sockets, and hostfwd rules listen on host
 * ports for connections into the guest.
 *
 * Threads: each attached netdev has a slirp thread that polls slirp's
 * sockets and runs the timers slirp asks for. Every slirp call, from that
 * thread or from net_user_send on a hart's thread, is made under the
 * netdev's one lock. Frames slirp sends to the guest are queued (bounded:
 * past NET_RXQ_MAX_FRAMES or NET_RXQ_MAX_BYTES they are dropped, and TCP
 * retransmits); the device takes them with net_user_take when the guest has
 * buffers, and is told that frames are waiting through its rx_ready
 * callback, which runs on the slirp thread with no netdev lock held (so it
 * may take the device's own locks).
 *
 * Use (main.c): net_user_create for each -netdev, then net_user_find to
 * match a -device's netdev=ID, then the device's *_add attaches it. All of
 * it before any hart runs.
 */
#ifndef XLAT_SYSTEM_NET_SLIRP_H
#define XLAT_SYSTEM_NET_SLIRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_MAX_NETDEVS    8
#define NET_RXQ_MAX_FRAMES 1024
#define NET_RXQ_MAX_BYTES  (4u << 20)

/* An Ethernet frame for the guest (no virtio header). */
typedef struct NetFrame {
    struct NetFrame *next;
    size_t len;
    uint8_t data[];
} NetFrame;

/*
 * A netdev from QEMU's option string "user,id=ID[,PROP=VALUE]...": id= is
 * required; hostfwd=[tcp|udp]:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT
 * (repeatable; tcp when the protocol is empty, any host address when
 * HOSTADDR is, the first DHCP address when GUESTADDR is), net=ADDR[/MASK],
 * host=, dns=, dhcpstart=, restrict=on|off, ipv4=on|off, ipv6=on|off,
 * hostname=. Host forwarding sockets are bound here. Returns the netdev's
 * handle (>= 0), or -1 with a message in err.
 */
int net_user_create(const char *opts, char *err, size_t errlen);

/* The handle of the netdev with this id, or -1. */
int net_user_find(const char *id);

/* Its id (for messages); NULL for a bad handle. */
const char *net_user_id(int nd);

/* True once a device has attached to it. */
bool net_user_attached(int nd);

/*
 * Attach a device (one per netdev) and start the slirp thread. rx_ready(
 * opaque) is called on that thread, with no netdev lock held, after frames
 * were queued for the guest. 0, or -1 with a message in err.
 */
int net_user_attach(int nd, void (*rx_ready)(void *opaque), void *opaque, char *err,
                    size_t errlen);

/* A frame from the guest (Ethernet, no virtio header) into slirp. Any
 * thread; slirp copies it. */
void net_user_send(int nd, const uint8_t *frame, size_t len);

/* The oldest queued frame for the guest, now the caller's (free() it), or
 * NULL when none is waiting. Any thread. */
NetFrame *net_user_take(int nd);

#endif
