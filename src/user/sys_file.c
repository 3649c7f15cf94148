/*
 * File and descriptor system calls.
 *
 * Descriptors, flags and most structures are the same on riscv64 and
 * x86-64 (target.h checks that), so these handlers mostly pass through to
 * the host kernel. Buffers the kernel fills or reads are passed directly as
 * host pointers after a window check: the host kernel reports -EFAULT for
 * unmapped guest pages. Structures whose layout differs (struct stat) or
 * which hold guest pointers (iovec arrays) are converted here.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Helpers ------------------------------------------------------------- */

/* Run `call` with the guest path at `ga` resolved into host string `P`. */
#define WITH_PATH(ga, P, call)                 \
    do {                                       \
        GuestPath gp_;                         \
        int e_ = path_get((ga), &gp_);         \
        if (e_) return e_;                     \
        const char *P = gp_.host;              \
        int64_t r_ = (call);                   \
        path_put(&gp_);                        \
        return r_;                             \
    } while (0)

static void stat_to_target(struct target_stat *t, const struct stat *h)
{
    memset(t, 0, sizeof *t);
    t->st_dev = h->st_dev;
    t->st_ino = h->st_ino;
    t->st_mode = h->st_mode;
    t->st_nlink = (uint32_t)h->st_nlink;
    t->st_uid = h->st_uid;
    t->st_gid = h->st_gid;
    t->st_rdev = h->st_rdev;
    t->st_size = h->st_size;
    t->st_blksize = (int32_t)h->st_blksize;
    t->st_blocks = h->st_blocks;
    t->st_atime_ = h->st_atim.tv_sec;
    t->st_atime_nsec = h->st_atim.tv_nsec;
    t->st_mtime_ = h->st_mtim.tv_sec;
    t->st_mtime_nsec = h->st_mtim.tv_nsec;
    t->st_ctime_ = h->st_ctim.tv_sec;
    t->st_ctime_nsec = h->st_ctim.tv_nsec;
}

static int64_t put_stat(uint64_t ga, const struct stat *h)
{
    struct target_stat t;
    stat_to_target(&t, h);
    return copy_to_guest(ga, &t, sizeof t);
}

/*
 * Translate a guest iovec array into host iovecs (malloc'd in *out).
 * Returns 0 or -errno with the kernel's checks: count range, negative
 * lengths, segments outside the window.
 */
static int iov_from_guest(uint64_t ga, int64_t cnt, struct iovec **out)
{
    struct target_iovec *tv;
    struct iovec *hv;
    *out = NULL;
    if (cnt < 0 || cnt > IOV_MAX)
        return -EINVAL;
    if (cnt == 0)
        return 0;
    tv = malloc(cnt * sizeof *tv);
    hv = malloc(cnt * sizeof *hv);
    if (!tv || !hv) {
        free(tv);
        free(hv);
        return -ENOMEM;
    }
    int err = copy_from_guest(tv, ga, cnt * sizeof *tv);
    for (int64_t i = 0; !err && i < cnt; i++) {
        if ((int64_t)tv[i].iov_len < 0)
            err = -EINVAL;
        else if (!guest_range_in_window(tv[i].iov_base, tv[i].iov_len))
            err = -EFAULT;
        hv[i].iov_base = g2h(tv[i].iov_base);
        hv[i].iov_len = tv[i].iov_len;
    }
    free(tv);
    if (err) {
        free(hv);
        return err;
    }
    *out = hv;
    return 0;
}

/* readv/writev/preadv/pwritev: nr is the host syscall. */
static int64_t do_iov(long nr, const uint64_t *a, bool with_offset)
{
    struct iovec *iov;
    int err = iov_from_guest(a[1], (int64_t)a[2], &iov);
    long r;
    if (err)
        return err;
    if (with_offset)
        r = syscall(nr, (int)a[0], iov, (int)a[2], (long)a[3], 0L);
    else
        r = syscall(nr, (int)a[0], iov, (int)a[2]);
    int64_t ret = host_ret(r);
    free(iov);
    return ret;
}

/* -- Read and write ------------------------------------------------------ */

int64_t sys_read(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(read((int)a[0], g2h(a[1]), a[2]));
}

int64_t sys_write(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(write((int)a[0], g2h(a[1]), a[2]));
}

int64_t sys_pread64(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(pread((int)a[0], g2h(a[1]), a[2], (off_t)a[3]));
}

int64_t sys_pwrite64(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(pwrite((int)a[0], g2h(a[1]), a[2], (off_t)a[3]));
}

