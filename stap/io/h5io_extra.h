/* h5io_extra: additions to h5io.h (docs/file-format.md) that callers need before any
 * file is written, e.g. so that `rtstap run` fails before computing. */
#ifndef H5IO_EXTRA_H
#define H5IO_EXTRA_H

#include "rt_hidden.h"
#include "h5io.h"

/* Check, before any work, that a result can be published at `path`: it must not exist
 * (not even as a dangling link) and its directory must accept a new file (a temporary
 * file is created there and removed at once). STAP_OK, or STAP_EIO / STAP_EINVAL with a
 * message naming the path and the reason. */
RT_INTERNAL int stap_output_check(const char *path, stap_error *err);
/* The same for a writer in `mode`: with STAP_WRITE_REPLACE an existing regular file passes
 * (it is left as it is). */
RT_INTERNAL int stap_output_check_mode(const char *path, stap_write_mode mode, stap_error *err);

#endif
