/* result.c: result files (h5io.h) — one CPI's (stap_result_write) and a recording's,
 * CPI by CPI (stap_result_writer): the datasets, /config, /timing, /axes and their scales. */
#include "io_internal.h"
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5_hl.h>

static void window_string(const stap_config *c, char *buf, size_t len)
{
    switch (c->window) {
    case STAP_WINDOW_HANN: snprintf(buf, len, "hann"); break;
    case STAP_WINDOW_CHEBYSHEV: snprintf(buf, len, "chebyshev:%g", c->chebyshev_db); break;
    default: snprintf(buf, len, "none"); break;
    }
}

static const char detection_units[] =
    "beam, doppler_bin, range_cell: indices into /axes (see /output/iq); power: |y|^2 in the "
    "input samples' units squared; snr_db: dB over the CFAR's noise estimate (adaptive "
    "detectors: the AMF statistic in dB); statistic > threshold: the detector's test (CFAR: "
    "power over the window statistic against alpha; amf, kelly, ace: docs/processing.md)";

static void w_config(h5w *w, hid_t file, const stap_result *res, int D)
{
    const stap_config *c = res->cfg;
    hid_t g = stap_io_w_group(w, file, "config");
    if (g < 0) return;
    char win[64];
    window_string(c, win, sizeof win);
    stap_io_w_attr_int(w, g, "channels", c->channels);
    stap_io_w_attr_int(w, g, "pulses", c->pulses);
    stap_io_w_attr_int(w, g, "range_gates", c->range_gates);
    stap_io_w_attr_int(w, g, "doppler_bins", D);
    stap_io_w_attr_int(w, g, "doppler_order", c->doppler_order);
    stap_io_w_attr_int(w, g, "segments", c->segments);
    /* DPCA trains nothing: 0 (not the preset's K) */
    stap_io_w_attr_int(w, g, "training", stap_algorithm_traits(c) & STAP_TRAIT_FIXED ? 0 : c->training);
    stap_io_w_attr_string(w, g, "training_window", stap_training_window_name(c->training_window));
    if (c->training_window == STAP_TRAINING_SLIDING) {
        stap_io_w_attr_int(w, g, "block", c->block);
        stap_io_w_attr_int(w, g, "guard", c->guard);
    }
    stap_io_w_attr_string(w, g, "algorithm", stap_algorithm_name(c->algorithm));
    int pv; /* the algorithm's own parameter (angle_bins, dpca_shift), if it has one */
    const char *pn = stap_algorithm_param(c, &pv);
    if (pn) stap_io_w_attr_int(w, g, pn, pv);
    stap_io_w_attr_int(w, g, "beams", res->beams);
    stap_io_w_attr_double(w, g, "loading", c->loading);
    stap_io_w_attr_string(w, g, "window", win);
    stap_io_w_attr_double(w, g, "element_spacing_wavelengths", c->element_spacing);
    stap_io_w_attr_string(w, g, "backend", stap_backend_name(c->backend));
    stap_io_w_attr_string(w, g, "qr", stap_qr_method_name(c->qr));
    if (res->qr_counted) {
        stap_io_w_attr(w, g, "qr_cholqr2", H5T_STD_I64LE, H5T_NATIVE_LLONG, &res->qr_cholqr2);
        stap_io_w_attr(w, g, "qr_guarded", H5T_STD_I64LE, H5T_NATIVE_LLONG, &res->qr_guarded);
    }
    /* what ran: the engine's threads (0 on a GPU), the device and the engine's stages */
    stap_io_w_attr_int(w, g, "threads", res->engine ? stap_engine_threads(res->engine) : c->threads);
    stap_io_w_attr_int(w, g, "threads_requested", c->threads);
    if (res->engine) {
        stap_io_w_attr_string(w, g, "device", stap_engine_device(res->engine));
        stap_io_w_attr_string(w, g, "engine", stap_engine_describe(res->engine));
    }
    stap_io_w_attr_string(w, g, "input", res->input_name ? res->input_name : "");
    if (res->input_samples) stap_io_w_attr_string(w, g, "input_samples", res->input_samples);
    stap_io_w_attr_int(w, g, "schema_version", H5IO_SCHEMA_VERSION);
    stap_io_w_attr_string(w, g, "rtstap_version", RTSTAP_VERSION);
    stap_io_w_attr_string(w, g, "rtstap_commit", RTSTAP_COMMIT);
    CLOSE_GROUP(g);
}

static void w_timing(h5w *w, hid_t file, const stap_result *res)
{
    hid_t g = stap_io_w_group(w, file, "timing");
    if (g < 0) return;
    for (int s = 0; s < STAP_STAGE_COUNT; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s_ms", stap_stage_names[s]);
        stap_io_w_attr_double(w, g, name, res->timing_ms ? res->timing_ms[s] : 0.0);
    }
    stap_io_w_attr_double(w, g, "read_ms", res->read_ms);
    stap_io_w_attr_double(w, g, "total_ms", res->total_ms);
    stap_io_w_attr_string(w, g, "backend", res->backend_name ? res->backend_name
                                                     : stap_backend_name(res->cfg->backend));
    CLOSE_GROUP(g);
}

