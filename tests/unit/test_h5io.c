/* test_h5io: the HDF5 file format (stap/io/) — bit-exact input round trips, float64,
 * big-endian and reordered-member conversion, every malformed input of mkinput_lib with
 * its message, cubes and recordings in every axis order with every kind of axis label
 * (and labels that are refused), the result file read back through the raw HDF5 API
 * (datasets, shapes, types, attributes), and the atomic-write rules: no overwrite, no
 * partial file, no temporary left behind. */
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
#include "testutil.h"

static char dir[4096];

static void pathof(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Temporary files of the atomic writers (".<base>.tmp.XXXXXX") left in d. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int file_equals(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

static int randint(tc_rng *r, int lo, int hi) { return lo + (int)(tc_uniform(r) * (hi - lo + 1)); }

static void random_cf32(tc_rng *r, stap_cf32 *x, size_t n)
{
    for (size_t k = 0; k < n; k++) x[k] = tc_cnormal(r);
}

/* ---- raw HDF5 readers for checking what was written ---------------------------- */

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

/* ---- input round trips ----------------------------------------------------------- */

typedef struct hook_state {
    int calls;
    int fail;
} hook_state;

/* An extra hook writing /truth (int32, 3 values) with the raw API, or failing. */
static int truth_hook(stap_h5_file *f, void *user, stap_error *err)
{
    hook_state *h = user;
    h->calls++;
    if (h->fail) return stap_fail(err, STAP_EINVAL, "hook refused on purpose");
    const int v[3] = {7, 8, 9};
    stap_h5x_put_ints(f, "/truth", 3, v);
    return stap_h5x_status(f, err);
}

static int has_truth(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 0;
    int ok = H5Lexists(f, "truth", H5P_DEFAULT) > 0;
    H5Fclose(f);
    return ok;
}

static void test_input_roundtrip(tc_rng *rng)
{
    for (int trial = 0; trial < 4; trial++) {
        stap_input in;
        memset(&in, 0, sizeof in);
        in.channels = randint(rng, 1, 6);
        in.pulses = randint(rng, 1, 9);
        in.range_gates = randint(rng, 1, 40);
        size_t n = (size_t)in.channels * in.pulses * in.range_gates;
        in.iq = malloc(sizeof(stap_cf32) * n);
        random_cf32(rng, in.iq, n);
        /* extremes of float32 must survive bit for bit */
        const float special[] = {-0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 1e-40f};
        for (size_t k = 0; k < sizeof special / sizeof special[0] && 2 * k + 1 < 2 * n; k++)
            ((float *)in.iq)[(2 * k * 7919) % (2 * n)] = special[k];
        int with_extras = trial % 2 == 0;
        if (with_extras) {
            in.steering_beams = randint(rng, 1, 5);
            in.steering_len = randint(rng, 1, 12);
            in.steering = malloc(sizeof(stap_cf32) * in.steering_beams * in.steering_len);
            random_cf32(rng, in.steering, (size_t)in.steering_beams * in.steering_len);
            in.meta.has_prf = 1;
            in.meta.prf_hz = 500 + 4000 * tc_uniform(rng);
            in.meta.has_carrier = trial == 0;
            in.meta.carrier_frequency_hz = 1e9 + 1e10 * tc_uniform(rng);
            in.meta.has_sample_rate = 1;
            in.meta.sample_rate_hz = 1e6 * (1 + tc_uniform(rng));
            in.meta.has_element_spacing = 1;
            in.meta.element_spacing_wavelengths = 0.3 + 0.4 * tc_uniform(rng);
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/roundtrip_%d.h5", dir, trial);
        hook_state hook = {0, 0};
        stap_error err;
        int st = stap_input_write(path, &in, with_extras ? truth_hook : NULL, &hook, NULL, &err);
        CHECK(st == STAP_OK, "round trip %d: write: %s", trial, err.msg);
        CHECK(!with_extras || (hook.calls == 1 && has_truth(path)), "input extra hook not run");
        stap_input back;
        st = stap_input_read(path, &back, NULL, &err);
        CHECK(st == STAP_OK, "round trip %d: read: %s", trial, err.msg);
        if (st == STAP_OK) {
            CHECK(back.channels == in.channels && back.pulses == in.pulses &&
                      back.range_gates == in.range_gates,
                  "round trip %d: shape", trial);
            CHECK(memcmp(back.iq, in.iq, sizeof(stap_cf32) * n) == 0, "round trip %d: /data/iq differs",
                  trial);
            CHECK(back.steering_beams == in.steering_beams && back.steering_len == in.steering_len,
                  "round trip %d: steering shape %d x %d", trial, back.steering_beams,
                  back.steering_len);
            CHECK(with_extras ? back.steering &&
                                    memcmp(back.steering, in.steering,
                                           sizeof(stap_cf32) * in.steering_beams * in.steering_len) == 0
                              : back.steering == NULL,
                  "round trip %d: /steering differs", trial);
            const stap_radar_meta *a = &in.meta, *b = &back.meta;
            CHECK(a->has_prf == b->has_prf && a->has_carrier == b->has_carrier &&
                      a->has_sample_rate == b->has_sample_rate &&
                      a->has_element_spacing == b->has_element_spacing,
                  "round trip %d: meta flags", trial);
            CHECK((!a->has_prf || a->prf_hz == b->prf_hz) &&
                      (!a->has_carrier || a->carrier_frequency_hz == b->carrier_frequency_hz) &&
                      (!a->has_sample_rate || a->sample_rate_hz == b->sample_rate_hz) &&
                      (!a->has_element_spacing ||
                       a->element_spacing_wavelengths == b->element_spacing_wavelengths),
                  "round trip %d: meta values", trial);
            stap_input_free(&back);
            CHECK(back.iq == NULL && back.steering == NULL, "stap_input_free leaves pointers");
        }
        /* writing again over it is refused, and leaves it as it was */
        st = stap_input_write(path, &in, NULL, NULL, NULL, &err);
        CHECK(st == STAP_EIO && strstr(err.msg, "already exists"), "input overwrite: %d %s", st,
              err.msg);
        CHECK(stap_input_read(path, &back, NULL, &err) == STAP_OK &&
                  memcmp(back.iq, in.iq, sizeof(stap_cf32) * n) == 0,
              "refused overwrite changed the file");
        stap_input_free(&back);
        stap_input_free(&in);
    }
    /* a failing hook: nothing published */
    stap_input in;
    memset(&in, 0, sizeof in);
    stap_cf32 one = 1;
    in.channels = in.pulses = in.range_gates = 1;
    in.iq = &one;
    char path[4200];
    pathof(path, sizeof path, "hook_fails.h5");
    hook_state hook = {0, 1};
    stap_error err;
    int st = stap_input_write(path, &in, truth_hook, &hook, NULL, &err);
    CHECK(st == STAP_EINVAL && strstr(err.msg, "on purpose") && !exists(path),
          "failing input hook: %d '%s', file %s", st, err.msg, exists(path) ? "exists" : "absent");
    in.iq = NULL;
    CHECK(stap_input_write(path, &in, NULL, NULL, NULL, &err) == STAP_EINVAL && !exists(path),
          "input without a cube accepted");
    CHECK(tc_count_tmp(dir) == 0, "temporary files left after the input writes");
}

/* ---- every kind of mkinput_lib -------------------------------------------------- */

static void test_kinds(uint64_t seed)
{
    double *ri = malloc(sizeof(double) * 2 * MKINPUT_C * MKINPUT_P * MKINPUT_R);
    float *want = malloc(sizeof(float) * 2 * MKINPUT_C * MKINPUT_P * MKINPUT_R);
    double sv[2 * MKINPUT_STEER_B * MKINPUT_C];
    mkinput_samples(seed, ri);
    mkinput_steering(seed, sv);
    for (int k = 0; k < mkinput_nkinds; k++) {
        const mkinput_kind *kind = &mkinput_kinds[k];
        char path[4200], why[256];
        snprintf(path, sizeof path, "%s/kind_%s.h5", dir, kind->name);
        if (mkinput_write(kind->name, path, seed, why, sizeof why)) {
            CHECK(0, "mkinput %s: %s", kind->name, why);
            continue;
        }
        stap_input in;
        stap_error err;
        stap_error_clear(&err);
        int st = stap_input_read(path, &in, NULL, &err);
        if (kind->valid) {
            CHECK(st == STAP_OK, "kind %s rejected: %s", kind->name, err.msg);
            if (st) continue;
            CHECK(in.channels == MKINPUT_C && in.pulses == MKINPUT_P && in.range_gates == MKINPUT_R,
                  "kind %s: shape %d x %d x %d", kind->name, in.channels, in.pulses,
                  in.range_gates);
            /* every form gives exactly (float)(stored value * scale): the complex kinds the
             * samples themselves, the integer forms their quantized values, scaled */
            size_t n = (size_t)MKINPUT_C * MKINPUT_P * MKINPUT_R, bad = n;
            double scale = 0;
            CHECK(mkinput_expected(kind->name, seed, want, &scale) == 0, "kind %s: no expected "
                  "samples", kind->name);
            for (size_t i = 0; i < n && bad == n; i++)
                if (crealf(in.iq[i]) != want[2 * i] || cimagf(in.iq[i]) != want[2 * i + 1])
                    bad = i;
            CHECK(bad == n, "kind %s: sample %zu is %.9g%+.9gi, expected %.9g%+.9gi", kind->name,
                  bad, bad < n ? crealf(in.iq[bad]) : 0, bad < n ? cimagf(in.iq[bad]) : 0,
                  bad < n ? want[2 * bad] : 0, bad < n ? want[2 * bad + 1] : 0);
            CHECK(in.scale == scale, "kind %s: scale %g, expected %g", kind->name, in.scale, scale);
            /* and they are the complex64 samples times the form's gain (1 when the scale
             * undoes the quantization) to within half a quantization step, plus float32
             * rounding (the gain is the known one: a least-squares gain fitted to quantized
             * samples is off by ~1e-3 and failed the bound on large samples) */
            double gain, half_step, worst = 0, bound = 0;
            mkinput_gain(kind->name, &gain, &half_step);
            for (size_t i = 0; i < 2 * n; i++) {
                worst = fmax(worst, fabs(want[i] / gain - ri[i]));
                bound = fmax(bound, half_step + 2 * FLT_EPSILON * (fabs(ri[i]) + half_step));
            }
            CHECK(worst <= bound, "kind %s: %g from the complex64 samples (gain %g), bound %g",
                  kind->name, worst, gain, bound);
            printf("  %-24s read as %s: complex64 x %.4g, within %.2g\n", kind->name, in.samples,
                   gain, worst);
            const stap_radar_meta *m = &in.meta;
            CHECK(m->has_prf && m->prf_hz == MKINPUT_PRF_HZ && m->has_carrier &&
                      m->carrier_frequency_hz == MKINPUT_CARRIER_HZ && m->has_sample_rate &&
                      m->sample_rate_hz == MKINPUT_SAMPLE_RATE_HZ && m->has_element_spacing &&
                      m->element_spacing_wavelengths == MKINPUT_SPACING,
                  "kind %s: metadata", kind->name);
            if (!strcmp(kind->name, "steering")) {
                int ok = in.steering && in.steering_beams == MKINPUT_STEER_B &&
                         in.steering_len == MKINPUT_C;
                for (int i = 0; ok && i < MKINPUT_STEER_B * MKINPUT_C; i++)
                    ok = crealf(in.steering[i]) == sv[2 * i] &&
                         cimagf(in.steering[i]) == sv[2 * i + 1];
                CHECK(ok, "kind steering: /steering not read back exactly");
            } else if (kind->valid == 2) {
                CHECK(in.steering && in.steering_beams > 0, "kind %s: /steering not read",
                      kind->name);
            } else {
                CHECK(in.steering == NULL && in.steering_beams == 0, "kind %s: phantom steering",
                      kind->name);
            }
            stap_input_free(&in);
        } else {
            CHECK(st == kind->status, "kind %s: status %d (%s), expected %d: %s", kind->name, st,
                  stap_status_name(st), kind->status, err.msg);
            CHECK(err.code == st, "kind %s: err.code %d != status %d", kind->name, err.code, st);
            CHECK(strstr(err.msg, path) != NULL, "kind %s: message does not name the file: %s",
                  kind->name, err.msg);
            CHECK(strstr(err.msg, kind->keyword) != NULL, "kind %s: message lacks '%s': %s",
                  kind->name, kind->keyword, err.msg);
            CHECK(!kind->keyword2 || strstr(err.msg, kind->keyword2) != NULL,
                  "kind %s: message lacks '%s': %s", kind->name, kind->keyword2, err.msg);
            CHECK(in.iq == NULL && in.steering == NULL && in.channels == 0,
                  "kind %s: failed read left data behind", kind->name);
            CHECK(stap_io_open_objects() == 0 && H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0,
                  "kind %s: %d HDF5 object(s) left open by the failed read", kind->name,
                  stap_io_open_objects());
            printf("  %-15s -> %s\n", kind->name, err.msg);
        }
    }
    free(ri);
    free(want);

    /* the operating system's reasons */
    char path[4200];
    stap_input in;
    stap_error err;
    pathof(path, sizeof path, "does_not_exist.h5");
    int st = stap_input_read(path, &in, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "cannot open") && strstr(err.msg, path) &&
              strstr(err.msg, "No such file"),
          "missing file: %d %s", st, err.msg);
    st = stap_input_read(dir, &in, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "directory"), "directory as input: %d %s", st, err.msg);
}

/* ---- axis labels and other axis orders (schema v1.1) ----------------------------------- */

static const char *const orders[6] = {"C,P,R", "C,R,P", "P,C,R", "P,R,C", "R,C,P", "R,P,C"};

/* A file holding cube (cpis x C x P x R) as /data/iq of the given rank, written by layout_lib. */
static int write_layout(const char *path, const stap_cf32 *cube, int rank, long long cpis, int C,
                        int P, int R, const layout_spec *spec)
{
    char why[256] = "";
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int bad = f < 0 || layout_put_iq(f, cube, rank, cpis, C, P, R, spec, why, sizeof why);
    if (f >= 0) H5Fclose(f);
    CHECK(!bad, "writing %s (order %s): %s", path, spec->order, why);
    return bad;
}

static int same_layout(const stap_layout *l, const char *order)
{
    stap_layout want;
    return stap_layout_parse(order, &want, NULL) == STAP_OK && !memcmp(l, &want, sizeof want);
}

/* Every order, labelled every way, reads back as the (C, P, R) original, bit for bit
 * (distinct extents, so that a wrong transposition shows; extents over 32 cross the
 * transposition's tiles). */
static void test_layout_one_cpi(tc_rng *rng, const int C, const int P, const int R)
{
    const size_t n = (size_t)C * P * R;
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * n);
    random_cf32(rng, cube, n);
    char path[4200], names[64];
    for (int o = 0; o < 6; o++)
        for (int how = 0; how < 6; how++) {
            /* 0 dimension labels, 1 dims string, 2 dims list, 3 both, 4 float64 with labels,
             * 5 none (read as stored, assumed) */
            layout_names(orders[o], 3, names, sizeof names);
            layout_spec spec = {orders[o], how == 0 || how >= 3 ? names : NULL,
                                how == 1 || how == 2 || how == 3 ? names : NULL, how == 2,
                                how == 4, 0, LAYOUT_COMPLEX};
            if (how == 5) spec.ds_labels = NULL;
            snprintf(path, sizeof path, "%s/layout_%d_%d_%d.h5", dir, R, o, how);
            if (write_layout(path, cube, 3, 1, C, P, R, &spec)) continue;
            stap_input in;
            stap_error err;
            int st = stap_input_read(path, &in, NULL, &err);
            CHECK(st == STAP_OK, "order %s, labels %d: %s", orders[o], how, err.msg);
            if (st) continue;
            if (how < 5) {
                CHECK(in.channels == C && in.pulses == P && in.range_gates == R &&
                          memcmp(in.iq, cube, sizeof(stap_cf32) * n) == 0,
                      "order %s, labels %d: not read back as the (C, P, R) cube (%d x %d x %d)",
                      orders[o], how, in.channels, in.pulses, in.range_gates);
                CHECK(in.layout.source == STAP_LAYOUT_LABELS && in.layout.labelled &&
                          same_layout(&in.layout.layout, orders[o]) && in.layout.rank == 3,
                      "order %s, labels %d: report source %d", orders[o], how, in.layout.source);
            } else {
                CHECK(in.layout.source == STAP_LAYOUT_ASSUMED && !in.layout.labelled &&
                          same_layout(&in.layout.layout, "C,P,R"),
                      "order %s unlabelled: report source %d", orders[o], in.layout.source);
                stap_input_free(&in);
                /* the caller's layout reads it right, and nothing differs from no labels */
                stap_read_options ro = {.override = 1};
                CHECK(stap_layout_parse(orders[o], &ro.layout, &err) == STAP_OK, "%s", err.msg);
                st = stap_input_read(path, &in, &ro, &err);
                CHECK(st == STAP_OK && in.channels == C && in.pulses == P && in.range_gates == R &&
                          memcmp(in.iq, cube, sizeof(stap_cf32) * n) == 0 &&
                          in.layout.source == STAP_LAYOUT_OVERRIDE && !in.layout.labels_differ,
                      "order %s unlabelled, overridden: %d %s", orders[o], st, err.msg);
            }
            stap_input_free(&in);
        }
    /* an override against (P, C, R) labels holds, and says it differs; one that agrees not */
    layout_names("P,C,R", 3, names, sizeof names);
    layout_spec spec = {"P,C,R", names, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    snprintf(path, sizeof path, "%s/layout_override_%d.h5", dir, R);
    if (!write_layout(path, cube, 3, 1, C, P, R, &spec)) {
        stap_input in;
        stap_error err;
        stap_read_options ro = {.override = 1, .layout = {{STAP_AXIS_CHANNEL, STAP_AXIS_PULSE, STAP_AXIS_RANGE}}};
        int st = stap_input_read(path, &in, &ro, &err);
        CHECK(st == STAP_OK && in.channels == P && in.pulses == C && in.range_gates == R &&
                  in.layout.source == STAP_LAYOUT_OVERRIDE && in.layout.labels_differ &&
                  !strcmp(in.layout.labels, "pulse, channel, range"),
              "override against the labels: %d %s; labels '%s'", st, err.msg, in.layout.labels);
        stap_input_free(&in);
        ro.layout = (stap_layout){{STAP_AXIS_PULSE, STAP_AXIS_CHANNEL, STAP_AXIS_RANGE}};
        st = stap_input_read(path, &in, &ro, &err);
        CHECK(st == STAP_OK && !in.layout.labels_differ && memcmp(in.iq, cube, sizeof(stap_cf32) * n) == 0,
              "override agreeing with the labels: %d %s", st, err.msg);
        stap_input_free(&in);
    }
    /* a non-finite sample is named in the stored order of the axes */
    cube[(1 * P + 2) * R + 3] = NAN;
    layout_names("P,R,C", 3, names, sizeof names);
    spec = (layout_spec){"P,R,C", NULL, names, 0, 0, 0, LAYOUT_COMPLEX};
    snprintf(path, sizeof path, "%s/layout_nan_%d.h5", dir, R);
    if (!write_layout(path, cube, 3, 1, C, P, R, &spec)) {
        stap_input in;
        stap_error err;
        int st = stap_input_read(path, &in, NULL, &err);
        CHECK(st == STAP_EFORMAT && strstr(err.msg, "(pulse 2, range 3, channel 1)"),
              "NaN in a (P, R, C) cube: %d %s", st, err.msg);
    }
    free(cube);
}

/* Recordings (rank 4, cpi first) in every order: chunked (read chunk by chunk, directly),
 * contiguous and float64 alike; and in the recorder formats (interleaved int16 and float32 of
 * rank 5, an int16 {real, imag} compound, scaled), which read as the complex64 samples they
 * hold (the cube is rounded to multiples of 1/256, what int16 at scale 1/256 holds exactly). */
static void test_layout_recordings(tc_rng *rng)
{
    enum { CPIS = 3, C = 2, P = 4, R = 6 };
    const size_t n = (size_t)C * P * R;
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * n * CPIS), *got = malloc(sizeof(stap_cf32) * n);
    random_cf32(rng, cube, n * CPIS);
    CHECK(layout_quantize(cube, n * CPIS) == 0, "quantizing the recording");
    char path[4200], names[64];
    /* chunked + labels, contiguous + dims, float64, int16 interleaved chunked + labels,
     * int16 {real, imag} contiguous + dims, float32 interleaved chunked (read directly) */
    static const int forms[6] = {LAYOUT_COMPLEX, LAYOUT_COMPLEX, LAYOUT_COMPLEX, LAYOUT_I16_IQ,
                                 LAYOUT_I16_REAL_IMAG, LAYOUT_F32_IQ};
    static const char *const samples[6] = {
        "complex64 {r, i}", "complex64 {r, i}", "float64 {r, i}",
        "int16, interleaved (last axis iq), scale 0.00390625", "int16 {real, imag}, scale 0.00390625",
        "float32, interleaved (last axis iq)"};
    for (int o = 0; o < 6; o++)
        for (int how = 0; how < 6; how++) {
            const int by_dims = how == 1 || how == 4;
            layout_names(orders[o], 4, names, sizeof names);
            layout_spec spec = {orders[o], by_dims ? NULL : names, by_dims ? names : NULL, 0,
                                how == 2, by_dims, forms[how]};
            snprintf(path, sizeof path, "%s/rec_layout_%d_%d.h5", dir, o, how);
            if (write_layout(path, cube, 4, CPIS, C, P, R, &spec)) continue;
            stap_recording *rec;
            stap_input in;
            stap_error err;
            int st = stap_recording_open(path, &rec, &in, NULL, &err);
            CHECK(st == STAP_OK, "recording %s/%d: %s", orders[o], how, err.msg);
            if (st) continue;
            CHECK(stap_recording_cpis(rec) == CPIS && stap_recording_rank(rec) == 4 &&
                      in.channels == C && in.pulses == P && in.range_gates == R &&
                      in.layout.source == STAP_LAYOUT_LABELS && in.layout.rank == 4 &&
                      same_layout(&in.layout.layout, orders[o]) && !strcmp(in.samples, samples[how]) &&
                      in.layout.interleaved == (forms[how] == LAYOUT_I16_IQ || forms[how] == LAYOUT_F32_IQ),
                  "recording %s/%d: shape %d x %d x %d, source %d, samples '%s'", orders[o], how,
                  in.channels, in.pulses, in.range_gates, in.layout.source, in.samples);
            for (int k = 0; k < CPIS; k++) {
                memset(got, 0, sizeof(stap_cf32) * n);
                st = stap_recording_read(rec, k, got, &err);
                CHECK(st == STAP_OK && memcmp(got, cube + (size_t)k * n, sizeof(stap_cf32) * n) == 0,
                      "recording %s/%d: CPI %d not read back as (C, P, R): %s", orders[o], how, k,
                      st ? err.msg : "values differ");
            }
            stap_recording_close(rec);
            stap_input_free(&in);
        }
    /* overriding an unlabelled recording's order */
    layout_spec spec = {"R,C,P", NULL, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    pathof(path, sizeof path, "rec_layout_override.h5");
    if (!write_layout(path, cube, 4, CPIS, C, P, R, &spec)) {
        stap_recording *rec;
        stap_input in;
        stap_error err;
        stap_read_options ro = {.override = 1, .layout = {{STAP_AXIS_RANGE, STAP_AXIS_CHANNEL, STAP_AXIS_PULSE}}};
        int st = stap_recording_open(path, &rec, &in, &ro, &err);
        CHECK(st == STAP_OK && in.channels == C && in.layout.source == STAP_LAYOUT_OVERRIDE &&
                  stap_recording_read(rec, 2, got, &err) == STAP_OK &&
                  memcmp(got, cube + 2 * n, sizeof(stap_cf32) * n) == 0,
              "overridden recording: %s", err.msg);
        if (!st) stap_recording_close(rec);
        stap_input_free(&in);
        st = stap_recording_open(path, &rec, &in, NULL, &err); /* without: as stored, assumed */
        CHECK(st == STAP_OK && in.channels == R && in.pulses == C && in.range_gates == P &&
                  in.layout.source == STAP_LAYOUT_ASSUMED && !in.layout.labelled,
              "unlabelled recording: %d %s", st, err.msg);
        if (!st) stap_recording_close(rec);
        stap_input_free(&in);
    }
    /* a float64 sample beyond float32 is named in the stored order */
    cube[n + (1 * P + 3) * R + 5] = 1e30f; /* CPI 1, channel 1, pulse 3, range 5 */
    layout_names("R,P,C", 4, names, sizeof names);
    spec = (layout_spec){"R,P,C", names, NULL, 0, 1, 0, LAYOUT_COMPLEX};
    pathof(path, sizeof path, "rec_layout_overflow.h5");
    if (!write_layout(path, cube, 4, CPIS, C, P, R, &spec)) {
        /* scale the stored double past FLT_MAX with the raw API */
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t d = H5Dopen2(f, "/data/iq", H5P_DEFAULT), s = H5Dget_space(d);
        hsize_t start[4] = {1, 5, 3, 1}, one[4] = {1, 1, 1, 1};
        double big[2] = {1e300, 0};
        hid_t ms = H5Screate_simple(4, one, NULL), mt = H5Tcreate(H5T_COMPOUND, 16);
        H5Tinsert(mt, "r", 0, H5T_NATIVE_DOUBLE);
        H5Tinsert(mt, "i", 8, H5T_NATIVE_DOUBLE);
        H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, one, NULL);
        CHECK(H5Dwrite(d, mt, ms, s, H5P_DEFAULT, big) >= 0, "writing the overflow");
        H5Tclose(mt);
        H5Sclose(ms);
        H5Sclose(s);
        H5Dclose(d);
        H5Fclose(f);
        stap_recording *rec;
        stap_input in;
        stap_error err;
        int st = stap_recording_open(path, &rec, &in, NULL, &err);
        CHECK(st == STAP_OK, "overflow recording: %s", err.msg);
        if (!st) {
            st = stap_recording_read(rec, 1, got, &err);
            CHECK(st == STAP_EFORMAT && strstr(err.msg, "CPI 1") &&
                      strstr(err.msg, "(range 5, pulse 3, channel 1)"),
                  "float64 overflow in a (R, P, C) recording: %d %s", st, err.msg);
            stap_recording_close(rec);
        }
        stap_input_free(&in);
    }
    free(cube);
    free(got);
}

