/* stream_internal.h: the pieces of the stream runtime (include/rtstap/stream.h) — the loop
 * that keeps one engine's slots full, the recording's reader threads, the in-order writer
 * thread and the several-device runner. stap/stream/ only. */
#ifndef STAP_STREAM_INTERNAL_H
#define STAP_STREAM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "rt_hidden.h"
#include "rtstap/stream.h"

/* What a loop reads while it runs: the stop (0, or stap_stream_stop's reason), the progress. */
typedef struct stap_stream_ctl {
    const atomic_int *stop;
    void (*progress)(void *user, long long done);
    void *progress_user;
} stap_stream_ctl;

/* Each result of one engine's loop, in order (numbered as the engine's submits). */
typedef int (*stap_stream_loop_sink)(void *user, const stap_cpi_result *r, stap_error *err);

/* Run warmup + n CPIs through e with all its slots in flight; time the last n. A stop ends
 * the submitting: the CPIs in flight are collected and handed to the sink, stopped_by is set
 * and the stats cover the CPIs run (cpis = 0 when the stop came during the warm-up). A
 * source returning STAP_STREAM_END ends it the same way without stopped_by. */
RT_INTERNAL int stap_stream_loop(stap_engine *e, long long warmup, long long n,
                                 stap_stream_get_fn src, stap_stream_release_fn release,
                                 void *src_user, stap_stream_loop_sink sink, void *sink_user,
                                 double deadline_ms, const stap_stream_ctl *ctl,
                                 stap_stream_stats *st, stap_error *err);

typedef struct stap_stream_reader stap_stream_reader;
typedef struct stap_stream_writer stap_stream_writer;

/* ---- the recording's reader (reader.c) ---------------------------------------------- */
/* Read `count` CPIs of rec in order (its i-th: written CPI first + i * stride, from the first
 * again past the last), `nbuf` buffers ahead (at least one more than the threads), by
 * `threads` threads when rec reads in parallel (else one), as e takes them. STAP_EFORMAT when
 * rec has no written CPI. stall_at/stall_ms: the test hook (stap_stream_options). */
RT_INTERNAL int stap_stream_reader_start(stap_stream_reader **r, stap_recording *rec, stap_engine *e,
                                         long long count, long long first, long long stride,
                                         int nbuf, int threads, const atomic_int *stop,
                                         long long stall_at, long long stall_ms, stap_error *err);
/* Wait for the i-th CPI's buffer (a stop ends the wait: STAP_EIO "stopped while waiting"). */
RT_INTERNAL int stap_stream_reader_get(stap_stream_reader *r, long long i, const void **cube,
                                       stap_error *err);
RT_INTERNAL void stap_stream_reader_release(stap_stream_reader *r, long long i);
RT_INTERNAL long long stap_stream_reader_input_cpi(const stap_stream_reader *r, long long i);
RT_INTERNAL int stap_stream_reader_threads(const stap_stream_reader *r);
RT_INTERNAL const char *stap_stream_reader_path(const stap_stream_reader *r);
RT_INTERNAL void stap_stream_reader_times(const stap_stream_reader *r, double *read_s, double *wait_s);
/* Its threads stopped and joined; the CPIs' input indices stay known. NULL: no-op. */
RT_INTERNAL void stap_stream_reader_join(stap_stream_reader *r);
RT_INTERNAL void stap_stream_reader_stop(stap_stream_reader *r); /* joins, frees; NULL: no-op */

/* ---- the in-order writer (writer.c) ------------------------------------------------- */
RT_INTERNAL int stap_stream_writer_start(stap_stream_writer **w, stap_stream_row_fn row, void *user,
                                         size_t weights_len, size_t output_len, int depth,
                                         stap_error *err);
/* Queue a copy of r as row `row` (any thread, rows in any order, each once): waits while it is
 * `depth` or more past the next written; a row at or past the limit is dropped (STAP_OK). */
