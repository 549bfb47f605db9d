/* rawint.c: importing integer samples as they are (rawio.h: stap_raw_import.keep_integers) —
 * /data/iq interleaved (the last axis iq), of the input's component type and byte order, in
 * its stored axis order, labelled, with the `scale` attribute: the file the int16 recording
 * path reads end to end (docs/file-format.md "Recorder formats"). */
#include "io_internal.h"
#include "rawio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5_hl.h>

/* /data/iq's labels: cpi (a recording), the stored axes, iq. */
static void label_axes(h5w *w, hid_t dset, const stap_layout *l, int cpi)
{
    static const char *const names[3] = {"channel", "pulse", "range"};
    int ok = !cpi || H5DSset_label(dset, 0, "cpi") >= 0;
    for (int k = 0; ok && k < 3; k++) ok = H5DSset_label(dset, (unsigned)(k + cpi), names[l->axis[k]]) >= 0;
    if (ok) ok = H5DSset_label(dset, (unsigned)(3 + cpi), "iq") >= 0;
    if (!ok) stap_io_w_fail_h5(w, "the axis labels of '/data/iq'");
}

int stap_io_raw_read_bytes(const stap_raw_import *imp, int fd, long long c, size_t bytes, void *buf,
                          stap_error *err)
{
    const unsigned long long at = imp->offset + (unsigned long long)c * bytes;
    size_t got = 0;
    while (got < bytes) {
        ssize_t k = pread(fd, (unsigned char *)buf + got, bytes - got, (off_t)(at + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return stap_fail(err, STAP_EIO, "cannot read CPI %lld of '%s': %s", c, imp->input,
                             k < 0 ? strerror(errno) : "unexpected end of file");
        got += (size_t)k;
    }
    return STAP_OK;
}

/* /data/iq: cpis x the stored extents sd x 2 (one CPI per chunk; one CPI: contiguous), of
 * the component type ct, every CPI copied from fd unconverted. */
static void write_samples(h5w *w, hid_t file, const stap_raw_import *imp, int fd, hid_t ct,
                          const hsize_t *sd, long long cpis, void *buf, hid_t *dset)
{
    const int cpi = imp->cpis > 0, rank = 4 + cpi;
    hsize_t dims[5], chunk[5];
    dims[0] = chunk[0] = (hsize_t)cpis;
    for (int k = 0; k < 3; k++) dims[k + cpi] = chunk[k + cpi] = sd[k];
    dims[3 + cpi] = chunk[3 + cpi] = 2;
    chunk[0] = 1;
    const size_t bytes = (size_t)(sd[0] * sd[1] * sd[2]) * 2 * H5Tget_size(ct);
    hid_t g = stap_io_w_group(w, file, "data"), space = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    *dset = -1;
    if (!w->st && (space < 0 || dcpl < 0 || (cpi && H5Pset_chunk(dcpl, rank, chunk) < 0) ||
                   (*dset = H5Dcreate2(g, "iq", ct, space, H5P_DEFAULT, dcpl, stap_io_no_chunk_cache())) < 0))
        stap_io_w_fail_h5(w, "'/data/iq'");
    if (!w->st) label_axes(w, *dset, &imp->layout, cpi);
    for (long long c = 0; c < cpis && !w->st; c++) {
        hsize_t start[5] = {(hsize_t)c, 0, 0, 0, 0}, count[5];
        memcpy(count, dims, sizeof count);
        count[0] = cpi ? 1 : dims[0];
        int st = stap_io_raw_read_bytes(imp, fd, c, bytes, buf, w->err);
        if (st) {
            w->st = st;
            break;
        }
        stap_io_w_reserve(w, bytes);
        hid_t fs = w->st ? -1 : H5Dget_space(*dset), ms = w->st ? -1 : H5Screate_simple(rank, count, NULL);
        if (!w->st && (fs < 0 || ms < 0 ||
                       H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                       H5Dwrite(*dset, ct, ms, fs, H5P_DEFAULT, buf) < 0))
            stap_io_w_fail_h5(w, "a CPI of '/data/iq'");
        CLOSE_SPACE(fs);
        CLOSE_SPACE(ms);
        if (!w->st && imp->progress) imp->progress(imp->progress_user, c + 1, cpis);
    }
    CLOSE_PLIST(dcpl);
    CLOSE_SPACE(space);
    CLOSE_GROUP(g);
}

int stap_io_raw_import_integers(const char *output, const stap_raw_import *imp, int fd, hid_t ct,
                        const hsize_t *sd, stap_h5_extra_fn extra, void *user, stap_error *err)
{
    const long long cpis = imp->cpis > 0 ? imp->cpis : 1;
    const size_t bytes = (size_t)(sd[0] * sd[1] * sd[2]) * 2 * H5Tget_size(ct);
    void *buf = malloc(bytes);
    if (!buf) return stap_fail(err, STAP_ENOMEM, "out of memory for a CPI of '%s'", imp->input);
    h5_out o;
    h5_quiet q;
    pthread_mutex_lock(&stap_io_h5_lock);
    stap_io_quiet_begin(&q);
    h5w w = {output, err, STAP_OK, NULL, -1};
    int st = stap_h5out_begin(&o, output, imp->mode, err) ? (err ? err->code : STAP_EIO) : STAP_OK;
    if (!st) {
        hid_t file = stap_io_out_create(&w, &o), dset = -1;
        stap_io_w_attr_int(&w, file, "schema_version", H5IO_SCHEMA_VERSION);
        stap_io_w_root(&w, file);
        write_samples(&w, file, imp, fd, ct, sd, cpis, buf, &dset);
        if (dset >= 0) stap_io_w_attr_double(&w, dset, "scale", imp->scale);
        CLOSE_DSET(dset);
        if (imp->meta.has_element_spacing) {
            hid_t g = stap_io_w_group(&w, file, "array");
            if (g >= 0) stap_io_w_attr_double(&w, g, "element_spacing_wavelengths", imp->meta.element_spacing_wavelengths);
            CLOSE_GROUP(g);
        }
        stap_io_w_meta_radar(&w, file, &imp->meta, 0);
        stap_io_w_reserve(&w, 0);
        if (!w.st && extra) {
            struct stap_h5_file hf;
            stap_h5x_for_writer(&hf, &w, file);
            if (extra(&hf, user, err) && !w.st) w.st = err ? err->code : STAP_EIO;
        }
        st = stap_io_out_finish(&w, &o, file);
    }
    stap_io_quiet_end(&q);
    pthread_mutex_unlock(&stap_io_h5_lock);
    free(buf);
    return st;
}
