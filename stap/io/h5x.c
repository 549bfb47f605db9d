/* h5x.c: the I/O module's plain API for simple HDF5 objects (h5x.h). */
#include "io_internal.h"
#include "h5check.h"
#include "h5x.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------------------- */

int stap_h5x_open(h5x **out, const char *path, stap_error *err)
{
    *out = NULL;
    h5x *f = calloc(1, sizeof *f);
    if (!f) return stap_fail(err, STAP_ENOMEM, "out of memory opening '%s'", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->file = -1;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = stap_io_src_open(&f->src, f->path, err);
    stap_io_quiet_end(&q);
    if (st) {
        stap_h5x_close(f);
        return st;
    }
    f->file = f->src.file;
    *out = f;
    return STAP_OK;
}

void stap_h5x_close(h5x *f)
{
    if (!f) return;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    stap_io_src_close_lists(&f->src);
    if (f->src.file >= 0) H5Fclose(f->src.file);
    stap_io_quiet_end(&q);
    free(f);
}

const char *stap_h5x_path(const h5x *f) { return f->path; }

int stap_h5x_exists(h5x *f, const char *name)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int has = stap_io_link_exists(&f->src, name) && H5Oexists_by_name(f->file, name, f->src.lapl) > 0;
    stap_io_quiet_end(&q);
    return has;
}

/* The object `obj` open for its attributes, its header checked first (once per object). */
static hid_t open_for_attrs(h5x *f, const char *obj, stap_error *err)
{
    if (!stap_io_link_exists(&f->src, obj)) {
        int st = stap_io_src_refused(&f->src, obj, err);
        if (!st) stap_fail(err, STAP_EFORMAT, "'%s' is missing from '%s'", obj, f->path);
        return -1;
    }
    if (strcmp(f->checked, obj)) {
        if (stap_h5check_attributes(f->path, f->file, obj, f->src.lapl, err)) return -1;
        snprintf(f->checked, sizeof f->checked, "%s", obj);
    }
    hid_t o = H5Oopen(f->file, obj, f->src.lapl);
    if (o < 0 && !stap_io_src_refused(&f->src, obj, err))
        stap_fail(err, STAP_EFORMAT, "'%s' in '%s' cannot be opened", obj, f->path);
    return o;
}

int stap_h5x_has_attr(h5x *f, const char *obj, const char *name)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    stap_error ignore;
    hid_t o = open_for_attrs(f, obj, &ignore);
    const int has = o >= 0 && H5Aexists(o, name) > 0;
    if (o >= 0) H5Oclose(o);
    stap_io_quiet_end(&q);
    return has;
}

/* The attribute (o's `name`) open, or -1 with err naming it. */
static hid_t open_attr(h5x *f, hid_t o, const char *obj, const char *name, stap_error *err)
{
    if (H5Aexists(o, name) <= 0) {
        stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has no attribute '%s'", obj, f->path, name);
        return -1;
    }
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    if (a < 0) stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable", name, obj,
                         f->path);
    return a;
}

int stap_h5x_get_attr_doubles(h5x *f, const char *obj, const char *name, size_t n, double *v,
                              stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t o = open_for_attrs(f, obj, err), a = -1, sp = -1, t = -1;
    if (o < 0) {
        st = err ? err->code : STAP_EFORMAT;
        goto done;
    }
    if ((a = open_attr(f, o, obj, name, err)) < 0) {
        st = STAP_EFORMAT;
        goto done;
    }
    sp = H5Aget_space(a);
    t = H5Aget_type(a);
    const H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    int finite = sp >= 0 && H5Sget_simple_extent_type(sp) != H5S_NULL &&
                 H5Sget_simple_extent_npoints(sp) == (hssize_t)n && (c == H5T_INTEGER || c == H5T_FLOAT) &&
                 stap_io_atomic_layout_ok(t) && H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
    for (size_t k = 0; finite && k < n; k++) finite = isfinite(v[k]);
    if (!finite) {
        if (n == 1) st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is not one finite "
                                   "number", name, obj, f->path);
        else st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is not %zu finite "
                            "numbers", name, obj, f->path, n);
        goto done;
    }
