/*
 * The riscv64 ELF loader (user mode).
 *
 * elf_load_fd() reads the program file into memory and hands it to
 * elf_load_mem(), which:
 *   1. validates the whole image (header, program header table, every
 *      PT_LOAD and PT_INTERP) before anything is mapped; the ELF is
 *      untrusted input, so every offset and size is checked with
 *      overflow-free arithmetic, and each failure is a one-line reason;
 *   2. if there is a PT_INTERP, reads and validates the interpreter too
 *      (opened in the guest's view: under -L DIR first, like qemu's -L,
 *      inside DIR with --root; path.h);
 *   3. chooses load biases and maps each PT_LOAD privately from its file as
 *      Linux does (bss zeroed, anonymous pages after), or, for bytes with no
 *      file or segments sharing a page, maps it read-write, copies the file
 *      bytes in and then applies the segment protections;
 *   4. sets the initial program break after the program's highest segment.
 *
 * Load addresses: ET_EXEC at its own addresses. The main ET_DYN program
 * (PIE or static-pie) at ELF_ET_DYN_BASE = 2/3 of the Sv39 task size
 * (0x2aaaaaa000), which is Linux's riscv64 choice without randomization
 * (ELF_ET_DYN_BASE = DEFAULT_MAP_WINDOW / 3 * 2), rounded down to the
 * largest PT_LOAD alignment. The interpreter goes wherever a top-down mmap
 * search puts it, below the stack, as Linux does.
 */
#include "user/loader.h"
#include "riscv/elf_header.h"
#include "user/path.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/pcache.h"
#include "user/mm.h"
#include "user/options.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif

#define PAGE_MASK_   (GUEST_PAGE_SIZE - 1)
#define PAGE_DOWN(x) ((x) & ~PAGE_MASK_)
#define PAGE_UP(x)   (((x) + PAGE_MASK_) & ~PAGE_MASK_)

#define ELF_ET_DYN_BASE PAGE_DOWN(GUEST_TASK_SIZE / 3 * 2)
/* Linux refuses program header tables larger than this. */
#define MAX_PHDR_BYTES 65536
/* Largest segment alignment honoured when placing an ET_DYN image. */
#define MAX_LOAD_ALIGN (1ULL << 30)

/* A validated ELF image, ready to map. */
typedef struct ElfInfo {
    const uint8_t *data;
    size_t size;
    int fd;                  /* the file data came from (mapped from it), or -1 */
    Elf64_Ehdr eh;
    Elf64_Phdr *ph;          /* aligned copy of the program header table */
    uint64_t lo, hi;         /* page-aligned span of the PT_LOADs, unbiased */
    uint64_t align;          /* largest PT_LOAD alignment (page..1 GiB) */
    const char *interp;      /* PT_INTERP path inside data, or NULL */
} ElfInfo;

/* -- Validation --------------------------------------------------------------- */

static int check_header(const ElfInfo *e, char *err, size_t errlen)
{
    const Elf64_Ehdr *h = &e->eh;
    if (riscv_elf_check_header(h, e->size, MAX_PHDR_BYTES, err, errlen) < 0)
        return -1;
    if (h->e_type != ET_EXEC && h->e_type != ET_DYN)
        return elf_error(err, errlen, "not an executable (e_type %u)", h->e_type);
    return 0;
}

static int check_load(ElfInfo *e, const Elf64_Phdr *p, char *err, size_t errlen)
{
    if (p->p_filesz > p->p_memsz)
        return elf_error(err, errlen, "segment file size larger than its memory size");
    if (p->p_offset > e->size || p->p_filesz > e->size - p->p_offset)
        return elf_error(err, errlen, "segment out of file");
    /* Keep every address far from 2^64 so later sums cannot wrap. */
    if (p->p_vaddr >= (1ULL << 62) || p->p_memsz >= (1ULL << 62))
        return elf_error(err, errlen, "segment outside address space");
    if ((p->p_vaddr & PAGE_MASK_) != (p->p_offset & PAGE_MASK_))
        return elf_error(err, errlen, "segment address and file offset disagree modulo page size");
    if (p->p_memsz == 0)
        return 0;
    uint64_t lo = PAGE_DOWN(p->p_vaddr), hi = PAGE_UP(p->p_vaddr + p->p_memsz);
    if (lo < e->lo)
        e->lo = lo;
    if (hi > e->hi)
        e->hi = hi;
    if (p->p_align > e->align && p->p_align <= MAX_LOAD_ALIGN &&
        (p->p_align & (p->p_align - 1)) == 0)
        e->align = p->p_align;
    return 0;
}

