/* iqform.c: the element forms of /data/iq (docs/file-format.md) and their conversion
 * (internal to recording.c; io_internal.h). */
#include "io_internal.h"
#include "iqform.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the element forms of /data/iq (docs/file-format.md) --------------------------
 * A compound of two members {r, i} or {real, imag}, or integer or real elements with a
 * last axis of length 2 (interleaved); each component float32, float64 or a signed 8-,
 * 16- or 32-bit integer, in either byte order. HDF5 converts them: to float32 when that is
 * exact (float32, int8, int16), otherwise to double (float64, int32), which rtstap scales,
 * checks against float32's range and rounds once. */

/* One component: 0, *wide and its name, or -1 with why filled. */
static int iq_component(hid_t t, int *wide, char *name, size_t nlen, char *why, size_t wlen)
{
    const H5T_class_t c = H5Tget_class(t);
    const size_t sz = H5Tget_size(t);
    const char *be = H5Tget_order(t) == H5T_ORDER_BE ? ", big-endian" : "";
    if ((c == H5T_FLOAT || c == H5T_INTEGER) && !stap_io_atomic_layout_ok(t)) {
        snprintf(why, wlen, "a corrupt %zu-byte %s (bit fields beyond its size)", sz,
                 stap_io_class_name(c));
        return -1;
    }
    if (c == H5T_FLOAT && (sz == 4 || sz == 8)) {
        *wide = sz == 8;
        snprintf(name, nlen, "float%zu%s", 8 * sz, be);
        return 0;
    }
    if (c == H5T_INTEGER && H5Tget_sign(t) == H5T_SGN_2 && (sz == 1 || sz == 2 || sz == 4)) {
        *wide = sz == 4;
        snprintf(name, nlen, "int%zu%s", 8 * sz, be);
        return 0;
    }
    if (c == H5T_INTEGER && H5Tget_sign(t) != H5T_SGN_2)
        snprintf(why, wlen, "an unsigned %zu-bit integer; expected signed integers (int8, int16, "
                 "int32: unsigned samples carry an offset rtstap does not know) or float32, "
                 "float64", 8 * sz);
    else if (c == H5T_INTEGER || c == H5T_FLOAT)
        snprintf(why, wlen, "a %zu-bit %s; expected float32, float64, int8, int16 or int32",
                 8 * sz, c == H5T_INTEGER ? "integer" : "float");
    else
        snprintf(why, wlen, "%s; expected float32, float64, int8, int16 or int32", stap_io_class_name(c));
    return -1;
}

/* The form of /data/iq (type `type`, dataset rank and extents): 0, or STAP_EFORMAT naming
 * the dataset and what is wrong. */
