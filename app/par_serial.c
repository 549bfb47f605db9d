/* par_serial.c: rtstap's one process (par.h). */
#include "par.h"
#include "par_posix.h"

#include <stdlib.h>
#include <string.h>

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
int par_check_end(int status) { return par_check(status); }
int par_begun(void) { return begun; }

void par_set_last_error(const char *msg) { (void)msg; }
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
    posix_file *f;
};

int par_file_open(par_file **out, const char *path, stap_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return stap_fail(err, STAP_ENOMEM, "out of memory");
    const int st = posix_file_open(&(*out)->f, path, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

int par_file_write_at(par_file *f, long long at, const void *buf, size_t n, stap_error *err)
{
    return posix_file_write_at(f->f, at, buf, n, err);
}

const char *par_file_method(const par_file *f) { return f ? "pwrite" : ""; }

int par_file_close(par_file *f, stap_error *err)
{
    if (!f) return STAP_OK;
    const int st = posix_file_close(f->f, err);
    free(f);
    return st;
}
