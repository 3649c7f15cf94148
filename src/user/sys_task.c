/*
 * Process attributes: credentials, priorities (sched_* are in thread.c),
 * personality, capabilities, memory locking, and the administrative calls
 * a guest gets refused.
 *
 * Credentials are per thread in Linux (glibc's setuid() broadcasts the
 * change to every thread itself), so the raw calls pass through on the
 * calling host thread, which is the guest thread. Structures involved
 * (sched_param, cap headers and data, gid arrays) have the same layout on
 * both sides. Calls that would change the host machine rather than the
 * process (hostname, syslog buffer, reboot, accounting) return -EPERM:
 * xlat may well run as root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/sys_impl.h"

/* -- Credentials -------------------------------------------------------------- */

int64_t sys_setuid(CPUState *cpu, const uint64_t *a)   { (void)cpu; return host_ret(syscall(SYS_setuid, (uid_t)a[0])); }
int64_t sys_setgid(CPUState *cpu, const uint64_t *a)   { (void)cpu; return host_ret(syscall(SYS_setgid, (gid_t)a[0])); }
int64_t sys_setreuid(CPUState *cpu, const uint64_t *a) { (void)cpu; return host_ret(syscall(SYS_setreuid, (uid_t)a[0], (uid_t)a[1])); }
int64_t sys_setregid(CPUState *cpu, const uint64_t *a) { (void)cpu; return host_ret(syscall(SYS_setregid, (gid_t)a[0], (gid_t)a[1])); }
int64_t sys_setfsuid(CPUState *cpu, const uint64_t *a) { (void)cpu; return syscall(SYS_setfsuid, (uid_t)a[0]); }
int64_t sys_setfsgid(CPUState *cpu, const uint64_t *a) { (void)cpu; return syscall(SYS_setfsgid, (gid_t)a[0]); }

int64_t sys_setresuid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_setresuid, (uid_t)a[0], (uid_t)a[1], (uid_t)a[2]));
}

int64_t sys_setresgid(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_setresgid, (gid_t)a[0], (gid_t)a[1], (gid_t)a[2]));
}

/* getresuid/getresgid: three optional-looking but required u32 pointers. */
static int64_t get_res(long nr, const uint64_t *a)
{
    uint32_t v[3];
    if (syscall(nr, &v[0], &v[1], &v[2]) < 0)
        return -errno;
    for (int i = 0; i < 3; i++)
        if (copy_to_guest(a[i], &v[i], sizeof v[i]))
            return -EFAULT;
    return 0;
}

int64_t sys_getresuid(CPUState *cpu, const uint64_t *a) { (void)cpu; return get_res(SYS_getresuid, a); }
int64_t sys_getresgid(CPUState *cpu, const uint64_t *a) { (void)cpu; return get_res(SYS_getresgid, a); }

int64_t sys_setgroups(CPUState *cpu, const uint64_t *a)
{
    int n = (int)a[0];
    (void)cpu;
    if (n < 0 || n > 65536)
        return -EINVAL;
    CHECK_WINDOW(a[1], (uint64_t)n * sizeof(gid_t));
    return host_ret(syscall(SYS_setgroups, n, n ? g2h(a[1]) : NULL));
}

/* capget/capset: header {u32 version; int pid} and u32 data triples, same on both. */
static int64_t do_cap(long nr, const uint64_t *a)
{
    uint32_t hdr[2];
    if (copy_from_guest(hdr, a[0], sizeof hdr))
        return -EFAULT;
    /* Version 1 has one data struct, versions 2 and 3 have two (12 bytes each). */
    CHECK_WINDOW(a[1], 2 * 12);
    int64_t r = host_ret(syscall(nr, hdr, a[1] ? g2h(a[1]) : NULL));
    /* The kernel writes its preferred version back on a version mismatch. */
    if (copy_to_guest(a[0], hdr, sizeof hdr))
        return -EFAULT;
    return r;
}

int64_t sys_capget(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_cap(SYS_capget, a); }
int64_t sys_capset(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_cap(SYS_capset, a); }

/* -- Scheduling --------------------------------------------------------------- */

