/* recording.c: reading /data/iq CPI by CPI (h5io.h: stap_recording, stap_input_read)
 * — one CPI or a recording, in any labelled axis order and element form, only the CPIs
 * that were written. */
#include "io_internal.h"
#include "h5check.h"
#include "h5layout.h"
#include "iqform.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <float.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------
 * Recordings of many CPIs: /data/iq of rank 4 (CPIs, channels, pulses, range_gates),
 * one CPI per chunk (interleaved: rank 5); rank 3 is a recording of one CPI. */

struct stap_recording {
    char path[1024];
    char dname[256];   /* the cube's dataset: /data/iq, --dataset's, a MATLAB/Octave array */
    int colmajor;      /* MATLAB or Octave wrote it: its extents are MATLAB's reversed */
    hid_t file, dset, space, xfer;
    iq_read_types types;
    int rank;          /* of the cube: 3, or 4 with the cpi axis (the dataset has one more
                          when interleaved)                                              */
    iq_form form;
    double scale;      /* the samples are multiplied by it (1: not)                      */
    int direct;        /* chunks of one CPI, unfiltered, native complex64: read raw */
    int zero;          /* fill time "never": zero the buffer before a read (stap_io_fill_never) */
    int check_finite;  /* stap_input_read: refuse non-finite samples, naming the first  */
    hsize_t dims[4];   /* CPIs, C, P, R (CPIs = 1 for rank 3) */
    hsize_t sdims[4];  /* CPIs and the cube's extents in stored order            */
    stap_layout layout;   /* the stored order of the cube axes                    */
    const char *saxes[4]; /* axis names in stored order, for messages            */
    int transpose;     /* not stored as (C, P, R): read into `stored`, transposed */
    double *slab;      /* float64 and int32 samples: one CPI of doubles (stored order) */
    stap_cf32 *stored;      /* transposed files: one CPI in stored order             */
    /* the CPIs that hold data (written_map): ranges [a, b) of CPI indices, in order, and
     * the count of CPIs in them before each range (for the k-th written CPI) */
    long long (*ranges)[2], *before;
    int nranges;
    long long written;
    /* the direct path (direct_plan): every written CPI's stored bytes at a file offset,
     * decoded without HDF5, so that any number of threads read at once (pread) */
    int fd;            /* the file, read-only, or -1: the HDF5 path                    */
    long long *offset; /* chunked: where the k-th written CPI's bytes start            */
    long long base;    /* contiguous (offset NULL): where CPI 0's bytes start          */
    size_t cpi_bytes;  /* stored bytes of one CPI                                      */
    iq_raw raw;
    char read_path[160]; /* stap_recording_read_path                                   */
    void *scratch;       /* stap_recording_read's (direct path)                        */
    pthread_mutex_t mu;  /* the HDF5 path's own buffers (slab, stored)                 */
};

