/*
 * The guest address space (user mode): the reserved window and the table of
 * guest mappings.
 *
 * mm_init() reserves guard + window + guard of host address space as
 * PROT_NONE. Everything the guest maps lives inside the window at
 * guest_base + address, always by MAP_FIXED host mappings; "unmapping" maps
 * PROT_NONE reservation back over the range, so the window never has holes
 * that an unrelated host mmap could fill.
 *
 * The table of mappings (a sorted array of Vma) is the authority on what
 * the guest has mapped: placement searches, access checks for
 * copy_from_guest/copy_to_guest, /proc/self/maps output and (later) JIT
 * invalidation of executable ranges all read it. A rwlock protects it:
 * memory syscalls take it for writing, copies and checks for reading.
 * This file is the writer; the readers that only look at the table live
 * beside it, sharing it through mm_internal.h: mm_access.c (the checked
 * copies and access checks) and mm_maps.c (/proc/self/maps, the walk).
 *
 * Host protections: guest PROT_EXEC is never given to the host mapping (guest
 * code is interpreted or translated, never run in place); an executable
 * guest page is host-readable so the interpreter can fetch from it, as in
 * QEMU. The table keeps the guest's own protection bits. In a vfork child
 * the vfork_mm_* hooks keep the copy-back's write tracking in step with
 * the changes made here (vfork.h).
 */
#define _GNU_SOURCE
#include "riscv/interp.h"
#include "user/mm.h"
#include "user/mm_internal.h"
#include "user/user_mem.h"
#include "exec/exec.h"
#include "exec/pcache.h"
#include "exec/perfmap.h"
#include "user/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "user/options.h"
#include "user/path.h"
#include "user/vfork.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef PROT_SEM
#define PROT_SEM 0x8
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PAGE_UP(x)  (((x) + PAGE_MASK_) & ~PAGE_MASK_)
#define PAGE_DOWN(x) ((x) & ~PAGE_MASK_)

/* Linux's default vm.mmap_min_addr: nothing is placed (or MAP_FIXED) below. */
#define GUEST_MMAP_MIN_ADDR 0x10000ULL
/* Linux mmap_base(): the gap kept below the stack top for the stack. */
#define MMAP_MIN_GAP     (128ULL << 20)
#define STACK_GUARD_GAP  (256ULL * GUEST_PAGE_SIZE)

uint8_t *guest_base;

/* The table and its lock; mm_access.c and mm_maps.c read them (mm_internal.h). */
XRwlock mm_lock = XRWLOCK_INITIALIZER;
Vma *vmas;
size_t nvma;
static size_t vma_cap;
static uint64_t mmap_base;
static uint64_t brk_start, brk_cur;

/* -- JIT hook ------------------------------------------------------------ */

/*
 * Called (with the table locked) whenever an executable guest range is
 * unmapped, replaced, moved or loses/gains PROT_EXEC. The interpreter's
 * decoded-instruction cache remembers "this pc was executable", so it is
 * dropped; the translator will drop its blocks for the range here too.
 */
void mm_exec_range_changed(uint64_t start, uint64_t len)
{
    interp_flush_cache();   /* drops every decoded instruction: cheap and rare */
    exec_invalidate_range(start, len);  /* takes tb_lock: order is mm, then tb */
}

/* The translator holds the table read-locked while it reads guest code. */
void mm_read_lock(void)   { xrw_rdlock(&mm_lock); }
void mm_read_unlock(void) { xrw_unlock(&mm_lock); }

/* -- Host side ----------------------------------------------------------- */

static int host_prot(int prot)
{
    int hp = prot & (PROT_READ | PROT_WRITE);
    if (prot & PROT_EXEC)
        hp |= PROT_READ;
    return hp;
}

