/*
 * vfork on top of a host fork: the parent's wait and the child's copy-back
 * of its writes to guest memory (see vfork.h).
 *
 * Per guest page, two bitmaps (mapped without reserve, like the JIT's):
 * own = a page of a private writable mapping that existed at the clone and
 * is still writable; trk = own and not yet copied, so host read-only. A
 * page leaves trk once, when it is copied ("snapshot"), so the snapshots
 * fit in arrays sized at the start. Invariant: own and not trk means
 * writable on the host, unless the JIT write-protects it (code_watch_fault
 * and exec_unwatch_all then make it writable, the copy already taken).
 *
 * A spin lock orders the fault handler, mm.c's hooks and the releases of
 * the child's threads; none of them takes another lock while holding it,
 * and the handler never waits for one held by code it interrupted.
 */
#define _GNU_SOURCE
#include "user/vfork.h"
#include "user/code_watch.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/exec.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/own_fd.h"

#define PAGE         GUEST_PAGE_SIZE
#define GUEST_PAGES  (GUEST_SPACE_SIZE / GUEST_PAGE_SIZE)
#define MERGE_GAP    16                     /* equal bytes that still join two runs */
#define ARG_PAGES    ((1u << 20) / PAGE)    /* an EFAULT retry's reach past a pointer */
#define REC_HDR      12                     /* u64 address, u32 length */
#define IO_BUF       65536

typedef struct Range { uint64_t first, end; } Range;   /* guest page numbers */

typedef struct Snap {
    uint64_t page;      /* guest page number */
    bool live;          /* false once the page was unmapped, replaced or moved */
    bool readable;      /* the host page can be read (not PROT_NONE now) */
} Snap;

static struct {
    int active;         /* tracking (the fault handler reads it lock-free) */
    int fd;             /* the channel to the parent, or -1 */
    bool broken;        /* sending failed: the parent is gone */
    uint64_t *own, *trk;
    size_t bitmap_size;
    Range *ranges;      /* the mappings tracked at the start */
    size_t nranges;
    Snap *snaps;        /* snapshot i's bytes at data + i * PAGE */
    uint8_t *data;
    size_t nsnaps, cap;
    bool told_all;      /* -d unimp: vfork_unprotect_all reported */
} vf = { .fd = -1 };

static int vf_spin;
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

/* Output to the parent (spin held). */
static uint8_t out_buf[IO_BUF] LARGE_BSS;
static size_t out_len;
static uint8_t page_now[PAGE] LARGE_BSS;

/* -- Small helpers ------------------------------------------------------------ */

static void spin_lock(void)
{
    while (__atomic_exchange_n(&vf_spin, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&vf_spin, __ATOMIC_RELAXED))
            sched_yield();
}

static void spin_unlock(void) { __atomic_store_n(&vf_spin, 0, __ATOMIC_RELEASE); }

static bool bit_test(const uint64_t *b, uint64_t i)
{
    return (__atomic_load_n(&b[i / 64], __ATOMIC_RELAXED) >> (i % 64)) & 1;
}

static void bit_set(uint64_t *b, uint64_t i)
{
    __atomic_fetch_or(&b[i / 64], 1ULL << (i % 64), __ATOMIC_RELAXED);
}

