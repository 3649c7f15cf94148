/*
 * pidfd_open, pidfd_send_signal and pidfd_getfd: a pidfd polls readable
 * when its child exits, waitid(P_PIDFD) reaps through it (and fails with
 * EAGAIN on a PIDFD_NONBLOCK pidfd of a running child), a signal with a
 * siginfo (SI_QUEUE and a value) sent to ourselves, killing a child, and
 * taking a pipe end from a child. Errors: ESRCH, EBADF, EINVAL, EFAULT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static int pidfd_open(pid_t pid, unsigned flags) { return syscall(SYS_pidfd_open, pid, flags); }

static int pidfd_send_signal(int fd, int sig, siginfo_t *info, unsigned flags)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static int pidfd_getfd(int fd, int target, unsigned flags)
{
    return syscall(SYS_pidfd_getfd, fd, target, flags);
}

static int readable(int fd, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int r = poll(&p, 1, ms);
    return r < 0 ? -errno : r ? p.revents : 0;
}

static void show_waitid(const char *what, int fd, int options)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    long r = waitid(P_PIDFD, fd, &si, options);
    if (r < 0)
        printf("%s: -1 errno=%d\n", what, errno);
    else
        printf("%s: 0 signo %d code %d status %d\n", what, si.si_signo, si.si_code, si.si_status);
}

/* Exit when the parent writes to the pipe. */
static pid_t child_waiting(int *gate)
{
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (c == 0) {
        char b;
        close(p[1]);
        _exit(read(p[0], &b, 1) == 1 ? 7 : 8);
    }
    close(p[0]);
    *gate = p[1];
    return c;
}

static void test_exit(void)
{
    int gate;
    pid_t c = child_waiting(&gate);
    int fd = pidfd_open(c, 0);
    printf("pidfd_open ok %d cloexec %d\n", fd >= 0, (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    printf("readable before exit %d\n", readable(fd, 0));
    int nb = pidfd_open(c, PIDFD_NONBLOCK);
    show_waitid("waitid nonblock running", nb, WEXITED);
    show_waitid("waitid WNOHANG running", fd, WEXITED | WNOHANG);
    write(gate, "x", 1);
    printf("readable after exit %#x\n", readable(fd, 5000));
    show_waitid("waitid exited", fd, WEXITED);
    show_waitid("waitid again", fd, WEXITED);
    close(nb);
    close(fd);
    close(gate);
}

static void test_kill(void)
{
    int gate;
    pid_t c = child_waiting(&gate);
    int fd = pidfd_open(c, 0);
    check("pidfd_send_signal bad flags", pidfd_send_signal(fd, SIGTERM, NULL, 0x80));
    check("pidfd_send_signal bad info", pidfd_send_signal(fd, SIGTERM, bad_ptr, 0));
    check("pidfd_send_signal 0", pidfd_send_signal(fd, 0, NULL, 0));
    check("pidfd_send_signal SIGTERM", pidfd_send_signal(fd, SIGTERM, NULL, 0));
    printf("readable %#x\n", readable(fd, 5000));
    show_waitid("waitid killed", fd, WEXITED);
    check("signal a reaped child", pidfd_send_signal(fd, SIGTERM, NULL, 0));
    close(fd);
    close(gate);
}

static volatile int got_sig, got_code, got_value, got_pid_ok;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_sig = sig;
    got_code = si->si_code;
    got_value = si->si_value.sival_int;
    got_pid_ok = si->si_pid == getpid();
}

static void test_self(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    int fd = pidfd_open(getpid(), 0);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGUSR1;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = 1234;
    check("send self with info", pidfd_send_signal(fd, SIGUSR1, &si, 0));
    printf("got sig %d code %d value %d pid ok %d\n", got_sig, got_code, got_value, got_pid_ok);
    got_sig = 0;
    check("send self no info", pidfd_send_signal(fd, SIGUSR1, NULL, 0));
    printf("got sig %d code %d pid ok %d\n", got_sig, got_code, got_pid_ok);
    si.si_signo = SIGUSR2;
    check("signo mismatch", pidfd_send_signal(fd, SIGUSR1, &si, 0));
    close(fd);
}

static void test_getfd(void)
{
    int gate, ready[2];
    pipe(ready);
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (c == 0) {
        /* A pipe the parent does not have, on a descriptor it can name. */
        close(p[1]);
        int q[2];
        pipe(q);
        write(q[1], "from the child", 14);
        dup2(q[0], 40);
        close(q[0]);
        write(ready[1], "r", 1);
        char b;
        read(p[0], &b, 1);
        _exit(0);
    }
    close(p[0]);
    gate = p[1];
    char b;
    read(ready[0], &b, 1);
    int fd = pidfd_open(c, 0);
    int got = pidfd_getfd(fd, 40, 0);
    printf("pidfd_getfd ok %d cloexec %d\n", got >= 0, got >= 0 && (fcntl(got, F_GETFD) & FD_CLOEXEC));
    char buf[32] = { 0 };
    if (got >= 0)
        printf("read '%.*s'\n", (int)read(got, buf, sizeof buf), buf);
    check("pidfd_getfd no such fd", pidfd_getfd(fd, 41, 0));
    check("pidfd_getfd flags", pidfd_getfd(fd, 40, 1));
    check("pidfd_getfd not a pidfd", pidfd_getfd(ready[0], 40, 0));
    write(gate, "x", 1);
    show_waitid("waitid getfd child", fd, WEXITED);
    close(fd);
    if (got >= 0)
        close(got);
}

static void test_errors(void)
{
    check("pidfd_open flags", pidfd_open(getpid(), 1));
    check("pidfd_open no such pid", pidfd_open(0x3ffffff0, 0));
    check("pidfd_open pid 0", pidfd_open(0, 0));
    check("pidfd_send_signal bad fd", pidfd_send_signal(999, SIGTERM, NULL, 0));
    check("pidfd_send_signal not a pidfd", pidfd_send_signal(1, SIGTERM, NULL, 0));
    check("waitid P_PIDFD bad fd", waitid(P_PIDFD, 999, &(siginfo_t){ 0 }, WEXITED));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_exit();
    test_kill();
    test_self();
    test_getfd();
    test_errors();
    return 0;
}
