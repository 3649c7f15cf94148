/*
 * A spin loop whose backward branch is not the last instruction of its
 * block: xlat's blocks go on past conditional branches (the taken side is a
 * side exit), so the loop closes through a side exit. It must still poll
 * for signals: a timer's handler sets the flag the loop waits for. Also
 * checks that the instructions after the side exit run when it is not
 * taken (t2 counts them).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>

static volatile int ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

/* Spin until *flag != 0; return how often the code after the branch ran. */
static __attribute__((noinline)) uint64_t spin(volatile int *flag, int want)
{
    uint64_t after = 0;
    __asm__ volatile("1:\n\t"
                     "lw t1, 0(%1)\n\t"
                     "blt t1, %2, 1b\n\t"      /* side exit: back to 1 */
                     "addi %0, %0, 1\n\t"      /* the rest of the block */
                     "addi t1, t1, -1\n\t"
                     "blt t1, %2, 2f\n\t"
                     "2:\n"
                     : "+r"(after) : "r"(flag), "r"(want) : "t1", "memory");
    return after;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval it = { .it_interval = { 0, 20000 }, .it_value = { 0, 20000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    uint64_t after = 0;
    for (int want = 1; want <= 5; want++)
        after += spin(&ticks, want);
    it.it_value.tv_usec = 0;
    it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    printf("left the loop 5 times, %s\n", after == 5 ? "code after it ran each time" : "WRONG");
    return 0;
}
