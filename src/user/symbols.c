/*
 * Guest symbol tables (see symbols.h). Each file's STT_FUNC symbols go into
 * one array sorted by address; lookups take the last symbol at or below pc
 * (within its size when it has one). Files are read with pread, never
 * mapped into the guest, and a malformed file just adds nothing.
 */
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/lock.h"
#include "user/symbols.h"

typedef struct { uint64_t addr, size; const char *name; } Sym;

static Sym *syms;
static size_t nsyms, cap;

/* Executable ranges of each file read, to name code no symbol covers
 * ("ld-linux-riscv64-lp64d.so.1+0x1234", offsets from its load bias). */
typedef struct { uint64_t start, end, bias; char *name; } Module;
static Module mods[256] LARGE_BSS;
static size_t nmods;
LEAF_MUTEX(lock)

static void *read_at(int fd, uint64_t off, uint64_t len, uint64_t file_size)
{
    if (off > file_size || len > file_size - off || len > (256u << 20))
        return NULL;
    void *p = malloc(len + 1);
    if (p && pread(fd, p, len, (off_t)off) != (ssize_t)len) {
        free(p);
        return NULL;
    }
    if (p)
        ((char *)p)[len] = '\0';
    return p;
}

static int cmp_sym(const void *a, const void *b)
{
    const Sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Add the STT_FUNC symbols of section sh (a symbol table) linked to strtab. */
static void add_table(int fd, const Elf64_Shdr *sh, const Elf64_Shdr *strsh,
                      uint64_t bias, uint64_t fsize)
{
    Elf64_Sym *tab = read_at(fd, sh->sh_offset, sh->sh_size, fsize);
    char *str = read_at(fd, strsh->sh_offset, strsh->sh_size, fsize);
    size_t n = tab ? sh->sh_size / sizeof *tab : 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; str && i < n; i++) {
        const Elf64_Sym *s = &tab[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_value || s->st_name >= strsh->sh_size)
            continue;
        if (nsyms == cap) {
            cap = cap ? cap * 2 : 1024;
            syms = realloc(syms, cap * sizeof *syms);
        }
        syms[nsyms++] = (Sym){ s->st_value + bias, s->st_size, strdup(str + s->st_name) };
    }
    qsort(syms, nsyms, sizeof *syms, cmp_sym);
    pthread_mutex_unlock(&lock);
    free(tab);
    free(str);
}

static void add_module(int fd, const Elf64_Ehdr *eh, uint64_t bias, const char *path)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < eh->e_phnum && eh->e_phnum <= 256; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh->e_phoff + (uint64_t)i * sizeof ph)) != sizeof ph)
            return;
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
            hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
        }
    }
    const char *base = strrchr(path, '/');
    pthread_mutex_lock(&lock);
    if (lo < hi && nmods < sizeof mods / sizeof mods[0])
        mods[nmods++] = (Module){ lo + bias, hi + bias, bias, strdup(base ? base + 1 : path) };
    pthread_mutex_unlock(&lock);
}

static void add_fd(int fd, uint64_t bias, const char *path)
{
    struct stat st;
    Elf64_Ehdr eh;
    if (fstat(fd, &st) < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
        return;
    if (eh.e_phentsize == sizeof(Elf64_Phdr))
        add_module(fd, &eh, bias, path);
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096)
        return;
    Elf64_Shdr *sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh, (uint64_t)st.st_size);
    if (!sh)
        return;
    int pick = -1;
    for (int i = 0; i < eh.e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && pick < 0))
            pick = i;
    if (pick >= 0 && sh[pick].sh_link < eh.e_shnum)
        add_table(fd, &sh[pick], &sh[sh[pick].sh_link], bias, (uint64_t)st.st_size);
    free(sh);
}

void symbols_add_file(const char *path, uint64_t bias)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        add_fd(fd, bias, path);
        close(fd);
    }
}

void symbols_add_mapping(int fd, uint64_t off, uint64_t addr)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        return;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != sizeof ph)
            return;
        if (ph.p_type == PT_LOAD && (ph.p_offset & ~0xfffULL) == off) {
            char link[64], path[4096];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, path, sizeof path - 1);
            path[n > 0 ? n : 0] = '\0';
            add_fd(fd, addr - (ph.p_vaddr & ~0xfffULL), n > 0 ? path : "?");
            return;
        }
    }
}

void symbols_name(uint64_t pc, char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    size_t lo = 0, hi = nsyms;              /* first symbol above pc */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (syms[mid].addr <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    const Sym *s = lo ? &syms[lo - 1] : NULL;
    const Module *m = NULL;
    for (size_t i = 0; i < nmods && !m; i++)
        if (pc >= mods[i].start && pc < mods[i].end)
            m = &mods[i];
    if (s && (s->size == 0 || pc < s->addr + s->size) && (!m || s->addr >= m->start))
        snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)(pc - s->addr));
    else if (m)
        snprintf(buf, len, "%s+0x%llx", m->name, (unsigned long long)(pc - m->bias));
    else
        snprintf(buf, len, "guest_0x%llx", (unsigned long long)pc);
    pthread_mutex_unlock(&lock);
}

void symbols_add_interp(const char *exe, const char *prefix, uint64_t base)
{
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    char path[4096] = "", full[8192];
    if (fd < 0)
        return;
    if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum <= 256)
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != sizeof ph)
                break;
            if (ph.p_type == PT_INTERP && ph.p_filesz < sizeof path &&
                pread(fd, path, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
                path[ph.p_filesz] = '\0';
                break;
            }
        }
    close(fd);
    if (!path[0])
        return;
    snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", path);
    symbols_add_file(access(full, R_OK) == 0 ? full : path, base);   /* ld.so is ET_DYN at 0 */
}
