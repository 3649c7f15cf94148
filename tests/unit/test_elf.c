/*
 * Unit test of the ELF loader (src/user/elf.c) and the initial stack
 * (src/user/stack.c): a minimal riscv64 image built in memory loads and maps
 * correctly; every malformed variant fails with a one-line reason and no
 * crash; random byte flips of a valid image either load or fail cleanly
 * (a small fuzzer; run under `make SAN=1` too); the stack layout matches
 * Linux's.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/loader.h"
#include "user/mm.h"
#include "user/options.h"
#include "check.h"

/* main.c (not linked into unit tests) owns the real one. */
__attribute__((weak)) Options opt;

#define PG GUEST_PAGE_SIZE
#define IMG_SIZE 0x1200

/*
 * A minimal static riscv64 executable: text (R X) at 0x10000 holding the
 * headers, data (RW) at 0x11010 with 0x100 file bytes and 0x2000 of memory.
 */
static size_t build_image(uint8_t *buf, int type, int nph_extra, const Elf64_Phdr *extra)
{
    memset(buf, 0, IMG_SIZE);
    uint64_t base = type == ET_DYN ? 0 : 0x10000;
    Elf64_Ehdr eh = { 0 };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = type;
    eh.e_machine = EM_RISCV;
    eh.e_version = EV_CURRENT;
    eh.e_entry = base + 0x100;
    eh.e_phoff = sizeof(Elf64_Ehdr);
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 2 + nph_extra;
    memcpy(buf, &eh, sizeof(eh));
    Elf64_Phdr ph[2] = {
        { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = base,
          .p_paddr = base, .p_filesz = 0x200, .p_memsz = 0x200, .p_align = PG },
        { .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x1010,
          .p_vaddr = base + 0x1010, .p_paddr = base + 0x1010, .p_filesz = 0x100,
          .p_memsz = 0x2000, .p_align = PG },
    };
    memcpy(buf + eh.e_phoff, ph, sizeof(ph));
    if (nph_extra)
        memcpy(buf + eh.e_phoff + sizeof(ph), extra, nph_extra * sizeof(Elf64_Phdr));
    for (int i = 0x100; i < 0x200; i++)
        buf[i] = (uint8_t)(i * 7);
    for (int i = 0x1000; i < 0x1110; i++)
        buf[i] = (uint8_t)(i * 13 + 1);
    return IMG_SIZE;
}

static Elf64_Ehdr *ehdr(uint8_t *buf) { return (Elf64_Ehdr *)buf; }
static Elf64_Phdr *phdr(uint8_t *buf, int i) { return (Elf64_Phdr *)(buf + 64 + i * 56); }

/* Load and expect failure with a message containing want. */
static void expect_fail(const uint8_t *buf, size_t size, const char *want, int line)
{
    GuestImage img;
    char err[256] = "";
    int r = elf_load_mem(buf, size, "test", &img, err, sizeof(err));
    if (r != -1 || !strstr(err, want) || strchr(err, '\n')) {
        printf("FAIL line %d: got %d \"%s\", expected failure \"%s\"\n", line, r, err, want);
        failures++;
    }
}
#define EXPECT_FAIL(buf, size, want) expect_fail(buf, size, want, __LINE__)

static void test_valid_exec(void)
{
    uint8_t buf[IMG_SIZE];
    size_t n = build_image(buf, ET_EXEC, 0, NULL);
    GuestImage img;
    char err[256] = "";
    int r = elf_load_mem(buf, n, "/bin/test", &img, err, sizeof(err));
    CHECK_EQ(r, 0);
    if (r) {
        printf("  error: %s\n", err);
        return;
    }
    CHECK_EQ(img.entry, 0x10100);
    CHECK_EQ(img.prog_entry, 0x10100);
    CHECK_EQ(img.load_bias, 0);
    CHECK_EQ(img.phdr, 0x10040);     /* from the PT_LOAD covering e_phoff */
    CHECK_EQ(img.phnum, 2);
    CHECK_EQ(img.phent, 56);
    CHECK_EQ(img.interp_base, 0);
    CHECK_EQ(img.brk, 0x14000);
    CHECK(memcmp(g2h(0x10000), buf, 0x200) == 0);
    CHECK(memcmp(g2h(0x11010), buf + 0x1010, 0x100) == 0);
    CHECK(memcmp(g2h(0x11000), buf + 0x1000, 0x10) == 0);   /* page head from file */
    uint8_t zero[0x1f00] = { 0 };
    CHECK(memcmp(g2h(0x11110), zero, sizeof(zero)) == 0);   /* bss */
    CHECK(guest_access_ok(0x10000, PG, PROT_READ | PROT_EXEC));
    CHECK(!guest_access_ok(0x10000, 1, PROT_WRITE));
    CHECK(guest_access_ok(0x11000, 3 * PG, PROT_WRITE));
    CHECK(!guest_access_ok(0x11000, 3 * PG, PROT_EXEC));
    CHECK(!guest_access_ok(0x14000, 1, PROT_READ));
    CHECK_EQ(guest_brk(0), 0x14000);
}

