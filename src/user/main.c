/*
 * xlat user mode: command line, environment, and the execution loop.
 *
 *   xlat [options] program [arguments...]
 *
 * The options follow qemu-user's habits (-L, -E, -U, -0, -s, -d, -D,
 * -strace) and its QEMU_* environment variables, each also accepted with an
 * XLAT_ prefix. main() reserves the guest window, loads the program, builds
 * its stack and hands the CPU to cpu_loop(), which runs guest code and
 * services whatever made it stop: system calls, faults, illegal
 * instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "riscv/cpu.h"
#include "riscv/isa.h"
#include "user/canary.h"
#include "user/fault.h"
#include "user/loader.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/own_fd.h"
#include "user/path.h"
#include "user/procfs.h"
#include "user/signal.h"
#include "user/cpu_loop.h"
#include "exec/exec.h"
#include "exec/lock.h"
#include "exec/pcache.h"
#include "exec/perfmap.h"
#include "user/gdbstub.h"
#include "user/symbols.h"
#include "x86/disas.h"

#define XLAT_VERSION "0.1"

/* -- Usage ---------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
        "usage: xlat [options] program [arguments...]\n"
        "Run a riscv64 Linux program on this x86-64 host.\n"
        "\n"
        "Options (environment variable in brackets; XLAT_* works as well as QEMU_*):\n"
        "  -h, -help          print this help and exit\n"
        "  -version           print the version and exit\n"
        "  -L path            look up the guest's absolute paths under path first, falling\n"
        "                     back to the host's (not /dev, /proc, /sys) [QEMU_LD_PREFIX]\n"
        "  --root dir         dir is the guest's /, as in a chroot (no privileges needed): the\n"
        "                     guest sees nothing else but /dev, /proc, /sys and --bind [XLAT_ROOT]\n"
        "  --bind host[:guest] under --root, show host directory host at guest (default: the\n"
        "                     same path); may be repeated\n"
        "  -E var=value       set an environment variable for the guest [QEMU_SET_ENV]\n"
        "  -U var             remove an environment variable from the guest [QEMU_UNSET_ENV]\n"
        "  -0 argv0           pass argv0 as the program's argv[0] [QEMU_ARGV0]\n"
        "  -s size            guest stack size, e.g. 8M [QEMU_STACK_SIZE]\n"
        "  -d item[,...]      log items: in_asm, out_asm, exec, nochain, unimp, page, strace,\n"
        "                     stats; -d help lists them [QEMU_LOG]\n"
        "  -D logfile         write logs to logfile instead of stderr [QEMU_LOG_FILENAME]\n"
        "  -strace            log system calls [QEMU_STRACE]\n"
        "  -cpu isa           guest ISA: rv64gc, rv64imac_zba_zbb, max (default)...; instructions\n"
        "                     of other extensions raise SIGILL; -cpu help [QEMU_CPU]\n"
        "  -g port            wait for gdb on TCP port before the first instruction [QEMU_GDB]\n"
        "  -perfmap           write /tmp/perf-PID.map naming translated code by guest symbol\n"
        "  -jitdump           write ./jit-PID.dump for perf inject --jit\n"
        "  -B addr, -R size   not supported: the guest window is fixed (%llu GiB at guest 0)\n"
        "  --interp           run with the interpreter instead of the JIT\n"
        "  --tune item[,...]  JIT dispatch mechanisms, all on by default [XLAT_TUNE]:\n"
        "                     no-cflags (recompute dispatch flags each dispatch),\n"
        "                     no-nostore (per-block bookkeeping stores), no-inline-jc\n"
        "                     (indirect exits use a shared lookup stub), no-xpage (no chaining\n"
        "                     across guest pages), no-cycle-poll (exit poll in every block),\n"
        "                     no-poison (poll at indirect exits and guest returns instead of\n"
        "                     poisoning the jump cache), no-disp (guest displacement added by\n"
        "                     a separate lea),\n"
        "                     no-checked-reuse (window check at every guest access, not once\n"
        "                     per base register and block), no-ras (guest returns probe the\n"
        "                     jump cache instead of pairing with host call/ret),\n"
        "                     no-superblock (a block ends at every conditional branch),\n"
        "                     no-fork-warm (forked children do not report the blocks they\n"
        "                     translate to the process that forks next),\n"
        "                     no-first-interp (translate a block on its first run; by\n"
        "                     default its first three runs are interpreted),\n"
        "                     no-remap (every block keeps the fixed guest-to-host register\n"
        "                     mapping),\n"
        "                     no-narrow (sign-extend every 32-bit result, even one that\n"
        "                     only 32-bit operations read before it is overwritten),\n"
        "                     no-zero-base (the guest window anywhere in the host address\n"
        "                     space, reached through a base register, not at host 0),\n"
        "                     no-cache (no persistent translation cache; also\n"
        "                     XLAT_CACHE=0; its directory is --cache-dir,\n"
        "                     default ~/.cache/xlat/code, bounded by\n"
        "                     XLAT_CACHE_SIZE MiB), no-cache-image (the cache's\n"
        "                     translations installed one by one, not a\n"
        "                     program's file at a time),\n"
        "                     jc-bits=N (jump cache of 2^N entries, 10..18, default 16)\n"
        "\n"
        "The guest lives in a reserved %llu GiB window of the host address space\n"
        "and can neither read nor write xlat's own memory.\n",
        GUEST_SPACE_SIZE >> 30, GUEST_SPACE_SIZE >> 30);
}

static _Noreturn void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "xlat: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

/* -- Option values -------------------------------------------------------- */