int stap_iq_classify(hid_t type, int rank, const hsize_t *dims, const char *path,
                       iq_form *f, stap_error *err)
{
    memset(f, 0, sizeof *f);
    char why[200], shape[128];
    const H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
        stap_io_shape_string(shape, sizeof shape, rank, dims);
        if ((rank != 4 && rank != 5) || dims[rank - 1] != 2)
            return stap_fail(err, STAP_EFORMAT,
                             "'/data/iq' in '%s' is real-valued (%zu-byte %s, shape %s); expected "
                             "complex samples: a compound {r, i} of float32 (complex64; also of "
                             "float64, int8, int16, int32, or named {real, imag}), or interleaved "
                             "integer or real samples whose last axis, of length 2 (labelled iq), "
                             "holds the real and imaginary parts (C, P, R, 2 or CPIs, C, P, R, 2)",
                             path, H5Tget_size(type), stap_io_class_name(cls), shape);
        if (iq_component(type, &f->wide, f->comp, sizeof f->comp, why, sizeof why))
            return stap_fail(err, STAP_EFORMAT, "the interleaved samples of '/data/iq' in '%s' are %s",
                             path, why);
        f->interleaved = 1;
        return STAP_OK;
    }
    if (cls != H5T_COMPOUND)
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has %s elements; expected a compound "
                         "{r, i} of float32 (complex64), or interleaved integer or real samples",
                         path, stap_io_class_name(cls));
    const int nm = H5Tget_nmembers(type);
    char names[160] = "";
    size_t at = 0;
    int idx[2] = {-1, -1}, alt[2] = {-1, -1};
    for (int m = 0; m < nm; m++) {
        char *name = H5Tget_member_name(type, (unsigned)m);
        if (!name) continue;
        if (at < sizeof names)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", m ? ", " : "", name);
        if (!strcmp(name, "r")) idx[0] = m;
        if (!strcmp(name, "i")) idx[1] = m;
        if (!strcmp(name, "real")) alt[0] = m;
        if (!strcmp(name, "imag")) alt[1] = m;
        H5free_memory(name);
    }
    if (nm != 2)
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' is a compound with %d members (%s); "
                         "expected exactly two, r and i (or real and imag)", path, nm, names);
    const int plain = idx[0] >= 0 && idx[1] >= 0;
    if (!plain && (alt[0] < 0 || alt[1] < 0))
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has compound members (%s); expected "
                         "members named r and i (or real and imag)", path, names);
    snprintf(f->n0, sizeof f->n0, "%s", plain ? "r" : "real");
    snprintf(f->n1, sizeof f->n1, "%s", plain ? "i" : "imag");
    char comp[2][40];
    hid_t m0 = H5Tget_member_type(type, (unsigned)(plain ? idx[0] : alt[0]));
    hid_t m1 = H5Tget_member_type(type, (unsigned)(plain ? idx[1] : alt[1]));
    f->mixed = m0 < 0 || m1 < 0 || H5Tequal(m0, m1) <= 0;
    if (m0 >= 0) H5Tclose(m0);
    if (m1 >= 0) H5Tclose(m1);
    const size_t total = H5Tget_size(type);
    for (int k = 0; k < 2; k++) {
        const unsigned mi = (unsigned)(plain ? idx[k] : alt[k]);
        hid_t mt = H5Tget_member_type(type, mi);
        int wide = 0, bad = mt < 0 || iq_component(mt, &wide, comp[k], sizeof comp[k], why, sizeof why);
        if (mt < 0) snprintf(why, sizeof why, "unreadable");
        /* a corrupt file's compound (member r at offset 2 MiB of a 16-byte element) made
         * HDF5's conversion read far out of bounds */
        const size_t moff = H5Tget_member_offset(type, mi), msz = mt >= 0 ? H5Tget_size(mt) : 0;
        if (!bad && (moff > total || msz > total - moff)) {
            bad = 1;
            snprintf(why, sizeof why, "corrupt (%zu bytes at offset %zu of a %zu-byte element)",
                     msz, moff, total);
        }
        if (mt >= 0) H5Tclose(mt);
        if (bad)
            return stap_fail(err, STAP_EFORMAT, "member '%s' of '/data/iq' in '%s' is %s",
                             k ? f->n1 : f->n0, path, why);
        f->wide |= wide;
    }
    if (strcmp(comp[0], comp[1])) snprintf(f->comp, sizeof f->comp, "%.18s/%.18s", comp[0], comp[1]);
    else snprintf(f->comp, sizeof f->comp, "%s", comp[0]);
    return STAP_OK;
}

/* The memory type HDF5 converts a compound of mixed member types into: pairs of float (or
 * double), real first. */
static hid_t iq_mem_type(const iq_form *f)
{
    hid_t base = f->wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    const size_t sz = f->wide ? sizeof(double) : sizeof(float);
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sz);
    if (t >= 0 && (H5Tinsert(t, f->n0, 0, base) < 0 || H5Tinsert(t, f->n1, sz, base) < 0)) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

void stap_iq_read_types_close(iq_read_types *t)
{
    CLOSE_TYPE(t->mtype);
    CLOSE_TYPE(t->comp);
    CLOSE_TYPE(t->native);
}

