/* h5x: the I/O module's plain API for simple HDF5 objects — groups, scalar attributes,
 * dense arrays of numbers or complex64, the detections table — for the library's files that
 * are not cubes (a scene's /truth, SINR tables, reading a run's results). Everything outside
 * stap/io/ reads and writes HDF5 through it or through h5io.h: no other file of rtstap calls
 * HDF5 (tests/tools/check_layers.py checks that).
 *
 * Reading: stap_h5x_open checks the file as every reader does (a regular file opened without
 * blocking, external links refused on every lookup, damaged attribute messages refused
 * before libhdf5 decodes them). Writing: inside a writer's hook (stap_h5_extra_fn), on the
 * file that writer publishes, each object's blocks allocated before HDF5 writes it (h5out.h).
 * A writer records its first failure; stap_h5x_status returns it. Names are absolute paths
 * ("/truth/clutter/cnr"). Messages name the file and the object. */
#ifndef STAP_IO_H5X_H
#define STAP_IO_H5X_H

#include <stddef.h>

#include "h5io.h"

#include "rt_hidden.h"
typedef struct stap_h5_file h5x;

/* ---- reading ------------------------------------------------------------------------ */
RT_INTERNAL int stap_h5x_open(h5x **f, const char *path, stap_error *err);
RT_INTERNAL void stap_h5x_close(h5x *f);
RT_INTERNAL const char *stap_h5x_path(const h5x *f);
/* 1 when the object (a group or dataset, at the end of links inside the file) exists. */
RT_INTERNAL int stap_h5x_exists(h5x *f, const char *name);
RT_INTERNAL int stap_h5x_has_attr(h5x *f, const char *obj, const char *name);
/* A scalar number (any integer or float type) as double; STAP_EFORMAT when missing, not one
 * number, or not finite. */
RT_INTERNAL int stap_h5x_get_double(h5x *f, const char *obj, const char *name, double *v, stap_error *err);
/* An attribute of n numbers (any integer or float type, n values in all) as doubles;
 * STAP_EFORMAT when missing, of another count, or not all finite. */
RT_INTERNAL int stap_h5x_get_attr_doubles(h5x *f, const char *obj, const char *name, size_t n, double *v,
                                          stap_error *err);
/* A number that must be a whole number in [lo, hi]. */
RT_INTERNAL int stap_h5x_get_count(h5x *f, const char *obj, const char *name, long long lo, long long hi,
                  long long *v, stap_error *err);
/* An integer attribute read exactly as int64 (a count beyond 2^53, a seed). */
RT_INTERNAL int stap_h5x_get_llong(h5x *f, const char *obj, const char *name, long long *v, stap_error *err);
/* A string (variable or fixed length), at most len - 1 bytes. */
RT_INTERNAL int stap_h5x_get_string(h5x *f, const char *obj, const char *name, char *buf, size_t len,
                   stap_error *err);
/* A dataset of `rank` dimensions that must be `shape`, converted to double / int / stap_cf32
 * (a compound {r, i}). */
RT_INTERNAL int stap_h5x_get_doubles(h5x *f, const char *name, int rank, const size_t *shape, double *out,
                    stap_error *err);
RT_INTERNAL int stap_h5x_get_ints(h5x *f, const char *name, size_t n, int *out, stap_error *err);
RT_INTERNAL int stap_h5x_get_cf32(h5x *f, const char *name, int rank, const size_t *shape, stap_cf32 *out,
                 stap_error *err);
/* A 1-D table of detections (beam, doppler_bin, range_cell, power, snr_db: the columns of
 * /detections), malloc'd into *out. */
RT_INTERNAL int stap_h5x_get_detections(h5x *f, const char *name, stap_detection **out, size_t *n,
                       stap_error *err);
/* The same keeping only the rows whose cpi column (a recording's results) is `cpi`. */
RT_INTERNAL int stap_h5x_get_detections_of(h5x *f, const char *name, long long cpi, stap_detection **out,
                          size_t *n, stap_error *err);
/* Row `row` of a dataset of `rank` + 1 dimensions whose rows are `shape` (a recording's
 * per-CPI results), as stap_cf32; *rows (or NULL) gets the leading extent. */
RT_INTERNAL int stap_h5x_get_cf32_row(h5x *f, const char *name, long long row, int rank, const size_t *shape,
                     stap_cf32 *out, long long *rows, stap_error *err);
/* The leading extent and rank of a dataset (0 and 0 when it is missing). */
RT_INTERNAL int stap_h5x_dataset_rank(h5x *f, const char *name, long long *rows);

/* ---- writing (a hook's file, or stap_h5x_create) ------------------------------------------ */
/* A new file at path, written atomically (h5out.h) and published by stap_h5x_finish. */
RT_INTERNAL int stap_h5x_create(h5x **f, const char *path, stap_write_mode mode, stap_error *err);
/* Publish (the first failure STAP_OK) or abandon; frees f; the status. */
RT_INTERNAL int stap_h5x_finish(h5x *f, stap_error *err);
RT_INTERNAL void stap_h5x_group(h5x *f, const char *name);
RT_INTERNAL void stap_h5x_put_double(h5x *f, const char *obj, const char *name, double v);
RT_INTERNAL void stap_h5x_put_llong(h5x *f, const char *obj, const char *name, long long v);
/* a variable-length UTF-8 string (what h5py reads as str), or a fixed-length ASCII one
 * (h5py: bytes; the form of a scene's /truth attributes) */
RT_INTERNAL void stap_h5x_put_string(h5x *f, const char *obj, const char *name, const char *s);
RT_INTERNAL void stap_h5x_put_fixed_string(h5x *f, const char *obj, const char *name, const char *s);
/* float64 / int32 datasets of `rank` dimensions dims */
RT_INTERNAL void stap_h5x_put_doubles(h5x *f, const char *name, int rank, const size_t *dims, const double *v);
RT_INTERNAL void stap_h5x_put_ints(h5x *f, const char *name, size_t n, const int *v);
/* STAP_OK, or the first failure of the writes (err filled). */
RT_INTERNAL int stap_h5x_status(const h5x *f, stap_error *err);

#endif
