/* _rtstap: the Python binding's C part (app/python/rtstap/__init__.py is the Python API) — an
 * Engine over librtstap's public API (include/rtstap/), numpy arrays in without a copy (the
 * cube's own memory is submitted, held until its slot is collected), results out as new
 * arrays (one copy from the engine's buffers, which the next CPI of the slot reuses), the
 * GIL released while the engine works, every error an rtstap.Error with the library's
 * message. */
#include "_rtstap.h"
#include "../env.h"

#include <limits.h>
#include <math.h>
#include <string.h>

PyObject *RtstapError;
/* stap_engine_create and stap_engine_destroy one at a time, whatever the engine: they plan and
 * free FFTW transforms, and FFTW's planner is not thread-safe (two threads making engines at
 * once freed its memory twice) */
PyThread_type_lock make_lock;

PyObject *raise_error(const stap_error *err)
{
    PyObject *args = Py_BuildValue("(si)", err->msg[0] ? err->msg : stap_status_name(err->code), err->code);
    if (args) {
        PyErr_SetObject(RtstapError, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* Threads: the C engine is not safe for concurrent calls (the CPU engine computes at submit
 * in buffers its slots share), so every call on one Engine holds its lock — calls on one
 * engine run one at a time, engines run in parallel (the GIL is released while the engine
 * works and while a call waits for the lock). close() takes the lock too: it waits for the
 * call in flight, and every call after it raises "the engine is closed". Making and freeing
 * engines also take make_lock. */
typedef struct {
    PyObject_HEAD
    PyThread_type_lock lock; /* held by the call in progress */
    stap_engine *e;
    int C, P, R, slots;
    int npy_type;     /* the cube's numpy type: complex64, or int8/int16/int32 (i, q) pairs */
    PyObject *held[STAP_ENGINE_MAX_SLOTS]; /* the cube of each slot in flight */
} Engine;

/* dict item helpers: a missing key leaves the value */
static int get_int(PyObject *d, const char *k, int *v)
{
    PyObject *o = PyDict_GetItemString(d, k);
    if (!o || o == Py_None) return 0;
    long long x = PyLong_AsLongLong(o);
    if (x == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            x = LLONG_MAX;
        } else {
            return -1;
        }
    }
    if (x < INT_MIN || x > INT_MAX) {
        PyErr_Format(PyExc_OverflowError, "option %s: %S does not fit a C int (%d..%d)", k, o,
                     INT_MIN, INT_MAX);
        return -1;
    }
    *v = (int)x;
    return 0;
}
static int get_double(PyObject *d, const char *k, double *v)
{
    PyObject *o = PyDict_GetItemString(d, k);
    if (!o || o == Py_None) return 0;
    double x = PyFloat_AsDouble(o);
    if (x == -1.0 && PyErr_Occurred()) return -1;
    *v = x;
    return 0;
}
static int get_str(PyObject *d, const char *k, const char **v)
{
    PyObject *o = PyDict_GetItemString(d, k);
    if (!o || o == Py_None) return 0;
    const char *s = PyUnicode_AsUTF8(o);
    if (!s) return -1;
    *v = s;
    return 0;
}

/* the configuration from the options dict (rtstap/__init__.py names them as the command line) */
int config_of(PyObject *d, stap_config *c, stap_engine_options *o, stap_error *err)
{
    const char *preset = NULL, *algorithm = NULL, *backend = NULL, *window = NULL, *tw = NULL,
               *cfar = NULL, *detector = NULL, *samples = NULL;
    stap_config_defaults(c);
    int est = cli_env_engine_defaults(o, err); /* the variables rtstap reads (docs/usage.md) */
    if (est) return est;
    if (get_str(d, "preset", &preset) || get_str(d, "algorithm", &algorithm) ||
        get_str(d, "backend", &backend) || get_str(d, "window", &window) ||
        get_str(d, "training_window", &tw) || get_str(d, "cfar", &cfar) ||
        get_str(d, "detector", &detector) ||
        get_str(d, "format", &samples))
        return -1;
    if (samples && stap_sample_type_parse(samples, &o->input, err)) return STAP_EINVAL;
    if (get_double(d, "scale", &o->input.scale) || get_int(d, "big_endian", &o->input.big_endian))
        return -1;
    if (preset) {
        stap_preset p;
        if (stap_preset_parse(preset, &p, err)) return STAP_EINVAL;
        stap_preset_config(p, c);
    }
    if (get_int(d, "channels", &c->channels) || get_int(d, "pulses", &c->pulses) ||
        get_int(d, "range_gates", &c->range_gates) || get_int(d, "doppler_bins", &c->doppler_bins) ||
        get_int(d, "doppler_order", &c->doppler_order) || get_int(d, "segments", &c->segments) ||
        get_int(d, "training", &c->training) || get_int(d, "beams", &c->beams) ||
        get_int(d, "threads", &c->threads) || get_int(d, "block", &c->block) ||
        get_int(d, "guard", &c->guard) || get_int(d, "angle_bins", &c->angle_bins) ||
        get_int(d, "dpca_shift", &c->dpca_shift) || get_double(d, "loading", &c->loading) ||
        get_double(d, "element_spacing", &c->element_spacing) || get_int(d, "slots", &o->slots) ||
        get_double(d, "cfar_pfa", &o->cfar.pfa) || get_int(d, "cfar_guard", &o->cfar.guard) ||
        get_int(d, "cfar_train", &o->cfar.train) || get_int(d, "cfar_rank", &o->cfar.os_rank) ||
        get_int(d, "cfar_guard_doppler", &o->cfar.guard_doppler) ||
        get_int(d, "cfar_train_doppler", &o->cfar.train_doppler) ||
        get_int(d, "keep_weights", &o->keep_weights) || get_int(d, "keep_output", &o->keep_output))
        return -1;
    if (algorithm && stap_algorithm_parse(algorithm, &c->algorithm, err)) return STAP_EINVAL;
    if (backend && stap_backend_parse(backend, &c->backend, err)) return STAP_EINVAL;
    if (tw && stap_training_window_parse(tw, &c->training_window, err)) return STAP_EINVAL;
    if (cfar && stap_cfar_parse_kind(cfar, &o->cfar.kind, err)) return STAP_EINVAL;
    if (detector && stap_detector_parse(detector, &o->cfar.kind, err)) return STAP_EINVAL;
    if (window) {
        if (!strcasecmp(window, "none")) c->window = STAP_WINDOW_NONE;
        else if (!strcasecmp(window, "hann")) c->window = STAP_WINDOW_HANN;
        else if (!strncasecmp(window, "chebyshev:", 10)) {
            c->window = STAP_WINDOW_CHEBYSHEV;
            c->chebyshev_db = atof(window + 10);
        } else {
            return stap_fail(err, STAP_EINVAL, "window '%s': expected none, hann or chebyshev:DB", window);
        }
    }
    return 0;
}

/* Take the engine's lock, waiting for the call in progress without the GIL (that call needs
 * the GIL to finish) */
static void lock_wait(Engine *self)
{
    if (PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) return;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

/* The lock taken with the engine open: 0; else -1, "the engine is closed" raised, no lock */
static int engine_lock(Engine *self)
{
    if (self->lock) {
        lock_wait(self);
        if (self->e) return 0;
        PyThread_release_lock(self->lock);
    }
    PyErr_SetString(RtstapError, "the engine is closed");
    return -1;
}

static void engine_unlock(Engine *self)
{
    PyThread_release_lock(self->lock);
}

static int engine_create(Engine *self, PyObject *opts, PyObject *steering)
{
    stap_config c;
    stap_engine_options o;
    stap_error err = {0, ""};
    int st = config_of(opts, &c, &o, &err);
    if (st < 0) return -1;
    if (st) {
        raise_error(&err);
        return -1;
    }
    PyArrayObject *V = NULL;
    if (steering != Py_None) {
        V = (PyArrayObject *)PyArray_FROMANY(steering, NPY_COMPLEX64, 2, 2, NPY_ARRAY_IN_ARRAY);
        if (!V) return -1;
        if (PyArray_DIM(V, 0) > INT_MAX || PyArray_DIM(V, 1) > INT_MAX) {
            Py_DECREF(V);
            PyErr_SetString(PyExc_ValueError, "steering: more beams or elements than a C int holds");
            return -1;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(make_lock, WAIT_LOCK);
    st = stap_engine_create(&self->e, &c, V ? (const stap_cf32 *)PyArray_DATA(V) : NULL,
                            V ? (int)PyArray_DIM(V, 0) : 0, V ? (int)PyArray_DIM(V, 1) : 0, &o, &err);
    PyThread_release_lock(make_lock);
    Py_END_ALLOW_THREADS
    Py_XDECREF(V);
    if (st) {
        self->e = NULL;
        raise_error(&err);
        return -1;
    }
    const stap_config *r = stap_engine_config(self->e);
    self->C = r->channels;
    self->P = r->pulses;
    self->R = r->range_gates;
    self->slots = stap_engine_slots(self->e);
    static const int types[] = {NPY_COMPLEX64, NPY_INT8, NPY_INT16, NPY_INT32};
    self->npy_type = types[stap_engine_options_of(self->e)->input.type];
    return 0;
}

static int Engine_init(Engine *self, PyObject *args, PyObject *kw)
{
    PyObject *opts = NULL, *steering = Py_None;
    static char *names[] = {"options", "steering", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O", names, &PyDict_Type, &opts, &steering)) return -1;
    if (!self->lock && !(self->lock = PyThread_allocate_lock())) {
        PyErr_NoMemory();
        return -1;
    }
    lock_wait(self);
    int st = -1;
    if (self->e) PyErr_SetString(PyExc_RuntimeError, "the engine is made already");
    else st = engine_create(self, opts, steering);
    engine_unlock(self);
    return st;
}

/* Free the engine once the call in progress (another thread's) has returned */
static void Engine_close_impl(Engine *self)
{
    if (!self->lock) return;
    lock_wait(self);
    stap_engine *e = self->e;
    self->e = NULL;
    if (e) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(make_lock, WAIT_LOCK);
        stap_engine_destroy(e);
        PyThread_release_lock(make_lock);
        Py_END_ALLOW_THREADS
    }
    PyObject *held[STAP_ENGINE_MAX_SLOTS];
    memcpy(held, self->held, sizeof held);
    memset(self->held, 0, sizeof self->held);
    engine_unlock(self);
    for (int s = 0; s < STAP_ENGINE_MAX_SLOTS; s++) Py_XDECREF(held[s]);
}

static void Engine_dealloc(Engine *self)
{
    Engine_close_impl(self);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int slot_in_range(Engine *self, int slot)
{
    if (slot >= 0 && slot < self->slots) return 0;
    PyErr_Format(PyExc_ValueError, "slot %d: the engine has %d", slot, self->slots);
    return -1;
}

/* submit with the lock held: cube a C-contiguous complex64 array (channels, pulses,
 * range_gates) — its memory is the engine's input, no copy; held until the slot is collected */
static int submit_locked(Engine *self, int slot, PyObject *cube)
{
    if (slot_in_range(self, slot)) return -1;
    /* complex64 (C, P, R), or integer (i, q) pairs (C, P, R, 2) as the engine was made for */
    PyArrayObject *a = (PyArrayObject *)cube;
    const int pairs = self->npy_type != NPY_COMPLEX64;
    if (!PyArray_Check(cube) || PyArray_TYPE(a) != self->npy_type || !PyArray_IS_C_CONTIGUOUS(a) ||
        PyArray_NDIM(a) != 3 + pairs || PyArray_DIM(a, 0) != self->C || PyArray_DIM(a, 1) != self->P ||
        PyArray_DIM(a, 2) != self->R || (pairs && PyArray_DIM(a, 3) != 2)) {
        PyErr_Format(PyExc_ValueError, "the cube must be a C-contiguous %s array of shape "
                     "(%d, %d, %d%s) (channels, pulses, range gates%s)",
                     pairs ? "integer" : "complex64", self->C, self->P, self->R,
                     pairs ? ", 2" : "", pairs ? ", i/q" : "");
        return -1;
    }
    stap_error err = {0, ""};
    int st;
    const void *data = PyArray_DATA((PyArrayObject *)cube);
    Py_BEGIN_ALLOW_THREADS
    st = stap_engine_submit(self->e, slot, data, &err);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_error(&err);
        return -1;
    }
    Py_INCREF(cube);
    self->held[slot] = cube; /* free: the engine refuses a slot not collected yet */
    return 0;
}

static PyObject *Engine_submit(Engine *self, PyObject *args)
{
    int slot;
    PyObject *cube;
    if (!PyArg_ParseTuple(args, "iO", &slot, &cube) || engine_lock(self)) return NULL;
    int st = submit_locked(self, slot, cube);
    engine_unlock(self);
    if (st) return NULL;
    Py_RETURN_NONE;
}

static PyObject *array_copy(int nd, npy_intp *dims, int type, const void *src, size_t bytes)
{
    PyObject *a = PyArray_SimpleNew(nd, dims, type);
    if (a && bytes) memcpy(PyArray_DATA((PyArrayObject *)a), src, bytes);
    return a;
}

/* the result's dict, its arrays copied out of the engine's buffers (with the lock held: the
 * slot's next submit reuses them) */
static PyObject *result_dict(Engine *self, const stap_cpi_result *r) { return result_dict_of(self->e, r); }

PyObject *result_dict_of(const stap_engine *e, const stap_cpi_result *r)
{
    const stap_config *c = stap_engine_config(e);
    const int B = stap_engine_beams(e), N = (int)(stap_weights_count(c, B) /
                                                      ((size_t)c->doppler_bins * c->segments * B));
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    PyObject *w = Py_None, *y = Py_None;
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    if (r->weights) {
        Py_DECREF(w);
        npy_intp d[4] = {c->doppler_bins, c->segments, B, N};
        w = array_copy(4, d, NPY_COMPLEX64, r->weights, sizeof(stap_cf32) * stap_weights_count(c, B));
    }
    if (r->output) {
        Py_DECREF(y);
        npy_intp d[3] = {B, c->doppler_bins, c->range_gates};
        y = array_copy(3, d, NPY_COMPLEX64, r->output, sizeof(stap_cf32) * stap_output_count(c, B));
    }
    /* detections: a structured array of the file's /detections fields */
    PyObject *descr_list = Py_BuildValue("[(s,s),(s,s),(s,s),(s,s),(s,s),(s,s),(s,s)]", "beam", "i4",
                                         "doppler_bin", "i4", "range_cell", "i4", "power", "f4",
                                         "snr_db", "f4", "statistic", "f4", "threshold", "f4");
    PyArray_Descr *descr = NULL;
    PyObject *det = NULL;
    if (descr_list && PyArray_DescrConverter(descr_list, &descr)) {
        npy_intp n = (npy_intp)r->detection_count;
        det = PyArray_NewFromDescr(&PyArray_Type, descr, 1, &n, NULL, NULL, 0, NULL);
        if (det && n) memcpy(PyArray_DATA((PyArrayObject *)det), r->detections, sizeof(stap_detection) * (size_t)n);
    }
    Py_XDECREF(descr_list);
    PyObject *stages = PyDict_New();
    for (int s = 0; stages && s < STAP_STAGE_COUNT; s++) {
        PyObject *v = PyFloat_FromDouble(r->stage_ms[s]);
        if (v) PyDict_SetItemString(stages, stap_stage_names[s], v);
        Py_XDECREF(v);
    }
    PyObject *ratio = PyFloat_FromDouble(r->diag_ratio);
    if (!w || !y || !det || !stages || !ratio) {
        Py_XDECREF(w), Py_XDECREF(y), Py_XDECREF(det), Py_XDECREF(stages), Py_XDECREF(ratio), Py_DECREF(out);
        return NULL;
    }
    PyDict_SetItemString(out, "weights", w);
    PyDict_SetItemString(out, "output", y);
    PyDict_SetItemString(out, "detections", det);
    PyDict_SetItemString(out, "stage_ms", stages);
    PyDict_SetItemString(out, "diag_ratio", ratio);
    Py_DECREF(w), Py_DECREF(y), Py_DECREF(det), Py_DECREF(stages), Py_DECREF(ratio);
    return out;
}

/* collect with the lock held; the slot's cube is handed to *cube (released by the caller once
 * the lock is not held: its last reference may run Python code) */
static PyObject *collect_locked(Engine *self, int slot, PyObject **cube)
{
    if (slot_in_range(self, slot)) return NULL;
    stap_cpi_result r;
    stap_error err = {0, ""};
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = stap_engine_collect(self->e, slot, &r, &err);
    Py_END_ALLOW_THREADS
    *cube = self->held[slot];
    self->held[slot] = NULL;
    if (st) return raise_error(&err);
    return result_dict(self, &r);
}

/* collect(slot) -> dict: weights (D, S, B, N) or None, output (B, D, R) or None, detections
 * (a structured array: beam, doppler_bin, range_cell, power, snr_db, statistic,
 * threshold), stage_ms (dict),
 * diag_ratio */
static PyObject *Engine_collect(Engine *self, PyObject *args)
{
    int slot;
    PyObject *cube = NULL;
    if (!PyArg_ParseTuple(args, "i", &slot) || engine_lock(self)) return NULL;
    PyObject *out = collect_locked(self, slot, &cube);
    engine_unlock(self);
    Py_XDECREF(cube);
    return out;
}

/* process(slot, cube) -> collect's dict: submit and collect in one call, no other call on the
 * engine between them (threads sharing one engine each get their own cube's results) */
static PyObject *Engine_process(Engine *self, PyObject *args)
{
    int slot;
    PyObject *cube = NULL, *held = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "iO", &slot, &cube) || engine_lock(self)) return NULL;
    if (!submit_locked(self, slot, cube)) out = collect_locked(self, slot, &held);
    engine_unlock(self);
    Py_XDECREF(held);
    return out;
}

static PyObject *Engine_close(Engine *self, PyObject *unused)
{
    Engine_close_impl(self);
    Py_RETURN_NONE;
}

static PyObject *Engine_enter(Engine *self, PyObject *unused)
{
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Engine_exit(Engine *self, PyObject *args)
{
    Engine_close_impl(self);
    Py_RETURN_FALSE;
}

static PyObject *get_locked(Engine *self, const char *w)
{
    const stap_config *c = stap_engine_config(self->e);
    if (!strcmp(w, "shape")) return Py_BuildValue("(iii)", self->C, self->P, self->R);
    if (!strcmp(w, "slots")) return PyLong_FromLong(self->slots);
    if (!strcmp(w, "beams")) return PyLong_FromLong(stap_engine_beams(self->e));
    if (!strcmp(w, "backend")) return PyUnicode_FromString(stap_backend_name(c->backend));
    if (!strcmp(w, "describe")) return PyUnicode_FromString(stap_engine_describe(self->e));
    if (!strcmp(w, "device")) return PyUnicode_FromString(stap_engine_device(self->e));
    if (!strcmp(w, "config")) {
        return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:d,s:s,s:s}", "channels", c->channels,
                             "pulses", c->pulses, "range_gates", c->range_gates, "doppler_bins",
                             c->doppler_bins, "doppler_order", c->doppler_order, "segments", c->segments,
                             "training", c->training, "beams", stap_engine_beams(self->e), "loading",
                             c->loading, "algorithm", stap_algorithm_name(c->algorithm), "backend",
                             stap_backend_name(c->backend));
    }
    Py_RETURN_NONE;
}

static PyObject *Engine_get(Engine *self, void *what)
{
    if (engine_lock(self)) return NULL;
    PyObject *v = get_locked(self, what);
    engine_unlock(self);
    return v;
}

static PyMethodDef Engine_methods[] = {
    {"submit", (PyCFunction)Engine_submit, METH_VARARGS, "submit(slot, cube): start a CPI (no copy of cube)"},
    {"collect", (PyCFunction)Engine_collect, METH_VARARGS, "collect(slot) -> dict of the CPI's results"},
    {"process", (PyCFunction)Engine_process, METH_VARARGS,
     "process(slot, cube) -> collect's dict: submit and collect, no other call between"},
    {"close", (PyCFunction)Engine_close, METH_NOARGS, "free the engine, once the call in progress returns"},
    {"__enter__", (PyCFunction)Engine_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Engine_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Engine_getset[] = {
    {"shape", (getter)Engine_get, NULL, "(channels, pulses, range_gates)", "shape"},
    {"slots", (getter)Engine_get, NULL, "CPIs in flight", "slots"},
    {"beams", (getter)Engine_get, NULL, "beams", "beams"},
    {"backend", (getter)Engine_get, NULL, "the backend resolved", "backend"},
    {"describe", (getter)Engine_get, NULL, "how the stages run", "describe"},
    {"device", (getter)Engine_get, NULL, "the GPU or CPU that computes", "device"},
    {"config", (getter)Engine_get, NULL, "the resolved configuration", "config"},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject EngineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rtstap._rtstap.Engine",
    .tp_basicsize = sizeof(Engine),
    .tp_dealloc = (destructor)Engine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Engine(options, steering=None): one STAP engine (create once, submit/collect CPIs)",
    .tp_methods = Engine_methods,
    .tp_getset = Engine_getset,
    .tp_init = (initproc)Engine_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *version(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(ss)", stap_version(), stap_commit());
}

/* steering(options, looks, position, calibration): stap_steering_from_looks for the configuration
 * the options make; looks (B, 3) float64 rows (az_deg, el_deg, doppler cycles/pulse or NaN), or
 * None: the configuration's default beams (u_b, stap_beam_u) as azimuths asin(u_b), as `rtstap
 * run` steers them through a file's /array; position (C, 3) wavelengths and calibration (C,)
 * or None -> (B, N) complex64 */
static PyObject *steering(PyObject *self, PyObject *args)
{
    PyObject *opts = NULL, *looks = NULL, *position = Py_None, *calibration = Py_None;
    if (!PyArg_ParseTuple(args, "O!O|OO", &PyDict_Type, &opts, &looks, &position, &calibration))
        return NULL;
    stap_config c;
    stap_engine_options o;
    stap_error err = {0, ""};
    int st = config_of(opts, &c, &o, &err);
    if (st < 0) return NULL;
    if (st) return raise_error(&err), NULL;
    PyArrayObject *L = NULL;
    if (looks != Py_None) {
        if (!(L = (PyArrayObject *)PyArray_FROMANY(looks, NPY_FLOAT64, 2, 2, NPY_ARRAY_IN_ARRAY))) return NULL;
        if (PyArray_DIM(L, 1) != 3 || PyArray_DIM(L, 0) < 1 || PyArray_DIM(L, 0) > INT_MAX) {
            Py_DECREF(L);
            PyErr_SetString(PyExc_ValueError, "looks: rows of (az_deg, el_deg, doppler), at least one");
            return NULL;
        }
    } else if (c.beams < 1) {
        PyErr_SetString(PyExc_ValueError, "steering: the default beams need beams >= 1");
        return NULL;
    }
    const int B = L ? (int)PyArray_DIM(L, 0) : c.beams, N = stap_dof(&c);
    stap_look *lk = malloc(sizeof *lk * B);
    const npy_intp dims[2] = {B, N};
    PyArrayObject *V = N > 0 ? (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_COMPLEX64) : NULL;
    if (!lk || !V) {
        free(lk);
        Py_XDECREF(V);
        Py_XDECREF(L);
        if (N <= 0) PyErr_SetString(PyExc_ValueError, "steering: channels and doppler_order must be >= 1");
        return N <= 0 ? NULL : PyErr_NoMemory();
    }
    const double *l = L ? PyArray_DATA(L) : NULL;
    for (int b = 0; b < B; b++)
        lk[b] = l ? (stap_look){l[3 * b], l[3 * b + 1], l[3 * b + 2]}
                  : (stap_look){asin(stap_beam_u(b, B)) * 180.0 / M_PI, 0, NAN};
    /* the array: positions (C, 3) wavelengths and gains (C,), each or None */
    PyArrayObject *Pa = position == Py_None ? NULL
                        : (PyArrayObject *)PyArray_FROMANY(position, NPY_FLOAT64, 2, 2, NPY_ARRAY_IN_ARRAY);
    PyArrayObject *Ga = calibration == Py_None ? NULL
                        : (PyArrayObject *)PyArray_FROMANY(calibration, NPY_COMPLEX64, 1, 1, NPY_ARRAY_IN_ARRAY);
    const int arr_ok = (position == Py_None || Pa) && (calibration == Py_None || Ga);
    const stap_array arr = {Pa ? (int)PyArray_DIM(Pa, 0) : Ga ? (int)PyArray_DIM(Ga, 0) : c.channels,
                            Pa ? PyArray_DATA(Pa) : NULL, Ga ? PyArray_DATA(Ga) : NULL};
    if (Pa && PyArray_DIM(Pa, 1) != 3) {
        st = stap_fail(&err, STAP_EINVAL, "position: (elements, 3) rows of x, y, z in wavelengths");
    } else if (Pa && Ga && PyArray_DIM(Pa, 0) != PyArray_DIM(Ga, 0)) {
        st = stap_fail(&err, STAP_EINVAL, "position and calibration: not one element count");
    } else if (arr_ok) {
        st = stap_steering_from_looks(&c, Pa || Ga ? &arr : NULL, lk, B, (stap_cf32 *)PyArray_DATA(V), &err);
    }
    free(lk);
    Py_XDECREF(L);
    Py_XDECREF(Pa);
    Py_XDECREF(Ga);
    if (!arr_ok) {
        Py_DECREF(V);
        return NULL;
    }
    if (st) {
        Py_DECREF(V);
        return raise_error(&err), NULL;
    }
    return (PyObject *)V;
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "(version, commit) of the library"},
    {"steering", steering, METH_VARARGS,
     "steering(options, looks, position=None, calibration=None) -> (B, N) complex64: the steering "
     "of (az_deg, el_deg, doppler) rows through the array"},
    {"recording_info", recording_info, METH_VARARGS,
     "recording_info(path) -> (channels, pulses, range_gates, written CPIs, stored format)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rtstap", "rtstap's C binding", -1,
                                    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rtstap(void)
{
    import_array();
    if (!make_lock && !(make_lock = PyThread_allocate_lock())) return PyErr_NoMemory();
    if (PyType_Ready(&EngineType) < 0 || PyType_Ready(&StreamType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    RtstapError = PyErr_NewExceptionWithDoc("rtstap.Error", "an rtstap library error: args (message, status code)",
                                            NULL, NULL);
    Py_INCREF(&EngineType);
    Py_INCREF(&StreamType);
    if (!RtstapError || PyModule_AddObject(m, "Engine", (PyObject *)&EngineType) < 0 ||
        PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0 ||
        PyModule_AddObject(m, "Error", RtstapError) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    stap_error env_err; /* the process-wide variables rtstap reads (docs/usage.md) */
    if (cli_env_process(&env_err)) {
        PyErr_Format(RtstapError, "%s", env_err.msg);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(RtstapError);
    return m;
}
