/*
 * The interpreter: xlat's golden model of RV64GC + Zba/Zbb/Zbs user code.
 *
 * interp_run() executes guest instructions from cpu->pc until one needs the
 * execution loop (ecall, ebreak, illegal instruction, memory fault, exit
 * request) and returns the reason with cpu->pc at that instruction.
 * interp_step() executes exactly one instruction (unit tests, JIT audits).
 *
 * Each step fetches the instruction bits at pc (at a 4-byte aligned pc
 * with one 32-bit load, so code another thread rewrites is never seen torn;
 * otherwise the first 16-bit parcel, then the second only for a 32-bit
 * instruction, so a compressed instruction at the end of a page never
 * touches the next one), looks them up in the vCPU's decoded-instruction
 * cache tagged with both pc and the bits themselves (so rewritten code is
 * always seen, with or without fence.i; filling an entry checks that pc may
 * be fetched: guest_mem.ops->code_ok), and dispatches on the opcode with
 * one switch that names every instruction of insn.def (a new row there
 * fails the build until it is handled here). F/D arithmetic lives in
 * interp_fp.c.
 *
 * Guest memory goes through exec/guest_mem.h: an access of size bytes at A
 * inside the direct window is the host bytes at guest_mem.base + A, any
 * other goes to guest_mem.ops->slow (a host address, or a MemFault that
 * leaves with EXIT_FAULT). A host fault inside the window (user mode: an
 * unmapped or protected page) is the mode's to catch: it fills guest_fault
 * and siglongjmps back to interp_run (guarded()). Exactness at a fault:
 * cpu->pc is stored before the fetch of every instruction, a compiler
 * signal fence precedes every guest access so earlier register and counter
 * updates are already in *cpu, and no instruction writes a register before
 * its memory access has completed.
 *
 * Misaligned loads and stores are allowed (Linux emulates them on hardware
 * that traps); misaligned LR/SC/AMOs raise SIGBUS/BUS_ADRALN as on Linux
 * (a MEM_FAULT_MISALIGNED fault: a load's for LR, an AMO's for the rest,
 * so that system mode raises cause 4 or 6).
 * Atomics use host __atomic operations on guest memory, so they are atomic
 * between guest threads running on different host threads.
 *
 * Counters: cycle and instret both read cpu->instret (instructions retired
 * by the interpreter). time is host CLOCK_MONOTONIC on a 10 MHz timebase
 * (100 ns ticks), the timebase of QEMU's virt board and many SoCs.
 */
#define _GNU_SOURCE
#include "riscv/interp.h"

#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "exec/exec.h"         /* prefault */

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Orders earlier stores to *cpu before a guest access that may fault. */
#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Host views of guest memory: any alignment, may alias anything. */
typedef uint16_t __attribute__((aligned(1), may_alias)) gu16;
typedef uint32_t __attribute__((aligned(1), may_alias)) gu32;
typedef uint64_t __attribute__((aligned(1), may_alias)) gu64;
typedef uint8_t  __attribute__((may_alias)) gu8;

/* Timebase of the time CSR, in Hz. */
#define TIME_HZ 10000000ULL

/* -- Decoded-instruction cache -------------------------------------------- */

/*
 * Direct mapped by pc, tagged by pc, the raw instruction bits that were
 * just fetched and the generation (below). A zero-filled entry matches pc 0
 * with bits 0 in generation 0, whose decoding (the all-zero parcel) is
 * OP_illegal: exactly what the zeroed Insn says. Each thread maps its table
 * when it first interprets (a static thread-local table was zeroed, page by
 * page, at every thread start: a ninth of /usr/bin/true's page faults), and
 * the JIT uses its first 2^DCACHE_BITS_JIT entries only
 * (interp_small_cache): it interprets a block's first runs, and each page
 * of the table it touches is a page fault.
 */
#define DCACHE_BITS 12
#define DCACHE_BITS_JIT 10
#define DCACHE_SIZE (1u << DCACHE_BITS)

typedef struct DCacheEntry {
    uint64_t pc;
    uint32_t bits;
    uint32_t gen;           /* low half of dcache_generation when filled */
    Insn in;
} DCacheEntry;

static unsigned dcache_mask = DCACHE_SIZE - 1;

void interp_small_cache(void) { dcache_mask = (1u << DCACHE_BITS_JIT) - 1; }

static __attribute__((noinline)) DCacheEntry *dcache_map(CPUState *cpu)
{
    void *p = mmap(NULL, DCACHE_SIZE * sizeof(DCacheEntry), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("xlat: interpreter cache");
        exit(1);
    }
    prefault(p, (dcache_mask + 1) * sizeof(DCacheEntry));     /* the part in use */
    return cpu->dcache = p;
}

void interp_cpu_init(CPUState *cpu)
{
    cpu->dcache = NULL;
    cpu->dcache_gen_seen = 0;
    cpu->exec_page = 0;
}

void interp_cpu_exit(CPUState *cpu)
{
    if (cpu->dcache)
        munmap(cpu->dcache, DCACHE_SIZE * sizeof(DCacheEntry));
    interp_cpu_init(cpu);
}

/*
 * The tags make rewritten code safe, but a cached entry also stands for "this
 * pc was executable when decoded". interp_flush_cache() bumps a global
 * generation when a range loses PROT_EXEC (or is remapped); each vCPU
 * compares it with its own at entry and at every taken jump, and from then
 * on takes only entries filled in the new generation (emptying the table
 * instead wrote, and faulted in, all of it at each mmap of a library).
 * cpu->exec_page is 1 + the last page code_ok accepted (0: none), which
 * saves a locked table lookup per fill.
 */
