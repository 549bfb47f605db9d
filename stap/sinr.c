/* sinr.c: the SINR-loss table of a run (sinr.h) — the run's result file it is computed
 * from, and the table's own file. The computation against a scene's truth is
 * datasets/scene_sinr.c (the scene generator is a layer above stap/). */
#include "sinr.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "h5io.h"
#include "h5out.h"

void stap_sinr_free(stap_sinr_result *r)
{
    if (!r) return;
    free(r->doppler);
    free(r->optimum_loss);
    free(r->algorithm_loss);
    free(r->rho);
    free(r->adaptive_loss);
    r->doppler = r->optimum_loss = r->algorithm_loss = r->rho = r->adaptive_loss = NULL;
}

double stap_sinr_rho_mean(const stap_sinr_result *r, int d, int b)
{
    double s = 0;
    for (int g = 0; g < r->S; g++) s += r->rho[((size_t)d * r->S + g) * r->B + b];
    return s / r->S;
}

double stap_sinr_adaptive_mean(const stap_sinr_result *r, int d, int b)
{
    double s = 0;
    for (int g = 0; g < r->S; g++) s += r->adaptive_loss[((size_t)d * r->S + g) * r->B + b];
    return s / r->S;
}

int stap_sinr_is_subcpi(const stap_sinr_result *r)
{
    return !strncmp(r->algorithm, "pre-doppler", 11) || !strncmp(r->algorithm, "adpca", 5) ||
           !strncmp(r->algorithm, "dpca", 4);
}

/* ---- files ------------------------------------------------------------------------ */

typedef struct {
    H5E_auto2_t fn;
    void *data;
} quiet_t;
static void quiet_begin(quiet_t *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
static void quiet_end(const quiet_t *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

static hid_t complex_mem_type(size_t size, hid_t part)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    if (t < 0) return t;
    H5Tinsert(t, "r", 0, part);
    H5Tinsert(t, "i", size / 2, part);
    return t;
}

/* Read the numeric attribute `name` of `obj` as a double. */
static int read_num_attr(hid_t obj, const char *name, double *v, const char *path,
                         const char *objname, rt_error *err)
{
    if (H5Aexists(obj, name) <= 0)
        return rt_fail(err, RT_EFORMAT, "%s: %s lacks attribute '%s'", path, objname, name);
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    herr_t st = a < 0 ? -1 : H5Aread(a, H5T_NATIVE_DOUBLE, v);
    if (a >= 0) H5Aclose(a);
    if (st < 0 || !isfinite(*v))
        return rt_fail(err, RT_EFORMAT, "%s: attribute '%s' of %s is not a finite number", path,
                       name, objname);
    return RT_OK;
}

/* Read a string attribute (variable or fixed length) into buf. */
static int read_str_attr(hid_t obj, const char *name, char *buf, size_t len, const char *path,
                         const char *objname, rt_error *err)
{
    if (H5Aexists(obj, name) <= 0)
        return rt_fail(err, RT_EFORMAT, "%s: %s lacks attribute '%s'", path, objname, name);
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), ft = -1, mt = -1;
    int st = RT_OK;
    if (a < 0 || (ft = H5Aget_type(a)) < 0 || H5Tget_class(ft) != H5T_STRING) {
        st = rt_fail(err, RT_EFORMAT, "%s: attribute '%s' of %s is not a string", path, name,
                     objname);
    } else if (H5Tis_variable_str(ft) > 0) {
        char *s = NULL;
        mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        if (H5Aread(a, mt, &s) < 0 || !s) st = rt_fail(err, RT_EFORMAT, "%s: cannot read '%s'", path, name);
        else snprintf(buf, len, "%s", s);
        if (s) H5free_memory(s);
    } else {
        size_t n = H5Tget_size(ft);
        char *s = calloc(n + 1, 1);
        mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, n + 1);
        if (!s || H5Aread(a, mt, s) < 0) st = rt_fail(err, RT_EFORMAT, "%s: cannot read '%s'", path, name);
        else snprintf(buf, len, "%s", s);
        free(s);
    }
    if (mt >= 0) H5Tclose(mt);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
    return st;
}

