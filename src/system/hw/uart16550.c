/*
 * The virt machine's ns16550a UART (National Semiconductor PC16550D data
 * sheet; QEMU's hw/char/serial and its mux chardev for what a host sees).
 * Byte registers at offsets 0..7 of a 0x100 window (any access width; the
 * low byte counts):
 *
 *   0 RBR (read) / THR (write)     DLL while LCR.DLAB
 *   1 IER                          DLM while LCR.DLAB
 *   2 IIR (read) / FCR (write)
 *   3 LCR   4 MCR   5 LSR   6 MSR   7 SCR
 *
 * Transmit is immediate: a THR write goes to the host's out_fd at once, so
 * LSR always shows THRE and TEMT and the THR-empty interrupt comes back
 * right after each write (while IER.ETBEI is set; reading IIR while it is
 * the reported cause, or writing THR, acknowledges it). Receive has a
 * 16-byte FIFO (FCR bit 0; one holding byte without it) with the trigger
 * levels 1, 4, 8 and 14; below the trigger level the character-timeout
 * interrupt is reported at once (host input comes in bursts, and each burst
 * is queued in one step). Loopback (MCR bit 4) turns transmitted bytes into
 * received ones and the modem outputs into MSR's inputs; otherwise MSR shows
 * DCD, DSR and CTS, as QEMU's. The interrupt line (IIR bit 0 clear) goes to
 * the PLIC through machine_set_irq.
 *
 * Input: a reader thread reads in_fd into a host-side backlog (4 KiB, so
 * the escapes below still work while the guest does not read) that feeds
 * the receive FIFO as it has room; the guest never loses host input. With
 * the mux escape (-nographic), as QEMU's mux chardev: ctrl-a h or ? prints
 * QEMU's help, ctrl-a x ends the run (status 0), ctrl-a b sends a break
 * (LSR.BI with a 0 byte: the kernel's magic sysrq), ctrl-a t toggles
 * timestamps at the start of output lines, ctrl-a c (no monitor here) and
 * ctrl-a s (no -snapshot here) are accepted, ctrl-a ctrl-a sends ctrl-a, and
 * ctrl-a followed by anything else is dropped.
 *
 * A terminal on in_fd is made raw for the run as QEMU's stdio chardev does
 * it (no echo, no line editing, no CR/LF mapping or flow control on input,
 * output processing kept; signals from the keyboard only without the mux).
 */
#define _GNU_SOURCE
#include "system/hw/uart.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "system/machine.h"

#define UART_SIZE     0x100u
#define UART_FIFO     16
#define UART_BACKLOG  4096
#define RX_BREAK      0x100          /* a backlog entry: a break, not a byte */
#define CTRL_A        0x01

enum { REG_RBR_THR, REG_IER, REG_IIR_FCR, REG_LCR, REG_MCR, REG_LSR, REG_MSR, REG_SCR };

#define IER_RDI    0x01               /* received data available */
#define IER_THRI   0x02               /* transmitter holding register empty */
#define IER_RLSI   0x04               /* receiver line status */
#define IER_MSI    0x08               /* modem status */

#define IIR_NO_INT 0x01
#define IIR_MSI    0x00
#define IIR_THRI   0x02
#define IIR_RDI    0x04
#define IIR_RLSI   0x06
#define IIR_CTI    0x0c               /* character timeout */
#define IIR_FIFO   0xc0               /* FIFOs enabled */

#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02
#define FCR_DMA      0x08
#define FCR_TRIGGER  0xc0

#define LCR_DLAB   0x80

#define MCR_DTR    0x01
#define MCR_RTS    0x02
#define MCR_OUT1   0x04
#define MCR_OUT2   0x08
#define MCR_LOOP   0x10

#define LSR_DR     0x01
#define LSR_OE     0x02
#define LSR_BI     0x10
#define LSR_THRE   0x20
#define LSR_TEMT   0x40
#define LSR_ERRORS 0x1e               /* OE, PE, FE, BI: cleared by reading LSR */

