/*
 * libFuzzer target: --root's path resolver (src/user/path.c) on arbitrary
 * guest path strings.
 *
 * Once: a small root in a fresh directory -- directories, a file, absolute
 * and relative symlinks (to /, to .., up many levels, into /proc, a loop),
 * a --bind of a second directory -- and a file beside the root that must
 * never be reached. Each input: the first byte picks how the call uses its
 * path (follow, no-follow, parent, create) and where a relative path
 * starts (the working directory inside the root, or a directory fd), the
 * rest is the path. Whatever path_lookup_at resolves must lie inside the
 * root, the bind, or the host kernel's /dev, /proc, /sys (a procfs magic
 * link names an open file of the fuzzer's own); anything else aborts.
 * Nothing is created or removed: only lookups run.
 * Built and run by tests/fuzz.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/options.h"
#include "user/path.h"

__attribute__((weak)) Options opt;

static char root[PATH_MAX], bind_dir[PATH_MAX];
static int subdir_fd = -1;

static void mk(const char *rel, const char *link_target)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (!link_target)
        mkdir(p, 0755);
    else if (symlink(link_target, p) != 0)
        abort();
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char base[PATH_MAX];
    snprintf(base, sizeof base, "%s/xlat-fuzz-path-XXXXXX", tmp);
    if (!mkdtemp(base))
        abort();
    snprintf(root, sizeof root, "%s/root", base);
    snprintf(bind_dir, sizeof bind_dir, "%s/bound", base);
    mkdir(root, 0755);
    mkdir(bind_dir, 0755);
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/outside", base);
    close(open(p, O_WRONLY | O_CREAT, 0644));
    mk("a", NULL);
    mk("a/b", NULL);
    mk("a/b/c", NULL);
    mk("tmp", NULL);
    snprintf(p, sizeof p, "%s/a/file", root);
    close(open(p, O_WRONLY | O_CREAT, 0644));
    mk("abs", "/a");
    mk("rel", "a/b");
    mk("up", "../../../../../../..");
    mk("a/b/toroot", "/");
    mk("a/dotdot", "..");
    mk("a/b/outside", "../../../../outside");
    mk("proc_root", "/proc/self/root");
    mk("proc_cwd", "/proc/self/cwd/../../..");
    mk("loop1", "loop2");
    mk("loop2", "loop1");
    mk("host", "/etc/passwd");
    path_set_root(root);
    snprintf(p, sizeof p, "%s:/mnt/deep/bound", bind_dir);
    path_add_bind(p);
    snprintf(p, sizeof p, "%s/a", root);
    if (chdir(p) != 0)
        abort();
    path_init();
    snprintf(p, sizeof p, "%s/a/b", root);
    subdir_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *r = realpath(root, NULL), *b = realpath(bind_dir, NULL);
    snprintf(root, sizeof root, "%s", r);
    snprintf(bind_dir, sizeof bind_dir, "%s", b);
    free(r);
    free(b);
}

static int under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

/* Where the host descriptor fd leads must be in the guest's view. */
static void check_inside(int fd, const char *what)
{
    char link[64], host[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, host, sizeof host - 1);
    if (n < 0)
        return;
    host[n] = '\0';
    if (host[0] != '/' || under(host, root) || under(host, bind_dir) || under(host, "/dev") ||
        under(host, "/proc") || under(host, "/sys") || strstr(host, "xlat-glue-"))
        return;
    fprintf(stderr, "fuzz_path: %s resolved outside the view: %s\n", what, host);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (subdir_fd < 0)
        setup();
    if (size < 1 || size > 1024)
        return 0;
    static const unsigned hows[] = { PATH_FOLLOW, 0, PATH_PARENT, PATH_FOLLOW | PATH_CREATE };
    unsigned how = hows[data[0] & 3];
    int dirfd = data[0] & 4 ? subdir_fd : AT_FDCWD;
    char path[1025];
    memcpy(path, data + 1, size - 1);
    path[size - 1] = '\0';

    GuestPath gp;
    if (path_lookup_at(dirfd, path, how, &gp) < 0)
        return 0;
    check_inside(gp.dirfd == AT_FDCWD ? -1 : gp.dirfd, "the directory");
    /* A call acting on the name (mkdir, unlink, rename ...) never looks it
     * up: only its directory counts, and the name must be one component. */
    if (how & PATH_PARENT) {
        if (gp.host[0] != '/' && strchr(gp.host, '/') && strcmp(strchr(gp.host, '/'), "/")) {
            fprintf(stderr, "fuzz_path: %s: more than a name: %s\n", path, gp.host);
            abort();
        }
        path_put(&gp);
        return 0;
    }
    int fd = gp.host[0] == '/' ? open(gp.host, O_PATH | O_CLOEXEC)
                               : openat(gp.dirfd, gp.host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        check_inside(fd, path);
        close(fd);
    }
    path_put(&gp);
    return 0;
}
