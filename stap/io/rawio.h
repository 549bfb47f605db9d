/* rawio: raw interleaved complex samples (docs/usage.md: import-raw, import-sigmf)
 * — their types (the SigMF names: ci8, ci16_le, cf32_le, ...), their conversion to float32
 * by HDF5 (H5Tconvert) with a scale, and the import of a raw file of a given shape into a
 * schema-v1.1 file (complex64, labelled; atomically, by stap/io/). */
#ifndef RAWIO_H
#define RAWIO_H

#include <stddef.h>

#include "h5io.h"

#include "rt_hidden.h"
/* Complex sample types: pairs (real, imaginary) of one component type, in one byte order. */
typedef enum stap_raw_type {
    STAP_RAW_CI8 = 0, STAP_RAW_CI16_LE, STAP_RAW_CI16_BE, STAP_RAW_CI32_LE, STAP_RAW_CI32_BE,
    STAP_RAW_CF32_LE, STAP_RAW_CF32_BE, STAP_RAW_CF64_LE, STAP_RAW_CF64_BE, STAP_RAW_COUNT
} stap_raw_type;

/* "ci16_le" -> type (case-insensitive). STAP_EINVAL naming the text and the known types; the
 * message says why for unsigned (cu8, cu16_le, ...) and real (ri16_le, rf32_le, ...) types. */
RT_INTERNAL int stap_raw_type_parse(const char *name, stap_raw_type *t, stap_error *err);
RT_INTERNAL const char *stap_raw_type_name(stap_raw_type t);
RT_INTERNAL const char *stap_raw_type_list(void);      /* "ci8, ci16_le, ci16_be, ..." */
RT_INTERNAL size_t stap_raw_sample_bytes(stap_raw_type t); /* one complex sample: 2 components */

/* m complex samples of type t (raw bytes, in a buffer of room for 16 * m bytes that the
 * conversion uses in place) into out, converted by HDF5 to double, multiplied by scale and
 * rounded to float32. A non-finite sample, or one beyond float32's range once scaled:
 * STAP_EFORMAT, its index in *bad and a message without the file (the caller adds it). */
RT_INTERNAL int stap_raw_convert(stap_raw_type t, void *raw, size_t m, double scale, stap_cf32 *out, size_t *bad,
                     stap_error *err);

/* An import: the raw file holds `cpis` CPIs (1 when cpis is 0) one after the other, each
 * C x P x R complex samples stored in `layout`'s order of the three axes (the last fastest),
 * after `offset` bytes. */
typedef struct stap_sigmf_meta stap_sigmf_meta;
typedef struct stap_raw_import {
    const char *input;
    stap_raw_type type;
    int channels, pulses, range_gates;
    long long cpis;          /* 0: one CPI, written as a rank-3 cube; N >= 1: a recording    */
    stap_layout layout;      /* the stored order of each CPI's axes                          */
    double scale;            /* the samples are multiplied by it (finite, > 0)               */
    unsigned long long offset; /* bytes before the first sample                             */
    stap_radar_meta meta;    /* written to /radar and /array                                 */
    const char *source;      /* written as the string attribute `source` of /data/iq, or NULL */
    stap_write_mode mode;      /* STAP_WRITE_NEW (0): an existing output is refused; REPLACE     */
    stap_progress_fn progress; /* CPIs done of the total after each CPI, or NULL              */
    void *progress_user;
    int keep_integers;       /* 1: integer samples (ci8, ci16, ci32) stored as they are —
                                /data/iq interleaved in the stored order, labelled, with the
                                `scale` attribute — instead of complex64 of the scaled values */
    const stap_sigmf_meta *sigmf; /* written to /sigmf (captures, annotations), or NULL      */
} stap_raw_import;

/* Convert imp->input into a schema-v1.1 file at output (complex64 (C, P, R), or a recording
 * (CPIs, C, P, R) one CPI per chunk; labelled), atomically. The input's size must be exactly
 * offset + CPIs x C x P x R x the sample size (STAP_EFORMAT naming both otherwise); a sample
 * that is not finite or beyond float32 once scaled is refused naming its CPI, channel,
 * pulse, range and byte offset. */
RT_INTERNAL int stap_raw_import_file(const char *output, const stap_raw_import *imp, stap_error *err);

/* ---- SigMF (import-sigmf) -------------------------------------------------------------- */

/* What rtstap takes from a SigMF metadata file (.sigmf-meta). */
struct stap_sigmf_meta {
    char datatype[32];             /* global core:datatype, e.g. "ci16_le"              */
    long long channels;            /* core:num_channels (1 when absent)                  */
    int has_rate, has_freq, freq_conflict;
    double sample_rate;            /* core:sample_rate                                   */
    double frequency;              /* the captures' core:frequency (freq_conflict: they
                                      differ)                                            */
    unsigned long long header_bytes; /* the first capture's core:header_bytes           */
    char dataset[4096];            /* the data file: NAME.sigmf-data beside it, or global
                                      core:dataset (a name beside it)                    */
    int has_prf;                   /* global rtstap:prf (Hz, > 0): docs/usage.md          */
    double prf;
    long long captures;            /* the captures' count                                 */
    long long pulse_samples;       /* the captures are pulses: capture k's core:sample_start
                                      is k times it (k >= 1 of 2 or more; 0: they are not) */
    char *captures_json;           /* "captures" and "annotations" as in the metadata (JSON,  */
    char *annotations_json;        /* compact; NULL when absent): stap_sigmf_meta_free      */
    long long annotations;         /* their count                                          */
};

/* Read meta_path (a regular file ending in .sigmf-meta, at most 16 MiB) as strict JSON —
 * one value, nothing after it, no repeated key, strings of UTF-8 without NUL, no malformed
 * escape — then its SigMF fields. STAP_EFORMAT naming the key path and what is wrong
 * ("\"global\".\"core:num_channels\" 0: expected a whole number from 1 to 1048576"), STAP_EIO
 * when it cannot be read, STAP_EINVAL for another suffix. */
RT_INTERNAL int stap_sigmf_read_meta(const char *meta_path, stap_sigmf_meta *m, stap_error *err);
RT_INTERNAL void stap_sigmf_meta_free(stap_sigmf_meta *m);

#endif