void stap_recording_close(stap_recording *r)
{
    if (!r) return;
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    stap_iq_read_types_close(&r->types);
    CLOSE_SPACE(r->space);
    CLOSE_DSET(r->dset);
    CLOSE_PLIST(r->xfer);
    if (r->file >= 0) H5Fclose(r->file);
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (r->fd >= 0) close(r->fd);
    free(r->offset);
    free(r->scratch);
    free(r->slab);
    free(r->stored);
    free(r->ranges);
    free(r->before);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

long long stap_recording_cpis(const stap_recording *r) { return (long long)r->dims[0]; }
long long stap_recording_written(const stap_recording *r) { return r->written; }

int stap_recording_identity(const stap_recording *r, stap_file_identity *id, stap_error *err)
{
    memset(id, 0, sizeof *id);
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    const int fd = r->file < 0 ? -1 : stap_io_h5_file_fd(r->file); /* a copy of HDF5's own */
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    struct stat sb;
    const int ok = fd >= 0 && fstat(fd, &sb) == 0, e = errno;
    if (fd >= 0) close(fd);
    if (!ok)
        return stap_fail(err, STAP_EIO, "'%s': cannot tell which file it is (%s)", r->path,
                         fd < 0 ? "no descriptor from HDF5" : strerror(e));
    id->device = (unsigned long long)sb.st_dev;
    id->inode = (unsigned long long)sb.st_ino;
    id->size = (long long)sb.st_size;
    id->mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + (long long)sb.st_mtim.tv_nsec;
    return STAP_OK;
}

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

/* The offset of the j-th chunk of chunk row `row` (the chunks along the first axis). */
static void row_chunk(hsize_t *off, hsize_t row, hsize_t j, int drank, const hsize_t *chunk,
                      const hsize_t *grid)
{
    off[0] = row * chunk[0];
    for (int k = drank - 1; k >= 1; k--) {
        off[k] = j % grid[k] * chunk[k];
        j /= grid[k];
    }
}

/* Which CPIs of /data/iq hold data (HDF5 never allocated the chunks, or the contiguous
 * storage, of what was never written: it reads the fill value there, which rtstap must not
 * take for samples). A one-CPI cube must be whole. A recording's chunk rows (chunks along
 * the cpi axis) are looked up one by one in the chunk index (H5Dget_chunk_storage_size)
 * unless all its chunks are allocated. */
static int written_map(stap_recording *r, const char *path, int drank, stap_error *err)
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
    stap_io_shape_string(cube, sizeof cube, drank, d);
    if (!chunked) {
        H5D_space_status_t ss = H5D_SPACE_STATUS_ERROR;
        H5Dget_space_status(r->dset, &ss);
        if (layout == H5D_CONTIGUOUS && ss == H5D_SPACE_STATUS_NOT_ALLOCATED) {
            if (r->rank == 3)
                return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' (%s) was never written: HDF5 "
                                 "allocated no storage for it, and would read its fill value as "
                                 "samples; refused", path, cube);
            return STAP_OK; /* no CPI written: written stays 0, the caller says so */
        }
        return map_add(r, 0, cpis, &cap) ? stap_fail(err, STAP_ENOMEM, "out of memory") : STAP_OK;
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
    if (have >= total) return map_add(r, 0, cpis, &cap) ? stap_fail(err, STAP_ENOMEM, "out of memory") : STAP_OK;
    if (r->rank == 3)
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' (%s) was never written in full: %llu "
                         "of its %llu chunks hold data (%.3g %%); HDF5 would read its fill value as "
                         "samples in the rest; refused", path, cube, (unsigned long long)have,
                         (unsigned long long)total, 100.0 * (double)have / (double)total);
    for (hsize_t row = 0; row < rows && have; row++) {
        int whole = 1;
        for (hsize_t j = 0; j < per_row && whole; j++) { /* each chunk of the row */
            hsize_t off[H5S_MAX_RANK];
            row_chunk(off, row, j, drank, chunk, grid);
            /* a lookup in the chunk index (H5Dget_chunk_info_by_coord walks it in 1.10: as many
             * steps as chunks allocated before this one, quadratic over a recording) */
            hsize_t size = 0;
            whole = H5Dget_chunk_storage_size(r->dset, off, &size) >= 0 && size > 0;
        }
        if (!whole) continue;
        const long long a = (long long)(row * chunk[0]);
        const long long b = a + (long long)chunk[0] < cpis ? a + (long long)chunk[0] : cpis;
        if (map_add(r, a, b, &cap)) return stap_fail(err, STAP_ENOMEM, "out of memory");
    }
    return STAP_OK;
}

int stap_recording_rank(const stap_recording *r) { return r->rank; }

static const char *const iq_axes[] = {"channel", "pulse", "range"};

/* The factor of the samples: opts' --scale, else the `scale` attribute of /data/iq, else 1. */
static int iq_scale(h5_src *s, const char *dname, const stap_read_options *opts, double *scale,
                    stap_error *err)
{
    *scale = 1;
    if (opts && opts->has_scale) {
        if (!isfinite(opts->scale) || opts->scale <= 0)
            return stap_fail(err, STAP_EINVAL, "scale %g for '/data/iq' of '%s': expected a finite "
                             "number > 0", opts->scale, s->path);
        *scale = opts->scale;
        return STAP_OK;
    }
    int has = 0;
    return stap_io_read_positive_attr(s, dname, "scale", &has, scale, err);
}

/* The direct path's chunk placement: each written CPI's chunk address into r->offset (by
 * its written index), or why not. With H5Dchunk_iter (HDF5 1.14) one pass over the chunk
 * index; without it (Debian 12's 1.10.8) H5Dget_chunk_info_by_coord, which walks the index
 * up to the chunk each call (quadratic: 12 000 CPIs of 24 bytes took 29 s to open), so only
 * while the walk costs less a CPI than reading it: up to 1 024 chunks, or one per 2 048
 * bytes of a CPI (a step of the walk about 0.2 us, a CPI read at about 10 GB/s). More keep
 * the HDF5 path, whose reads look each chunk up in the index (docs/benchmarks.md: open
 * time per CPI flat from 10^3 to 10^6 CPIs). */
enum { DIRECT_PLAN_WALK = 1024, DIRECT_PLAN_BYTES_PER_STEP = 2048 };
#if H5_VERSION_GE(1, 14, 0)
typedef struct chunk_walk {
    stap_recording *r;
    int bad;
} chunk_walk;

static int place_one(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op)
{
    chunk_walk *w = op;
    stap_recording *r = w->r;
    const long long k = r->rank == 4 ? (long long)offset[0] : 0;
    if (addr == HADDR_UNDEF || size != r->cpi_bytes || mask != 0) {
        w->bad = 1;
        return H5_ITER_STOP;
    }
    for (int lo = 0, hi = r->nranges - 1; lo <= hi;) { /* its written index, if written */
        const int mid = (lo + hi) / 2;
        if (k < r->ranges[mid][0]) hi = mid - 1;
        else if (k >= r->ranges[mid][1]) lo = mid + 1;
        else {
            r->offset[r->before[mid] + (k - r->ranges[mid][0])] = (long long)addr;
            break;
        }
    }
    return H5_ITER_CONT;
}
#endif

