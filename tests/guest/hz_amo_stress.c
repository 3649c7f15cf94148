/*
 * Hazard: LR/SC and AMOs between threads. Four threads each do ROUNDS
 * increments of shared counters with amoadd.w, amoadd.d, an lr.d/sc.d
 * retry loop, an lr.w/sc.w loop on a 32-bit half next to a word another
 * thread changes with amoxor.w, and a plain counter under an amoswap.w
 * spinlock; amomaxu.d tracks the largest thread-local sequence number.
 * Every count must be exact at the end.
 */
// xlat-cflags: -pthread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS  200000

static volatile uint32_t c_w;
static volatile uint64_t c_d, c_lr, c_plain, c_max;
static volatile uint32_t pair[2] __attribute__((aligned(8)));   /* [0] lr/sc, [1] amoxor */
static volatile uint32_t lock;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (uint64_t i = 1; i <= ROUNDS; i++) {
        uint64_t old, tmp;
        __asm__ volatile("amoadd.w zero, %1, (%0)" : : "r"(&c_w), "r"(1) : "memory");
        __asm__ volatile("amoadd.d.aqrl zero, %1, (%0)" : : "r"(&c_d), "r"(1) : "memory");
        __asm__ volatile("1: lr.d %0, (%2)\n addi %1, %0, 1\n sc.d %1, %1, (%2)\n bnez %1, 1b"
                         : "=&r"(old), "=&r"(tmp) : "r"(&c_lr) : "memory");
        __asm__ volatile("1: lr.w.aq %0, (%2)\n addiw %1, %0, 1\n sc.w.rl %1, %1, (%2)\n bnez %1, 1b"
                         : "=&r"(old), "=&r"(tmp) : "r"(&pair[0]) : "memory");
        __asm__ volatile("amoxor.w zero, %1, (%0)" : : "r"(&pair[1]), "r"(1u << t) : "memory");
        __asm__ volatile("amomaxu.d zero, %1, (%0)" : : "r"(&c_max), "r"(i * THREADS + (uint64_t)t) : "memory");
        /* spinlock: amoswap.w.aq to take, amoswap.w.rl to release */
        uint32_t got;
        do
            __asm__ volatile("amoswap.w.aq %0, %1, (%2)" : "=r"(got) : "r"(1), "r"(&lock) : "memory");
        while (got);
        c_plain = c_plain + 1;
        __asm__ volatile("amoswap.w.rl zero, zero, (%0)" : : "r"(&lock) : "memory");
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    uint64_t n = (uint64_t)THREADS * ROUNDS;
    printf("amoadd.w %u amoadd.d %llu lr/sc.d %llu lr/sc.w %u plain %llu (expect %llu)\n", c_w,
           (unsigned long long)c_d, (unsigned long long)c_lr, pair[0],
           (unsigned long long)c_plain, (unsigned long long)n);
    /* ROUNDS is even: each thread's bit was flipped an even number of times. */
    printf("amoxor.w %#x amomaxu.d %llu (expect %llu)\n", pair[1], (unsigned long long)c_max,
           (unsigned long long)(ROUNDS * THREADS + THREADS - 1));
    int ok = c_w == n && c_d == n && c_lr == n && pair[0] == n && c_plain == n && pair[1] == 0 &&
             c_max == (uint64_t)ROUNDS * THREADS + THREADS - 1;
    printf("%s\n", ok ? "all exact" : "MISMATCH");
    return !ok;
}
