/* io_internal.h: what the files of rtstap's I/O module (stap/io/) share and nothing outside
 * it may use (docs/architecture.md: every HDF5 call of rtstap is in stap/io/). One helper set:
 *   base.c       HDF5's error stack, closing identifiers, file access lists, the complex
 *                types, the lock every reader and writer thread holds around HDF5
 *   source.c     an input file being read: refusing external links and other files'
 *                storage, validating and reading complex datasets and attributes
 *   iqform.c     the element forms of /data/iq and their conversion
 *   recording.c  stap_recording (one CPI or a recording), stap_input_read
 *   atomic.c     atomic publication: temporaries, commit, the stale-temporary sweep
 *   h5out.c      a file being written: blocks allocated ahead of HDF5's writes (h5out.h)
 *   write.c      the writers' helpers, stap_input_write, the recording writer
 *   result.c     result files: one CPI, and a recording's result writer
 *   matfile.c    where the cube is: /data/iq, --dataset, a MATLAB v7.3 or Octave array
 *   layout.c, check.c, raw.c, sigmf.c, jsoncheck.c, perfect_io.c, sinr_file.c, h5x.c: as named */
#ifndef STAP_IO_INTERNAL_H
#define STAP_IO_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include <hdf5.h>

#include "h5io.h"
#include "h5out.h"
#include "rt_hidden.h" /* RT_INTERNAL: not exported from the shared library */


/* Largest arrays the reader allocates: a corrupt or hostile header must not make it
 * ask for absurd amounts of memory. The RT_STAP hard cube is 10.8 MB. */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define H5IO_MAX_CUBE_BYTES ((unsigned long long)4 << 30)
#define H5IO_MAX_STEERING_BYTES ((unsigned long long)1 << 30)
#else
/* fuzz builds (tests/fuzz): the same checks, against caps a fuzzer can afford to fill */
#define H5IO_MAX_CUBE_BYTES ((unsigned long long)4 << 20)
#define H5IO_MAX_STEERING_BYTES ((unsigned long long)1 << 20)
#endif
/* float64 files are converted in slabs of at most this many bytes of doubles. */
#define H5IO_SLAB_BYTES ((size_t)64 << 20)

#define H5IO_SCHEMA_VERSION 1 /* /config and input files' root schema_version: v1 readers */
#define H5IO_SCHEMA "1.1"     /* the root attribute `schema` of every file written      */
#define H5IO_SPEED_OF_LIGHT 299792458.0

/* ---- base.c ---------------------------------------------------------------------------- */

/* HDF5's automatic error printing off for one public call (the library never prints). */
typedef struct h5_quiet {
    H5E_auto2_t fn;
    void *data;
} h5_quiet;
RT_INTERNAL void stap_io_quiet_begin(h5_quiet *q);
RT_INTERNAL void stap_io_quiet_end(const h5_quiet *q);
/* The innermost message of HDF5's error stack on one line (h5out.h: stap_io_h5_error_detail). */
RT_INTERNAL const char *stap_io_h5_detail(char *buf, size_t len);

static inline void h5_close_id(hid_t *id, herr_t (*closer)(hid_t))
{
    if (*id >= 0) closer(*id);
    *id = -1;
}
#define CLOSE_DSET(x) h5_close_id(&(x), H5Dclose)
#define CLOSE_SPACE(x) h5_close_id(&(x), H5Sclose)
#define CLOSE_TYPE(x) h5_close_id(&(x), H5Tclose)
#define CLOSE_ATTR(x) h5_close_id(&(x), H5Aclose)
#define CLOSE_GROUP(x) h5_close_id(&(x), H5Gclose)
#define CLOSE_PLIST(x) h5_close_id(&(x), H5Pclose)

RT_INTERNAL hid_t stap_io_strong_fapl(void);
RT_INTERNAL int stap_io_h5_file_fd(hid_t file);
RT_INTERNAL hid_t stap_io_cf32_mem_type(void);
RT_INTERNAL hid_t stap_io_cf32_file_type(void);
RT_INTERNAL hid_t stap_io_cf64_mem_type(void);
RT_INTERNAL const char *stap_io_class_name(H5T_class_t c);
RT_INTERNAL void stap_io_shape_string(char *buf, size_t len, int rank, const hsize_t *dims);
RT_INTERNAL int stap_io_atomic_layout_ok(hid_t t);
RT_INTERNAL void stap_io_index_string(char *buf, size_t len, size_t flat, int rank, const hsize_t *dims,
                              const char *const *axis);