done:
    CLOSE_TYPE(t);
    CLOSE_SPACE(sp);
    CLOSE_ATTR(a);
    if (o >= 0) H5Oclose(o);
    stap_io_quiet_end(&q);
    return st;
}

int stap_h5x_get_double(h5x *f, const char *obj, const char *name, double *v, stap_error *err)
{
    double x = NAN;
    const int st = stap_h5x_get_attr_doubles(f, obj, name, 1, &x, err);
    if (!st) *v = x;
    return st;
}

int stap_h5x_get_llong(h5x *f, const char *obj, const char *name, long long *v, stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t o = open_for_attrs(f, obj, err), a = -1, sp = -1, t = -1;
    if (o < 0) {
        st = err ? err->code : STAP_EFORMAT;
    } else if ((a = open_attr(f, o, obj, name, err)) < 0) {
        st = STAP_EFORMAT;
    } else {
        sp = H5Aget_space(a);
        t = H5Aget_type(a);
        long long x = 0;
        if (sp < 0 || H5Sget_simple_extent_type(sp) == H5S_NULL ||
            H5Sget_simple_extent_npoints(sp) != 1 || H5Tget_class(t) != H5T_INTEGER ||
            !stap_io_atomic_layout_ok(t) || H5Aread(a, H5T_NATIVE_LLONG, &x) < 0)
            st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is not one integer",
                           name, obj, f->path);
        else *v = x;
    }
    CLOSE_TYPE(t);
    CLOSE_SPACE(sp);
    CLOSE_ATTR(a);
    if (o >= 0) H5Oclose(o);
    stap_io_quiet_end(&q);
    return st;
}

int stap_h5x_get_count(h5x *f, const char *obj, const char *name, long long lo, long long hi,
                  long long *v, stap_error *err)
{
    double x;
    int st = stap_h5x_get_double(f, obj, name, &x, err);
    if (st) return st;
    if (x < (double)lo || x > (double)hi || x != floor(x))
        return stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is %g; expected a whole "
                         "number from %lld to %lld", name, obj, f->path, x, lo, hi);
    *v = (long long)x;
    return STAP_OK;
}

int stap_h5x_get_string(h5x *f, const char *obj, const char *name, char *buf, size_t len,
                   stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t o = open_for_attrs(f, obj, err), a = -1, ft = -1, mt = -1, sp = -1;
    if (o < 0) {
        st = err ? err->code : STAP_EFORMAT;
        goto done;
    }
    if ((a = open_attr(f, o, obj, name, err)) < 0) {
        st = STAP_EFORMAT;
        goto done;
    }
    ft = H5Aget_type(a);
    sp = H5Aget_space(a);
    if (ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is not a string", name, obj,
                       f->path);
        goto done;
    }
    if (H5Tis_variable_str(ft) > 0) {
        char *s = NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0 ||
            H5Aread(a, mt, &s) < 0 || !s)
            st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable", name,
                           obj, f->path);
        else snprintf(buf, len, "%s", s);
        if (s) H5free_memory(s);
    } else {
        const size_t n = H5Tget_size(ft);
        char *s = n <= 65536 ? calloc(n + 1, 1) : NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (!s || mt < 0 || H5Tset_size(mt, n + 1) < 0 || H5Aread(a, mt, s) < 0)
            st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable", name,
                           obj, f->path);
        else snprintf(buf, len, "%s", s);
        free(s);
    }
done:
    CLOSE_TYPE(mt);
    CLOSE_TYPE(ft);
    CLOSE_SPACE(sp);
    CLOSE_ATTR(a);
    if (o >= 0) H5Oclose(o);
    stap_io_quiet_end(&q);
    return st;
}

