/*
 * Sockets: socketpair, sendmsg/recvmsg with several iovecs and control
 * messages (SCM_RIGHTS passes a descriptor, SCM_CREDENTIALS), loopback TCP
 * and UDP on 127.0.0.1 with port 0, socket options, sendmmsg/recvmmsg and
 * EFAULT for bad pointers. One process: connect completes against the
 * listen backlog before accept.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static void test_msg_rights(void)
{
    int sv[2], p[2];
    check("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    pipe(p);
    int one = 1;
    check("SO_PASSCRED", setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one));

    char a[] = "alpha-", b[] = "beta-", c[] = "gamma";
    struct iovec iov[3] = { { a, 6 }, { b, 5 }, { c, 5 } };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
    check("sendmsg", sendmsg(sv[0], &m, 0));

    char r1[4], r2[20];
    struct iovec riov[2] = { { r1, 4 }, { r2, 20 } };
    union { char buf[256]; struct cmsghdr align; } rctl;
    struct msghdr rm = { .msg_iov = riov, .msg_iovlen = 2, .msg_control = rctl.buf,
                         .msg_controllen = sizeof rctl.buf };
    long n = recvmsg(sv[1], &rm, MSG_CMSG_CLOEXEC);
    check("recvmsg", n);
    printf("data '%.4s' '%.*s' flags=%#x\n", r1, (int)(n - 4), r2, rm.msg_flags);
    int got_fd = -1;
    for (cm = CMSG_FIRSTHDR(&rm); cm; cm = CMSG_NXTHDR(&rm, cm)) {
        printf("cmsg level=%d type=%d len=%zu\n", cm->cmsg_level, cm->cmsg_type, (size_t)cm->cmsg_len);
        if (cm->cmsg_type == SCM_RIGHTS)
            memcpy(&got_fd, CMSG_DATA(cm), sizeof got_fd);
        if (cm->cmsg_type == SCM_CREDENTIALS) {
            struct ucred uc;
            memcpy(&uc, CMSG_DATA(cm), sizeof uc);
            printf("cred pid ok %d uid ok %d\n", uc.pid == getpid(), uc.uid == getuid());
        }
    }
    /* The passed descriptor is a new number for the same pipe. */
    printf("new fd %d\n", got_fd > p[1]);
    write(got_fd, "via-passed-fd", 13);
    char buf[32] = { 0 };
    read(p[0], buf, sizeof buf - 1);
    printf("pipe got '%s'\n", buf);

    /* Truncated control buffer: MSG_CTRUNC. */
    struct iovec one_iov = { buf, 1 };
    m.msg_iov = &one_iov;
    m.msg_iovlen = 1;
    check("sendmsg 2", sendmsg(sv[0], &m, 0));
    rm.msg_iov = riov;
    rm.msg_iovlen = 1;
    rm.msg_controllen = 8;
    n = recvmsg(sv[1], &rm, 0);
    printf("ctrunc: n=%ld flags&MSG_CTRUNC=%d\n", n, !!(rm.msg_flags & MSG_CTRUNC));
    check("sendmsg bad iov", syscall(SYS_sendmsg, sv[0], &(struct msghdr){ .msg_iov = bad_ptr, .msg_iovlen = 1 }, 0));
    check("sendmsg bad hdr", syscall(SYS_sendmsg, sv[0], bad_ptr, 0));
    write(sv[0], "pending", 7);
    check("recvmsg bad buffer", syscall(SYS_recvmsg, sv[1], &(struct msghdr){
        .msg_iov = &(struct iovec){ bad_ptr, 16 }, .msg_iovlen = 1 }, MSG_DONTWAIT));
    close(sv[0]);
    close(sv[1]);
}

