/* source.c: an input file being read (io_internal.h) — external links, other files'
 * storage and damaged layouts refused before any sample is read; complex datasets,
 * /steering and the metadata attributes. */
#include "io_internal.h"
#include "h5check.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------
 * Reading */

/* An input file being read. Every lookup in it (links, datasets, attributes) goes through
 * property lists whose callback refuses to traverse an external link anywhere on the
 * path: a soft link to an external link passed stap_io_check_local's look at each component and
 * made rtstap read another file (or block on a FIFO) as its samples or metadata. elink
 * then names the link refused. */

static herr_t refuse_external_link(const char *parent_file, const char *parent_group,
                                   const char *child_file, const char *child_object,
                                   unsigned *acc_flags, hid_t fapl, void *user)
{
    h5_src *s = user;
    snprintf(s->elink, sizeof s->elink, "'%s' in '%s'", child_object, child_file);
    return -1;
}

/* STAP_OK, or the refusal of the external link that a lookup of `name` met. */
int stap_io_src_refused(const h5_src *s, const char *name, stap_error *err)
{
    if (!s->elink[0]) return STAP_OK;
    return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' leads through an external link to %s; "
                     "refused (the data must live in the file)", name, s->path, s->elink);
}

/* 1 when every component of an absolute path exists as a link, else 0 (H5Lexists
 * fails on a path whose intermediate group is missing). */
int stap_io_link_exists(h5_src *s, const char *obj)
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
             * refuses it by name (stap_io_check_local) */
            H5L_info_t li;
            if (H5Lget_info(s->file, buf, &li, s->lapl) >= 0 && li.type == H5L_TYPE_EXTERNAL)
                return 1;
            *p = c;
            if (!c) return 1;
        }
    }
}

enum { ELEM_F32 = 1, ELEM_F64 = 2 };

static int check_complex_type(hid_t type, const char *dname, const char *path, int *elem,
                              stap_error *err)
{
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_COMPOUND) {
        if (cls == H5T_INTEGER || cls == H5T_FLOAT)
            return stap_fail(err, STAP_EFORMAT,
                             "'%s' in '%s' is real-valued (%zu-byte %s); expected complex "
                             "samples, a compound {r, i} of float32 (complex64)", dname, path,
                             H5Tget_size(type), stap_io_class_name(cls));
        return stap_fail(err, STAP_EFORMAT,
                         "'%s' in '%s' has %s elements; expected a compound {r, i} of float32 "
                         "(complex64)", dname, path, stap_io_class_name(cls));
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
        return stap_fail(err, STAP_EFORMAT,
                         "'%s' in '%s' is a compound with %d members (%s); expected exactly two, "
                         "r and i", dname, path, nm, names);
    if (has_r < 0 || has_i < 0)
        return stap_fail(err, STAP_EFORMAT,
                         "'%s' in '%s' has compound members (%s); expected members named r and i",
                         dname, path, names);
    size_t widest = 0;
    const size_t total = H5Tget_size(type);
    const int idx[2] = {has_r, has_i};
    for (int k = 0; k < 2; k++) {
        hid_t mt = H5Tget_member_type(type, (unsigned)idx[k]);
        if (mt < 0)
            return stap_fail(err, STAP_EFORMAT, "'%s' in '%s': unreadable member type", dname, path);
        H5T_class_t mc = H5Tget_class(mt);
        size_t sz = H5Tget_size(mt);
        const int layout_ok = mc != H5T_FLOAT || stap_io_atomic_layout_ok(mt);
        H5Tclose(mt);
        /* a corrupt file's compound (member r at offset 2 MiB of a 16-byte element) made
         * HDF5's conversion read far out of bounds */
        const size_t moff = H5Tget_member_offset(type, (unsigned)idx[k]);
        if (moff > total || sz > total - moff || !layout_ok)
            return stap_fail(err, STAP_EFORMAT,
                             "member '%s' of '%s' in '%s' is corrupt (%zu bytes at offset %zu of a "
                             "%zu-byte element%s)", k ? "i" : "r", dname, path, sz, moff, total,
                             layout_ok ? "" : ", bit fields beyond its size");
        if (mc != H5T_FLOAT)
            return stap_fail(err, STAP_EFORMAT,
                             "member '%s' of '%s' in '%s' is %s%s; expected float32 (or float64)",
                             k ? "i" : "r", dname, path, mc == H5T_INTEGER ? "an " : "",
                             mc == H5T_INTEGER ? "integer" : stap_io_class_name(mc));
        if (sz > 8)
            return stap_fail(err, STAP_EFORMAT,
                             "member '%s' of '%s' in '%s' is a %zu-byte float; expected float32 "
                             "(or float64)", k ? "i" : "r", dname, path, sz);
        if (sz > widest) widest = sz;
    }
    *elem = widest <= 4 ? ELEM_F32 : ELEM_F64;
    return STAP_OK;
}

