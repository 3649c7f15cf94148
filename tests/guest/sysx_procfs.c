// xlat-args: first "second arg" third
/*
 * /proc/self as the guest sees it: exe names (and opens) the guest program,
 * cmdline is the guest's argv, auxv is the guest's auxiliary vector, maps
 * shows the guest's mappings, stat starts with the guest's pid. The same
 * under /proc/<pid>/.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static long slurp(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long total = 0, n;
    while (total < (long)size && (n = read(fd, buf + total, size - total)) > 0)
        total += n;
    close(fd);
    return total;
}

static void test_exe(void)
{
    char target[4096] = { 0 };
    long n = readlink("/proc/self/exe", target, sizeof target - 1);
    const char *base = strrchr(target, '/');
    printf("exe absolute %d basename %s\n", n > 0 && target[0] == '/', base ? base + 1 : "?");
    char small[4];
    printf("readlink truncates %ld\n", readlink("/proc/self/exe", small, sizeof small));
    unsigned char hdr[64];
    long got = slurp("/proc/self/exe", (char *)hdr, sizeof hdr);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)hdr;
    printf("exe read %ld elf %d machine %d\n", got, memcmp(hdr, ELFMAG, SELFMAG) == 0, eh->e_machine);
}

static void test_cmdline(int argc, char **argv, const char *path)
{
    char buf[4096];
    long n = slurp(path, buf, sizeof buf);
    int i = 0;
    printf("%s: %ld bytes\n", path[6] == 's' ? "self/cmdline" : "pid/cmdline", n);
    for (char *p = buf; p < buf + n; p += strlen(p) + 1, i++)
        if (i > 0)   /* argv[0] is a build path */
            printf("  [%d] '%s' matches %d\n", i, p, i < argc && strcmp(p, argv[i]) == 0);
    printf("  count %d argc %d\n", i, argc);
}

static void test_auxv(void)
{
    uint64_t buf[2 * 64];
    long n = slurp("/proc/self/auxv", (char *)buf, sizeof buf);
    int pairs = (int)(n / 16), seen = 0, ok = 1, ends_null = pairs > 0 && buf[2 * (pairs - 1)] == AT_NULL;
    for (int i = 0; i < pairs; i++) {
        uint64_t t = buf[2 * i], v = buf[2 * i + 1];
        if (t == AT_PAGESZ || t == AT_PHDR || t == AT_ENTRY || t == AT_RANDOM || t == AT_EXECFN ||
            t == AT_UID || t == AT_PHNUM) {
            seen++;
            ok &= getauxval(t) == v;
        }
        if (t == AT_SYSINFO_EHDR)
            printf("has vdso\n");
    }
    printf("auxv whole pairs %d, checked %d entries, all equal %d, ends with AT_NULL %d\n",
           n % 16 == 0, seen, ok, ends_null);
}

static void test_maps(void)
{
    char buf[65536];
    long n = slurp("/proc/self/maps", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    uintptr_t code = (uintptr_t)&test_maps, stack = (uintptr_t)&buf;
    int found_code = 0, found_stack = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long lo, hi, off, inode;
        char perms[8] = { 0 };
        if (sscanf(line, "%lx-%lx %4s %lx %*s %lu", &lo, &hi, perms, &off, &inode) != 5)
            continue;
        const char *name = strrchr(line, ' ') + 1;
        if (code >= lo && code < hi) {
            /* The program's code is mapped from its file (offset, inode), as Linux does. */
            const char *base = strrchr(name, '/');
            printf("code: %s %s offset %#lx from a file %d\n", perms, base ? base + 1 : name, off,
                   inode != 0);
            found_code = 1;
        }
        if (stack >= lo && stack < hi) {
            printf("stack: %s %s\n", perms, name);
            found_stack = 1;
        }
    }
    printf("found code %d stack %d\n", found_code, found_stack);
}

/* The name a mapping at addr shows in maps (its last path component). */
static void print_map_name(const char *label, uintptr_t addr)
{
    char buf[65536];
    long n = slurp("/proc/self/maps", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
            const char *slash = strrchr(line, '/');
            printf("%s: %s\n", label, slash ? slash + 1 : "(no name)");
            return;
        }
    }
    printf("%s: not mapped\n", label);
}

/* Two names of one file, opened in turn on the same descriptor number:
 * each mapping shows the name it was opened by. */
static void test_map_names(void)
{
    int fd = open("maps-a", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "data", 4) != 4) {
        printf("map names: cannot make the file\n");
        return;
    }
    void *a = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    int fd2 = link("maps-a", "maps-b") == 0 ? open("maps-b", O_RDONLY) : -1;
    void *b = fd2 >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd2, 0) : MAP_FAILED;
    printf("map names: same descriptor %d\n", fd2 == fd);
    if (a != MAP_FAILED)
        print_map_name("first", (uintptr_t)a);
    if (b != MAP_FAILED)
        print_map_name("second", (uintptr_t)b);
    if (fd2 >= 0)
        close(fd2);
    unlink("maps-a");
    unlink("maps-b");
}

static void test_stat(void)
{
    char buf[1024];
    long n = slurp("/proc/self/stat", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("stat pid matches %d\n", atoi(buf) == getpid());
}

int main(int argc, char **argv)
{
    char path[64];
    test_exe();
    test_cmdline(argc, argv, "/proc/self/cmdline");
    snprintf(path, sizeof path, "/proc/%d/cmdline", getpid());
    test_cmdline(argc, argv, path);
    test_auxv();
    test_maps();
    test_map_names();
    test_stat();
    return 0;
}
