/*
 * A guest access in translated code faulted in host memory (user mode's
 * SIGSEGV handler calls this before its longjmp): put the guest registers
 * and the exact pc of the faulting instruction into the vCPU, from the
 * host registers in the signal's ucontext. The TB is found by binary search
 * over the TB array (in host-address order), the instruction by the TB's
 * pcmap (host offset -> guest offset of each instruction); translated code
 * keeps every guest register in its home at instruction boundaries
 * (riscv/translate.c), so only the mapped ones need reading.
 */
#define _GNU_SOURCE
#include <sys/ucontext.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "x86/backend.h"

/* ucontext register index of each host register. */
static const int greg_index[16] = {
    [RAX] = REG_RAX, [RCX] = REG_RCX, [RDX] = REG_RDX, [RBX] = REG_RBX,
    [RSP] = REG_RSP, [RBP] = REG_RBP, [RSI] = REG_RSI, [RDI] = REG_RDI,
    [R8] = REG_R8, [R9] = REG_R9, [R10] = REG_R10, [R11] = REG_R11,
    [R12] = REG_R12, [R13] = REG_R13, [R14] = REG_R14, [R15] = REG_R15,
};

void exec_fault_restore(void *ucontext)
{
    ucontext_t *uc = ucontext;
    greg_t *g = uc->uc_mcontext.gregs;
    CPUState *cpu = (CPUState *)(uintptr_t)(g[REG_R15] - CPU_BIAS);
    uint64_t off = (uint64_t)g[REG_RIP] - (uint64_t)(uintptr_t)code_rx_of(code_rw);

    /* The TB holding off: the last one starting at or below it. */
    size_t lo = 0, hi = __atomic_load_n(&ntbs, __ATOMIC_ACQUIRE);
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (tbs[mid].host_off <= off)
            lo = mid;
        else
            hi = mid;
    }
    const TB *tb = &tbs[lo];
    uint64_t rel = off - tb->host_off;
    unsigned i = 0;
    while (i + 1 < tb->ninsns && pcmap[tb->pcmap + i + 1][0] <= rel)
        i++;
    cpu->pc = tb->pc + pcmap[tb->pcmap + i][1];
    /* Guest accesses run with the block's own mapping in effect: a host
     * register it gave away holds another guest register, and the one it
     * displaced is in CPUState already (be_choose_remap). */
    for (int h = 0; h < 16; h++) {
        int gr = be_host_guest[h];
        for (int r = 0; r < tb->nremap; r++)
            if (tb->remap[r].host == h)
                gr = tb->remap[r].in;
        if (gr > 0)
            cpu->x[gr] = (uint64_t)g[greg_index[h]];
    }
}