/* Name a flat element index as (axis0 i, axis1 j, ...). */

/* Scan n samples for the first non-finite one: blocks without an early exit (so that the
 * compiler vectorizes the exponent test), then the exact index in the first bad block. */

static int check_storage(hid_t dset, H5D_layout_t layout, const char *name, const char *path,
                         stap_error *err)
{
    if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS) return STAP_OK;
    hid_t space = H5Dget_space(dset), type = H5Dget_type(dset);
    const hssize_t npoints = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    const size_t tsize = type >= 0 ? H5Tget_size(type) : 0;
    CLOSE_SPACE(space);
    CLOSE_TYPE(type);
    if (npoints < 0 || tsize == 0) return STAP_OK; /* the readers' own checks name these */
    const hsize_t have = H5Dget_storage_size(dset);
    const int fits = (hsize_t)npoints <= (hsize_t)-1 / tsize;
    const hsize_t need = fits ? (hsize_t)npoints * tsize : 0;
    if (fits && (have >= need || (layout == H5D_CONTIGUOUS && have == 0))) return STAP_OK;
    return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' stores %llu bytes of %s data for %lld elements "
                     "of %zu bytes; the file is damaged; refused", name, path,
                     (unsigned long long)have, layout == H5D_COMPACT ? "compact" : "contiguous",
                     (long long)npoints, tsize);
}

/* A dataset's data must live in this file: external links (on the path or the dataset),
 * external raw storage and virtual datasets are refused — they made rtstap read other
 * files (/etc/passwd, /dev/zero) or block on a FIFO as radar samples. Each component of
 * the path is checked before the next is looked up, so no external link is followed. */
int stap_io_check_local(h5_src *s, hid_t dset, const char *name, stap_error *err)
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
            return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is an external link to another file; "
                             "refused", part, path);
    }
    int st = stap_io_src_refused(s, name, err);
    if (st || dset < 0) return st;
    hid_t dcpl = H5Dget_create_plist(dset);
    const int nexternal = dcpl >= 0 ? H5Pget_external_count(dcpl) : 0;
    const H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (nexternal > 0)
        return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' keeps its data in %d external file(s); "
                         "refused", name, path, nexternal);
    if (layout == H5D_VIRTUAL)
        return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is a virtual dataset (data in other "
                         "files); refused", name, path);
    return check_storage(dset, layout, name, path, err);
}

/* 1 when a read of dset must be given a zeroed buffer: where nothing was ever stored,
 * HDF5 leaves the buffer untouched if the dataset's fill time is "never" (rtstap returned
 * uninitialized heap memory as samples). Unknown counts as never. */
int stap_io_fill_never(hid_t dset)
{
    H5D_fill_time_t when = H5D_FILL_TIME_ERROR;
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl >= 0) H5Pget_fill_time(dcpl, &when);
    CLOSE_PLIST(dcpl);
    return when != H5D_FILL_TIME_ALLOC && when != H5D_FILL_TIME_IFSET;
}

