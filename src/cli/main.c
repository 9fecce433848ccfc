/* truewatt: GPU energy from the built-in power sensor, corrected. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command commands[] = {
    {"demo", cmd_demo, "reproduce Burtscher et al. 2014 on the simulated K20 (table and plots)"},
    {"analyze", cmd_analyze, "energy per event of a recorded power trace, by every method"},
    {"sim", cmd_sim, "simulate a sensor (k20, h100) over a scenario and write the trace"},
    {"backends", cmd_backends, "list the sensor backends and why any is unavailable"},
    {"run", cmd_run, "run a command and report the GPU energy of each kernel (power sensor + CUPTI)"},
    {"report", cmd_report, "the report of a run file again, offline (another profile, JSON, Perfetto)"},
    {"export", cmd_export, "a run file's samples and kernels as CSV (trace.csv, events.csv)"},
    {"measure-kernel", cmd_measure_kernel, "energy per launch of one kernel, however short (phase-shifted repetition)"},
    {"isa", cmd_isa, "energy per PTX instruction (Arafa et al. 2020's method, and a throughput mode)"},
    {"mem", cmd_mem, "energy per access of shared memory, L1, L2 and DRAM (Delestrac et al. 2024)"},
    {"breakdown", cmd_breakdown, "an application's energy: static, each memory level, the rest (ncu + run)"},
    {"dvfs", cmd_dvfs, "kernel time and energy under core and memory clock scaling (Wang & Chu 2020)"},
    {"validate", cmd_validate, "validate truewatt on this GPU: identification, linearity, short kernels (~6 min)"},
    {"sensor", cmd_sensor, "identify a GPU's power readings (sensor profile) or show a profile"},
    {"exporter", cmd_exporter, "serve every GPU's energy and power to Prometheus (/metrics, a daemon)"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: truewatt [--version] [--help] COMMAND [ARGS]\n\n"
               "How much energy GPU code really uses, from the GPU's power sensor.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'truewatt COMMAND --help' describes a command. Numbers: add --json for machine output.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        printf("truewatt %s\n", tw_version());
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "truewatt: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
