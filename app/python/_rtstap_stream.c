/* _rtstap_stream.c: the binding's Stream — a stap_stream (include/rtstap/stream.h) over a
 * recording (its reader threads, as `rtstap run` reads it) or a Python iterator of cubes, one
 * engine per device, each CPI's results to a Python function in CPI order. The GIL is released
 * while the stream runs; the iterator and the function take it back for each call. */
#define NO_IMPORT_ARRAY
#include "_rtstap.h"
#include "../env.h"

#include <limits.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    stap_stream *s;
    stap_live_udp *rx;         /* a live source's receiver (udp://HOST:PORT)           */
    stap_recording *rec;
    stap_input in;             /* the recording's metadata and /steering               */
    PyObject *iter;            /* or the cubes' iterator                               */
    PyObject *callback;        /* (cpi, input_cpi, dict) per CPI, or None               */
    PyObject **held;           /* the iterator's cubes in flight, by CPI mod nheld      */
    int nheld;
    int npy_type, C, P, R;
    PyObject *exc_type, *exc_value, *exc_tb; /* what the iterator or the function raised */
    int running;
    /* output: the stream's own engines (one per device) and the result file it writes, in
       CPI order, published when run() ends (stopped: marked /config stopped) */
    stap_engine *engs[STAP_STREAM_MAX_DEVICES];
    int neng, devs[STAP_STREAM_MAX_DEVICES];
    stap_result_writer *rw;
    stap_result hdr;
    char cfar_desc[160], input_name[1024];
    double t0;
} Stream;

static void keep_exception(Stream *self)
{
    if (!self->exc_type) PyErr_Fetch(&self->exc_type, &self->exc_value, &self->exc_tb);
    else PyErr_Clear();
}

/* CPI n from the iterator: a C-contiguous array of the engine's input (rtstap/__init__.py
 * converts each item), held until release(n) */
static int iter_get(void *user, long long n, const void **cube, stap_error *err)
{
    Stream *self = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int st = STAP_OK;
    PyObject *a = PyIter_Next(self->iter);
    if (!a) {
        if (PyErr_Occurred()) {
            keep_exception(self);
            st = stap_fail(err, STAP_EINVAL, "the cubes' iterator raised at CPI %lld", n);
        } else {
            st = STAP_STREAM_END; /* exhausted: the stream ends before CPI n */
        }
    } else {
        PyArrayObject *x = (PyArrayObject *)a;
        const int pairs = self->npy_type != NPY_COMPLEX64;
        if (!PyArray_Check(a) || PyArray_TYPE(x) != self->npy_type || !PyArray_IS_C_CONTIGUOUS(x) ||
            PyArray_NDIM(x) != 3 + pairs || PyArray_DIM(x, 0) != self->C || PyArray_DIM(x, 1) != self->P ||
            PyArray_DIM(x, 2) != self->R || (pairs && PyArray_DIM(x, 3) != 2)) {
            st = stap_fail(err, STAP_EINVAL, "CPI %lld: a cube must be (%d, %d, %d%s) %s, C-contiguous",
                           n, self->C, self->P, self->R, pairs ? ", 2" : "", pairs ? "integer" : "complex64");
            Py_DECREF(a);
        } else {
            PyObject **h = &self->held[n % self->nheld];
            Py_XDECREF(*h);
            *h = a;
            *cube = PyArray_DATA(x);
        }
    }
    PyGILState_Release(g);
    return st;
}

static void iter_release(void *user, long long n)
{
    Stream *self = user;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_CLEAR(self->held[n % self->nheld]);
    PyGILState_Release(g);
}