static void test_valid_dyn(void)
{
    uint8_t buf[IMG_SIZE];
    Elf64_Phdr pp = { .p_type = PT_PHDR, .p_flags = PF_R, .p_offset = 64, .p_vaddr = 64,
                      .p_filesz = 3 * 56, .p_memsz = 3 * 56, .p_align = 8 };
    size_t n = build_image(buf, ET_DYN, 1, &pp);
    GuestImage img;
    char err[256] = "";
    int r = elf_load_mem(buf, n, "/bin/pie", &img, err, sizeof(err));
    CHECK_EQ(r, 0);
    if (r) {
        printf("  error: %s\n", err);
        return;
    }
    uint64_t bias = (GUEST_TASK_SIZE / 3 * 2) & ~(PG - 1);
    CHECK_EQ(img.load_bias, bias);
    CHECK_EQ(img.entry, bias + 0x100);
    CHECK_EQ(img.phdr, bias + 64);
    CHECK_EQ(img.phnum, 3);
    CHECK_EQ(img.brk, bias + 0x4000);
    CHECK(memcmp(g2h(bias + 0x1010), buf + 0x1010, 0x100) == 0);
}

static void test_interp(void)
{
    /* The interpreter: the same image as ET_DYN, in a temporary file. */
    uint8_t ibuf[IMG_SIZE];
    size_t in = build_image(ibuf, ET_DYN, 0, NULL);
    char path[] = "/tmp/xlat_test_interp_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, ibuf, in) == (ssize_t)in);
    fchmod(fd, 0755);
    close(fd);

    uint8_t buf[IMG_SIZE];
    Elf64_Phdr pi = { .p_type = PT_INTERP, .p_flags = PF_R, .p_offset = 0x180,
                      .p_vaddr = 0x10180, .p_filesz = strlen(path) + 1,
                      .p_memsz = strlen(path) + 1, .p_align = 1 };
    size_t n = build_image(buf, ET_EXEC, 1, &pi);
    memcpy(buf + 0x180, path, strlen(path) + 1);
    GuestImage img;
    char err[256] = "";
    int r = elf_load_mem(buf, n, "/bin/dyn", &img, err, sizeof(err));
    CHECK_EQ(r, 0);
    if (r == 0) {
        CHECK_EQ(img.prog_entry, 0x10100);
        CHECK(img.interp_base >= 0x10000 && img.interp_base % PG == 0 &&
              img.interp_base + 0x4000 <= GUEST_TASK_SIZE);
        CHECK_EQ(img.entry, img.interp_base + 0x100);
        CHECK(memcmp(g2h(img.interp_base + 0x1010), ibuf + 0x1010, 0x100) == 0);
        CHECK_EQ(img.brk, 0x14000);
    } else {
        printf("  error: %s\n", err);
    }

    /* -L prefix: DIR/path is tried first */
    opt.ld_prefix = "/nonexistent-prefix";
    r = elf_load_mem(buf, n, "/bin/dyn", &img, err, sizeof(err));
    CHECK_EQ(r, 0);
    opt.ld_prefix = NULL;
    unlink(path);
    EXPECT_FAIL(buf, n, "cannot load interpreter");

    buf[0x180 + strlen(path)] = 'x';   /* not NUL-terminated */
    EXPECT_FAIL(buf, n, "interpreter path not NUL-terminated");
    phdr(buf, 2)->p_offset = 0x10000;
    EXPECT_FAIL(buf, n, "interpreter path out of file");
}

