/*
 * fexecve / execveat through a descriptor, as the kernel does them: a
 * close-on-exec descriptor (glibc's fexecve passes AT_EMPTY_PATH, and the
 * new image must still run), an O_PATH descriptor, a file unlinked after it
 * was opened (what runs is the opened file), #! scripts through a
 * descriptor (the interpreter is given "/dev/fd/N"; through a close-on-exec
 * descriptor the kernel refuses with ENOENT, since the interpreter could not
 * open it), execveat relative to an O_PATH directory, AT_SYMLINK_NOFOLLOW on
 * a symlink (ELOOP), an empty path without AT_EMPTY_PATH (ENOENT), a FIFO
 * (EACCES, without blocking in an open).
 *
 * Reference: this same program built for the host (tests/native.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char self[4096];

static const char *errname(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ELOOP: return "ELOOP";
    case EBADF: return "EBADF";
    case ENOEXEC: return "ENOEXEC";
    default: return strerror(e);
    }
}

/* The exec'd side: print what it was given. */
static int child_main(int argc, char **argv)
{
    printf("  ran: argc=%d", argc);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "/dev/fd/", 8))
            a = "/dev/fd/N";                    /* the number is the caller's */
        printf(" [%s]", a);
    }
    printf("\n");
    return 3;
}

static long do_execveat(int dirfd, const char *path, char **av, int flags)
{
    char *env[] = { "XMODE=child", NULL };
    return syscall(SYS_execveat, dirfd, path, av, env, flags);
}

/* Run body in a child and report how it ended. */
static void run(const char *what, void (*body)(void))
{
    printf("%s\n", what);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        body();
        printf("  returned: %s\n", errname(errno));
        fflush(stdout);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st))
        printf("  exit %d\n", WEXITSTATUS(st));
    else
        printf("  signal %d\n", WTERMSIG(st));
}

static char *av_child[] = { "child", "arg", NULL };

static void fexec_cloexec(void)
{
    int fd = open(self, O_RDONLY | O_CLOEXEC);
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

static void fexec_plain(void)
{
    int fd = open(self, O_RDONLY);
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

static void fexec_opath(void)
{
    int fd = open(self, O_PATH | O_CLOEXEC);
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

/* The file is unlinked between open and exec: the opened one runs. */
static void fexec_unlinked(void)
{
    char buf[65536];
    int in = open(self, O_RDONLY), out = open("copy", O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            return;
    close(in);
    close(out);
    int fd = open("copy", O_RDONLY | O_CLOEXEC);
    unlink("copy");
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

static void write_script(const char *name)
{
    FILE *f = fopen(name, "w");
    fprintf(f, "#!%s script-arg\n", self);
    fclose(f);
    chmod(name, 0755);
}

static void script_plain(void)
{
    write_script("s.sh");
    int fd = open("s.sh", O_RDONLY);
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

static void script_cloexec(void)
{
    write_script("s.sh");
    int fd = open("s.sh", O_RDONLY | O_CLOEXEC);
    do_execveat(fd, "", av_child, AT_EMPTY_PATH);
}

static void at_opath_dir(void)
{
    write_script("s.sh");
    int dfd = open(".", O_PATH | O_DIRECTORY);
    do_execveat(dfd, "s.sh", av_child, 0);
}

static void nofollow_link(void)
{
    unlink("link");
    if (symlink(self, "link") != 0)
        return;
    do_execveat(AT_FDCWD, "link", av_child, AT_SYMLINK_NOFOLLOW);
}

static void empty_without_flag(void)
{
    int fd = open(self, O_RDONLY);
    do_execveat(fd, "", av_child, 0);
}

/* A FIFO is no regular file: EACCES at once, without waiting for a writer. */
static void exec_fifo(void)
{
    unlink("fifo");
    if (mkfifo("fifo", 0755) != 0)
        return;
    do_execveat(AT_FDCWD, "fifo", av_child, 0);
}

static void empty_bad_fd(void)
{
    do_execveat(99, "", av_child, AT_EMPTY_PATH);
}

int main(int argc, char **argv)
{
    const char *mode = getenv("XMODE");
    if (mode && !strcmp(mode, "child"))
        return child_main(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!realpath(argv[0], self))
        return 1;
    run("fexecve, close-on-exec descriptor", fexec_cloexec);
    run("fexecve, plain descriptor", fexec_plain);
    run("fexecve, O_PATH descriptor", fexec_opath);
    run("fexecve of a file unlinked after open", fexec_unlinked);
    run("script through a descriptor", script_plain);
    run("script through a close-on-exec descriptor", script_cloexec);
    run("execveat relative to an O_PATH directory", at_opath_dir);
    run("execveat AT_SYMLINK_NOFOLLOW of a symlink", nofollow_link);
    run("execveat of \"\" without AT_EMPTY_PATH", empty_without_flag);
    run("execveat of \"\" on a closed descriptor", empty_bad_fd);
    run("execve of a FIFO", exec_fifo);
    unlink("fifo");
    unlink("s.sh");
    unlink("link");
    return 0;
}
