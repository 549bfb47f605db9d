/* report.c: the reporting helpers the commands share (report.h). */
#include "report.h"
#include "cli.h" /* cli_blas_restarted_from */


#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h5io.h"
#include "rtstap/common.h" /* stap_now_ms */
#ifdef _OPENMP
#include <omp.h>
#endif

double stream_peak_scale(stap_sample_type t, const stap_cf32 *x, size_t n)
{
    double peak = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        const double v = fabs((double)((const float *)x)[i]);
        if (v > peak) peak = v;
    }
    const double top = t == STAP_SAMPLES_CI8 ? 127 : t == STAP_SAMPLES_CI16 ? 32767 : 2147483647.0;
    return t == STAP_SAMPLES_CF32 || !(peak > 0) ? 1.0 : peak / top;
}

size_t stream_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long pages = 0, rss = 0;
    int ok = fscanf(f, "%lu %lu", &pages, &rss) == 2;
    fclose(f);
    return ok ? (size_t)rss * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

cJSON *stream_json_rank(cJSON *arr, int rank, int device, long long cpis, double seconds,
                        double cpis_per_s, double lat_p50, double lat_p99)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", rank);
    cJSON_AddNumberToObject(o, "device", device);
    cJSON_AddNumberToObject(o, "cpis", (double)cpis);
    cJSON_AddNumberToObject(o, "seconds", seconds);
    cJSON_AddNumberToObject(o, "cpis_per_s", cpis_per_s);
    cJSON_AddNumberToObject(o, "latency_p50_ms", lat_p50);
    cJSON_AddNumberToObject(o, "latency_p99_ms", lat_p99);
    cJSON_AddItemToArray(arr, o);
    return o;
}

const char *stream_device_name(int device, char *buf, size_t len)
{
    if (device >= 0) snprintf(buf, len, "device %d", device);
    else snprintf(buf, len, "cpu");
    return buf;
}

void stream_json_stats(cJSON *o, const stap_stream_stats *st)
{
    cJSON_AddNumberToObject(o, "cpis", (double)st->cpis);
    cJSON_AddNumberToObject(o, "seconds", st->seconds);
    cJSON_AddNumberToObject(o, "cpis_per_s", st->cpis_per_s);
    cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
    cJSON_AddNumberToObject(l, "min", st->lat_min);
    cJSON_AddNumberToObject(l, "p50", st->lat_p50);
    cJSON_AddNumberToObject(l, "p99", st->lat_p99);
    cJSON_AddNumberToObject(l, "max", st->lat_max);
    cJSON_AddNumberToObject(o, "deadline_misses", (double)st->deadline_misses);
    cJSON_AddNumberToObject(o, "detections_per_cpi", st->detections_per_cpi);
    cJSON *s = cJSON_AddObjectToObject(o, "stage_ms_median");
    for (int i = 0; i < STAP_STAGE_COUNT; i++) {
        /* NaN is not JSON: a stage whose time the device could not give is null */
        if (st->stage_median[i] == st->stage_median[i])
            cJSON_AddNumberToObject(s, stap_stage_names[i], st->stage_median[i]);
        else
            cJSON_AddNullToObject(s, stap_stage_names[i]);
    }
}

void stream_json_config(cJSON *doc, const stap_config *pc, int beams)
{
    cJSON *c = cJSON_AddObjectToObject(doc, "config");
    cJSON_AddNumberToObject(c, "channels", pc->channels);
    cJSON_AddNumberToObject(c, "pulses", pc->pulses);
    cJSON_AddNumberToObject(c, "range_gates", pc->range_gates);
    cJSON_AddNumberToObject(c, "doppler_bins", pc->doppler_bins);
    cJSON_AddNumberToObject(c, "doppler_order", pc->doppler_order);
    cJSON_AddNumberToObject(c, "segments", pc->segments);
    cJSON_AddNumberToObject(c, "training", pc->training);
    cJSON_AddStringToObject(c, "training_window", stap_training_window_name(pc->training_window));
    if (pc->training_window == STAP_TRAINING_SLIDING) {
        cJSON_AddNumberToObject(c, "block", pc->block);
        cJSON_AddNumberToObject(c, "guard", pc->guard);
    }
    cJSON_AddStringToObject(c, "algorithm", stap_algorithm_name(pc->algorithm));
    int pv;
    const char *pn = stap_algorithm_param(pc, &pv); /* angle_bins, dpca_shift */
    if (pn) cJSON_AddNumberToObject(c, pn, pv);
    if (stap_is_subcpi(pc)) cJSON_AddNumberToObject(c, "sub_cpi", pc->doppler_order);
    cJSON_AddNumberToObject(c, "beams", beams);
    cJSON_AddNumberToObject(c, "loading", pc->loading);
}

