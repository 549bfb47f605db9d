/* _rtstap.h: what the binding's two C files share — the error, the configuration from the
 * options dict, a result as a dict, the Stream type (_rtstap_stream.c). */
#ifndef PY_RTSTAP_H
#define PY_RTSTAP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define PY_ARRAY_UNIQUE_SYMBOL rtstap_ARRAY_API /* one table, imported by _rtstap.c */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <pythread.h>
#include <rtstap/rtstap.h>

extern PyObject *RtstapError;
extern PyThread_type_lock make_lock;
/* rtstap.Error(message, code) raised; NULL */
PyObject *raise_error(const stap_error *err);
/* the configuration and engine options from the options dict: 0, -1 (a Python error set) or
 * a status (err) */
int config_of(PyObject *d, stap_config *c, stap_engine_options *o, stap_error *err);
/* a CPI's results as a dict of new arrays (weights, output, detections, stage_ms, diag_ratio) */
PyObject *result_dict_of(const stap_engine *e, const stap_cpi_result *r);

extern PyTypeObject StreamType;
PyObject *recording_info(PyObject *self, PyObject *args);

#endif
