/* _rtstap_stream.c: the binding's Stream — a stap_stream (include/rtstap/stream.h) over a
 * recording (its reader threads, as `rtstap run` reads it) or a Python iterator of cubes, one
 * engine per device, each CPI's results to a Python function in CPI order. The GIL is released
 * while the stream runs; the iterator and the function take it back for each call. */
#define NO_IMPORT_ARRAY
#include "_rtstap.h"

#include <limits.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    stap_stream *s;
    stap_recording *rec;
    stap_input in;             /* the recording's metadata and /steering               */
    PyObject *iter;            /* or the cubes' iterator                               */
    PyObject *callback;        /* (cpi, input_cpi, dict) per CPI, or None               */
    PyObject **held;           /* the iterator's cubes in flight, by CPI mod nheld      */
    int nheld;
    int npy_type, C, P, R;
    PyObject *exc_type, *exc_value, *exc_tb; /* what the iterator or the function raised */
    int running;
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
    if (PyUnicode_Check(source)) {
        const char *path = PyUnicode_AsUTF8(source);
        if (!path) return -1;
        int st;
        Py_BEGIN_ALLOW_THREADS
        st = stap_recording_open(path, &self->rec, &self->in, NULL, err);
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

static int Stream_init(Stream *self, PyObject *args, PyObject *kw)
{
    PyObject *opts = NULL, *steering = Py_None, *source = NULL, *callback = Py_None, *devices = Py_None;
    long long cpis = 0, warmup = 0;
    static char *names[] = {"options", "source", "steering", "callback", "devices", "cpis", "warmup", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|OOOLL", names, &PyDict_Type, &opts, &source,
                                     &steering, &callback, &devices, &cpis, &warmup))
        return -1;
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
        PyErr_SetString(PyExc_ValueError, "cpis: how many CPIs the iterator gives (>= 1)");
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
    const stap_stream_sink sink = {.each = each_cpi, .each_user = self};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.warmup = warmup;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(make_lock, WAIT_LOCK);
    st = stap_stream_create(&self->s, &c, sv, nb, sl, &o, ndev ? dev : NULL, ndev, &src, &sink, &so, &err);
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

static PyObject *report_dict(const stap_stream_report *rep)
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
    if (self->exc_type) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        return NULL;
    }
    if (st) return raise_error(&err);
    return report_dict(&rep);
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
    if (s) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(make_lock, WAIT_LOCK);
        stap_stream_destroy(s);
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
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = stap_recording_open(path, &rec, &in, NULL, &err);
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
    PyObject *out = pos && cal ? Py_BuildValue("(iiiLsOO)", in.channels, in.pulses, in.range_gates,
                                               stap_recording_written(rec), names[f.type], pos, cal)
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
