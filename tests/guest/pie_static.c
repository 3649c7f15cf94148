// xlat-cflags: -static-pie -Wl,--no-dynamic-linker -nostdlib -ffreestanding -fno-builtin -fno-stack-protector -fno-tree-loop-distribute-patterns
/*
 * A static-pie program: an ET_DYN image with no interpreter, loaded at a
 * base the loader chooses, that applies its own R_RISCV_RELATIVE
 * relocations before anything reads a pointer from its data.
 *
 * The Debian riscv64 glibc here is built without static-pie support (no
 * rcrt1.o, no _dl_relocate_static_pie), so this test brings its own _start,
 * relocator and system call wrappers instead of libc. It checks relocated
 * data, the bss, the auxv (AT_PHDR, AT_ENTRY, AT_BASE = 0, AT_PHNUM) and
 * brk after the image. Prints no addresses.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>

extern const Elf64_Ehdr __ehdr_start __attribute__((visibility("hidden")));
extern Elf64_Dyn _DYNAMIC[] __attribute__((visibility("hidden")));
extern char _end[] __attribute__((visibility("hidden")));
void _start(void);

/* Entry: pass the initial sp to cstart (pc-relative call, nothing to relocate). */
__asm__(".globl _start\n"
        "_start:\n"
        "  mv a0, sp\n"
        "  andi sp, sp, -16\n"
        "  call cstart\n");

static long sys(long n, long a, long b, long c)
{
    register long a0 __asm__("a0") = a, a1 __asm__("a1") = b, a2 __asm__("a2") = c;
    register long a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

static void put(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    sys(64, 1, (long)s, (long)n);      /* write */
}

static void putnum(const char *label, long v)
{
    char buf[32];
    int i = sizeof(buf) - 1, neg = v < 0;
    unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;
    buf[i--] = 0;
    buf[i--] = '\n';
    do {
        buf[i--] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        buf[i--] = '-';
    put(label);
    put(&buf[i + 1]);
}

static int twice(int x) { return 2 * x; }
static int square(int x) { return x * x; }

/* Initialized data holding addresses: each needs R_RISCV_RELATIVE. */
static int (*const ops[])(int) = { twice, square };
static const char *const names[] = { "twice(7) = ", "square(7) = " };
static int counter = 5;
static int *volatile counter_ptr = &counter;
static char bss[20000];

static long relocate(uintptr_t base)
{
    uint64_t rela = 0, relasz = 0, relaent = sizeof(Elf64_Rela);
    for (Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_RELA)
            rela = d->d_un.d_ptr;
        else if (d->d_tag == DT_RELASZ)
            relasz = d->d_un.d_val;
        else if (d->d_tag == DT_RELAENT)
            relaent = d->d_un.d_val;
    }
    long n = 0;
    for (uint64_t off = 0; rela && off < relasz; off += relaent) {
        const Elf64_Rela *r = (const Elf64_Rela *)(base + rela + off);
        if (ELF64_R_TYPE(r->r_info) == R_RISCV_RELATIVE) {
            *(uint64_t *)(base + r->r_offset) = base + r->r_addend;
            n++;
        }
    }
    return n;
}

static uint64_t auxval(const uint64_t *auxv, uint64_t key)
{
    for (; auxv[0] != AT_NULL; auxv += 2)
        if (auxv[0] == key)
            return auxv[1];
    return ~0ULL;
}

__attribute__((used)) void cstart(uint64_t *sp)
{
    uintptr_t base = (uintptr_t)&__ehdr_start;   /* linked at 0: the bias */
    long nrel = relocate(base);

    put("e_type is ET_DYN: ");
    put(__ehdr_start.e_type == ET_DYN ? "1\n" : "0\n");
    putnum("relocations applied > 2: ", nrel > 2);
    putnum("base page aligned and not 0: ", base % 4096 == 0 && base >= 0x10000);
    for (volatile int i = 0; i < 2; i++)   /* volatile: keep the table loads */
        putnum(names[i], ops[i](7));
    *counter_ptr += 1;
    putnum("counter ", counter);

    long argc = (long)sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    while (*envp)
        envp++;
    const uint64_t *auxv = (const uint64_t *)(envp + 1);
    putnum("argc ", argc);
    putnum("AT_PHDR in the image: ", auxval(auxv, AT_PHDR) == base + __ehdr_start.e_phoff);
    putnum("AT_PHNUM: ", auxval(auxv, AT_PHNUM) == __ehdr_start.e_phnum);
    putnum("AT_ENTRY is _start: ", auxval(auxv, AT_ENTRY) == (uintptr_t)&_start);
    putnum("AT_BASE ", (long)auxval(auxv, AT_BASE));

    int zero = 1;
    for (size_t i = 0; i < sizeof(bss); i++)
        zero &= bss[i] == 0;
    bss[sizeof(bss) - 1] = 1;
    putnum("bss zero: ", zero);

    uintptr_t b = (uintptr_t)sys(214, 0, 0, 0);   /* brk(0) */
    putnum("brk after the image: ", b >= (uintptr_t)_end && b - (uintptr_t)_end < (1 << 20));
    uintptr_t nb = (uintptr_t)sys(214, (long)(b + 10000), 0, 0);
    putnum("brk grows: ", nb == b + 10000);
    ((volatile char *)b)[9999] = 3;
    putnum("heap byte ", ((volatile char *)b)[9999]);
    sys(93, 0, 0, 0);                               /* exit */
    for (;;)
        ;
}