static const char *place_chunks(stap_recording *r)
{
    for (long long i = 0; i < r->written; i++) r->offset[i] = -1;
#if H5_VERSION_GE(1, 14, 0)
    chunk_walk w = {r, 0};
    if (H5Dchunk_iter(r->dset, H5P_DEFAULT, place_one, &w) < 0 || w.bad) return "a chunk it could not place";
    for (long long i = 0; i < r->written; i++)
        if (r->offset[i] < 0) return "a chunk it could not place";
    return NULL;
#else
    const long long walk = (long long)(r->cpi_bytes / DIRECT_PLAN_BYTES_PER_STEP);
    if (r->written > (walk > DIRECT_PLAN_WALK ? walk : DIRECT_PLAN_WALK))
        return "more chunks than it pays to place one walk of the index each (HDF5 before 1.14)";
    for (int g = 0; g < r->nranges; g++)
        for (long long k = r->ranges[g][0]; k < r->ranges[g][1]; k++) {
            hsize_t off[H5S_MAX_RANK] = {0}, size = 0;
            off[0] = r->rank == 4 ? (hsize_t)k : 0;
            unsigned mask = 0;
            haddr_t addr = HADDR_UNDEF;
            if (H5Dget_chunk_info_by_coord(r->dset, off, &mask, &addr, &size) < 0 ||
                addr == HADDR_UNDEF || size != r->cpi_bytes || mask != 0)
                return "a chunk it could not place";
            r->offset[r->before[g] + (k - r->ranges[g][0])] = (long long)addr;
        }
    return NULL;
#endif
}

/* The direct path: one CPI per unfiltered chunk, or contiguous storage, in a file without a
 * user block, with elements iq_raw decodes. The offset of each written CPI is resolved here,
 * once, under the HDF5 lock; reading is then pread and decoding, no HDF5 call.
 * hdf5_only (stap_read_options) keeps every read on the HDF5 path (tests compare the two). */
static void direct_plan(stap_recording *r, int drank, int hdf5_only)
{
    r->fd = -1;
    const char *why = NULL;
    hid_t dcpl = H5Dget_create_plist(r->dset), fcpl = H5Fget_create_plist(r->file);
    hid_t ft = H5Dget_type(r->dset);
    hsize_t ub = 0, ch[H5S_MAX_RANK];
    const H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    size_t n = 1;
    for (int k = 1; k < 4; k++) n *= (size_t)r->sdims[k];
    r->cpi_bytes = n * (r->form.interleaved ? 2 : 1) * (ft >= 0 ? H5Tget_size(ft) : 0);
    if (hdf5_only) why = "asked for";
    else if (stap_iq_raw_make(r->dset, &r->form, &r->raw)) why = "its element type";
    else if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0 || ub != 0) why = "a user block";
    else if (layout == H5D_CHUNKED) {
        const int cr = H5Pget_chunk(dcpl, drank, ch);
        int one = cr == drank && (r->rank == 3 || ch[0] == 1);
        for (int k = 1; one && k < 4; k++) one = ch[k - (r->rank == 3) ] == r->sdims[k];
        if (one && r->form.interleaved) one = ch[drank - 1] == 2;
        if (!one) why = "chunks that are not one CPI each";
        else if (H5Pget_nfilters(dcpl) != 0) why = "compressed or filtered chunks";
    } else if (layout != H5D_CONTIGUOUS) {
        why = "its storage layout";
    }
    /* contiguous: CPI k at base + k * cpi_bytes, if the storage holds every CPI; chunked:
     * the address of each written CPI's chunk, by its written index (what the file holds:
     * a declared extent of 10^9 CPIs with a few written costs a few entries) */
    const long long cpis = (long long)r->dims[0];
    if (!why && layout == H5D_CONTIGUOUS) {
        const haddr_t base = H5Dget_offset(r->dset);
        const hsize_t have = H5Dget_storage_size(r->dset);
        if (base == HADDR_UNDEF) why = "unallocated storage";
        else if (r->cpi_bytes == 0 || have / r->cpi_bytes < (hsize_t)cpis) why = "storage shorter than its extent";
        else r->base = (long long)base;
    } else if (!why && !(r->offset = malloc(sizeof *r->offset * (size_t)(r->written ? r->written : 1)))) {
        why = "memory";
    }
    if (!why && r->offset) why = place_chunks(r);
    /* HDF5's own file (the path may name another one by now, renamed over it) */
    if (!why && (r->fd = stap_io_h5_file_fd(r->file)) < 0) why = "no descriptor of the file HDF5 opened";
    if (!why && stap_recording_scratch_bytes(r) &&
        !(r->scratch = malloc(stap_recording_scratch_bytes(r))))
        why = "memory";
    CLOSE_PLIST(dcpl);
    CLOSE_PLIST(fcpl);
    CLOSE_TYPE(ft);
    if (why) {
        free(r->offset);
        r->offset = NULL;
        if (r->fd >= 0) close(r->fd);
        r->fd = -1;
        snprintf(r->read_path, sizeof r->read_path, "HDF5 (H5Dread, one reader at a time: %s)", why);
    } else {
        snprintf(r->read_path, sizeof r->read_path, "direct (pread, no HDF5 call; %s)",
                 stap_iq_raw_is_complex64(&r->raw) ? "complex64 as stored" : "decoded by rtstap");
    }
}

