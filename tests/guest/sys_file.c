/*
 * File system calls: a round trip through a private temp directory.
 * Prints only deterministic facts (sizes, contents, modes, errno values).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void check(const char *what, long r)
{
    if (r < 0)
        printf("%s: -1 errno=%d\n", what, errno);
    else
        printf("%s: %ld\n", what, r);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_dir(const char *path)
{
    DIR *d = opendir(path);
    char *names[64];
    int n = 0;
    struct dirent *e;
    if (!d) { printf("opendir: errno=%d\n", errno); return; }
    while ((e = readdir(d)) && n < 64)
        names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp);
    printf("dir:");
    for (int i = 0; i < n; i++) { printf(" %s", names[i]); free(names[i]); }
    printf("\n");
}

static void show_stat(const char *what, const struct stat *st)
{
    printf("%s: size=%lld mode=%o reg=%d dir=%d lnk=%d nlink=%lu\n", what,
           S_ISDIR(st->st_mode) ? -1LL : (long long)st->st_size, st->st_mode & 07777, S_ISREG(st->st_mode),
           S_ISDIR(st->st_mode), S_ISLNK(st->st_mode), (unsigned long)st->st_nlink);
}

int main(void)
{
    char tmpl[] = "/tmp/xlat-sysfile-XXXXXX";
    char *dir = mkdtemp(tmpl);
    char buf[256];
    struct stat st, st2;
    if (!dir) { perror("mkdtemp"); return 1; }
    check("chdir", chdir(dir));
    umask(022);
    check("umask", umask(022));

    /* create, write, read back */
    int fd = openat(AT_FDCWD, "a.txt", O_CREAT | O_RDWR | O_TRUNC, 0666);
    check("open a", fd >= 0 ? 0 : -1);
    check("write", write(fd, "hello, world\n", 13));
    check("lseek cur", lseek(fd, 0, SEEK_CUR));
    check("lseek set", lseek(fd, 7, SEEK_SET));
    memset(buf, 0, sizeof buf);
    check("read", read(fd, buf, sizeof buf));
    printf("got '%s'\n", buf);
    check("read eof", read(fd, buf, sizeof buf));
    check("lseek end", lseek(fd, -6, SEEK_END));
    check("lseek bad", lseek(fd, 0, 42));

    /* pread/pwrite do not move the offset */
    check("pwrite", pwrite(fd, "HELLO", 5, 0));
    memset(buf, 0, sizeof buf);
    check("pread", pread(fd, buf, 5, 0));
    printf("pread '%s'\n", buf);
    check("pos after", lseek(fd, 0, SEEK_CUR));

    /* readv/writev with several segments */
    struct iovec iov[3];
    iov[0] = (struct iovec){ "abc", 3 };
    iov[1] = (struct iovec){ "", 0 };
    iov[2] = (struct iovec){ "defgh", 5 };
    check("lseek end2", lseek(fd, 0, SEEK_END));
    check("writev", writev(fd, iov, 3));
    char b1[4] = { 0 }, b2[20] = { 0 };
    iov[0] = (struct iovec){ b1, 3 };
    iov[1] = (struct iovec){ b2, sizeof b2 - 1 };
    check("lseek 10", lseek(fd, 10, SEEK_SET));
    check("readv", readv(fd, iov, 2));
    printf("readv '%s' '%s'\n", b1, b2);
    iov[0] = (struct iovec){ (void *)16, 10 };
    check("writev efault", writev(fd, iov, 1));
    check("readv einval", syscall(SYS_readv, fd, iov, -1));

    /* stat family */
    check("fstat", fstat(fd, &st));
    show_stat("fstat", &st);
    check("stat", stat("a.txt", &st2));
    show_stat("stat", &st2);
    printf("same ino %d dev %d blksize %d\n", st.st_ino == st2.st_ino,
           st.st_dev == st2.st_dev, st.st_blksize == st2.st_blksize);
    check("ftruncate", ftruncate(fd, 4));
    check("fstat2", fstat(fd, &st));
    show_stat("trunc", &st);
    check("fchmod", fchmod(fd, 0600));
    check("fsync", fsync(fd));
    check("fdatasync", fdatasync(fd));
    struct statx sx;
    check("statx", statx(AT_FDCWD, "a.txt", 0, STATX_BASIC_STATS, &sx));
    printf("statx size=%llu mode=%o nlink=%u\n", (unsigned long long)sx.stx_size,
           sx.stx_mode & 07777, sx.stx_nlink);

    /* utimensat with fixed times, read back through stat */
    struct timespec ts[2] = { { 1000000000, 123 }, { 1500000000, 456789 } };
    check("utimensat", utimensat(AT_FDCWD, "a.txt", ts, 0));
    check("stat3", stat("a.txt", &st));
    printf("atime %ld.%ld mtime %ld.%ld\n", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
           (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);

    /* dup, dup3, fcntl */
    int d = dup(fd);
    check("dup>fd", d > fd);
    check("dup3", dup3(fd, 50, O_CLOEXEC));
    check("getfd 50", fcntl(50, F_GETFD));
    check("getfd dup", fcntl(d, F_GETFD));
    check("setfd", fcntl(d, F_SETFD, FD_CLOEXEC));
    check("getfd dup2", fcntl(d, F_GETFD));
    check("getfl", fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK));
    check("setfl", fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK));
    check("getfl2", fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK));
    check("dupfd", fcntl(fd, F_DUPFD, 60));
    check("dupfd_cloexec", fcntl(fd, F_DUPFD_CLOEXEC, 60));
    check("getfd 61", fcntl(61, F_GETFD));
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 2 };
    check("setlk", fcntl(fd, F_SETLK, &fl));
    fl.l_type = F_RDLCK;
    check("getlk", fcntl(fd, F_GETLK, &fl));
    printf("getlk type=%d\n", fl.l_type == F_UNLCK);
    check("close d", close(d));
    check("close 50", close(50));
    check("close again", close(50));
    check("close fd", close(fd));

    /* directories, symlinks, rename, unlink */
    check("mkdir", mkdirat(AT_FDCWD, "sub", 0755));
    check("mkdir again", mkdir("sub", 0755));
    check("stat sub", stat("sub", &st));
    show_stat("sub", &st);
    check("symlink", symlink("a.txt", "link"));
    ssize_t n = readlink("link", buf, sizeof buf);
    check("readlink", n);
    if (n >= 0) printf("link -> %.*s\n", (int)n, buf);
    check("lstat", lstat("link", &st));
    show_stat("lstat", &st);
    check("fstatat nofollow", fstatat(AT_FDCWD, "link", &st, AT_SYMLINK_NOFOLLOW));
    printf("islnk %d\n", S_ISLNK(st.st_mode));
    check("link", link("a.txt", "hard"));
    check("stat nlink", stat("a.txt", &st));
    show_stat("linked", &st);
    check("rename", rename("hard", "sub/moved"));
    check("renameat2 noreplace", syscall(SYS_renameat2, AT_FDCWD, "a.txt", AT_FDCWD, "link", 1));
    check("access ok", access("a.txt", R_OK | W_OK));
    check("access x", access("a.txt", X_OK));
    check("access missing", access("missing", F_OK));
    check("open missing", open("missing", O_RDONLY));
    check("open dir as file", open("sub", O_WRONLY));
    check("open notdir", open("a.txt", O_RDONLY | O_DIRECTORY));
    check("open excl", open("a.txt", O_CREAT | O_EXCL | O_WRONLY, 0644));
    list_dir(".");
    list_dir("sub");
    int dfd = open("sub", O_RDONLY | O_DIRECTORY);
    check("open dir", dfd >= 0 ? 0 : -1);
    check("fstatat rel", fstatat(dfd, "moved", &st, 0));
    show_stat("moved", &st);
    check("unlinkat rel", unlinkat(dfd, "moved", 0));
    check("fchdir", fchdir(dfd));
    char *cwd = getcwd(buf, sizeof buf);
    printf("cwd ends in sub: %d\n", cwd && strcmp(cwd + strlen(cwd) - 4, "/sub") == 0);
    check("getcwd small", syscall(SYS_getcwd, buf, 2));
    check("chdir ..", chdir(".."));
    check("close dfd", close(dfd));
    check("rmdir nonempty", rmdir("."));
    check("unlink dir", unlink("sub"));
    check("rmdir", unlinkat(AT_FDCWD, "sub", AT_REMOVEDIR));
    check("unlink link", unlink("link"));
    check("unlink a", unlink("a.txt"));
    list_dir(".");

    /* pipes */
    int p[2];
    check("pipe2", pipe2(p, O_CLOEXEC));
    check("pipe getfd", fcntl(p[0], F_GETFD));
    check("pipe write", write(p[1], "pipe data", 9));
    memset(buf, 0, sizeof buf);
    check("pipe read", read(p[0], buf, sizeof buf));
    printf("pipe '%s'\n", buf);
    check("setfl nb", fcntl(p[0], F_SETFL, O_NONBLOCK));
    check("pipe empty", read(p[0], buf, 1));
    close(p[1]);
    check("pipe eof", read(p[0], buf, 1));
    close(p[0]);

    /* bad fds and bad pointers */
    check("read badfd", read(999, buf, 1));
    check("write badfd", write(-1, buf, 1));
    check("write efault", syscall(SYS_write, 1, (void *)1, 10));
    check("read efault", read(0, (void *)-4096L, 10));
    check("open efault", open((char *)1, O_RDONLY));
    check("fstat efault", syscall(SYS_fstat, 1, (void *)8));
    check("fstat badfd", fstat(77, &st));

    check("rmdir tmp", rmdir(dir));
    return 0;
}