#define MSR_DCTS   0x01
#define MSR_DDSR   0x02
#define MSR_TERI   0x04
#define MSR_DDCD   0x08
#define MSR_DELTAS 0x0f
#define MSR_CTS    0x10
#define MSR_DSR    0x20
#define MSR_RI     0x40
#define MSR_DCD    0x80

typedef struct Uart {
    pthread_mutex_t lock;
    pthread_cond_t room;              /* the reader waits for backlog room */
    int in_fd, out_fd;
    bool mux;

    uint8_t ier, lcr, mcr, msr, scr, dll, dlm, fcr;
    uint8_t lsr_errors;               /* LSR_ERRORS bits seen since LSR was read */
    bool thr_ipending;                /* THR-empty interrupt not acknowledged */
    bool irq;                         /* the level last sent to the PLIC */
    uint8_t rx[UART_FIFO];            /* receive FIFO (ring) */
    unsigned rx_head, rx_count;
    uint8_t rbr;                      /* the byte RBR read last */

    uint16_t backlog[UART_BACKLOG];   /* host input not yet in the FIFO (ring) */
    unsigned bl_head, bl_count;

    bool got_escape;                  /* the mux saw ctrl-a */
    bool timestamps, linestart;       /* ctrl-a t */
    bool ts_started;
    uint64_t ts_start_ms;
} Uart;

static Uart uart = { .lock = PTHREAD_MUTEX_INITIALIZER, .room = PTHREAD_COND_INITIALIZER,
                     .in_fd = -1, .out_fd = -1 };

static const char mux_help_text[] =
    "\n\r"
    "C-a h    print this help\n\r"
    "C-a x    exit emulator\n\r"
    "C-a s    save disk data back to file (if -snapshot)\n\r"
    "C-a t    toggle console timestamps\n\r"
    "C-a b    send break (magic sysrq)\n\r"
    "C-a c    switch between console and monitor\n\r"
    "C-a C-a  sends C-a\n\r";

/* -- Output --------------------------------------------------------------- */

static void write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            poll(&pfd, 1, -1);
        } else if (!(w < 0 && errno == EINTR)) {
            return;                   /* the console is gone: drop the output */
        }
    }
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* "[hh:mm:ss.mmm] ": the time since the first stamp after ctrl-a t. */
static void emit_stamp(Uart *u)
{
    uint64_t ms = monotonic_ms();
    if (!u->ts_started) {
        u->ts_started = true;
        u->ts_start_ms = ms;
    }
    ms -= u->ts_start_ms;
    unsigned secs = (unsigned)(ms / 1000);
    char s[48];
    int n = snprintf(s, sizeof s, "[%02u:%02u:%02u.%03u] ", secs / 3600, secs / 60 % 60,
                     secs % 60, (unsigned)(ms % 1000));
    write_all(u->out_fd, s, (size_t)n);
}

/* Console output: the guest's bytes and the mux's messages. */
static void emit(Uart *u, const void *buf, size_t n)
{
    if (!u->timestamps) {
        write_all(u->out_fd, buf, n);
        return;
    }
    for (const uint8_t *p = buf; n--; p++) {
        if (u->linestart) {
            emit_stamp(u);
            u->linestart = false;
        }
        write_all(u->out_fd, p, 1);
        if (*p == '\n')
            u->linestart = true;
    }
}

static void emit_str(Uart *u, const char *s)
{
    emit(u, s, strlen(s));
}

/* -- Receive FIFO and interrupts ------------------------------------------ */

static unsigned rx_capacity(const Uart *u)
{
    return u->fcr & FCR_ENABLE ? UART_FIFO : 1;
}

static unsigned rx_trigger(const Uart *u)
{
    static const unsigned level[4] = { 1, 4, 8, 14 };
    return level[u->fcr >> 6];
}

static void rx_clear(Uart *u)
{
    u->rx_head = u->rx_count = 0;
}

