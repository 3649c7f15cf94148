// system-mode: s
// system-args: -smp 2 -accel xlat,threads=1
// SBI STA, steal-time accounting (SBI spec 2.0 chapter 16), with two harts
// on one host thread: set_shmem's checks (flags, alignment, memory that is
// not RAM), the record zeroed by the call, then hart 1 spinning beside
// hart 0 so that each waits for the thread half of the time: hart 0's
// record, read with the sequence protocol, shows steal time growing (a
// good part of the time that passed, never more), an even sequence and
// preempted = 0 while it runs; after set_shmem(-1, -1) it stays as it was.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
enum { EXT_STA = 0x535441, EXT_HSM = 0x48534d };
enum { SBI_ERR_INVALID_PARAM = -3, SBI_ERR_INVALID_ADDRESS = -5, HSM_STOPPED = 1 };

typedef struct {
    uint32_t sequence, flags;
    uint64_t steal;
    uint8_t preempted, pad[47];
} StaRecord;

static StaRecord record __attribute__((aligned(64)));
static volatile int spin_stop;

void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)hartid;
    (void)opaque;
    while (!__atomic_load_n(&spin_stop, __ATOMIC_ACQUIRE))
        ;
}

/* The steal field as the spec says to read it; *seq the sequence seen. */
static uint64_t read_steal(uint32_t *seq)
{
    volatile StaRecord *r = &record;
    for (;;) {
        uint32_t before = r->sequence;
        asm volatile("fence r, r" ::: "memory");
        uint64_t steal = r->steal;
        asm volatile("fence r, r" ::: "memory");
        if (!(before & 1) && r->sequence == before) {
            *seq = before;
            return steal;
        }
    }
}

static uint64_t ns_since(uint64_t t0) { return (rdtime() - t0) * 100; }   /* 10 MHz */

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    section("set_shmem");
    SbiRet r = sbi_call(EXT_STA, 0, (long)A(&record), 0, 1);
    CHECK_EQ("flags 1: SBI_ERR_INVALID_PARAM", r.error, SBI_ERR_INVALID_PARAM);
    r = sbi_call(EXT_STA, 0, (long)A(&record) + 8, 0, 0);
    CHECK_EQ("not 64-byte aligned: SBI_ERR_INVALID_PARAM", r.error, SBI_ERR_INVALID_PARAM);
    r = sbi_call(EXT_STA, 0, 0x1000, 0, 0);
    CHECK_EQ("not RAM: SBI_ERR_INVALID_ADDRESS", r.error, SBI_ERR_INVALID_ADDRESS);
    r = sbi_call(EXT_STA, 0, (long)A(&record), 1, 0);
    CHECK_EQ("above 2^64 (hi = 1): SBI_ERR_INVALID_ADDRESS", r.error, SBI_ERR_INVALID_ADDRESS);
    for (unsigned i = 0; i < sizeof record; i++)
        ((volatile uint8_t *)&record)[i] = 0xff;
    r = sbi_call(EXT_STA, 0, (long)A(&record), 0, 0);
    CHECK_EQ("the record: success", r.error, 0);
    /* Zeroed by the call; but the hart may have been scheduled out and in
     * since (a slice's end, a loaded host), and each resume rewrites the
     * sequence (to an even number), steal and preempted. flags and the pad
     * are never written again: all of the 0xff bytes must be gone. */
    volatile StaRecord *v = &record;
    int zero = v->flags == 0 && !(v->sequence & 1) && (v->sequence || v->steal == 0) &&
               v->preempted == 0;
    for (unsigned i = 0; i < sizeof v->pad; i++)
        zero &= v->pad[i] == 0;
    CHECK("and its 64 bytes are zero (or as a resume since wrote them)", zero);

    section("steal time with two harts on one thread");
    r = sbi_call(EXT_HSM, 0, 1, (long)A(secondary_entry), 0);
    CHECK_EQ("hart_start(1): it spins", r.error, 0);
    uint32_t seq0, seq1;
    uint64_t steal0 = read_steal(&seq0), t0 = rdtime();
    while (ns_since(t0) < 200000000)            /* 200 ms of the machine's time */
        ;
    uint64_t steal1 = read_steal(&seq1), elapsed = ns_since(t0);
    CHECK("the sequence moved on and is even", seq1 != seq0 && !(seq1 & 1));
    check_range("steal time grew by a part of the 200 ms (ns)", steal1 - steal0,
                elapsed / 10, elapsed);
    CHECK_EQ("preempted = 0 while this hart runs", ((volatile StaRecord *)&record)->preempted, 0);

    section("set_shmem(-1, -1)");
    r = sbi_call(EXT_STA, 0, -1, -1, 0);
    CHECK_EQ("reporting off: success", r.error, 0);
    uint64_t steal2 = read_steal(&seq0);
    t0 = rdtime();
    while (ns_since(t0) < 50000000)
        ;
    CHECK_EQ("the record stays as it was", read_steal(&seq1), steal2);
    __atomic_store_n(&spin_stop, 1, __ATOMIC_RELEASE);
    CHECK("hart 1 stops", WAIT_FOR(sbi_call(EXT_HSM, 2, 1, 0, 0).value == HSM_STOPPED, 5000000));
}