static char tune_arg[256];          /* every --tune given, for an exec'd xlat */

/* --tune no-NAME,NAME,jc-bits=N */
static void parse_tune(const char *v)
{
    snprintf(tune_arg + strlen(tune_arg), sizeof tune_arg - strlen(tune_arg), "%s%s",
             tune_arg[0] ? "," : "", v);
    const char *bad = tune_parse(v, false);
    if (bad)
        die("%s", bad);
}

static const LogItem log_items[] = {
    { "in_asm", LOG_IN_ASM, "show guest instructions as they are first run" },
    { "exec",   LOG_EXEC,   "show each executed guest pc" },
    { "unimp",  LOG_UNIMP,  "log unimplemented system calls and instructions" },
    { "page",   LOG_PAGE,   "log changes to the guest memory map" },
    { "strace", LOG_STRACE, "log system calls (same as -strace)" },
    { "out_asm", LOG_OUT_ASM, "show the host code of each translated block (disassembled)" },
    { "nochain", LOG_NOCHAIN, "do not chain translated blocks together" },
    { "stats",  LOG_STATS,  "print execution counters (blocks, chains, exits, block profile, where the time went) at exit" },
    { "cache",  LOG_CACHE,  "the persistent translation cache: files read and written, translations not used" },
};

static void parse_log_items(const char *list)
{
    const char *bad = log_items_parse(log_items, sizeof log_items / sizeof log_items[0], list);
    if (bad)
        die("unknown log item '%s' (try -d help)", bad);
    if (log_mask & LOG_STRACE)
        opt.strace = true;
}

/* "8M", "1g", "65536" -> bytes; 0 on a malformed value. */
static uint64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    }
    return *end ? 0 : v;
}

static void set_stack_size(const char *s)
{
    uint64_t v = parse_size(s);
    if (v < 64 * 1024 || v > (1ULL << 34))
        die("invalid stack size '%s'", s);
    opt.stack_size = (v + GUEST_PAGE_SIZE - 1) & ~(GUEST_PAGE_SIZE - 1);
}

static void set_cpu(const char *s)
{
    char err[128];
    if (!strcmp(s, "help")) {
        printf("-cpu takes an RV64 ISA string: rv64 then letters of i m a f d c g, then\n"
               "_zba _zbb _zbs (_zicsr _zifencei are always on); or max (all, the default).\n"
               "Examples: rv64gc, rv64imac, rv64gc_zba_zbb_zbs\n");
        exit(0);
    }
    if (!isa_parse(s, &isa_mask, err, sizeof err))
        die("-cpu: %s", err);
    opt.cpu_model = s;
}