/* A byte arrives: a full FIFO overruns (keeping its bytes), a full holding
 * register is overwritten (the data sheet's two overrun cases). */
static void rx_push(Uart *u, uint8_t c)
{
    if (u->rx_count == rx_capacity(u)) {
        u->lsr_errors |= LSR_OE;
        if (u->fcr & FCR_ENABLE)
            return;
        rx_clear(u);
    }
    u->rx[(u->rx_head + u->rx_count++) % UART_FIFO] = c;
}

static uint8_t rx_pop(Uart *u)
{
    if (u->rx_count) {
        u->rbr = u->rx[u->rx_head];
        u->rx_head = (u->rx_head + 1) % UART_FIFO;
        u->rx_count--;
    }
    return u->rbr;
}

/* Move host input from the backlog into the FIFO while it has room. */
static void rx_refill(Uart *u)
{
    bool moved = false;
    while (u->bl_count && u->rx_count < rx_capacity(u)) {
        uint16_t e = u->backlog[u->bl_head];
        u->bl_head = (u->bl_head + 1) % UART_BACKLOG;
        u->bl_count--;
        if (e == RX_BREAK)
            u->lsr_errors |= LSR_BI;
        rx_push(u, e == RX_BREAK ? 0 : (uint8_t)e);
        moved = true;
    }
    if (moved)
        pthread_cond_signal(&u->room);
}

/* IIR: the highest-priority pending interrupt (data sheet table 4). */
static uint8_t uart_iir(const Uart *u)
{
    uint8_t fifo = u->fcr & FCR_ENABLE ? IIR_FIFO : 0;
    if ((u->ier & IER_RLSI) && (u->lsr_errors & LSR_ERRORS))
        return fifo | IIR_RLSI;
    if ((u->ier & IER_RDI) && u->rx_count)
        return fifo | (!fifo || u->rx_count >= rx_trigger(u) ? IIR_RDI : IIR_CTI);
    if ((u->ier & IER_THRI) && u->thr_ipending)
        return fifo | IIR_THRI;
    if ((u->ier & IER_MSI) && (u->msr & MSR_DELTAS))
        return fifo | IIR_MSI;
    return fifo | IIR_NO_INT;
}

static void uart_update_irq(Uart *u)
{
    bool level = !(uart_iir(u) & IIR_NO_INT);
    if (level != u->irq) {
        u->irq = level;
        machine_set_irq(VIRT_UART0_IRQ, level);
    }
}

/* -- Registers ------------------------------------------------------------ */

static uint8_t lsr_read(Uart *u)
{
    uint8_t v = u->lsr_errors | LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0);
    u->lsr_errors = 0;
    return v;
}

static uint8_t iir_read(Uart *u)
{
    uint8_t v = uart_iir(u);
    if ((v & 0x0f) == IIR_THRI)
        u->thr_ipending = false;
    return v;
}

static uint8_t msr_read(Uart *u)
{
    uint8_t v = u->msr;
    u->msr &= (uint8_t)~MSR_DELTAS;
    return v;
}

/* New modem input lines (CTS, DSR, RI, DCD): record the deltas. */
static void msr_set_lines(Uart *u, uint8_t lines)
{
    uint8_t old = u->msr, delta = 0;
    if ((old ^ lines) & MSR_CTS)
        delta |= MSR_DCTS;
    if ((old ^ lines) & MSR_DSR)
        delta |= MSR_DDSR;
    if ((old & MSR_RI) && !(lines & MSR_RI))
        delta |= MSR_TERI;
    if ((old ^ lines) & MSR_DCD)
        delta |= MSR_DDCD;
    u->msr = (uint8_t)(lines | (old & MSR_DELTAS) | delta);
}

static void mcr_write(Uart *u, uint8_t v)
{
    u->mcr = v & 0x1f;
    if (!(u->mcr & MCR_LOOP)) {
        msr_set_lines(u, MSR_DCD | MSR_DSR | MSR_CTS);
        return;
    }
    msr_set_lines(u, (u->mcr & MCR_RTS ? MSR_CTS : 0) | (u->mcr & MCR_DTR ? MSR_DSR : 0) |
                     (u->mcr & MCR_OUT1 ? MSR_RI : 0) | (u->mcr & MCR_OUT2 ? MSR_DCD : 0));
}

