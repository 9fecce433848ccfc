/* truewatt exporter: the Prometheus exporter daemon, a thin layer over
 * tw_exporter_* (src/exporter/). Runs until SIGTERM or SIGINT. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/opts.h"

static void say(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "truewatt exporter: %s\n", line);
}

int cmd_exporter(int argc, char **argv)
{
    tw_exporter_config cfg = {0};
    tw_sensor_config base = {0};
    cfg.size = sizeof cfg;
    cfg.base = &base;
    cfg.log = say;
    /* the options, declared once (cli/opts.h) */
    const cli_opt opt[] = {
        {.name = "listen",
         .type = CLI_OPT_STRING,
         .arg = "ADDR:PORT",
         .def = TW_EXPORTER_DEFAULT_LISTEN,
         .help = "where to listen ([::1]:9464 for IPv6; port 0: any free\nport, printed on stderr)",
         .out = &cfg.listen},
        {.name = "window",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "1",
         .help = "the power's window, seconds",
         .out = &cfg.window_s,
         .min = 0,
         .max = 60,
         .min_excl = true},
        {.name = "dcgm-names",
         .type = CLI_OPT_FLAG,
         .help = "also dcgm-exporter's DCGM_FI_DEV_POWER_USAGE (W) and\n"
                 "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ), with its labels",
         .out = &cfg.dcgm_names},
        {.name = "processes",
         .type = CLI_OPT_FLAG,
         .help = "truewatt_process_energy_joules_total{pid,command,job,source}: measured\n"
                 "for the processes `truewatt run` reports (source=\"truewatt run\"), else\n"
                 "each GPU's energy split by NVML's per-process SM utilisation\n(source=\"estimate\")",
         .out = &cfg.processes},
        {.name = "process-dir",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .help = "where `truewatt run` reports (made, mode 1777, when absent; default\n"
                 "$TW_PROCESS_DIR, else " TW_PROC_DIR_DEFAULT ")",
         .out = &cfg.process_dir},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "one sensor profile for every GPU (default: each GPU's own in the\nprofile folder, "
                 "$TW_PROFILE_DIR, else the defaults of its generation)",
         .out = &cfg.profile_path},
        {.name = "hostname",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "the host label (default: this host's name)",
         .out = &cfg.hostname},
        {.name = "nvml-library",
         .type = CLI_OPT_STRING,
         .arg = "PATH",
         .help = "libnvidia-ml to load (default $TW_NVML_LIBRARY, else libnvidia-ml.so.1)",
         .out = &base.library},
    };
    const cli_opts o = {
        .cmd = "exporter",
        .synopsis =
            "[--listen ADDR:PORT] [--window S] [--dcgm-names] [--processes]\n"
            "                         [--process-dir DIR] [--profile FILE] [--hostname NAME] [--nvml-library PATH]",
        .about = "Samples every GPU (the sampling plan of its sensor profile) and serves Prometheus metrics on\n"
                 "http://ADDR:PORT/metrics until SIGTERM or Ctrl-C: per GPU (labels uuid, index, model, host)\n"
                 "truewatt_gpu_energy_joules_total (the corrected energy counter), truewatt_gpu_power_watts (the "
                 "best\n"
                 "reading over the window), the reading and profile in use, and the sensor's health. OpenMetrics\n"
                 "when the scraper's Accept header asks for application/openmetrics-text. docs/exporter.md lists\n"
                 "every metric.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc < 0 ? 0 : rc;
    if (!cfg.profile_path) cfg.profile_dir = tw_profile_dir();
    cli_interrupt_install();
    tw_exporter *e = NULL;
    tw_status st = tw_exporter_start(&cfg, &e);
    if (st != TW_OK) return cli_fail("exporter", st);
    /* the line a test (or a service manager) waits for */
    fprintf(stderr, "truewatt exporter: listening on http://%s/metrics\n", tw_exporter_address(e));
    st = tw_exporter_serve(e, &cli_interrupted);
    tw_status sst = tw_exporter_stop(e);
    if (st == TW_OK) st = sst;
    if (st != TW_OK) return cli_fail("exporter", st);
    fprintf(stderr, "truewatt exporter: stopped\n");
    return 0;
}
