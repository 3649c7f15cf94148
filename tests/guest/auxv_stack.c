// xlat-args: first 2nd third-arg
/*
 * The initial stack and auxiliary vector. Prints only what Linux, qemu and
 * xlat must agree on, never addresses or the order of auxv keys (Linux puts
 * its ARCH_DLINFO entries first, qemu puts them last, and each may add keys
 * the other lacks, e.g. Linux's AT_L1I_CACHESIZE or AT_SYSINFO_EHDR).
 *
 * Linux (create_elf_tables) lays out, from sp up: argc, argv[], NULL,
 * envp[], NULL, auxv pairs ending in AT_NULL; sp is 16-aligned; AT_RANDOM
 * points at 16 bytes above the auxv and below the argument strings, which
 * are contiguous (argv strings, then envp strings, then the execfn).
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern char **environ;
extern const Elf64_Ehdr __ehdr_start;
extern void _start(void);

static const struct { uint64_t key; const char *name; } keys[] = {
    { AT_PHDR, "AT_PHDR" }, { AT_PHENT, "AT_PHENT" }, { AT_PHNUM, "AT_PHNUM" },
    { AT_PAGESZ, "AT_PAGESZ" }, { AT_BASE, "AT_BASE" }, { AT_FLAGS, "AT_FLAGS" },
    { AT_ENTRY, "AT_ENTRY" }, { AT_UID, "AT_UID" }, { AT_EUID, "AT_EUID" },
    { AT_GID, "AT_GID" }, { AT_EGID, "AT_EGID" }, { AT_HWCAP, "AT_HWCAP" },
    { AT_CLKTCK, "AT_CLKTCK" }, { AT_RANDOM, "AT_RANDOM" }, { AT_SECURE, "AT_SECURE" },
    { AT_EXECFN, "AT_EXECFN" },
};

int main(int argc, char **argv, char **envp)
{
    printf("argc %d\n", argc);
    for (int i = 1; i < argc; i++)
        printf("argv[%d] \"%s\"\n", i, argv[i]);
    printf("argv[argc] is NULL: %d\n", argv[argc] == NULL);
    printf("argv 8 mod 16 (sp 16-aligned): %d\n", (int)((uintptr_t)argv % 16));
    printf("argc word below argv: %d\n", (int)((long *)argv)[-1] == argc);
    printf("envp follows argv: %d\n", envp == argv + argc + 1);
    printf("environ is envp: %d\n", environ == envp);

    int envc = 0;
    while (envp[envc])
        envc++;
    Elf64_auxv_t *auxv = (Elf64_auxv_t *)(envp + envc + 1);

    /* argument strings are contiguous and ascending */
    int contiguous = 1;
    for (int i = 0; i + 1 < argc; i++)
        contiguous &= argv[i + 1] == argv[i] + strlen(argv[i]) + 1;
    if (envc)
        contiguous &= envp[0] == argv[argc - 1] + strlen(argv[argc - 1]) + 1;
    for (int i = 0; i + 1 < envc; i++)
        contiguous &= envp[i + 1] == envp[i] + strlen(envp[i]) + 1;
    printf("strings contiguous: %d\n", contiguous);

    int count[sizeof(keys) / sizeof(keys[0])] = { 0 };
    int n = 0;
    Elf64_auxv_t *a = auxv;
    for (; a->a_type != AT_NULL; a++, n++) {
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (keys[k].key == a->a_type)
                count[k]++;
        if (getauxval(a->a_type) != a->a_un.a_val && a->a_type != AT_IGNORE)
            printf("getauxval(%lu) disagrees with the stack\n", (unsigned long)a->a_type);
    }
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        printf("%-10s present %d\n", keys[k].name, count[k]);
    printf("auxv has at least 16 entries: %d\n", n >= 16);

    printf("AT_PAGESZ %lu\n", getauxval(AT_PAGESZ));
    printf("AT_PHENT %lu\n", getauxval(AT_PHENT));
    printf("AT_PHNUM matches e_phnum: %d\n", getauxval(AT_PHNUM) == __ehdr_start.e_phnum);
    printf("AT_PHDR matches e_phoff: %d\n",
           getauxval(AT_PHDR) == (uintptr_t)&__ehdr_start + __ehdr_start.e_phoff);
    const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
    int loads = 0;
    for (unsigned i = 0; i < getauxval(AT_PHNUM); i++)
        loads += ph[i].p_type == PT_LOAD;
    printf("PT_LOADs readable through AT_PHDR: %d\n", loads > 0);
    printf("AT_ENTRY is _start: %d\n", getauxval(AT_ENTRY) == (uintptr_t)&_start);
    printf("AT_BASE %lu\n", getauxval(AT_BASE));
    printf("AT_FLAGS %lu\n", getauxval(AT_FLAGS));
    printf("AT_HWCAP %#lx\n", getauxval(AT_HWCAP));
    printf("AT_CLKTCK %lu\n", getauxval(AT_CLKTCK));
    printf("AT_SECURE %lu\n", getauxval(AT_SECURE));
    printf("AT_UID/EUID/GID/EGID are the ids: %d\n",
           getauxval(AT_UID) == getuid() && getauxval(AT_EUID) == geteuid() &&
           getauxval(AT_GID) == getgid() && getauxval(AT_EGID) == getegid());

    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("AT_EXECFN is argv[0]: %d\n", strcmp(execfn, argv[0]) == 0);
    const char *last = envc ? envp[envc - 1] : argv[argc - 1];
    printf("AT_EXECFN after the strings: %d\n", execfn == last + strlen(last) + 1);

    const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned sum = 0;
    for (int i = 0; i < 16; i++)
        sum |= rnd[i];
    printf("AT_RANDOM readable, not all zero: %d\n", sum != 0);
    printf("AT_RANDOM between auxv and strings: %d\n",
           (uintptr_t)rnd >= (uintptr_t)(a + 1) && (uintptr_t)(rnd + 16) <= (uintptr_t)argv[0]);
    return 0;
}