static uint64_t dcache_generation;

void interp_flush_cache(void)
{
    __atomic_fetch_add(&dcache_generation, 1, __ATOMIC_RELEASE);
}

/* Returns the generation entries must carry (its low half). */
static uint32_t dcache_sync(CPUState *cpu)
{
    uint64_t g = __atomic_load_n(&dcache_generation, __ATOMIC_ACQUIRE);
    if (unlikely(g != cpu->dcache_gen_seen)) {
        cpu->exec_page = 0;
        cpu->dcache_gen_seen = g;
    }
    return (uint32_t)g;
}

/* Decode the instruction at pc into e after checking that pc is executable. */
static __attribute__((noinline)) bool dcache_fill(CPUState *cpu, DCacheEntry *e, uint64_t pc,
                                                  uint32_t bits)
{
    uint64_t last = pc + insn_length((uint16_t)bits) - 1;
    uint64_t ok_page = cpu->exec_page - 1;
    if (pc >> TARGET_PAGE_BITS != ok_page || last >> TARGET_PAGE_BITS != ok_page) {
        if (!guest_mem.ops->code_ok(cpu, pc, last + 1 - pc))
            return false;
        cpu->exec_page = (last >> TARGET_PAGE_BITS) + 1;
    }
    insn_decode(bits, &e->in);
    e->pc = pc;
    e->bits = bits;
    e->gen = (uint32_t)cpu->dcache_gen_seen;
    return true;
}

/* -- Arithmetic helpers --------------------------------------------------- */

static inline uint64_t sext32(uint64_t v) { return (uint64_t)(int64_t)(int32_t)(uint32_t)v; }

static inline uint64_t div64(uint64_t a, uint64_t b)
{
    if (b == 0)
        return UINT64_MAX;
    if ((int64_t)a == INT64_MIN && (int64_t)b == -1)
        return a;
    return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t rem64(uint64_t a, uint64_t b)
{
    if (b == 0)
        return a;
    if ((int64_t)a == INT64_MIN && (int64_t)b == -1)
        return 0;
    return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint64_t divu64(uint64_t a, uint64_t b) { return b ? a / b : UINT64_MAX; }
static inline uint64_t remu64(uint64_t a, uint64_t b) { return b ? a % b : a; }

static inline uint64_t div32(uint64_t a, uint64_t b)
{
    int32_t x = (int32_t)a, y = (int32_t)b;
    if (y == 0)
        return UINT64_MAX;
    if (x == INT32_MIN && y == -1)
        return sext32((uint32_t)x);
    return (uint64_t)(int64_t)(x / y);
}

static inline uint64_t rem32(uint64_t a, uint64_t b)
{
    int32_t x = (int32_t)a, y = (int32_t)b;
    if (y == 0)
        return (uint64_t)(int64_t)x;
    if (x == INT32_MIN && y == -1)
        return 0;
    return (uint64_t)(int64_t)(x % y);
}

static inline uint64_t divu32(uint64_t a, uint64_t b)
{
    uint32_t x = (uint32_t)a, y = (uint32_t)b;
    return sext32(y ? x / y : UINT32_MAX);
}

static inline uint64_t remu32(uint64_t a, uint64_t b)
{
    uint32_t x = (uint32_t)a, y = (uint32_t)b;
    return sext32(y ? x % y : x);
}

static inline uint64_t mulh(uint64_t a, uint64_t b)
{
    return (uint64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64);
}

static inline uint64_t mulhsu(uint64_t a, uint64_t b)
{
    /* |a| <= 2^63 and b < 2^64: the product fits in a signed __int128. */
    return (uint64_t)(((__int128)(int64_t)a * (__int128)b) >> 64);
}

static inline uint64_t mulhu(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t rol64(uint64_t a, unsigned s) { s &= 63; return (a << s) | (a >> (-s & 63)); }
static inline uint64_t ror64(uint64_t a, unsigned s) { s &= 63; return (a >> s) | (a << (-s & 63)); }
static inline uint32_t rol32(uint32_t a, unsigned s) { s &= 31; return (a << s) | (a >> (-s & 31)); }
static inline uint32_t ror32(uint32_t a, unsigned s) { s &= 31; return (a >> s) | (a << (-s & 31)); }

static inline uint64_t orc_b(uint64_t a)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < 64; i += 8)
        if ((a >> i) & 0xff)
            r |= 0xffULL << i;
    return r;
}

/* -- Atomics on guest memory ---------------------------------------------- */

enum amo_op { AMO_SWAP, AMO_ADD, AMO_XOR, AMO_AND, AMO_OR,
              AMO_MIN, AMO_MAX, AMO_MINU, AMO_MAXU };

/*
 * amo32/amo64: apply op to *p atomically and return the old value. The
 * min/max forms have no host instruction and use a compare-and-swap loop.
 */
#define DEFINE_AMO(bits)                                                        \
static inline uint##bits##_t amo##bits(uint##bits##_t *p, enum amo_op op,      \
                                       uint##bits##_t v)                        \
{                                                                               \
    switch (op) {                                                               \
    case AMO_SWAP: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);          \
    case AMO_ADD:  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);           \
    case AMO_XOR:  return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);           \
    case AMO_AND:  return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);           \
    case AMO_OR:   return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);            \
    default: break;                                                             \
    }                                                                           \
    uint##bits##_t old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nv;              \
    do {                                                                        \
        switch (op) {                                                           \
        case AMO_MIN:  nv = (int##bits##_t)old < (int##bits##_t)v ? old : v; break; \
        case AMO_MAX:  nv = (int##bits##_t)old > (int##bits##_t)v ? old : v; break; \
        case AMO_MINU: nv = old < v ? old : v; break;                           \
        default:       nv = old > v ? old : v; break;                           \
        }                                                                       \
    } while (!__atomic_compare_exchange_n(p, &old, nv, false,                   \
                                          __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)); \
    return old;                                                                 \
}

DEFINE_AMO(32)
DEFINE_AMO(64)

/* Leave with a memory fault: pc stays at the faulting instruction. */
static enum exit_reason fault_exit(CPUState *cpu, uint64_t pc, const MemFault *fault)
{
    cpu->pc = pc;
    cpu->fault = *fault;
    return EXIT_FAULT;
}

/* Accesses outside the direct window: the mode's slow paths. */
static __attribute__((noinline)) void *mem_slow(CPUState *cpu, uint64_t a, unsigned n,
                                                enum mem_access acc, MemFault *fault)
{
    return guest_mem.ops->slow(cpu, a, n, acc, fault);
}

static __attribute__((noinline)) bool mem_load(CPUState *cpu, uint64_t a, unsigned n,
                                               uint64_t *val, MemFault *fault)
{
    return guest_mem.ops->load(cpu, a, n, val, fault);
}

static __attribute__((noinline)) bool mem_store(CPUState *cpu, uint64_t a, unsigned n,
                                                uint64_t val, MemFault *fault)
{
    return guest_mem.ops->store(cpu, a, n, val, fault);
}

/* -- CSRs ----------------------------------------------------------------- */

static uint64_t host_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * TIME_HZ + (uint64_t)ts.tv_nsec / (1000000000ULL / TIME_HZ);
}

