/*
 * The execution core's per-vCPU state and TB keys, as system mode will use
 * them (issue 17):
 *   - one host thread runs two vCPUs in turn through exec_run, each keeping
 *     its own registers and jump cache;
 *   - vCPUs made and freed by exec_cpu_init/exec_cpu_exit leave no mapping
 *     behind (a hart switch must not leak a jump cache or decode cache);
 *   - TBs are keyed and invalidated by physical address: with a mode whose
 *     code_phys maps a second virtual page onto the first one's physical
 *     page, a store to the physical page drops the translations made
 *     through both virtual pages.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/guest_mem.h"
#include "exec/settings.h"
#include "riscv/cpu.h"
#include "user/fault.h"
#include "user/mm.h"
#include "check.h"

#define CODE  0x10000ULL            /* one page, RWX */
#define ALIAS 0x20000ULL            /* one page, RWX: "physically" CODE */
#define ECALL 0x00000073u

static uint32_t addi(int rd, int rs1, int imm)
{
    return (uint32_t)(imm & 0xfff) << 20 | (uint32_t)rs1 << 15 | (uint32_t)rd << 7 | 0x13;
}

static void put_code(uint64_t at, const uint32_t *w, size_t n)
{
    memcpy(g2h(at), w, n * 4);      /* a watched page: through the SMC fault path */
}

/* Run cpu from pc to its ecall. */
static enum exit_reason run_at(CPUState *cpu, uint64_t pc)
{
    cpu->pc = pc;
    return exec_run(cpu);
}

/* The process's mapped size in KiB (VmSize). */
static long vm_size_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static void test_two_vcpus_one_thread(void)
{
    const uint32_t prog[] = { addi(10, 10, 1), addi(11, 11, 3), ECALL };
    put_code(CODE, prog, 3);
    static CPUState a, b;
    exec_cpu_init(&a);
    exec_cpu_init(&b);
    b.x[10] = 1000;
    for (int i = 0; i < 500; i++) {
        CHECK_EQ(run_at(&a, CODE), EXIT_ECALL);
        CHECK_EQ(run_at(&b, CODE), EXIT_ECALL);
    }
    CHECK_EQ(a.x[10], 500);
    CHECK_EQ(a.x[11], 1500);
    CHECK_EQ(b.x[10], 1500);
    CHECK_EQ(b.x[11], 1500);
    CHECK_EQ(a.pc, CODE + 8);
    CHECK(a.jc != b.jc && a.jc && b.jc);
    exec_cpu_exit(&a);
    exec_cpu_exit(&b);
    CHECK(a.jc == NULL && a.dcache == NULL);
}

static void test_no_leak(void)
{
    static CPUState c;
    const uint32_t prog[] = { addi(10, 0, 7), ECALL };
    put_code(CODE, prog, 2);
    exec_cpu_init(&c);                  /* warm up: libc buffers, page lists */
    run_at(&c, CODE);
    exec_cpu_exit(&c);
    long before = vm_size_kb();
    for (int i = 0; i < 300; i++) {
        exec_cpu_init(&c);
        CHECK_EQ(run_at(&c, CODE), EXIT_ECALL);
        CHECK_EQ(c.x[10], 7);
        exec_cpu_exit(&c);
    }
    long after = vm_size_kb();
    if (before < 0 || after > before + 4096) {
        printf("FAIL: %ld KiB mapped after 300 vCPUs came and went, %ld KiB before\n", after,
               before);
        failures++;
    }
}

/*
 * A mode like user mode, but ALIAS's page is CODE's physical page: both
 * guest pages are host views of one memfd (and a third view, shared_view,
 * writes behind the watch), and code_phys says so.
 */
static GuestMemOps alias_ops;
static uint8_t *shared_view;

static void map_alias(void)
{
    int fd = memfd_create("alias", 0);
    if (fd < 0 || ftruncate(fd, GUEST_PAGE_SIZE) != 0 ||
        mmap(g2h(CODE), GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
            == MAP_FAILED ||
        mmap(g2h(ALIAS), GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
            == MAP_FAILED ||
        (shared_view = mmap(NULL, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
            == MAP_FAILED) {
        printf("FAIL: alias mappings\n");
        exit(1);
    }
    close(fd);
    /* As mm.c does when it replaces a mapping: forget translations and watches. */
    exec_invalidate_range(CODE, GUEST_PAGE_SIZE);
    exec_invalidate_range(ALIAS, GUEST_PAGE_SIZE);
}

static bool alias_phys(const CPUState *cpu, uint64_t addr, uint64_t *phys)
{
    (void)cpu;
    *phys = addr >= ALIAS && addr < ALIAS + GUEST_PAGE_SIZE ? addr - ALIAS + CODE : addr;
    return true;
}

static void test_physical_keys(void)
{
    map_alias();
    const GuestMemOps *user_ops = guest_mem.ops;
    alias_ops = *user_ops;
    alias_ops.code_phys = alias_phys;
    guest_mem.ops = &alias_ops;

    static CPUState c;
    exec_cpu_init(&c);
    const uint32_t one[] = { addi(10, 0, 1), ECALL }, two[] = { addi(10, 0, 2), ECALL };
    put_code(CODE, one, 2);             /* ALIAS shows the same bytes (main) */
    CHECK_EQ(run_at(&c, CODE), EXIT_ECALL);
    CHECK_EQ(c.x[10], 1);
    CHECK_EQ(run_at(&c, ALIAS), EXIT_ECALL);
    CHECK_EQ(c.x[10], 1);
    CHECK_EQ(c.pc, ALIAS + 4);

    /* A store through CODE, the physical page's watched view, drops the
     * block translated at ALIAS too: it is on the physical page's list. */
    put_code(CODE, two, 2);
    CHECK_EQ(run_at(&c, ALIAS), EXIT_ECALL);
    CHECK_EQ(c.x[10], 2);

    /* exec_invalidate_code by physical range, likewise (the bytes change
     * behind the core's back, through a second host view). */
    memcpy(shared_view, one, sizeof one);
    exec_invalidate_code(CODE, 8);
    CHECK_EQ(run_at(&c, ALIAS), EXIT_ECALL);
    CHECK_EQ(c.x[10], 1);

    exec_cpu_exit(&c);
    guest_mem.ops = user_ops;
}

int main(void)
{
    tune.first_interp = false;          /* every run is translated code */
    log_file = stdout;
    mm_init();
    fault_init();
    exec_init();
    if (guest_map_fixed(CODE, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, "code") != 0 ||
        guest_map_fixed(ALIAS, GUEST_PAGE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, "alias") != 0) {
        printf("FAIL: guest_map_fixed\n");
        return 1;
    }
    test_two_vcpus_one_thread();
    test_no_leak();
    test_physical_keys();
    printf("test_vcpus: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
