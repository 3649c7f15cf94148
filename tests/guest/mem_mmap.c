/*
 * mmap, munmap, mprotect, mremap and madvise as a riscv64 Linux program sees
 * them: data kept across moves, fresh pages zeroed, the kernel's error codes
 * for bad arguments, and access checks seen through system calls (a read()
 * into read-only memory fails with EFAULT instead of crashing). Prints no
 * addresses, only relations between them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL

static void show(const char *what, long r)
{
    if (r == -1)
        printf("%-40s -1 errno %d (%s)\n", what, errno, strerror(errno));
    else
        printf("%-40s ok\n", what);
}

static void *map(void *hint, size_t len, int prot, int flags)
{
    return mmap(hint, len, prot, flags, -1, 0);
}

static unsigned sum(const unsigned char *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

static void test_anon(void)
{
    unsigned char *p = map(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
    printf("anon mapped: %d, page aligned: %d\n", p != MAP_FAILED, (uintptr_t)p % PG == 0);
    printf("fresh pages zero: %d\n", sum(p, 4 * PG) == sum((unsigned char[4 * PG]){ 0 }, 4 * PG));
    for (size_t i = 0; i < 4 * PG; i++)
        p[i] = (unsigned char)(i * 7 + i / PG);
    printf("pattern sum %u\n", sum(p, 4 * PG));

    show("munmap middle page", munmap(p + PG, PG));
    void *q = map(p + PG, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE);
    printf("NOREPLACE into the hole lands there: %d, zeroed: %d\n", q == p + PG, p[PG + 5] == 0);
    /* Not tested here: NOREPLACE over a mapping (Linux: EEXIST) because
     * qemu 7.2 gets it wrong; tests/unit/test_mm.c covers it. */
    printf("neighbours kept: %d %d\n", p[3] == 21, p[3 * PG + 1] == (unsigned char)((3 * PG + 1) * 7 + 3));
    q = map(p + 2 * PG, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
    printf("MAP_FIXED replaces: %d, zeroed: %d\n", q == p + 2 * PG, p[2 * PG] == 0);

    /* a hint that is free is used */
    unsigned char *h = map(p + 64 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
    printf("free hint honoured: %d\n", h == p + 64 * PG);
    munmap(h, PG);
    munmap(p, 4 * PG);
}

static void test_errors(void)
{
    show("mmap len 0", (long)map(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
    show("mmap unaligned offset", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 100));
    show("mmap no type", (long)map(NULL, PG, PROT_READ, MAP_ANONYMOUS));
    show("mmap bad fd", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE, 99, 0));
    show("mmap fixed unaligned", (long)map((void *)0x10000001, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
    show("mmap huge", (long)map(NULL, (size_t)1 << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE));
    show("munmap unaligned", munmap((void *)0x10000001, PG));
    show("munmap len 0", munmap((void *)0x10000000, 0));
    show("munmap nothing there", munmap((void *)0x10000000, PG));
    show("mprotect unmapped", mprotect((void *)0x10000000, PG, PROT_READ));
    show("mprotect unaligned", mprotect((void *)0x10000001, PG, PROT_READ));
    /* mprotect(len 0) on nothing: Linux says 0, qemu 7.2 ENOMEM; not tested. */
    show("mremap unmapped", (long)mremap((void *)0x10000000, PG, 2 * PG, MREMAP_MAYMOVE));
    show("mremap bad flags", (long)mremap((void *)0x10000000, PG, 2 * PG, 0x80));
    show("madvise unaligned", madvise((void *)0x10000001, PG, MADV_DONTNEED));
}

static void test_mprotect(void)
{
    unsigned char *p = map(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
    memset(p, 'a', 3 * PG);
    show("mprotect middle read-only", mprotect(p + PG, PG, PROT_READ));
    int fd = open("/dev/zero", O_RDONLY);
    errno = 0;
    show("read() into read-only page", read(fd, p + PG, 16));
    show("read() into writable page", read(fd, p, 16));
    printf("read zeroed: %d, read-only kept: %d\n", p[0] == 0 && p[15] == 0, p[PG] == 'a');
    show("mprotect back to rw", mprotect(p + PG, PG, PROT_READ | PROT_WRITE));
    show("read() now works", read(fd, p + PG, 16));
    show("mprotect none", mprotect(p, PG, PROT_NONE));
    show("write() from PROT_NONE page", write(1, p, 1));
    fflush(stdout);
    munmap(p + 2 * PG, PG);
    show("mprotect across a hole", mprotect(p, 3 * PG, PROT_READ | PROT_WRITE));
    printf("pages before the hole changed: %d\n", p[PG + 20] == 'a' && (p[10] = 1) == 1);
    close(fd);
    munmap(p, 2 * PG);
}

static void test_mremap(void)
{
    unsigned char *p = map(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
    for (size_t i = 0; i < 2 * PG; i++)
        p[i] = (unsigned char)(i * 3);
    unsigned s = sum(p, 2 * PG);
    /* block the pages after it, so growth must move */
    munmap(p + 2 * PG, PG);
    void *blk = map(p + 2 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
    show("mremap grow blocked, no MAYMOVE", (long)mremap(p, 2 * PG, 4 * PG, 0));
    unsigned char *q = mremap(p, 2 * PG, 8 * PG, MREMAP_MAYMOVE);
    printf("grow moved: %d, data kept: %d, tail zero: %d\n", q != p, sum(q, 2 * PG) == s,
           q[5 * PG] == 0 && q[8 * PG - 1] == 0);
    q[8 * PG - 1] = 9;
    unsigned char *r = mremap(q, 8 * PG, 3 * PG, 0);
    printf("shrink in place: %d, data kept: %d\n", r == q, sum(r, 2 * PG) == s);
    unsigned char *dst = map(NULL, 16 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
    munmap(dst, 16 * PG);
    unsigned char *f = mremap(r, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst + 4 * PG);
    printf("MREMAP_FIXED to target: %d, data kept: %d\n", f == dst + 4 * PG, sum(f, 2 * PG) == s);
    show("MREMAP_FIXED overlapping", (long)mremap(f, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, f + PG));
    show("MREMAP_FIXED without MAYMOVE", (long)mremap(f, PG, PG, MREMAP_FIXED, dst));
    /* grow in place into free space */
    munmap(f + 3 * PG, 4 * PG);
    unsigned char *g = mremap(f, 3 * PG, 6 * PG, 0);
    printf("grow in place: %d, data kept: %d\n", g == f, sum(g, 2 * PG) == s);
    g[6 * PG - 1] = 1;
    munmap(g, 6 * PG);
    munmap(blk, PG);

    /* a shared anonymous mapping keeps its contents when it grows */
    unsigned char *sh = map(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS);
    sh[100] = 77;
    unsigned char *sg = mremap(sh, PG, 3 * PG, MREMAP_MAYMOVE);
    /* (its pages past the first are beyond the shmem object: SIGBUS on Linux) */
    printf("shared grow keeps data: %d\n", sg != MAP_FAILED && sg[100] == 77);
    munmap(sg, 3 * PG);
}

static void test_madvise_and_file(void)
{
    unsigned char *p = map(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
    memset(p, 5, 2 * PG);
    show("madvise DONTNEED", madvise(p, 2 * PG, MADV_DONTNEED));
    printf("DONTNEED zeroes private anon: %d\n", p[0] == 0 && p[2 * PG - 1] == 0);
    /* madvise over a hole: Linux -ENOMEM, qemu 7.2 ignores madvise; not tested. */
    munmap(p, 2 * PG);

    const char *name = "mem_mmap.tmp";
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    unsigned char buf[3 * PG];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)('A' + i / PG);
    printf("file written: %d\n", write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
    unsigned char *m = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, fd, PG);
    printf("file map at offset: %c %c\n", m[0], m[PG]);
    unsigned char *s = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    s[1] = 'z';
    char c = 0;
    pread(fd, &c, 1, 1);
    printf("shared write reaches the file: %c\n", c);
    unsigned char *pv = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    pv[2] = 'q';
    pread(fd, &c, 1, 2);
    printf("private write stays private: %c %c\n", pv[2], c);
    munmap(m, 2 * PG);
    munmap(s, PG);
    munmap(pv, PG);
    close(fd);
    unlink(name);
}

int main(void)
{
    test_anon();
    test_errors();
    test_mprotect();
    test_mremap();
    test_madvise_and_file();
    return 0;
}