int64_t sys_readv(CPUState *cpu, const uint64_t *a)   { (void)cpu; return do_iov(SYS_readv, a, false); }
int64_t sys_writev(CPUState *cpu, const uint64_t *a)  { (void)cpu; return do_iov(SYS_writev, a, false); }
int64_t sys_preadv(CPUState *cpu, const uint64_t *a)  { (void)cpu; return do_iov(SYS_preadv, a, true); }
int64_t sys_pwritev(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_iov(SYS_pwritev, a, true); }

int64_t sys_lseek(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(lseek((int)a[0], (off_t)a[1], (int)a[2]));
}

int64_t sys_sendfile(CPUState *cpu, const uint64_t *a)
{
    off_t off;
    (void)cpu;
    if (a[2] && copy_from_guest(&off, a[2], sizeof off))
        return -EFAULT;
    int64_t r = host_ret(
        syscall(SYS_sendfile, (int)a[0], (int)a[1], a[2] ? &off : NULL, a[3]));
    if (r >= 0 && a[2] && copy_to_guest(a[2], &off, sizeof off))
        return -EFAULT;
    return r;
}

int64_t sys_getdents64(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    return host_ret(syscall(SYS_getdents64, (int)a[0], g2h(a[1]), (unsigned)a[2]));
}

int64_t sys_ppoll(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (a[1] > (uint64_t)INT_MAX / sizeof(struct pollfd))
        return -EINVAL;
    CHECK_WINDOW(a[0], a[1] * sizeof(struct pollfd));
    if (a[2] && copy_from_guest(&ts, a[2], sizeof ts))
        return -EFAULT;
    /* The guest signal mask (a[3]) has no effect until guest signals exist. */
    int64_t r = host_ret(syscall(SYS_ppoll, g2h(a[0]), (unsigned)a[1], a[2] ? &ts : NULL,
                                 NULL, 8));
    if (a[2] && copy_to_guest(a[2], &ts, sizeof ts) && r >= 0)
        return -EFAULT;
    return r;
}

/* -- Opening and closing --------------------------------------------------- */

static bool is_proc_self(const char *path, const char *leaf)
{
    char buf[64];
    if (strncmp(path, "/proc/self/", 11) == 0 && strcmp(path + 11, leaf) == 0)
        return true;
    snprintf(buf, sizeof buf, "/proc/%d/%s", (int)getpid(), leaf);
    return strcmp(path, buf) == 0;
}

/* /proc/self/maps must describe the guest's mappings, not xlat's. */
static int open_guest_maps(void)
{
    int fd = memfd_create("xlat-maps", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    guest_dump_maps(fd);
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static int64_t do_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    if (is_proc_self(path, "exe") && opt.exe_path)
        return host_ret(open(opt.exe_path, flags & ~(O_CREAT | O_TRUNC), 0));
    if (is_proc_self(path, "maps"))
        return open_guest_maps();
    return host_ret(syscall(SYS_openat, dirfd, path, flags, mode));
}

int64_t sys_openat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, do_openat(dirfd_arg(a[0]), p, (int)a[2], (mode_t)a[3]));
}

int64_t sys_close(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(close((int)a[0]));
}

int64_t sys_dup(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(dup((int)a[0]));
}

int64_t sys_dup3(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_dup3, (int)a[0], (int)a[1], (int)a[2]));
}

int64_t sys_pipe2(CPUState *cpu, const uint64_t *a)
{
    int fds[2];
    (void)cpu;
    if (!guest_access_ok(a[0], sizeof fds, PROT_WRITE))
        return -EFAULT;
    int64_t r = host_ret(pipe2(fds, (int)a[1]));
    if (r == 0 && copy_to_guest(a[0], fds, sizeof fds)) {
        close(fds[0]);
        close(fds[1]);
        return -EFAULT;
    }
    return r;
}

int64_t sys_fcntl(CPUState *cpu, const uint64_t *a)
{
    int fd = (int)a[0], cmd = (int)a[1];
    struct flock fl;
    (void)cpu;
    switch (cmd) {
    case F_DUPFD: case F_DUPFD_CLOEXEC: case F_GETFD: case F_SETFD:
    case F_GETFL: case F_SETFL: case F_GETOWN: case F_SETOWN:
    case F_SETPIPE_SZ: case F_GETPIPE_SZ: case F_ADD_SEALS: case F_GET_SEALS:
    case F_GETSIG: case F_SETSIG: case F_GETLEASE: case F_SETLEASE: case F_NOTIFY:
        return host_ret(fcntl(fd, cmd, (long)a[2]));   /* O_* and FD_* values match */
    case F_GETLK: case F_SETLK: case F_SETLKW:
    case F_OFD_GETLK: case F_OFD_SETLK: case F_OFD_SETLKW: {
        if (copy_from_guest(&fl, a[2], sizeof fl))     /* struct flock matches */
            return -EFAULT;
        int64_t r = host_ret(fcntl(fd, cmd, &fl));
        if (r >= 0 && (cmd == F_GETLK || cmd == F_OFD_GETLK) &&
            copy_to_guest(a[2], &fl, sizeof fl))
            return -EFAULT;
        return r;
    }
    default:
        xlat_log(LOG_UNIMP, "xlat: unsupported fcntl cmd %d\n", cmd);
        return -EINVAL;
    }
}

