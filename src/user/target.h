/*
 * riscv64 Linux ABI: structure layouts and constants that the syscall layer
 * translates, and static checks for the ones that need no translation.
 *
 * riscv64 uses the asm-generic ABI. On a 64-bit host most of it matches
 * x86-64 bit for bit (errno values, signal numbers, O_* flags, fcntl
 * commands, struct flock/timespec/timeval/rlimit/utsname/sysinfo/tms/
 * winsize/termios/statx/linux_dirent64); the static asserts at the end
 * document and enforce that. What differs is converted explicitly:
 *   - struct stat (asm-generic layout, 128 bytes)
 *   - struct sigaction (no sa_restorer on riscv)
 *   - syscall numbers (the table in syscall.def)
 */
#ifndef XLAT_USER_TARGET_H
#define XLAT_USER_TARGET_H

#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <termios.h>

/* -- struct stat (asm-generic) ------------------------------------------ */

struct target_stat {
    uint64_t st_dev;
    uint64_t st_ino;
    uint32_t st_mode;
    uint32_t st_nlink;
    uint32_t st_uid;
    uint32_t st_gid;
    uint64_t st_rdev;
    uint64_t __pad1;
    int64_t  st_size;
    int32_t  st_blksize;
    int32_t  __pad2;
    int64_t  st_blocks;
    int64_t  st_atime_;
    uint64_t st_atime_nsec;
    int64_t  st_mtime_;
    uint64_t st_mtime_nsec;
    int64_t  st_ctime_;
    uint64_t st_ctime_nsec;
    uint32_t __unused4;
    uint32_t __unused5;
};
static_assert(sizeof(struct target_stat) == 128, "riscv64 struct stat is 128 bytes");
static_assert(offsetof(struct target_stat, st_size) == 48, "st_size offset");
static_assert(offsetof(struct target_stat, st_atime_) == 72, "st_atime offset");

/* -- struct iovec (guest pointers) --------------------------------------- */

struct target_iovec {
    uint64_t iov_base;
    uint64_t iov_len;
};

/* -- struct sigaction (kernel layout, no sa_restorer on riscv) ------------ */

struct target_sigaction {
    uint64_t handler;       /* sa_handler (the name is a host macro) */
    uint64_t flags;         /* sa_flags */
    uint64_t mask;          /* sa_mask: _NSIG = 64, one word */
};

typedef struct target_stack {
    uint64_t ss_sp;
    int32_t  ss_flags;
    int32_t  __pad;
    uint64_t ss_size;
} target_stack_t;

#define TARGET_NSIG        64
#define TARGET_SIGSET_SIZE 8
#define TARGET_SIG_DFL     0
#define TARGET_SIG_IGN     1
#define TARGET_MINSIGSTKSZ 2048
#define TARGET_SS_AUTODISARM (1U << 31)

/* -- riscv_hwprobe ------------------------------------------------------- */

struct target_hwprobe {
    int64_t  key;
    uint64_t value;
};

enum {
    RISCV_HWPROBE_KEY_MVENDORID = 0,
    RISCV_HWPROBE_KEY_MARCHID = 1,
    RISCV_HWPROBE_KEY_MIMPID = 2,
    RISCV_HWPROBE_KEY_BASE_BEHAVIOR = 3,
    RISCV_HWPROBE_KEY_IMA_EXT_0 = 4,
    RISCV_HWPROBE_KEY_CPUPERF_0 = 5,
    RISCV_HWPROBE_KEY_ZICBOZ_BLOCK_SIZE = 6,
};
#define RISCV_HWPROBE_BASE_BEHAVIOR_IMA (1ULL << 0)
#define RISCV_HWPROBE_IMA_FD   (1ULL << 0)
#define RISCV_HWPROBE_IMA_C    (1ULL << 1)
#define RISCV_HWPROBE_IMA_V    (1ULL << 2)
#define RISCV_HWPROBE_EXT_ZBA  (1ULL << 3)
#define RISCV_HWPROBE_EXT_ZBB  (1ULL << 4)
#define RISCV_HWPROBE_EXT_ZBS  (1ULL << 5)
#define RISCV_HWPROBE_MISALIGNED_UNKNOWN 0

