/*
 * Self-modifying code under the JIT: a function's code rewritten and run
 * again (with fence.i, and without it on another page), executed after
 * mprotect(PROT_READ) (SIGSEGV), and replaced by munmap + mmap of new code
 * at the same address. Each step prints what the code returned.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef long (*fn_t)(long);

/* addi a0, a0, imm ; ret */
static void emit_addi_ret(uint32_t *p, int imm)
{
    p[0] = ((uint32_t)imm & 0xfff) << 20 | 10 << 15 | 10 << 7 | 0x13;
    p[1] = 0x00008067;
}

static sigjmp_buf jb;
static void on_segv(int sig) { siglongjmp(jb, sig); }

int main(void)
{
    long sum = 0;
    uint32_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fn_t f = (fn_t)page;

    /* Rewritten with fence.i, many times (the old translation must go). */
    for (int i = 0; i < 200; i++) {
        emit_addi_ret(page, i);
        __asm__ volatile("fence.i" ::: "memory");
        sum += f(1000);
    }
    printf("rewrite + fence.i: %ld\n", sum);

    /* Rewritten without fence.i, code on the second page, called from a
     * loop on this page's first function (qemu detects the store). */
    uint32_t *p2 = page + 1024;
    fn_t g = (fn_t)p2;
    sum = 0;
    for (int i = 0; i < 200; i++) {
        emit_addi_ret(p2, 3 * i);
        __asm__ volatile("" ::: "memory");
        sum += g(1);
    }
    printf("rewrite, no fence.i, other page: %ld\n", sum);

    /* A data write into the same page as running code. */
    emit_addi_ret(page, 7);
    __asm__ volatile("fence.i" ::: "memory");
    page[100] = 12345;
    printf("write beside code: %ld %u\n", f(1), page[100]);

    /* Not executable any more: SIGSEGV, reported at the function. */
    signal(SIGSEGV, on_segv);
    mprotect(page, 8192, PROT_READ);
    int sig = sigsetjmp(jb, 1);
    if (sig == 0) {
        f(1);
        printf("mprotect(PROT_READ): call returned?!\n");
    } else {
        printf("mprotect(PROT_READ): signal %d\n", sig);
    }

    /* munmap, then new code mapped at the same address. */
    munmap(page, 8192);
    uint32_t *again = mmap(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    emit_addi_ret(again, 99);
    __asm__ volatile("fence.i" ::: "memory");
    printf("munmap + mmap new code: %ld\n", ((fn_t)again)(1));

    /* Code loaded by read() into an executable page (a host syscall writes it). */
    int fds[2];
    pipe(fds);
    uint32_t code[2];
    emit_addi_ret(code, 42);
    write(fds[1], code, sizeof code);
    f = (fn_t)again;
    f(0);                                   /* translate the old code first */
    ssize_t n = read(fds[0], again, sizeof code);
    __asm__ volatile("fence.i" ::: "memory");
    printf("read() into code: %zd bytes, %ld\n", n, f(0));
    return 0;
}
