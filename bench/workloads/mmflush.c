/*
 * bench/system's mm-flush load (issue 20; an ebizzy-like program of ours):
 * THREADS threads of one process, each mapping CHUNK KiB of anonymous
 * memory, writing every page of it and unmapping it, over and over for
 * SECONDS. Every munmap while the others run on other harts is a remote
 * TLB flush of the process's address space (Linux on a PLIC machine: one
 * SBI RFENCE call), so the rate is bound by how fast remote flushes are.
 * A static riscv64 program, built at bench time. Prints
 *   mmflush THREADS ITERATIONS NS
 * (map-touch-unmap rounds of all threads in NS nanoseconds of the guest's
 * CLOCK_MONOTONIC), and exits 1 if a page read back wrong.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static long chunk_pages = 64;
static long long deadline;
static volatile int bad;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker(void *arg)
{
    long rounds = 0;
    (void)arg;
    while (now_ns() < deadline) {
        volatile uint64_t *p = mmap(NULL, (size_t)chunk_pages * 4096, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmflush: mmap");
            exit(1);
        }
        for (long i = 0; i < chunk_pages; i++)
            p[i * 512] = (uint64_t)i + rounds;
        for (long i = 0; i < chunk_pages; i++)
            if (p[i * 512] != (uint64_t)i + rounds)
                bad = 1;
        munmap((void *)p, (size_t)chunk_pages * 4096);
        rounds++;
    }
    return (void *)rounds;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 5;
    if (argc > 3)
        chunk_pages = atol(argv[3]) / 4;
    if (threads < 1 || threads > 64 || seconds <= 0 || chunk_pages < 1) {
        fprintf(stderr, "usage: mmflush [THREADS [SECONDS [CHUNK_KB]]]\n");
        return 2;
    }
    pthread_t t[64];
    long long t0 = now_ns();
    deadline = t0 + (long long)(seconds * 1e9);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL)) {
            perror("mmflush: pthread_create");
            return 1;
        }
    long total = 0;
    for (int i = 0; i < threads; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("mmflush %d %ld %lld\n", threads, total, now_ns() - t0);
    return bad;
}
