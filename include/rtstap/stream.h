/* rtstap/stream.h: the real-time runtime — a stream keeps every slot of one engine per
 * device busy with CPIs from a source and hands each CPI's results, in CPI order, to a sink.
 * It is what `rtstap run` on a recording, `rtstap stream` and `rtstap bench` run, so a
 * program or Python reaches the same rates with one call (docs/library.md, "Streams").
 *
 *   source  a recording (reader threads, the samples as stored), a ring of cubes replayed
 *           from memory (resident on the device or not), or the caller's function;
 *   engines one per device (`devices`), each on its own thread with its slots; CPI g goes
 *           to engine g mod n (the devices are alike, the CPIs cost the same); or one
 *           engine on the configuration's backend;
 *   sink    a result writer (rows appended in CPI order by a writer thread), a row function
 *           on that thread, and/or a function called for each result as it is collected.
 *
 * Use: stap_stream_create (or _create_on with engines the caller made), stap_stream_run
 * (once), stap_stream_destroy. stap_stream_stop ends it early from any thread or from a
 * signal handler the program installs: the CPIs in flight are finished and handed to the
 * sink, nothing later is submitted, and run returns STAP_OK with the report's `stopped`.
 * Nothing is allocated per CPI: the buffers, queues and threads are made by create/run. */
#ifndef STAP_STREAM_H
#define STAP_STREAM_H

#include <stddef.h>

#include "engine.h"
#include "h5io.h"
#include "vrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STAP_STREAM_MAX_DEVICES 16

/* A callback source: set *cube to CPI n's samples (the engines' input format), valid until
 * release(n) is called (after its collect). Return STAP_OK, an error, STAP_STREAM_END to end
 * the stream before CPI n (as a stop does: what is in flight is finished), or
 * STAP_STREAM_AGAIN when CPI n is not there yet (a feed that arrives on a clock): the stream
 * collects its oldest CPI in flight, if any, and asks again — so results come out while the
 * next CPI is awaited (wait a little before returning it: nothing in flight is asked again
 * at once). With several devices it is called from each device's thread (not at once:
 * serialized). */
typedef int (*stap_stream_get_fn)(void *user, long long n, const void **cube, stap_error *err);
typedef void (*stap_stream_release_fn)(void *user, long long n);
#define STAP_STREAM_END (-1)
#define STAP_STREAM_AGAIN (-2)

typedef enum stap_stream_source_kind {
    STAP_STREAM_RECORDING = 1, /* a recording's written CPIs, in order, by reader threads */
    STAP_STREAM_RING = 2,      /* ring[n % ring_count], cubes in host memory            */
    STAP_STREAM_CALLBACK = 3,  /* get/release                                           */
    STAP_STREAM_LIVE = 4       /* a live receiver's complete CPIs, in order (vrt.h)     */
} stap_stream_source_kind;

typedef struct stap_stream_source {
    stap_stream_source_kind kind;
    long long cpis;            /* CPIs to run after the warm-up (>= 1); a recording
                                  runs past its written CPIs from the first again   */
    /* STAP_STREAM_RECORDING: read as the engine takes it (stap_stream_input_format) */
    stap_recording *recording;
    int readers;               /* reader threads (0: stap_stream_default_readers)   */
    int buffers;               /* host cubes read ahead (0: stap_stream_buffers)    */
    long long first, stride;   /* the i-th CPI run is written CPI first + i * stride
                                  (an MPI rank's share; 0, 0: every one, in order)   */
    /* STAP_STREAM_RING: cubes in the engines' input format; each device's engine gets
       a pinned copy of them (in place with one engine of the caller's: pin them
       with stap_engine_host_alloc for the link's full rate). Each device replays the
       ring from its own first cube. */
    const void *const *ring;
    int ring_count;
    int resident;              /* the engines were made resident (stap_engine_options):
                                  the ring is copied in once a slot, then run again  */
    /* STAP_STREAM_CALLBACK */
    stap_stream_get_fn get;
    stap_stream_release_fn release;
    void *user;
    /* the input's number of CPI n while it is in flight (reports, rows' input_cpi), or
       NULL: n itself */
    long long (*input_cpi)(void *user, long long n);
    /* STAP_STREAM_LIVE: the receiver (its int16 CPIs: the engines' input must be ci16 in
       the shape it assembles, and it must hold at least every engine's slots + 2 CPI
       buffers). The stream ends once `cpis` of the feed's CPIs came, complete or lost,
       when the receiver stops (stap_live_udp_stop), or on stap_stream_stop (which stops
       the receiver too). Complete CPIs are run, each numbered by its CPI in the feed
       (input_cpi); lost ones are never run, and are counted and listed in the report's
       `live`. No warm-up. The caller keeps the receiver and destroys it after the stream. */
    stap_live_udp *live;
    double live_seconds;       /* and it ends this long after stap_stream_run began (0: no
                                  limit; the CPIs in flight still finish)             */
} stap_stream_source;

