/* loop.c: one engine's slots kept full — CPI n is submitted into slot n % S once CPI n - S
 * has been collected from it, and while a source has no CPI yet (STAP_STREAM_AGAIN: a live
 * feed) the oldest in flight is collected, so its results do not wait for later arrivals —
 * with what a stream reports: sustained CPIs/s, host-to-host latency per CPI, deadline
 * misses, stage medians (stream_internal.h). */
#include "stream_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void stap_stream_sort(double *v, long long n)
{
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_double);
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
    stap_stream_sort(lat, n);
    st->lat_min = lat[0];
    st->lat_p50 = stap_stream_quantile(lat, n, 0.50);
    st->lat_p99 = stap_stream_quantile(lat, n, 0.99);
    st->lat_max = lat[n - 1];
    for (int s = 0; s < STAP_STAGE_COUNT; s++) {
        for (long long k = 0; k < n; k++) lat[k] = stage[k * STAP_STAGE_COUNT + s];
        stap_stream_sort(lat, n);
        st->stage_median[s] = stap_stream_quantile(lat, n, 0.5);
    }
}

static int stop_reason(const stap_stream_ctl *ctl)
{
    return ctl && ctl->stop ? atomic_load(ctl->stop) : 0;
}

/* what one loop keeps while it runs */
typedef struct loop_state {
    stap_engine *e;
    int S;
    long long warmup;
    stap_stream_release_fn release;
    void *src_user;
    stap_stream_loop_sink sink;
    void *sink_user;
    double deadline_ms;
    const stap_stream_ctl *ctl;
    stap_stream_stats *st;
    double *lat, *stage; /* the timed CPIs' latencies and stage times */
    size_t detections;
    double t_end;
} loop_state;

/* collect CPI j (the oldest in flight), time it, hand it to the sink */
static int collect_one(loop_state *L, long long j, stap_error *err)
{
    stap_cpi_result r;
    int status = stap_engine_collect(L->e, (int)(j % L->S), &r, err);
    if (L->release) L->release(L->src_user, j);
    if (status) {
        stap_error_prefix(err, "CPI %lld", j);
        return status;
    }
    if (j >= L->warmup) {
        const long long k = j - L->warmup;
        L->lat[k] = r.done_ms - r.submit_ms;
        memcpy(L->stage + k * STAP_STAGE_COUNT, r.stage_ms, sizeof r.stage_ms);
        L->detections += r.detection_count;
        if (L->deadline_ms > 0 && L->lat[k] > L->deadline_ms) L->st->deadline_misses++;
    }
    if (L->sink && (status = L->sink(L->sink_user, &r, err))) return status;
    L->st->cpis_done = j + 1;
    L->t_end = stap_now_ms();
    if (L->ctl && L->ctl->progress && j >= L->warmup) L->ctl->progress(L->ctl->progress_user, j - L->warmup + 1);
    return STAP_OK;
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
    loop_state L = {e, S, warmup, release, src_user, sink, sink_user, deadline_ms, ctl, st,
                    malloc(sizeof(double) * n), malloc(sizeof(double) * n * STAP_STAGE_COUNT), 0, 0};
    if (!L.lat || !L.stage) {
        free(L.lat);
        free(L.stage);
        return stap_fail(err, STAP_ENOMEM, "stream: out of memory for %lld CPIs' timings", n);
    }
    int status = STAP_OK;
    double t0 = stap_now_ms();
    L.t_end = t0;
    /* i: the next CPI to submit; next: the next to collect (the oldest in flight) */
    for (long long i = 0, next = 0; !status;) {
        /* a stop: submit nothing more, finish the CPIs in flight */
        if (i < total && !st->stopped_by && (st->stopped_by = stop_reason(ctl))) total = i;
        if (i >= total) { /* the end: every CPI in flight collected */
            while (!status && next < i) status = collect_one(&L, next++, err);
            break;
        }
        if (i - next >= S) { /* CPI i's slot holds CPI i - S: collect it first */
            status = collect_one(&L, next++, err);
            continue;
        }
        const void *cube;
        const int got = src(src_user, i, &cube, err);
        if (got == STAP_STREAM_AGAIN) { /* nothing yet: results out meanwhile, oldest first */
            if (next < i) status = collect_one(&L, next++, err);
            continue;
        }
        if (got) {
            /* a source that ends the stream, or gave up waiting because of a stop: a stop,
             * not an error */
            if (got == STAP_STREAM_END || (!st->stopped_by && (st->stopped_by = stop_reason(ctl)))) {
                total = i;
                continue;
            }
            status = got;
            break;
        }
        if (i == warmup) t0 = stap_now_ms();
        if ((status = stap_engine_submit(e, (int)(i % S), cube, err))) break;
        i++;
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
        st->seconds = (L.t_end - t0) * 1e-3;
        st->cpis_per_s = n / st->seconds;
        st->detections_per_cpi = (double)L.detections / n;
        loop_summary(st, L.lat, L.stage, n);
    }
    free(L.stage);
    free(L.lat);
    return status;
}