static int check_interp(ElfInfo *e, const Elf64_Phdr *p, char *err, size_t errlen)
{
    if (e->interp)
        return 0;   /* Linux uses the first one */
    if (p->p_offset > e->size || p->p_filesz > e->size - p->p_offset)
        return elf_error(err, errlen, "interpreter path out of file");
    if (p->p_filesz < 2 || p->p_filesz > PATH_MAX)
        return elf_error(err, errlen, "bad interpreter path length %llu",
                    (unsigned long long)p->p_filesz);
    const char *s = (const char *)e->data + p->p_offset;
    if (s[p->p_filesz - 1] != 0 || strlen(s) != p->p_filesz - 1)
        return elf_error(err, errlen, "interpreter path not NUL-terminated");
    e->interp = s;
    return 0;
}

/* Validate data[0..size) as a riscv64 executable; fills e (free e->ph after). */
static int elf_parse(const uint8_t *data, size_t size, ElfInfo *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof(*e));
    e->data = data;
    e->size = size;
    e->fd = -1;
    e->lo = UINT64_MAX;
    e->align = GUEST_PAGE_SIZE;
    if (size == 0)
        return elf_error(err, errlen, "empty file");
    if (size < sizeof(Elf64_Ehdr))
        return elf_error(err, errlen, "truncated file (%zu bytes)", size);
    memcpy(&e->eh, data, sizeof(e->eh));
    if (check_header(e, err, errlen))
        return -1;

    e->ph = malloc(e->eh.e_phnum * sizeof(Elf64_Phdr));
    if (!e->ph)
        return elf_error(err, errlen, "out of memory");
    memcpy(e->ph, data + e->eh.e_phoff, e->eh.e_phnum * sizeof(Elf64_Phdr));

    int nload = 0;
    for (unsigned i = 0; i < e->eh.e_phnum; i++) {
        const Elf64_Phdr *p = &e->ph[i];
        int r = 0;
        if (p->p_type == PT_LOAD) {
            r = check_load(e, p, err, errlen);
            nload++;
        } else if (p->p_type == PT_INTERP) {
            r = check_interp(e, p, err, errlen);
        }
        if (r)
            goto bad;
    }
    if (nload == 0 || e->lo == UINT64_MAX) {
        elf_error(err, errlen, "no loadable segment");
        goto bad;
    }
    if (e->hi - e->lo > GUEST_TASK_SIZE - 0x10000) {
        elf_error(err, errlen, "segment outside address space");
        goto bad;
    }
    if (e->eh.e_type == ET_EXEC && e->hi > GUEST_TASK_SIZE) {
        elf_error(err, errlen, "segment outside address space");
        goto bad;
    }
    if (e->eh.e_entry >= (1ULL << 62)) {
        elf_error(err, errlen, "entry point outside address space");
        goto bad;
    }
    return 0;
bad:
    free(e->ph);
    e->ph = NULL;
    return -1;
}

/* -- Mapping ------------------------------------------------------------------ */

static int prot_of(uint32_t pflags)
{
    return (pflags & PF_R ? PROT_READ : 0) | (pflags & PF_W ? PROT_WRITE : 0) |
           (pflags & PF_X ? PROT_EXEC : 0);
}

/* Tell the persistent translation cache which file the code segments hold. */
static void note_code_origin(const ElfInfo *e, uint64_t bias, const char *name)
{
    int module = pcache_module_bytes(e->data, e->size, name);
    if (module < 0)
        return;
    for (unsigned i = 0; i < e->eh.e_phnum; i++) {
        const Elf64_Phdr *ph = &e->ph[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_filesz)
            mm_set_code_origin(PAGE_DOWN(ph->p_vaddr + bias),
                               PAGE_UP(ph->p_vaddr + bias + ph->p_filesz), module,
                               ph->p_vaddr + bias - ph->p_offset);
    }
}