/* Put PROT_NONE reservation back over [start, start+len). */
static int host_reserve(uint64_t start, uint64_t len)
{
    if (start < GUEST_MMAP_MIN_ADDR) {  /* never mapped; the host refuses MAP_FIXED there */
        uint64_t skip = GUEST_MMAP_MIN_ADDR - start;
        if (len <= skip)
            return 0;
        start += skip;
        len -= skip;
    }
    void *p = mmap(g2h(start), len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? -errno : 0;
}

/*
 * fork() from one guest thread while another holds mm_lock must not leave
 * the lock held forever in the child: hold it across the fork, release it
 * in the parent and start afresh in the child (only the forking thread
 * survives there, with a new tid that an inherited rwlock would not know).
 * Called by the JIT core's fork handlers (guest_mem.ops->fork_*, from
 * exec.c), between its own locks (the order is flush, mm, tb), or
 * registered with pthread_atfork by main.c when there is no JIT.
 */
void mm_fork_prepare(void) { xrw_wrlock(&mm_lock); }
void mm_fork_parent(void)  { xrw_unlock(&mm_lock); }
void mm_fork_child(void)   { xrw_init(&mm_lock); }

/*
 * The window at host address 0 (--tune zero-base): reserve it from the
 * lowest address guests may map up to the end of the high guard, if the
 * host has nothing there (a sanitizer's shadow memory, a non-PIE xlat) and
 * allows mappings that low (vm.mmap_min_addr).
 */
static bool reserve_at_zero(void)
{
    uint64_t len = GUEST_SPACE_SIZE + GUEST_GUARD_SIZE - GUEST_MMAP_MIN_ADDR;
    void *want = (void *)(uintptr_t)GUEST_MMAP_MIN_ADDR;
    void *p = mmap(want, len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    if (p != want) {            /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        munmap(p, len);
        return false;
    }
    return true;
}

void mm_init(void)
{
    if (tune.zero_base && reserve_at_zero()) {
        guest_base = NULL;
    } else {
        uint64_t total = GUEST_GUARD_SIZE + GUEST_SPACE_SIZE + GUEST_GUARD_SIZE;
        void *p = mmap(NULL, total, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "xlat: cannot reserve %llu GiB for the guest address space: %s\n",
                    (unsigned long long)(total >> 30), strerror(errno));
            exit(1);
        }
        guest_base = (uint8_t *)p + GUEST_GUARD_SIZE;
    }

    uint64_t gap = opt.stack_size ? opt.stack_size : (8ULL << 20);
    gap += STACK_GUARD_GAP;
    if (gap < MMAP_MIN_GAP)
        gap = MMAP_MIN_GAP;
    if (gap > GUEST_TASK_SIZE / 6 * 5)
        gap = GUEST_TASK_SIZE / 6 * 5;
    mmap_base = PAGE_DOWN(GUEST_TASK_SIZE - gap);
    xlat_log(LOG_PAGE, "page: guest window at host %#llx, mmap base %#llx\n",
             (unsigned long long)(uintptr_t)guest_base, (unsigned long long)mmap_base);
    user_mem_init();
}

/* -- The mapping table (callers hold mm_lock) ------------------------------ */

/* (vma_lookup, the binary search, is in mm_internal.h.) */

static void vma_reserve_slot(void)
{
    if (nvma < vma_cap)
        return;
    size_t ncap = vma_cap ? vma_cap * 2 : 64;
    Vma *n = realloc(vmas, ncap * sizeof(*n));
    if (!n) {
        fprintf(stderr, "xlat: out of memory for the guest mapping table\n");
        abort();
    }
    vmas = n;
    vma_cap = ncap;
}

char *mm_strdup(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "xlat: out of memory\n");
        abort();
    }
    return d;
}

/* Split the vma containing addr (strictly inside) in two at addr. */
static void vma_split(uint64_t addr)
{
    size_t i = vma_lookup(addr);
    if (i == nvma || vmas[i].start >= addr)
        return;
    vma_reserve_slot();
    memmove(&vmas[i + 1], &vmas[i], (nvma - i) * sizeof(Vma));
    nvma++;
    Vma *lo = &vmas[i], *hi = &vmas[i + 1];
    hi->name = mm_strdup(lo->name);
    hi->offset = lo->offset + (addr - lo->start);
    hi->start = addr;
    lo->end = addr;
}

/* True if two neighbouring vmas describe one mapping and can be merged. */
static bool vma_mergeable(const Vma *a, const Vma *b)
{
    if (a->end != b->start || a->prot != b->prot || a->flags != b->flags)
        return false;
    if ((a->name == NULL) != (b->name == NULL))
        return false;
    if (a->name && strcmp(a->name, b->name) != 0)
        return false;
    if (a->flags & VMA_SHARED)
        return false;   /* may be different objects */
    if (a->module != b->module || a->mod_delta != b->mod_delta)
        return false;
    if (!(a->flags & VMA_ANON))
        return a->dev == b->dev && a->ino == b->ino &&
               a->offset + (a->end - a->start) == b->offset;
    return true;
}

