/*
 * -strace output in qemu-riscv64's format (see strace.h). Each argument is
 * printed according to one character of the syscall's format string from
 * syscall.def; unknown flag bits are printed in hex, as qemu does.
 */
#define _GNU_SOURCE
#include "user/strace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"

typedef struct FlagName {
    uint64_t value;
    const char *name;
} FlagName;

#define F(x) { x, #x }

/* -- Flag and constant tables ------------------------------------------- */

static const FlagName open_flags[] = {
    F(O_APPEND), F(O_CREAT), F(O_EXCL), F(O_TRUNC), F(O_DIRECTORY), F(O_NOCTTY),
    F(O_NOFOLLOW), F(O_NONBLOCK), { 04000000, "__O_SYNC" }, F(O_DSYNC),
    { 040000, "O_DIRECT" }, { 0100000, "O_LARGEFILE" }, { 01000000, "O_NOATIME" },
    F(O_CLOEXEC), { 010000000, "O_PATH" }, { 020000000, "__O_TMPFILE" }, { 0, NULL },
};

static const FlagName prot_flags[] = {
    F(PROT_READ), F(PROT_WRITE), F(PROT_EXEC), { 0, NULL },
};

static const FlagName mmap_flags[] = {
    F(MAP_SHARED), F(MAP_PRIVATE), { 0x03, "MAP_SHARED_VALIDATE" }, F(MAP_FIXED),
    F(MAP_ANONYMOUS), F(MAP_GROWSDOWN), F(MAP_DENYWRITE), F(MAP_EXECUTABLE),
    F(MAP_LOCKED), F(MAP_NORESERVE), F(MAP_POPULATE), F(MAP_NONBLOCK), F(MAP_STACK),
    F(MAP_HUGETLB), { 0x100000, "MAP_FIXED_NOREPLACE" }, { 0, NULL },
};

static const FlagName at_flags[] = {
    { 0x100, "AT_SYMLINK_NOFOLLOW" }, { 0x200, "AT_REMOVEDIR" }, { 0x200, "AT_EACCESS" },
    { 0x400, "AT_SYMLINK_FOLLOW" }, { 0x800, "AT_NO_AUTOMOUNT" }, { 0x1000, "AT_EMPTY_PATH" },
    { 0, NULL },
};

static const FlagName access_flags[] = {
    F(R_OK), F(W_OK), F(X_OK), { 0, NULL },
};

static const FlagName clock_names[] = {
    F(CLOCK_REALTIME), F(CLOCK_MONOTONIC), F(CLOCK_PROCESS_CPUTIME_ID),
    F(CLOCK_THREAD_CPUTIME_ID), F(CLOCK_MONOTONIC_RAW), F(CLOCK_REALTIME_COARSE),
    F(CLOCK_MONOTONIC_COARSE), F(CLOCK_BOOTTIME), F(CLOCK_REALTIME_ALARM),
    F(CLOCK_BOOTTIME_ALARM), F(CLOCK_TAI), { 0, NULL },
};

static const FlagName whence_names[] = {
    F(SEEK_SET), F(SEEK_CUR), F(SEEK_END), F(SEEK_DATA), F(SEEK_HOLE), { 0, NULL },
};

static const FlagName how_names[] = {
    F(SIG_BLOCK), F(SIG_UNBLOCK), F(SIG_SETMASK), { 0, NULL },
};

static const FlagName madv_names[] = {
    F(MADV_NORMAL), F(MADV_RANDOM), F(MADV_SEQUENTIAL), F(MADV_WILLNEED),
    F(MADV_DONTNEED), F(MADV_FREE), F(MADV_REMOVE), F(MADV_DONTFORK), F(MADV_DOFORK),
    F(MADV_MERGEABLE), F(MADV_UNMERGEABLE), F(MADV_HUGEPAGE), F(MADV_NOHUGEPAGE),
    F(MADV_DONTDUMP), F(MADV_DODUMP), { 0, NULL },
};

