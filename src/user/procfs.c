/*
 * The guest's view of /proc/self.
 *
 * A few /proc files describe the process image, and the host kernel would
 * describe xlat's instead of the guest's: exe, auxv, maps, smaps, cmdline,
 * stat (under /proc/self/, /proc/<our pid>/, /proc/thread-self/ and
 * /proc/self/task/<tid>/), plus /proc/cpuinfo (a riscv64 one). Opening one
 * of them returns a memfd holding synthesized contents, as qemu-user does;
 * readlink of exe names the guest program. Everything else in /proc is the
 * host's and passes through (fd/, status, mounts... are the same for guest
 * and host), except /proc/<pid>/mem (see procfs_guard_fd).
 */
#define _GNU_SOURCE
#include "user/procfs.h"
#include "riscv/isa.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/loader.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/own_fd.h"
#include "user/path.h"
#include "user/target.h"

static int    proc_argc;
static char **proc_argv;
static uint64_t proc_start_sp;

/*
 * /proc/self/exe: the program's file as it is named when asked (renamed,
 * or " (deleted)", as Linux says), through its descriptor, kept open for
 * that; the path it was started by if there is none. Most processes never
 * ask, and a readlink of /proc/self/fd/N costs microseconds in a VM.
 */
static int exe_fd = -1;
static const char *exe_given;

void procfs_set_exe(int fd, const char *given)
{
    exe_fd = fd < 0 ? -1 : own_fd_take(fd);
    exe_given = given;
}

long procfs_exe_path(char *buf, size_t len)
{
    if (exe_fd >= 0) {
        long n = path_fd_name(exe_fd, buf, len);
        if (n >= 0)
            return n;
    }
    if (!exe_given)
        return -ENOENT;
    int n = snprintf(buf, len, "%s", exe_given);
    return n >= 0 && (size_t)n < len ? n : -ENAMETOOLONG;
}

void procfs_init(int argc, char *const argv[], uint64_t initial_sp, const char *execfn)
{
    proc_argc = argc;
    proc_argv = calloc((size_t)argc + 1, sizeof *proc_argv);
    for (int i = 0; proc_argv && i < argc; i++)
        proc_argv[i] = strdup(argv[i]);
    proc_start_sp = initial_sp;
    /* comm is the basename of the path execve was given (a symlink's own
     * name, not its target's), as Linux sets it. */
    if (execfn && *execfn) {
        const char *slash = strrchr(execfn, '/');
        char comm[16];
        snprintf(comm, sizeof comm, "%s", slash ? slash + 1 : execfn);
        prctl(PR_SET_NAME, comm);
    }
}

/* -- Recognizing the paths ---------------------------------------------- */

/*
 * If path is <dir>/<leaf> for one of the directories that mean this
 * process (or this thread), return the leaf, else NULL.
 */
static const char *self_leaf(const char *path)
{
    char buf[64];
    size_t n;
    static const char *const fixed[] = { "/proc/self/", "/proc/thread-self/" };
    if (strncmp(path, "/proc/", 6) != 0)
        return NULL;                    /* most paths: no getpid, no snprintf */
    for (size_t i = 0; i < 2; i++) {
        n = strlen(fixed[i]);
        if (strncmp(path, fixed[i], n) == 0)
            return path + n;
    }
    n = (size_t)snprintf(buf, sizeof buf, "/proc/%d/", (int)getpid());
    if (strncmp(path, buf, n) == 0)
        path += n - 1;
    else if (strncmp(path, "/proc/self/", 11) == 0)
        path += 10;
    else
        return NULL;
    /* "/task/<tid>/leaf" below it names one of our threads. */
    n = (size_t)snprintf(buf, sizeof buf, "/task/%d/", (int)gettid());
    if (strncmp(path, buf, n) == 0)
        return path + n;
    return path + 1;
}

