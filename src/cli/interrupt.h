/* Ctrl-C and SIGTERM: long commands stop at the next row, keep what they
 * wrote, say so and exit non-zero (130). */
#ifndef TW_CLI_INTERRUPT_H
#define TW_CLI_INTERRUPT_H

#define CLI_EXIT_INTERRUPTED 130

/* Installs the handlers; the flag below turns nonzero on a signal. */
void cli_interrupt_install(void);
extern volatile int cli_interrupted;

#endif
