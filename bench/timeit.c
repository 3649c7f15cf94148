/*
 * timeit: run one command REPEAT times and report its wall time, peak RSS
 * and exit status, for bench/run.
 *
 *   timeit [--fresh-dir VAR BASE] TIMEOUT_S REPEAT STDIN STDOUT STDERR -- PROG ARGS...
 *
 * Prints one line on its own stdout:
 *   ok SECONDS MAXRSS_KB | exit CODE SECONDS MAXRSS_KB |
 *   signal SIG SECONDS MAXRSS_KB | timeout SECONDS MAXRSS_KB
 *
 * Why a C helper rather than timing from Python: a forked child inherits
 * its parent's RSS high-water mark, which the kernel folds into ru_maxrss at
 * execve, so a child of the ~20 MB Python harness would never report less
 * than ~20 MB. This process is tiny, and it loops over the repetitions
 * itself so the startup-latency workload measures no interpreter overhead.
 *
 * Each child runs in its own process group; on timeout the whole group is
 * killed (a workload may fork). STDOUT is appended to across repetitions,
 * STDERR keeps the last repetition's messages.
 *
 * --fresh-dir VAR BASE: every repetition gets a new empty directory
 * BASE/N in the environment variable VAR, removed after it (both outside
 * the timed part), e.g. XLAT_CACHE_DIR for xlat with a cold translation
 * cache on every start (bench/run's xlat-cold runner).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;
static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
    (void)sig;
    timed_out = 1;
    if (child > 0)
        kill(-child, SIGKILL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return fd;
}

/* Fork and exec argv with the given stdio; return the pid. */
static pid_t spawn(char **argv, int in, int out, int err)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("timeit: fork");
        exit(2);
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], argv);
        fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so killpg works at once */
    return pid;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* A new empty directory BASE/i in VAR, for repetition i. */
static void fresh_dir(const char *var, const char *base, int i, char *path, size_t size)
{
    snprintf(path, size, "%s/%d", base, i);
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(path, 0700) != 0) {
        fprintf(stderr, "timeit: mkdir %s: %s\n", path, strerror(errno));
        exit(2);
    }
    setenv(var, path, 1);
}

int main(int argc, char **argv)
{
    const char *fresh_var = NULL, *fresh_base = NULL;
    char fresh_path[4096];
    if (argc > 3 && strcmp(argv[1], "--fresh-dir") == 0) {
        fresh_var = argv[2];
        fresh_base = argv[3];
        argc -= 3;
        argv += 3;
    }
    if (argc < 8 || strcmp(argv[6], "--") != 0) {
        fprintf(stderr, "usage: timeit [--fresh-dir VAR BASE] TIMEOUT_S REPEAT STDIN STDOUT STDERR"
                        " -- PROG ARGS...\n");
        return 2;
    }
    double timeout = atof(argv[1]);
    int repeat = atoi(argv[2]);
    int in = open_or_die(argv[3], O_RDONLY);
    int out = open_or_die(argv[4], O_WRONLY | O_CREAT | O_APPEND);
    char **cmd = &argv[7];

    struct sigaction sa = { .sa_handler = on_alarm };
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { .it_value = { (time_t)timeout,
                                          (suseconds_t)((timeout - (time_t)timeout) * 1e6) } };
    setitimer(ITIMER_REAL, &it, NULL);

    double total = 0;
    long maxrss = 0;
    for (int i = 0; i < repeat && !timed_out; i++) {
        int err = open_or_die(argv[5], O_WRONLY | O_CREAT | O_TRUNC);
        lseek(in, 0, SEEK_SET);
        if (fresh_var)
            fresh_dir(fresh_var, fresh_base, i, fresh_path, sizeof fresh_path);
        double t0 = now();
        child = spawn(cmd, in, out, err);
        int status;
        struct rusage ru;
        while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR)
            ;
        total += now() - t0;
        close(err);
        if (fresh_var)
            nftw(fresh_path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        if (ru.ru_maxrss > maxrss)
            maxrss = ru.ru_maxrss;
        if (timed_out)
            break;
        if (WIFSIGNALED(status)) {
            printf("signal %d %.6f %ld\n", WTERMSIG(status), total, maxrss);
            return 0;
        }
        if (WEXITSTATUS(status) != 0) {
            printf("exit %d %.6f %ld\n", WEXITSTATUS(status), total, maxrss);
            return 0;
        }
    }
    /* The timer may also fire between two repetitions. */
    printf("%s %.6f %ld\n", timed_out ? "timeout" : "ok", total, maxrss);
    return 0;
}