/* Each result as it is collected, r->cpi numbered as the stream's CPI (from 0, the warm-up
 * included), input_cpi the input's (a recording's CPI index; else r->cpi): called on the
 * running device's thread, the calls serialized; in CPI order with one engine. An error
 * stops the stream at this CPI. */
typedef int (*stap_stream_each_fn)(void *user, const stap_engine *e, const stap_cpi_result *r,
                                   long long input_cpi, stap_error *err);
/* Each row on the writer thread, in order (row 0, 1, ...: the CPIs after the warm-up):
 * weights/output NULL when not kept. */
typedef int (*stap_stream_row_fn)(void *user, long long row, long long input_cpi,
                                  const stap_cf32 *weights, const stap_cf32 *output,
                                  const stap_detection *det, size_t ndet, const double *stage_ms,
                                  stap_error *err);

typedef struct stap_stream_sink {
    stap_stream_each_fn each;       /* or NULL */
    void *each_user;
    stap_result_writer *writer;     /* rows appended in CPI order (or NULL)         */
    stap_stream_row_fn row;         /* or rows handed to this function (not both)   */
    void *row_user;
    unsigned keep;                  /* what the rows carry: STAP_KEEP_WEIGHTS, _OUTPUT
                                       (detections always, when the engine detects)   */
    int depth;                      /* rows queued at most (0: as many as the engines
                                       and readers need)                               */
} stap_stream_sink;

typedef struct stap_stream_options {
    long long warmup;          /* untimed CPIs each engine runs first (not written)  */
    double deadline_ms;        /* count CPIs whose latency exceeds it (0: none)      */
    /* timed CPIs done (one engine: in order), from the first engine's thread        */
    void (*progress)(void *user, long long done);
    void *progress_user;
    /* test only: the reader waits `test_stall_ms` before the `test_stall_at`-th CPI
       (a slow disk; cut short by a stop). 0, 0: none */
    long long test_stall_at, test_stall_ms;
} stap_stream_options;

/* warm-up 0, no deadline, no progress */
void stap_stream_options_defaults(stap_stream_options *o);

typedef struct stap_stream_stats {
    long long cpis;                /* timed CPIs (after the warm-up)                 */
    double seconds, cpis_per_s;    /* first timed submit to last collect             */
    double lat_min, lat_p50, lat_p99, lat_max; /* submit to results in host memory, ms */
    long long deadline_misses;
    double stage_median[STAP_STAGE_COUNT];
    double detections_per_cpi;
    long long cpis_run;            /* CPIs collected, the warm-up included            */
    long long cpis_done;           /* CPIs collected and handed to the sink in order   */
    int stopped_by;                /* stap_stream_stop's reason, or 0                  */
} stap_stream_stats;

/* A live source's part of the report (zero for other sources). */
typedef struct stap_stream_live_report {
    long long complete, lost;      /* the feed's CPIs: run, and lost (never run)         */
    long long first_cpi;           /* the feed's first CPI seen (-1: none)                */
    const stap_live_lost_range *lost_ranges; /* ascending; valid until the stream is
                                      destroyed                                          */
    int nranges, ranges_truncated; /* every lost CPI listed (stap_live_tally), unless
                                      memory ran out: the count `lost` stays exact       */
    double lat_p50, lat_p99, lat_max; /* ms from the receipt of a CPI's last datagram to its
                                      results in host memory                             */
    double wait_p50, wait_p99, wait_max; /* of that, ms until its submit to an engine: the
                                      hand-over below, and the wait for the engine while it
                                      ran the CPIs before it                              */
    double handoff_p50, handoff_p99, handoff_max; /* of the wait, ms from the later of its
                                      last datagram's receipt and the stream's asking for
                                      it, to its hand-over: what the receiving adds      */
    long long deadline_misses;     /* of that latency, with stap_stream_options.deadline_ms */
    double seconds;                /* first CPI decided to the last                      */
} stap_stream_live_report;

/* out's counts from a tally (complete, lost, first_cpi, the lost runs), its latencies zero:
 * the report of a consumer that takes the receiver's events itself (listen --discard) */
void stap_stream_live_report_counts(const stap_live_tally *t, stap_stream_live_report *out);