/* Read a {r,i} complex dataset of the expected shape into a new float array. */
static int read_cf32(hid_t f, const char *name, int rank, const hsize_t *expect, cf32 **out,
                     const char *path, rt_error *err)
{
    *out = NULL;
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
        return rt_fail(err, RT_EFORMAT, "%s: missing dataset %s", path, name);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    if (ds < 0) return rt_fail(err, RT_EFORMAT, "%s: cannot open %s", path, name);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[8] = {0};
    int r = H5Sget_simple_extent_ndims(sp);
    if (r == rank) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    size_t n = 1;
    int ok = r == rank;
    for (int i = 0; ok && i < rank; i++) {
        ok = dims[i] == expect[i];
        n *= (size_t)expect[i];
    }
    if (!ok) {
        H5Dclose(ds);
        return rt_fail(err, RT_EFORMAT, "%s: dataset %s does not have the shape its /config "
                       "implies", path, name);
    }
    cf32 *v = malloc(sizeof(cf32) * (n ? n : 1));
    hid_t mt = complex_mem_type(sizeof(cf32), H5T_NATIVE_FLOAT);
    int st = RT_OK;
    if (!v) st = rt_fail(err, RT_ENOMEM, "%s: out of memory for %s", path, name);
    else if (mt < 0 || H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        st = rt_fail(err, RT_EFORMAT, "%s: dataset %s is not a {r,i} complex array", path, name);
    if (mt >= 0) H5Tclose(mt);
    H5Dclose(ds);
    if (st) free(v);
    else *out = v;
    return st;
}

void stap_run_free(stap_run_data *rd)
{
    if (!rd) return;
    free(rd->steering);
    free(rd->weights);
    free(rd->output);
    free(rd->detections);
    memset(rd, 0, sizeof *rd);
}

static int parse_window_string(const char *s, stap_config *c)
{
    if (!strcmp(s, "none")) c->window = STAP_WINDOW_NONE;
    else if (!strcmp(s, "hann")) c->window = STAP_WINDOW_HANN;
    else if (!strncmp(s, "chebyshev:", 10)) {
        char *end;
        c->window = STAP_WINDOW_CHEBYSHEV;
        c->chebyshev_db = strtod(s + 10, &end);
        if (*end || !(c->chebyshev_db > 0)) return -1;
    } else return -1;
    return 0;
}

int stap_run_read(const char *path, int want_output, stap_run_data *rd, rt_error *err)
{
    memset(rd, 0, sizeof *rd);
    quiet_t q;
    quiet_begin(&q);
    int st = RT_OK;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g = -1;
    if (f < 0) {
        st = rt_fail(err, RT_EIO, "%s: cannot open as HDF5", path);
        goto out;
    }
    if (H5Lexists(f, "/config", H5P_DEFAULT) <= 0) {
        st = rt_fail(err, RT_EFORMAT, "%s: no /config group (not a result of 'rtstap run')", path);
        goto out;
    }
    g = H5Gopen2(f, "/config", H5P_DEFAULT);
    stap_config *c = &rd->cfg;
    stap_config_defaults(c);
    static const char *const inames[] = {"channels", "pulses", "range_gates", "doppler_bins",
                                         "doppler_order", "segments", "training", "beams"};
    int *idst[] = {&c->channels, &c->pulses, &c->range_gates, &c->doppler_bins,
                   &c->doppler_order, &c->segments, &c->training, &c->beams};
    for (int i = 0; i < 8; i++) {
        double v;
        if ((st = read_num_attr(g, inames[i], &v, path, "/config", err))) goto out;
        if (v < 0 || v > 1e9 || v != floor(v)) {
            st = rt_fail(err, RT_EFORMAT, "%s: /config attribute '%s' = %g is not a count",
                         path, inames[i], v);
            goto out;
        }
        *idst[i] = (int)v;
    }
    if ((st = read_num_attr(g, "loading", &c->loading, path, "/config", err)) ||
        (st = read_num_attr(g, "element_spacing_wavelengths", &c->element_spacing, path,
                            "/config", err)))
        goto out;
    char win[128];
    if ((st = read_str_attr(g, "window", win, sizeof win, path, "/config", err))) goto out;
    if (parse_window_string(win, c)) {
        st = rt_fail(err, RT_EFORMAT, "%s: /config window '%s' is not none, hann or "
                     "chebyshev:DB", path, win);
        goto out;
    }
    /* v1.1 files before the sliding window have no training_window: segments */
    if (H5Aexists(g, "training_window") > 0) {
        char tw[32];
        if ((st = read_str_attr(g, "training_window", tw, sizeof tw, path, "/config", err)))
            goto out;
        if (stap_training_window_parse(tw, &c->training_window, err)) {
            st = RT_EFORMAT;
            rt_prefix(err, "%s: /config training_window", path);
            goto out;
        }
        if (c->training_window == STAP_TRAINING_SLIDING) {
            double b, gd;
            if ((st = read_num_attr(g, "block", &b, path, "/config", err)) ||
                (st = read_num_attr(g, "guard", &gd, path, "/config", err)))
                goto out;
            if (b < 1 || b > 1e9 || b != floor(b) || gd < 0 || gd > 1e9 || gd != floor(gd)) {
                st = rt_fail(err, RT_EFORMAT, "%s: /config block %g / guard %g are not counts",
                             path, b, gd);
                goto out;
            }
            c->block = (int)b;
            c->guard = (int)gd;
        }
    }
    /* files before JDL have no algorithm: post-Doppler */
    if (H5Aexists(g, "algorithm") > 0) {
        char al[32];
        if ((st = read_str_attr(g, "algorithm", al, sizeof al, path, "/config", err))) goto out;
        if (stap_algorithm_parse(al, &c->algorithm, err)) {
            st = RT_EFORMAT;
            rt_prefix(err, "%s: /config algorithm", path);
            goto out;
        }
        if (c->algorithm == STAP_ALGORITHM_JDL) {
            double na;
            if ((st = read_num_attr(g, "angle_bins", &na, path, "/config", err))) goto out;
            if (na < 1 || na > 1e6 || na != floor(na)) {
                st = rt_fail(err, RT_EFORMAT, "%s: /config angle_bins %g is not a count", path, na);
                goto out;
            }
            c->angle_bins = (int)na;
        }
        if (c->algorithm == STAP_ALGORITHM_DPCA) {
            double sh;
            if ((st = read_num_attr(g, "dpca_shift", &sh, path, "/config", err))) goto out;
            if (fabs(sh) > 1e6 || sh != floor(sh) || sh == 0) {
                st = rt_fail(err, RT_EFORMAT, "%s: /config dpca_shift %g is not a nonzero whole "
                             "number", path, sh);
                goto out;
            }
            c->dpca_shift = (int)sh;
        }
    }
    c->backend = LA_BACKEND_CPU;
    rd->beams = c->beams;
    {
        stap_config chk = *c;
        if ((st = stap_config_validate(&chk, 1, rd->beams, stap_dof(c), err))) {
            rt_prefix(err, "%s: /config", path);
            goto out;
        }
        if (chk.segments != c->segments) { /* sliding: the blocks give the segments */
            st = rt_fail(err, RT_EFORMAT, "%s: /config segments %d, but %d range gates in "
                         "sliding blocks of %d make %d", path, c->segments, c->range_gates,
                         c->block, chk.segments);
            goto out;
        }
    }
    const int N = stap_dof(c);
    const hsize_t sd[2] = {(hsize_t)rd->beams, (hsize_t)N};
    const hsize_t wd[4] = {(hsize_t)c->doppler_bins, (hsize_t)c->segments, (hsize_t)rd->beams,
                           (hsize_t)N};
    const hsize_t od[3] = {(hsize_t)rd->beams, (hsize_t)c->doppler_bins,
                           (hsize_t)c->range_gates};
    if ((st = read_cf32(f, "/steering", 2, sd, &rd->steering, path, err)) ||
        (st = read_cf32(f, "/weights", 4, wd, &rd->weights, path, err)))
        goto out;
    if (want_output && (st = read_cf32(f, "/output/iq", 3, od, &rd->output, path, err))) goto out;
    if (H5Lexists(f, "/radar", H5P_DEFAULT) > 0) {
        hid_t rg = H5Gopen2(f, "/radar", H5P_DEFAULT);
        if (rg >= 0 && H5Aexists(rg, "prf_hz") > 0) {
            rt_error e2;
            if (read_num_attr(rg, "prf_hz", &rd->prf_hz, path, "/radar", &e2) == RT_OK &&
                rd->prf_hz > 0)
                rd->has_prf = 1;
        }
        if (rg >= 0) H5Gclose(rg);
    }
    if (H5Lexists(f, "/detections", H5P_DEFAULT) > 0) {
        hid_t ds = H5Dopen2(f, "/detections", H5P_DEFAULT);
        hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
        hsize_t n = 0;
        if (sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1) H5Sget_simple_extent_dims(sp, &n, NULL);
        hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
        H5Tinsert(mt, "beam", offsetof(stap_detection, beam), H5T_NATIVE_INT);
        H5Tinsert(mt, "doppler_bin", offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT);
        H5Tinsert(mt, "range_cell", offsetof(stap_detection, range_cell), H5T_NATIVE_INT);
        H5Tinsert(mt, "power", offsetof(stap_detection, power), H5T_NATIVE_FLOAT);
        H5Tinsert(mt, "snr_db", offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT);
        rd->detections = malloc(sizeof(stap_detection) * (n ? n : 1));
        if (ds < 0 || sp < 0 || !rd->detections ||
            (n > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rd->detections) < 0))
            st = rt_fail(err, RT_EFORMAT, "%s: /detections is not a table of (beam, doppler_bin, "
                         "range_cell, power, snr_db)", path);
        H5Tclose(mt);
        if (sp >= 0) H5Sclose(sp);
        if (ds >= 0) H5Dclose(ds);
        if (st) goto out;
        rd->have_detections = 1;
        rd->detection_count = (size_t)n;
        for (size_t i = 0; i < rd->detection_count; i++) {
            const stap_detection *d = &rd->detections[i];
            if (d->beam < 0 || d->beam >= rd->beams || d->doppler_bin < 0 ||
                d->doppler_bin >= c->doppler_bins || d->range_cell < 0 ||
                d->range_cell >= c->range_gates) {
                st = rt_fail(err, RT_EFORMAT, "%s: /detections row %zu lies outside the output",
                             path, i);
                goto out;
            }
        }
    }
out:
    if (g >= 0) H5Gclose(g);
    if (f >= 0) H5Fclose(f);
    quiet_end(&q);
    if (st) stap_run_free(rd);
    return st;
}

