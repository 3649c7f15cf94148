/*
 * Guest paths to host paths (see path.h): -L lookups, and --root's
 * resolver, which walks a guest path one component at a time over
 * O_PATH descriptors inside the guest's view.
 *
 * The walk keeps `g`, the canonical guest path of the directory it stands
 * in (no symlinks, no "." or ".."), and a descriptor of that directory.
 * A component is opened with O_PATH|O_NOFOLLOW relative to that
 * descriptor, so the host kernel never follows a link or climbs a ".." for
 * it. A symlink's target is spliced into the rest of the path (absolute:
 * from the guest's /); ".." is taken lexically on g and the walk starts
 * again from / along g's parent, which is what the kernel does too, since g
 * has no symlinks; entering a mount point's guest path switches to that
 * mount's host directory.
 */
#define _GNU_SOURCE
#include "user/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/own_fd.h"
#include "user/procfs.h"

#define MAX_MOUNTS   32
#define MAX_SYMLINKS 40            /* the kernel's limit (ELOOP) */

/* -- -L ------------------------------------------------------------------- */

/* /dev, /proc and /sys are the host kernel's, also under -L. */
static bool host_kernel_path(const char *p)
{
    static const char *const dirs[] = { "/dev", "/proc", "/sys" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        size_t n = strlen(dirs[i]);
        if (!strncmp(p, dirs[i], n) && (p[n] == '\0' || p[n] == '/'))
            return true;
    }
    return false;
}

/*
 * As qemu's path(): the prefixed name is used if it exists, following
 * symbolic links (so a link in DIR that points nowhere in DIR falls back to
 * the host's file).
 */
const char *path_resolve(const char *guest_path, char *buf, size_t len)
{
    if (!opt.ld_prefix || !opt.ld_prefix[0] || guest_path[0] != '/' ||
        host_kernel_path(guest_path))
        return guest_path;
    if ((size_t)snprintf(buf, len, "%s%s", opt.ld_prefix, guest_path) >= len)
        return guest_path;
    return access(buf, F_OK) == 0 ? buf : guest_path;
}

/* -- The mount table (--root, --bind) -------------------------------------- */

typedef struct Mount {
    char *guest;            /* canonical guest path; "/" for the root */
    char *host;             /* canonical host path */
    int fd;                 /* O_PATH directory descriptor (own_fd) */
} Mount;

static Mount mounts[MAX_MOUNTS];   /* [0] is the root */
static int glue_fd = -1;           /* an empty deleted directory (walk's stand-in) */
static const Mount glue_mount;
static int nmounts;
static const char *root_dir;       /* --root as given */
static char *bind_specs[MAX_MOUNTS];
static int nbinds;

bool path_rooted(void) { return nmounts > 0; }

void path_set_root(const char *dir) { root_dir = dir; }

void path_add_bind(const char *spec)
{
    if (nbinds >= MAX_MOUNTS - 4) {
        fprintf(stderr, "xlat: too many --bind options\n");
        exit(1);
    }
    bind_specs[nbinds++] = strdup(spec);
}

/* Lexically clean an absolute guest path in place: no "//", ".", ".." or
 * trailing slash. */
static void clean_abs(char *p)
{
    char *out = p, *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        char *end = strchrnul(in, '/');
        size_t n = (size_t)(end - in);
        if (n == 0 || (n == 1 && in[0] == '.')) {
            /* nothing */
        } else if (n == 2 && in[0] == '.' && in[1] == '.') {
            while (out > p && *--out != '/')
                ;
        } else {
            *out++ = '/';
            memmove(out, in, n);
            out += n;
        }
        in = end;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
}

static void add_mount(const char *guest, const char *host)
{
    char *real = realpath(host, NULL);
    int fd = real ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd < 0) {
        fprintf(stderr, "xlat: cannot open directory '%s': %s\n", host, strerror(errno));
        exit(1);
    }
    char *g = strdup(guest);
    clean_abs(g);
    for (int i = 0; i < nmounts; i++) {
        if (!strcmp(mounts[i].guest, g)) {      /* a later --bind replaces */
            own_fd_close(mounts[i].fd);
            free(mounts[i].guest);
            free(mounts[i].host);
            mounts[i] = mounts[--nmounts];
            break;
        }
    }
    mounts[nmounts++] = (Mount){ .guest = g, .host = real, .fd = own_fd_take(fd) };
}