/* Read a complex dataset of the given rank into a new stap_cf32 array (row-major). */
int stap_io_read_complex(h5_src *s, const complex_spec *spec, hsize_t *dims, stap_cf32 **out,
                 stap_error *err)
{
    const char *path = s->path;
    char detail[256], shape[128], where[128];
    int st = STAP_OK;
    hid_t dset = -1, space = -1, ftype = -1, mtype = -1, mspace = -1;
    stap_cf32 *x = NULL;
    double *slab = NULL;
    *out = NULL;

    if ((st = stap_io_check_local(s, -1, spec->name, err))) goto done;
    dset = H5Dopen2(s->file, spec->name, s->dapl);
    if (dset < 0) {
        if (!(st = stap_io_src_refused(s, spec->name, err)))
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not a dataset", spec->name, path);
        goto done;
    }
    if ((st = stap_io_check_local(s, dset, spec->name, err))) goto done;
    space = H5Dget_space(dset);
    if (space < 0) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s': unreadable dataspace: %s", spec->name, path,
                       stap_io_h5_detail(detail, sizeof detail));
        goto done;
    }
    if (H5Sget_simple_extent_type(space) == H5S_NULL) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' holds no data (null dataspace); expected rank "
                       "%d %s", spec->name, path, spec->rank, spec->axes_desc);
        goto done;
    }
    int rank = H5Sget_simple_extent_ndims(space);
    if (rank != spec->rank) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has rank %d; expected %d %s", spec->name,
                       path, rank, spec->rank, spec->axes_desc);
        goto done;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    stap_io_shape_string(shape, sizeof shape, rank, dims);
    unsigned long long n = 1;
    int too_big = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 0) {
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has a zero-size dimension: shape %s %s",
                           spec->name, path, shape, spec->axes_desc);
            goto done;
        }
        if (dims[k] > (hsize_t)INT_MAX || n > spec->max_bytes / 8 / dims[k]) too_big = 1;
        else n *= dims[k];
    }
    if (too_big || n * 8 > spec->max_bytes) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has shape %s, more than the %llu GiB "
                       "(complex64) that rtstap reads", spec->name, path, shape,
                       spec->max_bytes >> 30);
        goto done;
    }

    ftype = H5Dget_type(dset);
    if (ftype < 0) {
        st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s': unreadable element type: %s", spec->name,
                       path, stap_io_h5_detail(detail, sizeof detail));
        goto done;
    }
    int elem = 0;
    if ((st = check_complex_type(ftype, spec->name, path, &elem, err))) goto done;

    const int zero = stap_io_fill_never(dset);
    x = zero ? calloc((size_t)n, sizeof(stap_cf32)) : malloc(sizeof(stap_cf32) * (size_t)n);
    if (!x) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory for '%s' in '%s' (shape %s)", spec->name, path,
                       shape);
        goto done;
    }
    size_t bad = 0;
    if (elem == ELEM_F32) {
        mtype = stap_io_cf32_mem_type();
        if (mtype < 0 || H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) {
            st = stap_fail(err, STAP_EIO, "cannot read '%s' from '%s': %s", spec->name, path,
                           stap_io_h5_detail(detail, sizeof detail));
            goto done;
        }
        if (!stap_io_check_finite_f32(x, (size_t)n, &bad)) {
            stap_io_index_string(where, sizeof where, bad, rank, dims, spec->axis);
            st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has a non-finite sample at %s: "
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
        mtype = stap_io_cf64_mem_type();
        if (!slab || mtype < 0) {
            st = stap_fail(err, STAP_ENOMEM, "out of memory converting '%s' in '%s' from float64",
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
                st = stap_fail(err, STAP_EIO, "cannot read '%s' from '%s': %s", spec->name, path,
                               stap_io_h5_detail(detail, sizeof detail));
                goto done;
            }
            for (size_t k = 0; k < nr * row; k++) {
                double re = slab[2 * k], im = slab[2 * k + 1];
                size_t flat = r0 * row + k;
                if (!isfinite(re) || !isfinite(im)) {
                    stap_io_index_string(where, sizeof where, flat, rank, dims, spec->axis);
                    st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s' has a non-finite sample at %s: "
                                   "r = %g, i = %g", spec->name, path, where, re, im);
                    goto done;
                }
                if (fabs(re) > FLT_MAX || fabs(im) > FLT_MAX) {
                    stap_io_index_string(where, sizeof where, flat, rank, dims, spec->axis);
                    st = stap_fail(err, STAP_EFORMAT, "'%s' in '%s': the float64 sample at %s "
                                   "(r = %g, i = %g) overflows float32", spec->name, path, where,
                                   re, im);
                    goto done;
                }
                x[flat] = STAP_CMPLXF((float)re, (float)im);
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
int stap_io_read_positive_attr(h5_src *s, const char *obj, const char *name, int *has,
                              double *value, stap_error *err)
{
    const char *path = s->path;
    *has = 0;
    if (!stap_io_link_exists(s, obj)) return stap_io_src_refused(s, obj, err);
    int cst = stap_h5check_attributes(s->path, s->file, obj, s->lapl, err);
    if (cst || (cst = stap_io_src_refused(s, obj, err))) return cst;
    if (H5Aexists_by_name(s->file, obj, name, s->lapl) <= 0) return stap_io_src_refused(s, obj, err);
    char detail[256];
    int st = STAP_OK;
    hid_t attr = -1, space = -1, type = -1;
    attr = H5Aopen_by_name(s->file, obj, name, H5P_DEFAULT, s->lapl);
    if (attr < 0 || (space = H5Aget_space(attr)) < 0 || (type = H5Aget_type(attr)) < 0) {
        if (!(st = stap_io_src_refused(s, obj, err)))
            st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable: %s",
                           name, obj, path, stap_io_h5_detail(detail, sizeof detail));
        goto done;
    }
    hssize_t npts = H5Sget_simple_extent_npoints(space);
    if (H5Sget_simple_extent_type(space) == H5S_NULL || npts != 1) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' holds %lld values; expected "
                       "one number", name, obj, path,
                       H5Sget_simple_extent_type(space) == H5S_NULL ? 0LL : (long long)npts);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is a %s; expected a number",
                       name, obj, path, stap_io_class_name(cls));
        goto done;
    }
    if (!stap_io_atomic_layout_ok(type)) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' has a corrupt %zu-byte %s "
                       "type (bit fields beyond its size)", name, obj, path, H5Tget_size(type),
                       stap_io_class_name(cls));
        goto done;
    }
    double v = NAN;
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is unreadable: %s", name,
                       obj, path, stap_io_h5_detail(detail, sizeof detail));
        goto done;
    }
    if (!isfinite(v) || v <= 0) {
        st = stap_fail(err, STAP_EFORMAT, "attribute '%s' of '%s' in '%s' is %g; expected a finite "
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
int stap_io_read_steering_and_meta(h5_src *s, stap_input *in, stap_error *err)
{
    int st;
    hsize_t dims[H5S_MAX_RANK];
    if (stap_io_link_exists(s, "/steering")) {
        const complex_spec sv = {"/steering", 2, "(beams, channels*Q)", steering_axes,
                                 H5IO_MAX_STEERING_BYTES};
        if ((st = stap_io_read_complex(s, &sv, dims, &in->steering, err))) return st;
        in->steering_beams = (int)dims[0];
        in->steering_len = (int)dims[1];
    } else if ((st = stap_io_src_refused(s, "/steering", err))) {
        return st;
    }
    stap_radar_meta *m = &in->meta;
    if ((st = stap_io_read_positive_attr(s, "/array", "element_spacing_wavelengths",
                                 &m->has_element_spacing, &m->element_spacing_wavelengths, err)) ||
        (st = stap_io_read_positive_attr(s, "/radar", "prf_hz", &m->has_prf, &m->prf_hz, err)) ||
        (st = stap_io_read_positive_attr(s, "/radar", "carrier_frequency_hz", &m->has_carrier,
                                 &m->carrier_frequency_hz, err)) ||
        (st = stap_io_read_positive_attr(s, "/radar", "sample_rate_hz", &m->has_sample_rate,
                                 &m->sample_rate_hz, err)))
        return st;
    return stap_io_read_array(s, in, err);
}

int stap_open_regular(const char *path, stap_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        stap_fail(err, STAP_EIO, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    const int ok = fstat(fd, &sb) == 0;
    const int flags = ok && S_ISREG(sb.st_mode) ? fcntl(fd, F_GETFL) : -1;
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0) return fd;
    close(fd);
    if (ok && S_ISDIR(sb.st_mode)) stap_fail(err, STAP_EIO, "cannot open '%s': it is a directory", path);
    else if (!ok || !S_ISREG(sb.st_mode))
        stap_fail(err, STAP_EIO, "cannot open '%s': not a regular file (a FIFO, device or socket is "
                  "refused)", path);
    else stap_fail(err, STAP_EIO, "cannot open '%s': %s", path, strerror(errno));
    return -1;
}

/* Before HDF5 sees the path: errors of the operating system with errno's words, and only
 * regular files (the open is non-blocking: a FIFO made rtstap wait forever). */
static int check_input_path(const char *path, stap_error *err)
{
    int fd = stap_open_regular(path, err);
    if (fd < 0) return err ? err->code : STAP_EIO;
    close(fd);
    if (H5Fis_hdf5(path) <= 0) return stap_fail(err, STAP_EIO, "cannot open '%s': not an HDF5 file", path);
    return STAP_OK;
}

/* Open path for reading into s (its file, and its lookups' property lists; s must not move
 * until stap_io_src_close_lists). */
int stap_io_src_open(h5_src *s, const char *path, stap_error *err)
{
    char detail[256];
    memset(s, 0, sizeof *s);
    s->path = path;
    s->file = s->lapl = s->dapl = -1;
    int cst = check_input_path(path, err);
    if (cst) return cst;
    hid_t fapl = stap_io_strong_fapl();
    s->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    /* HDF5's error stack first: closing the property list clears it (a truncated file
     * said only "HDF5 error") */
    if (s->file < 0) stap_io_h5_detail(detail, sizeof detail);
    CLOSE_PLIST(fapl);
    if (s->file < 0) return stap_fail(err, STAP_EIO, "cannot open '%s': %s", path, detail);
    s->lapl = H5Pcreate(H5P_LINK_ACCESS);
    s->dapl = H5Pcreate(H5P_DATASET_ACCESS); /* a link access list too */
    if (s->lapl < 0 || s->dapl < 0 || H5Pset_elink_cb(s->lapl, refuse_external_link, s) < 0 ||
        H5Pset_elink_cb(s->dapl, refuse_external_link, s) < 0)
        return stap_fail(err, STAP_ENOMEM, "out of memory for HDF5 property lists reading '%s'", path);
    return STAP_OK;
}

void stap_io_src_close_lists(h5_src *s)
{
    CLOSE_PLIST(s->lapl);
    CLOSE_PLIST(s->dapl);
}

void stap_input_free(stap_input *in)
{
    if (!in) return;
    free(in->iq);
    free(in->steering);
    free(in->looks);
    free(in->array_position);
    free(in->array_calibration);
    memset(in, 0, sizeof *in);
}
