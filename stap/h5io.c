/* h5io.c: rtstap's HDF5 file format, schema v1.1 (README "File format"): the validating
 * reader of input cubes (in any labelled axis order: h5layout.c), and the atomic writers
 * of input and result files. */
#include "h5io.h"
#include "h5io_extra.h"
#include "h5check.h"
#include "h5layout.h"
#include "h5out.h"
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <pthread.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

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

/* ------------------------------------------------------------------------------------
 * HDF5 error reporting: the library never prints, so HDF5's automatic error printing is
 * switched off for the duration of each public call and restored afterwards; the most
 * specific entry of HDF5's error stack goes into our messages instead. */

typedef struct h5_quiet {
    H5E_auto2_t fn;
    void *data;
} h5_quiet;

static void quiet_begin(h5_quiet *q)
{
    q->fn = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

typedef struct h5_walk {
    char *buf;
    size_t len;
} h5_walk;

static herr_t walk_first(unsigned n, const H5E_error2_t *e, void *user)
{
    h5_walk *w = user;
    if (n == 0 && e && e->desc) snprintf(w->buf, w->len, "%s", e->desc);
    return 0;
}

/* The innermost (most specific) message of HDF5's current error stack, on one line. A
 * failed system call is said in the system's words: HDF5's own message ("file write
 * failed: time = ..., filename = ..., errno = 28, error message = 'No space left on
 * device', buf = ...") spans lines and addresses. Call right after the failing HDF5 call:
 * the next API call clears the stack. */
static const char *h5_detail(char *buf, size_t len)
{
    h5_walk w = {buf, len};
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, &w);
    if (!buf[0]) snprintf(buf, len, "HDF5 error");
    const char *e = strstr(buf, "errno = ");
    int code = 0;
    if (e && sscanf(e + 8, "%d", &code) == 1 && code > 0) {
        snprintf(buf, len, "%s", strerror(code));
        return buf;
    }
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return buf;
}

static void h5_close_id(hid_t *id, herr_t (*closer)(hid_t))
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

/* A file access property list that closes every object of the file with the file, so
 * that H5Fclose really flushes and releases it even if a hook leaked an identifier; and
 * that keeps HDF5's file locks but does not fail on file systems without them (NFS). */
static hid_t strong_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) {
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
        H5Pset_file_locking(fapl, 1, 1);
#endif
    }
    return fapl;
}

/* Memory type of cf32 (and of the file type on little-endian hosts): what h5py writes
 * for complex64, a compound {r: float32, i: float32}. */
static hid_t cf32_mem_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(cf32));
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(t, "i", sizeof(float), H5T_NATIVE_FLOAT) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static hid_t cf32_file_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * 4);
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_IEEE_F32LE) < 0 || H5Tinsert(t, "i", 4, H5T_IEEE_F32LE) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static hid_t cf64_mem_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_NATIVE_DOUBLE) < 0 ||
        H5Tinsert(t, "i", sizeof(double), H5T_NATIVE_DOUBLE) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* ------------------------------------------------------------------------------------
 * Reading */

/* An input file being read. Every lookup in it (links, datasets, attributes) goes through
 * property lists whose callback refuses to traverse an external link anywhere on the
 * path: a soft link to an external link passed check_local's look at each component and
 * made rtstap read another file (or block on a FIFO) as its samples or metadata. elink
 * then names the link refused. */
typedef struct h5_src {
    const char *path;
    hid_t file, lapl, dapl;
    char elink[320];
} h5_src;

static herr_t refuse_external_link(const char *parent_file, const char *parent_group,
                                   const char *child_file, const char *child_object,
                                   unsigned *acc_flags, hid_t fapl, void *user)
{
    h5_src *s = user;
    snprintf(s->elink, sizeof s->elink, "'%s' in '%s'", child_object, child_file);
    return -1;
}

/* RT_OK, or the refusal of the external link that a lookup of `name` met. */
static int src_refused(const h5_src *s, const char *name, rt_error *err)
{
    if (!s->elink[0]) return RT_OK;
    return rt_fail(err, RT_EFORMAT, "'%s' in '%s' leads through an external link to %s; "
                   "refused (the data must live in the file)", name, s->path, s->elink);
}

/* 1 when every component of an absolute path exists as a link, else 0 (H5Lexists
 * fails on a path whose intermediate group is missing). */
static int link_exists(h5_src *s, const char *obj)
{
    char buf[256];
    size_t n = strlen(obj);
    if (n == 0 || n >= sizeof buf || obj[0] != '/') return 0;
    memcpy(buf, obj, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (H5Lexists(s->file, buf, s->lapl) <= 0) return 0;
            /* an external link is not followed here: it "exists", and the reader then
             * refuses it by name (check_local) */
            H5L_info_t li;
            if (H5Lget_info(s->file, buf, &li, s->lapl) >= 0 && li.type == H5L_TYPE_EXTERNAL)
                return 1;
            *p = c;
            if (!c) return 1;
        }
    }
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "floating-point";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

static void shape_string(char *buf, size_t len, int rank, const hsize_t *dims)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%llu", k ? " x " : "",
                               (unsigned long long)dims[k]);
    if (rank == 0) snprintf(buf, len, "scalar");
}

enum { ELEM_F32 = 1, ELEM_F64 = 2 };

/* 1 when an integer or float type's bit layout fits its size (the checks H5Tset_precision,
 * H5Tset_offset and H5Tset_fields make): Debian's HDF5 1.10 decodes these fields from the
 * file without them, and converting values of a corrupt type read out of bounds. */
static int atomic_layout_ok(hid_t t)
{
    const size_t size = H5Tget_size(t), prec = H5Tget_precision(t);
    const int off = H5Tget_offset(t);
    if (size == 0 || prec == 0 || off < 0 || (size_t)off + prec > 8 * size) return 0;
    if (H5Tget_class(t) != H5T_FLOAT) return 1;
    size_t spos, epos, esize, mpos, msize;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) return 0;
    return spos < prec && esize > 0 && epos + esize <= prec && mpos + msize <= prec;
}

/* Check that type is the {r, i} compound of floats; *elem says how to read it. */
static int check_complex_type(hid_t type, const char *dname, const char *path, int *elem,
                              rt_error *err)
{
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_COMPOUND) {
        if (cls == H5T_INTEGER || cls == H5T_FLOAT)
            return rt_fail(err, RT_EFORMAT,
                           "'%s' in '%s' is real-valued (%zu-byte %s); expected complex "
                           "samples, a compound {r, i} of float32 (complex64)", dname, path,
                           H5Tget_size(type), class_name(cls));
        return rt_fail(err, RT_EFORMAT,
                       "'%s' in '%s' has %s elements; expected a compound {r, i} of float32 "
                       "(complex64)", dname, path, class_name(cls));
    }
    int nm = H5Tget_nmembers(type);
    char names[160] = "";
    size_t at = 0;
    int has_r = -1, has_i = -1;
    for (int m = 0; m < nm; m++) {
        char *name = H5Tget_member_name(type, (unsigned)m);
        if (!name) continue;
        if (at < sizeof names)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", m ? ", " : "", name);
        if (!strcmp(name, "r")) has_r = m;
        if (!strcmp(name, "i")) has_i = m;
        H5free_memory(name);
    }
    if (nm != 2)
        return rt_fail(err, RT_EFORMAT,
                       "'%s' in '%s' is a compound with %d members (%s); expected exactly two, "
                       "r and i", dname, path, nm, names);
    if (has_r < 0 || has_i < 0)
        return rt_fail(err, RT_EFORMAT,
                       "'%s' in '%s' has compound members (%s); expected members named r and i",
                       dname, path, names);
    size_t widest = 0;
    const size_t total = H5Tget_size(type);
    const int idx[2] = {has_r, has_i};
    for (int k = 0; k < 2; k++) {
        hid_t mt = H5Tget_member_type(type, (unsigned)idx[k]);
        if (mt < 0)
            return rt_fail(err, RT_EFORMAT, "'%s' in '%s': unreadable member type", dname, path);
        H5T_class_t mc = H5Tget_class(mt);
        size_t sz = H5Tget_size(mt);
        const int layout_ok = mc != H5T_FLOAT || atomic_layout_ok(mt);
        H5Tclose(mt);
        /* a corrupt file's compound (member r at offset 2 MiB of a 16-byte element) made
         * HDF5's conversion read far out of bounds */
        const size_t moff = H5Tget_member_offset(type, (unsigned)idx[k]);
        if (moff > total || sz > total - moff || !layout_ok)
            return rt_fail(err, RT_EFORMAT,
                           "member '%s' of '%s' in '%s' is corrupt (%zu bytes at offset %zu of a "
                           "%zu-byte element%s)", k ? "i" : "r", dname, path, sz, moff, total,
                           layout_ok ? "" : ", bit fields beyond its size");
        if (mc != H5T_FLOAT)
            return rt_fail(err, RT_EFORMAT,
                           "member '%s' of '%s' in '%s' is %s%s; expected float32 (or float64)",
                           k ? "i" : "r", dname, path, mc == H5T_INTEGER ? "an " : "",
                           mc == H5T_INTEGER ? "integer" : class_name(mc));
        if (sz > 8)
            return rt_fail(err, RT_EFORMAT,
                           "member '%s' of '%s' in '%s' is a %zu-byte float; expected float32 "
                           "(or float64)", k ? "i" : "r", dname, path, sz);
        if (sz > widest) widest = sz;
    }
    *elem = widest <= 4 ? ELEM_F32 : ELEM_F64;
    return RT_OK;
}

/* Name a flat element index as (axis0 i, axis1 j, ...). */
static void index_string(char *buf, size_t len, size_t flat, int rank, const hsize_t *dims,
                         const char *const *axis)
{
    size_t idx[8] = {0};
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = flat % dims[k];
        flat /= dims[k];
    }
    size_t at = (size_t)snprintf(buf, len, "(");
    for (int k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s %zu", k ? ", " : "", axis[k], idx[k]);
    if (at < len) snprintf(buf + at, len - at, ")");
}

typedef struct complex_spec {
    const char *name;          /* dataset path, e.g. "/data/iq"                      */
    int rank;                  /* required rank                                       */
    const char *axes_desc;     /* "(channels, pulses, range_gates)"                   */
    const char *const *axis;   /* axis names for index messages                        */
    unsigned long long max_bytes;
} complex_spec;

/* Scan n samples for the first non-finite one: blocks without an early exit (so that the
 * compiler vectorizes the exponent test), then the exact index in the first bad block. */
static int check_finite_f32(const cf32 *x, size_t n, size_t *bad)
{
    const float *f = (const float *)x;
    const size_t m = 2 * n, block = 4096;
    for (size_t b0 = 0; b0 < m; b0 += block) {
        size_t b1 = b0 + block < m ? b0 + block : m;
        uint32_t any = 0;
        for (size_t k = b0; k < b1; k++) {
            uint32_t u;
            memcpy(&u, f + k, sizeof u); /* the bits, without breaking aliasing rules */
            any |= (u & 0x7f800000u) == 0x7f800000u;
        }
        if (!any) continue;
        for (size_t k = b0; k < b1; k++)
            if (!isfinite(f[k])) {
                *bad = k / 2;
                return 0;
            }
    }
    return 1;
}

/* A compact or contiguous dataset's raw data must hold its whole extent: HDF5 1.10.8 takes the
 * size in the layout message on trust, so a damaged file whose 16 bytes of compact data stand
 * for 167 772 160 samples had H5Dread copy from 2.7 GB past its buffer (fuzz_h5_file,
 * regress-compact-storage-short). Compact data and allocated contiguous storage hold at
 * least the extent's bytes (HDF5 writes exactly that); contiguous storage may also be not
 * allocated yet (0: the fill value is read). Chunked storage is checked by HDF5 chunk by
 * chunk (and may be compressed). */
static int check_storage(hid_t dset, H5D_layout_t layout, const char *name, const char *path,
                         rt_error *err)
{
    if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS) return RT_OK;
    hid_t space = H5Dget_space(dset), type = H5Dget_type(dset);
    const hssize_t npoints = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    const size_t tsize = type >= 0 ? H5Tget_size(type) : 0;
    CLOSE_SPACE(space);
    CLOSE_TYPE(type);
    if (npoints < 0 || tsize == 0) return RT_OK; /* the readers' own checks name these */
    const hsize_t have = H5Dget_storage_size(dset);
    const int fits = (hsize_t)npoints <= (hsize_t)-1 / tsize;
    const hsize_t need = fits ? (hsize_t)npoints * tsize : 0;
    if (fits && (have >= need || (layout == H5D_CONTIGUOUS && have == 0))) return RT_OK;
    return rt_fail(err, RT_EFORMAT, "'%s' in '%s' stores %llu bytes of %s data for %lld elements "
                   "of %zu bytes; the file is damaged; refused", name, path,
                   (unsigned long long)have, layout == H5D_COMPACT ? "compact" : "contiguous",
                   (long long)npoints, tsize);
}

/* A dataset's data must live in this file: external links (on the path or the dataset),
 * external raw storage and virtual datasets are refused — they made rtstap read other
 * files (/etc/passwd, /dev/zero) or block on a FIFO as radar samples. Each component of
 * the path is checked before the next is looked up, so no external link is followed. */
static int check_local(h5_src *s, hid_t dset, const char *name, rt_error *err)
{
    const char *path = s->path;
    char part[256];
    const size_t n = strlen(name);
    for (size_t i = 1; i <= n && n < sizeof part; i++) {
        if (name[i] != '/' && name[i] != '\0') continue;
        memcpy(part, name, i);
        part[i] = '\0';
        H5L_info_t li;
        if (H5Lexists(s->file, part, s->lapl) <= 0) break;
        if (H5Lget_info(s->file, part, &li, s->lapl) >= 0 && li.type == H5L_TYPE_EXTERNAL)
            return rt_fail(err, RT_EFORMAT, "'%s' in '%s' is an external link to another file; "
                           "refused", part, path);
    }
    int st = src_refused(s, name, err);
    if (st || dset < 0) return st;
    hid_t dcpl = H5Dget_create_plist(dset);
    const int nexternal = dcpl >= 0 ? H5Pget_external_count(dcpl) : 0;
    const H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (nexternal > 0)
        return rt_fail(err, RT_EFORMAT, "'%s' in '%s' keeps its data in %d external file(s); "
                       "refused", name, path, nexternal);
    if (layout == H5D_VIRTUAL)
        return rt_fail(err, RT_EFORMAT, "'%s' in '%s' is a virtual dataset (data in other "
                       "files); refused", name, path);
    return check_storage(dset, layout, name, path, err);
}

/* 1 when a read of dset must be given a zeroed buffer: where nothing was ever stored,
 * HDF5 leaves the buffer untouched if the dataset's fill time is "never" (rtstap returned
 * uninitialized heap memory as samples). Unknown counts as never. */
