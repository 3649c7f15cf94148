/*
 * The guest address space (user mode).
 *
 * Guest address A lives at host address guest_base + A. The window holds
 * guest addresses [0, GUEST_SPACE_SIZE) and is surrounded by PROT_NONE guard
 * regions of GUEST_GUARD_SIZE on both sides, so a host access at
 * guest_base + A + d, with A inside the window and |d| < GUEST_GUARD_SIZE,
 * can never reach host memory outside the reservation. Pages the guest has
 * not mapped are PROT_NONE inside the window.
 *
 * Where it can (--tune zero-base, the default), the window sits at host
 * address 0: guest_base is NULL, a guest address is its own host address,
 * and translated code needs no base register. Nothing is mappable below
 * vm.mmap_min_addr there, and the low guard wraps around to the top of the
 * address space, the kernel's half, where every user access faults just
 * the same. Addresses are therefore compared modulo 2^64 below.
 *
 * mm.c keeps the list of guest mappings (address, length, protection, name)
 * and implements mmap/munmap/mprotect/mremap/brk on the window with
 * MAP_FIXED host mappings. Every guest pointer that xlat's own C code reads
 * or writes goes through copy_from_guest/copy_to_guest (mm_access.c), which
 * fail with -EFAULT instead of faulting. mm_maps.c lists the mappings.
 */
#ifndef XLAT_USER_MM_H
#define XLAT_USER_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GUEST_SPACE_BITS 39
#define GUEST_SPACE_SIZE (1ULL << GUEST_SPACE_BITS)
#define GUEST_GUARD_SIZE (1ULL << 32)
/* Highest address + 1 that guest mmap hands out (Linux Sv39 user space). */
#define GUEST_TASK_SIZE  (1ULL << 38)
#define GUEST_PAGE_SIZE  4096ULL

extern uint8_t *guest_base;

static inline void *g2h(uint64_t ga) { return (void *)((uintptr_t)guest_base + ga); }
static inline uint64_t h2g(const void *p) { return (uint64_t)((uintptr_t)p - (uintptr_t)guest_base); }

/* True if [ga, ga+len) lies inside the window (says nothing of mappings). */
static inline bool guest_range_in_window(uint64_t ga, uint64_t len)
{
    return ga < GUEST_SPACE_SIZE && len <= GUEST_SPACE_SIZE - ga;
}

/* True if host pointer p lies in the window proper (not the guards). */
static inline bool host_in_window(const void *p)
{
    return h2g(p) < GUEST_SPACE_SIZE;
}

/* True if p lies in the window or the guard regions around it. */
static inline bool host_in_window_or_guards(const void *p)
{
    return h2g(p) + GUEST_GUARD_SIZE < GUEST_SPACE_SIZE + 2 * GUEST_GUARD_SIZE;
}

/* Reserve the window. Exits with a message on failure. */
void mm_init(void);

/* pthread_atfork handlers for the mapping table's lock (see mm.c). */
void mm_fork_prepare(void);
void mm_fork_parent(void);
void mm_fork_child(void);

/* Guest memory syscalls; each returns the result or -errno, like the kernel. */
int64_t guest_mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd, off_t off);
int64_t guest_munmap(uint64_t addr, uint64_t len);
int64_t guest_mprotect(uint64_t addr, uint64_t len, int prot);
int64_t guest_mremap(uint64_t old, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr);
int64_t guest_brk(uint64_t addr);
int64_t guest_madvise(uint64_t addr, uint64_t len, int advice);

/* Set the initial program break (end of the loaded image, page aligned). */
void guest_brk_init(uint64_t start);

/*
 * Map [addr, addr+len) at a fixed guest address for the loader (and name the
 * mapping for /proc/self/maps). Returns 0 or -errno (-EPERM below
 * vm.mmap_min_addr, 64 KiB, where nothing is mapped: the window at host
 * address 0 must never map host page 0).
 */
int guest_map_fixed(uint64_t addr, uint64_t len, int prot, const char *name);

/* Find a free, page-aligned guest range of len bytes (top-down below hint
 * or the mmap base). Returns the address or 0 if none. */
uint64_t guest_find_free(uint64_t len, uint64_t hint);

/*
 * True if every page of [ga, ga+len) is mapped with at least `prot`
 * (PROT_READ / PROT_WRITE).
 */
bool guest_access_ok(uint64_t ga, uint64_t len, int prot);

/*
 * Guest protection of the page holding ga (PROT_* bits, possibly 0), or -1
 * if nothing is mapped there. The host reports every access to an unmapped
 * guest page as SEGV_ACCERR (the window is reserved PROT_NONE); use this to
 * tell SEGV_MAPERR (-1) from SEGV_ACCERR. Takes the table lock: call it
 * from the run loop, not from a signal handler.
 */
int guest_prot_at(uint64_t ga);

/*
 * Call fn for every guest mapping in address order, with the table
 * read-locked: [start, end), the guest's PROT_* bits, and whether it is
 * shared (MAP_SHARED: the same pages in a forked child). fn must not
 * change the table.
 */
void guest_for_each_mapping(void (*fn)(void *arg, uint64_t start, uint64_t end, int prot,
                                       bool shared),
                            void *arg);

/* Copies between host and guest memory: 0 or -EFAULT. */
int copy_from_guest(void *dst, uint64_t src, size_t len);
int copy_to_guest(uint64_t dst, const void *src, size_t len);

/*
 * Copy a NUL-terminated guest string of at most max bytes (including the
 * NUL) into a malloc'd buffer. Returns it, or NULL with *err = -EFAULT or
 * -ENAMETOOLONG.
 */
char *guest_strdup(uint64_t ga, size_t max, int *err);

/*
 * JIT hook: called with the mapping table locked whenever an executable
 * guest range is unmapped, replaced, moved or has its protection changed
 * (a no-op until the translator exists).
 */
void mm_exec_range_changed(uint64_t start, uint64_t len);

/* Hold the mapping table read-locked (the translator, while it reads guest
 * code and checks protections; guest_access_ok etc. may nest inside). */
void mm_read_lock(void);
void mm_read_unlock(void);

/* Print the guest mappings in /proc/self/maps format (for -d page, /proc). */
void guest_dump_maps(int fd);

/*
 * The persistent translation cache's view (exec/pcache.h): the vmas inside
 * [start, end) hold code of pcache module `module` (-1: none), file offset
 * 0 at guest address delta (the ELF loader's copies; guest_mmap notes file
 * mappings itself). mm_code_origin answers guest_mem.ops->code_origin,
 * with mm's lock held for reading (the code lock).
 */
struct PcacheOrigin;
void mm_set_code_origin(uint64_t start, uint64_t end, int module, uint64_t delta);
bool mm_code_origin(uint64_t addr, struct PcacheOrigin *o);

/*
 * SysV shared memory (sys_ipc.c). guest_shmat attaches segment shmid of
 * size bytes at guest addr (fixed: addr as given, page aligned, replacing
 * mappings only with SHM_REMAP; else a free range) with shmflg's
 * SHM_RDONLY/SHM_EXEC; returns the address or -errno. guest_shmdt detaches
 * the attach at addr: 0 or -EINVAL.
 */
int64_t guest_shmat(int shmid, uint64_t addr, bool fixed, uint64_t size, int shmflg);
int64_t guest_shmdt(uint64_t addr);

#endif
