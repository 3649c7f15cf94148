/*
 * The guest instruction at an address, as the logs show it (-d in_asm,
 * -d exec): read through the mode's guest memory, printed by disasm.c.
 * Kept apart from disasm.c, which stays free of guest memory (the decoder and
 * disassembler are also built alone: tests/decode_vs_objdump.sh).
 */
#include "riscv/insn.h"
#include "riscv/cpu.h"
#include "exec/guest_mem.h"
#include "exec/lock.h"
#include "exec/settings.h"

#include <pthread.h>
#include <stdlib.h>

void insn_print_at(FILE *f, uint64_t pc)
{
    Insn in;
    char text[96];
    uint32_t bits = 0;
    if (guest_mem.ops->read(&bits, pc, 2) < 0)
        return;
    if (insn_length((uint16_t)bits) == 4 && guest_mem.ops->read(&bits, pc, 4) < 0)
        return;
    insn_decode(bits, &in);
    insn_disasm(&in, pc, text, sizeof text);
    if (in.len == 2)
        fprintf(f, "%8llx:\t%04x                \t%s\n", (unsigned long long)pc, in.craw, text);
    else
        fprintf(f, "%8llx:\t%08x          \t%s\n", (unsigned long long)pc, in.raw, text);
}

/* -d in_asm's set of pcs already shown (open addressing, pc + 1 so 0 is
 * empty), shared by every vCPU thread under one lock. It never grows: once
 * it is 3/4 full, further new pcs are shown again rather than remembered. */
static uint64_t *shown;
static size_t shown_used;
LEAF_MUTEX(shown_lock)
#define SHOWN_CAP (1u << 20)

/* pc is shown for the first time (and is now remembered). */
static bool first_time(uint64_t pc)
{
    if (!shown && !(shown = calloc(SHOWN_CAP, sizeof *shown)))
        return true;
    size_t h = (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 44);
    for (;; h++) {
        uint64_t *slot = &shown[h & (SHOWN_CAP - 1)];
        if (*slot == pc + 1)
            return false;
        if (!*slot) {
            if (shown_used < SHOWN_CAP / 4 * 3) {
                *slot = pc + 1;
                shown_used++;
            }
            return true;
        }
    }
}

enum exit_reason interp_run_logged(CPUState *cpu, unsigned budget)
{
    while (budget--) {
        uint64_t pc = cpu->pc;
        if (log_mask & (LOG_EXEC | LOG_IN_ASM)) {
            pthread_mutex_lock(&shown_lock);
            if (log_mask & LOG_EXEC)
                fprintf(log_file, "exec pc 0x%llx\n", (unsigned long long)pc);
            if ((log_mask & LOG_IN_ASM) && first_time(pc))
                insn_print_at(log_file, pc);
            pthread_mutex_unlock(&shown_lock);
        }
        enum exit_reason r = interp_step(cpu);
        if (r != EXIT_NONE)
            return r;
        if (cpu->exit_request)
            return EXIT_REQUEST;
    }
    return EXIT_NONE;
}