static void w_detections(h5w *w, hid_t file, const stap_result *res)
{
    if (w->st) return;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
    hid_t ft = H5Tcreate(H5T_COMPOUND, 7 * 4);
    if (mt < 0 || ft < 0 ||
        H5Tinsert(mt, "beam", offsetof(stap_detection, beam), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "doppler_bin", offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "range_cell", offsetof(stap_detection, range_cell), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "power", offsetof(stap_detection, power), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(mt, "snr_db", offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(mt, "statistic", offsetof(stap_detection, statistic), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(mt, "threshold", offsetof(stap_detection, threshold), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(ft, "beam", 0, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "doppler_bin", 4, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "range_cell", 8, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "power", 12, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(ft, "snr_db", 16, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(ft, "statistic", 20, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(ft, "threshold", 24, H5T_IEEE_F32LE) < 0) {
        stap_io_w_fail_h5(w, "the detection type");
    } else {
        const hsize_t n = (hsize_t)res->detection_count;
        hid_t dset;
        stap_io_w_dataset(w, file, "detections", "/detections", ft, mt, 1, &n, res->detections, &dset);
        if (!w->st) stap_io_w_attr_string(w, dset, "cfar", res->cfar_description);
        if (!w->st) stap_io_w_attr_string(w, dset, "units", detection_units);
        CLOSE_DSET(dset);
    }
    CLOSE_TYPE(mt);
    CLOSE_TYPE(ft);
}

/* ---- the axes of a result (schema v1.1): dimension scales in /axes, attached to every
 * dataset's axes, and every axis labelled ------------------------------------------------ */

typedef struct result_axes {
    hid_t doppler, segment, beam, range; /* scale datasets, -1 when not made */
} result_axes;

/* A 1-D scale dataset /axes/<name> of n doubles (or ints when iv), with units and a
 * description; -1 after a failure (recorded in w). */
static hid_t w_scale(h5w *w, hid_t g, const char *name, hsize_t n, const double *dv, const int *iv,
                     const char *units, const char *desc)
{
    hid_t d = -1;
    char full[64];
    snprintf(full, sizeof full, "/axes/%s", name);
    if (dv) stap_io_w_dataset(w, g, name, full, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, dv, &d);
    else stap_io_w_dataset(w, g, name, full, H5T_STD_I32LE, H5T_NATIVE_INT, 1, &n, iv, &d);
    if (d < 0) return -1;
    stap_io_w_attr_string(w, d, "units", units);
    stap_io_w_attr_string(w, d, "description", desc);
    if (!w->st && H5DSset_scale(d, name) < 0) stap_io_w_fail_h5(w, full);
    return d;
}

static void w_axes(h5w *w, hid_t file, const stap_result *res, int D, result_axes *ax)
{
    ax->doppler = ax->segment = ax->beam = ax->range = -1;
    const stap_config *c = res->cfg;
    const int S = c->segments, B = res->beams, R = c->range_gates, L = R / S;
    const stap_radar_meta *m = res->meta;
    const int nmax = D > R ? (D > B ? D : B) : (R > B ? R : B);
    double *dv = malloc(sizeof(double) * (size_t)nmax);
    int *iv = malloc(sizeof(int) * (size_t)(nmax > S ? nmax : S));
    hid_t g = stap_io_w_group(w, file, "axes");
    if (!dv || !iv) {
        if (!w->st) w->st = stap_fail(w->err, STAP_ENOMEM, "out of memory for the axes of '%s'", w->path);
    } else if (g >= 0) {
        /* Doppler bin d: d/D cycles per pulse, taken in [-1/2, 1/2) */
        const int hz = m && m->has_prf;
        for (int d = 0; d < D; d++) {
            double f = (double)d / D;
            dv[d] = (f >= 0.5 ? f - 1 : f) * (hz ? m->prf_hz : 1);
        }
        ax->doppler = w_scale(w, g, hz ? "doppler_hz" : "doppler_normalized", (hsize_t)D, dv, NULL,
                              hz ? "Hz" : "cycles/pulse",
                              hz ? "Doppler bin d: d/D cycles per pulse in [-1/2, 1/2), times "
                                   "/radar prf_hz"
                                 : "Doppler bin d: d/D cycles per pulse in [-1/2, 1/2) (no PRF "
                                   "known)");
        for (int s = 0; s < S; s++) iv[s] = s * L;
        ax->segment = w_scale(w, g, "segment_start_cell", (hsize_t)S, NULL, iv, "range cell",
                              c->training_window == STAP_TRAINING_SLIDING
                                  ? "the first range cell of sliding block s: s * /config block"
                                  : "the first range cell of segment s: s * R / S");
        if (res->engine && !stap_engine_custom_steering(res->engine)) {
            for (int b = 0; b < B; b++) dv[b] = stap_beam_u(b, B);
            ax->beam = w_scale(w, g, "beam_u", (hsize_t)B, dv, NULL, "1",
                               "the default beams: u = sin(angle from broadside) = -1 + (2b+1)/B");
        } else {
            for (int b = 0; b < B; b++) iv[b] = b;
            ax->beam = w_scale(w, g, "beam", (hsize_t)B, NULL, iv, "1",
                               "beam index: row of /steering (the input's steering vectors)");
        }
        const int meters = m && m->has_sample_rate;
        if (meters) {
            const double dr = H5IO_SPEED_OF_LIGHT / (2 * m->sample_rate_hz);
            for (int r = 0; r < R; r++) dv[r] = r * dr;
            ax->range = w_scale(w, g, "range_m", (hsize_t)R, dv, NULL, "m",
                                "range from the first gate: cell * c / (2 /radar sample_rate_hz)");
        } else {
            for (int r = 0; r < R; r++) iv[r] = r;
            ax->range = w_scale(w, g, "range_cell", (hsize_t)R, NULL, iv, "range cell",
                                "range cell index (no sample rate known)");
        }
    }
    CLOSE_GROUP(g);
    free(dv);
    free(iv);
}

static void w_axes_close(result_axes *ax)
{
    CLOSE_DSET(ax->doppler);
    CLOSE_DSET(ax->segment);
    CLOSE_DSET(ax->beam);
    CLOSE_DSET(ax->range);
}

/* Label the axes of dset (names[k], NULL: none) and attach scales[k] (-1: none); `units`. */
static void w_describe(h5w *w, hid_t dset, const char *what, int rank, const char *const *names,
                       const hid_t *scales, const char *units)
{
    for (int k = 0; k < rank && !w->st && dset >= 0; k++) {
        if ((names[k] && H5DSset_label(dset, (unsigned)k, names[k]) < 0) ||
            (scales[k] >= 0 && H5DSattach_scale(dset, scales[k], (unsigned)k) < 0))
            stap_io_w_fail_h5(w, what);
    }
    if (dset >= 0 && units) stap_io_w_attr_string(w, dset, "units", units);
}

/* The result datasets' axes; a recording's have a leading cpi axis (off = 1). */
static void w_describe_results(h5w *w, hid_t weights, hid_t output, hid_t steering,
                               const result_axes *ax, int off)
{
    const char *wn[5] = {"cpi", "doppler", "segment", "beam", "dof"};
    const hid_t ws[5] = {-1, ax->doppler, ax->segment, ax->beam, -1};
    w_describe(w, weights, "the axes of '/weights'", 4 + off, wn + 1 - off, ws + 1 - off, "1");
    const char *on[4] = {"cpi", "beam", "doppler", "range"};
    const hid_t os[4] = {-1, ax->beam, ax->doppler, ax->range};
    w_describe(w, output, "the axes of '/output/iq'", 3 + off, on + 1 - off, os + 1 - off,
               "those of the input samples (w^H v = 1)");
    const char *sn[2] = {"beam", "dof"};
    const hid_t ss[2] = {ax->beam, -1};
    w_describe(w, steering, "the axes of '/steering'", 2, sn, ss, "1");
}

int stap_result_write(const char *path, const stap_result *res, const stap_write_options *wo,
                      stap_error *err)
{
    const stap_write_mode mode = wo ? wo->mode : STAP_WRITE_NEW;
    const unsigned keep = wo && wo->keep ? wo->keep
                                         : STAP_KEEP_WEIGHTS | STAP_KEEP_OUTPUT | STAP_KEEP_DETECTIONS;
    if (!path || !*path) return stap_fail(err, STAP_EINVAL, "stap_result_write: empty output path");
    if (!res || !res->cfg || (keep & STAP_KEEP_WEIGHTS && !res->weights) ||
        (keep & STAP_KEEP_OUTPUT && !res->output) || !res->steering || res->beams < 1)
        return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): missing weights, output, "
                       "steering or configuration", path);
    if (res->have_detections && res->detection_count > 0 && !res->detections)
        return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): %zu detections but no array",
                         path, res->detection_count);
    const int looks_st = stap_io_looks_check(res->looks, res->beams, path, err);
    if (looks_st) return looks_st;
    const stap_config *c = res->cfg;
    const int D = c->doppler_bins > 0 ? c->doppler_bins : c->pulses;
    const int N = stap_dof(c), B = res->beams;
    if (D < 1 || c->segments < 1 || N < 1 || c->range_gates < 1)
        return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): configuration not resolved "
                         "(D %d, S %d, N %d, R %d)", path, D, c->segments, N, c->range_gates);

    h5_out o;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w w = {path, err, STAP_OK, NULL, -1};
    if (stap_h5out_begin(&o, path, mode, err)) {
        stap_io_quiet_end(&q);
        return err ? err->code : STAP_EIO;
    }
    hid_t file = stap_io_out_create(&w, &o);
    stap_io_w_root(&w, file);
    result_axes ax;
    w_axes(&w, file, res, D, &ax);
    hid_t wds = -1, ods = -1, sds;
    const hsize_t wd[4] = {(hsize_t)D, (hsize_t)c->segments, (hsize_t)B, (hsize_t)N};
    if (keep & STAP_KEEP_WEIGHTS) stap_io_w_cf32_keep(&w, file, "weights", "/weights", 4, wd, res->weights, &wds);
    if (keep & STAP_KEEP_OUTPUT) {
        hid_t g = stap_io_w_group(&w, file, "output");
        const hsize_t od[3] = {(hsize_t)B, (hsize_t)D, (hsize_t)c->range_gates};
        stap_io_w_cf32_keep(&w, g, "iq", "/output/iq", 3, od, res->output, &ods);
        CLOSE_GROUP(g);
    }
    const hsize_t sd[2] = {(hsize_t)B, (hsize_t)N};
    stap_io_w_cf32_keep(&w, file, "steering", "/steering", 2, sd, res->steering, &sds);
    stap_io_w_looks(&w, sds, res->looks, B, D, res->meta);
    w_describe_results(&w, wds, ods, sds, &ax, 0);
    CLOSE_DSET(wds);
    CLOSE_DSET(ods);
    CLOSE_DSET(sds);
    w_axes_close(&ax);
    w_config(&w, file, res, D);
    w_timing(&w, file, res);
    stap_io_w_meta_radar(&w, file, res->meta, 1);
    if (res->have_detections && keep & STAP_KEEP_DETECTIONS) w_detections(&w, file, res);
    stap_io_w_reserve(&w, 0);
    if (!w.st && res->extra) {
        struct stap_h5_file hf;
        stap_h5x_for_writer(&hf, &w, file);
        if (res->extra(&hf, res->extra_user, err) && !w.st) w.st = err ? err->code : STAP_EIO;
    }
    int st = stap_io_out_finish(&w, &o, file);
    stap_io_quiet_end(&q);
    return st;
}

/* ---- results of many CPIs (run over a rank-4 recording) ------------------------------ */

struct stap_result_writer {
    char path[1024];
    h5_out out;
    hid_t file, weights, output, det, timing, icpi, cf_t, cm_t, df_t, dm_t;
    unsigned keep; /* STAP_KEEP_* */
    hsize_t wdims[5], odims[4];
    hsize_t ndet;
    long long written;
    int stages;
    /* weights and output: one CPI per chunk written as stored bytes (H5Dwrite_chunk) when the
     * memory type is the file type byte for byte; their extent grows ahead (doubling) and is
     * cut to the CPIs written at close */
    int direct;
    hsize_t extent;
    /* placed (stap_write_options.cpis, few rows or .place: result_places): every row's
     * chunk allocated at open, at the file offsets woff/ooff, written there by pwrite (no
     * HDF5 call, no lock); the rows never written are freed at close */
    long long rows;
    long long *woff, *ooff;
    /* the small per-CPI rows (stage times, input CPI, detections), kept and written in
     * batches of RESULT_BATCH CPIs: one HDF5 call each per batch, not per CPI */
    double *tbuf;
    long long *ibuf;
    struct cpi_detection *dbuf;
    size_t nbuf, ndbuf, dcap;
    size_t dbytes; /* the detections held before a batch is written (bytes) */
};
enum { RESULT_BATCH = 1024 };

/* detections of a recording: {cpi int64, beam, doppler_bin, range_cell int32, power,
 * snr_db, statistic, threshold float32} */
typedef struct cpi_detection {
    long long cpi;
    stap_detection d;
} cpi_detection;

void stap_result_writer_abort(stap_result_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    hid_t *ids[] = {&w->weights, &w->output, &w->det, &w->timing, &w->icpi};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) CLOSE_DSET(*ids[i]);
    hid_t *types[] = {&w->cf_t, &w->cm_t, &w->df_t, &w->dm_t};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) CLOSE_TYPE(*types[i]);
    stap_h5out_finish(&w->out, w->file, 1, NULL); /* abandoned: its blocks freed, closed, removed */
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    free(w->tbuf);
    free(w->woff);
    free(w->ooff);
    free(w->ibuf);
    free(w->dbuf);
    free(w);
}