/* each CPI's results to the Python function: callback(cpi, input_cpi, dict) */
static int each_cpi(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                    stap_error *err)
{
    Stream *self = user;
    if (self->callback == Py_None) return STAP_OK;
    PyGILState_STATE g = PyGILState_Ensure();
    int st = STAP_OK;
    PyObject *d = result_dict_of(e, r);
    PyObject *ret = d ? PyObject_CallFunction(self->callback, "LLO", r->cpi, input_cpi, d) : NULL;
    if (!ret) {
        keep_exception(self);
        st = stap_fail(err, STAP_EINVAL, "CPI %lld: the callback raised", r->cpi);
    }
    Py_XDECREF(ret);
    Py_XDECREF(d);
    PyGILState_Release(g);
    return st;
}

/* the options over the recording: its shape is in opts (rtstap/__init__.py), its element
 * spacing and /steering taken where the caller gave none, its samples as stored */
static int stream_source(Stream *self, PyObject *opts, PyObject *source, stap_config *c,
                         stap_engine_options *o, stap_stream_source *src, stap_error *err)
{
    if (PyUnicode_Check(source) && !strncmp(PyUnicode_AsUTF8(source), "udp://", 6)) {
        /* live: the receiver bound now (its port: Stream.address), int16 CPIs of the shape */
        const stap_vrt_shape shape = {c->channels, c->pulses, c->range_gates};
        const stap_live_udp_options lo = {.slots = 2 * STAP_ENGINE_MAX_SLOTS + 4};
        o->input.type = STAP_SAMPLES_CI16;
        int st = stap_live_udp_create(&self->rx, &shape, PyUnicode_AsUTF8(source), &lo, err);
        if (st) return st;
        *src = (stap_stream_source){.kind = STAP_STREAM_LIVE, .live = self->rx};
        return 0;
    }
    if (PyUnicode_Check(source)) {
        const char *path = PyUnicode_AsUTF8(source);
        if (!path) return -1;
        stap_read_options ro = {0};
        int st = cli_env_reader(&ro, err);
        if (st) return st;
        Py_BEGIN_ALLOW_THREADS
        st = stap_recording_open(path, &self->rec, &self->in, &ro, err);
        Py_END_ALLOW_THREADS
        if (st) return st;
        if (self->in.meta.has_element_spacing && !PyDict_GetItemString(opts, "element_spacing"))
            c->element_spacing = self->in.meta.element_spacing_wavelengths;
        char desc[200];
        if (!PyDict_GetItemString(opts, "format"))
            stap_stream_input_format(self->rec, 0, &o->input, desc, sizeof desc);
        *src = (stap_stream_source){.kind = STAP_STREAM_RECORDING, .recording = self->rec,
                                    .cpis = stap_recording_written(self->rec)};
        return 0;
    }
    if (!(self->iter = PyObject_GetIter(source))) return -1;
    *src = (stap_stream_source){.kind = STAP_STREAM_CALLBACK, .get = iter_get,
                                .release = iter_release, .user = self};
    return 0;
}

static int stream_devices(PyObject *devices, int *dev, int *n)
{
    *n = 0;
    if (devices == Py_None) return 0;
    PyObject *seq = PySequence_Fast(devices, "devices: a list of GPU numbers");
    if (!seq) return -1;
    const Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    if (k > STAP_STREAM_MAX_DEVICES) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "devices: %zd (at most %d)", k, STAP_STREAM_MAX_DEVICES);
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        dev[i] = (int)v;
    }
    *n = (int)k;
    Py_DECREF(seq);
    return 0;
}

