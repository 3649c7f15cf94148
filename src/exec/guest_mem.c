/*
 * The guest memory interface's two globals (see guest_mem.h): what the mode
 * set up, and each thread's fault frame.
 */
#include "exec/guest_mem.h"

GuestMem guest_mem;
__thread GuestFaultFrame guest_fault;
