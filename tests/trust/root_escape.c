/*
 * --root confinement (tests/root_view.sh runs this as
 * `xlat --root DIR --bind B:/b ... /b/root_escape HOSTFILE`): HOSTFILE is a
 * host file outside DIR whose content is "SECRET". Every spelling below
 * must fail to open it (or open something else): absolute, "..", dirfds,
 * absolute and relative symlinks made at run time, /proc/self/root and cwd,
 * /proc/<child>/root and cwd of a forked child, /proc/1/root, /dev/fd,
 * every descriptor in /proc/self/fd, a bind mount's "..", a symlink inside
 * the bind, hard links and renames; and a host unix socket (argv[2], bound
 * by nobody listening: reaching it would say ECONNREFUSED). Prints one line
 * per failed check, then "ALL OK" if nothing leaked.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *secret;
static int leaks, checks;

/* Did fd (consumed) give the secret? */
static int is_secret(int fd)
{
    char buf[16] = { 0 };
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 6 && !memcmp(buf, "SECRET", 6);
}

static void check_fd(const char *what, int fd)
{
    checks++;
    if (is_secret(fd)) {
        printf("LEAK %s\n", what);
        leaks++;
    }
}

static void try_path(const char *what, const char *path)
{
    check_fd(what, open(path, O_RDONLY));
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == 7 && S_ISREG(st.st_mode)) {
        /* the same size as the secret: open it to see */
        check_fd(what, open(path, O_RDONLY));
    }
}

static void try_at(const char *what, int dirfd, const char *path)
{
    check_fd(what, openat(dirfd, path, O_RDONLY));
}