/* MATLAB and Octave write arrays column-major: the stored extents are the MATLAB array's
 * reversed, and nothing says which axis is which (docs/matlab.md). */
static int column_major_refusal(const char *dn, const char *path, int drank, int iq,
                                const hsize_t *d, stap_error *err)
{
    char stored[128], matlab[128];
    hsize_t rev[H5S_MAX_RANK];
    for (int k = 0; k < drank; k++) rev[k] = d[drank - 1 - k];
    stap_io_shape_string(stored, sizeof stored, drank, d);
    stap_io_shape_string(matlab, sizeof matlab, drank, rev);
    return stap_fail(err, STAP_EFORMAT, "'%s' in '%s' was written by MATLAB or Octave (column-major: "
                     "the MATLAB array %s is stored as %s%s) and does not say which axis is which: "
                     "give stap_read_options.layout the stored order — a MATLAB C x P x R cube is R,P,C; the "
                     "phased toolbox's range x channel x pulse cube is P,C,R (docs/matlab.md)",
                     dn, path, matlab, stored, drank - iq == 4 ? ", CPIs last in MATLAB" : "");
}

/* Errors name the cube as /data/iq; another dataset's name in its place. */
static int named(const stap_recording *r, int st, stap_error *err)
{
    static const char def[] = "'/data/iq'";
    if (!st || !err || !r->dname[0] || !strcmp(r->dname, "/data/iq")) return st;
    char buf[sizeof err->msg], *at, *from = err->msg;
    size_t n = 0;
    while ((at = strstr(from, def)) && n < sizeof buf) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%.*s'%s'", (int)(at - from), from, r->dname);
        from = at + sizeof def - 1;
    }
    if (n >= sizeof buf || from == err->msg) return st;
    snprintf(buf + n, sizeof buf - n, "%s", from);
    memcpy(err->msg, buf, sizeof buf);
    return st;
}

/* Validate the open file s as a recording (r->file is s->file; one_cpi: a single CPI, as
 * stap_input_read takes). */