/* output: the engines, made here (the header of the file names the first), and the writer */
static int stream_output(Stream *self, const char *path, unsigned keep, int replace,
                         const stap_config *c, const stap_cf32 *sv, int nb, int sl,
                         stap_engine_options *o, const int *dev, int ndev, long long cpis,
                         stap_stream_sink *sink, stap_error *err)
{
    if (!keep) keep = STAP_KEEP_WEIGHTS | STAP_KEEP_DETECTIONS; /* a recording's run's */
    o->keep_weights = (keep & STAP_KEEP_WEIGHTS) != 0;
    o->keep_output = (keep & STAP_KEEP_OUTPUT) != 0;
    o->detection_copies = 4 + 2; /* the writer's queue and batch, as rtstap run */
    o->host_reserve += STAP_RESULT_DETECTION_BYTES;
    self->neng = ndev > 0 ? ndev : 1;
    int st = STAP_OK;
    for (int k = 0; !st && k < self->neng; k++) {
        self->devs[k] = ndev > 0 ? dev[k] : -1;
        if (ndev > 0 && dev[k] >= 0) st = stap_la_gpu_select(dev[k], err);
        if (!st) st = stap_engine_create(&self->engs[k], c, sv, nb, sl, o, err);
    }
    if (!st && ndev > 1 && dev[0] >= 0) st = stap_la_gpu_select(dev[0], err);
    if (st) return st;
    const stap_engine *e = self->engs[0];
    stap_cfar_describe(&o->cfar, self->cfar_desc, sizeof self->cfar_desc);
    snprintf(self->input_name, sizeof self->input_name, "%s", self->rec ? self->input_name : "python");
    stap_result *h = &self->hdr;
    *h = (stap_result){.cfg = stap_engine_config(e), .input_name = self->input_name,
                       .beams = stap_engine_beams(e), .steering = stap_engine_steering(e),
                       .meta = self->rec ? &self->in.meta : NULL,
                       .have_detections = o->cfar.kind != STAP_CFAR_NONE,
                       .cfar_description = self->cfar_desc, .engine = e,
                       .looks = self->rec ? self->in.looks : NULL,
                       .input_samples = self->rec ? self->in.samples : NULL};
    h->backend_name = stap_backend_name(h->cfg->backend);
    const stap_write_options wo = {.mode = replace ? STAP_WRITE_REPLACE : STAP_WRITE_NEW, .keep = keep,
                                   .cpis = cpis, .detection_bytes = STAP_RESULT_DETECTION_BYTES};
    if ((st = stap_result_writer_open(&self->rw, path, h, &wo, err))) return st;
    sink->writer = self->rw;
    sink->keep = keep;
    return STAP_OK;
}

/* the file published after run(): every CPI's row, or those done when stopped */
static int stream_publish(Stream *self, const stap_stream_report *rep, int failed, stap_error *err)
{
    stap_result_writer *w = self->rw;
    self->rw = NULL;
    if (!w) return STAP_OK;
    if (failed) {
        stap_result_writer_abort(w); /* never a partial file */
        return STAP_OK;
    }
    char stopped[160] = "";
    if (rep->all.stopped_by)
        snprintf(stopped, sizeof stopped, "by stop() after %lld CPIs", rep->all.cpis_run);
    stap_result sum = {.timing_ms = rep->all.stage_median, .read_ms = rep->read_s * 1e3,
                       .total_ms = stap_now_ms() - self->t0,
                       .backend_name = self->hdr.backend_name,
                       .stopped = stopped[0] ? stopped : NULL,
                       .engine_note = stap_engine_note(self->engs[0])};
    long long *lost = NULL; /* a live source: /config cpis_lost and /lost_cpis */
    if (self->rx) {
        const stap_stream_live_report *L = &rep->live;
        if (L->lost && !(lost = malloc(sizeof *lost * (size_t)L->lost))) {
            stap_result_writer_abort(w);
            return stap_fail(err, STAP_ENOMEM, "out of memory for the %lld lost CPIs' list", L->lost);
        }
        long long n = 0;
        for (int k = 0; k < L->nranges; k++)
            for (long long c = 0; c < L->lost_ranges[k].count && n < L->lost; c++) lost[n++] = L->lost_ranges[k].cpi + c;
        sum.lost_counted = 1;
        sum.cpis_lost = n; /* (every one unless more ranges than the report lists) */
        sum.lost_cpis = lost;
    }
    const int st = stap_result_writer_close(w, &sum, err);
    free(lost);
    return st;
}