/* The mount whose guest path is exactly g (not the root), or NULL. */
static const Mount *mount_at(const char *g)
{
    for (int i = 1; i < nmounts; i++)
        if (!strcmp(mounts[i].guest, g))
            return &mounts[i];
    return NULL;
}

/* Is p equal to prefix or below it? (prefix canonical; "/" matches all) */
static size_t path_prefix(const char *p, const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 1)
        return p[0] == '/' ? 1 : 0;
    if (strncmp(p, prefix, n) || (p[n] != '\0' && p[n] != '/'))
        return 0;
    return n;
}

/* Is some mount point below guest directory g (g a proper ancestor of it)? */
static bool mount_below(const char *g)
{
    for (int i = 1; i < nmounts; i++) {
        size_t n = path_prefix(mounts[i].guest, g);
        if (n && mounts[i].guest[n] == '/')
            return true;
    }
    return false;
}

bool path_host_to_guest(const char *host, char *out, size_t len)
{
    const Mount *best = NULL;
    size_t best_n = 0;
    for (int i = 0; i < nmounts; i++) {
        size_t n = path_prefix(host, mounts[i].host);
        if (n > best_n) {
            best = &mounts[i];
            best_n = n;
        }
    }
    if (!best)
        return false;
    const char *rest = host + best_n;
    if (best_n == 1)
        rest = host;                            /* a mount of the host's / itself */
    const char *g = best->guest;
    int n = snprintf(out, len, "%s%s", strcmp(g, "/") || !*rest ? g : "", rest);
    return n > 0 && (size_t)n < len;
}

long path_fd_name(int fd, char *out, size_t len)
{
    char link[32], host[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, host, sizeof host - 1);
    if (n < 0)
        return -errno;
    host[n] = '\0';
    if (host[0] != '/' || !path_rooted()) {     /* pipe:[...], or no view to map into */
        if ((size_t)n >= len)
            return -ENAMETOOLONG;
        memcpy(out, host, (size_t)n + 1);
        return n;
    }
    if (!path_host_to_guest(host, out, len))
        return -EACCES;                          /* outside the guest's view */
    return (long)strlen(out);
}

void path_init(void)
{
    if (!root_dir)
        return;
    opt.ld_prefix = NULL;                  /* --root wins over -L / QEMU_LD_PREFIX */
    add_mount("/", root_dir);
    add_mount("/dev", "/dev");
    add_mount("/proc", "/proc");
    add_mount("/sys", "/sys");
    char glue[] = "/tmp/xlat-glue-XXXXXX";
    if (nbinds && mkdtemp(glue)) {
        glue_fd = own_fd_take(open(glue, O_PATH | O_DIRECTORY | O_CLOEXEC));
        rmdir(glue);                       /* nothing is left behind, nothing can be created */
    }
    for (int i = 0; i < nbinds; i++) {
        char *spec = bind_specs[i], *colon = strchr(spec, ':');
        if (colon)
            *colon = '\0';
        const char *guest = colon ? colon + 1 : spec;
        if (guest[0] != '/') {
            fprintf(stderr, "xlat: --bind %s: the guest path must be absolute\n", spec);
            exit(1);
        }
        add_mount(guest, spec);
        /* An exec'd xlat gets the canonical pair: it may start elsewhere. */
        char *canon = NULL;
        if (asprintf(&canon, "%s:%s", mounts[nmounts - 1].host, mounts[nmounts - 1].guest) < 0)
            exit(1);
        free(spec);
        bind_specs[i] = canon;
    }
    /* Start where the host's working directory is in the view, else at /. */
    char cwd[PATH_MAX], g[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || !path_host_to_guest(cwd, g, sizeof g)) {
        if (fchdir(mounts[0].fd) != 0) {
            perror("xlat: --root");
            exit(1);
        }
    }
}

