/*
 * User mode's guest memory for the execution core (see user_mem.c).
 */
#ifndef XLAT_USER_USER_MEM_H
#define XLAT_USER_USER_MEM_H

/* Fill in guest_mem (exec/guest_mem.h); mm_init calls it once the window
 * is reserved. */
void user_mem_init(void);

#endif