static int recording_open(h5_src *s, stap_recording *r, stap_input *in,
                          const stap_read_options *opts, int one_cpi, stap_error *err)
{
    char detail[256], shape[128];
    const char *path = s->path;
    int lst = stap_io_cube_locate(s, opts ? opts->dataset : NULL, r->dname, sizeof r->dname, err);
    if (lst > 0) return lst;
    if (lst < 0) {
        lst = stap_io_src_refused(s, "/data/iq", err);
        return lst ? lst : stap_fail(err, STAP_EFORMAT, "'/data/iq' is missing from '%s' (schema v1.1 "
                                   "keeps the cube there: channels x pulses x range_gates%s, or "
                                   "another order with axis labels; complex64, or another complex "
                                   "or interleaved form; or name it with stap_read_options.dataset)", path,
                                   one_cpi ? "" : ", or CPIs x channels x pulses x range_gates");
    }
    const char *dn = r->dname;
    snprintf(in->dataset, sizeof in->dataset, "%s", dn);
    if ((lst = stap_io_check_local(s, -1, dn, err))) return lst;
    r->dset = H5Dopen2(r->file, dn, s->dapl);
    if (r->dset < 0) {
        lst = stap_io_src_refused(s, dn, err);
        return lst ? lst : stap_fail(err, STAP_EFORMAT, "'%s' in '%s' is not a dataset", dn, path);
    }
    if ((lst = stap_io_check_local(s, r->dset, dn, err))) return lst;
    r->space = H5Dget_space(r->dset);
    if (r->space < 0 || H5Sget_simple_extent_type(r->space) == H5S_NULL)
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' holds no data", path);
    const int drank = H5Sget_simple_extent_ndims(r->space);
    hsize_t d[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(r->space, d, NULL);
    hid_t ftype = H5Dget_type(r->dset);
    if (ftype < 0) return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s': unreadable element type", path);
    int st = stap_iq_classify(ftype, drank, d, path, &r->form, err);
    CLOSE_TYPE(ftype);
    if (st) return st;
    const int iq = r->form.interleaved;
    r->rank = drank - iq;
    if (r->rank != 3 && (one_cpi || r->rank != 4)) {
        if (one_cpi)
            return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has rank %d; expected %d "
                             "(channels, pulses, range_gates%s)", path, drank, 3 + iq,
                             iq ? ", iq" : "");
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has rank %d; expected %d (channels, "
                         "pulses, range_gates%s) or %d (CPIs, channels, pulses, range_gates%s)", path,
                         drank, 3 + iq, iq ? ", iq" : "", 4 + iq, iq ? ", iq" : "");
    }
    stap_io_shape_string(shape, sizeof shape, drank, d);
    for (int k = 0; k < drank; k++)
        if (d[k] == 0 || d[k] > (hsize_t)INT_MAX)
            return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has shape %s: a zero-size or "
                             "too large dimension", path, shape);
    /* the attributes (labels, scale) only once their messages are known to be sound */
    if ((lst = stap_h5check_attributes(path, r->file, dn, s->lapl, err)) ||
        (lst = stap_h5layout_resolve(r->dset, drank, iq, path, dn, opts, &in->layout, err)))
        return lst;
    /* its attributes only once its object header and attributes were checked (a damaged
     * header crashed libhdf5 1.10.8's H5Aexists_by_name) */
    r->colmajor = stap_io_cube_column_major(s, dn);
    in->layout.column_major = r->colmajor;
    if (r->colmajor && in->layout.source == STAP_LAYOUT_ASSUMED)
        return column_major_refusal(dn, path, drank, iq, d, err);
    r->layout = in->layout.layout;
    r->transpose = !stap_layout_is_identity(&r->layout);
    r->saxes[0] = "cpi";
    for (int k = 0; k < 3; k++) r->saxes[k + 1] = iq_axes[r->layout.axis[k]];
    r->sdims[0] = r->dims[0] = r->rank == 4 ? d[0] : 1;
    for (int k = 0; k < 3; k++) r->sdims[k + 1] = d[k + r->rank - 3];
    stap_h5layout_logical_dims(&r->layout, r->sdims + 1, r->dims + 1);
    unsigned long long n = 1;
    for (int k = 1; k < 4; k++) {
        if (n > H5IO_MAX_CUBE_BYTES / 8 / r->dims[k])
            return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has shape %s: one CPI is more "
                             "than the %llu GiB (complex64) that rtstap reads", path, shape,
                             H5IO_MAX_CUBE_BYTES >> 30);
        n *= r->dims[k];
    }
    if ((st = iq_scale(s, r->dname, opts, &r->scale, err))) return st;
    if ((st = written_map(r, path, drank, err))) return st;
    r->before = malloc(sizeof *r->before * (size_t)(r->nranges ? r->nranges : 1));
    if (!r->before) return stap_fail(err, STAP_ENOMEM, "out of memory");
    for (int i = 0; i < r->nranges; i++)
        r->before[i] = i ? r->before[i - 1] + r->ranges[i - 1][1] - r->ranges[i - 1][0] : 0;
    if (stap_iq_read_types_make(r->dset, &r->form, &r->types))
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s': no conversion of its %s samples: %s",
                         path, r->form.comp, stap_io_h5_detail(detail, sizeof detail));
    r->zero = stap_io_fill_never(r->dset);
    direct_plan(r, drank, opts && opts->hdf5_only);
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
        return stap_fail(err, STAP_ENOMEM, "out of memory for a transfer property list");
    if (r->form.wide && !(r->slab = malloc(16 * (size_t)n)))
        return stap_fail(err, STAP_ENOMEM, "out of memory converting '%s' from %s", path, r->form.comp);
    if (r->transpose && !(r->stored = malloc(sizeof(stap_cf32) * (size_t)n)))
        return stap_fail(err, STAP_ENOMEM, "out of memory transposing '%s'", path);
    in->channels = (int)r->dims[1];
    in->pulses = (int)r->dims[2];
    in->range_gates = (int)r->dims[3];
    in->scale = r->scale;
    stap_iq_describe(&r->form, r->scale, in->samples, sizeof in->samples);
    return stap_io_read_steering_and_meta(s, in, err);
}

static int recording_open_common(const char *path, stap_recording **out, stap_input *in,
                                 const stap_read_options *opts, int one_cpi, stap_error *err)
{
    *out = NULL;
    memset(in, 0, sizeof *in);
    if (!path || !*path) return stap_fail(err, STAP_EINVAL, "stap_recording_open: empty input path");
    stap_recording *r = calloc(1, sizeof *r);
    if (!r) return stap_fail(err, STAP_ENOMEM, "out of memory opening '%s'", path);
    r->file = r->dset = r->space = r->xfer = r->fd = -1;
    pthread_mutex_init(&r->mu, NULL);
    r->types.mtype = r->types.comp = r->types.native = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
    h5_src s;
    int st = stap_io_src_open(&s, path, err);
    r->file = s.file; /* closed by stap_recording_close */
    if (!st) st = named(r, recording_open(&s, r, in, opts, one_cpi, err), err);
    stap_io_src_close_lists(&s);
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (st) {
        stap_recording_close(r);
        stap_input_free(in);
        return st;
    }
    *out = r;
    return STAP_OK;
}

int stap_recording_open(const char *path, stap_recording **out, stap_input *in,
                        const stap_read_options *opts, stap_error *err)
{
    return recording_open_common(path, out, in, opts, 0, err);
}

/* The samples read into got (float32 pairs) or r->slab (double pairs): converted from
 * double, scaled, checked against float32's range, and (check_finite) for non-finite
 * values; in stored order. */
