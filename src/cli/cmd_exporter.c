/* truewatt exporter: the Prometheus exporter daemon, a thin layer over
 * tw_exporter_* (src/exporter/). Runs until SIGTERM or SIGINT. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/profile_pick.h"

static void help(void)
{
    printf("usage: truewatt exporter [--listen ADDR:PORT] [--window S] [--dcgm-names] [--processes]\n"
           "                         [--process-dir DIR] [--profile FILE] [--hostname NAME] [--nvml-library PATH]\n\n"
           "Samples every GPU (the sampling plan of its sensor profile) and serves Prometheus metrics on\n"
           "http://ADDR:PORT/metrics until SIGTERM or Ctrl-C: per GPU (labels uuid, index, model, host)\n"
           "truewatt_gpu_energy_joules_total (the corrected energy counter), truewatt_gpu_power_watts (the best\n"
           "reading over the window), the reading and profile in use, and the sensor's health. OpenMetrics\n"
           "when the scraper's Accept header asks for application/openmetrics-text. docs/exporter.md lists\n"
           "every metric.\n\n"
           "  --listen ADDR:PORT  where to listen (default %s; [::1]:9464 for IPv6; port 0: any free\n"
           "                      port, printed on stderr)\n"
           "  --window S          the power's window, seconds (default 1, at most 60)\n"
           "  --dcgm-names        also dcgm-exporter's DCGM_FI_DEV_POWER_USAGE (W) and\n"
           "                      DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ), with its labels\n"
           "  --processes         truewatt_process_energy_joules_total{pid,command,job,source}: measured for the\n"
           "                      processes `truewatt run` reports (source=\"truewatt run\"), else each GPU's\n"
           "                      energy split by NVML's per-process SM utilisation (source=\"estimate\")\n"
           "  --process-dir DIR   where `truewatt run` reports (made, mode 1777, when absent; default\n"
           "                      $TW_PROCESS_DIR, else " TW_PROC_DIR_DEFAULT ")\n"
           "  --profile FILE      one sensor profile for every GPU (default: each GPU's own in the profile\n"
           "                      folder, $TW_PROFILE_DIR, else the defaults of its generation)\n"
           "  --hostname NAME     the host label (default: this host's name)\n"
           "  --nvml-library PATH libnvidia-ml to load (default $TW_NVML_LIBRARY, else libnvidia-ml.so.1)\n",
           TW_EXPORTER_DEFAULT_LISTEN);
}

static void say(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "truewatt exporter: %s\n", line);
}

enum { OPT_LISTEN = 1000, OPT_WINDOW, OPT_DCGM, OPT_PROCS, OPT_PROFILE, OPT_HOST, OPT_LIB, OPT_PROC_DIR };

int cmd_exporter(int argc, char **argv)
{
    static const struct option opts[] = {{"listen", required_argument, 0, OPT_LISTEN},
                                         {"window", required_argument, 0, OPT_WINDOW},
                                         {"dcgm-names", no_argument, 0, OPT_DCGM},
                                         {"processes", no_argument, 0, OPT_PROCS},
                                         {"profile", required_argument, 0, OPT_PROFILE},
                                         {"hostname", required_argument, 0, OPT_HOST},
                                         {"nvml-library", required_argument, 0, OPT_LIB},
                                         {"process-dir", required_argument, 0, OPT_PROC_DIR},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    tw_exporter_config cfg = {0};
    tw_sensor_config base = {0};
    cfg.size = sizeof cfg;
    cfg.base = &base;
    cfg.log = say;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return 0;
        case OPT_LISTEN:
            cfg.listen = optarg;
            break;
        case OPT_WINDOW:
            if (!cli_parse_double(optarg, &cfg.window_s) || cfg.window_s <= 0 || cfg.window_s > 60)
                return cli_usage("exporter", "--window '%s': give seconds, more than 0 and at most 60", optarg);
            break;
        case OPT_DCGM:
            cfg.dcgm_names = true;
            break;
        case OPT_PROCS:
            cfg.processes = true;
            break;
        case OPT_PROFILE:
            cfg.profile_path = optarg;
            break;
        case OPT_HOST:
            cfg.hostname = optarg;
            break;
        case OPT_LIB:
            base.library = optarg;
            break;
        case OPT_PROC_DIR:
            cfg.process_dir = optarg;
            break;
        default:
            return cli_opt_other("exporter", c, optarg, argv, NULL);
        }
    }
    int rc = cli_opt_rest("exporter", argc, argv, optind);
    if (rc) return rc;
    if (!cfg.profile_path) cfg.profile_dir = cli_profile_dir();
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