int stap_iq_read_types_make(hid_t dset, const iq_form *f, iq_read_types *t)
{
    t->mtype = t->comp = t->native = -1;
    t->swap = t->convert = 0;
    if (!f->interleaved && f->mixed) return (t->mtype = iq_mem_type(f)) < 0 ? -1 : 0;
    hid_t ft = H5Dget_type(dset);
    if (ft < 0) return -1;
    t->comp = f->interleaved ? H5Tcopy(ft)
                             : H5Tget_member_type(ft, (unsigned)H5Tget_member_index(ft, f->n0));
    H5Tclose(ft);
    if (t->comp < 0 || (t->native = H5Tget_native_type(t->comp, H5T_DIR_ASCEND)) < 0) return -1;
    const size_t sz = H5Tget_size(t->comp);
    if (f->interleaved) {
        t->mtype = H5Tcopy(t->comp);
    } else if ((t->mtype = H5Tcreate(H5T_COMPOUND, 2 * sz)) >= 0 &&
               (H5Tinsert(t->mtype, f->n0, 0, t->comp) < 0 ||
                H5Tinsert(t->mtype, f->n1, sz, t->comp) < 0)) {
        return -1;
    }
    t->swap = H5Tequal(t->comp, t->native) <= 0;
    t->convert = H5Tequal(t->native, f->wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT) <= 0;
    return t->mtype < 0 ? -1 : 0;
}

/* The m components read into buf (room for m floats, or doubles when wide) as float/double. */
int stap_iq_read_convert(const iq_read_types *t, const iq_form *f, size_t m, void *buf)
{
    if (t->swap && H5Tconvert(t->comp, t->native, m, buf, NULL, H5P_DEFAULT) < 0) return -1;
    if (t->convert &&
        H5Tconvert(t->native, f->wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, m, buf, NULL,
                   H5P_DEFAULT) < 0)
        return -1;
    return 0;
}

void stap_iq_describe(const iq_form *f, double scale, char *buf, size_t len)
{
    int at;
    if (f->interleaved) at = snprintf(buf, len, "%s, interleaved (last axis iq)", f->comp);
    else if (!strcmp(f->comp, "float32") && !strcmp(f->n0, "r"))
        at = snprintf(buf, len, "complex64 {r, i}");
    else at = snprintf(buf, len, "%s {%s, %s}", f->comp, f->n0, f->n1);
    if (scale != 1 && at > 0 && (size_t)at < len) snprintf(buf + at, len - at, ", scale %g", scale);
}

/* ---- the direct reader's decoding (recording.c) ---------------------------------------- */

int stap_iq_raw_make(hid_t dset, const iq_form *f, iq_raw *raw)
{
    memset(raw, 0, sizeof *raw);
    if (!f->interleaved && f->mixed) return -1;
    hid_t ft = H5Dget_type(dset);
    if (ft < 0) return -1;
    hid_t comp = f->interleaved ? H5Tcopy(ft)
                                : H5Tget_member_type(ft, (unsigned)H5Tget_member_index(ft, f->n0));
    int ok = comp >= 0;
    if (ok) {
        raw->is_float = H5Tget_class(comp) == H5T_FLOAT;
        raw->size = (int)H5Tget_size(comp);
        raw->big_endian = H5Tget_order(comp) == H5T_ORDER_BE;
        raw->wide = f->wide;
        /* only the standard layouts, IEEE binary32/64 and two's complement integers of whole
         * bytes, in either byte order: H5Tequal compares every property that changes a
         * value (precision, offset, padding, sign; a float's bit fields, exponent bias,
         * normalization and internal padding); anything else is left to HDF5's conversion */
        static const struct { int is_float, size; } std[] = {{1, 4}, {1, 8}, {0, 1}, {0, 2}, {0, 4}};
        const hid_t le[] = {H5T_IEEE_F32LE, H5T_IEEE_F64LE, H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE};
        const hid_t be[] = {H5T_IEEE_F32BE, H5T_IEEE_F64BE, H5T_STD_I8BE, H5T_STD_I16BE, H5T_STD_I32BE};
        ok = 0;
        for (size_t k = 0; k < sizeof std / sizeof *std && !ok; k++)
            ok = std[k].is_float == raw->is_float && std[k].size == raw->size &&
                 H5Tequal(comp, raw->big_endian ? be[k] : le[k]) > 0;
    }
    if (ok && f->interleaved) {
        raw->stride = 2 * (size_t)raw->size;
        raw->off_r = 0;
        raw->off_i = (size_t)raw->size;
    } else if (ok) {
        raw->stride = H5Tget_size(ft);
        raw->off_r = H5Tget_member_offset(ft, (unsigned)H5Tget_member_index(ft, f->n0));
        raw->off_i = H5Tget_member_offset(ft, (unsigned)H5Tget_member_index(ft, f->n1));
    }
    if (comp >= 0) H5Tclose(comp);
    H5Tclose(ft);
    return ok ? 0 : -1;
}

