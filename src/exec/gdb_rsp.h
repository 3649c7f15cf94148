/*
 * The GDB remote serial protocol, shared by both modes: user mode's -g PORT
 * (user/gdbstub.c) and system mode's -gdb/-s (system/gdbstub.c).
 *
 * This part knows packets, not how guest code runs: the transport (listen,
 * accept, framing with checksums and acks, hex), the breakpoint and
 * watchpoint lists, stop replies, and the packet loop gdb_serve(), which
 * answers every packet of a stopped target and returns when gdb resumes
 * it, detaches, or goes away. The guest ISA's registers and target
 * description come in through GdbTarget (riscv/gdb_target.h provides
 * them), the mode's threads and memory through its callbacks. Running the
 * guest, noticing breakpoints and stopping it is the mode's: it consults
 * GdbSession.points and calls gdb_serve() again at the next stop.
 *
 * Thread ids are the mode's (user mode: host tids; system mode: 1..N for
 * harts 0..N-1). One session per process at a time (the packet buffers
 * are static); gdb_serve() runs on one thread at a time.
 */
#ifndef XLAT_EXEC_GDB_RSP_H
#define XLAT_EXEC_GDB_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct CPUState;

/* -- Transport ------------------------------------------------------------- */

/* A listening TCP socket on host (NULL or "": every IPv4 address) and
 * port, or -1 with a reason in err. */
int gdb_listen(const char *host, int port, char *err, size_t errlen);

/* The next connection on a gdb_listen socket (no Nagle), or -1. */
int gdb_accept(int listen_fd);

/* Read one packet into buf (NUL-terminated, escapes undone) and ack it;
 * its length, or -1 at EOF. A 0x03 (Ctrl-C) between packets is returned
 * as the one-byte packet "\x03". */
int gdb_get_packet(int fd, char *buf, size_t cap);

/* Send one packet and wait for its ack (resent on '-', up to 3 times). */
void gdb_put_packet(int fd, const char *data);

void gdb_hex_encode(char *out, const void *src, size_t len);   /* NUL-terminated */
size_t gdb_hex_decode(void *dst, const char *hex, size_t max);  /* bytes decoded */

/* -- Breakpoints and watchpoints (Z/z types) ------------------------------- */

enum { GDB_BP_SW = 0, GDB_BP_HW = 1, GDB_WP_WRITE = 2, GDB_WP_READ = 3, GDB_WP_ACCESS = 4 };
#define GDB_MAX_POINTS 64

typedef struct GdbBreak { uint64_t addr; int type; } GdbBreak;
typedef struct GdbWatch { uint64_t addr, len; int type; } GdbWatch;

typedef struct GdbPoints {
    GdbBreak bp[GDB_MAX_POINTS];
    int nbp;
    GdbWatch wp[GDB_MAX_POINTS];
    int nwp;
} GdbPoints;

/* The type of the breakpoint at pc (GDB_BP_SW or _HW), or -1. */
int gdb_break_at(const GdbPoints *p, uint64_t pc);

/* Is there a breakpoint in [lo, hi)? */
bool gdb_break_in(const GdbPoints *p, uint64_t lo, uint64_t hi);

/* The watchpoint an access of size bytes at addr triggers (reads and/or
 * writes), or NULL; *hit is the first watched byte it touches. */
const GdbWatch *gdb_watch_hit(const GdbPoints *p, uint64_t addr, uint64_t size, bool reads,
                              bool writes, uint64_t *hit);

/* Stop-reply details: "swbreak:;"/"hwbreak:;", "watch:ADDR;" (rwatch, awatch). */
void gdb_break_reason(int type, char *out, size_t cap);
void gdb_watch_reason(const GdbWatch *w, uint64_t hit, char *out, size_t cap);

/* -- The packet loop ----------------------------------------------------------- */

/* What the ISA and the mode provide. */
typedef struct GdbTarget {
    const char *xml;                /* target.xml, served by qXfer:features:read */
    int g_regs;                     /* the g/G packets carry registers 0..g_regs-1 */
    int pc_regno;                   /* written by c ADDR / s ADDR */
    const int *expedite;            /* registers sent in stop replies; -1 ends */
    bool attached;                  /* qAttached: gdb detaches on quit (not kill) */

    /* Register regno of cpu into buf (target byte order): its size, or 0
     * if there is no such register. */
    int (*reg_read)(struct CPUState *cpu, int regno, uint8_t *buf);
    bool (*reg_write)(struct CPUState *cpu, int regno, const uint8_t *buf, size_t len);

    /* Threads: count, the index-th id, its CPU (NULL: no such thread), and
     * an optional description for qThreadExtraInfo (NULL: none). */
    int (*thread_count)(void *opaque);
    int64_t (*thread_id)(void *opaque, int index);
    struct CPUState *(*thread_cpu)(void *opaque, int64_t tid);
    void (*thread_name)(void *opaque, int64_t tid, char *buf, size_t cap);

    /* Guest memory as cpu sees it: bytes read (a short count at the first
     * unreadable byte); a write is all or nothing. */
    size_t (*mem_read)(void *opaque, struct CPUState *cpu, uint64_t addr, void *buf, size_t len);
    bool (*mem_write)(void *opaque, struct CPUState *cpu, uint64_t addr, const void *buf,
                      size_t len);

    /* k / vKill: end the target; does not return. */
    void (*kill)(void *opaque);
} GdbTarget;

/* Why the target stopped: the stop reply's thread, signal and details. */
typedef struct GdbStop {
    int64_t thread;
    int signal;                     /* GDB signal number: 5 SIGTRAP, 2 SIGINT... */
    char detail[64];                /* "swbreak:;", "watch:ADDR;", or "" */
} GdbStop;

enum { GDB_ACT_NONE, GDB_ACT_CONT, GDB_ACT_STEP };
#define GDB_MAX_ACTIONS 8

/* How gdb_serve() ended. */
typedef struct GdbResume {
    enum { GDB_RESUME, GDB_DETACH, GDB_CLOSED } kind;
    struct {
        int act;                    /* GDB_ACT_CONT or GDB_ACT_STEP */
        int signal;                 /* to deliver on resume, 0: none */
        int64_t thread;             /* -1: every thread not named before */
    } acts[GDB_MAX_ACTIONS];
    int nacts;
} GdbResume;

/* What a GDB_RESUME asks of thread tid (the first action naming it or
 * all): GDB_ACT_NONE (stay stopped), _CONT or _STEP, and the signal. */
int gdb_resume_action(const GdbResume *r, int64_t tid, int *signal);

typedef struct GdbSession {
    int fd;                         /* the connection */
    const GdbTarget *target;
    void *opaque;                   /* passed to the target's thread and memory callbacks */
    GdbPoints points;               /* what the mode checks while it runs */
    int64_t g_thread, c_thread;     /* Hg (registers, memory), Hc */
    GdbStop last;                   /* the stop '?' reports */
} GdbSession;

/* A session on connection fd: no points, threads chosen at the first stop. */
void gdb_session_init(GdbSession *s, int fd, const GdbTarget *target, void *opaque);

/*
 * The target stopped (stop): send its stop reply if send_stop (else gdb
 * asks with '?', as after connecting), then answer packets until gdb
 * resumes (c, s, C, S, vCont: the actions), detaches (D: replied, the
 * points forgotten) or the connection ends (the points forgotten).
 */
GdbResume gdb_serve(GdbSession *s, const GdbStop *stop, bool send_stop);

/* The target ended: W status (signal 0) or X signal. */
void gdb_send_exit(GdbSession *s, int status, int signal);

#endif
