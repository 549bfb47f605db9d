/* raw.c: raw interleaved complex samples — types, conversion by HDF5, and the import of a
 * raw file of a given shape and axis order into a schema-v1.1 file (see rawio.h). */
#include "io_internal.h"
#include "rawio.h"
#include "h5layout.h"
#include "h5x.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

static const struct {
    const char *name;
    size_t bytes; /* one component */
} raw_types[STAP_RAW_COUNT] = {
    {"ci8", 1},     {"ci16_le", 2}, {"ci16_be", 2}, {"ci32_le", 4}, {"ci32_be", 4},
    {"cf32_le", 4}, {"cf32_be", 4}, {"cf64_le", 8}, {"cf64_be", 8},
};

/* The HDF5 type of one component of a raw sample type (predefined: not closed). */
static hid_t raw_component_type(int t)
{
    switch ((stap_raw_type)t) {
    case STAP_RAW_CI8: return H5T_STD_I8LE;
    case STAP_RAW_CI16_LE: return H5T_STD_I16LE;
    case STAP_RAW_CI16_BE: return H5T_STD_I16BE;
    case STAP_RAW_CI32_LE: return H5T_STD_I32LE;
    case STAP_RAW_CI32_BE: return H5T_STD_I32BE;
    case STAP_RAW_CF32_LE: return H5T_IEEE_F32LE;
    case STAP_RAW_CF32_BE: return H5T_IEEE_F32BE;
    case STAP_RAW_CF64_LE: return H5T_IEEE_F64LE;
    default: return H5T_IEEE_F64BE;
    }
}

const char *stap_raw_type_name(stap_raw_type t)
{
    return t >= 0 && t < STAP_RAW_COUNT ? raw_types[t].name : "?";
}

const char *stap_raw_type_list(void)
{
    return "ci8, ci16_le, ci16_be, ci32_le, ci32_be, cf32_le, cf32_be, cf64_le, cf64_be";
}

size_t stap_raw_sample_bytes(stap_raw_type t) { return 2 * raw_types[t].bytes; }

int stap_raw_type_parse(const char *name, stap_raw_type *t, stap_error *err)
{
    if (!name) name = "";
    for (int k = 0; k < STAP_RAW_COUNT; k++)
        if (!strcasecmp(name, raw_types[k].name)) {
            *t = (stap_raw_type)k;
            return STAP_OK;
        }
    const char *why = "";
    if (tolower((unsigned char)name[0]) == 'c' && tolower((unsigned char)name[1]) == 'u')
        why = " (unsigned samples carry an offset rtstap does not know: convert them to signed)";
    else if (tolower((unsigned char)name[0]) == 'r')
        why = " (real-valued samples: rtstap takes complex ones)";
    return stap_fail(err, STAP_EINVAL, "sample type '%s' is not one rtstap reads%s; expected one of %s",
                     name, why, stap_raw_type_list());
}

int stap_raw_convert(stap_raw_type t, void *raw, size_t m, double scale, stap_cf32 *out, size_t *bad,
                     stap_error *err)
{
    H5E_auto2_t fn = NULL;
    void *data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* byte order first, then the native component to double: HDF5's fast paths */
    const hid_t comp = raw_component_type(t);
    hid_t native = H5Tget_native_type(comp, H5T_DIR_ASCEND);
    int ok = native >= 0 && (H5Tequal(comp, native) > 0 ||
                             H5Tconvert(comp, native, 2 * m, raw, NULL, H5P_DEFAULT) >= 0) &&
             H5Tconvert(native, H5T_NATIVE_DOUBLE, 2 * m, raw, NULL, H5P_DEFAULT) >= 0;
    if (native >= 0) H5Tclose(native);
    H5Eset_auto2(H5E_DEFAULT, fn, data);
    if (!ok) return stap_fail(err, STAP_EFORMAT, "HDF5 cannot convert %s samples", stap_raw_type_name(t));
    const double *v = raw;
    for (size_t k = 0; k < m; k++) {
        const double re = v[2 * k], im = v[2 * k + 1], sr = re * scale, si = im * scale;
        if (!isfinite(re) || !isfinite(im) || fabs(sr) > FLT_MAX || fabs(si) > FLT_MAX) {
            *bad = k;
            if (!isfinite(re) || !isfinite(im))
                return stap_fail(err, STAP_EFORMAT, "is not finite (r = %g, i = %g)", re, im);
            return stap_fail(err, STAP_EFORMAT, "(r = %g, i = %g) times the scale %g overflows "
                             "float32", re, im, scale);
        }
        out[k] = STAP_CMPLXF((float)sr, (float)si);
    }
    return STAP_OK;
}

