/*
 * Guest threads and processes (user mode).
 *
 * thread.c: clone/clone3, exit/exit_group, futex, wait4/waitid, the tid and
 * robust-list calls, sched_* and membarrier. sys_exec.c: execve/execveat.
 *
 * Each guest thread runs on its own host thread with its own CPUState; the
 * guest tid is the host tid, so tids in futex words (PI futexes, robust
 * lists) and in tgkill mean the same thing to the guest and the host. A
 * fork-like clone is a host fork(): the guest window is copied with the
 * process. execve of a riscv64 program (or of a #! script) re-executes
 * xlat itself (/proc/self/exe) with the same options.
 *
 * The handlers are declared by syscall.def (sys_impl.h); this header holds
 * what the rest of xlat needs to know about threads.
 */
#ifndef XLAT_USER_THREAD_H
#define XLAT_USER_THREAD_H

/*
 * End the whole process with `status` (exit_group, or the last thread's
 * exit): flush xlat's own streams and _exit. Host atexit handlers are not
 * run (the guest ran its own, and other threads may still be running).
 */
_Noreturn void thread_exit_process(int status);

#endif
