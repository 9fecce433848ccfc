/* step_gpus - which GPUs a Slurm job step was given (step_gpus.h says why in this order). */
#include "slurm/step_gpus.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_set(const char *v) { return v && *v; }

static bool is_uuid(const char *id) { return strncmp(id, "GPU-", 4) == 0 || strncmp(id, "MIG-", 4) == 0; }

/* Whether every comma-separated entry of v is a UUID. */
static bool all_uuids(const char *v)
{
    for (const char *p = v;;) {
        if (!is_uuid(p)) return false;
        const char *comma = strchr(p, ',');
        if (!comma) return true;
        p = comma + 1;
    }
}

static int add_id(step_gpus *out, const char *id, size_t len, char *err, size_t err_len)
{
    if (out->n == STEP_GPUS_MAX) {
        snprintf(err, err_len, "%s: more than %d GPUs", out->source, STEP_GPUS_MAX);
        return -1;
    }
    if (len == 0 || len >= STEP_GPU_ID_LEN) {
        snprintf(err, err_len, "%s: an empty or overlong entry", out->source);
        return -1;
    }
    for (size_t i = 0; i < out->n; i++)
        if (strlen(out->id[i]) == len && strncmp(out->id[i], id, len) == 0) return 0; /* listed twice: once */
    memcpy(out->id[out->n], id, len);
    out->id[out->n][len] = '\0';
    out->n++;
    return 0;
}

/* One entry "N" or "A-B" (a range, as Slurm may print) of a numeric list. */
static int add_numbers(step_gpus *out, const char *p, size_t len, char *err, size_t err_len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) goto bad;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *end;
    if (buf[0] < '0' || buf[0] > '9') goto bad;
    unsigned long a = strtoul(buf, &end, 10), b = a;
    if (*end == '-') {
        char *e2;
        if (end[1] < '0' || end[1] > '9') goto bad;
        b = strtoul(end + 1, &e2, 10);
        end = e2;
    }
    if (*end || b < a || b - a >= STEP_GPUS_MAX) goto bad;
    for (unsigned long k = a; k <= b; k++) {
        char num[24];
        int n = snprintf(num, sizeof num, "%lu", k);
        if (add_id(out, num, (size_t)n, err, err_len) != 0) return -1;
    }
    return 0;
bad:
    snprintf(err, err_len, "%s: \"%.*s\" is not a GPU number, a range A-B or a UUID", out->source, (int)len, p);
    return -1;
}

static int parse_list(step_gpus *out, const char *source, const char *v, char *err, size_t err_len)
{
    out->source = source;
    bool uuids = all_uuids(v);
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        int rc = uuids ? add_id(out, p, len, err, err_len) : add_numbers(out, p, len, err, err_len);
        if (rc != 0) return -1;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int step_gpus_parse(const char *step_gpus_env, const char *job_gpus_env, const char *cuda_visible, step_gpus *out,
                    char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->source = "";
    /* gres without device files: Slurm says so instead of naming GPUs */
    if (is_set(cuda_visible) && strcmp(cuda_visible, "NoDevFiles") == 0) cuda_visible = NULL;
    if (is_set(cuda_visible) && all_uuids(cuda_visible))
        return parse_list(out, "CUDA_VISIBLE_DEVICES", cuda_visible, err, err_len);
    if (is_set(step_gpus_env)) return parse_list(out, "SLURM_STEP_GPUS", step_gpus_env, err, err_len);
    if (is_set(job_gpus_env)) return parse_list(out, "SLURM_JOB_GPUS", job_gpus_env, err, err_len);
    if (is_set(cuda_visible)) return parse_list(out, "CUDA_VISIBLE_DEVICES", cuda_visible, err, err_len);
    return 0;
}

int step_gpus_map(step_gpus *g, const gres_gpus *gres, const unsigned *minor, size_t nminor, char *err, size_t err_len)
{
    g->how[0] = '\0';
    if (strcmp(g->source, "SLURM_STEP_GPUS") != 0 && strcmp(g->source, "SLURM_JOB_GPUS") != 0) return 0;
    if (gres->autodetect) {
        snprintf(g->how, sizeof g->how, "%s: gres.conf has AutoDetect=nvml: Slurm's numbers are NVML's indices",
                 g->source);
        return 0;
    }
    int head = snprintf(g->how, sizeof g->how, "%s: ", g->source);
    size_t used = head > 0 ? (size_t)head : 0;
    for (size_t i = 0; i < g->n; i++) {
        unsigned long k = strtoul(g->id[i], NULL, 10);
        if (k >= gres->n) {
            snprintf(err, err_len, "%s: GPU %lu, but gres.conf lists %zu GPU%s for this node", g->source, k, gres->n,
                     gres->n == 1 ? "" : "s");
            return -1;
        }
        unsigned dev = gres->devnum[k];
        size_t idx = 0;
        while (idx < nminor && minor[idx] != dev)
            idx++;
        if (idx == nminor) {
            snprintf(err, err_len, "%s: GPU %lu is gres.conf's /dev/nvidia%u, and no NVML GPU has minor number %u",
                     g->source, k, dev, dev);
            return -1;
        }
        int n =
            snprintf(g->how + used, sizeof g->how - used, "%s%lu=/dev/nvidia%u=NVML %zu", i ? ", " : "", k, dev, idx);
        if (n > 0 && (size_t)n < sizeof g->how - used) used += (size_t)n;
        snprintf(g->id[i], sizeof g->id[i], "%zu", idx);
    }
    return 0;
}