/* Labels that cannot be honoured: refused, naming the file, the dataset and the labels —
 * unless the caller gives the layout. */
static void test_layout_bad_labels(void)
{
    enum { C = 2, P = 3, R = 4 };
    stap_cf32 cube[2 * C * P * R];
    for (int i = 0; i < 2 * C * P * R; i++) cube[i] = (float)i;
    static const struct {
        int rank;
        const char *ds, *dims;
        int list;
        const char *k1, *k2;
    } bad[] = {
        {3, "pulse,pulse,range", NULL, 0, "pulse, pulse, range", "named twice"},
        {3, "channels,element,range", NULL, 0, "channels, element, range", "named twice"},
        {3, "pulse,doppler,range", NULL, 0, "'doppler'", "not an axis name"},
        {3, "pulse,,range", NULL, 0, "pulse, '', range", "unlabelled"},
        {3, NULL, "pulse,channel", 0, "'dims' attribute (pulse, channel)", "2 axes"},
        {3, NULL, "pulse,channel,range,cpi", 0, "4 axes", "has 3"},
        {3, NULL, "pulse,channel,range,range", 1, "'dims' attribute", "4 axes"},
        {3, "pulse,channel,range", "channel,pulse,range", 0,
         "dimension labels (pulse, channel, range) and its 'dims' attribute (channel, pulse, range)",
         "disagree"},
        {3, "cpi,channel,range", NULL, 0, "cpi, channel, range", "rank-3"},
        {4, "pulse,cpi,channel,range", NULL, 0, "pulse, cpi, channel, range", "cpi must come first"},
        {4, "channel,pulse,range,cpi", NULL, 0, "channel, pulse, range, cpi", "first"},
        {4, NULL, "pulse,channel,range", 0, "3 axes", "has 4"},
    };
    char path[4200];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        layout_spec spec = {"C,P,R", bad[i].ds, bad[i].dims, bad[i].list, 0, 0, LAYOUT_COMPLEX};
        snprintf(path, sizeof path, "%s/bad_labels_%zu.h5", dir, i);
        if (write_layout(path, cube, bad[i].rank, 2, C, P, R, &spec)) continue;
        stap_input in;
        stap_recording *rec = NULL;
        stap_error err;
        int st = bad[i].rank == 3 ? stap_input_read(path, &in, NULL, &err)
                                  : stap_recording_open(path, &rec, &in, NULL, &err);
        CHECK(st == STAP_EFORMAT && strstr(err.msg, path) && strstr(err.msg, "/data/iq") &&
                  strstr(err.msg, bad[i].k1) && strstr(err.msg, bad[i].k2),
              "bad labels %zu: %d '%s' (wanted '%s', '%s')", i, st, err.msg, bad[i].k1, bad[i].k2);
        if (!st) {
            stap_recording_close(rec);
            stap_input_free(&in);
        }
        printf("  bad labels %-2zu -> %s\n", i, err.msg);
        /* an explicit layout reads it anyway, and says the labels differ */
        stap_read_options ro = {.override = 1, .layout = {{STAP_AXIS_CHANNEL, STAP_AXIS_PULSE, STAP_AXIS_RANGE}}};
        rec = NULL;
        st = bad[i].rank == 3 ? stap_input_read(path, &in, &ro, &err)
                              : stap_recording_open(path, &rec, &in, &ro, &err);
        CHECK(st == STAP_OK && in.channels == C && in.pulses == P && in.range_gates == R &&
                  in.layout.source == STAP_LAYOUT_OVERRIDE && in.layout.labelled &&
                  in.layout.labels_differ,
              "bad labels %zu overridden: %d %s", i, st, err.msg);
        if (!st) {
            stap_recording_close(rec);
            stap_input_free(&in);
        }
    }
    /* a DIMENSION_LABELS attribute of another shape (H5DSget_label would read it into an
     * array of `rank` pointers): refused, not read */
    layout_spec spec = {"C,P,R", NULL, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    pathof(path, sizeof path, "bad_dimension_labels.h5");
    if (!write_layout(path, cube, 3, 1, C, P, R, &spec)) {
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "/data/iq", H5P_DEFAULT);
        const hsize_t many = 1000;
        hid_t s = H5Screate_simple(1, &many, NULL);
        hid_t a = H5Acreate2(d, "DIMENSION_LABELS", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
        long long *zeros = calloc(many, sizeof *zeros);
        CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_LLONG, zeros) >= 0, "writing DIMENSION_LABELS");
        free(zeros);
        H5Aclose(a);
        H5Sclose(s);
        H5Dclose(d);
        H5Fclose(f);
        stap_input in;
        stap_error err;
        int st = stap_input_read(path, &in, NULL, &err);
        CHECK(st == STAP_EFORMAT && strstr(err.msg, "DIMENSION_LABELS") && strstr(err.msg, path),
              "a malformed DIMENSION_LABELS: %d %s", st, err.msg);
    }
}

