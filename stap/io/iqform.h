/* iqform: the element forms of /data/iq (docs/file-format.md) — a compound of two members
 * {r, i} or {real, imag}, or integer or real elements with a last axis of length 2
 * (interleaved); each component float32, float64 or a signed 8-, 16- or 32-bit integer, in
 * either byte order — and how HDF5 reads and converts them (internal to stap/io/). */
#ifndef STAP_IO_IQFORM_H
#define STAP_IO_IQFORM_H

#include "io_internal.h"

typedef struct iq_form {
    int interleaved;    /* integer or real elements; the last axis (length 2) is (r, i)    */
    int wide;           /* a float64 or int32 component: read as double                   */
    int mixed;          /* a compound whose two members differ in type                      */
    char n0[8], n1[8];  /* compound members, real part first: "r", "i" or "real", "imag"   */
    char comp[40];      /* the component type, e.g. "int16" or "float32, big-endian"       */
} iq_form;

/* How /data/iq is read and converted: H5Dread in the stored component type (a compound as
 * a packed {n0, n1} of it: no conversion at all when the file's compound is that), then
 * H5Tconvert of the 2n components to their native type (byte order) and to float or double:
 * each one of HDF5's fast conversion paths. (An H5Dread converting int16 to float took
 * 20-80 ms per hard CPI, the H5Dread and H5Tconvert 3-13 ms: tests/bench numbers in
 * docs/benchmarks.md.) A compound of mixed member types is converted member-wise by H5Dread (slowly);
 * then *comp and *native are -1. */
typedef struct iq_read_types {
    hid_t mtype;   /* H5Dread's memory type                                    */
    hid_t comp;    /* the stored component type, or -1                         */
    hid_t native;  /* its native equivalent                                    */
    int swap;      /* comp is not native: H5Tconvert comp -> native first      */
    int convert;   /* native is not float (double when wide): H5Tconvert to it */
} iq_read_types;

/* The form of /data/iq (type `type`, dataset rank and extents): 0, or STAP_EFORMAT naming
 * the dataset and what is wrong. */
RT_INTERNAL int stap_iq_classify(hid_t type, int rank, const hsize_t *dims, const char *path,
                            iq_form *f, stap_error *err);
RT_INTERNAL int stap_iq_read_types_make(hid_t dset, const iq_form *f, iq_read_types *t);
RT_INTERNAL void stap_iq_read_types_close(iq_read_types *t);
/* The m components read into buf (room for m floats, or doubles when wide) as float/double. */
RT_INTERNAL int stap_iq_read_convert(const iq_read_types *t, const iq_form *f, size_t m, void *buf);
/* How a stored element decodes without HDF5 (the direct reader of recording.c): each
 * component float or signed integer of `size` bytes in either byte order, the real part at
 * off_r and the imaginary at off_i of an element of `stride` bytes. */
typedef struct iq_raw {
    int is_float, size, big_endian, wide; /* wide: decoded to double (float64, int32) */
    size_t stride, off_r, off_i;
} iq_raw;
/* 0 when f's stored elements (type of dset) decode as iq_raw (not a mixed compound). */
RT_INTERNAL int stap_iq_raw_make(hid_t dset, const iq_form *f, iq_raw *raw);
/* n stored elements at src decoded to n (r, i) pairs of float (or double when wide) at dst,
 * exactly as HDF5's conversions of the fallback path give them. */
RT_INTERNAL void stap_iq_raw_decode(const iq_raw *raw, const void *src, size_t n, void *dst);
/* Packed int8 or int16 pairs in the machine's order times scale in one pass, as the
 * decoding and the scaling of the other paths give them ((float)((double)v * scale)); -1
 * (nothing done) for any other form, or a scale that could overflow float32. */
RT_INTERNAL int stap_iq_raw_decode_scaled(const iq_raw *raw, const void *src, size_t n,
                                     double scale, float *dst);
/* A native little-endian complex64 element: the stored bytes are the samples. */
RT_INTERNAL int stap_iq_raw_is_complex64(const iq_raw *raw);

/* "complex64 {r, i}", "int16, interleaved (last axis iq), scale 0.001", ... */
RT_INTERNAL void stap_iq_describe(const iq_form *f, double scale, char *buf, size_t len);

#endif
