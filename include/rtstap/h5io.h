/* h5io: rtstap's HDF5 file format (docs/file-format.md, schema v1.1): reading and
 * validating an input cube, and writing a result file atomically (temporary name in
 * the target directory, renamed on success; an existing file is never overwritten,
 * unless the writer's options say STAP_WRITE_REPLACE). */
#ifndef RTSTAP_H5IO_H
#define RTSTAP_H5IO_H

#include <stdint.h>

#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A file being written, as a hook sees it: what the hook adds goes through the library's
 * own writer functions (stap/io/h5x.h, internal), so that it is written as the rest is. */
typedef struct stap_h5_file stap_h5_file;
/* A hook that adds groups, datasets and attributes to a file being written (e.g. /truth of
 * the scene generator). Return STAP_OK or a code. */
typedef int (*stap_h5_extra_fn)(stap_h5_file *file, void *user, stap_error *err);

/* Optional metadata of an input file. */
typedef struct stap_radar_meta {
    int has_prf, has_carrier, has_sample_rate;
    double prf_hz, carrier_frequency_hz, sample_rate_hz;
    int has_element_spacing;
    double element_spacing_wavelengths;
} stap_radar_meta;

/* ---- axis order of /data/iq (schema v1.1, docs/file-format.md) ---------------------
 * A cube may be stored in any order of its three axes; the reader transposes it into
 * (channel, pulse, range), the order of every cube in memory. A recording keeps its cpi
 * axis first. The order comes from the file's labels — HDF5 dimension-scale labels
 * (H5DSset_label; h5py: dset.dims[i].label = 'pulse') or a string attribute `dims` on
 * the dataset ("pulse,channel,range", or an array of names) — or from the caller. */
/* (stap_axis and stap_layout: stap.h) */

/* An axis name: channel (channels, element, elements, C), pulse (pulses, P), range
 * (range_gate, range_gates, range_cell, range_cells, gate, gates, R), cpi (cpis), iq (i_q,
 * complex: the last axis, of length 2, of an interleaved cube); case-insensitive,
 * surrounding blanks ignored. -1 for an unknown name. */
int stap_axis_parse(const char *name, size_t len);
const char *stap_axis_name(int axis); /* "channel", "pulse", "range", "cpi", "iq" */
/* "P,C,R", "pulse, channel, range", ...: the three cube axes, each once, comma-separated.
 * STAP_EINVAL with a message quoting the text and saying what is wrong. */
int stap_layout_parse(const char *text, stap_layout *out, stap_error *err);
/* "pulse, channel, range" (with "cpi, " first when rank is 4); returns buf. */
const char *stap_layout_string(const stap_layout *l, int rank, char *buf, size_t len);
int stap_layout_is_identity(const stap_layout *l);
/* 1 when a cube read as (channel, pulse, range) has a shape that looks transposed — more
 * channels than pulses, or fewer range gates than pulses — with the reason in why. */
int stap_shape_looks_transposed(int channels, int pulses, int range_gates, char *why,
                                size_t len);

/* How to read /data/iq (NULL = defaults: the file's labels, else (channel, pulse, range);
 * the file's `scale` attribute, else 1). */
typedef struct stap_read_options {
    int override;            /* 1: read the cube axes in `layout`'s order, whatever the file's
                                labels say (labels that are malformed are then not an error) */
    stap_layout layout;
    int has_scale;           /* 1: multiply the samples by `scale` (finite, > 0) instead of the
                                file's `scale` attribute                                    */
    double scale;
    const char *dataset;     /* the cube's dataset (an Octave variable: its group), or NULL:
                                /data/iq, else the file's one MATLAB v7.3 / Octave -hdf5 array
                                (docs/matlab.md)                                            */
    int hdf5_only;           /* recordings: 1 keeps every read on the HDF5 path, never the
                                direct pread path (for comparisons; rtstap hands on
                                RTSTAP_READER=hdf5)                                         */
} stap_read_options;

typedef enum stap_layout_source {
    STAP_LAYOUT_ASSUMED = 0, /* no labels and no override: read as (channel, pulse, range) */
    STAP_LAYOUT_LABELS,      /* the file's labels                                        */
    STAP_LAYOUT_OVERRIDE     /* stap_read_options.layout                                  */
} stap_layout_source;