int path_exec_args(char **v, int max)
{
    int n = 0;
    if (!path_rooted())
        return 0;
    if (n + 2 <= max) {
        v[n++] = "--root";
        v[n++] = mounts[0].host;
    }
    for (int i = 0; i < nbinds && n + 2 <= max; i++) {
        v[n++] = "--bind";
        v[n++] = bind_specs[i];
    }
    return n;
}

/* -- The resolver ------------------------------------------------------------ */

/* Where a walk ended: the directory holding the last component, and it. */
typedef struct Lookup {
    int dirfd;              /* directory of the last component */
    bool dir_owned;         /* dirfd is ours to close */
    char name[NAME_MAX + 2];    /* the last component ("." for the directory itself) */
    int objfd;              /* O_PATH|O_NOFOLLOW of the object, or -1 */
    bool kernel_follow;     /* a procfs magic link the host may follow itself */
    char guest[PATH_MAX];   /* the object's canonical guest path */
} Lookup;

/* The walk's position. */
typedef struct Cur {
    int fd;
    bool owned;
    char g[PATH_MAX];
} Cur;

static void cur_set(Cur *c, int fd, bool owned)
{
    if (c->owned)
        close(c->fd);
    c->fd = fd;
    c->owned = owned;
}

static void cur_root(Cur *c)
{
    cur_set(c, mounts[0].fd, false);
    strcpy(c->g, "/");
}

static bool join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
    return n > 0 && n < PATH_MAX;
}

/* pid of a "/proc/<pid>" prefix of g, and where the rest starts; 0 if none. */
static int proc_pid_of(const char *g, const char **rest)
{
    if (strncmp(g, "/proc/", 6))
        return 0;
    char *end;
    long pid = strtol(g + 6, &end, 10);
    if (end == g + 6 || (*end && *end != '/') || pid <= 0)
        return 0;
    *rest = end;
    return (int)pid;
}

enum link_kind { LINK_SPLICE, LINK_KERNEL };

/*
 * What the symlink `name` at guest path `g2`, with target `t`, means: spliced
 * (t rewritten into a guest path where needed) or left to the host kernel
 * (a procfs magic link naming one of this process's open files). -errno if
 * the guest cannot go there.
 */
static int classify_link(const char *g2, char *t, size_t tlen, bool final)
{
    const char *rest;
    int pid = proc_pid_of(g2, &rest);
    if (!pid)
        return LINK_SPLICE;                    /* an ordinary symlink */
    const char *leaf = strrchr(rest, '/');
    leaf = leaf ? leaf + 1 : rest;
    bool self = pid == getpid();
    if (!strcmp(leaf, "root"))                  /* every process's root is the guest's / */
        return snprintf(t, tlen, "/"), LINK_SPLICE;
    char exe[PATH_MAX];
    if (self && !strcmp(rest, "/exe") && procfs_exe_path(exe, sizeof exe) >= 0)
        return snprintf(t, tlen, "%s", exe), LINK_SPLICE;
    if (final && self && strstr(rest, "/fd/"))
        return LINK_KERNEL;                    /* an open file of ours: as the kernel does */
    if (t[0] != '/')
        return final ? LINK_KERNEL : -ENOTDIR;   /* pipe:[...], anon_inode:... */
    char g[PATH_MAX];
    if (!path_host_to_guest(t, g, sizeof g))
        return -EACCES;                        /* outside the guest's view */
    snprintf(t, tlen, "%s", g);
    return LINK_SPLICE;
}

/* Replace the walk's remaining path `rest` by target + "/" + rest. */
static int splice_link(char *rest, size_t cap, const char *target)
{
    size_t tl = strlen(target), rl = strlen(rest);
    if (tl + 1 + rl + 1 > cap)
        return -ENAMETOOLONG;
    memmove(rest + tl + 1, rest, rl + 1);
    memcpy(rest, target, tl);
    rest[tl] = rl ? '/' : '\0';
    return 0;
}