static int Stream_init(Stream *self, PyObject *args, PyObject *kw)
{
    PyObject *opts = NULL, *steering = Py_None, *source = NULL, *callback = Py_None, *devices = Py_None;
    long long cpis = 0, warmup = 0;
    const char *output = NULL;
    unsigned keep = 0;
    int replace = 0;
    static char *names[] = {"options", "source", "steering", "callback", "devices", "cpis", "warmup",
                            "output", "keep", "replace", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|OOOLLzIp", names, &PyDict_Type, &opts, &source,
                                     &steering, &callback, &devices, &cpis, &warmup, &output, &keep,
                                     &replace))
        return -1;
    if (keep & ~(unsigned)(STAP_KEEP_WEIGHTS | STAP_KEEP_OUTPUT | STAP_KEEP_DETECTIONS)) {
        PyErr_SetString(PyExc_ValueError, "keep: KEEP_WEIGHTS | KEEP_OUTPUT | KEEP_DETECTIONS");
        return -1;
    }
    if (self->s || self->rec || self->iter) {
        PyErr_SetString(PyExc_RuntimeError, "the stream is made already");
        return -1;
    }
    stap_config c;
    stap_engine_options o;
    stap_stream_source src;
    stap_error err = {0, ""};
    int dev[STAP_STREAM_MAX_DEVICES], ndev;
    int st = config_of(opts, &c, &o, &err);
    if (!st && stream_devices(devices, dev, &ndev)) st = -1;
    if (!st) st = stream_source(self, opts, source, &c, &o, &src, &err);
    if (st) return st < 0 ? -1 : (raise_error(&err), -1);
    if (cpis > 0) src.cpis = cpis;
    if (src.cpis < 1) {
        PyErr_SetString(PyExc_ValueError, self->rx ? "cpis: how many of the live feed's CPIs (complete or lost) to take (>= 1)"
                                                   : "cpis: how many CPIs the iterator gives (>= 1)");
        return -1;
    }
    Py_INCREF(callback);
    self->callback = callback;
    self->nheld = 2 * (ndev > 0 ? ndev : 1) * STAP_ENGINE_MAX_SLOTS + 2;
    if (!(self->held = PyMem_Calloc((size_t)self->nheld, sizeof *self->held))) {
        PyErr_NoMemory();
        return -1;
    }
    static const int types[] = {NPY_COMPLEX64, NPY_INT8, NPY_INT16, NPY_INT32};
    self->npy_type = types[o.input.type];
    self->C = c.channels, self->P = c.pulses, self->R = c.range_gates;
    PyArrayObject *V = NULL;
    if (steering != Py_None &&
        !(V = (PyArrayObject *)PyArray_FROMANY(steering, NPY_COMPLEX64, 2, 2, NPY_ARRAY_IN_ARRAY)))
        return -1;
    if (!V && !self->in.steering && (self->in.array_position || self->in.array_calibration)) {
        PyErr_SetString(RtstapError, "the recording has an /array geometry or calibration, which the "
                        "default beams do not follow: give look= or sector= (steered through it) or "
                        "steering=");
        return -1;
    }
    const stap_cf32 *sv = V ? PyArray_DATA(V) : self->in.steering;
    const int nb = V ? (int)PyArray_DIM(V, 0) : self->in.steering ? self->in.steering_beams : 0;
    const int sl = V ? (int)PyArray_DIM(V, 1) : self->in.steering ? self->in.steering_len : 0;
    stap_stream_sink sink = {.each = callback != Py_None ? each_cpi : NULL, .each_user = self};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.warmup = warmup;
    if (output && PyUnicode_Check(source))
        snprintf(self->input_name, sizeof self->input_name, "%s", PyUnicode_AsUTF8(source));
    self->t0 = stap_now_ms();
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(make_lock, WAIT_LOCK);
    if (output) {
        st = stream_output(self, output, keep, replace, &c, sv, nb, sl, &o, dev, ndev, src.cpis, &sink, &err);
        if (!st)
            st = stap_stream_create_on(&self->s, self->engs, ndev ? self->devs : NULL, self->neng, &src,
                                       &sink, &so, &err);
    } else {
        st = stap_stream_create(&self->s, &c, sv, nb, sl, &o, ndev ? dev : NULL, ndev, &src, &sink,
                                &so, &err);
    }
    PyThread_release_lock(make_lock);
    Py_END_ALLOW_THREADS
    Py_XDECREF(V);
    if (st) {
        self->s = NULL;
        raise_error(&err);
        return -1;
    }
    return 0;
}

