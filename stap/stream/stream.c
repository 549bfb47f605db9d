/* stream.c: the stream (include/rtstap/stream.h) — its engines, the source's reader or
 * pinned rings, the writer thread, one thread per device when there are several, the stop
 * and the report. */
#include "stream_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtstap/linalg.h" /* stap_la_gpu_select */


void stap_stream_options_defaults(stap_stream_options *o) { memset(o, 0, sizeof *o); }

int stap_stream_buffers(int n, int slots, int readers) { return n * slots + readers + 2; }

int stap_stream_depth(int n, int slots, int readers)
{
    return stap_stream_buffers(n, slots, readers) + n * slots + 4;
}

const char *stap_stream_limit_of(double read_s, double write_s, double wall_s)
{
    if (read_s > 0.8 * wall_s && read_s >= write_s) return "reading";
    if (write_s > 0.8 * wall_s) return "writing";
    return "the engine (compute and link)";
}

int stap_stream_engines(const stap_stream *s) { return s->n; }
stap_engine *stap_stream_engine(const stap_stream *s, int k)
{
    return k >= 0 && k < s->n ? s->eng[k] : NULL;
}

long long stap_stream_input_cpi(const stap_stream *s, long long i)
{
    if (s->reader) return stap_stream_reader_input_cpi(s->reader, i);
    return (s->src.kind == STAP_STREAM_CALLBACK || s->src.kind == STAP_STREAM_LIVE) && s->src.input_cpi
               ? s->src.input_cpi(s->src.user, i)
               : i;
}

double stap_stream_live_latency_ms(const stap_stream *s, const stap_cpi_result *r)
{
    return s->live ? r->done_ms - stap_stream_live_arrival(s->live, r->cpi) : -1;
}

const stap_live_tally *stap_stream_live_tally(const stap_stream *s)
{
    return s->live ? stap_stream_live_tally_of(s->live) : NULL;
}

void stap_stream_stop(stap_stream *s, int reason)
{
    if (!s) return;
    atomic_store(&s->stop, reason ? reason : 1);
    if (s->src.kind == STAP_STREAM_LIVE) stap_live_udp_stop(s->src.live); /* async-signal-safe */
}

const char *stap_stream_limit_now(const stap_stream *s)
{
    double read_s = 0, wait_s = 0;
    if (s->reader) stap_stream_reader_times(s->reader, &read_s, &wait_s);
    const double write_s = s->writer ? stap_stream_writer_seconds(s->writer) : 0;
    return stap_stream_limit_of(read_s, write_s, (stap_now_ms() - s->t_stream) * 1e-3);
}

/* the source and sink as given, checked */
static int stream_check(const stap_stream_source *src, const stap_stream_sink *sink, int n,
                        stap_error *err)
{
    if (n < 1 || n > STAP_STREAM_MAX_DEVICES)
        return stap_fail(err, STAP_EINVAL, "%d devices (1 to %d)", n, STAP_STREAM_MAX_DEVICES);
    if (src->cpis < 1) return stap_fail(err, STAP_EINVAL, "stream: need at least one CPI");
    switch (src->kind) {
    case STAP_STREAM_RECORDING:
        if (!src->recording) return stap_fail(err, STAP_EINVAL, "stream: a recording source without its recording");
        break;
    case STAP_STREAM_RING:
        if (!src->ring || src->ring_count < 1) return stap_fail(err, STAP_EINVAL, "stream: an empty ring");
        break;
    case STAP_STREAM_CALLBACK:
        if (!src->get) return stap_fail(err, STAP_EINVAL, "stream: a callback source without its function");
        break;
    case STAP_STREAM_LIVE:
        if (!src->live) return stap_fail(err, STAP_EINVAL, "stream: a live source without its receiver");
        break;
    default:
        return stap_fail(err, STAP_EINVAL, "stream: unknown source kind %d", (int)src->kind);
    }
    if (sink && sink->writer && sink->row)
        return stap_fail(err, STAP_EINVAL, "stream: a sink with both a result writer and a row function");
    return STAP_OK;
}