/*
 * Walk `path` from the directory (fd, g) in the guest's view. how: PATH_*.
 * On success fills *L (the caller closes L->dirfd if dir_owned and objfd).
 */
static int walk(int start_fd, const char *start_g, const char *path, unsigned how, Lookup *L)
{
    char rest[2 * PATH_MAX];
    Cur c = { .fd = start_fd, .owned = false };
    int links = 0, err = 0;
    snprintf(c.g, sizeof c.g, "%s", start_g);
    if (strlen(path) >= PATH_MAX)
        return -ENAMETOOLONG;
    strcpy(rest, path);
    bool trailing = rest[0] && rest[strlen(rest) - 1] == '/';

    for (;;) {
        char *p = rest;
        if (*p == '/')
            cur_root(&c);
        while (*p == '/')
            p++;
        if (!*p) {                         /* the path names the directory c itself */
            *L = (Lookup){ .dirfd = c.fd, .dir_owned = c.owned, .objfd = -1 };
            strcpy(L->name, ".");
            strcpy(L->guest, c.g);
            return 0;
        }
        char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        char *next = end;
        while (*next == '/')
            next++;
        bool final = !*next;
        if (n > NAME_MAX) {
            err = -ENAMETOOLONG;
            break;
        }
        char name[NAME_MAX + 1];
        memcpy(name, p, n);
        name[n] = '\0';
        memmove(rest, next, strlen(next) + 1);

        bool dots = !strcmp(name, ".") || !strcmp(name, "..");
        if (dots && final && (how & PATH_PARENT)) {
            /* rmdir("x/.."), mkdir("."): the host refuses the name itself
             * (ENOTEMPTY, EEXIST ...) without looking further. */
            *L = (Lookup){ .dirfd = c.fd, .dir_owned = c.owned, .objfd = -1 };
            strcpy(L->name, name);
            strcpy(L->guest, c.g);
            return 0;
        }
        if (!strcmp(name, "."))
            continue;                      /* at the end: names c itself */
        if (!strcmp(name, "..")) {
            /* g has no symlinks: its parent is lexical. Walk there from /. */
            char parent[PATH_MAX];
            strcpy(parent, c.g);
            char *slash = strrchr(parent, '/');
            slash[slash == parent ? 1 : 0] = '\0';
            if ((err = splice_link(rest, sizeof rest, parent)) < 0)
                break;
            continue;
        }
        char g2[PATH_MAX];
        if (!join(g2, c.g, name)) {
            err = -ENAMETOOLONG;
            break;
        }
        const Mount *m = mount_at(g2);
        int fd = m ? m->fd : openat(c.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && glue_fd >= 0 && mount_below(g2)) {
            /* A directory on the way to a mount point that the root lacks (a
             * --bind of a deep host path): an empty, unlinked stand-in. */
            fd = glue_fd;
            m = &glue_mount;
        }
        if (m && final) {                  /* a mount point: its host directory itself */
            *L = (Lookup){ .dirfd = fd, .objfd = -1 };
            strcpy(L->name, ".");
            strcpy(L->guest, g2);
            cur_set(&c, -1, false);
            return 0;
        }
        if (fd < 0) {
            err = -errno;
            if (err == -ENOENT && final) {   /* the caller decides (O_CREAT, mkdir ...) */
                *L = (Lookup){ .dirfd = c.fd, .dir_owned = c.owned, .objfd = -1 };
                strcpy(L->name, name);
                strcpy(L->guest, g2);
                return 0;
            }
            break;
        }
        char target[PATH_MAX];
        ssize_t tl = m ? -1 : readlinkat(fd, "", target, sizeof target - 1);
        if (tl >= 0) {
            target[tl] = '\0';
            bool follow = !final || (how & PATH_FOLLOW) || (trailing && !(how & PATH_PARENT));
            int kind = follow ? classify_link(g2, target, sizeof target, final) : LINK_SPLICE;
            if (!follow || kind == LINK_KERNEL) {
                *L = (Lookup){ .dirfd = c.fd, .dir_owned = c.owned, .objfd = fd,
                               .kernel_follow = kind == LINK_KERNEL };
                strcpy(L->name, name);
                strcpy(L->guest, g2);
                return 0;
            }
            close(fd);
            if (kind < 0 || !target[0]) {
                err = kind < 0 ? kind : -ENOENT;   /* an empty link leads nowhere */
                break;
            }
            if (++links > MAX_SYMLINKS) {
                err = -ELOOP;
                break;
            }
            if ((err = splice_link(rest, sizeof rest, target)) < 0)
                break;
            continue;
        }
        if (final) {
            *L = (Lookup){ .dirfd = c.fd, .dir_owned = c.owned, .objfd = m ? dup(fd) : fd };
            strcpy(L->name, name);
            strcpy(L->guest, g2);
            if (trailing && !(how & PATH_PARENT)) {
                struct stat st;
                if (fstat(L->objfd, &st) == 0 && !S_ISDIR(st.st_mode)) {
                    close(L->objfd);
                    if (L->dir_owned)
                        close(L->dirfd);
                    return -ENOTDIR;
                }
            }
            return 0;
        }
        cur_set(&c, fd, !m);
        strcpy(c.g, g2);
    }
    cur_set(&c, -1, false);
    return err;
}

