// bench/system's trap-path workload: an S-mode payload (-bios default, or
// under firmware) built with tests/system's start.S and lib.c. It times,
// with the time CSR, N SBI calls (BASE get_spec_version: the cheapest
// call) and N ecalls from U-mode into an S-mode handler that steps over
// them and srets (the shape of a guest system call), and N loads under Sv39
// that miss a TLB of 2^8 entries (direct mapped by page, as QEMU's and
// xlat's are): two pages 1 MiB apart in turn (each miss a victim-TLB hit)
// and ten (each a page-table walk); and prints
//   sbi-calls N TICKS
//   u-ecalls N TICKS
//   tlb-victim N TICKS
//   tlb-walk N TICKS
// (ticks of the 10 MHz timebase) for the harness to turn into rates.
#include "sys.h"

#define N 200000L

extern void u_loop(void);               /* N ecalls, then ecall with a7 = 1 */
extern void fast_vector(void);          /* steps over U's ecalls, srets */
extern void u_return(void);             /* where the a7 = 1 ecall lands */

__asm__(".align 4\n"
        "fast_vector:\n"
        "    bnez a7, 1f\n"
        "    csrr t0, sepc\n"
        "    addi t0, t0, 4\n"
        "    csrw sepc, t0\n"
        "    sret\n"
        "1:  la t0, u_return\n"
        "    csrw sepc, t0\n"
        "    li t0, 0x100\n"               /* SPP = S: back to S */
        "    csrs sstatus, t0\n"
        "    sret\n"
        "u_loop:\n"
        "    li a7, 0\n"
        "2:  ecall\n"
        "    addi t1, t1, -1\n"
        "    bnez t1, 2b\n"
        "    li a7, 1\n"
        "    ecall\n");

/* Runs u_loop in U-mode with t1 = n and comes back (callee-saved registers
 * survive: neither u_loop nor the vector touches them). */
static void run_u_loop(long n)
{
    uint64_t saved_stvec = csr_read(stvec);
    csr_write(stvec, (uint64_t)(uintptr_t)fast_vector);
    csr_write(sepc, (uint64_t)(uintptr_t)u_loop);
    csr_clear(sstatus, 0x100);              /* SPP = U */
    register long t1 asm("t1") = n;
    asm volatile("sret\n"
                 ".globl u_return\n"
                 "u_return:\n"
                 : "+r"(t1) : : "t0", "a7", "memory");
    csr_write(stvec, saved_stvec);
}

/* Page k of the TLB loops at VA_TLB + k MiB: one index of a 2^8 table. */
#define VA_TLB 0x200000000UL
#define TLB_PAGES 10

/* n loads, one from each of pages pages in turn. */
static uint64_t tlb_loop(long n, int pages)
{
    uint64_t sum = 0;
    for (long i = 0; i < n; i += pages)
        for (int k = 0; k < pages; k++)
            sum += *(volatile uint64_t *)(VA_TLB + ((uint64_t)k << 20));
    return sum;
}

static void report(const char *what, uint64_t ticks)
{
    put_str(what);
    put_str(" ");
    put_dec(N);
    put_str(" ");
    put_dec(ticks);
    put_str("\n");
}

static void time_tlb_misses(void)
{
    uint64_t *root = pt_identity(3);
    for (int k = 0; k < TLB_PAGES; k++)
        pt_map(root, 3, VA_TLB + ((uint64_t)k << 20), (uint64_t)(uintptr_t)test_pages[k],
               PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 0);
    csr_write(satp, satp_of(SATP_SV39, root));
    sfence_vma();
    const int pages[2] = { 2, TLB_PAGES };
    const char *names[2] = { "tlb-victim", "tlb-walk" };
    for (int c = 0; c < 2; c++) {
        tlb_loop(1000, pages[c]);               /* translated, the TLB warm */
        uint64_t t0 = rdtime();
        tlb_loop(N, pages[c]);
        report(names[c], rdtime() - t0);
    }
    csr_write(satp, 0);
    sfence_vma();
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    uint64_t t0 = rdtime();
    for (long i = 0; i < N; i++)
        sbi_call(0x10, 0, 0, 0, 0);
    report("sbi-calls", rdtime() - t0);
    t0 = rdtime();
    run_u_loop(N);
    report("u-ecalls", rdtime() - t0);
    time_tlb_misses();
}
