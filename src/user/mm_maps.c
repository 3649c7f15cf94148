/*
 * Listing the guest mappings (user mode): the walk vfork.c uses to find a
 * vfork child's private writable pages, and the /proc/self/maps text that
 * procfs.c serves the guest (maps, and the base of smaps and stat).
 *
 * Both read mm.c's mapping table (through mm_internal.h) with it
 * read-locked. The maps lines are in Linux's format, with the guest's own
 * protection bits (never the host mapping's) and, for file mappings, the
 * offset, device, inode and name that mm.c recorded at mmap time
 * (mm_describe_fd, below).
 */
#define _GNU_SOURCE
#include "user/mm.h"
#include "exec/pcache.h"
#include "user/mm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "user/path.h"

/* -- The walk ------------------------------------------------------------- */

void guest_for_each_mapping(void (*fn)(void *arg, uint64_t start, uint64_t end, int prot,
                                       bool shared),
                            void *arg)
{
    xrw_rdlock(&mm_lock);
    for (size_t i = 0; i < nvma; i++)
        fn(arg, vmas[i].start, vmas[i].end, vmas[i].prot, vmas[i].flags & VMA_SHARED);
    xrw_unlock(&mm_lock);
}

/* -- /proc/self/maps ------------------------------------------------------- */

void guest_dump_maps(int fd)
{
    xrw_rdlock(&mm_lock);
    for (size_t i = 0; i < nvma; i++) {
        const Vma *v = &vmas[i];
        char line[4200];
        int n = snprintf(line, sizeof(line), "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %llu ",
                         (unsigned long long)v->start, (unsigned long long)v->end,
                         v->prot & PROT_READ ? 'r' : '-', v->prot & PROT_WRITE ? 'w' : '-',
                         v->prot & PROT_EXEC ? 'x' : '-', v->flags & VMA_SHARED ? 's' : 'p',
                         (unsigned long long)v->offset, major(v->dev), minor(v->dev),
                         (unsigned long long)v->ino);
        if (v->name) {
            /* Linux pads the header to 72 columns, then one space. */
            while (n < 72)
                line[n++] = ' ';
            n += snprintf(line + n, sizeof(line) - n, " %s", v->name);
        }
        if (n > (int)sizeof(line) - 2)
            n = sizeof(line) - 2;
        line[n++] = '\n';
        if (write(fd, line, n) < 0)
            break;
    }
    xrw_unlock(&mm_lock);
}

bool mm_code_origin(uint64_t addr, PcacheOrigin *o)
{
    size_t i = vma_lookup(addr);
    if (i == nvma || vmas[i].start > addr || !vmas[i].module || !(vmas[i].prot & PROT_EXEC))
        return false;
    o->module = vmas[i].module - 1;
    o->delta = vmas[i].mod_delta;
    o->lo = vmas[i].start;
    o->hi = vmas[i].end;
    return true;
}

/* -- Names of file mappings ------------------------------------------------ */

/*
 * The name of the last file mapping described: ld.so maps a library in
 * three or four calls on one descriptor, and each asked readlink of
 * /proc/self/fd/N (microseconds in a VM). It holds while the descriptor
 * names the same file and none was closed or replaced since (mm_fds_closed:
 * a number reopened on the same file by another of its names gets the
 * readlink again). With mm_lock held.
 */
static struct {
    int fd;
    dev_t dev;
    ino_t ino;
    uint64_t gen;
    char *name;
} last_named = { .fd = -1 };
static uint64_t fds_closed;

void mm_fds_closed(void)
{
    __atomic_fetch_add(&fds_closed, 1, __ATOMIC_RELEASE);
}

/* The guest's name of the file (--root), else the host's, or NULL. */
static char *fd_name(int fd)
{
    char link[64], path[4096];
    if (path_fd_name(fd, path, sizeof path) > 0)
        return mm_strdup(path);
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    return mm_strdup(path);
}

/* Name, device and inode of a file mapping, for /proc/self/maps. */
void mm_describe_fd(int fd, const struct stat *st, Vma *v)
{
    uint64_t gen = __atomic_load_n(&fds_closed, __ATOMIC_ACQUIRE);
    if (!st) {
        v->name = fd_name(fd);
        return;
    }
    v->dev = st->st_dev;
    v->ino = st->st_ino;
    if (last_named.name && last_named.fd == fd && last_named.gen == gen &&
        last_named.dev == st->st_dev && last_named.ino == st->st_ino) {
        v->name = mm_strdup(last_named.name);
        return;
    }
    v->name = fd_name(fd);
    free(last_named.name);
    last_named.name = v->name ? mm_strdup(v->name) : NULL;
    last_named.fd = fd;
    last_named.dev = st->st_dev;
    last_named.ino = st->st_ino;
    last_named.gen = gen;
}
