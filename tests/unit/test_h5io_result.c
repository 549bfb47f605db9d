/* test_h5io_result: the result file read back through the raw HDF5 API (datasets, shapes,
 * types, attributes, axes, the extra hook's /truth). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "engine.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "h5x.h"
#include "la_check.h"
#include "layout_lib.h"
#include "mkinput_lib.h"
#include "h5io_testlib.h"
#include "testutil.h"


/* Read a {r, i} float32-LE compound dataset of the given shape; 0 on success. */
static int raw_read_cf32(hid_t file, const char *name, int rank, const hsize_t *want, stap_cf32 *out)
{
    int bad = 0;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t s = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t dims[8];
    if (H5Sget_simple_extent_ndims(s) != rank)
        bad = -2;
    else {
        H5Sget_simple_extent_dims(s, dims, NULL);
        for (int k = 0; k < rank; k++)
            if (dims[k] != want[k]) bad = -3;
    }
    if (!bad && (H5Tget_class(t) != H5T_COMPOUND || H5Tget_nmembers(t) != 2)) bad = -4;
    for (unsigned m = 0; !bad && m < 2; m++) {
        char *nm = H5Tget_member_name(t, m);
        hid_t mt = H5Tget_member_type(t, m);
        if (strcmp(nm, m ? "i" : "r") || H5Tequal(mt, H5T_IEEE_F32LE) <= 0 ||
            H5Tget_member_offset(t, m) != 4 * m)
            bad = -5;
        H5free_memory(nm);
        H5Tclose(mt);
    }
    if (!bad) {
        hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_cf32));
        H5Tinsert(mt, "r", 0, H5T_NATIVE_FLOAT);
        H5Tinsert(mt, "i", sizeof(float), H5T_NATIVE_FLOAT);
        if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) bad = -6;
        H5Tclose(mt);
    }
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    return bad;
}

static hid_t raw_attr(hid_t file, const char *obj, const char *name, H5T_class_t cls)
{
    if (H5Aexists_by_name(file, obj, name, H5P_DEFAULT) <= 0) return -1;
    hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    int ok = H5Tget_class(t) == cls && H5Sget_simple_extent_type(s) == H5S_SCALAR;
    H5Tclose(t);
    H5Sclose(s);
    if (!ok) {
        H5Aclose(a);
        return -1;
    }
    return a;
}

static int attr_int(hid_t file, const char *obj, const char *name, long long want)
{
    hid_t a = raw_attr(file, obj, name, H5T_INTEGER);
    long long v = 0;
    int ok = a >= 0 && H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0 && v == want;
    if (a >= 0) H5Aclose(a);
    if (!ok) fprintf(stderr, "  attribute %s/%s: %lld, expected %lld\n", obj, name, v, want);
    return ok;
}

static int attr_double(hid_t file, const char *obj, const char *name, double want)
{
    hid_t a = raw_attr(file, obj, name, H5T_FLOAT);
    double v = NAN;
    int ok = a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0 && v == want;
    if (a >= 0) H5Aclose(a);
    if (!ok) fprintf(stderr, "  attribute %s/%s: %.17g, expected %.17g\n", obj, name, v, want);
    return ok;
}

static int attr_string(hid_t file, const char *obj, const char *name, const char *want)
{
    hid_t a = raw_attr(file, obj, name, H5T_STRING);
    char *v = NULL;
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    int ok = a >= 0 && H5Aread(a, mt, &v) >= 0 && v && strcmp(v, want) == 0;
    if (!ok)
        fprintf(stderr, "  attribute %s/%s: '%s', expected '%s'\n", obj, name, v ? v : "(none)",
                want);
    if (v) H5free_memory(v);
    H5Tclose(mt);
    if (a >= 0) H5Aclose(a);
    return ok;
}

static int num_attrs(hid_t file, const char *obj)
{
    hid_t o = H5Oopen(file, obj, H5P_DEFAULT);
    if (o < 0) return -1;
    int n = H5Aget_num_attrs(o);
    H5Oclose(o);
    return n;
}



