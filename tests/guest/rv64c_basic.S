/*
 * RV64C: hand-written compressed instructions (every RV64C form that user
 * code can use, including c.addi16sp, c.addi4spn, c.lui, c.ldsp/c.sdsp,
 * c.fldsp/c.fsdsp, c.j, c.jalr, c.beqz/c.bnez), each result printed in hex
 * through the write syscall. Ends with a 4-byte run of c.li + c.jr placed
 * at the very end of a mapped page whose next page is unmapped: fetching a
 * 2-byte instruction must not touch the next page.
 */
    .option rvc
    .text
    .globl _start

/* print a0 as 16 hex digits and a newline; clobbers a0-a2, a7, t0-t2 */
    .macro SHOW reg
    mv a0, \reg
    call puthex
    .endm

_start:
    c.addi16sp sp, -256
    mv s11, sp

    /* -- CIW / CI forms -- */
    c.addi4spn a0, sp, 64
    sub a0, a0, s11
    call puthex                     /* 0x40 */
    c.addi4spn a5, sp, 1020
    sub a0, a5, sp
    call puthex                     /* 0x3fc */
    c.li a0, -17
    call puthex
    c.li a0, 31
    call puthex
    c.lui a0, 0x1f
    call puthex
    c.lui a0, 0xfffe0
    call puthex
    c.lui a0, 1
    c.addi a0, -32
    call puthex
    li a0, 0x7fffffff
    c.addiw a0, 1
    call puthex                     /* sign-extended */
    li a0, 0x12345
    c.addiw a0, 0                   /* sext.w */
    call puthex
    li s0, -1
    c.slli s0, 63
    SHOW s0
    c.srli s0, 1
    SHOW s0
    li s0, -256
    c.srai s0, 4
    SHOW s0
    c.andi s0, -7
    SHOW s0
    c.andi s0, 0x1f
    SHOW s0
    c.addi16sp sp, 496
    c.addi16sp sp, -496
    sub a0, sp, s11
    call puthex                     /* 0 */

    /* -- CA forms -- */
    li s0, 0x0ff0f0f0
    li s1, 0x00ffff00
    mv a3, s0
    c.sub a3, s1
    SHOW a3
    mv a3, s0
    c.xor a3, s1
    SHOW a3
    mv a3, s0
    c.or a3, s1
    SHOW a3
    mv a3, s0
    c.and a3, s1
    SHOW a3
    li a4, 0x7fffffff
    li a5, 1
    c.addw a4, a5
    SHOW a4
    li a4, 0
    c.subw a4, a5
    SHOW a4
    li a4, 0x80000000
    c.subw a4, a5
    SHOW a4
    li a4, 5
    c.add a4, a5
    SHOW a4
    c.mv a2, a4
    SHOW a2

    /* -- loads and stores -- */
    la s1, data
    c.ld a0, 0(s1)
    call puthex
    c.lw a0, 8(s1)
    call puthex
    c.lw a0, 12(s1)
    call puthex
    c.ld a4, 16(s1)
    c.sd a4, 24(s1)
    c.sw a4, 32(s1)
    c.ld a0, 24(s1)
    call puthex
    c.ld a0, 32(s1)
    call puthex
    c.fld fa0, 0(s1)
    c.fsd fa0, 40(s1)
    c.ld a0, 40(s1)
    call puthex

    li a4, 0x1122334455667788
    c.sdsp a4, 8(sp)
    c.swsp a4, 16(sp)
    c.ldsp a0, 8(sp)
    call puthex
    c.lwsp a0, 16(sp)
    call puthex
    c.ldsp a5, 504(sp)
    c.sdsp a4, 504(sp)
    c.ldsp a0, 504(sp)
    c.sdsp a5, 504(sp)
    call puthex
    c.fldsp fa1, 8(sp)
    c.fsdsp fa1, 24(sp)
    c.ldsp a0, 24(sp)
    call puthex
    c.lwsp a0, 252(sp)
    c.swsp a0, 252(sp)

    /* -- control flow -- */
    li s0, 0
    li a0, 3
1:  c.addi s0, 5
    c.addi a0, -1
    c.bnez a0, 1b
    SHOW s0                         /* 15 */
    li a0, 0
    c.beqz a0, 2f
    c.li s0, 1
2:  SHOW s0                         /* 15 */
    li a0, 1
    c.beqz a0, 3f
    c.li s0, 2
3:  SHOW s0                         /* 2 */
    c.j 4f
    c.li s0, 3
4:  SHOW s0                         /* 2 */
    la t0, 5f
    c.jalr t0                       /* ra = address of the c.li below */
    c.li s0, 4
5:  la t1, 5b
    addi t1, t1, -2
    sub a0, ra, t1
    call puthex                     /* 0: ra == label - 2 */
    la t0, 6f
    c.jr t0
    c.li s0, 5
6:  SHOW s0                         /* 2 */
    call leaf
    SHOW a0
    c.nop

    /* -- a compressed pair at the very end of a page -- */
    li a0, 0
    li a1, 8192
    li a2, 7                        /* PROT_READ|WRITE|EXEC */
    li a3, 0x22                     /* MAP_PRIVATE|MAP_ANONYMOUS */
    li a4, -1
    li a5, 0
    li a7, 222                      /* mmap */
    ecall
    mv s2, a0
    li t0, 4096
    add a0, s2, t0
    li a1, 4096
    li a7, 215                      /* munmap the second page */
    ecall
    SHOW a0
    li t0, 4096 - 4
    add t1, s2, t0
    la t2, tail_code
    lhu t3, 0(t2)
    sh t3, 0(t1)
    lhu t3, 2(t2)
    sh t3, 2(t1)
    fence.i
    jalr t1
    SHOW a0                         /* 0x15 */

    li a0, 0
    li a7, 93                       /* exit */
    ecall

leaf:
    c.li a0, 9
    c.slli a0, 2
    c.jr ra

tail_code:
    c.li a0, 21
    c.jr ra

puthex:
    la a1, hexbuf
    li t0, 60
1:  srl t1, a0, t0
    andi t1, t1, 15
    li t2, 10
    blt t1, t2, 2f
    addi t1, t1, 'a' - 10 - '0'
2:  addi t1, t1, '0'
    sb t1, 0(a1)
    addi a1, a1, 1
    addi t0, t0, -4
    bgez t0, 1b
    li t1, '\n'
    sb t1, 0(a1)
    li a0, 1
    la a1, hexbuf
    li a2, 17
    li a7, 64                       /* write */
    ecall
    ret

    .data
    .balign 8
data:
    .dword 0x8877665544332211
    .word 0x80000001, 0x7ffffffe
    .dword 0xfedcba9876543210
    .dword 0, 0, 0
hexbuf:
    .space 32
