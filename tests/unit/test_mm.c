/*
 * Unit test of the guest address space (src/user/mm.c): mmap, munmap,
 * mprotect, mremap, brk and madvise semantics, placement never leaving the
 * window, and the checked copies failing with -EFAULT instead of faulting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "check.h"

/* main.c (not linked into unit tests) owns the real one. */
__attribute__((weak)) Options opt;

#define PG GUEST_PAGE_SIZE
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define RW (PROT_READ | PROT_WRITE)

static bool readable(uint64_t a) { char c; return copy_from_guest(&c, a, 1) == 0; }
static bool writable(uint64_t a) { char c = 0; return guest_access_ok(a, 1, PROT_WRITE) && copy_to_guest(a, &c, 0) == 0; }

static void test_mmap_basic(void)
{
    int64_t a = guest_mmap(0, 3 * PG, RW, ANON, -1, 0);
    CHECK(a >= 0x10000 && (uint64_t)a + 3 * PG <= GUEST_TASK_SIZE && a % PG == 0);
    memset(g2h(a), 0x5a, 3 * PG);
    uint32_t v = 0x12345678, w = 0;
    CHECK_EQ(copy_to_guest(a + 10, &v, 4), 0);
    CHECK_EQ(copy_from_guest(&w, a + 10, 4), 0);
    CHECK_EQ(w, v);

    CHECK_EQ(guest_mmap(0, 0, RW, ANON, -1, 0), -EINVAL);
    CHECK_EQ(guest_mmap(0, PG, RW, ANON, -1, 100), -EINVAL);
    CHECK_EQ(guest_mmap(0, PG, RW, MAP_ANONYMOUS, -1, 0), -EINVAL);
    CHECK_EQ(guest_mmap(0x100001, PG, RW, ANON | MAP_FIXED, -1, 0), -EINVAL);
    CHECK_EQ(guest_mmap(GUEST_TASK_SIZE, PG, RW, ANON | MAP_FIXED, -1, 0), -ENOMEM);
    CHECK_EQ(guest_mmap(GUEST_TASK_SIZE - PG, 2 * PG, RW, ANON | MAP_FIXED, -1, 0), -ENOMEM);
    CHECK_EQ(guest_mmap(0, UINT64_MAX - 10, RW, ANON, -1, 0), -ENOMEM);
    CHECK_EQ(guest_mmap(0, GUEST_TASK_SIZE + PG, RW, ANON, -1, 0), -ENOMEM);
    CHECK_EQ(guest_mmap(0, PG, RW, MAP_PRIVATE, 987, 0), -EBADF);
    CHECK_EQ(guest_mmap(0x1000, PG, RW, ANON | MAP_FIXED, -1, 0), -EPERM);

    /* MAP_FIXED_NOREPLACE */
    CHECK_EQ(guest_mmap(a + PG, PG, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0), -EEXIST);
    CHECK_EQ(((uint8_t *)g2h(a + PG))[0], 0x5a);
    int64_t b = guest_mmap(0x40000000, PG, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK_EQ(b, 0x40000000);

    /* MAP_FIXED replaces: fresh zero page */
    CHECK_EQ(guest_mmap(a + PG, PG, PROT_READ, ANON | MAP_FIXED, -1, 0), a + PG);
    CHECK_EQ(((uint8_t *)g2h(a + PG))[0], 0);
    CHECK(!writable(a + PG) && readable(a + PG) && writable(a) && writable(a + 2 * PG));

    /* hints: used when free, ignored when taken */
    CHECK_EQ(guest_mmap(0x50000000, PG, RW, ANON, -1, 0), 0x50000000);
    int64_t c = guest_mmap(0x50000000, PG, RW, ANON, -1, 0);
    CHECK(c > 0 && c != 0x50000000);
    CHECK_EQ(guest_mmap(0x60000123, PG, RW, ANON, -1, 0), 0x60001000);

    CHECK_EQ(guest_munmap(a, 3 * PG), 0);
    CHECK(!readable(a) && !readable(a + 2 * PG));
    CHECK_EQ(guest_munmap(a, 3 * PG), 0);   /* unmapping nothing is fine */
    CHECK_EQ(guest_munmap(a + 1, PG), -EINVAL);
    CHECK_EQ(guest_munmap(a, 0), -EINVAL);
    CHECK_EQ(guest_munmap(GUEST_TASK_SIZE, PG), -EINVAL);
    guest_munmap(0x40000000, PG);
    guest_munmap(0x50000000, PG);
    guest_munmap(c, PG);
    guest_munmap(0x60001000, PG);
}

static void test_munmap_middle(void)
{
    int64_t a = guest_mmap(0, 4 * PG, RW, ANON, -1, 0);
    for (int i = 0; i < 4; i++)
        memset(g2h(a + i * PG), 'a' + i, PG);
    CHECK_EQ(guest_munmap(a + PG, 2 * PG), 0);
    CHECK(readable(a) && !readable(a + PG) && !readable(a + 2 * PG) && readable(a + 3 * PG));
    CHECK_EQ(((char *)g2h(a))[PG - 1], 'a');
    CHECK_EQ(((char *)g2h(a + 3 * PG))[0], 'd');
    char buf[2 * PG];
    CHECK_EQ(copy_from_guest(buf, a + PG - 8, 16), -EFAULT);
    CHECK_EQ(copy_to_guest(a + 3 * PG - 8, buf, 16), -EFAULT);
    guest_munmap(a, 4 * PG);
}

static void test_mprotect(void)
{
    int64_t a = guest_mmap(0, 3 * PG, RW, ANON, -1, 0);
    char x = 1;
    CHECK_EQ(guest_mprotect(a, PG, PROT_READ), 0);
    CHECK_EQ(copy_to_guest(a, &x, 1), -EFAULT);
    CHECK_EQ(copy_from_guest(&x, a, 1), 0);
    CHECK_EQ(guest_mprotect(a + PG, PG, PROT_NONE), 0);
    CHECK_EQ(copy_from_guest(&x, a + PG, 1), -EFAULT);
    CHECK(!guest_access_ok(a, 3 * PG, PROT_READ));
    CHECK(guest_access_ok(a + 2 * PG, PG, PROT_WRITE));
    CHECK_EQ(guest_prot_at(a + PG + 5), PROT_NONE);
    CHECK_EQ(guest_prot_at(a), PROT_READ);
    CHECK_EQ(guest_prot_at(a + 3 * PG), -1);
    CHECK_EQ(guest_mprotect(a + 1, PG, PROT_READ), -EINVAL);
    CHECK_EQ(guest_mprotect(a, 0, PROT_READ), 0);
    CHECK_EQ(guest_mprotect(a, PG, 0x100), -EINVAL);
    CHECK_EQ(guest_mprotect(a, PG, RW), 0);
    CHECK_EQ(guest_mprotect(a + PG, 1, RW), 0);   /* length rounds up */
    CHECK(guest_access_ok(a, 3 * PG, PROT_WRITE));

    /* a hole: Linux changes the pages before it, then fails */
    guest_munmap(a + 2 * PG, PG);
    CHECK_EQ(guest_mprotect(a, 3 * PG, PROT_READ), -ENOMEM);
    CHECK(!writable(a) && !writable(a + PG) && readable(a + PG));
    CHECK_EQ(guest_mprotect(a + 2 * PG, PG, PROT_READ), -ENOMEM);
    CHECK_EQ(guest_mprotect(GUEST_TASK_SIZE, PG, PROT_READ), -ENOMEM);
    guest_munmap(a, 3 * PG);
}

static void test_mremap(void)
{
    /* grow in place when the next pages are free */
    int64_t a = guest_mmap(0x70000000, 2 * PG, RW, ANON, -1, 0);
    CHECK_EQ(a, 0x70000000);
    memset(g2h(a), 7, 2 * PG);
    CHECK_EQ(guest_mremap(a, 2 * PG, 4 * PG, 0, 0), a);
    CHECK(guest_access_ok(a, 4 * PG, PROT_WRITE));
    CHECK_EQ(((char *)g2h(a))[2 * PG - 1], 7);
    CHECK_EQ(((char *)g2h(a))[3 * PG], 0);

    /* blocked: no MAYMOVE -> ENOMEM; MAYMOVE moves, keeps the data */
    CHECK_EQ(guest_mmap(a + 4 * PG, PG, RW, ANON | MAP_FIXED, -1, 0), a + 4 * PG);
    CHECK_EQ(guest_mremap(a, 4 * PG, 8 * PG, 0, 0), -ENOMEM);
    int64_t b = guest_mremap(a, 4 * PG, 8 * PG, MREMAP_MAYMOVE, 0);
    CHECK(b > 0 && b != a && (uint64_t)b + 8 * PG <= GUEST_TASK_SIZE);
    CHECK_EQ(((char *)g2h(b))[PG], 7);
    CHECK(!readable(a) && readable(a + 4 * PG) && guest_access_ok(b, 8 * PG, PROT_WRITE));

    /* shrink */
    CHECK_EQ(guest_mremap(b, 8 * PG, 2 * PG, 0, 0), b);
    CHECK(readable(b + PG) && !readable(b + 2 * PG));

    /* MREMAP_FIXED */
    CHECK_EQ(guest_mremap(b, 2 * PG, 2 * PG, MREMAP_FIXED, 0x71000000), -EINVAL);
    CHECK_EQ(guest_mremap(b, 2 * PG, 2 * PG, MREMAP_FIXED | MREMAP_MAYMOVE, b + PG), -EINVAL);
    CHECK_EQ(guest_mremap(b, 2 * PG, 3 * PG, MREMAP_FIXED | MREMAP_MAYMOVE, 0x71000000), 0x71000000);
    CHECK_EQ(((char *)g2h(0x71000000))[0], 7);
    CHECK(!readable(b) && guest_access_ok(0x71000000, 3 * PG, PROT_WRITE));

    /* errors */
    CHECK_EQ(guest_mremap(b, PG, 2 * PG, MREMAP_MAYMOVE, 0), -EFAULT);
    CHECK_EQ(guest_mremap(0x71000000, 4 * PG, 5 * PG, MREMAP_MAYMOVE, 0), -EFAULT);
    CHECK_EQ(guest_mremap(0x71000001, PG, 2 * PG, MREMAP_MAYMOVE, 0), -EINVAL);
    CHECK_EQ(guest_mremap(0x71000000, PG, 0, MREMAP_MAYMOVE, 0), -EINVAL);
    CHECK_EQ(guest_mremap(0x71000000, PG, PG, 0x80, 0), -EINVAL);
    CHECK_EQ(guest_mremap(0x71000000, 0, PG, MREMAP_MAYMOVE, 0), -EINVAL);

    /* a shared anonymous mapping grows in place through the scratch path */
    int64_t s = guest_mmap(0x72000000, PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK_EQ(s, 0x72000000);
    ((char *)g2h(s))[100] = 42;
    CHECK_EQ(guest_mremap(s, PG, 3 * PG, 0, 0), s);
    CHECK_EQ(((char *)g2h(s))[100], 42);
    CHECK(guest_access_ok(s, 3 * PG, PROT_WRITE));
    guest_munmap(0x71000000, 3 * PG);
    guest_munmap(0x72000000, 3 * PG);
    guest_munmap(a + 4 * PG, PG);
}

static void test_brk(void)
{
    uint64_t base = 0x20000000;
    guest_brk_init(base);
    CHECK_EQ(guest_brk(0), base);
    CHECK_EQ(guest_brk(base + 100), base + 100);
    CHECK(writable(base) && !readable(base + PG));
    memset(g2h(base), 9, 100);
    CHECK_EQ(guest_brk(base + 3 * PG + 5), base + 3 * PG + 5);
    CHECK(guest_access_ok(base, 4 * PG, PROT_WRITE) && !readable(base + 4 * PG));
    CHECK_EQ(((char *)g2h(base))[99], 9);
    CHECK_EQ(((char *)g2h(base))[PG * 2], 0);
    CHECK_EQ(guest_brk(base - 1), base + 3 * PG + 5);   /* below start: unchanged */
    CHECK_EQ(guest_brk(base + PG), base + PG);
    CHECK(readable(base) && !readable(base + PG));
    /* blocked by a mapping (Linux also wants one free page after the heap) */
    CHECK_EQ(guest_mmap(base + 5 * PG, PG, RW, ANON | MAP_FIXED, -1, 0), base + 5 * PG);
    CHECK_EQ(guest_brk(base + 5 * PG), base + PG);
    CHECK_EQ(guest_brk(base + 4 * PG), base + 4 * PG);
    CHECK_EQ(guest_brk(GUEST_TASK_SIZE + PG), base + 4 * PG);
    CHECK_EQ(guest_brk(base), base);
    CHECK(!readable(base));
    guest_munmap(base + 5 * PG, PG);
}

static void test_window(void)
{
    /* Fill the space with big PROT_NONE mappings: all inside, then ENOMEM. */
    int64_t got[64];
    int n = 0;
    for (; n < 64; n++) {
        got[n] = guest_mmap(0, 16ULL << 30, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
        if (got[n] < 0)
            break;
        CHECK(got[n] >= 0x10000 && (uint64_t)got[n] + (16ULL << 30) <= GUEST_TASK_SIZE);
    }
    CHECK(n > 0 && n < 64 && got[n] == -ENOMEM);
    uint64_t f = guest_find_free(32ULL << 30, 0);
    CHECK(f == 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ(guest_munmap(got[i], 16ULL << 30), 0);
    f = guest_find_free(PG, GUEST_TASK_SIZE - PG);
    CHECK(f == GUEST_TASK_SIZE - PG);
    f = guest_find_free(2 * PG, GUEST_TASK_SIZE - PG);
    CHECK(f != 0 && f + 2 * PG <= GUEST_TASK_SIZE);
    CHECK(guest_find_free(GUEST_TASK_SIZE, 0) == 0);
    CHECK(guest_find_free(0, 0) == 0);
    CHECK(!guest_access_ok(GUEST_SPACE_SIZE - 1, 2, PROT_READ));
    CHECK(!guest_access_ok(UINT64_MAX - 4, 8, PROT_READ));
    char c;
    CHECK_EQ(copy_from_guest(&c, UINT64_MAX, 1), -EFAULT);
    CHECK_EQ(copy_from_guest(&c, 0, 1), -EFAULT);
}

static void test_strdup(void)
{
    int64_t a = guest_mmap(0, 2 * PG, RW, ANON, -1, 0);
    guest_munmap(a + PG, PG);
    char *s = g2h(a + PG - 6);
    memcpy(s, "hello", 6);
    int err = 1;
    char *d = guest_strdup(a + PG - 6, 100, &err);
    CHECK(d && strcmp(d, "hello") == 0 && err == 0);
    free(d);
    memset(s, 'x', 6);
    d = guest_strdup(a + PG - 6, 100, &err);
    CHECK(!d && err == -EFAULT);
    d = guest_strdup(a + PG - 6, 4, &err);
    CHECK(!d && err == -ENAMETOOLONG);
    d = guest_strdup(0, 10, &err);
    CHECK(!d && err == -EFAULT);
    /* across a page boundary */
    guest_mmap(a + PG, PG, RW, ANON | MAP_FIXED, -1, 0);
    memcpy(g2h(a + PG), "yz", 3);
    d = guest_strdup(a + PG - 6, 100, &err);
    CHECK(d && strcmp(d, "xxxxxxyz") == 0);
    free(d);
    guest_munmap(a, 2 * PG);
}

static void test_file_and_maps(void)
{
    char path[] = "/tmp/xlat_test_mm_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char buf[3 * PG];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (char)(i / PG + '0');
    CHECK_EQ(write(fd, buf, sizeof(buf)), (long)sizeof(buf));
    int64_t a = guest_mmap(0, 2 * PG, PROT_READ, MAP_PRIVATE, fd, PG);
    CHECK(a > 0);
    CHECK_EQ(((char *)g2h(a))[0], '1');
    CHECK_EQ(((char *)g2h(a))[PG], '2');
    char x = 0;
    CHECK_EQ(copy_to_guest(a, &x, 1), -EFAULT);
    CHECK_EQ(guest_mmap(0, PG, PROT_READ, MAP_PRIVATE, fd, 5), -EINVAL);
    int64_t sh = guest_mmap(0, PG, RW, MAP_SHARED, fd, 0);
    CHECK(sh > 0);
    ((char *)g2h(sh))[1] = 'Z';
    char rb[2];
    CHECK_EQ(pread(fd, rb, 2, 0), 2);
    CHECK_EQ(rb[1], 'Z');

    guest_brk_init(0x30000000);
    guest_brk(0x30000000 + 2 * PG);
    char mpath[] = "/tmp/xlat_test_maps_XXXXXX";
    int mfd = mkstemp(mpath);
    guest_dump_maps(mfd);
    char out[8192] = { 0 };
    CHECK(pread(mfd, out, sizeof(out) - 1, 0) > 0);
    char want[256];
    snprintf(want, sizeof(want), "%08llx-%08llx r--p 00001000 ", (unsigned long long)a,
             (unsigned long long)a + 2 * PG);
    CHECK(strstr(out, want) != NULL);
    CHECK(strstr(out, path) != NULL);
    snprintf(want, sizeof(want), "%08llx-%08llx rw-p 00000000 00:00 0", 0x30000000ULL,
             0x30000000ULL + 2 * PG);
    char *h = strstr(out, want);
    CHECK(h && strncmp(h + 72, " [heap]\n", 8) == 0);
    CHECK(strstr(out, " rw-s 00000000 ") != NULL);
    if (failures)
        fputs(out, stdout);
    guest_brk(0x30000000);
    guest_munmap(a, 2 * PG);
    guest_munmap(sh, PG);
    close(fd);
    close(mfd);
    unlink(path);
    unlink(mpath);
}

static void test_madvise(void)
{
    int64_t a = guest_mmap(0, 2 * PG, RW, ANON, -1, 0);
    memset(g2h(a), 3, 2 * PG);
    CHECK_EQ(guest_madvise(a, 2 * PG, MADV_DONTNEED), 0);
    CHECK_EQ(((char *)g2h(a))[5], 0);
    CHECK_EQ(guest_madvise(a + 1, PG, MADV_DONTNEED), -EINVAL);
    CHECK_EQ(guest_madvise(a, PG, 12345), -EINVAL);
    guest_munmap(a + PG, PG);
    CHECK_EQ(guest_madvise(a, 2 * PG, MADV_WILLNEED), -ENOMEM);
    CHECK_EQ(guest_madvise(a, 0, MADV_DONTNEED), 0);
    guest_munmap(a, PG);
}

int main(void)
{
    log_file = stderr;
    mm_init();
    test_mmap_basic();
    test_munmap_middle();
    test_mprotect();
    test_mremap();
    test_brk();
    test_window();
    test_strdup();
    test_file_and_maps();
    test_madvise();
    if (failures)
        printf("test_mm: %d failures\n", failures);
    return failures != 0;
}
