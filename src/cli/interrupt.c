#include "cli/interrupt.h"

#include <signal.h>
#include <string.h>

volatile int cli_interrupted = 0;

static void on_signal(int sig)
{
    (void)sig;
    cli_interrupted = 1;
}

void cli_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
