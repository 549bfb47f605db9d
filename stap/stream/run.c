/* run.c: stap_stream_run — one engine on the calling thread, or one thread per device with
 * CPI g on engine g mod n (include/rtstap/stream.h). When a device stops (an error, or a
 * stop) its next CPI is a row that never comes: the rows from it on are not written, so what
 * is written is the CPIs in order up to the first missing one, each once; after an error the
 * other devices still run the CPIs before it. */
#include "stream_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rtstap/linalg.h" /* stap_la_gpu_select */

typedef struct dev {
    stap_stream *s;
    int k;                 /* the engine: its CPIs are k, k + n, k + 2n, ...             */
    stap_stream_stats st;
    int status;
    stap_error err;
    double t1;             /* ms, its loop ended                                          */
    int inflight;          /* a live source's CPIs this device holds (got, not released)  */
} dev;

static long long global_of(const dev *d, long long j) { return j * d->s->n + d->k; }

static void stop_from(stap_stream *s, long long g)
{
    pthread_mutex_lock(&s->mu);
    if (g < s->stop_at) s->stop_at = g;
    pthread_mutex_unlock(&s->mu);
}

static int dev_get(void *user, long long j, const void **cube, stap_error *err)
{
    dev *d = user;
    stap_stream *s = d->s;
    const long long g = global_of(d, j);
    if (s->n > 1) {
        pthread_mutex_lock(&s->mu);
        const long long end = s->stop_at;
        pthread_mutex_unlock(&s->mu);
        if (g >= end) return STAP_STREAM_END;
    }
    switch (s->src.kind) {
    case STAP_STREAM_RING: { /* each device replays the ring from its first cube */
        void *const *ring = s->ring[d->k] ? (void *const *)s->ring[d->k] : (void *const *)s->src.ring;
        const int slots = stap_engine_slots(s->eng[d->k]);
        *cube = !s->src.resident || j < slots ? ring[j % s->src.ring_count] : NULL;
        return STAP_OK;
    }
    case STAP_STREAM_RECORDING:
        return stap_stream_reader_get(s->reader, g, cube, err);
    case STAP_STREAM_LIVE: { /* with CPIs of its own in flight a device does not wait for the
                                next arrival: it collects its oldest meanwhile (AGAIN) */
        if (s->n > 1) pthread_mutex_lock(&s->mu);
        const int st = stap_stream_live_next(s->live, g, d->inflight ? 0 : 2, cube, err);
        if (s->n > 1) pthread_mutex_unlock(&s->mu);
        if (st == STAP_OK) d->inflight++;
        return st;
    }
    default: {
        if (s->n > 1) pthread_mutex_lock(&s->mu);
        const int st = s->src.get(s->src.user, g, cube, err);
        if (s->n > 1) pthread_mutex_unlock(&s->mu);
        return st;
    }
    }
}

static void dev_release(void *user, long long j)
{
    dev *d = user;
    stap_stream *s = d->s;
    if (s->src.kind == STAP_STREAM_RECORDING) {
        stap_stream_reader_release(s->reader, global_of(d, j));
    } else if ((s->src.kind == STAP_STREAM_CALLBACK || s->src.kind == STAP_STREAM_LIVE) && s->src.release) {
        if (s->src.kind == STAP_STREAM_LIVE) d->inflight--;
        if (s->n > 1) pthread_mutex_lock(&s->mu);
        s->src.release(s->src.user, global_of(d, j));
        if (s->n > 1) pthread_mutex_unlock(&s->mu);
    }
}

static int dev_sink(void *user, const stap_cpi_result *r, stap_error *err)
{
    dev *d = user;
    stap_stream *s = d->s;
    stap_cpi_result rg = *r; /* numbered as the stream's CPI, not the engine's */
    rg.cpi = global_of(d, r->cpi);
    const long long in = stap_stream_input_cpi(s, rg.cpi);
    if (s->live) stap_stream_live_done(s->live, rg.cpi, r->submit_ms, r->done_ms); /* from arrival */
    if (s->sink.each) {
        if (s->n > 1) pthread_mutex_lock(&s->mu);
        const int st = s->sink.each(s->sink.each_user, s->eng[d->k], &rg, in, err);
        if (s->n > 1) pthread_mutex_unlock(&s->mu);
        if (st) return st;
    }
    const long long warm = s->n * s->opt.warmup;
    if (s->writer && rg.cpi >= warm) return stap_stream_writer_put(s->writer, rg.cpi - warm, &rg, in, err);
    return STAP_OK;
}

/* an error that the loop prefixed "CPI j: " (the engine's CPI j) renamed "CPI input_cpi: " */
static void name_input_cpi(stap_error *err, long long j, long long input_cpi)
{
    char head[32], name[32];
    const size_t n = (size_t)snprintf(head, sizeof head, "CPI %lld: ", j);
    const size_t m = (size_t)snprintf(name, sizeof name, "CPI %lld: ", input_cpi);
    if (strncmp(err->msg, head, n)) return;
    size_t rest = strlen(err->msg) - n;
    if (m + rest >= sizeof err->msg) rest = sizeof err->msg - 1 - m; /* cut, as stap_fail does */
    memmove(err->msg + m, err->msg + n, rest);
    memcpy(err->msg, name, m);
    err->msg[m + rest] = '\0';
}