int64_t sys_flock(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(flock((int)a[0], (int)a[1]));
}

/* -- ioctl ----------------------------------------------------------------- */

/* Requests whose argument layout is the same on both: pass through. */
int64_t sys_ioctl(CPUState *cpu, const uint64_t *a)
{
    int fd = (int)a[0];
    unsigned long req = (unsigned long)a[1];
    size_t size;
    (void)cpu;
    switch (req) {
    case TCGETS: case TCSETS: case TCSETSW: case TCSETSF:
        size = TARGET_KTERMIOS_SIZE;
        break;
    case TIOCGWINSZ: case TIOCSWINSZ:
        size = sizeof(struct winsize);
        break;
    case FIONREAD: case FIONBIO: case TIOCGPGRP: case TIOCSPGRP: case TIOCGSID:
    case TIOCGPTN: case TIOCSPTLCK: case TIOCOUTQ:
        size = sizeof(int);
        break;
    case FIOCLEX: case FIONCLEX: case TIOCNOTTY: case TIOCSCTTY:
    case TCFLSH: case TCXONC: case TCSBRK:
        return host_ret(ioctl(fd, req, (unsigned long)a[2]));   /* integer argument */
    default:
        xlat_log(LOG_UNIMP, "Unsupported ioctl: cmd=%#lx\n", req);
        return -ENOSYS;   /* like qemu-riscv64 */
    }
    CHECK_WINDOW(a[2], size);
    return host_ret(ioctl(fd, req, g2h(a[2])));
}

/* -- stat ------------------------------------------------------------------ */

int64_t sys_fstat(CPUState *cpu, const uint64_t *a)
{
    struct stat st;
    (void)cpu;
    if (fstat((int)a[0], &st) < 0)
        return -errno;
    return put_stat(a[1], &st);
}

static int64_t do_fstatat(int dirfd, const char *path, uint64_t buf, int flags)
{
    struct stat st;
    if (fstatat(dirfd, path, &st, flags) < 0)
        return -errno;
    return put_stat(buf, &st);
}

int64_t sys_newfstatat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, do_fstatat(dirfd_arg(a[0]), p, a[2], (int)a[3]));
}

static int64_t do_statx(int dirfd, const char *path, int flags, unsigned mask, uint64_t buf)
{
    struct statx sx;
    if (statx(dirfd, path, flags, mask, &sx) < 0)
        return -errno;
    return copy_to_guest(buf, &sx, sizeof sx);   /* same layout on both */
}

int64_t sys_statx(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, do_statx(dirfd_arg(a[0]), p, (int)a[2], (unsigned)a[3], a[4]));
}

static int64_t put_statfs(uint64_t ga, long r, const struct statfs *s)
{
    if (r < 0)
        return -errno;
    return copy_to_guest(ga, s, sizeof *s);   /* asm-generic statfs64 == x86-64 statfs */
}

int64_t sys_statfs(CPUState *cpu, const uint64_t *a)
{
    struct statfs s;
    (void)cpu;
    WITH_PATH(a[0], p, put_statfs(a[1], statfs(p, &s), &s));
}

int64_t sys_fstatfs(CPUState *cpu, const uint64_t *a)
{
    struct statfs s;
    (void)cpu;
    return put_statfs(a[1], fstatfs((int)a[0], &s), &s);
}

/* -- Names in directories ------------------------------------------------ */

int64_t sys_mkdirat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(mkdirat(dirfd_arg(a[0]), p, (mode_t)a[2])));
}

int64_t sys_mknodat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(mknodat(dirfd_arg(a[0]), p, (mode_t)a[2], (dev_t)a[3])));
}

int64_t sys_unlinkat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(unlinkat(dirfd_arg(a[0]), p, (int)a[2])));
}

int64_t sys_symlinkat(CPUState *cpu, const uint64_t *a)
{
    int err = 0;
    (void)cpu;
    /* The link's target is stored as is, never resolved. */
    char *target = guest_strdup(a[0], PATH_MAX, &err);
    if (!target)
        return err;
    GuestPath lp;
    int64_t r = path_get(a[2], &lp);
    if (r == 0) {
        r = host_ret(symlinkat(target, dirfd_arg(a[1]), lp.host));
        path_put(&lp);
    }
    free(target);
    return r;
}

