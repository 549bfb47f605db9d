/* rank_dets.c: a rank's detections, bounded in memory (rank_dets.h). */
#include "rank_dets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5io.h" /* STAP_RESULT_DETECTION_BYTES (common.h) */

void rank_dets_init(rank_dets *d, const char *output, size_t budget)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
    d->budget = budget ? budget : STAP_RESULT_DETECTION_BYTES;
    const char *slash = output ? strrchr(output, '/') : NULL;
    if (slash) snprintf(d->dir, sizeof d->dir, "%.*s", (int)(slash - output) + (slash == output), output);
    else snprintf(d->dir, sizeof d->dir, ".");
}

/* what is held, to the file's end (made, and unlinked, at the first) */
static int spill(rank_dets *d, stap_error *err)
{
    if (d->fd < 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/.rtstap-detections.tmp.XXXXXX", d->dir);
        d->fd = mkstemp(path);
        if (d->fd < 0)
            return stap_fail(err, STAP_EIO, "cannot make a file for the detections in '%s': %s", d->dir,
                             strerror(errno));
        unlink(path); /* (open until the rank ends: nothing is left behind) */
    }
    const char *p = (const char *)d->buf;
    size_t left = d->n * sizeof *d->buf;
    off_t at = (off_t)d->spilled * (off_t)sizeof *d->buf;
    while (left) {
        const ssize_t k = pwrite(d->fd, p, left, at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return stap_fail(err, STAP_EIO, "cannot write the detections' file in '%s': %s", d->dir,
                             k < 0 ? strerror(errno) : "nothing written");
        p += k, left -= (size_t)k, at += k;
    }
    d->spilled += (long long)d->n;
    d->n = 0;
    return STAP_OK;
}

int rank_dets_add(rank_dets *d, const stap_detection *det, size_t n, stap_error *err)
{
    if (d->n && (d->n + n) * sizeof *d->buf > d->budget) {
        const int st = spill(d, err);
        if (st) return st;
    }
    if (n > d->cap - d->n) { /* twice what is held, within the budget (one CPI may pass it) */
        const size_t need = d->n + n, most = d->budget / sizeof *d->buf;
        size_t cap = 2 * need < most ? 2 * need : most;
        if (cap < need) cap = need;
        if (cap < 256) cap = 256;
        stap_detection *b = realloc(d->buf, sizeof *b * cap);
        if (!b) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", d->n + n);
        d->buf = b;
        d->cap = cap;
    }
    if (n) memcpy(d->buf + d->n, det, sizeof *det * n);
    d->n += n;
    if (d->n * sizeof *d->buf > d->most) d->most = d->n * sizeof *d->buf;
    return STAP_OK;
}

int rank_dets_take(rank_dets *d, size_t n, stap_detection *out, stap_error *err)
{
    while (n && d->taken < d->spilled) { /* from the file */
        const size_t k = (size_t)(d->spilled - d->taken) < n ? (size_t)(d->spilled - d->taken) : n;
        const ssize_t got = pread(d->fd, out, k * sizeof *out, (off_t)d->taken * (off_t)sizeof *out);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || (size_t)got % sizeof *out)
            return stap_fail(err, STAP_EIO, "cannot read back the detections' file in '%s': %s", d->dir,
                             got < 0 ? strerror(errno) : "short read");
        const size_t m = (size_t)got / sizeof *out;
        out += m, n -= m, d->taken += (long long)m;
    }
    const size_t at = (size_t)(d->taken - d->spilled);
    if (n > d->n - at) return stap_fail(err, STAP_EINVAL, "%zu detections asked for, %zu left", n, d->n - at);
    if (n) memcpy(out, d->buf + at, sizeof *out * n);
    d->taken += (long long)n;
    return STAP_OK;
}

void rank_dets_free(rank_dets *d)
{
    free(d->buf);
    if (d->fd >= 0) close(d->fd);
    d->buf = NULL;
    d->fd = -1;
}
