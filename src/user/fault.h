/*
 * Host faults caused by guest memory accesses.
 *
 * A guest access to an unmapped or protected page of the window raises a
 * host SIGSEGV/SIGBUS. The handler installed by fault_init() checks that the
 * faulting address lies in the window and that the current thread is inside
 * a guest access (guest_fault.jmp set: exec/guest_mem.h); it then records a
 * MemFault and siglongjmps to guest_fault.jmp. Any other host fault is a
 * bug in xlat: the handler prints a message with the host pc and aborts.
 */
#ifndef XLAT_USER_FAULT_H
#define XLAT_USER_FAULT_H

#include <stdint.h>

#include "riscv/cpu.h"

/*
 * The signal a guest thread gets for why its run stopped (EXIT_FAULT with
 * cpu->fault, EXIT_ILLEGAL, EXIT_EBREAK), as Linux would send it: signal
 * number, si_code and si_addr. An unmapped guest page is host PROT_NONE, so
 * the host reports every fault in the window as a protection fault: the
 * guest's mappings decide between SEGV_MAPERR and SEGV_ACCERR.
 */
typedef struct GuestSignal { int signo, code; uint64_t addr; } GuestSignal;
GuestSignal fault_signal_of(const CPUState *cpu, enum exit_reason why);

/*
 * Install the host SIGSEGV/SIGBUS handlers (on an alternate signal stack),
 * and give the calling (main) thread its alternate stack.
 */
void fault_init(void);

/*
 * Give the calling thread its own alternate signal stack; every host thread
 * that runs guest code must call this first (fault_init does it for the
 * thread that calls it). fault_thread_exit frees it before the thread ends.
 */
void fault_thread_init(void);
void fault_thread_exit(void);

#endif
