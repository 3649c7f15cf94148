/*
 * The guest instruction at an address, as the logs show it (-d in_asm,
 * -d exec): read through the mode's guest memory, printed by disasm.c.
 * Kept apart from disasm.c, which stays free of guest memory (the decoder and
 * disassembler are also built alone: tests/decode_vs_objdump.sh).
 */
#include "riscv/insn.h"
#include "exec/guest_mem.h"

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
