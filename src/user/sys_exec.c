/*
 * execve / execveat: run another guest program by re-executing xlat.
 *
 * The host cannot run a riscv64 ELF and no binfmt_misc handler is assumed,
 * so xlat opens the target in the guest's view of the file system (path.h)
 * and checks it the way the kernel would -- exists (ENOENT), is a regular
 * executable file (EACCES), is a riscv64 ELF or a `#!` script (else
 * ENOEXEC) -- follows #! lines itself with the kernel's parsing rules and
 * nesting limit, and then execs /proc/self/exe with the opened file:
 *
 *   xlat OPTIONS [-E VAR=value...] [--log-fd N] [--self-exe PATH] --exec-fd FD -0 ARGV0 --
 *        FILENAME ARGV[1]...
 *
 * The new xlat loads the program from FD (so fexecve of a descriptor, and
 * a file renamed or replaced meanwhile, run what was checked) and closes
 * it; FILENAME is what the kernel calls bprm->filename (AT_EXECFN, the
 * name a script's interpreter is given: "/dev/fd/N" for execveat of a
 * descriptor). OPTIONS re-create this process's settings (opt.exec_args,
 * built by main.c: -L, --root, -s, -d, -strace...). The guest's envp
 * becomes the new process's host environment, except variables that would
 * configure the host side instead of the guest -- LD_* (the host's dynamic
 * loader), QEMU_* and XLAT_* (xlat's own options) -- which travel as -E so
 * the guest still sees them. The -D log file is handed over as an open
 * file descriptor, so the new process appends to the same file.
 *
 * Started by binfmt_misc (opt.binfmt), or without /proc mounted, and with
 * guest paths that are host paths (no -L, no --root), xlat leaves the exec
 * to the kernel instead: the guest's execve itself, whose riscv64 ELF (or
 * script's interpreter) binfmt_misc hands to a new xlat -- what a
 * container or a chroot without /proc needs. Without /proc otherwise, xlat
 * re-executes its own file by name (opt.self_exe), or if it does not know
 * it, leaves the exec to the kernel too.
 *
 * Close-on-exec, the signal mask and ignored signals carry over through
 * the host's execve as they should. A host (x86-64) ELF is not runnable:
 * -ENOEXEC, as the kernel says for an ELF of the wrong machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/exec.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/path.h"
#include "user/procfs.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/vfork.h"

#define BINPRM_BUF_SIZE 256        /* how much of a file the kernel looks at */
#define MAX_ARG_STRLEN  (32 * 4096)
#define MAX_ARG_STRINGS 0x7fffffff
#define MAX_INTERP_DEPTH 5         /* nested #! interpreters (the kernel: ELOOP) */
#define EM_RISCV_ 243

/* -- String vectors ---------------------------------------------------------- */

typedef struct StrVec {
    char **v;
    size_t n, cap;
} StrVec;

static void vec_push(StrVec *s, char *str)
{
    if (s->n + 2 > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            perror("xlat: execve");
            exit(1);
        }
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

static void vec_free(StrVec *s, bool strings)
{
    for (size_t i = 0; strings && i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Copy a guest argv/envp array (NULL: empty). 0 or -errno. */
static int vec_from_guest(uint64_t ga, StrVec *out)
{
    for (uint64_t i = 0; ga; i++) {
        uint64_t p;
        int err = 0;
        if (i >= MAX_ARG_STRINGS)
            return -E2BIG;
        if (copy_from_guest(&p, ga + i * 8, sizeof p))
            return -EFAULT;
        if (!p)
            break;
        char *s = guest_strdup(p, MAX_ARG_STRLEN, &err);
        if (!s)
            return err == -ENAMETOOLONG ? -E2BIG : -EFAULT;
        vec_push(out, s);
    }
    if (!out->v)
        vec_push(out, NULL), out->n = 0;     /* an empty, NULL-terminated vector */
    return 0;
}

/* -- Looking at the file ------------------------------------------------------ */

enum exec_kind { EXEC_ELF, EXEC_SCRIPT };

/* The kernel's checks of an opened file to execute: 0 or -errno. */
static int exec_access(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EACCES;
    if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0 &&
        (errno != ENOSYS || !(st.st_mode & 0111)))
        return -EACCES;
    return 0;
}

/* fd (or -errno) if the kernel's checks of it pass, else -errno, fd closed. */
static int exec_checked(int fd)
{
    int err = fd < 0 ? fd : exec_access(fd);
    if (err < 0 && fd >= 0)
        close(fd);
    return err < 0 ? err : fd;
}

/*
 * Open a guest path to execute (dirfd-relative, in the guest's view):
 * the descriptor, or -errno as execve reports it.
 */
static int exec_open(int dirfd, const char *path, bool nofollow)
{
    /* O_NONBLOCK: a FIFO must fail the regular-file check, not block the
     * open. Its errors are execve's: ENOENT, EACCES, ELOOP, ENAMETOOLONG... */
    return exec_checked(path_open_at(dirfd, path, PATH_LOOKUP | (nofollow ? 0 : PATH_FOLLOW),
                                     O_RDONLY | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0)));
}

static uint64_t get_le(const void *p, int bytes)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)bytes);      /* little-endian host and guest */
    return v;
}

