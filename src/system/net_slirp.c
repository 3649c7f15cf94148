/*
 * `-netdev user` over libslirp (see net_slirp.h): the option parser, the
 * libslirp instance with QEMU's defaults (net/slirp.c), its callbacks, and
 * the slirp thread.
 *
 * Locks: nu->lock around every slirp call and the timer list (slirp calls
 * back into send_packet and the timer hooks with it held); nu->qlock
 * around the queue of frames for the guest (taken inside nu->lock by
 * send_packet, and alone by net_user_take). The device's rx_ready runs
 * with neither held, so the order device lock -> nu->lock -> nu->qlock
 * (a hart's tx notify calling net_user_send) never meets its reverse.
 *
 * The slirp thread: fill the poll set (an eventfd first: net_user_send,
 * slirp's notify and a timer change write it, so new sockets and earlier
 * deadlines are picked up), poll until slirp's timeout or the earliest
 * timer, let slirp read and write its sockets, fire the due timers
 * (slirp_handle_timer), then, with no lock, tell the device if frames were
 * queued. It runs with every signal blocked and for the rest of the run.
 */
#define _GNU_SOURCE
#include "system/net_slirp.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <slirp/libslirp.h>

#include "exec/settings.h"

/* A timer slirp asked for: expire_ms on clock_ns()'s clock. */
typedef struct NetTimer {
    struct NetTimer *next;
    SlirpTimerId id;               /* version-4 timers: slirp_handle_timer(id, cb_opaque) */
    SlirpTimerCb cb;               /* older ones: cb(cb_opaque) */
    void *cb_opaque;
    int64_t expire_ms;
    bool armed;
} NetTimer;

typedef struct NetUser {
    char id[64];
    Slirp *slirp;
    pthread_mutex_t lock;          /* slirp calls, timers, the poll set */
    NetTimer *timers;
    struct pollfd *pfd;            /* the slirp thread's poll set; [0] is wake_fd */
    unsigned npfd, pfd_cap;
    int wake_fd;                   /* eventfd */
    pthread_t thread;
    bool attached;
    void (*rx_ready)(void *opaque);
    void *rx_opaque;

    pthread_mutex_t qlock;         /* the fields below */
    NetFrame *rx_head, **rx_tail;  /* frames for the guest, oldest first */
    unsigned rx_frames;
    size_t rx_bytes;
    bool rx_new;                   /* queued since rx_ready was last called */
    unsigned long rx_dropped;
} NetUser;

static NetUser *netdevs[NET_MAX_NETDEVS];
static unsigned nnetdevs;

static NetUser *get(int nd)
{
    return nd >= 0 && (unsigned)nd < nnetdevs ? netdevs[nd] : NULL;
}

static int64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wake(NetUser *nu)
{
    uint64_t one = 1;
    if (write(nu->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        xlat_log(LOG_GUEST_ERRORS, "netdev %s: cannot wake the slirp thread: %s\n", nu->id,
                 strerror(errno));
}

static bool on_slirp_thread(const NetUser *nu)
{
    return nu->attached && pthread_equal(pthread_self(), nu->thread);
}

/* -- Callbacks from slirp (nu->lock held) ------------------------------------ */

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
    NetUser *nu = opaque;
    NetFrame *f = NULL;
    pthread_mutex_lock(&nu->qlock);
    if (nu->attached && nu->rx_frames < NET_RXQ_MAX_FRAMES
        && nu->rx_bytes + len <= NET_RXQ_MAX_BYTES && (f = malloc(sizeof *f + len))) {
        f->next = NULL;
        f->len = len;
        memcpy(f->data, buf, len);
        *nu->rx_tail = f;
        nu->rx_tail = &f->next;
        nu->rx_frames++;
        nu->rx_bytes += len;
        nu->rx_new = true;
    } else {
        nu->rx_dropped++;
    }
    pthread_mutex_unlock(&nu->qlock);
    if (f && !on_slirp_thread(nu))
        wake(nu);                  /* the slirp thread tells the device */
    return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
    NetUser *nu = opaque;
    xlat_log(LOG_GUEST_ERRORS, "netdev %s: slirp: %s\n", nu->id, msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
    (void)opaque;
    return clock_ns();
}

static NetTimer *timer_add(NetUser *nu)
{
    NetTimer *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "xlat-system: netdev %s: out of memory\n", nu->id);
        exit(1);
    }
    t->next = nu->timers;
    nu->timers = t;
    return t;
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
    NetTimer *t = timer_add(opaque);
    t->cb = cb;
    t->cb_opaque = cb_opaque;
    return t;
}