/* The guest path of the directory a relative path starts from. */
static int start_of(int dirfd, char *g, size_t len)
{
    if (dirfd == AT_FDCWD) {
        char host[PATH_MAX];
        if (!getcwd(host, sizeof host))
            return -errno;
        return path_host_to_guest(host, g, len) ? 0 : -EACCES;
    }
    long n = path_fd_name(dirfd, g, len);
    if (n < 0)
        return n == -ENOENT ? -EBADF : (int)n;
    return g[0] == '/' ? 0 : -ENOTDIR;
}

/* --root: resolve p->raw into p->dirfd/p->host. */
static int resolve_rooted(int dirfd, GuestPath *p, unsigned how)
{
    char g[PATH_MAX] = "/";
    int err;
    if (p->raw[0] != '/' && (err = start_of(dirfd, g, sizeof g)) < 0)
        return err;
    Lookup L;
    if ((err = walk(p->raw[0] == '/' ? mounts[0].fd : dirfd, g, p->raw, how, &L)) < 0)
        return err;
    if (L.dir_owned)
        p->pin = L.dirfd;                      /* closed by path_put */
    const char *rest;
    p->proc_link = proc_pid_of(L.guest, &rest) && L.objfd >= 0;
    p->dirfd = L.dirfd;
    bool exists = L.objfd >= 0 || !strcmp(L.name, ".");
    if ((how & PATH_PARENT) || L.kernel_follow || !(how & PATH_FOLLOW)) {
        /* The host acts on the name in its directory without following it. */
        snprintf(p->buf, sizeof p->buf, "%s", L.name);
        if (L.objfd >= 0)
            close(L.objfd);
    } else if (!exists) {
        if (!(how & PATH_CREATE))
            goto enoent;
        snprintf(p->buf, sizeof p->buf, "%s", L.name);
        p->created = true;
    } else if (L.objfd < 0) {
        snprintf(p->buf, sizeof p->buf, ".");   /* the directory itself */
    } else {
        /* Follow through the pinned object: no symlink can be swapped in. */
        if (p->pin >= 0)
            close(p->pin);
        p->pin = L.objfd;
        p->dirfd = AT_FDCWD;
        snprintf(p->buf, sizeof p->buf, "/proc/self/fd/%d", L.objfd);
    }
    if (!exists && !(how & (PATH_PARENT | PATH_CREATE)) && !L.kernel_follow)
        goto enoent;
    p->host = p->buf;
    return 0;
enoent:
    if (p->pin >= 0)
        close(p->pin);
    p->pin = -1;
    return -ENOENT;
}

/* -- The entry points ---------------------------------------------------------- */

