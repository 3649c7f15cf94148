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
#include "exec/settings.h"
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
    mm_name_mappings();
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
 * A file mapping is named when something shows it (/proc/self/maps:
 * mm_name_mappings), not at each mmap: asking the kernel for a
 * descriptor's path is a readlink of /proc/self/fd/N, microseconds in a
 * VM, and a dynamically linked start maps several files that nothing ever
 * shows. The name then comes from the host's own maps, where the guest's
 * mapping is the host's at its host address: the file's path as the
 * kernel has it when asked, as Linux's maps has it too.
 */

/* A host path as the guest sees it: a guest path under --root; the host's
 * path for a file outside its view, or without --root. */
char *mm_guest_name(const char *host)
{
    char g[4096];
    if (host[0] == '/' && path_rooted() && path_host_to_guest(host, g, sizeof g))
        return mm_strdup(g);
    return mm_strdup(host);
}

bool mm_host_maps_walk(bool (*fn)(void *arg, uintptr_t start, uintptr_t end, dev_t dev,
                                  ino_t ino, char *name),
                       void *arg)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long start, end, ino;
        unsigned maj, min;
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %*4s %*x %x:%x %lu %n", &start, &end, &maj, &min, &ino,
                   &name_at) < 5 || name_at == 0)
            continue;
        char *name = line + name_at, *nl = strchr(name, '\n');
        if (nl)
            *nl = 0;
        if (!fn(arg, start, end, makedev(maj, min), ino, name))
            break;
    }
    free(line);
    fclose(f);
    return true;
}

/* One line of the host's maps: names the unnamed vmas that start in it
 * (*arg: the first vma not passed yet; both lists are in address order). */
static bool name_from_host(void *arg, uintptr_t start, uintptr_t end, dev_t dev, ino_t ino,
                           char *name)
{
    size_t *i = arg;
    (void)dev, (void)ino;
    for (; *i < nvma && (uintptr_t)g2h(vmas[*i].start) < end; ++*i) {
        Vma *v = &vmas[*i];
        if ((v->flags & VMA_UNNAMED) && (uintptr_t)g2h(v->start) >= start && *name) {
            v->name = mm_guest_name(name);
            v->flags &= ~VMA_UNNAMED;
        }
    }
    return *i < nvma;
}

void mm_name_mappings(void)
{
    xrw_wrlock(&mm_lock);
    size_t first = 0;
    while (first < nvma && !(vmas[first].flags & VMA_UNNAMED))
        first++;
    if (first < nvma) {
        size_t i = first;
        mm_host_maps_walk(name_from_host, &i);
        for (size_t j = first; j < nvma; j++)
            vmas[j].flags &= ~VMA_UNNAMED;  /* no host line: nameless, as a failed readlink was */
        vma_merge_range(vmas[first].start, vmas[nvma - 1].end);
    }
    xrw_unlock(&mm_lock);
}

/* The guest's name of fd's file (--root), else the host's, or NULL. */
static char *fd_name(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    return mm_guest_name(path);
}

/* Device, inode and name of a file mapping, for /proc/self/maps: the name
 * later (VMA_UNNAMED), unless a log shows it now (-d page, -d cache). */
void mm_describe_fd(int fd, const struct stat *st, Vma *v)
{
    if (st) {
        v->dev = st->st_dev;
        v->ino = st->st_ino;
        if (!(log_mask & (LOG_PAGE | LOG_CACHE))) {
            v->flags |= VMA_UNNAMED;
            return;
        }
    }
    v->name = fd_name(fd);
}
