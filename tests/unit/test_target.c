/*
 * Host unit test of the riscv64 structure conversions (target_conv.c) on
 * crafted values, the layouts the syscall layer relies on, and a few
 * handlers end to end through syscall_dispatch: epoll_event both ways,
 * statfs and stat field offsets, msghdr iovec translation (sendmsg/recvmsg
 * over a socketpair), -L resolution for lookups but not for changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "riscv/cpu.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/syscall.h"
#include "user/target.h"

__attribute__((weak)) Options opt;

static int failures;

#define EXPECT(cond) \
    do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static int64_t call(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    CPUState cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.x[17] = nr;
    cpu.x[10] = a0; cpu.x[11] = a1; cpu.x[12] = a2; cpu.x[13] = a3; cpu.x[14] = a4;
    syscall_dispatch(&cpu);
    return (int64_t)cpu.x[10];
}

#define G 0x20000ULL   /* a guest page we map */

static void test_stat_conv(void)
{
    struct stat h;
    struct target_stat t;
    memset(&h, 0, sizeof h);
    h.st_dev = 0x0102030405060708ULL;
    h.st_ino = 0x1112131415161718ULL;
    h.st_mode = 0100644;
    h.st_nlink = 3;
    h.st_uid = 1000;
    h.st_gid = 1001;
    h.st_rdev = 0x2122;
    h.st_size = 0x123456789aLL;
    h.st_blksize = 4096;
    h.st_blocks = 77;
    h.st_atim = (struct timespec){ 1, 2 };
    h.st_mtim = (struct timespec){ 3, 4 };
    h.st_ctim = (struct timespec){ 5, 999999999 };
    target_stat_from_host(&t, &h);
    const uint8_t *b = (const uint8_t *)&t;
    uint64_t u64;
    uint32_t u32;
    memcpy(&u64, b + 0, 8);   EXPECT(u64 == 0x0102030405060708ULL);
    memcpy(&u64, b + 8, 8);   EXPECT(u64 == 0x1112131415161718ULL);
    memcpy(&u32, b + 16, 4);  EXPECT(u32 == 0100644);
    memcpy(&u32, b + 20, 4);  EXPECT(u32 == 3);
    memcpy(&u32, b + 24, 4);  EXPECT(u32 == 1000);
    memcpy(&u32, b + 28, 4);  EXPECT(u32 == 1001);
    memcpy(&u64, b + 32, 8);  EXPECT(u64 == 0x2122);
    memcpy(&u64, b + 40, 8);  EXPECT(u64 == 0);            /* __pad1 */
    memcpy(&u64, b + 48, 8);  EXPECT(u64 == 0x123456789aULL);
    memcpy(&u32, b + 56, 4);  EXPECT(u32 == 4096);
    memcpy(&u64, b + 64, 8);  EXPECT(u64 == 77);
    memcpy(&u64, b + 72, 8);  EXPECT(u64 == 1);
    memcpy(&u64, b + 80, 8);  EXPECT(u64 == 2);
    memcpy(&u64, b + 88, 8);  EXPECT(u64 == 3);
    memcpy(&u64, b + 104, 8); EXPECT(u64 == 5);
    memcpy(&u64, b + 112, 8); EXPECT(u64 == 999999999);
    memcpy(&u64, b + 120, 8); EXPECT(u64 == 0);            /* __unused4/5 */
}

static void test_epoll_conv(void)
{
    struct epoll_event h[2];
    struct target_epoll_event t = { .events = EPOLLIN | EPOLLET, .__pad = 0xdead,
                                    .data = 0x8877665544332211ULL };
    memset(h, 0xee, sizeof h);
    target_epoll_to_host(&h[0], &t);
    EXPECT(h[0].events == (EPOLLIN | EPOLLET));
    EXPECT(h[0].data.u64 == 0x8877665544332211ULL);
    EXPECT(((uint8_t *)h)[12] == 0xee);   /* 12-byte host record: nothing written past it */
    struct target_epoll_event back;
    memset(&back, 0xff, sizeof back);
    target_epoll_from_host(&back, &h[0]);
    EXPECT(back.events == (EPOLLIN | EPOLLET) && back.__pad == 0 &&
           back.data == 0x8877665544332211ULL);
    EXPECT(offsetof(struct target_epoll_event, data) == 8);
}