/* an extensible dataset with a leading CPI axis, one CPI (or `chunk0` rows) per chunk */
static hid_t w_extensible(h5w *w, hid_t loc, const char *name, const char *fullname, hid_t ftype,
                          int rank, const hsize_t *row_dims, hsize_t chunk0)
{
    if (w->st) return -1;
    hsize_t dims[6] = {0}, maxd[6] = {H5S_UNLIMITED}, chunk[6] = {chunk0};
    for (int k = 1; k < rank; k++) dims[k] = maxd[k] = chunk[k] = row_dims[k - 1];
    hid_t space = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0)
        d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, stap_io_no_chunk_cache());
    if (d < 0) {
        char what[96];
        snprintf(what, sizeof what, "'%s'", fullname);
        stap_io_w_fail_h5(w, what);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    return d;
}

/* A per-CPI dataset of `rows` rows (`per_chunk` a chunk) allocated now and never filled (the
 * writer fills every row it keeps), extensible so that a stopped run is cut to its rows; the
 * file offset of each row into off: its chunk's address (one lookup a chunk, each a walk of
 * the chunk index in HDF5 1.10: few chunks keep the lookups linear in the rows) and its place
 * in the chunk. */
static hid_t w_preallocated(h5w *w, hid_t loc, const char *name, const char *fullname, hid_t ftype,
                            int rank, const hsize_t *row_dims, hsize_t rows, hsize_t per_chunk,
                            long long *off)
{
    if (w->st) return -1;
    hsize_t dims[6] = {rows}, maxd[6] = {H5S_UNLIMITED}, chunk[6] = {per_chunk};
    long long row_bytes = (long long)H5Tget_size(ftype);
    for (int k = 1; k < rank; k++) {
        dims[k] = maxd[k] = chunk[k] = row_dims[k - 1];
        row_bytes *= (long long)row_dims[k - 1];
    }
    hid_t space = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)
        d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, stap_io_no_chunk_cache());
    for (hsize_t r0 = 0; d >= 0 && r0 < rows; r0 += per_chunk) {
        hsize_t at[6] = {r0, 0, 0, 0, 0, 0}, size = 0;
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        if (H5Dget_chunk_info_by_coord(d, at, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF) {
            H5Dclose(d);
            d = -1;
        } else {
            for (hsize_t r = r0; r < rows && r < r0 + per_chunk; r++)
                off[r] = (long long)addr + (long long)(r - r0) * row_bytes;
        }
    }
    if (d < 0) {
        char what[96];
        snprintf(what, sizeof what, "'%s' (allocated for %llu CPIs)", fullname, (unsigned long long)rows);
        stap_io_w_fail_h5(w, what);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    return d;
}

/* n bytes at file offset `at` of fd, in parts written by several threads (a CPI's weights
 * are a megabyte: the copy into the page cache is the writer's cost) */
static int pwrite_parallel(int fd, const void *buf, size_t n, long long at, int *err_no)
{
    const size_t part = (size_t)256 << 10;
    const long parts = (long)((n + part - 1) / part);
    int bad = 0;
#pragma omp parallel for num_threads(parts < 4 ? (int)parts : 4) schedule(static) reduction(| : bad) if (parts > 1)
    for (long k = 0; k < parts; k++) {
        size_t done = (size_t)k * part;
        const size_t end = done + part < n ? done + part : n;
        while (done < end && !bad) {
            const ssize_t got = pwrite(fd, (const char *)buf + done, end - done, (off_t)(at + (long long)done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
#pragma omp critical(stap_io_result_pwrite)
                *err_no = got < 0 ? errno : EIO;
                bad = 1;
            } else {
                done += (size_t)got;
            }
        }
    }
    return bad ? -1 : 0;
}

/* append `rows` leading-axis rows of data to an extensible dataset */
static void w_append(h5w *w, hid_t d, hid_t mtype, int rank, hsize_t rows, const void *data,
                     const char *what)
{
    if (w->st || rows == 0) return;
    hid_t fs = H5Dget_space(d);
    hsize_t dims[6], start[6] = {0}, count[6];
    if (fs < 0) {
        stap_io_w_fail_h5(w, what);
        return;
    }
    H5Sget_simple_extent_dims(fs, dims, NULL);
    CLOSE_SPACE(fs);
    start[0] = dims[0];
    dims[0] += rows;
    for (int k = 0; k < rank; k++) count[k] = k ? dims[k] : rows;
    hid_t dt = H5Dget_type(d);
    size_t bytes = dt >= 0 ? H5Tget_size(dt) : 16;
    CLOSE_TYPE(dt);
    for (int k = 0; k < rank; k++) bytes *= count[k];
    stap_io_w_reserve(w, bytes);
    hid_t ms = w->st ? -1 : H5Screate_simple(rank, count, NULL);
    if (w->st) return;
    if (ms < 0 || H5Dset_extent(d, dims) < 0 || (fs = H5Dget_space(d)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, data) < 0)
        stap_io_w_fail_h5(w, what);
    CLOSE_SPACE(ms);
    CLOSE_SPACE(fs);
}

/* one CPI's row `row` of an extensible dataset with one CPI per chunk, written as its stored
 * bytes (H5Dwrite_chunk: no selection, no conversion); the extent is grown by the caller */
static void w_put_chunk(h5w *w, hid_t d, hsize_t row, size_t bytes, const void *data,
                        const char *what)
{
    if (w->st) return;
    hsize_t off[6] = {row, 0, 0, 0, 0, 0};
    stap_io_w_reserve(w, bytes);
    if (!w->st && H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, bytes, data) < 0) stap_io_w_fail_h5(w, what);
}

/* bytes of one CPI's weights and output */
static void row_bytes(const stap_result_writer *w, size_t *wb, size_t *ob)
{
    *wb = *ob = sizeof(stap_cf32);
    for (int k = 0; k < 4; k++) *wb *= w->wdims[k];
    for (int k = 0; k < 3; k++) *ob *= w->odims[k];
}

/* the extent of the per-CPI datasets written by chunk: room for CPI `row` (grown ahead,
 * doubling), or exactly `rows` (at close) */
static void w_extent(h5w *w, stap_result_writer *rw, hsize_t rows)
{
    hid_t ds[2] = {rw->weights, rw->output};
    const hsize_t *tail[2] = {rw->wdims, rw->odims};
    const int rank[2] = {5, 4};
    for (int k = 0; k < 2 && !w->st; k++) {
        if (ds[k] < 0) continue;
        hsize_t dims[6];
        dims[0] = rows;
        for (int j = 1; j < rank[k]; j++) dims[j] = tail[k][j - 1];
        if (H5Dset_extent(ds[k], dims) < 0) stap_io_w_fail_h5(w, k ? "'/output/iq'" : "'/weights'");
    }
    rw->extent = rows;
}

/* The rows a writer places at open by itself: up to STAP_RESULT_PLACE_ROWS, or one per 256
 * bytes of a row when that is more. Placing looks up each chunk with
 * H5Dget_chunk_info_by_coord, which HDF5 1.10 walks the chunk index up to (about 20 ns a
 * chunk here: 64 000 one-row chunks took 37 s), so it is quadratic in the chunks. Rows placed
 * are written by pwrite in parallel parts, rows appended by H5Dwrite_chunk from one thread:
 * placing pays for large rows only, and up to this many one-row chunks the lookups cost at
 * most 0.04 ns a byte of the rows (a fifth of writing them at 5 GB/s). */
static long long place_limit(size_t per_row)
{
    const long long by_size = (long long)(per_row / 256);
    return by_size > STAP_RESULT_PLACE_ROWS ? by_size : STAP_RESULT_PLACE_ROWS;
}

/* Whether a writer of wo->cpis rows of per_row bytes places them at open: few rows, or all
 * when .place asks (rtstap-mpi's ranks write their rows at known offsets: docs/mpi.md). */
static int result_places(const stap_write_options *wo, size_t per_row)
{
    return wo->place || wo->cpis <= place_limit(per_row);
}

/* The rows a chunk of the placed datasets holds: one (the file of one process, appended or
 * placed), unless .place asks for more rows than place_limit; then enough that there are
 * about STAP_RESULT_PLACE_ROWS chunks (the lookups stay linear in the rows), a chunk at most
 * RESULT_CHUNK_BYTES (or one row). The chunks are storage, not schema: the rows read the
 * same (docs/file-format.md). */
enum { RESULT_CHUNK_BYTES = 64 << 20 };
static hsize_t rows_per_chunk(long long cpis, size_t per_row, size_t largest_row)
{
    if (cpis <= place_limit(per_row)) return 1;
    const long long by_count = (cpis + STAP_RESULT_PLACE_ROWS - 1) / STAP_RESULT_PLACE_ROWS;
    const long long by_bytes = largest_row ? (long long)(RESULT_CHUNK_BYTES / largest_row) : by_count;
    const long long k = by_count < by_bytes ? by_count : by_bytes;
    return k > 1 ? (hsize_t)k : 1;
}

int stap_result_writer_open(stap_result_writer **out, const char *path,
                            const stap_result *hdr, const stap_write_options *wo,
                            stap_error *err)
{
    const stap_write_mode mode = wo ? wo->mode : STAP_WRITE_NEW;
    *out = NULL;
    if (!path || !*path || !hdr || !hdr->cfg || !hdr->steering || hdr->beams < 1)
        return stap_fail(err, STAP_EINVAL, "stap_result_writer_open: missing path, configuration or "
                         "steering");
    const int looks_st = stap_io_looks_check(hdr->looks, hdr->beams, path, err);
    if (looks_st) return looks_st;
    const stap_config *c = hdr->cfg;
    const int D = c->doppler_bins, N = stap_dof(c), B = hdr->beams;
    stap_result_writer *w = calloc(1, sizeof *w);
    if (!w) return stap_fail(err, STAP_ENOMEM, "out of memory");
    w->file = w->weights = w->output = w->det = w->timing = w->icpi = -1;
    w->cf_t = w->cm_t = w->df_t = w->dm_t = -1;
    w->keep = wo && wo->keep ? wo->keep : STAP_KEEP_WEIGHTS | STAP_KEEP_DETECTIONS;
    w->dbytes = wo && wo->detection_bytes ? wo->detection_bytes : STAP_RESULT_DETECTION_BYTES;
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
    w->cf_t = stap_io_cf32_file_type();
    w->cm_t = stap_io_cf32_mem_type();
    w->dm_t = H5Tcreate(H5T_COMPOUND, sizeof(cpi_detection));
    w->df_t = H5Tcreate(H5T_COMPOUND, 8 + 7 * 4);
    const size_t o = offsetof(cpi_detection, d);
    if (w->cf_t < 0 || w->cm_t < 0 || w->dm_t < 0 || w->df_t < 0 ||
        H5Tinsert(w->dm_t, "cpi", offsetof(cpi_detection, cpi), H5T_NATIVE_LLONG) < 0 ||
        H5Tinsert(w->dm_t, "beam", o + offsetof(stap_detection, beam), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "doppler_bin", o + offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "range_cell", o + offsetof(stap_detection, range_cell), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "power", o + offsetof(stap_detection, power), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->dm_t, "snr_db", o + offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->dm_t, "statistic", o + offsetof(stap_detection, statistic), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->dm_t, "threshold", o + offsetof(stap_detection, threshold), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->df_t, "cpi", 0, H5T_STD_I64LE) < 0 ||
        H5Tinsert(w->df_t, "beam", 8, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "doppler_bin", 12, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "range_cell", 16, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "power", 20, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(w->df_t, "snr_db", 24, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(w->df_t, "statistic", 28, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(w->df_t, "threshold", 32, H5T_IEEE_F32LE) < 0)
        stap_io_w_fail_h5(&hw, "the file's types");
    stap_io_w_root(&hw, w->file);
    result_axes ax;
    w_axes(&hw, w->file, hdr, D, &ax);
    const hsize_t wrow[4] = {(hsize_t)D, (hsize_t)c->segments, (hsize_t)B, (hsize_t)N};
    const hsize_t orow[3] = {(hsize_t)B, (hsize_t)D, (hsize_t)c->range_gates};
    memcpy(w->wdims, wrow, sizeof wrow);
    memcpy(w->odims, orow, sizeof orow);
    /* the weights' and output's bytes as the file stores them: written by chunk */
    w->direct = !hw.st && H5Tequal(w->cf_t, w->cm_t) > 0 && H5Tget_size(w->cf_t) == sizeof(stap_cf32);
    size_t wb, ob;
    row_bytes(w, &wb, &ob);
    const size_t per_row = (w->keep & STAP_KEEP_WEIGHTS ? wb : 0) + (w->keep & STAP_KEEP_OUTPUT ? ob : 0);
    const int places = w->direct && wo && wo->cpis > 0 && per_row && w->out.fd >= 0 &&
                       result_places(wo, per_row);
    /* placed rows fill whole chunks: the last one's rows past the CPIs are allocated too */
    const size_t kw = w->keep & STAP_KEEP_WEIGHTS ? wb : 0, ko = w->keep & STAP_KEEP_OUTPUT ? ob : 0;
    const hsize_t per_chunk = places ? rows_per_chunk(wo->cpis, per_row, kw > ko ? kw : ko) : 1;
    const long long allocated = places ? (long long)((((hsize_t)wo->cpis + per_chunk - 1) / per_chunk) * per_chunk)
                                       : (wo ? wo->cpis : 0);
    if (wo && wo->cpis > 0 && per_row && !hw.st &&
        stap_h5out_reserve(&w->out, w->file, (size_t)allocated * per_row, err))
        hw.st = err ? err->code : STAP_EIO; /* the disk cannot hold the results: said now */
    if (places) {
        w->rows = wo->cpis;
        w->woff = calloc((size_t)w->rows, sizeof *w->woff);
        w->ooff = calloc((size_t)w->rows, sizeof *w->ooff);
        if ((!w->woff || !w->ooff) && !hw.st)
            hw.st = stap_fail(err, STAP_ENOMEM, "out of memory for the offsets of %lld CPIs", w->rows);
    }
    if (w->keep & STAP_KEEP_WEIGHTS)
        w->weights = w->rows ? w_preallocated(&hw, w->file, "weights", "/weights", w->cf_t, 5, wrow,
                                              (hsize_t)w->rows, per_chunk, w->woff)
                             : w_extensible(&hw, w->file, "weights", "/weights", w->cf_t, 5, wrow, 1);
    if (w->keep & STAP_KEEP_OUTPUT) {
        hid_t g = stap_io_w_group(&hw, w->file, "output");
        w->output = w->rows ? w_preallocated(&hw, g, "iq", "/output/iq", w->cf_t, 4, orow,
                                             (hsize_t)w->rows, per_chunk, w->ooff)
                            : w_extensible(&hw, g, "iq", "/output/iq", w->cf_t, 4, orow, 1);
        CLOSE_GROUP(g);
    }
    if (w->rows) w->extent = (hsize_t)w->rows;
    if (hdr->have_detections && w->keep & STAP_KEEP_DETECTIONS) {
        w->det = w_extensible(&hw, w->file, "detections", "/detections", w->df_t, 1, NULL, 1024);
        if (!hw.st) stap_io_w_attr_string(&hw, w->det, "cfar", hdr->cfar_description);
        if (!hw.st) stap_io_w_attr_string(&hw, w->det, "units", detection_units);
    }
    const hsize_t sd[2] = {(hsize_t)B, (hsize_t)N};
    hid_t sds;
    stap_io_w_cf32_keep(&hw, w->file, "steering", "/steering", 2, sd, hdr->steering, &sds);
    stap_io_w_looks(&hw, sds, hdr->looks, B, D, hdr->meta);
    w_describe_results(&hw, w->weights, w->output, sds, &ax, 1);
    CLOSE_DSET(sds);
    w_axes_close(&ax);
    w_config(&hw, w->file, hdr, D);
    stap_io_w_meta_radar(&hw, w->file, hdr->meta, 1);
    hid_t g = stap_io_w_group(&hw, w->file, "timing");
    const hsize_t trow[1] = {STAP_STAGE_COUNT};
    w->timing = w_extensible(&hw, g, "cpi_ms", "/timing/cpi_ms", H5T_IEEE_F64LE, 2, trow, 256);
    const char *tn[2] = {"cpi", "stage"};
    const hid_t ts[2] = {-1, -1};
    w_describe(&hw, w->timing, "the axes of '/timing/cpi_ms'", 2, tn, ts, "ms");
    if (!hw.st) {
        char names[256] = "";
        size_t at = 0;
        for (int s = 0; s < STAP_STAGE_COUNT; s++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", s ? "," : "", stap_stage_names[s]);
        stap_io_w_attr_string(&hw, w->timing, "columns", names);
    }
    CLOSE_GROUP(g);
    /* each row's CPI of the input (they differ when the input has unwritten CPIs): a
     * dimension scale of the cpi axis */
    hid_t ag = hw.st ? -1 : H5Gopen2(w->file, "axes", H5P_DEFAULT);
    if (!hw.st && ag < 0) stap_io_w_fail_h5(&hw, "'/axes'");
    w->icpi = w_extensible(&hw, ag, "input_cpi", "/axes/input_cpi", H5T_STD_I64LE, 1, NULL, 1024);
    CLOSE_GROUP(ag);
    if (!hw.st) {
        stap_io_w_attr_string(&hw, w->icpi, "units", "CPI index");
        stap_io_w_attr_string(&hw, w->icpi, "description", "the input's CPI of each row of the results "
                      "(CPIs the input never wrote are not run)");
    }
    if (!hw.st && H5DSset_scale(w->icpi, "input_cpi") < 0) stap_io_w_fail_h5(&hw, "'/axes/input_cpi'");
    const hid_t by_cpi[3] = {w->weights, w->output, w->timing};
    for (int k = 0; k < 3; k++)
        if (!hw.st && by_cpi[k] >= 0 && H5DSattach_scale(by_cpi[k], w->icpi, 0) < 0)
            stap_io_w_fail_h5(&hw, "the scale of the cpi axis");
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (hw.st) {
        int st = hw.st;
        stap_result_writer_abort(w);
        return st;
    }
    *out = w;
    return STAP_OK;
}

/* the batched rows to the file (under the HDF5 lock) */
static void w_flush_rows(h5w *hw, stap_result_writer *w)
{
    if (w->ndbuf) w_append(hw, w->det, w->dm_t, 1, w->ndbuf, w->dbuf, "'/detections'");
    w_append(hw, w->timing, H5T_NATIVE_DOUBLE, 2, w->nbuf, w->tbuf, "'/timing/cpi_ms'");
    w_append(hw, w->icpi, H5T_NATIVE_LLONG, 1, w->nbuf, w->ibuf, "'/axes/input_cpi'");
    w->nbuf = w->ndbuf = 0;
}

long long stap_result_writer_rows(const stap_result_writer *w) { return w ? w->rows : 0; }

size_t stap_result_writer_held(const stap_result_writer *w, size_t *rows)
{
    if (rows) *rows = w ? w->nbuf : 0;
    return w ? w->ndbuf * sizeof *w->dbuf : 0;
}

int stap_result_writer_placement(const stap_result_writer *w, const char **file,
                                 long long *weights_at, long long *output_at,
                                 size_t *weights_bytes, size_t *output_bytes, stap_error *err)
{
    if (!w || !w->rows)
        return stap_fail(err, STAP_EINVAL, "stap_result_writer_placement: the writer of '%s' was not "
                         "opened with its CPIs (stap_write_options.cpis): its rows are not placed",
                         w ? w->path : "?");
    size_t wb, ob;
    row_bytes(w, &wb, &ob);
    if (file) *file = w->out.tmp;
    if (weights_bytes) *weights_bytes = w->weights >= 0 ? wb : 0;
    if (output_bytes) *output_bytes = w->output >= 0 ? ob : 0;
    for (long long r = 0; r < w->rows; r++) {
        if (weights_at) weights_at[r] = w->weights >= 0 ? w->woff[r] : -1;
        if (output_at) output_at[r] = w->output >= 0 ? w->ooff[r] : -1;
    }
    return STAP_OK;
}

/* the row's weights and output written (or placed: NULL, placed = 1); its small rows kept */
static int writer_append(stap_result_writer *w, long long cpi, long long input_cpi,
                         const stap_cf32 *weights, const stap_cf32 *output, int placed,
                         const stap_detection *det, size_t ndet, const double *stage_ms,
                         stap_error *err);

int stap_result_writer_append(stap_result_writer *w, long long cpi, long long input_cpi,
                              const stap_cf32 *weights, const stap_cf32 *output, const stap_detection *det,
                              size_t ndet, const double *stage_ms, stap_error *err)
{
    return writer_append(w, cpi, input_cpi, weights, output, 0, det, ndet, stage_ms, err);
}

int stap_result_writer_append_placed(stap_result_writer *w, long long cpi, long long input_cpi,
                                     const stap_detection *det, size_t ndet, const double *stage_ms,
                                     stap_error *err)
{
    if (!w->rows && (w->weights >= 0 || w->output >= 0))
        return stap_fail(err, STAP_EINVAL, "'%s': CPI %lld placed, but the writer was not opened with "
                         "its CPIs", w->path, cpi);
    return writer_append(w, cpi, input_cpi, NULL, NULL, 1, det, ndet, stage_ms, err);
}

static int writer_append(stap_result_writer *w, long long cpi, long long input_cpi,
                         const stap_cf32 *weights, const stap_cf32 *output, int placed,
                         const stap_detection *det, size_t ndet, const double *stage_ms,
                         stap_error *err)
{
    if (cpi != w->written)
        return stap_fail(err, STAP_EINVAL, "'%s': CPI %lld written after %lld (results must come in "
                         "order)", w->path, cpi, w->written - 1);
    if (!placed && ((w->weights >= 0 && !weights) || (w->output >= 0 && !output)))
        return stap_fail(err, STAP_EINVAL, "'%s': CPI %lld without its weights or output", w->path, cpi);
    if (!w->tbuf) {
        w->tbuf = malloc(sizeof *w->tbuf * STAP_STAGE_COUNT * RESULT_BATCH);
        w->ibuf = malloc(sizeof *w->ibuf * RESULT_BATCH);
        if (!w->tbuf || !w->ibuf) return stap_fail(err, STAP_ENOMEM, "out of memory for the result rows");
    }
    if (ndet && w->det >= 0 && w->ndbuf + ndet > w->dcap) {
        size_t cap = 2 * (w->ndbuf + ndet) > 4096 ? 2 * (w->ndbuf + ndet) : 4096;
        cpi_detection *nd = realloc(w->dbuf, sizeof *nd * cap);
        if (!nd) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", ndet);
        w->dbuf = nd;
        w->dcap = cap;
    }
    size_t wb, ob;
    row_bytes(w, &wb, &ob);
    if (w->rows) { /* in place: no HDF5 call, no lock */
        if (cpi >= w->rows)
            return stap_fail(err, STAP_EINVAL, "'%s': CPI %lld past the %lld the writer was opened for",
                             w->path, cpi, w->rows);
        int e = 0;
        if (!placed && ((w->weights >= 0 && pwrite_parallel(w->out.fd, weights, wb, w->woff[cpi], &e)) ||
                        (w->output >= 0 && pwrite_parallel(w->out.fd, output, ob, w->ooff[cpi], &e))))
            return stap_fail(err, STAP_EIO, "cannot write CPI %lld's results to '%s': %s", cpi,
                             w->path, strerror(e));
    }
    /* the row's small parts, kept for the batch once its weights and output are in (a row
     * that failed leaves nothing behind: the buffers are put back below) */
    const size_t nbuf0 = w->nbuf, ndbuf0 = w->ndbuf;
    for (size_t i = 0; ndet && w->det >= 0 && i < ndet; i++)
        w->dbuf[w->ndbuf++] = (cpi_detection){input_cpi, det[i]};
    memcpy(w->tbuf + w->nbuf * STAP_STAGE_COUNT, stage_ms, sizeof(double) * STAP_STAGE_COUNT);
    w->ibuf[w->nbuf++] = input_cpi;
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w hw = {w->path, err, STAP_OK, &w->out, w->file};
    if (w->rows) {
        /* written above */
    } else if (w->direct) {
        const hsize_t row = (hsize_t)w->written;
        if (row >= w->extent) w_extent(&hw, w, row < 8 ? 16 : 2 * (row + 1));
        if (w->weights >= 0) w_put_chunk(&hw, w->weights, row, wb, weights, "'/weights'");
        if (w->output >= 0) w_put_chunk(&hw, w->output, row, ob, output, "'/output/iq'");
    } else {
        if (w->weights >= 0) w_append(&hw, w->weights, w->cm_t, 5, 1, weights, "'/weights'");
        if (w->output >= 0) w_append(&hw, w->output, w->cm_t, 4, 1, output, "'/output/iq'");
    }
    if (hw.st) { /* the row is not written: its small parts neither */
        w->nbuf = nbuf0;
        w->ndbuf = ndbuf0;
    } else if (w->nbuf == RESULT_BATCH || w->ndbuf * sizeof *w->dbuf >= w->dbytes) {
        w_flush_rows(&hw, w);
    }
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (!hw.st) w->written++;
    return hw.st;
}

int stap_result_writer_close(stap_result_writer *w, const stap_result *summary, stap_error *err)
{
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5w hw = {w->path, err, STAP_OK, &w->out, w->file};
    w_flush_rows(&hw, w);
    /* a run stopped early: the rows never written give their blocks back (before HDF5 may
     * reuse their space), then the datasets end at the rows written */
    size_t wb, ob;
    row_bytes(w, &wb, &ob);
    for (long long r = w->written; r < w->rows; r++) {
        if (w->weights >= 0 && fallocate(w->out.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                         (off_t)w->woff[r], (off_t)wb) != 0) { /* kept: space only */ }
        if (w->output >= 0 && fallocate(w->out.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                        (off_t)w->ooff[r], (off_t)ob) != 0) { /* kept: space only */ }
    }
    if (w->direct && w->extent != (hsize_t)w->written) w_extent(&hw, w, (hsize_t)w->written);
    stap_io_w_reserve(&hw, 0);
    hid_t g = hw.st ? -1 : H5Gopen2(w->file, "timing", H5P_DEFAULT);
    if (g < 0) stap_io_w_fail_h5(&hw, "'/timing'");
    for (int s = 0; s < STAP_STAGE_COUNT && summary->timing_ms; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s_ms", stap_stage_names[s]);
        stap_io_w_attr_double(&hw, g, name, summary->timing_ms[s]);
    }
    stap_io_w_attr_double(&hw, g, "read_ms", summary->read_ms);
    stap_io_w_attr_double(&hw, g, "total_ms", summary->total_ms);
    stap_io_w_attr_string(&hw, g, "backend", summary->backend_name);
    stap_io_w_attr_string(&hw, g, "statistic", "median over the CPIs (per CPI: /timing/cpi_ms)");
    CLOSE_GROUP(g);
    hid_t cg = H5Gopen2(w->file, "config", H5P_DEFAULT);
    if (cg >= 0) {
        stap_io_w_attr(&hw, cg, "cpis", H5T_STD_I64LE, H5T_NATIVE_LLONG, &w->written);
        if (summary->cpis_unwritten > 0)
            stap_io_w_attr(&hw, cg, "cpis_unwritten", H5T_STD_I64LE, H5T_NATIVE_LLONG,
                   &summary->cpis_unwritten);
        if (summary->stopped) stap_io_w_attr_string(&hw, cg, "stopped", summary->stopped);
        if (summary->engine_note && summary->engine_note[0])
            stap_io_w_attr_string(&hw, cg, "engine_note", summary->engine_note);
        if (summary->lost_counted)
            stap_io_w_attr(&hw, cg, "cpis_lost", H5T_STD_I64LE, H5T_NATIVE_LLONG, &summary->cpis_lost);
        CLOSE_GROUP(cg);
    }
    if (summary->lost_counted) { /* live input: the stream's CPIs lost, never processed */
        const hsize_t n = (hsize_t)summary->cpis_lost;
        hid_t ld = -1;
        stap_io_w_dataset(&hw, w->file, "lost_cpis", "/lost_cpis", H5T_STD_I64LE, H5T_NATIVE_LLONG, 1, &n,
                          summary->lost_cpis, &ld);
        stap_io_w_attr_string(&hw, ld, "units", "CPI index");
        stap_io_w_attr_string(&hw, ld, "description", "the stream's CPIs lost (a packet missing, or no "
                              "free receive buffer): never processed, no row");
        CLOSE_DSET(ld);
    }
    hid_t *ids[] = {&w->weights, &w->output, &w->det, &w->timing, &w->icpi};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) CLOSE_DSET(*ids[i]);
    hid_t *types[] = {&w->cf_t, &w->cm_t, &w->df_t, &w->dm_t};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) CLOSE_TYPE(*types[i]);
    int st = stap_io_out_finish(&hw, &w->out, w->file);
    w->file = -1;
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    free(w->tbuf);
    free(w->woff);
    free(w->ooff);
    free(w->ibuf);
    free(w->dbuf);
    free(w);
    return st;
}
