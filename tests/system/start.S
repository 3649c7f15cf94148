/*
 * Entry, trap vectors, mode switches and probes of the bare-metal tests
 * (see sys.h). Built with -DSMODE for tests that start in S-mode under the
 * SBI (-bios default); otherwise the hart starts here in M-mode.
 *
 * Trap entry (both levels): sp is swapped with xscratch (the level's trap
 * stack top), the registers and xcause/xepc/xtval/xstatus are saved in a
 * Frame (sys.h), trap_dispatch(frame, level) runs, and xepc and every
 * register (sp last) come back from the frame, so a handler can resume
 * anywhere with any registers (run_in_mode's return does).
 */
#define FRAME    288
#define F_CAUSE  256
#define F_EPC    264
#define F_TVAL   272
#define F_STATUS 280
#define MAGIC    0x5a17          /* a7 of the ecall that ends a run_in_mode */
#define CTX_SIZE (14 * 8)        /* ra, sp, s0..s11 */

    .option norelax

/* -- Entry ------------------------------------------------------------------ */

    .section .text.start, "ax"
    .globl _start
_start:
#ifndef SMODE
    bnez a0, secondary_m        /* -bios none starts every hart here */
#endif
    la sp, stack_top
    mv s0, a0
    mv s1, a1
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sd zero, 0(t0)
    addi t0, t0, 8
    j 1b
2:
#ifndef SMODE
    la t0, mtrap_stack_top
    csrw mscratch, t0
    la t0, mtrap_entry
    csrw mtvec, t0
#endif
    la t0, strap_stack_top
    csrw sscratch, t0
    la t0, strap_entry
    csrw stvec, t0
    la t0, boot_go
    li t1, 1
    sd t1, 0(t0)                /* .bss is clear: other harts may go */
    mv a0, s0
    mv a1, s1
    call sys_main
3:  j 3b

#ifndef SMODE
/* Harts other than 0 in M-mode: wait for hart 0's start, then run the
 * test's secondary_main(hartid, 0) on their own stacks. */
secondary_m:
    la t0, boot_go
1:  ld t1, 0(t0)
    beqz t1, 1b
    la sp, stack2_top
    la t0, mtrap2_stack_top
    csrw mscratch, t0
    la t0, mtrap_entry
    csrw mtvec, t0
    li a1, 0
    call secondary_main
2:  wfi
    j 2b
#endif

    .data
    .balign 8
boot_go:
    .dword 0

/* A second hart started by SBI HSM hart_start: a0 = hartid, a1 = opaque. */
    .text
    .globl secondary_entry
    .balign 4
secondary_entry:
    la sp, stack2_top
    call secondary_main
    li a7, 0x48534d          /* HSM hart_stop */
    li a6, 1
    ecall
1:  j 1b

/* -- Trap entries ----------------------------------------------------------- */

.macro SAVE_REGS
    .irp r, 1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    sd x\r, (\r * 8)(sp)
    .endr
.endm

.macro LOAD_REGS
    .irp r, 1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    ld x\r, (\r * 8)(sp)
    .endr
.endm

.macro TRAP_ENTRY name, x, level
    .balign 4
    .globl \name
\name:
    csrrw sp, \x\()scratch, sp
    addi sp, sp, -FRAME
    SAVE_REGS
    csrr t0, \x\()scratch
    sd t0, 16(sp)
    csrr t0, \x\()cause
    sd t0, F_CAUSE(sp)
    csrr t0, \x\()epc
    sd t0, F_EPC(sp)
    csrr t0, \x\()tval
    sd t0, F_TVAL(sp)
    csrr t0, \x\()status
    sd t0, F_STATUS(sp)
    mv a0, sp
    li a1, \level
    call trap_dispatch
    ld t0, F_EPC(sp)
    csrw \x\()epc, t0
    addi t0, sp, FRAME
    csrw \x\()scratch, t0
    LOAD_REGS
    ld sp, 16(sp)
    \x\()ret