/* The dataset `name` open, local (no external storage), of `rank` dimensions `shape`. */
static hid_t open_shaped(h5x *f, const char *name, int rank, const size_t *shape, stap_error *err)
{
    if (!stap_io_link_exists(&f->src, name)) {
        if (!stap_io_src_refused(&f->src, name, err))
            stap_fail(err, STAP_EFORMAT, "'%s' is missing from '%s'", name, f->path);
        return -1;
    }
    if (stap_io_check_local(&f->src, -1, name, err)) return -1;
    hid_t d = H5Dopen2(f->file, name, f->src.dapl), sp = -1;
    if (d < 0) {
        if (!stap_io_src_refused(&f->src, name, err))
            stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not a dataset", name, f->path);
        return -1;
    }
    if (stap_io_check_local(&f->src, d, name, err)) {
        H5Dclose(d);
        return -1;
    }
    hsize_t dims[H5S_MAX_RANK];
    int ok = (sp = H5Dget_space(d)) >= 0 && H5Sget_simple_extent_ndims(sp) == rank;
    if (ok) H5Sget_simple_extent_dims(sp, dims, NULL);
    for (int k = 0; ok && k < rank; k++) ok = dims[k] == (hsize_t)shape[k];
    CLOSE_SPACE(sp);
    if (!ok) {
        char want[128] = "";
        size_t at = 0;
        for (int k = 0; k < rank && at < sizeof want; k++)
            at += (size_t)snprintf(want + at, sizeof want - at, "%s%zu", k ? " x " : "", shape[k]);
        stap_fail(err, STAP_EFORMAT, "'%s' in '%s' does not have the shape %s", name, f->path,
                  rank ? want : "of one value");
        H5Dclose(d);
        return -1;
    }
    return d;
}

/* Read dataset `name` of that shape as numbers of mem type mtype (class checked). */
static int get_numbers(h5x *f, const char *name, int rank, const size_t *shape, hid_t mtype,
                       void *out, stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t d = open_shaped(f, name, rank, shape, err), t = d >= 0 ? H5Dget_type(d) : -1;
    if (d < 0) {
        st = err ? err->code : STAP_EFORMAT;
    } else {
        const H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
        size_t n = 1;
        for (int k = 0; k < rank; k++) n *= shape[k];
        if ((c != H5T_INTEGER && c != H5T_FLOAT) || !stap_io_atomic_layout_ok(t) ||
            (n && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0))
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not an array of numbers", name, f->path);
    }
    CLOSE_TYPE(t);
    CLOSE_DSET(d);
    stap_io_quiet_end(&q);
    return st;
}

int stap_h5x_get_doubles(h5x *f, const char *name, int rank, const size_t *shape, double *out,
                    stap_error *err)
{
    return get_numbers(f, name, rank, shape, H5T_NATIVE_DOUBLE, out, err);
}

int stap_h5x_get_ints(h5x *f, const char *name, size_t n, int *out, stap_error *err)
{
    return get_numbers(f, name, 1, &n, H5T_NATIVE_INT, out, err);
}

int stap_h5x_get_cf32(h5x *f, const char *name, int rank, const size_t *shape, stap_cf32 *out,
                 stap_error *err)
{
    static const char *const axes[8] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    size_t n = 1;
    for (int k = 0; k < rank; k++) n *= shape[k];
    const complex_spec spec = {name, rank, "", axes, (unsigned long long)(n ? n : 1) * 8};
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hsize_t dims[H5S_MAX_RANK];
    stap_cf32 *v = NULL;
    int st = stap_io_link_exists(&f->src, name) ? stap_io_read_complex(&f->src, &spec, dims, &v, err) : STAP_EFORMAT;
    if (st && !v && !stap_io_link_exists(&f->src, name) && !stap_io_src_refused(&f->src, name, err))
        stap_fail(err, STAP_EFORMAT, "'%s' is missing from '%s'", name, f->path);
    for (int k = 0; !st && k < rank; k++)
        if (dims[k] != (hsize_t)shape[k])
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' does not have the shape its /config "
                           "implies", name, f->path);
    if (!st) memcpy(out, v, sizeof(stap_cf32) * n);
    free(v);
    stap_io_quiet_end(&q);
    return st;
}

