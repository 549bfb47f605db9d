/* array_io.c: the steering's physical units in files — the looks (azimuth, elevation, the
 * target's Doppler) written as attributes of a result's /steering, and an input's /array
 * geometry (element positions, calibration) read and written (docs/file-format.md). */
#include "io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5x.h"

int stap_io_looks_check(const stap_look *looks, int B, const char *path, stap_error *err)
{
    if (!looks) return STAP_OK;
    int with = 0;
    for (int b = 0; b < B; b++) {
        if (!(fabs(looks[b].az_deg) <= 180 && fabs(looks[b].el_deg) <= 90))
            return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): look %d (az %g, el %g "
                             "degrees) is out of range", path, b, looks[b].az_deg, looks[b].el_deg);
        with += !isnan(looks[b].doppler);
    }
    if (with != 0 && with != B)
        return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): %d of the %d looks have a "
                         "Doppler: all or none", path, with, B);
    return STAP_OK;
}

void stap_io_w_looks(h5w *w, hid_t steering, const stap_look *looks, int B, int D,
                     const stap_radar_meta *m)
{
    if (!looks || w->st) return;
    double *v = malloc(sizeof(double) * B);
    int *bin = malloc(sizeof(int) * B);
    if (!v || !bin) {
        free(v);
        free(bin);
        w->st = stap_fail(w->err, STAP_ENOMEM, "out of memory writing '%s'", w->path);
        return;
    }
    for (int b = 0; b < B; b++) v[b] = looks[b].az_deg;
    stap_io_w_attr_n(w, steering, "az_deg", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
    for (int b = 0; b < B; b++) v[b] = looks[b].el_deg;
    stap_io_w_attr_n(w, steering, "el_deg", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
    if (!isnan(looks[0].doppler)) {
        for (int b = 0; b < B; b++) v[b] = looks[b].doppler;
        stap_io_w_attr_n(w, steering, "doppler_normalized", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
        for (int b = 0; b < B; b++) bin[b] = stap_doppler_bin(looks[b].doppler, D);
        stap_io_w_attr_n(w, steering, "doppler_bin", H5T_STD_I32LE, H5T_NATIVE_INT, B, bin);
        if (m && m->has_prf) {
            for (int b = 0; b < B; b++) v[b] = looks[b].doppler * m->prf_hz;
            stap_io_w_attr_n(w, steering, "doppler_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
        }
    }
    free(v);
    free(bin);
}

/* ---- /array: element positions and calibration (docs/file-format.md) ------------------- */

/* a reader's view of the file s has open, for the h5x helpers (nothing to close) */
static void src_view(h5_src *s, struct stap_h5_file *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->path, sizeof v->path, "%s", s->path);
    v->src = *s;
    v->file = s->file;
}

/* /array/position (C, 3) in `units` wavelengths or m (with /radar carrier_frequency_hz) */
static int read_position(struct stap_h5_file *v, stap_input *in, stap_error *err)
{
    const int C = in->channels;
    long long rows = 0;
    if (stap_h5x_dataset_rank(v, "/array/position", &rows) != 2 || rows != C)
        return stap_fail(err, STAP_EFORMAT, "'/array/position' in '%s' must be (%d, 3): x, y, z of each "
                         "of the cube's %d channels", v->path, C, C);
    char units[32] = "";
    int st;
    if (!stap_h5x_has_attr(v, "/array/position", "units"))
        return stap_fail(err, STAP_EFORMAT, "'/array/position' in '%s' has no `units` attribute "
                         "('wavelengths' or 'm')", v->path);
    if ((st = stap_h5x_get_string(v, "/array/position", "units", units, sizeof units, err))) return st;
    double scale = 1;
    if (!strcmp(units, "m")) {
        if (!in->meta.has_carrier)
            return stap_fail(err, STAP_EFORMAT, "'/array/position' in '%s' is in metres but the file has "
                             "no /radar carrier_frequency_hz to turn them into wavelengths", v->path);
        scale = in->meta.carrier_frequency_hz / H5IO_SPEED_OF_LIGHT;
    } else if (strcmp(units, "wavelengths") != 0) {
        return stap_fail(err, STAP_EFORMAT, "'/array/position' in '%s' has units '%s'; expected "
                         "'wavelengths' or 'm'", v->path, units);
    }
    const size_t shape[2] = {(size_t)C, 3};
    double *p = malloc(sizeof(double) * 3 * C);
    if (!p) return stap_fail(err, STAP_ENOMEM, "out of memory reading '/array/position'");
    if ((st = stap_h5x_get_doubles(v, "/array/position", 2, shape, p, err))) {
        free(p);
        return st;
    }
    for (int k = 0; k < 3 * C; k++) {
        if (!isfinite(p[k])) {
            free(p);
            return stap_fail(err, STAP_EFORMAT, "'/array/position' in '%s': element %d's %c is not "
                             "finite", v->path, k / 3, "xyz"[k % 3]);
        }
        p[k] *= scale;
    }
    in->array_position = p;
    return STAP_OK;
}

/* /array/calibration (C,) complex gains, none zero */
static int read_calibration(h5_src *s, stap_input *in, stap_error *err)
{
    static const char *const axes[] = {"channel"};
    const complex_spec spec = {"/array/calibration", 1, "(channels)", axes, H5IO_MAX_STEERING_BYTES};
    hsize_t dims[H5S_MAX_RANK];
    stap_cf32 *g = NULL;
    int st = stap_io_read_complex(s, &spec, dims, &g, err);
    if (st) return st;
    if (dims[0] != (hsize_t)in->channels) {
        free(g);
        return stap_fail(err, STAP_EFORMAT, "'/array/calibration' in '%s' has %llu gains for the cube's "
                         "%d channels", s->path, (unsigned long long)dims[0], in->channels);
    }
    for (int c = 0; c < in->channels; c++)
        if (g[c] == 0) {
            free(g);
            return stap_fail(err, STAP_EFORMAT, "'/array/calibration' in '%s': channel %d's gain is "
                             "zero", s->path, c);
        }
    in->array_calibration = g;
    return STAP_OK;
}

int stap_io_read_array(h5_src *s, stap_input *in, stap_error *err)
{
    struct stap_h5_file v;
    src_view(s, &v);
    int st = STAP_OK;
    if (stap_io_link_exists(s, "/array/position")) {
        if (in->meta.has_element_spacing)
            return stap_fail(err, STAP_EFORMAT, "'%s' has both /array/position and /array "
                             "element_spacing_wavelengths: give one", s->path);
        st = read_position(&v, in, err);
    }
    if (!st && stap_io_link_exists(s, "/array/calibration")) st = read_calibration(s, in, err);
    return st;
}

void stap_io_w_array(h5w *w, hid_t file, const stap_input *in)
{
    if (w->st || (!in->array_position && !in->array_calibration)) return;
    hid_t g = H5Lexists(file, "array", H5P_DEFAULT) > 0 ? H5Gopen2(file, "array", H5P_DEFAULT)
                                                        : stap_io_w_group(w, file, "array");
    if (g < 0) {
        stap_io_w_fail_h5(w, "group '/array'");
        return;
    }
    if (in->array_position) {
        const hsize_t d[2] = {(hsize_t)in->channels, 3};
        hid_t ds = -1;
        stap_io_w_dataset(w, g, "position", "/array/position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d,
                          in->array_position, &ds);
        if (ds >= 0) stap_io_w_attr_string(w, ds, "units", "wavelengths");
        CLOSE_DSET(ds);
    }
    if (in->array_calibration) {
        const hsize_t d[1] = {(hsize_t)in->channels};
        stap_io_w_cf32_keep(w, g, "calibration", "/array/calibration", 1, d, in->array_calibration, NULL);
    }
    CLOSE_GROUP(g);
}

int stap_array_read(const char *path, double carrier_hz, int *elements, double **position,
                    stap_cf32 **calibration, stap_error *err)
{
    *elements = 0;
    *position = NULL;
    *calibration = NULL;
    h5x *f = NULL;
    int st = stap_h5x_open(&f, path, err);
    if (st) return st;
    stap_input in;
    memset(&in, 0, sizeof in);
    long long rows = 0;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    const int has_pos = stap_io_link_exists(&f->src, "/array/position");
    const int has_cal = stap_io_link_exists(&f->src, "/array/calibration");
    if (!has_pos && !has_cal) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' has no /array/position or /array/calibration", path);
    } else if (has_pos) {
        stap_h5x_dataset_rank(f, "/array/position", &rows);
    } else {
        static const char *const axes[] = {"channel"};
        const complex_spec spec = {"/array/calibration", 1, "(channels)", axes, H5IO_MAX_STEERING_BYTES};
        hsize_t dims[H5S_MAX_RANK];
        stap_cf32 *g = NULL;
        if (!(st = stap_io_read_complex(&f->src, &spec, dims, &g, err))) rows = (long long)dims[0];
        free(g);
    }
    if (!st && (rows < 1 || rows > 4096))
        st = stap_fail(err, STAP_EFORMAT, "'%s': /array has %lld elements; expected 1 to 4096", path, rows);
    if (!st) {
        in.channels = (int)rows;
        st = stap_io_read_positive_attr(&f->src, "/radar", "carrier_frequency_hz", &in.meta.has_carrier,
                                        &in.meta.carrier_frequency_hz, err);
        if (!st && !in.meta.has_carrier && carrier_hz > 0) {
            in.meta.has_carrier = 1;
            in.meta.carrier_frequency_hz = carrier_hz;
        }
        if (!st) st = stap_io_read_positive_attr(&f->src, "/array", "element_spacing_wavelengths",
                                                 &in.meta.has_element_spacing,
                                                 &in.meta.element_spacing_wavelengths, err);
        if (!st) st = stap_io_read_array(&f->src, &in, err);
    }
    stap_io_quiet_end(&q);
    stap_h5x_close(f);
    if (st) {
        free(in.array_position);
        free(in.array_calibration);
        return st;
    }
    *elements = in.channels;
    *position = in.array_position;
    *calibration = in.array_calibration;
    return STAP_OK;
}