static int recording_convert(const stap_recording *r, long long cpi, stap_cf32 *got,
                             const double *slab, size_t n, stap_error *err)
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
        const double *src = r->form.wide ? slab : NULL;
        int over = 0;
        for (size_t k = 0; k < 2 * n; k++) over |= fabs((src ? src[k] : (double)gf[k]) * s) > FLT_MAX;
        for (size_t k = 0; over && k < n; k++) {
            const double re = src ? src[2 * k] : (double)gf[2 * k];
            const double im = src ? src[2 * k + 1] : (double)gf[2 * k + 1];
            if (isfinite(re) && isfinite(im) && (fabs(re * s) > FLT_MAX || fabs(im * s) > FLT_MAX)) {
                stap_io_index_string(where, sizeof where, k, 3, r->sdims + 1, r->saxes + 1);
                return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s': the %s sample %sat %s "
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
    if (r->check_finite && !stap_io_check_finite_f32(got, n, &bad)) {
        stap_io_index_string(where, sizeof where, bad, 3, r->sdims + 1, r->saxes + 1);
        return stap_fail(err, STAP_EFORMAT, "'/data/iq' in '%s' has a non-finite sample %sat %s: "
                         "r = %g, i = %g", r->path, of_cpi, where, crealf(got[bad]),
                         cimagf(got[bad]));
    }
    return STAP_OK;
}

/* Where the stored bytes of CPI cpi end in the file (0: not known, e.g. compact storage):
 * the end of the chunks that hold it, or of its part of the contiguous storage. */
static unsigned long long stored_end(const stap_recording *r, long long cpi)
{
    const int drank = r->rank + r->form.interleaved;
    hid_t dcpl = H5Dget_create_plist(r->dset), fcpl = H5Fget_create_plist(r->file);
    hsize_t ub = 0, ch[H5S_MAX_RANK], d[H5S_MAX_RANK], grid[H5S_MAX_RANK], per_row = 1;
    if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0) ub = 0; /* addresses follow it */
    const H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    const int chunked = layout == H5D_CHUNKED && H5Pget_chunk(dcpl, drank, ch) == drank;
    CLOSE_PLIST(dcpl);
    CLOSE_PLIST(fcpl);
    unsigned long long end = 0;
    if (layout == H5D_CONTIGUOUS) {
        const haddr_t base = H5Dget_offset(r->dset);
        if (base != HADDR_UNDEF) end = ub + base + (unsigned long long)(cpi + 1) * r->cpi_bytes;
        return end;
    }
    if (!chunked || H5Sget_simple_extent_dims(r->space, d, NULL) != drank) return 0;
    for (int k = 0; k < drank; k++) {
        grid[k] = (d[k] + ch[k] - 1) / ch[k];
        if (k > 0) per_row *= grid[k];
    }
    /* a recording: the row of chunks along the cpi axis that holds the CPI; one CPI: all */
    const hsize_t row0 = r->rank == 4 ? (hsize_t)cpi / ch[0] : 0, rows = r->rank == 4 ? 1 : grid[0];
    for (hsize_t row = row0; row < row0 + rows; row++)
        for (hsize_t j = 0; j < per_row; j++) {
            hsize_t off[H5S_MAX_RANK], size = 0;
            row_chunk(off, row, j, drank, ch, grid);
            unsigned mask = 0;
            haddr_t addr = HADDR_UNDEF;
            if (H5Dget_chunk_info_by_coord(r->dset, off, &mask, &addr, &size) >= 0 &&
                addr != HADDR_UNDEF && ub + addr + size > end)
                end = ub + addr + size;
        }
    return end;
}

/* After an HDF5 read of CPI cpi: libhdf5's sec2 driver reads zeros past the end of the file,
 * so a file cut short while it is read (a recorder's, a copy's) would give zeros for
 * samples. The file's size now is checked against HDF5's end of allocation first (every
 * chunk lies before it, and HDF5 reads nothing past it): a file that long holds the CPI,
 * with no lookup in the chunk index, which HDF5 1.10 walks up to the chunk (quadratic over
 * a run of many small CPIs). Only a shorter file looks up where the CPI's bytes end. */
static int check_stored(const stap_recording *r, long long cpi, stap_error *err)
{
    const int fd = stap_io_h5_file_fd(r->file);
    struct stat sb;
    const int known = fd >= 0 && fstat(fd, &sb) == 0;
    if (fd >= 0) close(fd);
    if (!known) return STAP_OK;
    hid_t fcpl = H5Fget_create_plist(r->file);
    hsize_t ub = 0;
    haddr_t eoa = HADDR_UNDEF;
    if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0) ub = 0;
    CLOSE_PLIST(fcpl);
    /* the end of allocation counted after the user block: the check is at worst stricter */
    if (H5Fget_eoa(r->file, &eoa) >= 0 && eoa != HADDR_UNDEF &&
        (unsigned long long)sb.st_size >= ub + eoa)
        return STAP_OK;
    const unsigned long long end = stored_end(r, cpi);
    if (!end || (unsigned long long)sb.st_size >= end) return STAP_OK;
    return stap_fail(err, STAP_EIO, "cannot read CPI %lld of '/data/iq' from '%s' (its bytes end "
                     "at offset %llu, the file at %lld): the file ends early", cpi, r->path, end,
                     (long long)sb.st_size);
}

