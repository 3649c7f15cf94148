/*
 * Host disassembly: see disas.h. One Capstone handle per call (logging is
 * rare and slow anyway), so no state is shared between guest threads.
 *
 * Capstone is loaded with dlopen the first time it is needed: linking it
 * would make every start of xlat (every guest execve) pay the dynamic
 * relocation of a large library that almost no run uses. A static build
 * cannot dlopen: with glibc (-DXLAT_CAPSTONE_STATIC) it links
 * libcapstone.a and points the same table at it; with musl it goes
 * without (see the Makefile).
 */
#include "x86/disas.h"

#include <capstone/capstone.h>
#include <pthread.h>
#include <stdbool.h>
#if !defined XLAT_CAPSTONE_STATIC && !defined XLAT_CAPSTONE_NONE
#include <dlfcn.h>
#endif

static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_insn *(*malloc)(csh);
    bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
    void (*free)(cs_insn *, size_t);
    cs_err (*close)(csh *);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

#ifdef XLAT_CAPSTONE_STATIC
static void cs_load(void)
{
    cs.malloc = cs_malloc;
    cs.disasm_iter = cs_disasm_iter;
    cs.free = cs_free;
    cs.close = cs_close;
    cs.open = cs_open;
}
#elif defined XLAT_CAPSTONE_NONE
static void cs_load(void) {}
#define NO_CAPSTONE "this static build has none; xlat-dynamic, built beside it, has"
#else
static void cs_load(void)
{
    static const char *const names[] = {
        "libcapstone.so.4", "libcapstone.so.5", "libcapstone.so",
#ifdef XLAT_CAPSTONE_DIR        /* musl's loader does not search the multiarch directory */
        XLAT_CAPSTONE_DIR "/libcapstone.so.4", XLAT_CAPSTONE_DIR "/libcapstone.so.5",
#endif
    };
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    cs.malloc = (cs_insn *(*)(csh))dlsym(lib, "cs_malloc");
    cs.disasm_iter = (bool (*)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *))
        dlsym(lib, "cs_disasm_iter");
    cs.free = (void (*)(cs_insn *, size_t))dlsym(lib, "cs_free");
    cs.close = (cs_err (*)(csh *))dlsym(lib, "cs_close");
    if (cs.malloc && cs.disasm_iter && cs.free && cs.close)
        cs.open = (cs_err (*)(cs_arch, cs_mode, csh *))dlsym(lib, "cs_open");
}
#endif

#ifndef NO_CAPSTONE
#define NO_CAPSTONE "libcapstone not found; apt-get install libcapstone4"
#endif

static void print_bytes(FILE *f, const uint8_t *p, size_t n)
{
    char buf[3 * 16 + 1] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 12; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%02x ", p[i]);
    fprintf(f, "%-36s", buf);
}

bool host_disas_available(void)
{
    pthread_once(&cs_once, cs_load);
    return cs.open != NULL;
}

void host_disas(FILE *f, const void *code, size_t size, uint64_t addr)
{
    csh h;
    pthread_once(&cs_once, cs_load);
    if (!cs.open || cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
        fprintf(f, "  (no host disassembly: %s)\n", NO_CAPSTONE);
        return;
    }
    const uint8_t *p = code;
    cs_insn *in = cs.malloc(h);
    while (size > 0) {
        const uint8_t *at = p;
        uint64_t a = addr;
        if (cs.disasm_iter(h, &p, &size, &addr, in)) {
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
    cs.free(in, 1);
    cs.close(&h);
}
