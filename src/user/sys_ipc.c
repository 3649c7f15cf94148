/*
 * SysV IPC (shm*, sem*, msg*) and the pidfd calls (pidfd_open,
 * pidfd_send_signal, pidfd_getfd).
 *
 * The objects live in the host kernel: the calls go to it with their
 * structures checked or converted (target.h: only semid64_ds differs
 * between riscv64 and x86-64). Calls that can block (semop, semtimedop,
 * msgsnd, msgrcv) go through safe_syscall, so a guest signal interrupts
 * them with EINTR as on Linux (they are never restarted). shmat and shmdt
 * map and unmap inside the guest window and record the attach in the
 * mapping table (mm.c: guest_shmat, guest_shmdt).
 *
 * cmd values are the asm-generic ones on both, and neither 64-bit kernel
 * strips IPC_64 (0x100) from cmd for these system calls (riscv64 glibc does
 * not pass it): cmd goes to the host unchanged, so an unknown one fails
 * with the host's EINVAL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Layouts that pass through (checked against the host's glibc structs) -- */

/* The calls below are the kernel's, with the target's structs; glibc's
 * structs are the x86-64 kernel's, so they check that the two agree
 * (musl names and sizes some fields its own way). */
#ifdef __GLIBC__

#define SAME_FIELD(ts, tf, hs, hf) \
    static_assert(offsetof(struct ts, tf) == offsetof(struct hs, hf) && \
                  sizeof(((struct ts *)0)->tf) == sizeof(((struct hs *)0)->hf), #ts "." #tf)

SAME_FIELD(target_ipc64_perm, key, ipc_perm, __key);
SAME_FIELD(target_ipc64_perm, uid, ipc_perm, uid);
SAME_FIELD(target_ipc64_perm, gid, ipc_perm, gid);
SAME_FIELD(target_ipc64_perm, cuid, ipc_perm, cuid);
SAME_FIELD(target_ipc64_perm, cgid, ipc_perm, cgid);
SAME_FIELD(target_ipc64_perm, mode, ipc_perm, mode);
SAME_FIELD(target_ipc64_perm, seq, ipc_perm, __seq);
static_assert(sizeof(struct ipc_perm) == sizeof(struct target_ipc64_perm), "ipc_perm");

SAME_FIELD(target_shmid64_ds, shm_segsz, shmid_ds, shm_segsz);
SAME_FIELD(target_shmid64_ds, shm_atime, shmid_ds, shm_atime);
SAME_FIELD(target_shmid64_ds, shm_dtime, shmid_ds, shm_dtime);
SAME_FIELD(target_shmid64_ds, shm_ctime, shmid_ds, shm_ctime);
SAME_FIELD(target_shmid64_ds, shm_cpid, shmid_ds, shm_cpid);
SAME_FIELD(target_shmid64_ds, shm_lpid, shmid_ds, shm_lpid);
SAME_FIELD(target_shmid64_ds, shm_nattch, shmid_ds, shm_nattch);
static_assert(sizeof(struct shmid_ds) == sizeof(struct target_shmid64_ds), "shmid_ds");

SAME_FIELD(target_msqid64_ds, msg_stime, msqid_ds, msg_stime);
SAME_FIELD(target_msqid64_ds, msg_rtime, msqid_ds, msg_rtime);
SAME_FIELD(target_msqid64_ds, msg_ctime, msqid_ds, msg_ctime);
SAME_FIELD(target_msqid64_ds, msg_cbytes, msqid_ds, __msg_cbytes);
SAME_FIELD(target_msqid64_ds, msg_qnum, msqid_ds, msg_qnum);
SAME_FIELD(target_msqid64_ds, msg_qbytes, msqid_ds, msg_qbytes);
SAME_FIELD(target_msqid64_ds, msg_lspid, msqid_ds, msg_lspid);
SAME_FIELD(target_msqid64_ds, msg_lrpid, msqid_ds, msg_lrpid);
static_assert(sizeof(struct msqid_ds) == sizeof(struct target_msqid64_ds), "msqid_ds");

static_assert(sizeof(struct shminfo) == TARGET_SHMINFO64_SIZE, "shminfo64");
static_assert(sizeof(struct shm_info) == TARGET_SHM_INFO_SIZE, "shm_info");
static_assert(sizeof(struct seminfo) == TARGET_SEMINFO_SIZE, "seminfo");
static_assert(sizeof(struct msginfo) == TARGET_MSGINFO_SIZE, "msginfo");
static_assert(sizeof(struct sembuf) == 6, "sembuf");
#endif

/* x86-64's own semid64_ds (arch/x86/include/uapi/asm/sembuf.h). */
struct host_semid64_ds {
    struct target_ipc64_perm sem_perm;
    int64_t  sem_otime;
    uint64_t __unused1;
    int64_t  sem_ctime;
    uint64_t __unused2;
    uint64_t sem_nsems;
    uint64_t __unused3, __unused4;
};
#ifdef __GLIBC__
SAME_FIELD(host_semid64_ds, sem_otime, semid_ds, sem_otime);
SAME_FIELD(host_semid64_ds, sem_ctime, semid_ds, sem_ctime);
SAME_FIELD(host_semid64_ds, sem_nsems, semid_ds, sem_nsems);
static_assert(sizeof(struct semid_ds) == sizeof(struct host_semid64_ds), "semid_ds");
#endif

#define CTL_BUF 256
static_assert(sizeof(struct target_shmid64_ds) <= CTL_BUF && sizeof(struct target_msqid64_ds) <= CTL_BUF &&
              TARGET_SHMINFO64_SIZE <= CTL_BUF && TARGET_SHM_INFO_SIZE <= CTL_BUF &&
              sizeof(struct msginfo) <= CTL_BUF, "ctl_same_layout's buffer");

/* Which way a *ctl command's buffer goes. */
enum ctl_dir { CTL_NONE, CTL_IN, CTL_OUT };

/*
 * shmctl/msgctl (host call nr) with a buffer of `size` bytes whose layout
 * is the same on both: the guest's copied in (IPC_SET), or the kernel's
 * copied out on success (the STAT and INFO commands), or none.
 */
static int64_t ctl_same_layout(long nr, int id, int cmd, uint64_t ga, enum ctl_dir dir, size_t size)
{
    uint8_t buf[CTL_BUF];
    if (size > sizeof buf)
        return -EINVAL;             /* a caller's bug: see the asserts */
    memset(buf, 0, sizeof buf);
    if (dir == CTL_IN && copy_from_guest(buf, ga, size))
        return -EFAULT;
    int64_t r = host_ret(syscall(nr, id, cmd, dir == CTL_NONE ? NULL : buf));
    if (r >= 0 && dir == CTL_OUT && copy_to_guest(ga, buf, size))
        return -EFAULT;
    return r;
}

/* Output of a *ctl command: copy n bytes of buf to the guest on success. */
static int64_t ctl_out(int64_t r, uint64_t ga, const void *buf, size_t n)
{
    if (r >= 0 && copy_to_guest(ga, buf, n))
        return -EFAULT;
    return r;
}

/* -- Shared memory ---------------------------------------------------------- */

int64_t sys_shmget(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_shmget, (key_t)a[0], (size_t)a[1], (int)a[2]));
}