/* epoll_ctl + epoll_pwait through the dispatcher: guest layout in memory. */
static void test_epoll_dispatch(void)
{
    int p[2];
    EXPECT(pipe(p) == 0);
    int ep = (int)call(20, 0, 0, 0, 0, 0);              /* epoll_create1 */
    EXPECT(ep >= 0);
    struct target_epoll_event t = { .events = EPOLLIN, .data = 0xabcdef0123456789ULL };
    EXPECT(copy_to_guest(G, &t, sizeof t) == 0);
    EXPECT(call(21, ep, EPOLL_CTL_ADD, p[0], G, 0) == 0);   /* epoll_ctl */
    EXPECT(call(21, ep, EPOLL_CTL_ADD, p[1], 8, 0) == -EFAULT);
    EXPECT(write(p[1], "x", 1) == 1);
    uint8_t out[48];
    memset(out, 0x5a, sizeof out);
    EXPECT(copy_to_guest(G + 64, out, sizeof out) == 0);
    EXPECT(call(22, ep, G + 64, 3, 0, 0) == 1);              /* epoll_pwait */
    EXPECT(copy_from_guest(out, G + 64, sizeof out) == 0);
    struct target_epoll_event got;
    memcpy(&got, out, sizeof got);
    EXPECT(got.events == EPOLLIN && got.__pad == 0 && got.data == 0xabcdef0123456789ULL);
    EXPECT(out[16] == 0x5a);                                 /* second slot untouched */
    EXPECT(call(22, ep, G + 64, 0, 0, 0) == -EINVAL);
    EXPECT(call(22, ep, 8, 3, 0, 0) == -EFAULT);
    close(ep);
    close(p[0]);
    close(p[1]);
}

static void test_statfs(void)
{
    struct statfs h;
    EXPECT(statfs("/", &h) == 0);
    EXPECT(copy_to_guest(G + 512, "/", 2) == 0);
    EXPECT(call(43, G + 512, G + 1024, 0, 0, 0) == 0);       /* statfs */
    uint64_t w[15];
    EXPECT(copy_from_guest(w, G + 1024, sizeof w) == 0);
    EXPECT(w[0] == (uint64_t)h.f_type && w[1] == (uint64_t)h.f_bsize);
    EXPECT(w[2] == (uint64_t)h.f_blocks && w[8] == (uint64_t)h.f_namelen);
    EXPECT(w[9] == (uint64_t)h.f_frsize && w[10] == (uint64_t)h.f_flags);
    EXPECT(call(43, G + 512, 16, 0, 0, 0) == -EFAULT);
}

/* sendmsg/recvmsg: guest iovec arrays are rebuilt with host addresses. */
static void test_msghdr(void)
{
    int sv[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const uint64_t data = G + 2048, iov = G + 2304, msg = G + 2560;
    EXPECT(copy_to_guest(data, "hello-world", 11) == 0);
    struct target_iovec tv[2] = { { data, 6 }, { data + 6, 5 } };
    EXPECT(copy_to_guest(iov, tv, sizeof tv) == 0);
    struct target_msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    EXPECT(copy_to_guest(msg, &m, sizeof m) == 0);
    EXPECT(call(211, sv[0], msg, 0, 0, 0) == 11);           /* sendmsg */
    struct target_iovec rv[2] = { { data + 100, 3 }, { data + 200, 20 } };
    EXPECT(copy_to_guest(iov, rv, sizeof rv) == 0);
    m.msg_flags = 0x777;
    EXPECT(copy_to_guest(msg, &m, sizeof m) == 0);
    EXPECT(call(212, sv[1], msg, 0, 0, 0) == 11);           /* recvmsg */
    char a[4] = { 0 }, b[9] = { 0 };
    EXPECT(copy_from_guest(a, data + 100, 3) == 0 && strcmp(a, "hel") == 0);
    EXPECT(copy_from_guest(b, data + 200, 8) == 0 && strcmp(b, "lo-world") == 0);
    EXPECT(copy_from_guest(&m, msg, sizeof m) == 0 && m.msg_flags == 0);
    rv[1].iov_base = 8;   /* unmapped segment */
    EXPECT(copy_to_guest(iov, rv, sizeof rv) == 0);
    EXPECT(write(sv[0], "again", 5) == 5);
    /* The kernel fills the good segment, then faults on the bad one. */
    int64_t r = call(212, sv[1], msg, 0, 0, 0);
    EXPECT(r == 3 || r == -EFAULT);
    close(sv[0]);
    close(sv[1]);
}

/* -L: lookups resolve under the prefix, name changes do not. */
static void test_prefix(void)
{
    char tmpl[] = "/tmp/xlat-unit-target-XXXXXX", path[PATH_MAX];
    EXPECT(mkdtemp(tmpl) != NULL);
    snprintf(path, sizeof path, "%s/only-in-prefix", tmpl);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    EXPECT(fd >= 0);
    close(fd);
    opt.ld_prefix = tmpl;
    EXPECT(copy_to_guest(G + 3072, "/only-in-prefix", 16) == 0);
    EXPECT(call(79, AT_FDCWD, G + 3072, G + 3200, 0, 0) == 0);     /* newfstatat resolves */
    EXPECT(call(48, AT_FDCWD, G + 3072, F_OK, 0, 0) == 0);         /* faccessat resolves */
    EXPECT(call(35, AT_FDCWD, G + 3072, 0, 0, 0) == -ENOENT);      /* unlinkat does not */
    opt.ld_prefix = NULL;
    EXPECT(unlink(path) == 0 && rmdir(tmpl) == 0);
}

int main(void)
{
    log_file = stderr;
    mm_init();
    EXPECT(guest_map_fixed(G, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, "test") == 0);
    test_stat_conv();
    test_epoll_conv();
    test_epoll_dispatch();
    test_statfs();
    test_msghdr();
    test_prefix();
    if (failures)
        printf("test_target: %d failures\n", failures);
    return failures != 0;
}
