/* reader.c: a recording's reader threads (stream_internal.h): CPI i+1.. read into host
 * buffers (pinned for the GPU engine) while CPI i is processed; a slow disk slows the run
 * (the buffers are bounded) but never reorders or drops a CPI. */
#include "stream_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtstap/common.h" /* stap_now_ms */

enum { READER_MAX_THREADS = 64 };

struct stap_stream_reader {
    stap_recording *rec;
    stap_engine *e;
    long long count, cpis; /* cpis: the recording's written CPIs, the only ones read */
    long long first, stride; /* the i-th CPI read: written CPI first + i * stride      */
    int nbuf, nthreads;
    int stored;         /* read as stored: the engine takes integer pairs                */
    void **buf;
    long long *holds;   /* per buffer: the i it holds, -1 while free                  */
    long long claimed;  /* the next i a thread takes                                   */
    int stop, status;
    long long fail_at;  /* the i whose read failed (the first in order)               */
    stap_error err;
    double read_s, wait_s; /* summed over the threads                                 */
    double busy_from, busy_ms; /* wall time with at least one thread reading           */
    int reading;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const atomic_int *halt; /* the stream's stop                                     */
    long long stall_at, stall_ms; /* the test hook                                    */
    pthread_t thread[READER_MAX_THREADS];
    void *scratch[READER_MAX_THREADS];
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

typedef struct reader_arg {
    stap_stream_reader *r;
    int t;
} reader_arg;

/* One reader thread: takes the next CPI in order, waits for its buffer (i % nbuf) to be free,
 * reads it there. With several threads the reads overlap (the direct path: pread, no lock);
 * the CPIs still reach the engine in order (stap_stream_reader_get waits for the i-th). */
static void *reader_main(void *arg)
{
    stap_stream_reader *r = ((reader_arg *)arg)->r;
    const int t = ((reader_arg *)arg)->t;
    free(arg);
    /* the test hook (stap_stream_options.test_stall_*): a slow disk, to show that the run
     * is delayed, never reordered or truncated */
    const long long stall_at = r->stall_ms > 0 ? r->stall_at : -1, stall_ms = r->stall_ms;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        const long long i = r->claimed;
        if (r->stop || r->status || i >= r->count) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        r->claimed++;
        pthread_mutex_unlock(&r->mu);
        if (i == stall_at) { /* a wait that stap_stream_reader_stop cuts short */
            const struct timespec ts = deadline_after_ms(stall_ms);
            pthread_mutex_lock(&r->mu);
            while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &ts) == 0) {
            }
            pthread_mutex_unlock(&r->mu);
        }
        const int b = (int)(i % r->nbuf);
        double t0 = stap_now_ms();
        pthread_mutex_lock(&r->mu);
        /* the buffer is free once the CPI nbuf before this one was released */
        while (!r->stop && r->holds[b] != -1 - i) pthread_cond_wait(&r->cv, &r->mu);
        const int stop = r->stop;
        double t1 = stap_now_ms();
        if (!stop && r->reading++ == 0) r->busy_from = t1;
        pthread_mutex_unlock(&r->mu);
        if (stop) break;
        stap_error e;
        const long long at = stap_stream_reader_input_cpi(r, i);
        int st = r->stored ? stap_recording_read_stored(r->rec, at, r->buf[b], &e)
                           : stap_recording_read_with(r->rec, at, r->buf[b], r->scratch[t], &e);
        double t2 = stap_now_ms();
        pthread_mutex_lock(&r->mu);
        if (--r->reading == 0) r->busy_ms += t2 - r->busy_from;
        r->wait_s += (t1 - t0) * 1e-3;
        r->read_s += (t2 - t1) * 1e-3;
        if (st) {
            if (!r->status || i < r->fail_at) { /* the first failing CPI in order */
                r->status = st;
                r->err = e;
                r->fail_at = i;
            }
        } else {
            r->holds[b] = i;
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (st) break;
    }
    return NULL;
}

void stap_stream_reader_join(stap_stream_reader *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    for (int t = 0; t < r->started; t++) pthread_join(r->thread[t], NULL);
    r->started = 0;
}