/* How the axes of /data/iq were determined, for the caller to report (or refuse). */
typedef struct stap_layout_report {
    stap_layout_source source;
    stap_layout layout;      /* the order the cube axes were read in                      */
    int rank;                /* 3, or 4 for a recording (cpi first), without an iq axis   */
    int interleaved;         /* /data/iq has a last axis of length 2 (iq): real, imaginary */
    int labelled;            /* the file labels /data/iq (dimension labels or `dims`)      */
    int labels_differ;       /* an override, and the file's labels say another order or
                                are malformed                                            */
    char labels[200];        /* the file's labels as written ("" when none)                */
    int column_major;        /* MATLAB or Octave wrote the cube: its extents are MATLAB's
                                reversed (unlabelled: refused without a layout given)        */
} stap_layout_report;

typedef struct stap_input {
    int channels, pulses, range_gates;
    stap_cf32 *iq;                /* C x P x R, row-major                    */
    int steering_beams;      /* 0 when the file has no /steering         */
    int steering_len;        /* its second dimension (must be C*Q)       */
    stap_cf32 *steering;          /* steering_beams x steering_len, or NULL   */
    stap_radar_meta meta;
    stap_layout_report layout; /* how /data/iq's axis order was determined (readers) */
    double scale;            /* readers: the factor applied to the stored samples (1: none) */
    char samples[96];        /* readers: how /data/iq stores them, e.g. "complex64 {r, i}",
                                "int16, interleaved (last axis iq), scale 0.001"           */
    char dataset[256];       /* readers: the dataset the cube was read from ("/data/iq")    */
    stap_look *looks;        /* the looks `steering` was built from (steering_beams of them;
                                the caller's, freed by stap_input_free), or NULL           */
    double *array_position;  /* /array/position: channels x 3 (x, y, z) in wavelengths, or NULL
                                (the uniform line at meta's element spacing)               */
    stap_cf32 *array_calibration; /* /array/calibration: the channels' complex gains, or NULL */
} stap_input;

/* Read and validate a schema-v1.1 file. /data/iq holds complex samples as a compound of
 * two members {r, i} or {real, imag}, each float32, float64 or a signed 8-, 16- or 32-bit
 * integer, in either byte order (rank 3); or interleaved: integer or real elements with a
 * last axis of length 2 (rank 4). HDF5 converts them to float32 (float64 and int32 by way
 * of double); they are multiplied by the `scale` attribute of /data/iq (or opts->scale).
 * Rejects (STAP_EFORMAT, message naming the file and dataset): missing /data/iq, another
 * rank, a zero-size dimension, another element type (real without the iq axis, unsigned
 * or 64-bit integers, other member names or counts), a malformed `scale`, non-finite
 * samples or samples beyond float32's range once converted and scaled; axis labels that
 * are unknown, repeated, too few or too many, or that disagree (dimension labels against
 * `dims`) — unless opts overrides them; a malformed /steering or attribute. STAP_EIO when
 * the file cannot be opened. The cube is transposed into (channel, pulse, range);
 * in->layout says how its order was determined. opts may be NULL. */
int stap_input_read(const char *path, stap_input *in, const stap_read_options *opts,
                    stap_error *err);
void stap_input_free(stap_input *in);

/* An array's geometry from the /array group of the HDF5 file at path (docs/file-format.md):
 * its elements, their positions (elements x 3, (x, y, z) in wavelengths; NULL when the file
 * has none: the uniform line) and complex gains (NULL when none), malloc'd (the caller
 * frees them). Positions in metres need a carrier: the file's /radar carrier_frequency_hz,
 * else carrier_hz (0: none). STAP_EFORMAT naming the file when it has neither
 * /array/position nor /array/calibration, or either is malformed (as stap_input_read
 * refuses them); STAP_EIO when it cannot be opened. */
int stap_array_read(const char *path, double carrier_hz, int *elements, double **position,
                    stap_cf32 **calibration, stap_error *err);

/* Write a schema-v1.1 input file (used by the generators and import-perfect), atomically;
 * /data/iq's axes carry the dimension labels channel, pulse, range. wo may be NULL. */
int stap_input_write(const char *path, const stap_input *in, stap_h5_extra_fn extra,
                     void *extra_user, const stap_write_options *wo, stap_error *err);