static int fill_never(hid_t dset)
{
    H5D_fill_time_t when = H5D_FILL_TIME_ERROR;
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl >= 0) H5Pget_fill_time(dcpl, &when);
    CLOSE_PLIST(dcpl);
    return when != H5D_FILL_TIME_ALLOC && when != H5D_FILL_TIME_IFSET;
}

/* Read a complex dataset of the given rank into a new cf32 array (row-major). */
static int read_complex(h5_src *s, const complex_spec *spec, hsize_t *dims, cf32 **out,
                        rt_error *err)
{
    const char *path = s->path;
    char detail[256], shape[128], where[128];
    int st = RT_OK;
    hid_t dset = -1, space = -1, ftype = -1, mtype = -1, mspace = -1;
    cf32 *x = NULL;
    double *slab = NULL;
    *out = NULL;

    if ((st = check_local(s, -1, spec->name, err))) goto done;
    dset = H5Dopen2(s->file, spec->name, s->dapl);
    if (dset < 0) {
        if (!(st = src_refused(s, spec->name, err)))
            st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' is not a dataset", spec->name, path);
        goto done;
    }
    if ((st = check_local(s, dset, spec->name, err))) goto done;
    space = H5Dget_space(dset);
    if (space < 0) {
        st = rt_fail(err, RT_EFORMAT, "'%s' in '%s': unreadable dataspace: %s", spec->name, path,
                     h5_detail(detail, sizeof detail));
        goto done;
    }
    if (H5Sget_simple_extent_type(space) == H5S_NULL) {
        st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' holds no data (null dataspace); expected rank "
                     "%d %s", spec->name, path, spec->rank, spec->axes_desc);
        goto done;
    }
    int rank = H5Sget_simple_extent_ndims(space);
    if (rank != spec->rank) {
        st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' has rank %d; expected %d %s", spec->name,
                     path, rank, spec->rank, spec->axes_desc);
        goto done;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    shape_string(shape, sizeof shape, rank, dims);
    unsigned long long n = 1;
    int too_big = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 0) {
            st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' has a zero-size dimension: shape %s %s",
                         spec->name, path, shape, spec->axes_desc);
            goto done;
        }
        if (dims[k] > (hsize_t)INT_MAX || n > spec->max_bytes / 8 / dims[k]) too_big = 1;
        else n *= dims[k];
    }
    if (too_big || n * 8 > spec->max_bytes) {
        st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' has shape %s, more than the %llu GiB "
                     "(complex64) that rtstap reads", spec->name, path, shape,
                     spec->max_bytes >> 30);
        goto done;
    }

    ftype = H5Dget_type(dset);
    if (ftype < 0) {
        st = rt_fail(err, RT_EFORMAT, "'%s' in '%s': unreadable element type: %s", spec->name,
                     path, h5_detail(detail, sizeof detail));
        goto done;
    }
    int elem = 0;
    if ((st = check_complex_type(ftype, spec->name, path, &elem, err))) goto done;

    const int zero = fill_never(dset);
    x = zero ? calloc((size_t)n, sizeof(cf32)) : malloc(sizeof(cf32) * (size_t)n);
    if (!x) {
        st = rt_fail(err, RT_ENOMEM, "out of memory for '%s' in '%s' (shape %s)", spec->name, path,
                     shape);
        goto done;
    }
    size_t bad = 0;
    if (elem == ELEM_F32) {
        mtype = cf32_mem_type();
        if (mtype < 0 || H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) {
            st = rt_fail(err, RT_EIO, "cannot read '%s' from '%s': %s", spec->name, path,
                         h5_detail(detail, sizeof detail));
            goto done;
        }
        if (!check_finite_f32(x, (size_t)n, &bad)) {
            index_string(where, sizeof where, bad, rank, dims, spec->axis);
            st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' has a non-finite sample at %s: "
                         "r = %g, i = %g", spec->name, path, where, crealf(x[bad]),
                         cimagf(x[bad]));
            goto done;
        }
    } else {
        /* float64 pairs: read slabs of whole rows (first dimension) as doubles, check
         * them, and round to float32, rejecting values outside float32's range. */
        size_t row = (size_t)(n / dims[0]);
        size_t rows_per = H5IO_SLAB_BYTES / (16 * row);
        if (rows_per < 1) rows_per = 1;
        if (rows_per > dims[0]) rows_per = (size_t)dims[0];
        slab = malloc(16 * row * rows_per);
        mtype = cf64_mem_type();
        if (!slab || mtype < 0) {
            st = rt_fail(err, RT_ENOMEM, "out of memory converting '%s' in '%s' from float64",
                         spec->name, path);
            goto done;
        }
        for (size_t r0 = 0; r0 < dims[0]; r0 += rows_per) {
            size_t nr = rows_per < dims[0] - r0 ? rows_per : (size_t)dims[0] - r0;
            hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
            for (int k = 0; k < rank; k++) count[k] = dims[k];
            start[0] = r0;
            count[0] = nr;
            CLOSE_SPACE(mspace);
            if (zero) memset(slab, 0, 16 * row * nr);
            mspace = H5Screate_simple(rank, count, NULL); /* the selection's shape: fast path */
            if (mspace < 0 ||
                H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                H5Dread(dset, mtype, mspace, space, H5P_DEFAULT, slab) < 0) {
                st = rt_fail(err, RT_EIO, "cannot read '%s' from '%s': %s", spec->name, path,
                             h5_detail(detail, sizeof detail));
                goto done;
            }
            for (size_t k = 0; k < nr * row; k++) {
                double re = slab[2 * k], im = slab[2 * k + 1];
                size_t flat = r0 * row + k;
                if (!isfinite(re) || !isfinite(im)) {
                    index_string(where, sizeof where, flat, rank, dims, spec->axis);
                    st = rt_fail(err, RT_EFORMAT, "'%s' in '%s' has a non-finite sample at %s: "
                                 "r = %g, i = %g", spec->name, path, where, re, im);
                    goto done;
                }
                if (fabs(re) > FLT_MAX || fabs(im) > FLT_MAX) {
                    index_string(where, sizeof where, flat, rank, dims, spec->axis);
                    st = rt_fail(err, RT_EFORMAT, "'%s' in '%s': the float64 sample at %s "
                                 "(r = %g, i = %g) overflows float32", spec->name, path, where,
                                 re, im);
                    goto done;
                }
                x[flat] = CMPLXF((float)re, (float)im);
            }
        }
    }
    *out = x;
    x = NULL;
done:
    free(x);
    free(slab);
    CLOSE_SPACE(mspace);
    CLOSE_TYPE(mtype);
    CLOSE_TYPE(ftype);
    CLOSE_SPACE(space);
    CLOSE_DSET(dset);
    return st;
}

/* An optional positive scalar attribute `name` of object `obj`. */
static int read_positive_attr(h5_src *s, const char *obj, const char *name, int *has,
                              double *value, rt_error *err)
{
    const char *path = s->path;
    *has = 0;
    if (!link_exists(s, obj)) return src_refused(s, obj, err);
    int cst = h5check_attributes(s->path, s->file, obj, s->lapl, err);
    if (cst || (cst = src_refused(s, obj, err))) return cst;
    if (H5Aexists_by_name(s->file, obj, name, s->lapl) <= 0) return src_refused(s, obj, err);
    char detail[256];
    int st = RT_OK;
    hid_t attr = -1, space = -1, type = -1;
    attr = H5Aopen_by_name(s->file, obj, name, H5P_DEFAULT, s->lapl);
    if (attr < 0 || (space = H5Aget_space(attr)) < 0 || (type = H5Aget_type(attr)) < 0) {
        if (!(st = src_refused(s, obj, err)))
            st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable: %s",
                         name, obj, path, h5_detail(detail, sizeof detail));
        goto done;
    }
    hssize_t npts = H5Sget_simple_extent_npoints(space);
    if (H5Sget_simple_extent_type(space) == H5S_NULL || npts != 1) {
        st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' holds %lld values; expected "
                     "one number", name, obj, path,
                     H5Sget_simple_extent_type(space) == H5S_NULL ? 0LL : (long long)npts);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' is a %s; expected a number",
                     name, obj, path, class_name(cls));
        goto done;
    }
    if (!atomic_layout_ok(type)) {
        st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' has a corrupt %zu-byte %s "
                     "type (bit fields beyond its size)", name, obj, path, H5Tget_size(type),
                     class_name(cls));
        goto done;
    }
    double v = NAN;
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) {
        st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable: %s", name,
                     obj, path, h5_detail(detail, sizeof detail));
        goto done;
    }
    if (!isfinite(v) || v <= 0) {
        st = rt_fail(err, RT_EFORMAT, "attribute '%s' of '%s' in '%s' is %g; expected a finite "
                     "number > 0", name, obj, path, v);
        goto done;
    }
    *has = 1;
    *value = v;
done:
    CLOSE_TYPE(type);
    CLOSE_SPACE(space);
    CLOSE_ATTR(attr);
    return st;
}

static const char *const steering_axes[] = {"beam", "element"};

/* The optional /steering and /array, /radar attributes of an input file. */
static int read_steering_and_meta(h5_src *s, stap_input *in, rt_error *err)
{
    int st;
    hsize_t dims[H5S_MAX_RANK];
    if (link_exists(s, "/steering")) {
        const complex_spec sv = {"/steering", 2, "(beams, channels*Q)", steering_axes,
                                 H5IO_MAX_STEERING_BYTES};
        if ((st = read_complex(s, &sv, dims, &in->steering, err))) return st;
        in->steering_beams = (int)dims[0];
        in->steering_len = (int)dims[1];
    } else if ((st = src_refused(s, "/steering", err))) {
        return st;
    }
    stap_radar_meta *m = &in->meta;
    if ((st = read_positive_attr(s, "/array", "element_spacing_wavelengths",
                                 &m->has_element_spacing, &m->element_spacing_wavelengths, err)) ||
        (st = read_positive_attr(s, "/radar", "prf_hz", &m->has_prf, &m->prf_hz, err)) ||
        (st = read_positive_attr(s, "/radar", "carrier_frequency_hz", &m->has_carrier,
                                 &m->carrier_frequency_hz, err)) ||
        (st = read_positive_attr(s, "/radar", "sample_rate_hz", &m->has_sample_rate,
                                 &m->sample_rate_hz, err)))
        return st;
    return RT_OK;
}

int rt_open_regular(const char *path, rt_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        rt_fail(err, RT_EIO, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    const int ok = fstat(fd, &sb) == 0;
    const int flags = ok && S_ISREG(sb.st_mode) ? fcntl(fd, F_GETFL) : -1;
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0) return fd;
    close(fd);
    if (ok && S_ISDIR(sb.st_mode)) rt_fail(err, RT_EIO, "cannot open '%s': it is a directory", path);
    else if (!ok || !S_ISREG(sb.st_mode))
        rt_fail(err, RT_EIO, "cannot open '%s': not a regular file (a FIFO, device or socket is "
                "refused)", path);
    else rt_fail(err, RT_EIO, "cannot open '%s': %s", path, strerror(errno));
    return -1;
}

/* Before HDF5 sees the path: errors of the operating system with errno's words, and only
 * regular files (the open is non-blocking: a FIFO made rtstap wait forever). */
static int check_input_path(const char *path, rt_error *err)
{
    int fd = rt_open_regular(path, err);
    if (fd < 0) return err ? err->code : RT_EIO;
    close(fd);
    if (H5Fis_hdf5(path) <= 0) return rt_fail(err, RT_EIO, "cannot open '%s': not an HDF5 file", path);
    return RT_OK;
}

/* Open path for reading into s (its file, and its lookups' property lists; s must not move
 * until src_close_lists). */
static int src_open(h5_src *s, const char *path, rt_error *err)
{
    char detail[256];
    memset(s, 0, sizeof *s);
    s->path = path;
    s->file = s->lapl = s->dapl = -1;
    int cst = check_input_path(path, err);
    if (cst) return cst;
    hid_t fapl = strong_fapl();
    s->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    /* HDF5's error stack first: closing the property list clears it (a truncated file
     * said only "HDF5 error") */
    if (s->file < 0) h5_detail(detail, sizeof detail);
    CLOSE_PLIST(fapl);
    if (s->file < 0) return rt_fail(err, RT_EIO, "cannot open '%s': %s", path, detail);
    s->lapl = H5Pcreate(H5P_LINK_ACCESS);
    s->dapl = H5Pcreate(H5P_DATASET_ACCESS); /* a link access list too */
    if (s->lapl < 0 || s->dapl < 0 || H5Pset_elink_cb(s->lapl, refuse_external_link, s) < 0 ||
        H5Pset_elink_cb(s->dapl, refuse_external_link, s) < 0)
        return rt_fail(err, RT_ENOMEM, "out of memory for HDF5 property lists reading '%s'", path);
    return RT_OK;
}

static void src_close_lists(h5_src *s)
{
    CLOSE_PLIST(s->lapl);
    CLOSE_PLIST(s->dapl);
}

void stap_input_free(stap_input *in)
{
    if (!in) return;
    free(in->iq);
    free(in->steering);
    memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------------------------------
 * Writing: a small context so that each step can report the first failure. */

typedef struct h5w {
    const char *path;   /* the final name, for messages */
    rt_error *err;
    int st;             /* first failure, RT_OK so far  */
    h5_out *out;        /* the file being written (its blocks allocated ahead of HDF5's
                           writes: h5_out_reserve), and its HDF5 identifier          */
    hid_t file;
} h5w;

/* Before HDF5 writes `bytes` of raw data into w's file. */
static void w_reserve(h5w *w, size_t bytes)
{
    if (!w->st && w->out) w->st = h5_out_reserve(w->out, w->file, bytes, w->err);
}

static int w_fail_h5(h5w *w, const char *what)
{
    char detail[256];
    if (!w->st)
        w->st = rt_fail(w->err, RT_EIO, "cannot write %s to '%s': %s", what, w->path,
                        h5_detail(detail, sizeof detail));
    return w->st;
}

static hid_t w_group(h5w *w, hid_t loc, const char *name)
{
    if (w->st) return -1;
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        char what[96];
        snprintf(what, sizeof what, "group '%s'", name);
        w_fail_h5(w, what);
    }
    return g;
}

/* A contiguous dataset: `count` elements of mtype from data (NULL when count is 0). */
static void w_dataset(h5w *w, hid_t loc, const char *name, const char *fullname, hid_t ftype,
                      hid_t mtype, int rank, const hsize_t *dims, const void *data,
                      hid_t *keep)
{
    if (keep) *keep = -1;
    if (w->st) return;
    char what[96];
    snprintf(what, sizeof what, "'%s'", fullname);
    hid_t space = H5Screate_simple(rank, dims, NULL), dset = -1;
    if (space < 0) {
        w_fail_h5(w, what);
        return;
    }
    dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    if (dset >= 0 && n > 0) w_reserve(w, (size_t)n * H5Tget_size(ftype));
    if (!w->st &&
        (dset < 0 || (n > 0 && H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)))
        w_fail_h5(w, what);
    if (keep && !w->st) *keep = dset;
    else CLOSE_DSET(dset);
    CLOSE_SPACE(space);
}