/* ---- result files ----------------------------------------------------------------- */

typedef struct result_case {
    stap_window_kind window;
    double cheb_db;
    const char *window_name;
    int detections; /* -1: no /detections, else the count */
    int with_meta;
    int with_engine; /* stap_result.engine set: /config threads, device, engine; beam_u */
} result_case;

/* /axes/<name>: a dimension scale of n values with units; its values as doubles into v */
static int read_axis(hid_t f, const char *name, hsize_t n, double *v)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "  axis %s missing\n", name);
        return 0;
    }
    hid_t s = H5Dget_space(d);
    hsize_t len = 0;
    int ok = H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &len, NULL) == 1 &&
             len == n && H5DSis_scale(d) > 0 && H5Aexists(d, "units") > 0 &&
             H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    H5Sclose(s);
    H5Dclose(d);
    if (!ok) fprintf(stderr, "  axis %s: not a scale of %llu values with units\n", name, (unsigned long long)n);
    return ok;
}

static herr_t scale_name(hid_t did, unsigned dim, hid_t dsid, void *buf)
{
    return H5DSget_scale_name(dsid, buf, 64) < 0 ? -1 : 1;
}

/* dataset's axes: labelled labels[k], the scale named scales[k] (NULL: none) attached */
static int dims_ok(hid_t f, const char *name, int rank, const char *const *labels,
                   const char *const *scales)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    int ok = d >= 0;
    for (int k = 0; ok && k < rank; k++) {
        char label[64] = "", sname[64] = "";
        ok = H5DSget_label(d, (unsigned)k, label, sizeof label) > 0 && !strcmp(label, labels[k]);
        int ns = H5DSget_num_scales(d, (unsigned)k);
        if (ok && scales[k])
            ok = ns == 1 && H5DSiterate_scales(d, (unsigned)k, NULL, scale_name, sname) == 1 &&
                 !strcmp(sname, scales[k]);
        else if (ok)
            ok = ns <= 0;
        if (!ok)
            fprintf(stderr, "  %s axis %d: label '%s' (want '%s'), scale '%s' (want '%s')\n", name, k,
                    label, labels[k], sname, scales[k] ? scales[k] : "none");
    }
    if (d >= 0) H5Dclose(d);
    return ok;
}

/* a random small configuration of the case's window (the lapack backend) */
static void random_config(tc_rng *rng, const result_case *rc, stap_config *cfg)
{
    stap_config_defaults(cfg);
    cfg->channels = h5t_randint(rng, 1, 4);
    /* (a Hann window needs 3 pulses: of 2 it is all zeros, and validation refuses it) */
    cfg->pulses = h5t_randint(rng, rc->window == STAP_WINDOW_HANN ? 3 : 2, 6);
    cfg->doppler_bins = cfg->pulses + h5t_randint(rng, 0, 3);
    /* Q = 3 needs 3 Doppler bins (an engine is made of this configuration): with D = 2,
     * drawn about once in 30 seeds, Q = 1 */
    cfg->doppler_order = cfg->doppler_bins >= 3 ? 2 * h5t_randint(rng, 0, 1) + 1 : 1;
    cfg->segments = h5t_randint(rng, 1, 3);
    cfg->range_gates = cfg->segments * h5t_randint(rng, 2, 6);
    cfg->training = h5t_randint(rng, 1, cfg->range_gates / cfg->segments);
    cfg->beams = h5t_randint(rng, 1, 3);
    cfg->loading = tc_uniform(rng);
    cfg->window = rc->window;
    cfg->chebyshev_db = rc->cheb_db;
    cfg->element_spacing = 0.5 * tc_uniform(rng) + 0.25;
    cfg->backend = STAP_BACKEND_LAPACK;
    cfg->threads = h5t_randint(rng, 0, 8);
}

/* /detections: written only when the result has detections, its compound members, values
 * and cfar description */