static int threads_of(int cpu_threads)
{
#ifdef _OPENMP
    return cpu_threads > 0 ? cpu_threads : omp_get_max_threads();
#else
    return 1;
#endif
}

void stream_json_platform(cJSON *doc, int cpu_threads)
{
    stap_la_blas_info bi;
    stap_la_blas_query(&bi);
    cJSON *c = cJSON_AddObjectToObject(doc, "cpu");
    cJSON_AddStringToObject(c, "model", bi.cpu_model);
    cJSON_AddStringToObject(c, "features", bi.cpu_features);
    cJSON_AddNumberToObject(c, "threads", threads_of(cpu_threads));
    cJSON *b = cJSON_AddObjectToObject(doc, "blas");
    cJSON_AddStringToObject(b, "library", bi.library);
    cJSON_AddStringToObject(b, "core", bi.core);
    /* the core OpenBLAS took before rtstap restarted with a fitting one (app/main.c) */
    if (cli_blas_restarted_from()) cJSON_AddStringToObject(b, "core_detected", cli_blas_restarted_from());
    /* the lapack backend calls OpenBLAS from each OpenMP thread with its threads set to 1 */
    cJSON_AddNumberToObject(b, "threads_per_call", 1);
    char gpu[256];
    stap_error err;
    if (stap_gpu_info(gpu, sizeof gpu, NULL, NULL, &err) == STAP_OK) cJSON_AddStringToObject(doc, "gpu", gpu);
    else cJSON_AddNullToObject(doc, "gpu");
}

void stream_print_platform(FILE *f, int cpu_threads)
{
    stap_la_blas_info bi;
    stap_la_blas_query(&bi);
    char from[96] = "";
    if (cli_blas_restarted_from())
        snprintf(from, sizeof from, ", restarted: OpenBLAS took this CPU for %s", cli_blas_restarted_from());
    else if (bi.better_core)
        snprintf(from, sizeof from, ", generic: OPENBLAS_CORETYPE=%s fits this CPU", bi.better_core);
    fprintf(f, "CPU %s (%s), %d threads; BLAS core %s%s (%.40s)\n", bi.cpu_model, bi.cpu_features,
            threads_of(cpu_threads), bi.core, from, bi.library);
}

cJSON *stream_json_report(const char *command)
{
    cJSON *doc = cJSON_CreateObject();
    char host[256] = "unknown", date[32];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(doc, "command", command);
    cJSON_AddStringToObject(doc, "host", host);
    cJSON_AddStringToObject(doc, "date", date);
    cJSON_AddStringToObject(doc, "rtstap_version", RTSTAP_VERSION);
    cJSON_AddStringToObject(doc, "commit", RTSTAP_COMMIT);
    return doc;
}

cJSON *cli_json_written(const char *command, const char *output, int channels, int pulses,
                        int range_gates, long long cpis)
{
    cJSON *doc = stream_json_report(command);
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, "output", output);
    cJSON_AddNumberToObject(doc, "channels", channels);
    cJSON_AddNumberToObject(doc, "pulses", pulses);
    cJSON_AddNumberToObject(doc, "range_gates", range_gates);
    cJSON_AddNumberToObject(doc, "cpis", (double)(cpis > 0 ? cpis : 1));
    cJSON_AddStringToObject(doc, "samples", "complex64");
    return doc;
}
