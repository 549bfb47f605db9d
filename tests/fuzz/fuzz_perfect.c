/* fuzz_perfect: the PERFECT suite's raw file readers (stap/io/perfect_io.c). The first byte picks
 *   0  stap_perfect_read_raw: the rest of the input is the file, read as n complex float32
 *      samples with n its size / 8 or one off;
 *   1  stap_perfect_read_inputs: <size>_app_input.bin and <size>_app_steering_vectors.bin of a
 *      size, each of the exact length or not, filled from the input's bytes;
 *   2  stap_perfect_size_parse on the rest as a string (a size's name in any case, or refused);
 * and the files may be missing, directories, FIFOs or symbolic links instead. A reader
 * must return a status with a message, and on success exactly the finite samples asked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "perfect_io.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], target[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_path("perfect", dir, sizeof dir);
    mkdir(dir, 0700);
    fz_path("target.bin", target, sizeof target);
    fz_write_file(target, "\0\0\0\0\0\0\0\0", 8);
    return 0;
}

/* A file at path: regular, or missing, a directory, a FIFO, a symbolic link to a regular
 * file or to /dev/zero. A regular file holds the rest of the input (len == SIZE_MAX), or
 * len bytes repeating 32 of the input with a few special floats. */
static void make_file(fz_bytes *b, const char *path, size_t len)
{
    fz_remove(path);
    switch (fz_pick(b, 16)) {
    case 10: return; /* missing */
    case 11: mkdir(path, 0700); return;
    case 12: mkfifo(path, 0600); return;
    case 13: symlink(target, path); return;
    case 14: symlink("/dev/zero", path); return;
    default: break;
    }
    if (len == SIZE_MAX) {
        fz_write_file(path, b->p, b->n);
        return;
    }
    uint8_t pat[32];
    fz_take(b, pat, sizeof pat);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) fz_die("harness: out of memory for %zu bytes", len);
    for (size_t done = 0; done < len;) { /* the pattern, doubling */
        const size_t k = done ? (done < len - done ? done : len - done)
                              : (sizeof pat < len ? sizeof pat : len);
        memcpy(buf + done, done ? buf : pat, k);
        done += k;
    }
    static const float specials[] = {NAN, INFINITY, -INFINITY, 1e38f};
    for (unsigned p = fz_pick(b, 3); p > 0 && len >= 4; p--) {
        const float v = specials[fz_pick(b, 4)];
        memcpy(buf + (fz_u32(b) % (len / 4)) * 4, &v, 4);
    }
    fz_write_file(path, buf, len);
    free(buf);
}

static void check_finite(const char *what, const stap_cf32 *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(crealf(x[k])) || !isfinite(cimagf(x[k])))
            fz_die("%s accepted a non-finite sample at %zu", what, k);
}

static void raw(fz_bytes *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/raw.bin", dir);
    const unsigned off = fz_pick(b, 3); /* n exact, one less, one more */
    make_file(b, path, SIZE_MAX);
    const size_t len = b->n;
    size_t n = len / 8 + (off == 2) - (off == 1 && len >= 8);
    stap_cf32 *out = malloc(sizeof(stap_cf32) * (n ? n : 1));
    stap_error err;
    stap_error_clear(&err);
    fz_watch("stap_perfect_read_raw");
    int st = stap_perfect_read_raw(path, n, out, &err);
    fz_unwatch();
    fz_check_status("stap_perfect_read_raw", st, &err);
    if (!st) {
        struct stat sb;
        if (stat(path, &sb) != 0 || (size_t)sb.st_size != 8 * n)
            fz_die("stap_perfect_read_raw read %zu samples from a file that does not hold them", n);
        check_finite("stap_perfect_read_raw", out, n);
    }
    free(out);
}

static void inputs(fz_bytes *b)
{
    const unsigned pick = fz_pick(b, 8); /* mostly small: medium 6 MB, large 34 MB */
    const perfect_size size = pick < 6 ? PERFECT_SMALL : pick == 6 ? PERFECT_MEDIUM : PERFECT_LARGE;
    const perfect_dims *d = stap_perfect_get_dims(size);
    const size_t n = (size_t)d->channels * d->pulses * d->range_cells;
    const size_t nv = (size_t)d->steering * d->channels * d->doppler_order;
    char in_path[4096], sv_path[4096];
    snprintf(in_path, sizeof in_path, "%s/%s_app_input.bin", dir, d->name);
    snprintf(sv_path, sizeof sv_path, "%s/%s_app_steering_vectors.bin", dir, d->name);
    static const int delta[] = {0, 0, 0, 0, -8, 8, -1, 1};
    make_file(b, in_path, 8 * n + delta[fz_pick(b, 8)]);
    make_file(b, sv_path, 8 * nv + delta[fz_pick(b, 8)]);
    stap_input in;
    stap_error err;
    stap_error_clear(&err);
    fz_watch("stap_perfect_read_inputs");
    int st = stap_perfect_read_inputs(size, dir, &in, &err);
    fz_unwatch();
    fz_check_status("stap_perfect_read_inputs", st, &err);
    if (st) {
        if (in.iq || in.steering) fz_die("stap_perfect_read_inputs failed but left arrays");
        return;
    }
    if (in.channels != d->channels || in.pulses != d->pulses || in.range_gates != d->range_cells ||
        in.steering_beams != d->steering || in.steering_len != d->channels * d->doppler_order)
        fz_die("stap_perfect_read_inputs: shape %d x %d x %d, steering %d x %d", in.channels, in.pulses,
               in.range_gates, in.steering_beams, in.steering_len);
    check_finite("stap_perfect_read_inputs (input)", in.iq, n);
    check_finite("stap_perfect_read_inputs (steering)", in.steering, nv);
    stap_input_free(&in);
}

static void size_name(fz_bytes *b)
{
    char name[64];
    fz_take(b, name, sizeof name - 1);
    name[sizeof name - 1] = '\0';
    perfect_size s = PERFECT_SIZE_COUNT;
    stap_error err;
    stap_error_clear(&err);
    int st = stap_perfect_size_parse(name, &s, &err);
    fz_check_status("stap_perfect_size_parse", st, &err);
    /* the size's name, in any case (issue 33) */
    if (!st && (s >= PERFECT_SIZE_COUNT || strcasecmp(stap_perfect_get_dims(s)->name, name)))
        fz_die("stap_perfect_size_parse accepted '%s'", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_bytes b = {data, size};
    switch (fz_pick(&b, 3)) {
    case 0: raw(&b); break;
    case 1: inputs(&b); break;
    default: size_name(&b); break;
    }
    return 0;
}
