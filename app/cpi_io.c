/* cpi_io.c: the reader and writer threads of `run` and `stream --input` (cpi_io.h). */
#include "cpi_io.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rtstap/common.h" /* la_now_ms */
#include "signals.h"

/* ---- reader ------------------------------------------------------------------------- */

struct cpi_reader {
    stap_recording *rec;
    stap_engine *e;
    long long count, cpis; /* cpis: the recording's written CPIs, the only ones read */
    int nbuf;
    cf32 **buf;
    long long *holds;   /* per buffer: the i it holds, -1 while free                  */
    long long next;     /* the next i the thread reads                                 */
    long long released; /* buffers of i < released are free                           */
    int stop, status;
    rt_error err;
    double read_s, wait_s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int started;
};

/* The pthread_cond_timedwait deadline `ms` milliseconds from now. */
static struct timespec deadline_after_ms(long long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

static void *reader_main(void *arg)
{
    cpi_reader *r = arg;
    /* test hook: RTSTAP_TEST_READER_STALL=I:MS stalls the reader MS ms before the I-th CPI
     * (a slow disk), to show that the run is delayed, never reordered or truncated */
    long long stall_at = -1, stall_ms = 0;
    const char *hook = getenv("RTSTAP_TEST_READER_STALL");
    if (hook && sscanf(hook, "%lld:%lld", &stall_at, &stall_ms) != 2) stall_at = -1;
    for (long long i = 0; i < r->count; i++) {
        if (i == stall_at) { /* a wait that cpi_reader_stop cuts short */
            const struct timespec ts = deadline_after_ms(stall_ms);
            pthread_mutex_lock(&r->mu);
            while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &ts) == 0) {
            }
            pthread_mutex_unlock(&r->mu);
        }
        const int b = (int)(i % r->nbuf);
        double t0 = la_now_ms();
        pthread_mutex_lock(&r->mu);
        while (!r->stop && r->holds[b] >= 0) pthread_cond_wait(&r->cv, &r->mu);
        const int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        double t1 = la_now_ms();
        if (stop) break;
        rt_error e;
        int st = stap_recording_read(r->rec, cpi_reader_input_cpi(r, i), r->buf[b], &e);
        double t2 = la_now_ms();
        pthread_mutex_lock(&r->mu);
        r->wait_s += (t1 - t0) * 1e-3;
        r->read_s += (t2 - t1) * 1e-3;
        if (st) {
            r->status = st;
            r->err = e;
        } else {
            r->holds[b] = i;
            r->next = i + 1;
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (st) break;
    }
    return NULL;
}

void cpi_reader_stop(cpi_reader *r)
{
    if (!r) return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
    }
    for (int b = 0; b < r->nbuf && r->buf; b++) stap_engine_host_free(r->e, r->buf[b]);
    free(r->buf);
    free(r->holds);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

int cpi_reader_start(cpi_reader **out, stap_recording *rec, stap_engine *e, long long count,
                     int nbuf, rt_error *err)
{
    *out = NULL;
    cpi_reader *r = calloc(1, sizeof *r);
    if (!r) return rt_fail(err, RT_ENOMEM, "out of memory for the reader");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->rec = rec;
    r->e = e;
    r->count = count;
    r->cpis = stap_recording_written(rec);
    if (r->cpis < 1) {
        cpi_reader_stop(r);
        return rt_fail(err, RT_EFORMAT, "no CPI of the recording was ever written");
    }
    r->nbuf = nbuf;
    r->buf = calloc((size_t)nbuf, sizeof *r->buf);
    r->holds = malloc(sizeof *r->holds * (size_t)nbuf);
    const stap_config *c = stap_engine_config(e);
    const size_t bytes = sizeof(cf32) * (size_t)c->channels * c->pulses * c->range_gates;
    int ok = r->buf && r->holds;
    for (int b = 0; b < nbuf && ok; b++) {
        r->holds[b] = -1;
        ok = (r->buf[b] = stap_engine_host_alloc(e, bytes)) != NULL;
    }
    if (!ok) {
        cpi_reader_stop(r);
        return rt_fail(err, RT_ENOMEM, "cannot allocate %d input buffers of %.1f MB", nbuf, bytes / 1e6);
    }
    if (pthread_create(&r->thread, NULL, reader_main, r)) {
        cpi_reader_stop(r);
        return rt_fail(err, RT_ENOMEM, "cannot start the reader thread");
    }
    r->started = 1;
    *out = r;
    return RT_OK;
}

