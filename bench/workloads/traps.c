// bench/system's trap-path workload: an S-mode payload (-bios default, or
// under firmware) built with tests/system's start.S and lib.c. It times,
// with the time CSR, N SBI calls (BASE get_spec_version: the cheapest
// call) and N ecalls from U-mode into an S-mode handler that steps over
// them and srets (the shape of a guest system call), and prints
//   sbi-calls N TICKS
//   u-ecalls N TICKS
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

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    uint64_t t0 = rdtime();
    for (long i = 0; i < N; i++)
        sbi_call(0x10, 0, 0, 0, 0);
    uint64_t t1 = rdtime();
    put_str("sbi-calls ");
    put_dec(N);
    put_str(" ");
    put_dec(t1 - t0);
    put_str("\n");
    t0 = rdtime();
    run_u_loop(N);
    t1 = rdtime();
    put_str("u-ecalls ");
    put_dec(N);
    put_str(" ");
    put_dec(t1 - t0);
    put_str("\n");
}