static void test_tcp(void)
{
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int one = 1;
    check("SO_REUSEADDR", setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
    check("bind", bind(ls, (struct sockaddr *)&sa, sizeof sa));
    socklen_t len = sizeof sa;
    check("getsockname", getsockname(ls, (struct sockaddr *)&sa, &len));
    printf("len %u port nonzero %d\n", len, sa.sin_port != 0);
    check("listen", listen(ls, 4));
    int c = socket(AF_INET, SOCK_STREAM, 0);
    check("connect", connect(c, (struct sockaddr *)&sa, sizeof sa));
    struct sockaddr_in peer;
    len = sizeof peer;
    int s = accept4(ls, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    check("accept4", s >= 0);
    struct sockaddr_in me;
    socklen_t mlen = sizeof me;
    getsockname(c, (struct sockaddr *)&me, &mlen);
    printf("peer matches %d addr %s\n", peer.sin_port == me.sin_port, inet_ntoa(peer.sin_addr));
    len = sizeof peer;
    check("getpeername", getpeername(c, (struct sockaddr *)&peer, &len));
    printf("peer port == listen port %d\n", peer.sin_port == sa.sin_port);
    check("send", send(c, "hello tcp", 9, 0));
    char buf[32] = { 0 };
    check("recv", recv(s, buf, sizeof buf, 0));
    printf("got '%s'\n", buf);
    int v = 0;
    len = sizeof v;
    check("getsockopt SO_TYPE", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len));
    printf("type %d len %u\n", v, len);
    check("TCP_NODELAY", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
    len = sizeof v;
    getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len);
    printf("nodelay %d\n", v != 0);
    struct timeval tv = { 1, 500000 };
    check("SO_RCVTIMEO", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
    memset(&tv, 0, sizeof tv);
    len = sizeof tv;
    getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, &len);
    printf("rcvtimeo %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    struct linger lg = { 1, 3 };
    check("SO_LINGER", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
    memset(&lg, 0, sizeof lg);
    len = sizeof lg;
    getsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &len);
    printf("linger %d %d\n", lg.l_onoff, lg.l_linger);
    check("getsockopt bad len", syscall(SYS_getsockopt, s, SOL_SOCKET, SO_TYPE, &v, bad_ptr));
    check("shutdown", shutdown(c, SHUT_WR));
    check("recv eof", recv(s, buf, sizeof buf, 0));
    check("accept bad addr", syscall(SYS_accept4, ls, bad_ptr, &len, SOCK_NONBLOCK));
    check("connect bad addr", syscall(SYS_connect, c, bad_ptr, 16));
    close(c);
    close(s);
    close(ls);
}

static void test_udp(void)
{
    int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    bind(b, (struct sockaddr *)&sa, sizeof sa);
    socklen_t len = sizeof sa;
    getsockname(b, (struct sockaddr *)&sa, &len);
    check("sendto", sendto(a, "datagram", 8, 0, (struct sockaddr *)&sa, sizeof sa));
    char buf[32] = { 0 };
    struct sockaddr_in from;
    len = sizeof from;
    check("recvfrom", recvfrom(b, buf, sizeof buf, 0, (struct sockaddr *)&from, &len));
    printf("got '%s' from %s len %u\n", buf, inet_ntoa(from.sin_addr), len);

    /* sendmmsg / recvmmsg: three datagrams, each with two iovecs. */
    connect(a, (struct sockaddr *)&sa, sizeof sa);
    char *words[3][2] = { { "one", "-1" }, { "two", "-22" }, { "three", "-333" } };
    struct iovec iov[3][2];
    struct mmsghdr mm[3];
    memset(mm, 0, sizeof mm);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++)
            iov[i][j] = (struct iovec){ words[i][j], strlen(words[i][j]) };
        mm[i].msg_hdr.msg_iov = iov[i];
        mm[i].msg_hdr.msg_iovlen = 2;
    }
    check("sendmmsg", sendmmsg(a, mm, 3, 0));
    printf("msg_len %u %u %u\n", mm[0].msg_len, mm[1].msg_len, mm[2].msg_len);
    char rb[3][16];
    struct iovec riov[3];
    struct sockaddr_in names[3];
    memset(mm, 0, sizeof mm);
    memset(rb, 0, sizeof rb);
    for (int i = 0; i < 3; i++) {
        riov[i] = (struct iovec){ rb[i], sizeof rb[i] - 1 };
        mm[i].msg_hdr.msg_iov = &riov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
        mm[i].msg_hdr.msg_name = &names[i];
        mm[i].msg_hdr.msg_namelen = sizeof names[i];
    }
    struct timespec ts = { 1, 0 };
    check("recvmmsg", recvmmsg(b, mm, 3, MSG_DONTWAIT, &ts));
    for (int i = 0; i < 3; i++)
        printf("  '%s' len %u namelen %u\n", rb[i], mm[i].msg_len, mm[i].msg_hdr.msg_namelen);
    check("recvmmsg empty", recvmmsg(b, mm, 3, MSG_DONTWAIT, NULL));
    check("sendto bad buf", syscall(SYS_sendto, a, bad_ptr, 8, 0, NULL, 0));
    close(a);
    close(b);
}

static void test_unix_named(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/xlat-sysx-sock.%d", getpid());
    unlink(path);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    strcpy(un.sun_path, path);
    check("bind unix", bind(s, (struct sockaddr *)&un, sizeof un));
    int c = socket(AF_UNIX, SOCK_DGRAM, 0);
    check("sendto unix", sendto(c, "u", 1, 0, (struct sockaddr *)&un, sizeof un));
    char b;
    check("recv unix", recv(s, &b, 1, 0));
    close(s);
    close(c);
    unlink(path);
    check("socket bad family", socket(12345, SOCK_STREAM, 0));
}

int main(void)
{
    test_msg_rights();
    test_tcp();
    test_udp();
    test_unix_named();
    return 0;
}
