/* mkraw: a raw file of interleaved complex samples (for rtstap import-raw and import-sigmf,
 * tests/cli/cli_formats.sh) and the complex64 file a correct import gives, written with the raw
 * HDF5 API (not stap/). Samples are complex normal (seeded); integer types store
 * q = round(x * Q) (Q = 25 for ci8, 1000 for ci16, 1e6 for ci32), floats x itself; the
 * reference holds (float)(stored value * SCALE), (C, P, R) or (CPIs, C, P, R).
 * usage: mkraw TYPE C,P,R[,CPIS] ORDER SEED RAW REF.h5 [SCALE] [--header N] [--nan]
 *   ORDER    the stored order of each CPI's axes, e.g. P,R,C (letters C, P, R)
 *   --header N bytes (0xab) before the samples; --nan: the real part of CPI 0's sample
 *            (channel 1, pulse 2, range 3) is NaN (float types) */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"

static const struct {
    const char *name;
    int bytes, is_float, big;
    double quant;
} types[] = {
    {"ci8", 1, 0, 0, 25},      {"ci16_le", 2, 0, 0, 1000}, {"ci16_be", 2, 0, 1, 1000},
    {"ci32_le", 4, 0, 0, 1e6}, {"ci32_be", 4, 0, 1, 1e6},  {"cf32_le", 4, 1, 0, 0},
    {"cf32_be", 4, 1, 1, 0},   {"cf64_le", 8, 1, 0, 0},    {"cf64_be", 8, 1, 1, 0},
};

/* value v as a component of type t, in its byte order, at out */
static void encode(int t, double v, unsigned char *out)
{
    unsigned char b[8];
    const int n = types[t].bytes;
    if (types[t].is_float && n == 4) {
        float f = (float)v;
        memcpy(b, &f, 4);
    } else if (types[t].is_float) {
        memcpy(b, &v, 8);
    } else {
        long long q = (long long)v;
        for (int k = 0; k < n; k++) b[k] = (unsigned char)((unsigned long long)q >> (8 * k));
    }
    /* b is little-endian (x86; the float bytes are the host's) */
    for (int k = 0; k < n; k++) out[k] = types[t].big ? b[n - 1 - k] : b[k];
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: mkraw TYPE C,P,R[,CPIS] ORDER SEED RAW REF.h5 [SCALE] [--header N] "
                        "[--nan]\n");
        return 2;
    }
    int t = -1;
    for (int k = 0; k < (int)(sizeof types / sizeof *types); k++)
        if (!strcmp(types[k].name, argv[1])) t = k;
    long long cpis = 0;
    int ext[3];
    int nf = sscanf(argv[2], "%d,%d,%d,%lld", &ext[0], &ext[1], &ext[2], &cpis);
    int axis[3], seen[3] = {0, 0, 0}, na = 0;
    for (const char *p = argv[3]; *p; p++) {
        const char *at = strchr("CPR", *p);
        if (*p == ',' || !at) continue;
        if (na < 3) axis[na++] = (int)(at - "CPR");
        seen[at - "CPR"]++;
    }
    double scale = 1;
    long header = 0;
    int nan = 0;
    for (int a = 7; a < argc; a++) {
        if (!strcmp(argv[a], "--header") && a + 1 < argc) header = atol(argv[++a]);
        else if (!strcmp(argv[a], "--nan")) nan = 1;
        else scale = atof(argv[a]);
    }
    if (t < 0 || nf < 3 || na != 3 || seen[0] != 1 || seen[1] != 1 || seen[2] != 1) {
        fprintf(stderr, "mkraw: bad TYPE, shape or ORDER\n");
        return 2;
    }
    const long long ncpi = cpis > 0 ? cpis : 1;
    const size_t n = (size_t)ext[0] * ext[1] * ext[2];
    double *v = malloc(sizeof(double) * 2 * n);
    float *ref = malloc(sizeof(float) * 2 * n * (size_t)ncpi);
    unsigned char *raw = malloc((size_t)2 * types[t].bytes * n);
    FILE *f = fopen(argv[5], "wb");
    if (!v || !ref || !raw || !f) {
        fprintf(stderr, "mkraw: cannot write '%s'\n", argv[5]);
        return 1;
    }
    for (long k = 0; k < header; k++) fputc(0xab, f);
    tc_rng rng;
    tc_rng_seed(&rng, strtoull(argv[4], NULL, 0));
    const double lim = types[t].bytes == 1 ? 127 : types[t].bytes == 2 ? 32767 : 2147483647.0;
    const size_t stride[3] = {(size_t)ext[1] * ext[2], (size_t)ext[2], 1};
    int sd[3];
    for (int k = 0; k < 3; k++) sd[k] = ext[axis[k]];
    for (long long c = 0; c < ncpi; c++) {
        /* the values stored, (C, P, R) order */
        for (size_t k = 0; k < 2 * n; k++) {
            double x = tc_normal(&rng) * M_SQRT1_2;
            if (types[t].is_float) {
                v[k] = types[t].bytes == 4 ? (double)(float)x : x;
            } else {
                double q = nearbyint(x * types[t].quant) + 0.0; /* integers have no -0 */
                v[k] = q > lim ? lim : q < -lim ? -lim : q;
            }
            ref[2 * n * (size_t)c + k] = (float)(v[k] * scale);
        }
        if (nan && c == 0 && types[t].is_float) v[2 * ((1 * stride[0]) + 2 * stride[1] + 3)] = NAN;
        /* in stored order */
        size_t at = 0;
        for (int i0 = 0; i0 < sd[0]; i0++)
            for (int i1 = 0; i1 < sd[1]; i1++)
                for (int i2 = 0; i2 < sd[2]; i2++, at++) {
                    const size_t k = i0 * stride[axis[0]] + i1 * stride[axis[1]] + i2 * stride[axis[2]];
                    encode(t, v[2 * k], raw + 2 * types[t].bytes * at);
                    encode(t, v[2 * k + 1], raw + 2 * types[t].bytes * at + types[t].bytes);
                }
        if (fwrite(raw, (size_t)2 * types[t].bytes, n, f) != n) {
            fprintf(stderr, "mkraw: cannot write '%s'\n", argv[5]);
            return 1;
        }
    }
    if (fclose(f)) return 1;
    /* the reference: complex64 {r, i}, little-endian */
    hid_t h = H5Fcreate(argv[6], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(h, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ft = H5Tcreate(H5T_COMPOUND, 8), mt = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(ft, "r", 0, H5T_IEEE_F32LE);
    H5Tinsert(ft, "i", 4, H5T_IEEE_F32LE);
    H5Tinsert(mt, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, "i", 4, H5T_NATIVE_FLOAT);
    const hsize_t dims[4] = {(hsize_t)ncpi, (hsize_t)ext[0], (hsize_t)ext[1], (hsize_t)ext[2]};
    hid_t s = cpis > 0 ? H5Screate_simple(4, dims, NULL) : H5Screate_simple(3, dims + 1, NULL);
    hid_t d = H5Dcreate2(g, "iq", ft, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int bad = h < 0 || d < 0 || H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, ref) < 0;
    H5Dclose(d);
    H5Sclose(s);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Gclose(g);
    if (H5Fclose(h) < 0 || bad) {
        fprintf(stderr, "mkraw: cannot write '%s'\n", argv[6]);
        return 1;
    }
    free(v);
    free(ref);
    free(raw);
    return 0;
}
