/*
 * vfork semantics: the parent is suspended until the child execs or exits,
 * and then sees every write the child made to memory until then -- the
 * channel posix_spawn reports a failed execve through (ENOENT, EACCES),
 * and what vfork(), clone(CLONE_VM|CLONE_VFORK) and clone(CLONE_VFORK)
 * without CLONE_VM promise. The child's writes here: globals, its stack
 * (the parent's, with vfork), the heap, by the kernel (read, readv), and
 * around another thread of the parent writing the same page.
 *
 * Reference: this same program built for the host (tests/native.sh);
 * qemu-riscv64 runs vfork as a plain fork and fails most of this.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile int g_value;
static volatile int g_errno;
static volatile int g_flag;
static char g_buf[2][8192];
static volatile unsigned char g_page[4096] __attribute__((aligned(4096)));
static int sync_to_thread[2], sync_to_child[2];

static const char *self;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reap pid: "exit N" or "signal N". Callers wait before they print, so
 * an exec'd child's output always comes first. */
static const char *reap(pid_t pid)
{
    static char buf[64];
    int st;
    if (waitpid(pid, &st, 0) != pid)
        snprintf(buf, sizeof buf, "waitpid failed");
    else if (WIFEXITED(st))
        snprintf(buf, sizeof buf, "exit %d", WEXITSTATUS(st));
    else
        snprintf(buf, sizeof buf, "signal %d", WTERMSIG(st));
    return buf;
}

static void spawn_errors(void)
{
    char *argv[] = { "x", NULL };
    pid_t pid;
    int r = posix_spawn(&pid, "/nonexistent/program", NULL, NULL, argv, environ);
    printf("posix_spawn of a missing file: %s\n", strerror(r));
    int fd = open("not-executable", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, "#!/bin/sh\n", 10) != 10)
            printf("write failed\n");
        close(fd);
    }
    r = posix_spawn(&pid, "not-executable", NULL, NULL, argv, environ);
    printf("posix_spawn of a non-executable file: %s\n", strerror(r));
    mkdir("a-directory", 0755);
    r = posix_spawn(&pid, "a-directory", NULL, NULL, argv, environ);
    printf("posix_spawn of a directory: %s\n", strerror(r));
    setenv("PATH", "/nonexistent:/nonexistent2", 1);
    r = posix_spawnp(&pid, "xlat-no-such-program", NULL, NULL, argv, environ);
    printf("posix_spawnp of a missing name: %s\n", strerror(r));
    char *ok_argv[] = { (char *)self, "child", "spawned", NULL };
    r = posix_spawn(&pid, self, NULL, NULL, ok_argv, environ);
    printf("posix_spawn of this program: %s, %s\n", strerror(r), r ? "-" : reap(pid));
}

static void vfork_writes(void)
{
    volatile int on_stack = 1;
    size_t heap_len = 1 << 20;
    unsigned char *heap = malloc(heap_len);
    memset(heap, 'a', heap_len);
    g_value = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        g_value = 42;
        on_stack = 7;
        heap[0] = 'b';                   /* a single byte */
        heap[5000] = 'c';
        memset(heap + 65536 + 100, 'd', 3 * 4096);   /* runs across pages */
        heap[heap_len - 1] = 'e';
        _exit(3);
    }
    size_t d = 0;
    for (size_t i = 0; i < heap_len; i++)
        d += heap[i] == 'd';
    printf("vfork: global %d, stack %d, heap %c %c %zu %c (%c); %s\n", g_value, on_stack,
           heap[0], heap[5000], d, heap[heap_len - 1], heap[1], reap(pid));
    free(heap);
}

static void vfork_exec_fails(void)
{
    g_errno = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        char *argv[] = { "x", NULL };
        execve("/nonexistent/program", argv, environ);
        g_errno = errno;
        _exit(127);
    }
    int e = g_errno;
    printf("vfork, failed execve: errno %s; %s\n", strerror(e), reap(pid));
}

static void vfork_waits(void)
{
    g_flag = 0;
    double t0 = now();
    pid_t pid = vfork();
    if (pid == 0) {
        sleep_ms(200);
        g_flag = 1;
        _exit(0);
    }
    int flag = g_flag;
    const char *waited = now() - t0 > 0.15 ? "yes" : "no";
    printf("vfork: flag %d right after, waited %s; %s\n", flag, waited, reap(pid));
}

/* The second execve works: the errno of the first is already the parent's. */
static void vfork_exec_succeeds(void)
{
    g_flag = 0;
    g_errno = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        char *bad[] = { "x", NULL };
        execve("/nonexistent/program", bad, environ);
        g_errno = errno;
        sleep_ms(100);
        g_flag = 1;
        char *argv[] = { (char *)self, "child", "exec'd", NULL };
        execve(self, argv, environ);
        _exit(126);
    }
    int flag = g_flag, e = g_errno;
    const char *st = reap(pid);
    printf("vfork, execve: parent resumed with flag %d, first errno %s; %s\n", flag,
           strerror(e), st);
}

/* The kernel writes for the child: read into a global, readv into a buffer
 * of its own mapping, reached only through the iovecs. */
static void vfork_kernel_writes(void)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    if (write(p[1], "through-read|first-iov|second-iov", 34) != 34)
        printf("write failed\n");
    memset(g_buf, 0, sizeof g_buf);
    char *big = calloc(1, 1 << 20);   /* mmap'd by malloc: a mapping of its own */
    volatile ssize_t n1 = 0, n2 = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        n1 = read(p[0], g_buf[0] + 4090, 13);     /* across a page boundary */
        struct iovec iov[2] = { { big + 100, 10 }, { big + 900000, 11 } };
        n2 = readv(p[0], iov, 2);
        _exit(0);
    }
    printf("vfork, read: %zd [%.13s]; readv: %zd [%.10s] [%.11s]; %s\n", n1, g_buf[0] + 4090,
           n2, big + 100, big + 900000, reap(pid));
    free(big);
    close(p[0]);
    close(p[1]);
}