/* Two-path calls: linkat, renameat, renameat2. */
static int64_t two_paths(const uint64_t *a, int which)
{
    GuestPath p1, p2;
    int64_t r = path_get(a[1], &p1);
    if (r)
        return r;
    r = path_get(a[3], &p2);
    if (r) {
        path_put(&p1);
        return r;
    }
    if (which == 0)
        r = host_ret(linkat(dirfd_arg(a[0]), p1.host, dirfd_arg(a[2]), p2.host, (int)a[4]));
    else
        r = host_ret(syscall(SYS_renameat2, dirfd_arg(a[0]), p1.host, dirfd_arg(a[2]), p2.host,
                             which == 1 ? 0u : (unsigned)a[4]));
    path_put(&p1);
    path_put(&p2);
    return r;
}

int64_t sys_linkat(CPUState *cpu, const uint64_t *a)    { (void)cpu; return two_paths(a, 0); }
int64_t sys_renameat(CPUState *cpu, const uint64_t *a)  { (void)cpu; return two_paths(a, 1); }
int64_t sys_renameat2(CPUState *cpu, const uint64_t *a) { (void)cpu; return two_paths(a, 2); }

static int64_t do_readlinkat(int dirfd, const char *path, uint64_t buf, int64_t size)
{
    char tmp[PATH_MAX];
    ssize_t n;
    if (size <= 0)
        return -EINVAL;
    if (is_proc_self(path, "exe") && opt.exe_path) {
        /* The guest program, not xlat. */
        if (!realpath(opt.exe_path, tmp))
            return -errno;
        n = (ssize_t)strlen(tmp);
    } else {
        n = readlinkat(dirfd, path, tmp, sizeof tmp);
        if (n < 0)
            return -errno;
    }
    if (n > size)
        n = size;
    return copy_to_guest(buf, tmp, n) ? -EFAULT : n;
}

int64_t sys_readlinkat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, do_readlinkat(dirfd_arg(a[0]), p, a[2], (int64_t)a[3]));
}

int64_t sys_faccessat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(syscall(SYS_faccessat, dirfd_arg(a[0]), p, (int)a[2])));
}

int64_t sys_faccessat2(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(syscall(SYS_faccessat2, dirfd_arg(a[0]), p, (int)a[2], (int)a[3])));
}

/* -- Attributes ------------------------------------------------------------- */

int64_t sys_truncate(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[0], p, host_ret(truncate(p, (off_t)a[1])));
}

int64_t sys_ftruncate(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(ftruncate((int)a[0], (off_t)a[1]));
}

int64_t sys_fallocate(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_fallocate, (int)a[0], (int)a[1], (off_t)a[2], (off_t)a[3]));
}

int64_t sys_fchmod(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(fchmod((int)a[0], (mode_t)a[1]));
}

int64_t sys_fchmodat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    /* The kernel's fchmodat has no flags argument (glibc emulates them). */
    WITH_PATH(a[1], p, host_ret(syscall(SYS_fchmodat, dirfd_arg(a[0]), p, (mode_t)a[2])));
}

int64_t sys_fchown(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(fchown((int)a[0], (uid_t)a[1], (gid_t)a[2]));
}

int64_t sys_fchownat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[1], p, host_ret(fchownat(dirfd_arg(a[0]), p, (uid_t)a[2], (gid_t)a[3], (int)a[4])));
}

static int64_t do_utimensat(int dirfd, const char *path, uint64_t times, int flags)
{
    struct timespec ts[2];
    if (times && copy_from_guest(ts, times, sizeof ts))
        return -EFAULT;
    return host_ret(syscall(SYS_utimensat, dirfd, path, times ? ts : NULL, flags));
}

int64_t sys_utimensat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (!a[1])   /* futimens: the kernel accepts a NULL path */
        return do_utimensat(dirfd_arg(a[0]), NULL, a[2], (int)a[3]);
    WITH_PATH(a[1], p, do_utimensat(dirfd_arg(a[0]), p, a[2], (int)a[3]));
}

int64_t sys_sync(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    sync();
    return 0;
}

int64_t sys_fsync(CPUState *cpu, const uint64_t *a)     { (void)cpu; return host_ret(fsync((int)a[0])); }
int64_t sys_fdatasync(CPUState *cpu, const uint64_t *a) { (void)cpu; return host_ret(fdatasync((int)a[0])); }

/* -- Working directory ------------------------------------------------------ */

int64_t sys_getcwd(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[0], a[1]);
    return host_ret(syscall(SYS_getcwd, g2h(a[0]), a[1]));
}

int64_t sys_chdir(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    WITH_PATH(a[0], p, host_ret(chdir(p)));
}

int64_t sys_fchdir(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(fchdir((int)a[0]));
}
