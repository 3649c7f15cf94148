/*
 * Hazard: one thread forks over and over while another keeps running code
 * it has just written (so the translator keeps translating) and a third
 * maps and unmaps memory. xlat's fork handlers take its locks in the order
 * the translator and the mapping code take them; in the wrong order a fork
 * and a translation deadlock (the test then hangs until the runner's
 * timeout). The children run a little code and exit with a known status.
 * Self-checking (tests/hazard.sh): qemu-riscv64 7.2 itself deadlocks here.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKS 150
#define SLOTS 512

static volatile int done;
static uint32_t *code;

/* li a0, v; ret  at slot i, then call it */
static long run_fresh(int i, int v)
{
    uint32_t *f = code + 2 * (i % SLOTS);
    f[0] = ((uint32_t)(v & 0x7ff) << 20) | (10 << 7) | 0x13;
    f[1] = 0x00008067;
    __builtin___clear_cache((char *)f, (char *)(f + 2));
    return ((long (*)(void))(uintptr_t)f)();
}

static void *translator(void *arg)
{
    (void)arg;
    long sum = 0;
    for (int i = 0; !done; i++)
        sum += run_fresh(i, i & 0x3ff);
    return (void *)sum;
}

static void *mapper(void *arg)
{
    (void)arg;
    while (!done) {
        void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED)
            munmap(p, 65536);
    }
    return NULL;
}

static void *forker(void *arg)
{
    (void)arg;
    long bad = 0;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit((int)(run_fresh(SLOTS - 1, 7) + 30));      /* 37 */
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 37)
            bad++;
    }
    return (void *)bad;
}

int main(void)
{
    code = mmap(NULL, 8 * SLOTS, PROT_READ | PROT_WRITE | PROT_EXEC,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 1;
    pthread_t tr, mp, fk;
    pthread_create(&tr, NULL, translator, NULL);
    pthread_create(&mp, NULL, mapper, NULL);
    pthread_create(&fk, NULL, forker, NULL);
    void *bad, *sum;
    pthread_join(fk, &bad);
    done = 1;
    pthread_join(tr, &sum);
    pthread_join(mp, NULL);
    printf("%d forks beside translation and mmap: %ld bad children, translator %s\n", FORKS,
           (long)bad, (long)sum >= 0 ? "ok" : "wrong");
    if (bad == 0 && (long)sum >= 0)
        printf("ALL OK\n");
    return bad != 0;
}
