// system-args: -smp 2
// system-repeat: 10
// The store-buffering litmus test (SB) across two harts, each on its own
// host thread (xlat-system's default with two host CPUs):
//
//     hart 0: x = 1; ORDER; a = y          hart 1: y = 1; ORDER; b = x
//
// RVWMO forbids a == b == 0 when ORDER orders the store before the load:
// fence rw,rw; fence w,r; the store made an amoswap.w.aqrl; the load made
// an lr.w.aqrl. x86-TSO lets a store sit in the store buffer past a later
// load, so each of these must be a host barrier in translated code and in
// the interpreter alike. fence.tso allows the outcome: its count is
// printed, not checked, as a sign that the harts really race here (one
// host CPU never shows it). Each round hart 1 starts when hart 0 says so,
// and hart 0 waits a little longer each round, so the stores meet.
#include "sys.h"

#define ROUNDS 20000

enum order { FENCE_RW_RW, FENCE_W_R, AMOSWAP_AQRL, LR_AQRL, FENCE_TSO, ORDERS };
static const char *const order_name[ORDERS] = {
    "fence rw,rw", "fence w,r", "amoswap.w.aqrl store", "lr.w.aqrl load", "fence.tso",
};

static volatile uint32_t x, y;
static volatile uint64_t a, b;
static volatile uint64_t order, round_go, done_b;

/* *mine = 1; the order; return *other. */
static uint64_t store_then_load(enum order o, volatile uint32_t *mine, volatile uint32_t *other)
{
    uint64_t v, old;
    switch (o) {
    case FENCE_RW_RW:
        *mine = 1;
        asm volatile("fence rw, rw" ::: "memory");
        return *other;
    case FENCE_W_R:
        *mine = 1;
        asm volatile("fence w, r" ::: "memory");
        return *other;
    case AMOSWAP_AQRL:
        asm volatile("amoswap.w.aqrl %0, %1, (%2)" : "=&r"(old) : "r"(1), "r"(mine) : "memory");
        (void)old;
        return *other;
    case LR_AQRL:
        *mine = 1;
        asm volatile("lr.w.aqrl %0, (%1)" : "=&r"(v) : "r"(other) : "memory");
        return v;
    default:
        *mine = 1;
        asm volatile("fence.tso" ::: "memory");
        return *other;
    }
}

void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)hartid;
    (void)opaque;
    for (uint64_t r = 1;; r++) {
        while (__atomic_load_n(&round_go, __ATOMIC_ACQUIRE) != r)
            ;
        b = store_then_load((enum order)order, &y, &x);
        __atomic_store_n(&done_b, r, __ATOMIC_RELEASE);
    }
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    section("store buffering across two harts");
    uint64_t r = 0;
    for (int o = 0; o < ORDERS; o++) {
        order = (uint64_t)o;
        uint64_t both_zero = 0, late = 0;
        for (int i = 0; i < ROUNDS; i++) {
            x = y = 0;
            __atomic_store_n(&round_go, ++r, __ATOMIC_RELEASE);
            /* hart 1 sees round_go a while later: a delay that sweeps
             * across rounds lines the two stores up in some of them */
            for (volatile unsigned d = 0; d < (unsigned)(i % 256); d++)
                ;
            a = store_then_load((enum order)o, &x, &y);
            if (!WAIT_FOR(__atomic_load_n(&done_b, __ATOMIC_ACQUIRE) == r, 2000000)) {
                late = 1;
                break;
            }
            both_zero += a == 0 && b == 0;
        }
        if (late)
            put_str("   hart 1 missed a round\n");
        CHECK("hart 1 ran every round", !late);
        if (o == FENCE_TSO) {
            put_str("   fence.tso (allowed): a = b = 0 in ");
            put_dec(both_zero);
            put_str(" of ");
            put_dec(ROUNDS);
            put_str(" rounds\n");
        } else {
            CHECK_EQ(order_name[o], both_zero, 0);
        }
    }
}
