/*
 * libFuzzer target: the ELF loader (elf_load_mem) on arbitrary bytes.
 *
 * Every input must either load (break inside the guest's address space; the
 * entry may be anywhere, as on Linux: the first fetch then faults) or fail with a one-line reason; never crash, hang or touch memory
 * outside the guest window (ASan watches xlat's heap). After each input
 * the whole guest space is unmapped again, so inputs do not interact.
 * Built and run by tests/fuzz.sh (make check: a short run; make fuzz: long).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/loader.h"
#include "user/mm.h"
#include "user/options.h"

__attribute__((weak)) Options opt;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mm_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GuestImage img;
    char err[256] = "";
    int r = elf_load_mem(data, size, "/fuzz/prog", &img, err, sizeof err);
    if (r == 0) {
        if (img.brk > GUEST_TASK_SIZE) {
            fprintf(stderr, "loaded outside the guest space: brk %#llx\n",
                    (unsigned long long)img.brk);
            abort();
        }
    } else if (r != -1 || err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) {
        fprintf(stderr, "bad failure report: r=%d err='%s'\n", r, err);
        abort();
    }
    guest_munmap(0, GUEST_TASK_SIZE);
    return 0;
}