int64_t sys_shmctl(CPUState *cpu, const uint64_t *a)
{
    int id = (int)a[0], cmd = (int)a[1];
    (void)cpu;
    switch (cmd) {
    case IPC_STAT: case SHM_STAT: case SHM_STAT_ANY:
        return ctl_same_layout(SYS_shmctl, id, cmd, a[2], CTL_OUT, sizeof(struct target_shmid64_ds));
    case IPC_SET:
        return ctl_same_layout(SYS_shmctl, id, cmd, a[2], CTL_IN, sizeof(struct target_shmid64_ds));
    case IPC_INFO:
        return ctl_same_layout(SYS_shmctl, id, cmd, a[2], CTL_OUT, TARGET_SHMINFO64_SIZE);
    case SHM_INFO:
        return ctl_same_layout(SYS_shmctl, id, cmd, a[2], CTL_OUT, TARGET_SHM_INFO_SIZE);
    default:                /* IPC_RMID, SHM_LOCK, SHM_UNLOCK, or the host's EINVAL */
        return ctl_same_layout(SYS_shmctl, id, cmd, 0, CTL_NONE, 0);
    }
}

/*
 * shmat: the address checks of Linux's do_shmat (SHM_RND rounds down to
 * SHMLBA), then the segment's size, then the attach inside the window.
 */
int64_t sys_shmat(CPUState *cpu, const uint64_t *a)
{
    int id = (int)a[0], flg = (int)a[2];
    uint64_t addr = a[1];
    (void)cpu;
    if (id < 0)
        return -EINVAL;
    if (addr) {
        if (addr & (TARGET_SHMLBA - 1)) {
            if (!(flg & SHM_RND))
                return -EINVAL;
            addr &= ~(TARGET_SHMLBA - 1);
            if (!addr && (flg & SHM_REMAP))
                return -EINVAL;
        }
    } else if (flg & SHM_REMAP) {
        return -EINVAL;
    }
    struct target_shmid64_ds ds;
    if (syscall(SYS_shmctl, id, IPC_STAT, &ds) < 0)
        return -errno;
    return guest_shmat(id, addr, a[1] != 0, ds.shm_segsz, flg);
}

