/*
 * The sifive,test finisher at VIRT_TEST_BASE, the virt machine's poweroff
 * and reboot register (the device tree's syscon-poweroff and syscon-reboot
 * point at it).
 */
#ifndef XLAT_SYSTEM_HW_TEST_DEV_H
#define XLAT_SYSTEM_HW_TEST_DEV_H

/* Map the finisher. */
void sifive_test_init(void);

#endif