/* What the writers label, read back with the raw dimension-scale API. */
static void test_layout_writers(tc_rng *rng)
{
    stap_input in;
    memset(&in, 0, sizeof in);
    in.channels = 2;
    in.pulses = 3;
    in.range_gates = 5;
    in.iq = malloc(sizeof(stap_cf32) * 30);
    random_cf32(rng, in.iq, 30);
    char path[4200], rpath[4200];
    stap_error err;
    pathof(path, sizeof path, "labelled_input.h5");
    pathof(rpath, sizeof rpath, "labelled_recording.h5");
    stap_recording_writer *w = NULL;
    CHECK(stap_input_write(path, &in, NULL, NULL, NULL, &err) == STAP_OK, "%s", err.msg);
    CHECK(stap_recording_create(&w, rpath, &in, 2, NULL, &err) == STAP_OK &&
              stap_recording_write(w, 0, in.iq, &err) == STAP_OK &&
              stap_recording_write(w, 1, in.iq, &err) == STAP_OK &&
              stap_recording_finish(w, NULL, NULL, &err) == STAP_OK,
          "recording: %s", err.msg);
    static const char *const want[2][4] = {{"channel", "pulse", "range", NULL},
                                           {"cpi", "channel", "pulse", "range"}};
    const char *files[2] = {path, rpath};
    for (int f = 0; f < 2; f++) {
        hid_t fh = H5Fopen(files[f], H5F_ACC_RDONLY, H5P_DEFAULT);
        hid_t d = fh >= 0 ? H5Dopen2(fh, "/data/iq", H5P_DEFAULT) : -1;
        for (int k = 0; k < 3 + f; k++) {
            char label[32] = "";
            CHECK(d >= 0 && H5DSget_label(d, (unsigned)k, label, sizeof label) > 0 &&
                      !strcmp(label, want[f][k]),
                  "%s: axis %d labelled '%s', expected '%s'", files[f], k, label, want[f][k]);
        }
        if (d >= 0) H5Dclose(d);
        if (fh >= 0) H5Fclose(fh);
    }
    stap_input back;
    CHECK(stap_input_read(path, &back, NULL, &err) == STAP_OK &&
              back.layout.source == STAP_LAYOUT_LABELS && back.layout.labelled &&
              !strcmp(back.layout.labels, "channel, pulse, range") &&
              memcmp(back.iq, in.iq, sizeof(stap_cf32) * 30) == 0,
          "the written input read back: %s, labels '%s'", err.msg, back.layout.labels);
    stap_input_free(&back);
    stap_input_free(&in);
}