static int stream_new(stap_stream **out, const stap_stream_source *src, const stap_stream_sink *sink,
                      const stap_stream_options *opt, int n, stap_error *err)
{
    *out = NULL;
    int st = stream_check(src, sink ? sink : &(stap_stream_sink){0}, n, err);
    if (st) return st;
    stap_stream *s = calloc(1, sizeof *s);
    if (!s) return stap_fail(err, STAP_ENOMEM, "out of memory for the stream");
    s->src = *src;
    if (sink) s->sink = *sink;
    if (opt) s->opt = *opt;
    s->n = n;
    atomic_init(&s->stop, 0);
    pthread_mutex_init(&s->mu, NULL);
    s->stop_at = INT64_MAX;
    for (int k = 0; k < STAP_STREAM_MAX_DEVICES; k++) s->devices[k] = -1;
    if (src->kind == STAP_STREAM_LIVE) { /* the callback source over the receiver */
        if (s->opt.warmup)
            st = stap_fail(err, STAP_EINVAL, "stream: a live source has no warm-up (every CPI of the feed counts)");
        if (!st) st = stap_stream_live_make(&s->live, src->live, src->cpis, src->live_seconds, &s->stop,
                                              err);
        if (st) {
            pthread_mutex_destroy(&s->mu);
            free(s);
            return st;
        }
        s->src.release = stap_stream_live_release;
        s->src.input_cpi = stap_stream_live_input_cpi;
        s->src.user = s->live;
    }
    *out = s;
    return STAP_OK;
}

/* each engine's pinned copy of the ring: made with its device selected */
static int stream_pin_ring(stap_stream *s, int k, stap_error *err)
{
    const size_t bytes = stap_engine_cube_bytes(s->eng[k]);
    s->ring[k] = calloc((size_t)s->src.ring_count, sizeof *s->ring[k]);
    if (!s->ring[k]) return stap_fail(err, STAP_ENOMEM, "out of memory for the ring");
    for (int c = 0; c < s->src.ring_count; c++) {
        if (!(s->ring[k][c] = stap_engine_host_alloc(s->eng[k], bytes)))
            return stap_fail(err, STAP_ENOMEM, "cannot allocate %d pinned cubes of %.1f MB",
                             s->src.ring_count, bytes / 1e6);
        memcpy(s->ring[k][c], s->src.ring[c], bytes);
    }
    return STAP_OK;
}

/* a result writer as the writer thread's row function */
static int append_row(void *w, long long row, long long input_cpi, const stap_cf32 *weights,
                      const stap_cf32 *output, const stap_detection *det, size_t ndet,
                      const double *stage_ms, stap_error *err)
{
    return stap_result_writer_append(w, row, input_cpi, weights, output, det, ndet, stage_ms, err);
}

/* the reader and the writer (a stream's threads besides the devices') */
static int stream_io(stap_stream *s, stap_error *err)
{
    const stap_engine *e = s->eng[0];
    const int slots = stap_engine_slots(e);
    const int readers = s->src.readers > 0 ? s->src.readers : stap_stream_default_readers();
    s->total = (long long)s->n * s->opt.warmup + s->src.cpis;
    if (s->src.kind == STAP_STREAM_RECORDING) {
        const int nbuf = s->src.buffers > 0 ? s->src.buffers : stap_stream_buffers(s->n, slots, readers);
        int st = stap_stream_reader_start(&s->reader, s->src.recording, s->eng[0], s->total,
                                          s->src.first, s->src.stride, nbuf, readers, &s->stop,
                                          s->opt.test_stall_at, s->opt.test_stall_ms, err);
        if (st) return st;
    }
    if (s->sink.writer || s->sink.row) {
        const stap_config *c = stap_engine_config(e);
        const int B = stap_engine_beams(e);
        s->wlen = s->sink.keep & STAP_KEEP_WEIGHTS ? stap_weights_count(c, B) : 0;
        s->ylen = s->sink.keep & STAP_KEEP_OUTPUT ? stap_output_count(c, B) : 0;
        const int depth = s->sink.depth > 0 ? s->sink.depth
                          : s->n > 1 ? stap_stream_depth(s->n, slots, readers) : 4;
        int st = s->sink.writer
                     ? stap_stream_writer_start(&s->writer, append_row, s->sink.writer,
                                                s->wlen, s->ylen, depth, err)
                     : stap_stream_writer_start(&s->writer, s->sink.row, s->sink.row_user, s->wlen,
                                                s->ylen, depth, err);
        if (st) return st;
    }
    return STAP_OK;
}