RT_INTERNAL int stap_stream_writer_put(stap_stream_writer *w, long long row, const stap_cpi_result *r,
                                       long long input_cpi, stap_error *err);
/* Rows from `row` on never come: nothing from it on is written, no put waits for it. */
RT_INTERNAL void stap_stream_writer_limit(stap_stream_writer *w, long long row);
RT_INTERNAL double stap_stream_writer_seconds(stap_stream_writer *w);
/* Everything queued written; joins; the writer's first error. NULL: STAP_OK. */
RT_INTERNAL int stap_stream_writer_finish(stap_stream_writer *w, double *write_s, stap_error *err);

/* the stream (stream.c makes it, run.c runs it) */
/* A live receiver as the source (live.c): made for `decide` CPIs of the feed (complete or
 * lost) and at most `seconds` from stap_stream_live_begin (0: no limit); its CPIs taken by
 * stap_stream_live_next, its release/input_cpi the callback source's; ended early by *stop. */
typedef struct stap_stream_live stap_stream_live;
RT_INTERNAL int stap_stream_live_make(stap_stream_live **L, stap_live_udp *rx, long long decide,
                                      double seconds, const atomic_int *stop,
                                      stap_error *err);
RT_INTERNAL void stap_stream_live_free(stap_stream_live *L);
RT_INTERNAL void stap_stream_live_begin(stap_stream_live *L, double now_ms);
/* The next complete CPI (the stream's CPI n), the lost ones noted on the way; the end once
 * the stream has decided its CPIs, its time is over, the receiver stopped, or the stream was
 * asked to stop; AGAIN when none came within wait_ms (0: none pending now), the loop then
 * collecting its oldest CPI in flight (run.c's dev_get: 0 while the device holds CPIs). */
RT_INTERNAL int stap_stream_live_next(stap_stream_live *L, long long n, int wait_ms, const void **cube,
                                      stap_error *err);
RT_INTERNAL void stap_stream_live_release(void *user, long long n);
RT_INTERNAL long long stap_stream_live_input_cpi(void *user, long long n);
RT_INTERNAL const stap_live_tally *stap_stream_live_tally_of(const stap_stream_live *L);
/* when the last datagram of the stream's CPI n came (n in flight or just collected) */
RT_INTERNAL double stap_stream_live_arrival(const stap_stream_live *L, long long n);
RT_INTERNAL void stap_stream_live_done(stap_stream_live *L, long long n, double submit_ms,
                                       double done_ms);
RT_INTERNAL void stap_stream_live_report_of(stap_stream_live *L, double deadline_ms,
                                            stap_stream_live_report *out);

struct stap_stream {
    stap_engine *eng[STAP_STREAM_MAX_DEVICES];
    int devices[STAP_STREAM_MAX_DEVICES];
    int n, own;                  /* engines; made (and destroyed) here                */
    stap_stream_source src;
    stap_stream_sink sink;
    stap_stream_options opt;
    atomic_int stop;
    stap_stream_reader *reader;
    stap_stream_writer *writer;
    void **ring[STAP_STREAM_MAX_DEVICES]; /* each engine's pinned copy of the ring (or NULL) */
    size_t wlen, ylen;           /* what a row carries                                  */
    long long total;             /* the stream's CPIs: n x warm-up + timed              */
    pthread_mutex_t mu;          /* the source's get, the sink's each, stop_at          */
    long long stop_at;           /* a device failed at this CPI: none from it on runs   */
    double t_stream;             /* ms, run began                                       */
    stap_stream_live *live;      /* STAP_STREAM_LIVE's state (else NULL)                */
    int ran;
};

/* the nearest-rank q-quantile of sorted v[0..n-1] */
RT_INTERNAL double stap_stream_quantile(const double *v, long long n, double q);
/* v[0..n) in ascending order */
RT_INTERNAL void stap_stream_sort(double *v, long long n);

#endif
