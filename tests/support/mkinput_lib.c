/* mkinput_lib.c: writers of valid and malformed schema-v1 input files, straight through
 * the HDF5 C API (see mkinput_lib.h); one entry of mkinput_kinds[] per case. */
#include "mkinput_lib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "la_check.h"
#include "rtstap/common.h"

#define C_ MKINPUT_C
#define P_ MKINPUT_P
#define R_ MKINPUT_R
#define NCUBE ((size_t)C_ * P_ * R_)
#define NSTEER ((size_t)MKINPUT_STEER_B * C_)

const mkinput_kind mkinput_kinds[] = {
    {"valid", 1, 0, NULL, NULL, "4x8x48 complex64 cube with /radar and /array attributes"},
    {"float64", 1, 0, NULL, NULL, "valid, as a float64 {r,i} compound (converted)"},
    {"bigendian", 1, 0, NULL, NULL, "valid, as big-endian float32 {r,i}"},
    {"member_order", 1, 0, NULL, NULL, "valid, compound members stored as {i, r}"},
    {"steering", 1, 0, NULL, NULL, "valid cube plus a 3 x 4 /steering"},
    {"real", 0, STAP_EFORMAT, "real-valued", "/data/iq", "real float32 samples"},
    {"rank2", 0, STAP_EFORMAT, "rank 2", "expected 3", "/data/iq of shape (C, P*R)"},
    {"rank4", 0, STAP_EFORMAT, "rank 4", "/data/iq", "/data/iq of shape (C, P, R, 1)"},
    {"scalar", 0, STAP_EFORMAT, "rank 0", "/data/iq", "a scalar /data/iq"},
    {"zero_dim", 0, STAP_EFORMAT, "zero-size", "/data/iq", "/data/iq of shape (C, 0, R)"},
    {"member_names", 0, STAP_EFORMAT, "re, im", "r and i", "members named re and im"},
    /* recorder formats (issue 12): HDF5 converts them; `scale` multiplies */
    {"int16_interleaved", 1, 0, NULL, NULL, "int16 (C, P, R, 2) labelled channel,pulse,range,iq, scale 1e-3"},
    {"int16_interleaved_be", 1, 0, NULL, NULL, "big-endian int16 (C, P, R, 2), unlabelled, no scale"},
    {"int8_interleaved", 1, 0, NULL, NULL, "int8 (C, P, R, 2), dims attribute, float32 scale 0.04"},
    {"int32_interleaved", 1, 0, NULL, NULL, "int32 (C, P, R, 2), scale 1e-6 (read by way of double)"},
    {"float32_interleaved", 1, 0, NULL, NULL, "float32 (C, P, R, 2) labelled"},
    {"float64_interleaved_be", 1, 0, NULL, NULL, "big-endian float64 (C, P, R, 2)"},
    {"int16_ri", 1, 0, NULL, NULL, "int16 {r, i} compound, float32 scale 1e-3"},
    {"int32_ri", 1, 0, NULL, NULL, "int32 {r, i} compound, scale 1e-6"},
    {"int8_real_imag", 1, 0, NULL, NULL, "int8 {real, imag} compound, no scale"},
    {"int16_real_imag_be", 1, 0, NULL, NULL, "big-endian int16 {real, imag} compound, scale 1e-3"},
    {"float_real_imag", 1, 0, NULL, NULL, "float32 {real, imag} compound"},
    {"float64_real_imag_scaled", 1, 0, NULL, NULL, "float64 {real, imag} compound, scale 0.5"},
    {"uint_members", 0, STAP_EFORMAT, "unsigned", "member 'r'", "uint16 members r and i"},
    {"int64_members", 0, STAP_EFORMAT, "64-bit integer", "member 'r'", "int64 members r and i"},
    {"interleaved_3", 0, STAP_EFORMAT, "real-valued", "4 x 8 x 48 x 3", "int16 (C, P, R, 3)"},
    {"scale_zero", 0, STAP_EFORMAT, "'scale'", "finite number > 0", "int16 interleaved, scale 0"},
    {"scale_nan", 0, STAP_EFORMAT, "'scale'", "finite number > 0", "int16 interleaved, scale NaN"},
    {"scale_string", 0, STAP_EFORMAT, "'scale'", "string", "int16 interleaved, scale \"0.001\""},
    {"iq_not_last", 0, STAP_EFORMAT, "channel, pulse, iq, range", "only it is named iq",
     "int16 (C, P, R, 2) labelled channel,pulse,iq,range"},
    {"iq_on_complex", 0, STAP_EFORMAT, "channel, pulse, iq", "elements are complex",
     "complex64 cube labelled channel,pulse,iq"},
    {"int16_overflow", 0, STAP_EFORMAT, "overflows", "(channel 1, pulse 2, range 3)",
     "int16 interleaved, scale 1.2e34: sample 30000 beyond float32"},
    {"three_members", 0, STAP_EFORMAT, "3 members", "/data/iq", "members r, i and j"},
    {"nan", 0, STAP_EFORMAT, "non-finite", "(channel 2, pulse 5, range 17)", "a NaN sample"},
    {"inf", 0, STAP_EFORMAT, "non-finite", "(channel 3, pulse 7, range 31)", "an -Inf sample"},
    {"f64_overflow", 0, STAP_EFORMAT, "overflows", "(channel 1, pulse 2, range 3)",
     "a float64 sample beyond float32's range"},
    {"huge", 0, STAP_EFORMAT, "GiB", "/data/iq",
     "a header claiming a 65536 x 65536 x 256 cube (8 TiB; chunked, nothing stored)"},
    {"missing", 0, STAP_EFORMAT, "missing", "/data/iq", "no /data/iq (only /data/other)"},
    {"iq_group", 0, STAP_EFORMAT, "not a dataset", "/data/iq", "/data/iq is a group"},
    {"bad_prf", 0, STAP_EFORMAT, "prf_hz", "> 0", "/radar prf_hz = -1000"},
    {"prf_string", 0, STAP_EFORMAT, "prf_hz", "string", "/radar prf_hz is a string"},
    {"spacing_zero", 0, STAP_EFORMAT, "element_spacing_wavelengths", "> 0",
     "/array element_spacing_wavelengths = 0"},
    {"steering_rank1", 0, STAP_EFORMAT, "rank 1", "/steering", "/steering of shape (C,)"},
    /* data outside the file: followed before, reading other files as radar samples */
    {"external_link", 0, STAP_EFORMAT, "external link", "/data/iq", "/data/iq an external link to another file"},
    {"external_storage", 0, STAP_EFORMAT, "external file", "/data/iq", "/data/iq stored in /dev/zero (external raw storage)"},
    /* readable, refused by run (valid = 2): the narrow one was read past its end before,
     * the wide one reinterpreted, the many-rowed one allocated without a cap */
    {"steering_narrow", 2, 0, "/steering", NULL, "/steering 3 x 2, narrower than C*Q = 4"},
    {"steering_wide", 2, 0, "/steering", NULL, "/steering 3 x 12, wider than C*Q = 4"},
    {"steering_many", 2, 0, "/steering", NULL, "/steering 100000 x 4, over the 4096 beams"},
    {"steering_nan", 0, STAP_EFORMAT, "non-finite", "(beam 1, element 2)", "a NaN in /steering"},
    {"steering_zero", 0, STAP_EFORMAT, "zero-size", "/steering", "/steering of shape (0, C)"},
    {"steering_real", 0, STAP_EFORMAT, "real-valued", "/steering", "real float32 /steering"},
    {"text", 0, STAP_EIO, "not an HDF5", NULL, "a text file"},
    {"empty", 0, STAP_EIO, "not an HDF5", NULL, "an empty file"},
};
const int mkinput_nkinds = (int)(sizeof mkinput_kinds / sizeof mkinput_kinds[0]);

