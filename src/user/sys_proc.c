/*
 * Process, identity, memory and machine system calls. (The signal calls
 * are in sys_signal.c, time in sys_time.c, threads in thread.c.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "riscv/isa.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Identity --------------------------------------------------------------- */

int64_t sys_getpid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getpid(); }
int64_t sys_getppid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return getppid(); }
int64_t sys_getuid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getuid(); }
int64_t sys_geteuid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return geteuid(); }
int64_t sys_getgid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return getgid(); }
int64_t sys_getegid(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return getegid(); }
int64_t sys_setsid(CPUState *cpu, const uint64_t *a)  { (void)cpu; (void)a; return host_ret(setsid()); }

int64_t sys_getpgid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(getpgid((pid_t)a[0]));
}

int64_t sys_setpgid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(setpgid((pid_t)a[0], (pid_t)a[1]));
}

int64_t sys_getsid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(getsid((pid_t)a[0]));
}

int64_t sys_getgroups(CPUState *cpu, const uint64_t *a)
{
    int n = (int)a[0];
    (void)cpu;
    if (n < 0)
        return -EINVAL;
    CHECK_WINDOW(a[1], (uint64_t)n * sizeof(gid_t));
    return host_ret(getgroups(n, n ? g2h(a[1]) : NULL));
}

int64_t sys_umask(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return umask((mode_t)a[0] & 0777);
}

/* glibc copes with rseq being absent; registering it needs thread support. */
int64_t sys_rseq(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return -ENOSYS;
}

int64_t sys_prctl(CPUState *cpu, const uint64_t *a)
{
    char name[16];
    int v;
    (void)cpu;
    switch ((int)a[0]) {
    case PR_SET_NAME:
        if (copy_from_guest(name, a[1], sizeof name))
            return -EFAULT;
        name[15] = 0;
        return host_ret(prctl(PR_SET_NAME, name));
    case PR_GET_NAME:
        if (prctl(PR_GET_NAME, name) < 0)
            return -errno;
        return copy_to_guest(a[1], name, sizeof name);
    case PR_GET_PDEATHSIG:
        if (prctl(PR_GET_PDEATHSIG, &v) < 0)
            return -errno;
        return copy_to_guest(a[1], &v, sizeof v);
    case PR_SET_PDEATHSIG: case PR_GET_DUMPABLE: case PR_SET_DUMPABLE:
    case PR_GET_NO_NEW_PRIVS: case PR_SET_NO_NEW_PRIVS: case PR_GET_TIMERSLACK:
    case PR_SET_TIMERSLACK: case PR_SET_CHILD_SUBREAPER: case PR_CAPBSET_READ:
    case PR_GET_SECUREBITS: case PR_GET_KEEPCAPS: case PR_SET_KEEPCAPS: case PR_CAP_AMBIENT:
    case PR_GET_THP_DISABLE: case PR_SET_THP_DISABLE: case PR_SET_PTRACER:
        return host_ret(prctl((int)a[0], a[1], a[2], a[3], a[4]));
    case PR_GET_CHILD_SUBREAPER:
        if (prctl(PR_GET_CHILD_SUBREAPER, &v) < 0)
            return -errno;
        return copy_to_guest(a[1], &v, sizeof v);
    case PR_GET_SECCOMP:
        return 0;   /* not filtered */
    case PR_SET_SECCOMP:
        /* A filter would see riscv64 numbers in xlat's host syscalls. */
        return -EINVAL;
    default:
        xlat_log(LOG_UNIMP, "xlat: unsupported prctl option %d\n", (int)a[0]);
        return -EINVAL;
    }
}

/* -- System information ------------------------------------------------------ */

int64_t sys_uname(CPUState *cpu, const uint64_t *a)
{
    struct utsname u;
    (void)cpu;
    if (uname(&u) < 0)
        return -errno;
    snprintf(u.machine, sizeof u.machine, "riscv64");
    return copy_to_guest(a[0], &u, sizeof u);
}

int64_t sys_sysinfo(CPUState *cpu, const uint64_t *a)
{
    struct target_sysinfo si;   /* a libc's struct may be longer (musl's is) */
    (void)cpu;
    if (syscall(SYS_sysinfo, &si) < 0)
        return -errno;
    return copy_to_guest(a[0], &si, sizeof si);
}

int64_t sys_getrandom(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[0], a[1]);
    return host_ret(getrandom(g2h(a[0]), a[1], (unsigned)a[2]));
}

/* xlat's own address-space limits must not shrink under the guest (as qemu). */
static bool rlimit_is_emulated(int resource)
{
    return resource == RLIMIT_AS || resource == RLIMIT_DATA || resource == RLIMIT_STACK;
}

int64_t sys_prlimit64(CPUState *cpu, const uint64_t *a)
{
    struct rlimit nl, ol;
    int res = (int)a[1];
    (void)cpu;
    if (a[2] && copy_from_guest(&nl, a[2], sizeof nl))
        return -EFAULT;
    bool skip_set = a[2] && rlimit_is_emulated(res) && (a[0] == 0 || (pid_t)a[0] == getpid());
    if (skip_set && nl.rlim_cur > nl.rlim_max)
        return -EINVAL;
    if (prlimit((pid_t)a[0], res, a[2] && !skip_set ? &nl : NULL, &ol) < 0)
        return -errno;
    if (a[3] && copy_to_guest(a[3], &ol, sizeof ol))
        return -EFAULT;
    return 0;
}

