/*
 * Signals reach a guest that spins where the JIT does not poll at every
 * block (--tune cycle-poll, poison):
 *  - a loop closed only by an indirect jump (no backward direct edge): its
 *    blocks have no poll; the request must poison the jump cache so the
 *    indirect exit misses (or, with no-poison, the indirect exit polls);
 *    from a timer (setitimer) and from another thread (pthread_kill);
 *  - a cycle of several blocks spanning a page boundary, closed by one
 *    backward direct branch: the poll sits on that edge only;
 *  - a loop closed only by a return to before its call (the callee moves
 *    ra back): returns do not poll, so the return the host stack cannot
 *    pair must end in a (poisoned) probe.
 * Broken, the guest spins forever and the run times out.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int flag;
static void on_sig(int sig) { (void)sig; flag = 1; }

/* Loop until flag: label 1 is reached again only through jr. */
static void spin_indirect(void)
{
    __asm__ volatile("lla t1, 1f\n"
                     "1: lw t0, 0(%0)\n"
                     "bnez t0, 2f\n"
                     "addi t2, t2, 1\n"
                     "jr t1\n"
                     "2:\n" :: "r"(&flag) : "t0", "t1", "t2", "memory");
}

/* Several blocks, the first two across a page end, one backward branch. */
void spin_xpage(volatile int *f);
__asm__(".text\n"
        ".option push\n"
        ".option norvc\n"
        ".balign 4096\n"
        ".skip 4096 - 12\n"
        ".globl spin_xpage\n"
        "spin_xpage:\n"
        "1: lw t0, 0(a0)\n"
        "addi t1, t1, 1\n"
        "j 2f\n"                    /* the page ends after this: 2 is on the next */
        "2: addi t2, t2, 1\n"
        "bnez t0, 3f\n"
        "addi t1, t1, -1\n"
        "j 4f\n"
        "3: ret\n"
        "4: addi t2, t2, -1\n"
        "beqz t0, 1b\n"
        "ret\n"
        ".option pop\n");

/* Loop until *a0: label 1 is reached again only through back's ret. */
void spin_ret_back(volatile int *f);
__asm__(".text\n"
        ".option push\n"
        ".option norvc\n"
        ".globl spin_ret_back\n"
        "spin_ret_back:\n"
        "addi sp, sp, -16\n"
        "sd ra, 8(sp)\n"
        "1: lw t0, 0(a0)\n"
        "bnez t0, 2f\n"
        "jal ra, back\n"           /* ra = 1b + 12 */
        "2: ld ra, 8(sp)\n"
        "addi sp, sp, 16\n"
        "ret\n"
        "back: addi t2, t2, 1\n"
        "addi ra, ra, -12\n"
        "ret\n"
        ".option pop\n");

static void *kicker(void *arg)
{
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    pthread_kill(*(pthread_t *)arg, SIGUSR1);
    return NULL;
}

static void timer(int usec)
{
    struct itimerval it = { { 0, 0 }, { 0, usec } };
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Run spin until a signal sets flag: once from a timer, once from another thread. */
static void both_ways(void (*spin)(volatile int *), const char *what)
{
    pthread_t self = pthread_self(), th;
    flag = 0;
    timer(30000);
    spin(&flag);
    printf("%s saw the timer: %d\n", what, flag);

    flag = 0;
    pthread_create(&th, NULL, kicker, &self);
    spin(&flag);
    pthread_join(th, NULL);
    printf("%s saw pthread_kill: %d\n", what, flag);
}

static void spin_indirect_flag(volatile int *f) { (void)f; spin_indirect(); }

int main(void)
{
    signal(SIGALRM, on_sig);
    signal(SIGUSR1, on_sig);
    both_ways(spin_indirect_flag, "indirect loop");
    both_ways(spin_xpage, "cross-page cycle");
    both_ways(spin_ret_back, "loop through a return");
    return 0;
}