/* The names and the shape rule. */
static void test_layout_names(void)
{
    static const struct {
        const char *text;
        const char *order; /* NULL: refused */
    } cases[] = {
        {"C,P,R", "C,P,R"},
        {"P,C,R", "P,C,R"},
        {"p, c, r", "P,C,R"},
        {"pulse,channel,range", "P,C,R"},
        {" Pulses , Channels , Range_Gates ", "P,C,R"},
        {"range_gate,element,pulse", "R,C,P"},
        {"range gates,elements,PULSE", "R,C,P"},
        {"gates,pulses,channel", "R,P,C"},
        {"range-cell,pulse,c", "R,P,C"},
        {"P,P,R", NULL},
        {"P,C", NULL},
        {"P,C,R,C", NULL},
        {"cpi,P,C,R", NULL},
        {"doppler,C,R", NULL},
        {"", NULL},
        {"P,C,R,", NULL},
        {"PCR", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        stap_layout l;
        stap_error err;
        int st = stap_layout_parse(cases[i].text, &l, &err);
        if (cases[i].order)
            CHECK(st == STAP_OK && same_layout(&l, cases[i].order), "layout '%s': %d %s",
                  cases[i].text, st, err.msg);
        else
            CHECK(st == STAP_EINVAL && strstr(err.msg, cases[i].text), "layout '%s' accepted",
                  cases[i].text);
    }
    char buf[64], why[128];
    stap_layout l = {{STAP_AXIS_RANGE, STAP_AXIS_CHANNEL, STAP_AXIS_PULSE}};
    CHECK(!strcmp(stap_layout_string(&l, 4, buf, sizeof buf), "cpi, range, channel, pulse"),
          "layout string '%s'", buf);
    CHECK(!stap_shape_looks_transposed(22, 128, 480, why, sizeof why) &&
              !stap_shape_looks_transposed(4, 128, 512, why, sizeof why) &&
              !stap_shape_looks_transposed(18, 18, 300, why, sizeof why) &&
              !stap_shape_looks_transposed(1, 1, 1, why, sizeof why),
          "a plausible shape looks transposed: %s", why);
    CHECK(stap_shape_looks_transposed(128, 22, 480, why, sizeof why) &&
              strstr(why, "more channels (128) than pulses (22)"),
          "(P, C, R) read as (C, P, R): '%s'", why);
    CHECK(stap_shape_looks_transposed(22, 480, 128, why, sizeof why) &&
              strstr(why, "fewer range gates (128) than pulses (480)"),
          "(C, R, P) read as (C, P, R): '%s'", why);
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

static void test_result(tc_rng *rng, const result_case *rc, int idx)
{
    stap_config cfg;
    stap_config_defaults(&cfg);
    cfg.channels = randint(rng, 1, 4);
    /* (a Hann window needs 3 pulses: of 2 it is all zeros, and validation refuses it) */
    cfg.pulses = randint(rng, rc->window == STAP_WINDOW_HANN ? 3 : 2, 6);
    cfg.doppler_bins = cfg.pulses + randint(rng, 0, 3);
    /* Q = 3 needs 3 Doppler bins (an engine is made of this configuration): with D = 2,
     * drawn about once in 30 seeds, Q = 1 */
    cfg.doppler_order = cfg.doppler_bins >= 3 ? 2 * randint(rng, 0, 1) + 1 : 1;
    cfg.segments = randint(rng, 1, 3);
    cfg.range_gates = cfg.segments * randint(rng, 2, 6);
    cfg.training = randint(rng, 1, cfg.range_gates / cfg.segments);
    cfg.beams = randint(rng, 1, 3);
    cfg.loading = tc_uniform(rng);
    cfg.window = rc->window;
    cfg.chebyshev_db = rc->cheb_db;
    cfg.element_spacing = 0.5 * tc_uniform(rng) + 0.25;
    cfg.backend = STAP_BACKEND_LAPACK;
    cfg.threads = randint(rng, 0, 8);
    const int D = cfg.doppler_bins, S = cfg.segments, B = cfg.beams, N = stap_dof(&cfg),
              R = cfg.range_gates;
    size_t nw = (size_t)D * S * B * N, ny = (size_t)B * D * R, nv = (size_t)B * N;
    stap_cf32 *W = malloc(sizeof(stap_cf32) * nw), *Y = malloc(sizeof(stap_cf32) * ny),
         *V = malloc(sizeof(stap_cf32) * nv);
    stap_cf32 *back = malloc(sizeof(stap_cf32) * (nw + ny + nv));
    random_cf32(rng, W, nw);
    random_cf32(rng, Y, ny);
    random_cf32(rng, V, nv);
    double timing[STAP_STAGE_COUNT];
    for (int s = 0; s < STAP_STAGE_COUNT; s++) timing[s] = 100 * tc_uniform(rng);
    stap_radar_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.has_prf = 1;
    meta.prf_hz = 1000 + tc_uniform(rng);
    meta.has_sample_rate = 1;
    meta.sample_rate_hz = 2e6 + tc_uniform(rng);
    stap_detection det[4];
    for (int i = 0; i < 4; i++) {
        det[i].beam = randint(rng, 0, B - 1);
        det[i].doppler_bin = randint(rng, 0, D - 1);
        det[i].range_cell = randint(rng, 0, R - 1);
        det[i].power = (float)(10 * tc_uniform(rng));
        det[i].snr_db = (float)(30 * tc_uniform(rng));
    }

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
    hook_state hook = {0, 0};
    res.extra = truth_hook;
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
    snprintf(path, sizeof path, "%s/result_%d.h5", dir, idx);
    int st = stap_result_write(path, &res, NULL, &err);
    CHECK(st == STAP_OK, "result %d: %s", idx, err.msg);
    CHECK(tc_count_tmp(dir) == 0, "result %d: temporary file left", idx);
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
        static const char *const names[5] = {"beam", "doppler_bin", "range_cell", "power",
                                             "snr_db"};
        int tok2 = H5Tget_class(t) == H5T_COMPOUND && H5Tget_nmembers(t) == 5;
        for (unsigned m = 0; tok2 && m < 5; m++) {
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
            stap_detection got[4];
            memset(got, 0, sizeof got);
            CHECK(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0 &&
                      memcmp(got, det, sizeof(stap_detection) * n) == 0,
                  "result %d: /detections values", idx);
            H5Tclose(mt);
        }
        CHECK(attr_string(f, "/detections", "cfar", res.cfar_description), "result %d: cfar", idx);
        H5Tclose(t);
        H5Sclose(s);
        H5Dclose(d);
    }
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
        aok = fabs(av[d] - fr * (rc->with_meta ? meta.prf_hz : 1)) <= 1e-9 * meta.prf_hz;
    }
    CHECK(aok, "result %d: %s values", idx, an);
    snprintf(an, sizeof an, "/axes/%s", rng_name);
    aok = read_axis(f, an, (hsize_t)R, av);
    for (int r = 0; aok && r < R; r++)
        aok = fabs(av[r] - r * (rc->with_meta ? 299792458.0 / (2 * meta.sample_rate_hz) : 1)) <=
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

static void minimal_result(stap_config *cfg, stap_result *res, stap_cf32 *buf)
{
    stap_config_defaults(cfg);
    cfg->channels = cfg->pulses = cfg->range_gates = cfg->doppler_bins = 1;
    cfg->doppler_order = cfg->segments = cfg->training = cfg->beams = 1;
    memset(res, 0, sizeof *res);
    buf[0] = buf[1] = buf[2] = 1;
    res->cfg = cfg;
    res->input_name = "unit";
    res->backend_name = "cpu";
    res->beams = 1;
    res->weights = buf;
    res->output = buf + 1;
    res->steering = buf + 2;
}

static void test_atomic_rules(void)
{
    stap_config cfg;
    stap_result res;
    stap_cf32 buf[3];
    minimal_result(&cfg, &res, buf);
    stap_error err;
    char path[4200], tmp[4200];

    /* an existing output is refused and left unchanged, by both writers */
    pathof(path, sizeof path, "existing.h5");
    write_text(path, "keep me\n");
    int st = stap_result_write(path, &res, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "already exists") && strstr(err.msg, path),
          "existing output: %d %s", st, err.msg);
    CHECK(file_equals(path, "keep me\n"), "existing output was modified");
    CHECK(stap_output_check(path, &err) == STAP_EIO && strstr(err.msg, "already exists"),
          "stap_output_check on an existing file: %s", err.msg);

    /* a dangling symbolic link counts as existing */
    pathof(path, sizeof path, "dangling.h5");
    CHECK(symlink("no/such/target", path) == 0, "symlink: %s", strerror(errno));
    CHECK(stap_output_check(path, &err) == STAP_EIO && stap_result_write(path, &res, NULL, &err) == STAP_EIO,
          "a dangling link was not treated as existing");

    /* a name that appears between begin and commit is not replaced (link(), not rename()) */
    pathof(path, sizeof path, "race.h5");
    st = stap_atomic_begin(path, tmp, sizeof tmp, STAP_WRITE_NEW, &err);
    char prefix[4300];
    snprintf(prefix, sizeof prefix, "%s/.race.h5.tmp.", dir);
    CHECK(st == STAP_OK && strncmp(tmp, prefix, strlen(prefix)) == 0 && exists(tmp),
          "stap_atomic_begin: %d '%s' (%s)", st, tmp, err.msg);
    write_text(tmp, "new\n");
    write_text(path, "first\n");
    st = stap_atomic_commit(tmp, path, STAP_WRITE_NEW, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "already exists") && file_equals(path, "first\n") &&
              !exists(tmp),
          "commit over a name created meanwhile: %d %s", st, err.msg);

    /* begin + commit publishes, begin + abort leaves nothing */
    pathof(path, sizeof path, "published.txt");
    st = stap_atomic_begin(path, tmp, sizeof tmp, STAP_WRITE_NEW, &err);
    write_text(tmp, "payload\n");
    CHECK(st == STAP_OK && stap_atomic_commit(tmp, path, STAP_WRITE_NEW, &err) == STAP_OK &&
              file_equals(path, "payload\n") && !exists(tmp),
          "begin/commit: %s", err.msg);
    pathof(path, sizeof path, "aborted.txt");
    st = stap_atomic_begin(path, tmp, sizeof tmp, STAP_WRITE_NEW, &err);
    stap_atomic_abort(tmp);
    CHECK(st == STAP_OK && !exists(tmp) && !exists(path), "begin/abort left a file");
    CHECK(stap_atomic_begin(path, tmp, 8, STAP_WRITE_NEW, &err) == STAP_EINVAL, "a too-small name buffer accepted");

    /* a relative path: the temporary sits in the current directory */
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        st = stap_atomic_begin("relative.h5", tmp, sizeof tmp, STAP_WRITE_NEW, &err);
        CHECK(st == STAP_OK && strncmp(tmp, ".relative.h5.tmp.", 17) == 0 && exists(tmp),
              "relative begin: '%s'", tmp);
        stap_atomic_abort(tmp);
        CHECK(chdir(cwd) == 0, "chdir back");
    }

    /* tc_failures publish nothing and leave no temporary */
    hook_state hook = {0, 1};
    res.extra = truth_hook;
    res.extra_user = &hook;
    pathof(path, sizeof path, "hook_fails_result.h5");
    st = stap_result_write(path, &res, NULL, &err);
    CHECK(st == STAP_EINVAL && strstr(err.msg, "on purpose") && !exists(path),
          "failing result hook: %d %s", st, err.msg);
    res.extra = NULL;
    res.weights = NULL;
    pathof(path, sizeof path, "incomplete.h5");
    CHECK(stap_result_write(path, &res, NULL, &err) == STAP_EINVAL && !exists(path),
          "result without weights");
    res.weights = buf;
    pathof(path, sizeof path, "no_such_dir/out.h5");
    st = stap_result_write(path, &res, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, path) && strstr(err.msg, "No such file"),
          "missing directory: %d %s", st, err.msg);
    CHECK(stap_output_check(path, &err) == STAP_EIO, "stap_output_check: missing directory accepted");
    pathof(path, sizeof path, "trailing/");
    CHECK(stap_output_check(path, &err) == STAP_EINVAL, "stap_output_check: 'dir/' accepted");
    CHECK(stap_output_check("", &err) == STAP_EINVAL, "stap_output_check: empty path accepted");

    /* an unwritable directory (root ignores permissions: skip then) */
    char ro[4200];
    pathof(ro, sizeof ro, "readonly");
    pathof(path, sizeof path, "readonly/out.h5");
    if (mkdir(ro, 0555) == 0 && geteuid() != 0) {
        st = stap_output_check(path, &err);
        CHECK(st == STAP_EIO && strstr(err.msg, "Permission denied"), "read-only dir: %d %s", st,
              err.msg);
        CHECK(stap_result_write(path, &res, NULL, &err) == STAP_EIO && !exists(path),
              "read-only dir write");
    }

    /* a new path is fine, and checking it leaves nothing behind */
    pathof(path, sizeof path, "fresh.h5");
    CHECK(stap_output_check(path, &err) == STAP_OK && !exists(path), "stap_output_check: %s",
          err.msg);
    CHECK(tc_count_tmp(dir) == 0, "temporary files left after the failures");
}