int64_t sys_getrlimit(CPUState *cpu, const uint64_t *a)
{
    uint64_t args[4] = { 0, a[0], 0, a[1] };
    return a[1] ? sys_prlimit64(cpu, args) : -EFAULT;
}

int64_t sys_setrlimit(CPUState *cpu, const uint64_t *a)
{
    uint64_t args[4] = { 0, a[0], a[1], 0 };
    return a[1] ? sys_prlimit64(cpu, args) : -EFAULT;
}

int64_t sys_getrusage(CPUState *cpu, const uint64_t *a)
{
    struct target_rusage ru;
    (void)cpu;
    if (syscall(SYS_getrusage, (int)a[0], &ru) < 0)
        return -errno;
    return copy_to_guest(a[1], &ru, sizeof ru);
}


/* -- Memory ---------------------------------------------------------------------- */

int64_t sys_brk(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_brk(a[0]);
}

int64_t sys_mmap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mmap(a[0], a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
}

int64_t sys_munmap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_munmap(a[0], a[1]);
}

int64_t sys_mprotect(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mprotect(a[0], a[1], (int)a[2]);
}

int64_t sys_mremap(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_mremap(a[0], a[1], a[2], (int)a[3], a[4]);
}

int64_t sys_madvise(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_madvise(a[0], a[1], (int)a[2]);
}

/* -- RISC-V specific -------------------------------------------------------------- */

/* What every (identical) xlat hart offers: RV64GC + Zba/Zbb/Zbs. */
static bool hwprobe_value(int64_t key, uint64_t *value)
{
    switch (key) {
    case RISCV_HWPROBE_KEY_MVENDORID:
    case RISCV_HWPROBE_KEY_MARCHID:
    case RISCV_HWPROBE_KEY_MIMPID:
        *value = 0;
        return true;
    case RISCV_HWPROBE_KEY_BASE_BEHAVIOR:
        *value = RISCV_HWPROBE_BASE_BEHAVIOR_IMA;
        return true;
    case RISCV_HWPROBE_KEY_IMA_EXT_0:
        *value = (isa_has(ISA_BIT(EXT_F)) && isa_has(ISA_BIT(EXT_D)) ? RISCV_HWPROBE_IMA_FD : 0) |
                 (isa_has(ISA_C) ? RISCV_HWPROBE_IMA_C : 0) |
                 (isa_has(ISA_BIT(EXT_ZBA)) ? RISCV_HWPROBE_EXT_ZBA : 0) |
                 (isa_has(ISA_BIT(EXT_ZBB)) ? RISCV_HWPROBE_EXT_ZBB : 0) |
                 (isa_has(ISA_BIT(EXT_ZBS)) ? RISCV_HWPROBE_EXT_ZBS : 0);   /* -cpu */
        return true;
    case RISCV_HWPROBE_KEY_CPUPERF_0:
        *value = RISCV_HWPROBE_MISALIGNED_UNKNOWN;
        return true;
    case RISCV_HWPROBE_KEY_ZICBOZ_BLOCK_SIZE:
        *value = 0;   /* no Zicboz */
        return true;
    default:
        return false;
    }
}

int64_t sys_riscv_hwprobe(CPUState *cpu, const uint64_t *a)
{
    uint64_t pairs = a[0], count = a[1], setsize = a[2], cpus = a[3];
    (void)cpu;
    if (a[4] != 0)
        return -EINVAL;
    if (setsize || cpus) {
        /* All harts are alike; only check that the set names an online cpu. */
        uint8_t set[128] = { 0 };
        bool any = false;
        if (setsize > sizeof set)
            setsize = sizeof set;
        if (copy_from_guest(set, cpus, setsize))
            return -EFAULT;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < ncpu && i < (long)setsize * 8; i++)
            any |= set[i / 8] >> (i % 8) & 1;
        if (!any)
            return -EINVAL;
    }
    for (uint64_t i = 0; i < count; i++) {
        struct target_hwprobe p;
        uint64_t ga = pairs + i * sizeof p;
        if (copy_from_guest(&p, ga, sizeof p))
            return -EFAULT;
        if (!hwprobe_value(p.key, &p.value)) {
            p.key = -1;
            p.value = 0;
        }
        if (copy_to_guest(ga, &p, sizeof p))
            return -EFAULT;
    }
    return 0;
}

int64_t sys_riscv_flush_icache(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[2] & ~(uint64_t)TARGET_SYS_RISCV_FLUSH_ICACHE_LOCAL)
        return -EINVAL;
    /*
     * The interpreter always fetches from guest memory. The JIT already
     * catches writes to translated code (write protection), but code written
     * through another mapping of the same memory is only seen here.
     */
    if (a[1] > a[0])
        exec_invalidate_code(a[0], a[1] - a[0]);
    return 0;
}