/* A complex64 dataset; *keep (when not NULL) gets it open, or -1. */
static void w_cf32_keep(h5w *w, hid_t loc, const char *name, const char *fullname, int rank,
                        const hsize_t *dims, const cf32 *data, hid_t *keep)
{
    if (keep) *keep = -1;
    if (w->st) return;
    hid_t ft = cf32_file_type(), mt = cf32_mem_type();
    if (ft < 0 || mt < 0) w_fail_h5(w, "the complex64 type");
    else w_dataset(w, loc, name, fullname, ft, mt, rank, dims, data, keep);
    CLOSE_TYPE(ft);
    CLOSE_TYPE(mt);
}

static void w_cf32(h5w *w, hid_t loc, const char *name, const char *fullname, int rank,
                   const hsize_t *dims, const cf32 *data)
{
    w_cf32_keep(w, loc, name, fullname, rank, dims, data, NULL);
}

/* /data/iq's axis labels (schema v1.1): channel, pulse, range, after cpi for a recording */
static void w_iq_labels(h5w *w, hid_t dset, int rank)
{
    if (!w->st && h5layout_write_labels(dset, rank) < 0)
        w_fail_h5(w, "the axis labels of '/data/iq'");
}

static void w_attr(h5w *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                   const void *value)
{
    if (w->st) return;
    hid_t space = H5Screate(H5S_SCALAR), attr = -1;
    if (space >= 0) attr = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (space < 0 || attr < 0 || H5Awrite(attr, mtype, value) < 0) {
        char what[96];
        snprintf(what, sizeof what, "attribute '%s'", name);
        w_fail_h5(w, what);
    }
    CLOSE_ATTR(attr);
    CLOSE_SPACE(space);
}

static void w_attr_int(h5w *w, hid_t obj, const char *name, int v)
{
    w_attr(w, obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &v);
}

static void w_attr_double(h5w *w, hid_t obj, const char *name, double v)
{
    w_attr(w, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* Strings are variable-length UTF-8, what h5py writes for str (and reads back as str). */
static void w_attr_string(h5w *w, hid_t obj, const char *name, const char *s)
{
    if (w->st) return;
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        w_fail_h5(w, "a string type");
    } else {
        const char *v = s ? s : "";
        w_attr(w, obj, name, t, t, &v);
    }
    CLOSE_TYPE(t);
}

/* The root attributes of every file rtstap writes (schema v1.1). */
static void w_root(h5w *w, hid_t file)
{
    w_attr_string(w, file, "schema", H5IO_SCHEMA);
    w_attr_string(w, file, "rtstap_version", RTSTAP_VERSION);
    w_attr_string(w, file, "commit", RTSTAP_COMMIT);
}

/* ---- a file being written ------------------------------------------------------------
 * Every file rtstap writes with HDF5 goes through h5_out (h5out.h): a temporary beside the
 * output (rt_atomic_begin), published by a rename once complete. A full disk must end in
 * a clean error, and Debian's HDF5 1.10.8 does not survive a failed write:
 *  - a failed flush (H5Fclose's) leaves its metadata cache's skip list switched on, every
 *    later flush fails with "slist already enabled?", the file stays open, and HDF5's
 *    shutdown at exit crashes in H5F__close_cb (SIGSEGV: `run` on a full disk did that);
 *  - a failed write of a chunk leaks blocks of HDF5's free lists, so that its shutdown
 *    loops ("HDF5: infinite loop closing library" and a line of package names).
 * So HDF5 is never let write where the disk has no room: the temporary's blocks are
 * allocated ahead of HDF5's end of file (fallocate, FALLOC_FL_KEEP_SIZE: the file's size
 * is HDF5's alone) before each write that can allocate — the end of allocated space plus
 * what the write needs plus a margin — and a full disk fails that fallocate, in our code,
 * before HDF5 has written anything there. A file system without fallocate gets a reserve
 * instead (a second temporary of H5IO_RESERVE_BYTES, released just before H5Fclose, so
 * that the close finds room for its metadata). A write that fails all the same abandons
 * the file: the temporary is truncated to nothing first (its blocks freed), then closed
 * and removed. */
#define H5IO_RESERVE_BYTES ((off_t)4 << 20)
#define H5IO_AHEAD_BYTES ((hsize_t)1 << 20) /* beyond every write's own bytes */

const char *h5_error_detail(char *buf, size_t len) { return h5_detail(buf, len); }

static void reserve_release(h5_out *o)
{
    if (o->reserve[0]) rt_atomic_abort(o->reserve);
    o->reserve[0] = '\0';
}

static int tmp_make(const char *path, char *tmp, size_t tmplen, rt_error *err);

static int out_fail_space(h5_out *o, int e, rt_error *err)
{
    return rt_fail(err, RT_EIO, "cannot write '%s': %s", o->path, strerror(e));
}

int h5_out_begin(h5_out *o, const char *path, rt_write_mode mode, rt_error *err)
{
    o->path = path;
    o->mode = mode;
    o->tmp[0] = o->reserve[0] = '\0';
    o->fd = -1;
    o->reserved = 0;
    if (rt_atomic_begin_mode(path, o->tmp, sizeof o->tmp, mode, err)) return err ? err->code : RT_EIO;
    o->fd = open(o->tmp, O_WRONLY | O_CLOEXEC);
    int e = o->fd < 0 ? errno : 0;
    if (!e && fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)H5IO_AHEAD_BYTES) == 0) {
        o->reserved = (off_t)H5IO_AHEAD_BYTES;
        return RT_OK;
    }
    if (!e) e = errno;
    if (e == ENOSPC || e == EDQUOT || e == EFBIG) {
        h5_out_finish(o, -1, 1, NULL);
        return out_fail_space(o, e, err);
    }
    /* no fallocate here (or no descriptor): a reserve the close can use */
    int fd = tmp_make(path, o->reserve, sizeof o->reserve, err);
    if (fd < 0) {
        h5_out_finish(o, -1, 1, NULL);
        return err ? err->code : RT_EIO;
    }
    e = posix_fallocate(fd, 0, H5IO_RESERVE_BYTES);
    close(fd);
    if (e == EINVAL || e == EOPNOTSUPP || e == ENODEV || e == ESPIPE) {
        reserve_release(o); /* a file system that cannot reserve at all: written as it is */
    } else if (e) {
        h5_out_finish(o, -1, 1, NULL);
        return out_fail_space(o, e, err);
    }
    return RT_OK;
}

hid_t h5_out_create(h5_out *o, rt_error *err)
{
    char detail[256];
    hid_t fapl = strong_fapl();
    hid_t file = H5Fcreate(o->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) h5_detail(detail, sizeof detail); /* before the close clears the stack */
    CLOSE_PLIST(fapl);
    if (file < 0)
        rt_fail(err, RT_EIO, "cannot create '%s' (as '%s'): %s", o->path, o->tmp, detail);
    return file;
}

int h5_out_reserve(h5_out *o, hid_t file, size_t bytes, rt_error *err)
{
    if (!o->reserved || file < 0) return RT_OK; /* no fallocate: the reserve file stands in */
    hsize_t eoa = 0;
    if (H5Fget_filesize(file, &eoa) < 0) return RT_OK;
    const off_t want = (off_t)(eoa + bytes + H5IO_AHEAD_BYTES);
    if (want <= o->reserved) return RT_OK;
    /* a file size limit (RLIMIT_FSIZE): fallocate's KEEP_SIZE does not see it, HDF5's write
     * past it would fail (EFBIG); say so before it writes */
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)want > fl.rlim_cur)
        return out_fail_space(o, EFBIG, err);
    /* in steps of an eighth more, at least 4 MiB: few calls for a file written CPI by CPI */
    off_t step = o->reserved / 8 > ((off_t)4 << 20) ? o->reserved / 8 : ((off_t)4 << 20);
    off_t to = want > o->reserved + step ? want : o->reserved + step;
    if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, to) != 0 &&
        (to == want || fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, to = want) != 0))
        return out_fail_space(o, errno, err);
    o->reserved = to;
    return RT_OK;
}

/* Abandon the file: free its blocks and the reserve's, then close and remove it. */
static void out_discard(h5_out *o, hid_t file)
{
    if (o->fd >= 0) {
        if (ftruncate(o->fd, 0) != 0) { /* nothing more to free */ }
        close(o->fd);
        o->fd = -1;
    }
    reserve_release(o);
    if (file >= 0) H5Fclose(file);
    if (o->tmp[0]) rt_atomic_abort(o->tmp);
    o->tmp[0] = '\0';
}

int h5_out_finish(h5_out *o, hid_t file, int failed, rt_error *err)
{
    char detail[256];
    if (failed) {
        out_discard(o, file);
        return err ? err->code : RT_EIO;
    }
    reserve_release(o);
    if (file >= 0 && H5Fclose(file) < 0) {
        int st = rt_fail(err, RT_EIO, "cannot write '%s': %s", o->path,
                         h5_detail(detail, sizeof detail));
        out_discard(o, -1);
        return st;
    }
    if (o->fd >= 0) { /* the blocks allocated ahead that HDF5 did not use */
        struct stat sb;
        if (o->reserved && fstat(o->fd, &sb) == 0 && o->reserved > sb.st_size &&
            fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, sb.st_size,
                      o->reserved - sb.st_size) != 0) { /* kept: no harm but space */ }
        close(o->fd);
        o->fd = -1;
    }
    int st = rt_atomic_commit_mode(o->tmp, o->path, o->mode, err);
    o->tmp[0] = '\0';
    return st;
}

/* A dataset access list without a chunk cache, for the writers' chunked datasets: each
 * chunk goes to the file when H5Dwrite returns — within the blocks allocated ahead of it —
 * and none is left dirty for a close to flush past them (or to fail, when the file is
 * being abandoned). One list for the process, made once (never closed). */
