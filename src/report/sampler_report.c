#include "report/sampler_report.h"

#include <math.h>

static double pct(double cpu_s, double wall_s) { return wall_s > 0 ? 100.0 * cpu_s / wall_s : NAN; }

double sampler_cpu_pct_per_gpu(const run_sampler *s)
{
    size_t n = s->ndev;
    return n ? pct(s->cpu_s, s->wall_s) / (double)n : NAN;
}

void sampler_cpu_text(const run_sampler *s, FILE *f)
{
    double wall = s->wall_s;
    fprintf(f, "\nsampler: %.2f %% of one core per GPU (", sampler_cpu_pct_per_gpu(s));
    for (size_t d = 0; d < s->ndev; d++) {
        const tw_run_device *x = &s->devices[d];
        fprintf(f, "GPU %d: %.2f %%, ", x->index, pct(x->sampler_cpu_s, wall));
    }
    fprintf(f, "writer %.2f %%), %.3f s CPU over %.3f s\n", pct(s->writer_cpu_s, wall), s->cpu_s, wall);
    for (size_t d = 0; d < s->ndev; d++) {
        const tw_run_device *x = &s->devices[d];
        fprintf(f, "GPU %d sampling plan: %s\n", x->index, x->plan);
    }
}

void sampler_cpu_json(json *j, const run_sampler *s)
{
    double wall = s->wall_s;
    json_kv_number(j, "cpu_pct_per_gpu", sampler_cpu_pct_per_gpu(s));
    json_kv_number(j, "writer_cpu_s", s->writer_cpu_s);
    json_key(j, "per_device");
    json_begin_array(j);
    for (size_t d = 0; d < s->ndev; d++) {
        const tw_run_device *x = &s->devices[d];
        json_begin_object(j);
        json_kv_number(j, "index", x->index);
        json_kv_number(j, "cpu_s", x->sampler_cpu_s);
        json_kv_number(j, "cpu_pct_of_one_core", pct(x->sampler_cpu_s, wall));
        json_kv_number(j, "fast_period_s", x->fast_period_s);
        json_kv_number(j, "buffer_poll_s", x->buffer_poll_s);
        json_kv_number(j, "slow_period_s", x->slow_period_s);
        json_kv_number(j, "slow_max_period_s", x->slow_max_period_s);
        json_kv_string(j, "plan", x->plan);
        json_end_object(j);
    }
    json_end_array(j);
}
