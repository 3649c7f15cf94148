// xlat-rootfs-args: shell
/*
 * posix_spawn (glibc: clone3/clone with CLONE_VM|CLONE_VFORK on a separate
 * stack, which xlat runs as a fork), its file actions and attributes,
 * posix_spawnp's PATH search, and -- with the argument "shell", when a
 * riscv64 /bin/sh is reachable (xlat -L ROOTFS) -- system() and popen().
 *
 * Reference: this same program built for the host (tests/native.sh).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *disposition(int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    return sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignored" : "handler";
}

static int child_main(int argc, char **argv)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    printf("  child argc=%d", argc);
    for (int i = 1; i < argc; i++)
        printf(" [%s]", argv[i]);
    printf(" XTEST=%s\n", getenv("XTEST") ? getenv("XTEST") : "-");
    printf("  USR1 %s, USR2 %s, PIPE %s, HUP %s, pgid==pid %s\n",
           sigismember(&cur, SIGUSR1) ? "blocked" : "unblocked", disposition(SIGUSR2),
           disposition(SIGPIPE), disposition(SIGHUP), getpgid(0) == getpid() ? "yes" : "no");
    fflush(stdout);
    return argc;
}

/* Wait first, then print: the child's output comes before the parent's lines. */
static void report(const char *what, int r, pid_t pid)
{
    int st;
    if (r != 0) {
        printf("%s: error %d\n", what, r);
        return;
    }
    pid_t w = waitpid(pid, &st, 0);
    printf("%s: %d\n", what, r);
    if (w != pid)
        printf("  waitpid failed\n");
    else if (WIFEXITED(st))
        printf("  -> exit %d\n", WEXITSTATUS(st));
    else
        printf("  -> signal %d\n", WTERMSIG(st));
}

static void on_hup(int sig) { (void)sig; }

int main(int argc, char **argv)
{
    if (getenv("XMODE"))
        return child_main(argc, argv);
    const char *self = argv[0];
    char *env[] = { "XMODE=child", "XTEST=spawned", NULL };
    char *cargv[] = { "child", "one", "two", NULL };
    pid_t pid;
    int r;
    setvbuf(stdout, NULL, _IOLBF, 0);

    r = posix_spawn(&pid, self, NULL, NULL, cargv, env);
    report("posix_spawn", r, pid);

    /* stdout into a file, then into a pipe. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    r = posix_spawn(&pid, self, &fa, NULL, cargv, env);
    posix_spawn_file_actions_destroy(&fa);
    report("addopen", r, pid);
    char buf[512] = { 0 };
    FILE *f = fopen("out.txt", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    printf("  out.txt has %zu bytes, starts: %.20s\n", n, buf);

    int p[2];
    pipe(p);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    r = posix_spawn(&pid, self, &fa, NULL, cargv, env);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    memset(buf, 0, sizeof buf);
    n = 0;
    for (ssize_t k; (k = read(p[0], buf + n, sizeof buf - 1 - n)) > 0;)
        n += (size_t)k;
    close(p[0]);
    printf("from the pipe, %zu bytes:\n%s", n, buf);
    report("adddup2 to a pipe", r, pid);

    /* Attributes: mask, default dispositions, process group. */
    signal(SIGUSR2, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, on_hup);
    posix_spawnattr_t at;
    sigset_t mask, def;
    posix_spawnattr_init(&at);
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigemptyset(&def);
    sigaddset(&def, SIGUSR2);
    posix_spawnattr_setsigmask(&at, &mask);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                  POSIX_SPAWN_SETPGROUP);
    r = posix_spawn(&pid, self, NULL, &at, cargv, env);
    posix_spawnattr_destroy(&at);
    report("attributes", r, pid);

    /* posix_spawnp: found through PATH. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", self);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : self;
    if (slash)
        *slash = '\0';
    char path[4200];
    snprintf(path, sizeof path, "PATH=/nonexistent:%s", slash ? dir : ".");
    char *penv[] = { "XMODE=child", path, NULL };
    char *pargv[] = { (char *)base, "p", NULL };
    setenv("PATH", path + 5, 1);
    r = posix_spawnp(&pid, base, NULL, NULL, pargv, penv);
    report("posix_spawnp", r, pid);

    if (argc > 1 && !strcmp(argv[1], "shell")) {
        setenv("PATH", "/usr/bin:/bin", 1);
        signal(SIGPIPE, SIG_DFL);
        r = system("echo from system; exit 5");
        printf("system: exit %d\n", WEXITSTATUS(r));
        r = system("echo to-stderr >&2; nosuchcommand 2>/dev/null");
        printf("system, missing command: exit %d\n", WEXITSTATUS(r));
        printf("system(NULL): %s\n", system(NULL) ? "shell available" : "no shell");
        f = popen("echo popen-line; echo second", "r");
        while (f && fgets(buf, sizeof buf, f))
            printf("popen read: %s", buf);
        printf("pclose: %d\n", f ? WEXITSTATUS(pclose(f)) : -1);
        f = popen("tr a-z A-Z; exit 3", "w");
        if (f) {
            fputs("written through popen\n", f);
            fflush(f);
            printf("pclose (w): %d\n", WEXITSTATUS(pclose(f)));
        }
    }
    return 0;
}