static void *cb_timer_new_opaque(SlirpTimerId id, void *cb_opaque, void *opaque)
{
    NetTimer *t = timer_add(opaque);
    t->id = id;
    t->cb_opaque = cb_opaque;
    return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
    NetUser *nu = opaque;
    for (NetTimer **p = &nu->timers; *p; p = &(*p)->next) {
        if (*p == timer) {
            *p = (*p)->next;
            free(timer);
            return;
        }
    }
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
    NetUser *nu = opaque;
    NetTimer *t = timer;
    t->expire_ms = expire_ms;
    t->armed = true;
    if (!on_slirp_thread(nu))
        wake(nu);                  /* it may be earlier than the poll's timeout */
}

static void cb_register_poll_fd(int fd, void *opaque) { (void)fd; (void)opaque; }
static void cb_unregister_poll_fd(int fd, void *opaque) { (void)fd; (void)opaque; }

static void cb_notify(void *opaque)
{
    NetUser *nu = opaque;
    if (!on_slirp_thread(nu))
        wake(nu);
}

static void cb_init_completed(Slirp *slirp, void *opaque) { (void)slirp; (void)opaque; }

static const SlirpCb slirp_callbacks = {
    .send_packet = cb_send_packet,
    .guest_error = cb_guest_error,
    .clock_get_ns = cb_clock_get_ns,
    .timer_new = cb_timer_new,
    .timer_free = cb_timer_free,
    .timer_mod = cb_timer_mod,
    .register_poll_fd = cb_register_poll_fd,
    .unregister_poll_fd = cb_unregister_poll_fd,
    .notify = cb_notify,
    .init_completed = cb_init_completed,
    .timer_new_opaque = cb_timer_new_opaque,
};

/* -- The slirp thread ------------------------------------------------------------ */

static int add_poll(int fd, int events, void *opaque)
{
    NetUser *nu = opaque;
    if (nu->npfd == nu->pfd_cap) {
        unsigned cap = nu->pfd_cap ? 2 * nu->pfd_cap : 64;
        struct pollfd *p = realloc(nu->pfd, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "xlat-system: netdev %s: out of memory\n", nu->id);
            exit(1);
        }
        nu->pfd = p;
        nu->pfd_cap = cap;
    }
    short ev = (short)((events & SLIRP_POLL_IN ? POLLIN : 0) | (events & SLIRP_POLL_OUT ? POLLOUT : 0)
                       | (events & SLIRP_POLL_PRI ? POLLPRI : 0));
    nu->pfd[nu->npfd] = (struct pollfd){ .fd = fd, .events = ev };
    return (int)nu->npfd++;
}

static int get_revents(int idx, void *opaque)
{
    NetUser *nu = opaque;
    if (idx < 1 || (unsigned)idx >= nu->npfd)
        return 0;
    short r = nu->pfd[idx].revents;
    return (r & POLLIN ? SLIRP_POLL_IN : 0) | (r & POLLOUT ? SLIRP_POLL_OUT : 0)
         | (r & POLLPRI ? SLIRP_POLL_PRI : 0) | (r & POLLERR ? SLIRP_POLL_ERR : 0)
         | (r & POLLHUP ? SLIRP_POLL_HUP : 0);
}

/* Milliseconds until the earliest armed timer, at most limit. */
static uint32_t timers_timeout(const NetUser *nu, uint32_t limit)
{
    int64_t now = clock_ns() / 1000000;
    for (const NetTimer *t = nu->timers; t; t = t->next) {
        if (!t->armed)
            continue;
        int64_t left = t->expire_ms - now;
        if (left <= 0)
            return 0;
        if (left < limit)
            limit = (uint32_t)left;
    }
    return limit;
}

/* Fire the due timers; a callback may arm, add or free timers, so the
 * list is searched again after each. */
static void timers_run(NetUser *nu)
{
    for (;;) {
        int64_t now = clock_ns() / 1000000;
        NetTimer *t = nu->timers;
        while (t && !(t->armed && t->expire_ms <= now))
            t = t->next;
        if (!t)
            return;
        t->armed = false;
        if (t->cb)
            t->cb(t->cb_opaque);
        else
            slirp_handle_timer(nu->slirp, t->id, t->cb_opaque);
    }
}