typedef struct stap_stream_report {
    stap_stream_stats all;         /* the run: one engine's stats; with several, device 0's
                                      stage medians and the CPIs handed over in order   */
    int ndevices;
    int devices[STAP_STREAM_MAX_DEVICES];      /* CUDA's numbers (-1: none selected)  */
    stap_stream_stats device[STAP_STREAM_MAX_DEVICES];
    long long first_missing;       /* the first CPI not run (all: every one was)        */
    double wall_s;                 /* run: from the common start to the last device's end */
    double read_s, read_wait_s;    /* a recording: wall time with a read in progress, the
                                      readers' summed wait for a free buffer            */
    int readers;
    char read_path[200];           /* how the recording was read                        */
    double write_s;                /* the writer thread's time in the sink              */
    const char *limited_by;        /* "reading", "writing" or "the engine (compute and link)" */
    stap_stream_live_report live;  /* STAP_STREAM_LIVE                                   */
} stap_stream_report;

typedef struct stap_stream stap_stream;

/* A stream with its own engines: one per device in devices[0..ndevices-1] (made with it
 * selected, stap_la_gpu_select), or one on cfg's backend when ndevices is 0. The engines'
 * host memory check counts the source's cubes. */
int stap_stream_create(stap_stream **s, const stap_config *cfg, const stap_cf32 *steering,
                       int nbeams, int steering_len, const stap_engine_options *eo,
                       const int *devices, int ndevices, const stap_stream_source *src,
                       const stap_stream_sink *sink, const stap_stream_options *opt,
                       stap_error *err);
/* A stream over n engines the caller made (engines[k] on devices[k], or devices NULL: the
 * current device), which it keeps: they must outlive the stream. */
int stap_stream_create_on(stap_stream **s, stap_engine *const *engines, const int *devices, int n,
                          const stap_stream_source *src, const stap_stream_sink *sink,
                          const stap_stream_options *opt, stap_error *err);
/* Run the stream to its end, a stop or the first error (naming the device, with several,
 * and the input's CPI); *rep filled in every case. Once per stream. After an error of one
 * device the others finish every CPI before it: the rows handed over are exactly the CPIs
 * before the first that failed. */
int stap_stream_run(stap_stream *s, stap_stream_report *rep, stap_error *err);
/* Ask the stream to stop (reason != 0, e.g. the signal's number: the report's stopped_by).
 * Async-signal-safe; any thread; before or during run. */
void stap_stream_stop(stap_stream *s, int reason);
/* engine k (0 <= k < the stream's engines) */
stap_engine *stap_stream_engine(const stap_stream *s, int k);
int stap_stream_engines(const stap_stream *s);
/* The input's CPI index of the stream's i-th CPI (a recording's; else i). */
long long stap_stream_input_cpi(const stap_stream *s, long long i);
/* A live source's result r (in the sink's `each`, r numbered as the stream's CPI): ms from
 * the receipt of its last datagram to r->done_ms; -1 for other sources. */
double stap_stream_live_latency_ms(const stap_stream *s, const stap_cpi_result *r);
/* A live source's tally so far (complete and lost CPIs, the lost runs): read it in the
 * sink's `each` (the calls serialized with the source's); NULL for other sources. */
const stap_live_tally *stap_stream_live_tally(const stap_stream *s);
/* While it runs (any thread): the part busy the most of the wall time so far. */
const char *stap_stream_limit_now(const stap_stream *s);
void stap_stream_destroy(stap_stream *s);

/* The input format an engine for rec takes: the recording's samples as stored when they are
 * integer pairs and host_decode is 0, else complex64 (the reader decodes); desc says which,
 * and why, for reports. */
void stap_stream_input_format(const stap_recording *rec, int host_decode, stap_sample_format *f,
                              char *desc, size_t len);
/* Reader threads by default: the CPUs less two (the stream, the writer), 1 to 16. */
int stap_stream_default_readers(void);
/* Host cubes a recording's stream reads ahead for n engines of `slots` slots and `readers`
 * threads (what its engines' memory check counts), and the writer's default depth. */
int stap_stream_buffers(int n, int slots, int readers);
int stap_stream_depth(int n, int slots, int readers);
/* What limits a recording's run: the part busy the most of its wall time. */
const char *stap_stream_limit_of(double read_s, double write_s, double wall_s);
/* GB/s of reading the whole file at path with `threads` threads, each a contiguous part in
 * 4 MiB preads: the yardstick of a reader's rate (0 when it cannot be read). */
double stap_stream_plain_read_gbs(const char *path, int threads);

#ifdef __cplusplus
}
#endif

#endif
