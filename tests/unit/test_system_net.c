/*
 * virtio-net (src/system/hw/virtio_net.c) on a -netdev user backend
 * (src/system/net_slirp.c, libslirp), driven through the machine's bus the
 * way a hart reaches it, with a small driver written here: two queues in a
 * fake RAM fenced by PROT_NONE pages (a host access past either end
 * crashes the test).
 *   - -netdev option parsing: what is refused and why;
 *   - the device: id, features (MAC, STATUS, no offloads), config space
 *     (QEMU's default MACs, 52:54:00:12:34:56 then :57; link up);
 *   - the guest side of a network: an ARP request for 10.0.2.2 gets
 *     slirp's reply, a DHCP DISCOVER gets an OFFER of 10.0.2.15 (router
 *     10.0.2.2, DNS 10.0.2.3), each with the interrupt; a frame that comes
 *     while the guest has no buffer waits for one; a connection to a
 *     hostfwd port reaches the guest as a SYN;
 *   - malformed rings and requests, each refused with NEEDS_RESET and a -d
 *     guest_errors line (rx chains without writable buffers or shorter than
 *     the header, a tx header cut short, buffers outside RAM), frames that
 *     are dropped without breaking the device (offload flags, a frame
 *     larger than the rx buffer), and a device that works after reset.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "system/hw/virtio_net.h"
#include "system/net_slirp.h"
#include "virtio_driver.h"

enum { S_NET = 7, S_NET2 = 6 };

#define NET_F_MAC 5
#define NET_F_STATUS 16
#define HDR 12

#define QN       8

/* Per queue (q = 0 rx, 1 tx): rings at RING(q), buffers at BUF(q, i). */
#define RING(q)   (0x10000ULL * (q))
#define BUF(q, i) (0x100000ULL + 0x40000ULL * (q) + 0x800ULL * (i))
#define BUF_LEN   0x800u

/* -- A small driver: queue q's rings --------------------------------------------- */

typedef struct Q {
    unsigned q;
    uint16_t avail_idx, used_seen;
} Q;

static Q rxq = { 0, 0, 0 }, txq = { 1, 0, 0 };

static uint64_t desc_off(const Q *q) { return RING(q->q); }
static uint64_t avail_off(const Q *q) { return RING(q->q) + 0x4000; }
static uint64_t used_off(const Q *q) { return RING(q->q) + 0x8000; }

static void desc(const Q *q, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
                 uint16_t next)
{
    desc_at(desc_off(q), i, addr, len, flags, next);
}

/* Offer the chain at head (without notifying). */
static void offer(Q *q, uint16_t head)
{
    put16(avail_off(q) + 4 + 2 * (q->avail_idx % QN), head);
    q->avail_idx++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    put16(avail_off(q) + 2, q->avail_idx);
}

static void notify(const Q *q) { wr32(S_NET, QUEUE_NOTIFY, q->q); }

static void setup_queue(unsigned q)
{
    Q tmp = { q, 0, 0 };
    uint64_t d = pa(desc_off(&tmp)), a = pa(avail_off(&tmp)), u = pa(used_off(&tmp));
    wr32(S_NET, QUEUE_SEL, q);
    CHECK_EQ(rd32(S_NET, QUEUE_NUM_MAX), VIRTQ_MAX_SIZE);
    wr32(S_NET, QUEUE_NUM, QN);
    wr32(S_NET, DESC_LO, (uint32_t)d);
    wr32(S_NET, DESC_HI, (uint32_t)(d >> 32));
    wr32(S_NET, DRIVER_LO, (uint32_t)a);
    wr32(S_NET, DRIVER_HI, (uint32_t)(a >> 32));
    wr32(S_NET, DEVICE_LO, (uint32_t)u);
    wr32(S_NET, DEVICE_HI, (uint32_t)(u >> 32));
    wr32(S_NET, QUEUE_READY, 1);
    CHECK_EQ(rd32(S_NET, QUEUE_READY), 1);
}