/* -- Contents ----------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0)
            return -errno;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fill_cmdline(int fd)
{
    for (int i = 0; i < proc_argc; i++) {
        int e = write_all(fd, proc_argv[i], strlen(proc_argv[i]) + 1);
        if (e)
            return e;
    }
    return 0;
}

static int fill_auxv(int fd)
{
    uint8_t buf[1024];
    uint64_t len = stack_auxv_len < sizeof buf ? stack_auxv_len : sizeof buf;
    if (copy_from_guest(buf, stack_auxv_addr, len))
        return -EFAULT;
    return write_all(fd, buf, len);
}

/* The guest maps text in a malloc'd string (for smaps and stat). */
static char *maps_text(void)
{
    int fd = memfd_create("xlat-maps", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    guest_dump_maps(fd);
    off_t len = lseek(fd, 0, SEEK_END);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (s && pread(fd, s, (size_t)len, 0) == len)
        s[len] = 0;
    else {
        free(s);
        s = NULL;
    }
    close(fd);
    return s;
}

/* Per-mapping details in qemu-user's style: sizes, no residency data. */
static int fill_smaps(int fd)
{
    char *text = maps_text();
    if (!text)
        return -ENOMEM;
    int e = 0;
    for (char *line = text, *next; !e && *line; line = next) {
        next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        unsigned long long lo = 0, hi = 0;
        sscanf(line, "%llx-%llx", &lo, &hi);
        e = write_all(fd, line, (size_t)(next - line));
        if (!e)
            e = dprintf(fd,
                        "Size:           %7llu kB\nKernelPageSize:        4 kB\n"
                        "MMUPageSize:           4 kB\nRss:                   0 kB\n"
                        "Pss:                   0 kB\nShared_Clean:          0 kB\n"
                        "Shared_Dirty:          0 kB\nPrivate_Clean:         0 kB\n"
                        "Private_Dirty:         0 kB\nReferenced:            0 kB\n"
                        "Anonymous:             0 kB\nLazyFree:              0 kB\n"
                        "AnonHugePages:         0 kB\nShmemPmdMapped:        0 kB\n"
                        "FilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
                        "Private_Hugetlb:       0 kB\nSwap:                  0 kB\n"
                        "SwapPss:               0 kB\nLocked:                0 kB\n"
                        "THPeligible:    0\n",
                        (hi - lo) / 1024) < 0 ? -errno : 0;
    }
    free(text);
    return e;
}

static uint64_t guest_vsize(void)
{
    char *text = maps_text();
    uint64_t total = 0;
    for (char *line = text; line && *line;) {
        unsigned long long lo = 0, hi = 0;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2)
            total += hi - lo;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    free(text);
    return total;
}

/*
 * The host's stat line with the image fields replaced: vsize (23) is the
 * guest's, startstack (28) the guest's initial sp, and the code, data and
 * argument addresses (26, 27, 29, 30, 45-51) are 0, as Linux shows them to
 * readers without ptrace access.
 */
static int fill_stat(int fd)
{
    char host[2048];
    int hfd = open("/proc/thread-self/stat", O_RDONLY | O_CLOEXEC);
    if (hfd < 0)
        return -errno;
    ssize_t n = read(hfd, host, sizeof host - 1);
    close(hfd);
    if (n <= 0)
        return -EIO;
    host[n] = 0;
    char *rest = strrchr(host, ')');
    if (!rest)
        return -EIO;
    rest += 2;   /* ") " */
    int e = write_all(fd, host, (size_t)(rest - host));
    int field = 3;
    for (char *tok = strtok(rest, " \n"); !e && tok; tok = strtok(NULL, " \n"), field++) {
        char val[32];
        const char *v = tok;
        if (field == 23) {
            snprintf(val, sizeof val, "%" PRIu64, guest_vsize());
            v = val;
        } else if (field == 28) {
            snprintf(val, sizeof val, "%" PRIu64, proc_start_sp);
            v = val;
        } else if (field == 26 || field == 27 || field == 29 || field == 30 ||
                   (field >= 45 && field <= 51)) {
            v = "0";
        }
        e = dprintf(fd, "%s%s", field > 3 ? " " : "", v) < 0 ? -errno : 0;
    }
    if (!e)
        e = write_all(fd, "\n", 1);
    return e;
}

/* The isa string is what -cpu enabled (see isa.c and hwprobe). */
static int fill_cpuinfo(int fd)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    char isa[96];
    isa_string(isa, sizeof isa);
    for (long i = 0; i < (n > 0 ? n : 1); i++)
        if (dprintf(fd, "processor\t: %ld\nhart\t\t: %ld\nisa\t\t: %s\n"
                        "mmu\t\t: sv39\nuarch\t\t: xlat\n\n", i, i, isa) < 0)
            return -errno;
    return 0;
}

