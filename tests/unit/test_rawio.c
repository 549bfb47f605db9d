/* test_rawio: raw interleaved complex samples (stap/io/raw.c) — the type names, the
 * conversion of every type by HDF5 (byte order, integers, floats) with a scale against
 * values computed here, the refusal of non-finite and out-of-range samples by index, and an
 * import of a raw file in another axis order, read back through stap_recording_read. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5io.h"
#include "la_check.h"
#include "rawio.h"
#include "testutil.h"

/* value v as a component of `bytes` bytes (integer or float), little- or big-endian */
static void put(unsigned char *out, double v, int bytes, int is_float, int big)
{
    unsigned char b[8];
    if (is_float && bytes == 4) {
        float f = (float)v;
        memcpy(b, &f, 4);
    } else if (is_float) {
        memcpy(b, &v, 8);
    } else {
        long long q = (long long)v;
        for (int k = 0; k < bytes; k++) b[k] = (unsigned char)((unsigned long long)q >> (8 * k));
    }
    for (int k = 0; k < bytes; k++) out[k] = big ? b[bytes - 1 - k] : b[k];
}

static void test_types(void)
{
    static const struct {
        const char *name;
        int bytes, is_float, big;
    } t[] = {{"ci8", 1, 0, 0},     {"ci16_le", 2, 0, 0}, {"CI16_BE", 2, 0, 1},
             {"ci32_le", 4, 0, 0}, {"ci32_be", 4, 0, 1}, {"cf32_le", 4, 1, 0},
             {"cf32_be", 4, 1, 1}, {"cf64_le", 8, 1, 0}, {"cf64_be", 8, 1, 1}};
    tc_rng rng;
    tc_rng_seed(&rng, 7);
    enum { M = 257 };
    for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
        stap_raw_type ty;
        stap_error err;
        CHECK(stap_raw_type_parse(t[k].name, &ty, &err) == STAP_OK &&
                  stap_raw_sample_bytes(ty) == (size_t)(2 * t[k].bytes),
              "type %s: %s", t[k].name, err.msg);
        unsigned char *raw = malloc(16 * M);
        double v[2 * M];
        const double lim = t[k].bytes == 1 ? 127 : t[k].bytes == 2 ? 32767 : 2147483647.0;
        for (int i = 0; i < 2 * M; i++) {
            double x = tc_normal(&rng) * (t[k].is_float ? 1 : lim / 4);
            if (!t[k].is_float) x = fmax(-lim, fmin(lim, nearbyint(x))) + 0.0;
            if (t[k].is_float && t[k].bytes == 4) x = (float)x;
            if (i == 0 && !t[k].is_float) x = -lim; /* the extremes */
            if (i == 1 && !t[k].is_float) x = lim;
            v[i] = x;
            put(raw + (size_t)i * t[k].bytes, x, t[k].bytes, t[k].is_float, t[k].big);
        }
        stap_cf32 out[M];
        size_t bad = 99;
        const double scale = 0.37;
        int st = stap_raw_convert(ty, raw, M, scale, out, &bad, &err);
        int same = st == STAP_OK;
        for (int i = 0; same && i < M; i++)
            same = crealf(out[i]) == (float)(v[2 * i] * scale) &&
                   cimagf(out[i]) == (float)(v[2 * i + 1] * scale);
        CHECK(same, "type %s: converted samples differ (%d %s)", t[k].name, st, err.msg);
        if (t[k].is_float) { /* a NaN is refused by index (the buffer was converted in place) */
            for (int i = 0; i < 2 * M; i++)
                put(raw + (size_t)i * t[k].bytes, i == 2 * 100 + 1 ? NAN : v[i], t[k].bytes, 1,
                    t[k].big);
            st = stap_raw_convert(ty, raw, M, 1, out, &bad, &err);
            CHECK(st == STAP_EFORMAT && bad == 100 && strstr(err.msg, "not finite"),
                  "type %s: NaN: %d, index %zu, %s", t[k].name, st, bad, err.msg);
        }
        /* a scale that overflows float32 */
        for (int i = 0; i < 2 * M; i++)
            put(raw + (size_t)i * t[k].bytes, i == 2 * 37 ? 100 : 1, t[k].bytes, t[k].is_float,
                t[k].big);
        st = stap_raw_convert(ty, raw, M, 1e37, out, &bad, &err);
        CHECK(st == STAP_EFORMAT && bad == 37 && strstr(err.msg, "overflows float32"),
              "type %s: overflow: %d, index %zu, %s", t[k].name, st, bad, err.msg);
        free(raw);
    }
    stap_raw_type ty;
    stap_error err;
    CHECK(stap_raw_type_parse("cu8", &ty, &err) == STAP_EINVAL && strstr(err.msg, "unsigned") &&
              strstr(err.msg, "ci16_le"),
          "cu8: %s", err.msg);
    CHECK(stap_raw_type_parse("rf32_le", &ty, &err) == STAP_EINVAL && strstr(err.msg, "real"),
          "rf32_le: %s", err.msg);
    CHECK(stap_raw_type_parse("ci12", &ty, &err) == STAP_EINVAL && strstr(err.msg, "'ci12'"),
          "ci12: %s", err.msg);
}

