/* MIG in the report: see run_mig.h. */
#include "report/run_mig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "runfile/runfile_mig.h"

tw_status run_mig_apply(tw_run *run, tw_events **events, tw_mig_instance **mig, size_t *n)
{
    tw_status st = tw_run_migs(run, mig, n);
    if (st != TW_OK || *n == 0) return st;
    tw_events *remapped = NULL;
    st = tw_mig_remap(*events, *mig, *n, &remapped);
    if (st != TW_OK) return st;
    tw_events_free(*events);
    *events = remapped;
    return TW_OK;
}

/* One instance's part of its GPU's energy. */
typedef struct mig_part {
    const tw_mig_instance *m;
    uint64_t launches;
    double kernels_j, copies_j, share, baseline_j;
    size_t unresolved; /* names below resolution, grouped or unobserved: not in kernels_j */
} mig_part;

/* The instances of d's GPU, with their kernels' energies (the estimator's, per
 * name) and a share of the baseline by SMs (else slices, else equal): the
 * estimate. Returns how many (at most cap). */
static size_t parts_of(const run_device *d, mig_part *p, size_t cap)
{
    size_t k = 0;
    double weight = 0;
    for (size_t i = 0; i < d->nmig && k < cap; i++)
        if ((int)d->mig[i].parent_index == d->index) {
            memset(&p[k], 0, sizeof p[k]);
            p[k].m = &d->mig[i];
            k++;
        }
    bool sms = true, slices = true;
    for (size_t i = 0; i < k; i++) {
        sms = sms && p[i].m->multiprocessors > 0;
        slices = slices && p[i].m->slices > 0;
    }
    for (size_t i = 0; i < k; i++) {
        p[i].share = sms ? p[i].m->multiprocessors : slices ? p[i].m->slices : 1.0;
        weight += p[i].share;
    }
    const tw_estimate *e = d->est;
    for (size_t i = 0; i < k; i++) {
        p[i].share /= weight;
        p[i].baseline_j = e ? e->baseline_j * p[i].share : NAN;
    }
    for (size_t n = 0; e && n < e->nnames; n++) {
        unsigned pos;
        const char *rest;
        if (!tw_mig_name_split(e->names[n].name, &pos, &rest)) continue;
        for (size_t i = 0; i < k; i++) {
            if (p[i].m->position != pos) continue;
            const tw_est_name *x = &e->names[n];
            p[i].launches += x->launches;
            if (x->status != TW_EST_OK)
                p[i].unresolved++;
            else
                *(strcmp(x->kind, "kernel") == 0 ? &p[i].kernels_j : &p[i].copies_j) += x->energy_j;
        }
    }
    return k;
}

#define MAX_PARTS 64

static const char *split_basis(const mig_part *p, size_t k)
{
    bool sms = true, slices = true;
    for (size_t i = 0; i < k; i++) {
        sms = sms && p[i].m->multiprocessors > 0;
        slices = slices && p[i].m->slices > 0;
    }
    return sms ? "SMs" : slices ? "slices" : "count (their SMs and slices are unknown)";
}

void run_mig_text(const run_device *d, FILE *f)
{
    mig_part p[MAX_PARTS];
    size_t k = parts_of(d, p, MAX_PARTS);
    if (k == 0) return;
    static const char *const head[] = {"instance", "uuid",      "slices",   "sms",        "memory_mib",
                                       "launches", "kernels_j", "copies_j", "baseline_j", "estimate_j"};
    table *t = table_new(10, head);
    if (!t) return;
    for (size_t i = 0; i < k; i++) {
        table_cell(t, "MIG %u", p[i].m->position);
        table_cell(t, "%s", p[i].m->uuid);
        table_cell(t, "%u", p[i].m->slices);
        table_cell(t, "%u", p[i].m->multiprocessors);
        table_cell(t, "%llu", p[i].m->memory_mib);
        table_cell(t, "%llu", (unsigned long long)p[i].launches);
        table_cell(t, "%.3f", p[i].kernels_j);
        table_cell(t, "%.3f", p[i].copies_j);
        table_cell(t, "%.3f", p[i].baseline_j);
        table_cell(t, "%.3f", p[i].kernels_j + p[i].copies_j + p[i].baseline_j);
    }
    fprintf(f,
            "\nMIG instances of this GPU [J]: ESTIMATE. NVML reads the GPU's power, not an instance's: each "
            "instance's kernels and copies are the estimator's (per name, 'MIG n: name' above); the baseline "
            "is split by the instances' %s\n",
            split_basis(p, k));
    table_print(t, f);
    table_free(t);
}

void run_mig_json(json *j, const run_device *d)
{
    mig_part p[MAX_PARTS];
    size_t k = parts_of(d, p, MAX_PARTS);
    json_key(j, "mig_instances");
    json_begin_array(j);
    for (size_t i = 0; i < k; i++) {
        json_begin_object(j);
        json_kv_uint(j, "position", p[i].m->position);
        char label[32];
        snprintf(label, sizeof label, "MIG %u", p[i].m->position);
        json_kv_string(j, "label", label);
        json_kv_string(j, "uuid", p[i].m->uuid);
        json_kv_uint(j, "slices", p[i].m->slices);
        json_kv_uint(j, "multiprocessors", p[i].m->multiprocessors);
        json_kv_uint(j, "memory_mib", p[i].m->memory_mib);
        json_kv_uint(j, "launches", p[i].launches);
        json_kv_number(j, "kernels_j", p[i].kernels_j);
        json_kv_number(j, "copies_j", p[i].copies_j);
        json_kv_uint(j, "names_unresolved", p[i].unresolved);
        json_kv_number(j, "baseline_share", p[i].share);
        json_kv_number(j, "baseline_j", p[i].baseline_j);
        json_kv_number(j, "energy_estimate_j", p[i].kernels_j + p[i].copies_j + p[i].baseline_j);
        json_kv_bool(j, "estimate", true);
        json_kv_string(j, "split", split_basis(p, k));
        json_end_object(j);
    }
    json_end_array(j);
}
