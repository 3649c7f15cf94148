/*
 * epoll, eventfd and timerfd: the riscv64 struct epoll_event is 16 bytes
 * (x86-64's is packed to 12), so data.u64 values must survive the round
 * trip through epoll_ctl and epoll_pwait exactly, for every returned slot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

/* Sort the returned events by data so the order is deterministic. */
static void print_events(struct epoll_event *ev, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (ev[j].data.u64 < ev[i].data.u64) {
                struct epoll_event t = ev[i];
                ev[i] = ev[j];
                ev[j] = t;
            }
    for (int i = 0; i < n; i++)
        printf("  events=%#x data=%#" PRIx64 "\n", ev[i].events, ev[i].data.u64);
}

int main(void)
{
    _Static_assert(sizeof(struct epoll_event) == 16, "riscv64 layout");
    int p1[2], p2[2];
    int ep = epoll_create1(EPOLL_CLOEXEC);
    check("epoll_create1", ep >= 0);
    pipe(p1);
    pipe(p2);
    int efd = eventfd(3, EFD_NONBLOCK);
    check("eventfd", efd >= 0);

    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1122334455667788ULL };
    check("ctl add p1", epoll_ctl(ep, EPOLL_CTL_ADD, p1[0], &ev));
    ev.data.u64 = 0xfedcba9876543210ULL;
    ev.events = EPOLLIN | EPOLLET;
    check("ctl add p2", epoll_ctl(ep, EPOLL_CTL_ADD, p2[0], &ev));
    ev.events = EPOLLIN;
    ev.data.u64 = 0x00000000ffffffffULL;
    check("ctl add efd", epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev));
    check("ctl add dup", epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev));
    check("ctl bad ptr", epoll_ctl(ep, EPOLL_CTL_ADD, p1[1], bad_ptr));

    /* Guard words after the buffer: the kernel must not write past n slots. */
    struct epoll_event out[6];
    memset(out, 0xa5, sizeof out);
    int n = epoll_wait(ep, out, 4, 0);
    printf("ready after eventfd only: %d\n", n);
    print_events(out, n);
    printf("slot 1 untouched: %d\n", out[1].events == 0xa5a5a5a5u);

    write(p1[1], "x", 1);
    write(p2[1], "yy", 2);
    n = epoll_wait(ep, out, 6, 100);
    printf("ready: %d\n", n);
    print_events(out, n);

    /* maxevents smaller than the ready count. */
    n = epoll_wait(ep, out, 1, 0);
    printf("max 1: %d\n", n);

    ev.events = EPOLLOUT;
    ev.data.u64 = 42;
    check("ctl mod efd", epoll_ctl(ep, EPOLL_CTL_MOD, efd, &ev));
    check("ctl del p1", epoll_ctl(ep, EPOLL_CTL_DEL, p1[0], NULL));
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    n = epoll_pwait(ep, out, 6, 0, &mask);
    printf("pwait: %d\n", n);
    print_events(out, n);
    check("wait bad maxevents", epoll_wait(ep, out, 0, 0));
    check("wait bad buffer", epoll_wait(ep, bad_ptr, 4, 0));
    check("pwait bad sigsetsize", syscall(SYS_epoll_pwait, ep, out, 4, 0, &mask, 4));

    /* eventfd counter semantics. */
    uint64_t v = 0;
    check("eventfd read", read(efd, &v, 8));
    printf("eventfd value %" PRIu64 "\n", v);
    check("eventfd empty read", read(efd, &v, 8));
    v = 5;
    check("eventfd write", write(efd, &v, 8));
    int sem = eventfd(2, EFD_SEMAPHORE);
    read(sem, &v, 8);
    printf("semaphore read %" PRIu64 "\n", v);

    /* timerfd through epoll: one expiration after 10 ms. */
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec its = { .it_value = { 0, 10 * 1000 * 1000 } }, cur;
    check("timerfd_settime", timerfd_settime(tfd, 0, &its, NULL));
    check("timerfd_gettime", timerfd_gettime(tfd, &cur));
    printf("armed %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 &&
                         cur.it_value.tv_nsec <= 10 * 1000 * 1000);
    ev.events = EPOLLIN;
    ev.data.u64 = 0x8000000000000001ULL;
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    check("ctl del efd", epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL));
    check("ctl del p2", epoll_ctl(ep, EPOLL_CTL_DEL, p2[0], NULL));
    n = epoll_wait(ep, out, 6, 2000);
    printf("timer ready: %d\n", n);
    print_events(out, n);
    check("timerfd read", read(tfd, &v, 8));
    printf("expirations %" PRIu64 "\n", v);
    check("timerfd_settime bad", timerfd_settime(tfd, 0, bad_ptr, NULL));
    return 0;
}