static void test_malformed(void)
{
    uint8_t buf[IMG_SIZE], v[IMG_SIZE];
    size_t n = build_image(buf, ET_EXEC, 0, NULL);

#define MUT(stmt, want) do { memcpy(v, buf, n); stmt; EXPECT_FAIL(v, n, want); } while (0)
    EXPECT_FAIL(buf, 0, "empty file");
    EXPECT_FAIL(buf, 40, "truncated");
    MUT(v[1] = 'X', "bad ELF magic");
    MUT(v[EI_CLASS] = ELFCLASS32, "not a 64-bit ELF");
    MUT(v[EI_DATA] = ELFDATA2MSB, "not a little-endian ELF");
    MUT(v[EI_VERSION] = 0, "bad ELF version");
    MUT(ehdr(v)->e_machine = EM_X86_64, "not a riscv64 ELF (e_machine 62)");
    MUT(ehdr(v)->e_type = ET_REL, "not an executable");
    MUT(ehdr(v)->e_type = ET_CORE, "not an executable");
    MUT(ehdr(v)->e_phentsize = 32, "bad program header size");
    MUT(ehdr(v)->e_phnum = 0, "no program headers");
    MUT(ehdr(v)->e_phnum = 0xffff, "too many program headers");
    MUT(ehdr(v)->e_phnum = 2000, "too many program headers");
    MUT(ehdr(v)->e_phnum = 100, "program header table out of file");
    MUT(ehdr(v)->e_phoff = 0x5000, "program header table out of file");
    MUT(ehdr(v)->e_phoff = UINT64_MAX - 8, "program header table out of file");
    MUT(ehdr(v)->e_phoff = IMG_SIZE - 100, "program header table out of file");
    MUT(phdr(v, 1)->p_filesz = 0x3000, "segment file size larger than its memory size");
    MUT(phdr(v, 1)->p_offset = 0x5000, "segment out of file");
    MUT(phdr(v, 1)->p_offset = UINT64_MAX - 0x10, "segment out of file");
    MUT((phdr(v, 1)->p_filesz = UINT64_MAX, phdr(v, 1)->p_memsz = UINT64_MAX), "segment out of file");
    MUT((phdr(v, 1)->p_vaddr = UINT64_MAX - 0xfef), "segment outside address space");
    MUT((phdr(v, 1)->p_memsz = UINT64_MAX - 0x10000), "segment outside address space");
    MUT((phdr(v, 1)->p_vaddr = GUEST_TASK_SIZE + 0x1010), "segment outside address space");
    MUT((phdr(v, 1)->p_vaddr = GUEST_TASK_SIZE - 0x1000 + 0x10), "segment outside address space");
    MUT((phdr(v, 1)->p_vaddr = 0x11020), "disagree modulo page size");
    MUT((phdr(v, 0)->p_type = PT_NULL, phdr(v, 1)->p_type = PT_NOTE), "no loadable segment");
    MUT((phdr(v, 0)->p_memsz = 0, phdr(v, 0)->p_filesz = 0, phdr(v, 1)->p_memsz = 0,
         phdr(v, 1)->p_filesz = 0), "no loadable segment");
    MUT(ehdr(v)->e_entry = UINT64_MAX, "entry point outside address space");
    /* ET_EXEC text at 0: below vm.mmap_min_addr, never mapped (with the
     * window at host address 0 that would be host page 0) */
    MUT(phdr(v, 0)->p_vaddr = 0, "cannot map segment at 0");
    /* ET_DYN spanning more than the whole space */
    MUT((ehdr(v)->e_type = ET_DYN, phdr(v, 0)->p_vaddr = 0,
         phdr(v, 1)->p_vaddr = GUEST_TASK_SIZE + 0x1010), "segment outside address space");
#undef MUT
}

/* Random byte flips: each load must succeed or fail with a message. */
static void test_fuzz(void)
{
    uint8_t buf[IMG_SIZE], v[IMG_SIZE];
    size_t n = build_image(buf, ET_EXEC, 0, NULL);
    unsigned seed = 12345;
    int ok = 0, bad = 0;
    for (int iter = 0; iter < 4000; iter++) {
        memcpy(v, buf, n);
        int flips = 1 + rand_r(&seed) % 6;
        for (int k = 0; k < flips; k++) {
            /* mostly the headers, sometimes anywhere */
            size_t pos = rand_r(&seed) % 4 ? (size_t)rand_r(&seed) % (64 + 2 * 56) : (size_t)rand_r(&seed) % n;
            v[pos] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
            if (rand_r(&seed) % 8 == 0)
                v[pos] = (uint8_t)rand_r(&seed);
        }
        size_t len = rand_r(&seed) % 16 == 0 ? rand_r(&seed) % n : n;
        GuestImage img;
        char err[256] = "";
        int r = elf_load_mem(v, len, "fuzz", &img, err, sizeof(err));
        if (r == 0) {
            ok++;
            CHECK(img.brk <= GUEST_TASK_SIZE && img.entry < (1ULL << 62));
        } else {
            bad++;
            CHECK(r == -1 && err[0] != 0);
        }
    }
    CHECK(ok > 100 && bad > 100);
}