.endm

    .text
#ifndef SMODE
    TRAP_ENTRY mtrap_entry, m, 3
#endif
    TRAP_ENTRY strap_entry, s, 1

/* An S-level handler hands run_in_mode's end on to M (the call was M's). */
    .globl forward_end_to_m
forward_end_to_m:
    li a7, MAGIC
    li a6, MAGIC
    ecall
1:  j 1b

/* -- run_in_mode_m / run_in_mode_s ---------------------------------------- */

.macro RUN_IN_MODE name, x, level
    .globl \name
\name:
    la t0, rim_ctx + \level * CTX_SIZE
    sd ra, 0(t0)
    sd sp, 8(t0)
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11
    sd s\n, (16 + \n * 8)(t0)
    .endr
    la t0, rim_active
    li t1, 1
    sd t1, (\level * 8)(t0)
    ld t3, code_alias
    .if \level == 3
    li t1, 3 << 11
    csrc mstatus, t1
    slli t1, a0, 11
    csrs mstatus, t1
    .else
    li t1, 1 << 8
    csrc sstatus, t1
    slli t1, a0, 8
    csrs sstatus, t1
    .endif
    add a1, a1, t3
    csrw \x\()epc, a1
    mv a0, a2
    la ra, rim_exit
    add ra, ra, t3
    addi sp, sp, -256
    andi sp, sp, -16
    add sp, sp, t3
    \x\()ret
.endm

    RUN_IN_MODE run_in_mode_m, m, 3
    RUN_IN_MODE run_in_mode_s, s, 1

rim_exit:
    li a7, MAGIC
    li a6, MAGIC
    ecall
1:  j 1b

/* -- Probes ------------------------------------------------------------------ */

    .option push
    .option norvc
    .globl probe_ld, probe_lw, probe_lbu, probe_sd, probe_sw, probe_amoadd_w
    .globl probe_amoadd_d, probe_sc_w, probe_sc_d, probe_lr_w, probe_lr_d
    .globl probe_fetch, probe_unimp, probe_c_illegal
    .globl probe_ecall, probe_ebreak, probe_c_ebreak, probe_mret, probe_sret, probe_wfi
    .globl probe_sfence, probe_csrr_mstatus, probe_rdtime, probe_rdcycle, probe_rdinstret
    .globl probe_rdhpm3, probe_fadd, probe_fmv, probe_frcsr, probe_stimecmp
    .balign 4
probe_ld:       ld a0, 0(a0)
                ret
probe_lw:       lw a0, 0(a0)
                ret
probe_lbu:      lbu a0, 0(a0)
                ret
probe_sd:       sd a1, 0(a0)
                ret
probe_sw:       sw a1, 0(a0)
                ret
probe_amoadd_w: amoadd.w a0, a1, (a0)
                ret
probe_amoadd_d: amoadd.d a0, a1, (a0)
                ret
probe_sc_w:     sc.w a0, a1, (a0)
                ret
probe_sc_d:     sc.d a0, a1, (a0)
                ret
probe_lr_w:     lr.w a0, (a0)
                ret
probe_lr_d:     lr.d a0, (a0)
                ret
probe_fetch:    addi sp, sp, -16
                sd ra, 0(sp)
                jalr a0
                ld ra, 0(sp)
                addi sp, sp, 16
                ret
probe_unimp:    .word 0xc0001073
                ret
probe_c_illegal: .half 0x0004
                .half 0x0001            /* c.nop: keep the ret 4-byte aligned */
                ret
probe_ecall:    ecall
                ret
probe_ebreak:   ebreak
                ret
probe_c_ebreak: .half 0x9002            /* c.ebreak */
                .half 0x0001
                ret
probe_mret:     mret
                ret
probe_sret:     sret
                ret
probe_wfi:      wfi
                ret
probe_sfence:   sfence.vma
                ret
probe_csrr_mstatus: csrr a0, mstatus
                ret
probe_rdtime:   rdtime a0
                ret