/* Whether two PT_LOADs of e share a page (then each is copied, not mapped). */
static bool loads_share_a_page(const ElfInfo *e)
{
    const Elf64_Phdr *ph = e->ph;
    for (unsigned i = 0; i < e->eh.e_phnum; i++)
        for (unsigned j = i + 1; j < e->eh.e_phnum; j++) {
            if (ph[i].p_type != PT_LOAD || ph[j].p_type != PT_LOAD || !ph[i].p_memsz ||
                !ph[j].p_memsz)
                continue;
            if (PAGE_DOWN(ph[i].p_vaddr) < PAGE_UP(ph[j].p_vaddr + ph[j].p_memsz) &&
                PAGE_DOWN(ph[j].p_vaddr) < PAGE_UP(ph[i].p_vaddr + ph[i].p_memsz))
                return true;
        }
    return false;
}

/*
 * One segment as Linux maps it: its file pages privately from e->fd, the
 * rest of the last file page zeroed if the segment has bss, and anonymous
 * pages after (nameless in /proc/self/maps, as Linux's). Pages nobody
 * touches are never read (a compiler's 25 MB of code costs what it runs),
 * and /proc/self/maps names the file.
 */
static int map_segment(const ElfInfo *e, const Elf64_Phdr *p, uint64_t bias)
{
    uint64_t s = PAGE_DOWN(p->p_vaddr + bias);
    uint64_t fend = PAGE_UP(p->p_vaddr + bias + p->p_filesz);
    uint64_t end = PAGE_UP(p->p_vaddr + bias + p->p_memsz);
    uint64_t zero = p->p_vaddr + bias + p->p_filesz;
    bool tail = p->p_memsz > p->p_filesz && zero < fend;
    int prot = prot_of(p->p_flags);
    if (fend > s) {
        int64_t r = guest_mmap(s, fend - s, prot | (tail ? PROT_WRITE : 0),
                               MAP_PRIVATE | MAP_FIXED, e->fd, (off_t)PAGE_DOWN(p->p_offset));
        if (r < 0)
            return (int)r;
        if (tail) {
            memset(g2h(zero), 0, fend - zero);
            if (!(prot & PROT_WRITE))
                guest_mprotect(s, fend - s, prot);
        }
    }
    return end > fend ? guest_map_fixed(fend, end - fend, prot, NULL) : 0;
}

/* Map the validated image e at bias from its file, segment by segment. */
static int elf_map_file(const ElfInfo *e, uint64_t bias, const char *name, char *err, size_t errlen)
{
    for (unsigned i = 0; i < e->eh.e_phnum; i++) {
        const Elf64_Phdr *p = &e->ph[i];
        if (p->p_type != PT_LOAD || p->p_memsz == 0)
            continue;
        int r = map_segment(e, p, bias);
        if (r)
            return elf_error(err, errlen, "cannot map segment at %#llx: %s",
                             (unsigned long long)PAGE_DOWN(p->p_vaddr + bias), strerror(-r));
    }
    note_code_origin(e, bias, name);
    return 0;
}

/*
 * Map the validated image e at bias (lo + bias must be inside the task
 * space): from its file when there is one and no page holds two segments,
 * else copied. Copied file bytes of each segment start at its first page's
 * start, as a file mapping would show them, and are named by the file's
 * path (the file's own, as a mapping of it shows), else by name.
 */