int64_t sys_shmdt(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return guest_shmdt(a[0]);
}

/* -- Semaphores ---------------------------------------------------------------- */

int64_t sys_semget(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_semget, (key_t)a[0], (int)a[1], (int)a[2]));
}

static void semid_to_target(struct target_semid64_ds *t, const struct host_semid64_ds *h)
{
    memset(t, 0, sizeof *t);
    t->sem_perm = h->sem_perm;
    t->sem_otime = h->sem_otime;
    t->sem_ctime = h->sem_ctime;
    t->sem_nsems = h->sem_nsems;
}

/* Number of semaphores in set id (IPC_STAT), or -errno. */
static int64_t sem_count(int id)
{
    struct host_semid64_ds h;
    if (syscall(SYS_semctl, id, 0, IPC_STAT, &h) < 0)
        return -errno;
    return (int64_t)h.sem_nsems;
}

/* GETALL / SETALL: an array of unsigned short, one per semaphore. */
static int64_t sem_all(int id, int cmd, uint64_t ga)
{
    int64_t n = sem_count(id);
    if (n == -EACCES && cmd == SETALL) {
        /* Write permission without read: the set's size is unknown, so
         * pass what the guest can supply, up to the largest set size. */
        struct seminfo si;
        if (syscall(SYS_semctl, 0, 0, IPC_INFO, &si) < 0)
            return -errno;
        uint64_t len = 0, max = (uint64_t)si.semmsl * 2;
        while (len < max) {
            uint64_t chunk = GUEST_PAGE_SIZE - ((ga + len) & (GUEST_PAGE_SIZE - 1));
            if (chunk > max - len)
                chunk = max - len;
            if (!guest_access_ok(ga + len, chunk, PROT_READ))
                break;
            len += chunk;
        }
        n = (int64_t)(len / 2);
    }
    unsigned short *v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return -ENOMEM;
    int64_t r;
    if (cmd == SETALL) {
        r = copy_from_guest(v, ga, (size_t)n * sizeof *v);
        if (r == 0)
            r = host_ret(syscall(SYS_semctl, id, 0, SETALL, v));
    } else {
        r = host_ret(syscall(SYS_semctl, id, 0, GETALL, v));
        r = ctl_out(r, ga, v, (size_t)n * sizeof *v);
    }
    free(v);
    return r;
}

/* semctl(id, semnum, cmd, union semun arg): arg is a value or a guest pointer. */
int64_t sys_semctl(CPUState *cpu, const uint64_t *a)
{
    int id = (int)a[0], num = (int)a[1], cmd = (int)a[2];
    (void)cpu;
    switch (cmd) {
    case IPC_STAT: case SEM_STAT: case SEM_STAT_ANY: {
        struct host_semid64_ds h;
        struct target_semid64_ds t;
        memset(&h, 0, sizeof h);
        int64_t r = host_ret(syscall(SYS_semctl, id, num, cmd, &h));
        semid_to_target(&t, &h);
        return ctl_out(r, a[3], &t, sizeof t);
    }
    case IPC_SET: {
        struct host_semid64_ds h;
        struct target_semid64_ds t;
        if (copy_from_guest(&t, a[3], sizeof t))
            return -EFAULT;
        memset(&h, 0, sizeof h);
        h.sem_perm = t.sem_perm;
        h.sem_otime = t.sem_otime;
        h.sem_ctime = t.sem_ctime;
        h.sem_nsems = t.sem_nsems;
        return host_ret(syscall(SYS_semctl, id, num, cmd, &h));
    }
    case IPC_INFO: case SEM_INFO: {
        struct seminfo si;
        memset(&si, 0, sizeof si);
        return ctl_out(host_ret(syscall(SYS_semctl, id, num, cmd, &si)), a[3], &si, sizeof si);
    }
    case GETALL: case SETALL:
        return sem_all(id, cmd, a[3]);
    case SETVAL:            /* arg.val: the low 32 bits on both (little endian) */
        return host_ret(syscall(SYS_semctl, id, num, cmd, (unsigned long)(uint32_t)a[3]));
    default:                /* GETVAL, GETPID, GETNCNT, GETZCNT, IPC_RMID; or EINVAL */
        return host_ret(syscall(SYS_semctl, id, num, cmd, 0UL));
    }
}

/*
 * The sops array is read by the host kernel, after its own checks of nsops
 * (EINVAL, E2BIG): outside the window it gets NULL and fails with EFAULT.
 */