static void ier_write(Uart *u, uint8_t v)
{
    uint8_t changed = (u->ier ^ v) & 0x0f;
    u->ier = v & 0x0f;
    if (changed & IER_THRI)           /* the holding register is always empty */
        u->thr_ipending = u->ier & IER_THRI;
}

/* FCR: bits other than 0 are only programmed with the FIFO on; turning the
 * FIFO on or off empties it. The transmit FIFO is always empty. */
static void fcr_write(Uart *u, uint8_t v)
{
    bool toggled = (u->fcr ^ v) & FCR_ENABLE;
    if (toggled || ((v & FCR_ENABLE) && (v & FCR_CLEAR_RX)))
        rx_clear(u);
    u->fcr = v & FCR_ENABLE ? v & (FCR_ENABLE | FCR_DMA | FCR_TRIGGER) : 0;
    rx_refill(u);
}

static void thr_write(Uart *u, uint8_t v)
{
    if (u->mcr & MCR_LOOP)
        rx_push(u, v);
    else
        emit(u, &v, 1);
    u->thr_ipending = true;           /* sent: the holding register is empty again */
}

static uint64_t uart_read(void *opaque, uint64_t off, unsigned size)
{
    Uart *u = opaque;
    uint8_t v = 0;
    (void)size;
    pthread_mutex_lock(&u->lock);
    bool dlab = u->lcr & LCR_DLAB;
    switch (off) {
    case REG_RBR_THR: v = dlab ? u->dll : rx_pop(u); rx_refill(u); break;
    case REG_IER:     v = dlab ? u->dlm : u->ier; break;
    case REG_IIR_FCR: v = iir_read(u); break;
    case REG_LCR:     v = u->lcr; break;
    case REG_MCR:     v = u->mcr; break;
    case REG_LSR:     v = lsr_read(u); break;
    case REG_MSR:     v = msr_read(u); break;
    case REG_SCR:     v = u->scr; break;
    default:          break;
    }
    uart_update_irq(u);
    pthread_mutex_unlock(&u->lock);
    return v;
}

static void uart_write(void *opaque, uint64_t off, unsigned size, uint64_t val)
{
    Uart *u = opaque;
    uint8_t v = (uint8_t)val;
    (void)size;
    pthread_mutex_lock(&u->lock);
    bool dlab = u->lcr & LCR_DLAB;
    switch (off) {
    case REG_RBR_THR: if (dlab) u->dll = v; else thr_write(u, v); break;
    case REG_IER:     if (dlab) u->dlm = v; else ier_write(u, v); break;
    case REG_IIR_FCR: fcr_write(u, v); break;
    case REG_LCR:     u->lcr = v; break;
    case REG_MCR:     mcr_write(u, v); break;
    case REG_SCR:     u->scr = v; break;
    default:          break;          /* LSR, MSR: read-only */
    }
    uart_update_irq(u);
    pthread_mutex_unlock(&u->lock);
}

static const MmioOps uart_ops = { uart_read, uart_write };

/* -- Input: the reader thread and the mux escape -------------------------- */

/* Queue host input (a byte or RX_BREAK) behind what the FIFO has no room
 * for yet; wait while the backlog is full. */
static void backlog_push(Uart *u, uint16_t e)
{
    if (u->bl_count == UART_BACKLOG) {
        rx_refill(u);
        uart_update_irq(u);
    }
    while (u->bl_count == UART_BACKLOG)
        pthread_cond_wait(&u->room, &u->lock);
    u->backlog[(u->bl_head + u->bl_count++) % UART_BACKLOG] = e;
}

