/*
 * Code rewritten through a second mapping of the same memory (a memfd
 * mapped writable and, elsewhere, executable, as JITs with W^X do): no
 * store touches the executable page, so only fence.i tells xlat that its
 * translation is stale. The fence.i here is in code that runs once, which
 * xlat interprets (--tune first-interp): the interpreted fence.i must drop
 * the translations as a translated one does. qemu-riscv64 7.2 runs the
 * stale code here. Self-checking: prints ALL OK.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef long (*fn_t)(long);

/* addi a0, a0, imm ; ret */
static void emit_addi_ret(uint32_t *p, int imm)
{
    p[0] = ((uint32_t)imm & 0xfff) << 20 | 10 << 15 | 10 << 7 | 0x13;
    p[1] = 0x00008067;
}

/* A fresh fence.i each time: each copy runs once. */
#define FENCE_ONCE(n) static __attribute__((noinline)) void fence_##n(void) \
    { __asm__ volatile("fence.i" ::: "memory"); }
FENCE_ONCE(0) FENCE_ONCE(1) FENCE_ONCE(2) FENCE_ONCE(3) FENCE_ONCE(4)
static void (*const fences[])(void) = { fence_0, fence_1, fence_2, fence_3, fence_4 };

int main(void)
{
    int fd = memfd_create("code", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("memfd");
        return 1;
    }
    uint32_t *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    fn_t rx = (fn_t)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    if (rw == MAP_FAILED || (void *)rx == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    int bad = 0;
    for (int round = 0; round < 5; round++) {
        emit_addi_ret(rw, 10 * (round + 1));
        fences[round]();
        for (int i = 0; i < 8; i++) {       /* runs enough to be translated */
            long got = rx(1);
            if (got != 1 + 10 * (round + 1)) {
                printf("round %d call %d: got %ld, want %d\n", round, i, got, 1 + 10 * (round + 1));
                bad = 1;
                break;
            }
        }
    }
    puts(bad ? "FAILED" : "ALL OK");
    return bad;
}