static int elf_map(const ElfInfo *e, uint64_t bias, const char *name, char *err, size_t errlen)
{
    if (e->fd >= 0 && !loads_share_a_page(e))
        return elf_map_file(e, bias, name, err, errlen);
    char fd_path[PATH_MAX];
    const char *shown = e->fd >= 0 && path_fd_name(e->fd, fd_path, sizeof fd_path) >= 0 ? fd_path
                                                                                        : name;
    const Elf64_Phdr *ph = e->ph;
    unsigned n = e->eh.e_phnum;
    for (unsigned i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
            continue;
        uint64_t s = PAGE_DOWN(ph[i].p_vaddr + bias);
        uint64_t end = PAGE_UP(ph[i].p_vaddr + bias + ph[i].p_memsz);
        int r = guest_map_fixed(s, end - s, PROT_READ | PROT_WRITE, shown);
        if (r)
            return elf_error(err, errlen, "cannot map segment at %#llx: %s",
                        (unsigned long long)s, strerror(-r));
    }
    for (unsigned i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
            continue;
        uint64_t head = ph[i].p_offset & PAGE_MASK_;
        memcpy(g2h(ph[i].p_vaddr + bias - head), e->data + ph[i].p_offset - head,
               ph[i].p_filesz + head);
    }
    /* Protections last; a page shared by two segments gets both. */
    uint64_t prev_end = 0;
    int prev_prot = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
            continue;
        uint64_t s = PAGE_DOWN(ph[i].p_vaddr + bias);
        uint64_t end = PAGE_UP(ph[i].p_vaddr + bias + ph[i].p_memsz);
        int prot = prot_of(ph[i].p_flags);
        guest_mprotect(s, end - s, prot);
        if (s < prev_end && prev_end <= end)
            guest_mprotect(s, GUEST_PAGE_SIZE, prot | prev_prot);
        prev_end = end;
        prev_prot = prot;
    }
    note_code_origin(e, bias, name);
    return 0;
}

/* Guest address of the program headers once mapped at bias (AT_PHDR). */
static uint64_t phdr_addr(const ElfInfo *e, uint64_t bias)
{
    const Elf64_Phdr *ph = e->ph;
    uint64_t off = e->eh.e_phoff;
    uint64_t size = (uint64_t)e->eh.e_phnum * sizeof(Elf64_Phdr);
    for (unsigned i = 0; i < e->eh.e_phnum; i++)
        if (ph[i].p_type == PT_PHDR)
            return ph[i].p_vaddr + bias;
    for (unsigned i = 0; i < e->eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset <= off &&
            off - ph[i].p_offset + size <= ph[i].p_filesz)
            return ph[i].p_vaddr + (off - ph[i].p_offset) + bias;
    /* Not mapped: what older kernels and qemu report (first load + e_phoff). */
    for (unsigned i = 0; i < e->eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)
            return ph[i].p_vaddr - ph[i].p_offset + off + bias;
    return 0;
}

/* Bias for the main program. */
static int choose_main_bias(const ElfInfo *e, uint64_t *bias, char *err, size_t errlen)
{
    if (e->eh.e_type == ET_EXEC) {
        *bias = 0;
        return 0;
    }
    uint64_t base = ELF_ET_DYN_BASE & ~(e->align - 1);
    if (e->lo >= base)
        *bias = 0;   /* already linked high: keep its addresses */
    else
        *bias = base - e->lo;
    if (e->hi + *bias > GUEST_TASK_SIZE)
        return elf_error(err, errlen, "segment outside address space");
    return 0;
}

/* Bias for the interpreter: a free range found top-down, like an mmap. */
static int choose_interp_bias(const ElfInfo *e, uint64_t *bias, char *err, size_t errlen)
{
    if (e->eh.e_type == ET_EXEC) {
        *bias = 0;
        return 0;
    }
    uint64_t span = e->hi - e->lo;
    uint64_t a = guest_find_free(span + e->align - GUEST_PAGE_SIZE, 0);
    if (!a)
        return elf_error(err, errlen, "no room for the interpreter");
    a = (a + e->align - 1) & ~(e->align - 1);
    *bias = a - e->lo;
    return 0;
}

/* -- The interpreter file ------------------------------------------------------ */

/* A whole file mapped read-only for parsing. */
typedef struct FileBytes {
    const uint8_t *data;
    size_t size;
    int fd;                     /* kept open for mapping (ours to close), or -1 */
} FileBytes;