int stap_iq_raw_is_complex64(const iq_raw *raw)
{
    const uint16_t one = 1;
    const int little = *(const unsigned char *)&one == 1;
    return raw->is_float && raw->size == 4 && raw->big_endian != little && raw->stride == 8 &&
           raw->off_r == 0 && raw->off_i == 4;
}

/* one component at p, in the machine's order */
static inline uint64_t raw_bits(const unsigned char *p, int size, int swap)
{
    uint64_t v = 0;
    if (swap)
        for (int k = 0; k < size; k++) v = v << 8 | p[k]; /* big-endian bytes */
    else
        for (int k = size - 1; k >= 0; k--) v = v << 8 | p[k]; /* little-endian bytes */
    return v;
}

static inline double raw_value(const iq_raw *raw, const unsigned char *p)
{
    const uint64_t b = raw_bits(p, raw->size, raw->big_endian);
    if (raw->is_float) {
        if (raw->size == 4) {
            const uint32_t u = (uint32_t)b;
            float f;
            memcpy(&f, &u, 4);
            return f;
        }
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    switch (raw->size) { /* sign-extended two's complement */
    case 1: return (double)(int8_t)(uint8_t)b;
    case 2: return (double)(int16_t)(uint16_t)b;
    default: return (double)(int32_t)(uint32_t)b;
    }
}

void stap_iq_raw_decode(const iq_raw *raw, const void *src, size_t n, void *dst)
{
    const unsigned char *s = src;
    const uint16_t one = 1;
    const int native = raw->big_endian != (*(const unsigned char *)&one == 1);
    if (native && !raw->wide && raw->stride == 2 * (size_t)raw->size && raw->off_r == 0 &&
        raw->off_i == (size_t)raw->size) { /* packed pairs in the machine's order */
        float *d = dst;
        const size_t m = 2 * n;
        if (raw->is_float) memcpy(d, src, 4 * m);
        else if (raw->size == 2)
            for (size_t k = 0; k < m; k++) d[k] = (float)((const int16_t *)src)[k];
        else
            for (size_t k = 0; k < m; k++) d[k] = (float)((const int8_t *)src)[k];
        return;
    }
    if (raw->wide) {
        double *d = dst;
        for (size_t k = 0; k < n; k++, s += raw->stride) {
            d[2 * k] = raw_value(raw, s + raw->off_r);
            d[2 * k + 1] = raw_value(raw, s + raw->off_i);
        }
    } else { /* float32, int8, int16: exact in float */
        float *d = dst;
        for (size_t k = 0; k < n; k++, s += raw->stride) {
            d[2 * k] = (float)raw_value(raw, s + raw->off_r);
            d[2 * k + 1] = (float)raw_value(raw, s + raw->off_i);
        }
    }
}

int stap_iq_raw_decode_scaled(const iq_raw *raw, const void *src, size_t n, double scale, float *dst)
{
    const uint16_t one = 1;
    const int native = raw->big_endian != (*(const unsigned char *)&one == 1);
    if (!native || raw->wide || raw->is_float || raw->stride != 2 * (size_t)raw->size ||
        raw->off_r != 0 || raw->off_i != (size_t)raw->size || 32768.0 * scale > 3.0e38)
        return -1;
    const size_t m = 2 * n;
    if (raw->size == 2) {
        const int16_t *v = src;
        for (size_t k = 0; k < m; k++) dst[k] = (float)((double)v[k] * scale);
    } else {
        const int8_t *v = src;
        for (size_t k = 0; k < m; k++) dst[k] = (float)((double)v[k] * scale);
    }
    return 0;
}