static hid_t no_chunk_cache(void)
{
    static hid_t dapl = -1;
    if (dapl < 0) {
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        if (dapl >= 0 && H5Pset_chunk_cache(dapl, 0, 0, H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
            H5Pclose(dapl);
            dapl = -1;
        }
    }
    return dapl >= 0 ? dapl : H5P_DEFAULT;
}

/* The writers' forms: the failure goes into w. */
static hid_t out_create(h5w *w, h5_out *o)
{
    hid_t file = h5_out_create(o, w->err);
    if (file < 0) w->st = w->err ? w->err->code : RT_EIO;
    w->out = o;
    w->file = file;
    return file;
}

static int out_finish(h5w *w, h5_out *o, hid_t file)
{
    int st = h5_out_finish(o, file, w->st != RT_OK, w->err);
    if (w->st) return w->st;
    return w->st = st;
}

static void w_meta_radar(h5w *w, hid_t file, const stap_radar_meta *m, int always)
{
    if (w->st) return;
    int any = m && (m->has_prf || m->has_carrier || m->has_sample_rate);
    if (!any && !always) return;
    hid_t g = w_group(w, file, "radar");
    if (g < 0) return;
    if (m && m->has_prf) w_attr_double(w, g, "prf_hz", m->prf_hz);
    if (m && m->has_carrier) w_attr_double(w, g, "carrier_frequency_hz", m->carrier_frequency_hz);
    if (m && m->has_sample_rate) w_attr_double(w, g, "sample_rate_hz", m->sample_rate_hz);
    CLOSE_GROUP(g);
}

int stap_input_write(const char *path, const stap_input *in, stap_h5_extra_fn extra,
                     void *extra_user, rt_error *err)
{
    return stap_input_write_mode(path, in, extra, extra_user, RT_WRITE_NEW, err);
}

int stap_input_write_mode(const char *path, const stap_input *in, stap_h5_extra_fn extra,
                          void *extra_user, rt_write_mode mode, rt_error *err)
{
    if (!path || !*path) return rt_fail(err, RT_EINVAL, "stap_input_write: empty output path");
    if (!in || !in->iq || in->channels < 1 || in->pulses < 1 || in->range_gates < 1)
        return rt_fail(err, RT_EINVAL, "stap_input_write('%s'): no cube, or a dimension < 1", path);
    if (in->steering_beams < 0 ||
        (in->steering_beams > 0 && (!in->steering || in->steering_len < 1)))
        return rt_fail(err, RT_EINVAL, "stap_input_write('%s'): steering_beams = %d but no "
                       "steering vectors of length >= 1", path, in->steering_beams);
    const stap_radar_meta *m = &in->meta;
    if (m->has_element_spacing &&
        !(isfinite(m->element_spacing_wavelengths) && m->element_spacing_wavelengths > 0))
        return rt_fail(err, RT_EINVAL, "stap_input_write('%s'): element spacing %g is not a "
                       "finite number > 0", path, m->element_spacing_wavelengths);

    h5_out o;
    h5_quiet q;
    quiet_begin(&q);
    h5w w = {path, err, RT_OK, NULL, -1};
    if (h5_out_begin(&o, path, mode, err)) {
        quiet_end(&q);
        return err ? err->code : RT_EIO;
    }
    hid_t file = out_create(&w, &o);
    w_attr_int(&w, file, "schema_version", H5IO_SCHEMA_VERSION);
    w_root(&w, file);
    hid_t g = w_group(&w, file, "data");
    const hsize_t dims[3] = {(hsize_t)in->channels, (hsize_t)in->pulses, (hsize_t)in->range_gates};
    hid_t iq;
    w_cf32_keep(&w, g, "iq", "/data/iq", 3, dims, in->iq, &iq);
    if (iq >= 0) w_iq_labels(&w, iq, 3);
    CLOSE_DSET(iq);
    CLOSE_GROUP(g);
    if (in->steering_beams > 0) {
        const hsize_t sd[2] = {(hsize_t)in->steering_beams, (hsize_t)in->steering_len};
        w_cf32(&w, file, "steering", "/steering", 2, sd, in->steering);
    }
    if (m->has_element_spacing) {
        g = w_group(&w, file, "array");
        if (g >= 0)
            w_attr_double(&w, g, "element_spacing_wavelengths", m->element_spacing_wavelengths);
        CLOSE_GROUP(g);
    }
    w_meta_radar(&w, file, m, 0);
    w_reserve(&w, 0); /* the hook writes small things: within the margin */
    if (!w.st && extra) w.st = extra((int64_t)file, extra_user, err);
    int st = out_finish(&w, &o, file);
    quiet_end(&q);
    return st;
}

static void window_string(const stap_config *c, char *buf, size_t len)
{
    switch (c->window) {
    case STAP_WINDOW_HANN: snprintf(buf, len, "hann"); break;
    case STAP_WINDOW_CHEBYSHEV: snprintf(buf, len, "chebyshev:%g", c->chebyshev_db); break;
    default: snprintf(buf, len, "none"); break;
    }
}

static const char detection_units[] =
    "beam, doppler_bin, range_cell: indices into /axes (see /output/iq); power: |y|^2 in the "
    "input samples' units squared; snr_db: dB over the CFAR's noise estimate";

static void w_config(h5w *w, hid_t file, const stap_result *res, int D)
{
    const stap_config *c = res->cfg;
    hid_t g = w_group(w, file, "config");
    if (g < 0) return;
    char win[64];
    window_string(c, win, sizeof win);
    w_attr_int(w, g, "channels", c->channels);
    w_attr_int(w, g, "pulses", c->pulses);
    w_attr_int(w, g, "range_gates", c->range_gates);
    w_attr_int(w, g, "doppler_bins", D);
    w_attr_int(w, g, "doppler_order", c->doppler_order);
    w_attr_int(w, g, "segments", c->segments);
    w_attr_int(w, g, "training", c->training);
    w_attr_string(w, g, "training_window", stap_training_window_name(c->training_window));
    if (c->training_window == STAP_TRAINING_SLIDING) {
        w_attr_int(w, g, "block", c->block);
        w_attr_int(w, g, "guard", c->guard);
    }
    w_attr_string(w, g, "algorithm", stap_algorithm_name(c->algorithm));
    if (c->algorithm == STAP_ALGORITHM_JDL) w_attr_int(w, g, "angle_bins", c->angle_bins);
    if (c->algorithm == STAP_ALGORITHM_DPCA) w_attr_int(w, g, "dpca_shift", c->dpca_shift);
    w_attr_int(w, g, "beams", res->beams);
    w_attr_double(w, g, "loading", c->loading);
    w_attr_string(w, g, "window", win);
    w_attr_double(w, g, "element_spacing_wavelengths", c->element_spacing);
    w_attr_string(w, g, "backend", la_backend_name(c->backend));
    /* what ran: the engine's threads (0 on a GPU), the device and the engine's stages */
    w_attr_int(w, g, "threads", res->engine ? stap_engine_threads(res->engine) : c->threads);
    w_attr_int(w, g, "threads_requested", c->threads);
    if (res->engine) {
        w_attr_string(w, g, "device", stap_engine_device(res->engine));
        w_attr_string(w, g, "engine", stap_engine_describe(res->engine));
    }
    w_attr_string(w, g, "input", res->input_name ? res->input_name : "");
    if (res->input_samples) w_attr_string(w, g, "input_samples", res->input_samples);
    w_attr_int(w, g, "schema_version", H5IO_SCHEMA_VERSION);
    w_attr_string(w, g, "rtstap_version", RTSTAP_VERSION);
    w_attr_string(w, g, "rtstap_commit", RTSTAP_COMMIT);
    CLOSE_GROUP(g);
}

static void w_timing(h5w *w, hid_t file, const stap_result *res)
{
    hid_t g = w_group(w, file, "timing");
    if (g < 0) return;
    for (int s = 0; s < STAP_STAGE_COUNT; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s_ms", stap_stage_names[s]);
        w_attr_double(w, g, name, res->timing_ms ? res->timing_ms[s] : 0.0);
    }
    w_attr_double(w, g, "read_ms", res->read_ms);
    w_attr_double(w, g, "total_ms", res->total_ms);
    w_attr_string(w, g, "backend", res->backend_name ? res->backend_name
                                                     : la_backend_name(res->cfg->backend));
    CLOSE_GROUP(g);
}

static void w_detections(h5w *w, hid_t file, const stap_result *res)
{
    if (w->st) return;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_detection));
    hid_t ft = H5Tcreate(H5T_COMPOUND, 5 * 4);
    if (mt < 0 || ft < 0 ||
        H5Tinsert(mt, "beam", offsetof(stap_detection, beam), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "doppler_bin", offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "range_cell", offsetof(stap_detection, range_cell), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(mt, "power", offsetof(stap_detection, power), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(mt, "snr_db", offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(ft, "beam", 0, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "doppler_bin", 4, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "range_cell", 8, H5T_STD_I32LE) < 0 ||
        H5Tinsert(ft, "power", 12, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(ft, "snr_db", 16, H5T_IEEE_F32LE) < 0) {
        w_fail_h5(w, "the detection type");
    } else {
        const hsize_t n = (hsize_t)res->detection_count;
        hid_t dset;
        w_dataset(w, file, "detections", "/detections", ft, mt, 1, &n, res->detections, &dset);
        if (!w->st) w_attr_string(w, dset, "cfar", res->cfar_description);
        if (!w->st) w_attr_string(w, dset, "units", detection_units);
        CLOSE_DSET(dset);
    }
    CLOSE_TYPE(mt);
    CLOSE_TYPE(ft);
}

/* ---- the axes of a result (schema v1.1): dimension scales in /axes, attached to every
 * dataset's axes, and every axis labelled ------------------------------------------------ */

typedef struct result_axes {
    hid_t doppler, segment, beam, range; /* scale datasets, -1 when not made */
} result_axes;

/* A 1-D scale dataset /axes/<name> of n doubles (or ints when iv), with units and a
 * description; -1 after a failure (recorded in w). */
static hid_t w_scale(h5w *w, hid_t g, const char *name, hsize_t n, const double *dv, const int *iv,
                     const char *units, const char *desc)
{
    hid_t d = -1;
    char full[64];
    snprintf(full, sizeof full, "/axes/%s", name);
    if (dv) w_dataset(w, g, name, full, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, dv, &d);
    else w_dataset(w, g, name, full, H5T_STD_I32LE, H5T_NATIVE_INT, 1, &n, iv, &d);
    if (d < 0) return -1;
    w_attr_string(w, d, "units", units);
    w_attr_string(w, d, "description", desc);
    if (!w->st && H5DSset_scale(d, name) < 0) w_fail_h5(w, full);
    return d;
}

static void w_axes(h5w *w, hid_t file, const stap_result *res, int D, result_axes *ax)
{
    ax->doppler = ax->segment = ax->beam = ax->range = -1;
    const stap_config *c = res->cfg;
    const int S = c->segments, B = res->beams, R = c->range_gates, L = R / S;
    const stap_radar_meta *m = res->meta;
    const int nmax = D > R ? (D > B ? D : B) : (R > B ? R : B);
    double *dv = malloc(sizeof(double) * (size_t)nmax);
    int *iv = malloc(sizeof(int) * (size_t)(nmax > S ? nmax : S));
    hid_t g = w_group(w, file, "axes");
    if (!dv || !iv) {
        if (!w->st) w->st = rt_fail(w->err, RT_ENOMEM, "out of memory for the axes of '%s'", w->path);
    } else if (g >= 0) {
        /* Doppler bin d: d/D cycles per pulse, taken in [-1/2, 1/2) */
        const int hz = m && m->has_prf;
        for (int d = 0; d < D; d++) {
            double f = (double)d / D;
            dv[d] = (f >= 0.5 ? f - 1 : f) * (hz ? m->prf_hz : 1);
        }
        ax->doppler = w_scale(w, g, hz ? "doppler_hz" : "doppler_normalized", (hsize_t)D, dv, NULL,
                              hz ? "Hz" : "cycles/pulse",
                              hz ? "Doppler bin d: d/D cycles per pulse in [-1/2, 1/2), times "
                                   "/radar prf_hz"
                                 : "Doppler bin d: d/D cycles per pulse in [-1/2, 1/2) (no PRF "
                                   "known)");
        for (int s = 0; s < S; s++) iv[s] = s * L;
        ax->segment = w_scale(w, g, "segment_start_cell", (hsize_t)S, NULL, iv, "range cell",
                              c->training_window == STAP_TRAINING_SLIDING
                                  ? "the first range cell of sliding block s: s * /config block"
                                  : "the first range cell of segment s: s * R / S");
        if (res->engine && !stap_engine_custom_steering(res->engine)) {
            for (int b = 0; b < B; b++) dv[b] = stap_beam_u(b, B);
            ax->beam = w_scale(w, g, "beam_u", (hsize_t)B, dv, NULL, "1",
                               "the default beams: u = sin(angle from broadside) = -1 + (2b+1)/B");
        } else {
            for (int b = 0; b < B; b++) iv[b] = b;
            ax->beam = w_scale(w, g, "beam", (hsize_t)B, NULL, iv, "1",
                               "beam index: row of /steering (the input's steering vectors)");
        }
        const int meters = m && m->has_sample_rate;
        if (meters) {
            const double dr = H5IO_SPEED_OF_LIGHT / (2 * m->sample_rate_hz);
            for (int r = 0; r < R; r++) dv[r] = r * dr;
            ax->range = w_scale(w, g, "range_m", (hsize_t)R, dv, NULL, "m",
                                "range from the first gate: cell * c / (2 /radar sample_rate_hz)");
        } else {
            for (int r = 0; r < R; r++) iv[r] = r;
            ax->range = w_scale(w, g, "range_cell", (hsize_t)R, NULL, iv, "range cell",
                                "range cell index (no sample rate known)");
        }
    }
    CLOSE_GROUP(g);
    free(dv);
    free(iv);
}

static void w_axes_close(result_axes *ax)
{
    CLOSE_DSET(ax->doppler);
    CLOSE_DSET(ax->segment);
    CLOSE_DSET(ax->beam);
    CLOSE_DSET(ax->range);
}

/* Label the axes of dset (names[k], NULL: none) and attach scales[k] (-1: none); `units`. */
static void w_describe(h5w *w, hid_t dset, const char *what, int rank, const char *const *names,
                       const hid_t *scales, const char *units)
{
    for (int k = 0; k < rank && !w->st && dset >= 0; k++) {
        if ((names[k] && H5DSset_label(dset, (unsigned)k, names[k]) < 0) ||
            (scales[k] >= 0 && H5DSattach_scale(dset, scales[k], (unsigned)k) < 0))
            w_fail_h5(w, what);
    }
    if (dset >= 0 && units) w_attr_string(w, dset, "units", units);
}

/* The result datasets' axes; a recording's have a leading cpi axis (off = 1). */
static void w_describe_results(h5w *w, hid_t weights, hid_t output, hid_t steering,
                               const result_axes *ax, int off)
{
    const char *wn[5] = {"cpi", "doppler", "segment", "beam", "dof"};
    const hid_t ws[5] = {-1, ax->doppler, ax->segment, ax->beam, -1};
    w_describe(w, weights, "the axes of '/weights'", 4 + off, wn + 1 - off, ws + 1 - off, "1");
    const char *on[4] = {"cpi", "beam", "doppler", "range"};
    const hid_t os[4] = {-1, ax->beam, ax->doppler, ax->range};
    w_describe(w, output, "the axes of '/output/iq'", 3 + off, on + 1 - off, os + 1 - off,
               "those of the input samples (w^H v = 1)");
    const char *sn[2] = {"beam", "dof"};
    const hid_t ss[2] = {ax->beam, -1};
    w_describe(w, steering, "the axes of '/steering'", 2, sn, ss, "1");
}

int stap_result_write(const char *path, const stap_result *res, rt_error *err)
{
    return stap_result_write_mode(path, res, RT_WRITE_NEW, err);
}

int stap_result_write_mode(const char *path, const stap_result *res, rt_write_mode mode,
                           rt_error *err)
{
    if (!path || !*path) return rt_fail(err, RT_EINVAL, "stap_result_write: empty output path");
    if (!res || !res->cfg || !res->weights || !res->output || !res->steering || res->beams < 1)
        return rt_fail(err, RT_EINVAL, "stap_result_write('%s'): missing weights, output, "
                       "steering or configuration", path);
    if (res->have_detections && res->detection_count > 0 && !res->detections)
        return rt_fail(err, RT_EINVAL, "stap_result_write('%s'): %zu detections but no array",
                       path, res->detection_count);
    const stap_config *c = res->cfg;
    const int D = c->doppler_bins > 0 ? c->doppler_bins : c->pulses;
    const int N = stap_dof(c), B = res->beams;
    if (D < 1 || c->segments < 1 || N < 1 || c->range_gates < 1)
        return rt_fail(err, RT_EINVAL, "stap_result_write('%s'): configuration not resolved "
                       "(D %d, S %d, N %d, R %d)", path, D, c->segments, N, c->range_gates);

    h5_out o;
    h5_quiet q;
    quiet_begin(&q);
    h5w w = {path, err, RT_OK, NULL, -1};
    if (h5_out_begin(&o, path, mode, err)) {
        quiet_end(&q);
        return err ? err->code : RT_EIO;
    }
    hid_t file = out_create(&w, &o);
    w_root(&w, file);
    result_axes ax;
    w_axes(&w, file, res, D, &ax);
    hid_t wds, ods, sds;
    const hsize_t wd[4] = {(hsize_t)D, (hsize_t)c->segments, (hsize_t)B, (hsize_t)N};
    w_cf32_keep(&w, file, "weights", "/weights", 4, wd, res->weights, &wds);
    hid_t g = w_group(&w, file, "output");
    const hsize_t od[3] = {(hsize_t)B, (hsize_t)D, (hsize_t)c->range_gates};
    w_cf32_keep(&w, g, "iq", "/output/iq", 3, od, res->output, &ods);
    CLOSE_GROUP(g);
    const hsize_t sd[2] = {(hsize_t)B, (hsize_t)N};
    w_cf32_keep(&w, file, "steering", "/steering", 2, sd, res->steering, &sds);
    w_describe_results(&w, wds, ods, sds, &ax, 0);
    CLOSE_DSET(wds);
    CLOSE_DSET(ods);
    CLOSE_DSET(sds);
    w_axes_close(&ax);
    w_config(&w, file, res, D);
    w_timing(&w, file, res);
    w_meta_radar(&w, file, res->meta, 1);
    if (res->have_detections) w_detections(&w, file, res);
    w_reserve(&w, 0);
    if (!w.st && res->extra) w.st = res->extra((int64_t)file, res->extra_user, err);
    int st = out_finish(&w, &o, file);
    quiet_end(&q);
    return st;
}

/* ------------------------------------------------------------------------------------
 * Atomic publication */

/* The process's umask, without changing it (umask(2) would, racily). */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned m;
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)m;
            break;
        }
    }
    fclose(f);
    return mask;
}

/* Temporary files in progress, for rt_atomic_cleanup_on_signals: a handler that unlinks
 * them when SIGINT, SIGTERM or SIGHUP ends the process (they were left behind, up to
 * 184 MB each). Slots are claimed and released in normal code; the handler only reads. */