/* Reset, negotiate want & offered (+ VERSION_1), both queues, DRIVER_OK. */
static void drv_init(uint64_t want)
{
    wr32(S_NET, STATUS, 0);
    memset(host(0), 0, 0x30000);
    rxq = (Q){ 0, 0, 0 };
    txq = (Q){ 1, 0, 0 };
    wr32(S_NET, STATUS, ST_ACK | ST_DRIVER);
    wr32(S_NET, DEV_FEATURES_SEL, 1);
    uint64_t offered = (uint64_t)rd32(S_NET, DEV_FEATURES) << 32;
    wr32(S_NET, DEV_FEATURES_SEL, 0);
    offered |= rd32(S_NET, DEV_FEATURES);
    uint64_t f = (want | F(VIRTIO_F_VERSION_1)) & offered;
    wr32(S_NET, DRV_FEATURES_SEL, 1);
    wr32(S_NET, DRV_FEATURES, (uint32_t)(f >> 32));
    wr32(S_NET, DRV_FEATURES_SEL, 0);
    wr32(S_NET, DRV_FEATURES, (uint32_t)f);
    wr32(S_NET, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    CHECK(rd32(S_NET, STATUS) & ST_FEATURES_OK);
    setup_queue(0);
    setup_queue(1);
    wr32(S_NET, STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
}

/* n rx buffers of len bytes, descriptors 0..n-1, and a notify. */
static void post_rx(unsigned n, uint32_t len)
{
    for (unsigned i = 0; i < n; i++) {
        desc(&rxq, i, pa(BUF(0, i)), len, D_WRITE, 0);
        offer(&rxq, (uint16_t)i);
    }
    notify(&rxq);
}

/* Send frame (after a zero header) as one tx buffer; true if it was used. */
static bool send_frame(const void *frame, size_t len)
{
    memset(host(BUF(1, 0)), 0, HDR);
    memcpy(host(BUF(1, 0)) + HDR, frame, len);
    desc(&txq, 0, pa(BUF(1, 0)), (uint32_t)(HDR + len), 0, 0);
    offer(&txq, 0);
    notify(&txq);
    if (get16(used_off(&txq) + 2) == txq.used_seen)
        return false;
    txq.used_seen++;
    return true;
}

/* The next rx used entry, waiting up to ms; its buffer and length. */
static uint8_t *recv_frame(unsigned ms, uint32_t *len)
{
    for (unsigned t = 0; t <= ms; t += 5) {
        if (get16(used_off(&rxq) + 2) != rxq.used_seen) {
            uint64_t e = used_off(&rxq) + 4 + 8 * (rxq.used_seen % QN);
            uint32_t id = get32(e);
            *len = get32(e + 4);
            rxq.used_seen++;
            return id < QN ? host(BUF(0, id)) : NULL;
        }
        usleep(5000);
    }
    return NULL;
}

static void ack_all(void) { wr32(S_NET, ISR_ACK, rd32(S_NET, ISR)); }

/* -- Frames ------------------------------------------------------------------------ */

static const uint8_t guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put_ip(uint8_t *p, const char *s) { inet_pton(AF_INET, s, p); }

static bool ip_is(const uint8_t *p, const char *s)
{
    uint8_t a[4];
    put_ip(a, s);
    return !memcmp(p, a, 4);
}

static size_t arp_request(uint8_t *f, const char *sender, const char *target)
{
    memset(f, 0xff, 6);
    memcpy(f + 6, guest_mac, 6);
    put_be16(f + 12, 0x0806);
    uint8_t *a = f + 14;
    put_be16(a, 1);                        /* Ethernet */
    put_be16(a + 2, 0x0800);               /* IPv4 */
    a[4] = 6;
    a[5] = 4;
    put_be16(a + 6, 1);                    /* request */
    memcpy(a + 8, guest_mac, 6);
    put_ip(a + 14, sender);
    memset(a + 18, 0, 6);
    put_ip(a + 24, target);
    return 14 + 28;
}

static uint16_t ip_checksum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += be16(p + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

#define BOOTP_LEN (236 + 312)
#define XID 0x5eed1234u

static size_t dhcp_discover(uint8_t *f)
{
    size_t udp_len = 8 + BOOTP_LEN, ip_len = 20 + udp_len;
    memset(f, 0, 14 + ip_len);
    memset(f, 0xff, 6);
    memcpy(f + 6, guest_mac, 6);
    put_be16(f + 12, 0x0800);
    uint8_t *ip = f + 14, *udp = ip + 20, *b = udp + 8;
    ip[0] = 0x45;
    put_be16(ip + 2, (uint16_t)ip_len);
    ip[8] = 64;
    ip[9] = 17;                            /* UDP */
    memset(ip + 16, 0xff, 4);              /* 0.0.0.0 -> 255.255.255.255 */
    put_be16(ip + 10, ip_checksum(ip, 20));
    put_be16(udp, 68);
    put_be16(udp + 2, 67);
    put_be16(udp + 4, (uint16_t)udp_len);  /* checksum 0: none */
    b[0] = 1;                              /* BOOTREQUEST */
    b[1] = 1;
    b[2] = 6;
    b[4] = XID >> 24; b[5] = XID >> 16 & 0xff; b[6] = XID >> 8 & 0xff; b[7] = XID & 0xff;
    memcpy(b + 28, guest_mac, 6);
    static const uint8_t opts[] = { 99, 130, 83, 99, 53, 1, 1, 55, 3, 1, 3, 6, 255 };
    memcpy(b + 236, opts, sizeof opts);
    return 14 + ip_len;
}

/* The value of DHCP option code in the bootp packet b (len bytes), or NULL. */
static const uint8_t *dhcp_option(const uint8_t *b, size_t len, uint8_t code, uint8_t *olen)
{
    for (size_t i = 240; i + 1 < len && b[i] != 255;) {
        if (b[i] == 0) {
            i++;
            continue;
        }
        if (b[i] == code && i + 2 + b[i + 1] <= len) {
            *olen = b[i + 1];
            return b + i + 2;
        }
        i += 2u + b[i + 1];
    }
    return NULL;
}

/* -- Tests --------------------------------------------------------------------------- */

static void test_options(void)
{
    char err[256];
    static const struct { const char *opts, *why; } bad[] = {
        { "user", "id= is required" },
        { "tap,id=t0", "only the user backend" },
        { "user,id=b0,smb=/tmp", "unsupported property 'smb'" },
        { "user,id=b0,hostfwd=tcp::99999-:80", "invalid host forwarding rule" },
        { "user,id=b0,hostfwd=sctp::8080-:80", "protocol must be tcp or udp" },
        { "user,id=b0,hostfwd=tcp::8080:80", "invalid host forwarding rule" },
        { "user,id=b0,hostfwd=tcp:1.2.3.256:8080-:80", "bad host address" },
        { "user,id=b0,hostfwd=tcp::8080-:0", "bad port" },
        { "user,id=b0,net=10.0.3.0/24,host=10.0.2.2", "host=10.0.2.2 is not in the guest network" },
        { "user,id=b0,net=10.0.3.0/33", "not ADDR[/MASK]" },
        { "user,id=b0,restrict=maybe", "expected on or off" },
        { "user,id=b0,ipv4=off,ipv6=off", "IP disabled" },
        { "user,id=n0", "duplicate id 'n0'" },
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int h = net_user_create(bad[i].opts, err, sizeof err);
        if (h >= 0 || !strstr(err, bad[i].why))
            printf("FAIL -netdev %s: handle %d, '%s' (expected '%s')\n", bad[i].opts, h, err,
                   bad[i].why);
        failures += h >= 0 || !strstr(err, bad[i].why);
    }
    CHECK_EQ(net_user_find("b0"), -1);
    CHECK_EQ(net_user_find("n0"), 0);
    CHECK(!strcmp(net_user_id(0), "n0"));
}

static void test_device(void)
{
    CHECK_EQ(rd32(S_NET, DEVICE_ID), 1);
    wr32(S_NET, DEV_FEATURES_SEL, 0);
    CHECK_EQ(rd32(S_NET, DEV_FEATURES),
             F(NET_F_MAC) | F(NET_F_STATUS) | F(VIRTIO_F_INDIRECT_DESC) | F(VIRTIO_F_EVENT_IDX));
    wr32(S_NET, DEV_FEATURES_SEL, 1);
    CHECK_EQ(rd32(S_NET, DEV_FEATURES), 1);
    for (unsigned i = 0; i < 6; i++) {
        CHECK_EQ(rd(S_NET, CONFIG + i, 1), guest_mac[i]);
        CHECK_EQ(rd(S_NET2, CONFIG + i, 1), i < 5 ? guest_mac[i] : 0x57u);
    }
    CHECK_EQ(rd(S_NET, CONFIG + 6, 2), 1);                /* VIRTIO_NET_S_LINK_UP */
    CHECK_EQ(rd32(S_NET, CONFIG + 8), 0xffffffff);        /* past the config */
    wr32(S_NET, QUEUE_SEL, 2);
    CHECK_EQ(rd32(S_NET, QUEUE_NUM_MAX), 0);              /* rx and tx only */
}

static void test_arp(uint64_t features)
{
    drv_init(features);
    post_rx(4, BUF_LEN);
    CHECK_EQ(get16(used_off(&rxq) + 2), 0);               /* nothing to receive yet */
    uint8_t f[64];
    size_t n = arp_request(f, "10.0.2.15", "10.0.2.2");
    CHECK(send_frame(f, n));
    uint32_t len = 0;
    uint8_t *r = recv_frame(2000, &len);
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK(len >= HDR + 42);
    CHECK_EQ(r[0], 0);                                     /* no offload flags */
    CHECK_EQ(r[10], 1);                                    /* num_buffers */
    uint8_t *e = r + HDR, *a = e + 14;
    CHECK(!memcmp(e, guest_mac, 6));
    CHECK_EQ(be16(e + 12), 0x0806);
    CHECK_EQ(be16(a + 6), 2);                              /* reply */
    CHECK(ip_is(a + 14, "10.0.2.2"));                      /* sender: the host */
    CHECK(!memcmp(a + 18, guest_mac, 6));
    CHECK(ip_is(a + 24, "10.0.2.15"));
    CHECK(rd32(S_NET, ISR) & 1);
    CHECK(irq_line(S_NET));
    ack_all();
    CHECK(!irq_line(S_NET));
}

static void test_dhcp(void)
{
    drv_init(F(VIRTIO_F_EVENT_IDX));
    post_rx(4, BUF_LEN);
    uint8_t f[1024];
    size_t n = dhcp_discover(f);
    CHECK(send_frame(f, n));
    uint32_t len = 0;
    uint8_t *r = recv_frame(2000, &len);
    CHECK(r != NULL);
    if (!r)
        return;
    uint8_t *e = r + HDR, *ip = e + 14;
    CHECK_EQ(be16(e + 12), 0x0800);
    CHECK_EQ(ip[9], 17);
    uint8_t *udp = ip + 4 * (ip[0] & 15), *b = udp + 8;
    size_t blen = len - (size_t)(b - r);
    CHECK_EQ(be16(udp), 67);
    CHECK_EQ(be16(udp + 2), 68);
    CHECK_EQ(b[0], 2);                                     /* BOOTREPLY */
    CHECK_EQ((uint32_t)b[4] << 24 | b[5] << 16 | b[6] << 8 | b[7], XID);
    CHECK(ip_is(b + 16, "10.0.2.15"));                     /* yiaddr */
    CHECK(!memcmp(b + 28, guest_mac, 6));
    uint8_t ol = 0;
    const uint8_t *o = dhcp_option(b, blen, 53, &ol);
    CHECK(o && ol == 1 && o[0] == 2);                      /* DHCPOFFER */
    o = dhcp_option(b, blen, 54, &ol);
    CHECK(o && ol == 4 && ip_is(o, "10.0.2.2"));           /* server id */
    o = dhcp_option(b, blen, 1, &ol);
    CHECK(o && ol == 4 && ip_is(o, "255.255.255.0"));
    o = dhcp_option(b, blen, 3, &ol);
    CHECK(o && ol == 4 && ip_is(o, "10.0.2.2"));           /* router */
    o = dhcp_option(b, blen, 6, &ol);
    CHECK(o && ol >= 4 && ip_is(o, "10.0.2.3"));           /* DNS */
    ack_all();
}

/* A frame that comes while the guest has no buffer is queued, then served
 * by the guest's notify of a new buffer. */
static void test_rx_waits(void)
{
    drv_init(F(VIRTIO_F_EVENT_IDX));
    uint8_t f[64];
    size_t n = arp_request(f, "10.0.2.15", "10.0.2.3");  /* the DNS address answers too */
    CHECK(send_frame(f, n));
    usleep(100000);                                        /* the slirp thread's kick: no buffer */
    ack_all();                                             /* the tx buffer's interrupt */
    CHECK_EQ(get16(used_off(&rxq) + 2), 0);
    CHECK(!irq_line(S_NET));
    post_rx(1, BUF_LEN);
    uint32_t len = 0;
    uint8_t *r = recv_frame(0, &len);                      /* served by the notify itself */
    CHECK(r != NULL);
    if (r)
        CHECK(ip_is(r + HDR + 14 + 14, "10.0.2.3"));
    CHECK(irq_line(S_NET));
    ack_all();
}

/* A free TCP port on 127.0.0.1 (bound, closed: free unless raced). */
static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0
        || getsockname(s, (struct sockaddr *)&a, &al) < 0) {
        perror("free_port");
        exit(1);
    }
    close(s);
    return ntohs(a.sin_port);
}

/* A host connection to the hostfwd port becomes a SYN to 10.0.2.15:8080. */
static void test_hostfwd(int port)
{
    drv_init(F(VIRTIO_F_EVENT_IDX));
    post_rx(4, BUF_LEN);
    uint8_t f[64];
    size_t n = arp_request(f, "10.0.2.15", "10.0.2.2");   /* slirp learns our MAC */
    CHECK(send_frame(f, n));
    uint32_t len = 0;
    CHECK(recv_frame(2000, &len) != NULL);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int c = connect(s, (struct sockaddr *)&a, sizeof a);
    CHECK(c == 0 || errno == EINPROGRESS);
    uint8_t *r = recv_frame(3000, &len);
    CHECK(r != NULL);
    if (r) {
        uint8_t *ip = r + HDR + 14, *tcp = ip + 4 * (ip[0] & 15);
        CHECK_EQ(be16(r + HDR + 12), 0x0800);
        CHECK_EQ(ip[9], 6);
        CHECK(ip_is(ip + 16, "10.0.2.15"));
        CHECK_EQ(be16(tcp + 2), 8080);
        CHECK_EQ(tcp[13] & 0x12, 0x02);                    /* SYN, no ACK */
    }
    close(s);
    ack_all();
}

#define REFUSED(why) do {                                                     \
        CHECK(rd32(S_NET, STATUS) & ST_NEEDS_RESET);                           \
        CHECK(logged(why));                                                   \
    } while (0)