/* Everything a run writes. */
typedef struct stap_result {
    const stap_config *cfg;
    const char *input_name;        /* "synthetic:<preset>" when synthesized          */
    const char *backend_name;      /* resolved backend                              */
    int beams;
    const stap_cf32 *steering;          /* B x N                                          */
    const stap_cf32 *weights;           /* D x S x B x N                                  */
    const stap_cf32 *output;            /* B x D x R                                      */
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
    const char *stopped;           /* recordings: why the run stopped early (written as
                                      /config stopped), NULL when every CPI was run     */
    long long cpis_unwritten;      /* recordings: the input's CPIs never written, which
                                      were not run (/config cpis_unwritten when > 0)   */
    /* live input (rtstap listen): the stream's CPIs lost (never processed), ascending:
     * /config cpis_lost and /lost_cpis (int64) are written when lost_counted is set */
    int lost_counted;
    long long cpis_lost;
    const long long *lost_cpis;    /* cpis_lost entries (NULL when 0)                 */
    const char *engine_note;       /* recordings: stap_engine_note as the run ended
                                      (/config engine_note when not empty)             */
    /* Optional (schema v1.1): the engine that ran, for /config threads (the threads it
     * computed with), device and engine, and the beams' u; NULL: /config threads is
     * cfg->threads, beams are indexed. */
    const struct stap_engine *engine;
    const char *input_samples;     /* how the input stored its samples (stap_input.samples) */
    /* Optional: the factors of the weights (stap_config.qr): qr_counted != 0 writes
     * /config qr_cholqr2 and qr_guarded (the matrices factored by CholeskyQR2 or cholqr, and
     * those their guard refactored by Householder); /config qr (the factor asked) is always
     * written. */
    int qr_counted;
    long long qr_cholqr2, qr_guarded;
    /* Optional: the looks the steering was built from (stap_steering_from_looks), one per
     * beam, or NULL: written as /steering's attributes az_deg, el_deg and, when they have a
     * Doppler (all or none), doppler_normalized, doppler_bin, doppler_hz (with a PRF). */
    const stap_look *looks;
} stap_result;

/* Write the result file atomically: /weights, /output/iq, /steering, /config,
 * /timing, /radar (and /detections when present), self-described (schema v1.1): root
 * attributes schema, rtstap_version, commit; /axes with the dimension scales of Doppler
 * (doppler_hz when the input's PRF is known, else doppler_normalized), segment, beam
 * (beam_u for the default beams) and range (range_m when the input's sample rate is known,
 * else range_cell), attached to every dataset's axes, each axis labelled; `units`
 * attributes. wo->keep (0: weights, output and detections) chooses among /weights,
 * /output/iq and /detections. Fails with STAP_EIO, writing nothing, when path exists (unless
 * wo->mode is STAP_WRITE_REPLACE). wo may be NULL. */
int stap_result_write(const char *path, const stap_result *res, const stap_write_options *wo,
                      stap_error *err);

/* ---- recordings of many CPIs (docs/file-format.md: /data/iq of rank 4, CPIs x C x P x R,
 * one CPI per chunk; rank 3 is one CPI) ------------------------------------------------
 * Read and written one CPI at a time; safe to use from a reader and a writer thread at
 * once (every HDF5 call of these functions runs under one lock). */
typedef struct stap_recording stap_recording;
/* Open and validate (rank, shape, element type, scale and axis labels as stap_input_read,
 * with the cpi axis of a rank-4 (interleaved: rank-5) recording first; opts orders the
 * three cube axes after it; /steering and the metadata are read into `in`, whose iq stays
 * NULL; in->layout says how the axis order was determined). opts may be NULL. */
int stap_recording_open(const char *path, stap_recording **rec, stap_input *in,
                        const stap_read_options *opts, stap_error *err);
long long stap_recording_cpis(const stap_recording *rec);
/* The CPIs that hold data. HDF5 allocates no chunk (or contiguous storage) for what was
 * never written and reads its fill value there: a recording declared longer than it ran
 * (a recorder that stopped, a file preallocated for a night) has unwritten CPIs, which are
 * never read as samples. Opening decides it per chunk row (a one-CPI cube with an
 * unwritten chunk is refused at open, saying how much of it holds data). Chunks HDF5
 * allocated early (H5D_ALLOC_TIME_EARLY), or contiguous storage written in part, cannot be
 * told from written ones. */