static int get_detections(h5x *f, const char *name, int by_cpi, long long cpi,
                          stap_detection **out, size_t *count, stap_error *err);

int stap_h5x_get_detections(h5x *f, const char *name, stap_detection **out, size_t *count,
                       stap_error *err)
{
    return get_detections(f, name, 0, 0, out, count, err);
}

int stap_h5x_get_detections_of(h5x *f, const char *name, long long cpi, stap_detection **out,
                          size_t *count, stap_error *err)
{
    return get_detections(f, name, 1, cpi, out, count, err);
}

int stap_h5x_dataset_rank(h5x *f, const char *name, long long *rows)
{
    *rows = 0;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int rank = 0;
    hid_t d = -1, sp = -1;
    stap_error ignore;
    if (stap_io_link_exists(&f->src, name) && !stap_io_check_local(&f->src, -1, name, &ignore) &&
        (d = H5Dopen2(f->file, name, f->src.dapl)) >= 0 && (sp = H5Dget_space(d)) >= 0) {
        hsize_t dims[H5S_MAX_RANK];
        rank = H5Sget_simple_extent_ndims(sp);
        if (rank > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0) *rows = (long long)dims[0];
        else rank = 0;
    }
    CLOSE_SPACE(sp);
    CLOSE_DSET(d);
    stap_io_quiet_end(&q);
    return rank;
}

int stap_h5x_get_cf32_row(h5x *f, const char *name, long long row, int rank, const size_t *shape,
                     stap_cf32 *out, long long *rows, stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t d = -1, fs = -1, ms = -1, mt = -1;
    hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
    if (!stap_io_link_exists(&f->src, name) || stap_io_check_local(&f->src, -1, name, err) ||
        (d = H5Dopen2(f->file, name, f->src.dapl)) < 0 || stap_io_check_local(&f->src, d, name, err) ||
        (fs = H5Dget_space(d)) < 0) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is missing or not a dataset", name, f->path);
        goto done;
    }
    if (H5Sget_simple_extent_ndims(fs) != rank + 1 || H5Sget_simple_extent_dims(fs, dims, NULL) < 0) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not %d-dimensional (CPIs x a CPI's "
                       "results)", name, f->path, rank + 1);
        goto done;
    }
    if (rows) *rows = (long long)dims[0];
    for (int k = 0; k < rank; k++)
        if (dims[k + 1] != (hsize_t)shape[k]) {
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' does not have the shape its /config "
                           "implies", name, f->path);
            goto done;
        }
    if (row < 0 || (hsize_t)row >= dims[0]) {
        if (dims[0] == 0) st = stap_fail(err, STAP_EINVAL, "CPI %lld: '%s' in '%s' holds no CPI", row, name, f->path);
        else st = stap_fail(err, STAP_EINVAL, "CPI %lld: '%s' in '%s' holds CPIs 0..%llu", row, name,
                            f->path, (unsigned long long)dims[0] - 1);
        goto done;
    }
    start[0] = (hsize_t)row;
    count[0] = 1;
    for (int k = 0; k < rank; k++) count[k + 1] = dims[k + 1];
    if ((ms = H5Screate_simple(rank + 1, count, NULL)) < 0 || (mt = stap_io_cf32_mem_type()) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(d, mt, ms, fs, H5P_DEFAULT, out) < 0)
        st = stap_fail(err, STAP_EFORMAT, "cannot read CPI %lld of '%s' in '%s' as complex "
                       "{r, i}", row, name, f->path);
done:
    CLOSE_TYPE(mt);
    CLOSE_SPACE(ms);
    CLOSE_SPACE(fs);
    CLOSE_DSET(d);
    stap_io_quiet_end(&q);
    return st;
}