/* Absorb vma i+1 into vma i. */
static void vma_merge_next(size_t i)
{
    vmas[i].end = vmas[i + 1].end;
    free(vmas[i + 1].name);
    memmove(&vmas[i + 1], &vmas[i + 2], (nvma - i - 2) * sizeof(Vma));
    nvma--;
}

void vma_merge_range(uint64_t start, uint64_t end)
{
    size_t i = vma_lookup(start);
    if (i > 0)
        i--;
    while (i + 1 < nvma && vmas[i].start <= end) {
        if (vma_mergeable(&vmas[i], &vmas[i + 1]))
            vma_merge_next(i);
        else
            i++;
    }
}

/*
 * Drop [start, end) from the table (not from the host). Reports executable
 * ranges to the JIT hook.
 */
static void vma_remove(uint64_t start, uint64_t end)
{
    vma_split(start);
    vma_split(end);
    size_t i = vma_lookup(start), j = i;
    while (j < nvma && vmas[j].start < end) {
        if (vmas[j].prot & PROT_EXEC)
            mm_exec_range_changed(vmas[j].start, vmas[j].end - vmas[j].start);
        free(vmas[j].name);
        j++;
    }
    if (j > i) {
        memmove(&vmas[i], &vmas[j], (nvma - j) * sizeof(Vma));
        nvma -= j - i;
    }
}

/* Add v (its range must be free in the table); takes ownership of v.name. */
static void vma_insert(Vma v)
{
    vma_reserve_slot();
    size_t i = vma_lookup(v.start);
    memmove(&vmas[i + 1], &vmas[i], (nvma - i) * sizeof(Vma));
    vmas[i] = v;
    nvma++;
    vma_merge_range(v.start, v.end);
}

static bool range_free(uint64_t start, uint64_t end)
{
    size_t i = vma_lookup(start);
    return i == nvma || vmas[i].start >= end;
}

/* -- Placement ------------------------------------------------------------- */

/* Highest free [x, x+len) with x >= lo and x+len <= top, or 0. */
static uint64_t find_top_down(uint64_t len, uint64_t lo, uint64_t top)
{
    /* j: one past the last vma that starts below top. */
    size_t j = vma_lookup(top);
    if (j < nvma && vmas[j].start < top)
        j++;
    uint64_t hi = top;
    for (; j > 0; j--) {
        const Vma *v = &vmas[j - 1];
        if (v->end < hi) {
            uint64_t floor = v->end > lo ? v->end : lo;
            if (hi >= floor && hi - floor >= len)
                return hi - len;
        }
        if (v->start < hi)
            hi = v->start;
        if (hi <= lo)
            return 0;
    }
    return hi >= lo && hi - lo >= len ? hi - len : 0;
}

static uint64_t find_free_locked(uint64_t len, uint64_t hint)
{
    len = PAGE_UP(len);
    if (len == 0 || len > GUEST_TASK_SIZE - GUEST_MMAP_MIN_ADDR)
        return 0;
    if (hint) {
        hint = PAGE_UP(hint);
        if (hint >= GUEST_MMAP_MIN_ADDR && hint <= GUEST_TASK_SIZE - len &&
            range_free(hint, hint + len))
            return hint;
    }
    uint64_t a = find_top_down(len, GUEST_MMAP_MIN_ADDR, mmap_base);
    if (!a)   /* like Linux's fallback: anywhere in the task's space */
        a = find_top_down(len, GUEST_MMAP_MIN_ADDR, GUEST_TASK_SIZE);
    return a;
}

uint64_t guest_find_free(uint64_t len, uint64_t hint)
{
    xrw_rdlock(&mm_lock);
    uint64_t a = find_free_locked(len, hint);
    xrw_unlock(&mm_lock);
    return a;
}

/* -- mmap / munmap / mprotect -------------------------------------------- */

static void log_map(const char *what, uint64_t start, uint64_t len, int prot, const char *name)
{
    xlat_log(LOG_PAGE, "page: %s %#llx-%#llx %c%c%c %s\n", what,
             (unsigned long long)start, (unsigned long long)(start + len),
             prot & PROT_READ ? 'r' : '-', prot & PROT_WRITE ? 'w' : '-',
             prot & PROT_EXEC ? 'x' : '-', name ? name : "");
}

/* Unmap [start, start+len) (page aligned, inside the task space). */
static int unmap_locked(uint64_t start, uint64_t len)
{
    vfork_mm_forget(start, len);
    int r = host_reserve(start, len);
    if (r)
        return r;
    vma_remove(start, start + len);
    log_map("unmap", start, len, 0, NULL);
    return 0;
}

