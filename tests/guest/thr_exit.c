/*
 * Thread exits: the main thread calls pthread_exit while other threads run
 * (the process lives on; a thread can join the main thread, whose tid the
 * kernel clears); exit() from a non-main thread ends the whole process
 * with its status while the main thread is blocked; a thread ending with
 * the raw exit syscall leaves the others running. Each scenario runs in
 * its own forked process; the parent reports how each ended.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_t main_thread;

static void *join_main_then_exit(void *arg)
{
    (void)arg;
    pthread_join(main_thread, NULL);   /* returns once main's thread is gone */
    printf("  worker: main thread has exited; exiting with 3\n");
    fflush(stdout);
    exit(3);
}

static void scenario_main_pthread_exit(void)
{
    pthread_t t;
    main_thread = pthread_self();
    pthread_create(&t, NULL, join_main_then_exit, NULL);
    printf("  main: pthread_exit\n");
    fflush(stdout);
    pthread_exit(NULL);
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    usleep(20000);
    printf("  worker: exit(5) while main waits\n");
    fflush(stdout);
    exit(5);
}

static void scenario_exit_in_thread(void)
{
    pthread_t t;
    pthread_create(&t, NULL, exit_from_thread, NULL);
    pthread_join(t, NULL);             /* never returns */
    printf("  main: join returned?\n");
    exit(99);
}

static volatile int raw_exited;

static void *raw_exit(void *arg)
{
    (void)arg;
    raw_exited = 1;
    syscall(SYS_exit, 77);             /* this thread only: no cleanup, no join */
    return NULL;
}

static void scenario_raw_thread_exit(void)
{
    pthread_t t;
    pthread_create(&t, NULL, raw_exit, NULL);
    while (!raw_exited)
        usleep(1000);
    usleep(20000);
    printf("  main: still running after a thread's raw exit\n");
    fflush(stdout);
    exit(6);
}

/* Every thread calls pthread_exit: the last one out ends the process, status 0. */
static void *short_worker(void *arg)
{
    usleep((useconds_t)(long)arg * 5000);
    return NULL;
}

static void scenario_all_pthread_exit(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, short_worker, (void *)i);
    pthread_exit(NULL);
}

static void run(const char *name, void (*fn)(void))
{
    printf("%s:\n", name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(100);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st))
        printf("  -> exit status %d\n", WEXITSTATUS(st));
    else
        printf("  -> signal %d\n", WTERMSIG(st));
}

int main(void)
{
    run("main thread pthread_exit", scenario_main_pthread_exit);
    run("exit() in a thread", scenario_exit_in_thread);
    run("raw exit of one thread", scenario_raw_thread_exit);
    run("every thread pthread_exit", scenario_all_pthread_exit);
    return 0;
}