static void *slirp_thread(void *arg)
{
    NetUser *nu = arg;
    for (;;) {
        pthread_mutex_lock(&nu->lock);
        nu->npfd = 0;
        add_poll(nu->wake_fd, SLIRP_POLL_IN, nu);
        uint32_t timeout = timers_timeout(nu, 1000);
        slirp_pollfds_fill(nu->slirp, &timeout, add_poll, nu);
        unsigned n = nu->npfd;
        pthread_mutex_unlock(&nu->lock);

        /* Only this thread changes the poll set, so it is stable here. */
        int r = poll(nu->pfd, n, (int)timeout);
        bool poll_error = r < 0 && errno != EINTR;
        if (r > 0 && (nu->pfd[0].revents & POLLIN)) {
            uint64_t v;
            if (read(nu->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
                xlat_log(LOG_GUEST_ERRORS, "netdev %s: eventfd: %s\n", nu->id, strerror(errno));
        }

        pthread_mutex_lock(&nu->lock);
        slirp_pollfds_poll(nu->slirp, poll_error, get_revents, nu);
        timers_run(nu);
        pthread_mutex_unlock(&nu->lock);

        pthread_mutex_lock(&nu->qlock);
        bool tell = nu->rx_new;
        nu->rx_new = false;
        pthread_mutex_unlock(&nu->qlock);
        if (tell)
            nu->rx_ready(nu->rx_opaque);
    }
    return NULL;
}

/* -- The device's side ------------------------------------------------------------- */

int net_user_find(const char *id)
{
    for (unsigned i = 0; i < nnetdevs; i++)
        if (!strcmp(netdevs[i]->id, id))
            return (int)i;
    return -1;
}

const char *net_user_id(int nd)
{
    NetUser *nu = get(nd);
    return nu ? nu->id : NULL;
}

bool net_user_attached(int nd)
{
    NetUser *nu = get(nd);
    return nu && nu->attached;
}

int net_user_attach(int nd, void (*rx_ready)(void *opaque), void *opaque, char *err,
                    size_t errlen)
{
    NetUser *nu = get(nd);
    if (!nu) {
        snprintf(err, errlen, "no such netdev (handle %d)", nd);
        return -1;
    }
    if (nu->attached) {
        snprintf(err, errlen, "netdev %s is already in use by another device", nu->id);
        return -1;
    }
    nu->rx_ready = rx_ready;
    nu->rx_opaque = opaque;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);       /* the thread inherits the mask */
    pthread_mutex_lock(&nu->lock);                  /* attached and thread together */
    int e = pthread_create(&nu->thread, NULL, slirp_thread, nu);
    if (!e)
        nu->attached = true;
    pthread_mutex_unlock(&nu->lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(err, errlen, "netdev %s: cannot start its thread: %s", nu->id, strerror(e));
        return -1;
    }
    return 0;
}

void net_user_send(int nd, const uint8_t *frame, size_t len)
{
    NetUser *nu = get(nd);
    if (!nu || len > (size_t)INT32_MAX)
        return;
    pthread_mutex_lock(&nu->lock);
    slirp_input(nu->slirp, frame, (int)len);
    pthread_mutex_unlock(&nu->lock);
    wake(nu);                      /* new sockets, or data for old ones, to poll */
}

NetFrame *net_user_take(int nd)
{
    NetUser *nu = get(nd);
    if (!nu)
        return NULL;
    pthread_mutex_lock(&nu->qlock);
    NetFrame *f = nu->rx_head;
    if (f) {
        nu->rx_head = f->next;
        if (!nu->rx_head)
            nu->rx_tail = &nu->rx_head;
        nu->rx_frames--;
        nu->rx_bytes -= f->len;
        f->next = NULL;
    }
    pthread_mutex_unlock(&nu->qlock);
    return f;
}

/* -- Options ------------------------------------------------------------------------- */

typedef struct NetOpts {
    const char *id, *net, *host, *dns, *dhcpstart, *hostname;
    bool restricted, ipv4, ipv6;
    char *fwd[16];                 /* hostfwd= rules, in order */
    unsigned nfwd;
} NetOpts;

static int on_off(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
    if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "y") || !strcmp(v, "true"))
        *out = true;
    else if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "n") || !strcmp(v, "false"))
        *out = false;
    else {
        snprintf(err, errlen, "-netdev user: %s=%s: expected on or off", key, v);
        return -1;
    }
    return 0;
}