static const FlagName ioctl_names[] = {
    F(TCGETS), F(TCSETS), F(TCSETSW), F(TCSETSF), F(TCFLSH), F(TIOCGPGRP), F(TIOCSPGRP),
    F(TIOCGWINSZ), F(TIOCSWINSZ), F(FIONREAD), F(FIONBIO), F(FIOCLEX), F(FIONCLEX),
    F(TIOCSCTTY), F(TIOCNOTTY), F(TIOCGSID), F(TIOCGPTN), F(TIOCSPTLCK), { 0, NULL },
};

/* fcntl commands; `arg` says whether qemu prints the third argument. */
static const struct { int cmd; const char *name; char arg; } fcntl_cmds[] = {
    { F_DUPFD, "F_DUPFD", 'd' }, { F_GETFD, "F_GETFD", 0 }, { F_SETFD, "F_SETFD", 'd' },
    { F_GETFL, "F_GETFL", 0 }, { F_SETFL, "F_SETFL", 'o' }, { F_GETLK, "F_GETLK", 'p' },
    { F_SETLK, "F_SETLK", 'p' }, { F_SETLKW, "F_SETLKW", 'p' }, { F_SETOWN, "F_SETOWN", 'd' },
    { F_GETOWN, "F_GETOWN", 0 }, { F_DUPFD_CLOEXEC, "F_DUPFD_CLOEXEC", 'd' },
    { F_SETPIPE_SZ, "F_SETPIPE_SZ", 'd' }, { F_GETPIPE_SZ, "F_GETPIPE_SZ", 0 },
    { F_ADD_SEALS, "F_ADD_SEALS", 'x' }, { F_GET_SEALS, "F_GET_SEALS", 0 },
    { F_OFD_GETLK, "F_OFD_GETLK", 'p' }, { F_OFD_SETLK, "F_OFD_SETLK", 'p' },
    { F_OFD_SETLKW, "F_OFD_SETLKW", 'p' },
};

/* -- Printing primitives ------------------------------------------------- */

static FILE *out(void) { return log_file ? log_file : stderr; }

/* OR-ed flag names, then any bits left over in hex (qemu style). */
static void print_flags(const FlagName *t, uint64_t v)
{
    const char *sep = "";
    for (; t->name; t++) {
        if (t->value && (v & t->value) == t->value) {
            fprintf(out(), "%s%s", sep, t->name);
            sep = "|";
            v &= ~t->value;
        }
    }
    if (v || !*sep)
        fprintf(out(), "%s%#" PRIx64, sep, v);
}

/* One value from an enumeration, or its number. */
static void print_enum(const FlagName *t, uint64_t v, int as_hex)
{
    for (; t->name; t++) {
        if (t->value == v) {
            fputs(t->name, out());
            return;
        }
    }
    fprintf(out(), as_hex ? "%#" PRIx64 : "%" PRId64, v);
}

static void print_pointer(uint64_t v)
{
    if (v)
        fprintf(out(), "0x%016" PRIx64, v);
    else
        fputs("NULL", out());
}

static void print_string(uint64_t ga)
{
    int err;
    char *s;
    if (!ga) {
        fputs("NULL", out());
        return;
    }
    s = guest_strdup(ga, 4096, &err);
    if (!s) {
        print_pointer(ga);
        return;
    }
    fprintf(out(), "\"%s\"", s);
    free(s);
}

static void print_timespec(uint64_t ga)
{
    struct timespec ts;
    if (!ga)
        fputs("NULL", out());
    else if (copy_from_guest(&ts, ga, sizeof ts))
        print_pointer(ga);
    else
        fprintf(out(), "{tv_sec = %lld,tv_nsec = %ld}", (long long)ts.tv_sec, ts.tv_nsec);
}

static void print_open_flags(uint64_t v)
{
    static const char *const acc[4] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "3" };
    fputs(acc[v & TARGET_O_ACCMODE], out());
    v &= ~(uint64_t)TARGET_O_ACCMODE;
    if (v) {
        fputc('|', out());
        print_flags(open_flags, v);
    }
}

static void print_signal(uint64_t v)
{
    int sig = (int)v;
    const char *name = signal_abbrev(sig);
    if (name)
        fprintf(out(), "SIG%s", name);
    else
        fprintf(out(), "%d", sig);
}

