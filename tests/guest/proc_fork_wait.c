/*
 * fork and wait: exit statuses, deaths by signal (SIGKILL, abort, SIGTERM),
 * wait4 with WNOHANG and rusage, waitid (siginfo fields, WNOWAIT),
 * waitpid(-1) over several children, ECHILD, vfork, memory isolation
 * between parent and child, a pipe between them, a grandchild, and fork
 * from a non-main thread while other threads run (only the forking thread
 * survives in the child).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *what, int st)
{
    if (WIFEXITED(st))
        printf("%-28s exited %d\n", what, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        printf("%-28s killed by signal %d\n", what, WTERMSIG(st));
    else
        printf("%-28s status 0x%x\n", what, st);
}

static pid_t spawn(void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    return pid;
}

static int wait_for(pid_t pid)
{
    int st = -1;
    if (waitpid(pid, &st, 0) != pid)
        printf("waitpid failed: %s\n", strerror(errno));
    return st;
}

static void child_exit42(void)
{
    if (syscall(SYS_gettid) != getpid())
        _exit(1);
    exit(42);
}
static void child_sigkill(void) { kill(getpid(), SIGKILL); pause(); }
static void child_abort(void) { abort(); }
static void child_sigterm(void) { raise(SIGTERM); _exit(1); }

static int shared_value = 1;
static void child_modify(void) { shared_value = 2; _exit(shared_value); }

static void child_grandchild(void)
{
    pid_t g = fork();
    if (g == 0)
        _exit(9);
    int st;
    waitpid(g, &st, 0);
    _exit(WEXITSTATUS(st) + 1);
}

/* -- fork from a thread ------------------------------------------------------ */

static volatile int spinning = 1;
static void *spinner(void *arg)
{
    (void)arg;
    while (spinning)
        ;
    return NULL;
}

static void *child_thread(void *arg)
{
    return (void *)((long)arg * 2);
}

static void *forker(void *arg)
{
    (void)arg;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Only this thread exists here; threads still work in the child. */
        pthread_t t;
        void *r;
        pthread_create(&t, NULL, child_thread, (void *)21);
        pthread_join(t, &r);
        _exit((int)(long)r);
    }
    return (void *)(long)wait_for(pid);
}

int main(void)
{
    report("exit(42)", wait_for(spawn(child_exit42)));
    report("kill(self, SIGKILL)", wait_for(spawn(child_sigkill)));
    report("abort()", wait_for(spawn(child_abort)));
    report("raise(SIGTERM)", wait_for(spawn(child_sigterm)));
    report("child modifies a global", wait_for(spawn(child_modify)));
    printf("parent still sees %d\n", shared_value);
    report("grandchild status + 1", wait_for(spawn(child_grandchild)));

    /* wait4 with WNOHANG while the child waits on a pipe, then rusage. */
    int p[2];
    pipe(p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char buf[16] = { 0 };
        close(p[1]);
        ssize_t n = read(p[0], buf, sizeof buf - 1);
        printf("child read %zd bytes: %s\n", n, buf);
        fflush(stdout);
        _exit(n == 5 ? 11 : 12);
    }
    close(p[0]);
    int st;
    struct rusage ru;
    printf("wait4 WNOHANG: %d\n", (int)wait4(pid, &st, WNOHANG, &ru));
    write(p[1], "hello", 5);
    close(p[1]);
    pid_t r = wait4(pid, &st, 0, &ru);
    printf("wait4 returned the child: %s, utime sane: %s\n", r == pid ? "yes" : "no",
           ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec < 1000000 ? "yes" : "no");
    report("pipe child", st);

    /* waitid: WNOWAIT leaves the child waitable. */
    pid = spawn(child_exit42);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
    printf("waitid WNOWAIT: %d signo %d code %s status %d pid ok %d\n", w, si.si_signo,
           si.si_code == CLD_EXITED ? "CLD_EXITED" : "?", si.si_status, si.si_pid == pid);
    memset(&si, 0, sizeof si);
    w = waitid(P_ALL, 0, &si, WEXITED);
    printf("waitid P_ALL: %d status %d pid ok %d\n", w, si.si_status, si.si_pid == pid);
    pid = spawn(child_sigkill);
    memset(&si, 0, sizeof si);
    waitid(P_PID, (id_t)pid, &si, WEXITED);
    printf("waitid killed: code %s status %d\n", si.si_code == CLD_KILLED ? "CLD_KILLED" : "?",
           si.si_status);

    /* Several children, reaped in any order. */
    int sum = 0;
    for (int i = 1; i <= 5; i++) {
        fflush(stdout);
        if (fork() == 0)
            _exit(i * 10);
    }
    for (int i = 0; i < 5; i++) {
        if (waitpid(-1, &st, 0) < 0)
            printf("waitpid(-1) failed\n");
        sum += WEXITSTATUS(st);
    }
    printf("five children, status sum %d\n", sum);
    errno = 0;
    printf("no children left: %d %s\n", (int)waitpid(-1, &st, 0),
           errno == ECHILD ? "ECHILD" : strerror(errno));

    /* vfork: the parent resumes once the child has exited. */
    fflush(stdout);
    pid = vfork();
    if (pid == 0)
        _exit(4);
    report("vfork child", wait_for(pid));

    /* fork from a non-main thread while another thread spins. */
    pthread_t spin, fk;
    void *res;
    pthread_create(&spin, NULL, spinner, NULL);
    pthread_create(&fk, NULL, forker, NULL);
    pthread_join(fk, &res);
    spinning = 0;
    pthread_join(spin, NULL);
    report("fork from a thread", (int)(long)res);
    return 0;
}