/* riscv_flush_icache flags */
#define TARGET_SYS_RISCV_FLUSH_ICACHE_LOCAL 1

/* -- identical layouts and constants (checked, not converted) ------------- */

static_assert(sizeof(struct timespec) == 16 && sizeof(struct timeval) == 16, "timespec/timeval");
static_assert(sizeof(struct rlimit) == 16, "rlimit");
static_assert(sizeof(struct utsname) == 6 * 65, "utsname");
static_assert(sizeof(struct winsize) == 8, "winsize");
static_assert(sizeof(struct tms) == 32, "tms");
static_assert(sizeof(struct flock) == 32, "flock");
static_assert(sizeof(struct iovec) == sizeof(struct target_iovec), "iovec");

/* The kernel's struct sysinfo on a 64-bit machine (a libc's may be longer). */
struct target_sysinfo {
    int64_t uptime;
    uint64_t loads[3];
    uint64_t totalram, freeram, sharedram, bufferram, totalswap, freeswap;
    uint16_t procs, pad;
    uint32_t pad2;
    uint64_t totalhigh, freehigh;
    uint32_t mem_unit, pad3;
};
static_assert(sizeof(struct target_sysinfo) == 112, "sysinfo");

/* The kernel's struct rusage (musl's has 16 more longs reserved). */
struct target_rusage {
    struct { int64_t sec, usec; } utime, stime;
    int64_t counts[14];     /* maxrss ... nivcsw */
};
static_assert(sizeof(struct target_rusage) == 144, "rusage");

#define TARGET_STATX_SIZE 256   /* struct statx (include/uapi/linux/stat.h) */

/* Kernel termios for TCGETS/TCSETS: 4 x u32 flags, c_line, c_cc[19]. */
#define TARGET_KTERMIOS_SIZE 36

/* asm-generic O_* values (octal), which x86-64 shares. */
static_assert(O_CREAT == 0100 && O_EXCL == 0200 && O_NOCTTY == 0400, "O_*");
static_assert(O_TRUNC == 01000 && O_APPEND == 02000 && O_NONBLOCK == 04000, "O_*");
static_assert(O_DSYNC == 010000 && O_DIRECTORY == 0200000 && O_NOFOLLOW == 0400000, "O_*");
static_assert(O_CLOEXEC == 02000000 && O_SYNC == 04010000, "O_*");
#ifdef O_DIRECT
static_assert(O_DIRECT == 040000 && O_NOATIME == 01000000 && O_PATH == 010000000, "O_*");
#endif
#define TARGET_O_LARGEFILE 0100000
#define TARGET_O_ACCMODE 03          /* the kernel's (musl's O_ACCMODE has O_PATH too) */

/* Signal numbers and errno values are the asm-generic ones on both. */
static_assert(SIGBUS == 7 && SIGUSR1 == 10 && SIGSEGV == 11 && SIGCHLD == 17 &&
              SIGSTOP == 19 && SIGSYS == 31, "signal numbers");

/* -- Descriptor-level structures (sys_poll.c, sys_net.c, sys_time.c) ------ */

/*
 * struct epoll_event: x86-64 packs it (12 bytes); asm-generic riscv64 has
 * natural alignment (16 bytes, 4 bytes of padding after events).
 */
struct target_epoll_event {
    uint32_t events;
    uint32_t __pad;
    uint64_t data;
};
static_assert(sizeof(struct target_epoll_event) == 16, "riscv64 epoll_event");

/* struct msghdr with guest pointers (LP64 layout, same shape as the host's). */
struct target_msghdr {
    uint64_t msg_name;
    uint32_t msg_namelen;
    uint32_t __pad1;
    uint64_t msg_iov;
    uint64_t msg_iovlen;
    uint64_t msg_control;
    uint64_t msg_controllen;
    int32_t  msg_flags;
    uint32_t __pad2;
};
static_assert(sizeof(struct target_msghdr) == 56, "riscv64 msghdr");

struct target_mmsghdr {
    struct target_msghdr msg_hdr;
    uint32_t msg_len;
    uint32_t __pad;
};
static_assert(sizeof(struct target_mmsghdr) == 64, "riscv64 mmsghdr");