int guest_map_fixed(uint64_t addr, uint64_t len, int prot, const char *name)
{
    if ((addr & PAGE_MASK_) || len == 0 || !guest_range_in_window(addr, PAGE_UP(len)))
        return -EINVAL;
    if (addr < GUEST_MMAP_MIN_ADDR)
        return -EPERM;                  /* as the guest's mmap: nothing lives there */
    len = PAGE_UP(len);
    xrw_wrlock(&mm_lock);
    int r = 0;
    vfork_mm_forget(addr, len);
    void *p = mmap(g2h(addr), len, host_prot(prot),
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) {
        r = -errno;
    } else {
        vma_remove(addr, addr + len);
        vma_insert((Vma){ addr, addr + len, prot, VMA_ANON, 0, 0, 0, mm_strdup(name), 0, 0 });
        log_map("map", addr, len, prot, name);
    }
    xrw_unlock(&mm_lock);
    return r;
}

/* Host mmap flags passed through from the guest (values are the same). */
#define MAP_PASS (MAP_GROWSDOWN | MAP_DENYWRITE | MAP_EXECUTABLE | MAP_LOCKED | \
                  MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK | MAP_STACK | MAP_SYNC)

/* The file the code of v comes from (pcache module m, or -1), with file
 * offset 0 at guest address delta. */
static void set_module(Vma *v, int m, uint64_t delta)
{
    v->module = m + 1;
    v->mod_delta = delta;
}

void mm_set_code_origin(uint64_t start, uint64_t end, int module, uint64_t delta)
{
    xrw_wrlock(&mm_lock);
    for (size_t i = vma_lookup(start); i < nvma && vmas[i].start < end; i++)
        if (vmas[i].start >= start && vmas[i].end <= end)
            set_module(&vmas[i], module, delta);
    xrw_unlock(&mm_lock);
}

int64_t guest_mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd, off_t off)
{
    bool anon = flags & MAP_ANONYMOUS;
    int type = flags & MAP_TYPE;
    bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);

    if (off & PAGE_MASK_)
        return -EINVAL;
    /* A file's device, inode and identity, asked once: its failure is
     * also the EBADF Linux checks for before the length. */
    struct stat st;
    const struct stat *stp = NULL;
    if (!anon) {
        if (fstat(fd, &st) == 0)
            stp = &st;
        else if (errno == EBADF)
            return -EBADF;
    }
    if (len == 0)
        return -EINVAL;
    if (PAGE_UP(len) < len || PAGE_UP(len) == 0)
        return -ENOMEM;
    len = PAGE_UP(len);
    if (!anon && (uint64_t)off + len < (uint64_t)off)
        return -EOVERFLOW;
    if (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE)
        return -EINVAL;
    if (fixed && (addr & PAGE_MASK_))
        return -EINVAL;
    if (len > GUEST_TASK_SIZE || (fixed && addr > GUEST_TASK_SIZE - len))
        return -ENOMEM;
    if (fixed && addr < GUEST_MMAP_MIN_ADDR)
        return -EPERM;
    prot &= PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM;

    xrw_wrlock(&mm_lock);
    int64_t ret;
    if (fixed) {
        if ((flags & MAP_FIXED_NOREPLACE) && !range_free(addr, addr + len)) {
            ret = -EEXIST;
            goto out;
        }
    } else {
        addr = find_free_locked(len, addr);
        if (!addr) {
            ret = -ENOMEM;
            goto out;
        }
    }

    int hflags = type | MAP_FIXED | (flags & MAP_PASS) | (anon ? MAP_ANONYMOUS : 0);
    vfork_mm_forget(addr, len);
    void *p = mmap(g2h(addr), len, host_prot(prot), hflags, anon ? -1 : fd, anon ? 0 : off);
    if (p == MAP_FAILED) {
        ret = -errno;
        goto out;
    }
    vma_remove(addr, addr + len);
    Vma v = { addr, addr + len, prot, 0, anon ? 0 : (uint64_t)off, 0, 0, NULL, 0, 0 };
    if (type != MAP_PRIVATE)
        v.flags |= VMA_SHARED;
    if (flags & MAP_GROWSDOWN)
        v.flags |= VMA_GROWSDOWN;
    if (anon) {
        v.flags |= VMA_ANON;
        if (v.flags & VMA_SHARED)
            v.name = mm_strdup("/dev/zero (deleted)");
    } else {
        mm_describe_fd(fd, stp, &v);
        if (prot & PROT_EXEC)
            set_module(&v, pcache_module_fd(fd, stp, v.name), addr - (uint64_t)off);
    }
    log_map("mmap", addr, len, prot, v.name);
    vma_insert(v);
    if (prot & PROT_EXEC)
        mm_exec_range_changed(addr, len);
    if ((prot & PROT_EXEC) && !anon && perfmap_enabled)
        symbols_add_mapping(fd, (uint64_t)off, addr);   /* name a library's code for perf */
    ret = (int64_t)addr;