#define RT_TMP_SLOTS 16
static char tmp_names[RT_TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_used[RT_TMP_SLOTS];
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;

static void tmp_register(const char *tmp)
{
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (!tmp_used[i]) {
            snprintf(tmp_names[i], sizeof tmp_names[i], "%s", tmp);
            tmp_used[i] = 1;
            break;
        }
    pthread_mutex_unlock(&tmp_lock);
}

static void tmp_unregister(const char *tmp)
{
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (tmp_used[i] && !strcmp(tmp_names[i], tmp)) tmp_used[i] = 0;
    pthread_mutex_unlock(&tmp_lock);
}

/* A graceful stop (rt_graceful_begin): the first SIGINT or SIGTERM is recorded for the
 * program to finish its work in flight; a second one ends the process as below. */
static volatile sig_atomic_t graceful_on, graceful_sig;

void rt_graceful_begin(void)
{
    graceful_sig = 0;
    graceful_on = 1;
}
void rt_graceful_end(void) { graceful_on = 0; }
int rt_graceful_requested(void) { return graceful_on ? (int)graceful_sig : 0; }

static void on_fatal_signal(int sig)
{
    if (graceful_on && !graceful_sig && sig != SIGHUP) {
        graceful_sig = sig;
        return;
    }
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (tmp_used[i]) unlink(tmp_names[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void rt_atomic_cleanup_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* a signal the caller ignores (nohup, a shell's background job) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* The host part of temporary names: a hostname without '.' (sweeping needs to know that
 * a temporary was made on this machine before it asks whether its process lives). */
static void tmp_owner(char *owner, size_t len)
{
    char h[64] = "host";
    if (gethostname(h, sizeof h) != 0) snprintf(h, sizeof h, "host");
    h[sizeof h - 1] = 0;
    size_t k = 0;
    for (const char *c = h; *c && k + 1 < len; c++)
        owner[k++] = (*c == '.' || *c == '/') ? '_' : *c;
    owner[k] = 0;
}

/* Remove stale temporaries of this output: ".BASE.tmp.OWNER.PID.XXXXXX" in its directory
 * made on this host by a process that no longer exists (killed by SIGKILL, a crash, a
 * power cut). Another live writer's temporary, or one from another host sharing the
 * directory, is left alone. */
static void sweep_stale(const char *path, int dlen, const char *base, const char *owner)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", path ? (dlen ? dlen : 1) : 1, path ? path : ".");
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[600];
    int pl = snprintf(prefix, sizeof prefix, ".%s.tmp.%s.", base, owner);
    struct dirent *de;
    while (pl > 0 && (size_t)pl < sizeof prefix && (de = readdir(d))) {
        if (strncmp(de->d_name, prefix, (size_t)pl)) continue;
        char *end;
        long pid = strtol(de->d_name + pl, &end, 10);
        if (pid <= 0 || *end != '.' || strlen(end + 1) != 6) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to ask */
        char victim[4700];
        snprintf(victim, sizeof victim, "%s/%s", dir, de->d_name);
        unlink(victim);
    }
    closedir(d);
}

int rt_atomic_begin(const char *path, char *tmp, size_t tmplen, rt_error *err)
{
    return rt_atomic_begin_mode(path, tmp, tmplen, RT_WRITE_NEW, err);
}

int rt_atomic_begin_mode(const char *path, char *tmp, size_t tmplen, rt_write_mode mode,
                         rt_error *err)
{
    if (tmp && tmplen) tmp[0] = '\0';
    if (!path || !*path) return rt_fail(err, RT_EINVAL, "empty output path");
    if (!tmp) return rt_fail(err, RT_EINVAL, "rt_atomic_begin: no buffer for the name");
    if (mode != RT_WRITE_NEW && mode != RT_WRITE_REPLACE)
        return rt_fail(err, RT_EINVAL, "rt_atomic_begin: invalid write mode %d", (int)mode);
    size_t n = strlen(path);
    if (path[n - 1] == '/')
        return rt_fail(err, RT_EINVAL, "output path '%s' names a directory, not a file", path);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (mode == RT_WRITE_NEW)
            return rt_fail(err, RT_EIO, "'%s' already exists; refusing to overwrite", path);
        /* replacing renames a new file over the name: only a regular file is replaced
         * (not a directory, nor the target of a symbolic link, nor a device or FIFO) */
        if (!S_ISREG(sb.st_mode))
            return rt_fail(err, RT_EIO, "'%s' exists and is %s; only a regular file is "
                           "replaced", path, S_ISDIR(sb.st_mode) ? "a directory"
                           : S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file");
    }
    int fd = tmp_make(path, tmp, tmplen, err);
    if (fd < 0) return err ? err->code : RT_EIO;
    close(fd);
    return RT_OK;
}

/* A new temporary "<dir>/.<base>.tmp.<owner>.<pid>.XXXXXX" beside path, created
 * exclusively with the usual permissions and registered for the signal handlers; its
 * descriptor (open for writing), or -1 with err. Stale temporaries of path are swept. */
static int tmp_make(const char *path, char *tmp, size_t tmplen, rt_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dlen = slash ? (int)(slash - path) : 0;
    char owner[96];
    tmp_owner(owner, sizeof owner);
    sweep_stale(slash ? path : NULL, dlen, base, owner);
    int w = slash ? snprintf(tmp, tmplen, "%.*s/.%s.tmp.%s.%ld.XXXXXX", dlen, path, base, owner,
                             (long)getpid())
                  : snprintf(tmp, tmplen, ".%s.tmp.%s.%ld.XXXXXX", base, owner, (long)getpid());
    if (w < 0 || (size_t)w >= tmplen) {
        tmp[0] = '\0';
        rt_fail(err, RT_EINVAL, "output path '%s' is too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        tmp[0] = '\0';
        rt_fail(err, RT_EIO, "cannot write '%s' (directory '%.*s'): %s", path,
                slash ? (dlen ? dlen : 1) : 1, slash ? path : ".", strerror(e));
        return -1;
    }
    /* mkstemp makes 0600; a published file gets the usual permissions. */
    if (fchmod(fd, 0666 & ~current_umask()) != 0) { /* not fatal: the file stays private */ }
    tmp_register(tmp);
    return fd;
}

int rt_atomic_commit(const char *tmp, const char *path, rt_error *err)
{
    return rt_atomic_commit_mode(tmp, path, RT_WRITE_NEW, err);
}

int rt_atomic_commit_mode(const char *tmp, const char *path, rt_write_mode mode, rt_error *err)
{
    /* The data must be on disk before the name appears, so that even a crash never
     * publishes a partial file. */
    int fd = open(tmp, O_RDONLY);
    if (fd < 0) {
        int e = errno;
        return rt_fail(err, RT_EIO, "cannot publish '%s': temporary '%s' vanished: %s", path, tmp,
                       strerror(e));
    }
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        int e = errno;
        close(fd);
        rt_atomic_abort(tmp);
        return rt_fail(err, RT_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    close(fd);

    if (mode == RT_WRITE_REPLACE) {
        /* rename() replaces the old file in one step: readers see the old file or the
         * new one, never a mixture, and a failure leaves the old one as it was */
        struct stat sb;
        if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
            rt_atomic_abort(tmp);
            return rt_fail(err, RT_EIO, "'%s' is no longer a regular file; not replaced", path);
        }
        if (rename(tmp, path) == 0) {
            tmp_unregister(tmp);
            return RT_OK;
        }
        int e = errno;
        rt_atomic_abort(tmp);
        return rt_fail(err, RT_EIO, "cannot replace '%s': %s", path, strerror(e));
    }
    /* link() fails with EEXIST instead of replacing an existing file, unlike rename(). */
    if (link(tmp, path) == 0) {
        unlink(tmp);
        tmp_unregister(tmp);
        return RT_OK;
    }
    int e = errno;
    if (e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EMLINK) {
        /* A file system without hard links: rename, still refusing to replace. */
#ifdef RENAME_NOREPLACE
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) {
            tmp_unregister(tmp);
            return RT_OK;
        }
        e = errno;
        if (e == EINVAL || e == ENOSYS || e == EOPNOTSUPP)
#endif
        {
            struct stat sb;
            if (lstat(path, &sb) == 0) e = EEXIST;
            else if (rename(tmp, path) == 0) {
                tmp_unregister(tmp);
                return RT_OK;
            }
            else e = errno;
        }
    }
    rt_atomic_abort(tmp);
    if (e == EEXIST)
        return rt_fail(err, RT_EIO, "'%s' already exists; refusing to overwrite", path);
    return rt_fail(err, RT_EIO, "cannot create '%s': %s", path, strerror(e));
}

int rt_atomic_write(const char *path, const void *data, size_t len, rt_write_mode mode,
                    rt_error *err)
{
    char tmp[4096];
    int st = rt_atomic_begin_mode(path, tmp, sizeof tmp, mode, err);
    if (st) return st;
    int fd = open(tmp, O_WRONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;
    const char *p = data;
    for (size_t left = len; !e && left;) {
        ssize_t k = write(fd, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) e = k < 0 ? errno : EIO;
        else p += k, left -= (size_t)k;
    }
    if (fd >= 0 && close(fd) != 0 && !e) e = errno;
    if (e) {
        rt_atomic_abort(tmp);
        return rt_fail(err, RT_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return rt_atomic_commit_mode(tmp, path, mode, err);
}

int rt_atomic_pending(void)
{
    int n = 0;
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++) n += tmp_used[i] != 0;
    pthread_mutex_unlock(&tmp_lock);
    return n;
}

void rt_atomic_abort(const char *tmp)
{
    if (tmp && *tmp) {
        unlink(tmp);
        tmp_unregister(tmp);
    }
}

int stap_output_check(const char *path, rt_error *err)
{
    return stap_output_check_mode(path, RT_WRITE_NEW, err);
}

int stap_output_check_mode(const char *path, rt_write_mode mode, rt_error *err)
{
    char tmp[4096];
    int st = rt_atomic_begin_mode(path, tmp, sizeof tmp, mode, err);
    if (st) return st;
    rt_atomic_abort(tmp);
    return RT_OK;
}

/* ------------------------------------------------------------------------------------
 * Reading /data/iq, one CPI at a time (stap_input_read reads the one CPI of a rank-3 cube
 * the same way), and writing recordings, from a reader and a writer thread: Debian's
 * libhdf5 is not built thread-safe, so every HDF5 call of these functions runs under one
 * lock. */

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

int stap_io_open_objects(void)
{
    pthread_mutex_lock(&h5_lock);
    const ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    pthread_mutex_unlock(&h5_lock);
    return n > 0 ? (int)n : 0;
}

/* ---- the element forms of /data/iq (README "File format") --------------------------
 * A compound of two members {r, i} or {real, imag}, or integer or real elements with a
 * last axis of length 2 (interleaved); each component float32, float64 or a signed 8-,
 * 16- or 32-bit integer, in either byte order. HDF5 converts them: to float32 when that is
 * exact (float32, int8, int16), otherwise to double (float64, int32), which rtstap scales,
 * checks against float32's range and rounds once. */

typedef struct iq_form {
    int interleaved;    /* integer or real elements; the last axis (length 2) is (r, i)    */
    int wide;           /* a float64 or int32 component: read as double                   */
    int mixed;          /* a compound whose two members differ in type                      */
    char n0[8], n1[8];  /* compound members, real part first: "r", "i" or "real", "imag"   */
    char comp[40];      /* the component type, e.g. "int16" or "float32, big-endian"       */
} iq_form;

/* One component: 0, *wide and its name, or -1 with why filled. */
static int iq_component(hid_t t, int *wide, char *name, size_t nlen, char *why, size_t wlen)
{
    const H5T_class_t c = H5Tget_class(t);
    const size_t sz = H5Tget_size(t);
    const char *be = H5Tget_order(t) == H5T_ORDER_BE ? ", big-endian" : "";
    if ((c == H5T_FLOAT || c == H5T_INTEGER) && !atomic_layout_ok(t)) {
        snprintf(why, wlen, "a corrupt %zu-byte %s (bit fields beyond its size)", sz,
                 class_name(c));
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
        snprintf(why, wlen, "%s; expected float32, float64, int8, int16 or int32", class_name(c));
    return -1;
}

/* The form of /data/iq (type `type`, dataset rank and extents): 0, or RT_EFORMAT naming
 * the dataset and what is wrong. */
static int iq_classify(hid_t type, int rank, const hsize_t *dims, const char *path,
                       iq_form *f, rt_error *err)
{
    memset(f, 0, sizeof *f);
    char why[200], shape[128];
    const H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
        shape_string(shape, sizeof shape, rank, dims);
        if ((rank != 4 && rank != 5) || dims[rank - 1] != 2)
            return rt_fail(err, RT_EFORMAT,
                           "'/data/iq' in '%s' is real-valued (%zu-byte %s, shape %s); expected "
                           "complex samples: a compound {r, i} of float32 (complex64; also of "
                           "float64, int8, int16, int32, or named {real, imag}), or interleaved "
                           "integer or real samples whose last axis, of length 2 (labelled iq), "
                           "holds the real and imaginary parts (C, P, R, 2 or CPIs, C, P, R, 2)",
                           path, H5Tget_size(type), class_name(cls), shape);
        if (iq_component(type, &f->wide, f->comp, sizeof f->comp, why, sizeof why))
            return rt_fail(err, RT_EFORMAT, "the interleaved samples of '/data/iq' in '%s' are %s",
                           path, why);
        f->interleaved = 1;
        return RT_OK;
    }
    if (cls != H5T_COMPOUND)
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has %s elements; expected a compound "
                       "{r, i} of float32 (complex64), or interleaved integer or real samples",
                       path, class_name(cls));
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
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' is a compound with %d members (%s); "
                       "expected exactly two, r and i (or real and imag)", path, nm, names);
    const int plain = idx[0] >= 0 && idx[1] >= 0;
    if (!plain && (alt[0] < 0 || alt[1] < 0))
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has compound members (%s); expected "
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
            return rt_fail(err, RT_EFORMAT, "member '%s' of '/data/iq' in '%s' is %s",
                           k ? f->n1 : f->n0, path, why);
        f->wide |= wide;
    }
    if (strcmp(comp[0], comp[1])) snprintf(f->comp, sizeof f->comp, "%.18s/%.18s", comp[0], comp[1]);
    else snprintf(f->comp, sizeof f->comp, "%s", comp[0]);
    return RT_OK;
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

/* How /data/iq is read and converted: H5Dread in the stored component type (a compound as
 * a packed {n0, n1} of it: no conversion at all when the file's compound is that), then
 * H5Tconvert of the 2n components to their native type (byte order) and to float or double:
 * each one of HDF5's fast conversion paths. (An H5Dread converting int16 to float took
 * 20-80 ms per hard CPI, the H5Dread and H5Tconvert 3-13 ms: tests/bench numbers in the
 * README.) A compound of mixed member types is converted member-wise by H5Dread (slowly);
 * then *comp and *native are -1. */
typedef struct iq_read_types {
    hid_t mtype;   /* H5Dread's memory type                                    */
    hid_t comp;    /* the stored component type, or -1                         */
    hid_t native;  /* its native equivalent                                    */
    int swap;      /* comp is not native: H5Tconvert comp -> native first      */
    int convert;   /* native is not float (double when wide): H5Tconvert to it */
} iq_read_types;

static void iq_read_types_close(iq_read_types *t)
{
    CLOSE_TYPE(t->mtype);
    CLOSE_TYPE(t->comp);
    CLOSE_TYPE(t->native);
}

static int iq_read_types_make(hid_t dset, const iq_form *f, iq_read_types *t)
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
static int iq_read_convert(const iq_read_types *t, const iq_form *f, size_t m, void *buf)
{
    if (t->swap && H5Tconvert(t->comp, t->native, m, buf, NULL, H5P_DEFAULT) < 0) return -1;
    if (t->convert &&
        H5Tconvert(t->native, f->wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, m, buf, NULL,
                   H5P_DEFAULT) < 0)
        return -1;
    return 0;
}

static void iq_describe(const iq_form *f, double scale, char *buf, size_t len)
{
    int at;
    if (f->interleaved) at = snprintf(buf, len, "%s, interleaved (last axis iq)", f->comp);
    else if (!strcmp(f->comp, "float32") && !strcmp(f->n0, "r"))
        at = snprintf(buf, len, "complex64 {r, i}");
    else at = snprintf(buf, len, "%s {%s, %s}", f->comp, f->n0, f->n1);
    if (scale != 1 && at > 0 && (size_t)at < len) snprintf(buf + at, len - at, ", scale %g", scale);
}

/* ------------------------------------------------------------------------------------
 * Recordings of many CPIs: /data/iq of rank 4 (CPIs, channels, pulses, range_gates),
 * one CPI per chunk (interleaved: rank 5); rank 3 is a recording of one CPI. */

struct stap_recording {
    char path[1024];
    hid_t file, dset, space, xfer;
    iq_read_types types;
    int rank;          /* of the cube: 3, or 4 with the cpi axis (the dataset has one more
                          when interleaved)                                              */
    iq_form form;
    double scale;      /* the samples are multiplied by it (1: not)                      */
    int direct;        /* chunks of one CPI, unfiltered, native complex64: read raw */
    int zero;          /* fill time "never": zero the buffer before a read (fill_never) */
    int check_finite;  /* stap_input_read: refuse non-finite samples, naming the first  */
    hsize_t dims[4];   /* CPIs, C, P, R (CPIs = 1 for rank 3) */
    hsize_t sdims[4];  /* CPIs and the cube's extents in stored order            */
    stap_layout layout;   /* the stored order of the cube axes                    */
    const char *saxes[4]; /* axis names in stored order, for messages            */
    int transpose;     /* not stored as (C, P, R): read into `stored`, transposed */
    double *slab;      /* float64 and int32 samples: one CPI of doubles (stored order) */
    cf32 *stored;      /* transposed files: one CPI in stored order             */
    /* the CPIs that hold data (written_map): ranges [a, b) of CPI indices, in order, and
     * the count of CPIs in them before each range (for the k-th written CPI) */
    long long (*ranges)[2], *before;
    int nranges;
    long long written;
};

void stap_recording_close(stap_recording *r)
{
    if (!r) return;
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    iq_read_types_close(&r->types);
    CLOSE_SPACE(r->space);
    CLOSE_DSET(r->dset);
    CLOSE_PLIST(r->xfer);
    if (r->file >= 0) H5Fclose(r->file);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(r->slab);
    free(r->stored);
    free(r->ranges);
    free(r->before);
    free(r);
}

long long stap_recording_cpis(const stap_recording *r) { return (long long)r->dims[0]; }
long long stap_recording_written(const stap_recording *r) { return r->written; }

long long stap_recording_written_index(const stap_recording *r, long long k)
{
    if (k < 0 || k >= r->written) return -1;
    int lo = 0, hi = r->nranges - 1; /* the last range whose count before it is <= k */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->before[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    return r->ranges[lo][0] + (k - r->before[lo]);
}

int stap_recording_unwritten(const stap_recording *r, long long *out, int n)
{
    int got = 0;
    long long next = 0; /* the first CPI after the previous range */
    for (int i = 0; i <= r->nranges && got < n; i++) {
        const long long end = i < r->nranges ? r->ranges[i][0] : (long long)r->dims[0];
        for (long long c = next; c < end && got < n; c++) out[got++] = c;
        if (i < r->nranges) next = r->ranges[i][1];
    }
    return got;
}

static int cpi_is_written(const stap_recording *r, long long cpi)
{
    for (int lo = 0, hi = r->nranges - 1; lo <= hi;) {
        const int mid = (lo + hi) / 2;
        if (cpi < r->ranges[mid][0]) hi = mid - 1;
        else if (cpi >= r->ranges[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* Add [a, b) to the map (rows come in order: a range that continues the last extends it). */
static int map_add(stap_recording *r, long long a, long long b, int *cap)
{
    if (r->nranges && r->ranges[r->nranges - 1][1] == a) {
        r->ranges[r->nranges - 1][1] = b;
    } else {
        if (r->nranges == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            long long (*nr)[2] = realloc(r->ranges, sizeof *nr * (size_t)*cap);
            if (!nr) return -1;
            r->ranges = nr;
        }
        r->ranges[r->nranges][0] = a;
        r->ranges[r->nranges++][1] = b;
    }
    r->written += b - a;
    return 0;
}

/* Which CPIs of /data/iq hold data (HDF5 never allocated the chunks, or the contiguous
 * storage, of what was never written: it reads the fill value there, which rtstap must not
 * take for samples). A one-CPI cube must be whole. A recording's chunk rows (chunks along
 * the cpi axis) are looked up one by one (H5Dget_chunk_info_by_coord, 0.16 s for 10^6
 * rows in Debian's HDF5 1.10.8) unless all its chunks are allocated. */
static int written_map(stap_recording *r, const char *path, int drank, rt_error *err)
{
    const long long cpis = (long long)r->dims[0];
    int cap = 0;
    hid_t dcpl = H5Dget_create_plist(r->dset);
    const H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    hsize_t chunk[H5S_MAX_RANK], d[H5S_MAX_RANK];
    const int chunked = layout == H5D_CHUNKED && H5Pget_chunk(dcpl, drank, chunk) == drank;
    CLOSE_PLIST(dcpl);
    H5Sget_simple_extent_dims(r->space, d, NULL);
    char cube[160];
    shape_string(cube, sizeof cube, drank, d);
    if (!chunked) {
        H5D_space_status_t ss = H5D_SPACE_STATUS_ERROR;
        H5Dget_space_status(r->dset, &ss);
        if (layout == H5D_CONTIGUOUS && ss == H5D_SPACE_STATUS_NOT_ALLOCATED) {
            if (r->rank == 3)
                return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' (%s) was never written: HDF5 "
                               "allocated no storage for it, and would read its fill value as "
                               "samples; refused", path, cube);
            return RT_OK; /* no CPI written: written stays 0, the caller says so */
        }
        return map_add(r, 0, cpis, &cap) ? rt_fail(err, RT_ENOMEM, "out of memory") : RT_OK;
    }
    hsize_t grid[H5S_MAX_RANK], per_row = 1, total;
    for (int k = 0; k < drank; k++) {
        grid[k] = chunk[k] ? (d[k] + chunk[k] - 1) / chunk[k] : 0;
        if (k > 0 || r->rank == 3) per_row *= grid[k];
    }
    const hsize_t rows = r->rank == 3 ? 1 : grid[0];
    total = rows * per_row;
    hsize_t have = 0;
    if (H5Dget_num_chunks(r->dset, r->space, &have) < 0) have = 0;
    if (have >= total) return map_add(r, 0, cpis, &cap) ? rt_fail(err, RT_ENOMEM, "out of memory") : RT_OK;
    if (r->rank == 3)
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' (%s) was never written in full: %llu "
                       "of its %llu chunks hold data (%.3g %%); HDF5 would read its fill value as "
                       "samples in the rest; refused", path, cube, (unsigned long long)have,
                       (unsigned long long)total, 100.0 * (double)have / (double)total);
    for (hsize_t row = 0; row < rows && have; row++) {
        int whole = 1;
        for (hsize_t j = 0; j < per_row && whole; j++) { /* each chunk of the row */
            hsize_t off[H5S_MAX_RANK], rest = j;
            off[0] = row * chunk[0];
            for (int k = drank - 1; k >= 1; k--) {
                off[k] = rest % grid[k] * chunk[k];
                rest /= grid[k];
            }
            unsigned mask = 0;
            haddr_t addr = HADDR_UNDEF;
            hsize_t size = 0;
            whole = H5Dget_chunk_info_by_coord(r->dset, off, &mask, &addr, &size) >= 0 &&
                    addr != HADDR_UNDEF && size > 0;
        }
        if (!whole) continue;
        const long long a = (long long)(row * chunk[0]);
        const long long b = a + (long long)chunk[0] < cpis ? a + (long long)chunk[0] : cpis;
        if (map_add(r, a, b, &cap)) return rt_fail(err, RT_ENOMEM, "out of memory");
    }
    return RT_OK;
}

int stap_recording_rank(const stap_recording *r) { return r->rank; }

static const char *const iq_axes[] = {"channel", "pulse", "range"};

/* The factor of the samples: opts' --scale, else the `scale` attribute of /data/iq, else 1. */
static int iq_scale(h5_src *s, const stap_read_options *opts, double *scale, rt_error *err)
{
    *scale = 1;
    if (opts && opts->has_scale) {
        if (!isfinite(opts->scale) || opts->scale <= 0)
            return rt_fail(err, RT_EINVAL, "scale %g for '/data/iq' of '%s': expected a finite "
                           "number > 0", opts->scale, s->path);
        *scale = opts->scale;
        return RT_OK;
    }
    int has = 0;
    return read_positive_attr(s, "/data/iq", "scale", &has, scale, err);
}

/* Validate the open file s as a recording (r->file is s->file; one_cpi: a single CPI, as
 * stap_input_read takes). */
static int recording_open(h5_src *s, stap_recording *r, stap_input *in,
                          const stap_read_options *opts, int one_cpi, rt_error *err)
{
    char detail[256], shape[128];
    const char *path = s->path;
    if (!link_exists(s, "/data/iq")) {
        int st = src_refused(s, "/data/iq", err);
        return st ? st : rt_fail(err, RT_EFORMAT, "'/data/iq' is missing from '%s' (schema v1.1 "
                                 "keeps the cube there: channels x pulses x range_gates%s, or "
                                 "another order with axis labels; complex64, or another complex "
                                 "or interleaved form)", path,
                                 one_cpi ? "" : ", or CPIs x channels x pulses x range_gates");
    }
    int lst = check_local(s, -1, "/data/iq", err);
    if (lst) return lst;
    r->dset = H5Dopen2(r->file, "/data/iq", s->dapl);
    if (r->dset < 0) {
        lst = src_refused(s, "/data/iq", err);
        return lst ? lst : rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' is not a dataset", path);
    }
    if ((lst = check_local(s, r->dset, "/data/iq", err))) return lst;
    r->space = H5Dget_space(r->dset);
    if (r->space < 0 || H5Sget_simple_extent_type(r->space) == H5S_NULL)
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' holds no data", path);
    const int drank = H5Sget_simple_extent_ndims(r->space);
    hsize_t d[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(r->space, d, NULL);
    hid_t ftype = H5Dget_type(r->dset);
    if (ftype < 0) return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s': unreadable element type", path);
    int st = iq_classify(ftype, drank, d, path, &r->form, err);
    CLOSE_TYPE(ftype);
    if (st) return st;
    const int iq = r->form.interleaved;
    r->rank = drank - iq;
    if (r->rank != 3 && (one_cpi || r->rank != 4)) {
        if (one_cpi)
            return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has rank %d; expected %d "
                           "(channels, pulses, range_gates%s)", path, drank, 3 + iq,
                           iq ? ", iq" : "");
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has rank %d; expected %d (channels, "
                       "pulses, range_gates%s) or %d (CPIs, channels, pulses, range_gates%s)", path,
                       drank, 3 + iq, iq ? ", iq" : "", 4 + iq, iq ? ", iq" : "");
    }
    shape_string(shape, sizeof shape, drank, d);
    for (int k = 0; k < drank; k++)
        if (d[k] == 0 || d[k] > (hsize_t)INT_MAX)
            return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has shape %s: a zero-size or "
                           "too large dimension", path, shape);
    /* the attributes (labels, scale) only once their messages are known to be sound */
    if ((lst = h5check_attributes(path, r->file, "/data/iq", s->lapl, err)) ||
        (lst = h5layout_resolve(r->dset, drank, iq, path, "/data/iq", opts, &in->layout, err)))
        return lst;
    r->layout = in->layout.layout;
    r->transpose = !stap_layout_is_identity(&r->layout);
    r->saxes[0] = "cpi";
    for (int k = 0; k < 3; k++) r->saxes[k + 1] = iq_axes[r->layout.axis[k]];
    r->sdims[0] = r->dims[0] = r->rank == 4 ? d[0] : 1;
    for (int k = 0; k < 3; k++) r->sdims[k + 1] = d[k + r->rank - 3];
    h5layout_logical_dims(&r->layout, r->sdims + 1, r->dims + 1);
    unsigned long long n = 1;
    for (int k = 1; k < 4; k++) {
        if (n > H5IO_MAX_CUBE_BYTES / 8 / r->dims[k])
            return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has shape %s: one CPI is more "
                           "than the %llu GiB (complex64) that rtstap reads", path, shape,
                           H5IO_MAX_CUBE_BYTES >> 30);
        n *= r->dims[k];
    }
    if ((st = iq_scale(s, opts, &r->scale, err))) return st;
    if ((st = written_map(r, path, drank, err))) return st;
    r->before = malloc(sizeof *r->before * (size_t)(r->nranges ? r->nranges : 1));
    if (!r->before) return rt_fail(err, RT_ENOMEM, "out of memory");
    for (int i = 0; i < r->nranges; i++)
        r->before[i] = i ? r->before[i - 1] + r->ranges[i - 1][1] - r->ranges[i - 1][0] : 0;
    if (iq_read_types_make(r->dset, &r->form, &r->types))
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s': no conversion of its %s samples: %s",
                       path, r->form.comp, h5_detail(detail, sizeof detail));
    r->zero = fill_never(r->dset);
    /* one CPI per unfiltered chunk whose bytes are native complex64 (a compound of float32
     * with the real part first, or interleaved float32), unscaled: the chunk's bytes are the
     * cube (H5Dread_chunk, 12.9 GB/s measured from the page cache, H5Dread 6-11) */
    if (r->rank == 4 && r->scale == 1 && r->types.comp >= 0 &&
        H5Tequal(r->types.comp, H5T_NATIVE_FLOAT) > 0) {
        hid_t dcpl = H5Dget_create_plist(r->dset), ft = H5Dget_type(r->dset);
        hsize_t ch[5] = {0, 0, 0, 0, 0};
        r->direct = dcpl >= 0 && ft >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                    H5Pget_chunk(dcpl, drank, ch) == drank && ch[0] == 1 && ch[1] == r->sdims[1] &&
                    ch[2] == r->sdims[2] && ch[3] == r->sdims[3] && (!iq || ch[4] == 2) &&
                    H5Pget_nfilters(dcpl) == 0 && H5Tequal(ft, r->types.mtype) > 0;
        CLOSE_PLIST(dcpl);
        CLOSE_TYPE(ft);
    }
    /* a conversion buffer of one CPI: HDF5's 1 MiB default converts in many pieces; never
     * less than that default (a CPI of one sample stored with padding, 24 bytes, was
     * refused: "temporary buffer max size is too small") */
    const size_t tconv = 16 * (size_t)n > ((size_t)1 << 20) ? 16 * (size_t)n : (size_t)1 << 20;
    r->xfer = H5Pcreate(H5P_DATASET_XFER);
    if (r->xfer < 0 || H5Pset_buffer(r->xfer, tconv, NULL, NULL) < 0)
        return rt_fail(err, RT_ENOMEM, "out of memory for a transfer property list");
    if (r->form.wide && !(r->slab = malloc(16 * (size_t)n)))
        return rt_fail(err, RT_ENOMEM, "out of memory converting '%s' from %s", path, r->form.comp);
    if (r->transpose && !(r->stored = malloc(sizeof(cf32) * (size_t)n)))
        return rt_fail(err, RT_ENOMEM, "out of memory transposing '%s'", path);
    in->channels = (int)r->dims[1];
    in->pulses = (int)r->dims[2];
    in->range_gates = (int)r->dims[3];
    in->scale = r->scale;
    iq_describe(&r->form, r->scale, in->samples, sizeof in->samples);
    return read_steering_and_meta(s, in, err);
}

static int recording_open_common(const char *path, stap_recording **out, stap_input *in,
                                 const stap_read_options *opts, int one_cpi, rt_error *err)
{
    *out = NULL;
    memset(in, 0, sizeof *in);
    if (!path || !*path) return rt_fail(err, RT_EINVAL, "stap_recording_open: empty input path");
    stap_recording *r = calloc(1, sizeof *r);
    if (!r) return rt_fail(err, RT_ENOMEM, "out of memory opening '%s'", path);
    r->file = r->dset = r->space = r->xfer = -1;
    r->types.mtype = r->types.comp = r->types.native = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5_src s;
    int st = src_open(&s, path, err);
    r->file = s.file; /* closed by stap_recording_close */
    if (!st) st = recording_open(&s, r, in, opts, one_cpi, err);
    src_close_lists(&s);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    if (st) {
        stap_recording_close(r);
        stap_input_free(in);
        return st;
    }
    *out = r;
    return RT_OK;
}

int stap_recording_open(const char *path, stap_recording **out, stap_input *in, rt_error *err)
{
    return stap_recording_open_opts(path, out, in, NULL, err);
}

int stap_recording_open_opts(const char *path, stap_recording **out, stap_input *in,
                             const stap_read_options *opts, rt_error *err)
{
    return recording_open_common(path, out, in, opts, 0, err);
}

/* The samples read into got (float32 pairs) or r->slab (double pairs): converted from
 * double, scaled, checked against float32's range, and (check_finite) for non-finite
 * values; in stored order. */
static int recording_convert(stap_recording *r, long long cpi, cf32 *got, size_t n,
                             rt_error *err)
{
    const double s = r->scale;
    char where[128], of_cpi[48] = "", scaled[48] = "";
    if (r->rank == 4) snprintf(of_cpi, sizeof of_cpi, "of CPI %lld ", cpi);
    if (s != 1) snprintf(scaled, sizeof scaled, " times the scale %g", s);
    if (r->form.wide || s != 1) {
        /* a pass without an early exit (vectorized) for samples beyond float32's range once
         * scaled, the first of them named if any (non-finite stored samples are left to the
         * checks below and to the engine), then the conversion */
        const float *gf = (const float *)got;
        const double *src = r->form.wide ? r->slab : NULL;
        int over = 0;
        for (size_t k = 0; k < 2 * n; k++) over |= fabs((src ? src[k] : (double)gf[k]) * s) > FLT_MAX;
        for (size_t k = 0; over && k < n; k++) {
            const double re = src ? src[2 * k] : (double)gf[2 * k];
            const double im = src ? src[2 * k + 1] : (double)gf[2 * k + 1];
            if (isfinite(re) && isfinite(im) && (fabs(re * s) > FLT_MAX || fabs(im * s) > FLT_MAX)) {
                index_string(where, sizeof where, k, 3, r->sdims + 1, r->saxes + 1);
                return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s': the %s sample %sat %s "
                               "(r = %g, i = %g)%s overflows float32", r->path, r->form.comp,
                               of_cpi, where, re, im, scaled);
            }
        }
        float *out = (float *)got;
        if (src)
            for (size_t k = 0; k < 2 * n; k++) out[k] = (float)(src[k] * s);
        else
            for (size_t k = 0; k < 2 * n; k++) out[k] = (float)((double)gf[k] * s);
    }
    size_t bad = 0;
    if (r->check_finite && !check_finite_f32(got, n, &bad)) {
        index_string(where, sizeof where, bad, 3, r->sdims + 1, r->saxes + 1);
        return rt_fail(err, RT_EFORMAT, "'/data/iq' in '%s' has a non-finite sample %sat %s: "
                       "r = %g, i = %g", r->path, of_cpi, where, crealf(got[bad]),
                       cimagf(got[bad]));
    }
    return RT_OK;
}

int stap_recording_read(stap_recording *r, long long cpi, cf32 *cube, rt_error *err)
{
    if (cpi < 0 || cpi >= (long long)r->dims[0])
        return rt_fail(err, RT_EINVAL, "'%s' has %llu CPIs; CPI %lld asked for", r->path,
                       (unsigned long long)r->dims[0], cpi);
    if (!cpi_is_written(r, cpi))
        return rt_fail(err, RT_EFORMAT, "CPI %lld of '/data/iq' in '%s' was never written (it "
                       "would read as the fill value)", cpi, r->path);
    const size_t n = (size_t)(r->dims[1] * r->dims[2] * r->dims[3]);
    char detail[256];
    int st = RT_OK;
    hid_t mspace = -1;
    /* a cube stored in another axis order is read in that order, then transposed */
    cf32 *got = r->transpose ? r->stored : cube;
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    hsize_t start[5] = {0, 0, 0, 0, 0}, count[5];
    const int off = r->rank - 3, drank = r->rank + r->form.interleaved;
    if (r->rank == 4) {
        start[0] = (hsize_t)cpi;
        count[0] = 1;
    }
    for (int k = 0; k < 3; k++) count[k + off] = r->sdims[k + 1];
    if (r->form.interleaved) count[drank - 1] = 2;
    /* the memory space has the selection's shape: against a 1-D one HDF5 walks the
     * selection span by span (0.15 GB/s measured for 10.8 MB CPIs, 6-12 GB/s like this) */
    hsize_t stored = 0;
    if (r->direct && H5Dget_chunk_storage_size(r->dset, start, &stored) >= 0 && stored == 8 * n) {
        uint32_t filters = 0;
        if (H5Dread_chunk(r->dset, H5P_DEFAULT, start, &filters, got) < 0)
            st = rt_fail(err, RT_EIO, "cannot read CPI %lld of '/data/iq' from '%s': %s", cpi,
                         r->path, h5_detail(detail, sizeof detail));
    } else {
        mspace = H5Screate_simple(drank, count, NULL);
        void *dst = r->form.wide ? (void *)r->slab : (void *)got;
        if (r->zero) memset(dst, 0, (r->form.wide ? 16 : 8) * n);
        if (mspace < 0 ||
            H5Sselect_hyperslab(r->space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(r->dset, r->types.mtype, mspace, r->space, r->xfer, dst) < 0)
            st = rt_fail(err, RT_EIO, "cannot read CPI %lld of '/data/iq' from '%s': %s", cpi,
                         r->path, h5_detail(detail, sizeof detail));
        else if (iq_read_convert(&r->types, &r->form, 2 * n, dst) < 0)
            st = rt_fail(err, RT_EIO, "cannot convert CPI %lld of '/data/iq' in '%s' from %s: %s",
                         cpi, r->path, r->form.comp, h5_detail(detail, sizeof detail));
        CLOSE_SPACE(mspace);
    }
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    if (st || (st = recording_convert(r, cpi, got, n, err))) return st;
    if (r->transpose) h5layout_transpose(got, cube, &r->layout, r->sdims + 1);
    return RT_OK;
}

/* ---- one CPI (stap_input_read): the recording reader, every sample checked finite ------ */

static int input_read(const char *path, stap_input *in, const stap_read_options *opts,
                      rt_error *err)
{
    stap_recording *r = NULL;
    int st = recording_open_common(path, &r, in, opts, 1, err);
    if (st) return st;
    r->check_finite = 1;
    in->iq = malloc(sizeof(cf32) * (size_t)in->channels * in->pulses * in->range_gates);
    if (!in->iq)
        st = rt_fail(err, RT_ENOMEM, "out of memory for the %d x %d x %d cube of '%s'",
                     in->channels, in->pulses, in->range_gates, path);
    else
        st = stap_recording_read(r, 0, in->iq, err);
    stap_recording_close(r);
    return st;
}

int stap_input_read(const char *path, stap_input *in, rt_error *err)
{
    return stap_input_read_opts(path, in, NULL, err);
}

int stap_input_read_opts(const char *path, stap_input *in, const stap_read_options *opts,
                         rt_error *err)
{
    if (!in) return rt_fail(err, RT_EINVAL, "stap_input_read: no output structure");
    memset(in, 0, sizeof *in);
    if (!path || !*path) return rt_fail(err, RT_EINVAL, "stap_input_read: empty input path");
    int st = input_read(path, in, opts, err);
    if (st) stap_input_free(in);
    return st;
}

/* ---- writing a recording (gen, import-perfect) -------------------------------------- */

struct stap_recording_writer {
    char path[1024];
    h5_out out;
    hid_t file, dset, ftype, mtype;
    hsize_t dims[4];
    rt_error *err;
};

void stap_recording_abort(stap_recording_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    CLOSE_DSET(w->dset);
    CLOSE_TYPE(w->ftype);
    CLOSE_TYPE(w->mtype);
    out_discard(&w->out, w->file);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(w);
}

int stap_recording_create(stap_recording_writer **out, const char *path, const stap_input *in,
                          long long cpis, rt_error *err)
{
    return stap_recording_create_mode(out, path, in, cpis, RT_WRITE_NEW, err);
}

int stap_recording_create_mode(stap_recording_writer **out, const char *path,
                               const stap_input *in, long long cpis, rt_write_mode mode,
                               rt_error *err)
{
    *out = NULL;
    if (!path || !*path || !in || cpis < 1 || in->channels < 1 || in->pulses < 1 || in->range_gates < 1)
        return rt_fail(err, RT_EINVAL, "stap_recording_create: no path, or a dimension < 1");
    stap_recording_writer *w = calloc(1, sizeof *w);
    if (!w) return rt_fail(err, RT_ENOMEM, "out of memory");
    w->file = w->dset = w->ftype = w->mtype = -1;
    snprintf(w->path, sizeof w->path, "%s", path);
    if (h5_out_begin(&w->out, w->path, mode, err)) {
        int st = err ? err->code : RT_EIO;
        free(w);
        return st;
    }
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, NULL, -1};
    w->file = out_create(&hw, &w->out);
    w_attr_int(&hw, w->file, "schema_version", H5IO_SCHEMA_VERSION);
    w_root(&hw, w->file);
    hid_t g = w_group(&hw, w->file, "data"), space = -1, dcpl = -1;
    w->dims[0] = (hsize_t)cpis;
    w->dims[1] = (hsize_t)in->channels;
    w->dims[2] = (hsize_t)in->pulses;
    w->dims[3] = (hsize_t)in->range_gates;
    const hsize_t chunk[4] = {1, w->dims[1], w->dims[2], w->dims[3]};
    if (!hw.st) {
        w->ftype = cf32_file_type();
        w->mtype = cf32_mem_type();
        space = H5Screate_simple(4, w->dims, NULL);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        /* one CPI per chunk (HDF5 caps a chunk at 4 GiB) */
        if (w->ftype < 0 || w->mtype < 0 || space < 0 || dcpl < 0 ||
            (size_t)in->channels * in->pulses * in->range_gates * 8 >= ((size_t)4 << 30) ||
            H5Pset_chunk(dcpl, 4, chunk) < 0 ||
            (w->dset = H5Dcreate2(g, "iq", w->ftype, space, H5P_DEFAULT, dcpl, no_chunk_cache())) < 0)
            w_fail_h5(&hw, "'/data/iq'");
        w_iq_labels(&hw, w->dset, 4);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    CLOSE_GROUP(g);
    if (in->steering_beams > 0) {
        const hsize_t sd[2] = {(hsize_t)in->steering_beams, (hsize_t)in->steering_len};
        w_cf32(&hw, w->file, "steering", "/steering", 2, sd, in->steering);
    }
    const stap_radar_meta *m = &in->meta;
    if (m->has_element_spacing) {
        g = w_group(&hw, w->file, "array");
        if (g >= 0) w_attr_double(&hw, g, "element_spacing_wavelengths", m->element_spacing_wavelengths);
        CLOSE_GROUP(g);
    }
    w_meta_radar(&hw, w->file, m, 0);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    if (hw.st) {
        int st = hw.st;
        stap_recording_abort(w);
        return st;
    }
    *out = w;
    return RT_OK;
}

int stap_recording_write(stap_recording_writer *w, long long cpi, const cf32 *cube, rt_error *err)
{
    if (cpi < 0 || cpi >= (long long)w->dims[0])
        return rt_fail(err, RT_EINVAL, "'%s' holds %llu CPIs; CPI %lld written", w->path,
                       (unsigned long long)w->dims[0], cpi);
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, &w->out, w->file};
    hsize_t start[4] = {(hsize_t)cpi, 0, 0, 0}, count[4] = {1, w->dims[1], w->dims[2], w->dims[3]};
    w_reserve(&hw, sizeof(cf32) * (size_t)(w->dims[1] * w->dims[2] * w->dims[3]));
    hid_t fs = hw.st ? -1 : H5Dget_space(w->dset), ms = hw.st ? -1 : H5Screate_simple(4, count, NULL);
    if (!hw.st &&
        (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
         H5Dwrite(w->dset, w->mtype, ms, fs, H5P_DEFAULT, cube) < 0))
        w_fail_h5(&hw, "a CPI of '/data/iq'");
    CLOSE_SPACE(fs);
    CLOSE_SPACE(ms);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    return hw.st;
}

int stap_recording_finish(stap_recording_writer *w, stap_h5_extra_fn extra, void *user,
                          rt_error *err)
{
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, &w->out, w->file};
    w_reserve(&hw, 0);
    if (extra && !hw.st) hw.st = extra((int64_t)w->file, user, err);
    CLOSE_DSET(w->dset);
    CLOSE_TYPE(w->ftype);
    CLOSE_TYPE(w->mtype);
    int st = out_finish(&hw, &w->out, w->file);
    w->file = -1;
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(w);
    return st;
}

/* ---- results of many CPIs (run over a rank-4 recording) ------------------------------ */

struct stap_result_writer {
    char path[1024];
    h5_out out;
    hid_t file, weights, output, det, timing, icpi, cf_t, cm_t, df_t, dm_t;
    int keep_output;
    hsize_t wdims[5], odims[4];
    hsize_t ndet;
    long long written;
    int stages;
};

/* detections of a recording: {cpi int64, beam, doppler_bin, range_cell int32, power,
 * snr_db float32} */
typedef struct cpi_detection {
    long long cpi;
    stap_detection d;
} cpi_detection;

void stap_result_writer_abort(stap_result_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    hid_t *ids[] = {&w->weights, &w->output, &w->det, &w->timing, &w->icpi};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) CLOSE_DSET(*ids[i]);
    hid_t *types[] = {&w->cf_t, &w->cm_t, &w->df_t, &w->dm_t};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) CLOSE_TYPE(*types[i]);
    out_discard(&w->out, w->file);
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(w);
}