RT_INTERNAL int stap_io_check_finite_f32(const stap_cf32 *x, size_t n, size_t *bad);
/* Every HDF5 call of the recording readers and writers runs under it: Debian's libhdf5 is
 * not built thread-safe, and a reader and a writer thread share it. */
RT_INTERNAL extern pthread_mutex_t stap_io_h5_lock;

/* ---- source.c -------------------------------------------------------------------------- */

typedef struct h5_src {
    const char *path;
    hid_t file, lapl, dapl;
    char elink[320];
} h5_src;

typedef struct complex_spec {
    const char *name;          /* dataset path, e.g. "/data/iq"                      */
    int rank;                  /* required rank                                       */
    const char *axes_desc;     /* "(channels, pulses, range_gates)"                   */
    const char *const *axis;   /* axis names for index messages                        */
    unsigned long long max_bytes;
} complex_spec;

RT_INTERNAL int stap_io_src_open(h5_src *s, const char *path, stap_error *err);
RT_INTERNAL void stap_io_src_close_lists(h5_src *s);
RT_INTERNAL int stap_io_src_refused(const h5_src *s, const char *name, stap_error *err);
RT_INTERNAL int stap_io_link_exists(h5_src *s, const char *obj);
RT_INTERNAL int stap_io_check_local(h5_src *s, hid_t dset, const char *name, stap_error *err);
RT_INTERNAL int stap_io_fill_never(hid_t dset);
RT_INTERNAL int stap_io_read_positive_attr(h5_src *s, const char *obj, const char *name, int *has,
                                   double *value, stap_error *err);
RT_INTERNAL int stap_io_read_steering_and_meta(h5_src *s, stap_input *in, stap_error *err);
/* A complex dataset of spec's rank (at most spec->max_bytes as complex64) into a new stap_cf32
 * array (row-major), every sample finite and within float32's range; dims its extents. */
RT_INTERNAL int stap_io_read_complex(h5_src *s, const complex_spec *spec, hsize_t *dims, stap_cf32 **out,
                             stap_error *err);

/* ---- matfile.c ------------------------------------------------------------------------- */

/* Where the cube is, into dname: `want` (stap_read_options.dataset; an Octave variable's
 * group stands for its `value`), else /data/iq, else Octave's /data/value/iq/value, else the
 * file's one MATLAB (MATLAB_class) or Octave (OCTAVE_NEW_FORMAT) array variable. STAP_OK; -1 when
 * nothing was asked for and none is there; an error when `want` is missing or several
 * variables could be the cube. */
RT_INTERNAL int stap_io_cube_locate(h5_src *s, const char *want, char *dname, size_t len, stap_error *err);
/* 1 when MATLAB or Octave wrote the dataset dname (its extents are MATLAB's reversed); read
 * only after the dataset's object header was checked (stap_io_check_local). */
RT_INTERNAL int stap_io_cube_column_major(h5_src *s, const char *dname);

/* ---- raw.c, rawint.c -------------------------------------------------------------------- */

struct stap_raw_import;
/* The `bytes` bytes of CPI c of imp's input (fd, at imp->offset + c x bytes) into buf. */
RT_INTERNAL int stap_io_raw_read_bytes(const struct stap_raw_import *imp, int fd, long long c, size_t bytes,
                               void *buf, stap_error *err);
/* imp's integer samples (fd, CPIs of the stored extents sd, component type ct) written as
 * they are into a schema-v1.1 file at output, atomically: /data/iq interleaved, labelled in
 * the stored order, `scale` imp->scale; extra(user) then adds to it. */
RT_INTERNAL int stap_io_raw_import_integers(const char *output, const struct stap_raw_import *imp, int fd,
                                    hid_t ct, const hsize_t *sd, stap_h5_extra_fn extra, void *user,
                                    stap_error *err);

/* ---- write.c --------------------------------------------------------------------------- */

