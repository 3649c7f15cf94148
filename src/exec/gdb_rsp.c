/*
 * The GDB remote serial protocol core (see gdb_rsp.h).
 *
 * Packets answered: qSupported, qXfer:features:read (the target's XML),
 * g/G, p/P, m/M/X, Z0-Z4/z0-z4, c, s, C, S, vCont (with per-thread
 * actions), vCont?, ?, H, T, qfThreadInfo/qsThreadInfo, qThreadExtraInfo,
 * qC, qAttached, qOffsets, qSymbol, k, vKill, D. Anything else gets the
 * empty reply (unsupported), as the protocol asks.
 */
#define _GNU_SOURCE
#include "exec/gdb_rsp.h"
#include "exec/exec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* -- Transport ------------------------------------------------------------- */

static int bind_listen(int family, const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, sa, len) < 0 || listen(fd, 1) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int gdb_listen(const char *host, int port, char *err, size_t errlen)
{
    if (!host || !*host) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_ANY) };
        int fd = bind_listen(AF_INET, (struct sockaddr *)&sa, sizeof sa);
        if (fd < 0)
            snprintf(err, errlen, "cannot listen on port %d: %s", port, strerror(errno));
        return fd;
    }
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *res;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next)
        if ((fd = bind_listen(a->ai_family, a->ai_addr, a->ai_addrlen)) < 0)
            e = errno;
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s:%d: %s", host, port, strerror(e));
    return fd;
}