long long stap_recording_written(const stap_recording *rec);
/* The input index of the k-th written CPI (k from 0), or -1 past the last. */
long long stap_recording_written_index(const stap_recording *rec, long long k);
/* The first (up to n) indices of unwritten CPIs into out; returns how many. */
int stap_recording_unwritten(const stap_recording *rec, long long *out, int n);
int stap_recording_rank(const stap_recording *rec); /* 3 or 4 */
/* Read CPI `cpi` (C x P x R; an unwritten CPI is STAP_EFORMAT) into cube, transposed from the stored axis order and
 * converted from the stored element type and scale like stap_input_read (samples beyond
 * float32's range once converted are refused, naming the CPI and the sample); non-finite
 * stored samples are left to the engine, which names them. Chunks of one CPI of native
 * complex64, unscaled, are read directly; other types and layouts through HDF5's
 * conversion. */
int stap_recording_read(stap_recording *rec, long long cpi, stap_cf32 *cube, stap_error *err);
/* How CPIs are read: "direct (pread, no HDF5 call; ...)" when every written CPI's bytes
 * were placed at open (one CPI per unfiltered chunk, or contiguous storage; any element form
 * but a compound of mixed member types), else "HDF5 (H5Dread, one reader at a time: why)". */
const char *stap_recording_read_path(const stap_recording *rec);
/* 1 when stap_recording_read_with may be called by many threads at once with no lock (the
 * direct path); on the HDF5 path the calls take turns. */
int stap_recording_parallel(const stap_recording *rec);
/* Bytes of scratch one thread's stap_recording_read_with needs (0: none). */
size_t stap_recording_scratch_bytes(const stap_recording *rec);
/* stap_recording_read for one of several reader threads, each with its own scratch: the
 * same samples, bit for bit, on either path. */
int stap_recording_read_with(stap_recording *rec, long long cpi, stap_cf32 *cube, void *scratch,
                             stap_error *err);
/* How the recording's samples are stored, when an engine can take them as they are
 * (stap_engine_options.input: the bytes cross the host link as stored and the GPU converts
 * them): the direct path, complex64 unscaled or integer pairs (an interleaved iq axis, or a
 * packed compound with the real part first), either byte order, the scale, and the stored
 * order of the cube's axes (the engine reads it transposed). STAP_EUNSUPPORTED saying why
 * otherwise (the readers above then decode on the host). */
int stap_recording_stored_format(const stap_recording *rec, stap_sample_format *f,
                                 stap_error *err);
/* CPI `cpi`'s bytes as stored (C x P x R samples of stap_recording_stored_format) into buf:
 * one pread, no decoding, no HDF5 call; safe from many threads at once. */
int stap_recording_read_stored(stap_recording *rec, long long cpi, void *buf, stap_error *err);
/* Which file the recording is: the identity of the file HDF5 opened (fstat of its handle,
 * not of the path, which a rename may have pointed elsewhere since), for callers that must
 * know two opens saw one file (rtstap-mpi's ranks). mtime in nanoseconds. */
typedef struct stap_file_identity {
    unsigned long long device, inode;
    long long size, mtime_ns;
} stap_file_identity;
int stap_recording_identity(const stap_recording *rec, stap_file_identity *id, stap_error *err);
void stap_recording_close(stap_recording *rec);

typedef struct stap_recording_writer stap_recording_writer;
/* A new recording of `cpis` CPIs of in's shape (in->iq is not used; steering and metadata
 * are written; /data/iq's axes are labelled cpi, channel, pulse, range), as a temporary
 * file published by stap_recording_finish. wo may be NULL. */
int stap_recording_create(stap_recording_writer **w, const char *path, const stap_input *in,
                          long long cpis, const stap_write_options *wo, stap_error *err);
int stap_recording_write(stap_recording_writer *w, long long cpi, const stap_cf32 *cube, stap_error *err);
/* Run `extra` on the open file (may be NULL), close and publish; frees w either way. */
int stap_recording_finish(stap_recording_writer *w, stap_h5_extra_fn extra, void *user,
                          stap_error *err);
void stap_recording_abort(stap_recording_writer *w); /* removes the temporary file */

/* Results of a recording: /weights (CPIs x D x S x B x N), /output/iq (CPIs x B x D x R),
 * /detections with a cpi column (the input's CPI), each as wo->keep says (0: weights and
 * detections),
 * /timing/cpi_ms (CPIs x stages), /axes/input_cpi (the input's CPI of each row: the scale
 * of their cpi axis), extended CPI by CPI in order; /steering, /config (with cpis), /radar
 * as for one CPI. */