/*
 * The ELF loader's last check before the point of no return: a PT_INTERP
 * program interpreter that cannot be opened fails the execve (ENOENT,
 * EACCES), rather than the new xlat failing to load it later.
 */
static int elf_interp_check(int fd, const unsigned char *ehdr)
{
    uint64_t phoff = get_le(ehdr + 32, 8), phentsize = get_le(ehdr + 54, 2);
    uint64_t phnum = get_le(ehdr + 56, 2);
    if (phentsize < 56 || phnum > 1024)
        return -ENOEXEC;
    for (uint64_t i = 0; i < phnum; i++) {
        unsigned char ph[56];
        if (pread(fd, ph, sizeof ph, (off_t)(phoff + i * phentsize)) != (ssize_t)sizeof ph)
            return -ENOEXEC;
        if (get_le(ph, 4) != 3 /* PT_INTERP */)
            continue;
        uint64_t off = get_le(ph + 8, 8), size = get_le(ph + 32, 8);
        char interp[PATH_MAX];
        if (size < 2 || size > sizeof interp ||
            pread(fd, interp, size, (off_t)off) != (ssize_t)size || interp[size - 1])
            return -ENOEXEC;
        int ifd = exec_open(AT_FDCWD, interp, false);
        if (ifd < 0)
            return ifd;
        close(ifd);
        return 0;
    }
    return 0;
}

/*
 * The opened file's first bytes into buf (NUL-padded) and what they say:
 * 0 and *kind, or -errno.
 */
static int exec_check(int fd, char *buf, enum exec_kind *kind)
{
    int r = 0;
    memset(buf, 0, BINPRM_BUF_SIZE + 1);
    ssize_t n = pread(fd, buf, BINPRM_BUF_SIZE, 0);
    const unsigned char *e = (const unsigned char *)buf;
    if (n < 0) {
        r = -EIO;
    } else if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
        *kind = EXEC_SCRIPT;
    } else if (n >= 64 && !memcmp(e, "\177ELF", 4) && e[4] == 2 /* ELFCLASS64 */ &&
               e[5] == 1 /* little endian */ && (e[16] == 2 || e[16] == 3) /* EXEC, DYN */ &&
               get_le(e + 18, 2) == EM_RISCV_) {
        *kind = EXEC_ELF;
        r = elf_interp_check(fd, e);
    } else {
        r = -ENOEXEC;
    }
    return r;
}

static bool spacetab(char c) { return c == ' ' || c == '\t'; }

static char *next_non_spacetab(char *first, const char *last)
{
    for (; first <= last; first++)
        if (!spacetab(*first))
            return first;
    return NULL;
}

static char *next_terminator(char *first, const char *last)
{
    for (; first <= last; first++)
        if (spacetab(*first) || !*first)
            return first;
    return NULL;
}

/*
 * Parse a "#!" line in buf (BINPRM_BUF_SIZE bytes) as fs/binfmt_script.c
 * does: an interpreter path, then optionally one argument (the rest of the
 * line, trimmed). 0 or -ENOEXEC; *name and *arg point into buf.
 */
