/* The processes of one GPU, scrape interval by scrape interval: measured
 * runs (`truewatt run` reports) and estimates (NVML's utilisation samples)
 * share the GPU's energy, so that on a shared GPU they never add up to more
 * than it (docs/exporter.md#shared-gpus).
 *
 * A measured run's energy comes in one step when it ends, and its run's
 * estimator charges it the GPU's power while its kernels run, the other
 * processes' included (its timeline has only its own kernels). So while a
 * run goes on, the other processes' shares are held, not published, and
 * the GPU's energy over those intervals (the run's window) is summed. When
 * every run of the window is done, the runs get their reports' energies (at
 * most the window's energy together: scaled down if more) and the held
 * estimates share the rest (each at most its own share: scaled down if they
 * ask for more). A run that is not whole in the window (the exporter started
 * while it ran) keeps its report's energy; the estimates get what is left. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/expo.h"

static expo_run *find_run(expo_gpu *g, unsigned writer_pid, unsigned long long writer_start)
{
    for (size_t i = 0; i < g->nruns; i++)
        if (g->runs[i].writer_pid == writer_pid && g->runs[i].writer_start == writer_start) return &g->runs[i];
    return NULL;
}

static expo_run *add_run(expo_gpu *g, const expo_report *r)
{
    if (g->nruns == g->runs_cap) {
        size_t cap = g->runs_cap ? 2 * g->runs_cap : 8;
        expo_run *p = realloc(g->runs, cap * sizeof *p);
        if (!p) return NULL;
        g->runs = p;
        g->runs_cap = cap;
    }
    expo_run *x = &g->runs[g->nruns++];
    memset(x, 0, sizeof *x);
    x->writer_pid = r->writer_pid;
    x->writer_start = r->writer_start;
    x->pid = r->pid;
    snprintf(x->command, sizeof x->command, "%s", r->command ? r->command : "");
    snprintf(x->job, sizeof x->job, "%s", r->job ? r->job : "");
    x->whole = r->fresh;
    /* a run done before this exporter saw it: outside its accounting, published as its report says */
    x->settled = r->done && !r->fresh;
    x->energy_j = x->active_j = NAN;
    return x;
}

/* The reports of this scrape into g's runs; those no report names any more go (a running one:
 * its writer was killed, its energy over the window goes to no process; a done one: its report
 * expired). false when out of memory. */
static bool take_reports(expo_gpu *g, const expo_report *rep, size_t nrep)
{
    for (size_t i = 0; i < g->nruns; i++)
        g->runs[i].seen = false;
    for (size_t k = 0; k < nrep; k++) {
        const expo_report *r = &rep[k];
        expo_run *x = find_run(g, r->writer_pid, r->writer_start);
        if (!x && !(x = add_run(g, r))) return false;
        x->seen = true;
        if (x->settled && x->done) continue; /* its published energy is final */
        x->done = r->done;
        if (r->done) {
            x->energy_j = r->energy_j;
            x->active_j = r->active_j;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < g->nruns; i++)
        if (g->runs[i].seen) g->runs[kept++] = g->runs[i];
    g->nruns = kept;
    return true;
}

static expo_proc *proc_of(expo_gpu *g, unsigned pid, double now)
{
    for (size_t j = 0; j < g->nprocs; j++)
        if (g->procs[j].pid == pid) return &g->procs[j];
    if (g->nprocs == EXPO_MAX_PROCS) return NULL;
    expo_proc *p = &g->procs[g->nprocs++];
    *p = (expo_proc){.pid = pid, .active_j = NAN, .estimate = true, .last_seen = now};
    return p;
}

/* The window closes: the runs that lie in it get their reports' energies, at most the window's
 * energy together; the held estimates share what is left, each at most what it asked. */
static void settle(expo_gpu *g)
{
    double whole_j = 0, partial_j = 0, held_j = 0;
    for (size_t i = 0; i < g->nruns; i++) {
        const expo_run *x = &g->runs[i];
        if (x->settled || !isfinite(x->energy_j)) continue;
        *(x->whole ? &whole_j : &partial_j) += x->energy_j;
    }
    double f_run = whole_j > g->held_j ? g->held_j / whole_j : 1.0;
    for (size_t i = 0; i < g->nruns; i++) {
        expo_run *x = &g->runs[i];
        if (x->settled) continue;
        if (x->whole && isfinite(x->energy_j)) {
            x->energy_j *= f_run;
            x->active_j = fmin(x->active_j * f_run, x->energy_j);
        }
        x->settled = true;
    }
    double rest = fmax(0.0, g->held_j - whole_j * f_run - partial_j);
    for (size_t j = 0; j < g->nprocs; j++)
        held_j += g->procs[j].pending_j;
    double f_est = held_j > rest ? rest / held_j : 1.0;
    for (size_t j = 0; j < g->nprocs; j++) {
        g->procs[j].energy_j += g->procs[j].pending_j * f_est;
        g->procs[j].pending_j = 0;
    }
    g->held = false;
    g->held_j = 0;
}

bool tw_expo_procs_measured(const expo_gpu *g, unsigned pid)
{
    for (size_t i = 0; i < g->nruns; i++)
        if (g->runs[i].pid == pid) return true;
    return false;
}

bool tw_expo_procs_account(expo_gpu *g, double de, const expo_share *share, size_t nshare, const expo_report *rep,
                           size_t nrep, double now, double forget_s)
{
    bool ok = take_reports(g, rep, nrep);
    bool running = false, open = false;
    for (size_t i = 0; i < g->nruns; i++) {
        open |= !g->runs[i].settled;
        running |= !g->runs[i].done;
    }
    g->held |= open;
    if (g->held) g->held_j += fmax(de, 0.0);
    for (size_t k = 0; k < nshare; k++) {
        if (tw_expo_procs_measured(g, share[k].pid)) continue;
        expo_proc *p = proc_of(g, share[k].pid, now);
        if (!p) continue;
        *(g->held ? &p->pending_j : &p->energy_j) += fmax(share[k].energy_j, 0.0);
        p->last_seen = now;
    }
    if (g->held && !running) settle(g);
    /* forget those long gone (the page does not grow with every pid ever seen) unless their share
     * is still held, and those measured (never both) */
    size_t kept = 0;
    for (size_t j = 0; j < g->nprocs; j++) {
        const expo_proc *p = &g->procs[j];
        if ((now - p->last_seen < forget_s || p->pending_j > 0) && !tw_expo_procs_measured(g, p->pid))
            g->procs[kept++] = *p;
    }
    g->nprocs = kept;
    return ok;
}
