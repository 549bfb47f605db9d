/* par_posix.c: a shared result file by pwrite (par_posix.h). */
#include "par_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct posix_file {
    int fd;
    char path[4096];
};

int posix_file_open(posix_file **out, const char *path, stap_error *err)
{
    *out = NULL;
    posix_file *f = calloc(1, sizeof *f);
    if (!f) return stap_fail(err, STAP_ENOMEM, "out of memory");
    f->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (f->fd < 0) {
        const int e = errno;
        free(f);
        return stap_fail(err, STAP_EIO, "cannot open '%s' to write: %s", path, strerror(e));
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    *out = f;
    return STAP_OK;
}

int posix_file_write_at(posix_file *f, long long at, const void *buf, size_t n, stap_error *err)
{
    const size_t part = (size_t)256 << 10;
    const long parts = (long)((n + part - 1) / part);
    int bad = 0, err_no = 0; /* bad: this thread's parts failed (reduced); err_no: why */
#pragma omp parallel for num_threads(parts < 4 ? (int)parts : 4) schedule(static) reduction(| : bad) if (parts > 1)
    for (long k = 0; k < parts; k++) {
        size_t done = (size_t)k * part;
        const size_t end = done + part < n ? done + part : n;
        while (done < end && !bad) {
            const ssize_t got = pwrite(f->fd, (const char *)buf + done, end - done, (off_t)(at + (long long)done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                const int e = got < 0 ? errno : EIO;
#pragma omp critical(rtstap_par_pwrite)
                err_no = e;
                bad = 1;
            } else {
                done += (size_t)got;
            }
        }
    }
    if (bad)
        return stap_fail(err, STAP_EIO, "cannot write %zu bytes at %lld of '%s': %s", n, at, f->path,
                         strerror(err_no));
    return STAP_OK;
}

int posix_file_close(posix_file *f, stap_error *err)
{
    if (!f) return STAP_OK;
    int st = STAP_OK, bad = fsync(f->fd) != 0 ? errno : 0;
    if (close(f->fd) != 0 && !bad) bad = errno;
    if (bad) st = stap_fail(err, STAP_EIO, "cannot finish '%s': %s", f->path, strerror(bad));
    free(f);
    return st;
}