static int parse_shebang(char *buf, char **name, char **arg)
{
    char *buf_end = buf + BINPRM_BUF_SIZE - 1;
    char *i_end = memchr(buf, '\n', BINPRM_BUF_SIZE);
    if (!i_end) {
        i_end = next_non_spacetab(buf + 2, buf_end);
        if (!i_end || !next_terminator(i_end, buf_end))
            return -ENOEXEC;               /* all blanks, or a truncated path */
        i_end = buf_end;
    }
    while (spacetab(i_end[-1]))
        i_end--;
    char *i_name = next_non_spacetab(buf + 2, i_end);
    if (!i_name || i_name == i_end)
        return -ENOEXEC;
    char *i_sep = next_terminator(i_name, i_end);
    char *i_arg = NULL;
    if (i_sep && *i_sep != '\0')
        i_arg = next_non_spacetab(i_sep, i_end);
    *i_end = '\0';
    if (i_sep)
        *i_sep = '\0';
    *name = i_name;
    *arg = i_arg;
    return 0;
}

/* -- Paths ---------------------------------------------------------------------- */

static bool is_proc_self_exe(const char *p)
{
    char mine[64];
    snprintf(mine, sizeof mine, "/proc/%d/exe", (int)getpid());
    return !strcmp(p, "/proc/self/exe") || !strcmp(p, mine);
}

/* Open a guest path to execute; /proc/self/exe is the running guest program. */
static int exec_open_guest(int dirfd, const char *guest, bool nofollow)
{
    if (!is_proc_self_exe(guest))
        return exec_open(dirfd, guest, nofollow);
    return exec_checked(procfs_exe_open(O_RDONLY | O_NONBLOCK | O_NOCTTY));
}

/* -- The new xlat's command line --------------------------------------------------- */

static bool host_side_var(const char *kv)
{
    return !strncmp(kv, "LD_", 3) || !strncmp(kv, "QEMU_", 5) || !strncmp(kv, "XLAT_", 5);
}

/*
 * Build xlat's argv and environment for running `prog` (host path) with
 * guest argv `argv` and guest environment `envp`. Strings in the result
 * are borrowed or leaked on purpose: execve either replaces us or fails
 * (then the caller frees the vectors but not the few option strings).
 */
static void build_command(const char *filename, int prog_fd, const StrVec *argv,
                          const StrVec *envp, int log_fd, StrVec *hargv, StrVec *henv)
{
    static char log_fd_str[16], prog_fd_str[16];
    vec_push(hargv, "xlat");
    for (char **o = opt.exec_args; o && *o; o++)
        vec_push(hargv, *o);
    for (size_t i = 0; i < envp->n; i++) {
        if (host_side_var(envp->v[i])) {
            if (!strchr(envp->v[i], '='))
                continue;              /* -E cannot carry it: the kernel would, rarely matters */
            vec_push(hargv, "-E");
            vec_push(hargv, envp->v[i]);
        } else {
            vec_push(henv, envp->v[i]);
        }
    }
    if (!henv->v)
        vec_push(henv, NULL), henv->n = 0;
    if (log_fd >= 0) {
        snprintf(log_fd_str, sizeof log_fd_str, "%d", log_fd);
        vec_push(hargv, "--log-fd");
        vec_push(hargv, log_fd_str);
    }
    if (opt.self_exe) {                /* the new xlat need not ask /proc for it */
        vec_push(hargv, "--self-exe");
        vec_push(hargv, (char *)opt.self_exe);
    }
    snprintf(prog_fd_str, sizeof prog_fd_str, "%d", prog_fd);
    vec_push(hargv, "--exec-fd");
    vec_push(hargv, prog_fd_str);
    vec_push(hargv, "-0");
    vec_push(hargv, argv->n ? argv->v[0] : "");
    vec_push(hargv, "--");
    vec_push(hargv, (char *)filename);
    for (size_t i = 1; i < argv->n; i++)
        vec_push(hargv, argv->v[i]);
}