static int resolve(int dirfd, GuestPath *p, unsigned how)
{
    p->dirfd = dirfd;
    p->pin = -1;
    p->created = false;
    p->proc_link = false;
    p->host = p->raw;
    if (p->raw[0] == '\0')
        return 0;                              /* AT_EMPTY_PATH, or ENOENT from the host */
    if (path_rooted())
        return resolve_rooted(dirfd, p, how);
    if (how & PATH_LOOKUP)
        p->host = path_resolve(p->raw, p->buf, sizeof p->buf);
    return 0;
}

int path_get_at(int dirfd, uint64_t ga, unsigned how, GuestPath *p)
{
    int err = 0;
    p->raw = guest_strdup(ga, PATH_MAX, &err);
    if (!p->raw)
        return err ? err : -EFAULT;
    if ((err = resolve(dirfd, p, how)) < 0) {
        free(p->raw);
        p->raw = NULL;
    }
    return err;
}

int path_lookup_at(int dirfd, const char *path, unsigned how, GuestPath *p)
{
    p->raw = strdup(path);
    if (!p->raw)
        return -ENOMEM;
    int err = resolve(dirfd, p, how);
    if (err < 0) {
        free(p->raw);
        p->raw = NULL;
    }
    return err;
}

int path_get(uint64_t ga, GuestPath *p)
{
    return path_get_at(AT_FDCWD, ga, PATH_FOLLOW | PATH_LOOKUP, p);
}

void path_put(GuestPath *p)
{
    if (p->pin >= 0)
        close(p->pin);
    p->pin = -1;
    free(p->raw);
    p->raw = NULL;
}

int path_open_named(int dirfd, const char *guest_path, unsigned how, int flags, char *name,
                    size_t len)
{
    GuestPath gp;
    int err = path_lookup_at(dirfd, guest_path, how, &gp);
    if (err < 0)
        return err;
    if (name)
        snprintf(name, len, "%s", path_host_abs(&gp));
    int fd = openat(gp.dirfd, gp.host, flags | O_CLOEXEC);
    if (fd < 0)
        err = -errno;
    path_put(&gp);
    return fd < 0 ? err : fd;
}

int path_open_at(int dirfd, const char *guest_path, unsigned how, int flags)
{
    return path_open_named(dirfd, guest_path, how, flags, NULL, 0);
}

const char *path_host_abs(GuestPath *p)
{
    if (p->dirfd == AT_FDCWD || p->host[0] == '/')
        return p->host;
    snprintf(p->abs, sizeof p->abs, "/proc/self/fd/%d/%s", p->dirfd, p->host);
    return p->abs;
}

long path_readlink(GuestPath *p, char *buf, size_t len)
{
    char host[PATH_MAX];
    ssize_t n = readlinkat(p->dirfd, p->host, host, sizeof host - 1);
    if (n < 0)
        return -errno;
    host[n] = '\0';
    if (p->proc_link && host[0] == '/') {
        char g[PATH_MAX];
        if (!strcmp(p->host, "root"))          /* the link's name in its /proc directory */
            strcpy(g, "/");
        else if (!path_host_to_guest(host, g, sizeof g))
            snprintf(g, sizeof g, "%s", host);      /* an open file outside the view */
        snprintf(host, sizeof host, "%s", g);
        n = (ssize_t)strlen(host);
    }
    if ((size_t)n > len)
        n = (ssize_t)len;
    memcpy(buf, host, (size_t)n);
    return n;
}

long path_getcwd(char *buf, size_t len)
{
    char host[PATH_MAX], g[PATH_MAX + 16];
    if (!getcwd(host, sizeof host))
        return -errno;
    if (!path_rooted())
        snprintf(g, sizeof g, "%s", host);
    else if (!path_host_to_guest(host, g, sizeof g))
        snprintf(g, sizeof g, "(unreachable)%s", host);   /* as Linux outside a chroot */
    size_t n = strlen(g) + 1;
    if (n > len)
        return -ERANGE;
    memcpy(buf, g, n);
    return (long)n;
}

int path_open(const char *guest_path, int flags)
{
    return path_open_at(AT_FDCWD, guest_path, PATH_FOLLOW | PATH_LOOKUP, flags);
}
