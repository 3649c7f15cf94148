/*
 * Host faults caused by guest memory accesses.
 *
 * A guest access to an unmapped or protected page of the window raises a
 * host SIGSEGV/SIGBUS. The handler installed by fault_init() checks that the
 * faulting address lies in the window and that the current thread is inside
 * a guest access (guest_fault_jmp set); it then records the guest address
 * and si_code and siglongjmps to guest_fault_jmp. Any other host fault is a
 * bug in xlat: the handler prints a message with the host pc and aborts.
 */
#ifndef XLAT_USER_FAULT_H
#define XLAT_USER_FAULT_H

#include <setjmp.h>
#include <stdint.h>

typedef struct GuestFault {
    sigjmp_buf *jmp;    /* where to go on a guest fault; NULL outside guest accesses */
    uint64_t addr;      /* guest address that faulted */
    int signal;         /* SIGSEGV or SIGBUS */
    int code;           /* SEGV_MAPERR, SEGV_ACCERR, BUS_ADRERR ... */
} GuestFault;

extern __thread GuestFault guest_fault;

/*
 * After a guest fault's siglongjmp (from the interpreter or translated
 * code): record what guest_fault holds in cpu's fault fields. An unmapped
 * guest page is host PROT_NONE, so the host says SEGV_ACCERR: the guest's
 * mappings decide between SEGV_MAPERR and SEGV_ACCERR.
 */
struct CPUState;
void guest_fault_record(struct CPUState *cpu);

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
