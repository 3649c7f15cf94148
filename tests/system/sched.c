// system-mode: s
// system-args: -smp 4 -accel xlat,threads=2
// system-variant: -accel xlat,threads=1
// system-repeat: 30 -accel xlat,threads=2
// More harts than host threads, every one spinning (no wfi, interrupts
// off): hart 0 starts harts 1-3 with hart_start, and all but hart 3 spin
// until hart 3 sets a flag, so hart 3 runs only if xlat's scheduler gives
// it a thread while the others spin (their slices must end). Then each
// hart reports in and stops; the harts' time comes from slices alone.
#include "sys.h"

#define A(p) ((uint64_t)(uintptr_t)(p))
enum { EXT_HSM = 0x48534d, HSM_STOPPED = 1 };

static volatile int go, arrived, stop;

void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)opaque;
    if (hartid == 3)
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        ;
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    section("four spinning harts");
    long failed = 0;
    WAIT_FOR(0, 20000);         /* 20 ms: the scheduler has settled, harts 1-3 stopped */
    for (long h = 1; h <= 3; h++)
        failed += sbi_call(EXT_HSM, 0, h, (long)A(secondary_entry), 0).error != 0;
    CHECK_EQ("hart_start(1), (2), (3)", failed, 0);
    CHECK("hart 3 ran while the others spun: the flag is set",
          WAIT_FOR(__atomic_load_n(&go, __ATOMIC_ACQUIRE), 5000000));
    CHECK("harts 1-3 saw it", WAIT_FOR(__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) == 3, 5000000));
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    long stopped = 0;
    for (long h = 1; h <= 3; h++)
        stopped += WAIT_FOR(sbi_call(EXT_HSM, 2, h, 0, 0).value == HSM_STOPPED, 5000000);
    CHECK_EQ("and stop", stopped, 3);
}