/* ---- the SINR file ------------------------------------------------------------------ */

static int w_attr(hid_t loc, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = a < 0 ? -1 : H5Awrite(a, type, v);
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    return st < 0;
}
static int w_attr_d(hid_t loc, const char *name, double v) { return w_attr(loc, name, H5T_NATIVE_DOUBLE, &v); }
static int w_attr_i(hid_t loc, const char *name, long long v) { return w_attr(loc, name, H5T_NATIVE_LLONG, &v); }
static int w_attr_s(hid_t loc, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int st = w_attr(loc, name, t, &s);
    H5Tclose(t);
    return st;
}
static int w_dset(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *v)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    return st < 0;
}

static double to_db(double x) { return 10.0 * log10(x > 1e-300 ? x : 1e-300); }

int stap_sinr_write(const char *path, const stap_sinr_result *r, const char *scene_name,
                    const char *run_name, rt_error *err)
{
    return stap_sinr_write_mode(path, r, scene_name, run_name, RT_WRITE_NEW, err);
}

int stap_sinr_write_mode(const char *path, const stap_sinr_result *r, const char *scene_name,
                         const char *run_name, rt_write_mode mode, rt_error *err)
{
    h5_out o;
    if (h5_out_begin(&o, path, mode, err)) return err ? err->code : RT_EIO;
    quiet_t q;
    quiet_begin(&q);
    const size_t DB = (size_t)r->D * r->B, DSB = DB * r->S;
    double *hz = malloc(sizeof(double) * r->D), *lo = malloc(sizeof(double) * DB);
    double *lg = malloc(sizeof(double) * DB), *la = malloc(sizeof(double) * DSB);
    hid_t f = -1, g = -1;
    const int oom = !hz || !lo || !lg || !la;
    int bad = oom, said = oom; /* said: err holds the failure already */
    if (oom) rt_fail(err, RT_ENOMEM, "out of memory writing '%s'", path);
    if (!bad) {
        for (int d = 0; d < r->D; d++) hz[d] = r->doppler[d] * r->prf_hz;
        for (size_t i = 0; i < DB; i++) lo[i] = to_db(r->optimum_loss[i]);
        for (size_t i = 0; i < DB; i++) lg[i] = to_db(r->algorithm_loss[i]);
        for (size_t i = 0; i < DSB; i++) la[i] = to_db(r->adaptive_loss[i]);
        f = h5_out_create(&o, err);
        /* every dataset's bytes allocated before HDF5 writes them (h5out.h) */
        said = bad = f < 0 || h5_out_reserve(&o, f, sizeof(double) * (2 * r->D + 2 * DB + 2 * DSB), err);
    }
    if (!bad) {
        g = H5Gcreate2(f, "sinr", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        bad = g < 0;
    }
    if (!bad) {
        hsize_t d1[1] = {(hsize_t)r->D}, d2[2] = {(hsize_t)r->D, (hsize_t)r->B};
        hsize_t d3[3] = {(hsize_t)r->D, (hsize_t)r->S, (hsize_t)r->B};
        bad |= w_dset(g, "doppler_normalized", 1, d1, r->doppler);
        if (r->prf_hz > 0) bad |= w_dset(g, "doppler_hz", 1, d1, hz);
        bad |= w_dset(g, "optimum_loss_db", 2, d2, lo);
        bad |= w_dset(g, "algorithm_loss_db", 2, d2, lg);
        bad |= w_dset(g, "rho", 3, d3, r->rho);
        bad |= w_dset(g, "adaptive_loss_db", 3, d3, la);
        bad |= w_attr_s(g, "scene", scene_name ? scene_name : "");
        bad |= w_attr_s(g, "run", run_name ? run_name : "");
        bad |= w_attr_s(g, "definition",
                        "optimum_loss = SINR_opt / SNR_0 (Ward TR-1015), algorithm_loss = "
                        "SINR_alg / SNR_0 (the algorithm's best weights: T (T^H R T)^-1 T^H t), "
                        "rho = SINR(w) / SINR_alg, adaptive_loss = SINR(w) / SNR_0 (= "
                        "algorithm_loss * rho); target in the beam's look direction "
                        "at the bin's centre Doppler; true covariance of the Doppler-domain "
                        "snapshots from /truth of the scene. Pre-Doppler and ADPCA: SINR on the "
                        "staggered snapshot z_d, algorithm_loss of R_sub^-1 s (R_sub: one "
                        "sub-CPI), rho = |w^H s|^2 / (w^H R_sub w s^H R_sub^-1 s) in the "
                        "sub-CPI domain, adaptive_loss = SINR_z(w) / SNR_0");
        bad |= w_attr_i(g, "doppler_bins", r->D);
        bad |= w_attr_i(g, "segments", r->S);
        bad |= w_attr_i(g, "beams", r->B);
        bad |= w_attr_i(g, "dof", r->N);
        bad |= w_attr_i(g, "adapted_dof", r->Nt);
        bad |= w_attr_s(g, "algorithm", r->algorithm);
        bad |= w_attr_i(g, "training", r->K);
        bad |= w_attr_i(g, "channels", r->C);
        bad |= w_attr_i(g, "pulses", r->P);
        bad |= w_attr_i(g, "doppler_order", r->Q);
        bad |= w_attr_s(g, "window", r->window);
        bad |= w_attr_s(g, "training_window", r->training);
        bad |= w_attr_i(g, "summary_beam", r->beam);
        bad |= w_attr_d(g, "prf_hz", r->prf_hz);
        bad |= w_attr_i(g, "rho_count", (long long)r->count);
        bad |= w_attr_d(g, "rho_mean", r->rho_mean);
        bad |= w_attr_d(g, "rho_sd", r->rho_sd);
        bad |= w_attr_d(g, "rmb_mean", r->rmb_mean);
        bad |= w_attr_d(g, "rmb_sd", r->rmb_sd);
        bad |= w_attr_d(g, "rho_se", r->rho_se);
        bad |= w_attr_d(g, "z", r->z);
        bad |= w_attr_i(g, "rmb_applicable", r->rmb_applicable);
    }
    char detail[256];
    if (bad && !said) /* the HDF5 call that failed, in the system's words */
        rt_fail(err, RT_EIO, "cannot write '%s': %s", path, h5_error_detail(detail, sizeof detail));
    if (g >= 0) H5Gclose(g);
    free(hz);
    free(lo);
    free(lg);
    free(la);
    int st = h5_out_finish(&o, f, bad, err);
    quiet_end(&q);
    return st;
}

static int r_dset(hid_t g, const char *name, int rank, const hsize_t *expect, double *v,
                  const char *path, rt_error *err)
{
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    if (ds < 0) return rt_fail(err, RT_EFORMAT, "%s: missing /sinr/%s", path, name);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[4] = {0};
    int ok = H5Sget_simple_extent_ndims(sp) == rank;
    if (ok) H5Sget_simple_extent_dims(sp, dims, NULL);
    for (int i = 0; ok && i < rank; i++) ok = dims[i] == expect[i];
    H5Sclose(sp);
    herr_t st = ok ? H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) : -1;
    H5Dclose(ds);
    return st < 0 ? rt_fail(err, RT_EFORMAT, "%s: /sinr/%s has the wrong shape or type", path,
                            name)
                  : RT_OK;
}

