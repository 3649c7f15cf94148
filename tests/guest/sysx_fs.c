/*
 * File and directory calls beyond the basics: getdents64 through readdir,
 * the *at family, renameat2 flags, statfs, fcntl locks (classic and OFD),
 * descriptor duplication, copies between descriptors (sendfile,
 * copy_file_range, splice, tee), fallocate, memfd, close_range, flock,
 * xattrs on a memfd-less path, umask and chdir/getcwd.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list(const char *dir)
{
    DIR *d = opendir(dir);
    char *names[64];
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64) {
        char *s = malloc(300);
        snprintf(s, 300, "%s:%d", e->d_name, e->d_type);
        names[n++] = s;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof *names, cmp);
    printf("dir:");
    for (int i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\n");
}

static void put(const char *path, const char *text)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(fd, text, strlen(text));
    close(fd);
}

static void show(const char *what, int fd)
{
    char buf[64] = { 0 };
    lseek(fd, 0, SEEK_SET);
    long n = read(fd, buf, sizeof buf - 1);
    printf("%s: %ld '%s'\n", what, n, buf);
}

static void test_names(int dfd)
{
    put("a", "AAA");
    put("b", "BB");
    check("mkdirat", mkdirat(dfd, "sub", 0755));
    check("mkdirat exists", mkdirat(dfd, "sub", 0755));
    check("mknodat fifo", mknodat(dfd, "fifo", S_IFIFO | 0600, 0));
    check("symlinkat", symlinkat("a", dfd, "link"));
    char buf[64] = { 0 };
    check("readlinkat", readlinkat(dfd, "link", buf, sizeof buf));
    printf("target '%s'\n", buf);
    check("readlinkat short", readlinkat(dfd, "link", buf, 0));
    check("linkat", linkat(dfd, "a", dfd, "hard", 0));
    struct stat st;
    fstatat(dfd, "a", &st, 0);
    printf("nlink %lu size %ld\n", (unsigned long)st.st_nlink, (long)st.st_size);
    check("renameat2 noreplace", renameat2(dfd, "a", dfd, "b", RENAME_NOREPLACE));
    check("renameat2 exchange", renameat2(dfd, "a", dfd, "b", RENAME_EXCHANGE));
    fstatat(dfd, "a", &st, 0);
    printf("a now size %ld\n", (long)st.st_size);
    check("renameat", renameat(dfd, "hard", dfd, "sub/moved"));
    check("fchmodat", fchmodat(dfd, "b", 0600, 0));
    fstatat(dfd, "b", &st, 0);
    printf("mode %o\n", st.st_mode & 07777);
    check("fchownat same", fchownat(dfd, "b", getuid(), getgid(), 0));
    struct timespec ts[2] = { { 1000000000, 5 }, { 1234567890, 123456789 } };
    check("utimensat", utimensat(dfd, "b", ts, 0));
    fstatat(dfd, "b", &st, 0);
    printf("atime %ld.%09ld mtime %ld.%09ld\n", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
           (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    check("utimensat symlink nofollow", utimensat(dfd, "link", ts, AT_SYMLINK_NOFOLLOW));
    check("faccessat", faccessat(dfd, "b", R_OK | W_OK, 0));
    check("faccessat2 eaccess", syscall(SYS_faccessat2, dfd, "b", R_OK, AT_EACCESS));
    check("faccessat missing", faccessat(dfd, "nope", F_OK, 0));
    struct statx sx;
    check("statx", statx(dfd, "b", 0, STATX_SIZE | STATX_MODE, &sx));
    printf("statx size %llu mode %o\n", (unsigned long long)sx.stx_size, sx.stx_mode & 07777);
    check("unlinkat dir as file", unlinkat(dfd, "sub", 0));
    check("unlinkat file", unlinkat(dfd, "sub/moved", 0));
    list(".");
    check("unlinkat dir", unlinkat(dfd, "sub", AT_REMOVEDIR));
    check("mkdirat bad path", syscall(SYS_mkdirat, dfd, bad_ptr, 0755));
    check("getdents64 bad buf", syscall(SYS_getdents64, dfd, bad_ptr, 4096));
}

static void test_fcntl(void)
{
    int fd = open("locked", O_CREAT | O_RDWR, 0644);
    ftruncate(fd, 100);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 20 };
    check("F_SETLK", fcntl(fd, F_SETLK, &fl));
    fl.l_type = F_RDLCK;
    check("F_GETLK own", fcntl(fd, F_GETLK, &fl));
    printf("own lock type %d (F_UNLCK=%d)\n", fl.l_type, F_UNLCK);
    fl.l_type = F_UNLCK;
    check("F_SETLK unlock", fcntl(fd, F_SETLK, &fl));
    /* OFD locks conflict between two open file descriptions of one process. */
    int a = open("locked", O_RDWR), b = open("locked", O_RDWR);
    struct flock o = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 50 };
    check("F_OFD_SETLK a", fcntl(a, F_OFD_SETLK, &o));
    struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 40, .l_len = 5 };
    check("F_OFD_GETLK b", fcntl(b, F_OFD_GETLK, &q));
    printf("conflict type %d start %ld len %ld pid %d\n", q.l_type, (long)q.l_start, (long)q.l_len, q.l_pid);
    q.l_type = F_WRLCK;
    q.l_pid = 0;
    check("F_OFD_SETLK b", fcntl(b, F_OFD_SETLK, &q));
    check("F_GETLK bad", fcntl(fd, F_GETLK, bad_ptr));
    check("flock a", flock(a, LOCK_EX | LOCK_NB));
    check("flock b", flock(b, LOCK_EX | LOCK_NB));
    close(a);
    close(b);

    int d = fcntl(fd, F_DUPFD_CLOEXEC, 50);
    printf("dupfd >= 50 %d cloexec %d\n", d >= 50, fcntl(d, F_GETFD) == FD_CLOEXEC);
    check("dup3", dup3(fd, 60, O_CLOEXEC));
    printf("dup3 cloexec %d\n", fcntl(60, F_GETFD));
    check("dup3 same", dup3(fd, fd, 0));
    check("F_SETFL", fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK));
    printf("flags %#x\n", fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK | O_ACCMODE));
    int p[2];
    check("pipe2", pipe2(p, O_CLOEXEC | O_NONBLOCK));
    printf("pipe flags %#x fd %d\n", fcntl(p[0], F_GETFL) & O_NONBLOCK, fcntl(p[1], F_GETFD));
    check("F_GETPIPE_SZ", fcntl(p[0], F_GETPIPE_SZ));
    check("F_SETPIPE_SZ", fcntl(p[0], F_SETPIPE_SZ, 8192));
    check("pipe2 bad", syscall(SYS_pipe2, bad_ptr, 0));
    check("close_range", syscall(SYS_close_range, 50, 70, 0));
    check("fcntl closed", fcntl(60, F_GETFD));
    close(p[0]);
    close(p[1]);
    close(fd);
}

