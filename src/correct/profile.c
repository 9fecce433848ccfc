#include "correct/profile.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/json.h"
#include "core/json_read.h"

#define SCHEMA "truewatt-sensor-profile"
#define VERSION 1

static const char *const response_names[TW_RESP_COUNT] = {
    [TW_RESP_UNKNOWN] = "unknown", [TW_RESP_RC] = "rc",           [TW_RESP_BOXCAR] = "boxcar",
    [TW_RESP_WINDOW] = "window",   [TW_RESP_COUNTER] = "counter",
};

const char *tw_response_name(tw_response r) { return (unsigned)r < TW_RESP_COUNT ? response_names[r] : "unknown"; }

tw_status tw_response_parse(const char *s, tw_response *out)
{
    for (int r = 0; r < TW_RESP_COUNT; r++)
        if (s && !strcmp(s, response_names[r])) {
            *out = (tw_response)r;
            return TW_OK;
        }
    return tw_fail(TW_EPARSE, "unknown response \"%s\" (unknown, rc, boxcar, window, counter)", s ? s : "");
}

/* The numbers of a reading model, by their C names (the JSON keys). */
static const struct {
    const char *key;
    size_t off;
} model_numbers[] = {
#define F(x)                                                                                                           \
    {                                                                                                                  \
#x, offsetof(tw_reading_model, x)                                                                              \
    }
    F(period_s), F(period_p10_s), F(period_p90_s), F(window_s),     F(delay_s), F(capacitance_s),
    F(coverage), F(rms_w),        F(rms_rc_w),     F(rms_boxcar_w), F(step_w),
#undef F
};
#define N_MODEL_NUMBERS (sizeof model_numbers / sizeof model_numbers[0])

static double *model_number(tw_reading_model *m, size_t k) { return (double *)((char *)m + model_numbers[k].off); }
static double model_number_c(const tw_reading_model *m, size_t k)
{
    return *(const double *)((const char *)m + model_numbers[k].off);
}

/* ---------------------------------------------------------------- the profile in memory */

void tw_profile_init(tw_profile *p)
{
    memset(p, 0, sizeof *p);
    p->idle_w = p->active_idle_w = p->step_w = p->linger_s = NAN;
}

void tw_reading_model_init(tw_reading_model *m, const char *name)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name ? name : "");
    m->response = TW_RESP_UNKNOWN;
    for (size_t k = 0; k < N_MODEL_NUMBERS; k++)
        *model_number(m, k) = NAN;
}

const tw_activity_model *tw_profile_activity_for(const tw_activity_model *models, size_t n, const char *const *names,
                                                 size_t nf, size_t *order)
{
    for (size_t i = 0; models && i < n; i++) {
        const tw_activity_model *a = &models[i];
        if (a->nf != nf) continue;
        size_t k = 0;
        for (; k < nf; k++) {
            size_t m = 0;
            while (m < a->nf && strcmp(a->feature[m], names[k]) != 0)
                m++;
            if (m == a->nf) break;
            order[k] = m;
        }
        if (k == nf) return a;
    }
    return NULL;
}

const tw_reading_model *tw_profile_find(const tw_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->r[i].name, name)) return &p->r[i];
    return NULL;
}

tw_status tw_profile_set(tw_profile *p, const tw_reading_model *m)
{
    const tw_reading_model *old = tw_profile_find(p, m->name);
    if (old) {
        p->r[old - p->r] = *m;
        return TW_OK;
    }
    if (p->n >= TW_PROFILE_MAX_READINGS)
        return tw_fail(TW_EINVAL, "sensor profile full: %d readings at most (adding %s)", TW_PROFILE_MAX_READINGS,
                       m->name);
    p->r[p->n++] = *m;
    return TW_OK;
}

/* ---------------------------------------------------------------- ranking */

/* The time resolution of the energy a reading gives: the update period (a
 * boxcar is deconvolved into per-period means, a counter differenced, an rc
 * reading corrected), for a window reading max(period, window). */
