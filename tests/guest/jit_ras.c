/*
 * Calls and returns that do not pair up, for xlat's return-address stack
 * (guest calls and returns become host call/ret; every landing checks the
 * guest's real target). Each case prints a result that is wrong if a
 * return went to the predicted place instead of the real one:
 *   - recursion far deeper than the host-side stack (it starts over), also
 *     in a thread, whose host stack could not hold one entry per call,
 *   - longjmp out of deep recursion, many times (stale entries left),
 *   - a callee that returns somewhere else than after its call,
 *   - a return with nothing pushed (into a thread's start routine and out),
 *   - coroutines with swapcontext (returns cross stacks),
 *   - a signal handler that siglongjmps out of a recursion.
 */
// xlat-cflags: -pthread
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>
#include <unistd.h>

static __attribute__((noinline)) uint64_t deep(uint64_t n)
{
    if (n == 0)
        return 1;
    uint64_t r = deep(n - 1);
    __asm__ volatile("" : "+r"(r));
    return r * 3 + n;
}

static jmp_buf jb;
static __attribute__((noinline)) void dive(int n)
{
    if (n == 0)
        longjmp(jb, 1);
    dive(n - 1);
    __asm__ volatile("");
}

/* Returns to alt_ret instead of to its caller: the caller's landing must
 * notice (a5 says which path ran). */
uint64_t elsewhere(void);
__asm__(".text\n"
        ".globl elsewhere\n"
        "elsewhere:\n"
        "  mv t0, ra\n"
        "  la ra, 1f\n"             /* return to 1f, not after the call */
        "  li a5, 7\n"
        "  ret\n"
        "1:\n"
        "  addi a5, a5, 100\n"      /* 107: the real return path */
        "  mv a0, a5\n"
        "  mv ra, t0\n"
        "  ret\n");
static __attribute__((noinline)) uint64_t call_elsewhere(void)
{
    uint64_t r;
    __asm__ volatile("addi sp, sp, -16\n\t"
                     "sd ra, 8(sp)\n\t"
                     "call elsewhere\n\t"
                     "ld ra, 8(sp)\n\t"
                     "addi sp, sp, 16\n\t"
                     "mv %0, a0"
                     : "=r"(r) : : "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1",
                       "t2", "t3", "t4", "t5", "t6", "memory");
    return r;
}

static void *thread_fn(void *arg)
{
    return (void *)(deep((uintptr_t)arg) & 0xffff);
}

static ucontext_t main_ctx, co_ctx;
static char co_stack[65536];
static volatile int co_steps;
static void co_body(void)
{
    for (int i = 0; i < 1000; i++) {
        co_steps += (int)(deep(i % 50) & 1) + 1;
        swapcontext(&co_ctx, &main_ctx);
    }
}

static sigjmp_buf sjb;
static volatile int depth_at_signal;
static void on_alarm(int sig)
{
    (void)sig;
    siglongjmp(sjb, 1);
}
static __attribute__((noinline)) void spin_deep(int n)
{
    depth_at_signal = n;
    if (n > 0) {
        spin_deep(n - 1);
        return;
    }
    for (;;)
        __asm__ volatile("");
}

int main(void)
{
    printf("deep recursion: %llu\n", (unsigned long long)deep(200000));

    int jumps = 0;
    for (int i = 0; i < 2000; i++) {
        if (setjmp(jb) == 0)
            dive(10 + i % 3000);
        else
            jumps++;
    }
    printf("longjmp out of recursion: %d\n", jumps);

    uint64_t sum = 0;
    for (int i = 0; i < 10000; i++)
        sum += call_elsewhere();
    printf("returns elsewhere: %llu\n", (unsigned long long)sum);

    /* Thread 0 recurses 500000 deep on a 64 MiB guest stack: more than
     * xlat's host thread stack could hold one entry per guest call. */
    pthread_t th[4];
    pthread_attr_t big;
    pthread_attr_init(&big);
    pthread_attr_setstacksize(&big, 64 << 20);
    uint64_t tsum = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], i == 0 ? &big : NULL, thread_fn,
                       (void *)(uintptr_t)(i == 0 ? 500000 : 1000 * (i + 1)));
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        tsum += (uintptr_t)r;
    }
    printf("threads: %llu\n", (unsigned long long)tsum);

    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = co_stack;
    co_ctx.uc_stack.ss_size = sizeof co_stack;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, co_body, 0);
    for (int i = 0; i < 1000; i++)
        swapcontext(&main_ctx, &co_ctx);
    printf("coroutine steps: %d\n", co_steps);

    signal(SIGALRM, on_alarm);
    int escapes = 0;
    for (int i = 0; i < 3; i++) {
        if (sigsetjmp(sjb, 1) == 0) {
            ualarm(20000, 0);
            spin_deep(500 * (i + 1));
        } else {
            escapes++;
        }
    }
    printf("signal escapes: %d, then deep again: %llu\n", escapes,
           (unsigned long long)(deep(3000) & 0xffffff));
    return 0;
}
