/*
 * Interpreter internals shared between interp.c (integer, A, Zicsr, Zb*,
 * memory) and interp_fp.c (F and D arithmetic).
 */
#ifndef XLAT_RISCV_INTERP_H
#define XLAT_RISCV_INTERP_H

#include "riscv/cpu.h"
#include "riscv/insn.h"

/*
 * Execute one F or D instruction that does not touch memory (everything in
 * EXT_F/EXT_D except flw/fsw/fld/fsd). Updates f[]/x[]/fflags; does not
 * change pc. Returns EXIT_NONE, or EXIT_ILLEGAL for a reserved rounding mode
 * (rm 5 or 6, or rm 7 with frm > 4).
 */
enum exit_reason interp_fp(CPUState *cpu, const Insn *in);

/*
 * Forget cached decodings in every thread (each notices at its next taken
 * jump). The cache is tagged by the instruction bits, so rewriting code
 * needs no flush; call this when a guest range loses PROT_EXEC or is
 * unmapped/remapped (mm_exec_range_changed), so that executing it faults.
 */
void interp_flush_cache(void);

/* The JIT's interpreter: a smaller decoded-instruction cache. Before any
 * guest code runs. */
void interp_small_cache(void);

/* A vCPU's decoded-instruction cache: interp_cpu_init before its first
 * run (a CPUState copied from another must not share its cache), and
 * interp_cpu_exit unmaps it. */
void interp_cpu_init(CPUState *cpu);
void interp_cpu_exit(CPUState *cpu);

#endif
