/*
 * Boot loading (see loader.h): the kernel's format is told by its first
 * bytes (ELF magic; the RISC-V Image magics at 0x30/0x38; else raw), each
 * format is checked in full before a byte goes to RAM, and the initrd and
 * DTB are placed by QEMU's rules.
 *
 * The RISC-V Image header (Linux Documentation/arch/riscv/boot-image-
 * header.rst), little-endian:
 *   0x00 code0, code1   0x08 text_offset   0x10 image_size   0x18 flags
 *   0x20 version        0x30 magic "RISCV\0\0\0" (deprecated)
 *   0x38 magic2 "RSC\x05"                  0x3c res3 (PE/COFF offset)
 * flags bit 0 is the endianness (1: big). Debian's kernel also starts with
 * the EFI stub's "MZ", which changes nothing here.
 */
#define _GNU_SOURCE
#include "system/loader.h"
#include "riscv/elf_header.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1ULL << 20)
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ALIGN_UP(x, a) ALIGN_DOWN((x) + (a) - 1, a)

#define IMAGE_HDR_SIZE 64
#define IMAGE_ALIGN    (2 * MiB)       /* RV64 kernels run from a 2 MiB boundary */
#define INITRD_MAX_GAP (512 * MiB)     /* QEMU >= 8.1: initrd at most this far up */
#define FDT_ALIGN      (2 * MiB)

/* Physical [pa, pa + len) lies in RAM (overflow-safe). */
static bool in_ram(const BootRam *ram, uint64_t pa, uint64_t len)
{
    return pa >= ram->base && pa - ram->base <= ram->size && len <= ram->size - (pa - ram->base);
}

static uint8_t *ram_at(const BootRam *ram, uint64_t pa)
{
    return ram->host + (pa - ram->base);
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);                  /* guest and host are little-endian */
    return v;
}

static unsigned long long mib(uint64_t bytes)
{
    return (unsigned long long)(bytes / MiB + (bytes % MiB != 0));
}

/* -- ELF ------------------------------------------------------------------ */

static int elf_check_header(const Elf64_Ehdr *eh, size_t len, const char *name, char *err,
                            size_t errlen)
{
    char why[160];
    if (riscv_elf_check_header(eh, len, len, why, sizeof why) < 0)
        return elf_error(err, errlen, "%s: %s", name, why);
    if (eh->e_type != ET_EXEC)
        return elf_error(err, errlen, "%s: ELF type %u is not ET_EXEC (a PIE or shared object "
                    "has no load address)", name, eh->e_type);
    return 0;
}

static Elf64_Phdr elf_phdr(const uint8_t *data, const Elf64_Ehdr *eh, unsigned i)
{
    Elf64_Phdr ph;
    memcpy(&ph, data + eh->e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
    return ph;
}

/* Check every PT_LOAD segment; record the loaded range in out. */
static int elf_check_segments(const BootRam *ram, const uint8_t *data, size_t len,
                              const Elf64_Ehdr *eh, const char *name, LoadedImage *out,
                              char *err, size_t errlen)
{
    out->low = UINT64_MAX;
    out->high = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph = elf_phdr(data, eh, i);
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
            continue;
        if (ph.p_filesz > ph.p_memsz)
            return elf_error(err, errlen, "%s: segment %u has more file bytes than memory", name, i);
        if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
            return elf_error(err, errlen, "%s: truncated (segment %u needs bytes up to %#llx, the "
                        "file has %zu)", name, i,
                        (unsigned long long)(ph.p_offset + ph.p_filesz), len);
        if (!in_ram(ram, ph.p_paddr, ph.p_memsz))
            return elf_error(err, errlen, "%s: segment %u [%#llx, +%#llx) lies outside RAM "
                        "[%#llx, %#llx) (-m %llu MiB)", name, i,
                        (unsigned long long)ph.p_paddr, (unsigned long long)ph.p_memsz,
                        (unsigned long long)ram->base,
                        (unsigned long long)(ram->base + ram->size), mib(ram->size));
        if (ph.p_paddr < out->low)
            out->low = ph.p_paddr;
        if (ph.p_paddr + ph.p_memsz > out->high)
            out->high = ph.p_paddr + ph.p_memsz;
    }
    if (out->high == 0)
        return elf_error(err, errlen, "%s: no loadable segment", name);
    return 0;
}

/* e_entry as a physical address: inside a segment's physical range as it
 * is, or inside its virtual range (a kernel linked high), translated. */
static int elf_entry(const uint8_t *data, const Elf64_Ehdr *eh, const char *name,
                     uint64_t *entry, char *err, size_t errlen)
{
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < eh->e_phnum; i++) {
            Elf64_Phdr ph = elf_phdr(data, eh, i);
            uint64_t start = pass == 0 ? ph.p_paddr : ph.p_vaddr;
            if (ph.p_type != PT_LOAD || eh->e_entry < start || eh->e_entry - start >= ph.p_memsz)
                continue;
            *entry = ph.p_paddr + (eh->e_entry - start);
            return 0;
        }
    return elf_error(err, errlen, "%s: entry point %#llx is in no loadable segment", name,
                (unsigned long long)eh->e_entry);
}