/* ---- the import ---------------------------------------------------------------------- */

typedef struct source_attr {
    const char *text;
    const stap_sigmf_meta *sigmf;
} source_attr;

/* extra hook: /data/iq's `source` attribute (what the file was made from); a SigMF
 * recording's captures and annotations as its metadata gave them (/sigmf) */
static int write_source(stap_h5_file *f, void *user, stap_error *err)
{
    const source_attr *s = user;
    if (s->text) stap_h5x_put_string(f, "/data/iq", "source", s->text);
    const stap_sigmf_meta *m = s->sigmf;
    if (m) {
        stap_h5x_group(f, "/sigmf");
        stap_h5x_put_string(f, "/sigmf", "datatype", m->datatype);
        stap_h5x_put_string(f, "/sigmf", "captures", m->captures_json ? m->captures_json : "[]");
        stap_h5x_put_string(f, "/sigmf", "annotations", m->annotations_json ? m->annotations_json : "[]");
        stap_h5x_put_llong(f, "/sigmf", "annotation_count", m->annotations);
        stap_h5x_put_llong(f, "/sigmf", "capture_count", m->captures);
    }
    return stap_h5x_status(f, err);
}

typedef struct raw_reader {
    const stap_raw_import *imp;
    int fd;
    size_t n;           /* samples per CPI */
    hsize_t sd[3];      /* stored extents of a CPI */
    unsigned char *raw; /* 16 n bytes */
    stap_cf32 *stored;       /* n, in stored order */
} raw_reader;

/* The stored index k of a CPI as "(channel c, pulse p, range r)". */
static void where_string(const raw_reader *r, size_t k, char *buf, size_t len)
{
    size_t idx[3];
    idx[2] = k % r->sd[2];
    idx[1] = k / r->sd[2] % r->sd[1];
    idx[0] = k / (r->sd[2] * r->sd[1]);
    size_t cpr[3];
    for (int a = 0; a < 3; a++) cpr[r->imp->layout.axis[a]] = idx[a];
    snprintf(buf, len, "(channel %zu, pulse %zu, range %zu)", cpr[0], cpr[1], cpr[2]);
}

/* CPI `c` of the raw file into cube (C, P, R). */
static int raw_read_cpi(raw_reader *r, long long c, stap_cf32 *cube, stap_error *err)
{
    const stap_raw_import *imp = r->imp;
    const size_t bytes = r->n * stap_raw_sample_bytes(imp->type);
    const unsigned long long at = imp->offset + (unsigned long long)c * bytes;
    int st = stap_io_raw_read_bytes(imp, r->fd, c, bytes, r->raw, err);
    if (st) return st;
    size_t bad = 0;
    st = stap_raw_convert(imp->type, r->raw, r->n, imp->scale, r->stored, &bad, err);
    if (st) {
        char where[96];
        where_string(r, bad, where, sizeof where);
        stap_error_prefix(err, "'%s': the %s sample of CPI %lld at %s (byte offset %llu)", imp->input,
                          stap_raw_type_name(imp->type), c, where,
                          at + (unsigned long long)bad * stap_raw_sample_bytes(imp->type));
        return st;
    }
    stap_h5layout_transpose(r->stored, cube, &imp->layout, r->sd);
    return STAP_OK;
}