/* an extensible dataset with a leading CPI axis, one CPI (or `chunk0` rows) per chunk */
static hid_t w_extensible(h5w *w, hid_t loc, const char *name, const char *fullname, hid_t ftype,
                          int rank, const hsize_t *row_dims, hsize_t chunk0)
{
    if (w->st) return -1;
    hsize_t dims[6] = {0}, maxd[6] = {H5S_UNLIMITED}, chunk[6] = {chunk0};
    for (int k = 1; k < rank; k++) dims[k] = maxd[k] = chunk[k] = row_dims[k - 1];
    hid_t space = H5Screate_simple(rank, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0)
        d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, no_chunk_cache());
    if (d < 0) {
        char what[96];
        snprintf(what, sizeof what, "'%s'", fullname);
        w_fail_h5(w, what);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    return d;
}

/* append `rows` leading-axis rows of data to an extensible dataset */
static void w_append(h5w *w, hid_t d, hid_t mtype, int rank, hsize_t rows, const void *data,
                     const char *what)
{
    if (w->st || rows == 0) return;
    hid_t fs = H5Dget_space(d);
    hsize_t dims[6], start[6] = {0}, count[6];
    if (fs < 0) {
        w_fail_h5(w, what);
        return;
    }
    H5Sget_simple_extent_dims(fs, dims, NULL);
    CLOSE_SPACE(fs);
    start[0] = dims[0];
    dims[0] += rows;
    for (int k = 0; k < rank; k++) count[k] = k ? dims[k] : rows;
    hid_t dt = H5Dget_type(d);
    size_t bytes = dt >= 0 ? H5Tget_size(dt) : 16;
    CLOSE_TYPE(dt);
    for (int k = 0; k < rank; k++) bytes *= count[k];
    w_reserve(w, bytes);
    hid_t ms = w->st ? -1 : H5Screate_simple(rank, count, NULL);
    if (w->st) return;
    if (ms < 0 || H5Dset_extent(d, dims) < 0 || (fs = H5Dget_space(d)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, data) < 0)
        w_fail_h5(w, what);
    CLOSE_SPACE(ms);
    CLOSE_SPACE(fs);
}