/* The HDF5 path (under the caller's r->mu: r's own buffers) */
static int hdf5_read(stap_recording *r, long long cpi, stap_cf32 *cube, stap_error *err)
{
    const size_t n = (size_t)(r->dims[1] * r->dims[2] * r->dims[3]);
    char detail[256];
    int st = STAP_OK;
    hid_t mspace = -1;
    /* a cube stored in another axis order is read in that order, then transposed */
    stap_cf32 *got = r->transpose ? r->stored : cube;
    pthread_mutex_lock(&stap_io_h5_lock);
    h5_quiet q;
    stap_io_quiet_begin(&q);
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
            st = stap_fail(err, STAP_EIO, "cannot read CPI %lld of '/data/iq' from '%s': %s", cpi,
                           r->path, stap_io_h5_detail(detail, sizeof detail));
        else st = check_stored(r, cpi, err);
    } else {
        mspace = H5Screate_simple(drank, count, NULL);
        void *dst = r->form.wide ? (void *)r->slab : (void *)got;
        if (r->zero) memset(dst, 0, (r->form.wide ? 16 : 8) * n);
        if (mspace < 0 ||
            H5Sselect_hyperslab(r->space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(r->dset, r->types.mtype, mspace, r->space, r->xfer, dst) < 0)
            st = stap_fail(err, STAP_EIO, "cannot read CPI %lld of '/data/iq' from '%s': %s", cpi,
                           r->path, stap_io_h5_detail(detail, sizeof detail));
        else if ((st = check_stored(r, cpi, err))) { /* said */ }
        else if (stap_iq_read_convert(&r->types, &r->form, 2 * n, dst) < 0)
            st = stap_fail(err, STAP_EIO, "cannot convert CPI %lld of '/data/iq' in '%s' from %s: %s",
                           cpi, r->path, r->form.comp, stap_io_h5_detail(detail, sizeof detail));
        CLOSE_SPACE(mspace);
    }
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    if (st || (st = recording_convert(r, cpi, got, r->slab, n, err))) return st;
    if (r->transpose) stap_h5layout_transpose(got, cube, &r->layout, r->sdims + 1);
    return STAP_OK;
}

/* where a written CPI's bytes start (direct path) */
static long long cpi_offset(const stap_recording *r, long long cpi)
{
    if (!r->offset) return r->base + cpi * (long long)r->cpi_bytes;
    for (int lo = 0, hi = r->nranges - 1; lo <= hi;) {
        const int mid = (lo + hi) / 2;
        if (cpi < r->ranges[mid][0]) hi = mid - 1;
        else if (cpi >= r->ranges[mid][1]) lo = mid + 1;
        else return r->offset[r->before[mid] + (cpi - r->ranges[mid][0])];
    }
    return -1; /* never: callers check cpi_is_written first */
}

