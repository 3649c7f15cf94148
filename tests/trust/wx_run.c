/*
 * Keeps xlat busy for tests/trust.sh's W^X check: translates fresh code in
 * an RWX page over and over (so the code buffer is written and run), from
 * two threads, until stdin is closed or 3 seconds have passed. Prints
 * "wx_run: ok" if every generated function returned what it was written
 * to return.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile int bad;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* addi a0, zero, imm ; ret */
static void write_fn(uint32_t *p, int imm)
{
    p[0] = ((uint32_t)(imm & 0xfff) << 20) | (10 << 7) | 0x13;
    p[1] = 0x00008067u;
}

static void *worker(void *arg)
{
    (void)arg;
    uint32_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        bad = 1;
        return NULL;
    }
    double end = now() + 2.5;
    for (int i = 0; now() < end; i++) {
        int slot = (i % 512) * 2, imm = (i * 7) % 2000;
        write_fn(page + slot, imm);
        __builtin___clear_cache((char *)(page + slot), (char *)(page + slot + 2));
        long (*fn)(void) = (long (*)(void))(uintptr_t)(page + slot);
        if (fn() != imm)
            bad = 1;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("wx_run: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
