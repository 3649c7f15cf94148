/* The riscv64 ELF header checks shared by the loaders (see elf_header.h). */
#include "riscv/elf_header.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int elf_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int riscv_elf_check_header(const Elf64_Ehdr *h, size_t size, size_t max_phdr_bytes, char *err,
                           size_t errlen)
{
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0)
        return elf_error(err, errlen, "bad ELF magic");
    if (h->e_ident[EI_CLASS] != ELFCLASS64)
        return elf_error(err, errlen, "not a 64-bit ELF (class %u; riscv64 needs ELFCLASS64)",
                         h->e_ident[EI_CLASS]);
    if (h->e_ident[EI_DATA] != ELFDATA2LSB)
        return elf_error(err, errlen, "not a little-endian ELF (big-endian; riscv64 is "
                         "little-endian)");
    if (h->e_ident[EI_VERSION] != EV_CURRENT || h->e_version != EV_CURRENT)
        return elf_error(err, errlen, "bad ELF version");
    if (h->e_machine != EM_RISCV)
        return elf_error(err, errlen, "not a riscv64 ELF (e_machine %u)", h->e_machine);
    if (h->e_phentsize != sizeof(Elf64_Phdr))
        return elf_error(err, errlen, "bad program header size %u", h->e_phentsize);
    if (h->e_phnum == 0)
        return elf_error(err, errlen, "no program headers");
    uint64_t phsize = (uint64_t)h->e_phnum * sizeof(Elf64_Phdr);
    if (h->e_phnum == PN_XNUM || phsize > max_phdr_bytes)
        return elf_error(err, errlen, "too many program headers (%u)", h->e_phnum);
    if (h->e_phoff > size || phsize > size - h->e_phoff)
        return elf_error(err, errlen, "program header table out of file (truncated)");
    return 0;
}