static char *cat(const char *a, const char *b)
{
    static char buf[8][4096];
    static int i;
    char *p = buf[i++ % 8];
    snprintf(p, 4096, "%s%s", a, b);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    secret = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);

    try_path("absolute", secret);
    try_path("/.. from the root", cat("/../../../../../../..", secret));
    if (chdir("/") != 0)
        return 3;
    try_path(".. from the cwd", cat("../../../../../../../..", secret));
    int root = open("/", O_PATH | O_DIRECTORY);
    try_at(".. from a dirfd of /", root, cat("../../../../../../..", secret) + 1);
    int tmp = open("/tmp", O_PATH | O_DIRECTORY);
    try_at(".. from a dirfd of /tmp", tmp, cat("../../../../../../..", secret) + 1);

    unlink("/tmp/abs");
    unlink("/tmp/rel");
    unlink("/tmp/dir");
    if (symlink(secret, "/tmp/abs") == 0)
        try_path("absolute symlink", "/tmp/abs");
    if (symlink(cat("../../../../../../../..", secret), "/tmp/rel") == 0)
        try_path("relative symlink", "/tmp/rel");
    if (symlink("/", "/tmp/dir") == 0)
        try_path("symlink to / then the path", cat("/tmp/dir", secret));
    try_path("/proc/self/root", cat("/proc/self/root", secret));
    try_path("/proc/thread-self/root", cat("/proc/thread-self/root", secret));
    try_path("/proc/self/cwd/..", cat("/proc/self/cwd/../../../../../..", secret));
    try_path("/proc/1/root", cat("/proc/1/root", secret));
    try_path("/proc/1/cwd", cat("/proc/1/cwd", secret));
    try_path("/dev/fd/..", cat("/dev/fd/../../../../..", secret));

    /* A child's /proc entries. */
    int pfd[2];
    if (pipe(pfd) != 0)
        return 4;
    pid_t child = fork();
    if (child == 0) {
        char c;
        close(pfd[1]);
        if (chdir("/tmp") != 0)
            _exit(1);
        read(pfd[0], &c, 1);               /* until the parent is done */
        _exit(0);
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%d/root", (int)child);
    try_path("/proc/<child>/root", cat(proc, secret));
    snprintf(proc, sizeof proc, "/proc/%d/cwd/../../../../../..", (int)child);
    try_path("/proc/<child>/cwd/..", cat(proc, secret));
    snprintf(proc, sizeof proc, "/proc/%d/root", (int)child);
    char target[4096];
    ssize_t n = readlink(proc, target, sizeof target - 1);
    checks++;
    if (n != 1 || target[0] != '/') {
        printf("LEAK readlink(/proc/<child>/root) = %.*s\n", (int)(n > 0 ? n : 0), target);
        leaks++;
    }
    close(pfd[1]);
    waitpid(child, NULL, 0);

    /* Every descriptor this process has, xlat's own included. */
    for (int fd = 0; fd < 4096; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        char what[64], p[64];
        snprintf(what, sizeof what, "descriptor %d", fd);
        snprintf(p, sizeof p, "/proc/self/fd/%d/../../../../../..", fd);
        try_path(what, cat(p, secret));
        try_at(what, fd, cat("../../../../../../..", secret) + 1);
        try_at(what, fd, secret);
    }

    /* The bind mount and a symlink planted in it. */
    try_path("bind ..", cat("/b/../../../../..", secret));
    unlink("/b/abs");
    if (symlink(secret, "/b/abs") == 0)
        try_path("absolute symlink in a bind", "/b/abs");
    unlink("/b/abs");

    /* A host unix socket, by connect and by sendto. */
    if (argc > 2) {
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        snprintf(un.sun_path, sizeof un.sun_path, "%s", argv[2]);
        for (int type = SOCK_STREAM; type <= SOCK_DGRAM; type++) {
            int sk = socket(AF_UNIX, type, 0);
            checks++;
            int r = type == SOCK_STREAM ? connect(sk, (struct sockaddr *)&un, sizeof un)
                                        : (int)sendto(sk, "x", 1, 0, (struct sockaddr *)&un, sizeof un);
            if (r == 0 || errno != ENOENT) {
                printf("LEAK host socket reached (%s: %s)\n", type == SOCK_STREAM ? "connect" : "sendto",
                       strerror(errno));
                leaks++;
            }
            close(sk);
        }
    }

    /* Names: a hard link or rename of the secret cannot be made. */
    checks++;
    if (link(secret, "/tmp/hard") == 0 || rename(secret, "/tmp/moved") == 0) {
        printf("LEAK link or rename of the secret succeeded\n");
        leaks++;
    }
    checks++;
    if (chroot("/tmp") == 0) {
        printf("LEAK chroot succeeded\n");
        leaks++;
    }
    unlink("/tmp/abs");
    unlink("/tmp/rel");
    unlink("/tmp/dir");

    /* The confinement must not break what a chroot allows. */
    char cwd[4096];
    checks++;
    if (chdir("/tmp") != 0 || !getcwd(cwd, sizeof cwd) || strcmp(cwd, "/tmp")) {
        printf("FAIL getcwd in /tmp: %s\n", cwd);
        leaks++;
    }
    checks++;
    n = readlink("/proc/self/cwd", target, sizeof target - 1);
    if (n != 4 || memcmp(target, "/tmp", 4)) {
        printf("FAIL readlink(/proc/self/cwd) = %.*s\n", (int)(n > 0 ? n : 0), target);
        leaks++;
    }
    checks++;
    n = readlink("/proc/self/root", target, sizeof target - 1);
    if (n != 1 || target[0] != '/') {
        printf("FAIL readlink(/proc/self/root) = %.*s\n", (int)(n > 0 ? n : 0), target);
        leaks++;
    }
    checks++;
    int in = open("../inside", O_RDONLY);       /* from /tmp: DIR/inside */
    char buf[16] = { 0 };
    if (in < 0 || read(in, buf, sizeof buf) < 6 || memcmp(buf, "INSIDE", 6)) {
        printf("FAIL /inside is not readable\n");
        leaks++;
    }
    /* A mapped file shows its guest path in /proc/self/maps. */
    checks++;
    in = open("/inside", O_RDONLY);
    void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, in, 0);
    char line[512];
    int seen = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "inside"))           /* 1: named /inside; -1: some other way */
            seen = seen >= 0 && !strcmp(strrchr(line, ' '), " /inside\n") ? 1 : -1;
    if (maps)
        fclose(maps);
    if (m == MAP_FAILED || seen != 1) {
        printf("FAIL /proc/self/maps names the mapping of /inside otherwise (%d)\n", seen);
        leaks++;
    }
    printf("%d checks\n", checks);
    if (!leaks)
        printf("ALL OK\n");
    return leaks != 0;
}
