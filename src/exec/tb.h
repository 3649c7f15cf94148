/*
 * Translation blocks and the code buffer: the interface between the JIT
 * core (src/exec), the guest ISA's translator (src/riscv/translate.c) and
 * the host backend (src/x86).
 *
 * A TB is one run of guest instructions translated to host code, found by
 * its key: the virtual pc it runs at, the physical address of that code and
 * the flags of the state it was translated for (privilege, translation
 * mode). User mode's key is (pc, pc, 0). Its host code lives in the code
 * buffer; the TB of a host address is found by binary search over the TB
 * array, which is in host-address order (host_fault.c). Direct exits are
 * "goto_tb slots": an aligned jmp rel32 that first points at an exit stub
 * (EXIT_CHAIN: the target pc and TB|slot follow from cpu->jit_link, the
 * stub's data; x86/backend.h) and is patched to jump straight into the
 * target TB once it exists.
 */
#ifndef XLAT_EXEC_TB_H
#define XLAT_EXEC_TB_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/cpu.h"

/* Internal exit codes of translated code (beyond enum exit_reason). */
enum {
    EXIT_CHAIN  = 0x100,    /* unchained direct exit: cpu->pc, cpu->jit_link */
    EXIT_LOOKUP = 0x101,    /* indirect exit missed the jump cache: cpu->pc */
    EXIT_POLL   = 0x102,    /* exit_request or jit_kick seen at a TB entry */
    EXIT_FENCEI = 0x103,    /* fence.i: flush translations, resume at cpu->pc */
    /* An interpreted instruction changed only the guest's own privileged
     * state (a CSR write such as sstatus.SUM: priv.h's PRIV_STOP) and
     * nothing can be taken now: go on at cpu->pc, whose block the new
     * state picks. The interpreter stubs go there through the jump cache
     * without leaving translated code (dispatch.c: jit_helper_interp). */
    EXIT_REDISPATCH = 0x104,
};

/* One jump cache entry; pc 1 (odd, never a guest pc) marks it empty, and so
 * does pc 0 in any entry but the first (jump_cache.c: jc_clear). */
typedef struct JCEntry {
    uint64_t pc;
    const void *host;       /* TB entry in the RX view */
} JCEntry;

#define TB_MAX_INSNS 64
#define TB_NO_PAGE UINT64_MAX
/* Direct exits of one block: a block goes on past a conditional branch
 * (the taken side leaves through a slot) while slots remain. TB|slot tags
 * use the low three bits of a TB pointer. */
#define TB_MAX_SLOTS 6
#define TB_SLOT_MASK 7

/* Host registers a block may give to other guest registers (x86/backend.c:
 * be_choose_remap). */
#define TB_MAX_REMAP 4
/* In this block, host register `host` holds guest register `in`, and guest
 * register `out` (its holder everywhere else) lives in CPUState. */
typedef struct TBRemap { int8_t host, out, in; } TBRemap;

/* How a block ends, for the -d stats block profile. */
enum { TB_EXIT_DIRECT, TB_EXIT_INDIRECT, TB_EXIT_OTHER, TB_EXIT_KINDS };

/*
 * What a TB is looked up by. In a mode that translates pcs (code_phys:
 * system mode) a block never leaves its virtual page, but its first
 * instruction may: a 4-byte one at the page's last halfword, whose second
 * half is wherever the next virtual page maps now. Its block (that one
 * instruction) is then keyed by that physical page too, so it runs only
 * while the mapping it was translated under holds.
 */
typedef struct TBKey {
    uint64_t pc;            /* guest virtual address of the first instruction */
    uint64_t phys;          /* where its code is (invalidation goes by this) */
    uint64_t next_page;     /* the crossing instruction's second page, else TB_NO_PAGE */
    uint32_t flags;         /* cpu->tb_flags it was translated under */
} TBKey;

/*
 * A TB refers to other TBs by reference, its number + 1 (0: none), in 32
 * bits: a pool of MAX_TBS TBs is 1 << 19. Its lists (the TBs that chain
 * into it, the TBs of a page) are tags: a reference above the slot or page
 * index bits. 216 bytes where pointers made 288: a warm python3 start
 * populates ~30,000 of them.
 */
typedef uint32_t TBRef;