const mkinput_kind *mkinput_find(const char *name)
{
    for (int k = 0; k < mkinput_nkinds; k++)
        if (!strcmp(mkinput_kinds[k].name, name)) return &mkinput_kinds[k];
    return NULL;
}

void mkinput_samples(uint64_t seed, double *ri)
{
    tc_rng r;
    tc_rng_seed(&r, seed);
    for (size_t k = 0; k < 2 * NCUBE; k++) ri[k] = tc_normal(&r) * M_SQRT1_2;
}

void mkinput_steering(uint64_t seed, double *ri)
{
    tc_rng r;
    tc_rng_seed(&r, seed ^ 0x5eed5eedULL);
    for (size_t k = 0; k < 2 * NSTEER; k++) ri[k] = (float)tc_normal(&r);
}

/* A two-member compound of `base` (e.g. H5T_IEEE_F32BE) named n0, n1 in that order. */
static hid_t pair_type(hid_t base, const char *n0, const char *n1)
{
    size_t sz = H5Tget_size(base);
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sz);
    H5Tinsert(t, n0, 0, base);
    H5Tinsert(t, n1, sz, base);
    return t;
}

static int put_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                       const hsize_t *dims, const void *data)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int bad = space < 0 || d < 0;
    if (!bad && data && H5Sget_simple_extent_npoints(space) > 0)
        bad = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0;
    if (d >= 0) H5Dclose(d);
    if (space >= 0) H5Sclose(space);
    return bad ? -1 : 0;
}

