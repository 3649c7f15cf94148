/*
 * The lost-wakeup race of blocking system calls: a SIGALRM whose handler
 * writes the byte that a read() is waiting for, timed to arrive around the
 * moment the read starts. A signal that lands after xlat checked for
 * pending signals but before the host read blocks must still interrupt it
 * (safe_syscall); otherwise the read would wait forever. A watchdog thread
 * un-sticks such a read (and counts it) so the test stays fast. A read
 * counts as stuck after a full second without progress: a loaded 2-core
 * machine can deschedule a thread for a few hundred milliseconds.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 6000

static int fds[2];
static volatile int progress, done, stuck;

static void on_alarm(int sig)
{
    (void)sig;
    write(fds[1], "x", 1);
}

static void *watchdog(void *arg)
{
    (void)arg;
    int last = -1, still = 0;
    while (!done) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (progress == last && ++still == 20) {
            stuck++;
            write(fds[1], "x", 1);
            still = 0;
        } else if (progress != last) {
            still = 0;
        }
        last = progress;
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    pipe(fds);

    pthread_t t;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);     /* the watchdog never takes SIGALRM */
    pthread_create(&t, NULL, watchdog, NULL);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);

    int got = 0;
    for (int i = 0; i < ROUNDS; i++) {
        struct itimerval it = { { 0, 0 }, { 0, 1 + i % 40 } };
        char c;
        setitimer(ITIMER_REAL, &it, NULL);
        if (read(fds[0], &c, 1) == 1)
            got++;
        progress = i;
    }
    done = 1;
    pthread_join(t, NULL);
    printf("reads: %d of %d, stuck: %d\n", got, ROUNDS, stuck);
    return 0;
}
