/* report: the small reporting helpers the commands share — the JSON reports' parts (a
 * stream's stats, the configuration, the platform), RSS, the ring's integer scale. The
 * stream itself is the library's (rtstap/stream.h). */
#ifndef REPORT_H
#define REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "engine.h"
#include "rtstap/stream.h"

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
void stream_json_stats(cJSON *obj, const stap_stream_stats *st);

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