static int put_attr(hid_t loc, const char *obj, const char *name, hid_t ftype, hid_t mtype,
                    const void *value)
{
    hid_t o = H5Oopen(loc, obj, H5P_DEFAULT);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(o, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    int bad = o < 0 || space < 0 || a < 0 || H5Awrite(a, mtype, value) < 0;
    if (a >= 0) H5Aclose(a);
    if (space >= 0) H5Sclose(space);
    if (o >= 0) H5Oclose(o);
    return bad ? -1 : 0;
}

static int put_group(hid_t loc, const char *name)
{
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    H5Gclose(g);
    return 0;
}

/* /data/iq from float samples in a compound {n0, n1} of base (float32 of some order). */
static int put_cube_f32(hid_t file, hid_t base, const char *n0, const char *n1, int rank,
                        const hsize_t *dims, const float *ri)
{
    hid_t ft = pair_type(base, n0, n1);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 2 * sizeof(float));
    H5Tinsert(mt, n0, 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, n1, sizeof(float), H5T_NATIVE_FLOAT);
    int bad = put_dataset(file, "/data/iq", ft, mt, rank, dims, ri);
    H5Tclose(ft);
    H5Tclose(mt);
    return bad;
}

static int put_meta(hid_t file)
{
    const double prf = MKINPUT_PRF_HZ, fc = MKINPUT_CARRIER_HZ, d = MKINPUT_SPACING;
    const long long fs = MKINPUT_SAMPLE_RATE_HZ;
    if (put_group(file, "radar") || put_group(file, "array")) return -1;
    if (put_attr(file, "/radar", "prf_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &prf) ||
        put_attr(file, "/radar", "carrier_frequency_hz", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, &fc) ||
        put_attr(file, "/radar", "sample_rate_hz", H5T_STD_I64LE, H5T_NATIVE_LLONG, &fs) ||
        put_attr(file, "/array", "element_spacing_wavelengths", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                 &d))
        return -1;
    return 0;
}

/* The kinds stored in another form than complex64: component, byte order, interleaved or
 * a compound {n0, n1}, the quantization of integer components, the `scale` attribute and
 * the labels. The reader must give (float)(stored value * scale), exactly. */
enum { F_I8, F_I16, F_I32, F_F32, F_F64, F_U16, F_I64 };
enum { SC_NONE, SC_F64, SC_F32, SC_STRING };
typedef struct sample_form {
    const char *kind;
    int comp, be, interleaved;
    const char *n0, *n1;   /* compound member names                             */
    double quant;          /* integer components: q = lrint(x * quant), clamped  */
    int scale_how;         /* SC_*                                               */
    double scale;
    const char *labels;    /* H5DSset_label per axis, comma-separated, or NULL   */
    const char *dims;      /* `dims` attribute, or NULL                          */
    int last;              /* an interleaved cube's last extent (2)               */
} sample_form;

static const sample_form forms[] = {
    {"int16_interleaved", F_I16, 0, 1, NULL, NULL, 1000, SC_F64, 1e-3, "channel,pulse,range,iq", NULL, 2},
    {"int16_interleaved_be", F_I16, 1, 1, NULL, NULL, 1000, SC_NONE, 0, NULL, NULL, 2},
    {"int8_interleaved", F_I8, 0, 1, NULL, NULL, 25, SC_F32, 0.04, NULL, "channel,pulse,range,iq", 2},
    {"int32_interleaved", F_I32, 0, 1, NULL, NULL, 1e6, SC_F64, 1e-6, "channel,pulse,range,iq", NULL, 2},
    {"float32_interleaved", F_F32, 0, 1, NULL, NULL, 0, SC_NONE, 0, "channel,pulse,range,iq", NULL, 2},
    {"float64_interleaved_be", F_F64, 1, 1, NULL, NULL, 0, SC_NONE, 0, NULL, NULL, 2},
    {"int16_ri", F_I16, 0, 0, "r", "i", 1000, SC_F32, 1e-3, NULL, NULL, 0},
    {"int32_ri", F_I32, 0, 0, "r", "i", 1e6, SC_F64, 1e-6, NULL, NULL, 0},
    {"int8_real_imag", F_I8, 0, 0, "real", "imag", 25, SC_NONE, 0, NULL, NULL, 0},
    {"int16_real_imag_be", F_I16, 1, 0, "real", "imag", 1000, SC_F64, 1e-3, NULL, NULL, 0},
    {"float_real_imag", F_F32, 0, 0, "real", "imag", 0, SC_NONE, 0, NULL, NULL, 0},
    {"float64_real_imag_scaled", F_F64, 0, 0, "real", "imag", 0, SC_F64, 0.5, NULL, NULL, 0},
    {"uint_members", F_U16, 0, 0, "r", "i", 1000, SC_NONE, 0, NULL, NULL, 0},
    {"int64_members", F_I64, 0, 0, "r", "i", 1000, SC_NONE, 0, NULL, NULL, 0},
    {"interleaved_3", F_I16, 0, 1, NULL, NULL, 1000, SC_NONE, 0, NULL, NULL, 3},
    {"scale_zero", F_I16, 0, 1, NULL, NULL, 1000, SC_F64, 0, NULL, NULL, 2},
    {"scale_nan", F_I16, 0, 1, NULL, NULL, 1000, SC_F64, NAN, NULL, NULL, 2},
    {"scale_string", F_I16, 0, 1, NULL, NULL, 1000, SC_STRING, 0, NULL, NULL, 2},
    {"iq_not_last", F_I16, 0, 1, NULL, NULL, 1000, SC_NONE, 0, "channel,pulse,iq,range", NULL, 2},
    {"int16_overflow", F_I16, 0, 1, NULL, NULL, 1000, SC_F64, 1.2e34, NULL, NULL, 2},
};

static const sample_form *find_form(const char *kind)
{
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (!strcmp(forms[i].kind, kind)) return &forms[i];
    return NULL;
}

static hid_t form_file_type(int comp, int be)
{
    switch (comp) {
    case F_I8: return H5T_STD_I8LE;
    case F_I16: return be ? H5T_STD_I16BE : H5T_STD_I16LE;
    case F_I32: return be ? H5T_STD_I32BE : H5T_STD_I32LE;
    case F_F32: return be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
    case F_F64: return be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE;
    case F_U16: return H5T_STD_U16LE;
    default: return H5T_STD_I64LE;
    }
}

/* The stored values of a form (as doubles, exactly what the file holds) from the samples. */
static void form_values(const sample_form *f, const double *ri, double *v)
{
    const double lim = f->comp == F_I8 ? 127 : f->comp == F_I16 ? 32767 : 2147483647.0;
    for (size_t k = 0; k < 2 * NCUBE; k++) {
        if (f->comp == F_F32) v[k] = (float)ri[k];
        else if (f->comp == F_F64) v[k] = ri[k];
        else {
            double q = (double)lrint(ri[k] * f->quant);
            v[k] = q > lim ? lim : q < -lim ? -lim : q;
        }
    }
    if (!strcmp(f->kind, "int16_overflow")) v[2 * ((1 * P_ + 2) * R_ + 3)] = 30000;
}

static double form_scale(const sample_form *f)
{
    if (f->scale_how == SC_F32) return (double)(float)f->scale;
    return f->scale_how == SC_F64 ? f->scale : 1;
}

void mkinput_gain(const char *kind, double *gain, double *half_step)
{
    const sample_form *f = find_form(kind);
    const int quantized = f && f->comp != F_F32 && f->comp != F_F64;
    *gain = f ? form_scale(f) * (quantized ? f->quant : 1) : 1;
    *half_step = quantized ? 0.5 / f->quant : 0;
}

int mkinput_expected(const char *kind, uint64_t seed, float *ri_out, double *scale)
{
    const mkinput_kind *k = mkinput_find(kind);
    if (!k || !k->valid) return -1;
    double *ri = malloc(sizeof(double) * 2 * NCUBE);
    if (!ri) return -1;
    mkinput_samples(seed, ri);
    const sample_form *f = find_form(kind);
    *scale = f ? form_scale(f) : 1;
    if (f) form_values(f, ri, ri);
    for (size_t i = 0; i < 2 * NCUBE; i++) ri_out[i] = (float)(ri[i] * *scale);
    free(ri);
    return 0;
}

/* /data/iq of a form, with its scale and labels. */
static int put_form(hid_t file, const sample_form *f, const double *ri)
{
    double *v = malloc(sizeof(double) * 2 * NCUBE);
    if (!v) return -1;
    form_values(f, ri, v);
    const hid_t base = form_file_type(f->comp, f->be);
    hid_t ft, mt;
    hsize_t dims[4] = {C_, P_, R_, (hsize_t)f->last};
    if (f->interleaved) {
        ft = H5Tcopy(base);
        mt = H5Tcopy(H5T_NATIVE_DOUBLE);
        if (f->last != 2) dims[3] = (hsize_t)f->last; /* the values do not matter: refused */
    } else {
        size_t sz = H5Tget_size(base);
        ft = H5Tcreate(H5T_COMPOUND, 2 * sz);
        H5Tinsert(ft, f->n0, 0, base);
        H5Tinsert(ft, f->n1, sz, base);
        mt = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
        H5Tinsert(mt, f->n0, 0, H5T_NATIVE_DOUBLE);
        H5Tinsert(mt, f->n1, sizeof(double), H5T_NATIVE_DOUBLE);
    }
    double *buf = v;
    if (f->last == 3) { /* (C, P, R, 3): r, i and a zero */
        buf = calloc(3 * NCUBE, sizeof(double));
        for (size_t k = 0; buf && k < NCUBE; k++) {
            buf[3 * k] = v[2 * k];
            buf[3 * k + 1] = v[2 * k + 1];
        }
    }
    int bad = !buf || put_dataset(file, "/data/iq", ft, mt, f->interleaved ? 4 : 3, dims, buf);
    if (buf != v) free(buf);
    free(v);
    H5Tclose(ft);
    H5Tclose(mt);
    if (bad) return -1;
    hid_t d = H5Dopen2(file, "/data/iq", H5P_DEFAULT);
    if (d < 0) return -1;
    if (f->scale_how == SC_F64 || f->scale_how == SC_F32) {
        float sf = (float)f->scale;
        bad |= f->scale_how == SC_F64
                   ? put_attr(file, "/data/iq", "scale", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &f->scale)
                   : put_attr(file, "/data/iq", "scale", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &sf);
    } else if (f->scale_how == SC_STRING) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 6);
        bad |= put_attr(file, "/data/iq", "scale", st, st, "0.001");
        H5Tclose(st);
    }
    if (f->labels) {
        char buf2[128];
        snprintf(buf2, sizeof buf2, "%s", f->labels);
        unsigned k = 0;
        for (char *tok = strtok(buf2, ","); tok && !bad; tok = strtok(NULL, ","), k++)
            bad |= H5DSset_label(d, k, tok) < 0;
    }
    if (f->dims) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, strlen(f->dims) + 1);
        bad |= put_attr(file, "/data/iq", "dims", st, st, f->dims);
        H5Tclose(st);
    }
    H5Dclose(d);
    return bad ? -1 : 0;
}

