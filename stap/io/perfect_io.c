/* perfect_io.c: the PERFECT suite's raw files (perfect_io.h): its inputs read, outputs
 * written atomically. */
#include "perfect_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int stap_perfect_read_raw(const char *path, size_t n, stap_cf32 *out, stap_error *err)
{
    /* regular files only: a FIFO made `rtstap perfect` wait forever for a writer */
    const int fd = stap_open_regular(path, err);
    if (fd < 0) return err ? err->code : STAP_EIO;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return stap_fail(err, STAP_EIO, "cannot open '%s': %s", path, strerror(errno));
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return stap_fail(err, STAP_EIO, "cannot seek in '%s'", path);
    }
    long size = ftell(f);
    rewind(f);
    if (size < 0 || (size_t)size != n * 2 * sizeof(float)) {
        fclose(f);
        return stap_fail(err, STAP_EFORMAT, "'%s' holds %ld bytes; expected %zu (%zu complex float32 "
                         "samples)", path, size, n * 2 * sizeof(float), n);
    }
    size_t got = fread(out, 2 * sizeof(float), n, f);
    fclose(f);
    if (got != n) return stap_fail(err, STAP_EIO, "short read from '%s'", path);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(crealf(out[i])) || !isfinite(cimagf(out[i])))
            return stap_fail(err, STAP_EFORMAT, "'%s': non-finite sample at element %zu", path, i);
    return STAP_OK;
}

int stap_perfect_write_raw(const char *path, const stap_cf32 *data, size_t n, stap_write_mode mode,
                      stap_error *err)
{
    return stap_atomic_write(path, data, n * 2 * sizeof(float), mode, err);
}

const char *stap_perfect_input_path(perfect_size s, const char *dir, int steering, char *buf,
                               size_t len)
{
    snprintf(buf, len, "%s/%s_app_%s.bin", dir, stap_perfect_get_dims(s)->name, steering ? "steering_vectors" : "input");
    return buf;
}

int stap_perfect_read_inputs(perfect_size s, const char *dir, stap_input *in, stap_error *err)
{
    const perfect_dims *d = stap_perfect_get_dims(s);
    memset(in, 0, sizeof *in);
    char path[4096];
    size_t n = (size_t)d->channels * d->pulses * d->range_cells;
    size_t nv = (size_t)d->steering * d->channels * d->doppler_order;
    in->iq = malloc(sizeof(stap_cf32) * n);
    in->steering = malloc(sizeof(stap_cf32) * nv);
    if (!in->iq || !in->steering) {
        stap_input_free(in);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the PERFECT %s input", d->name);
    }
    int st = stap_perfect_read_raw(stap_perfect_input_path(s, dir, 0, path, sizeof path), n, in->iq, err);
    if (!st) st = stap_perfect_read_raw(stap_perfect_input_path(s, dir, 1, path, sizeof path), nv, in->steering, err);
    if (st) {
        stap_input_free(in);
        return st;
    }
    in->channels = d->channels;
    in->pulses = d->pulses;
    in->range_gates = d->range_cells;
    in->steering_beams = d->steering;
    in->steering_len = d->channels * d->doppler_order;
    return STAP_OK;
}