static double resolution_s(const tw_reading_model *m)
{
    if (m->response == TW_RESP_WINDOW && m->window_s > m->period_s) return m->window_s;
    return m->period_s;
}

/* score = 1000 * c + (10 - r), where
 *   c = the coverage clamped to [0, 1] (NaN: 0), rounded to 2 decimals, and
 *   r = the resolution in seconds clamped to [0, 10] (NaN: 10);
 * unknown responses score -1. A step of c (0.01) is worth 10 points and r
 * moves the score by at most 10, so coverage decides first and resolution
 * only between equal (rounded) coverages; the score rises with c and falls
 * with r, and every known response scores at least 0 > -1. */
/* How much noise the model leaves in an energy estimate: the fit's residual,
 * amplified by deconvolution for a boxcar spanning several periods (W / P),
 * over windows of the reading's resolution: error ~ rms sqrt(resolution). */
static double merit(const tw_reading_model *m, double resolution)
{
    double rms = isfinite(m->rms_w) ? m->rms_w : 0.0;
    double amp = m->response == TW_RESP_BOXCAR && m->window_s > m->period_s ? m->window_s / m->period_s : 1.0;
    return fmin(999.0, rms * amp * sqrt(resolution));
}

double tw_reading_model_score(const tw_reading_model *m)
{
    if (m->response <= TW_RESP_UNKNOWN || m->response >= TW_RESP_COUNT) return -1.0;
    double c = isnan(m->coverage) ? 0.0 : fmin(fmax(m->coverage, 0.0), 1.0);
    c = round(c * 10.0) / 10.0; /* 0.97 and 1 are both full coverage */
    double r = resolution_s(m);
    r = isnan(r) ? 10.0 : fmin(fmax(r, 0.0), 10.0);
    return 10000.0 * c + (999.0 - merit(m, r)) + (10.0 - r) * 1e-3;
}

bool tw_reading_model_trusted(const tw_reading_model *m)
{
    if (!isfinite(m->rms_w) || !isfinite(m->step_w) || m->step_w == 0) return true;
    return m->rms_w <= TW_PROFILE_TRUST_REL * fabs(m->step_w);
}

const tw_reading_model *tw_profile_best(const tw_profile *p, bool (*usable)(const char *name, void *ctx), void *ctx)
{
    const tw_reading_model *best = NULL;
    double best_score = -1.0; /* an unknown response is never picked */
    for (size_t i = 0; i < p->n; i++) {
        if (usable && !usable(p->r[i].name, ctx)) continue;
        double s = tw_reading_model_score(&p->r[i]);
        if (s >= 0 && tw_reading_model_trusted(&p->r[i])) s += 1e7; /* trust first, then the score */
        if (s > best_score) best = &p->r[i], best_score = s;        /* ties: the first */
    }
    return best;
}

/* ---------------------------------------------------------------- writing */

/* "activity_models": [{"features": [...], "power_w": [...], "sd_w": [...], "residual_w", "clock_mhz", "source"}] */
static void write_activity(json *j, const tw_profile *p)
{
    json_key(j, "activity_models");
    json_begin_array(j);
    for (size_t i = 0; i < p->n_activity; i++) {
        const tw_activity_model *a = &p->activity[i];
        json_begin_object(j);
        json_key(j, "features");
        json_begin_array(j);
        for (size_t k = 0; k < a->nf; k++)
            json_string(j, a->feature[k]);
        json_end_array(j);
        json_kv_numbers(j, "power_w", a->power_w, a->nf);
        json_kv_numbers(j, "sd_w", a->sd_w, a->nf);
        json_kv_number(j, "residual_w", a->residual_w);
        if (a->clock_mhz > 0) json_kv_number(j, "clock_mhz", a->clock_mhz);
        json_kv_string(j, "source", a->source);
        json_end_object(j);
    }
    json_end_array(j);
}