static void elf_copy_segments(const BootRam *ram, const uint8_t *data, const Elf64_Ehdr *eh)
{
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph = elf_phdr(data, eh, i);
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
            continue;
        uint8_t *dst = ram_at(ram, ph.p_paddr);
        memcpy(dst, data + ph.p_offset, ph.p_filesz);
        memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
    }
}

/* Section header i, if the table is sane and inside the file. */
static bool elf_shdr(const uint8_t *data, size_t len, const Elf64_Ehdr *eh, unsigned i,
                     Elf64_Shdr *sh)
{
    if (eh->e_shentsize != sizeof *sh || i >= eh->e_shnum || eh->e_shoff > len ||
        (uint64_t)eh->e_shnum * sizeof *sh > len - eh->e_shoff)
        return false;
    memcpy(sh, data + eh->e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
    return sh->sh_type == SHT_NOBITS || (sh->sh_offset <= len && sh->sh_size <= len - sh->sh_offset);
}

/* Symbol name at strtab offset off equals want (bounded by the table). */
static bool sym_name_is(const uint8_t *strtab, uint64_t size, uint32_t off, const char *want)
{
    size_t n = strlen(want) + 1;
    return off < size && n <= size - off && !memcmp(strtab + off, want, n);
}

/* tohost and fromhost from the symbol table, when there is one; a damaged
 * table only means no symbols (the image itself was already checked). */
static void elf_find_htif(const uint8_t *data, size_t len, const Elf64_Ehdr *eh,
                          LoadedImage *out)
{
    Elf64_Shdr sh, strsh;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (!elf_shdr(data, len, eh, i, &sh) || sh.sh_type != SHT_SYMTAB ||
            sh.sh_entsize != sizeof(Elf64_Sym) || !elf_shdr(data, len, eh, sh.sh_link, &strsh) ||
            strsh.sh_type != SHT_STRTAB)
            continue;
        const uint8_t *strtab = data + strsh.sh_offset;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
            Elf64_Sym sym;
            memcpy(&sym, data + sh.sh_offset + k * sizeof sym, sizeof sym);
            if (sym_name_is(strtab, strsh.sh_size, sym.st_name, "tohost"))
                out->tohost = sym.st_value;
            else if (sym_name_is(strtab, strsh.sh_size, sym.st_name, "fromhost"))
                out->fromhost = sym.st_value;
        }
        return;
    }
}

static int load_elf(const BootRam *ram, const uint8_t *data, size_t len, const char *name,
                    LoadedImage *out, char *err, size_t errlen)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh)
        return elf_error(err, errlen, "%s: truncated ELF header (%zu bytes)", name, len);
    memcpy(&eh, data, sizeof eh);
    if (elf_check_header(&eh, len, name, err, errlen) < 0 ||
        elf_check_segments(ram, data, len, &eh, name, out, err, errlen) < 0 ||
        elf_entry(data, &eh, name, &out->entry, err, errlen) < 0)
        return -1;
    elf_copy_segments(ram, data, &eh);
    elf_find_htif(data, len, &eh, out);
    out->kind = IMAGE_ELF;
    return 0;
}

/* -- Linux Image and raw binaries ------------------------------------------ */

static bool is_linux_image(const uint8_t *data, size_t len)
{
    return len >= IMAGE_HDR_SIZE &&
           (!memcmp(data + 0x30, "RISCV\0\0\0", 8) || !memcmp(data + 0x38, "RSC\x05", 4));
}

static int load_image(const BootRam *ram, const uint8_t *data, size_t len, const char *name,
                      LoadedImage *out, char *err, size_t errlen)
{
    uint64_t text_offset = rd64(data + 0x08), image_size = rd64(data + 0x10);
    uint64_t flags = rd64(data + 0x18);
    uint64_t need = image_size > len ? image_size : len;   /* image_size 0: old header */
    if (flags & 1)
        return elf_error(err, errlen, "%s: a big-endian kernel Image", name);
    if (text_offset % IMAGE_ALIGN)
        return elf_error(err, errlen, "%s: Image text_offset %#llx is not 2 MiB aligned", name,
                    (unsigned long long)text_offset);
    if (text_offset > ram->size || need > ram->size - text_offset)
        return elf_error(err, errlen, "%s: the kernel needs %llu MiB from %#llx (image_size), more "
                    "than RAM holds (-m %llu MiB)", name, mib(need),
                    (unsigned long long)(ram->base + text_offset), mib(ram->size));
    out->kind = IMAGE_LINUX;
    out->text_offset = text_offset;
    out->entry = out->low = ram->base + text_offset;
    out->high = out->low + need;
    memcpy(ram_at(ram, out->low), data, len);
    memset(ram_at(ram, out->low) + len, 0, need - len);     /* BSS */
    return 0;
}

