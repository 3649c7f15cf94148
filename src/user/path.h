/*
 * The guest's file system view: how a guest path becomes a host one.
 *
 * Three ways, chosen on the command line:
 *
 *  - none: guest paths are host paths.
 *  - -L DIR (QEMU_LD_PREFIX), QEMU's meaning: a lookup of an absolute path
 *    tries DIR/path first and falls back to the host's path when that does
 *    not exist. /dev, /proc and /sys are never looked up under DIR: they
 *    belong to the host kernel (DIR's copies are plain directories, and
 *    e.g. DIR/dev/ptmx lies outside any devpts mount).
 *  - --root DIR (XLAT_ROOT), with --bind HOST[:GUEST]: the guest's / is
 *    DIR, as in a chroot that needs no privileges (proot -r). Every path is
 *    resolved by xlat one component at a time inside DIR -- absolute
 *    symlinks restart at DIR, ".." stops at DIR -- except below the mount
 *    points: /dev, /proc, /sys and each --bind, which lead into the host's
 *    directories. Nothing outside that view can be reached by any spelling;
 *    procfs's magic links (/proc/<pid>/root, cwd, exe, fd/N) are read as
 *    the guest's paths they name.
 *
 * Resolution hands the host call a directory descriptor and a single name in
 * it (or a pinned "/proc/self/fd/N" for calls that follow the last link), so
 * a guest racing renames or symlink swaps against it cannot redirect the
 * host's lookup outside the view.
 */
#ifndef XLAT_USER_PATH_H
#define XLAT_USER_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a system call uses its path (path_get_at's `how`). */
enum {
    PATH_FOLLOW = 1 << 0,   /* a symlink as the last component is followed */
    PATH_PARENT = 1 << 1,   /* the call acts on the name in its directory (mkdir, unlink,
                               rename, link, symlink, mknod): never follows the last one */
    PATH_CREATE = 1 << 2,   /* open with O_CREAT: a missing last component is fine */
    PATH_LOOKUP = 1 << 3,   /* -L applies (QEMU applies it to lookups only) */
};

/* A guest path argument, resolved for one host call. */
typedef struct GuestPath {
    char *raw;              /* malloc'd copy of the guest string */
    int dirfd;              /* pass to the host *at() call */
    const char *host;       /* ... with this path */
    bool created;           /* --root, PATH_CREATE: the last component did not exist */
    int pin;                /* an O_PATH descriptor path_put closes (-1: none) */
    bool proc_link;         /* --root: the path names a symlink in /proc/<pid>/ */
    char buf[PATH_MAX];
    char abs[NAME_MAX + 48];    /* path_host_abs's "/proc/self/fd/D/name" */
} GuestPath;

/*
 * Fetch the guest path at ga and resolve it relative to the guest's dirfd
 * (AT_FDCWD or a descriptor). 0 or -errno; path_put must follow success.
 */
int path_get_at(int dirfd, uint64_t ga, unsigned how, GuestPath *p);

/* The same for a path xlat already holds (an interpreter named by #!). */
int path_lookup_at(int dirfd, const char *path, unsigned how, GuestPath *p);

/* path_get_at(AT_FDCWD, ga, PATH_FOLLOW | PATH_LOOKUP, p) */
int path_get(uint64_t ga, GuestPath *p);

void path_put(GuestPath *p);

/*
 * The resolved path as one host path string, for host calls that take no
 * directory descriptor (statfs, truncate, chdir, xattrs, inotify).
 */
const char *path_host_abs(GuestPath *p);

/*
 * readlink of a resolved path (PATH_LOOKUP without PATH_FOLLOW) as the
 * guest sees it: under --root, a procfs magic link shows the guest path it
 * names. Length or -errno.
 */
long path_readlink(GuestPath *p, char *buf, size_t len);

/* getcwd as the guest sees it, NUL-terminated: length with the NUL, or -errno. */
long path_getcwd(char *buf, size_t len);

/*
 * Open a guest path for xlat itself (the loader, exec's checks), resolved
 * as `how` says, with open flags (O_CLOEXEC added): a host fd or -errno.
 * path_open: from the working directory, following links.
 */
int path_open_at(int dirfd, const char *guest_path, unsigned how, int flags);
int path_open(const char *guest_path, int flags);
/* path_open_at, and the host path the name resolved to (path_host_abs)
 * into name[len] when it resolved (NULL: not wanted), opened or not. */
int path_open_named(int dirfd, const char *guest_path, unsigned how, int flags, char *name,
                    size_t len);

/* Is --root in effect? */
bool path_rooted(void);

/*
 * --root: the guest path of host path `host` (absolute, canonical) into out.
 * False if the guest cannot see it.
 */
bool path_host_to_guest(const char *host, char *out, size_t len);

/* The guest's name of the descriptor fd (readlink of /proc/self/fd/N as the
 * guest sees it): its length, or -errno. */
long path_fd_name(int fd, char *out, size_t len);

/*
 * Options: --root DIR, --bind HOST[:GUEST] (any number, after --root or
 * before it), then path_init once before the guest starts: opens the
 * directories and moves the working directory into the view. Exits with a
 * message if DIR or a bound directory cannot be opened.
 */
void path_set_root(const char *dir);
void path_add_bind(const char *spec);
void path_init(void);

/* The options that give an exec'd xlat the same view (NULL-terminated
 * pairs appended to argv by main.c's record_exec_args). */
int path_exec_args(char **v, int max);

/* The -L lookup of an absolute guest path into buf (or the path itself). */
const char *path_resolve(const char *guest_path, char *buf, size_t len);

#endif