tw_status tw_profile_write_json(const tw_profile *p, FILE *f)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "schema", SCHEMA);
    json_kv_uint(&j, "version", VERSION);
    json_kv_string(&j, "gpu", p->gpu);
    json_kv_string(&j, "driver", p->driver);
    json_kv_string(&j, "backend", p->backend);
    json_kv_string(&j, "created", p->created);
    json_kv_string(&j, "command", p->command);
    json_kv_number(&j, "idle_w", p->idle_w);
    json_kv_number(&j, "active_idle_w", p->active_idle_w);
    json_kv_number(&j, "step_w", p->step_w);
    if (isfinite(p->linger_s)) json_kv_number(&j, "linger_s", p->linger_s);
    json_key(&j, "readings");
    json_begin_array(&j);
    for (size_t i = 0; i < p->n; i++) {
        const tw_reading_model *m = &p->r[i];
        json_begin_object(&j);
        json_kv_string(&j, "name", m->name);
        json_kv_string(&j, "response", tw_response_name(m->response));
        for (size_t k = 0; k < N_MODEL_NUMBERS; k++)
            json_kv_number(&j, model_numbers[k].key, model_number_c(m, k));
        json_kv_uint(&j, "updates", m->updates);
        json_end_object(&j);
    }
    json_end_array(&j);
    if (p->n_activity) write_activity(&j, p);
    json_end_object(&j);
    json_finish(&j);
    return ferror(f) ? tw_fail(TW_EIO, "writing the sensor profile failed") : TW_OK;
}