/* STAP_WRITE_REPLACE (rtstap -f): an existing regular file is replaced only when the new one
 * is complete; a failed or aborted write leaves it as it was; non-regular files are still
 * refused; STAP_WRITE_NEW stays the default of the writers without _mode. */
static void test_replace_mode(void)
{
    stap_config cfg;
    stap_result res;
    stap_cf32 buf[3];
    minimal_result(&cfg, &res, buf);
    stap_error err;
    char path[4200], tmp[4200];

    pathof(path, sizeof path, "replace.h5");
    write_text(path, "old\n");
    CHECK(stap_output_check_mode(path, STAP_WRITE_REPLACE, &err) == STAP_OK &&
              file_equals(path, "old\n"),
          "stap_output_check_mode(REPLACE) on a regular file: %s", err.msg);
    CHECK(stap_output_check_mode(path, STAP_WRITE_NEW, &err) == STAP_EIO,
          "stap_output_check_mode(NEW) accepted an existing file");
    /* a failing write (the hook fails after the temporary is made) keeps the old file */
    hook_state hook = {0, 1};
    res.extra = truth_hook;
    res.extra_user = &hook;
    int st = stap_result_write(path, &res, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err);
    CHECK(st == STAP_EINVAL && file_equals(path, "old\n"), "failed replace: %d %s", st, err.msg);
    res.extra = NULL;
    CHECK(stap_result_write(path, &res, NULL, &err) == STAP_EIO && file_equals(path, "old\n"),
          "stap_result_write replaced without the mode");
    st = stap_result_write(path, &res, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err);
    CHECK(st == STAP_OK && H5Fis_hdf5(path) > 0, "replace: %d %s", st, err.msg);
    /* ... and replaces a file it wrote itself, again */
    CHECK(stap_result_write(path, &res, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err) == STAP_OK,
          "second replace: %s", err.msg);

    /* begin + abort keeps the old file; begin + commit replaces it */
    pathof(path, sizeof path, "replace.txt");
    write_text(path, "old\n");
    st = stap_atomic_begin(path, tmp, sizeof tmp, STAP_WRITE_REPLACE, &err);
    write_text(tmp, "new\n");
    stap_atomic_abort(tmp);
    CHECK(st == STAP_OK && file_equals(path, "old\n") && !exists(tmp), "replace abort: %s",
          err.msg);
    st = stap_atomic_begin(path, tmp, sizeof tmp, STAP_WRITE_REPLACE, &err);
    write_text(tmp, "new\n");
    CHECK(st == STAP_OK && stap_atomic_commit(tmp, path, STAP_WRITE_REPLACE, &err) == STAP_OK &&
              file_equals(path, "new\n") && !exists(tmp),
          "replace commit: %s", err.msg);

    /* a directory, a symbolic link (dangling or not): refused, left alone */
    pathof(path, sizeof path, "replace_dir");
    CHECK(mkdir(path, 0700) == 0, "mkdir: %s", strerror(errno));
    st = stap_output_check_mode(path, STAP_WRITE_REPLACE, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "a directory"), "replace a directory: %d %s", st,
          err.msg);
    pathof(path, sizeof path, "replace_link.h5");
    CHECK(symlink("replace.txt", path) == 0, "symlink: %s", strerror(errno));
    st = stap_result_write(path, &res, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err);
    struct stat sb;
    CHECK(st == STAP_EIO && strstr(err.msg, "symbolic link") && lstat(path, &sb) == 0 &&
              S_ISLNK(sb.st_mode),
          "replace a symbolic link: %d %s", st, err.msg);
    pathof(path, sizeof path, "replace.txt");
    CHECK(file_equals(path, "new\n"), "the link's target was modified");
    /* the mode must be one of the two */
    CHECK(stap_atomic_begin(path, tmp, sizeof tmp, (stap_write_mode)7, &err) == STAP_EINVAL,
          "an invalid mode accepted");

    /* the other writers take the mode too */
    pathof(path, sizeof path, "replace_input.h5");
    write_text(path, "old\n");
    stap_input in;
    memset(&in, 0, sizeof in);
    stap_cf32 one = 1;
    in.channels = in.pulses = in.range_gates = 1;
    in.iq = &one;
    CHECK(stap_input_write(path, &in, NULL, NULL, NULL, &err) == STAP_EIO && file_equals(path, "old\n"),
          "stap_input_write replaced without the mode");
    CHECK(stap_input_write(path, &in, NULL, NULL, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err) == STAP_OK &&
              !file_equals(path, "old\n"),
          "stap_input_write, replacing: %s", err.msg);
    pathof(path, sizeof path, "replace_rec.h5");
    write_text(path, "old\n");
    stap_recording_writer *rw = NULL;
    st = stap_recording_create(&rw, path, &in, 2, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err);
    CHECK(st == STAP_OK && stap_recording_write(rw, 0, &one, &err) == STAP_OK,
          "recording replace: %s", err.msg);
    if (rw) stap_recording_abort(rw); /* failed half-way: the old file stays */
    CHECK(file_equals(path, "old\n"), "an aborted recording replaced the old file");
    rw = NULL;
    st = stap_recording_create(&rw, path, &in, 1, &(stap_write_options){.mode = STAP_WRITE_REPLACE}, &err);
    CHECK(st == STAP_OK && stap_recording_write(rw, 0, &one, &err) == STAP_OK &&
              stap_recording_finish(rw, NULL, NULL, &err) == STAP_OK && !file_equals(path, "old\n"),
          "recording replace finish: %s", err.msg);
    CHECK(tc_count_tmp(dir) == 0, "temporary files left after the replacements");
}