/* -- Entry points --------------------------------------------------------- */

static int fill_maps(int fd)
{
    guest_dump_maps(fd);
    return 0;
}

typedef int (*FillFn)(int fd);

static FillFn fill_for(const char *path)
{
    if (strcmp(path, "/proc/cpuinfo") == 0)
        return fill_cpuinfo;
    const char *leaf = self_leaf(path);
    if (!leaf)
        return NULL;
    if (strcmp(leaf, "maps") == 0)
        return fill_maps;
    if (strcmp(leaf, "smaps") == 0)
        return fill_smaps;
    if (strcmp(leaf, "auxv") == 0)
        return fill_auxv;
    if (strcmp(leaf, "cmdline") == 0)
        return fill_cmdline;
    if (strcmp(leaf, "stat") == 0)
        return fill_stat;
    return NULL;
}

int procfs_exe_open(int flags)
{
    char exe[PATH_MAX];
    if (exe_fd >= 0) {
        snprintf(exe, sizeof exe, "/proc/self/fd/%d", exe_fd);
        int fd = open(exe, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
    }
    long n = procfs_exe_path(exe, sizeof exe);
    return n < 0 ? (int)n : path_open(exe, flags);
}

bool procfs_open(const char *path, int flags, int64_t *ret)
{
    const char *leaf = self_leaf(path);
    if (leaf && strcmp(leaf, "exe") == 0) {
        *ret = procfs_exe_open(flags & ~(O_CREAT | O_TRUNC | TARGET_O_ACCMODE | O_CLOEXEC));
        if (*ret >= 0 && !(flags & O_CLOEXEC))
            fcntl((int)*ret, F_SETFD, 0);
        return true;
    }
    FillFn fill = fill_for(path);
    if (!fill)
        return false;
    if ((flags & TARGET_O_ACCMODE) != O_RDONLY) {
        *ret = -EACCES;
        return true;
    }
    int fd = memfd_create("xlat-proc", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) {
        *ret = -errno;
        return true;
    }
    int e = fill(fd);
    if (e) {
        close(fd);
        *ret = e;
        return true;
    }
    lseek(fd, 0, SEEK_SET);
    *ret = fd;
    return true;
}

bool procfs_readlink(const char *path, char *buf, size_t len, int64_t *n)
{
    const char *leaf = self_leaf(path);
    char exe[PATH_MAX];
    long got;
    if (!leaf || strcmp(leaf, "exe") != 0 || (got = procfs_exe_path(exe, sizeof exe)) < 0)
        return false;
    size_t l = (size_t)got;               /* canonical already */
    if (l > len)
        l = len;
    memcpy(buf, exe, l);
    *n = (int64_t)l;
    return true;
}

/* -- /proc/<pid>/mem ------------------------------------------------------ */

#define PROC_SUPER_MAGIC_ 0x9fa0

/*
 * The isolation promise: /proc/<pid>/mem of xlat's own process (or of any
 * other, such as a forked xlat) would let the guest read and write host
 * memory outside the guest window, bypassing every check. So an opened
 * file that is a procfs "mem" file, however its path was spelled (dirfd,
 * "..", /proc/<pid>/task/<tid>/mem, another procfs mount), is closed and
 * the open fails with EACCES. Checking the opened file rather than the
 * string is what makes this independent of the spelling.
 */
int64_t procfs_guard_fd(int64_t fd)
{
    if (fd < 0)
        return fd;
    struct statfs sfs;
    if (fstatfs((int)fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC_)
        return fd;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", (int)fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return fd;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    if (base && strcmp(base, "/mem") == 0) {
        close((int)fd);
        return -EACCES;
    }
    return fd;
}