int stap_result_writer_open(stap_result_writer **out, const char *path, const stap_result *hdr,
                            int keep_output, rt_error *err)
{
    return stap_result_writer_open_mode(out, path, hdr, keep_output, RT_WRITE_NEW, err);
}

int stap_result_writer_open_mode(stap_result_writer **out, const char *path,
                                 const stap_result *hdr, int keep_output, rt_write_mode mode,
                                 rt_error *err)
{
    *out = NULL;
    if (!path || !*path || !hdr || !hdr->cfg || !hdr->steering || hdr->beams < 1)
        return rt_fail(err, RT_EINVAL, "stap_result_writer_open: missing path, configuration or "
                       "steering");
    const stap_config *c = hdr->cfg;
    const int D = c->doppler_bins, N = stap_dof(c), B = hdr->beams;
    stap_result_writer *w = calloc(1, sizeof *w);
    if (!w) return rt_fail(err, RT_ENOMEM, "out of memory");
    w->file = w->weights = w->output = w->det = w->timing = w->icpi = -1;
    w->cf_t = w->cm_t = w->df_t = w->dm_t = -1;
    w->keep_output = keep_output;
    snprintf(w->path, sizeof w->path, "%s", path);
    if (h5_out_begin(&w->out, w->path, mode, err)) {
        int st = err ? err->code : RT_EIO;
        free(w);
        return st;
    }
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, NULL, -1};
    w->file = out_create(&hw, &w->out);
    w->cf_t = cf32_file_type();
    w->cm_t = cf32_mem_type();
    w->dm_t = H5Tcreate(H5T_COMPOUND, sizeof(cpi_detection));
    w->df_t = H5Tcreate(H5T_COMPOUND, 8 + 5 * 4);
    const size_t o = offsetof(cpi_detection, d);
    if (w->cf_t < 0 || w->cm_t < 0 || w->dm_t < 0 || w->df_t < 0 ||
        H5Tinsert(w->dm_t, "cpi", offsetof(cpi_detection, cpi), H5T_NATIVE_LLONG) < 0 ||
        H5Tinsert(w->dm_t, "beam", o + offsetof(stap_detection, beam), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "doppler_bin", o + offsetof(stap_detection, doppler_bin), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "range_cell", o + offsetof(stap_detection, range_cell), H5T_NATIVE_INT) < 0 ||
        H5Tinsert(w->dm_t, "power", o + offsetof(stap_detection, power), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->dm_t, "snr_db", o + offsetof(stap_detection, snr_db), H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(w->df_t, "cpi", 0, H5T_STD_I64LE) < 0 ||
        H5Tinsert(w->df_t, "beam", 8, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "doppler_bin", 12, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "range_cell", 16, H5T_STD_I32LE) < 0 ||
        H5Tinsert(w->df_t, "power", 20, H5T_IEEE_F32LE) < 0 ||
        H5Tinsert(w->df_t, "snr_db", 24, H5T_IEEE_F32LE) < 0)
        w_fail_h5(&hw, "the file's types");
    w_root(&hw, w->file);
    result_axes ax;
    w_axes(&hw, w->file, hdr, D, &ax);
    const hsize_t wrow[4] = {(hsize_t)D, (hsize_t)c->segments, (hsize_t)B, (hsize_t)N};
    w->weights = w_extensible(&hw, w->file, "weights", "/weights", w->cf_t, 5, wrow, 1);
    if (keep_output) {
        hid_t g = w_group(&hw, w->file, "output");
        const hsize_t orow[3] = {(hsize_t)B, (hsize_t)D, (hsize_t)c->range_gates};
        w->output = w_extensible(&hw, g, "iq", "/output/iq", w->cf_t, 4, orow, 1);
        CLOSE_GROUP(g);
    }
    if (hdr->have_detections) {
        w->det = w_extensible(&hw, w->file, "detections", "/detections", w->df_t, 1, NULL, 1024);
        if (!hw.st) w_attr_string(&hw, w->det, "cfar", hdr->cfar_description);
        if (!hw.st) w_attr_string(&hw, w->det, "units", detection_units);
    }
    const hsize_t sd[2] = {(hsize_t)B, (hsize_t)N};
    hid_t sds;
    w_cf32_keep(&hw, w->file, "steering", "/steering", 2, sd, hdr->steering, &sds);
    w_describe_results(&hw, w->weights, w->output, sds, &ax, 1);
    CLOSE_DSET(sds);
    w_axes_close(&ax);
    w_config(&hw, w->file, hdr, D);
    w_meta_radar(&hw, w->file, hdr->meta, 1);
    hid_t g = w_group(&hw, w->file, "timing");
    const hsize_t trow[1] = {STAP_STAGE_COUNT};
    w->timing = w_extensible(&hw, g, "cpi_ms", "/timing/cpi_ms", H5T_IEEE_F64LE, 2, trow, 256);
    const char *tn[2] = {"cpi", "stage"};
    const hid_t ts[2] = {-1, -1};
    w_describe(&hw, w->timing, "the axes of '/timing/cpi_ms'", 2, tn, ts, "ms");
    if (!hw.st) {
        char names[256] = "";
        size_t at = 0;
        for (int s = 0; s < STAP_STAGE_COUNT; s++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", s ? "," : "", stap_stage_names[s]);
        w_attr_string(&hw, w->timing, "columns", names);
    }
    CLOSE_GROUP(g);
    /* each row's CPI of the input (they differ when the input has unwritten CPIs): a
     * dimension scale of the cpi axis */
    hid_t ag = hw.st ? -1 : H5Gopen2(w->file, "axes", H5P_DEFAULT);
    if (!hw.st && ag < 0) w_fail_h5(&hw, "'/axes'");
    w->icpi = w_extensible(&hw, ag, "input_cpi", "/axes/input_cpi", H5T_STD_I64LE, 1, NULL, 1024);
    CLOSE_GROUP(ag);
    if (!hw.st) {
        w_attr_string(&hw, w->icpi, "units", "CPI index");
        w_attr_string(&hw, w->icpi, "description", "the input's CPI of each row of the results "
                      "(CPIs the input never wrote are not run)");
    }
    if (!hw.st && H5DSset_scale(w->icpi, "input_cpi") < 0) w_fail_h5(&hw, "'/axes/input_cpi'");
    const hid_t by_cpi[3] = {w->weights, w->output, w->timing};
    for (int k = 0; k < 3; k++)
        if (!hw.st && by_cpi[k] >= 0 && H5DSattach_scale(by_cpi[k], w->icpi, 0) < 0)
            w_fail_h5(&hw, "the scale of the cpi axis");
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    if (hw.st) {
        int st = hw.st;
        stap_result_writer_abort(w);
        return st;
    }
    *out = w;
    return RT_OK;
}

int stap_result_writer_append(stap_result_writer *w, long long cpi, long long input_cpi,
                              const cf32 *weights, const cf32 *output, const stap_detection *det,
                              size_t ndet, const double *stage_ms, rt_error *err)
{
    if (cpi != w->written)
        return rt_fail(err, RT_EINVAL, "'%s': CPI %lld written after %lld (results must come in "
                       "order)", w->path, cpi, w->written - 1);
    if (!weights || (w->keep_output && !output))
        return rt_fail(err, RT_EINVAL, "'%s': CPI %lld without its weights or output", w->path, cpi);
    cpi_detection *cd = NULL;
    if (ndet && w->det >= 0) {
        cd = malloc(sizeof *cd * ndet); /* only CPIs with detections: a few per CPI */
        if (!cd) return rt_fail(err, RT_ENOMEM, "out of memory for %zu detections", ndet);
        for (size_t i = 0; i < ndet; i++) cd[i] = (cpi_detection){input_cpi, det[i]};
    }
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, &w->out, w->file};
    w_append(&hw, w->weights, w->cm_t, 5, 1, weights, "'/weights'");
    if (w->keep_output) w_append(&hw, w->output, w->cm_t, 4, 1, output, "'/output/iq'");
    if (cd) w_append(&hw, w->det, w->dm_t, 1, ndet, cd, "'/detections'");
    w_append(&hw, w->timing, H5T_NATIVE_DOUBLE, 2, 1, stage_ms, "'/timing/cpi_ms'");
    w_append(&hw, w->icpi, H5T_NATIVE_LLONG, 1, 1, &input_cpi, "'/axes/input_cpi'");
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(cd);
    if (!hw.st) w->written++;
    return hw.st;
}

