/* test_h5io: the HDF5 file format (stap/io/) — bit-exact input round trips, float64,
 * big-endian and reordered-member conversion, every malformed input of mkinput_lib with
 * its message, cubes and recordings in every axis order with every kind of axis label
 * (and labels that are refused); recordings with CPIs never written. The
 * axis orders and labels are test_h5io_layout's, the result file and the atomic-write rules
 * test_h5io_result's. */
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
        in.channels = h5t_randint(rng, 1, 6);
        in.pulses = h5t_randint(rng, 1, 9);
        in.range_gates = h5t_randint(rng, 1, 40);
        size_t n = (size_t)in.channels * in.pulses * in.range_gates;
        in.iq = malloc(sizeof(stap_cf32) * n);
        h5t_random_cf32(rng, in.iq, n);
        /* extremes of float32 must survive bit for bit */
        const float special[] = {-0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 1e-40f};
        for (size_t k = 0; k < sizeof special / sizeof special[0] && 2 * k + 1 < 2 * n; k++)
            ((float *)in.iq)[(2 * k * 7919) % (2 * n)] = special[k];
        int with_extras = trial % 2 == 0;
        if (with_extras) {
            in.steering_beams = h5t_randint(rng, 1, 5);
            in.steering_len = h5t_randint(rng, 1, 12);
            in.steering = malloc(sizeof(stap_cf32) * in.steering_beams * in.steering_len);
            h5t_random_cf32(rng, in.steering, (size_t)in.steering_beams * in.steering_len);
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
        snprintf(path, sizeof path, "%s/roundtrip_%d.h5", h5t_dir, trial);
        h5t_hook_state hook = {0, 0};
        stap_error err;
        int st = stap_input_write(path, &in, with_extras ? h5t_truth_hook : NULL, &hook, NULL, &err);
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
    h5t_path(path, sizeof path, "hook_fails.h5");
    h5t_hook_state hook = {0, 1};
    stap_error err;
    int st = stap_input_write(path, &in, h5t_truth_hook, &hook, NULL, &err);
    CHECK(st == STAP_EINVAL && strstr(err.msg, "on purpose") && !h5t_exists(path),
          "failing input hook: %d '%s', file %s", st, err.msg, h5t_exists(path) ? "exists" : "absent");
    in.iq = NULL;
    CHECK(stap_input_write(path, &in, NULL, NULL, NULL, &err) == STAP_EINVAL && !h5t_exists(path),
          "input without a cube accepted");
    CHECK(tc_count_tmp(h5t_dir) == 0, "temporary files left after the input writes");
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
        snprintf(path, sizeof path, "%s/kind_%s.h5", h5t_dir, kind->name);
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
    h5t_path(path, sizeof path, "does_not_exist.h5");
    int st = stap_input_read(path, &in, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "cannot open") && strstr(err.msg, path) &&
              strstr(err.msg, "No such file"),
          "missing file: %d %s", st, err.msg);
    st = stap_input_read(h5t_dir, &in, NULL, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "directory"), "directory as input: %d %s", st, err.msg);
}

/* ---- axis labels and other axis orders (schema v1.1) ----------------------------------- */

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
        h5t_random_cf32(rng, x + (size_t)c * n, n);
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
    h5t_path(path, sizeof path, "gaps.h5");
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
    h5t_path(path, sizeof path, "rows.h5");
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
    h5t_path(path, sizeof path, "none.h5");
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
        h5t_path(path, sizeof path, contiguous ? "one_contig.h5" : "one_chunk.h5");
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
            h5t_random_cf32(rng, x, n);
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

int main(void)
{
    uint64_t seed;
    tc_rng rng;
    if (h5t_begin("test_h5io", &seed, &rng)) return 1;
    /* the library must not print HDF5's error stacks: keep HDF5's default printer on
     * here, so that any leak would show in the test log */
    test_input_roundtrip(&rng);
    test_kinds(seed);
    test_unwritten(&rng);
    return h5t_end("test_h5io", seed);
}