/* A file being written: each step records the first failure. */
typedef struct h5w {
    const char *path;   /* the final name, for messages */
    stap_error *err;
    int st;             /* first failure, STAP_OK so far  */
    h5_out *out;        /* the file being written (its blocks allocated ahead of HDF5's
                           writes: stap_h5out_reserve), and its HDF5 identifier          */
    hid_t file;
} h5w;

RT_INTERNAL void stap_io_w_reserve(h5w *w, size_t bytes);
RT_INTERNAL int stap_io_w_fail_h5(h5w *w, const char *what);
RT_INTERNAL hid_t stap_io_w_group(h5w *w, hid_t loc, const char *name);
RT_INTERNAL void stap_io_w_dataset(h5w *w, hid_t loc, const char *name, const char *fullname,
                           hid_t ftype, hid_t mtype, int rank, const hsize_t *dims,
                           const void *data, hid_t *keep);
RT_INTERNAL void stap_io_w_cf32_keep(h5w *w, hid_t loc, const char *name, const char *fullname,
                             int rank, const hsize_t *dims, const stap_cf32 *data, hid_t *keep);
RT_INTERNAL void stap_io_w_attr(h5w *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                        const void *value);
/* the same with n > 0 values: a 1-D attribute (n = 0: scalar) */
RT_INTERNAL void stap_io_w_attr_n(h5w *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                                  int n, const void *value);
RT_INTERNAL void stap_io_w_attr_int(h5w *w, hid_t obj, const char *name, int v);
RT_INTERNAL void stap_io_w_attr_double(h5w *w, hid_t obj, const char *name, double v);
RT_INTERNAL void stap_io_w_attr_string(h5w *w, hid_t obj, const char *name, const char *s);
RT_INTERNAL void stap_io_w_root(h5w *w, hid_t file);
RT_INTERNAL void stap_io_w_meta_radar(h5w *w, hid_t file, const stap_radar_meta *m, int always);
RT_INTERNAL hid_t stap_io_no_chunk_cache(void);
RT_INTERNAL hid_t stap_io_out_create(h5w *w, h5_out *o);
RT_INTERNAL int stap_io_out_finish(h5w *w, h5_out *o, hid_t file);

/* ---- array_io.c ------------------------------------------------------------------------ */
/* A result's looks (stap_result.looks, B of them or NULL): angles in range, a Doppler on all
 * or none; STAP_EINVAL naming path. */
RT_INTERNAL int stap_io_looks_check(const stap_look *looks, int B, const char *path, stap_error *err);
/* /steering's attributes az_deg, el_deg (B float64), and with a Doppler doppler_normalized,
 * doppler_bin (of D) and, with a PRF, doppler_hz; nothing when looks is NULL. */
RT_INTERNAL void stap_io_w_looks(h5w *w, hid_t steering, const stap_look *looks, int B, int D,
                                 const stap_radar_meta *m);

/* The optional /array/position (C x 3, `units` wavelengths or m with /radar's carrier; not
 * with element_spacing_wavelengths) and /array/calibration (C complex gains, none zero) into
 * in->array_position (in wavelengths) and in->array_calibration; in->channels and in->meta
 * read first. STAP_EFORMAT naming the file and what is wrong. */
RT_INTERNAL int stap_io_read_array(h5_src *s, stap_input *in, stap_error *err);
/* /array/position (units "wavelengths") and /array/calibration of in, when it has them. */
RT_INTERNAL void stap_io_w_array(h5w *w, hid_t file, const stap_input *in);

/* ---- h5x.c (h5x.h) --------------------------------------------------------------------- */

struct stap_h5_file {
    char path[4096];
    h5_src src;              /* reading: the file, its lookups refusing external links     */
    char checked[256];       /* reading: the last object whose header h5check passed        */
    h5w *w;                  /* writing: the writer (its file, reservations, first failure) */
    h5w own;                 /* stap_h5x_create's writer and its file                           */
    h5_out out;
    hid_t file;
};
/* A hook's view of the file a writer has open (writing through w). */
RT_INTERNAL void stap_h5x_for_writer(struct stap_h5_file *f, h5w *w, hid_t file);

/* ---- atomic.c -------------------------------------------------------------------------- */

/* A new temporary "<dir>/.<base>.tmp.<owner>.<pid>.XXXXXX" beside path (atomic.c). */
RT_INTERNAL int stap_io_tmp_make(const char *path, char *tmp, size_t tmplen, stap_error *err);

#endif
