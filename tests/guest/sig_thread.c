/*
 * Signals between guest threads: pthread_kill (tgkill) reaches the target
 * thread's handler (running on that thread) while it spins in a loop
 * without system calls, and interrupts a blocking read there with EINTR.
 * The mask is per thread: a process-directed signal goes to the thread
 * that does not block it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int stop, handled_tid, ready;
static int pipefd[2];

static void on_usr1(int sig)
{
    (void)sig;
    handled_tid = gettid();
    stop = 1;
}

static volatile pid_t worker_tid;

static void *spinner(void *arg)
{
    (void)arg;
    worker_tid = gettid();
    ready = 1;
    unsigned long n = 0;
    while (!stop)
        n++;
    return (void *)(n > 0 ? 1L : 0L);
}

static void *reader(void *arg)
{
    char c;
    (void)arg;
    worker_tid = gettid();
    ready = 1;
    ssize_t r = read(pipefd[0], &c, 1);
    return (void *)(long)(r < 0 ? errno : 0);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pipe(pipefd);

    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, spinner, NULL);
    while (!ready)
        ;
    pthread_kill(t, SIGUSR1);
    pthread_join(t, &ret);
    printf("spinner: stopped=%d on its thread=%d\n", (int)(long)ret, handled_tid == worker_tid);

    /* The reader blocks in read(); usleep gives it time to get there. */
    ready = 0;
    stop = 0;
    pthread_create(&t, NULL, reader, NULL);
    while (!ready)
        ;
    usleep(50 * 1000);
    pthread_kill(t, SIGUSR1);
    pthread_join(t, &ret);
    printf("reader: %s on its thread=%d\n", strerror((int)(long)ret), handled_tid == worker_tid);

    /* Main blocks SIGUSR1: kill() to the process must reach the worker. */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    ready = 0;
    stop = 0;
    pthread_create(&t, NULL, spinner, NULL);
    while (!ready)
        ;
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    kill(getpid(), SIGUSR1);
    pthread_join(t, &ret);
    printf("process-directed: went to the worker=%d\n", handled_tid == worker_tid);
    return 0;
}