static int get_detections(h5x *f, const char *name, int by_cpi, long long cpi,
                          stap_detection **out, size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    int st = STAP_OK;
    hid_t d = -1, sp = -1, mt = -1;
    if (!stap_io_link_exists(&f->src, name) || stap_io_check_local(&f->src, -1, name, err) ||
        (d = H5Dopen2(f->file, name, f->src.dapl)) < 0 || stap_io_check_local(&f->src, d, name, err)) {
        if (!err || !err->msg[0] || !strstr(err->msg, name))
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is missing or not a dataset", name, f->path);
        else st = err->code;
        goto done;
    }
    hsize_t n = 0;
    if ((sp = H5Dget_space(d)) < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
        H5Sget_simple_extent_dims(sp, &n, NULL) < 0 || n > ((hsize_t)1 << 32)) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not a table of detections", name, f->path);
        goto done;
    }
    mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
    stap_detection *det = malloc(sizeof *det * (n ? (size_t)n : 1));
    long long *cpis = by_cpi ? malloc(sizeof *cpis * (n ? (size_t)n : 1)) : NULL;
    hid_t ct = by_cpi ? H5Tcreate(H5T_COMPOUND, sizeof(long long)) : -1;
    if (by_cpi && (!cpis || ct < 0 || H5Tinsert(ct, "cpi", 0, H5T_NATIVE_LLONG) < 0 ||
                   (n > 0 && H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, cpis) < 0))) {
        free(det);
        free(cpis);
        CLOSE_TYPE(ct);
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has no cpi column (not a recording's "
                       "results)", name, f->path);
        goto done;
    }
    CLOSE_TYPE(ct);
    if (mt < 0 || !det ||
        H5Tinsert(mt, "beam", offsetof(stap_detection, beam), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "doppler_bin", offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "range_cell", offsetof(stap_detection, range_cell), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "power", offsetof(stap_detection, power), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(mt, "snr_db", offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT) < 0 ||
        (n > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, det) < 0)) {
        free(det);
        free(cpis);
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not a table of (beam, doppler_bin, "
                       "range_cell, power, snr_db)", name, f->path);
        goto done;
    }
    /* statistic and threshold: files before issue 46 have neither (NaN) */
    hid_t ft = H5Dget_type(d), xt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
    const int have_stat = ft >= 0 && H5Tget_member_index(ft, "statistic") >= 0 &&
                          H5Tget_member_index(ft, "threshold") >= 0;
    if (!have_stat || xt < 0 ||
        H5Tinsert(xt, "statistic", offsetof(stap_detection, statistic), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(xt, "threshold", offsetof(stap_detection, threshold), H5T_NATIVE_FLOAT) < 0 ||
        (n > 0 && H5Dread(d, xt, H5S_ALL, H5S_ALL, H5P_DEFAULT, det) < 0))
        for (size_t i = 0; i < (size_t)n; i++) det[i].statistic = det[i].threshold = NAN;
    CLOSE_TYPE(xt);
    CLOSE_TYPE(ft);
    size_t kept = (size_t)n;
    if (by_cpi) { /* the rows of that CPI, in order */
        kept = 0;
        for (size_t i = 0; i < (size_t)n; i++)
            if (cpis[i] == cpi) det[kept++] = det[i];
        free(cpis);
    }
    *out = det;
    *count = kept;
done:
    CLOSE_TYPE(mt);
    CLOSE_SPACE(sp);
    CLOSE_DSET(d);
    stap_io_quiet_end(&q);
    return st;
}

/* ---- writing ------------------------------------------------------------------------- */

void stap_h5x_for_writer(struct stap_h5_file *f, h5w *w, hid_t file)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", w->path);
    f->w = w;
    f->file = file;
    f->src.file = f->src.lapl = f->src.dapl = -1;
}