static PyObject *stats_dict(const stap_stream_stats *t)
{
    return Py_BuildValue("{s:L,s:d,s:d,s:{s:d,s:d,s:d,s:d},s:L,s:d,s:L,s:i}", "cpis", t->cpis,
                         "seconds", t->seconds, "cpis_per_s", t->cpis_per_s, "latency_ms", "min",
                         t->lat_min, "p50", t->lat_p50, "p99", t->lat_p99, "max", t->lat_max,
                         "deadline_misses", t->deadline_misses, "detections_per_cpi",
                         t->detections_per_cpi, "cpis_run", t->cpis_run, "stopped_by", t->stopped_by);
}

static PyObject *report_dict(const stap_stream_report *rep, stap_live_udp *rx)
{
    PyObject *d = stats_dict(&rep->all), *devs = PyList_New(0);
    for (int k = 0; d && devs && rep->ndevices > 1 && k < rep->ndevices; k++) {
        PyObject *o = stats_dict(&rep->device[k]);
        if (o) PyDict_SetItemString(o, "device", PyLong_FromLong(rep->devices[k]));
        if (o) PyList_Append(devs, o);
        Py_XDECREF(o);
    }
    if (!d || !devs) {
        Py_XDECREF(d);
        Py_XDECREF(devs);
        return NULL;
    }
    PyDict_SetItemString(d, "devices", devs);
    Py_DECREF(devs);
    if (rx) { /* a live source: what came, what was lost, the receiver's counts */
        stap_live_counts n;
        stap_live_udp_counts(rx, &n);
        PyObject *lost = PyList_New(0);
        for (int k = 0; lost && k < rep->live.nranges; k++)
            for (long long c = 0; c < rep->live.lost_ranges[k].count; c++) {
                PyObject *v = PyLong_FromLongLong(rep->live.lost_ranges[k].cpi + c);
                if (v) PyList_Append(lost, v);
                Py_XDECREF(v);
            }
        PyObject *lv = lost ? Py_BuildValue("{s:L,s:L,s:L,s:O,s:i,s:{s:d,s:d,s:d},s:{s:d,s:d,s:d},s:{s:d,s:d,s:d},s:L,s:d,s:K,s:K,s:K,s:K,s:K}", "complete",
                                            rep->live.complete, "lost", rep->live.lost, "first_cpi",
                                            rep->live.first_cpi, "lost_cpis", lost, "lost_cpis_truncated",
                                            rep->live.ranges_truncated, "latency_ms", "p50",
                                            rep->live.lat_p50, "p99", rep->live.lat_p99, "max",
                                            rep->live.lat_max, "wait_ms", "p50", rep->live.wait_p50,
                                            "p99", rep->live.wait_p99, "max", rep->live.wait_max,
                                            "handoff_ms", "p50", rep->live.handoff_p50, "p99",
                                            rep->live.handoff_p99, "max", rep->live.handoff_max,
                                            "deadline_misses",
                                            rep->live.deadline_misses, "seconds", rep->live.seconds,
                                            "packets", n.vrt.datagrams, "bytes", n.bytes, "malformed_packets",
                                            n.vrt.malformed, "duplicates", n.vrt.duplicates, "late", n.vrt.late)
                            : NULL;
        Py_XDECREF(lost);
        if (lv) PyDict_SetItemString(d, "live", lv);
        Py_XDECREF(lv);
    }
    PyObject *more = Py_BuildValue("{s:d,s:d,s:d,s:i,s:s,s:s}", "wall_s", rep->wall_s, "read_s",
                                   rep->read_s, "write_s", rep->write_s, "readers", rep->readers,
                                   "read_path", rep->read_path, "limited_by", rep->limited_by);
    if (more) PyDict_Update(d, more);
    Py_XDECREF(more);
    return d;
}