static void set_gdb_port(const char *s)
{
    char *end;
    long port = strtol(s, &end, 10);
    if (!strncmp(s, "tcp::", 5))
        port = strtol(s + 5, &end, 10);
    if (*end || port <= 0 || port > 65535)
        die("-g needs a TCP port number, got '%s'", s);
    opt.gdb_port = (int)port;
}

static void set_log_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(own_fd_take(fd), "w") : NULL;   /* never the guest's */
    if (!f)
        die("cannot open log file '%s'", path);
    setvbuf(f, NULL, _IOLBF, 0);
    log_file = f;
}

/*
 * --log-fd N (internal, from sys_exec.c): an exec'd xlat continues its
 * parent's -D log through the inherited descriptor N, moved out of the
 * guest's way and made close-on-exec.
 */
static void set_log_fd(const char *s)
{
    int fd = atoi(s);
    FILE *f = fcntl(fd, F_GETFD) >= 0 ? fdopen(own_fd_take(fd), "a") : NULL;
    if (!f)
        die("bad --log-fd '%s'", s);
    setvbuf(f, NULL, _IOLBF, 0);
    log_file = f;
}

/*
 * The options that give an exec'd xlat (sys_exec.c) this process's
 * settings, from their final values (command line and environment alike).
 */
static void record_exec_args(void)
{
    static char stack[32], items[128];
    static char *v[16 + 2 * 32];
    int n = 0;
    if (opt.ld_prefix) {
        v[n++] = "-L";
        v[n++] = (char *)opt.ld_prefix;
    }
    n += path_exec_args(v + n, 2 * 32);
    snprintf(stack, sizeof stack, "%llu", (unsigned long long)opt.stack_size);
    v[n++] = "-s";
    v[n++] = stack;
    for (size_t i = 0; i < sizeof log_items / sizeof log_items[0]; i++)
        if (log_mask & log_items[i].mask & ~LOG_STRACE)
            snprintf(items + strlen(items), sizeof items - strlen(items), "%s%s",
                     items[0] ? "," : "", log_items[i].name);
    if (items[0]) {
        v[n++] = "-d";
        v[n++] = items;
    }
    if (opt.strace)
        v[n++] = "-strace";
    if (opt.interp_only)
        v[n++] = "--interp";
    if (tune_arg[0]) {
        v[n++] = "--tune";
        v[n++] = tune_arg;
    }
    if (opt.cpu_model) {
        v[n++] = "-cpu";
        v[n++] = (char *)opt.cpu_model;
    }
    if (opt.cache_dir) {
        v[n++] = "--cache-dir";
        v[n++] = (char *)opt.cache_dir;
    }
    v[n] = NULL;
    opt.exec_args = v;
}

/* -- Guest environment ----------------------------------------------------- */

/* The guest's environment: the host's, edited by -E/-U, in order. */
static char **guest_env;
static size_t guest_env_count;

static void env_init(char **envp)
{
    size_t n = 0;
    while (envp[n])
        n++;
    guest_env = calloc(n + 1, sizeof *guest_env);
    for (size_t i = 0; i < n; i++)
        guest_env[i] = envp[i];
    guest_env_count = n;
}

static ssize_t env_find(const char *name, size_t len)
{
    for (size_t i = 0; i < guest_env_count; i++)
        if (!strncmp(guest_env[i], name, len) && guest_env[i][len] == '=')
            return (ssize_t)i;
    return -1;
}

static void env_unset(const char *name)
{
    ssize_t i = env_find(name, strlen(name));
    if (i < 0)
        return;
    memmove(&guest_env[i], &guest_env[i + 1], (guest_env_count - (size_t)i) * sizeof *guest_env);
    guest_env_count--;
}