/* A 2-CPI recording stored (range, pulse, channel), big-endian int16 after a header, read
 * back as (C, P, R). */
static void test_import(void)
{
    enum { C = 3, P = 5, R = 7, CPIS = 2, HDR = 11 };
    char dir[] = "/tmp/test_rawio.XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char in[64], out[64], one[64];
    snprintf(in, sizeof in, "%s/in.bin", dir);
    snprintf(out, sizeof out, "%s/out.h5", dir);
    snprintf(one, sizeof one, "%s/one.h5", dir);
    const size_t n = (size_t)C * P * R;
    short q[CPIS][C][P][R][2];
    FILE *f = fopen(in, "wb");
    for (int k = 0; k < HDR; k++) fputc(0x55, f);
    for (int c = 0; c < CPIS; c++)
        for (int r = 0; r < R; r++)
            for (int p = 0; p < P; p++)
                for (int ch = 0; ch < C; ch++)
                    for (int z = 0; z < 2; z++) {
                        short v = (short)(1000 * c + 100 * ch + 10 * p + r) * (z ? -1 : 1);
                        q[c][ch][p][r][z] = v;
                        unsigned char b[2];
                        put(b, v, 2, 0, 1);
                        fwrite(b, 1, 2, f);
                    }
    fclose(f);
    stap_raw_import imp;
    memset(&imp, 0, sizeof imp);
    imp.input = in;
    imp.type = STAP_RAW_CI16_BE;
    imp.channels = C;
    imp.pulses = P;
    imp.range_gates = R;
    imp.cpis = CPIS;
    imp.layout = (stap_layout){{STAP_AXIS_RANGE, STAP_AXIS_PULSE, STAP_AXIS_CHANNEL}};
    imp.scale = 0.5;
    imp.offset = HDR;
    imp.meta.has_prf = 1;
    imp.meta.prf_hz = 1234;
    imp.source = "test";
    stap_error err;
    int st = stap_raw_import_file(out, &imp, &err);
    CHECK(st == STAP_OK, "import: %s", err.msg);
    stap_recording *rec = NULL;
    stap_input hdr;
    if (!st && stap_recording_open(out, &rec, &hdr, NULL, &err) == STAP_OK) {
        CHECK(stap_recording_cpis(rec) == CPIS && hdr.channels == C && hdr.pulses == P &&
                  hdr.range_gates == R && hdr.meta.has_prf && hdr.meta.prf_hz == 1234 &&
                  hdr.layout.source == STAP_LAYOUT_LABELS,
              "imported recording's shape, metadata or labels");
        stap_cf32 cube[C * P * R];
        for (int c = 0; c < CPIS; c++) {
            int ok = stap_recording_read(rec, c, cube, &err) == STAP_OK;
            for (int ch = 0; ok && ch < C; ch++)
                for (int p = 0; ok && p < P; p++)
                    for (int r = 0; ok && r < R; r++) {
                        stap_cf32 x = cube[((size_t)ch * P + p) * R + r];
                        ok = crealf(x) == 0.5f * q[c][ch][p][r][0] && cimagf(x) == 0.5f * q[c][ch][p][r][1];
                    }
            CHECK(ok, "CPI %d of the import is not the raw samples, transposed and scaled", c);
        }
        stap_recording_close(rec);
        stap_input_free(&hdr);
    }
    /* one CPI (cpis 0) of a file holding two: the size is refused, naming both */
    imp.cpis = 0;
    st = stap_raw_import_file(one, &imp, &err);
    char want[96];
    snprintf(want, sizeof want, "holds %zu bytes", HDR + CPIS * n * 4);
    CHECK(st == STAP_EFORMAT && strstr(err.msg, want) && strstr(err.msg, "need exactly") &&
              access(one, F_OK) != 0,
          "size mismatch: %d %s", st, err.msg);
    imp.scale = 0;
    CHECK(stap_raw_import_file(one, &imp, &err) == STAP_EINVAL, "scale 0 accepted");
    unlink(in);
    unlink(out);
    rmdir(dir);
}

int main(void)
{
    test_types();
    test_import();
    if (tc_failures) {
        fprintf(stderr, "test_rawio: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_rawio: all checks passed\n");
    return 0;
}