out:
    xrw_unlock(&mm_lock);
    return ret;
}

int64_t guest_munmap(uint64_t addr, uint64_t len)
{
    if ((addr & PAGE_MASK_) || len == 0 || addr > GUEST_TASK_SIZE ||
        len > GUEST_TASK_SIZE - addr)
        return -EINVAL;
    len = PAGE_UP(len);
    if (len > GUEST_TASK_SIZE - addr)
        return -EINVAL;
    xrw_wrlock(&mm_lock);
    int r = unmap_locked(addr, len);
    xrw_unlock(&mm_lock);
    return r;
}

/* Change the protection of the (table) range [start, end); it is fully mapped. */
static int protect_range(uint64_t start, uint64_t end, int prot)
{
    vma_split(start);
    vma_split(end);
    for (size_t i = vma_lookup(start); i < nvma && vmas[i].start < end; i++) {
        Vma *v = &vmas[i];
        vfork_mm_protect(v->start, v->end - v->start, prot, false);
        if (mprotect(g2h(v->start), v->end - v->start, host_prot(prot)) != 0)
            return -errno;
        vfork_mm_protect(v->start, v->end - v->start, prot, true);
        /* Even an unchanged executable page: mprotect just dropped the
         * JIT's write protection of its host page. */
        if ((v->prot | prot) & PROT_EXEC)
            mm_exec_range_changed(v->start, v->end - v->start);
        v->prot = prot;
    }
    vma_merge_range(start, end);
    return 0;
}

int64_t guest_mprotect(uint64_t addr, uint64_t len, int prot)
{
    prot &= ~(PROT_GROWSDOWN | PROT_GROWSUP);
    if (addr & PAGE_MASK_)
        return -EINVAL;
    if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM))
        return -EINVAL;
    if (len == 0)
        return 0;
    len = PAGE_UP(len);
    uint64_t end = addr + len;
    if (end <= addr)
        return -ENOMEM;
    if (addr >= GUEST_TASK_SIZE)
        return -ENOMEM;

    xrw_wrlock(&mm_lock);
    /* Linux changes the pages up to the first hole, then fails. */
    int64_t r = 0;
    uint64_t a = addr;
    size_t i = vma_lookup(addr);
    while (a < end) {
        if (i >= nvma || vmas[i].start > a) {
            r = -ENOMEM;
            break;
        }
        a = vmas[i].end;
        i++;
    }
    uint64_t done = a < end ? a : end;
    if (done > addr) {
        int e = protect_range(addr, done, prot);
        if (e)
            r = e;
        log_map("mprotect", addr, done - addr, prot, NULL);
    }
    xrw_unlock(&mm_lock);
    return r;
}

int64_t guest_madvise(uint64_t addr, uint64_t len, int advice)
{
    if (addr & PAGE_MASK_)
        return -EINVAL;
    uint64_t end = addr + PAGE_UP(len);
    if (end < addr)
        return -EINVAL;
    switch (advice) {
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED:
    case MADV_DONTNEED: case MADV_FREE: case MADV_REMOVE: case MADV_DONTFORK:
    case MADV_DOFORK: case MADV_MERGEABLE: case MADV_UNMERGEABLE: case MADV_HUGEPAGE:
    case MADV_NOHUGEPAGE: case MADV_DONTDUMP: case MADV_DODUMP: case MADV_WIPEONFORK:
    case MADV_KEEPONFORK: case MADV_COLD: case MADV_PAGEOUT:
        break;
    case MADV_HWPOISON: case MADV_SOFT_OFFLINE:
        return -EPERM;
    default:
        return -EINVAL;
    }
    if (end == addr)
        return 0;
    if (end > GUEST_TASK_SIZE)
        return -ENOMEM;

    xrw_rdlock(&mm_lock);
    int64_t r = 0;
    uint64_t a = addr;
    for (size_t i = vma_lookup(addr); a < end; i++) {
        if (i >= nvma || vmas[i].start >= end) {
            r = -ENOMEM;
            break;
        }
        if (vmas[i].start > a)
            r = -ENOMEM;
        uint64_t s = vmas[i].start > a ? vmas[i].start : a;
        uint64_t e = vmas[i].end < end ? vmas[i].end : end;
        if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)
            vfork_mm_discard(s, e - s);        /* the contents change: snapshot first */
        if (madvise(g2h(s), e - s, advice) != 0 && !r)
            r = -errno;
        a = e;
    }
    xrw_unlock(&mm_lock);
    return r;
}

