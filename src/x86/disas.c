/*
 * Host disassembly: see disas.h. One Capstone handle per call (logging is
 * rare and slow anyway), so no state is shared between guest threads.
 */
#include "x86/disas.h"

#include <capstone/capstone.h>

static void print_bytes(FILE *f, const uint8_t *p, size_t n)
{
    char buf[3 * 16 + 1] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 12; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%02x ", p[i]);
    fprintf(f, "%-36s", buf);
}

void host_disas(FILE *f, const void *code, size_t size, uint64_t addr)
{
    csh h;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
        fprintf(f, "  (capstone unavailable)\n");
        return;
    }
    const uint8_t *p = code;
    cs_insn *in = cs_malloc(h);
    while (size > 0) {
        const uint8_t *at = p;
        uint64_t a = addr;
        if (cs_disasm_iter(h, &p, &size, &addr, in)) {
            fprintf(f, "  0x%012llx:  ", (unsigned long long)a);
            print_bytes(f, at, in->size);
            fprintf(f, "%s %s\n", in->mnemonic, in->op_str);
        } else {
            fprintf(f, "  0x%012llx:  ", (unsigned long long)a);
            print_bytes(f, p, 1);
            fprintf(f, ".byte 0x%02x\n", *p);
            p++;
            size--;
            addr++;
        }
    }
    cs_free(in, 1);
    cs_close(&h);
}
