/* base.c: the I/O module's base (io_internal.h) — HDF5's error stack, file access lists,
 * the complex types, names and shapes for messages, the HDF5 lock. */
#include "io_internal.h"

#include <fcntl.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------
 * HDF5 error reporting: the library never prints, so HDF5's automatic error printing is
 * switched off for the duration of each public call and restored afterwards; the most
 * specific entry of HDF5's error stack goes into our messages instead. */

void stap_io_quiet_begin(h5_quiet *q)
{
    q->fn = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void stap_io_quiet_end(const h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

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
const char *stap_io_h5_detail(char *buf, size_t len)
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

/* A file access property list that closes every object of the file with the file, so
 * that H5Fclose really flushes and releases it even if a hook leaked an identifier; and
 * that keeps HDF5's file locks but does not fail on file systems without them (NFS). */
hid_t stap_io_strong_fapl(void)
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

/* A descriptor of its own (close it) for the file libhdf5 holds open as `file` (the sec2
 * driver, every file rtstap opens), else -1: reading through it reads the file HDF5 read,
 * whatever the path names by then (opening the path again could meet another file renamed
 * over it). */
int stap_io_h5_file_fd(hid_t file)
{
    hid_t fapl = H5Fget_access_plist(file);
    const int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
    CLOSE_PLIST(fapl);
    void *h = NULL;
    if (!sec2 || H5Fget_vfd_handle(file, H5P_DEFAULT, &h) < 0 || !h) return -1;
    return fcntl(*(int *)h, F_DUPFD_CLOEXEC, 0);
}

/* Memory type of stap_cf32 (and of the file type on little-endian hosts): what h5py writes
 * for complex64, a compound {r: float32, i: float32}. */
hid_t stap_io_cf32_mem_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(stap_cf32));
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT) < 0 ||
        H5Tinsert(t, "i", sizeof(float), H5T_NATIVE_FLOAT) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

hid_t stap_io_cf32_file_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * 4);
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_IEEE_F32LE) < 0 || H5Tinsert(t, "i", 4, H5T_IEEE_F32LE) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

hid_t stap_io_cf64_mem_type(void)
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

const char *stap_io_class_name(H5T_class_t c)
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

void stap_io_shape_string(char *buf, size_t len, int rank, const hsize_t *dims)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%llu", k ? " x " : "",
                               (unsigned long long)dims[k]);
    if (rank == 0) snprintf(buf, len, "scalar");
}


/* 1 when an integer or float type's bit layout fits its size (the checks H5Tset_precision,
 * H5Tset_offset and H5Tset_fields make): Debian's HDF5 1.10 decodes these fields from the
 * file without them, and converting values of a corrupt type read out of bounds. */
int stap_io_atomic_layout_ok(hid_t t)
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

void stap_io_index_string(char *buf, size_t len, size_t flat, int rank, const hsize_t *dims,
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

int stap_io_check_finite_f32(const stap_cf32 *x, size_t n, size_t *bad)
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

/* ------------------------------------------------------------------------------------
 * Reading /data/iq, one CPI at a time (stap_input_read reads the one CPI of a rank-3 cube
 * the same way), and writing recordings, from a reader and a writer thread: Debian's
 * libhdf5 is not built thread-safe, so every HDF5 call of these functions runs under one
 * lock. */

pthread_mutex_t stap_io_h5_lock = PTHREAD_MUTEX_INITIALIZER;

int stap_io_open_objects(void)
{
    pthread_mutex_lock(&stap_io_h5_lock);
    const ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    pthread_mutex_unlock(&stap_io_h5_lock);
    return n > 0 ? (int)n : 0;
}
