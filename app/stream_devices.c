/* stream_devices: one stream per device, in threads (stream_devices.h). */
#include "stream_devices.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtstap/common.h"

/* the common start: every thread ready (or failed), and the main thread done starting them */
typedef struct start_line {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, threads; /* threads: -1 until every thread is started */
} start_line;

static void start_wait(start_line *l)
{
    pthread_mutex_lock(&l->mu);
    l->ready++;
    pthread_cond_broadcast(&l->cv);
    while (l->threads < 0 || l->ready < l->threads) pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
}

typedef struct dev_thread {
    const stream_devices_job *job;
    stream_device *out;
    start_line *start;
    double t0, t1;          /* ms: after the common start, at the end     */
    int status;
    stap_error err;
} dev_thread;

/* make the engine and its pinned ring on the thread's device */
static int dev_prepare(dev_thread *t, stap_engine **e, stream_ring *ring)
{
    const stream_devices_job *job = t->job;
    stap_error *err = &t->err;
    int st = stap_la_gpu_select(t->out->device, err);
    if (!st) st = stap_engine_create(e, job->cfg, job->steering, job->nbeams, job->steering_len,
                                     job->eo, err);
    if (st) return st;
    stap_gpu_info(t->out->name, sizeof t->out->name, NULL, NULL, err);
    snprintf(t->out->engine, sizeof t->out->engine, "%s", stap_engine_describe(*e));
    ring->cube = calloc((size_t)job->ring_n, sizeof *ring->cube);
    if (!ring->cube) return stap_fail(err, STAP_ENOMEM, "out of memory for the ring");
    const size_t bytes = stap_engine_cube_bytes(*e);
    for (int k = 0; k < job->ring_n; k++, ring->count++) {
        if (!(ring->cube[k] = stap_engine_host_alloc(*e, bytes)))
            return stap_fail(err, STAP_ENOMEM, "cannot allocate %d pinned cubes of %.1f MB",
                             job->ring_n, bytes / 1e6);
        stap_samples_from_cf32(&job->eo->input, job->ring + job->cube_len * (size_t)k,
                               job->cube_len, ring->cube[k]);
    }
    return STAP_OK;
}

static void *dev_main(void *arg)
{
    dev_thread *t = arg;
    stap_engine *e = NULL;
    stream_ring ring = {NULL, 0};
    t->status = dev_prepare(t, &e, &ring);
    start_wait(t->start); /* every device ready (or failed): the timing starts */
    t->t0 = stap_now_ms();
    if (!t->status)
        t->status = stream_run(e, t->job->warm, t->out->cpis, stream_ring_source, NULL, &ring, NULL,
                               NULL, 0, NULL, &t->out->st, &t->err);
    t->t1 = stap_now_ms();
    for (int k = 0; k < ring.count; k++) stap_engine_host_free(e, ring.cube[k]);
    free(ring.cube);
    stap_engine_destroy(e);
    return NULL;
}

int stream_devices_run(const stream_devices_job *job, const int *devices, int n,
                       stream_device *out, double *wall_s, stap_error *err)
{
    if (n < 1 || n > STREAM_MAX_DEVICES)
        return stap_fail(err, STAP_EINVAL, "%d devices (1 to %d)", n, STREAM_MAX_DEVICES);
    dev_thread t[STREAM_MAX_DEVICES];
    pthread_t th[STREAM_MAX_DEVICES];
    start_line start = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1};
    int started = 0, status = STAP_OK;
    for (int d = 0; d < n; d++) {
        memset(&out[d], 0, sizeof out[d]);
        out[d].device = devices[d];
        /* the timed CPIs dealt evenly: the devices are alike, each a share */
        out[d].cpis = job->cpis / n + (d < job->cpis % n);
        t[d] = (dev_thread){job, &out[d], &start, 0, 0, STAP_OK, {0, ""}};
    }
    for (int d = 0; d < n; d++) {
        if (pthread_create(&th[d], NULL, dev_main, &t[d])) {
            status = stap_fail(err, STAP_ENOMEM, "cannot start the thread of device %d", devices[d]);
            break;
        }
        started++;
    }
    pthread_mutex_lock(&start.mu);
    start.threads = started; /* the ones that started run; a failure to start is the error */
    pthread_cond_broadcast(&start.cv);
    pthread_mutex_unlock(&start.mu);
    for (int d = 0; d < started; d++) pthread_join(th[d], NULL);
    double t0 = 0, t1 = 0;
    for (int d = 0; d < started; d++) {
        if (t[d].status && !status) {
            status = t[d].status;
            if (err) {
                *err = t[d].err;
                stap_error_prefix(err, "device %d", devices[d]);
            }
        }
        if (!d || t[d].t0 < t0) t0 = t[d].t0;
        if (!d || t[d].t1 > t1) t1 = t[d].t1;
    }
    *wall_s = (t1 - t0) * 1e-3;
    return status;
}
