/*
 * Host unit test of the syscall layer: dispatch through CPUState registers,
 * -EFAULT for bad guest pointers, struct stat conversion to the riscv64
 * layout, riscv_hwprobe, signal-state round trips and path_resolve (-L).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "riscv/cpu.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/path.h"
#include "user/syscall.h"
#include "user/target.h"

__attribute__((weak)) Options opt;

static int failures;

#define EXPECT(cond) \
    do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static int64_t call(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    CPUState cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.x[17] = nr;
    cpu.x[10] = a0; cpu.x[11] = a1; cpu.x[12] = a2; cpu.x[13] = a3; cpu.x[14] = a4;
    syscall_dispatch(&cpu);
    return (int64_t)cpu.x[10];
}

#define BUF 0x10000ULL   /* a guest page we map */

int main(void)
{
    char tmpl[] = "/tmp/xlat-unit-syscall-XXXXXX";
    char path[256];

    log_file = stderr;
    mm_init();
    EXPECT(guest_map_fixed(BUF, 2 * GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, "test") == 0);

    /* unknown numbers and bad pointers */
    EXPECT(call(999, 0, 0, 0, 0, 0) == -ENOSYS);
    EXPECT(call(100000, 0, 0, 0, 0, 0) == -ENOSYS);
    EXPECT(call(64, 1, GUEST_SPACE_SIZE + 5, 1, 0, 0) == -EFAULT);          /* write */
    EXPECT(call(64, 1, BUF, UINT64_MAX, 0, 0) == -EFAULT);
    int hfd = open("/proc/self/exe", O_RDONLY);
    EXPECT(call(63, hfd, 0x5000000, 4, 0, 0) == -EFAULT);                   /* read, unmapped */
    EXPECT(call(63, hfd, BUF, 4, 0, 0) == 4);
    close(hfd);
    EXPECT(call(80, 0, 0x5000000, 0, 0, 0) == -EFAULT);                     /* fstat */
    EXPECT(call(56, (uint64_t)AT_FDCWD, 8, O_RDONLY, 0, 0) == -EFAULT);     /* openat */

    /* a file round trip through guest memory, and struct stat's layout */
    EXPECT(mkdtemp(tmpl) != NULL);
    snprintf(path, sizeof path, "%s/f", tmpl);
    EXPECT(copy_to_guest(BUF, path, strlen(path) + 1) == 0);
    int64_t fd = call(56, (uint64_t)AT_FDCWD, BUF, O_CREAT | O_RDWR, 0640, 0);
    EXPECT(fd >= 0);
    EXPECT(copy_to_guest(BUF + 512, "0123456789", 10) == 0);
    EXPECT(call(64, fd, BUF + 512, 10, 0, 0) == 10);
    struct target_stat ts;
    EXPECT(call(80, fd, BUF + 1024, 0, 0, 0) == 0);
    EXPECT(copy_from_guest(&ts, BUF + 1024, sizeof ts) == 0);
    EXPECT(ts.st_size == 10);
    EXPECT((ts.st_mode & 07777) == (0640 & ~umask(022)) && S_ISREG(ts.st_mode));
    EXPECT(ts.st_nlink == 1 && ts.st_blksize > 0);
    struct stat hs;
    EXPECT(stat(path, &hs) == 0 && hs.st_ino == ts.st_ino && hs.st_mtim.tv_sec == ts.st_mtime_);
    EXPECT(call(57, fd, 0, 0, 0, 0) == 0);
    EXPECT(call(35, (uint64_t)AT_FDCWD, BUF, 0, 0, 0) == 0);                /* unlinkat */

    /* riscv_hwprobe: known keys answered, unknown keys marked -1 */
    struct target_hwprobe hp[3] = { { RISCV_HWPROBE_KEY_BASE_BEHAVIOR, 0 },
                                    { RISCV_HWPROBE_KEY_IMA_EXT_0, 0 }, { 99, 7 } };
    EXPECT(copy_to_guest(BUF + 2048, hp, sizeof hp) == 0);
    EXPECT(call(258, BUF + 2048, 3, 0, 0, 0) == 0);
    EXPECT(copy_from_guest(hp, BUF + 2048, sizeof hp) == 0);
    EXPECT(hp[0].value == RISCV_HWPROBE_BASE_BEHAVIOR_IMA);
    EXPECT((hp[1].value & (RISCV_HWPROBE_IMA_FD | RISCV_HWPROBE_IMA_C)) == 3);
    EXPECT(!(hp[1].value & RISCV_HWPROBE_IMA_V));
    EXPECT(hp[2].key == -1 && hp[2].value == 0);
    EXPECT(call(258, BUF + 2048, 1, 0, 0, 1) == -EINVAL);

    /* rt_sigaction stores and returns the guest's view */
    struct target_sigaction sa = { 0x1234, 0x4, 0x10 }, old;
    EXPECT(copy_to_guest(BUF + 3072, &sa, sizeof sa) == 0);
    EXPECT(call(134, SIGUSR2, BUF + 3072, 0, 8, 0) == 0);
    EXPECT(call(134, SIGUSR2, 0, BUF + 3200, 8, 0) == 0);
    EXPECT(copy_from_guest(&old, BUF + 3200, sizeof old) == 0);
    EXPECT(old.handler == 0x1234 && old.flags == 0x4 && old.mask == 0x10);
    EXPECT(call(134, SIGKILL, BUF + 3072, 0, 8, 0) == -EINVAL);
    EXPECT(call(134, SIGUSR2, 0, 0, 4, 0) == -EINVAL);
    EXPECT(call(134, 65, 0, 0, 8, 0) == -EINVAL);

    /* path_resolve: -L prefix used only when the prefixed file exists */
    char buf[PATH_MAX];
    opt.ld_prefix = tmpl;
    snprintf(path, sizeof path, "%s/lib", tmpl);
    EXPECT(mkdir(path, 0755) == 0);
    const char *r = path_resolve("/lib", buf, sizeof buf);
    EXPECT(r == buf && strcmp(r, path) == 0);
    EXPECT(strcmp(path_resolve("/nonexistent-xyz", buf, sizeof buf), "/nonexistent-xyz") == 0);
    EXPECT(strcmp(path_resolve("lib", buf, sizeof buf), "lib") == 0);
    /* ... but never for the host kernel's /dev, /proc and /sys */
    char dev[PATH_MAX];
    snprintf(dev, sizeof dev, "%s/dev", tmpl);
    EXPECT(mkdir(dev, 0755) == 0);
    EXPECT(strcmp(path_resolve("/dev", buf, sizeof buf), "/dev") == 0);
    EXPECT(strcmp(path_resolve("/dev/null", buf, sizeof buf), "/dev/null") == 0);
    EXPECT(strcmp(path_resolve("/proc/self/stat", buf, sizeof buf), "/proc/self/stat") == 0);
    opt.ld_prefix = NULL;
    EXPECT(rmdir(dev) == 0 && rmdir(path) == 0 && rmdir(tmpl) == 0);

    if (failures)
        printf("test_syscall: %d failures\n", failures);
    return failures != 0;
}
