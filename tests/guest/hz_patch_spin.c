/*
 * Hazard: one thread patches the block another thread is spinning in.
 * The spinner runs generated code `1: [fence.i;] j 1b; li a0, 42; ret`;
 * the writer replaces the `j` with a nop and calls __builtin___clear_cache
 * (fence.i + the riscv_flush_icache syscall, which Linux makes reach every
 * hart). The spinner must see the new code and return 42, both with a
 * fence.i in its loop (what the RISC-V spec asks of the consumer) and
 * without one (Linux's flush_icache reaches all harts anyway). A stuck
 * spinner fails after 10 seconds. (Under xlat each fence.i flushes the
 * whole code cache, so the fence.i spinner can take seconds under load.)
 */
// xlat-cflags: -pthread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define INSN_FENCE_I 0x0000100fu
#define INSN_NOP     0x00000013u
#define INSN_RET     0x00008067u
#define INSN_LI_A0_42 ((42u << 20) | (10 << 7) | 0x13)

static uint32_t *code;
static volatile int spinning, result;

static uint32_t jal_x0(int off)            /* jal x0, off */
{
    uint32_t u = (uint32_t)off;
    return (((u >> 20) & 1) << 31) | (((u >> 1) & 0x3ff) << 21) | (((u >> 11) & 1) << 20) |
           (((u >> 12) & 0xff) << 12) | 0x6f;
}

static void *spinner(void *arg)
{
    (void)arg;
    spinning = 1;
    result = (int)((long (*)(void))(uintptr_t)code)();
    return NULL;
}

static int run(int with_fence)
{
    int n = 0;
    if (with_fence)
        code[n++] = INSN_FENCE_I;
    int jpos = n;
    code[n++] = jal_x0(with_fence ? -4 : 0);
    code[n++] = INSN_LI_A0_42;
    code[n++] = INSN_RET;
    __builtin___clear_cache((char *)code, (char *)(code + n));
    spinning = 0;
    result = 0;
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    while (!spinning)
        usleep(1000);
    usleep(50000);                         /* let it run in the translated loop */
    code[jpos] = INSN_NOP;
    __builtin___clear_cache((char *)(code + jpos), (char *)(code + jpos + 1));
    for (int ms = 0; ms < 10000 && result == 0; ms++)
        usleep(1000);
    if (result != 42) {
        printf("spinner %s fence.i never saw the patch\n", with_fence ? "with" : "without");
        fflush(stdout);
        _exit(1);
    }
    pthread_join(t, NULL);
    printf("spinner %s fence.i left the loop: %d\n", with_fence ? "with" : "without", result);
    return 0;
}

int main(void)
{
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    run(1);
    run(0);
    return 0;
}