/* Open the input: a regular file of exactly the size the shape and type need. */
static int raw_open(raw_reader *r, long long cpis, stap_error *err)
{
    const stap_raw_import *imp = r->imp;
    r->fd = open(imp->input, O_RDONLY | O_NONBLOCK);
    if (r->fd < 0) return stap_fail(err, STAP_EIO, "cannot open '%s': %s", imp->input, strerror(errno));
    struct stat sb;
    if (fstat(r->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return stap_fail(err, STAP_EIO, "cannot open '%s': not a regular file", imp->input);
    const size_t sbytes = stap_raw_sample_bytes(imp->type);
    const unsigned long long need =
        imp->offset + (unsigned long long)cpis * r->n * sbytes;
    if ((unsigned long long)sb.st_size != need) {
        char offset[64] = "";
        if (imp->offset) snprintf(offset, sizeof offset, ", after %llu header bytes", imp->offset);
        return stap_fail(err, STAP_EFORMAT, "'%s' holds %llu bytes; %lld CPI%s of %d channels x %d "
                         "pulses x %d range gates of %s (%zu bytes a sample%s) need exactly %llu",
                         imp->input, (unsigned long long)sb.st_size, cpis, cpis == 1 ? "" : "s",
                         imp->channels, imp->pulses, imp->range_gates,
                         stap_raw_type_name(imp->type), sbytes, offset, need);
    }
    return STAP_OK;
}

int stap_raw_import_file(const char *output, const stap_raw_import *imp, stap_error *err)
{
    if (!output || !imp || !imp->input)
        return stap_fail(err, STAP_EINVAL, "stap_raw_import_file: no input or output");
    if (imp->type < 0 || imp->type >= STAP_RAW_COUNT)
        return stap_fail(err, STAP_EINVAL, "stap_raw_import_file: unknown sample type %d", (int)imp->type);
    if (imp->channels < 1 || imp->pulses < 1 || imp->range_gates < 1 || imp->cpis < 0)
        return stap_fail(err, STAP_EINVAL, "shape %d x %d x %d (%lld CPIs): every extent must be >= 1",
                         imp->channels, imp->pulses, imp->range_gates, imp->cpis);
    if (!isfinite(imp->scale) || imp->scale <= 0)
        return stap_fail(err, STAP_EINVAL, "scale %g: expected a finite number > 0", imp->scale);
    const size_t n = (size_t)imp->channels * imp->pulses * imp->range_gates;
    if (n > ((size_t)4 << 30) / 8)
        return stap_fail(err, STAP_EINVAL, "a CPI of %d x %d x %d is more than the 4 GiB (complex64) "
                         "that rtstap reads", imp->channels, imp->pulses, imp->range_gates);
    raw_reader r = {imp, -1, n, {0, 0, 0}, NULL, NULL};
    const hsize_t cpr[3] = {(hsize_t)imp->channels, (hsize_t)imp->pulses, (hsize_t)imp->range_gates};
    for (int k = 0; k < 3; k++) r.sd[k] = cpr[imp->layout.axis[k]];
    const long long cpis = imp->cpis > 0 ? imp->cpis : 1;
    stap_input in;
    memset(&in, 0, sizeof in);
    in.channels = imp->channels;
    in.pulses = imp->pulses;
    in.range_gates = imp->range_gates;
    in.meta = imp->meta;
    source_attr src = {imp->source, imp->sigmf};
    stap_recording_writer *w = NULL;
    int st = raw_open(&r, cpis, err);
    const int integers = imp->keep_integers && imp->type <= STAP_RAW_CI32_BE;
    if (!st && integers) {
        st = stap_io_raw_import_integers(output, imp, r.fd, raw_component_type(imp->type), r.sd, write_source,
                                 &src, err);
        close(r.fd);
        return st;
    }
    if (!st) {
        r.raw = malloc(16 * n);
        r.stored = malloc(sizeof(stap_cf32) * n);
        in.iq = malloc(sizeof(stap_cf32) * n);
        if (!r.raw || !r.stored || !in.iq)
            st = stap_fail(err, STAP_ENOMEM, "out of memory for a CPI of %d x %d x %d", imp->channels,
                           imp->pulses, imp->range_gates);
    }
    if (!st && imp->cpis == 0) {
        st = raw_read_cpi(&r, 0, in.iq, err);
        if (!st) st = stap_input_write(output, &in, write_source, &src, &(stap_write_options){.mode = imp->mode}, err);
    } else if (!st) {
        st = stap_recording_create(&w, output, &in, cpis, &(stap_write_options){.mode = imp->mode}, err);
        for (long long c = 0; c < cpis && !st; c++) {
            if (!(st = raw_read_cpi(&r, c, in.iq, err))) st = stap_recording_write(w, c, in.iq, err);
            if (!st && imp->progress) imp->progress(imp->progress_user, c + 1, cpis);
        }
        if (st) stap_recording_abort(w);
        else st = stap_recording_finish(w, write_source, &src, err);
    }
    if (r.fd >= 0) close(r.fd);
    free(r.raw);
    free(r.stored);
    free(in.iq);
    return st;
}
