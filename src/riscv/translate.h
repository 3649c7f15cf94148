/*
 * Guest instructions -> x86-64 (src/riscv/translate.c).
 */
#ifndef XLAT_RISCV_TRANSLATE_H
#define XLAT_RISCV_TRANSLATE_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/tb.h"
#include "x86/emit.h"

/* Host room that one block may need at most; callers check it first. */
#define TRANSLATE_MAX_HOST (TB_MAX_INSNS * 640 + 1024)

/*
 * Translate the block starting at tb->pc into host code at e->p (the TB
 * entry), with the code that rarely runs (slow paths, exit stubs) at
 * cold->p, away from the hot code so that runs of hot code stay dense in
 * the instruction cache. The caller holds guest_mem.ops->code_lock and has
 * checked that the first instruction may be fetched (code_ok); the block
 * reads its code through guest_mem_code(tb->phys) and stops before any
 * instruction that starts on another page or crosses into one (unless it is
 * the first, whose second page the caller also checked: user mode only).
 * Fills tb->guest_size, ninsns, jmp_field/jmp_stub, and map[i] =
 * {host offset from the entry, guest offset} of each instruction.
 */
void translate_block(TB *tb, Emit *e, Emit *cold, uint16_t map[][2]);

/* Can the native translation of op be used on this host (and options)? */
void translate_init(void);
/* What translations depend on besides the options: the host features
 * translate_init found and the guest ISA (-cpu). For exec/pcache.c. */
uint64_t translate_config_word(void);

#endif