int cpi_reader_get(cpi_reader *r, long long i, const cf32 **cube, rt_error *err)
{
    const int b = (int)(i % r->nbuf);
    pthread_mutex_lock(&r->mu);
    int stopped = 0;
    while (r->holds[b] != i && !r->status) {
        /* wake every 50 ms: a graceful stop (SIGINT/SIGTERM) must not wait for a slow disk */
        const struct timespec ts = deadline_after_ms(50);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        if (r->holds[b] != i && cli_graceful_requested()) {
            stopped = 1;
            break;
        }
    }
    int st = r->holds[b] == i ? RT_OK : stopped ? RT_EIO : r->status;
    if (st && err) {
        if (stopped) rt_fail(err, RT_EIO, "stopped while waiting for CPI %lld", i);
        else *err = r->err;
    }
    pthread_mutex_unlock(&r->mu);
    *cube = st ? NULL : r->buf[b];
    return st;
}

long long cpi_reader_input_cpi(const cpi_reader *r, long long i)
{
    return stap_recording_written_index(r->rec, i % r->cpis);
}

void cpi_reader_release(cpi_reader *r, long long i)
{
    const int b = (int)(i % r->nbuf);
    pthread_mutex_lock(&r->mu);
    if (r->holds[b] == i) r->holds[b] = -1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void cpi_reader_times(const cpi_reader *r, double *read_s, double *wait_s)
{
    cpi_reader *m = (cpi_reader *)r;
    pthread_mutex_lock(&m->mu);
    *read_s = r->read_s;
    *wait_s = r->wait_s;
    pthread_mutex_unlock(&m->mu);
}

/* ---- writer ------------------------------------------------------------------------- */

typedef struct wentry {
    long long cpi, input_cpi;
    cf32 *W, *Y;
    stap_detection *det;
    size_t ndet, det_cap;
    double stage_ms[STAP_STAGE_COUNT];
} wentry;

struct cpi_writer {
    stap_result_writer *w;
    size_t wlen, ylen;
    int depth;
    wentry *q;
    long long head, tail; /* entries [head, tail) queued */
    int done, status;
    rt_error err;
    double write_s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

static void *writer_main(void *arg)
{
    cpi_writer *cw = arg;
    for (;;) {
        pthread_mutex_lock(&cw->mu);
        while (cw->head == cw->tail && !cw->done) pthread_cond_wait(&cw->cv, &cw->mu);
        if (cw->head == cw->tail && cw->done) {
            pthread_mutex_unlock(&cw->mu);
            break;
        }
        wentry *e = &cw->q[cw->head % cw->depth];
        pthread_mutex_unlock(&cw->mu);
        rt_error err;
        double t0 = la_now_ms();
        int st = stap_result_writer_append(cw->w, e->cpi, e->input_cpi, e->W, cw->ylen ? e->Y : NULL, e->det,
                                           e->ndet, e->stage_ms, &err);
        double t1 = la_now_ms();
        pthread_mutex_lock(&cw->mu);
        cw->write_s += (t1 - t0) * 1e-3;
        if (st && !cw->status) {
            cw->status = st;
            cw->err = err;
        }
        cw->head++;
        pthread_cond_broadcast(&cw->cv);
        const int stop = cw->status != 0;
        pthread_mutex_unlock(&cw->mu);
        if (stop) break;
    }
    return NULL;
}

int cpi_writer_start(cpi_writer **out, stap_result_writer *w, size_t wlen, size_t ylen, int depth,
                     rt_error *err)
{
    *out = NULL;
    cpi_writer *cw = calloc(1, sizeof *cw);
    if (!cw) return rt_fail(err, RT_ENOMEM, "out of memory for the writer");
    cw->w = w;
    cw->wlen = wlen;
    cw->ylen = ylen;
    cw->depth = depth;
    cw->q = calloc((size_t)depth, sizeof *cw->q);
    int ok = cw->q != NULL;
    for (int k = 0; k < depth && ok; k++) {
        cw->q[k].W = malloc(sizeof(cf32) * wlen);
        cw->q[k].Y = ylen ? malloc(sizeof(cf32) * ylen) : NULL;
        ok = cw->q[k].W && (!ylen || cw->q[k].Y);
    }
    pthread_mutex_init(&cw->mu, NULL);
    pthread_cond_init(&cw->cv, NULL);
    if (!ok || pthread_create(&cw->thread, NULL, writer_main, cw)) {
        for (int k = 0; cw->q && k < depth; k++) {
            free(cw->q[k].W);
            free(cw->q[k].Y);
        }
        free(cw->q);
        free(cw);
        return rt_fail(err, RT_ENOMEM, "cannot start the writer (%d results of %.1f MB queued)",
                       depth, sizeof(cf32) * (wlen + ylen) / 1e6);
    }
    *out = cw;
    return RT_OK;
}

int cpi_writer_put(cpi_writer *cw, const stap_cpi_result *r, long long input_cpi, rt_error *err)
{
    pthread_mutex_lock(&cw->mu);
    while (cw->tail - cw->head >= cw->depth && !cw->status) pthread_cond_wait(&cw->cv, &cw->mu);
    int st = cw->status;
    if (st && err) *err = cw->err;
    pthread_mutex_unlock(&cw->mu);
    if (st) return st;
    wentry *e = &cw->q[cw->tail % cw->depth]; /* not in use: the thread works on [head, tail) */
    e->cpi = r->cpi;
    e->input_cpi = input_cpi;
    memcpy(e->W, r->weights, sizeof(cf32) * cw->wlen);
    if (cw->ylen) memcpy(e->Y, r->output, sizeof(cf32) * cw->ylen);
    if (r->detection_count > e->det_cap) {
        stap_detection *d = realloc(e->det, sizeof *d * r->detection_count);
        if (!d) return rt_fail(err, RT_ENOMEM, "out of memory for %zu detections", r->detection_count);
        e->det = d;
        e->det_cap = r->detection_count;
    }
    if (r->detection_count) memcpy(e->det, r->detections, sizeof *e->det * r->detection_count);
    e->ndet = r->detection_count;
    memcpy(e->stage_ms, r->stage_ms, sizeof e->stage_ms);
    pthread_mutex_lock(&cw->mu);
    cw->tail++;
    pthread_cond_broadcast(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
    return RT_OK;
}

int cpi_writer_finish(cpi_writer *cw, double *write_s, rt_error *err)
{
    pthread_mutex_lock(&cw->mu);
    cw->done = 1;
    pthread_cond_broadcast(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
    pthread_join(cw->thread, NULL);
    int st = cw->status;
    if (st && err) *err = cw->err;
    if (write_s) *write_s = cw->write_s;
    for (int k = 0; k < cw->depth; k++) {
        free(cw->q[k].W);
        free(cw->q[k].Y);
        free(cw->q[k].det);
    }
    free(cw->q);
    pthread_mutex_destroy(&cw->mu);
    pthread_cond_destroy(&cw->cv);
    free(cw);
    return st;
}

int cpi_reader_get_fn(void *r, long long i, const cf32 **cube, rt_error *err)
{
    return cpi_reader_get(r, i, cube, err);
}
void cpi_reader_release_fn(void *r, long long i) { cpi_reader_release(r, i); }

