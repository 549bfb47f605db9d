/* result_info.c: what a file is, and a result file's summary (result_info.h). */
#include "result_info.h"
#include "h5x.h"
#include "io_internal.h"

#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* name ends with suffix */
static int ends_with(const char *name, const char *suffix)
{
    const size_t n = strlen(name), k = strlen(suffix);
    return n >= k && !strcmp(name + n - k, suffix);
}

/* JSON whose head names a SigMF "core:" field (a .sigmf-meta renamed) */
static int looks_like_sigmf_meta(int fd)
{
    char head[65536];
    const ssize_t n = pread(fd, head, sizeof head - 1, 0);
    if (n <= 0) return 0;
    head[n] = '\0';
    const char *p = head;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return *p == '{' && strstr(p, "\"core:") != NULL;
}

stap_file_kind stap_file_kind_of(const char *path, char *size, size_t len)
{
    if (size && len) size[0] = '\0';
    const int fd = stap_open_regular(path, NULL);
    if (fd < 0) return STAP_FILE_UNREADABLE;
    h5_quiet q;
    stap_io_quiet_begin(&q);
    const htri_t h5 = H5Fis_hdf5(path);
    stap_io_quiet_end(&q);
    const int meta = h5 <= 0 && looks_like_sigmf_meta(fd);
    close(fd);
    if (h5 > 0) return STAP_FILE_HDF5;
    if (meta || ends_with(path, ".sigmf-meta") || ends_with(path, ".sigmf-data"))
        return STAP_FILE_SIGMF;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    static const char *const sizes[] = {"small", "medium", "large"};
    for (int i = 0; i < 3; i++) {
        const size_t k = strlen(sizes[i]);
        if (strncmp(base, sizes[i], k) || (strcmp(base + k, "_app_input.bin") &&
                                           strcmp(base + k, "_app_steering_vectors.bin")))
            continue;
        if (size && len) snprintf(size, len, "%s", sizes[i]);
        return STAP_FILE_PERFECT;
    }
    return STAP_FILE_RAW;
}

/* an optional string attribute of obj into buf ("" when absent) */
static int opt_string(h5x *f, const char *obj, const char *name, char *buf, size_t len,
                      stap_error *err)
{
    buf[0] = '\0';
    return stap_h5x_has_attr(f, obj, name) ? stap_h5x_get_string(f, obj, name, buf, len, err) : STAP_OK;
}

/* /config's shape and what was run */
static int read_config(h5x *f, stap_result_info *ri, stap_error *err)
{
    static const char *const inames[] = {"channels", "pulses", "range_gates", "doppler_bins",
                                         "doppler_order", "segments", "training", "beams"};
    int *idst[] = {&ri->channels, &ri->pulses, &ri->range_gates, &ri->doppler_bins,
                   &ri->doppler_order, &ri->segments, &ri->training, &ri->beams};
    const char *g = "/config";
    long long v;
    int st = STAP_OK;
    for (int i = 0; i < 8 && !st; i++)
        if (!(st = stap_h5x_get_count(f, g, inames[i], 0, 1000000000, &v, err))) *idst[i] = (int)v;
    if (st || (st = stap_h5x_get_double(f, g, "loading", &ri->loading, err))) return st;
    const struct {
        const char *name;
        char *buf;
        size_t len;
    } s[] = {{"algorithm", ri->algorithm, sizeof ri->algorithm},
             {"training_window", ri->training_window, sizeof ri->training_window},
             {"window", ri->window, sizeof ri->window},
             {"backend", ri->backend, sizeof ri->backend},
             {"device", ri->device, sizeof ri->device},
             {"engine", ri->engine, sizeof ri->engine},
             {"engine_note", ri->engine_note, sizeof ri->engine_note},
             {"input", ri->input, sizeof ri->input},
             {"input_samples", ri->input_samples, sizeof ri->input_samples},
             {"rtstap_version", ri->version, sizeof ri->version},
             {"stopped", ri->stopped, sizeof ri->stopped}};
    for (size_t i = 0; i < sizeof s / sizeof *s && !st; i++)
        st = opt_string(f, g, s[i].name, s[i].buf, s[i].len, err);
    if (st) return st;
    /* files before the sliding window and JDL: segments, post-Doppler */
    if (!ri->training_window[0]) snprintf(ri->training_window, sizeof ri->training_window, "segment");
    if (!ri->algorithm[0]) snprintf(ri->algorithm, sizeof ri->algorithm, "post-doppler");
    if (stap_h5x_has_attr(f, g, "cpis_lost") &&
        (st = stap_h5x_get_count(f, g, "cpis_lost", 0, (1LL << 62), &ri->cpis_lost, err)))
        return st;
    if (stap_h5x_has_attr(f, g, "cpis_unwritten") &&
        (st = stap_h5x_get_count(f, g, "cpis_unwritten", 0, (1LL << 62), &ri->cpis_unwritten, err)))
        return st;
    return STAP_OK;
}

int stap_result_info_read(const char *path, stap_result_info *ri, stap_error *err)
{
    memset(ri, 0, sizeof *ri);
    ri->cpis_lost = -1;
    h5x *f = NULL;
    int st = stap_h5x_open(&f, path, err);
    if (st) return st;
    ri->has_iq = stap_h5x_exists(f, "/data/iq");
    ri->is_result = stap_h5x_exists(f, "/config");
    if (ri->has_iq || !ri->is_result || (st = read_config(f, ri, err))) {
        stap_h5x_close(f);
        return st;
    }
    long long n = 0;
    const int wrank = stap_h5x_dataset_rank(f, "/weights", &n);
    ri->has_weights = wrank > 0;
    ri->has_output = stap_h5x_dataset_rank(f, "/output/iq", &n) > 0;
    long long rows = 0;
    ri->recording = wrank == 5 || stap_h5x_dataset_rank(f, "/axes/input_cpi", &rows) == 1;
    ri->rows = ri->recording ? rows : 1;
    if (ri->recording && wrank == 5) stap_h5x_dataset_rank(f, "/weights", &ri->rows);
    ri->has_detections = stap_h5x_dataset_rank(f, "/detections", &ri->detections) == 1;
    if (ri->has_detections) st = opt_string(f, "/detections", "cfar", ri->cfar, sizeof ri->cfar, err);
    stap_h5x_close(f);
    return st;
}