static void env_set(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        die("-E needs var=value, got '%s'", assignment);
    ssize_t i = env_find(assignment, (size_t)(eq - assignment));
    if (i >= 0) {
        guest_env[i] = (char *)assignment;
        return;
    }
    guest_env = realloc(guest_env, (guest_env_count + 2) * sizeof *guest_env);
    guest_env[guest_env_count++] = (char *)assignment;
    guest_env[guest_env_count] = NULL;
}

/* QEMU_SET_ENV / QEMU_UNSET_ENV hold comma-separated lists. */
static void env_apply_list(const char *list, void (*fn)(const char *))
{
    char *copy = strdup(list), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
        fn(strdup(item));
    free(copy);
}

/* QEMU_<name> or XLAT_<name>; XLAT_ wins when both are set. */
static const char *getenv_alias(const char *name)
{
    char buf[64] = "XLAT_";                 /* not snprintf: 22 of them at every start */
    size_t n = strlen(name);
    if (n >= sizeof buf - 5)
        return NULL;
    memcpy(buf + 5, name, n + 1);
    const char *v = getenv(buf);
    if (v)
        return v;
    memcpy(buf, "QEMU_", 5);
    return getenv(buf);
}

/*
 * The QEMU_* / XLAT_* variables. Not when xlat runs with privileges its
 * caller lacks (AT_SECURE: binfmt_misc's C flag on a setuid program): the
 * caller's environment must not steer it (log files, the root, gdb).
 */
static void env_options(void)
{
    const char *v;
    if (getauxval(AT_SECURE))
        return;
    if ((v = getenv_alias("LD_PREFIX")))
        opt.ld_prefix = v;
    if ((v = getenv("XLAT_ROOT")))
        path_set_root(v);
    if ((v = getenv_alias("STACK_SIZE")))
        set_stack_size(v);
    if (getenv_alias("STRACE"))
        opt.strace = true;
    if ((v = getenv_alias("LOG")))
        parse_log_items(v);
    if ((v = getenv_alias("LOG_FILENAME")))
        set_log_file(v);
    if ((v = getenv_alias("SET_ENV")))
        env_apply_list(v, env_set);
    if ((v = getenv_alias("UNSET_ENV")))
        env_apply_list(v, env_unset);
    if ((v = getenv_alias("TUNE")))
        parse_tune(v);
    if ((v = getenv_alias("ARGV0")))
        opt.argv0 = v;
    if ((v = getenv_alias("CPU")))
        set_cpu(v);
    if ((v = getenv_alias("GDB")))
        set_gdb_port(v);
    if ((v = getenv("XLAT_CACHE_DIR")) && *v)
        opt.cache_dir = v;
    if ((v = getenv("XLAT_CACHE")) && !strcmp(v, "0"))
        parse_tune("no-cache");
}

/* -- Command line --------------------------------------------------------- */

/* --exec-fd N (internal, from sys_exec.c), or binfmt_misc's AT_EXECFD: the
 * program, opened and checked. */
static int exec_fd = -1;

/* -- Started by binfmt_misc ------------------------------------------------ */

#define AT_FLAGS_PRESERVE_ARGV0_ 1     /* linux/binfmts.h, since Linux 5.12 */

/*
 * For a file registered with binfmt_misc the kernel runs
 * `xlat FILENAME [ARGV0] ARGV[1]...`: argv[0] is the interpreter's path,
 * FILENAME the path given to execve; the program's own argv[0] is kept only
 * with the P flag, which AT_FLAGS reports; with O (and C) the opened file
 * comes as AT_EXECFD. AT_EXECFN then names FILENAME, where a command line
 * `xlat PROG` has xlat's own name. Returns the index of the guest's argv[0]
 * in argv, or 0 if xlat was started as a command.
 */
static int binfmt_start(int argc, char **argv)
{
    errno = 0;
    unsigned long fd = getauxval(AT_EXECFD);
    bool have_fd = errno == 0;
    bool keep_argv0 = getauxval(AT_FLAGS) & AT_FLAGS_PRESERVE_ARGV0_;
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    bool named = argc >= 2 && execfn && !strcmp(execfn, argv[1]);
    if (!have_fd && !keep_argv0 && !named)
        return 0;
    if (argc < 2 || (keep_argv0 && argc < 3)) {
        fprintf(stderr, "xlat: started by binfmt_misc without a program\n");
        exit(1);
    }
    opt.binfmt = true;
    if (have_fd)
        exec_fd = (int)fd;
    return keep_argv0 ? 2 : 1;
}