/* Read CSR csr into *val; false if it does not exist in user mode. */
static bool csr_read(const CPUState *cpu, unsigned csr, uint64_t *val)
{
    switch (csr) {
    case CSR_FFLAGS:  *val = cpu->fflags & 0x1f; return true;
    case CSR_FRM:     *val = cpu->frm & 7; return true;
    case CSR_FCSR:    *val = (uint64_t)(cpu->frm & 7) << 5 | (cpu->fflags & 0x1f); return true;
    case CSR_CYCLE:   *val = cpu->instret; return true;
    case CSR_TIME:    *val = host_time(); return true;
    case CSR_INSTRET: *val = cpu->instret; return true;
    default:          return false;
    }
}

/* Write CSR csr; false if it does not exist or is read-only. */
static bool csr_write(CPUState *cpu, unsigned csr, uint64_t val)
{
    switch (csr) {
    case CSR_FFLAGS: cpu->fflags = val & 0x1f; return true;
    case CSR_FRM:    cpu->frm = val & 7; return true;
    case CSR_FCSR:   cpu->fflags = val & 0x1f; cpu->frm = (val >> 5) & 7; return true;
    default:         return false;
    }
}

/*
 * csrrw/csrrs/csrrc and their immediate forms. csrrs/csrrc with a zero
 * source register number (or uimm 0) do not write, so reading a read-only
 * counter is legal. With the privileged architecture (system mode) every
 * CSR is priv.c's. Returns PRIV_OK, PRIV_STOP (done; the loop must look)
 * or PRIV_ILLEGAL; rd is written only on success.
 */
static int exec_csr(CPUState *cpu, const Insn *in)
{
    unsigned csr = (unsigned)in->imm & 0xfff;
    enum insn_op op = (enum insn_op)in->op;
    bool imm_form = op == OP_csrrwi || op == OP_csrrsi || op == OP_csrrci;
    uint64_t src = imm_form ? in->rs1 : cpu->x[in->rs1];
    bool write = op == OP_csrrw || op == OP_csrrwi || in->rs1 != 0;
    int kind = op == OP_csrrw || op == OP_csrrwi ? CSR_OP_WRITE
             : op == OP_csrrs || op == OP_csrrsi ? CSR_OP_SET : CSR_OP_CLEAR;
    uint64_t old, nv;

    if (cpu->priv.on) {
        int r = priv_csr(cpu, csr, kind, src, write, &old);
        if (r != PRIV_ILLEGAL)
            cpu->x[in->rd] = old;
        return r;
    }
    if (!csr_read(cpu, csr, &old))
        return PRIV_ILLEGAL;
    nv = kind == CSR_OP_WRITE ? src : kind == CSR_OP_SET ? old | src : old & ~src;
    if (write && !csr_write(cpu, csr, nv))
        return PRIV_ILLEGAL;
    cpu->x[in->rd] = old;
    return PRIV_OK;
}

/* -- The execution loop --------------------------------------------------- */

#define LD16(h)  (*(const gu16 *)(h))
#define LD32(h)  (*(const gu32 *)(h))

/* A load of sizeof(T) bytes at guest address a (its value, as T's integer
 * type): the window's host bytes, or the mode's slow path; a fault leaves
 * through mem_fault. */