int64_t sys_getpriority(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    /* The raw call returns 20 - nice, never negative, like the guest kernel. */
    return host_ret(syscall(SYS_getpriority, (int)a[0], (id_t)a[1]));
}

int64_t sys_setpriority(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_setpriority, (int)a[0], (id_t)a[1], (int)a[2]));
}

/* getcpu(cpu *, node *, cache): both outputs optional. */
int64_t sys_getcpu(CPUState *cpu, const uint64_t *a)
{
    unsigned c, n;
    (void)cpu;
    if (syscall(SYS_getcpu, &c, &n, NULL) < 0)
        return -errno;
    if (a[0] && copy_to_guest(a[0], &c, sizeof c))
        return -EFAULT;
    if (a[1] && copy_to_guest(a[1], &n, sizeof n))
        return -EFAULT;
    return 0;
}

int64_t sys_ioprio_get(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_ioprio_get, (int)a[0], (int)a[1]));
}

int64_t sys_ioprio_set(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_ioprio_set, (int)a[0], (int)a[1], (int)a[2]));
}

/* -- Personality and administration ---------------------------------------- */

/*
 * The guest's personality is kept here, not applied to xlat: flags such as
 * ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC describe the guest's address
 * space, which xlat manages. 0xffffffff only queries.
 */
static unsigned long guest_personality = PER_LINUX;

int64_t sys_personality(CPUState *cpu, const uint64_t *a)
{
    unsigned long old = guest_personality;
    (void)cpu;
    if ((uint32_t)a[0] != 0xffffffffu)
        guest_personality = (uint32_t)a[0];
    return (int64_t)old;
}

int64_t sys_syslog(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return -EPERM;
}

/* Host-wide state: refused (see the overview). */
int64_t sys_sethostname(CPUState *cpu, const uint64_t *a)   { (void)cpu; (void)a; return -EPERM; }
int64_t sys_setdomainname(CPUState *cpu, const uint64_t *a) { (void)cpu; (void)a; return -EPERM; }
int64_t sys_acct(CPUState *cpu, const uint64_t *a)          { (void)cpu; (void)a; return -EPERM; }
int64_t sys_reboot(CPUState *cpu, const uint64_t *a)        { (void)cpu; (void)a; return -EPERM; }

/* -- Memory locking and residency -------------------------------------------- */

/* Guest ranges map 1:1 onto host pages of the window. */
static int64_t range_call(int (*fn)(const void *, size_t), const uint64_t *a)
{
    CHECK_WINDOW(a[0], a[1]);
    return host_ret(fn(g2h(a[0]), a[1]));
}

int64_t sys_mlock(CPUState *cpu, const uint64_t *a)   { (void)cpu; return range_call(mlock, a); }
int64_t sys_munlock(CPUState *cpu, const uint64_t *a) { (void)cpu; return range_call(munlock, a); }

int64_t sys_mlock2(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[0], a[1]);
    return host_ret(syscall(SYS_mlock2, g2h(a[0]), a[1], (unsigned)a[2]));
}

/* mlockall would lock xlat's whole reservation: refuse as for lack of memory. */
int64_t sys_mlockall(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[0] == 0 || (a[0] & ~(uint64_t)(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)))
        return -EINVAL;
    return -ENOMEM;
}

int64_t sys_munlockall(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    (void)a;
    return host_ret(munlockall());
}

int64_t sys_msync(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[0] & (GUEST_PAGE_SIZE - 1))
        return -EINVAL;
    CHECK_WINDOW(a[0], a[1]);
    if (!guest_access_ok(a[0], a[1], 0))
        return -ENOMEM;
    return host_ret(msync(g2h(a[0]), a[1], (int)a[2]));
}

int64_t sys_mincore(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if (a[0] & (GUEST_PAGE_SIZE - 1))
        return -EINVAL;
    CHECK_WINDOW(a[0], a[1]);
    if (!guest_access_ok(a[0], a[1], 0))
        return -ENOMEM;
    uint64_t pages = (a[1] + GUEST_PAGE_SIZE - 1) / GUEST_PAGE_SIZE;
    CHECK_WINDOW(a[2], pages);
    return host_ret(mincore(g2h(a[0]), a[1], g2h(a[2])));
}
