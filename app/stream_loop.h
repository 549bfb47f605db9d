/* stream_loop: keeping an engine's slots full — CPI n is submitted into slot n % S once
 * CPI n - S has been collected from it — with the measurements `stream` and `bench`
 * report: sustained CPIs/s, host-to-host latency per CPI, deadline misses, stage medians.
 * Also the small reporting helpers the commands share (RSS, the JSON reports' parts). */
#ifndef STREAM_LOOP_H
#define STREAM_LOOP_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "engine.h"

/* Where CPI n comes from: set *cube (valid until the CPI is collected). STREAM_END (no
 * status takes it) ends the stream before CPI n as a graceful stop does, without a signal:
 * the CPIs in flight are collected and passed to the sink, and stream_run returns STAP_OK. */
typedef int (*stream_source_fn)(void *user, long long n, const void **cube, stap_error *err);
enum { STREAM_END = -1 };
/* CPI n's cube is no longer needed (called after its collect; may be NULL). */
typedef void (*stream_release_fn)(void *user, long long n);
/* What happens to CPI n's results, in CPI order (may be NULL). */
typedef int (*stream_sink_fn)(void *user, const stap_cpi_result *r, stap_error *err);

typedef struct stream_stats {
    long long cpis;                      /* timed CPIs (after the warm-up)           */
    double seconds, cpis_per_s;          /* first timed submit to last collect       */
    double lat_min, lat_p50, lat_p99, lat_max; /* submit to results in host memory, ms */
    long long deadline_misses;           /* latency > deadline (when deadline > 0)   */
    double stage_median[STAP_STAGE_COUNT];
    double detections_per_cpi;
    long long cpis_run;                  /* CPIs collected, warm-up included         */
    long long cpis_done;                 /* CPIs collected and passed to the sink, in
                                            order: all of them, or those before an error */
    int stopped_by;                      /* the signal of a graceful stop, or 0      */
} stream_stats;

struct progress;
/* Run warmup + n CPIs through e with all its slots in flight; time the last n. pg: the
 * progress line (progress.h) the timed CPIs advance, or NULL. Under a
 * graceful stop (cli_graceful_begin, signals.h) a SIGINT/SIGTERM ends the submitting: the
 * CPIs in flight are collected and passed to the sink, stopped_by is set and the stats
 * cover the CPIs run (cpis = 0 when the stop came during the warm-up). */
int stream_run(stap_engine *e, long long warmup, long long n, stream_source_fn src,
               stream_release_fn release, void *src_user, stream_sink_fn sink, void *sink_user,
               double deadline_ms, struct progress *pg, stream_stats *st, stap_error *err);

/* A source replaying a ring of cubes: CPI n is ring[n % count]. */
typedef struct stream_ring {
    void **cube;      /* samples as the engine takes them (stap_engine_options.input) */
    int count;
} stream_ring;
int stream_ring_source(void *user, long long n, const void **cube, stap_error *err);
/* The ring from device memory (stap_engine_options.resident): CPI n < slots brings
 * ring[n % count] into slot n % slots; every later CPI runs its slot's cube again (NULL:
 * no copy-in). */
typedef struct stream_resident {
    const stream_ring *ring;
    int slots;
} stream_resident;
int stream_resident_source(void *user, long long n, const void **cube, stap_error *err);

/* The scale that stores n complex64 samples as type t with their peak component at the
 * type's largest value (1 for complex64 or all zeros): how a synthesized ring becomes what
 * a digitizer delivers. */
double stream_peak_scale(stap_sample_type t, const stap_cf32 *x, size_t n);

/* Resident set size of this process, bytes (0 when unknown). */
size_t stream_rss_bytes(void);
/* (JSON documents are written by cli_json_write, cli_json.h: valid whatever they hold.) */
/* rtstap-mpi's reports: one rank's entry of "rank_stats" ({rank, device, cpis, seconds,
 * cpis_per_s, latency_p50_ms, latency_p99_ms}, added to arr and returned for the caller's
 * own keys), and a rank's device in words ("device 1", or "cpu" for -1) */
cJSON *stream_json_rank(cJSON *arr, int rank, int device, long long cpis, double seconds,
                        double cpis_per_s, double lat_p50, double lat_p99);
const char *stream_device_name(int device, char *buf, size_t len);
/* Add stats as {"cpis_per_s", "latency_ms": {min, p50, p99, max}, "deadline_misses",
 * "stage_ms": {...}} to obj. */
void stream_json_stats(cJSON *obj, const stream_stats *st);

/* The --json report of a command that wrote an input file (gen, the imports): the common
 * header (stream_json_report) and output, channels, pulses, range_gates, cpis (1: one
 * CPI), samples ("complex64"); the caller adds its own keys and writes it. */
cJSON *cli_json_written(const char *command, const char *output, int channels, int pulses,
                        int range_gates, long long cpis);
/* A new JSON report: {"command", "host", "date" (UTC), "rtstap_version", "commit"}. */
cJSON *stream_json_report(const char *command);
/* "config": {channels, pulses, range_gates, doppler_bins, doppler_order, segments,
 * training, beams, loading} of a resolved configuration (beams: the engine's). */
void stream_json_config(cJSON *doc, const stap_config *c, int beams);
/* {"cpu": {model, features, threads}, "blas": {library, core, threads}, "gpu": name}
 * (cpu_threads: the CPU backends' OpenMP threads for this run; 0 = all) */
void stream_json_platform(cJSON *doc, int cpu_threads);
/* The same as one line, e.g. for a table's header. */
void stream_print_platform(FILE *f, int cpu_threads);

#endif