/* Split opts (modified in place) into o. */
static int parse_opts(char *opts, NetOpts *o, char *err, size_t errlen)
{
    char *save = NULL, *kv = strtok_r(opts, ",", &save);
    if (!kv || strcmp(kv, "user")) {
        snprintf(err, errlen, "-netdev %s: only the user backend is supported (-netdev user,"
                 "id=ID,...)", kv ? kv : "");
        return -1;
    }
    while ((kv = strtok_r(NULL, ",", &save))) {
        char *v = strchr(kv, '=');
        if (!v) {
            snprintf(err, errlen, "-netdev user: '%s' is not KEY=VALUE", kv);
            return -1;
        }
        *v++ = '\0';
        if (!strcmp(kv, "id")) o->id = v;
        else if (!strcmp(kv, "net")) o->net = v;
        else if (!strcmp(kv, "host")) o->host = v;
        else if (!strcmp(kv, "dns")) o->dns = v;
        else if (!strcmp(kv, "dhcpstart")) o->dhcpstart = v;
        else if (!strcmp(kv, "hostname")) o->hostname = v;
        else if (!strcmp(kv, "restrict")) {
            if (on_off(kv, v, &o->restricted, err, errlen) < 0)
                return -1;
        } else if (!strcmp(kv, "ipv4")) {
            if (on_off(kv, v, &o->ipv4, err, errlen) < 0)
                return -1;
        } else if (!strcmp(kv, "ipv6")) {
            if (on_off(kv, v, &o->ipv6, err, errlen) < 0)
                return -1;
        } else if (!strcmp(kv, "hostfwd")) {
            if (o->nfwd == sizeof o->fwd / sizeof o->fwd[0]) {
                snprintf(err, errlen, "-netdev user: at most %zu hostfwd rules",
                         sizeof o->fwd / sizeof o->fwd[0]);
                return -1;
            }
            o->fwd[o->nfwd++] = v;
        } else {
            snprintf(err, errlen, "-netdev user: unsupported property '%s' (id, hostfwd, net, "
                     "host, dns, dhcpstart, restrict, ipv4, ipv6, hostname are)", kv);
            return -1;
        }
    }
    if (!o->id || !*o->id) {
        snprintf(err, errlen, "-netdev user: id= is required");
        return -1;
    }
    if (!o->ipv4 && !o->ipv6) {
        snprintf(err, errlen, "-netdev user: IP disabled (ipv4=off and ipv6=off)");
        return -1;
    }
    return 0;
}

/* net=ADDR[/BITS|/MASK]; without a mask, QEMU's classful guess. */
static int parse_net(const char *s, struct in_addr *net, struct in_addr *mask)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *slash = strchr(buf, '/');
    if (slash)
        *slash++ = '\0';
    if (!inet_aton(buf, net))
        return -1;
    uint32_t a = ntohl(net->s_addr), m;
    if (!slash) {
        m = !(a & 0x80000000u) ? 0xff000000u                         /* class A */
          : (a & 0xfff00000u) == 0xac100000u ? 0xfff00000u           /* 172.16/12 */
          : (a & 0xc0000000u) == 0x80000000u ? 0xffff0000u           /* class B */
          : (a & 0xffff0000u) == 0xc0a80000u ? 0xffff0000u           /* 192.168/16 */
          : 0xffffff00u;                                             /* class C */
    } else if (strchr(slash, '.')) {
        struct in_addr mm;
        if (!inet_aton(slash, &mm))
            return -1;
        m = ntohl(mm.s_addr);
        if (~m & (~m + 1))                                           /* not contiguous */
            return -1;
    } else {
        char *end;
        long bits = strtol(slash, &end, 10);
        if (*end || end == slash || bits < 0 || bits > 32)
            return -1;
        m = bits ? 0xffffffffu << (32 - bits) : 0;
    }
    mask->s_addr = htonl(m);
    net->s_addr = htonl(a & m);
    return 0;
}

/* ADDR inside net/mask (default: net | dflt). */
static int parse_member(const char *key, const char *s, struct in_addr net, struct in_addr mask,
                        uint32_t dflt, struct in_addr *out, char *err, size_t errlen)
{
    if (!s) {
        out->s_addr = net.s_addr | htonl(dflt);
        return 0;
    }
    if (!inet_aton(s, out)) {
        snprintf(err, errlen, "-netdev user: %s=%s: not an IPv4 address", key, s);
        return -1;
    }
    if ((out->s_addr & mask.s_addr) != net.s_addr) {
        snprintf(err, errlen, "-netdev user: %s=%s is not in the guest network", key, s);
        return -1;
    }
    return 0;
}

/* A port number in lo..65535. */
static int parse_port(const char *s, int lo)
{
    char *end;
    long p = strtol(s, &end, 10);
    return *s && !*end && p >= lo && p <= 65535 ? (int)p : -1;
}