static void check_detections(hid_t f, const result_case *rc, const stap_detection *det, const char *cfar,
                             int idx)
{
    htri_t has_det = H5Lexists(f, "detections", H5P_DEFAULT);
    if (rc->detections < 0) {
        CHECK(has_det == 0, "result %d: /detections written without detections", idx);
    } else if (has_det <= 0) {
        CHECK(0, "result %d: /detections missing", idx);
    } else {
        hid_t d = H5Dopen2(f, "/detections", H5P_DEFAULT);
        hid_t s = H5Dget_space(d), t = H5Dget_type(d);
        hsize_t n = 99;
        CHECK(H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1 &&
                  n == (hsize_t)rc->detections,
              "result %d: /detections shape %llu", idx, (unsigned long long)n);
        static const char *const names[7] = {"beam", "doppler_bin", "range_cell", "power",
                                             "snr_db", "statistic", "threshold"};
        int tok2 = H5Tget_class(t) == H5T_COMPOUND && H5Tget_nmembers(t) == 7;
        for (unsigned m = 0; tok2 && m < 7; m++) {
            char *nm = H5Tget_member_name(t, m);
            hid_t mt = H5Tget_member_type(t, m);
            tok2 =
                !strcmp(nm, names[m]) && H5Tequal(mt, m < 3 ? H5T_STD_I32LE : H5T_IEEE_F32LE) > 0;
            H5free_memory(nm);
            H5Tclose(mt);
        }
        CHECK(tok2, "result %d: /detections member types", idx);
        if (tok2 && n == (hsize_t)rc->detections && n > 0) {
            hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
            H5Tinsert(mt, "beam", offsetof(stap_detection, beam), H5T_NATIVE_INT);
            H5Tinsert(mt, "doppler_bin", offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT);
            H5Tinsert(mt, "range_cell", offsetof(stap_detection, range_cell), H5T_NATIVE_INT);
            H5Tinsert(mt, "power", offsetof(stap_detection, power), H5T_NATIVE_FLOAT);
            H5Tinsert(mt, "snr_db", offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT);
            H5Tinsert(mt, "statistic", offsetof(stap_detection, statistic), H5T_NATIVE_FLOAT);
            H5Tinsert(mt, "threshold", offsetof(stap_detection, threshold), H5T_NATIVE_FLOAT);
            stap_detection got[4];
            memset(got, 0, sizeof got);
            CHECK(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0 &&
                      memcmp(got, det, sizeof(stap_detection) * n) == 0,
                  "result %d: /detections values", idx);
            H5Tclose(mt);
        }
        CHECK(attr_string(f, "/detections", "cfar", cfar), "result %d: cfar", idx);
        H5Tclose(t);
        H5Sclose(s);
        H5Dclose(d);
    }
}

/* schema v1.1's axes: /axes/<name> values, the datasets' labels and dimension scales, units
 * (beam_u when an engine wrote the result) */
