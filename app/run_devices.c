/* run_devices: a recording on several GPUs in one process (run_devices.h). */
#include "run_devices.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "linalg.h"

typedef struct shared {
    const run_devices_job *job;
    pthread_mutex_t check_mu;
    long long stop_at;       /* a device failed at this CPI: the others run the CPIs before
                                it (those in flight included), none from it on          */
    pthread_mutex_t mu;
} shared;

typedef struct dev {
    shared *sh;
    int k;                   /* the engine's index: its CPIs are k, k + n, k + 2n, ...   */
    stream_stats st;
    int status;
    stap_error err;
} dev;

static long long global_of(const dev *d, long long j) { return j * d->sh->job->n + d->k; }

static void stop_from(shared *sh, long long g)
{
    pthread_mutex_lock(&sh->mu);
    if (g < sh->stop_at) sh->stop_at = g;
    pthread_mutex_unlock(&sh->mu);
}

static int src(void *user, long long j, const void **cube, stap_error *err)
{
    dev *d = user;
    pthread_mutex_lock(&d->sh->mu);
    const long long end = d->sh->stop_at;
    pthread_mutex_unlock(&d->sh->mu);
    if (global_of(d, j) >= end) return STREAM_END;
    return cpi_reader_get(d->sh->job->reader, global_of(d, j), cube, err);
}

static void release(void *user, long long j)
{
    dev *d = user;
    cpi_reader_release(d->sh->job->reader, global_of(d, j));
}

static int sink(void *user, const stap_cpi_result *r, stap_error *err)
{
    dev *d = user;
    const run_devices_job *job = d->sh->job;
    stap_cpi_result rg = *r; /* numbered as the run's CPI, not the engine's */
    rg.cpi = global_of(d, r->cpi);
    if (job->check) {
        pthread_mutex_lock(&d->sh->check_mu);
        int st = job->check(job->check_user, job->eng[d->k], &rg, err);
        pthread_mutex_unlock(&d->sh->check_mu);
        if (st) return st;
    }
    return cpi_writer_put_row(job->writer, rg.cpi, &rg, cpi_reader_input_cpi(job->reader, rg.cpi), err);
}

/* an error that stream_run prefixed "CPI j: " (the engine's CPI j) renamed "CPI input_cpi: " */
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
    const run_devices_job *job = d->sh->job;
    const long long n = job->cpis / job->n + (d->k < job->cpis % job->n);
    /* a negative number: no device to select (the test hook of cli_devices) */
    d->status = job->devices[d->k] >= 0 ? stap_la_gpu_select(job->devices[d->k], &d->err) : STAP_OK;
    if (!d->status && n > 0)
        d->status = stream_run(job->eng[d->k], 0, n, src, release, d, sink, d, 0, NULL, &d->st,
                               &d->err);
    /* the CPIs this device did not hand over are rows that never come */
    const long long missing = global_of(d, d->st.cpis_done);
    if (missing < job->cpis) cpi_writer_limit(job->writer, missing);
    if (d->status) {
        stop_from(d->sh, missing);
        /* stream_run names the engine's CPI: the input's, as one engine's run does */
        name_input_cpi(&d->err, d->st.cpis_done, cpi_reader_input_cpi(job->reader, missing));
    }
    return NULL;
}

int run_devices_buffers(int n, int slots, int readers) { return n * slots + readers + 2; }

int run_devices_depth(int n, int slots, int readers)
{
    return run_devices_buffers(n, slots, readers) + n * slots + 4;
}

int run_devices(const run_devices_job *job, stream_stats *st, long long *first_missing,
                stap_error *err)
{
    if (job->n < 1 || job->n > RUN_MAX_DEVICES)
        return stap_fail(err, STAP_EINVAL, "%d devices (1 to %d)", job->n, RUN_MAX_DEVICES);
    shared sh = {job, PTHREAD_MUTEX_INITIALIZER, INT64_MAX, PTHREAD_MUTEX_INITIALIZER};
    dev d[RUN_MAX_DEVICES];
    pthread_t th[RUN_MAX_DEVICES];
    int started = 0, status = STAP_OK;
    for (int k = 0; k < job->n; k++) {
        memset(&d[k], 0, sizeof d[k]);
        d[k].sh = &sh;
        d[k].k = k;
    }
    for (; started < job->n; started++)
        if (pthread_create(&th[started], NULL, dev_main, &d[started])) {
            status = stap_fail(err, STAP_ENOMEM, "cannot start the thread of device %d",
                               job->devices[started]);
            stop_from(&sh, started);
            cpi_writer_limit(job->writer, started); /* its first CPI never comes */
            break;
        }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    *first_missing = job->cpis;
    long long failed_at = started < job->n ? started : INT64_MAX; /* a thread not started */
    for (int k = 0; k < started; k++) {
        st[k] = d[k].st;
        const long long missing = d[k].st.cpis_done * job->n + k;
        if (missing < *first_missing) *first_missing = missing;
        /* the error of the first CPI that failed (the others ran every CPI before it) */
        if (d[k].status && missing < failed_at) {
            failed_at = missing;
            status = d[k].status;
            if (err) {
                *err = d[k].err;
                stap_error_prefix(err, "device %d", job->devices[k]);
            }
        }
    }
    if (started < job->n && *first_missing > started) *first_missing = started;
    return status;
}
