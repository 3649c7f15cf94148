/*
 * Process attribute calls: prctl, resource limits and usage, credentials,
 * priorities, personality, capabilities, memory locking and residency,
 * system information. Prints only what is deterministic on one host.
 * Calls that fill a structure write exactly the kernel's size of it (a host
 * libc's may be longer: musl's rusage is 272 bytes, the kernel's 144).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

static void test_prctl(void)
{
    char name[16] = { 0 };
    check("PR_SET_NAME", prctl(PR_SET_NAME, "xlat-renamed-thread-name"));
    check("PR_GET_NAME", prctl(PR_GET_NAME, name));
    printf("name '%s'\n", name);
    check("PR_GET_NAME bad", prctl(PR_GET_NAME, bad_ptr));
    check("PR_GET_DUMPABLE", prctl(PR_GET_DUMPABLE));
    check("PR_SET_PDEATHSIG", prctl(PR_SET_PDEATHSIG, 9));
    int sig = 0;
    check("PR_GET_PDEATHSIG", prctl(PR_GET_PDEATHSIG, &sig));
    printf("pdeathsig %d\n", sig);
    prctl(PR_SET_PDEATHSIG, 0);
    /* (qemu-riscv64 7.2 lacks PR_*_CHILD_SUBREAPER, so they are not compared.) */
    check("PR_GET_NO_NEW_PRIVS", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    check("PR_CAPBSET_READ", prctl(PR_CAPBSET_READ, 0) >= 0);
    check("prctl bogus", prctl(0x7fff0000, 0, 0, 0, 0));
}

static void test_limits(void)
{
    struct rlimit r, r2;
    check("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &r));
    r2 = r;
    r2.rlim_cur = r.rlim_cur > 200 ? 200 : r.rlim_cur;
    check("setrlimit NOFILE", setrlimit(RLIMIT_NOFILE, &r2));
    struct rlimit old;
    check("prlimit64", prlimit(0, RLIMIT_NOFILE, &r, &old));
    printf("old cur %lu\n", (unsigned long)old.rlim_cur);
    check("getrlimit bad", syscall(SYS_getrlimit, RLIMIT_NOFILE, bad_ptr));
    check("setrlimit invalid", setrlimit(RLIMIT_CORE, &(struct rlimit){ 10, 5 }));
    struct rusage ru;
    check("getrusage", getrusage(RUSAGE_SELF, &ru));
    printf("maxrss>0 %d\n", ru.ru_maxrss > 0);
    check("getrusage bad who", getrusage(12345, &ru));
    struct tms t;
    printf("times ok %d\n", times(&t) != (clock_t)-1);
    struct sysinfo si;
    check("sysinfo", sysinfo(&si));
    printf("mem_unit %u procs>0 %d\n", si.mem_unit, si.procs > 0);
}

static void test_creds(void)
{
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    check("getresuid", getresuid(&ru, &eu, &su));
    printf("uids consistent %d\n", ru == getuid() && eu == geteuid());
    check("getresgid", getresgid(&rg, &eg, &sg));
    printf("gids consistent %d\n", rg == getgid() && eg == getegid());
    check("getresuid bad", syscall(SYS_getresuid, bad_ptr, &eu, &su));
    gid_t groups[256];
    int n = getgroups(256, groups);
    printf("getgroups ok %d\n", n >= 0);
    check("setuid same", setuid(getuid()));
    check("setresgid same", setresgid(-1, -1, -1));
    check("setfsuid query", setfsuid(-1) == (int)geteuid());
    struct { unsigned version; int pid; } hdr = { 0x20080522, 0 };
    struct { unsigned eff, perm, inh; } data[2];
    check("capget", syscall(SYS_capget, &hdr, data));
    hdr.version = 0x12345;
    check("capget bad version", syscall(SYS_capget, &hdr, data));
    printf("version written back %#x\n", hdr.version);
}

static void test_sched(void)
{
    int p = getpriority(PRIO_PROCESS, 0);
    check("setpriority", setpriority(PRIO_PROCESS, 0, p + 1));
    printf("nice +1 %d\n", getpriority(PRIO_PROCESS, 0) == p + 1);
    check("getpriority raw", syscall(SYS_getpriority, PRIO_PROCESS, 0));
    check("getpriority bad which", getpriority(99, 0));
    unsigned cpu = 9999, node = 9999;
    check("getcpu", syscall(SYS_getcpu, &cpu, &node, NULL));
    printf("cpu plausible %d\n", cpu < 4096 && node < 4096);
    check("getcpu nulls", syscall(SYS_getcpu, NULL, NULL, NULL));
    check("personality query", personality(0xffffffff));
    check("ioprio_get", syscall(SYS_ioprio_get, 1, 0) >= 0);
}

static void test_memory(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m[0] = 1;
    m[2 * pg] = 1;
    check("mlock", mlock(m, pg));
    check("munlock", munlock(m, pg));
    check("msync", msync(m, 2 * pg, MS_SYNC));
    check("msync unaligned", msync(m + 1, pg, MS_SYNC));
    unsigned char vec[4];
    check("mincore", mincore(m, 4 * pg, vec));
    printf("resident %d %d\n", vec[0] & 1, vec[2] & 1);
    munmap(m + 3 * pg, pg);
    check("mincore unmapped", mincore(m, 4 * pg, vec));
    check("mincore bad vec", mincore(m, pg, bad_ptr));
    check("madvise", madvise(m, pg, MADV_DONTNEED));
    printf("zero after DONTNEED %d\n", m[0] == 0);
    munmap(m, 3 * pg);
}

/* Does the call fill at most `size` bytes of buf? (A canary follows them.) */
#define CANARY 64
static unsigned char sized_buf[512 + CANARY];

static unsigned char *sized_begin(void)
{
    memset(sized_buf, 0xa5, sizeof sized_buf);
    return sized_buf;
}

static void sized_end(const char *what, size_t size)
{
    int intact = 1;
    for (size_t i = size; i < size + CANARY; i++)
        intact &= sized_buf[i] == 0xa5;
    printf("%s fills %zu bytes at most: %s\n", what, size, intact ? "yes" : "NO");
}

static void test_exact_sizes(void)
{
    check("getrusage sized", syscall(SYS_getrusage, RUSAGE_SELF, sized_begin()));
    sized_end("getrusage", 144);
    check("sysinfo sized", syscall(SYS_sysinfo, sized_begin()));
    sized_end("sysinfo", 112);
    check("statx sized", syscall(SYS_statx, AT_FDCWD, "/", 0, 0x7ff, sized_begin()));
    sized_end("statx", 256);
    pid_t pid = fork();
    if (pid == 0)
        _exit(3);
    int st = 0;
    check("wait4 sized", syscall(SYS_wait4, pid, &st, 0, sized_begin()) == pid);
    sized_end("wait4 rusage", 144);
    pid = fork();
    if (pid == 0)
        _exit(4);
    siginfo_t si;
    check("waitid sized", syscall(SYS_waitid, P_PID, pid, &si, WEXITED, sized_begin()));
    sized_end("waitid rusage", 144);
}

int main(void)
{
    test_prctl();
    test_limits();
    test_creds();
    test_sched();
    test_memory();
    test_exact_sizes();
    return 0;
}