/* The vfork child vforks (its child's writes reach the grandparent too) and
 * forks (that child's stay its own). */
static void vfork_nested(void)
{
    static volatile int by_child, by_grandchild, by_forked;
    by_child = by_grandchild = by_forked = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        pid_t g = vfork();
        if (g == 0) {
            by_grandchild = 2;
            _exit(0);
        }
        int st;
        waitpid(g, &st, 0);
        pid_t f = fork();
        if (f == 0) {
            by_forked = 3;
            _exit(0);
        }
        waitpid(f, &st, 0);
        by_child = by_grandchild + 1;
        _exit(4);
    }
    printf("vfork in a vfork child: %d %d %d; %s\n", by_child, by_grandchild, by_forked, reap(pid));
}

/* Another thread of the parent writes the page the child writes, meanwhile. */
static void *page_writer(void *arg)
{
    char c;
    (void)arg;
    if (read(sync_to_thread[0], &c, 1) == 1) {
        g_page[100] = 'T';
        if (write(sync_to_child[1], "k", 1) != 1)
            return NULL;
    }
    return NULL;
}

static void vfork_shared_page(void)
{
    pthread_t th;
    memset((void *)g_page, '.', sizeof g_page);
    if (pipe(sync_to_thread) != 0 || pipe(sync_to_child) != 0 ||
        pthread_create(&th, NULL, page_writer, NULL) != 0)
        return;
    pid_t pid = vfork();
    if (pid == 0) {
        char c;
        g_page[0] = 'C';
        if (write(sync_to_thread[1], "g", 1) != 1 || read(sync_to_child[0], &c, 1) != 1)
            _exit(1);
        g_page[4095] = 'C';
        _exit(0);
    }
    pthread_join(th, NULL);
    printf("vfork, another thread on the page: %c %c %c %c; %s\n", g_page[0], g_page[100],
           g_page[4095], g_page[200], reap(pid));
}

/* Code the parent ran (xlat: translated, its page write-protected) is
 * rewritten by the child: the parent runs the new code. */
typedef int (*int_fn)(void);

static void put_code(unsigned char *p, int value)
{
#if defined(__x86_64__)
    p[0] = 0xb8;                                   /* mov $value, %eax */
    memcpy(p + 1, &value, 4);
    p[5] = 0xc3;                                   /* ret */
#elif defined(__riscv)
    unsigned insn[2] = { ((unsigned)value << 20) | (10u << 7) | 0x13,   /* li a0, value */
                         0x00008067 };                                  /* ret */
    memcpy(p, insn, sizeof insn);
#endif
    __builtin___clear_cache((char *)p, (char *)p + 16);
}

static void vfork_code(void)
{
#if defined(__x86_64__) || defined(__riscv)
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        printf("mmap of code failed\n");
        return;
    }
    int_fn fn = (int_fn)(void *)code;
    put_code(code, 1);
    volatile int before = 0, in_child = 0;
    for (int i = 0; i < 10000; i++)       /* hot: translated */
        before = fn();
    pid_t pid = vfork();
    if (pid == 0) {
        put_code(code, 2);
        for (int i = 0; i < 10000; i++)
            in_child = fn();
        code[100] = 'x';
        _exit(0);
    }
    __builtin___clear_cache((char *)code, (char *)code + 16);
    int after = fn();
    printf("vfork, code: %d, child %d, parent after %d, data %c; %s\n", before, in_child, after,
           code[100], reap(pid));
    munmap(code, 4096);
#else
    printf("vfork, code: 1, child 2, parent after 2, data x; exit 0\n");
#endif
}

/* clone(CLONE_VM|CLONE_VFORK) on a stack of its own, and the child's exit (not exit_group). */
static int clone_child(void *arg)
{
    int *shared = arg;
    sleep_ms(100);
    shared[0] = 1234;
    shared[1] = (int)getppid() == (int)shared[2];
    g_value = 99;
    return 5;
}

static int clone_child_nomem(void *arg)
{
    (void)arg;
    sleep_ms(200);
    g_flag = 1;
    return 6;
}

static void clone_vfork(void)
{
    size_t size = 256 * 1024;
    char *stack = malloc(size);
    int shared[3] = { 0, 0, (int)getpid() };
    g_value = 0;
    pid_t pid = clone(clone_child, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, shared);
    printf("clone(CLONE_VM|CLONE_VFORK): %d %d, global %d; %s\n", shared[0], shared[1], g_value,
           reap(pid));

    g_flag = 0;
    double t0 = now();
    pid = clone(clone_child_nomem, stack + size, CLONE_VFORK | SIGCHLD, NULL);
    int flag = g_flag;
    const char *waited = now() - t0 > 0.15 ? "yes" : "no";
    printf("clone(CLONE_VFORK) without CLONE_VM: flag %d, waited %s; %s\n", flag, waited,
           reap(pid));
    free(stack);
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 1 && !strcmp(argv[1], "child")) {
        printf("  child runs: %s\n", argc > 2 ? argv[2] : "-");
        return 9;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    spawn_errors();
    vfork_writes();
    vfork_exec_fails();
    vfork_waits();
    vfork_exec_succeeds();
    vfork_kernel_writes();
    vfork_shared_page();
    vfork_nested();
    vfork_code();
    clone_vfork();
    return 0;
}