/* ---- unwritten data (issue 29): HDF5 reads the fill value where nothing was written ---- */

/* A recording of `cpis` CPIs of C x P x R, chunks of `rows` CPIs, of which the CPIs marked in
 * `write` are written (random samples, kept in x). */
static void write_partial(const char *path, int cpis, int rows, const int *write, int C, int P,
                          int R, stap_cf32 *x, tc_rng *rng)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "i", 4, H5T_NATIVE_FLOAT);
    const hsize_t dims[4] = {(hsize_t)cpis, (hsize_t)C, (hsize_t)P, (hsize_t)R};
    const hsize_t chunk[4] = {(hsize_t)rows, (hsize_t)C, (hsize_t)P, (hsize_t)R};
    hid_t sp = H5Screate_simple(4, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 4, chunk);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(f, "/data/iq", t, sp, lcpl, dcpl, H5P_DEFAULT);
    const char *labels[4] = {"cpi", "channel", "pulse", "range"};
    for (int k = 0; k < 4; k++) H5DSset_label(d, (unsigned)k, labels[k]);
    const size_t n = (size_t)C * P * R;
    for (int c = 0; c < cpis; c++) {
        if (!write[c]) continue;
        random_cf32(rng, x + (size_t)c * n, n);
        hsize_t start[4] = {(hsize_t)c, 0, 0, 0}, count[4] = {1, dims[1], dims[2], dims[3]};
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(4, count, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        H5Dwrite(d, t, ms, fs, H5P_DEFAULT, x + (size_t)c * n);
        H5Sclose(fs);
        H5Sclose(ms);
    }
    H5Dclose(d);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
}