/*
 * xlat's own file, for an exec when /proc is not mounted (sys_exec.c),
 * without asking /proc/self/exe when it can (microseconds in a VM; a
 * link's name serves an exec as well): what an exec'ing xlat passed
 * (--self-exe), else the absolute path this xlat was started by. Started by
 * binfmt_misc, AT_EXECFN is the guest program's: /proc then.
 */
static void find_self(void)
{
    static char self[PATH_MAX];
    const char *fn = (const char *)getauxval(AT_EXECFN);
    ssize_t n;
    if (opt.self_exe) {
        /* --self-exe */
    } else if (!opt.binfmt && fn && fn[0] == '/') {
        opt.self_exe = fn;
    } else if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
        self[n] = '\0';
        opt.self_exe = self;
    } else if (!opt.binfmt && fn && realpath(fn, self)) {
        opt.self_exe = self;           /* a relative path, no /proc */
    }
}

/* Parse options; returns the index of the program argument. */
static int parse_args(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (a[1] == '-' && a[2] != '\0' && strcmp(a, "--interp") && strcmp(a, "--help") &&
            strcmp(a, "--version"))
            a++;                           /* accept --L, --strace ... like qemu */
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        /* Options without a value. */
        if (!strcmp(a, "-h") || !strcmp(a, "-help") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "-version") || !strcmp(a, "--version")) {
            printf("xlat version " XLAT_VERSION " (riscv64 user mode)\n");
            exit(0);
        }
        if (!strcmp(a, "-strace")) {
            opt.strace = true;
            continue;
        }
        if (!strcmp(a, "--interp")) {
            opt.interp_only = true;
            continue;
        }
        if (!strcmp(a, "-perfmap")) {
            opt.perfmap = true;
            continue;
        }
        if (!strcmp(a, "-jitdump")) {
            opt.jitdump = true;
            continue;
        }
        /* Options with a value. */
        if (i + 1 >= argc)
            die("option '%s' needs an argument", a);
        const char *v = argv[++i];
        if (!strcmp(a, "-L"))
            opt.ld_prefix = v;
        else if (!strcmp(a, "-E"))
            env_set(v);
        else if (!strcmp(a, "-U"))
            env_unset(v);
        else if (!strcmp(a, "-0"))
            opt.argv0 = v;
        else if (!strcmp(a, "-s"))
            set_stack_size(v);
        else if (!strcmp(a, "-d"))
            parse_log_items(v);
        else if (!strcmp(a, "-D"))
            set_log_file(v);
        else if (!strcmp(a, "-log-fd"))
            set_log_fd(v);
        else if (!strcmp(a, "-root"))
            path_set_root(v);
        else if (!strcmp(a, "-bind"))
            path_add_bind(v);
        else if (!strcmp(a, "-exec-fd"))
            exec_fd = atoi(v);
        else if (!strcmp(a, "-self-exe"))
            opt.self_exe = v;          /* internal, from sys_exec.c */
        else if (!strcmp(a, "-cpu"))
            set_cpu(v);
        else if (!strcmp(a, "-cache-dir"))
            opt.cache_dir = v;
        else if (!strcmp(a, "-g"))
            set_gdb_port(v);
        else if (!strcmp(a, "-B") || !strcmp(a, "-R"))
            die("%s is not supported: the guest window is fixed (see -h)", a);
        else if (!strcmp(a, "-tune"))
            parse_tune(v);
        else
            die("unknown option '%s' (try -h)", a);
    }
    if (i >= argc) {
        usage(stderr);
        exit(1);
    }
    return i;
}

/*
 * The program to run: the descriptor an exec'ing xlat handed over, or the
 * named file, opened in the guest's view (a guest path under --root).
 * Exits on failure.
 */
