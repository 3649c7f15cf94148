/*
 * ppoll and pselect6 (riscv64 has no poll/select syscalls), signalfd and
 * inotify: readiness, timeouts written back, sigmask argument checks,
 * EFAULT for bad pointers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static void test_ppoll(void)
{
    int p[2];
    pipe(p);
    struct pollfd fds[3] = {
        { .fd = p[0], .events = POLLIN }, { .fd = p[1], .events = POLLOUT }, { .fd = 999, .events = POLLIN },
    };
    struct timespec ts = { 0, 0 };
    check("ppoll", ppoll(fds, 3, &ts, NULL));
    printf("revents %#x %#x %#x\n", fds[0].revents, fds[1].revents, fds[2].revents);
    write(p[1], "a", 1);
    check("poll", poll(fds, 2, 0));
    printf("revents %#x %#x\n", fds[0].revents, fds[1].revents);
    close(p[1]);
    check("poll hup", poll(fds, 1, 0));
    printf("revents %#x\n", fds[0].revents);

    /* A real timeout: the kernel writes the time left back (0 here). */
    int q[2];
    pipe(q);
    struct pollfd f = { .fd = q[0], .events = POLLIN };
    ts.tv_sec = 0;
    ts.tv_nsec = 20 * 1000 * 1000;
    check("ppoll timeout", syscall(SYS_ppoll, &f, 1, &ts, NULL, 8));
    printf("left %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    ts.tv_nsec = 1000;
    check("ppoll sigmask", syscall(SYS_ppoll, &f, 1, &ts, &m, 8));
    check("ppoll bad sigsetsize", syscall(SYS_ppoll, &f, 1, &ts, &m, 16));
    check("ppoll bad fds", syscall(SYS_ppoll, bad_ptr, 1, &ts, NULL, 8));
    check("ppoll bad ts", syscall(SYS_ppoll, &f, 1, bad_ptr, NULL, 8));
    close(q[0]);
    close(q[1]);
    close(p[0]);
}

static void test_pselect(void)
{
    int p[2];
    pipe(p);
    fd_set r, w;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    struct timespec ts = { 0, 1000 };
    check("pselect", pselect(p[1] + 1, &r, &w, NULL, &ts, NULL));
    printf("r=%d w=%d\n", FD_ISSET(p[0], &r), FD_ISSET(p[1], &w));
    write(p[1], "z", 1);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    check("pselect sigmask", pselect(p[0] + 1, &r, NULL, NULL, &ts, &m));
    printf("r=%d\n", FD_ISSET(p[0], &r));
    struct { void *ss; size_t len; } pack = { &m, 4 };
    FD_SET(p[0], &r);
    check("pselect6 bad sigsetsize", syscall(SYS_pselect6, p[0] + 1, &r, NULL, NULL, &ts, &pack));
    check("pselect6 bad set", syscall(SYS_pselect6, p[0] + 1, bad_ptr, NULL, NULL, &ts, NULL));
    check("pselect6 negative n", syscall(SYS_pselect6, -1, NULL, NULL, NULL, &ts, NULL));
    ts.tv_nsec = 5 * 1000 * 1000;
    check("pselect6 timeout", syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, NULL));
    printf("left %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    close(p[0]);
    close(p[1]);
}

static void test_signalfd(void)
{
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    int fd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
    check("signalfd", fd >= 0);
    struct signalfd_siginfo si;
    check("signalfd read empty", read(fd, &si, sizeof si));
    check("signalfd4 bad mask", syscall(SYS_signalfd4, -1, bad_ptr, 8, 0));
    printf("siginfo size %zu\n", sizeof si);
    close(fd);
}

static void test_inotify(void)
{
    char dir[] = "/tmp/xlat-sysx-poll.XXXXXX";
    if (!mkdtemp(dir))
        return;
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    check("inotify_init1", in >= 0);
    int wd = inotify_add_watch(in, dir, IN_CREATE | IN_DELETE);
    check("add_watch", wd);
    char path[64];
    snprintf(path, sizeof path, "%s/file", dir);
    close(open(path, O_CREAT | O_WRONLY, 0600));
    unlink(path);
    char buf[512];
    ssize_t n = read(in, buf, sizeof buf);
    for (char *p = buf; n > 0 && p < buf + n;) {
        struct inotify_event *e = (struct inotify_event *)p;
        printf("event wd=%d mask=%#x name=%s\n", e->wd, e->mask, e->len ? e->name : "");
        p += sizeof *e + e->len;
    }
    check("rm_watch", inotify_rm_watch(in, wd));
    check("rm_watch again", inotify_rm_watch(in, wd));
    check("add_watch missing", inotify_add_watch(in, "/nonexistent/xlat", IN_CREATE));
    close(in);
    rmdir(dir);
}

int main(void)
{
    test_ppoll();
    test_pselect();
    test_signalfd();
    test_inotify();
    return 0;
}