static void bit_clear(uint64_t *b, uint64_t i)
{
    __atomic_fetch_and(&b[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELAXED);
}

static void *map_anon(size_t size)
{
    void *p = mmap(NULL, size ? size : PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t size)
{
    if (p)
        munmap(p, size ? size : PAGE);
}

static void say(const char *msg)       /* async-signal-safe */
{
    if (write(STDERR_FILENO, msg, strlen(msg)) < 0) {
        /* nothing more to do */
    }
}

static void page_span(uint64_t start, uint64_t len, uint64_t *p0, uint64_t *p1)
{
    *p0 = start / PAGE;
    *p1 = (start + len + PAGE - 1) / PAGE;
    if (*p1 > GUEST_PAGES)
        *p1 = GUEST_PAGES;
}

/* -- Snapshots (spin held) ------------------------------------------------------- */

/* Copy tracked page `page` before its first change. */
static void snapshot(uint64_t page)
{
    if (vf.nsnaps == vf.cap) {          /* each page is taken once: cannot happen */
        say("xlat: vfork: snapshot table full\n");
        abort();
    }
    size_t i = vf.nsnaps;
    memcpy(vf.data + i * PAGE, g2h(page * PAGE), PAGE);
    vf.snaps[i] = (Snap){ .page = page, .live = true, .readable = true };
    vf.nsnaps = i + 1;
    bit_clear(vf.trk, page);
}

static bool protect_run(uint64_t first, uint64_t n, int prot)
{
    if (!n || mprotect(g2h(first * PAGE), n * PAGE, prot) == 0)
        return true;
    say("xlat: vfork: mprotect of a tracked page failed\n");
    return false;
}

/* Make copied pages writable again; if the host refuses, their faults are
 * no longer ours (a guest SIGSEGV rather than a fault retried forever). */
static void open_run(uint64_t first, uint64_t n)
{
    if (!protect_run(first, n, PROT_READ | PROT_WRITE))
        for (uint64_t p = first; p < first + n; p++)
            bit_clear(vf.own, p);
}

enum {
    UT_SNAPSHOT = 1,    /* copy each page (else drop it from the copy-back) */
    UT_WRITABLE = 2,    /* and make it writable, unless the JIT protects it */
    UT_ONLY_JIT = 4,    /* only the pages the JIT protects too */
};

/* Take the tracked pages of [p0, p1) out of trk. Returns how many. */
static size_t untrack(uint64_t p0, uint64_t p1, int how)
{
    size_t n = 0;
    uint64_t run = 0, runlen = 0;
    for (uint64_t p = p0; p < p1; p++) {
        if (p % 64 == 0 && p + 64 <= p1 && !__atomic_load_n(&vf.trk[p / 64], __ATOMIC_RELAXED)) {
            p += 63;
            continue;
        }
        if (!bit_test(vf.trk, p))
            continue;
        bool jit = code_watch_protected(p);
        if ((how & UT_ONLY_JIT) && !jit)
            continue;
        if (how & UT_SNAPSHOT)
            snapshot(p);
        else
            bit_clear(vf.trk, p);
        n++;
        if (!(how & UT_WRITABLE) || jit)
            continue;
        if (runlen && run + runlen == p) {
            runlen++;
        } else {
            open_run(run, runlen);
            run = p;
            runlen = 1;
        }
    }
    open_run(run, runlen);
    return n;
}

static void own_clear(uint64_t p0, uint64_t p1)
{
    for (uint64_t p = p0; p < p1; p++)
        if (p % 64 == 0 && p + 64 <= p1) {
            __atomic_store_n(&vf.own[p / 64], 0, __ATOMIC_RELAXED);
            p += 63;
        } else {
            bit_clear(vf.own, p);
        }
}

/* -- Sending (spin held) ------------------------------------------------------------ */

static void out_flush(void)
{
    for (size_t off = 0; off < out_len && !vf.broken;) {
        ssize_t n = send(vf.fd, out_buf + off, out_len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            vf.broken = true;           /* the parent is gone: nobody to tell */
        else
            off += (size_t)n;
    }
    out_len = 0;
}

static void out_record(uint64_t addr, const uint8_t *bytes, uint32_t len)
{
    if (out_len + REC_HDR + len > sizeof out_buf)
        out_flush();
    memcpy(out_buf + out_len, &addr, 8);
    memcpy(out_buf + out_len + 8, &len, 4);
    memcpy(out_buf + out_len + REC_HDR, bytes, len);
    out_len += REC_HDR + len;
}

/* Send the runs of snapshot i that changed since it was taken or last sent. */
static void send_changes(size_t i)
{
    Snap *s = &vf.snaps[i];
    uint8_t *old = vf.data + i * PAGE;
    if (!s->live || !s->readable)
        return;
    memcpy(page_now, g2h(s->page * PAGE), PAGE);   /* one stable view to diff and send */
    if (memcmp(old, page_now, PAGE) == 0)
        return;
    for (size_t k = 0; k < PAGE;) {
        if (old[k] == page_now[k]) {
            k++;
            continue;
        }
        size_t start = k, end = k + 1;
        for (size_t j = end; j < PAGE && j - end < MERGE_GAP; j++)
            if (old[j] != page_now[j])
                end = j + 1;
        out_record(s->page * PAGE + start, page_now + start, (uint32_t)(end - start));
        k = end;
    }
    memcpy(old, page_now, PAGE);        /* the parent has these bytes now */
}

/* -- Starting and stopping ------------------------------------------------------------ */

typedef struct Collect {
    Range *r;
    size_t n, cap;
    uint64_t pages;
    bool oom;
} Collect;

static void collect(void *arg, uint64_t start, uint64_t end, int prot, bool shared)
{
    Collect *c = arg;
    if (shared || !(prot & PROT_WRITE) || c->oom)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        Range *r = realloc(c->r, cap * sizeof *r);
        if (!r) {
            c->oom = true;
            return;
        }
        c->r = r;
        c->cap = cap;
    }
    c->r[c->n++] = (Range){ start / PAGE, end / PAGE };
    c->pages += (end - start) / PAGE;
}

static void release_tables(void)
{
    unmap(vf.own, vf.bitmap_size);
    unmap(vf.trk, vf.bitmap_size);
    unmap(vf.snaps, vf.cap * sizeof(Snap));
    unmap(vf.data, vf.cap * PAGE);
    free(vf.ranges);
    vf.own = vf.trk = NULL;
    vf.snaps = NULL;
    vf.data = NULL;
    vf.ranges = NULL;
    vf.nranges = vf.nsnaps = vf.cap = 0;
}

/* In a new vfork child (one thread): make every private writable page trap. */
static bool track_start(void)
{
    Collect c = { 0 };
    guest_for_each_mapping(collect, &c);
    vf.bitmap_size = GUEST_PAGES / 8;
    vf.ranges = c.r;
    vf.nranges = c.n;
    vf.cap = c.pages;
    vf.own = map_anon(vf.bitmap_size);
    vf.trk = map_anon(vf.bitmap_size);
    vf.snaps = map_anon(vf.cap * sizeof(Snap));
    vf.data = map_anon(vf.cap * PAGE);
    if (c.oom || !vf.own || !vf.trk || !vf.snaps || !vf.data) {
        release_tables();
        return false;
    }
    __atomic_store_n(&vf.active, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < vf.nranges; i++) {
        const Range *r = &vf.ranges[i];
        for (uint64_t p = r->first; p < r->end; p++) {
            bit_set(vf.own, p);
            /* The JIT's protected pages: exec_unwatch_all may make them
             * writable behind the handler's back, so copy them now. */
            bit_set(vf.trk, p);
            if (code_watch_protected(p))
                snapshot(p);
        }
        if (mprotect(g2h(r->first * PAGE), (r->end - r->first) * PAGE, PROT_READ) != 0) {
            for (size_t j = 0; j <= i; j++)
                untrack(vf.ranges[j].first, vf.ranges[j].end, UT_WRITABLE);
            __atomic_store_n(&vf.active, 0, __ATOMIC_RELEASE);
            release_tables();
            return false;
        }
    }
    return true;
}

/* A tracking process forked: the copy in the child stops (its parent's affair). */
static void track_stop(void)
{
    spin_lock();
    for (size_t i = 0; i < vf.nranges; i++)
        untrack(vf.ranges[i].first, vf.ranges[i].end, UT_WRITABLE);
    __atomic_store_n(&vf.active, 0, __ATOMIC_RELEASE);
    spin_unlock();
    release_tables();
}

/* -- Fork ------------------------------------------------------------------------------ */

void vfork_fork_begin(VforkLink *l, bool wait)
{
    pthread_mutex_lock(&fork_lock);
    l->rd = l->wr = -1;
    if (!wait)
        return;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        xlat_log(LOG_UNIMP, "xlat: vfork: no channel to the child (%s): the parent will not wait\n",
                 strerror(errno));
        return;
    }
    l->rd = own_fd_take(sv[0]);
    l->wr = own_fd_take(sv[1]);
}

void vfork_fork_parent(VforkLink *l)
{
    if (l->wr >= 0)
        own_fd_close(l->wr);
    l->wr = -1;
    pthread_mutex_unlock(&fork_lock);
}

void vfork_fork_child(VforkLink *l, bool copy_back)
{
    pthread_mutex_init(&fork_lock, NULL);
    if (vf.fd >= 0)                 /* inherited from a vfork child: its parent's */
        own_fd_close(vf.fd);
    vf.fd = -1;
    if (vf.active)
        track_stop();
    if (l->wr < 0)
        return;
    own_fd_close(l->rd);
    vf.fd = l->wr;
    vf.broken = false;
    vf.told_all = false;
    if (copy_back && !track_start()) {
        xlat_log(LOG_UNIMP, "xlat: vfork: cannot track the child's writes: "
                 "a plain fork, the parent does not wait\n");
        own_fd_close(vf.fd);
        vf.fd = -1;
    }
}

/* -- The parent: apply the child's records ---------------------------------------------- */

typedef struct Reader {
    int fd;
    size_t pos, len;
    uint8_t buf[16384];
} Reader;

/* n bytes from the channel; false at end of file (or an error). */
static bool read_bytes(Reader *r, void *dst, size_t n)
{
    uint8_t *d = dst;
    while (n) {
        if (r->pos == r->len) {
            ssize_t k = recv(r->fd, r->buf, sizeof r->buf, 0);
            if (k < 0 && errno == EINTR)
                continue;           /* a guest signal: queued, delivered after clone */
            if (k <= 0)
                return false;
            r->pos = 0;
            r->len = (size_t)k;
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(d, r->buf + r->pos, k);
        r->pos += k;
        d += k;
        n -= k;
    }
    return true;
}

static void apply(uint64_t addr, const uint8_t *bytes, uint32_t len)
{
    /* Checked against the parent's mappings (its other threads may have
     * changed them meanwhile). A store into a page holding translated
     * code: code_watch_fault drops the translations on the way. */
    if (copy_to_guest(addr, bytes, len) != 0)
        return;
    int prot = guest_prot_at(addr);
    if (prot > 0 && (prot & PROT_EXEC))
        exec_invalidate_code(addr, len);
}

void vfork_wait(VforkLink *l)
{
    if (l->rd < 0)
        return;
    Reader r = { .fd = l->rd };
    uint8_t hdr[REC_HDR], bytes[PAGE];
    bool bad = false;
    while (read_bytes(&r, hdr, sizeof hdr)) {
        uint64_t addr;
        uint32_t len;
        memcpy(&addr, hdr, 8);
        memcpy(&len, hdr + 8, 4);
        /* Our own child wrote them, but check: one record, one page. */
        if (bad || len == 0 || len > PAGE || addr % PAGE + len > PAGE) {
            if (!bad)
                xlat_log(LOG_UNIMP, "xlat: vfork: bad record from the child, ignoring the rest\n");
            bad = true;
            continue;               /* out of step: read on to the end */
        }
        if (!read_bytes(&r, bytes, len))
            break;
        apply(addr, bytes, len);
    }
    own_fd_close(l->rd);
    l->rd = -1;
}

/* -- The child: release, fault, EFAULT --------------------------------------------------- */

void vfork_child_release(void)
{
    if (vf.fd < 0 || !__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE))
        return;
    spin_lock();
    for (size_t i = 0; i < vf.nsnaps; i++)
        send_changes(i);
    out_flush();
    spin_unlock();
}

bool vfork_write_fault(void *addr)
{
    if (!__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE) || !host_in_window(addr))
        return false;
    uint64_t page = h2g(addr) / PAGE;
    if (!bit_test(vf.own, page))
        return false;
    bool ok = true;
    spin_lock();
    if (bit_test(vf.trk, page)) {
        snapshot(page);
        if (!code_watch_protected(page) &&
            mprotect(g2h(page * PAGE), PAGE, PROT_READ | PROT_WRITE) != 0) {
            bit_clear(vf.own, page);
            ok = false;
        }
    }
    spin_unlock();
    if (!ok) {
        say("xlat: vfork: cannot make a tracked page writable again\n");
        return false;
    }
    /* Copied; a page the JIT protects is code_watch_fault's to open. */
    return !code_watch_protected(page);
}