static void check_axes(hid_t f, const result_case *rc, int eng, const stap_radar_meta *meta,
                       const stap_config *cfg, int idx)
{
    const int D = cfg->doppler_bins, S = cfg->segments, B = cfg->beams, R = cfg->range_gates;
    const char *dop = rc->with_meta ? "doppler_hz" : "doppler_normalized";
    const char *rng_name = rc->with_meta ? "range_m" : "range_cell";
    const char *beam = eng ? "beam_u" : "beam";
    const int nmax = D + R + B + S;
    double *av = malloc(sizeof(double) * (size_t)nmax);
    char an[64];
    snprintf(an, sizeof an, "/axes/%s", dop);
    int aok = read_axis(f, an, (hsize_t)D, av);
    for (int d = 0; aok && d < D; d++) {
        double fr = (double)d / D - (2 * d >= D ? 1 : 0);
        aok = fabs(av[d] - fr * (rc->with_meta ? meta->prf_hz : 1)) <= 1e-9 * meta->prf_hz;
    }
    CHECK(aok, "result %d: %s values", idx, an);
    snprintf(an, sizeof an, "/axes/%s", rng_name);
    aok = read_axis(f, an, (hsize_t)R, av);
    for (int r = 0; aok && r < R; r++)
        aok = fabs(av[r] - r * (rc->with_meta ? 299792458.0 / (2 * meta->sample_rate_hz) : 1)) <=
              1e-9 * (r + 1) * 150;
    CHECK(aok, "result %d: %s values", idx, an);
    snprintf(an, sizeof an, "/axes/%s", beam);
    aok = read_axis(f, an, (hsize_t)B, av);
    for (int b = 0; aok && b < B; b++) aok = av[b] == (eng ? -1.0 + (2.0 * b + 1) / B : b);
    CHECK(aok, "result %d: %s values", idx, an);
    aok = read_axis(f, "/axes/segment_start_cell", (hsize_t)S, av);
    for (int sg = 0; aok && sg < S; sg++) aok = av[sg] == sg * (R / S);
    CHECK(aok, "result %d: /axes/segment_start_cell values", idx);
    free(av);
    const char *wl[4] = {"doppler", "segment", "beam", "dof"};
    const char *ws[4] = {dop, "segment_start_cell", beam, NULL};
    const char *ol[3] = {"beam", "doppler", "range"};
    const char *os[3] = {beam, dop, rng_name};
    const char *sl[2] = {"beam", "dof"};
    const char *ss[2] = {beam, NULL};
    CHECK(dims_ok(f, "/weights", 4, wl, ws) && dims_ok(f, "/output/iq", 3, ol, os) &&
              dims_ok(f, "/steering", 2, sl, ss),
          "result %d: axis labels and dimension scales", idx);
    CHECK(attr_string(f, "/weights", "units", "1") && attr_string(f, "/steering", "units", "1") &&
              H5Aexists_by_name(f, "/output/iq", "units", H5P_DEFAULT) > 0 &&
              (rc->detections < 0 || H5Aexists_by_name(f, "/detections", "units", H5P_DEFAULT) > 0),
          "result %d: units", idx);
}

static void random_detections(tc_rng *rng, stap_detection *det, int n, int B, int D, int R)
{
    for (int i = 0; i < n; i++) {
        det[i].beam = h5t_randint(rng, 0, B - 1);
        det[i].doppler_bin = h5t_randint(rng, 0, D - 1);
        det[i].range_cell = h5t_randint(rng, 0, R - 1);
        det[i].power = (float)(10 * tc_uniform(rng));
        det[i].snr_db = (float)(30 * tc_uniform(rng));
        det[i].statistic = (float)(5 * tc_uniform(rng));
        det[i].threshold = (float)tc_uniform(rng);
    }
}