int stap_sinr_read(const char *path, stap_sinr_result *r, rt_error *err)
{
    memset(r, 0, sizeof *r);
    quiet_t q;
    quiet_begin(&q);
    int st = RT_OK;
    double *lo = NULL;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g = -1;
    if (f < 0) {
        st = rt_fail(err, RT_EIO, "%s: cannot open as HDF5", path);
        goto out;
    }
    if (H5Lexists(f, "/sinr", H5P_DEFAULT) <= 0) {
        st = rt_fail(err, RT_EFORMAT, "%s: no /sinr group (not a file of 'rtstap sinr')", path);
        goto out;
    }
    g = H5Gopen2(f, "/sinr", H5P_DEFAULT);
    double v[7];
    static const char *const names[] = {"doppler_bins", "segments", "beams", "dof", "training",
                                        "channels", "pulses"};
    for (int i = 0; i < 7; i++) {
        if ((st = read_num_attr(g, names[i], &v[i], path, "/sinr", err))) goto out;
        if (!(v[i] >= 1 && v[i] <= 1e8)) {
            st = rt_fail(err, RT_EFORMAT, "%s: /sinr attribute %s out of range", path, names[i]);
            goto out;
        }
    }
    r->D = (int)v[0];
    r->S = (int)v[1];
    r->B = (int)v[2];
    r->N = (int)v[3];
    r->K = (int)v[4];
    r->C = (int)v[5];
    r->P = (int)v[6];
    /* recorded since the tables were compared on one plot; older tables: Q from N / C */
    r->Q = r->N % r->C == 0 ? r->N / r->C : 0;
    if (H5Aexists(g, "doppler_order") > 0) {
        double q;
        if ((st = read_num_attr(g, "doppler_order", &q, path, "/sinr", err))) goto out;
        if (q != r->N / r->C || r->N % r->C) {
            st = rt_fail(err, RT_EFORMAT, "%s: /sinr doppler_order %g does not divide dof %d "
                         "into channels %d", path, q, r->N, r->C);
            goto out;
        }
        r->Q = (int)q;
    }
    if (H5Aexists(g, "window") > 0 &&
        (st = read_str_attr(g, "window", r->window, sizeof r->window, path, "/sinr", err)))
        goto out;
    /* recorded since JDL; older tables are post-Doppler's, adapting every DOF */
    r->Nt = r->N;
    if (H5Aexists(g, "adapted_dof") > 0) {
        double nt;
        if ((st = read_num_attr(g, "adapted_dof", &nt, path, "/sinr", err))) goto out;
        if (!(nt >= 1 && nt <= r->N) || nt != floor(nt)) {
            st = rt_fail(err, RT_EFORMAT, "%s: /sinr adapted_dof %g is not between 1 and dof %d",
                         path, nt, r->N);
            goto out;
        }
        r->Nt = (int)nt;
    }
    if (H5Aexists(g, "algorithm") > 0 &&
        (st = read_str_attr(g, "algorithm", r->algorithm, sizeof r->algorithm, path, "/sinr", err)))
        goto out;
    if (H5Aexists(g, "training_window") > 0 &&
        (st = read_str_attr(g, "training_window", r->training, sizeof r->training, path,
                            "/sinr", err)))
        goto out;
    double x;
    if ((st = read_num_attr(g, "summary_beam", &x, path, "/sinr", err))) goto out;
    r->beam = (int)x;
    if ((st = read_num_attr(g, "prf_hz", &r->prf_hz, path, "/sinr", err)) ||
        (st = read_num_attr(g, "rho_count", &x, path, "/sinr", err)))
        goto out;
    r->count = (size_t)x;
    if ((st = read_num_attr(g, "rho_mean", &r->rho_mean, path, "/sinr", err)) ||
        (st = read_num_attr(g, "rho_sd", &r->rho_sd, path, "/sinr", err)) ||
        (st = read_num_attr(g, "rho_se", &r->rho_se, path, "/sinr", err)) ||
        (st = read_num_attr(g, "z", &r->z, path, "/sinr", err)) ||
        (st = read_num_attr(g, "rmb_applicable", &x, path, "/sinr", err)))
        goto out;
    r->rmb_applicable = (int)x;
    /* rmb_mean / rmb_sd are NaN when the law does not apply: read them leniently */
    {
        hid_t a;
        r->rmb_mean = r->rmb_sd = NAN;
        if ((a = H5Aopen(g, "rmb_mean", H5P_DEFAULT)) >= 0) {
            H5Aread(a, H5T_NATIVE_DOUBLE, &r->rmb_mean);
            H5Aclose(a);
        }
        if ((a = H5Aopen(g, "rmb_sd", H5P_DEFAULT)) >= 0) {
            H5Aread(a, H5T_NATIVE_DOUBLE, &r->rmb_sd);
            H5Aclose(a);
        }
    }
    const size_t DB = (size_t)r->D * r->B;
    r->doppler = malloc(sizeof(double) * r->D);
    r->optimum_loss = malloc(sizeof(double) * DB);
    r->algorithm_loss = malloc(sizeof(double) * DB);
    r->rho = malloc(sizeof(double) * DB * r->S);
    r->adaptive_loss = malloc(sizeof(double) * DB * r->S);
    if (!r->doppler || !r->optimum_loss || !r->algorithm_loss || !r->rho || !r->adaptive_loss) {
        st = rt_fail(err, RT_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    hsize_t d1[1] = {(hsize_t)r->D}, d2[2] = {(hsize_t)r->D, (hsize_t)r->B};
    hsize_t d3[3] = {(hsize_t)r->D, (hsize_t)r->S, (hsize_t)r->B};
    if ((st = r_dset(g, "doppler_normalized", 1, d1, r->doppler, path, err)) ||
        (st = r_dset(g, "optimum_loss_db", 2, d2, r->optimum_loss, path, err)) ||
        (st = r_dset(g, "rho", 3, d3, r->rho, path, err)))
        goto out;
    if (H5Lexists(g, "algorithm_loss_db", H5P_DEFAULT) > 0) {
        if ((st = r_dset(g, "algorithm_loss_db", 2, d2, r->algorithm_loss, path, err))) goto out;
    } else {
        memcpy(r->algorithm_loss, r->optimum_loss, sizeof(double) * DB);
    }
    for (size_t i = 0; i < DB; i++) r->optimum_loss[i] = pow(10.0, r->optimum_loss[i] / 10.0);
    for (size_t i = 0; i < DB; i++) r->algorithm_loss[i] = pow(10.0, r->algorithm_loss[i] / 10.0);
    /* written by every version; absent only from hand-made tables: L_alg rho */
    if (H5Lexists(g, "adaptive_loss_db", H5P_DEFAULT) > 0) {
        if ((st = r_dset(g, "adaptive_loss_db", 3, d3, r->adaptive_loss, path, err))) goto out;
        for (size_t i = 0; i < DB * r->S; i++)
            r->adaptive_loss[i] = pow(10.0, r->adaptive_loss[i] / 10.0);
    } else {
        for (int d = 0; d < r->D; d++)
            for (int s = 0; s < r->S; s++)
                for (int b = 0; b < r->B; b++) {
                    const size_t k = ((size_t)d * r->S + s) * r->B + b;
                    r->adaptive_loss[k] = r->algorithm_loss[(size_t)d * r->B + b] * r->rho[k];
                }
    }
out:
    free(lo);
    if (g >= 0) H5Gclose(g);
    if (f >= 0) H5Fclose(f);
    quiet_end(&q);
    if (st) stap_sinr_free(r);
    return st;
}
