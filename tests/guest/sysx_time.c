/*
 * Clocks, sleeps and timers: clock_getres, nanosleep/clock_nanosleep
 * (relative and absolute), POSIX timers with SIGEV_NONE, interval timers
 * read back without firing, read-only adjtimex. Prints relations and errno
 * values only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static int64_t ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

static void test_sleep(void)
{
    struct timespec a, b, req = { 0, 3 * 1000 * 1000 };
    clock_gettime(CLOCK_MONOTONIC, &a);
    check("nanosleep", nanosleep(&req, NULL));
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("slept >= 3ms %d\n", ns(b) - ns(a) >= 3000000);
    struct timespec until = { a.tv_sec, a.tv_nsec + 8 * 1000 * 1000 };
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    check("clock_nanosleep abs", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL));
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("reached deadline %d\n", ns(b) >= ns(until));
    printf("clock_nanosleep bad clock %d\n", clock_nanosleep(12345, 0, &req, NULL));
    req.tv_nsec = 2000000000;
    check("nanosleep invalid", nanosleep(&req, NULL));
    struct timespec res;
    check("clock_getres", clock_getres(CLOCK_MONOTONIC, &res));
    printf("res <= 1ms %d\n", res.tv_sec == 0 && res.tv_nsec <= 1000000);
    check("clock_settime bad clock", clock_settime(CLOCK_MONOTONIC, &res));
}

static void test_posix_timers(void)
{
    timer_t t;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_NONE;
    check("timer_create", timer_create(CLOCK_MONOTONIC, &sev, &t));
    struct itimerspec its = { .it_interval = { 0, 1000000 }, .it_value = { 5, 0 } }, cur, old;
    check("timer_settime", timer_settime(t, 0, &its, NULL));
    check("timer_gettime", timer_gettime(t, &cur));
    printf("pending %d interval %ld\n", cur.it_value.tv_sec >= 4 && cur.it_value.tv_sec <= 5,
           cur.it_interval.tv_nsec);
    its.it_value.tv_sec = 0;
    its.it_value.tv_nsec = 1000000;
    check("timer_settime old", timer_settime(t, 0, &its, &old));
    printf("old pending %d\n", old.it_value.tv_sec >= 4);
    struct timespec req = { 0, 20 * 1000 * 1000 };
    nanosleep(&req, NULL);
    check("timer_getoverrun", timer_getoverrun(t) >= 0);
    check("timer_delete", timer_delete(t));
    check("timer_delete again", timer_delete(t));
    check("timer_create bad sevp", syscall(SYS_timer_create, CLOCK_MONOTONIC, bad_ptr, &t));
    check("timer_create bad id", syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, bad_ptr));
    check("timer_create bad clock", syscall(SYS_timer_create, 12345, &sev, &t));
}

static void test_itimer(void)
{
    struct itimerval v = { .it_interval = { 0, 0 }, .it_value = { 100, 0 } }, o;
    check("setitimer", setitimer(ITIMER_REAL, &v, NULL));
    check("getitimer", getitimer(ITIMER_REAL, &o));
    printf("armed %d\n", o.it_value.tv_sec >= 99 && o.it_value.tv_sec <= 100);
    memset(&v, 0, sizeof v);
    check("setitimer disarm", setitimer(ITIMER_REAL, &v, &o));
    printf("old armed %d\n", o.it_value.tv_sec >= 99);
    check("getitimer after", getitimer(ITIMER_REAL, &o));
    printf("disarmed %d\n", o.it_value.tv_sec == 0 && o.it_value.tv_usec == 0);
    check("getitimer bad which", getitimer(77, &o));
    check("getitimer bad ptr", syscall(SYS_getitimer, ITIMER_REAL, bad_ptr));
    printf("alarm %u\n", alarm(0));
}

static void test_adjtimex(void)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    int r = adjtimex(&tx);
    printf("adjtimex read ok %d\n", r >= 0);
    check("adjtimex bad", syscall(SYS_adjtimex, bad_ptr));
}

int main(void)
{
    test_sleep();
    test_posix_timers();
    test_itimer();
    test_adjtimex();
    return 0;
}