int stap_h5x_create(h5x **out, const char *path, stap_write_mode mode, stap_error *err)
{
    *out = NULL;
    h5x *f = calloc(1, sizeof *f);
    if (!f) return stap_fail(err, STAP_ENOMEM, "out of memory writing '%s'", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->src.file = f->src.lapl = f->src.dapl = -1;
    if (stap_h5out_begin(&f->out, f->path, mode, err)) {
        free(f);
        return err ? err->code : STAP_EIO;
    }
    h5_quiet q;
    stap_io_quiet_begin(&q);
    f->own = (h5w){f->path, err, STAP_OK, NULL, -1};
    f->file = stap_io_out_create(&f->own, &f->out);
    f->w = &f->own;
    stap_io_quiet_end(&q);
    *out = f;
    return STAP_OK;
}

int stap_h5x_finish(h5x *f, stap_error *err)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    f->own.err = err;
    int st = stap_io_out_finish(&f->own, &f->out, f->file);
    stap_io_quiet_end(&q);
    free(f);
    return st;
}

int stap_h5x_status(const h5x *f, stap_error *err)
{
    if (f->w->st && err && f->w->err && err != f->w->err) *err = *f->w->err;
    return f->w->st;
}

void stap_h5x_group(h5x *f, const char *name)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t g = stap_io_w_group(f->w, f->file, name);
    CLOSE_GROUP(g);
    stap_io_quiet_end(&q);
}

/* obj open for an attribute, or -1 with the failure recorded */
static hid_t open_obj(h5x *f, const char *obj)
{
    if (f->w->st) return -1;
    hid_t o = H5Oopen(f->file, obj, H5P_DEFAULT);
    if (o < 0) {
        char what[300];
        snprintf(what, sizeof what, "'%s'", obj);
        stap_io_w_fail_h5(f->w, what);
    }
    return o;
}

void stap_h5x_put_double(h5x *f, const char *obj, const char *name, double v)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t o = open_obj(f, obj);
    if (o >= 0) {
        stap_io_w_attr_double(f->w, o, name, v);
        H5Oclose(o);
    }
    stap_io_quiet_end(&q);
}

void stap_h5x_put_llong(h5x *f, const char *obj, const char *name, long long v)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t o = open_obj(f, obj);
    if (o >= 0) {
        stap_io_w_attr(f->w, o, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &v);
        H5Oclose(o);
    }
    stap_io_quiet_end(&q);
}

void stap_h5x_put_string(h5x *f, const char *obj, const char *name, const char *s)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t o = open_obj(f, obj);
    if (o >= 0) {
        stap_io_w_attr_string(f->w, o, name, s);
        H5Oclose(o);
    }
    stap_io_quiet_end(&q);
}

void stap_h5x_put_fixed_string(h5x *f, const char *obj, const char *name, const char *s)
{
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t o = open_obj(f, obj), t = -1;
    if (o >= 0) {
        t = H5Tcopy(H5T_C_S1);
        if (t < 0 || H5Tset_size(t, strlen(s) + 1) < 0) stap_io_w_fail_h5(f->w, "a string type");
        else stap_io_w_attr(f->w, o, name, t, t, s);
        CLOSE_TYPE(t);
        H5Oclose(o);
    }
    stap_io_quiet_end(&q);
}

static void put_array(h5x *f, const char *name, int rank, const size_t *dims, hid_t ftype,
                      hid_t mtype, const void *v)
{
    hsize_t d[H5S_MAX_RANK];
    for (int k = 0; k < rank && k < H5S_MAX_RANK; k++) d[k] = (hsize_t)dims[k];
    h5_quiet q;
    stap_io_quiet_begin(&q);
    stap_io_w_dataset(f->w, f->file, name, name, ftype, mtype, rank, d, v, NULL);
    stap_io_quiet_end(&q);
}

void stap_h5x_put_doubles(h5x *f, const char *name, int rank, const size_t *dims, const double *v)
{
    put_array(f, name, rank, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v);
}

void stap_h5x_put_ints(h5x *f, const char *name, size_t n, const int *v)
{
    put_array(f, name, 1, &n, H5T_STD_I32LE, H5T_NATIVE_INT, v);
}