/* The byte after ctrl-a. Returns true if it ends the run. */
static bool mux_command(Uart *u, uint8_t c)
{
    switch (c) {
    case 'h': case '?': emit_str(u, mux_help_text); break;
    case 'x': emit_str(u, "xlat-system: Terminated\n\r"); return true;
    case 'c': emit_str(u, "\n\rxlat-system: no monitor (ctrl-a c ignored)\n\r"); break;
    case 'b': backlog_push(u, RX_BREAK); break;
    case 't':
        u->timestamps = !u->timestamps;
        u->ts_started = false;
        u->linestart = false;
        break;
    case 's': break;                  /* no -snapshot: nothing to save */
    default: break;
    }
    return false;
}

/* One byte of host input. Returns true if it ends the run. */
static bool uart_input(Uart *u, uint8_t c)
{
    if (!u->mux) {
        backlog_push(u, c);
    } else if (u->got_escape) {
        u->got_escape = false;
        if (c != CTRL_A)
            return mux_command(u, c);
        backlog_push(u, c);
    } else if (c == CTRL_A) {
        u->got_escape = true;
    } else {
        backlog_push(u, c);
    }
    return false;
}

static void *uart_reader(void *arg)
{
    Uart *u = arg;
    uint8_t buf[256];
    for (;;) {
        ssize_t n = read(u->in_fd, buf, sizeof buf);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = u->in_fd, .events = POLLIN };
            poll(&pfd, 1, -1);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;              /* end of input, as QEMU's stdio */
        bool quit = false;
        pthread_mutex_lock(&u->lock);
        for (ssize_t i = 0; i < n; i++)
            quit |= uart_input(u, buf[i]);
        rx_refill(u);
        uart_update_irq(u);
        pthread_mutex_unlock(&u->lock);
        if (quit)
            machine_request_exit(0, false);
    }
}

static void start_reader(Uart *u)
{
    sigset_t all, old;
    sigfillset(&all);                 /* process-directed signals: not for us */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int err = pthread_create(&thread, NULL, uart_reader, u);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        fprintf(stderr, "xlat-system: uart: cannot start its input thread: %s\n", strerror(err));
        exit(1);
    }
    pthread_detach(thread);
}

/* -- The host terminal ---------------------------------------------------- */

static struct termios tty_saved;
static int tty_fd = -1;

void uart_restore_tty(void)
{
    if (tty_fd >= 0)
        tcsetattr(tty_fd, TCSANOW, &tty_saved);
}

/* SA_RESETHAND: the re-raised signal, delivered when this returns, takes
 * its default action. */
static void tty_on_signal(int sig)
{
    uart_restore_tty();
    raise(sig);
}

static void tty_catch(int sig)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        return;
    struct sigaction sa = { .sa_handler = tty_on_signal, .sa_flags = SA_RESETHAND };
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void tty_make_raw(int fd, bool keyboard_signals)
{
    if (!isatty(fd) || tcgetattr(fd, &tty_saved))
        return;
    struct termios t = tty_saved;
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    t.c_oflag |= OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | IEXTEN);
    if (!keyboard_signals)
        t.c_lflag &= ~(tcflag_t)ISIG;
    t.c_cflag = (t.c_cflag & ~(tcflag_t)(CSIZE | PARENB)) | CS8;
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    tty_fd = fd;
    atexit(uart_restore_tty);
    tty_catch(SIGINT);
    tty_catch(SIGTERM);
    tty_catch(SIGQUIT);
    tty_catch(SIGHUP);
    tcsetattr(fd, TCSANOW, &t);
}

void uart_init(int in_fd, int out_fd, bool mux_escape)
{
    Uart *u = &uart;
    u->in_fd = in_fd;
    u->out_fd = out_fd;
    u->mux = mux_escape;
    u->msr = MSR_DCD | MSR_DSR | MSR_CTS;
    machine_add_mmio(VIRT_UART0_BASE, UART_SIZE, &uart_ops, u, "uart");
    if (in_fd >= 0) {
        tty_make_raw(in_fd, !mux_escape);
        start_reader(u);
    }
}
