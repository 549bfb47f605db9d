/* write.c: the writers' helpers (io_internal.h), stap_input_write and the recording
 * writer (gen --cpis, the imports). */
#include "io_internal.h"
#include "h5layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5_hl.h>

/* ------------------------------------------------------------------------------------
 * Writing: a small context so that each step can report the first failure. */

/* Before HDF5 writes `bytes` of raw data into w's file. */
void stap_io_w_reserve(h5w *w, size_t bytes)
{
    if (!w->st && w->out) w->st = stap_h5out_reserve(w->out, w->file, bytes, w->err);
}

int stap_io_w_fail_h5(h5w *w, const char *what)
{
    char detail[256];
    if (!w->st)
        w->st = stap_fail(w->err, STAP_EIO, "cannot write %s to '%s': %s", what, w->path,
                          stap_io_h5_detail(detail, sizeof detail));
    return w->st;
}

hid_t stap_io_w_group(h5w *w, hid_t loc, const char *name)
{
    if (w->st) return -1;
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        char what[96];
        snprintf(what, sizeof what, "group '%s'", name);
        stap_io_w_fail_h5(w, what);
    }
    return g;
}

/* A contiguous dataset: `count` elements of mtype from data (NULL when count is 0). */
void stap_io_w_dataset(h5w *w, hid_t loc, const char *name, const char *fullname, hid_t ftype,
                      hid_t mtype, int rank, const hsize_t *dims, const void *data,
                      hid_t *keep)
{
    if (keep) *keep = -1;
    if (w->st) return;
    char what[96];
    snprintf(what, sizeof what, "'%s'", fullname);
    hid_t space = H5Screate_simple(rank, dims, NULL), dset = -1;
    if (space < 0) {
        stap_io_w_fail_h5(w, what);
        return;
    }
    dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    if (dset >= 0 && n > 0) stap_io_w_reserve(w, (size_t)n * H5Tget_size(ftype));
    if (!w->st &&
        (dset < 0 || (n > 0 && H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)))
        stap_io_w_fail_h5(w, what);
    if (keep && !w->st) *keep = dset;
    else CLOSE_DSET(dset);
    CLOSE_SPACE(space);
}

/* A complex64 dataset; *keep (when not NULL) gets it open, or -1. */
void stap_io_w_cf32_keep(h5w *w, hid_t loc, const char *name, const char *fullname, int rank,
                        const hsize_t *dims, const stap_cf32 *data, hid_t *keep)
{
    if (keep) *keep = -1;
    if (w->st) return;
    hid_t ft = stap_io_cf32_file_type(), mt = stap_io_cf32_mem_type();
    if (ft < 0 || mt < 0) stap_io_w_fail_h5(w, "the complex64 type");
    else stap_io_w_dataset(w, loc, name, fullname, ft, mt, rank, dims, data, keep);
    CLOSE_TYPE(ft);
    CLOSE_TYPE(mt);
}

static void w_cf32(h5w *w, hid_t loc, const char *name, const char *fullname, int rank,
                   const hsize_t *dims, const stap_cf32 *data)
{
    stap_io_w_cf32_keep(w, loc, name, fullname, rank, dims, data, NULL);
}

/* /data/iq's axis labels (schema v1.1): channel, pulse, range, after cpi for a recording */
static void w_iq_labels(h5w *w, hid_t dset, int rank)
{
    if (!w->st && stap_h5layout_write_labels(dset, rank) < 0)
        stap_io_w_fail_h5(w, "the axis labels of '/data/iq'");
}

void stap_io_w_attr(h5w *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                   const void *value)
{
    stap_io_w_attr_n(w, obj, name, ftype, mtype, 0, value);
}

void stap_io_w_attr_n(h5w *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype, int n,
                      const void *value)
{
    if (w->st) return;
    const hsize_t dims[1] = {(hsize_t)n};
    hid_t space = n > 0 ? H5Screate_simple(1, dims, NULL) : H5Screate(H5S_SCALAR), attr = -1;
    if (space >= 0) attr = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (space < 0 || attr < 0 || H5Awrite(attr, mtype, value) < 0) {
        char what[96];
        snprintf(what, sizeof what, "attribute '%s'", name);
        stap_io_w_fail_h5(w, what);
    }
    CLOSE_ATTR(attr);
    CLOSE_SPACE(space);
}

