/* layout_lib.c: /data/iq written in another axis order and labelled (see layout_lib.h),
 * straight through the HDF5 C API and its dimension-scale API. */
#include "layout_lib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <hdf5_hl.h>

/* "P,C,R" -> axis[k] (0 channel, 1 pulse, 2 range); -1 when malformed */
static int parse_order(const char *order, int axis[3])
{
    int seen[3] = {0, 0, 0}, n = 0;
    for (const char *p = order; *p; p++) {
        if (*p == ',' || *p == ' ') continue;
        const char *at = strchr("CPR", *p);
        if (!at || n == 3) return -1;
        int a = (int)(at - "CPR");
        if (seen[a]++) return -1;
        axis[n++] = a;
    }
    return n == 3 ? 0 : -1;
}

const char *layout_names(const char *order, int rank, char *buf, size_t len)
{
    static const char *const names[3] = {"channel", "pulse", "range"};
    int axis[3];
    if (parse_order(order, axis)) return NULL;
    snprintf(buf, len, "%s%s,%s,%s", rank == 4 ? "cpi," : "", names[axis[0]], names[axis[1]],
             names[axis[2]]);
    return buf;
}

/* split "a,b,c" into at most 8 pieces of at most 63 bytes */
static int split(const char *text, char (*out)[64])
{
    int n = 0;
    for (const char *p = text; n < 8; n++) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        snprintf(out[n], 64, "%.*s", (int)(len < 63 ? len : 63), p);
        if (!c) return n + 1;
        p = c + 1;
    }
    return n;
}

static int put_dims_attr(hid_t dset, const layout_spec *spec)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = -1, a = -1;
    int bad = t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0;
    if (!bad && spec->dims_list) {
        char parts[8][64];
        const char *v[8];
        hsize_t n = (hsize_t)split(spec->dims_attr, parts);
        for (hsize_t i = 0; i < n; i++) v[i] = parts[i];
        s = H5Screate_simple(1, &n, NULL);
        a = H5Acreate2(dset, "dims", t, s, H5P_DEFAULT, H5P_DEFAULT);
        bad = s < 0 || a < 0 || H5Awrite(a, t, v) < 0;
    } else if (!bad) {
        s = H5Screate(H5S_SCALAR);
        a = H5Acreate2(dset, "dims", t, s, H5P_DEFAULT, H5P_DEFAULT);
        bad = s < 0 || a < 0 || H5Awrite(a, t, &spec->dims_attr) < 0;
    }
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    return bad ? -1 : 0;
}

int layout_quantize(stap_cf32 *x, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        /* + 0.0: integers have no negative zero */
        const double re = nearbyint(crealf(x[k]) / LAYOUT_I16_SCALE) + 0.0;
        const double im = nearbyint(cimagf(x[k]) / LAYOUT_I16_SCALE) + 0.0;
        if (fabs(re) > 32767 || fabs(im) > 32767) return -1;
        x[k] = STAP_CMPLXF((float)(re * LAYOUT_I16_SCALE), (float)(im * LAYOUT_I16_SCALE));
    }
    return 0;
}

/* "a,b,c" + ",iq" when the form is interleaved (static buffer per call site) */
static const char *with_iq(const char *names, int form, char *buf, size_t len)
{
    if (!names || (form != LAYOUT_I16_IQ && form != LAYOUT_F32_IQ)) return names;
    snprintf(buf, len, "%s,iq", names);
    return buf;
}

