/* par_serial.c: rtstap's one process (par.h). */
#include "par.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int begun;

int par_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
void par_finalize(void) {}
int par_rank(void) { return 0; }
int par_size(void) { return 1; }
int par_local_rank(void) { return 0; }
const char *par_program(void) { return "rtstap"; }
const char *par_describe(void) { return ""; }

int par_check(int status)
{
    begun = 1;
    return status;
}
int par_begun(void) { return begun; }
void par_set_last_error(const char *msg) { (void)msg; }
void par_barrier(void) {}
void par_bcast(void *buf, size_t bytes, int root)
{
    (void)buf;
    (void)bytes;
    (void)root;
}
void par_allgather(const void *mine, size_t bytes, void *all)
{
    if (all != mine) memmove(all, mine, bytes);
}

int par_gatherv(const void *mine, size_t bytes, void **all, size_t *counts, int root, stap_error *err)
{
    (void)root;
    *all = malloc(bytes ? bytes : 1);
    if (!*all) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu bytes", bytes);
    if (bytes) memcpy(*all, mine, bytes);
    counts[0] = bytes;
    return STAP_OK;
}

struct par_file {
    int fd;
    char path[4096];
};

int par_file_open(par_file **out, const char *path, stap_error *err)
{
    *out = NULL;
    par_file *f = calloc(1, sizeof *f);
    if (!f) return stap_fail(err, STAP_ENOMEM, "out of memory");
    f->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f);
        return stap_fail(err, STAP_EIO, "cannot open '%s' to write: %s", path, strerror(e));
    }
    strncpy(f->path, path, sizeof f->path - 1);
    *out = f;
    return STAP_OK;
}

int par_file_write_at(par_file *f, long long at, const void *buf, size_t n, stap_error *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = pwrite(f->fd, (const char *)buf + done, n - done, (off_t)(at + (long long)done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            return stap_fail(err, STAP_EIO, "cannot write %zu bytes at %lld of '%s': %s", n, at,
                             f->path, got < 0 ? strerror(errno) : "no progress");
        done += (size_t)got;
    }
    return STAP_OK;
}

int par_file_close(par_file *f, stap_error *err)
{
    if (!f) return STAP_OK;
    int st = STAP_OK, bad = fsync(f->fd) != 0 ? errno : 0;
    if (close(f->fd) != 0 && !bad) bad = errno;
    if (bad) st = stap_fail(err, STAP_EIO, "cannot finish '%s': %s", f->path, strerror(bad));
    free(f);
    return st;
}