static void test_malformed(void)
{
    uint8_t f[64];
    size_t n = arp_request(f, "10.0.2.15", "10.0.2.2");

    drv_init(0);                                           /* rx chain with no writable buffer */
    log_skip();
    desc(&rxq, 0, pa(BUF(0, 0)), BUF_LEN, 0, 0);
    offer(&rxq, 0);
    notify(&rxq);
    REFUSED("virtio-net receive queue contains no in buffers");
    CHECK_EQ(get16(used_off(&rxq) + 2), 0);

    drv_init(0);                                           /* rx buffer shorter than the header */
    log_skip();
    desc(&rxq, 0, pa(BUF(0, 0)), 4, D_WRITE | D_NEXT, 1);
    desc(&rxq, 1, pa(BUF(0, 1)), 4, D_WRITE, 0);
    offer(&rxq, 0);
    notify(&rxq);
    REFUSED("shorter than the 12-byte header");

    drv_init(0);                                           /* rx buffer outside RAM */
    log_skip();
    desc(&rxq, 0, pa(RAM_SIZE - 100), BUF_LEN, D_WRITE, 0);
    offer(&rxq, 0);
    notify(&rxq);
    REFUSED("buffer outside RAM");

    drv_init(0);                                           /* rx buffer of zero bytes */
    log_skip();
    desc(&rxq, 0, pa(BUF(0, 0)), 0, D_WRITE, 0);
    offer(&rxq, 0);
    notify(&rxq);
    REFUSED("zero-sized buffer");

    drv_init(0);                                           /* tx header cut short */
    log_skip();
    desc(&txq, 0, pa(BUF(1, 0)), 8, 0, 0);
    offer(&txq, 0);
    notify(&txq);
    REFUSED("virtio-net header incorrect");
    CHECK_EQ(get16(used_off(&txq) + 2), 0);

    drv_init(0);                                           /* tx header only in a writable buffer */
    log_skip();
    desc(&txq, 0, pa(BUF(1, 0)), 64, D_WRITE, 0);
    offer(&txq, 0);
    notify(&txq);
    REFUSED("virtio-net header incorrect");

    drv_init(0);                                           /* tx buffer past the end of RAM */
    log_skip();
    desc(&txq, 0, pa(RAM_SIZE - 8), 64, 0, 0);
    offer(&txq, 0);
    notify(&txq);
    REFUSED("buffer outside RAM");

    drv_init(0);                                           /* rx ring outside RAM */
    log_skip();
    wr32(S_NET, STATUS, 0);
    wr32(S_NET, STATUS, ST_ACK | ST_DRIVER);
    wr32(S_NET, QUEUE_SEL, 0);
    wr32(S_NET, QUEUE_NUM, QN);
    wr32(S_NET, DESC_LO, (uint32_t)pa(RAM_SIZE - 16));
    wr32(S_NET, QUEUE_READY, 1);
    REFUSED("ring outside RAM");

    /* Dropped, not refused: offload flags never negotiated ... */
    drv_init(0);
    log_skip();
    post_rx(1, BUF_LEN);
    memset(host(BUF(1, 0)), 0, HDR);
    host(BUF(1, 0))[0] = 1;                                /* NEEDS_CSUM */
    memcpy(host(BUF(1, 0)) + HDR, f, n);
    desc(&txq, 0, pa(BUF(1, 0)), (uint32_t)(HDR + n), 0, 0);
    offer(&txq, 0);
    notify(&txq);
    CHECK(logged("offloads that were not negotiated"));
    CHECK_EQ(get16(used_off(&txq) + 2), 1);
    CHECK_EQ(rd32(S_NET, STATUS) & ST_NEEDS_RESET, 0);
    uint32_t len;
    CHECK(recv_frame(200, &len) == NULL);                  /* the frame never left */

    /* ... and a frame larger than the guest's buffer (the buffer stays). */
    drv_init(0);
    txq.used_seen = 0;
    CHECK(send_frame(f, n));                               /* reply queued: no rx buffer yet */
    usleep(100000);
    log_skip();
    post_rx(1, HDR + 20);
    CHECK(logged("does not fit"));
    CHECK_EQ(get16(used_off(&rxq) + 2), 0);
    CHECK_EQ(rd32(S_NET, STATUS) & ST_NEEDS_RESET, 0);

    /* Reset: it works again. */
    test_arp(0);
}