int gdb_accept(int listen_fd)
{
    int fd, one = 1;
    do
        fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int get_byte(int fd)
{
    unsigned char c;
    ssize_t n;
    do
        n = read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? c : -1;
}

static void put_raw(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

void gdb_put_packet(int fd, const char *data)
{
    size_t len = strlen(data);
    char *buf = malloc(len + 5);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)data[i];
    buf[0] = '$';
    memcpy(buf + 1, data, len);
    snprintf(buf + 1 + len, 4, "#%02x", sum & 0xff);
    for (int tries = 0; tries < 3; tries++) {
        put_raw(fd, buf, len + 4);
        if (get_byte(fd) != '-')
            break;                          /* '+' (or EOF) */
    }
    free(buf);
}

int gdb_get_packet(int fd, char *buf, size_t cap)
{
    for (;;) {
        int c;
        do
            c = get_byte(fd);
        while (c >= 0 && c != '$' && c != 3);
        if (c < 0)
            return -1;
        if (c == 3) {
            strcpy(buf, "\x03");
            return 1;
        }
        size_t n = 0;
        unsigned sum = 0;
        while ((c = get_byte(fd)) >= 0 && c != '#') {
            sum += (unsigned)c;
            if (c == '}') {                 /* escape: the next byte ^ 0x20 */
                c = get_byte(fd);
                sum += (unsigned)c;
                c ^= 0x20;
            }
            if (n + 1 < cap)
                buf[n++] = (char)c;
        }
        if (c < 0)
            return -1;
        char hex[3] = { (char)get_byte(fd), (char)get_byte(fd), 0 };
        buf[n] = '\0';
        if (strtoul(hex, NULL, 16) == (sum & 0xff)) {
            put_raw(fd, "+", 1);
            return (int)n;
        }
        put_raw(fd, "-", 1);
    }
}

void gdb_hex_encode(char *out, const void *src, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = src;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

size_t gdb_hex_decode(void *dst, const char *s, size_t max)
{
    unsigned char *p = dst;
    size_t n = 0;
    while (n < max && hexval(s[0]) >= 0 && hexval(s[1]) >= 0) {
        p[n++] = (unsigned char)(hexval(s[0]) << 4 | hexval(s[1]));
        s += 2;
    }
    return n;
}

/* -- Breakpoints and watchpoints ------------------------------------------- */

int gdb_break_at(const GdbPoints *p, uint64_t pc)
{
    for (int i = 0; i < p->nbp; i++)
        if (p->bp[i].addr == pc)
            return p->bp[i].type;
    return -1;
}

bool gdb_break_in(const GdbPoints *p, uint64_t lo, uint64_t hi)
{
    for (int i = 0; i < p->nbp; i++)
        if (p->bp[i].addr - lo < hi - lo)
            return true;
    return false;
}

const GdbWatch *gdb_watch_hit(const GdbPoints *p, uint64_t addr, uint64_t size, bool reads,
                              bool writes, uint64_t *hit)
{
    for (int i = 0; i < p->nwp; i++) {
        const GdbWatch *w = &p->wp[i];
        bool kind = w->type == GDB_WP_ACCESS || (w->type == GDB_WP_WRITE && writes) ||
                    (w->type == GDB_WP_READ && reads);
        if (kind && addr < w->addr + w->len && w->addr < addr + size) {
            *hit = addr > w->addr ? addr : w->addr;
            return w;
        }
    }
    return NULL;
}

void gdb_break_reason(int type, char *out, size_t cap)
{
    snprintf(out, cap, "%s", type == GDB_BP_HW ? "hwbreak:;" : "swbreak:;");
}

void gdb_watch_reason(const GdbWatch *w, uint64_t hit, char *out, size_t cap)
{
    snprintf(out, cap, "%s:%llx;",
             w->type == GDB_WP_WRITE ? "watch" : w->type == GDB_WP_READ ? "rwatch" : "awatch",
             (unsigned long long)hit);
}

/* Z/z TYPE,ADDR,KIND: insert or remove; the empty reply for other types. */
static void set_point(GdbPoints *p, const char *args, bool insert, char *out)
{
    int type = args[0] - '0';
    uint64_t addr = strtoull(args + 2, NULL, 16);
    const char *comma = strchr(args + 2, ',');
    uint64_t len = comma ? strtoull(comma + 1, NULL, 16) : 1;
    if (args[1] != ',' || type < GDB_BP_SW || type > GDB_WP_ACCESS) {
        out[0] = '\0';
        return;
    }
    if (type <= GDB_BP_HW) {
        for (int i = 0; i < p->nbp; i++)
            if (p->bp[i].addr == addr && p->bp[i].type == type) {
                if (!insert)
                    p->bp[i] = p->bp[--p->nbp];
                strcpy(out, "OK");
                return;
            }
        if (insert && p->nbp < GDB_MAX_POINTS) {
            p->bp[p->nbp++] = (GdbBreak){ addr, type };
            strcpy(out, "OK");
        } else {
            strcpy(out, insert ? "E22" : "OK");
        }
        return;
    }
    len = len ? len : 1;
    for (int i = 0; i < p->nwp; i++)
        if (p->wp[i].addr == addr && p->wp[i].len == len && p->wp[i].type == type) {
            if (!insert)
                p->wp[i] = p->wp[--p->nwp];
            strcpy(out, "OK");
            return;
        }
    if (insert && p->nwp < GDB_MAX_POINTS) {
        p->wp[p->nwp++] = (GdbWatch){ addr, len, type };
        strcpy(out, "OK");
    } else {
        strcpy(out, insert ? "E22" : "OK");
    }
}

/* -- Stop replies and threads ------------------------------------------------ */

/* A thread id: hex, -1 (all), 0 (any), or pPID.TID (multiprocess form). */
static int64_t parse_thread(const char *s, char **end)
{
    if (*s == 'p') {
        const char *dot = strchr(s, '.');
        s = dot ? dot + 1 : s + 1;
    }
    if (s[0] == '-' && s[1] == '1') {
        if (end)
            *end = (char *)s + 2;
        return -1;
    }
    return (int64_t)strtoull(s, end, 16);
}

static struct CPUState *cpu_of(const GdbSession *s, int64_t tid)
{
    return s->target->thread_cpu(s->opaque, tid);
}

static void stop_reply(const GdbSession *s, const GdbStop *stop, char *out)
{
    int n = sprintf(out, "T%02xthread:%llx;", stop->signal & 0xff,
                    (unsigned long long)stop->thread);
    struct CPUState *cpu = cpu_of(s, stop->thread);
    for (const int *r = s->target->expedite; cpu && r && *r >= 0; r++) {
        uint8_t buf[16];
        int size = s->target->reg_read(cpu, *r, buf);
        if (size <= 0)
            continue;
        n += sprintf(out + n, "%02x:", *r);
        gdb_hex_encode(out + n, buf, (size_t)size);
        n += 2 * size;
        out[n++] = ';';
    }
    strcpy(out + n, stop->detail);
}

/* H[gc]TID: the thread later g/p/m (g) or c/s (c) packets mean. */
static void set_thread(GdbSession *s, const char *a, char *out)
{
    int64_t tid = parse_thread(a + 1, NULL);
    if (tid <= 0)
        tid = s->last.thread;               /* any / all: the stopped one */
    else if (!cpu_of(s, tid)) {
        strcpy(out, "E22");
        return;
    }
    if (a[0] == 'g')
        s->g_thread = tid;
    else
        s->c_thread = tid;
    strcpy(out, "OK");
}

static void thread_list(const GdbSession *s, char *out, size_t cap)
{
    size_t n = 0;
    int count = s->target->thread_count(s->opaque);
    out[n++] = 'm';
    for (int i = 0; i < count && n + 20 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%llx", i ? "," : "",
                              (unsigned long long)s->target->thread_id(s->opaque, i));
    out[n] = '\0';
}

/* qThreadExtraInfo,TID: the mode's description, hex-encoded. */
static void thread_extra(const GdbSession *s, const char *a, char *out)
{
    char name[128] = "";
    int64_t tid = parse_thread(a, NULL);
    if (s->target->thread_name && cpu_of(s, tid))
        s->target->thread_name(s->opaque, tid, name, sizeof name);
    gdb_hex_encode(out, name, strlen(name));
}

/* -- Registers and memory ------------------------------------------------------- */

static void read_all_regs(const GdbSession *s, char *out)
{
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    size_t n = 0;
    for (int i = 0; cpu && i < s->target->g_regs; i++) {
        uint8_t buf[16];
        int size = s->target->reg_read(cpu, i, buf);
        gdb_hex_encode(out + n, buf, size > 0 ? (size_t)size : 0);
        n += 2 * (size_t)(size > 0 ? size : 0);
    }
    out[n] = '\0';
    if (!cpu)
        strcpy(out, "E01");
}

static void write_all_regs(const GdbSession *s, const char *a, char *out)
{
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    size_t have = strlen(a) / 2;
    for (int i = 0; cpu && i < s->target->g_regs; i++) {
        uint8_t buf[16];
        int size = s->target->reg_read(cpu, i, buf);     /* for its size */
        if (size <= 0 || have < (size_t)size)
            break;
        gdb_hex_decode(buf, a, (size_t)size);
        s->target->reg_write(cpu, i, buf, (size_t)size);
        a += 2 * size;
        have -= (size_t)size;
    }
    strcpy(out, cpu ? "OK" : "E01");
}

static void read_reg(const GdbSession *s, const char *a, char *out)
{
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    uint8_t buf[16];
    int size = cpu ? s->target->reg_read(cpu, (int)strtol(a, NULL, 16), buf) : 0;
    if (size <= 0)
        strcpy(out, "E45");
    else
        gdb_hex_encode(out, buf, (size_t)size);
}

static void write_reg(const GdbSession *s, const char *a, char *out)
{
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    char *eq;
    int regno = (int)strtol(a, &eq, 16);
    uint8_t buf[16] = { 0 };
    size_t len = *eq == '=' ? gdb_hex_decode(buf, eq + 1, sizeof buf) : 0;
    if (!cpu || !len || !s->target->reg_write(cpu, regno, buf, len))
        strcpy(out, "E45");
    else
        strcpy(out, "OK");
}

static void read_mem(const GdbSession *s, const char *a, char *out, size_t cap)
{
    char *comma;
    uint64_t addr = strtoull(a, &comma, 16);
    size_t len = *comma == ',' ? strtoull(comma + 1, NULL, 16) : 0;
    if (len > (cap - 1) / 2)
        len = (cap - 1) / 2;
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    unsigned char *buf = malloc(len + 1);
    size_t got = cpu && len ? s->target->mem_read(s->opaque, cpu, addr, buf, len) : 0;
    if (got == 0 && len)
        strcpy(out, "E14");
    else
        gdb_hex_encode(out, buf, got);
    free(buf);
}

/* M addr,len:hex  or  X addr,len:binary (len raw bytes after ':'); pkt is
 * the whole packet, pktlen its length (binary data may hold NULs). */
static void write_mem(const GdbSession *s, const char *pkt, int pktlen, char *out)
{
    char *comma, *colon;
    uint64_t addr = strtoull(pkt + 1, &comma, 16);
    size_t len = *comma == ',' ? strtoull(comma + 1, &colon, 16) : 0;
    if (*comma != ',' || *colon != ':') {
        strcpy(out, "E01");
        return;
    }
    const char *data = colon + 1;
    size_t avail = (size_t)pktlen - (size_t)(data - pkt);
    unsigned char *buf = malloc(len + 1);
    size_t n;
    if (pkt[0] == 'X') {
        n = len < avail ? len : avail;
        memcpy(buf, data, n);
    } else {
        n = gdb_hex_decode(buf, data, len);
    }
    struct CPUState *cpu = cpu_of(s, s->g_thread);
    bool ok = n == len && cpu && (!len || s->target->mem_write(s->opaque, cpu, addr, buf, len));
    strcpy(out, ok ? "OK" : "E14");
    free(buf);
}

/* qXfer:features:read:target.xml:OFF,LEN */
static void reply_xfer(const char *xml, const char *args, char *out, size_t cap)
{
    const char *colon = strchr(args, ':');
    if (strncmp(args, "target.xml:", 11) || !colon) {
        strcpy(out, "E00");
        return;
    }
    unsigned long off = strtoul(colon + 1, NULL, 16);
    const char *comma = strchr(colon, ',');
    unsigned long len = comma ? strtoul(comma + 1, NULL, 16) : 0;
    size_t total = strlen(xml);
    if (off >= total) {
        strcpy(out, "l");
        return;
    }
    size_t n = total - off < len ? total - off : len;
    if (n > cap - 2)
        n = cap - 2;
    out[0] = off + n < total ? 'm' : 'l';
    memcpy(out + 1, xml + off, n);          /* the XML has no $ # } * */
    out[1 + n] = '\0';
}

static void query(const GdbSession *s, const char *a, char *out, size_t cap)
{
    if (!strncmp(a, "Supported", 9))
        strcpy(out, "PacketSize=10000;qXfer:features:read+;swbreak+;hwbreak+");
    else if (!strncmp(a, "Xfer:features:read:", 19))
        reply_xfer(s->target->xml, a + 19, out, cap);
    else if (!strcmp(a, "fThreadInfo"))
        thread_list(s, out, cap);
    else if (!strcmp(a, "sThreadInfo"))
        strcpy(out, "l");
    else if (!strncmp(a, "ThreadExtraInfo,", 16))
        thread_extra(s, a + 16, out);
    else if (!strcmp(a, "C"))
        sprintf(out, "QC%llx", (unsigned long long)s->g_thread);
    else if (!strncmp(a, "Attached", 8))
        strcpy(out, s->target->attached ? "1" : "0");
    else if (!strncmp(a, "Offsets", 7))
        strcpy(out, "Text=0;Data=0;Bss=0");
    else if (!strncmp(a, "Symbol", 6))
        strcpy(out, "OK");
}

/* -- Resuming ------------------------------------------------------------------ */

int gdb_resume_action(const GdbResume *r, int64_t tid, int *signal)
{
    for (int i = 0; i < r->nacts; i++)
        if (r->acts[i].thread == -1 || r->acts[i].thread == tid) {
            *signal = r->acts[i].signal;
            return r->acts[i].act;
        }
    *signal = 0;
    return GDB_ACT_NONE;
}

static void add_action(GdbResume *r, int act, int signal, int64_t thread)
{
    if (r->nacts < GDB_MAX_ACTIONS)
        r->acts[r->nacts++] = (typeof(r->acts[0])){ act, signal, thread };
}

/* vCont;ACTION[:TID];...  (c, C SIG, s, S SIG; others ignored). False if
 * the packet has no action this stub knows. */
static bool parse_vcont(const char *p, GdbResume *r)
{
    while (*p == ';') {
        char kind = *++p;
        char *end = (char *)++p;
        int sig = 0;
        if (kind == 'C' || kind == 'S')
            sig = (int)strtol(p, &end, 16);
        int64_t tid = -1;
        if (*end == ':')
            tid = parse_thread(end + 1, &end);
        if (kind == 'c' || kind == 'C' || kind == 's' || kind == 'S')
            add_action(r, kind == 's' || kind == 'S' ? GDB_ACT_STEP : GDB_ACT_CONT, sig,
                       tid == 0 ? -1 : tid);
        p = strchr(end, ';') ? strchr(end, ';') : end + strlen(end);
    }
    return r->nacts > 0;
}

/* c/s [ADDR] and C/S SIG[;ADDR]: the thread of the last stop (or Hc's)
 * continues or steps; a continue resumes every thread. */
static void simple_resume(GdbSession *s, const char *pkt, GdbResume *r)
{
    bool step = pkt[0] == 's' || pkt[0] == 'S';
    const char *a = pkt + 1;
    int sig = 0;
    if (pkt[0] == 'C' || pkt[0] == 'S') {
        char *end;
        sig = (int)strtol(a, &end, 16);
        a = *end == ';' ? end + 1 : end;
    }
    int64_t tid = s->c_thread > 0 ? s->c_thread : s->last.thread;
    if (*a) {
        uint64_t pc = strtoull(a, NULL, 16);
        struct CPUState *cpu = cpu_of(s, tid);
        if (cpu)
            s->target->reg_write(cpu, s->target->pc_regno, (const uint8_t *)&pc, sizeof pc);
    }
    add_action(r, step ? GDB_ACT_STEP : GDB_ACT_CONT, sig, step ? tid : -1);
}

/* -- The packet loop ----------------------------------------------------------- */

void gdb_session_init(GdbSession *s, int fd, const GdbTarget *target, void *opaque)
{
    *s = (GdbSession){ .fd = fd, .target = target, .opaque = opaque };
}

void gdb_send_exit(GdbSession *s, int status, int signal)
{
    char out[16];
    snprintf(out, sizeof out, signal ? "X%02x" : "W%02x", (signal ? signal : status) & 0xff);
    gdb_put_packet(s->fd, out);
}

/* v packets: vCont?, vCont;..., vKill. True if gdb resumed (*r). */
static bool v_packet(GdbSession *s, const char *pkt, char *out, GdbResume *r)
{
    if (!strncmp(pkt, "vCont?", 6)) {
        strcpy(out, "vCont;c;C;s;S");
    } else if (!strncmp(pkt, "vCont;", 6)) {
        if (parse_vcont(pkt + 5, r))
            return true;
        strcpy(out, "E01");
    } else if (!strncmp(pkt, "vKill", 5)) {
        gdb_put_packet(s->fd, "OK");
        s->target->kill(s->opaque);
    }
    return false;                           /* vMustReplyEmpty and others: "" */
}

GdbResume gdb_serve(GdbSession *s, const GdbStop *stop, bool send_stop)
{
    /* Static: one session at a time (see gdb_rsp.h); sized for PacketSize. */
    static char pkt[1 << 16] LARGE_BSS, out[1 << 17] LARGE_BSS;
    GdbResume r = { .kind = GDB_RESUME };
    s->last = *stop;
    s->g_thread = s->c_thread = stop->thread;
    if (send_stop) {
        stop_reply(s, stop, out);
        gdb_put_packet(s->fd, out);
    }
    for (;;) {
        int len = gdb_get_packet(s->fd, pkt, sizeof pkt);
        if (len < 0) {
            s->points.nbp = s->points.nwp = 0;
            r.kind = GDB_CLOSED;
            return r;
        }
        out[0] = '\0';
        const char *a = pkt + 1;
        switch (pkt[0]) {
        case '?': stop_reply(s, &s->last, out); break;
        case 'g': read_all_regs(s, out); break;
        case 'G': write_all_regs(s, a, out); break;
        case 'p': read_reg(s, a, out); break;
        case 'P': write_reg(s, a, out); break;
        case 'm': read_mem(s, a, out, sizeof out); break;
        case 'M':
        case 'X': write_mem(s, pkt, len, out); break;
        case 'Z': set_point(&s->points, a, true, out); break;
        case 'z': set_point(&s->points, a, false, out); break;
        case 'H': set_thread(s, a, out); break;
        case 'T': strcpy(out, cpu_of(s, parse_thread(a, NULL)) ? "OK" : "E01"); break;
        case 'q': query(s, a, out, sizeof out); break;
        case 'c': case 's': case 'C': case 'S':
            simple_resume(s, pkt, &r);
            return r;
        case 'v':
            if (v_packet(s, pkt, out, &r))
                return r;
            break;
        case 'k':
            s->target->kill(s->opaque);
            break;
        case 3:                             /* Ctrl-C while stopped: nothing to do */
            continue;
        case 'D':
            gdb_put_packet(s->fd, "OK");
            s->points.nbp = s->points.nwp = 0;
            r.kind = GDB_DETACH;
            return r;
        }
        gdb_put_packet(s->fd, out);
    }
}