void stap_stream_reader_stop(stap_stream_reader *r)
{
    if (!r) return;
    stap_stream_reader_join(r);
    for (int b = 0; b < r->nbuf && r->buf; b++) stap_engine_host_free(r->e, r->buf[b]);
    for (int t = 0; t < READER_MAX_THREADS; t++) free(r->scratch[t]);
    free(r->buf);
    free(r->holds);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

int stap_stream_reader_start(stap_stream_reader **out, stap_recording *rec, stap_engine *e,
                             long long count, long long first, long long stride, int nbuf,
                             int nthreads, const atomic_int *halt, long long stall_at,
                             long long stall_ms, stap_error *err)
{
    *out = NULL;
    stap_stream_reader *r = calloc(1, sizeof *r);
    if (!r) return stap_fail(err, STAP_ENOMEM, "out of memory for the reader");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->rec = rec;
    r->e = e;
    r->count = count;
    r->first = first;
    r->halt = halt;
    r->stall_at = stall_at;
    r->stall_ms = stall_ms;
    r->stride = stride > 0 ? stride : 1;
    r->cpis = stap_recording_written(rec);
    if (r->cpis < 1) {
        stap_stream_reader_stop(r);
        return stap_fail(err, STAP_EFORMAT, "no CPI of the recording was ever written");
    }
    /* the HDF5 path reads one CPI at a time: one thread */
    r->nthreads = stap_recording_parallel(rec) ? nthreads : 1;
    if (r->nthreads < 1) r->nthreads = 1;
    if (r->nthreads > READER_MAX_THREADS) r->nthreads = READER_MAX_THREADS;
    r->nbuf = nbuf > r->nthreads + 1 ? nbuf : r->nthreads + 1; /* every thread a buffer ahead */
    r->buf = calloc((size_t)r->nbuf, sizeof *r->buf);
    r->holds = malloc(sizeof *r->holds * (size_t)r->nbuf);
    r->stored = !stap_sample_format_is_native(&stap_engine_options_of(e)->input);
    const size_t bytes = stap_engine_cube_bytes(e);
    const size_t sb = r->stored ? 0 : stap_recording_scratch_bytes(rec);
    int ok = r->buf && r->holds;
    for (int b = 0; b < r->nbuf && ok; b++) {
        r->holds[b] = -1 - b; /* free for the b-th CPI */
        ok = (r->buf[b] = stap_engine_host_alloc(e, bytes)) != NULL;
    }
    for (int t = 0; t < r->nthreads && ok && sb; t++) ok = (r->scratch[t] = malloc(sb)) != NULL;
    if (!ok) {
        stap_stream_reader_stop(r);
        return stap_fail(err, STAP_ENOMEM, "cannot allocate %d input buffers of %.1f MB", r->nbuf,
                         bytes / 1e6);
    }
    for (int t = 0; t < r->nthreads; t++) {
        reader_arg *a = malloc(sizeof *a);
        if (a) *a = (reader_arg){r, t};
        if (!a || pthread_create(&r->thread[t], NULL, reader_main, a)) {
            free(a);
            stap_stream_reader_stop(r);
            return stap_fail(err, STAP_ENOMEM, "cannot start the reader threads");
        }
        r->started++;
    }
    *out = r;
    return STAP_OK;
}

int stap_stream_reader_threads(const stap_stream_reader *r) { return r->nthreads; }

const char *stap_stream_reader_path(const stap_stream_reader *r)
{
    return r->stored ? "direct (pread, no HDF5 call; as stored, converted by the engine)"
                     : stap_recording_read_path(r->rec);
}

void stap_stream_input_format(const stap_recording *rec, int host_decode, stap_sample_format *f,
                      char *desc, size_t len)
{
    stap_error why;
    stap_sample_format stored;
    *f = (stap_sample_format){.type = STAP_SAMPLES_CF32, .scale = 1.0};
    if (stap_recording_stored_format(rec, &stored, &why)) {
        const char *w = strstr(why.msg, "as stored: ");
        snprintf(desc, len, "complex64 over the link (decoded on the host: %s)",
                 w ? w + strlen("as stored: ") : why.msg);
    } else if (stap_sample_format_is_native(&stored)) {
        snprintf(desc, len, "complex64 over the link, as stored");
    } else {
        char d[96];
        stap_sample_format_describe(&stored, d, sizeof d);
        if (host_decode) {
            snprintf(desc, len, "complex64 over the link (%s, decoded on the host, as asked)", d);
        } else {
            *f = stored;
            snprintf(desc, len, "%s over the link as stored, converted by the engine", d);
        }
    }
}

typedef struct plain_part {
    const char *path;
    off_t from, to;
    double bytes;
} plain_part;

static void *plain_main(void *arg)
{
    plain_part *p = arg;
    int fd = open(p->path, O_RDONLY | O_CLOEXEC);
    char *buf = malloc((size_t)1 << 22);
    for (off_t at = p->from; fd >= 0 && buf && at < p->to;) {
        const size_t want = p->to - at < ((off_t)1 << 22) ? (size_t)(p->to - at) : (size_t)1 << 22;
        const ssize_t got = pread(fd, buf, want, at);
        if (got <= 0) break;
        at += got;
        p->bytes += (double)got;
    }
    free(buf);
    if (fd >= 0) close(fd);
    return NULL;
}

double stap_stream_plain_read_gbs(const char *path, int threads)
{
    struct stat sb;
    if (threads < 1 || threads > READER_MAX_THREADS || stat(path, &sb) != 0) return 0;
    plain_part part[READER_MAX_THREADS];
    pthread_t th[READER_MAX_THREADS];
    int started = 0;
    const double t0 = stap_now_ms();
    for (int t = 0; t < threads; t++) {
        part[t] = (plain_part){path, sb.st_size * t / threads, sb.st_size * (t + 1) / threads, 0};
        if (pthread_create(&th[t], NULL, plain_main, &part[t]) == 0) started++;
        else break;
    }
    double bytes = 0;
    for (int t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
        bytes += part[t].bytes;
    }
    const double s = (stap_now_ms() - t0) * 1e-3;
    return s > 0 ? bytes / s / 1e9 : 0;
}

int stap_stream_default_readers(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN) - 2; /* the stream loop, the writer */
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

int stap_stream_reader_get(stap_stream_reader *r, long long i, const void **cube, stap_error *err)
{
    const int b = (int)(i % r->nbuf);
    pthread_mutex_lock(&r->mu);
    int stopped = 0;
    /* a failed read stops the run at its CPI: the ones before it (other threads) still come */
    while (r->holds[b] != i && !(r->status && r->fail_at <= i)) {
        /* wake every 50 ms: a stop must not wait for a slow disk */
        const struct timespec ts = deadline_after_ms(50);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        if (r->holds[b] != i && r->halt && atomic_load(r->halt)) {
            stopped = 1;
            break;
        }
    }
    int st = r->holds[b] == i ? STAP_OK : stopped ? STAP_EIO : r->status;
    if (st && err) {
        if (stopped) stap_fail(err, STAP_EIO, "stopped while waiting for CPI %lld", i);
        else *err = r->err;
    }
    pthread_mutex_unlock(&r->mu);
    *cube = st ? NULL : r->buf[b];
    return st;
}

long long stap_stream_reader_input_cpi(const stap_stream_reader *r, long long i)
{
    return stap_recording_written_index(r->rec, (r->first + i * r->stride) % r->cpis);
}

void stap_stream_reader_release(stap_stream_reader *r, long long i)
{
    const int b = (int)(i % r->nbuf);
    pthread_mutex_lock(&r->mu);
    if (r->holds[b] == i) r->holds[b] = -1 - (i + r->nbuf); /* free for the CPI nbuf on */
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void stap_stream_reader_times(const stap_stream_reader *r, double *read_s, double *wait_s)
{
    stap_stream_reader *m = (stap_stream_reader *)r;
    pthread_mutex_lock(&m->mu);
    /* the wall time with a read in progress (several threads overlap), and the waits */
    *read_s = r->busy_ms * 1e-3;
    *wait_s = r->wait_s;
    pthread_mutex_unlock(&m->mu);
}