/* struct sock_fprog (SO_ATTACH_FILTER): holds a guest pointer. */
struct target_sock_fprog {
    uint16_t len;
    uint16_t __pad[3];
    uint64_t filter;
};

/* pselect6's sixth argument: { const sigset_t *ss; size_t ss_len; }. */
struct target_sigset_argpack {
    uint64_t ss;
    uint64_t ss_len;
};

/*
 * Identical on both (LP64, asm-generic): struct statfs (7 words, fsid,
 * 3 words, 4 spare words = 120 bytes), struct cmsghdr (16-byte header,
 * 8-byte CMSG_ALIGN, so control buffers pass through), pollfd, fd_set,
 * itimerspec/itimerval, sigevent (64 bytes, sigev_notify_thread_id at 12),
 * signalfd_siginfo (128), inotify_event, struct timex (208), ucred, linger.
 */
#define TARGET_STATFS_SIZE 120
#define TARGET_SIGEVENT_SIZE 64
#define TARGET_SIGNALFD_SIGINFO_SIZE 128
#define TARGET_TIMEX_SIZE 208

/* -- SysV IPC (sys_ipc.c) -------------------------------------------------- */

/*
 * The asm-generic 64-bit layouts (include/uapi/asm-generic/ipcbuf.h,
 * shmbuf.h, msgbuf.h, sembuf.h). x86-64 uses the generic ipcbuf, shmbuf
 * and msgbuf too, so ipc64_perm, shmid64_ds, msqid64_ds and the IPC_INFO
 * structs pass through (sys_ipc.c checks them field by field against the
 * host's); its semid64_ds has a padding word after each time, so that one
 * is converted. struct sembuf (6 bytes) and a message's { long mtype;
 * char mtext[]; } are the same on both.
 */
struct target_ipc64_perm {
    int32_t  key;
    uint32_t uid, gid, cuid, cgid;
    uint32_t mode;
    uint16_t seq;
    uint16_t __pad2;
    uint32_t __pad3;
    uint64_t __unused1, __unused2;
};
static_assert(sizeof(struct target_ipc64_perm) == 48, "riscv64 ipc64_perm");

struct target_shmid64_ds {
    struct target_ipc64_perm shm_perm;
    uint64_t shm_segsz;
    int64_t  shm_atime, shm_dtime, shm_ctime;
    int32_t  shm_cpid, shm_lpid;
    uint64_t shm_nattch;
    uint64_t __unused4, __unused5;
};
static_assert(sizeof(struct target_shmid64_ds) == 112, "riscv64 shmid64_ds");

struct target_semid64_ds {
    struct target_ipc64_perm sem_perm;
    int64_t  sem_otime;
    int64_t  sem_ctime;
    uint64_t sem_nsems;
    uint64_t __unused3, __unused4;
};
static_assert(sizeof(struct target_semid64_ds) == 88, "riscv64 semid64_ds");

struct target_msqid64_ds {
    struct target_ipc64_perm msg_perm;
    int64_t  msg_stime, msg_rtime, msg_ctime;
    uint64_t msg_cbytes, msg_qnum, msg_qbytes;
    int32_t  msg_lspid, msg_lrpid;
    uint64_t __unused4, __unused5;
};
static_assert(sizeof(struct target_msqid64_ds) == 120, "riscv64 msqid64_ds");

/* IPC_INFO / *_INFO results: shminfo64 (9 longs), shm_info, seminfo (10 ints), msginfo. */
#define TARGET_SHMINFO64_SIZE 72
#define TARGET_SHM_INFO_SIZE  48
#define TARGET_SEMINFO_SIZE   40
#define TARGET_MSGINFO_SIZE   32
/* SHMLBA: the page size on riscv64 (asm-generic shmparam.h). */
#define TARGET_SHMLBA 4096ULL

/* Conversions (target_conv.c). */
void target_stat_from_host(struct target_stat *t, const struct stat *h);
void target_epoll_from_host(struct target_epoll_event *t, const void *host_packed);
void target_epoll_to_host(void *host_packed, const struct target_epoll_event *t);

#endif
