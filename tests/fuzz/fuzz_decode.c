/*
 * libFuzzer target: random instruction bytes through the decoder, the
 * disassembler, the translator and the translated code.
 *
 * The input becomes guest code at CODE (the rest of the page is ecalls);
 * every 16-bit offset of it is decoded and disassembled, then the JIT runs
 * from its first byte (exec_run: translate, chain, run) until the first
 * exit (ecall, fault, illegal instruction, or an exit request). Registers
 * point into a data page, so loads and stores mostly hit memory; code that
 * loops is stopped by a watchdog thread that asks the CPU to exit
 * (exec_kick) once a run has taken 50 ms, so an exit poll missing from a
 * cycle shows as a hang (libFuzzer -timeout). Translation must never crash,
 * hang or overflow; ASan watches xlat's heap.
 * Built and run by tests/fuzz.sh.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "riscv/cpu.h"
#include "riscv/insn.h"
#include "user/fault.h"
#include "user/mm.h"
#include "user/options.h"

__attribute__((weak)) Options opt;

#define CODE     0x10000ULL
#define CODE_LEN 0x2000ULL          /* two pages: blocks may cross */
#define DATA     0x40000ULL
#define DATA_LEN 0x2000ULL
#define ECALL    0x00000073u
#define MAX_CODE 2048

static CPUState cpu;
static volatile uint64_t run_start_ns;   /* 0: not running */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(5000);
        uint64_t t0 = run_start_ns;
        if (t0 && now_ns() - t0 > 50000000u) {
            __atomic_store_n(&cpu.exit_request, 1, __ATOMIC_SEQ_CST);
            exec_kick(&cpu);
        }
    }
    return NULL;
}

static void fill_ecalls(uint64_t ga, uint64_t len)
{
    static uint32_t ecalls[GUEST_PAGE_SIZE / 4];
    if (!ecalls[0])
        for (size_t i = 0; i < GUEST_PAGE_SIZE / 4; i++)
            ecalls[i] = ECALL;
    for (uint64_t a = ga; a < ga + len; a += GUEST_PAGE_SIZE)
        if (memcmp(g2h(a), ecalls, sizeof ecalls))
            memcpy(g2h(a), ecalls, sizeof ecalls);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    log_file = stderr;
    mm_init();
    fault_init();
    exec_init();
    if (guest_map_fixed(CODE, CODE_LEN, PROT_READ | PROT_WRITE | PROT_EXEC, "code") != 0 ||
        guest_map_fixed(DATA, DATA_LEN, PROT_READ | PROT_WRITE, "data") != 0) {
        fprintf(stderr, "guest_map_fixed failed\n");
        abort();
    }
    fill_ecalls(CODE, CODE_LEN);
    exec_cpu_init(&cpu);
    pthread_t t;
    pthread_create(&t, NULL, watchdog, NULL);
    return 0;
}

static void decode_all(const uint8_t *data, size_t size)
{
    char text[128];
    for (size_t off = 0; off + 2 <= size; off += 2) {
        uint32_t w = data[off] | (uint32_t)data[off + 1] << 8;
        if (off + 4 <= size)
            w |= (uint32_t)data[off + 2] << 16 | (uint32_t)data[off + 3] << 24;
        Insn in;
        if ((w & 3) != 3)
            w &= 0xffff;
        if (insn_decode(w, &in)) {
            int n = insn_disasm(&in, CODE + off, text, sizeof text);
            if (n < 0 || memchr(text, '\0', sizeof text) == NULL)
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_CODE)
        size = MAX_CODE;
    decode_all(data, size);

    /* Host writes to pages holding translated code go through the JIT's
     * self-modifying-code path, which invalidates what they touch. */
    fill_ecalls(CODE, CODE_LEN);
    memcpy(g2h(CODE), data, size);
    memset(g2h(DATA), 0x5a, DATA_LEN);

    /* The architectural state afresh; the JIT's fields (jump cache...)
     * stay with the CPU. */
    memset(cpu.x, 0, sizeof cpu.x);
    memset(cpu.f, 0, sizeof cpu.f);
    cpu.fflags = cpu.frm = 0;
    cpu.res_valid = false;
    __atomic_store_n(&cpu.exit_request, 0, __ATOMIC_SEQ_CST);
    for (int i = 1; i < 32; i++)
        cpu.x[i] = DATA + 0x800 + (uint64_t)i * 8;
    cpu.pc = CODE;
    run_start_ns = now_ns();
    enum exit_reason r = exec_run(&cpu);
    run_start_ns = 0;
    if (r == EXIT_NONE || r > EXIT_REQUEST)
        abort();
    if (cpu.x[0] != 0)
        abort();
    return 0;
}
