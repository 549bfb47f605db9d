/* loop.c: one engine's slots kept full — CPI n is submitted into slot n % S once CPI n - S
 * has been collected from it — with what a stream reports: sustained CPIs/s, host-to-host
 * latency per CPI, deadline misses, stage medians (stream_internal.h). */
#include "stream_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stap_stream_quantile(const double *v, long long n, double q)
{
    long long i = (long long)(q * n + 0.999999) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return v[i];
}

/* latency percentiles and stage medians of the n timed CPIs (lat is reused) */
static void loop_summary(stap_stream_stats *st, double *lat, const double *stage, long long n)
{
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    st->lat_min = lat[0];
    st->lat_p50 = stap_stream_quantile(lat, n, 0.50);
    st->lat_p99 = stap_stream_quantile(lat, n, 0.99);
    st->lat_max = lat[n - 1];
    for (int s = 0; s < STAP_STAGE_COUNT; s++) {
        for (long long k = 0; k < n; k++) lat[k] = stage[k * STAP_STAGE_COUNT + s];
        qsort(lat, (size_t)n, sizeof *lat, cmp_double);
        st->stage_median[s] = stap_stream_quantile(lat, n, 0.5);
    }
}

static int stop_reason(const stap_stream_ctl *ctl)
{
    return ctl && ctl->stop ? atomic_load(ctl->stop) : 0;
}

int stap_stream_loop(stap_engine *e, long long warmup, long long n, stap_stream_get_fn src,
                     stap_stream_release_fn release, void *src_user, stap_stream_loop_sink sink,
                     void *sink_user, double deadline_ms, const stap_stream_ctl *ctl,
                     stap_stream_stats *st, stap_error *err)
{
    memset(st, 0, sizeof *st);
    if (n < 1) return stap_fail(err, STAP_EINVAL, "stream: need at least one CPI");
    const int S = stap_engine_slots(e);
    long long total = warmup + n;
    double *lat = malloc(sizeof(double) * n);
    double *stage = malloc(sizeof(double) * n * STAP_STAGE_COUNT);
    if (!lat || !stage) {
        free(lat);
        free(stage);
        return stap_fail(err, STAP_ENOMEM, "stream: out of memory for %lld CPIs' timings", n);
    }
    int status = STAP_OK;
    double t0 = stap_now_ms(), t_end = t0;
    size_t detections = 0;
    for (long long i = 0; i < total + S && !status; i++) {
        /* a stop: submit nothing more, finish the CPIs in flight */
        if (i < total && !st->stopped_by && (st->stopped_by = stop_reason(ctl))) total = i;
        if (i >= S) { /* collect CPI j = i - S, the oldest in flight */
            const long long j = i - S;
            stap_cpi_result r;
            status = stap_engine_collect(e, (int)(j % S), &r, err);
            if (release) release(src_user, j);
            if (status) {
                stap_error_prefix(err, "CPI %lld", j);
                break;
            }
            if (j >= warmup) {
                const long long k = j - warmup;
                lat[k] = r.done_ms - r.submit_ms;
                memcpy(stage + k * STAP_STAGE_COUNT, r.stage_ms, sizeof r.stage_ms);
                detections += r.detection_count;
                if (deadline_ms > 0 && lat[k] > deadline_ms) st->deadline_misses++;
            }
            if (sink && (status = sink(sink_user, &r, err))) break;
            st->cpis_done = j + 1;
            t_end = stap_now_ms();
            if (ctl && ctl->progress && j >= warmup) ctl->progress(ctl->progress_user, j - warmup + 1);
        }
        if (i < total) {
            const void *cube;
            if ((status = src(src_user, i, &cube, err))) {
                /* a source that ends the stream, or gave up waiting because of a stop: a
                 * stop, not an error */
                if (status == STAP_STREAM_END || (!st->stopped_by && (st->stopped_by = stop_reason(ctl)))) {
                    status = STAP_OK;
                    total = i;
                    continue;
                }
                break;
            }
            if (i == warmup) t0 = stap_now_ms();
            if ((status = stap_engine_submit(e, (int)(i % S), cube, err))) break;
        }
    }
    if (status) { /* leave no CPI in flight: collect what is still there */
        stap_error ignore;
        stap_cpi_result r;
        for (int s = 0; s < S; s++) stap_engine_collect(e, s, &r, &ignore);
    }
    st->cpis_run = total;
    n = total - warmup; /* fewer after a stop */
    if (!status && n > 0) {
        st->cpis = n;
        st->seconds = (t_end - t0) * 1e-3;
        st->cpis_per_s = n / st->seconds;
        st->detections_per_cpi = (double)detections / n;
        loop_summary(st, lat, stage, n);
    }
    free(stage);
    free(lat);
    return status;
}