int main(void)
{
    log_mask = LOG_GUEST_ERRORS;
    log_file = open_memstream(&log_buf, &log_len);
    ram_setup();
    machine.nharts = 1;                    /* no hart: the PLIC records the lines */
    plic_init();

    char err[256], opts[128];
    int port = free_port();
    snprintf(opts, sizeof opts, "user,id=n0,hostfwd=tcp:127.0.0.1:%d-:8080,hostfwd=udp::0-:53",
             port);
    int n0 = net_user_create(opts, err, sizeof err);
    if (n0 != 0) {
        printf("FAIL -netdev %s: %s\n", opts, err);
        return 1;
    }
    int n1 = net_user_create("user,id=n1,net=192.168.76.0/24,ipv6=off", err, sizeof err);
    CHECK_EQ(n1, 1);
    test_options();
    CHECK_EQ(virtio_net_add(S_NET, n0, NULL, err, sizeof err), 0);
    CHECK_EQ(virtio_net_add(S_NET2, n1, NULL, err, sizeof err), 0);
    CHECK(virtio_net_add(5, n0, NULL, err, sizeof err) < 0 && strstr(err, "already in use"));
    CHECK(virtio_net_add(5, 7, NULL, err, sizeof err) < 0 && strstr(err, "no such netdev"));
    virtio_mmio_init_empty_slots();

    test_device();
    test_arp(0);
    test_arp(F(VIRTIO_F_EVENT_IDX));
    test_dhcp();
    test_rx_waits();
    test_malformed();
    test_hostfwd(port);                    /* last: slirp retransmits the unanswered SYN */
    printf("test_system_net: %s\n", failures ? "FAILED" : "ok");
    fflush(stdout);
    _exit(failures != 0);                  /* the slirp threads run on */
}
