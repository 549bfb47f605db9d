/* layout_lib: writers of /data/iq in another axis order, labelled the ways a reader meets
 * (HDF5 dimension labels, a `dims` attribute, both, none, or wrongly), with the raw HDF5
 * API — not stap/io/, so that the tests of the reader do not trust the code under test.
 * Used by tests/tools/relayout.c and test_h5io_layout.c. */
#ifndef LAYOUT_LIB_H
#define LAYOUT_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "linalg.h" /* stap_cf32 */

typedef struct layout_spec {
    const char *order;     /* the stored order of the cube axes: three of C, P, R (letters,
                              comma-separated: "P,C,R"); a recording keeps cpi first      */
    const char *ds_labels; /* H5DSset_label text per axis, comma-separated, cpi included for a
                              recording ("" entries are left unlabelled); NULL: none        */
    const char *dims_attr; /* the `dims` attribute, one string; NULL: none                  */
    int dims_list;         /* write `dims` as an array of strings instead (split at commas)  */
    int f64;               /* float64 {r, i} elements instead of float32                     */
    int contiguous;        /* rank 4: contiguous storage (default: one CPI per chunk)        */
    int form;              /* LAYOUT_*: how the samples are stored (f64 applies to COMPLEX)  */
} layout_spec;

/* Sample forms (issue 12's recorder formats). The integer forms store lrint(x / scale) with a
 * `scale` attribute of LAYOUT_I16_SCALE: exact for samples that are multiples of it within
 * int16's range (layout_quantize makes them so); the labels of an interleaved form get a last
 * name "iq" (ds_labels and dims_attr name the cube axes only). */
enum { LAYOUT_COMPLEX = 0, LAYOUT_I16_IQ, LAYOUT_I16_REAL_IMAG, LAYOUT_F32_IQ };
#define LAYOUT_I16_SCALE (1.0 / 256)
/* x = round(x / LAYOUT_I16_SCALE) * LAYOUT_I16_SCALE (float-exact); -1 when a sample falls
 * outside int16's range at that scale. */
int layout_quantize(stap_cf32 *x, size_t n);

/* Write cube (cpis x C x P x R, row-major; rank 3 when rank is 3, cpis = 1) as /data/iq of the
 * open file (group /data created), transposed into spec->order and labelled as spec says.
 * 0, or -1 with why[] filled. */
int layout_put_iq(int64_t file, const stap_cf32 *cube, int rank, long long cpis, int C, int P, int R,
                  const layout_spec *spec, char *why, size_t whylen);

/* The names of spec->order as labels ("pulse,channel,range", "cpi," first when rank is 4);
 * returns buf, or NULL when order is malformed. */
const char *layout_names(const char *order, int rank, char *buf, size_t len);

#endif