/* the engines made (st: how that went): device 0 selected again, the reader and writer */
static int stream_ready(stap_stream *s, stap_stream **out, int st, stap_error *err)
{
    if (!st && s->n > 1 && s->devices[0] >= 0) st = stap_la_gpu_select(s->devices[0], err);
    if (!st) st = stream_io(s, err);
    if (st) {
        stap_stream_destroy(s);
        return st;
    }
    *out = s;
    return STAP_OK;
}

int stap_stream_create_on(stap_stream **out, stap_engine *const *engines, const int *devices, int n,
                          const stap_stream_source *src, const stap_stream_sink *sink,
                          const stap_stream_options *opt, stap_error *err)
{
    stap_stream *s;
    int st = stream_new(&s, src, sink, opt, n, err);
    if (st) return st;
    for (int k = 0; k < n; k++) {
        s->eng[k] = engines[k];
        if (devices) s->devices[k] = devices[k];
    }
    if (src->kind == STAP_STREAM_RING && n > 1)
        for (int k = 0; k < n && !st; k++)
            if (!(st = s->devices[k] >= 0 ? stap_la_gpu_select(s->devices[k], err) : STAP_OK))
                st = stream_pin_ring(s, k, err);
    return stream_ready(s, out, st, err);
}

int stap_stream_create(stap_stream **out, const stap_config *cfg, const stap_cf32 *steering,
                       int nbeams, int steering_len, const stap_engine_options *eo,
                       const int *devices, int ndevices, const stap_stream_source *src,
                       const stap_stream_sink *sink, const stap_stream_options *opt,
                       stap_error *err)
{
    const int n = ndevices > 0 ? ndevices : 1;
    stap_stream *s;
    int st = stream_new(&s, src, sink, opt, n, err);
    if (st) return st;
    s->own = 1;
    stap_engine_options o = *eo;
    if (src->kind == STAP_STREAM_RECORDING) { /* the reader's cubes, in the memory check */
        const int readers = src->readers > 0 ? src->readers : stap_stream_default_readers();
        const int nbuf = src->buffers > 0 ? src->buffers : stap_stream_buffers(n, eo->slots, readers);
        o.host_reserve += sizeof(stap_cf32) * (size_t)nbuf * (size_t)cfg->channels *
                          (size_t)cfg->pulses * (size_t)cfg->range_gates;
    }
    for (int k = 0; k < n && !st; k++) {
        s->devices[k] = ndevices > 0 ? devices[k] : -1;
        if (s->devices[k] >= 0 && (st = stap_la_gpu_select(s->devices[k], err))) break;
        st = stap_engine_create(&s->eng[k], cfg, steering, nbeams, steering_len, &o, err);
        if (!st && src->kind == STAP_STREAM_RING && (n > 1 || !src->resident)) st = stream_pin_ring(s, k, err);
        if (st && ndevices > 0) stap_error_prefix(err, "device %d", s->devices[k]);
    }
    return stream_ready(s, out, st, err);
}

void stap_stream_destroy(stap_stream *s)
{
    if (!s) return;
    stap_error ignore;
    stap_stream_reader_stop(s->reader);
    stap_stream_writer_finish(s->writer, NULL, &ignore);
    for (int k = 0; k < s->n; k++) { /* each engine's memory on its device */
        if (s->devices[k] >= 0 && (s->ring[k] || s->own) && stap_la_gpu_select(s->devices[k], &ignore))
            continue;
        for (int c = 0; s->ring[k] && c < s->src.ring_count; c++) stap_engine_host_free(s->eng[k], s->ring[k][c]);
        free(s->ring[k]);
        if (s->own) stap_engine_destroy(s->eng[k]);
    }
    if (s->n > 1 && s->devices[0] >= 0) stap_la_gpu_select(s->devices[0], &ignore);
    stap_stream_live_free(s->live);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