static void test_unwritten(tc_rng *rng)
{
    enum { C = 2, P = 3, R = 5, N = 6 };
    const size_t n = (size_t)C * P * R;
    stap_cf32 *x = tc_xmalloc(sizeof(stap_cf32) * n * N), *cube = tc_xmalloc(sizeof(stap_cf32) * n);
    char path[4200];
    stap_error err;
    /* a CPI a chunk, CPIs 2 and 4 never written */
    const int gaps[N] = {1, 1, 0, 1, 0, 1};
    pathof(path, sizeof path, "gaps.h5");
    write_partial(path, N, 1, gaps, C, P, R, x, rng);
    stap_recording *rec = NULL;
    stap_input in;
    int st = stap_recording_open(path, &rec, &in, NULL, &err);
    CHECK(st == STAP_OK, "gaps: open: %s", err.msg);
    if (!st) {
        CHECK(stap_recording_cpis(rec) == N && stap_recording_written(rec) == 4,
              "gaps: %lld CPIs, %lld written; expected 6, 4", stap_recording_cpis(rec),
              stap_recording_written(rec));
        const long long want[4] = {0, 1, 3, 5};
        for (int k = 0; k < 4; k++)
            CHECK(stap_recording_written_index(rec, k) == want[k], "gaps: written CPI %d is %lld, "
                  "expected %lld", k, stap_recording_written_index(rec, k), want[k]);
        CHECK(stap_recording_written_index(rec, 4) == -1, "gaps: a fifth written CPI");
        long long un[4];
        CHECK(stap_recording_unwritten(rec, un, 4) == 2 && un[0] == 2 && un[1] == 4,
              "gaps: the unwritten CPIs are not 2 and 4");
        st = stap_recording_read(rec, 2, cube, &err);
        CHECK(st == STAP_EFORMAT && strstr(err.msg, "CPI 2") && strstr(err.msg, "never written"),
              "gaps: CPI 2 read: %d %s", st, err.msg);
        for (int c = 0; c < N; c++) {
            if (!gaps[c]) continue;
            st = stap_recording_read(rec, c, cube, &err);
            CHECK(st == STAP_OK && !memcmp(cube, x + (size_t)c * n, sizeof(stap_cf32) * n),
                  "gaps: CPI %d not read back exactly: %s", c, err.msg);
        }
        stap_recording_close(rec);
        stap_input_free(&in);
    }
    /* chunks of 2 CPIs: writing CPI 0 allocates the chunk of CPIs 0 and 1 (1 reads the fill
     * value there: a chunk written in part cannot be told apart) */
    const int first[N] = {1, 0, 0, 0, 0, 0};
    pathof(path, sizeof path, "rows.h5");
    write_partial(path, N, 2, first, C, P, R, x, rng);
    st = stap_recording_open(path, &rec, &in, NULL, &err);
    CHECK(st == STAP_OK && stap_recording_written(rec) == 2 && stap_recording_written_index(rec, 1) == 1,
          "rows of 2: %s, %lld written", err.msg, st ? -1 : stap_recording_written(rec));
    if (!st) {
        stap_recording_close(rec);
        stap_input_free(&in);
    }
    /* none written */
    const int none[N] = {0};
    pathof(path, sizeof path, "none.h5");
    write_partial(path, N, 1, none, C, P, R, x, rng);
    st = stap_recording_open(path, &rec, &in, NULL, &err);
    CHECK(st == STAP_OK && stap_recording_written(rec) == 0, "none written: %s", err.msg);
    if (!st) {
        stap_recording_close(rec);
        stap_input_free(&in);
    }
    /* one CPI (rank 3) with a chunk never written, and one never written at all: refused at
     * open, saying how much holds data */
    for (int contiguous = 0; contiguous < 2; contiguous++) {
        pathof(path, sizeof path, contiguous ? "one_contig.h5" : "one_chunk.h5");
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t t = H5Tcreate(H5T_COMPOUND, 8);
        H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
        H5Tinsert(t, "i", 4, H5T_NATIVE_FLOAT);
        const hsize_t dims[3] = {C, P, 4 * R}, chunk[3] = {C, P, R};
        hid_t sp = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (!contiguous) H5Pset_chunk(dcpl, 3, chunk);
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        hid_t d = H5Dcreate2(f, "/data/iq", t, sp, lcpl, dcpl, H5P_DEFAULT);
        if (!contiguous) { /* the first chunk of four */
            hsize_t start[3] = {0, 0, 0};
            hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, chunk, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, chunk, NULL);
            random_cf32(rng, x, n);
            H5Dwrite(d, t, ms, fs, H5P_DEFAULT, x);
            H5Sclose(fs);
            H5Sclose(ms);
        }
        H5Dclose(d);
        H5Pclose(lcpl);
        H5Pclose(dcpl);
        H5Sclose(sp);
        H5Tclose(t);
        H5Fclose(f);
        st = stap_input_read(path, &in, NULL, &err);
        CHECK(st == STAP_EFORMAT && strstr(err.msg, path) &&
                  strstr(err.msg, contiguous ? "was never written: HDF5 allocated no storage"
                                             : "never written in full: 1 of its 4 chunks"),
              "one CPI, %s: %d %s", contiguous ? "no storage" : "3 chunks unwritten", st, err.msg);
        CHECK(stap_io_open_objects() == 0, "one CPI never written: HDF5 objects left open");
        st = stap_recording_open(path, &rec, &in, NULL, &err);
        CHECK(st == STAP_EFORMAT, "one CPI never written: opened as a recording (%d)", st);
        if (!st) stap_recording_close(rec);
    }
    CHECK(stap_io_open_objects() == 0, "unwritten data: HDF5 objects left open");
    free(x);
    free(cube);
}

/* which datasets a link path names in a file (1 exists, 0 not, -1 file not readable) */
static int has_object(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return -1;
    int ok = H5Lexists(f, name, H5P_DEFAULT) > 0;
    H5Fclose(f);
    return ok;
}

