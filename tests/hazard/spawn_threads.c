/*
 * Hazard: four threads posix_spawn at once (each clone waits for its
 * vfork child, so the clones overlap) -- half of them programs that do not
 * exist, which the child reports through memory shared with the parent --
 * while another thread maps, unmaps and writes memory. Before xlat took
 * one guest fork at a time, two threads in the fork warm-up together could
 * spin forever on its ring position; a vfork channel inherited by a
 * concurrent fork would keep its parent waiting. Self-checking
 * (tests/hazard.sh): every spawn must end as expected.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define SPAWNS  60

extern char **environ;
static const char *self;
static volatile int stop;
static int bad[THREADS];

static void *spawner(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < SPAWNS; i++) {
        pid_t pid;
        char *argv[] = { (char *)self, "child", NULL };
        int r = posix_spawn(&pid, i % 2 ? "/nonexistent/program" : self, NULL, NULL, argv,
                            environ);
        if (i % 2) {
            bad[id] += r != 2;          /* ENOENT */
            continue;
        }
        int st;
        bad[id] += r != 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
                   WEXITSTATUS(st) != 7;
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    volatile char *buf = malloc(1 << 16);
    while (!stop) {
        char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            memset(p, 1, 1 << 16);
            munmap(p, 1 << 16);
        }
        for (int i = 0; i < 1 << 16; i += 64)
            buf[i]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 1)
        return 7;
    pthread_t t[THREADS], c;
    pthread_create(&c, NULL, churn, NULL);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, spawner, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    stop = 1;
    pthread_join(c, NULL);
    int total = 0;
    for (int i = 0; i < THREADS; i++)
        total += bad[i];
    if (total)
        printf("%d of %d spawns went wrong\n", total, THREADS * SPAWNS);
    else
        printf("ALL OK\n");
    return total != 0;
}