static void test_result(tc_rng *rng, const result_case *rc, int idx)
{
    stap_config cfg;
    random_config(rng, rc, &cfg);
    const int D = cfg.doppler_bins, S = cfg.segments, B = cfg.beams, N = stap_dof(&cfg),
              R = cfg.range_gates;
    size_t nw = (size_t)D * S * B * N, ny = (size_t)B * D * R, nv = (size_t)B * N;
    stap_cf32 *W = malloc(sizeof(stap_cf32) * nw), *Y = malloc(sizeof(stap_cf32) * ny),
         *V = malloc(sizeof(stap_cf32) * nv);
    stap_cf32 *back = malloc(sizeof(stap_cf32) * (nw + ny + nv));
    h5t_random_cf32(rng, W, nw);
    h5t_random_cf32(rng, Y, ny);
    h5t_random_cf32(rng, V, nv);
    double timing[STAP_STAGE_COUNT];
    for (int s = 0; s < STAP_STAGE_COUNT; s++) timing[s] = 100 * tc_uniform(rng);
    stap_radar_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.has_prf = 1;
    meta.prf_hz = 1000 + tc_uniform(rng);
    meta.has_sample_rate = 1;
    meta.sample_rate_hz = 2e6 + tc_uniform(rng);
    stap_detection det[4];
    random_detections(rng, det, 4, B, D, R);

    stap_result res;
    memset(&res, 0, sizeof res);
    res.cfg = &cfg;
    res.input_name = "synthetic:test \xc3\xa9"; /* UTF-8 survives */
    res.backend_name = "lapack";
    res.beams = B;
    res.steering = V;
    res.weights = W;
    res.output = Y;
    res.timing_ms = timing;
    res.read_ms = 1.5 + tc_uniform(rng);
    res.total_ms = 20 + tc_uniform(rng);
    res.meta = rc->with_meta ? &meta : NULL;
    res.have_detections = rc->detections >= 0;
    res.detection_count = rc->detections > 0 ? (size_t)rc->detections : 0;
    res.detections = rc->detections > 0 ? det : NULL;
    res.cfar_description = "ca pfa=1e-6 guard=2 train=8";
    h5t_hook_state hook = {0, 0};
    res.extra = h5t_truth_hook;
    res.extra_user = &hook;
    stap_error err;
    stap_engine *eng = NULL;
    if (rc->with_engine) {
        stap_engine_options eo;
        stap_engine_options_defaults(&eo);
        eo.cfar.kind = STAP_CFAR_NONE; /* the cubes here are too short for its window */
        CHECK(stap_engine_create(&eng, &cfg, NULL, 0, 0, &eo, &err) == STAP_OK, "result %d: engine: %s",
              idx, err.msg);
        res.engine = eng;
        res.input_samples = "int16, interleaved (last axis iq), scale 0.001";
    }

    char path[4200];
    snprintf(path, sizeof path, "%s/result_%d.h5", h5t_dir, idx);
    int st = stap_result_write(path, &res, NULL, &err);
    CHECK(st == STAP_OK, "result %d: %s", idx, err.msg);
    CHECK(tc_count_tmp(h5t_dir) == 0, "result %d: temporary file left", idx);
    CHECK(hook.calls == 1, "result %d: extra hook called %d times", idx, hook.calls);
    if (st) goto out;
    struct stat sb;
    mode_t mask = umask(022);
    umask(mask);
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask),
          "result %d: mode %o, expected %o", idx, (unsigned)(sb.st_mode & 0777), 0666 & ~mask);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "result %d: raw H5Fopen failed", idx);
    if (f < 0) goto out;
    const hsize_t wd[4] = {(hsize_t)D, (hsize_t)S, (hsize_t)B, (hsize_t)N};
    const hsize_t od[3] = {(hsize_t)B, (hsize_t)D, (hsize_t)R}, sd[2] = {(hsize_t)B, (hsize_t)N};
    int r1 = raw_read_cf32(f, "/weights", 4, wd, back);
    CHECK(r1 == 0 && memcmp(back, W, sizeof(stap_cf32) * nw) == 0, "result %d: /weights (%d)", idx, r1);
    r1 = raw_read_cf32(f, "/output/iq", 3, od, back);
    CHECK(r1 == 0 && memcmp(back, Y, sizeof(stap_cf32) * ny) == 0, "result %d: /output/iq (%d)", idx,
          r1);
    r1 = raw_read_cf32(f, "/steering", 2, sd, back);
    CHECK(r1 == 0 && memcmp(back, V, sizeof(stap_cf32) * nv) == 0, "result %d: /steering (%d)", idx, r1);

    const char *c = "/config";
    CHECK(attr_int(f, c, "channels", cfg.channels) && attr_int(f, c, "pulses", cfg.pulses) &&
              attr_int(f, c, "range_gates", R) && attr_int(f, c, "doppler_bins", D) &&
              attr_int(f, c, "doppler_order", cfg.doppler_order) && attr_int(f, c, "segments", S) &&
              attr_int(f, c, "training", cfg.training) && attr_int(f, c, "beams", B) &&
              attr_double(f, c, "loading", cfg.loading) &&
              attr_string(f, c, "window", rc->window_name) &&
              attr_double(f, c, "element_spacing_wavelengths", cfg.element_spacing) &&
              attr_string(f, c, "backend", "lapack") &&
              attr_int(f, c, "threads", eng ? stap_engine_threads(eng) : cfg.threads) &&
              attr_int(f, c, "threads_requested", cfg.threads) &&
              attr_string(f, c, "input", res.input_name) && attr_int(f, c, "schema_version", 1) &&
              attr_string(f, c, "rtstap_version", RTSTAP_VERSION) &&
              attr_string(f, c, "rtstap_commit", RTSTAP_COMMIT),
          "result %d: /config attributes", idx);
    int tok = 1;
    for (int s = 0; s < STAP_STAGE_COUNT; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s_ms", stap_stage_names[s]);
        tok &= attr_double(f, "/timing", name, timing[s]);
    }
    CHECK(tok && attr_double(f, "/timing", "read_ms", res.read_ms) &&
              attr_double(f, "/timing", "total_ms", res.total_ms) &&
              attr_string(f, "/timing", "backend", "lapack") &&
              num_attrs(f, "/timing") == STAP_STAGE_COUNT + 3,
          "result %d: /timing attributes", idx);
    if (rc->with_meta)
        CHECK(attr_double(f, "/radar", "prf_hz", meta.prf_hz) &&
                  attr_double(f, "/radar", "sample_rate_hz", meta.sample_rate_hz) &&
                  num_attrs(f, "/radar") == 2,
              "result %d: /radar attributes", idx);
    else
        CHECK(num_attrs(f, "/radar") == 0, "result %d: /radar should be an empty group", idx);

    check_detections(f, rc, det, res.cfar_description, idx);
    CHECK(H5Lexists(f, "truth", H5P_DEFAULT) > 0, "result %d: the extra hook's /truth is missing",
          idx);

    /* schema v1.1: self-described — root attributes, what ran, axes as dimension scales */
    CHECK(attr_string(f, "/", "schema", "1.1") &&
              attr_string(f, "/", "rtstap_version", RTSTAP_VERSION) &&
              attr_string(f, "/", "commit", RTSTAP_COMMIT),
          "result %d: root attributes", idx);
    if (eng)
        CHECK(stap_engine_threads(eng) >= 1 && stap_engine_device(eng)[0] &&
                  attr_string(f, c, "device", stap_engine_device(eng)) &&
                  attr_string(f, c, "engine", stap_engine_describe(eng)) &&
                  attr_string(f, c, "input_samples", res.input_samples),
              "result %d: /config device, engine, input_samples", idx);
    else
        CHECK(H5Aexists_by_name(f, c, "device", H5P_DEFAULT) == 0, "result %d: a device without an "
              "engine", idx);
    check_axes(f, rc, eng != NULL, &meta, &cfg, idx);
    H5Fclose(f);
out:
    stap_engine_destroy(eng);
    free(W);
    free(Y);
    free(V);
    free(back);
}

static void test_results(tc_rng *rng)
{
    const result_case cases[] = {
        {STAP_WINDOW_CHEBYSHEV, 60, "chebyshev:60", 4, 1, 1},
        {STAP_WINDOW_HANN, 0, "hann", 0, 0, 1},
        {STAP_WINDOW_NONE, 0, "none", -1, 1, 0},
        {STAP_WINDOW_CHEBYSHEV, 42.5, "chebyshev:42.5", 1, 0, 0},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) test_result(rng, &cases[i], i);
}

/* ---- the atomic-write rules ------------------------------------------------------ */

int main(void)
{
    uint64_t seed;
    tc_rng rng;
    if (h5t_begin("test_h5io_result", &seed, &rng)) return 1;
    /* the library must not print HDF5's error stacks: keep HDF5's default printer on
     * here, so that any leak would show in the test log */
    test_results(&rng);
    return h5t_end("test_h5io_result", seed);
}