int layout_put_iq(int64_t file_id, const stap_cf32 *cube, int rank, long long cpis, int C, int P, int R,
                  const layout_spec *spec, char *why, size_t whylen)
{
    hid_t file = (hid_t)file_id;
    int axis[3];
    if (rank == 3) cpis = 1;
    if ((rank != 3 && rank != 4) || parse_order(spec->order, axis)) {
        snprintf(why, whylen, "rank %d or order '%s' not understood", rank, spec->order);
        return -1;
    }
    const hsize_t cpr[3] = {(hsize_t)C, (hsize_t)P, (hsize_t)R};
    const size_t stride[3] = {(size_t)P * R, (size_t)R, 1}, n = (size_t)C * P * R;
    hsize_t sd[3], dims[5], chunk[5];
    for (int k = 0; k < 3; k++) sd[k] = cpr[axis[k]];
    const int off = rank - 3;
    dims[0] = (hsize_t)cpis;
    chunk[0] = 1;
    for (int k = 0; k < 3; k++) dims[k + off] = chunk[k + off] = sd[k];

    /* the samples in stored order, as (r, i) pairs of double: HDF5 converts them into the
     * file's type */
    const int iq = spec->form == LAYOUT_I16_IQ || spec->form == LAYOUT_F32_IQ;
    const int i16 = spec->form == LAYOUT_I16_IQ || spec->form == LAYOUT_I16_REAL_IMAG;
    const double unit = i16 ? LAYOUT_I16_SCALE : 1;
    double *buf = malloc(2 * sizeof(double) * n * (size_t)cpis);
    if (!buf) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    size_t at = 0;
    for (long long c = 0; c < cpis; c++)
        for (hsize_t i0 = 0; i0 < sd[0]; i0++)
            for (hsize_t i1 = 0; i1 < sd[1]; i1++)
                for (hsize_t i2 = 0; i2 < sd[2]; i2++, at++) {
                    const stap_cf32 x = cube[(size_t)c * n + i0 * stride[axis[0]] +
                                        i1 * stride[axis[1]] + i2 * stride[axis[2]]];
                    buf[2 * at] = crealf(x) / unit;
                    buf[2 * at + 1] = cimagf(x) / unit;
                }

    hid_t base = spec->f64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    if (i16) base = H5T_STD_I16LE;
    const char *n0 = spec->form == LAYOUT_I16_REAL_IMAG ? "real" : "r";
    const char *n1 = spec->form == LAYOUT_I16_REAL_IMAG ? "imag" : "i";
    const size_t bsz = H5Tget_size(base);
    hid_t ft, mt;
    if (iq) {
        ft = H5Tcopy(base);
        mt = H5Tcopy(H5T_NATIVE_DOUBLE);
        dims[rank] = chunk[rank] = 2;
    } else {
        ft = H5Tcreate(H5T_COMPOUND, 2 * bsz);
        mt = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
        H5Tinsert(ft, n0, 0, base);
        H5Tinsert(ft, n1, bsz, base);
        H5Tinsert(mt, n0, 0, H5T_NATIVE_DOUBLE);
        H5Tinsert(mt, n1, sizeof(double), H5T_NATIVE_DOUBLE);
    }
    const int drank = rank + iq;
    hid_t g = H5Lexists(file, "data", H5P_DEFAULT) > 0
                  ? H5Gopen2(file, "data", H5P_DEFAULT)
                  : H5Gcreate2(file, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(drank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (rank == 4 && !spec->contiguous) H5Pset_chunk(dcpl, drank, chunk);
    hid_t d = H5Dcreate2(g, "iq", ft, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int bad = g < 0 || d < 0 || H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0;
    if (!bad && i16) {
        const double sc = LAYOUT_I16_SCALE;
        hid_t as = H5Screate(H5S_SCALAR), a = H5Acreate2(d, "scale", H5T_IEEE_F64LE, as,
                                                         H5P_DEFAULT, H5P_DEFAULT);
        bad = as < 0 || a < 0 || H5Awrite(a, H5T_NATIVE_DOUBLE, &sc) < 0;
        if (a >= 0) H5Aclose(a);
        if (as >= 0) H5Sclose(as);
    }
    char lb[96], db[96];
    if (!bad && spec->ds_labels) {
        char parts[8][64];
        int nl = split(with_iq(spec->ds_labels, spec->form, lb, sizeof lb), parts);
        for (int k = 0; k < nl && k < drank && !bad; k++)
            if (parts[k][0]) bad = H5DSset_label(d, (unsigned)k, parts[k]) < 0;
    }
    if (!bad && spec->dims_attr) {
        layout_spec s2 = *spec;
        s2.dims_attr = with_iq(spec->dims_attr, spec->form, db, sizeof db);
        bad = put_dims_attr(d, &s2);
    }
    if (bad) snprintf(why, whylen, "HDF5 failed writing /data/iq in order %s", spec->order);
    if (d >= 0) H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (g >= 0) H5Gclose(g);
    H5Tclose(ft);
    H5Tclose(mt);
    free(buf);
    return bad ? -1 : 0;
}