/* The CPI's stored bytes (r->cpi_bytes) into raw, by pread. */
static int pread_cpi(const stap_recording *r, long long cpi, void *raw, stap_error *err)
{
    const long long at = cpi_offset(r, cpi);
    size_t done = 0;
    while (done < r->cpi_bytes) {
        const ssize_t k = pread(r->fd, (unsigned char *)raw + done, r->cpi_bytes - done,
                                (off_t)at + (off_t)done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return stap_fail(err, STAP_EIO, "cannot read CPI %lld of '/data/iq' from '%s' (%zu "
                             "bytes at offset %lld): %s", cpi, r->path, r->cpi_bytes,
                             at, k < 0 ? strerror(errno) : "the file ends early");
        done += (size_t)k;
    }
    return STAP_OK;
}

/* The direct path: pread the CPI's stored bytes, decode, scale, transpose; no HDF5 call,
 * no shared buffer (scratch: stap_recording_scratch_bytes). */
static int direct_read(const stap_recording *r, long long cpi, stap_cf32 *cube, void *scratch,
                       stap_error *err)
{
    const size_t n = (size_t)(r->dims[1] * r->dims[2] * r->dims[3]);
    unsigned char *sp = scratch;
    stap_cf32 *got = r->transpose ? (stap_cf32 *)sp : cube; /* the decoded CPI in stored order */
    if (r->transpose) sp += sizeof(stap_cf32) * n;
    double *slab = r->form.wide ? (double *)sp : NULL;
    if (slab) sp += 16 * n;
    const int as_stored = stap_iq_raw_is_complex64(&r->raw);
    void *raw = as_stored ? (void *)got : (void *)sp;
    int st = pread_cpi(r, cpi, raw, err);
    if (st) return st;
    if (!as_stored && !slab && !r->check_finite &&
        stap_iq_raw_decode_scaled(&r->raw, raw, n, r->scale, (float *)got) == 0) {
        /* int8/int16 recordings: decoded and scaled in one pass (no overflow possible) */
    } else {
        if (!as_stored) stap_iq_raw_decode(&r->raw, raw, n, slab ? (void *)slab : (void *)got);
        if ((st = recording_convert(r, cpi, got, slab, n, err))) return st;
    }
    if (r->transpose) stap_h5layout_transpose(got, cube, &r->layout, r->sdims + 1);
    return STAP_OK;
}

size_t stap_recording_scratch_bytes(const stap_recording *r)
{
    if (r->fd < 0) return 0;
    const size_t n = (size_t)(r->dims[1] * r->dims[2] * r->dims[3]);
    return (r->transpose ? sizeof(stap_cf32) * n : 0) + (r->form.wide ? 16 * n : 0) +
           (stap_iq_raw_is_complex64(&r->raw) ? 0 : r->cpi_bytes);
}

int stap_recording_parallel(const stap_recording *r) { return r->fd >= 0; }

const char *stap_recording_read_path(const stap_recording *r) { return r->read_path; }

static int check_cpi(const stap_recording *r, long long cpi, stap_error *err)
{
    if (cpi < 0 || cpi >= (long long)r->dims[0])
        return stap_fail(err, STAP_EINVAL, "'%s' has %llu CPIs; CPI %lld asked for", r->path,
                         (unsigned long long)r->dims[0], cpi);
    if (!cpi_is_written(r, cpi))
        return stap_fail(err, STAP_EFORMAT, "CPI %lld of '/data/iq' in '%s' was never written (it "
                         "would read as the fill value)", cpi, r->path);
    return STAP_OK;
}

int stap_recording_read_with(stap_recording *r, long long cpi, stap_cf32 *cube, void *scratch,
                             stap_error *err)
{
    int st = check_cpi(r, cpi, err);
    if (st) return st;
    if (r->fd >= 0) return named(r, direct_read(r, cpi, cube, scratch, err), err);
    pthread_mutex_lock(&r->mu);
    st = hdf5_read(r, cpi, cube, err);
    pthread_mutex_unlock(&r->mu);
    return named(r, st, err);
}

int stap_recording_stored_format(const stap_recording *r, stap_sample_format *f, stap_error *err)
{
    const char *why = NULL;
    const iq_raw *q = &r->raw;
    if (r->fd < 0) why = "it is read through HDF5";
    else if (stap_iq_raw_is_complex64(q)) why = NULL;
    else if (q->is_float) why = "its samples are floating point other than complex64";
    else if (q->stride != 2 * (size_t)q->size || q->off_r != 0 || q->off_i != (size_t)q->size)
        why = "its real and imaginary parts are not packed in that order";
    else if (r->scale * 2147483648.0 > 3.0e38) why = "its scale could overflow float32";
    if (why) return stap_fail(err, STAP_EUNSUPPORTED, "'%s': the engine cannot take the samples as "
                              "stored: %s", r->path, why);
    if (stap_iq_raw_is_complex64(q)) {
        if (r->scale != 1.0)
            return stap_fail(err, STAP_EUNSUPPORTED, "'%s': the engine cannot take the samples "
                             "as stored: complex64 with a scale", r->path);
        *f = (stap_sample_format){.type = STAP_SAMPLES_CF32, .scale = 1.0, .order = r->layout};
        return STAP_OK;
    }
    f->type = q->size == 1 ? STAP_SAMPLES_CI8 : q->size == 2 ? STAP_SAMPLES_CI16 : STAP_SAMPLES_CI32;
    f->big_endian = q->big_endian;
    f->scale = r->scale;
    f->order = r->layout; /* the engine reads it transposed */
    return STAP_OK;
}

int stap_recording_read_stored(stap_recording *r, long long cpi, void *buf, stap_error *err)
{
    int st = check_cpi(r, cpi, err);
    if (st) return st;
    if (r->fd < 0)
        return stap_fail(err, STAP_EUNSUPPORTED, "'%s' is read through HDF5, not as stored", r->path);
    return pread_cpi(r, cpi, buf, err);
}

int stap_recording_read(stap_recording *r, long long cpi, stap_cf32 *cube, stap_error *err)
{
    int st = check_cpi(r, cpi, err);
    if (st) return st;
    pthread_mutex_lock(&r->mu); /* r's own buffers */
    if (r->fd >= 0) {
        st = direct_read(r, cpi, cube, r->scratch, err);
    } else {
        st = hdf5_read(r, cpi, cube, err);
    }
    pthread_mutex_unlock(&r->mu);
    return named(r, st, err);
}

/* ---- one CPI (stap_input_read): the recording reader, every sample checked finite ------ */

static int input_read(const char *path, stap_input *in, const stap_read_options *opts,
                      stap_error *err)
{
    stap_recording *r = NULL;
    int st = recording_open_common(path, &r, in, opts, 1, err);
    if (st) return st;
    r->check_finite = 1;
    in->iq = malloc(sizeof(stap_cf32) * (size_t)in->channels * in->pulses * in->range_gates);
    if (!in->iq)
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the %d x %d x %d cube of '%s'",
                       in->channels, in->pulses, in->range_gates, path);
    else
        st = stap_recording_read(r, 0, in->iq, err);
    stap_recording_close(r);
    return st;
}

int stap_input_read(const char *path, stap_input *in, const stap_read_options *opts,
                    stap_error *err)
{
    if (!in) return stap_fail(err, STAP_EINVAL, "stap_input_read: no output structure");
    memset(in, 0, sizeof *in);
    if (!path || !*path) return stap_fail(err, STAP_EINVAL, "stap_input_read: empty input path");
    int st = input_read(path, in, opts, err);
    if (st) stap_input_free(in);
    return st;
}