static void *sops_arg(uint64_t ga, unsigned nsops)
{
    return guest_range_in_window(ga, (uint64_t)nsops * sizeof(struct sembuf)) ? g2h(ga) : NULL;
}

int64_t sys_semop(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return safe_syscall(SYS_semtimedop, (long)(int)a[0], sops_arg(a[1], (unsigned)a[2]), (long)(unsigned)a[2], NULL);
}

int64_t sys_semtimedop(CPUState *cpu, const uint64_t *a)
{
    struct timespec ts;
    (void)cpu;
    if (a[3] && copy_from_guest(&ts, a[3], sizeof ts))   /* same layout */
        return -EFAULT;
    return safe_syscall(SYS_semtimedop, (long)(int)a[0], sops_arg(a[1], (unsigned)a[2]), (long)(unsigned)a[2],
                        a[3] ? &ts : NULL);
}

/* -- Message queues ------------------------------------------------------------ */

int64_t sys_msgget(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_msgget, (key_t)a[0], (int)a[1]));
}

int64_t sys_msgctl(CPUState *cpu, const uint64_t *a)
{
    int id = (int)a[0], cmd = (int)a[1];
    (void)cpu;
    switch (cmd) {
    case IPC_STAT: case MSG_STAT: case MSG_STAT_ANY:
        return ctl_same_layout(SYS_msgctl, id, cmd, a[2], CTL_OUT, sizeof(struct target_msqid64_ds));
    case IPC_SET:
        return ctl_same_layout(SYS_msgctl, id, cmd, a[2], CTL_IN, sizeof(struct target_msqid64_ds));
    case IPC_INFO: case MSG_INFO:
        return ctl_same_layout(SYS_msgctl, id, cmd, a[2], CTL_OUT, sizeof(struct msginfo));
    default:                /* IPC_RMID, or the host's EINVAL */
        return ctl_same_layout(SYS_msgctl, id, cmd, 0, CTL_NONE, 0);
    }
}

/*
 * msgsnd(id, msgp, msgsz, flags): the host reads { long mtype; char
 * mtext[msgsz]; } itself. msgsz is at most msgmax (an int) once the kernel
 * has checked it, so a read from a buffer that starts in the window stays
 * in the window and its guard.
 */
int64_t sys_msgsnd(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], sizeof(long));
    return safe_syscall(SYS_msgsnd, (long)(int)a[0], g2h(a[1]), (long)a[2], (long)(int)a[3]);
}

/*
 * msgrcv(id, msgp, msgsz, msgtyp, flags): received into a host buffer and
 * copied out, so a write fault (such as a page the JIT write-protected)
 * cannot make the host kernel drop the message and the dispatcher retry
 * take the next one. No message is longer than msgmax.
 */
int64_t sys_msgrcv(CPUState *cpu, const uint64_t *a)
{
    int64_t sz = (int64_t)a[2];
    (void)cpu;
    if ((int)a[0] < 0 || sz < 0)
        return -EINVAL;
    if (sz > 65536) {
        struct msginfo mi;
        int64_t max = syscall(SYS_msgctl, 0, IPC_INFO, &mi) >= 0 ? mi.msgmax : 0;
        if (sz > (max > 65536 ? max : 65536))
            sz = max > 65536 ? max : 65536;
    }
    char *buf = malloc(sizeof(long) + (size_t)sz);
    if (!buf)
        return -ENOMEM;
    int64_t r = safe_syscall(SYS_msgrcv, (long)(int)a[0], buf, (long)sz, (long)a[3], (long)(int)a[4]);
    if (r >= 0 && copy_to_guest(a[1], buf, sizeof(long) + (size_t)r))
        r = -EFAULT;
    free(buf);
    return r;
}

/* -- pidfd ----------------------------------------------------------------------- */

int64_t sys_pidfd_open(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_pidfd_open, (pid_t)a[0], (unsigned)a[1]));
}

/* siginfo_t is the same on both (as for rt_sigqueueinfo); NULL is allowed. */
int64_t sys_pidfd_send_signal(CPUState *cpu, const uint64_t *a)
{
    siginfo_t info;
    (void)cpu;
    if (a[2] && copy_from_guest(&info, a[2], sizeof info))
        return -EFAULT;
    return host_ret(syscall(SYS_pidfd_send_signal, (int)a[0], (int)a[1], a[2] ? &info : NULL,
                            (unsigned)a[3]));
}

int64_t sys_pidfd_getfd(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(syscall(SYS_pidfd_getfd, (int)a[0], (int)a[1], (unsigned)a[2]));
}