/* [tcp|udp]:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT -> slirp_add_hostfwd. */
static int add_hostfwd(NetUser *nu, const char *rule, char *err, size_t errlen)
{
    char buf[128], *p = buf;
    const char *why = "syntax";
    if (strlen(rule) >= sizeof buf)
        goto bad;
    strcpy(buf, rule);
    char *proto = strsep(&p, ":"), *haddr = strsep(&p, ":"), *hport = strsep(&p, "-");
    char *gaddr = strsep(&p, ":"), *gport = p;
    if (!proto || !haddr || !hport || !gaddr || !gport)
        goto bad;
    int udp = !strcmp(proto, "udp");
    if (!udp && *proto && strcmp(proto, "tcp")) {
        why = "protocol must be tcp or udp";
        goto bad;
    }
    struct in_addr ha = { .s_addr = htonl(INADDR_ANY) }, ga = { .s_addr = 0 };
    if (*haddr && !inet_aton(haddr, &ha)) {
        why = "bad host address";
        goto bad;
    }
    if (*gaddr && !inet_aton(gaddr, &ga)) {
        why = "bad guest address";
        goto bad;
    }
    int hp = parse_port(hport, 0), gp = parse_port(gport, 1);
    if (hp < 0 || gp < 0) {
        why = "bad port";
        goto bad;
    }
    if (slirp_add_hostfwd(nu->slirp, udp, ha, hp, ga, gp) < 0) {
        snprintf(err, errlen, "-netdev user: could not set up host forwarding rule '%s': %s",
                 rule, strerror(errno));
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "-netdev user: invalid host forwarding rule '%s' (%s)", rule, why);
    return -1;
}

int net_user_create(const char *opts, char *err, size_t errlen)
{
    if (nnetdevs == NET_MAX_NETDEVS) {
        snprintf(err, errlen, "-netdev: at most %d netdevs", NET_MAX_NETDEVS);
        return -1;
    }
    char *copy = strdup(opts);
    NetOpts o = { .ipv4 = true, .ipv6 = true };
    NetUser *nu = NULL;
    if (!copy || parse_opts(copy, &o, err, errlen) < 0)
        goto fail;
    if (net_user_find(o.id) >= 0) {
        snprintf(err, errlen, "-netdev: duplicate id '%s'", o.id);
        goto fail;
    }
    SlirpConfig cfg = {
        .version = 4, .restricted = o.restricted, .in_enabled = o.ipv4, .in6_enabled = o.ipv6,
        .vprefix_len = 64, .vhostname = o.hostname,
    };
    inet_aton("10.0.2.0", &cfg.vnetwork);
    inet_aton("255.255.255.0", &cfg.vnetmask);
    if (o.net && parse_net(o.net, &cfg.vnetwork, &cfg.vnetmask) < 0) {
        snprintf(err, errlen, "-netdev user: net=%s: not ADDR[/MASK]", o.net);
        goto fail;
    }
    if (parse_member("host", o.host, cfg.vnetwork, cfg.vnetmask, 2, &cfg.vhost, err, errlen) < 0
        || parse_member("dns", o.dns, cfg.vnetwork, cfg.vnetmask, 3, &cfg.vnameserver, err,
                        errlen) < 0
        || parse_member("dhcpstart", o.dhcpstart, cfg.vnetwork, cfg.vnetmask, 15,
                        &cfg.vdhcp_start, err, errlen) < 0)
        goto fail;
    inet_pton(AF_INET6, "fec0::", &cfg.vprefix_addr6);
    inet_pton(AF_INET6, "fec0::2", &cfg.vhost6);
    inet_pton(AF_INET6, "fec0::3", &cfg.vnameserver6);

    if (!(nu = calloc(1, sizeof *nu))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    snprintf(nu->id, sizeof nu->id, "%s", o.id);
    nu->wake_fd = -1;
    pthread_mutex_init(&nu->lock, NULL);
    pthread_mutex_init(&nu->qlock, NULL);
    nu->rx_tail = &nu->rx_head;
    nu->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (nu->wake_fd < 0) {
        snprintf(err, errlen, "-netdev %s: eventfd: %s", o.id, strerror(errno));
        goto fail;
    }
    if (!(nu->slirp = slirp_new(&cfg, &slirp_callbacks, nu))) {
        snprintf(err, errlen, "-netdev %s: libslirp refused the configuration", o.id);
        goto fail;
    }
    for (unsigned i = 0; i < o.nfwd; i++)
        if (add_hostfwd(nu, o.fwd[i], err, errlen) < 0)
            goto fail;
    netdevs[nnetdevs] = nu;
    free(copy);
    return (int)nnetdevs++;
fail:
    if (nu) {
        if (nu->slirp)
            slirp_cleanup(nu->slirp);
        if (nu->wake_fd >= 0)
            close(nu->wake_fd);
        free(nu);
    }
    free(copy);
    return -1;
}
