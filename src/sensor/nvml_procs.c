/* Per-process utilisation from NVML; see nvml_procs.h. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "sensor/nvml_lib.h"
#include "sensor/nvml_procs.h"

#define MAX_SAMPLES 4096u

/* Adds one sample to its pid's entry (or a new one while there is room). */
static void add_sample(tw_proc_util *out, size_t cap, size_t *n, const nvmlProcessUtilizationSample_t *x)
{
    size_t k = 0;
    while (k < *n && out[k].pid != x->pid)
        k++;
    if (k == *n) {
        if (*n == cap) return;
        out[k] = (tw_proc_util){x->pid, 0.0, 0, 0};
        (*n)++;
    }
    tw_proc_util *p = &out[k];
    double u = x->smUtil > 100 ? 1.0 : x->smUtil / 100.0;
    p->sm_util = (p->sm_util * p->samples + u) / (p->samples + 1);
    p->samples++;
    if (x->timeStamp > p->ts_us) p->ts_us = x->timeStamp;
}

static tw_status query(const tw_nvml_api *a, unsigned index, unsigned long long since_us, tw_proc_util *out, size_t cap,
                       size_t *n, unsigned long long *newest_us)
{
    if (!a->nvmlDeviceGetProcessUtilization)
        return tw_fail(TW_EUNSUPPORTED, "nvmlDeviceGetProcessUtilization is not in %s", tw_nvml_path());
    nvmlDevice_t dev;
    if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, index, &dev) != NVML_SUCCESS)
        return tw_fail(TW_EUNAVAIL, "%s", tw_last_error());
    unsigned count = 0;
    nvmlReturn_t r = a->nvmlDeviceGetProcessUtilization(dev, NULL, &count, since_us);
    if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && count == 0)) return TW_OK;
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) {
        tw_nvml_check(a, r, "nvmlDeviceGetProcessUtilization", NVML_SUCCESS);
        return tw_nvml_status_of(r);
    }
    if (count > MAX_SAMPLES) count = MAX_SAMPLES;
    nvmlProcessUtilizationSample_t *x = calloc(count ? count : 1, sizeof *x);
    if (!x) return tw_fail(TW_ENOMEM, "out of memory");
    r = NVML_CALL_OR(a, NVML_ERROR_NOT_FOUND, nvmlDeviceGetProcessUtilization, dev, x, &count, since_us);
    tw_status st = TW_OK;
    if (r == NVML_SUCCESS) {
        for (unsigned i = 0; i < count && i < MAX_SAMPLES; i++) {
            if (x[i].timeStamp <= since_us) continue;
            add_sample(out, cap, n, &x[i]);
            if (x[i].timeStamp > *newest_us) *newest_us = x[i].timeStamp;
        }
    } else if (r != NVML_ERROR_NOT_FOUND) {
        st = tw_nvml_status_of(r);
    }
    free(x);
    return st;
}

tw_status tw_nvml_process_util(const char *library, unsigned index, unsigned long long since_us, tw_proc_util *out,
                               size_t cap, size_t *n, unsigned long long *newest_us)
{
    *n = 0;
    *newest_us = since_us;
    const tw_nvml_api *a = NULL;
    tw_status st = tw_nvml_acquire(library, true, &a);
    if (st != TW_OK) return st;
    st = query(a, index, since_us, out, cap, n, newest_us);
    tw_nvml_release();
    return st;
}
