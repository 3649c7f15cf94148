/*
 * execve/execveat as the kernel does them: argv and envp passed on (argv[0]
 * preserved, argc 0 becomes [""]), #! scripts (the interpreter line's
 * parsing, nesting up to the limit, ELOOP beyond), errors (ENOENT, EACCES,
 * ENOEXEC, ENOTDIR), close-on-exec, fexecve, execveat relative to a
 * directory fd, exec from a non-main thread, a large argv, and exit
 * statuses / deaths of the new image.
 *
 * Reference: this same program built for the host (tests/native.sh), since
 * qemu-riscv64 cannot execve a riscv64 program without binfmt_misc. The
 * program's own path (argv[0] of the first run) is printed as SELF.
 *
 * "try PATH": execve PATH and print the errno (tests/native.sh: a host ELF
 * is ENOEXEC under xlat, a riscv64 ELF with a missing interpreter ENOENT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char self[4096];

static const char *errname(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ENOEXEC: return "ENOEXEC";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    case EFAULT: return "EFAULT";
    case E2BIG: return "E2BIG";
    default: return strerror(e);
    }
}

/* -- The exec'd side (XMODE set) ------------------------------------------------ */

static const char *show_path(const char *s)
{
    const char *me = getenv("XSELF");
    return me && !strcmp(s, me) ? "SELF" : s;
}

static int child_main(const char *mode, int argc, char **argv)
{
    if (!strcmp(mode, "abort"))
        abort();
    printf("  argc=%d", argc);
    if (argc > 8) {
        unsigned long sum = 0;
        for (int i = 0; i < argc; i++)
            for (const char *p = argv[i]; *p; p++)
                sum = sum * 31 + (unsigned char)*p;
        printf(" checksum=%lx\n", sum);
    } else {
        for (int i = 0; i < argc; i++)
            printf(" [%s]", show_path(argv[i]));
        putchar('\n');
    }
    const char *vars[] = { "XTEST", "LD_XLAT_TEST", "QEMU_XLAT_TEST", NULL };
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i]))
            printf("  %s=%s\n", vars[i], getenv(vars[i]));
    const char *fds = getenv("XFDS");
    for (const char *p = fds; p && *p;) {
        int fd = atoi(p);
        printf("  fd %d %s\n", fd, fcntl(fd, F_GETFD) < 0 ? "closed" : "open");
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    printf("  tid==pid: %s\n", syscall(SYS_gettid) == getpid() ? "yes" : "no");
    fflush(stdout);
    return getenv("XEXIT") ? atoi(getenv("XEXIT")) : 0;
}

/* -- The driver ---------------------------------------------------------------- */

static char *env_show[] = { "XMODE=show", NULL, "XTEST=42", "LD_XLAT_TEST=ld", "QEMU_XLAT_TEST=q",
                            "XEXIT=7", NULL };

static void report(int st)
{
    if (WIFEXITED(st))
        printf("  -> exit %d\n", WEXITSTATUS(st));
    else
        printf("  -> signal %d\n", WTERMSIG(st));
}

/* fork; the child execs `path` (errors are printed); the parent reports. */
static void run(const char *title, const char *path, char **argv, char **envp)
{
    printf("%s\n", title);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execve(path, argv, envp);
        printf("  execve: %s\n", errname(errno));
        fflush(stdout);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    report(st);
}

static void expect_error(const char *path)
{
    char *argv[] = { "x", NULL };
    errno = 0;
    execve(path, argv, environ);
    printf("execve %-16s %s\n", path, errname(errno));
}

static void write_file(const char *name, const char *text, mode_t mode)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        printf("cannot write %s\n", name);
    close(fd);
    chmod(name, mode);
}

static void *thread_exec(void *arg)
{
    char *argv[] = { "from-thread", NULL };
    execve(self, argv, arg);
    printf("  execve: %s\n", errname(errno));
    _exit(127);
}