static void test_copies(void)
{
    put("src", "0123456789abcdef");
    int s = open("src", O_RDONLY), d = open("dst", O_CREAT | O_RDWR | O_TRUNC, 0644);
    off_t off = 4;
    check("sendfile", sendfile(d, s, &off, 6));
    printf("off %ld\n", (long)off);
    loff_t in = 10, out = 6;
    check("copy_file_range", copy_file_range(s, &in, d, &out, 6, 0));
    printf("in %ld out %ld\n", (long)in, (long)out);
    show("dst", d);
    int p[2], p2[2];
    pipe(p);
    pipe(p2);
    loff_t so = 2;
    check("splice file->pipe", splice(s, &so, p[1], NULL, 5, 0));
    check("tee", tee(p[0], p2[1], 5, 0));
    char buf[16] = { 0 };
    read(p2[0], buf, sizeof buf - 1);
    printf("tee copy '%s'\n", buf);
    check("splice pipe->file", splice(p[0], NULL, d, NULL, 5, 0));
    show("dst after splice", d);
    check("fallocate", fallocate(d, 0, 0, 4096));
    struct stat st;
    fstat(d, &st);
    printf("size after fallocate %ld\n", (long)st.st_size);
    check("ftruncate", ftruncate(d, 3));
    check("truncate", truncate("src", 5));
    check("fsync", fsync(d));
    check("fdatasync", fdatasync(d));
    check("syncfs", syncfs(d));
    check("fadvise", posix_fadvise(s, 0, 0, POSIX_FADV_SEQUENTIAL));
    check("readahead", readahead(s, 0, 4096));
    check("sync_file_range", sync_file_range(d, 0, 0, SYNC_FILE_RANGE_WRITE));

    int m = memfd_create("xlat-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    check("memfd_create", m >= 0);
    write(m, "memfd!", 6);
    check("F_ADD_SEALS", fcntl(m, F_ADD_SEALS, F_SEAL_WRITE));
    check("F_GET_SEALS", fcntl(m, F_GET_SEALS));
    check("write sealed", write(m, "x", 1));
    show("memfd", m);
    char link[64], target[PATH_MAX] = { 0 };
    snprintf(link, sizeof link, "/proc/self/fd/%d", m);
    readlink(link, target, sizeof target - 1);
    printf("memfd link '%s'\n", target);
    check("memfd_create bad name", syscall(SYS_memfd_create, bad_ptr, 0));
    close(m);
    close(s);
    close(d);
}

static void test_misc(const char *dir)
{
    struct statfs sf;
    check("statfs", statfs(dir, &sf));
    struct statfs sf2;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    check("fstatfs", fstatfs(fd, &sf2));
    printf("same fs %d bsize>0 %d namelen %ld\n", sf.f_type == sf2.f_type && sf.f_bsize == sf2.f_bsize,
           sf.f_bsize > 0, (long)sf.f_namelen);
    check("statfs bad", syscall(SYS_statfs, dir, bad_ptr));
    check("umask", umask(027));
    check("umask again", umask(022));
    char cwd[PATH_MAX];
    check("fchdir", fchdir(fd));
    printf("cwd is dir %d\n", strcmp(getcwd(cwd, sizeof cwd), dir) == 0);
    check("getcwd small", syscall(SYS_getcwd, cwd, 2));
    check("chdir", chdir("/"));
    printf("cwd '%s'\n", getcwd(cwd, sizeof cwd));
    check("chdir missing", chdir("/nonexistent-xlat"));
    check("setxattr", setxattr(dir, "user.xlat", "v1", 2, 0) == 0 || errno == ENOTSUP);
    close(fd);
    chdir(dir);
}

int main(void)
{
    char dir[] = "/tmp/xlat-sysx-fs.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    chdir(dir);
    int dfd = open(".", O_RDONLY | O_DIRECTORY);
    test_names(dfd);
    test_fcntl();
    test_copies();
    test_misc(dir);
    list(".");
    const char *files[] = { "a", "b", "link", "fifo", "locked", "src", "dst" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        unlinkat(dfd, files[i], 0);
    list(".");
    chdir("/");
    check("rmdir", rmdir(dir));
    return 0;
}