#define LOAD(T, a) ({                                                   \
        uint64_t la_ = (a), lv_;                                        \
        SIGNAL_FENCE();                                                 \
        if (likely(guest_mem_in_window(la_, sizeof(T))))                \
            lv_ = *(const T *)(guest_mem.base + la_);                   \
        else if (!mem_load(cpu, la_, sizeof(T), &lv_, &fault))          \
            goto mem_fault;                                             \
        lv_;                                                            \
    })

/* A store of v's low sizeof(T) bytes at guest address a, likewise. */
#define STORE(T, a, v) do {                                             \
        uint64_t sa_ = (a), sv_ = (v);                                  \
        SIGNAL_FENCE();                                                 \
        if (likely(guest_mem_in_window(sa_, sizeof(T))))                \
            *(T *)(guest_mem.base + sa_) = (T)sv_;                      \
        else if (!mem_store(cpu, sa_, sizeof(T), sv_, &fault))          \
            goto mem_fault;                                             \
    } while (0)

/* The host address of an access of n bytes at a that needs one (a fetch,
 * an LR/SC/AMO), after the fence; a fault leaves through mem_fault. */
#define HOST(a, n, acc) ({                                              \
        uint64_t a_ = (a);                                              \
        void *h_;                                                       \
        if (likely(guest_mem_in_window(a_, (n))))                       \
            h_ = guest_mem.base + a_;                                   \
        else if (!(h_ = mem_slow(cpu, a_, (n), (acc), &fault)))         \
            goto mem_fault;                                             \
        SIGNAL_FENCE();                                                 \
        h_;                                                             \
    })

/* An LR/SC/AMO's host address: natural alignment, then as HOST. acc is
 * MEM_LOAD for an LR (a load: its misalignment is a load's, cause 4, and
 * it needs read permission only) and MEM_AMO for SC and the AMOs (cause 6;
 * write permission), as Spike and QEMU have them. */
#define ATOMIC_HOST(a, n, acc) ({                                       \
        uint64_t aa_ = (a);                                             \
        if (unlikely(aa_ & ((n) - 1))) {                                \
            fault = (MemFault){ MEM_FAULT_MISALIGNED, (acc), aa_ };     \
            goto mem_fault;                                             \
        }                                                               \
        HOST(aa_, (n), (acc));                                          \
    })
#define LR_HOST(a, n)  ATOMIC_HOST(a, n, MEM_LOAD)
#define AMO_HOST(a, n) ATOMIC_HOST(a, n, MEM_AMO)

/* An LR with rl set (lr.aqrl: sequentially consistent) orders earlier
 * stores before its load, which x86-TSO alone does not (a seq_cst load
 * is a plain load there). */
#define LR_RELEASE() do {                                               \
        if (in->rm & 1)                                                 \
            __atomic_thread_fence(__ATOMIC_SEQ_CST);                    \
    } while (0)

/* Operand shorthands for the switch. */
#define RS1  x[in->rs1]
#define RS2  x[in->rs2]
#define RD   x[in->rd]
#define IMM  ((uint64_t)in->imm)
#define EA   (RS1 + IMM)

#define AMO_W(op) do {                                                  \
        uint64_t v_ = RS2;                                              \
        uint32_t *h_ = AMO_HOST(RS1, 4);                                \
        RD = sext32(amo32(h_, (op), (uint32_t)v_));                     \
    } while (0)

#define AMO_D(op) do {                                                  \
        uint64_t v_ = RS2;                                              \
        uint64_t *h_ = AMO_HOST(RS1, 8);                                \
        RD = amo64(h_, (op), v_);                                       \
    } while (0)

#define BRANCH(cond) do {                                               \
        if (cond) {                                                     \
            npc = pc + IMM;                                             \
            goto jump;                                                  \
        }                                                               \
    } while (0)

/*
 * The interpreter proper. `straight` is a compile-time constant at each call
 * site: 0 runs until an exit (interp_run); n > 0 runs at most n instructions
 * and stops after a taken branch or jump (1: interp_step; interp_straight).
 * Host faults in guest accesses leave through siglongjmp (see guarded()).
 */
static inline __attribute__((always_inline))
enum exit_reason run(CPUState *cpu, unsigned straight)
{
    uint64_t *const x = cpu->x;
    DCacheEntry *const dc = likely(cpu->dcache != NULL) ? cpu->dcache : dcache_map(cpu);
    uint64_t pc = cpu->pc;
    uint64_t npc;
    MemFault fault;