static void scripts(void)
{
    char line[4200];
    char *argv[] = { "ignored", "x1", NULL };
    snprintf(line, sizeof line, "#!%s iarg\n", self);
    write_file("s1.sh", line, 0755);
    write_file("s2.sh", "#!./s1.sh\n", 0755);
    snprintf(line, sizeof line, "#!  %s   two  words \t\necho not run\n", self);
    write_file("s3.sh", line, 0755);
    snprintf(line, sizeof line, "#!%s", self);          /* no newline at all */
    write_file("s4.sh", line, 0755);
    run("script with an argument", "./s1.sh", argv, env_show);
    run("script whose interpreter is a script", "./s2.sh", argv, env_show);
    run("script line with blanks", "./s3.sh", argv, env_show);
    run("script without a newline", "./s4.sh", argv, env_show);

    /* Nesting: 5 scripts deep works, 6 is ELOOP. */
    for (int i = 1; i <= 6; i++) {
        char name[16], text[32];
        snprintf(name, sizeof name, "n%d.sh", i);
        snprintf(text, sizeof text, "#!./n%d.sh\n", i - 1);
        write_file(name, i == 1 ? "#!./s4.sh\n" : text, 0755);
    }
    run("5 nested interpreters", "./n4.sh", argv, env_show);
    run("6 nested interpreters", "./n5.sh", argv, env_show);
}

static void errors(void)
{
    write_file("noexec.sh", "#!/bin/sh\n", 0644);
    write_file("garbage", "hello world\n", 0755);
    write_file("badinterp.sh", "#!/nonexistent/interp\n", 0755);
    write_file("empty.sh", "#!\n", 0755);
    write_file("blank.sh", "#!   \t \n", 0755);
    write_file("empty", "", 0755);
    mkdir("dir", 0755);
    expect_error("./missing");
    expect_error("./noexec.sh");
    expect_error("dir");
    expect_error("./garbage");
    expect_error("./garbage/x");
    expect_error("./badinterp.sh");
    expect_error("./empty.sh");
    expect_error("./blank.sh");
    expect_error("./empty");
    errno = 0;
    syscall(SYS_execve, "./missing", (char **)1, environ);
    printf("execve bad argv pointer  %s\n", errname(errno));
}

int main(int argc, char **argv)
{
    const char *mode = getenv("XMODE");
    if (mode)
        return child_main(mode, argc, argv);
    if (argc == 3 && !strcmp(argv[1], "try")) {
        expect_error(argv[2]);
        return 0;
    }
    snprintf(self, sizeof self, "%s", argv[0]);
    static char xself[4200];
    snprintf(xself, sizeof xself, "XSELF=%s", self);
    env_show[1] = xself;
    setvbuf(stdout, NULL, _IOLBF, 0);

    char *av[] = { "renamed", "a b", "", "c", NULL };
    run("exec self with arguments", self, av, env_show);
    char *none[] = { NULL };
    run("exec self with argc 0", self, none, env_show);

    char *abort_env[] = { "XMODE=abort", NULL };
    run("exec self, then abort", self, av, abort_env);

    /* Close-on-exec. */
    int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int b = open("/dev/null", O_RDONLY);
    char fds[64];
    snprintf(fds, sizeof fds, "XFDS=%d,%d", a, b);
    char *fd_env[] = { "XMODE=show", xself, fds, NULL };
    char *fd_argv[] = { "fds", NULL };
    run("close-on-exec", self, fd_argv, fd_env);
    close(a);
    close(b);

    /* fexecve and execveat relative to a directory. */
    printf("fexecve\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(self, O_RDONLY);
        char *fav[] = { "fexec", "arg", NULL };
        fexecve(fd, fav, env_show);
        printf("  fexecve: %s\n", errname(errno));
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    report(st);

    scripts();
    printf("execveat(dirfd, \"s1.sh\")\n");
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int dfd = open(".", O_RDONLY | O_DIRECTORY);
        char *eav[] = { "at", NULL };
        syscall(SYS_execveat, dfd, "s1.sh", eav, env_show, 0);
        printf("  execveat: %s\n", errname(errno));
        _exit(127);
    }
    waitpid(pid, &st, 0);
    report(st);

    /* exec from a non-main thread of a multi-threaded process. */
    printf("exec from a second thread\n");
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thread_exec, env_show);
        pause();
        _exit(126);
    }
    waitpid(pid, &st, 0);
    report(st);

    /* A large argv. */
    enum { N = 2000 };
    static char *big[N + 1];
    static char strings[N][64];
    for (int i = 0; i < N; i++) {
        snprintf(strings[i], sizeof strings[i], "argument-%04d-%s", i, "padding-padding-padding");
        big[i] = strings[i];
    }
    run("2000 arguments", self, big, env_show);

    errors();
    return 0;
}