probe_rdcycle:  rdcycle a0
                ret
probe_rdinstret: rdinstret a0
                ret
probe_rdhpm3:   csrr a0, hpmcounter3
                ret
probe_fadd:     fadd.d f0, f1, f2
                ret
probe_fmv:      fmv.d.x f1, a0
                ret
probe_frcsr:    frcsr a0
                ret
probe_stimecmp: csrr a0, stimecmp
                ret

/* The same instructions' bits, for the tval checks. */
    .section .rodata
    .balign 4
    .globl insn_unimp, insn_fadd, insn_csrr_mstatus, insn_rdtime, insn_rdcycle
    .globl insn_rdinstret, insn_rdhpm3, insn_mret, insn_sret, insn_wfi, insn_sfence
    .globl insn_frcsr, insn_stimecmp
insn_unimp:        .word 0xc0001073
insn_fadd:         fadd.d f0, f1, f2
insn_csrr_mstatus: csrr a0, mstatus
insn_rdtime:       rdtime a0
insn_rdcycle:      rdcycle a0
insn_rdinstret:    rdinstret a0
insn_rdhpm3:       csrr a0, hpmcounter3
insn_mret:         mret
insn_sret:         sret
insn_wfi:          wfi
insn_sfence:       sfence.vma
insn_frcsr:        frcsr a0
insn_stimecmp:     csrr a0, stimecmp
    .text
    .option pop

/* -- M-mode helpers ----------------------------------------------------------- */

#ifndef SMODE
#define MPRV_BITS ((3 << 11) | (1 << 17) | (1 << 18) | (1 << 19))
    .globl mprv_ld, mprv_sd
mprv_ld:
    li t0, MPRV_BITS
    csrc mstatus, t0
    csrs mstatus, a1
    .globl mprv_ld_insn
mprv_ld_insn:
    ld a0, 0(a0)
    csrc mstatus, t0
    ret
mprv_sd:
    li t0, MPRV_BITS
    csrc mstatus, t0
    csrs mstatus, a2
    .globl mprv_sd_insn
mprv_sd_insn:
    sd a1, 0(a0)
    csrc mstatus, t0
    ret

/* vectored_mti_wait(n): see sys.h. t5/t6 are the vector stubs' own. */
    .globl vectored_mti_wait
vectored_mti_wait:
    csrr t4, mtvec
    la t5, vec_table
    ori t5, t5, 1
    csrw mtvec, t5
    li t6, 0
    li t5, 1 << 7
    csrs mie, t5
    csrsi mstatus, 8
1:  bnez t6, 2f
    addi a0, a0, -1
    bnez a0, 1b
2:  csrci mstatus, 8
    li t5, 1 << 7
    csrc mie, t5
    csrw mtvec, t4
    mv a0, t6
    ret

    .option push
    .option norvc
    .balign 256
vec_table:
    .rept 7
    j vec_other
    .endr
    j vec_mti                   /* entry 7: machine timer */
    .rept 8
    j vec_other
    .endr
vec_mti:
    li t6, 7
    li t5, 1 << 7
    csrc mie, t5
    mret
vec_other:
    li t6, 99
    csrw mie, zero
    mret
    .option pop
#endif

/* instret_loop(n): minstret/instret delta over li + n turns of addi, bnez. */
    .globl instret_loop
instret_loop:
    mv t1, a0
    csrr t0, instret
    addi t2, zero, 0
1:  addi t1, t1, -1
    bnez t1, 1b
    csrr t2, instret
    sub a0, t2, t0
    ret

/* -- Stacks ------------------------------------------------------------------------ */

    .bss
    .balign 16
    .space 16384
    .globl stack_top
stack_top:
    .space 8192
    .globl mtrap_stack_top
mtrap_stack_top:
    .space 8192
    .globl strap_stack_top
strap_stack_top:
    .space 8192
    .globl stack2_top
stack2_top:
    .space 8192
    .globl mtrap2_stack_top
mtrap2_stack_top:
