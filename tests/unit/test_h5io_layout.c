/* test_h5io_layout: cubes and recordings in every axis order with every kind of axis label
 * (stap/io/layout.c), the labels that are refused, the layout writers and names. */
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


/* ---- axis labels and other axis orders (schema v1.1) ----------------------------------- */

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
    h5t_random_cf32(rng, cube, n);
    char path[4200], names[64];
    for (int o = 0; o < 6; o++)
        for (int how = 0; how < 6; how++) {
            /* 0 dimension labels, 1 dims string, 2 dims list, 3 both, 4 float64 with labels,
             * 5 none (read as stored, assumed) */
            layout_names(h5t_orders[o], 3, names, sizeof names);
            layout_spec spec = {h5t_orders[o], how == 0 || how >= 3 ? names : NULL,
                                how == 1 || how == 2 || how == 3 ? names : NULL, how == 2,
                                how == 4, 0, LAYOUT_COMPLEX};
            if (how == 5) spec.ds_labels = NULL;
            snprintf(path, sizeof path, "%s/layout_%d_%d_%d.h5", h5t_dir, R, o, how);
            if (write_layout(path, cube, 3, 1, C, P, R, &spec)) continue;
            stap_input in;
            stap_error err;
            int st = stap_input_read(path, &in, NULL, &err);
            CHECK(st == STAP_OK, "order %s, labels %d: %s", h5t_orders[o], how, err.msg);
            if (st) continue;
            if (how < 5) {
                CHECK(in.channels == C && in.pulses == P && in.range_gates == R &&
                          memcmp(in.iq, cube, sizeof(stap_cf32) * n) == 0,
                      "order %s, labels %d: not read back as the (C, P, R) cube (%d x %d x %d)",
                      h5t_orders[o], how, in.channels, in.pulses, in.range_gates);
                CHECK(in.layout.source == STAP_LAYOUT_LABELS && in.layout.labelled &&
                          same_layout(&in.layout.layout, h5t_orders[o]) && in.layout.rank == 3,
                      "order %s, labels %d: report source %d", h5t_orders[o], how, in.layout.source);
            } else {
                CHECK(in.layout.source == STAP_LAYOUT_ASSUMED && !in.layout.labelled &&
                          same_layout(&in.layout.layout, "C,P,R"),
                      "order %s unlabelled: report source %d", h5t_orders[o], in.layout.source);
                stap_input_free(&in);
                /* the caller's layout reads it right, and nothing differs from no labels */
                stap_read_options ro = {.override = 1};
                CHECK(stap_layout_parse(h5t_orders[o], &ro.layout, &err) == STAP_OK, "%s", err.msg);
                st = stap_input_read(path, &in, &ro, &err);
                CHECK(st == STAP_OK && in.channels == C && in.pulses == P && in.range_gates == R &&
                          memcmp(in.iq, cube, sizeof(stap_cf32) * n) == 0 &&
                          in.layout.source == STAP_LAYOUT_OVERRIDE && !in.layout.labels_differ,
                      "order %s unlabelled, overridden: %d %s", h5t_orders[o], st, err.msg);
            }
            stap_input_free(&in);
        }
    /* an override against (P, C, R) labels holds, and says it differs; one that agrees not */
    layout_names("P,C,R", 3, names, sizeof names);
    layout_spec spec = {"P,C,R", names, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    snprintf(path, sizeof path, "%s/layout_override_%d.h5", h5t_dir, R);
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
    snprintf(path, sizeof path, "%s/layout_nan_%d.h5", h5t_dir, R);
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
    h5t_random_cf32(rng, cube, n * CPIS);
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
            layout_names(h5t_orders[o], 4, names, sizeof names);
            layout_spec spec = {h5t_orders[o], by_dims ? NULL : names, by_dims ? names : NULL, 0,
                                how == 2, by_dims, forms[how]};
            snprintf(path, sizeof path, "%s/rec_layout_%d_%d.h5", h5t_dir, o, how);
            if (write_layout(path, cube, 4, CPIS, C, P, R, &spec)) continue;
            stap_recording *rec;
            stap_input in;
            stap_error err;
            int st = stap_recording_open(path, &rec, &in, NULL, &err);
            CHECK(st == STAP_OK, "recording %s/%d: %s", h5t_orders[o], how, err.msg);
            if (st) continue;
            CHECK(stap_recording_cpis(rec) == CPIS && stap_recording_rank(rec) == 4 &&
                      in.channels == C && in.pulses == P && in.range_gates == R &&
                      in.layout.source == STAP_LAYOUT_LABELS && in.layout.rank == 4 &&
                      same_layout(&in.layout.layout, h5t_orders[o]) && !strcmp(in.samples, samples[how]) &&
                      in.layout.interleaved == (forms[how] == LAYOUT_I16_IQ || forms[how] == LAYOUT_F32_IQ),
                  "recording %s/%d: shape %d x %d x %d, source %d, samples '%s'", h5t_orders[o], how,
                  in.channels, in.pulses, in.range_gates, in.layout.source, in.samples);
            for (int k = 0; k < CPIS; k++) {
                memset(got, 0, sizeof(stap_cf32) * n);
                st = stap_recording_read(rec, k, got, &err);
                CHECK(st == STAP_OK && memcmp(got, cube + (size_t)k * n, sizeof(stap_cf32) * n) == 0,
                      "recording %s/%d: CPI %d not read back as (C, P, R): %s", h5t_orders[o], how, k,
                      st ? err.msg : "values differ");
            }
            stap_recording_close(rec);
            stap_input_free(&in);
        }
    /* overriding an unlabelled recording's order */
    layout_spec spec = {"R,C,P", NULL, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    h5t_path(path, sizeof path, "rec_layout_override.h5");
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
    h5t_path(path, sizeof path, "rec_layout_overflow.h5");
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
        snprintf(path, sizeof path, "%s/bad_labels_%zu.h5", h5t_dir, i);
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
    h5t_path(path, sizeof path, "bad_dimension_labels.h5");
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
    h5t_random_cf32(rng, in.iq, 30);
    char path[4200], rpath[4200];
    stap_error err;
    h5t_path(path, sizeof path, "labelled_input.h5");
    h5t_path(rpath, sizeof rpath, "labelled_recording.h5");
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

int main(void)
{
    uint64_t seed;
    tc_rng rng;
    if (h5t_begin("test_h5io_layout", &seed, &rng)) return 1;
    /* the library must not print HDF5's error stacks: keep HDF5's default printer on
     * here, so that any leak would show in the test log */
    test_layout_names();
    test_layout_one_cpi(&rng, 3, 5, 7);
    test_layout_one_cpi(&rng, 3, 37, 70);
    test_layout_recordings(&rng);
    test_layout_bad_labels();
    test_layout_writers(&rng);
    return h5t_end("test_h5io_layout", seed);
}