/* Hand the -D log over to the new xlat as an inherited descriptor. */
static int log_fd_for_exec(void)
{
    if (!log_file || log_file == stderr || log_file == stdout)
        return -1;
    fflush(log_file);
    return fcntl(fileno(log_file), F_DUPFD, 3);
}

/* Exec the new xlat on the opened program fd (which stays the caller's). */
static int64_t run_xlat(const char *filename, int fd, const StrVec *argv, const StrVec *envp)
{
    StrVec hargv = { 0 }, henv = { 0 };
    int log_fd = log_fd_for_exec();
    int prog_fd = fcntl(fd, F_DUPFD, 3);       /* inherited, unlike fd */
    if (prog_fd < 0)
        return -errno;
    build_command(filename, prog_fd, argv, envp, log_fd, &hargv, &henv);
    if (opt.strace)
        fputc('\n', log_file);
    exec_before_exec();                /* keep what this process translated */
    fflush(NULL);
    signal_exec_prepare();             /* the guest's mask and pending signals carry over */
    vfork_child_release();             /* a vfork child's writes, before its parent resumes */
    execve("/proc/self/exe", hargv.v, henv.v);
    if ((errno == ENOENT || errno == EACCES) && opt.self_exe)
        execve(opt.self_exe, hargv.v, henv.v);   /* no /proc mounted */
    int64_t err = -errno;
    close(prog_fd);
    if (log_fd >= 0)
        close(log_fd);
    vec_free(&hargv, false);
    vec_free(&henv, false);
    return err;
}

/* -- The system calls --------------------------------------------------------------- */

/*
 * Replace argv[0] by the interpreter line of a script (binfmt_script):
 * [name, arg?, filename, argv[1]...].
 */
static void script_argv(StrVec *argv, const char *name, const char *arg, const char *filename)
{
    StrVec nv = { 0 };
    vec_push(&nv, strdup(name));
    if (arg)
        vec_push(&nv, strdup(arg));
    vec_push(&nv, strdup(filename));
    for (size_t i = 1; i < argv->n; i++)
        vec_push(&nv, argv->v[i]);
    if (argv->n)
        free(argv->v[0]);
    free(argv->v);
    *argv = nv;
}

/*
 * Follow #! interpreters from (filename, fd) -- filename malloc'd, both
 * released here -- to a riscv64 ELF and run it. filename is what the kernel
 * calls bprm->filename: the name a script's interpreter is given.
 * script_unreadable: the script is reached through a close-on-exec
 * descriptor, which its interpreter could not open (the kernel: ENOENT).
 */
static int64_t exec_common(char *filename, int fd, bool script_unreadable, StrVec *argv,
                           const StrVec *envp)
{
    char buf[BINPRM_BUF_SIZE + 1];
    int64_t ret;
    for (int depth = 0;; depth++) {
        enum exec_kind kind = EXEC_ELF;
        char *name, *arg;
        if ((ret = exec_check(fd, buf, &kind)) < 0)
            break;
        if (kind == EXEC_ELF) {
            ret = run_xlat(filename, fd, argv, envp);
            break;
        }
        if (depth >= MAX_INTERP_DEPTH) {
            ret = -ELOOP;
            break;
        }
        if (depth == 0 && script_unreadable) {
            ret = -ENOENT;
            break;
        }
        if ((ret = parse_shebang(buf, &name, &arg)) < 0)
            break;
        script_argv(argv, name, arg, filename);
        free(filename);
        close(fd);
        filename = strdup(name);
        if ((fd = exec_open_guest(AT_FDCWD, name, false)) < 0) {
            ret = fd;
            break;
        }
    }
    free(filename);
    if (fd >= 0)
        close(fd);
    return ret;
}

static char *printf_dup(const char *fmt, int fd, const char *rest)
{
    char *s = NULL;
    if (asprintf(&s, fmt, fd, rest) < 0)
        return NULL;
    return s;
}