bool vfork_unprotect_args(const uint64_t *args, int n)
{
    if (!__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE))
        return false;
    size_t done = 0;
    spin_lock();
    for (int i = 0; i < n; i++) {
        if (!guest_range_in_window(args[i], 1))
            continue;
        uint64_t p0 = args[i] / PAGE, p1 = p0;
        while (p1 < GUEST_PAGES && p1 - p0 < ARG_PAGES && bit_test(vf.own, p1))
            p1++;
        done += untrack(p0, p1, UT_SNAPSHOT | UT_WRITABLE);
    }
    spin_unlock();
    return done > 0;
}

void vfork_before_exec_unprotect(void)
{
    if (!__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE))
        return;
    spin_lock();
    for (size_t i = 0; i < vf.nranges; i++)
        untrack(vf.ranges[i].first, vf.ranges[i].end, UT_SNAPSHOT | UT_ONLY_JIT);
    spin_unlock();
}

bool vfork_unprotect_all(void)
{
    if (!__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE))
        return false;
    size_t done = 0;
    spin_lock();
    for (size_t i = 0; i < vf.nranges; i++)
        done += untrack(vf.ranges[i].first, vf.ranges[i].end, UT_SNAPSHOT | UT_WRITABLE);
    spin_unlock();
    if (done && !vf.told_all) {
        vf.told_all = true;
        xlat_log(LOG_UNIMP, "xlat: vfork: EFAULT in the child: copied all %zu tracked pages\n",
                 done);
    }
    return done > 0;
}