/* stap_write_options.keep: the result files hold what was asked for, and nothing else */
static void test_keep(void)
{
    stap_config cfg;
    stap_result res;
    stap_cf32 buf[3];
    minimal_result(&cfg, &res, buf);
    stap_detection det = {0, 0, 0, 2.0f, 3.0f};
    res.have_detections = 1;
    res.detection_count = 1;
    res.detections = &det;
    stap_error err;
    char path[4200];
    static const struct {
        unsigned keep;
        int weights, output, detections;
    } one[] = {{0, 1, 1, 1},
               {STAP_KEEP_WEIGHTS, 1, 0, 0},
               {STAP_KEEP_DETECTIONS, 0, 0, 1},
               {STAP_KEEP_OUTPUT | STAP_KEEP_DETECTIONS, 0, 1, 1}};
    for (size_t k = 0; k < sizeof one / sizeof *one; k++) {
        snprintf(path, sizeof path, "%s/keep_one_%zu.h5", dir, k);
        stap_result r = res;
        if (!(one[k].keep & STAP_KEEP_WEIGHTS) && one[k].keep) r.weights = NULL; /* not needed */
        int st = stap_result_write(path, &r, &(stap_write_options){.keep = one[k].keep}, &err);
        CHECK(st == STAP_OK && has_object(path, "weights") == one[k].weights &&
                  has_object(path, "output") == one[k].output &&
                  has_object(path, "detections") == one[k].detections &&
                  has_object(path, "steering") == 1 && has_object(path, "config") == 1,
              "one CPI, keep %#x: %d %s", one[k].keep, st, err.msg);
    }
    /* a recording's writer: the default is weights and detections; without weights, a CPI
     * comes without them */
    static const struct {
        unsigned keep;
        int weights, output, detections;
    } rec[] = {{0, 1, 0, 1}, {STAP_KEEP_DETECTIONS, 0, 0, 1}, {STAP_KEEP_OUTPUT, 0, 1, 0}};
    double ms[STAP_STAGE_COUNT] = {0};
    for (size_t k = 0; k < sizeof rec / sizeof *rec; k++) {
        snprintf(path, sizeof path, "%s/keep_rec_%zu.h5", dir, k);
        stap_result_writer *w = NULL;
        int st = stap_result_writer_open(&w, path, &res, &(stap_write_options){.keep = rec[k].keep},
                                         &err);
        for (long long c = 0; c < 3 && st == STAP_OK; c++)
            st = stap_result_writer_append(w, c, c, rec[k].weights ? buf : NULL,
                                           rec[k].output ? buf + 1 : NULL, &det, 1, ms, &err);
        if (st == STAP_OK) {
            stap_result sum = res;
            st = stap_result_writer_close(w, &sum, &err);
        } else if (w) {
            stap_result_writer_abort(w);
        }
        CHECK(st == STAP_OK && has_object(path, "weights") == rec[k].weights &&
                  has_object(path, "output") == rec[k].output &&
                  has_object(path, "detections") == rec[k].detections &&
                  has_object(path, "timing") == 1,
              "recording, keep %#x: %d %s", rec[k].keep, st, err.msg);
    }
    /* allocated at open for the CPIs to come (stap_write_options.cpis): the same rows as
     * grown CPI by CPI, bit for bit; a run that stops early ends at the rows written */
    static const struct {
        long long cpis;
        int written;
    } pre[] = {{0, 4}, {4, 4}, {9, 4}};
    stap_cf32 rows[4][3];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 3; k++) rows[c][k] = STAP_CMPLXF(c + 0.25f * k, -c - 0.5f * k);
    for (size_t k = 0; k < sizeof pre / sizeof *pre; k++) {
        snprintf(path, sizeof path, "%s/prealloc_%zu.h5", dir, k);
        stap_result_writer *w = NULL;
        const stap_write_options wo = {.mode = STAP_WRITE_NEW, .keep = STAP_KEEP_WEIGHTS | STAP_KEEP_OUTPUT,
                                       .cpis = pre[k].cpis};
        int st = stap_result_writer_open(&w, path, &res, &wo, &err);
        for (long long c = 0; c < pre[k].written && st == STAP_OK; c++)
            st = stap_result_writer_append(w, c, c, rows[c], rows[c] + 1, NULL, 0, ms, &err);
        if (st == STAP_OK) {
            stap_result sum = res;
            st = stap_result_writer_close(w, &sum, &err);
        } else if (w) {
            stap_result_writer_abort(w);
        }
        hsize_t dims[5] = {0};
        hid_t f = st == STAP_OK ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
        hid_t d = f >= 0 ? H5Dopen2(f, "weights", H5P_DEFAULT) : -1, y = f >= 0 ? H5Dopen2(f, "output/iq", H5P_DEFAULT) : -1;
        hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
        if (sp >= 0) H5Sget_simple_extent_dims(sp, dims, NULL);
        int ok = d >= 0 && y >= 0 && dims[0] == 4;
        stap_cf32 wv[4], yv[4];
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(stap_cf32));
        H5Tinsert(ct, "r", 0, H5T_NATIVE_FLOAT);
        H5Tinsert(ct, "i", 4, H5T_NATIVE_FLOAT);
        ok = ok && H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, wv) >= 0 &&
             H5Dread(y, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, yv) >= 0;
        for (int c = 0; ok && c < 4; c++) {
            ok = !memcmp(&wv[c], &rows[c][0], sizeof(stap_cf32)) && !memcmp(&yv[c], &rows[c][1], sizeof(stap_cf32));
        }
        H5Tclose(ct);
        if (sp >= 0) H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
        if (y >= 0) H5Dclose(y);
        if (f >= 0) H5Fclose(f);
        CHECK(st == STAP_OK && ok, "writer allocated for %lld CPIs, %d written: %d %s (rows %llu)",
              pre[k].cpis, pre[k].written, st, err.msg, (unsigned long long)dims[0]);
    }
    /* a kept dataset's CPI must come with its data */
    stap_result_writer *w = NULL;
    snprintf(path, sizeof path, "%s/keep_missing.h5", dir);
    int st = stap_result_writer_open(&w, path, &res, NULL, &err);
    if (st == STAP_OK) {
        st = stap_result_writer_append(w, 0, 0, NULL, NULL, NULL, 0, ms, &err);
        stap_result_writer_abort(w);
    }
    CHECK(st == STAP_EINVAL && !exists(path), "a kept dataset without its data: %d", st);
}

/* A recording's writer holds its detections up to stap_write_options.detection_bytes (and
 * one CPI's more), not for 1 024 CPIs whatever their size (issue 43); none is lost. */
static void test_detection_bound(void)
{
    stap_config cfg;
    stap_result res;
    stap_cf32 buf[3];
    minimal_result(&cfg, &res, buf);
    res.have_detections = 1;
    enum { PER = 10, ROWS = 40 };
    stap_detection det[PER];
    for (int k = 0; k < PER; k++) det[k] = (stap_detection){0, 0, k, 2.0f, 3.0f};
    double ms[STAP_STAGE_COUNT] = {0};
    stap_error err;
    char path[4200];
    snprintf(path, sizeof path, "%s/det_bound.h5", dir);
    const size_t bound = 1000;
    stap_result_writer *w = NULL;
    int st = stap_result_writer_open(&w, path, &res, &(stap_write_options){.detection_bytes = bound}, &err);
    size_t most = 0, one = 0, rows = 0;
    for (long long c = 0; c < ROWS && st == STAP_OK; c++) {
        st = stap_result_writer_append(w, c, c, buf, NULL, det, PER, ms, &err);
        const size_t held = stap_result_writer_held(w, &rows);
        if (held > most) most = held;
        if (c == 0) one = held; /* one CPI's detections, as the writer keeps them */
    }
    if (st == STAP_OK) {
        stap_result sum = res;
        st = stap_result_writer_close(w, &sum, &err);
    } else if (w) {
        stap_result_writer_abort(w);
    }
    hsize_t n = 0;
    hid_t f = st == STAP_OK ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    hid_t d = f >= 0 ? H5Dopen2(f, "detections", H5P_DEFAULT) : -1, sp = d >= 0 ? H5Dget_space(d) : -1;
    if (sp >= 0) H5Sget_simple_extent_dims(sp, &n, NULL);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    CHECK(st == STAP_OK && one > 0 && most < bound + one && n == (hsize_t)PER * ROWS,
          "detections held up to %zu bytes and one CPI's (%zu): at most %zu held; %llu of %d written: %d %s",
          bound, one, most, (unsigned long long)n, PER * ROWS, st, err.msg);
}

int main(void)
{
    uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_h5io.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_h5io: cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    /* the library must not print HDF5's error stacks: keep HDF5's default printer on
     * here, so that any leak would show in the test log */
    test_input_roundtrip(&rng);
    test_kinds(seed);
    test_layout_names();
    test_layout_one_cpi(&rng, 3, 5, 7);
    test_layout_one_cpi(&rng, 3, 37, 70);
    test_layout_recordings(&rng);
    test_layout_bad_labels();
    test_layout_writers(&rng);
    test_results(&rng);
    test_atomic_rules();
    test_replace_mode();
    test_keep();
    test_detection_bound();
    test_unwritten(&rng);
    CHECK(stap_io_open_objects() == 0, "HDF5 objects left open at the end");
    CHECK(tc_count_tmp(dir) == 0, "temporary files left in %s", dir);
    tc_remove_tree(dir);
    if (tc_failures) {
        fprintf(stderr, "test_h5io: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    printf("test_h5io: all checks passed\n");
    return 0;
}
