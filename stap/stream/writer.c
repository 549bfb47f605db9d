/* writer.c: the in-order writer thread (stream_internal.h): rows put from any thread in any
 * order are handed to the row function in order; the queue is bounded, so a slow disk slows
 * the run but never reorders or drops a row; its first error stops the stream. */
#include "stream_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct wentry {
    long long cpi, input_cpi;
    int ready;          /* filled: the writer may write it when its row comes */
    stap_cf32 *W, *Y;
    stap_detection *det;
    size_t ndet, det_cap;
    double stage_ms[STAP_STAGE_COUNT];
} wentry;

struct stap_stream_writer {
    stap_stream_row_fn sink;
    void *sink_user;
    size_t wlen, ylen;
    int depth;
    wentry *q;
    long long head;     /* the next row written; rows [head, head + depth) may be queued */
    long long limit;    /* no row at or past it is written (stap_stream_writer_limit)    */
    int done, status;
    stap_error err;
    double write_s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

static void *writer_main(void *arg)
{
    stap_stream_writer *cw = arg;
    for (;;) {
        pthread_mutex_lock(&cw->mu);
        wentry *e = &cw->q[cw->head % cw->depth];
        while (!e->ready && !cw->done && cw->head < cw->limit) pthread_cond_wait(&cw->cv, &cw->mu);
        if (!e->ready || cw->head >= cw->limit) { /* finished, or a row that never comes */
            pthread_mutex_unlock(&cw->mu);
            break;
        }
        pthread_mutex_unlock(&cw->mu);
        stap_error err;
        double t0 = stap_now_ms();
        int st = cw->sink(cw->sink_user, e->cpi, e->input_cpi, cw->wlen ? e->W : NULL,
                          cw->ylen ? e->Y : NULL, e->det, e->ndet, e->stage_ms, &err);
        double t1 = stap_now_ms();
        pthread_mutex_lock(&cw->mu);
        cw->write_s += (t1 - t0) * 1e-3;
        if (st && !cw->status) {
            cw->status = st;
            cw->err = err;
        }
        e->ready = 0;
        cw->head++;
        pthread_cond_broadcast(&cw->cv);
        const int stop = cw->status != 0;
        pthread_mutex_unlock(&cw->mu);
        if (stop) break;
    }
    return NULL;
}

int stap_stream_writer_start(stap_stream_writer **out, stap_stream_row_fn sink, void *user, size_t wlen,
                          size_t ylen, int depth, stap_error *err)
{
    *out = NULL;
    stap_stream_writer *cw = calloc(1, sizeof *cw);
    if (!cw) return stap_fail(err, STAP_ENOMEM, "out of memory for the writer");
    cw->sink = sink;
    cw->sink_user = user;
    cw->wlen = wlen;
    cw->ylen = ylen;
    cw->depth = depth;
    cw->limit = 1LL << 62;
    cw->q = calloc((size_t)depth, sizeof *cw->q);
    int ok = cw->q != NULL;
    for (int k = 0; k < depth && ok; k++) {
        cw->q[k].W = wlen ? malloc(sizeof(stap_cf32) * wlen) : NULL;
        cw->q[k].Y = ylen ? malloc(sizeof(stap_cf32) * ylen) : NULL;
        ok = (!wlen || cw->q[k].W) && (!ylen || cw->q[k].Y);
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
        return stap_fail(err, STAP_ENOMEM, "cannot start the writer (%d results of %.1f MB queued)",
                         depth, sizeof(stap_cf32) * (wlen + ylen) / 1e6);
    }
    *out = cw;
    return STAP_OK;
}

void stap_stream_writer_limit(stap_stream_writer *cw, long long row)
{
    pthread_mutex_lock(&cw->mu);
    if (row < cw->limit) cw->limit = row;
    pthread_cond_broadcast(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
}

int stap_stream_writer_put(stap_stream_writer *cw, long long row, const stap_cpi_result *r, long long input_cpi,
                       stap_error *err)
{
    pthread_mutex_lock(&cw->mu);
    while (row >= cw->head + cw->depth && row < cw->limit && !cw->status)
        pthread_cond_wait(&cw->cv, &cw->mu);
    int st = cw->status;
    if (st && err) *err = cw->err;
    const int dropped = row >= cw->limit; /* after a row that never comes: never written */
    pthread_mutex_unlock(&cw->mu);
    if (st || dropped) return st;
    wentry *e = &cw->q[row % cw->depth]; /* its own until the writer passes it */
    e->cpi = row;
    e->input_cpi = input_cpi;
    if (cw->wlen) memcpy(e->W, r->weights, sizeof(stap_cf32) * cw->wlen);
    if (cw->ylen) memcpy(e->Y, r->output, sizeof(stap_cf32) * cw->ylen);
    if (r->detection_count > e->det_cap) {
        stap_detection *d = realloc(e->det, sizeof *d * r->detection_count);
        if (!d) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", r->detection_count);
        e->det = d;
        e->det_cap = r->detection_count;
    }
    if (r->detection_count) memcpy(e->det, r->detections, sizeof *e->det * r->detection_count);
    e->ndet = r->detection_count;
    memcpy(e->stage_ms, r->stage_ms, sizeof e->stage_ms);
    pthread_mutex_lock(&cw->mu);
    e->ready = 1;
    pthread_cond_broadcast(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
    return STAP_OK;
}

double stap_stream_writer_seconds(stap_stream_writer *cw)
{
    pthread_mutex_lock(&cw->mu);
    const double s = cw->write_s;
    pthread_mutex_unlock(&cw->mu);
    return s;
}

int stap_stream_writer_finish(stap_stream_writer *cw, double *write_s, stap_error *err)
{
    if (!cw) return STAP_OK;
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

