/* `truewatt sensor identify` and `truewatt validate` as library calls
 * (tw_identify_run, tw_validation_run; truewatt.h): the identification or
 * the validation experiment run (bench/experiment.h) or a recording read
 * back, then the profile fitted and saved, or the validation report. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/experiment.h"
#include "bench/plans.h"
#include "core/error.h"
#include "core/note.h"
#include "core/outfile.h"
#include "correct/identify.h"
#include "correct/profile.h"
#include "correct/profile_pick.h"

void tw_identify_run_options_init(tw_identify_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->trace_out = "truewatt-identify.csv";
}

static void stamp(tw_profile *p, const char *command)
{
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(p->created, sizeof p->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(p->command, sizeof p->command, "%s", command ? command : "");
}

/* Fits, fills the provenance, saves and shows. */
static tw_status fit_and_save(const tw_experiment_options *e, const tw_identify_run_options *o, tw_sensor *trace,
                              const tw_events *ev, tw_profile *p, FILE *out)
{
    tw_identify_options io;
    tw_identify_options_init(&io);
    io.t_end_s = o->until_s > 0 ? o->until_s : NAN;
    io.cancel = e->cancel;
    tw_notef(e->note, e->note_ctx, "fitting the models of every reading");
    tw_status st = tw_identify(trace, ev, &io, p, NULL);
    if (st != TW_OK) return st;
    stamp(p, o->command);
    char name[256];
    if (!o->out) tw_profile_file_name(p->gpu, p->driver, name, sizeof name);
    const char *path = o->out ? o->out : name;
    if ((st = tw_profile_save(p, path)) != TW_OK) return st;
    tw_notef(e->note, e->note_ctx, "profile written to %s", path);
    /* the profile as written, shown as `sensor show` shows it */
    return tw_profile_show(path, o->json, out);
}

static tw_status identify_recorded(const tw_experiment_options *e, const tw_identify_run_options *o, FILE *out)
{
    tw_sensor *s = NULL;
    tw_events *ev = NULL;
    tw_sensor_config cfg = {.path = o->trace};
    tw_status st = tw_sensor_open("replay", &cfg, &s);
    if (st == TW_OK) st = tw_events_load(o->events, &ev);
    if (st == TW_OK) {
        tw_profile p;
        tw_profile_init(&p);
        snprintf(p.backend, sizeof p.backend, "replay");
        st = fit_and_save(e, o, s, ev, &p, out);
    }
    tw_sensor_close(s);
    tw_events_free(ev);
    return st;
}

static tw_status plan_identify(tw_exec *x, void *ctx)
{
    (void)ctx;
    return tw_plan_identify(x);
}

tw_status tw_identify_run(const tw_experiment_options *e_in, const tw_identify_run_options *o_in, FILE *out)
{
    tw_experiment_options e_full;
    tw_identify_run_options o_full;
    tw_identify_run_options_init(&o_full);
    tw_status sized = xp_read_options(&e_full, e_in, &o_full, sizeof o_full, o_in, "tw_identify_run");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_identify_run_options *o = &o_full;
    if (!out) return tw_fail(TW_EINVAL, "tw_identify_run: NULL argument"); /* NULL options: xp_read_options */
    if (!o->trace != !o->events) return tw_fail(TW_EINVAL, "a recorded trace and its events go together");
    if (o->trace) return identify_recorded(e, o, out);
    const char *trace = o->trace_out ? o->trace_out : "truewatt-identify.csv";
    char events[4096];
    xp_events_path(trace, events, sizeof events);
    tw_exec *x = NULL;
    tw_status st = xp_start(e, trace, events, tw_plan_identify_s(), &x);
    if (st != TW_OK) return st;
    st = xp_run(x, plan_identify, NULL);
    if (st == TW_OK) st = xp_keep_sim_run(x, trace, events, e->provenance);
    if (st == TW_OK) {
        tw_profile p;
        tw_profile_init(&p);
        snprintf(p.gpu, sizeof p.gpu, "%s", x->gpu);
        snprintf(p.driver, sizeof p.driver, "%s", x->driver);
        snprintf(p.backend, sizeof p.backend, "%s", x->backend);
        st = fit_and_save(e, o, x->trace, x->events, &p, out);
    }
    tw_exec_free(x);
    return st;
}

