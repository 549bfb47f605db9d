/* par_posix: the result file the ranks share written with pwrite — rtstap's one process, and
 * rtstap-mpi's ranks when they all run on one host (one page cache: nothing for MPI-IO to
 * reconcile). Each write goes in parts of 256 KB by up to 4 threads: a CPI's weights are
 * about a megabyte, and the copy into the page cache (new pages allocated and cleared) is
 * the writer's cost, about 2 GB/s a thread. */
#ifndef PAR_POSIX_H
#define PAR_POSIX_H

#include <stddef.h>

#include "rtstap/common.h"

typedef struct posix_file posix_file;
int posix_file_open(posix_file **f, const char *path, stap_error *err);
int posix_file_write_at(posix_file *f, long long at, const void *buf, size_t n, stap_error *err);
/* synced and closed; NULL is a no-op */
int posix_file_close(posix_file *f, stap_error *err);

#endif
