/*
 * bench/system's in-guest system call workload (a static riscv64 Linux
 * program, built at bench time and added to the guest's initramfs): a
 * loop of getppid() calls (the cheapest system call: a trap into the
 * kernel and back) and fork + exec + wait of busybox true, timed with
 * CLOCK_MONOTONIC inside the guest. Prints
 *   getppid N NS
 *   fork-exec N NS
 * (N calls or processes in NS nanoseconds of the guest's clock).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    long procs = argc > 2 ? atol(argv[2]) : 1000;
    long long t0 = now_ns();
    long sum = 0;
    for (long i = 0; i < calls; i++)
        sum += syscall(SYS_getppid);
    long long t1 = now_ns();
    printf("getppid %ld %lld\n", calls, t1 - t0);
    t0 = now_ns();
    for (long i = 0; i < procs; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("/bin/busybox", "true", (char *)NULL);
            _exit(127);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            printf("fork-exec failed at %ld\n", i);
            return 1;
        }
    }
    t1 = now_ns();
    printf("fork-exec %ld %lld\n", procs, t1 - t0);
    return sum == 0;            /* getppid is never 0 here: keeps the loop */
}