static void *dev_main(void *arg)
{
    dev *d = arg;
    stap_stream *s = d->s;
    const long long share = s->src.cpis / s->n + (d->k < s->src.cpis % s->n);
    /* several devices: each thread selects its own */
    d->status = s->n > 1 && s->devices[d->k] >= 0 ? stap_la_gpu_select(s->devices[d->k], &d->err) : STAP_OK;
    const stap_stream_ctl ctl = {&s->stop, s->n == 1 ? s->opt.progress : NULL, s->opt.progress_user};
    if (!d->status && share > 0)
        d->status = stap_stream_loop(s->eng[d->k], s->opt.warmup, share, dev_get, dev_release, d,
                                     dev_sink, d, s->opt.deadline_ms, &ctl, &d->st, &d->err);
    d->t1 = stap_now_ms();
    if (s->n > 1) {
        /* the CPIs this device did not hand over are rows that never come */
        const long long missing = global_of(d, d->st.cpis_done), warm = s->n * s->opt.warmup;
        if (missing < s->total && s->writer) stap_stream_writer_limit(s->writer, missing > warm ? missing - warm : 0);
        if (d->status) {
            stop_from(s, missing);
            /* the loop names the engine's CPI: the input's, as one engine's run does */
            name_input_cpi(&d->err, d->st.cpis_done, stap_stream_input_cpi(s, missing));
        }
    }
    return NULL;
}

/* several devices: their threads, the first error in CPI order (the others ran every CPI
 * before it), the run as a whole */
static int run_devices(stap_stream *s, dev *d, stap_stream_report *rep, stap_error *err)
{
    pthread_t th[STAP_STREAM_MAX_DEVICES];
    int started = 0, status = STAP_OK;
    for (; started < s->n; started++)
        if (pthread_create(&th[started], NULL, dev_main, &d[started])) {
            status = stap_fail(err, STAP_ENOMEM, "cannot start the thread of device %d", s->devices[started]);
            stop_from(s, started);
            if (s->writer) stap_stream_writer_limit(s->writer, started); /* its first CPI never comes */
            break;
        }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    rep->first_missing = s->total;
    long long failed_at = started < s->n ? started : INT64_MAX; /* a thread not started */
    for (int k = 0; k < started; k++) {
        rep->device[k] = d[k].st;
        const long long missing = d[k].st.cpis_done * s->n + k;
        if (missing < rep->first_missing) rep->first_missing = missing;
        if (d[k].status && missing < failed_at) {
            failed_at = missing;
            status = d[k].status;
            if (err) {
                *err = d[k].err;
                stap_error_prefix(err, "device %d", s->devices[k]);
            }
        }
    }
    if (started < s->n && rep->first_missing > started) rep->first_missing = started;
    /* the run as a whole: device 0's stage times, the CPIs handed over in order */
    rep->all = d[0].st;
    rep->all.cpis_run = rep->all.cpis_done = rep->first_missing;
    for (int k = 0; k < started; k++)
        if (d[k].st.stopped_by) rep->all.stopped_by = d[k].st.stopped_by;
    return status;
}

int stap_stream_run(stap_stream *s, stap_stream_report *rep, stap_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->ndevices = s->n;
    memcpy(rep->devices, s->devices, sizeof rep->devices);
    if (s->ran) return stap_fail(err, STAP_EINVAL, "stream: run once");
    s->ran = 1;
    s->t_stream = stap_now_ms();
    if (s->live) stap_stream_live_begin(s->live, s->t_stream); /* its live_seconds from here */
    dev d[STAP_STREAM_MAX_DEVICES];
    for (int k = 0; k < s->n; k++) d[k] = (dev){s, k, {0}, STAP_OK, {0, ""}, 0, 0};
    int status;
    if (s->n == 1) {
        dev_main(&d[0]);
        status = d[0].status;
        if (status && err) *err = d[0].err;
        rep->all = rep->device[0] = d[0].st;
        rep->first_missing = d[0].st.cpis_done;
    } else {
        status = run_devices(s, d, rep, err);
    }
    double t1 = s->t_stream;
    for (int k = 0; k < s->n; k++)
        if (d[k].t1 > t1) t1 = d[k].t1;
    if (s->live) stap_stream_live_report_of(s->live, s->opt.deadline_ms, &rep->live);
    if (s->reader) {
        stap_stream_reader_times(s->reader, &rep->read_s, &rep->read_wait_s);
        rep->readers = stap_stream_reader_threads(s->reader);
        snprintf(rep->read_path, sizeof rep->read_path, "%s", stap_stream_reader_path(s->reader));
        stap_stream_reader_join(s->reader); /* (kept: the input's CPI numbers) */
    }
    if (s->writer) { /* every row handed over: its error, unless the run's own came first */
        stap_error werr;
        const int wst = stap_stream_writer_finish(s->writer, &rep->write_s, &werr);
        s->writer = NULL;
        if (wst && (!status || status == STAP_EDEVICE)) {
            status = wst;
            if (err) *err = werr;
        }
        t1 = stap_now_ms();
    }
    rep->wall_s = (t1 - s->t_stream) * 1e-3;
    rep->limited_by = stap_stream_limit_of(rep->read_s, rep->write_s, rep->wall_s);
    return status;
}
