/*
 * The guest mapping table's representation, shared by the files of the
 * guest address space and by nothing else.
 *
 * mm.c owns the table: the memory syscalls edit it with mm_lock held for
 * writing. mm_access.c (the checked copies and access checks) and
 * mm_maps.c (/proc/self/maps and the walk vfork.c uses) read it with
 * mm_lock held for reading; mm_maps.c also names the file mappings not
 * named yet, with it held for writing. Everyone else goes through mm.h.
 */
#ifndef XLAT_USER_MM_INTERNAL_H
#define XLAT_USER_MM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec/lock.h"
#include "user/mm.h"

#define PAGE_MASK_  (GUEST_PAGE_SIZE - 1)

/* Guest mmap flag bits (riscv64 uses the asm-generic values, equal to x86's).
 * mm.c's SysV shm section adds VMA_SYSV_SHM (0x40). */
#define VMA_SHARED 1
#define VMA_ANON   2
#define VMA_GROWSDOWN 4
/* A file mapping whose name is found when it is shown (mm_name_mappings). */
#define VMA_UNNAMED 0x80

typedef struct Vma {
    uint64_t start, end;   /* guest addresses, page aligned, end exclusive */
    int prot;              /* guest PROT_* bits */
    int flags;             /* VMA_* */
    uint64_t offset;       /* file offset of start (file mappings) */
    uint64_t dev, ino;     /* for /proc/self/maps */
    char *name;            /* path, "[heap]", "[stack]" or NULL */
    /* The file its code comes from, for the persistent translation cache
     * (exec/pcache.h): its module number + 1 (0: none) and guest address -
     * file offset, the same over the whole vma (splits keep it). */
    int module;
    uint64_t mod_delta;
} Vma;

/* Defined in mm.c: the table (sorted by address, never overlapping) and
 * its lock. */
extern XRwlock mm_lock;
extern Vma *vmas;
extern size_t nvma;

/* strdup that aborts when out of memory; NULL for NULL (mm.c). */
char *mm_strdup(const char *s);

/* Name, device and inode of a file mapping of fd, for /proc/self/maps
 * (mm_maps.c); st: fd's fstat, NULL if it failed. Needs mm_lock written. */
struct stat;
void mm_describe_fd(int fd, const struct stat *st, Vma *v);

/* Name every VMA_UNNAMED mapping (mm_maps.c; takes mm_lock). */
void mm_name_mappings(void);

/* Merge whatever became mergeable around [start, end] (mm.c; mm_lock
 * written). */
void vma_merge_range(uint64_t start, uint64_t end);

/* The host's /proc/self/maps, line by line in address order (mm_maps.c):
 * fn(arg, start, end, dev, ino, name; "" for none) until it returns false.
 * False if it could not be read. */
bool mm_host_maps_walk(bool (*fn)(void *arg, uintptr_t start, uintptr_t end, dev_t dev,
                                  ino_t ino, char *name),
                       void *arg);

/* A host file's path as the guest names it (mm_maps.c), malloc'ed. */
char *mm_guest_name(const char *host);

/* Index of the first vma with end > addr (nvma if none). Needs mm_lock. */
static inline size_t vma_lookup(uint64_t addr)
{
    size_t lo = 0, hi = nvma;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (vmas[mid].end > addr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

#endif