/* Written to PATH.tmp, then renamed: a reader never sees half a profile. */
tw_status tw_profile_save(const tw_profile *p, const char *path)
{
    tw_clear_error();
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return tw_fail(TW_EINVAL, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return tw_fail(TW_EIO, "%s: cannot write: %s", tmp, strerror(errno));
    tw_status st = tw_profile_write_json(p, f);
    int err = errno;
    if (fclose(f) && !st) st = TW_EIO, err = errno;
    if (!st && rename(tmp, path)) st = TW_EIO, err = errno;
    if (st) {
        unlink(tmp);
        return tw_fail(TW_EIO, "%s: cannot write: %s", path, strerror(err));
    }
    return TW_OK;
}

/* ---------------------------------------------------------------- reading */

/* The string member `key` of obj into dst[cap]: required, must fit. */
static tw_status get_string(const tw_json *obj, const char *key, char *dst, size_t cap, const char *path,
                            const char *where)
{
    const tw_json *v = tw_json_get(obj, key);
    const char *s = tw_json_string(v);
    if (!s)
        return tw_fail(TW_EPARSE, "%s: %s\"%s\": expected a string, found %s", path, where, key,
                       tw_json_type_name(tw_json_type_of(v)));
    if (strlen(s) >= cap) return tw_fail(TW_EPARSE, "%s: %s\"%s\" is longer than %zu bytes", path, where, key, cap - 1);
    memcpy(dst, s, strlen(s) + 1);
    return TW_OK;
}

/* The number member `key` (null: NaN): required. */
static tw_status get_number(const tw_json *obj, const char *key, double *dst, const char *path, const char *where)
{
    const tw_json *v = tw_json_get(obj, key);
    tw_json_type t = tw_json_type_of(v);
    if (t != TW_JSON_NUMBER && t != TW_JSON_NULL)
        return tw_fail(TW_EPARSE, "%s: %s\"%s\": expected a number or null, found %s", path, where, key,
                       tw_json_type_name(t));
    *dst = tw_json_number(v);
    return TW_OK;
}

static tw_status load_reading(const tw_json *o, size_t i, tw_profile *out, const char *path)
{
    char where[48], resp[32];
    snprintf(where, sizeof where, "readings[%zu].", i);
    if (tw_json_type_of(o) != TW_JSON_OBJECT)
        return tw_fail(TW_EPARSE, "%s: readings[%zu]: expected an object, found %s", path, i,
                       tw_json_type_name(tw_json_type_of(o)));
    tw_reading_model m;
    tw_reading_model_init(&m, "");
    tw_status st = get_string(o, "name", m.name, sizeof m.name, path, where);
    if (!st) st = get_string(o, "response", resp, sizeof resp, path, where);
    if (!st && tw_response_parse(resp, &m.response))
        st = tw_fail(TW_EPARSE, "%s: %s\"response\": unknown response \"%s\" (rc, boxcar, window, counter, unknown)",
                     path, where, resp);
    for (size_t k = 0; k < N_MODEL_NUMBERS && !st; k++)
        st = get_number(o, model_numbers[k].key, model_number(&m, k), path, where);
    double u = 0;
    if (!st) st = get_number(o, "updates", &u, path, where);
    if (st) return st;
    if (!isnan(u) && (u < 0 || u != floor(u) || u > 9007199254740992.0))
        return tw_fail(TW_EPARSE, "%s: %s\"updates\": expected a count, found %g", path, where, u);
    m.updates = isnan(u) ? 0 : (uint64_t)u;
    if (tw_profile_find(out, m.name))
        return tw_fail(TW_EPARSE, "%s: %s\"name\": reading \"%s\" appears twice", path, where, m.name);
    if (out->n >= TW_PROFILE_MAX_READINGS)
        return tw_fail(TW_EPARSE, "%s: more than %d readings", path, TW_PROFILE_MAX_READINGS);
    return tw_profile_set(out, &m);
}

/* activity_models[i].key: an array of nf numbers (nf: the features'), finite, each over `low` (or at
 * least it, where `strict` is false) */
static tw_status get_feature_numbers(const tw_json *o, const char *key, size_t nf, double low, bool strict, double *dst,
                                     const char *path, const char *where)
{
    const tw_json *v = tw_json_get(o, key);
    if (tw_json_type_of(v) != TW_JSON_ARRAY || tw_json_len(v) != nf)
        return tw_fail(TW_EPARSE, "%s: %s\"%s\": expected an array of %zu numbers (one per feature)", path, where, key,
                       nf);
    for (size_t k = 0; k < nf; k++) {
        const tw_json *x = tw_json_at(v, k);
        double d = tw_json_number(x);
        if (tw_json_type_of(x) != TW_JSON_NUMBER || !isfinite(d) || (strict ? !(d > low) : !(d >= low)))
            return tw_fail(TW_EPARSE, "%s: %s\"%s\"[%zu]: expected a number %s %g", path, where, key, k,
                           strict ? ">" : ">=", low);
        dst[k] = d;
    }
    return TW_OK;
}

static tw_status load_activity(const tw_json *o, size_t i, tw_profile *out, const char *path)
{
    char where[48];
    snprintf(where, sizeof where, "activity_models[%zu].", i);
    if (tw_json_type_of(o) != TW_JSON_OBJECT)
        return tw_fail(TW_EPARSE, "%s: activity_models[%zu]: expected an object, found %s", path, i,
                       tw_json_type_name(tw_json_type_of(o)));
    if (out->n_activity >= TW_PROFILE_MAX_ACTIVITY)
        return tw_fail(TW_EPARSE, "%s: more than %d activity models", path, TW_PROFILE_MAX_ACTIVITY);
    tw_activity_model *a = &out->activity[out->n_activity];
    memset(a, 0, sizeof *a);
    const tw_json *fs = tw_json_get(o, "features");
    size_t nf = tw_json_len(fs);
    if (tw_json_type_of(fs) != TW_JSON_ARRAY || nf == 0 || nf > TW_PROFILE_MAX_FEATURES)
        return tw_fail(TW_EPARSE, "%s: %s\"features\": expected an array of 1 to %d names", path, where,
                       TW_PROFILE_MAX_FEATURES);
    for (size_t k = 0; k < nf; k++) {
        const char *name = tw_json_string(tw_json_at(fs, k));
        if (!name || !*name || strlen(name) >= sizeof a->feature[k])
            return tw_fail(TW_EPARSE, "%s: %s\"features\"[%zu]: expected a feature's name (1 to %zu bytes)", path,
                           where, k, sizeof a->feature[k] - 1);
        for (size_t m = 0; m < k; m++)
            if (!strcmp(a->feature[m], name))
                return tw_fail(TW_EPARSE, "%s: %s\"features\": \"%s\" appears twice", path, where, name);
        snprintf(a->feature[k], sizeof a->feature[k], "%s", name);
    }
    a->nf = nf;
    tw_status st = get_feature_numbers(o, "power_w", nf, 0, false, a->power_w, path, where);
    if (!st) st = get_feature_numbers(o, "sd_w", nf, 0, true, a->sd_w, path, where);
    a->residual_w = NAN;
    if (!st && tw_json_get(o, "residual_w")) st = get_number(o, "residual_w", &a->residual_w, path, where);
    a->clock_mhz = NAN;
    if (!st && tw_json_get(o, "clock_mhz")) {
        st = get_number(o, "clock_mhz", &a->clock_mhz, path, where);
        if (!st && !isnan(a->clock_mhz) && !(a->clock_mhz > 0)) /* null: none */
            st = tw_fail(TW_EPARSE, "%s: %s\"clock_mhz\": expected a clock above 0 MHz", path, where);
    }
    if (!st && tw_json_get(o, "source")) st = get_string(o, "source", a->source, sizeof a->source, path, where);
    if (!st) out->n_activity++;
    return st;
}

static tw_status check_schema(const tw_json *doc, const char *path)
{
    if (tw_json_type_of(doc) != TW_JSON_OBJECT)
        return tw_fail(TW_EPARSE, "%s: not a truewatt sensor profile (expected an object, found %s)", path,
                       tw_json_type_name(tw_json_type_of(doc)));
    const char *schema = tw_json_string(tw_json_get(doc, "schema"));
    if (!schema || strcmp(schema, SCHEMA))
        return tw_fail(TW_EPARSE, "%s: not a truewatt sensor profile (\"schema\" is %s%s%s, expected \"%s\")", path,
                       schema ? "\"" : "", schema ? schema : "missing or not a string", schema ? "\"" : "", SCHEMA);
    double v = tw_json_number(tw_json_get(doc, "version"));
    if (v != VERSION)
        return tw_fail(TW_EPARSE, "%s: sensor profile version %g is not supported (this truewatt reads version %d)",
                       path, v, VERSION);
    return TW_OK;
}

static tw_status load_doc(const tw_json *doc, tw_profile *out, const char *path)
{
    tw_status st = check_schema(doc, path);
    if (!st) st = get_string(doc, "gpu", out->gpu, sizeof out->gpu, path, "");
    if (!st) st = get_string(doc, "driver", out->driver, sizeof out->driver, path, "");
    if (!st) st = get_string(doc, "backend", out->backend, sizeof out->backend, path, "");
    if (!st) st = get_string(doc, "created", out->created, sizeof out->created, path, "");
    if (!st) st = get_string(doc, "command", out->command, sizeof out->command, path, "");
    if (!st) st = get_number(doc, "idle_w", &out->idle_w, path, "");
    if (!st) st = get_number(doc, "active_idle_w", &out->active_idle_w, path, "");
    if (!st) st = get_number(doc, "step_w", &out->step_w, path, "");
    if (!st && tw_json_get(doc, "linger_s")) { /* optional: measured on some GPUs only */
        st = get_number(doc, "linger_s", &out->linger_s, path, "");
        if (!st && isfinite(out->linger_s) && !(out->linger_s > 0))
            st =
                tw_fail(TW_EPARSE, "%s: \"linger_s\": %g is not a time constant (> 0 s, or null)", path, out->linger_s);
    }
    if (st) return st;
    const tw_json *rs = tw_json_get(doc, "readings");
    if (tw_json_type_of(rs) != TW_JSON_ARRAY)
        return tw_fail(TW_EPARSE, "%s: \"readings\": expected an array, found %s", path,
                       tw_json_type_name(tw_json_type_of(rs)));
    for (size_t i = 0; i < tw_json_len(rs) && !st; i++)
        st = load_reading(tw_json_at(rs, i), i, out, path);
    const tw_json *am = tw_json_get(doc, "activity_models"); /* optional: calibrated on some GPUs only */
    if (!st && am && tw_json_type_of(am) != TW_JSON_ARRAY)
        return tw_fail(TW_EPARSE, "%s: \"activity_models\": expected an array, found %s", path,
                       tw_json_type_name(tw_json_type_of(am)));
    for (size_t i = 0; am && i < tw_json_len(am) && !st; i++)
        st = load_activity(tw_json_at(am, i), i, out, path);
    return st;
}

tw_status tw_profile_load(const char *path, tw_profile *out)
{
    tw_clear_error();
    tw_profile_init(out);
    tw_json *doc;
    tw_status st = tw_json_load(path, &doc);
    if (st) return st;
    st = load_doc(doc, out, path);
    tw_json_free(doc);
    if (st) tw_profile_init(out);
    return st;
}

tw_status tw_profile_parse(const char *text, const char *origin, tw_profile *out)
{
    tw_clear_error();
    tw_profile_init(out);
    tw_json *doc;
    char err[512] = "";
    tw_status st = tw_json_parse(text, strlen(text), &doc, err, sizeof err);
    if (st) return tw_fail(st, "%s: %s", origin, err);
    st = load_doc(doc, out, origin);
    tw_json_free(doc);
    if (st) tw_profile_init(out);
    return st;
}

/* ---------------------------------------------------------------- files */

/* Lower case; every run of anything but [a-z0-9.] becomes one '-', none at
 * either end; "unknown" when nothing is left. */
static void slug(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    bool dash = false;
    for (; s && *s && n + 2 < cap; s++) {
        char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
        bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.';
        if (!keep) {
            dash = n > 0;
            continue;
        }
        if (dash) out[n++] = '-', dash = false;
        out[n++] = c;
    }
    out[n] = '\0';
    if (!n) snprintf(out, cap, "unknown");
}

void tw_profile_file_name(const char *gpu, const char *driver, char *out, size_t cap)
{
    char g[160], d[80];
    slug(gpu, g, sizeof g);
    slug(driver, d, sizeof d);
    snprintf(out, cap, "%s_%s.json", g, d);
}

/* Driver versions compared by their numeric parts: 580.159.04 > 575.64. */
static int driver_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (ea == a || eb == b) return strcmp(a, b);
        if (x != y) return x < y ? -1 : 1;
        a = *ea ? ea + 1 : ea;
        b = *eb ? eb + 1 : eb;
    }
    return 0;
}

