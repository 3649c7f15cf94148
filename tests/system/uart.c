// system-stdin: ZY
// The ns16550a UART (PC16550D data sheet) and the PLIC's claim/complete
// (RISC-V PLIC spec 1.0): LSR bits, two input bytes piped into stdin by the
// runner (the first polled, the second through the receive interrupt: PLIC
// claim returns 10, complete), IIR, the scratch, line control and divisor
// latch registers, the FIFO bits of IIR, and loopback with its modem lines.
// Nothing is printed while LCR.DLAB or loopback is on (output would go to
// the divisor latch or back into the receiver): results are kept and
// checked after.
#include "sys.h"

#define RBR 0
#define THR 0
#define IER 1
#define IIR 2
#define FCR 2
#define LCR 3
#define MCR 4
#define LSR 5
#define MSR 6
#define SCR 7
#define U(reg) MMIO8(UART_BASE + (reg))

#define LSR_DR 0x01
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

static volatile uint64_t claimed, iir_in_handler, byte_in_handler, pending_after_claim;

static int rx_hook(Frame *f, int level)
{
    (void)level;
    if (f->cause != (INTERRUPT | IRQ_MEI))
        return 0;
    claimed = MMIO32(PLIC_CLAIM(0));
    pending_after_claim = MMIO32(PLIC_PENDING(0));
    iir_in_handler = U(IIR);
    byte_in_handler = U(RBR);
    MMIO32(PLIC_CLAIM(0)) = (uint32_t)claimed;
    return 1;
}

static void input(void)
{
    section("input from stdin");
    int got = WAIT_FOR(U(LSR) & LSR_DR, 5000000);
    CHECK("a byte arrived (LSR.DR)", got);
    CHECK_EQ("LSR: DR, THRE, TEMT", U(LSR), LSR_DR | LSR_THRE | LSR_TEMT);
    CHECK_EQ("IIR: no interrupt (IER = 0)", U(IIR), 0x01);
    CHECK_EQ("RBR: the first byte, 'Z'", U(RBR), 'Z');

    /* The second byte, through the receive interrupt. */
    got = WAIT_FOR(U(LSR) & LSR_DR, 5000000);
    CHECK("the second byte arrived", got);
    MMIO32(PLIC_PRIORITY(UART_IRQ)) = 1;
    MMIO32(PLIC_THRESHOLD(0)) = 0;
    MMIO32(PLIC_ENABLE(0)) = 1u << UART_IRQ;
    U(IER) = 0x01;                              /* received data available */
    CHECK_BITS("PLIC: source 10 pending", MMIO32(PLIC_PENDING(0)), 1u << UART_IRQ,
               1u << UART_IRQ);
    take_m_interrupt(rx_hook, MIP(IRQ_MEI), 5000000);
    expect_trap("receive interrupt", PRV_M, INTERRUPT | IRQ_MEI, ANY, 0);
    CHECK_EQ("PLIC claim returns 10", claimed, UART_IRQ);
    CHECK_BITS("claimed: not pending", pending_after_claim, 1u << UART_IRQ, 0);
    CHECK_EQ("IIR in the handler: received data (0x04)", iir_in_handler, 0x04);
    CHECK_EQ("RBR in the handler: 'Y'", byte_in_handler, 'Y');
    CHECK_EQ("LSR after: THRE, TEMT, no DR", U(LSR), LSR_THRE | LSR_TEMT);
    CHECK_EQ("IIR after: no interrupt", U(IIR), 0x01);
    CHECK_BITS("completed, nothing pending: MEIP clear", csr_read(mip), MIP(IRQ_MEI), 0);
    CHECK_EQ("claim now returns 0", MMIO32(PLIC_CLAIM(0)), 0);
    U(IER) = 0;
    MMIO32(PLIC_ENABLE(0)) = 0;
}

static void registers(void)
{
    section("registers");
    U(SCR) = 0xa5;
    uint8_t scr1 = U(SCR);
    U(SCR) = 0x5a;
    CHECK_EQ("SCR holds 0xa5", scr1, 0xa5);
    CHECK_EQ("SCR holds 0x5a", U(SCR), 0x5a);
    CHECK_EQ("LSR idle: THRE, TEMT", U(LSR), LSR_THRE | LSR_TEMT);

    U(IER) = 0x05;
    uint8_t lcr0 = U(LCR);
    U(LCR) = 0x1b;
    uint8_t lcr1 = U(LCR);
    U(LCR) = 0x80 | 0x03;                       /* DLAB */
    U(0) = 0x12;
    U(1) = 0x34;
    uint8_t dll = U(0), dlm = U(1);
    U(LCR) = 0x03;
    uint8_t ier = U(IER);
    U(IER) = 0;
    CHECK_EQ("LCR 0x1b reads back", lcr1, 0x1b);
    CHECK_EQ("DLL with DLAB", dll, 0x12);
    CHECK_EQ("DLM with DLAB", dlm, 0x34);
    CHECK_EQ("IER again without DLAB", ier, 0x05);
    CHECK_EQ("LCR as it was (8N1 or reset)", lcr0 == 0x03 || lcr0 == 0, 1);

    U(FCR) = 0x07;                              /* FIFO on, both cleared */
    uint8_t iir_fifo = U(IIR);
    U(FCR) = 0;
    CHECK_EQ("IIR with FIFOs on: 0xc1", iir_fifo, 0xc1);
    CHECK_EQ("IIR with FIFOs off: 0x01", U(IIR), 0x01);

    U(IER) = 0x02;                              /* THR empty */
    uint8_t iir_thre = U(IIR), iir_after = U(IIR);
    U(IER) = 0;
    CHECK_EQ("IER.ETBEI: IIR reports THR empty (0x02)", iir_thre, 0x02);
    CHECK_EQ("reading IIR acknowledged it", iir_after, 0x01);

    section("loopback");
    while (!(U(LSR) & LSR_TEMT))
        ;
    U(MCR) = 0x10;
    U(THR) = 'q';
    uint8_t lsr_loop = U(LSR), rbr_loop = U(RBR), lsr_loop2 = U(LSR);
    U(MCR) = 0x1f;                              /* DTR, RTS, OUT1, OUT2: CTS, DSR, RI, DCD */
    uint8_t msr_all = U(MSR);
    U(MCR) = 0x10;
    uint8_t msr_none = U(MSR);
    U(MCR) = 0;
    uint8_t msr_normal = U(MSR);
    CHECK_EQ("loopback: the sent byte is received (LSR)", lsr_loop, LSR_DR | LSR_THRE | LSR_TEMT);
    CHECK_EQ("loopback: RBR = 'q'", rbr_loop, 'q');
    CHECK_EQ("loopback: LSR after reading", lsr_loop2, LSR_THRE | LSR_TEMT);
    CHECK_EQ("loopback MCR 0x1f: MSR inputs all high", msr_all & 0xf0, 0xf0);
    CHECK_EQ("loopback MCR 0x10: MSR inputs low", msr_none & 0xf0, 0);
    CHECK_EQ("normal: MSR shows DCD, DSR, CTS", msr_normal & 0xf0, 0xb0);
}

void test_main(uint64_t hartid, uint64_t dtb)
{
    (void)hartid;
    (void)dtb;
    input();
    registers();
}
