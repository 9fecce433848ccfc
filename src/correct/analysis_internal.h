/* State shared by the analysis passes (analysis.c drives them, passes.c
 * holds the per-pass consumers). Internal. */
#ifndef TW_CORRECT_ANALYSIS_INTERNAL_H
#define TW_CORRECT_ANALYSIS_INTERNAL_H

#include "truewatt.h"
#include "correct/dedup.h"
#include "correct/hist.h"
#include "correct/rc.h"
#include "estimate/spill.h"
#include "trace/feed.h"

#define TW_DEFAULT_C_S 0.84
#define TW_DEFAULT_DEDUP_GAP_S 0.004

struct tw_analysis {
    tw_analysis_options opt;
    double c_s;
    bool fitted;
    double fit_rms_w;
    double idle_w;
    double active_idle_w;
    uint64_t n_read;
    uint64_t n_kept;
    double t_start_s;
    double t_end_s;
    double total_j;
    tw_energy_split total_split;
    const tw_feed *feed; /* the events replayed, by start (the caller's, `own_feed` or `region_feed`) */
    size_t n_events;     /* how many a replay gave */
    tw_events *regions;  /* the activity regions detected when no event was given */
    tw_feed region_feed;
    tw_analysis_event_fn on_event; /* each event's energies, as it finishes (may be NULL) */
    void *on_event_ctx;
    /* The energies kept by event index (tw_analyze, tw_analyze_stream without
     * fn): in a temporary file, written through a block of the latest indices
     * (events finish nearly in order), read back one at a time or in order. */
    bool keep;
    tw_spill res;
    tw_event_energy *blk;
    bool *blk_set;
    size_t blk_base;
    size_t cached_i; /* the record read last (SIZE_MAX: none) */
    tw_event_energy cached;
    bool any_truth; /* an event has its true energy (the simulator's) */
    /* the first event (by index) reaching outside the data */
    bool outside_any;
    size_t outside_index;
    tw_event outside;
    tw_events *events; /* tw_analyze's own copy of the events, sorted by start */
    tw_feed own_feed;  /* of `events` */
    bool source_used;  /* a pass has read the source: the next must rewind it */
};

/* Raw sample -> dedup -> RC correction, one sample at a time. */
typedef struct tw_corr_stream {
    tw_dedup dedup;
    tw_rc rc;
} tw_corr_stream;

void tw_corr_stream_init(tw_corr_stream *s, double c_s, int half, double gap_s);
/* Feeds one raw sample; writes 0 or 1 corrected samples; returns the count.
 * *kept tells whether the sample survived dedup. */
size_t tw_corr_stream_push(tw_corr_stream *s, double t_s, double w, bool *kept, double *t_out, double *raw_out,
                           double *corr_out);
/* The last samples held back by the slope window (at most TW_RC_MAX_HALF). */
size_t tw_corr_stream_finish(tw_corr_stream *s, double *t_out, double *raw_out, double *corr_out);

/* A consumer of one pass over the source. */
typedef struct tw_pass {
    void *ctx;
    /* every valid raw reading, in time order */
    tw_status (*on_raw)(void *ctx, double t_s, double w);
    /* every deduplicated reading with its corrected power */
    tw_status (*on_corrected)(void *ctx, double t_s, double raw_w, double corr_w);
    tw_status (*on_end)(void *ctx);
    /* with events (tw_run_pass_with_events): each event, by start, handed over
     * once every sample earlier than its start minus `lead_s` went through */
    tw_status (*on_event)(void *ctx, const tw_event *e);
    double lead_s;
    unsigned fields; /* the events' fields it reads (TW_FEED_*) */
} tw_pass;

/* Streams the source once from the start through the consumer (rewinding
 * it when an earlier pass has read it). */
tw_status tw_run_pass(tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass);
/* The same, with the analysis's events replayed beside the samples in time
 * order (pass->on_event): what a pass holds is the events running, never
 * all of them. Events out of start order are TW_EORDER. */
tw_status tw_run_pass_with_events(tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass);

/* Keeps event i's energies (a->keep); TW_EIO when the temporary file fails. */
tw_status tw_analysis_keep(tw_analysis *a, size_t i, const tw_event_energy *r);

/* Each event of a kept analysis with its energies, in the feed's order
 * (the feed replayed, the energies read back in order). */
tw_status tw_analysis_each(const tw_analysis *a, tw_analysis_event_fn fn, void *ctx);
/* The feed of the analysis's events (NULL when none). */
const tw_feed *tw_analysis_feed(const tw_analysis *a);

/* Passes (passes.c). Each returns TW_OK or a status with tw_last_error set. */
tw_status tw_pass_detect_regions(tw_analysis *a, tw_sensor *src, size_t reading);
tw_status tw_pass_fit(tw_analysis *a, tw_sensor *src, size_t reading);
tw_status tw_pass_levels(tw_analysis *a, tw_sensor *src, size_t reading);
tw_status tw_pass_final(tw_analysis *a, tw_sensor *src, size_t reading);

#endif
