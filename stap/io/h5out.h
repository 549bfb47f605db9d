/* h5out: how every HDF5 file of rtstap is written (stap/io/) — a temporary beside the
 * output, a reserve of disk space that keeps a full disk from failing HDF5's flushes, and
 * publication by rename once complete (docs/architecture.md, "The I/O module"). Internal
 * to stap/. */
#ifndef H5OUT_H
#define H5OUT_H

#include <hdf5.h>
#include <sys/types.h>

#include "h5io.h"

#include "rt_hidden.h"
typedef struct h5_out {
    const char *path;        /* the final name (kept by the caller)              */
    stap_write_mode mode;
    char tmp[4096];          /* the temporary HDF5 writes                        */
    char reserve[4096];      /* the reserve's temporary ("" when none)           */
    int fd;                  /* the temporary, for fallocate and truncate       */
    off_t reserved;          /* its bytes allocated ahead (0: no fallocate here) */
} h5_out;

/* The temporary and the reserve; STAP_EIO naming path (an existing output without
 * STAP_WRITE_REPLACE, no room for the reserve: the system's words). Nothing is left on
 * failure. */
RT_INTERNAL int stap_h5out_begin(h5_out *o, const char *path, stap_write_mode mode, stap_error *err);
/* The temporary as an HDF5 file; -1 with err. */
RT_INTERNAL hid_t stap_h5out_create(h5_out *o, stap_error *err);
/* Before HDF5 writes `bytes` (raw data, or anything that may allocate file space): the
 * temporary's blocks up to HDF5's end of allocated space + bytes + a margin are allocated
 * (STAP_EIO with the system's words, e.g. "No space left on device", when they cannot be; the
 * caller abandons the file). */
RT_INTERNAL int stap_h5out_reserve(h5_out *o, hid_t file, size_t bytes, stap_error *err);
/* failed = 0: close file (any HDF5 identifier of it still open is closed too) and publish
 * it; else abandon it (its blocks freed first, then closed and removed). The status: STAP_OK
 * or the error (err filled unless failed, when the caller's error stands). */
RT_INTERNAL int stap_h5out_finish(h5_out *o, hid_t file, int failed, stap_error *err);

/* The innermost message of HDF5's current error stack on one line (the system's words for
 * a failed system call); call right after the failing HDF5 call. */
RT_INTERNAL const char *stap_io_h5_error_detail(char *buf, size_t len);

#endif