/* -- mm.c's hooks ---------------------------------------------------------------------- */

/* A hook's guest pages [*p0, *p1), or false when there is nothing to do. */
static bool hook_span(uint64_t start, uint64_t len, uint64_t *p0, uint64_t *p1)
{
    if (!__atomic_load_n(&vf.active, __ATOMIC_ACQUIRE) || !len)
        return false;
    page_span(start, len, p0, p1);
    return true;
}

void vfork_mm_forget(uint64_t start, uint64_t len)
{
    uint64_t p0, p1;
    if (!hook_span(start, len, &p0, &p1))
        return;
    spin_lock();
    for (size_t i = 0; i < vf.nsnaps; i++) {
        Snap *s = &vf.snaps[i];
        if (s->live && s->page >= p0 && s->page < p1) {
            send_changes(i);
            s->live = false;
        }
    }
    out_flush();
    untrack(p0, p1, UT_WRITABLE);      /* moved pages stay usable where they go */
    own_clear(p0, p1);
    spin_unlock();
}

void vfork_mm_protect(uint64_t start, uint64_t len, int prot, bool done)
{
    uint64_t p0, p1;
    if (!hook_span(start, len, &p0, &p1))
        return;
    bool readable = prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
    spin_lock();
    if (!done && !(prot & PROT_WRITE)) {
        /* No longer writable: copy now, while the pages can be read; the
         * handler must not claim their faults any more. */
        untrack(p0, p1, UT_SNAPSHOT);
        own_clear(p0, p1);
    }
    if (done && (prot & PROT_WRITE)) {
        /* The host mprotect opened the pages not yet copied: close them again. */
        uint64_t run = 0, runlen = 0;
        for (uint64_t p = p0; p < p1; p++) {
            if (!bit_test(vf.trk, p))
                continue;
            if (runlen && run + runlen == p) {
                runlen++;
            } else {
                protect_run(run, runlen, PROT_READ);
                run = p;
                runlen = 1;
            }
        }
        protect_run(run, runlen, PROT_READ);
    }
    /* Unreadable from before the host mprotect on, readable only after it. */
    if (done == readable)
        for (size_t i = 0; i < vf.nsnaps; i++)
            if (vf.snaps[i].page >= p0 && vf.snaps[i].page < p1)
                vf.snaps[i].readable = readable;
    spin_unlock();
}

void vfork_mm_discard(uint64_t start, uint64_t len)
{
    uint64_t p0, p1;
    if (!hook_span(start, len, &p0, &p1))
        return;
    spin_lock();
    untrack(p0, p1, UT_SNAPSHOT | UT_WRITABLE);
    spin_unlock();
}
