/*
 * Unit test of the x86-64 encoder (src/x86/emit.c): each case emits one
 * instruction (or a short fixed sequence) and compares the bytes with what
 * the GNU assembler produces for the instruction in the comment beside it
 * (bytes generated with `as` + objcopy when the test was written, so the
 * test itself needs no host assembler); where xlat picks the other, equally
 * valid form (reg,r/m vs r/m,reg) the bytes were checked with objdump.
 * Plus the label/patching helpers.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "x86/emit.h"

static int failures, cases;
static uint8_t buf[64];

static void check(const char *hex, const Emit *e, const char *what, int line)
{
    char got[sizeof buf * 2 + 1] = "";
    for (const uint8_t *p = e->start; p < e->p; p++)
        sprintf(got + 2 * (p - e->start), "%02x", *p);
    cases++;
    if (strcmp(got, hex)) {
        printf("FAIL line %d: %s\n  expected %s\n  got      %s\n", line, what, hex, got);
        failures++;
    }
}

#define CASE(hex, ...) do {                                             \
        Emit e = { .start = buf, .p = buf, .end = buf + sizeof buf };  \
        __VA_ARGS__;                                                   \
        check(hex, &e, #__VA_ARGS__, __LINE__);                        \
    } while (0)

int main(void)
{
    CASE("4c89f8", emit_mov_rr(&e, RAX, R15));
    /* mov %r15,%rax */
    CASE("4989f5", emit_mov_rr(&e, R13, RSI));
    /* mov %rsi,%r13 */
    CASE("33db", emit_mov_ri(&e, RBX, 0));            /* (the 0x33 form) */
    /* xor %ebx,%ebx */
    CASE("41b978563412", emit_mov_ri(&e, R9, 0x12345678));
    /* mov $0x12345678,%r9d */
    CASE("48c7c2fbffffff", emit_mov_ri(&e, RDX, (uint64_t)-5));
    /* mov $-5,%rdx */
    CASE("49bc9a78563412000000", emit_mov_ri(&e, R12, 0x123456789aULL));
    /* movabs $0x123456789a,%r12 */
    CASE("498baf00010000", emit_ld64(&e, RBP, R15, 0x100));
    /* mov 0x100(%r15),%rbp */
    CASE("4d8b4500", emit_ld64(&e, R8, R13, 0));
    /* mov 0(%r13),%r8 */
    CASE("4c895c2408", emit_st64(&e, R11, RSP, 8));
    /* mov %r11,8(%rsp) */
    CASE("49c78700020000ffffffff", emit_st64_imm(&e, R15, 0x200, -1));
    /* movq $-1,0x200(%r15) */
    CASE("4b0fbe742ef8", emit_load_sized(&e, RSI, R14, R13, -8, 1, true));
    /* movsbq -8(%r14,%r13),%rsi */
    CASE("410fb73c1e", emit_load_sized(&e, RDI, R14, RBX, 0, 2, false));
    /* movzwl 0(%r14,%rbx),%edi */
    CASE("4b638426ff070000", emit_load_sized(&e, RAX, R14, R12, 2047, 4, true));
    /* movslq 2047(%r14,%r12),%rax */
    CASE("458b940e00f8ffff", emit_load_sized(&e, R10, R14, RCX, -2048, 4, false));
    /* mov -2048(%r14,%rcx),%r10d */
    CASE("498b542e10", emit_load_sized(&e, RDX, R14, RBP, 16, 8, false));
    /* mov 16(%r14,%rbp),%rdx */
    CASE("4188741e03", emit_store_sized(&e, RSI, R14, RBX, 3, 1));
    /* mov %sil,3(%r14,%rbx) */
    CASE("6645890c3e", emit_store_sized(&e, R9, R14, RDI, 0, 2));
    /* mov %r9w,0(%r14,%rdi) */
    CASE("43894406fc", emit_store_sized(&e, RAX, R14, R8, -4, 4));
    /* mov %eax,-4(%r14,%r8) */
    CASE("4b896c2e64", emit_store_sized(&e, RBP, R14, R13, 100, 8));
    /* mov %rbp,100(%r14,%r13) */
    /* No base register (the guest window at host address 0): absolute, or
     * index only, always with a 32-bit displacement. */
    CASE("488b042500100000", emit_load_sized(&e, RAX, NO_REG, NO_REG, 0x1000, 8, false));
    /* mov 0x1000,%rax */
    CASE("4a0fbe342df8ffffff", emit_load_sized(&e, RSI, NO_REG, R13, -8, 1, true));
    /* movsbq -0x8(,%r13,1),%rsi */
    CASE("6644890c250000ff7f", emit_store_sized(&e, R9, NO_REG, NO_REG, 0x7fff0000, 2));
    /* mov %r9w,0x7fff0000 */
    CASE("4c89340de0ff0700", emit_store_sized(&e, R14, NO_REG, RCX, 0x7ffe0, 8));
    /* mov %r14,0x7ffe0(,%rcx,1) */
    CASE("4d897510", emit_store_sized(&e, R14, R13, NO_REG, 0x10, 8));
    /* mov %r14,0x10(%r13) */
    CASE("4903c4", emit_arith_rr(&e, ARITH_ADD, RAX, R12, false));
    /* add %r12,%rax */
    CASE("442bda", emit_arith_rr(&e, ARITH_SUB, R11, RDX, true));
    /* sub %edx,%r11d */
    CASE("4883e3fe", emit_arith_ri(&e, ARITH_AND, RBX, -2, false));
    /* and $-2,%rbx */
    CASE("4981f245230100", emit_arith_ri(&e, ARITH_XOR, R10, 0x12345, false));
    /* xor $0x12345,%r10 */
    CASE("4d3baf40020000", emit_arith_rm(&e, ARITH_CMP, R13, R15, 0x240, false));
    /* cmp 0x240(%r15),%r13 */
    CASE("c1fe03", emit_shift_ri(&e, SHIFT_SAR, RSI, 3, true));
    /* sar $3,%esi */
    CASE("49d3e0", emit_shift_cl(&e, SHIFT_SHL, R8, false));
    /* shl %cl,%r8 */
    CASE("48c1c811", emit_shift_ri(&e, SHIFT_ROR, RAX, 17, false));
    /* ror $17,%rax */
    CASE("4863ff", emit_movslq(&e, RDI, RDI));
    /* movslq %edi,%rdi */
    CASE("4489c8", emit_movzlq(&e, RAX, R9));
    /* mov %r9d,%eax */
    CASE("488d14c1", emit_lea(&e, RDX, RCX, RAX, 3, 0, false));
    /* lea 0(%rcx,%rax,8),%rdx */
    CASE("458d65f9", emit_lea(&e, R12, R13, NO_REG, 0, -7, true));
    /* lea -7(%r13),%r12d */
    CASE("400f9cc6400fb6f6", emit_setcc(&e, CC_L, RSI));
    /* setl %sil; movzbl %sil,%esi */
    CASE("480f42c1", emit_cmov(&e, CC_B, RAX, RCX));
    /* cmovb %rcx,%rax */
    CASE("490fafeb", emit_imul_rr(&e, RBP, R11, false));
    /* imul %r11,%rbp */
    CASE("4885c0", emit_test_rr(&e, RAX, RAX));
    /* test %rax,%rax */
    CASE("49f7d1", emit_grp3(&e, EXT3_NOT, R9, false));
    /* not %r9 */
    CASE("490fca", emit_bswap(&e, R10));
    /* bswap %r10 */
    CASE("f3490fbdd8", emit_bitop_rr(&e, OPC_LZCNT, RBX, R8, false));
    /* lzcnt %r8,%rbx */
    CASE("f30fb8fe", emit_bitop_rr(&e, OPC_POPCNT, RDI, RSI, true));
    /* popcnt %esi,%edi */
    CASE("490fbaec28", emit_bt_ri(&e, BT_BTS, R12, 40));
    /* bts $40,%r12 */
    CASE("480fb3ca", emit_modrm(&e, OPC_BTR_EvGv | P_REXW, RCX, RDX));
    /* btr %rcx,%rdx */
    CASE("4157", emit_push(&e, R15));
    /* push %r15 */
    CASE("5b", emit_pop(&e, RBX));
    /* pop %rbx */
    CASE("ffd0", emit_call_r(&e, RAX));
    /* call *%rax */
    CASE("ff6108", emit_jmp_mem(&e, RCX, 8));
    /* jmp *8(%rcx) */
    CASE("4983bf3802000000", emit_modrm_mem(&e, OPC_ARITH_EvIb | P_REXW, ARITH_CMP, R15, NO_REG, 0, 0x238); emit_u8(&e, 0));
    /* cmpq $0,0x238(%r15) */

    /* Branches: rel32 fields patched to a label. */
    {
        Emit e = { .start = buf, .p = buf, .end = buf + sizeof buf };
        uint8_t *j = emit_jcc(&e, CC_NE);           /* 0f 85 rel32 */
        emit_nops(&e, 3);
        emit_patch_rel32(j, e.p);
        check("0f8503000000" "0f1f00", &e, "jne forward over a 3-byte nop", __LINE__);
    }
    {
        Emit e = { .start = buf, .p = buf, .end = buf + sizeof buf };
        uint8_t *j = emit_jcc8(&e, CC_A);           /* 77 rel8 */
        emit_nops(&e, 3);
        emit_patch_rel8(j, e.p);
        check("7703" "0f1f00", &e, "ja short over a 3-byte nop", __LINE__);
    }
    {
        /* Patchable jmp, jcc, call at every offset in a cache line: the rel32
         * field never crosses a line, and nothing pads it when it fits. */
        static _Alignas(64) uint8_t line[192];
        for (int kind = 0; kind < 3; kind++) {
            unsigned opc_len = kind == 1 ? 2 : 1;
            for (int off = 0; off < 64; off++) {
                Emit e = { .start = line, .p = line + 64 + off, .end = line + sizeof line };
                uint8_t *f = kind == 0 ? emit_jmp_patchable(&e)
                           : kind == 1 ? emit_jcc_patchable(&e, CC_NE) : emit_call_patchable(&e);
                unsigned at = (unsigned)(f - (line + 64));
                bool fits = off + opc_len + 4 <= 64;
                cases++;
                if ((at & ~63u) != ((at + 3) & ~63u) || (fits && at != off + opc_len)) {
                    printf("FAIL: patchable branch %d at offset %d: field at %u\n", kind, off, at);
                    failures++;
                }
                /* Repatching an unaligned field: one store of the new rel32. */
                emit_store_rel32(f, f + 4 + 0x12345);
                int32_t rel;
                memcpy(&rel, f, 4);
                cases++;
                if (rel != 0x12345) {
                    printf("FAIL: emit_store_rel32 at offset %u\n", at);
                    failures++;
                }
            }
        }
    }
    /* SSE scalar, MXCSR, FMA3 (VEX), division: the FP and M translations. */
    CASE("c4c2f1a98770010000", emit_vex_mem(&e, OPC_VFMADD213S, true, 0, 1, R15, 0x170));
    /* vfmadd213sd 0x170(%r15),%xmm1,%xmm0 */
    CASE("c4c271af4708", emit_vex_mem(&e, OPC_VFNMSUB213S, false, 0, 1, R15, 8));
    /* vfnmsub213ss 0x8(%r15),%xmm1,%xmm0 */
    CASE("410fae9770020000", emit_modrm_mem(&e, OPC_GRP15, EXT15_LDMXCSR, R15, NO_REG, 0, 0x270));
    /* ldmxcsr 0x270(%r15) */
    CASE("410fae9f70020000", emit_modrm_mem(&e, OPC_GRP15, EXT15_STMXCSR, R15, NO_REG, 0, 0x270));
    /* stmxcsr 0x270(%r15) */
    CASE("f2410f588768010000", emit_modrm_mem(&e, OPC_SSE_ADD | P_SIMDF2, 0, R15, NO_REG, 0, 0x168));
    /* addsd 0x168(%r15),%xmm0 */
    CASE("f3410f514710", emit_modrm_mem(&e, OPC_SSE_SQRT | P_SIMDF3, 0, R15, NO_REG, 0, 0x10));
    /* sqrtss 0x10(%r15),%xmm0 */
    CASE("f2480f2ac0", emit_modrm(&e, OPC_SSE_CVTSI2S | P_SIMDF2 | P_REXW, 0, RAX));
    /* cvtsi2sd %rax,%xmm0 */
    CASE("f30f2ac0", emit_modrm(&e, OPC_SSE_CVTSI2S | P_SIMDF3, 0, RAX));
    /* cvtsi2ss %eax,%xmm0 */
    CASE("f2490f2d8700010000",
         emit_modrm_mem(&e, OPC_SSE_CVTS2SI | P_SIMDF2 | P_REXW, RAX, R15, NO_REG, 0, 0x100));
    /* cvtsd2si 0x100(%r15),%rax */
    CASE("660f2ec0", emit_modrm(&e, OPC_UCOMISS | P_DATA16, 0, 0));
    /* ucomisd %xmm0,%xmm0 */
    CASE("410f2f4708", emit_modrm_mem(&e, OPC_COMISS, 0, R15, NO_REG, 0, 8));
    /* comiss 0x8(%r15),%xmm0 */
    CASE("f3410f7e8778010000", emit_modrm_mem(&e, OPC_MOVQ_VqWq, 0, R15, NO_REG, 0, 0x178));
    /* movq 0x178(%r15),%xmm0 */
    CASE("66410fd68770010000", emit_modrm_mem(&e, OPC_MOVQ_WqVq, 0, R15, NO_REG, 0, 0x170));
    /* movq %xmm0,0x170(%r15) */
    CASE("66410f6e4708", emit_modrm_mem(&e, OPC_MOVD_VdEd, 0, R15, NO_REG, 0, 8));
    /* movd 0x8(%r15),%xmm0 */
    CASE("66410f7e4708", emit_modrm_mem(&e, OPC_MOVD_EdVd, 0, R15, NO_REG, 0, 8));
    /* movd %xmm0,0x8(%r15) */
    CASE("48f7f9", emit_grp3(&e, EXT3_IDIV, RCX, false));
    /* idiv %rcx */
    CASE("f7f1", emit_grp3(&e, EXT3_DIV, RCX, true));
    /* div %ecx */
    CASE("4899", emit_opc(&e, OPC_CQO | P_REXW, 0, 0, 0));
    /* cqto */
    CASE("99", emit_opc(&e, OPC_CQO, 0, 0, 0));
    /* cltd */
    CASE("41f687700200001d", emit_modrm_mem(&e, OPC_TESTB_EbIb, 0, R15, NO_REG, 0, 0x270);
                             emit_u8(&e, 0x1d));
    /* testb $0x1d,0x270(%r15) */

    printf("emit: %d cases, %d failures\n", cases, failures);
    return failures != 0;
}