    uint32_t gen = dcache_sync(cpu);
    for (;;) {
        /* -- Fetch and decode -- */
        cpu->pc = pc;
        /* Aligned: 4 bytes in one load, as hardware does (they share a page). */
        const void *h = HOST(pc, (pc & 3) == 0 ? 4 : 2, MEM_FETCH);
        uint32_t bits;
        if ((pc & 3) == 0) {
            bits = insn_bits_of_word(LD32(h));
        } else if (((bits = LD16(h)) & 3) == 3) {
            bits |= (uint32_t)LD16(HOST(pc + 2, 2, MEM_FETCH)) << 16;
        }
        DCacheEntry *e = &dc[(pc >> 1) & dcache_mask];
        if (unlikely(e->pc != pc || e->bits != bits || e->gen != gen) &&
            !dcache_fill(cpu, e, pc, bits)) {
            fault = (MemFault){ MEM_FAULT_PROT, MEM_FETCH, pc };
            goto mem_fault;
        }
        const Insn *const in = &e->in;
        npc = pc + in->len;

        /* -- Execute -- */
        switch ((enum insn_op)in->op) {

        /* RV64I: upper immediates, jumps, branches */
        case OP_lui:   RD = IMM; break;                         /* lui */
        case OP_auipc: RD = pc + IMM; break;                    /* auipc */
        case OP_jal:                                            /* jal */
            RD = npc;
            npc = pc + IMM;
            goto jump;
        case OP_jalr: {                                         /* jalr */
            uint64_t target = (RS1 + IMM) & ~1ULL;
            RD = npc;
            npc = target;
            goto jump;
        }
        case OP_beq:  BRANCH(RS1 == RS2); break;                /* beq */
        case OP_bne:  BRANCH(RS1 != RS2); break;                /* bne */
        case OP_blt:  BRANCH((int64_t)RS1 < (int64_t)RS2); break;   /* blt */
        case OP_bge:  BRANCH((int64_t)RS1 >= (int64_t)RS2); break;  /* bge */
        case OP_bltu: BRANCH(RS1 < RS2); break;                 /* bltu */
        case OP_bgeu: BRANCH(RS1 >= RS2); break;                /* bgeu */

        /* RV64I: loads and stores */
        case OP_lb:  { RD = (uint64_t)(int64_t)(int8_t)LOAD(gu8, EA); break; }
        case OP_lh:  { RD = (uint64_t)(int64_t)(int16_t)LOAD(gu16, EA); break; }
        case OP_lw:  { RD = sext32(LOAD(gu32, EA)); break; }
        case OP_ld:  { RD = LOAD(gu64, EA); break; }
        case OP_lbu: { RD = LOAD(gu8, EA); break; }
        case OP_lhu: { RD = LOAD(gu16, EA); break; }
        case OP_lwu: { RD = LOAD(gu32, EA); break; }
        case OP_sb:  { STORE(gu8, EA, RS2); break; }
        case OP_sh:  { STORE(gu16, EA, RS2); break; }
        case OP_sw:  { STORE(gu32, EA, RS2); break; }
        case OP_sd:  { STORE(gu64, EA, RS2); break; }

        /* RV64I: register-immediate */
        case OP_addi:  RD = RS1 + IMM; break;                   /* addi */
        case OP_slti:  RD = (int64_t)RS1 < in->imm; break;      /* slti */
        case OP_sltiu: RD = RS1 < IMM; break;                   /* sltiu */
        case OP_xori:  RD = RS1 ^ IMM; break;                   /* xori */
        case OP_ori:   RD = RS1 | IMM; break;                   /* ori */
        case OP_andi:  RD = RS1 & IMM; break;                   /* andi */
        case OP_slli:  RD = RS1 << (IMM & 63); break;           /* slli */
        case OP_srli:  RD = RS1 >> (IMM & 63); break;           /* srli */
        case OP_srai:  RD = (uint64_t)((int64_t)RS1 >> (IMM & 63)); break; /* srai */

        /* RV64I: register-register */
        case OP_add:  RD = RS1 + RS2; break;                    /* add */
        case OP_sub:  RD = RS1 - RS2; break;                    /* sub */
        case OP_sll:  RD = RS1 << (RS2 & 63); break;            /* sll */
        case OP_slt:  RD = (int64_t)RS1 < (int64_t)RS2; break;  /* slt */
        case OP_sltu: RD = RS1 < RS2; break;                    /* sltu */
        case OP_xor:  RD = RS1 ^ RS2; break;                    /* xor */
        case OP_srl:  RD = RS1 >> (RS2 & 63); break;            /* srl */
        case OP_sra:  RD = (uint64_t)((int64_t)RS1 >> (RS2 & 63)); break; /* sra */
        case OP_or:   RD = RS1 | RS2; break;                    /* or */
        case OP_and:  RD = RS1 & RS2; break;                    /* and */

        /* RV64I: 32-bit (W) operations, results sign-extended */
        case OP_addiw: RD = sext32(RS1 + IMM); break;           /* addiw */
        case OP_slliw: RD = sext32((uint32_t)RS1 << (IMM & 31)); break;  /* slliw */
        case OP_srliw: RD = sext32((uint32_t)RS1 >> (IMM & 31)); break;  /* srliw */
        case OP_sraiw: RD = (uint64_t)(int64_t)((int32_t)RS1 >> (IMM & 31)); break; /* sraiw */
        case OP_addw:  RD = sext32(RS1 + RS2); break;           /* addw */
        case OP_subw:  RD = sext32(RS1 - RS2); break;           /* subw */
        case OP_sllw:  RD = sext32((uint32_t)RS1 << (RS2 & 31)); break;  /* sllw */
        case OP_srlw:  RD = sext32((uint32_t)RS1 >> (RS2 & 31)); break;  /* srlw */
        case OP_sraw:  RD = (uint64_t)(int64_t)((int32_t)RS1 >> (RS2 & 31)); break; /* sraw */

        /* RV64I: system */
        case OP_fence:              /* TSO orders all but a store before a load */
            if (fence_orders_store_load(in->imm))
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
            break;
        case OP_fence_i:            /* the decode cache is tagged by bits; dispatch.c */
            cpu->fence_i_count++;   /* flushes translations after interp_block */
            break;
        case OP_ecall:
            cpu->pc = pc;
            return EXIT_ECALL;
        case OP_ebreak:
            cpu->pc = pc;
            return EXIT_EBREAK;

        /* Zicsr */
        case OP_csrrw: case OP_csrrs: case OP_csrrc:
        case OP_csrrwi: case OP_csrrsi: case OP_csrrci:
            switch (exec_csr(cpu, in)) {
            case PRIV_ILLEGAL: goto illegal;
            case PRIV_STOP:    goto stop;
            default:           break;
            }
            break;

        /* Privileged (priv.c): illegal without the privileged architecture */
        case OP_mret:
        case OP_sret:
            if (!cpu->priv.on ||
                priv_xret(cpu, in->op == OP_mret ? PRV_M : PRV_S, &npc) == PRIV_ILLEGAL)
                goto illegal;
            goto stop;
        case OP_wfi:
            if (!cpu->priv.on || priv_wfi(cpu) == PRIV_ILLEGAL)
                goto illegal;
            x[0] = 0;
            cpu->instret++;
            cpu->pc = npc;
            return EXIT_WFI;
        case OP_sfence_vma:
            if (!cpu->priv.on ||
                priv_sfence_vma(cpu, RS1, RS2, in->rs1 != 0, in->rs2 != 0) == PRIV_ILLEGAL)
                goto illegal;
            goto stop;

        /* M */
        case OP_mul:    RD = RS1 * RS2; break;                  /* mul */
        case OP_mulh:   RD = mulh(RS1, RS2); break;             /* mulh */
        case OP_mulhsu: RD = mulhsu(RS1, RS2); break;           /* mulhsu */
        case OP_mulhu:  RD = mulhu(RS1, RS2); break;            /* mulhu */
        case OP_div:    RD = div64(RS1, RS2); break;            /* div */
        case OP_divu:   RD = divu64(RS1, RS2); break;           /* divu */
        case OP_rem:    RD = rem64(RS1, RS2); break;            /* rem */
        case OP_remu:   RD = remu64(RS1, RS2); break;           /* remu */
        case OP_mulw:   RD = sext32(RS1 * RS2); break;          /* mulw */
        case OP_divw:   RD = div32(RS1, RS2); break;            /* divw */
        case OP_divuw:  RD = divu32(RS1, RS2); break;           /* divuw */
        case OP_remw:   RD = rem32(RS1, RS2); break;            /* remw */
        case OP_remuw:  RD = remu32(RS1, RS2); break;           /* remuw */

        /* A: load-reserved / store-conditional */
        case OP_lr_w: {                                         /* lr.w */
            uint64_t a = RS1;
            LR_RELEASE();
            uint32_t v = __atomic_load_n((uint32_t *)LR_HOST(a, 4), __ATOMIC_SEQ_CST);
            cpu->res_addr = a;
            cpu->res_val = v;
            cpu->res_valid = true;
            RD = sext32(v);
            break;
        }
        case OP_lr_d: {                                         /* lr.d */
            uint64_t a = RS1;
            LR_RELEASE();
            uint64_t v = __atomic_load_n((uint64_t *)LR_HOST(a, 8), __ATOMIC_SEQ_CST);
            cpu->res_addr = a;
            cpu->res_val = v;
            cpu->res_valid = true;
            RD = v;
            break;
        }
        case OP_sc_w: {                                         /* sc.w */
            uint64_t a = RS1, v = RS2, fail = 1;
            uint32_t *h = AMO_HOST(a, 4);
            if (cpu->res_valid && cpu->res_addr == a) {
                uint32_t expect = (uint32_t)cpu->res_val;
                if (__atomic_compare_exchange_n(h, &expect, (uint32_t)v,
                                                false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                    fail = 0;
            }
            cpu->res_valid = false;
            RD = fail;
            break;
        }
        case OP_sc_d: {                                         /* sc.d */
            uint64_t a = RS1, v = RS2, fail = 1;
            uint64_t *h = AMO_HOST(a, 8);
            if (cpu->res_valid && cpu->res_addr == a) {
                uint64_t expect = cpu->res_val;
                if (__atomic_compare_exchange_n(h, &expect, v,
                                                false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                    fail = 0;
            }
            cpu->res_valid = false;
            RD = fail;
            break;
        }

        /* A: read-modify-write */
        case OP_amoswap_w: AMO_W(AMO_SWAP); break;              /* amoswap.w */
        case OP_amoadd_w:  AMO_W(AMO_ADD); break;               /* amoadd.w */
        case OP_amoxor_w:  AMO_W(AMO_XOR); break;               /* amoxor.w */
        case OP_amoand_w:  AMO_W(AMO_AND); break;               /* amoand.w */
        case OP_amoor_w:   AMO_W(AMO_OR); break;                /* amoor.w */
        case OP_amomin_w:  AMO_W(AMO_MIN); break;               /* amomin.w */
        case OP_amomax_w:  AMO_W(AMO_MAX); break;               /* amomax.w */
        case OP_amominu_w: AMO_W(AMO_MINU); break;              /* amominu.w */
        case OP_amomaxu_w: AMO_W(AMO_MAXU); break;              /* amomaxu.w */
        case OP_amoswap_d: AMO_D(AMO_SWAP); break;              /* amoswap.d */
        case OP_amoadd_d:  AMO_D(AMO_ADD); break;               /* amoadd.d */
        case OP_amoxor_d:  AMO_D(AMO_XOR); break;               /* amoxor.d */
        case OP_amoand_d:  AMO_D(AMO_AND); break;               /* amoand.d */
        case OP_amoor_d:   AMO_D(AMO_OR); break;                /* amoor.d */
        case OP_amomin_d:  AMO_D(AMO_MIN); break;               /* amomin.d */
        case OP_amomax_d:  AMO_D(AMO_MAX); break;               /* amomax.d */
        case OP_amominu_d: AMO_D(AMO_MINU); break;              /* amominu.d */
        case OP_amomaxu_d: AMO_D(AMO_MAXU); break;              /* amomaxu.d */

        /* F/D loads and stores (single values are NaN-boxed in f[]) */
#define FP_ON() do { if (unlikely(cpu->priv.on) && !priv_fp_use(cpu)) goto illegal; } while (0)
        case OP_flw: { FP_ON(); cpu->f[in->rd] = 0xffffffff00000000ULL | LOAD(gu32, EA); break; }
        case OP_fld: { FP_ON(); cpu->f[in->rd] = LOAD(gu64, EA); break; }
        case OP_fsw: { FP_ON(); STORE(gu32, EA, cpu->f[in->rs2]); break; }
        case OP_fsd: { FP_ON(); STORE(gu64, EA, cpu->f[in->rs2]); break; }

        /* F/D arithmetic, compares, conversions, moves: interp_fp.c */
        case OP_fmadd_s: case OP_fmsub_s: case OP_fnmsub_s: case OP_fnmadd_s:
        case OP_fadd_s: case OP_fsub_s: case OP_fmul_s: case OP_fdiv_s:
        case OP_fsqrt_s: case OP_fsgnj_s: case OP_fsgnjn_s: case OP_fsgnjx_s:
        case OP_fmin_s: case OP_fmax_s:
        case OP_fcvt_w_s: case OP_fcvt_wu_s: case OP_fcvt_l_s: case OP_fcvt_lu_s:
        case OP_fmv_x_w: case OP_fclass_s: case OP_feq_s: case OP_flt_s: case OP_fle_s:
        case OP_fcvt_s_w: case OP_fcvt_s_wu: case OP_fcvt_s_l: case OP_fcvt_s_lu:
        case OP_fmv_w_x:
        case OP_fmadd_d: case OP_fmsub_d: case OP_fnmsub_d: case OP_fnmadd_d:
        case OP_fadd_d: case OP_fsub_d: case OP_fmul_d: case OP_fdiv_d:
        case OP_fsqrt_d: case OP_fsgnj_d: case OP_fsgnjn_d: case OP_fsgnjx_d:
        case OP_fmin_d: case OP_fmax_d: case OP_fcvt_s_d: case OP_fcvt_d_s:
        case OP_feq_d: case OP_flt_d: case OP_fle_d: case OP_fclass_d:
        case OP_fcvt_w_d: case OP_fcvt_wu_d: case OP_fcvt_l_d: case OP_fcvt_lu_d:
        case OP_fcvt_d_w: case OP_fcvt_d_wu: case OP_fcvt_d_l: case OP_fcvt_d_lu:
        case OP_fmv_x_d: case OP_fmv_d_x:
            FP_ON();
            if (interp_fp(cpu, in) != EXIT_NONE)
                goto illegal;
            break;

        /* Zba */
        case OP_sh1add:    RD = (RS1 << 1) + RS2; break;                  /* sh1add */
        case OP_sh2add:    RD = (RS1 << 2) + RS2; break;                  /* sh2add */
        case OP_sh3add:    RD = (RS1 << 3) + RS2; break;                  /* sh3add */
        case OP_add_uw:    RD = (uint64_t)(uint32_t)RS1 + RS2; break;     /* add.uw */
        case OP_sh1add_uw: RD = ((uint64_t)(uint32_t)RS1 << 1) + RS2; break; /* sh1add.uw */
        case OP_sh2add_uw: RD = ((uint64_t)(uint32_t)RS1 << 2) + RS2; break; /* sh2add.uw */
        case OP_sh3add_uw: RD = ((uint64_t)(uint32_t)RS1 << 3) + RS2; break; /* sh3add.uw */
        case OP_slli_uw:   RD = (uint64_t)(uint32_t)RS1 << (IMM & 63); break; /* slli.uw */

        /* Zbb */
        case OP_andn:   RD = RS1 & ~RS2; break;                 /* andn */
        case OP_orn:    RD = RS1 | ~RS2; break;                 /* orn */
        case OP_xnor:   RD = ~(RS1 ^ RS2); break;               /* xnor */
        case OP_clz:    RD = RS1 ? (uint64_t)__builtin_clzll(RS1) : 64; break;  /* clz */
        case OP_ctz:    RD = RS1 ? (uint64_t)__builtin_ctzll(RS1) : 64; break;  /* ctz */
        case OP_cpop:   RD = (uint64_t)__builtin_popcountll(RS1); break;        /* cpop */
        case OP_sext_b: RD = (uint64_t)(int64_t)(int8_t)RS1; break;             /* sext.b */
        case OP_sext_h: RD = (uint64_t)(int64_t)(int16_t)RS1; break;            /* sext.h */
        case OP_zext_h: RD = (uint16_t)RS1; break;                              /* zext.h */
        case OP_clzw:   RD = (uint32_t)RS1 ? (uint64_t)__builtin_clz((uint32_t)RS1) : 32; break; /* clzw */
        case OP_ctzw:   RD = (uint32_t)RS1 ? (uint64_t)__builtin_ctz((uint32_t)RS1) : 32; break; /* ctzw */
        case OP_cpopw:  RD = (uint64_t)__builtin_popcount((uint32_t)RS1); break;  /* cpopw */
        case OP_max:    RD = (int64_t)RS1 > (int64_t)RS2 ? RS1 : RS2; break;    /* max */
        case OP_maxu:   RD = RS1 > RS2 ? RS1 : RS2; break;                      /* maxu */
        case OP_min:    RD = (int64_t)RS1 < (int64_t)RS2 ? RS1 : RS2; break;    /* min */
        case OP_minu:   RD = RS1 < RS2 ? RS1 : RS2; break;                      /* minu */
        case OP_rol:    RD = rol64(RS1, (unsigned)RS2); break;                  /* rol */
        case OP_ror:    RD = ror64(RS1, (unsigned)RS2); break;                  /* ror */
        case OP_rolw:   RD = sext32(rol32((uint32_t)RS1, (unsigned)RS2)); break; /* rolw */
        case OP_rorw:   RD = sext32(ror32((uint32_t)RS1, (unsigned)RS2)); break; /* rorw */
        case OP_rori:   RD = ror64(RS1, (unsigned)IMM); break;                  /* rori */
        case OP_roriw:  RD = sext32(ror32((uint32_t)RS1, (unsigned)IMM)); break; /* roriw */
        case OP_orc_b:  RD = orc_b(RS1); break;                                 /* orc.b */
        case OP_rev8:   RD = __builtin_bswap64(RS1); break;                     /* rev8 */

        /* Zbs */
        case OP_bclr:  RD = RS1 & ~(1ULL << (RS2 & 63)); break; /* bclr */
        case OP_bclri: RD = RS1 & ~(1ULL << (IMM & 63)); break; /* bclri */
        case OP_bext:  RD = (RS1 >> (RS2 & 63)) & 1; break;     /* bext */
        case OP_bexti: RD = (RS1 >> (IMM & 63)) & 1; break;     /* bexti */
        case OP_binv:  RD = RS1 ^ (1ULL << (RS2 & 63)); break;  /* binv */
        case OP_binvi: RD = RS1 ^ (1ULL << (IMM & 63)); break;  /* binvi */
        case OP_bset:  RD = RS1 | (1ULL << (RS2 & 63)); break;  /* bset */
        case OP_bseti: RD = RS1 | (1ULL << (IMM & 63)); break;  /* bseti */

        case OP_illegal:
        case OP_COUNT:
            goto illegal;
        }

        /* -- Fall through to the next instruction -- */
        x[0] = 0;
        cpu->instret++;
        pc = npc;
        if (straight && --straight == 0) {
            cpu->pc = pc;
            return EXIT_NONE;
        }
        continue;

        /* -- A taken branch or jump: the only place loops pass through -- */
    jump:
        x[0] = 0;
        cpu->instret++;
        pc = npc;
        if (straight || unlikely(cpu->exit_request)) {
            cpu->pc = pc;
            return straight ? EXIT_NONE : EXIT_REQUEST;
        }
        gen = dcache_sync(cpu);
    }

stop:       /* done, and the privileged state changed: the loop looks first */
    x[0] = 0;
    cpu->instret++;
    cpu->pc = npc;
    return EXIT_REQUEST;
illegal:
    cpu->pc = pc;
    return EXIT_ILLEGAL;
mem_fault:
    return fault_exit(cpu, pc, &fault);
}

/* -- Entry points ---------------------------------------------------------- */

static __attribute__((noinline)) enum exit_reason run_many(CPUState *cpu)
{
    return run(cpu, 0);
}

static __attribute__((noinline)) enum exit_reason run_one(CPUState *cpu)
{
    return run(cpu, 1);
}

static __attribute__((noinline)) enum exit_reason run_straight(CPUState *cpu)
{
    return run(cpu, INTERP_STRAIGHT_MAX);
}

/*
 * Run fn with guest_fault armed: one sigsetjmp per call, not per
 * instruction. After a host fault in a guest access, *cpu is exact (see the
 * overview) and only the fault details need filling in.
 */
static enum exit_reason guarded(CPUState *cpu, enum exit_reason (*fn)(CPUState *))
{
    sigjmp_buf jb;
    sigjmp_buf *const outer = guest_fault.jmp;

    if (sigsetjmp(jb, 0)) {
        guest_fault.jmp = outer;
        cpu->fault = guest_fault.fault;
        cpu->x[0] = 0;
        return EXIT_FAULT;
    }
    guest_fault.jmp = &jb;
    enum exit_reason r = fn(cpu);
    guest_fault.jmp = outer;
    return r;
}

enum exit_reason interp_run(CPUState *cpu)
{
    return guarded(cpu, run_many);
}

enum exit_reason interp_step(CPUState *cpu)
{
    return guarded(cpu, run_one);
}

enum exit_reason interp_csr(CPUState *cpu, uint64_t pc, const Insn *in)
{
    int r = exec_csr(cpu, in);
    if (r == PRIV_ILLEGAL) {
        cpu->pc = pc;
        return EXIT_ILLEGAL;
    }
    cpu->x[0] = 0;
    cpu->instret++;
    cpu->pc = pc + in->len;
    return r == PRIV_STOP ? EXIT_REQUEST : EXIT_NONE;
}

enum exit_reason interp_straight(CPUState *cpu)
{
    return guarded(cpu, run_straight);
}
