/*
 * Hazard: one thread keeps rewriting an aligned 32-bit instruction that
 * another thread is executing, between `jal x0, -4` (back to the fence.i
 * before it) and a nop (on to a flag check). Both are fine to run; a fetch
 * that sees one half of each gets `jal x0, +0xf000` and jumps into nothing.
 * Hardware fetches an aligned instruction in one piece, so must xlat (the
 * interpreter fetches every time; the JIT write-protects translated code).
 */
// xlat-cflags: -pthread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define FLIPS 20000
#define INSN_FENCE_I 0x0000100fu
#define INSN_NOP     0x00000013u
#define INSN_JAL_M4  0xffdff06fu        /* jal x0, -4 */

static uint32_t *code;
static volatile int stop, started;

static void *spinner(void *arg)
{
    (void)arg;
    started = 1;
    /* a0 = &stop; returns the number of passes through the flag check */
    long n = ((long (*)(volatile int *))(uintptr_t)code)(&stop);
    return (void *)n;
}

int main(void)
{
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 1;
    int n = 0;
    code[n++] = 0x00050593;             /* 0:  mv a1, a0 */
    code[n++] = 0x00000513;             /* 4:  li a0, 0 */
    code[n++] = INSN_FENCE_I;           /* 8:  fence.i */
    code[n++] = INSN_JAL_M4;            /* 12: the flipping instruction */
    code[n++] = 0x0005a283;             /* 16: lw t0, 0(a1) */
    code[n++] = 0x00150513;             /* 20: addi a0, a0, 1 */
    code[n++] = 0xfe0288e3;             /* 24: beqz t0, 8 (-16) */
    code[n++] = 0x00008067;             /* 28: ret */
    __builtin___clear_cache((char *)code, (char *)(code + n));

    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    while (!started)
        ;
    for (int i = 0; i < FLIPS; i++) {
        code[3] = i & 1 ? INSN_JAL_M4 : INSN_NOP;
        __builtin___clear_cache((char *)(code + 3), (char *)(code + 4));
    }
    code[3] = INSN_NOP;
    __builtin___clear_cache((char *)(code + 3), (char *)(code + 4));
    stop = 1;
    void *passes;
    pthread_join(t, &passes);
    printf("spinner survived %d rewrites of its instruction: %s\n", FLIPS,
           (long)passes > 0 ? "yes" : "no");
    return 0;
}