typedef struct TB {
    uint64_t pc;            /* guest address of the first instruction */
    /* Next in its hash chain: next to pc, so that each step of a lookup
     * that misses (most of a warm start's) reads one cache line. */
    struct TB *hash_next;
    uint64_t phys;          /* TBKey.phys */
    uint64_t next_page;     /* TBKey.next_page */
    uint32_t flags;         /* TBKey.flags */
    uint32_t host_off;      /* entry offset in the code buffer */
    uint32_t cold_off;      /* its out-of-line code (code buffer offset, size) */
    uint32_t pcmap;         /* index of ninsns (host_off, guest_off) pairs */
    uint16_t guest_size;    /* bytes of guest code (at most 4 * TB_MAX_INSNS) */
    uint16_t host_size;     /* at most TRANSLATE_MAX_HOST */
    uint16_t cold_size;
    uint8_t  ninsns;
    bool     valid;
    uint8_t  exit_kind;     /* TB_EXIT_*: jal/branch/fallthrough, jalr, other */
    uint8_t  nremap;        /* host registers this block maps differently */
    TBRemap  remap[TB_MAX_REMAP];
    /* Softmmu: the guest loads and stores it probes the TLB for inline,
     * and which TLB (exec/softmmu.h): -d stats' access counts. */
    uint8_t  tlb_idx;
    bool     used;          /* run at least once (dispatch.c): a start image's choice */
    uint16_t naccess;
    uint64_t page[2];       /* physical page numbers covered (TB_NO_PAGE: none) */
    uint32_t page_next[2];  /* next TBRef << 1 | index in the list of page[i] */
    uint32_t jmp_in;        /* chaining: head of the incoming list, TBRef << 3 | slot */

    /* Chaining. slot n's jmp rel32 field is at host_off + jmp_field[n]. */
    uint32_t jmp_field[TB_MAX_SLOTS]; /* 0: no slot */
    uint32_t jmp_stub[TB_MAX_SLOTS];  /* offset of the slot's exit stub */
    TBRef    jmp_dest[TB_MAX_SLOTS];  /* chained destination or 0 */
    /* While slot n is chained: the next TBRef << 3 | slot in jmp_dest[n]'s
     * incoming list. While it is not: the TB an earlier process chained it
     * to (a start image's hint, chain.c), or 0. */
    uint32_t jmp_next[TB_MAX_SLOTS];

    /* -d stats only: entries into this block, counted by its own code
     * (be_tb_start), chained entries included. */
    uint64_t execs;
} TB;

/* -- Code buffer (code_buffer.c) ------------------------------------------ */

/* RW view of the code buffer and the offset from it to the RX view. */
extern uint8_t *code_rw;
extern intptr_t code_rx_delta;
static inline const void *code_rx_of(const void *rw) { return (const uint8_t *)rw + code_rx_delta; }

/* Runtime entry points generated at init (offsets in the code buffer). */
typedef struct JitRuntime {
    /* enter(cpu, host): load the guest registers, jump to host; returns the exit code. */
    int (*enter)(CPUState *cpu, const void *host);
    uint8_t *epilogue;      /* RW address: rax = exit code, cpu->pc set */
    uint8_t *lookup;        /* RW address: rax = target pc; probe, else EXIT_LOOKUP */
    uint8_t *lookup_miss;   /* RW address: rax = target pc; cpu->pc = rax, EXIT_LOOKUP */
    /* The interpreter runs the instruction at guest pc rax (mapped registers
     * spilled and reloaded around it). interp_call is called and returns
     * (or leaves on a nonzero exit reason); interp_exit is jumped to and
     * always leaves, to the dispatcher at the next pc. */
    uint8_t *interp_call;
    uint8_t *interp_exit;
    /* rax = guest pc, rcx = JIT_CSR_INFO: jit_helper_csr, called and
     * returning as interp_call does. */
    uint8_t *csr_call;
    /* A guest return found the return-address stack empty: rax = target pc. */
    uint8_t *ras_empty;
    /* rax = uint64_t fn(CPUState *), called from translated code (mapped
     * registers spilled and reloaded around it): returns if fn returned 0,
     * else leaves with fn's result as the exit code. */
    uint8_t *helper_call;
    /* rax = guest address, ecx = JIT_FILL_INFO: jit_helper_fill (mapped
     * registers spilled and reloaded around it, rax its result); softmmu. */
    uint8_t *fill_call;
    /* Called from a slot's exit stub: EXIT_CHAIN, cpu->jit_link = the
     * return address (the stub's data). */
    uint8_t *chain_exit;
} JitRuntime;
extern JitRuntime jit_rt;

/* A TB's number, its index in the TB array, and back (an exit stub names
 * its TB by number: x86/backend.h). */
uint32_t tb_number(const TB *tb);
TB *tb_numbered(uint32_t n);
static inline TBRef tb_ref(const TB *tb) { return tb_number(tb) + 1; }
static inline TB *tb_of_ref(TBRef r) { return r ? tb_numbered(r - 1) : NULL; }

/* pcmap storage: pairs of (host offset from TB entry, guest offset). */
uint16_t *tb_pcmap_alloc(unsigned n, uint32_t *index);

/* The interpreter runs one instruction for translated code (jit_rt's
 * interp_call/interp_exit stubs): cpu->pc = pc, then interp_step. */
uint64_t jit_helper_interp(CPUState *cpu, uint64_t pc);

/* A CSR instruction for translated code (jit_rt.csr_call): the one at pc,
 * decoded (JIT_CSR_INFO: its op, rd, rs1 or uimm, CSR number), run as the
 * interpreter runs it without fetching it again (interp_csr). */
#define JIT_CSR_INFO(op, rd, rs1, csr) \
    ((uint64_t)(op) | (uint64_t)(rd) << 16 | (uint64_t)(rs1) << 24 | (uint64_t)((csr) & 0xfff) << 32)
uint64_t jit_helper_csr(CPUState *cpu, uint64_t pc, uint64_t info);

/* A softmmu probe missed (jit_rt.fill_call): refill the entry of the
 * access described by JIT_FILL_INFO at va (GuestMemOps.probe_fill);
 * nonzero if the probe hits now. */
#define JIT_FILL_INFO(size, access, tlb_idx) \
    ((uint32_t)(size) | (uint32_t)(access) << 8 | (uint32_t)(tlb_idx) << 16)
uint64_t jit_helper_fill(CPUState *cpu, uint64_t va, uint64_t info);

#endif