int stap_result_writer_close(stap_result_writer *w, const stap_result *summary, rt_error *err)
{
    pthread_mutex_lock(&h5_lock);
    h5_quiet q;
    quiet_begin(&q);
    h5w hw = {w->path, err, RT_OK, &w->out, w->file};
    w_reserve(&hw, 0);
    hid_t g = hw.st ? -1 : H5Gopen2(w->file, "timing", H5P_DEFAULT);
    if (g < 0) w_fail_h5(&hw, "'/timing'");
    for (int s = 0; s < STAP_STAGE_COUNT && summary->timing_ms; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s_ms", stap_stage_names[s]);
        w_attr_double(&hw, g, name, summary->timing_ms[s]);
    }
    w_attr_double(&hw, g, "read_ms", summary->read_ms);
    w_attr_double(&hw, g, "total_ms", summary->total_ms);
    w_attr_string(&hw, g, "backend", summary->backend_name);
    w_attr_string(&hw, g, "statistic", "median over the CPIs (per CPI: /timing/cpi_ms)");
    CLOSE_GROUP(g);
    hid_t cg = H5Gopen2(w->file, "config", H5P_DEFAULT);
    if (cg >= 0) {
        w_attr(&hw, cg, "cpis", H5T_STD_I64LE, H5T_NATIVE_LLONG, &w->written);
        if (summary->cpis_unwritten > 0)
            w_attr(&hw, cg, "cpis_unwritten", H5T_STD_I64LE, H5T_NATIVE_LLONG,
                   &summary->cpis_unwritten);
        if (summary->stopped) w_attr_string(&hw, cg, "stopped", summary->stopped);
        if (summary->engine_note && summary->engine_note[0])
            w_attr_string(&hw, cg, "engine_note", summary->engine_note);
        CLOSE_GROUP(cg);
    }
    hid_t *ids[] = {&w->weights, &w->output, &w->det, &w->timing, &w->icpi};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) CLOSE_DSET(*ids[i]);
    hid_t *types[] = {&w->cf_t, &w->cm_t, &w->df_t, &w->dm_t};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) CLOSE_TYPE(*types[i]);
    int st = out_finish(&hw, &w->out, w->file);
    w->file = -1;
    quiet_end(&q);
    pthread_mutex_unlock(&h5_lock);
    free(w);
    return st;
}
