/* h5io: rtstap's HDF5 file format (README "File format", schema v1): reading and
 * validating an input cube, and writing a result file atomically (temporary name in
 * the target directory, renamed on success; never overwrites an existing file). */
#ifndef H5IO_H
#define H5IO_H

#include <stdint.h>

#include "stap.h"

/* A hook that adds datasets/groups to a file being written (e.g. /truth of the scene
 * generator). file_id is the HDF5 hid_t of the open file. Return RT_OK or a code. */
typedef int (*stap_h5_extra_fn)(int64_t file_id, void *user, rt_error *err);

/* Optional metadata of an input file. */
typedef struct stap_radar_meta {
    int has_prf, has_carrier, has_sample_rate;
    double prf_hz, carrier_frequency_hz, sample_rate_hz;
    int has_element_spacing;
    double element_spacing_wavelengths;
} stap_radar_meta;

typedef struct stap_input {
    int channels, pulses, range_gates;
    cf32 *iq;                /* C x P x R, row-major                    */
    int steering_beams;      /* 0 when the file has no /steering         */
    int steering_len;        /* its second dimension (must be C*Q)       */
    cf32 *steering;          /* steering_beams x steering_len, or NULL   */
    stap_radar_meta meta;
} stap_input;

/* Read and validate a schema-v1 file. Rejects (RT_EFORMAT, message naming the file
 * and dataset): missing /data/iq, rank != 3, a zero-size dimension, a type other than
 * the {r,i} float32 compound (a float64 {r,i} compound is converted), other member
 * names, non-finite samples; a malformed /steering or attribute. RT_EIO when the file
 * cannot be opened. */
int stap_input_read(const char *path, stap_input *in, rt_error *err);
void stap_input_free(stap_input *in);

/* Write a schema-v1 input file (used by the generators and import-perfect), atomically. */
int stap_input_write(const char *path, const stap_input *in, stap_h5_extra_fn extra,
                     void *extra_user, rt_error *err);

/* Everything a run writes. */
typedef struct stap_result {
    const stap_config *cfg;
    const char *input_name;        /* "synthetic:<preset>" when synthesized          */
    const char *backend_name;      /* resolved backend                              */
    int beams;
    const cf32 *steering;          /* B x N                                          */
    const cf32 *weights;           /* D x S x B x N                                  */
    const cf32 *output;            /* B x D x R                                      */
    const double *timing_ms;       /* STAP_STAGE_COUNT entries, plus the extras below */
    double read_ms, total_ms;
    const stap_radar_meta *meta;   /* may be NULL                                    */
    /* Optional: detections (issue 5). count 0 = dataset not written. */
    size_t detection_count;
    const stap_detection *detections;
    int have_detections;           /* write /detections (possibly empty)             */
    const char *cfar_description;  /* attribute of /detections, e.g. "ca pfa=1e-6"   */
    stap_h5_extra_fn extra;        /* optional hook, may be NULL                     */
    void *extra_user;
} stap_result;

/* Write the result file atomically: /weights, /output/iq, /steering, /config,
 * /timing, /radar (and /detections when present). Fails with RT_EIO, writing nothing,
 * when path exists. */
int stap_result_write(const char *path, const stap_result *res, rt_error *err);

/* ---- recordings of many CPIs (README "File format": /data/iq of rank 4, CPIs x C x P x R,
 * one CPI per chunk; rank 3 is one CPI) ------------------------------------------------
 * Read and written one CPI at a time; safe to use from a reader and a writer thread at
 * once (every HDF5 call of these functions runs under one lock). */
typedef struct stap_recording stap_recording;
/* Open and validate (rank, shape, element type as stap_input_read; /steering and the
 * metadata are read into `in`, whose iq stays NULL). */
int stap_recording_open(const char *path, stap_recording **rec, stap_input *in, rt_error *err);
long long stap_recording_cpis(const stap_recording *rec);
int stap_recording_rank(const stap_recording *rec); /* 3 or 4 */
/* Read CPI `cpi` (C x P x R) into cube. float64 files are converted (overflowing samples
 * are refused, naming the CPI and the sample); non-finite float32 samples are left to the
 * engine, which names them. */
int stap_recording_read(stap_recording *rec, long long cpi, cf32 *cube, rt_error *err);
void stap_recording_close(stap_recording *rec);

typedef struct stap_recording_writer stap_recording_writer;
/* A new recording of `cpis` CPIs of in's shape (in->iq is not used; steering and metadata
 * are written), as a temporary file published by stap_recording_finish. */
int stap_recording_create(stap_recording_writer **w, const char *path, const stap_input *in,
                          long long cpis, rt_error *err);
int stap_recording_write(stap_recording_writer *w, long long cpi, const cf32 *cube, rt_error *err);
/* Run `extra` on the open file (may be NULL), close and publish; frees w either way. */
int stap_recording_finish(stap_recording_writer *w, stap_h5_extra_fn extra, void *user,
                          rt_error *err);
void stap_recording_abort(stap_recording_writer *w); /* removes the temporary file */

/* Results of a recording: /weights (CPIs x D x S x B x N), /output/iq (CPIs x B x D x R,
 * only when keep_output), /detections with a cpi column, /timing/cpi_ms (CPIs x stages),
 * extended CPI by CPI in order; /steering, /config (with cpis), /radar as for one CPI. */
typedef struct stap_result_writer stap_result_writer;
/* hdr: everything but weights, output, detections and timing. */
int stap_result_writer_open(stap_result_writer **w, const char *path, const stap_result *hdr,
                            int keep_output, rt_error *err);
int stap_result_writer_append(stap_result_writer *w, long long cpi, const cf32 *weights,
                              const cf32 *output, const stap_detection *det, size_t ndet,
                              const double *stage_ms, rt_error *err);
/* summary: timing_ms (medians), read_ms, total_ms, backend_name; publishes; frees w. */
int stap_result_writer_close(stap_result_writer *w, const stap_result *summary, rt_error *err);
void stap_result_writer_abort(stap_result_writer *w);

/* Atomic-write helpers for any writer of the project: make a temporary name beside
 * `path` ("<dir>/.<base>.tmp.XXXXXX" created exclusively), and publish it with a
 * link()-based rename that refuses to replace an existing `path`. */
int rt_atomic_begin(const char *path, char *tmp, size_t tmplen, rt_error *err);
int rt_atomic_commit(const char *tmp, const char *path, rt_error *err);
void rt_atomic_abort(const char *tmp);
/* Open an existing file for reading, refusing (RT_EIO, message naming path) anything but a
 * regular file without blocking: the open is non-blocking, so that a FIFO never makes a
 * reader wait forever for a writer. Returns a blocking descriptor (close it), or -1. */
int rt_open_regular(const char *path, rt_error *err);
/* Install handlers for SIGINT, SIGTERM and SIGHUP that remove every temporary file still
 * in progress, then end the process by the same signal (for programs; app/main.c). */
void rt_atomic_cleanup_on_signals(void);

#endif