static void print_fcntl(const uint64_t *a)
{
    for (size_t i = 0; i < sizeof fcntl_cmds / sizeof fcntl_cmds[0]; i++) {
        if (fcntl_cmds[i].cmd != (int)a[1])
            continue;
        fputs(fcntl_cmds[i].name, out());
        switch (fcntl_cmds[i].arg) {
        case 'd': fprintf(out(), ",%d", (int)a[2]); break;
        case 'x': fprintf(out(), ",%#" PRIx64, a[2]); break;
        case 'o': fputc(',', out()); print_open_flags(a[2]); break;
        case 'p': fputc(',', out()); print_pointer(a[2]); break;
        }
        return;
    }
    fprintf(out(), "%d,0x%016" PRIx64, (int)a[1], a[2]);
}

/* Print argument i of the call (format character c). */
static void print_arg(char c, const uint64_t *a, int i)
{
    uint64_t v = a[i];
    FILE *f = out();
    switch (c) {
    case 'd': fprintf(f, "%d", (int)v); break;
    case 'l': fprintf(f, "%" PRId64, (int64_t)v); break;
    case 'u': fprintf(f, "%" PRIu64, v); break;
    case 'x': fprintf(f, "%#" PRIx64, v); break;
    case 'p': print_pointer(v); break;
    case 'q': fprintf(f, "%#" PRIx64, v); break;
    case 's': print_string(v); break;
    case 'f':
        if ((int)v == AT_FDCWD) fputs("AT_FDCWD", f);
        else fprintf(f, "%d", (int)v);
        break;
    case 'o': print_open_flags(v); break;
    case 'e':
        if (v) print_flags(open_flags, v);
        else fputc('0', f);
        break;
    case 'm': case 'O': fprintf(f, "%#" PRIo64, v); break;
    case 'P':
        if (v) print_flags(prot_flags, v);
        else fputs("PROT_NONE", f);
        break;
    case 'M': print_flags(mmap_flags, v); break;
    case 'a':
        if (v) print_flags(at_flags, v);
        else fputc('0', f);
        break;
    case 'k':
        if (v) print_flags(access_flags, v);
        else fputs("F_OK", f);
        break;
    case 'c': print_enum(clock_names, v, 1); break;
    case 'S': print_signal(v); break;
    case 'w': print_enum(whence_names, v, 1); break;
    case 'h':
        if (v <= 2) print_enum(how_names, v, 0);
        else fputs("UNKNOWN", f);
        break;
    case 'F': print_fcntl(a); break;
    case 'I': print_enum(ioctl_names, v, 1); break;
    case 'A': print_enum(madv_names, v, 1); break;
    case 't': print_timespec(v); break;
    default: fprintf(f, "%#" PRIx64, v); break;
    }
}

/* -- Entry points ---------------------------------------------------------- */

void strace_enter(const char *name, const char *fmt, const uint64_t *a)
{
    FILE *f = out();
    fprintf(f, "%d %s(", (int)getpid(), name);
    for (int i = 0; fmt[i] && fmt[i] != '=' && i < 6; i++) {
        /* openat's mode only matters (and is only shown) when creating. */
        if (fmt[i] == 'O' && !(i > 0 && (a[i - 1] & (O_CREAT | 020000000))))
            continue;
        if (i)
            fputc(',', f);
        print_arg(fmt[i], a, i);
    }
    fputc(')', f);
    fflush(f);
}

void strace_exit(const char *fmt, const uint64_t *a, int64_t ret)
{
    FILE *f = out();
    const char *kind = strchr(fmt, '=');
    if (ret < 0 && ret >= -4095) {
        fprintf(f, " = -1 errno=%d (%s)\n", (int)-ret, strerror((int)-ret));
    } else if (kind && kind[1] == 'p') {
        fprintf(f, " = 0x%016" PRIx64 "\n", (uint64_t)ret);
    } else if (kind && kind[1] == 'T') {
        fprintf(f, " = %" PRId64 " (", ret);
        print_timespec(a[1]);
        fputs(")\n", f);
    } else {
        fprintf(f, " = %" PRId64 "\n", ret);
    }
    fflush(f);
}

void strace_unknown(uint64_t nr)
{
    fprintf(out(), "%d Unknown syscall %" PRIu64 "\n", (int)getpid(), nr);
    fflush(out());
}
