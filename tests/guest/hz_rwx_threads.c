/*
 * Hazard: many threads executing and rewriting code in a shared set of RWX
 * pages (each thread its own slot in every page, fence.i via
 * __builtin___clear_cache after each write), while another thread
 * mprotects those pages (non-executable and back) and munmaps/mmaps them
 * at the same address. Each executor checks that the code it just wrote
 * returns the value it wrote it to return: a stale translation would
 * return an older one. A per-page rwlock keeps the remapper out of a page
 * while someone writes or runs it (so no fault is expected), but the
 * JIT's invalidation must see every change.
 */
// xlat-cflags: -pthread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define PAGES    8
#define THREADS  4
#define ROUNDS   3000
#define PAGE     4096

static uint8_t *pages;
static pthread_rwlock_t locks[PAGES];
static volatile int stale, faults, stop;

/* li a0, v (lui + addiw) ; ret */
static void write_fn(uint32_t *p, int32_t v)
{
    uint32_t hi = ((uint32_t)v + 0x800) & 0xfffff000u;
    int32_t lo = v - (int32_t)hi;
    p[0] = hi | (10 << 7) | 0x37;
    p[1] = ((uint32_t)(lo & 0xfff) << 20) | (10 << 15) | (10 << 7) | 0x1b;
    p[2] = 0x00008067u;
}

static void *executor(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint32_t seed = 12345u + (uint32_t)t;
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        int p = (int)(seed >> 16) % PAGES;
        int32_t v = (int32_t)(seed ^ (uint32_t)i) >> 1;
        uint32_t *slot = (uint32_t *)(pages + p * PAGE + t * 64 + (i % 2) * 2048);
        pthread_rwlock_rdlock(&locks[p]);
        write_fn(slot, v);
        __builtin___clear_cache((char *)slot, (char *)(slot + 3));
        long r = ((long (*)(void))(uintptr_t)slot)();
        pthread_rwlock_unlock(&locks[p]);
        if (r != v)
            stale++;
    }
    return NULL;
}

static void *remapper(void *arg)
{
    (void)arg;
    for (int i = 0; !stop; i++) {
        int p = i % PAGES;
        uint8_t *a = pages + p * PAGE;
        pthread_rwlock_wrlock(&locks[p]);
        if (i % 3 == 0) {
            munmap(a, PAGE);
            if (mmap(a, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != a)
                faults++;
        } else {
            mprotect(a, PAGE, i % 3 == 1 ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC);
            mprotect(a, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
        }
        pthread_rwlock_unlock(&locks[p]);
    }
    return NULL;
}

int main(void)
{
    pages = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
        return 1;
    for (int p = 0; p < PAGES; p++)
        pthread_rwlock_init(&locks[p], NULL);
    pthread_t ex[THREADS], rm;
    pthread_create(&rm, NULL, remapper, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&ex[t], NULL, executor, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(ex[t], NULL);
    stop = 1;
    pthread_join(rm, NULL);
    printf("rwx threads: %d executors x %d rounds, stale results %d, remap failures %d\n",
           THREADS, ROUNDS, stale, faults);
    return stale || faults;
}