typedef struct stap_result_writer stap_result_writer;
/* hdr: everything but weights, output, detections and timing. wo may be NULL. */
int stap_result_writer_open(stap_result_writer **w, const char *path, const stap_result *hdr,
                            const stap_write_options *wo, stap_error *err);
/* Row `cpi` (0, 1, 2, ... in order) holds the input's CPI input_cpi. */
int stap_result_writer_append(stap_result_writer *w, long long cpi, long long input_cpi,
                              const stap_cf32 *weights, const stap_cf32 *output, const stap_detection *det,
                              size_t ndet, const double *stage_ms, stap_error *err);
/* Rows placed by another process (rtstap-mpi: each rank writes its CPIs' rows into the one
 * file). A writer opened with stap_write_options.cpis and .place (or with few enough cpis)
 * allocates every row's weights and output at open, as their stored bytes (stap_cf32 little-endian, the engine's layout, one row per
 * chunk): stap_result_writer_placement gives the file (the temporary that close publishes)
 * and, per row, the byte offsets of its weights and output (-1 where not kept) and their
 * sizes; whoever writes row r's bytes there then hands the rest of the row to
 * stap_result_writer_append_placed, in order like append. STAP_EINVAL on a writer not
 * preallocated. weights_at/output_at hold stap_result_writer_rows(w) entries, or are NULL. */
long long stap_result_writer_rows(const stap_result_writer *w);
/* What the writer holds before its next batch: bytes of detections (returned) and rows. */
size_t stap_result_writer_held(const stap_result_writer *w, size_t *rows);
int stap_result_writer_placement(const stap_result_writer *w, const char **file,
                                 long long *weights_at, long long *output_at,
                                 size_t *weights_bytes, size_t *output_bytes, stap_error *err);
int stap_result_writer_append_placed(stap_result_writer *w, long long cpi, long long input_cpi,
                                     const stap_detection *det, size_t ndet, const double *stage_ms,
                                     stap_error *err);
/* summary: timing_ms (medians), read_ms, total_ms, backend_name, stopped, cpis_unwritten,
 * the lost CPIs (lost_counted, cpis_lost, lost_cpis);
 * publishes; frees w. */
int stap_result_writer_close(stap_result_writer *w, const stap_result *summary, stap_error *err);
void stap_result_writer_abort(stap_result_writer *w);

/* Atomic-write helpers for any writer of the project: make a temporary name beside
 * `path` ("<dir>/.<base>.tmp.XXXXXX" created exclusively), and publish it with a
 * link()-based rename that refuses to replace an existing `path` (STAP_WRITE_NEW) — or,
 * with STAP_WRITE_REPLACE, with rename(), replacing an existing regular file (begin and
 * commit must be given the same mode). */
int stap_atomic_begin(const char *path, char *tmp, size_t tmplen, stap_write_mode mode,
                      stap_error *err);
int stap_atomic_commit(const char *tmp, const char *path, stap_write_mode mode,
                       stap_error *err);
void stap_atomic_abort(const char *tmp);
/* A whole file of len bytes, written atomically in `mode`: STAP_EIO naming path and, for a
 * failed write, the system's words ("No space left on device"); nothing left behind. */
int stap_atomic_write(const char *path, const void *data, size_t len, stap_write_mode mode,
                      stap_error *err);
/* Open an existing file for reading, refusing (STAP_EIO, message naming path) anything but a
 * regular file without blocking: the open is non-blocking, so that a FIFO never makes a
 * reader wait forever for a writer. Returns a blocking descriptor (close it), or -1. */
int stap_open_regular(const char *path, stap_error *err);
/* Temporary files made and not yet published or removed (for checks at a program's end). */
int stap_atomic_pending(void);
/* HDF5 objects (files, datasets, groups, types, attributes of files) open in this process:
 * 0 whenever no call of the library is in progress and no reader or writer is open. */
int stap_io_open_objects(void);
/* Unlink every temporary file still in progress: async-signal-safe, for a program's own
 * handler of SIGINT, SIGTERM or SIGHUP (the library installs no handler; app/signals.c). */
void stap_atomic_remove_pending(void);

#ifdef __cplusplus
}
#endif

#endif