/* -- Initial stack ------------------------------------------------------------- */

static uint64_t rd64(uint64_t ga)
{
    uint64_t v = 0;
    CHECK_EQ(copy_from_guest(&v, ga, 8), 0);
    return v;
}

static void test_stack(void)
{
    uint8_t buf[IMG_SIZE];
    size_t n = build_image(buf, ET_EXEC, 0, NULL);
    GuestImage img;
    char err[256];
    CHECK_EQ(elf_load_mem(buf, n, "/bin/test", &img, err, sizeof(err)), 0);
    char *argv[] = { "prog", "a", "bcd", NULL };
    char *envp[] = { "X=1", "LONGER=yes", NULL };
    uint64_t sp = stack_setup(&img, 3, argv, envp, "/bin/test", 8 << 20);
    CHECK(sp != 0 && sp % 16 == 0 && sp < GUEST_TASK_SIZE && sp > GUEST_TASK_SIZE - (8 << 20));
    CHECK_EQ(rd64(sp), 3);
    int err2;
    for (int i = 0; i < 3; i++) {
        char *s = guest_strdup(rd64(sp + 8 + 8 * i), 100, &err2);
        CHECK(s && strcmp(s, argv[i]) == 0);
        free(s);
    }
    /* strings are contiguous: argv then envp, then execfn, then 8 zero bytes at the top */
    CHECK_EQ(rd64(sp + 16), rd64(sp + 8) + 5);
    CHECK_EQ(rd64(sp + 32), 0);
    uint64_t envp0 = rd64(sp + 40);
    CHECK_EQ(envp0, rd64(sp + 24) + 4);
    char *s = guest_strdup(rd64(sp + 48), 100, &err2);
    CHECK(s && strcmp(s, "LONGER=yes") == 0);
    free(s);
    CHECK_EQ(rd64(sp + 56), 0);
    CHECK_EQ(GUEST_TASK_SIZE - 8 - strlen("/bin/test") - 1, rd64(sp + 48) + 11);

    uint64_t av = sp + 64;
    CHECK_EQ(stack_auxv_addr, av);
    uint64_t want_keys[] = { AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM,
                             AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID,
                             AT_SECURE, AT_RANDOM, AT_EXECFN };
    size_t k = 0;
    uint64_t rnd = 0, execfn = 0;
    uint64_t a = av;
    for (; rd64(a) != AT_NULL; a += 16) {
        uint64_t key = rd64(a), val = rd64(a + 8);
        if (key >= 40 && key <= 45)   /* cache geometry first, like Linux */
            continue;
        CHECK(k < sizeof(want_keys) / 8 && key == want_keys[k]);
        k++;
        if (key == AT_HWCAP) CHECK_EQ(val, 0x112d);
        if (key == AT_PAGESZ) CHECK_EQ(val, 4096);
        if (key == AT_CLKTCK) CHECK_EQ(val, 100);
        if (key == AT_PHDR) CHECK_EQ(val, 0x10040);
        if (key == AT_PHENT) CHECK_EQ(val, 56);
        if (key == AT_PHNUM) CHECK_EQ(val, 2);
        if (key == AT_ENTRY) CHECK_EQ(val, 0x10100);
        if (key == AT_UID) CHECK_EQ(val, getuid());
        if (key == AT_RANDOM) rnd = val;
        if (key == AT_EXECFN) execfn = val;
    }
    CHECK_EQ(k, sizeof(want_keys) / 8);
    CHECK_EQ(stack_auxv_len, a + 16 - av);
    CHECK(rnd >= a + 16 && rnd + 16 <= rd64(sp + 8) && guest_access_ok(rnd, 16, PROT_READ));
    CHECK(rnd - (a + 16) < 16);   /* sp was rounded down by less than 16 */
    s = guest_strdup(execfn, 100, &err2);
    CHECK(s && strcmp(s, "/bin/test") == 0);
    free(s);

    /* too large for the stack: refused, as Linux refuses with E2BIG */
    char *big = malloc(3 << 20);
    memset(big, 'x', (3 << 20) - 1);
    big[(3 << 20) - 1] = 0;
    char *bargv[] = { big, NULL };
    CHECK_EQ(stack_setup(&img, 1, bargv, envp, NULL, 8 << 20), 0);
    free(big);
}

int main(void)
{
    log_file = stderr;
    mm_init();
    test_valid_exec();
    test_valid_dyn();
    test_interp();
    test_malformed();
    test_fuzz();
    test_stack();
    if (failures)
        printf("test_elf: %d failures\n", failures);
    return failures != 0;
}