/* Map the open file fd (the caller's) for parsing. */
static int read_fd(int fd, FileBytes *fb, char *err, size_t errlen)
{
    fb->data = NULL;
    fb->size = 0;
    fb->fd = -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return elf_error(err, errlen, "not a regular file");
    if (!(st.st_mode & 0111))
        return elf_error(err, errlen, "permission denied (not executable)");
    fb->size = (size_t)st.st_size;
    if (fb->size > 0) {
        void *p = mmap(NULL, fb->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
            return elf_error(err, errlen, "%s", strerror(errno));
        fb->data = p;
    }
    return 0;
}

static void release_file(FileBytes *fb)
{
    if (fb->data)
        munmap((void *)fb->data, fb->size);
    if (fb->fd >= 0)
        close(fb->fd);
    fb->data = NULL;
    fb->fd = -1;
}

/*
 * Open the interpreter in the guest's view; hostpath gets the name its
 * mapping shows in /proc/self/maps (the -L file, or the guest's path).
 */
static int read_interp(const char *ipath, FileBytes *fb, char *hostpath, size_t hplen,
                       char *err, size_t errlen)
{
    /* Resolved once for both the name and the open (-L asks the kernel
     * whether the prefixed file exists). O_NONBLOCK: a FIFO fails the
     * checks, never blocks. */
    snprintf(hostpath, hplen, "%s", ipath);
    int fd = path_open_named(AT_FDCWD, ipath, PATH_FOLLOW | PATH_LOOKUP, O_RDONLY | O_NONBLOCK,
                             path_rooted() ? NULL : hostpath, hplen);
    if (fd < 0)
        return elf_error(err, errlen, "%s", strerror(-fd));
    int r = read_fd(fd, fb, err, errlen);
    if (r == 0)
        fb->fd = fd;
    else
        close(fd);
    return r;
}

/* -- Entry points ------------------------------------------------------------- */

/* Load the program in data[0..size) (read from prog_fd, or -1) and its interpreter. */
static int load_image(const uint8_t *data, size_t size, int prog_fd, const char *path,
                      GuestImage *img, char *err, size_t errlen)
{
    ElfInfo prog, interp = { 0 };
    FileBytes ifile = { .fd = -1 };
    char ipath[PATH_MAX + 256];
    char ierr[256];
    int ret = -1;

    if (elf_parse(data, size, &prog, err, errlen))
        return -1;
    prog.fd = prog_fd;
    if (prog.interp) {
        if (read_interp(prog.interp, &ifile, ipath, sizeof(ipath), ierr, sizeof(ierr))) {
            elf_error(err, errlen, "cannot load interpreter %s: %s", ipath, ierr);
            goto out;
        }
        if (elf_parse(ifile.data, ifile.size, &interp, ierr, sizeof(ierr))) {
            elf_error(err, errlen, "interpreter %s: %s", ipath, ierr);
            goto out;
        }
        interp.fd = ifile.fd;
    }

    uint64_t bias, ibias = 0;
    if (choose_main_bias(&prog, &bias, err, errlen))
        goto out;
    if (elf_map(&prog, bias, path, err, errlen))
        goto out;
    memset(img, 0, sizeof(*img));
    img->load_bias = bias;
    img->prog_entry = prog.eh.e_entry + bias;
    img->entry = img->prog_entry;
    img->phdr = phdr_addr(&prog, bias);
    img->phnum = prog.eh.e_phnum;
    img->phent = sizeof(Elf64_Phdr);
    img->brk = prog.hi + bias;
    img->path = path;
    guest_brk_init(img->brk);

    if (prog.interp) {
        if (choose_interp_bias(&interp, &ibias, err, errlen))
            goto out;
        if (elf_map(&interp, ibias, ipath, err, errlen))
            goto out;
        img->interp_base = ibias;
        img->entry = interp.eh.e_entry + ibias;
    }
    xlat_log(LOG_PAGE, "page: loaded %s bias %#llx entry %#llx brk %#llx\n", path,
             (unsigned long long)bias, (unsigned long long)img->entry,
             (unsigned long long)img->brk);
    ret = 0;
out:
    free(prog.ph);
    free(interp.ph);
    release_file(&ifile);
    return ret;
}

int elf_load_mem(const uint8_t *data, size_t size, const char *path,
                 GuestImage *img, char *err, size_t errlen)
{
    return load_image(data, size, -1, path, img, err, errlen);
}

int elf_load_fd(int fd, const char *path, GuestImage *img, char *err, size_t errlen)
{
    FileBytes fb;
    char ferr[256];
    if (read_fd(fd, &fb, ferr, sizeof(ferr)))
        return elf_error(err, errlen, "%s", ferr);
    int r = load_image(fb.data, fb.size, fd, path, img, err, errlen);
    release_file(&fb);
    return r;
}