/* the malformed /steering kinds (steering_*), beside a valid cube */
static int put_bad_steering(hid_t file, const char *kind, const hsize_t *cube, const hsize_t *sdims,
                            const float *rf, float *svf)
{
    hid_t le = H5T_IEEE_F32LE;
    int bad = put_cube_f32(file, le, "r", "i", 3, cube, rf);
    hid_t t = pair_type(le, "r", "i"), m = pair_type(H5T_NATIVE_FLOAT, "r", "i");
    if (!strcmp(kind, "steering_rank1")) {
        const hsize_t d1 = C_;
        bad |= put_dataset(file, "/steering", t, m, 1, &d1, svf);
    } else if (!strcmp(kind, "steering_nan")) {
        svf[2 * (1 * C_ + 2) + 1] = NAN;
        bad |= put_dataset(file, "/steering", t, m, 2, sdims, svf);
    } else if (!strcmp(kind, "steering_narrow") || !strcmp(kind, "steering_wide") ||
               !strcmp(kind, "steering_many")) {
        const hsize_t dd[2] = {!strcmp(kind, "steering_many") ? 100000 : 3,
                               !strcmp(kind, "steering_narrow") ? 2
                               : !strcmp(kind, "steering_wide") ? 12 : C_};
        float *big = calloc(2 * dd[0] * dd[1], sizeof(float));
        for (size_t i = 0; big && i < 2 * dd[0] * dd[1]; i++) big[i] = (float)(1 + i % 7);
        bad |= !big || put_dataset(file, "/steering", t, m, 2, dd, big);
        free(big);
    } else if (!strcmp(kind, "steering_zero")) {
        const hsize_t d0[2] = {0, C_};
        bad |= put_dataset(file, "/steering", t, m, 2, d0, NULL);
    } else {
        bad |= put_dataset(file, "/steering", le, H5T_NATIVE_FLOAT, 2, sdims, svf);
    }
    H5Tclose(t);
    H5Tclose(m);
    return bad;
}

