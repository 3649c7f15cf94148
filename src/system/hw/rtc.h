/*
 * The goldfish RTC (google,goldfish-rtc) at VIRT_RTC_BASE, PLIC irq
 * VIRT_RTC_IRQ: wall-clock time in nanoseconds and one alarm.
 */
#ifndef XLAT_SYSTEM_HW_RTC_H
#define XLAT_SYSTEM_HW_RTC_H

/* Map the RTC and start its alarm thread. */
void rtc_init(void);

#endif