/* The file in dir for `g` (a slug) with the highest driver, into best[cap]. */
static bool newest_other_driver(const char *dir, const char *g, char *best, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    size_t gl = strlen(g);
    char best_driver[256] = "";
    bool found = false;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= gl + 6 || strncmp(e->d_name, g, gl) || e->d_name[gl] != '_' || strcmp(e->d_name + n - 5, ".json"))
            continue;
        char drv[256];
        snprintf(drv, sizeof drv, "%.*s", (int)(n - gl - 6), e->d_name + gl + 1);
        if (found && driver_cmp(drv, best_driver) <= 0) continue;
        snprintf(best_driver, sizeof best_driver, "%s", drv);
        snprintf(best, cap, "%s", e->d_name);
        found = true;
    }
    closedir(d);
    return found;
}

tw_status tw_profile_lookup(const char *dir, const char *gpu, const char *driver, tw_profile *out, char *path_out,
                            size_t path_cap, bool *exact)
{
    tw_clear_error();
    char name[256], g[160], path[4096];
    tw_profile_file_name(gpu, driver, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bool same = access(path, F_OK) == 0;
    if (!same) {
        char other[256];
        slug(gpu, g, sizeof g);
        if (!newest_other_driver(dir, g, other, sizeof other))
            return tw_fail(TW_ENOTFOUND, "no sensor profile for %s in %s (looked for %s or %s_*.json)", gpu, dir, name,
                           g);
        snprintf(path, sizeof path, "%s/%s", dir, other);
    }
    if (exact) *exact = same;
    if (path_out && path_cap) snprintf(path_out, path_cap, "%s", path);
    return tw_profile_load(path, out);
}
