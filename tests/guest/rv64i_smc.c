/*
 * Self-modifying code: a function in an RWX mapping is rewritten (then
 * fence.i) many times, with different immediates and with a 32-bit
 * instruction replaced by two compressed ones at the same address; each
 * version must run as written. Also a page that is unmapped after its
 * code ran and remapped with different code.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef long (*fn_t)(long);

static void flush(void) { __asm__ volatile("fence.i" ::: "memory"); }

/* addi a0, a0, imm */
static uint32_t addi_a0(int imm) { return 0x00050513u | ((uint32_t)imm & 0xfff) << 20; }
#define RET 0x00008067u

int main(void)
{
    uint32_t *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        printf("mmap failed\n");
        return 1;
    }
    fn_t f = (fn_t)(uintptr_t)code;
    long total = 0;
    for (int i = -300; i < 300; i += 7) {
        code[0] = addi_a0(i);
        code[1] = addi_a0(i * 2);
        code[2] = RET;
        flush();
        long r = f(1000);
        total += r;
        if ((i + 300) % 49 == 0)
            printf("i=%d -> %ld\n", i, r);
    }
    printf("total %ld\n", total);

    /* 32-bit addi replaced by c.addi a0,5 + c.addi a0,-3 (0x0515, 0x1575) */
    code[0] = addi_a0(100);
    code[1] = RET;
    flush();
    printf("32-bit: %ld\n", f(1));
    uint16_t pair[2] = { 0x0515, 0x1575 };
    memcpy(code, pair, 4);
    flush();
    printf("compressed pair: %ld\n", f(1));

    /* unmap and map again at the same place with other code */
    munmap(code, 8192);
    uint32_t *again = mmap(code, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    again[0] = addi_a0(-7);
    again[1] = RET;
    flush();
    printf("remapped: %ld\n", f(1));
    return 0;
}