/* a valid cube with a malformed attribute: spacing_zero, bad_prf, prf_string */
static int put_bad_attrs(hid_t file, const char *kind, const hsize_t *cube, const float *rf)
{
    hid_t le = H5T_IEEE_F32LE;
    int bad = put_cube_f32(file, le, "r", "i", 3, cube, rf);
    if (!strcmp(kind, "spacing_zero")) {
        const double zero = 0;
        bad |=
            put_group(file, "array") || put_attr(file, "/array", "element_spacing_wavelengths",
                                                 H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &zero);
    } else if (!strcmp(kind, "bad_prf")) {
        const double neg = -1000;
        bad |= put_group(file, "radar") ||
               put_attr(file, "/radar", "prf_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &neg);
    } else {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 5);
        bad |= put_group(file, "radar") || put_attr(file, "/radar", "prf_hz", st, st, "1000");
        H5Tclose(st);
    }
    return bad;
}

static int write_hdf5(const mkinput_kind *k, const char *path, uint64_t seed, char *why,
                      size_t whylen)
{
    const char *kind = k->name;
    double *ri = malloc(sizeof(double) * 2 * NCUBE);
    float *rf = malloc(sizeof(float) * 2 * (NCUBE + 1));
    double sv[2 * NSTEER];
    float svf[2 * NSTEER];
    if (!ri || !rf) {
        free(ri);
        free(rf);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    mkinput_samples(seed, ri);
    for (size_t i = 0; i < 2 * NCUBE; i++) rf[i] = (float)ri[i];
    mkinput_steering(seed, sv);
    for (size_t i = 0; i < 2 * NSTEER; i++) svf[i] = (float)sv[i];

    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) {
        free(ri);
        free(rf);
        snprintf(why, whylen, "cannot create '%s'", path);
        return -1;
    }
    int bad = put_group(file, "data");
    const hsize_t cube[4] = {C_, P_, R_, 1};
    const hsize_t sdims[2] = {MKINPUT_STEER_B, C_};
    hid_t le = H5T_IEEE_F32LE;

    const sample_form *form = find_form(kind);
    if (form) {
        bad |= put_form(file, form, ri);
    } else if (!strcmp(kind, "valid") || !strcmp(kind, "steering")) {
        bad |= put_cube_f32(file, le, "r", "i", 3, cube, rf);
        if (!strcmp(kind, "steering")) {
            hid_t t = pair_type(le, "r", "i"), m = pair_type(H5T_NATIVE_FLOAT, "r", "i");
            bad |= put_dataset(file, "/steering", t, m, 2, sdims, svf);
            H5Tclose(t);
            H5Tclose(m);
        }
    } else if (!strcmp(kind, "float64") || !strcmp(kind, "f64_overflow")) {
        if (!strcmp(kind, "f64_overflow")) ri[2 * ((1 * P_ + 2) * R_ + 3) + 1] = -1e300;
        hid_t t = pair_type(H5T_IEEE_F64LE, "r", "i"), m = pair_type(H5T_NATIVE_DOUBLE, "r", "i");
        bad |= put_dataset(file, "/data/iq", t, m, 3, cube, ri);
        H5Tclose(t);
        H5Tclose(m);
    } else if (!strcmp(kind, "bigendian")) {
        bad |= put_cube_f32(file, H5T_IEEE_F32BE, "r", "i", 3, cube, rf);
    } else if (!strcmp(kind, "member_order")) {
        /* memory holds (r, i) pairs; a file type {i, r} at swapped offsets */
        hid_t ft = H5Tcreate(H5T_COMPOUND, 8), mt = pair_type(H5T_NATIVE_FLOAT, "r", "i");
        H5Tinsert(ft, "i", 0, le);
        H5Tinsert(ft, "r", 4, le);
        bad |= put_dataset(file, "/data/iq", ft, mt, 3, cube, rf);
        H5Tclose(ft);
        H5Tclose(mt);
    } else if (!strcmp(kind, "real")) {
        bad |= put_dataset(file, "/data/iq", le, H5T_NATIVE_FLOAT, 3, cube, rf);
    } else if (!strcmp(kind, "rank2")) {
        const hsize_t d2[2] = {C_, P_ * R_};
        bad |= put_cube_f32(file, le, "r", "i", 2, d2, rf);
    } else if (!strcmp(kind, "rank4")) {
        bad |= put_cube_f32(file, le, "r", "i", 4, cube, rf);
    } else if (!strcmp(kind, "scalar")) {
        bad |= put_cube_f32(file, le, "r", "i", 0, NULL, rf);
    } else if (!strcmp(kind, "zero_dim")) {
        const hsize_t d0[3] = {C_, 0, R_};
        bad |= put_cube_f32(file, le, "r", "i", 3, d0, NULL);
    } else if (!strcmp(kind, "member_names")) {
        bad |= put_cube_f32(file, le, "re", "im", 3, cube, rf);
    } else if (!strcmp(kind, "iq_on_complex")) {
        bad |= put_cube_f32(file, le, "r", "i", 3, cube, rf);
        hid_t d = H5Dopen2(file, "/data/iq", H5P_DEFAULT);
        bad |= d < 0 || H5DSset_label(d, 0, "channel") < 0 || H5DSset_label(d, 1, "pulse") < 0 ||
               H5DSset_label(d, 2, "iq") < 0;
        if (d >= 0) H5Dclose(d);
    } else if (!strcmp(kind, "three_members")) {
        hid_t t = H5Tcreate(H5T_COMPOUND, 12), m = H5Tcreate(H5T_COMPOUND, 12);
        H5Tinsert(t, "r", 0, le);
        H5Tinsert(t, "i", 4, le);
        H5Tinsert(t, "j", 8, le);
        H5Tinsert(m, "r", 0, H5T_NATIVE_FLOAT);
        H5Tinsert(m, "i", 4, H5T_NATIVE_FLOAT);
        H5Tinsert(m, "j", 8, H5T_NATIVE_FLOAT);
        float *f3 = calloc(3 * NCUBE, sizeof(float));
        bad |= !f3 || put_dataset(file, "/data/iq", t, m, 3, cube, f3);
        free(f3);
        H5Tclose(t);
        H5Tclose(m);
    } else if (!strcmp(kind, "nan") || !strcmp(kind, "inf")) {
        if (!strcmp(kind, "nan"))
            rf[2 * ((2 * P_ + 5) * R_ + 17)] = NAN;
        else
            rf[2 * ((3 * P_ + 7) * R_ + 31) + 1] = -INFINITY;
        bad |= put_cube_f32(file, le, "r", "i", 3, cube, rf);
    } else if (!strcmp(kind, "huge")) {
        /* chunked, so that HDF5 allocates nothing: only the header is absurd */
        const hsize_t dh[3] = {65536, 65536, 256}, chunk[3] = {1, 1, 256};
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hid_t t = pair_type(le, "r", "i");
        hid_t space = H5Screate_simple(3, dh, NULL);
        hid_t d = -1;
        if (dcpl >= 0 && H5Pset_chunk(dcpl, 3, chunk) >= 0)
            d = H5Dcreate2(file, "/data/iq", t, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        bad |= d < 0;
        if (d >= 0) H5Dclose(d);
        H5Sclose(space);
        H5Tclose(t);
        H5Pclose(dcpl);
    } else if (!strcmp(kind, "missing")) {
        bad |= put_dataset(file, "/data/other", le, H5T_NATIVE_FLOAT, 3, cube, rf) | put_meta(file);
    } else if (!strcmp(kind, "iq_group")) {
        bad |= put_group(file, "/data/iq");
    } else if (!strcmp(kind, "bad_prf") || !strcmp(kind, "prf_string") ||
               !strcmp(kind, "spacing_zero")) {
        bad |= put_bad_attrs(file, kind, cube, rf);
    } else if (!strcmp(kind, "external_link")) {
        hid_t g = H5Gopen2(file, "/data", H5P_DEFAULT);
        bad |= g < 0 || H5Lcreate_external("other.h5", "/data/iq", g, "iq", H5P_DEFAULT, H5P_DEFAULT) < 0;
        if (g >= 0) H5Gclose(g);
    } else if (!strcmp(kind, "external_storage")) {
        hid_t t = pair_type(le, "r", "i"), dcpl = H5Pcreate(H5P_DATASET_CREATE), sp = H5Screate_simple(3, cube, NULL);
        hid_t d = -1;
        if (H5Pset_external(dcpl, "/dev/zero", 0, (hsize_t)NCUBE * 8) >= 0)
            d = H5Dcreate2(file, "/data/iq", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        bad |= d < 0;
        if (d >= 0) H5Dclose(d);
        H5Sclose(sp);
        H5Pclose(dcpl);
        H5Tclose(t);
    } else if (!strncmp(kind, "steering_", 9)) {
        bad |= put_bad_steering(file, kind, cube, sdims, rf, svf);
    } else {
        bad = -1;
        snprintf(why, whylen, "no writer for kind '%s'", kind);
    }
    if (k->valid) bad |= put_meta(file);
    if (H5Fclose(file) < 0) bad = -1;
    free(ri);
    free(rf);
    if (bad && !why[0]) snprintf(why, whylen, "HDF5 failed writing kind '%s' to '%s'", kind, path);
    return bad ? -1 : 0;
}

int mkinput_write(const char *kind, const char *path, uint64_t seed, char *why, size_t whylen)
{
    why[0] = '\0';
    const mkinput_kind *k = mkinput_find(kind);
    if (!k) {
        snprintf(why, whylen, "unknown kind '%s' (mkinput --list)", kind);
        return -1;
    }
    if (!strcmp(kind, "text") || !strcmp(kind, "empty")) {
        FILE *f = fopen(path, "w");
        if (!f) {
            snprintf(why, whylen, "cannot create '%s'", path);
            return -1;
        }
        if (!strcmp(kind, "text")) fputs("channels,pulses,range\n4,8,32\nthis is not HDF5\n", f);
        if (fclose(f)) {
            snprintf(why, whylen, "cannot write '%s'", path);
            return -1;
        }
        return 0;
    }
    return write_hdf5(k, path, seed, why, whylen);
}

int mkinput_write_complex64(const char *kind, const char *path, uint64_t seed, char *why,
                            size_t whylen)
{
    why[0] = '\0';
    float *rf = malloc(sizeof(float) * 2 * NCUBE);
    double scale;
    if (!rf || mkinput_expected(kind, seed, rf, &scale)) {
        free(rf);
        snprintf(why, whylen, "'%s' is not a valid kind (mkinput --list)", kind);
        return -1;
    }
    const hsize_t cube[3] = {C_, P_, R_};
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int bad = file < 0 || put_group(file, "data") ||
              put_cube_f32(file, H5T_IEEE_F32LE, "r", "i", 3, cube, rf) || put_meta(file);
    if (!bad && !strcmp(kind, "steering")) {
        double sv[2 * NSTEER];
        float svf[2 * NSTEER];
        mkinput_steering(seed, sv);
        for (size_t i = 0; i < 2 * NSTEER; i++) svf[i] = (float)sv[i];
        const hsize_t sdims[2] = {MKINPUT_STEER_B, C_};
        hid_t t = pair_type(H5T_IEEE_F32LE, "r", "i"), m = pair_type(H5T_NATIVE_FLOAT, "r", "i");
        bad = put_dataset(file, "/steering", t, m, 2, sdims, svf);
        H5Tclose(t);
        H5Tclose(m);
    }
    if (file >= 0 && H5Fclose(file) < 0) bad = 1;
    free(rf);
    if (bad) snprintf(why, whylen, "HDF5 failed writing the complex64 form of '%s' to '%s'", kind, path);
    return bad ? -1 : 0;
}