/* -- mremap ---------------------------------------------------------------- */

/*
 * Move the host pages of [old, old+old_len) to [dst, dst+new_len) in the
 * window (dst range already reserved or mapped: MREMAP_FIXED replaces it)
 * and put reservation back over the source, unless dontunmap.
 */
static int host_move(uint64_t old, uint64_t old_len, uint64_t dst, uint64_t new_len, int extra)
{
    vfork_mm_forget(old, old_len);
    vfork_mm_forget(dst, new_len);
    void *p = mremap(g2h(old), old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED | extra, g2h(dst));
    if (p == MAP_FAILED)
        return -errno;
    if (old_len && !(extra & MREMAP_DONTUNMAP))
        host_reserve(old, old_len);
    return 0;
}

/* Grow [old, old+old_len) to new_len in place: the range after it is free. */
static int host_grow_in_place(const Vma *v, uint64_t old, uint64_t old_len, uint64_t new_len)
{
    if ((v->flags & VMA_ANON) && !(v->flags & VMA_SHARED)) {
        /* A fresh private anonymous extension is exactly what Linux gives. */
        int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | (v->flags & VMA_GROWSDOWN ? MAP_GROWSDOWN : 0);
        void *p = mmap(g2h(old + old_len), new_len - old_len, host_prot(v->prot), fl, -1, 0);
        return p == MAP_FAILED ? -errno : 0;
    }
    /* Shared or file mappings: move out to scratch host space and back. */
    void *tmp = mmap(NULL, new_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (tmp == MAP_FAILED)
        return -errno;
    void *p = mremap(g2h(old), old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, tmp);
    if (p == MAP_FAILED) {
        int e = -errno;
        munmap(tmp, new_len);
        return e;
    }
    host_reserve(old, old_len);
    p = mremap(tmp, new_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, g2h(old));
    if (p == MAP_FAILED) {
        fprintf(stderr, "xlat: mremap back into the guest window failed: %s\n", strerror(errno));
        abort();
    }
    return 0;
}

/* Record that [old, old+old_len) (described by tmpl) now lives at dst. */
static void table_move(const Vma *tmpl, uint64_t old, uint64_t old_len, uint64_t dst,
                       uint64_t new_len, bool keep_old)
{
    Vma v = *tmpl;
    v.offset = tmpl->offset + (old - tmpl->start);
    v.mod_delta = tmpl->mod_delta + (dst - old);
    v.name = mm_strdup(tmpl->name);
    v.start = dst;
    v.end = dst + new_len;
    if (!keep_old && old_len)
        vma_remove(old, old + old_len);
    vma_remove(dst, dst + new_len);
    vma_insert(v);
    if (v.prot & PROT_EXEC)
        mm_exec_range_changed(dst, new_len);
    log_map("mremap", dst, new_len, v.prot, v.name);
}

static int64_t mremap_locked(uint64_t old, uint64_t old_len, uint64_t new_len, int flags,
                             uint64_t new_addr)
{
    size_t i = vma_lookup(old);
    if (i == nvma || vmas[i].start > old)
        return -EFAULT;
    Vma tmpl = vmas[i];      /* shallow copy: name only used until table edits */
    char *name = mm_strdup(tmpl.name);
    tmpl.name = name;
    int64_t r;

    if (old_len == 0 && !(tmpl.flags & VMA_SHARED)) {
        r = -EINVAL;
        goto out;
    }
    if (old_len > tmpl.end - old) {
        r = -EFAULT;
        goto out;
    }
    if ((flags & MREMAP_DONTUNMAP) &&
        (old_len != new_len || (tmpl.flags & (VMA_SHARED | VMA_ANON)) != VMA_ANON)) {
        r = -EINVAL;
        goto out;
    }

    if (flags & MREMAP_FIXED) {
        if ((new_addr & PAGE_MASK_) || new_addr > GUEST_TASK_SIZE - new_len) {
            r = -EINVAL;
            goto out;
        }
        if (new_addr < old + old_len && old < new_addr + new_len) {
            r = -EINVAL;
            goto out;
        }
        if (old_len > new_len) {   /* drop the tail first, as Linux does */
            unmap_locked(old + new_len, old_len - new_len);
            old_len = new_len;
        }
        r = host_move(old, old_len, new_addr, new_len, flags & MREMAP_DONTUNMAP);
        if (r == 0) {
            table_move(&tmpl, old, old_len, new_addr, new_len, flags & MREMAP_DONTUNMAP);
            r = (int64_t)new_addr;
        }
        goto out;
    }

    if (old_len >= new_len && old_len) {   /* shrink in place */
        if (old_len > new_len)
            unmap_locked(old + new_len, old_len - new_len);
        r = (int64_t)old;
        goto out;
    }
    if (old_len && !(flags & MREMAP_DONTUNMAP) && old + new_len <= GUEST_TASK_SIZE &&
        old + old_len == tmpl.end && range_free(old + old_len, old + new_len)) {
        r = host_grow_in_place(&tmpl, old, old_len, new_len);
        if (r == 0) {
            table_move(&tmpl, old, old_len, old, new_len, false);
            r = (int64_t)old;
        }
        goto out;
    }
    if (!(flags & MREMAP_MAYMOVE)) {
        r = -ENOMEM;
        goto out;
    }
    uint64_t dst = find_free_locked(new_len, 0);
    if (!dst) {
        r = -ENOMEM;
        goto out;
    }
    r = host_move(old, old_len, dst, new_len, flags & MREMAP_DONTUNMAP);
    if (r == 0) {
        table_move(&tmpl, old, old_len, dst, new_len, old_len == 0 || (flags & MREMAP_DONTUNMAP));
        r = (int64_t)dst;
    }
out:
    free(name);
    return r;
}

int64_t guest_mremap(uint64_t old, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr)
{
    if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
        return -EINVAL;
    if ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && !(flags & MREMAP_MAYMOVE))
        return -EINVAL;
    if (old & PAGE_MASK_)
        return -EINVAL;
    if (PAGE_UP(old_len) < old_len || PAGE_UP(new_len) < new_len)
        return -EINVAL;
    old_len = PAGE_UP(old_len);
    new_len = PAGE_UP(new_len);
    if (new_len == 0)
        return -EINVAL;
    if (old >= GUEST_TASK_SIZE || new_len > GUEST_TASK_SIZE || old_len > GUEST_TASK_SIZE - old)
        return -EFAULT;

    xrw_wrlock(&mm_lock);
    int64_t r = mremap_locked(old, old_len, new_len, flags, new_addr);
    xrw_unlock(&mm_lock);
    return r;
}