/* execveat(dirfd, "", ..., AT_EMPTY_PATH): the descriptor itself, readable. */
static int exec_open_fd(int dirfd)
{
    char self[32];
    snprintf(self, sizeof self, "/proc/self/fd/%d", dirfd);
    int fd = open(self, O_RDONLY | O_CLOEXEC);    /* also for an O_PATH descriptor */
    if (fd < 0)
        return errno == ENOENT ? -EBADF : -EACCES;
    return exec_checked(fd);
}

/* Does the kernel do the guest's exec (see the top of the file)? */
static bool exec_by_kernel(void)
{
    if (opt.ld_prefix || path_rooted())
        return false;                  /* guest paths are not the kernel's */
    /* Without /proc, re-executing xlat by name (run_xlat) needs its name. */
    return opt.binfmt || (!opt.self_exe && access("/proc/self/exe", F_OK) != 0);
}

/* The guest's execveat as it is, binfmt_misc running the new xlat. */
static int64_t exec_plain(int dirfd, const char *path, uint64_t argv_ga, uint64_t envp_ga,
                          int flags)
{
    StrVec argv = { 0 }, envp = { 0 };
    int64_t ret;
    char exe[PATH_MAX];
    if (is_proc_self_exe(path)) {      /* the guest program, not xlat */
        if ((ret = procfs_exe_path(exe, sizeof exe)) < 0)
            return ret;
        path = exe;
    }
    if ((ret = vec_from_guest(argv_ga, &argv)) == 0 && (ret = vec_from_guest(envp_ga, &envp)) == 0) {
        if (opt.strace)
            fputc('\n', log_file);
        exec_before_exec();
        fflush(NULL);
        signal_exec_prepare();
        vfork_child_release();
        ret = host_ret(syscall(SYS_execveat, dirfd, path, argv.v, envp.v, flags));
    }
    vec_free(&argv, true);
    vec_free(&envp, true);
    return ret;
}

static int64_t do_execveat(int dirfd, uint64_t path_ga, uint64_t argv_ga, uint64_t envp_ga,
                           int flags)
{
    StrVec argv = { 0 }, envp = { 0 };
    char *filename = NULL;
    int err = 0, fd = -1;
    int64_t ret;

    if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
        return -EINVAL;
    char *path = guest_strdup(path_ga, PATH_MAX, &err);
    if (!path)
        return err;
    if (exec_by_kernel()) {
        ret = exec_plain(dirfd, path, argv_ga, envp_ga, flags);
        free(path);
        return ret;
    }
    bool nofollow = flags & AT_SYMLINK_NOFOLLOW, via_fd = false;
    /* The kernel opens the file before it reads argv and envp. */
    if (path[0] == '\0') {
        if (!(flags & AT_EMPTY_PATH) || dirfd == AT_FDCWD) {
            ret = -ENOENT;
            goto out;
        }
        filename = printf_dup("/dev/fd/%d%s", dirfd, "");
        fd = exec_open_fd(dirfd);
        via_fd = true;
    } else {
        bool rel = path[0] != '/' && dirfd != AT_FDCWD;
        filename = rel ? printf_dup("/dev/fd/%d/%s", dirfd, path) : strdup(path);
        fd = exec_open_guest(dirfd, path, nofollow);
        via_fd = rel;
    }
    if (!filename) {
        ret = -ENOMEM;
        goto out;
    }
    if (fd < 0) {
        ret = fd;
        goto out;
    }
    if ((ret = vec_from_guest(argv_ga, &argv)) < 0 || (ret = vec_from_guest(envp_ga, &envp)) < 0)
        goto out;
    bool cloexec = via_fd && (fcntl(dirfd, F_GETFD) & FD_CLOEXEC);
    ret = exec_common(filename, fd, cloexec, &argv, &envp);
    filename = NULL;                   /* exec_common released them */
    fd = -1;
out:
    free(filename);
    if (fd >= 0)
        close(fd);
    free(path);
    vec_free(&argv, true);
    vec_free(&envp, true);
    return ret;
}

int64_t sys_execve(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_execveat(AT_FDCWD, a[0], a[1], a[2], 0);
}

int64_t sys_execveat(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return do_execveat((int)a[0], a[1], a[2], a[3], (int)a[4]);
}
