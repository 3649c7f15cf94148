/*
 * Asynchronous signals from timers: SIGALRM (setitimer/alarm) interrupts
 * a busy loop with no system calls (delivered at the next instruction
 * boundary, never lost); a blocking read is interrupted with EINTR without
 * SA_RESTART and restarted with it; nanosleep is interrupted (EINTR, time
 * left reported) even with SA_RESTART, as on Linux.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int alarms;
static int pipe_w = -1;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
    if (pipe_w >= 0 && alarms == 3)
        write(pipe_w, "x", 1);       /* ends the restarted read */
}

static void install(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigaction(SIGALRM, &sa, NULL);
}

static void timer_ms(long first, long every)
{
    struct itimerval it = { { 0, every * 1000 }, { 0, first * 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
    install(0);

    /* A tight loop: only the signal can end it. */
    timer_ms(20, 0);
    unsigned long spins = 0;
    while (!alarms)
        spins++;
    printf("busy loop: alarms=%d spun=%d\n", alarms, spins > 0);

    /* Several signals into a loop, none lost: wait for 5 periodic alarms. */
    alarms = 0;
    timer_ms(5, 5);
    while (alarms < 5)
        ;
    timer_ms(0, 0);
    printf("periodic: reached 5\n");

    int fds[2];
    pipe(fds);
    char c;

    /* No SA_RESTART: read fails with EINTR. */
    alarms = 0;
    timer_ms(20, 0);
    ssize_t r = read(fds[0], &c, 1);
    printf("read without SA_RESTART: %zd %s alarms=%d\n", r, r < 0 ? strerror(errno) : "-",
           alarms);

    /* SA_RESTART: the read goes on until the third alarm writes a byte. */
    install(SA_RESTART);
    alarms = 0;
    pipe_w = fds[1];
    timer_ms(10, 10);
    r = read(fds[0], &c, 1);
    timer_ms(0, 0);
    pipe_w = -1;
    printf("read with SA_RESTART: %zd '%c' alarms>=3: %d\n", r, r == 1 ? c : '?', alarms >= 3);

    /* nanosleep returns EINTR even with SA_RESTART, with the time left. */
    alarms = 0;
    alarm(1);
    struct timespec req = { 30, 0 }, rem = { 0, 0 };
    int n = nanosleep(&req, &rem);
    printf("nanosleep: %d %s alarms=%d rem-ok=%d\n", n, n ? strerror(errno) : "-", alarms,
           rem.tv_sec > 20 && rem.tv_sec < 30);
    return 0;
}