/* -- brk ------------------------------------------------------------------ */

void guest_brk_init(uint64_t start)
{
    xrw_wrlock(&mm_lock);
    brk_start = brk_cur = PAGE_UP(start);
    xrw_unlock(&mm_lock);
    xlat_log(LOG_PAGE, "page: brk starts at %#llx\n", (unsigned long long)brk_start);
}

int64_t guest_brk(uint64_t addr)
{
    xrw_wrlock(&mm_lock);
    uint64_t ret = brk_cur;
    if (!brk_start || addr < brk_start || addr > GUEST_TASK_SIZE - GUEST_PAGE_SIZE)
        goto out;
    uint64_t newbrk = PAGE_UP(addr), oldbrk = PAGE_UP(brk_cur);
    if (newbrk < oldbrk) {
        if (unmap_locked(newbrk, oldbrk - newbrk) != 0)
            goto out;
    } else if (newbrk > oldbrk) {
        /* Linux keeps a page free between the heap and the next mapping. */
        if (!range_free(oldbrk, newbrk + GUEST_PAGE_SIZE))
            goto out;
        void *p = mmap(g2h(oldbrk), newbrk - oldbrk, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            goto out;
        vma_insert((Vma){ oldbrk, newbrk, PROT_READ | PROT_WRITE, VMA_ANON, 0, 0, 0,
                          mm_strdup("[heap]"), 0, 0 });
        log_map("brk", oldbrk, newbrk - oldbrk, PROT_READ | PROT_WRITE, "[heap]");
    }
    brk_cur = ret = addr;
out:
    xrw_unlock(&mm_lock);
    return (int64_t)ret;
}

/* -- SysV shared memory ------------------------------------------------------ */

/*
 * An attach is a shared vma with VMA_SYSV_SHM, whose dev and ino are those
 * of the segment's host file (ino is the shmid) and whose offset is the
 * offset in the segment, kept through splits (munmap, mprotect) and mremap
 * like Linux's vm_pgoff. munmap and mprotect work on it as on any mapping.
 */
#define VMA_SYSV_SHM 0x40

/* A line of the host's maps: if it is the attach *arg's, its device, inode
 * and name ("/SYSV0000abcd (deleted)"). */
static bool shm_line(void *arg, uintptr_t start, uintptr_t end, dev_t dev, ino_t ino, char *name)
{
    Vma *v = arg;
    (void)end;
    if (start != (uintptr_t)g2h(v->start))
        return true;
    v->dev = dev;
    v->ino = ino;
    if (*name)
        v->name = mm_strdup(name);
    return false;
}

int64_t guest_shmat(int shmid, uint64_t addr, bool fixed, uint64_t size, int shmflg)
{
    int prot = shmflg & SHM_RDONLY ? PROT_READ : PROT_READ | PROT_WRITE;
    if (shmflg & SHM_EXEC)
        prot |= PROT_EXEC;
    uint64_t len = PAGE_UP(size);
    if (len < size || len == 0)
        return -EINVAL;

    xrw_wrlock(&mm_lock);
    int64_t ret;
    if (fixed) {
        /* Linux: an overlap without SHM_REMAP, then do_mmap's own checks. */
        if (!(shmflg & SHM_REMAP) && (addr + len < addr || !range_free(addr, addr + len))) {
            ret = -EINVAL;
            goto out;
        }
        if (len > GUEST_TASK_SIZE || addr > GUEST_TASK_SIZE - len) {
            ret = -ENOMEM;
            goto out;
        }
        if (addr < GUEST_MMAP_MIN_ADDR) {
            ret = -EPERM;
            goto out;
        }
    } else {
        addr = find_free_locked(len, 0);
        if (!addr) {
            ret = -ENOMEM;
            goto out;
        }
    }
    bool was_free = range_free(addr, addr + len);
    if (!was_free)
        vfork_mm_forget(addr, len);     /* a vfork child's writes there go first */
    /* Over the window's reservation (or the mapping SHM_REMAP replaces). */
    void *p = shmat(shmid, g2h(addr), (shmflg & (SHM_RDONLY | SHM_EXEC)) | SHM_REMAP);
    if (p == (void *)-1) {
        ret = -errno;
        if (was_free)
            host_reserve(addr, len);    /* in case the host left a hole */
        goto out;
    }
    if (p != g2h(addr)) {
        fprintf(stderr, "xlat: shmat did not attach at the requested host address\n");
        abort();
    }
    if ((prot & PROT_EXEC) && mprotect(p, len, host_prot(prot)) != 0) {
        ret = -errno;
        host_reserve(addr, len);
        goto out;
    }
    vma_remove(addr, addr + len);
    Vma v = { addr, addr + len, prot, VMA_SHARED | VMA_SYSV_SHM, 0, 0, (uint64_t)shmid, NULL, 0, 0 };
    mm_host_maps_walk(shm_line, &v);
    log_map("shmat", addr, len, prot, v.name);
    vma_insert(v);
    if (prot & PROT_EXEC)
        mm_exec_range_changed(addr, len);
    ret = (int64_t)addr;
out:
    xrw_unlock(&mm_lock);
    return ret;
}

/*
 * Linux's shmdt: the first attach vma at or above addr whose offset in the
 * segment is its distance from addr says which attach; then every vma of
 * that attach (the same segment at the same distance) goes, fragments left
 * by munmap or mprotect included. The reservation comes back over them.
 */
int64_t guest_shmdt(uint64_t addr)
{
    if (addr & PAGE_MASK_)
        return -EINVAL;
    xrw_wrlock(&mm_lock);
    int64_t ret = -EINVAL;
    uint64_t dev = 0, ino = 0;
    for (size_t i = vma_lookup(addr); i < nvma;) {
        Vma *v = &vmas[i];
        bool match = (v->flags & VMA_SYSV_SHM) && v->start >= addr &&
                     v->start - addr == v->offset &&
                     (ret != 0 || (v->dev == dev && v->ino == ino));
        if (!match) {
            i++;
            continue;
        }
        dev = v->dev;
        ino = v->ino;
        ret = 0;
        unmap_locked(v->start, v->end - v->start);   /* drops vmas[i]: i is the next one */
    }
    xrw_unlock(&mm_lock);
    return ret;
}