void stap_io_w_attr_int(h5w *w, hid_t obj, const char *name, int v)
{
    stap_io_w_attr(w, obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &v);
}

void stap_io_w_attr_double(h5w *w, hid_t obj, const char *name, double v)
{
    stap_io_w_attr(w, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* Strings are variable-length UTF-8, what h5py writes for str (and reads back as str). */
void stap_io_w_attr_string(h5w *w, hid_t obj, const char *name, const char *s)
{
    if (w->st) return;
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        stap_io_w_fail_h5(w, "a string type");
    } else {
        const char *v = s ? s : "";
        stap_io_w_attr(w, obj, name, t, t, &v);
    }
    CLOSE_TYPE(t);
}

/* The root attributes of every file rtstap writes (schema v1.1). */
void stap_io_w_root(h5w *w, hid_t file)
{
    stap_io_w_attr_string(w, file, "schema", H5IO_SCHEMA);
    stap_io_w_attr_string(w, file, "rtstap_version", RTSTAP_VERSION);
    stap_io_w_attr_string(w, file, "commit", RTSTAP_COMMIT);
}

/* A dataset access list without a chunk cache, for the writers' chunked datasets: each
 * chunk goes to the file when H5Dwrite returns — within the blocks allocated ahead of it —
 * and none is left dirty for a close to flush past them (or to fail, when the file is
 * being abandoned). One list for the process, made once (never closed). */
hid_t stap_io_no_chunk_cache(void)
{
    static hid_t dapl = -1;
    if (dapl < 0) {
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        if (dapl >= 0 && H5Pset_chunk_cache(dapl, 0, 0, H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
            H5Pclose(dapl);
            dapl = -1;
        }
    }
    return dapl >= 0 ? dapl : H5P_DEFAULT;
}

/* The writers' forms: the failure goes into w. */
hid_t stap_io_out_create(h5w *w, h5_out *o)
{
    hid_t file = stap_h5out_create(o, w->err);
    if (file < 0) w->st = w->err ? w->err->code : STAP_EIO;
    w->out = o;
    w->file = file;
    return file;
}

int stap_io_out_finish(h5w *w, h5_out *o, hid_t file)
{
    int st = stap_h5out_finish(o, file, w->st != STAP_OK, w->err);
    if (w->st) return w->st;
    return w->st = st;
}

void stap_io_w_meta_radar(h5w *w, hid_t file, const stap_radar_meta *m, int always)
{
    if (w->st) return;
    int any = m && (m->has_prf || m->has_carrier || m->has_sample_rate);
    if (!any && !always) return;
    hid_t g = stap_io_w_group(w, file, "radar");
    if (g < 0) return;
    if (m && m->has_prf) stap_io_w_attr_double(w, g, "prf_hz", m->prf_hz);
    if (m && m->has_carrier) stap_io_w_attr_double(w, g, "carrier_frequency_hz", m->carrier_frequency_hz);
    if (m && m->has_sample_rate) stap_io_w_attr_double(w, g, "sample_rate_hz", m->sample_rate_hz);
    CLOSE_GROUP(g);
}

int stap_input_write(const char *path, const stap_input *in, stap_h5_extra_fn extra,
                     void *extra_user, const stap_write_options *wo, stap_error *err)
{
    const stap_write_mode mode = wo ? wo->mode : STAP_WRITE_NEW;
    if (!path || !*path) return stap_fail(err, STAP_EINVAL, "stap_input_write: empty output path");
    if (!in || !in->iq || in->channels < 1 || in->pulses < 1 || in->range_gates < 1)
        return stap_fail(err, STAP_EINVAL, "stap_input_write('%s'): no cube, or a dimension < 1", path);
    if (in->steering_beams < 0 ||
        (in->steering_beams > 0 && (!in->steering || in->steering_len < 1)))
        return stap_fail(err, STAP_EINVAL, "stap_input_write('%s'): steering_beams = %d but no "
                         "steering vectors of length >= 1", path, in->steering_beams);
    const stap_radar_meta *m = &in->meta;
    if (m->has_element_spacing &&
        !(isfinite(m->element_spacing_wavelengths) && m->element_spacing_wavelengths > 0))
        return stap_fail(err, STAP_EINVAL, "stap_input_write('%s'): element spacing %g is not a "
                         "finite number > 0", path, m->element_spacing_wavelengths);

    h5_out o;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w w = {path, err, STAP_OK, NULL, -1};
    if (stap_h5out_begin(&o, path, mode, err)) {
        stap_io_quiet_end(&q);
        return err ? err->code : STAP_EIO;
    }
    hid_t file = stap_io_out_create(&w, &o);
    stap_io_w_attr_int(&w, file, "schema_version", H5IO_SCHEMA_VERSION);
    stap_io_w_root(&w, file);
    hid_t g = stap_io_w_group(&w, file, "data");
    const hsize_t dims[3] = {(hsize_t)in->channels, (hsize_t)in->pulses, (hsize_t)in->range_gates};
    hid_t iq;
    stap_io_w_cf32_keep(&w, g, "iq", "/data/iq", 3, dims, in->iq, &iq);
    if (iq >= 0) w_iq_labels(&w, iq, 3);
    CLOSE_DSET(iq);
    CLOSE_GROUP(g);
    if (in->steering_beams > 0) {
        const hsize_t sd[2] = {(hsize_t)in->steering_beams, (hsize_t)in->steering_len};
        w_cf32(&w, file, "steering", "/steering", 2, sd, in->steering);
    }
    if (m->has_element_spacing) {
        g = stap_io_w_group(&w, file, "array");
        if (g >= 0)
            stap_io_w_attr_double(&w, g, "element_spacing_wavelengths", m->element_spacing_wavelengths);
        CLOSE_GROUP(g);
    }
    stap_io_w_array(&w, file, in);
    stap_io_w_meta_radar(&w, file, m, 0);
    stap_io_w_reserve(&w, 0); /* the hook writes small things: within the margin */
    if (!w.st && extra) {
        struct stap_h5_file hf;
        stap_h5x_for_writer(&hf, &w, file);
        if (extra(&hf, extra_user, err) && !w.st) w.st = err ? err->code : STAP_EIO;
    }
    int st = stap_io_out_finish(&w, &o, file);
    stap_io_quiet_end(&q);
    return st;
}

/* ---- writing a recording (gen, import-perfect) -------------------------------------- */

struct stap_recording_writer {
    char path[1024];
    h5_out out;
    hid_t file, dset, ftype, mtype;
    hsize_t dims[4];
    stap_error *err;
};

void stap_recording_abort(stap_recording_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    CLOSE_DSET(w->dset);
    CLOSE_TYPE(w->ftype);
    CLOSE_TYPE(w->mtype);
    stap_h5out_finish(&w->out, w->file, 1, NULL); /* abandoned: its blocks freed, closed, removed */
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    free(w);
}

int stap_recording_create(stap_recording_writer **out, const char *path,
                          const stap_input *in, long long cpis, const stap_write_options *wo,
                          stap_error *err)
{
    const stap_write_mode mode = wo ? wo->mode : STAP_WRITE_NEW;
    *out = NULL;
    if (!path || !*path || !in || cpis < 1 || in->channels < 1 || in->pulses < 1 || in->range_gates < 1)
        return stap_fail(err, STAP_EINVAL, "stap_recording_create: no path, or a dimension < 1");
    stap_recording_writer *w = calloc(1, sizeof *w);
    if (!w) return stap_fail(err, STAP_ENOMEM, "out of memory");
    w->file = w->dset = w->ftype = w->mtype = -1;
    snprintf(w->path, sizeof w->path, "%s", path);
    if (stap_h5out_begin(&w->out, w->path, mode, err)) {
        int st = err ? err->code : STAP_EIO;
        free(w);
        return st;
    }
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w hw = {w->path, err, STAP_OK, NULL, -1};
    w->file = stap_io_out_create(&hw, &w->out);
    stap_io_w_attr_int(&hw, w->file, "schema_version", H5IO_SCHEMA_VERSION);
    stap_io_w_root(&hw, w->file);
    hid_t g = stap_io_w_group(&hw, w->file, "data"), space = -1, dcpl = -1;
    w->dims[0] = (hsize_t)cpis;
    w->dims[1] = (hsize_t)in->channels;
    w->dims[2] = (hsize_t)in->pulses;
    w->dims[3] = (hsize_t)in->range_gates;
    const hsize_t chunk[4] = {1, w->dims[1], w->dims[2], w->dims[3]};
    if (!hw.st) {
        w->ftype = stap_io_cf32_file_type();
        w->mtype = stap_io_cf32_mem_type();
        space = H5Screate_simple(4, w->dims, NULL);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        /* one CPI per chunk (HDF5 caps a chunk at 4 GiB) */
        if (w->ftype < 0 || w->mtype < 0 || space < 0 || dcpl < 0 ||
            (size_t)in->channels * in->pulses * in->range_gates * 8 >= ((size_t)4 << 30) ||
            H5Pset_chunk(dcpl, 4, chunk) < 0 ||
            (w->dset = H5Dcreate2(g, "iq", w->ftype, space, H5P_DEFAULT, dcpl, stap_io_no_chunk_cache())) < 0)
            stap_io_w_fail_h5(&hw, "'/data/iq'");
        w_iq_labels(&hw, w->dset, 4);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    CLOSE_GROUP(g);
    if (in->steering_beams > 0) {
        const hsize_t sd[2] = {(hsize_t)in->steering_beams, (hsize_t)in->steering_len};
        w_cf32(&hw, w->file, "steering", "/steering", 2, sd, in->steering);
    }
    const stap_radar_meta *m = &in->meta;
    if (m->has_element_spacing) {
        g = stap_io_w_group(&hw, w->file, "array");
        if (g >= 0) stap_io_w_attr_double(&hw, g, "element_spacing_wavelengths", m->element_spacing_wavelengths);
        CLOSE_GROUP(g);
    }
    stap_io_w_array(&hw, w->file, in);
    stap_io_w_meta_radar(&hw, w->file, m, 0);
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (hw.st) {
        int st = hw.st;
        stap_recording_abort(w);
        return st;
    }
    *out = w;
    return STAP_OK;
}

int stap_recording_write(stap_recording_writer *w, long long cpi, const stap_cf32 *cube, stap_error *err)
{
    if (cpi < 0 || cpi >= (long long)w->dims[0])
        return stap_fail(err, STAP_EINVAL, "'%s' holds %llu CPIs; CPI %lld written", w->path,
                         (unsigned long long)w->dims[0], cpi);
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w hw = {w->path, err, STAP_OK, &w->out, w->file};
    hsize_t start[4] = {(hsize_t)cpi, 0, 0, 0}, count[4] = {1, w->dims[1], w->dims[2], w->dims[3]};
    stap_io_w_reserve(&hw, sizeof(stap_cf32) * (size_t)(w->dims[1] * w->dims[2] * w->dims[3]));
    hid_t fs = hw.st ? -1 : H5Dget_space(w->dset), ms = hw.st ? -1 : H5Screate_simple(4, count, NULL);
    if (!hw.st &&
        (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
         H5Dwrite(w->dset, w->mtype, ms, fs, H5P_DEFAULT, cube) < 0))
        stap_io_w_fail_h5(&hw, "a CPI of '/data/iq'");
    CLOSE_SPACE(fs);
    CLOSE_SPACE(ms);
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    return hw.st;
}

int stap_recording_finish(stap_recording_writer *w, stap_h5_extra_fn extra, void *user,
                          stap_error *err)
{
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w hw = {w->path, err, STAP_OK, &w->out, w->file};
    stap_io_w_reserve(&hw, 0);
    if (extra && !hw.st) {
        struct stap_h5_file hf;
        stap_h5x_for_writer(&hf, &hw, w->file);
        if (extra(&hf, user, err) && !hw.st) hw.st = err ? err->code : STAP_EIO;
    }
    CLOSE_DSET(w->dset);
    CLOSE_TYPE(w->ftype);
    CLOSE_TYPE(w->mtype);
    int st = stap_io_out_finish(&hw, &w->out, w->file);
    w->file = -1;
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    free(w);
    return st;
}