/* run() -> the report dict; what the iterator or the callback raised is raised again */
static PyObject *Stream_run(Stream *self, PyObject *unused)
{
    if (!self->s || self->running) {
        PyErr_SetString(RtstapError, self->s ? "the stream is running" : "the stream is closed");
        return NULL;
    }
    stap_stream_report rep;
    stap_error err = {0, ""};
    int st;
    self->running = 1;
    Py_BEGIN_ALLOW_THREADS
    st = stap_stream_run(self->s, &rep, &err);
    Py_END_ALLOW_THREADS
    self->running = 0;
    stap_error perr = {0, ""};
    int pst;
    Py_BEGIN_ALLOW_THREADS
    pst = stream_publish(self, &rep, st || self->exc_type, &perr);
    Py_END_ALLOW_THREADS
    if (self->exc_type) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        return NULL;
    }
    if (st) return raise_error(&err);
    if (pst) return raise_error(&perr);
    return report_dict(&rep, self->rx);
}

/* stop(): the CPIs in flight finish, nothing more is submitted (any thread) */
static PyObject *Stream_stop(Stream *self, PyObject *unused)
{
    if (self->s) stap_stream_stop(self->s, 1);
    Py_RETURN_NONE;
}

static void Stream_close_impl(Stream *self)
{
    if (self->running) return; /* the run's thread closes it after */
    stap_stream *s = self->s;
    self->s = NULL;
    stap_result_writer *w = self->rw; /* made, never run: no file */
    self->rw = NULL;
    if (s || w || self->neng || self->rx) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(make_lock, WAIT_LOCK);
        stap_stream_destroy(s);
        stap_live_udp_destroy(self->rx); /* after its stream */
        self->rx = NULL;
        if (w) stap_result_writer_abort(w);
        for (int k = 0; k < self->neng; k++) {
            stap_error ignore;
            if (self->devs[k] < 0 || !stap_la_gpu_select(self->devs[k], &ignore))
                stap_engine_destroy(self->engs[k]);
            self->engs[k] = NULL;
        }
        self->neng = 0;
        PyThread_release_lock(make_lock);
        Py_END_ALLOW_THREADS
    }
    stap_recording_close(self->rec);
    self->rec = NULL;
    stap_input_free(&self->in);
    for (int k = 0; self->held && k < self->nheld; k++) Py_CLEAR(self->held[k]);
    PyMem_Free(self->held);
    self->held = NULL;
    Py_CLEAR(self->iter);
    Py_CLEAR(self->callback);
    Py_CLEAR(self->exc_type);
    Py_CLEAR(self->exc_value);
    Py_CLEAR(self->exc_tb);
}

static PyObject *Stream_close(Stream *self, PyObject *unused)
{
    if (self->running) {
        PyErr_SetString(RtstapError, "the stream is running: stop() it first");
        return NULL;
    }
    Stream_close_impl(self);
    Py_RETURN_NONE;
}