static int load_raw(const BootRam *ram, const uint8_t *data, size_t len, const char *name,
                    LoadedImage *out, char *err, size_t errlen)
{
    if (len > ram->size)
        return elf_error(err, errlen, "%s: %llu MiB raw image does not fit in RAM (-m %llu MiB)",
                    name, mib(len), mib(ram->size));
    out->kind = IMAGE_RAW;
    out->entry = out->low = ram->base;
    out->high = ram->base + len;
    memcpy(ram->host, data, len);
    return 0;
}

int load_kernel_mem(const BootRam *ram, const void *data, size_t len, const char *name,
                    LoadedImage *out, char *err, size_t errlen)
{
    const uint8_t *p = data;
    memset(out, 0, sizeof *out);
    if (len == 0)
        return elf_error(err, errlen, "%s: the file is empty", name);
    if (len >= SELFMAG && !memcmp(p, ELFMAG, SELFMAG))
        return load_elf(ram, p, len, name, out, err, errlen);
    if (is_linux_image(p, len))
        return load_image(ram, p, len, name, out, err, errlen);
    return load_raw(ram, p, len, name, out, err, errlen);
}

/* -- Files ------------------------------------------------------------------ */

/* Open path as a regular file; its size in *size. fd, or -1 with err set. */
static int open_file(const char *what, const char *path, uint64_t *size, char *err,
                     size_t errlen)
{
    struct stat st = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return elf_error(err, errlen, "%s %s: %s", what, path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        const char *why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
        close(fd);
        return elf_error(err, errlen, "%s %s: %s", what, path, why);
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

int load_kernel(const BootRam *ram, const char *path, LoadedImage *out, char *err,
                size_t errlen)
{
    char name[512];
    uint64_t size;
    snprintf(name, sizeof name, "kernel %s", path);
    memset(out, 0, sizeof *out);
    int fd = open_file("kernel", path, &size, err, errlen);
    if (fd < 0)
        return -1;
    if (size == 0 || size > SIZE_MAX) {
        close(fd);
        return elf_error(err, errlen, "%s: %s", name, size ? "too large" : "the file is empty");
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return elf_error(err, errlen, "%s: %s", name, strerror(e));
    int rc = load_kernel_mem(ram, map, (size_t)size, name, out, err, errlen);
    munmap(map, (size_t)size);
    return rc;
}

/* Read exactly len bytes from fd into dst. */
static int read_all(int fd, uint8_t *dst, uint64_t len)
{
    while (len) {
        ssize_t n = read(fd, dst, len > (1 << 30) ? (1 << 30) : (size_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        dst += n;
        len -= (uint64_t)n;
    }
    return 0;
}

/* -- Initrd and DTB ---------------------------------------------------------- */

uint64_t initrd_place(const BootRam *ram, const LoadedImage *kernel)
{
    uint64_t gap = ram->size / 2 < INITRD_MAX_GAP ? ram->size / 2 : INITRD_MAX_GAP;
    uint64_t start = kernel->low + gap;
    return start < kernel->high ? ALIGN_UP(kernel->high, IMAGE_ALIGN) : start;
}

int load_initrd(const BootRam *ram, const char *path, const LoadedImage *kernel,
                uint64_t *start, uint64_t *end, char *err, size_t errlen)
{
    uint64_t size;
    int fd = open_file("initrd", path, &size, err, errlen);
    if (fd < 0)
        return -1;
    uint64_t at = initrd_place(ram, kernel);
    if (size == 0 || !in_ram(ram, at, size)) {
        close(fd);
        if (size == 0)
            return elf_error(err, errlen, "initrd %s: the file is empty", path);
        return elf_error(err, errlen, "initrd %s: %llu MiB at %#llx would end past the end of RAM "
                    "at %#llx (raise -m)", path, mib(size), (unsigned long long)at,
                    (unsigned long long)(ram->base + ram->size));
    }
    int rc = read_all(fd, ram_at(ram, at), size);
    close(fd);
    if (rc < 0)
        return elf_error(err, errlen, "initrd %s: %s", path,
                    rc == -EIO ? "the file shrank while being read" : strerror(-rc));
    *start = at;
    *end = at + size;
    return 0;
}

uint64_t fdt_place(const BootRam *ram, size_t size)
{
    if (size == 0 || size > ram->size)
        return 0;
    uint64_t at = ALIGN_DOWN(ram->base + ram->size - size, FDT_ALIGN);
    return at >= ram->base ? at : 0;
}

int load_fdt(const BootRam *ram, const void *fdt, size_t size, uint64_t low_limit,
             uint64_t *addr, char *err, size_t errlen)
{
    uint64_t at = fdt_place(ram, size);
    if (!at)
        return elf_error(err, errlen, "device tree: %zu bytes do not fit in RAM", size);
    if (at < low_limit)
        return elf_error(err, errlen, "device tree: no room for it above the kernel/initrd, which "
                    "end at %#llx (raise -m)", (unsigned long long)low_limit);
    memcpy(ram_at(ram, at), fdt, size);
    *addr = at;
    return 0;
}