static int open_program(const char *name)
{
    int fd = exec_fd;
    if (fd >= 0) {
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
            die("bad --exec-fd for %s", name);
    } else if ((fd = path_open(name, O_RDONLY | O_NONBLOCK)) < 0) {   /* a FIFO: no wait */
        fprintf(stderr, "xlat: %s: %s\n", name, strerror(-fd));
        exit(1);
    }
    return fd;
}

/*
 * -d out_asm in a build without a host disassembler (build/xlat is
 * static-pie and cannot load libcapstone): run xlat-dynamic from the same
 * directory, the same program linked dynamically, with the same arguments
 * and environment. Not when started by binfmt_misc (its program comes as a
 * descriptor and flags only a binfmt start has); the disassembly then says
 * why it is missing.
 */
static void disas_elsewhere(char **argv)
{
    if (!(log_mask & LOG_OUT_ASM) || opt.binfmt || !opt.self_exe || host_disas_available())
        return;
    char self[PATH_MAX], path[PATH_MAX];
    if (!realpath(opt.self_exe, self))                  /* the file, not a link to it */
        return;
    const char *slash = strrchr(self, '/');
    int n = snprintf(path, sizeof path, "%.*s/xlat-dynamic", (int)(slash - self), self);
    if (n > 0 && (size_t)n < sizeof path && strcmp(path, self) != 0)
        execv(path, argv);                 /* returns only if it is not there */
}

int main(int argc, char **argv, char **envp)
{
    locks_single_thread();         /* until a guest thread starts (exec/lock.h) */
    log_file = stderr;
    env_init(envp);
    env_options();
    /* The program's path (AT_EXECFN), and where its argv starts in ours. */
    int argv0 = binfmt_start(argc, argv), prog = argv0 ? 1 : parse_args(argc, argv);
    const char *execfn = argv[prog];
    if (!argv0)
        argv0 = prog;
    find_self();
    disas_elsewhere(argv);
    path_init();
    record_exec_args();
    int prog_fd = open_program(execfn);

    mm_init();
    canary_init();                 /* XLAT_CANARY_CHECK=1 only */
    fault_init();
    if (!opt.interp_only) {
        exec_init();               /* its fork handlers take mm's lock too */
        pcache_init(own_fd_take, opt.cache_dir);
    } else
        pthread_atfork(mm_fork_prepare, mm_fork_parent, mm_fork_child);
    signal_init();

    perfmap_init(opt.perfmap, opt.jitdump, symbols_name);   /* before any mmap */
    GuestImage img;
    char err[256], self[32];
    if (elf_load_fd(prog_fd, execfn, &img, err, sizeof err) < 0) {
        fprintf(stderr, "xlat: %s: %s\n", execfn, err);
        return 1;
    }
    if (perfmap_enabled) {
        snprintf(self, sizeof self, "/proc/self/fd/%d", prog_fd);
        symbols_add_file(self, img.load_bias);
        if (img.interp_base)
            symbols_add_interp(self, opt.ld_prefix, img.interp_base);
    }
    procfs_set_exe(prog_fd, execfn);       /* /proc/self/exe, when asked */

    /* The guest's argv: the program path (binfmt_misc's P: its argv[0]; or
     * -0) and the rest. */
    int guest_argc = argc - argv0;
    char **guest_argv = calloc((size_t)guest_argc + 1, sizeof *guest_argv);
    for (int i = 0; i < guest_argc; i++)
        guest_argv[i] = argv[argv0 + i];
    if (opt.argv0)
        guest_argv[0] = (char *)opt.argv0;

    static CPUState cpu;
    cpu.x[2] = stack_setup(&img, guest_argc, guest_argv, guest_env, execfn, opt.stack_size);
    if (cpu.x[2] == 0)
        return 1;                          /* stack_setup said why */
    procfs_init(guest_argc, guest_argv, cpu.x[2], execfn);
    cpu.pc = img.entry;
    if (opt.gdb_port)
        gdb_init(opt.gdb_port, &cpu);      /* waits for gdb to attach */
    cpu_loop(&cpu);
}