/* ---------------------------------------------------------------- validate */

static tw_status plan_validate(tw_exec *x, void *ctx)
{
    (void)ctx;
    tw_status st = tw_plan_identify(x);
    return st == TW_OK ? tw_plan_validate(x) : st;
}

/* The library's report of a recorded (or just finished) validation run;
 * `o` names its GPU, driver and, on the simulator, the true levels. */
static tw_status report(const tw_experiment_options *e, tw_sensor *trace, const tw_events *events, const char *out_dir,
                        tw_validation_options *o, FILE *out)
{
    o->out_dir = out_dir;
    o->cancel = e->cancel;
    o->note = e->note;
    o->note_ctx = e->note_ctx;
    return tw_validation_report(trace, events, o, out);
}

static tw_status validate_recorded(const tw_experiment_options *e, const char *out_dir, const char *trace,
                                   const char *events, FILE *out)
{
    tw_sensor *s = NULL;
    tw_events *ev = NULL;
    tw_sensor_config cfg = {.path = trace};
    tw_status st = tw_sensor_open("replay", &cfg, &s);
    if (st == TW_OK) st = tw_events_load(events, &ev);
    /* the GPU and driver the recording names (its provenance line) */
    char gpu[128] = "", driver[64] = "";
    int index = 0;
    bool named = tw_trace_gpu(trace, &index, gpu, sizeof gpu, driver, sizeof driver) && gpu[0];
    tw_validation_options o;
    tw_validation_options_init(&o);
    if (named) {
        o.gpu = gpu;
        o.driver = driver;
        o.backend = "replay";
    }
    if (st == TW_OK) st = report(e, s, ev, out_dir, &o, out);
    tw_sensor_close(s);
    tw_events_free(ev);
    return st;
}

tw_status tw_validation_run(const tw_experiment_options *e_in, const char *out_dir, const char *from, FILE *out)
{
    tw_experiment_options e_full;
    tw_status sized = xp_read_options(&e_full, e_in, NULL, 0, NULL, "tw_validation_run");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    if (!e || !out) return tw_fail(TW_EINVAL, "tw_validation_run: NULL argument");
    if (!out_dir) out_dir = "truewatt-validation";
    char trace[4096], events[4096];
    const char *in = from ? from : out_dir;
    snprintf(trace, sizeof trace, "%s/trace.csv", in);
    snprintf(events, sizeof events, "%s/events.csv", in);
    /* nothing is created for a run that cannot start */
    char why[512] = "";
    const char *backend = e->backend ? e->backend : "nvml";
    if (!from && !strcmp(backend, "nvml") && !tw_backend_available(backend, why, sizeof why))
        return tw_fail(TW_EUNAVAIL, "cannot measure: the %s backend is unavailable: %s", backend, why);
    if (from && access(trace, R_OK) != 0) return tw_fail(TW_EIO, "cannot read %s: %s", trace, strerror(errno));
    tw_status st = out_make_dir(out_dir);
    if (st != TW_OK) return st;
    if (from) return validate_recorded(e, out_dir, trace, events, out);

    tw_exec *x = NULL;
    if ((st = xp_start(e, trace, events, tw_plan_identify_s() + tw_plan_validate_s(), &x)) != TW_OK) return st;
    st = xp_run(x, plan_validate, NULL);
    if (st == TW_OK) {
        /* the simulator's run is kept like a GPU's, so `from` can analyse it again */
        st = xp_keep_sim_run(x, trace, events, e->provenance);
        tw_validation_options o;
        tw_validation_options_init(&o);
        o.gpu = x->gpu;
        o.driver = x->driver;
        o.backend = x->backend;
        o.true_idle_w = x->true_idle_w;
        o.true_active_idle_w = x->true_active_idle_w;
        o.true_step_w = x->true_step_w;
        if (st == TW_OK) st = report(e, x->trace, x->events, out_dir, &o, out);
    }
    tw_exec_free(x);
    return st;
}