static void Stream_dealloc(Stream *self)
{
    Stream_close_impl(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Stream_engine(Stream *self, void *what)
{
    if (!strcmp(what, "address")) { /* a live source's: the port chosen for port 0 */
        if (!self->rx) Py_RETURN_NONE;
        stap_live_info info;
        stap_live_udp_info(self->rx, &info);
        return PyUnicode_FromString(info.address);
    }
    const stap_engine *e = self->s ? stap_stream_engine(self->s, 0) : NULL;
    if (!e) {
        PyErr_SetString(RtstapError, "the stream is closed");
        return NULL;
    }
    if (!strcmp(what, "describe")) return PyUnicode_FromString(stap_engine_describe(e));
    if (!strcmp(what, "beams")) return PyLong_FromLong(stap_engine_beams(e));
    if (!strcmp(what, "engines")) return PyLong_FromLong(stap_stream_engines(self->s));
    return PyUnicode_FromString(stap_backend_name(stap_engine_config(e)->backend));
}

PyObject *recording_info(PyObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    stap_recording *rec = NULL;
    stap_input in;
    stap_error err = {0, ""};
    stap_read_options ro = {0};
    int st = cli_env_reader(&ro, &err);
    if (st) return raise_error(&err);
    Py_BEGIN_ALLOW_THREADS
    st = stap_recording_open(path, &rec, &in, &ro, &err);
    Py_END_ALLOW_THREADS
    if (st) return raise_error(&err);
    stap_sample_format f;
    char desc[200];
    stap_stream_input_format(rec, 0, &f, desc, sizeof desc);
    static const char *names[] = {"cf32", "ci8", "ci16", "ci32"};
    /* its /array: positions (C, 3) in wavelengths (the line's at element_spacing_wavelengths)
     * and gains (C,), or None */
    PyObject *pos = Py_None, *cal = Py_None;
    const npy_intp pd[2] = {in.channels, 3}, cd[1] = {in.channels};
    if ((in.array_position || in.meta.has_element_spacing) && (pos = PyArray_SimpleNew(2, pd, NPY_FLOAT64))) {
        double *p = PyArray_DATA((PyArrayObject *)pos);
        for (int e = 0; e < in.channels; e++) /* the line at the file's spacing, else its positions */
            for (int k = 0; k < 3; k++)
                p[3 * e + k] = in.array_position ? in.array_position[3 * e + k]
                                                 : k == 0 ? e * in.meta.element_spacing_wavelengths : 0;
    }
    if (in.array_calibration && (cal = PyArray_SimpleNew(1, cd, NPY_COMPLEX64)))
        memcpy(PyArray_DATA((PyArrayObject *)cal), in.array_calibration, sizeof(stap_cf32) * in.channels);
    const int has_array = in.array_position || in.array_calibration; /* the default beams steer through it */
    PyObject *out = pos && cal ? Py_BuildValue("(iiiLsOOi)", in.channels, in.pulses, in.range_gates,
                                               stap_recording_written(rec), names[f.type], pos, cal, has_array)
                               : NULL;
    if (pos != Py_None) Py_XDECREF(pos);
    if (cal != Py_None) Py_XDECREF(cal);
    stap_recording_close(rec);
    stap_input_free(&in);
    return out;
}

static PyMethodDef Stream_methods[] = {
    {"run", (PyCFunction)Stream_run, METH_NOARGS, "run() -> report: every CPI through the engines"},
    {"stop", (PyCFunction)Stream_stop, METH_NOARGS, "stop(): finish the CPIs in flight, submit no more"},
    {"close", (PyCFunction)Stream_close, METH_NOARGS, "free the engines, threads and buffers"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Stream_getset[] = {
    {"describe", (getter)Stream_engine, NULL, "how the first engine's stages run", "describe"},
    {"beams", (getter)Stream_engine, NULL, "beams", "beams"},
    {"backend", (getter)Stream_engine, NULL, "the backend resolved", "backend"},
    {"engines", (getter)Stream_engine, NULL, "engines (one per device)", "engines"},
    {"address", (getter)Stream_engine, NULL, "a live source's address (udp://HOST:PORT, the port chosen for 0), or None", "address"},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rtstap._rtstap.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(options, source, steering=None, callback=None, devices=None, cpis=0, warmup=0)",
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
    .tp_init = (initproc)Stream_init,
    .tp_new = PyType_GenericNew,
};
