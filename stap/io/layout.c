/* layout.c: the axis order of /data/iq (schema v1.1) — axis names and their aliases,
 * the labels a file carries (HDF5 dimension-scale labels, a `dims` attribute), their
 * resolution against a caller's override, the writers' labels, and the transposition of
 * a stored cube into (channel, pulse, range). */
#include "h5layout.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h>

/* ---- names ---------------------------------------------------------------------------- */

static const char *const axis_names[5] = {"channel", "pulse", "range", "cpi", "iq"};

static const struct {
    const char *name;
    int axis;
} aliases[] = {
    {"channel", STAP_AXIS_CHANNEL}, {"channels", STAP_AXIS_CHANNEL},
    {"element", STAP_AXIS_CHANNEL}, {"elements", STAP_AXIS_CHANNEL},
    {"c", STAP_AXIS_CHANNEL},       {"pulse", STAP_AXIS_PULSE},
    {"pulses", STAP_AXIS_PULSE},    {"p", STAP_AXIS_PULSE},
    {"range", STAP_AXIS_RANGE},     {"range_gate", STAP_AXIS_RANGE},
    {"range_gates", STAP_AXIS_RANGE}, {"range_cell", STAP_AXIS_RANGE},
    {"range_cells", STAP_AXIS_RANGE}, {"gate", STAP_AXIS_RANGE},
    {"gates", STAP_AXIS_RANGE},     {"r", STAP_AXIS_RANGE},
    {"cpi", STAP_AXIS_CPI},         {"cpis", STAP_AXIS_CPI},
    {"iq", STAP_AXIS_IQ},           {"i_q", STAP_AXIS_IQ},
    {"complex", STAP_AXIS_IQ},
};

const char *stap_axis_name(int axis)
{
    return axis >= 0 && axis < 5 ? axis_names[axis] : "?";
}

int stap_axis_parse(const char *name, size_t len)
{
    while (len && isspace((unsigned char)*name)) name++, len--;
    while (len && isspace((unsigned char)name[len - 1])) len--;
    char low[16];
    if (len == 0 || len >= sizeof low) return -1;
    for (size_t i = 0; i < len; i++) {
        char c = (char)tolower((unsigned char)name[i]);
        low[i] = c == ' ' || c == '-' ? '_' : c; /* "range gate", "range-gate" */
    }
    low[len] = '\0';
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (!strcmp(low, aliases[i].name)) return aliases[i].axis;
    return -1;
}

int stap_layout_is_identity(const stap_layout *l)
{
    return l->axis[0] == STAP_AXIS_CHANNEL && l->axis[1] == STAP_AXIS_PULSE &&
           l->axis[2] == STAP_AXIS_RANGE;
}

const char *stap_layout_string(const stap_layout *l, int rank, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s, %s, %s", rank == 4 ? "cpi, " : "", stap_axis_name(l->axis[0]),
             stap_axis_name(l->axis[1]), stap_axis_name(l->axis[2]));
    return buf;
}

/* The axes of names[0..n-1]: each a known name, each axis once, `want` cube axes (with
 * want = 4 the first is cpi, with want = 3 cpi is not allowed) and, when iq, a last axis
 * named iq (an interleaved cube's real and imaginary parts; nowhere else). 0 and *l, or -1
 * with the problem in why (without the names: the caller quotes them). */
static int names_to_layout(char (*names)[64], int n, int want, int iq, stap_layout *l,
                           char *why, size_t len)
{
    if (n != want + iq) {
        snprintf(why, len, "%d axes named; the dataset has %d", n, want + iq);
        return -1;
    }
    int seen[5] = {0, 0, 0, 0, 0};
    for (int k = 0; k < n; k++) {
        if (!names[k][0]) {
            snprintf(why, len, "axis %d is unlabelled; label every axis or none", k);
            return -1;
        }
        int a = stap_axis_parse(names[k], strlen(names[k]));
        if (a < 0) {
            snprintf(why, len, "'%s' is not an axis name; expected channel, pulse and range%s%s",
                     names[k], want == 4 ? " after cpi" : "", iq ? ", then iq" : "");
            return -1;
        }
        if (a == STAP_AXIS_IQ && !iq) {
            snprintf(why, len, "iq names an axis, but the elements are complex (a compound): iq "
                     "labels only the last axis, of length 2, of an interleaved integer or real "
                     "cube");
            return -1;
        }
        if (iq && (a == STAP_AXIS_IQ) != (k == n - 1)) {
            snprintf(why, len, "the last axis, of length 2, holds the real and imaginary parts "
                     "and only it is named iq");
            return -1;
        }
        if (seen[a]++) {
            snprintf(why, len, "the %s axis is named twice", axis_names[a]);
            return -1;
        }
        if (a == STAP_AXIS_CPI && want == 3) {
            snprintf(why, len, "cpi names an axis, but a rank-%d cube is one CPI: channel, "
                     "pulse and range%s", 3 + iq, iq ? ", then iq" : "");
            return -1;
        }
        if ((a == STAP_AXIS_CPI) != (want == 4 && k == 0)) {
            snprintf(why, len, "cpi must come first: a recording is cpi, then channel, pulse "
                     "and range in any order");
            return -1;
        }
        if (a != STAP_AXIS_CPI && a != STAP_AXIS_IQ) l->axis[k - (want - 3)] = (unsigned char)a;
    }
    return 0;
}

int stap_layout_parse(const char *text, stap_layout *out, stap_error *err)
{
    if (!text) return stap_fail(err, STAP_EINVAL, "no layout given");
    char names[4][64];
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 4) {
            n++;
            break;
        }
        snprintf(names[n], sizeof names[n], "%.*s", (int)(len < 63 ? len : 63), p);
        /* blanks around a name are not part of it */
        char *s = names[n];
        while (isspace((unsigned char)*s)) memmove(s, s + 1, strlen(s));
        for (size_t e = strlen(s); e && isspace((unsigned char)s[e - 1]); e--) s[e - 1] = '\0';
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    for (int k = 0; k < n && k < 4; k++)
        if (stap_axis_parse(names[k], strlen(names[k])) >= STAP_AXIS_CPI)
            return stap_fail(err, STAP_EINVAL, "layout '%s': name the three cube axes only "
                             "(channel, pulse, range; a recording's cpi axis is always first, an "
                             "interleaved cube's iq axis always last)", text);
    char why[160];
    stap_layout l;
    if (names_to_layout(names, n, 3, 0, &l, why, sizeof why))
        return stap_fail(err, STAP_EINVAL, "layout '%s': %s (e.g. P,C,R or pulse,channel,range)", text,
                         n != 3 ? "three axes expected, comma-separated" : why);
    *out = l;
    return STAP_OK;
}

int stap_shape_looks_transposed(int channels, int pulses, int range_gates, char *why, size_t len)
{
    if (channels > pulses) {
        snprintf(why, len, "more channels (%d) than pulses (%d)", channels, pulses);
        return 1;
    }
    if (range_gates < pulses) {
        snprintf(why, len, "fewer range gates (%d) than pulses (%d)", range_gates, pulses);
        return 1;
    }
    if (len) why[0] = '\0';
    return 0;
}

/* ---- the labels of a dataset ------------------------------------------------------------ */

typedef struct label_list {
    int present;          /* the file has this kind of labels */
    int n;                /* names read                        */
    char name[8][64];     /* as written (unprintable bytes as '?') */
} label_list;

static void put_name(label_list *ll, const char *s, size_t len)
{
    if (ll->n >= 8) {
        ll->n++;
        return;
    }
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    char *d = ll->name[ll->n++];
    size_t m = len < 63 ? len : 63;
    for (size_t i = 0; i < m; i++) {
        unsigned char c = (unsigned char)s[i];
        d[i] = c < 0x20 || c == 0x7f ? '?' : (char)c; /* nothing that would steer a terminal */
    }
    d[m] = '\0';
}

static void join_names(const label_list *ll, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < ll->n && k < 8 && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "",
                               ll->name[k][0] ? ll->name[k] : "''");
    if (ll->n > 8 && at < len) snprintf(buf + at, len - at, ", ...");
}

/* 1 when dset has the attribute, 0 when not, -1 (why filled) when HDF5 cannot tell. */
static int has_attr(hid_t dset, const char *name, const char *what, char *why, size_t len)
{
    htri_t has = H5Aexists(dset, name);
    if (has < 0) snprintf(why, len, "its %s attribute is unreadable", what);
    return has < 0 ? -1 : has > 0;
}

/* HDF5 dimension-scale labels: the DIMENSION_LABELS attribute that H5DSset_label writes.
 * It is checked to be what H5DSget_label expects (one variable-length string per axis:
 * H5DSget_label reads it into an array of `rank` pointers, which another shape would
 * overrun) before H5DSget_label reads it. */
static int read_ds_labels(hid_t dset, int rank, label_list *ll, char *why, size_t len)
{
    memset(ll, 0, sizeof *ll);
    int has = has_attr(dset, "DIMENSION_LABELS", "DIMENSION_LABELS", why, len);
    if (has <= 0) return has;
    hid_t a = H5Aopen(dset, "DIMENSION_LABELS", H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, s = a >= 0 ? H5Aget_space(a) : -1;
    int ok = t >= 0 && s >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 &&
             H5Sget_simple_extent_type(s) == H5S_SIMPLE && H5Sget_simple_extent_ndims(s) == 1 &&
             H5Sget_simple_extent_npoints(s) == rank;
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    if (a >= 0) H5Aclose(a);
    if (!ok) {
        snprintf(why, len, "its DIMENSION_LABELS attribute is not %d variable-length strings "
                 "(what HDF5's dimension labels are)", rank);
        return -1;
    }
    int any = 0;
    for (int k = 0; k < rank; k++) {
        char buf[256] = ""; /* left as it was for an axis without a label */
        ssize_t n = H5DSget_label(dset, (unsigned)k, buf, sizeof buf);
        if (n < 0) {
            snprintf(why, len, "its dimension label %d is unreadable", k);
            return -1;
        }
        put_name(ll, buf, strnlen(buf, sizeof buf - 1));
        any |= ll->name[k][0] != '\0';
    }
    ll->present = any; /* H5DSset_label on no axis yet: all empty, no labels */
    return 0;
}

/* The `dims` attribute: one string "pulse,channel,range", or an array of strings. */
static int read_dims_attr(hid_t dset, label_list *ll, char *why, size_t len)
{
    memset(ll, 0, sizeof *ll);
    int has = has_attr(dset, "dims", "'dims'", why, len);
    if (has <= 0) return has;
    ll->present = 1;
    int st = -1;
    hid_t a = H5Aopen(dset, "dims", H5P_DEFAULT), t = -1, s = -1, mt = -1;
    char *fixed = NULL, *raw = NULL, *vls[8] = {NULL};
    if (a < 0 || (t = H5Aget_type(a)) < 0 || (s = H5Aget_space(a)) < 0) {
        snprintf(why, len, "its 'dims' attribute is unreadable");
        goto done;
    }
    const H5S_class_t sc = H5Sget_simple_extent_type(s);
    const hssize_t npts = sc == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(s);
    const int vlen = H5Tis_variable_str(t) > 0;
    const size_t fsz = H5Tget_size(t);
    if (H5Tget_class(t) != H5T_STRING || npts < 1 || npts > 8 ||
        (sc == H5S_SIMPLE && H5Sget_simple_extent_ndims(s) != 1) || (!vlen && fsz > 1024)) {
        snprintf(why, len, "its 'dims' attribute is not a string or a short list of strings "
                 "(e.g. \"pulse,channel,range\")");
        goto done;
    }
    /* fixed-length strings are read as stored (the file's type: no conversion, which would
     * end each name at its first NUL and drop what follows unseen), then checked */
    mt = vlen ? H5Tcopy(H5T_C_S1) : H5Tcopy(t);
    if (mt < 0 || (vlen && (H5Tset_cset(mt, H5Tget_cset(t)) < 0 ||
                            H5Tset_size(mt, H5T_VARIABLE) < 0)) ||
        (!vlen && (!(fixed = calloc((size_t)npts, fsz + 1)) || !(raw = calloc((size_t)npts, fsz)))) ||
        H5Aread(a, mt, vlen ? (void *)vls : (void *)raw) < 0) {
        snprintf(why, len, "its 'dims' attribute is unreadable");
        goto done;
    }
    for (hssize_t i = 0; i < npts && !vlen; i++) {
        const char *v = raw + (size_t)i * fsz, *nul = memchr(v, 0, fsz);
        const size_t n = nul ? (size_t)(nul - v) : fsz;
        for (const char *q = nul; q && q < v + fsz; q++)
            if (*q) { /* "channel\0pulse": the rest of the name would be dropped unseen */
                snprintf(why, len, "its 'dims' attribute has a NUL byte inside a name (after "
                         "'%.*s'); refused", (int)(n < 64 ? n : 64), v);
                goto done;
            }
        memcpy(fixed + (size_t)i * (fsz + 1), v, n);
    }
    for (hssize_t i = 0; i < npts; i++) {
        const char *v = vlen ? (vls[i] ? vls[i] : "") : fixed + (size_t)i * (fsz + 1);
        if (npts > 1) {
            put_name(ll, v, strlen(v));
            continue;
        }
        for (const char *p = v;;) { /* one string: comma-separated names */
            const char *c = strchr(p, ',');
            put_name(ll, p, c ? (size_t)(c - p) : strlen(p));
            if (!c) break;
            p = c + 1;
        }
    }
    st = 0;
done:
    for (int i = 0; i < 8; i++)
        if (vls[i]) H5free_memory(vls[i]);
    free(fixed);
    free(raw);
    if (mt >= 0) H5Tclose(mt);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return st;
}

int stap_h5layout_resolve(hid_t dset, int rank, int iq, const char *path, const char *dname,
                     const stap_read_options *opts, stap_layout_report *rep, stap_error *err)
{
    const int override = opts && opts->override;
    memset(rep, 0, sizeof *rep);
    rep->rank = rank - iq;
    rep->interleaved = iq;
    label_list ds, at;
    char why[256] = "", dsj[96], atj[96];
    const stap_layout cpr = {{STAP_AXIS_CHANNEL, STAP_AXIS_PULSE, STAP_AXIS_RANGE}};
    stap_layout lds = cpr, lat = cpr;
    int bad = read_ds_labels(dset, rank, &ds, why, sizeof why) ||
              read_dims_attr(dset, &at, why, sizeof why);
    join_names(&ds, dsj, sizeof dsj);
    join_names(&at, atj, sizeof atj);
    rep->labelled = ds.present || at.present || bad;
    if (ds.present && at.present && strcmp(dsj, atj))
        snprintf(rep->labels, sizeof rep->labels, "%s; dims: %s", dsj, atj);
    else
        snprintf(rep->labels, sizeof rep->labels, "%s", ds.present ? dsj : atj);
    char problem[640] = "";
    if (bad) {
        snprintf(problem, sizeof problem, "%s", why);
    } else if (ds.present && names_to_layout(ds.name, ds.n, rank - iq, iq, &lds, why, sizeof why)) {
        snprintf(problem, sizeof problem, "its dimension labels (%s): %s", dsj, why);
    } else if (at.present && names_to_layout(at.name, at.n, rank - iq, iq, &lat, why, sizeof why)) {
        snprintf(problem, sizeof problem, "its 'dims' attribute (%s): %s", atj, why);
    } else if (ds.present && at.present && memcmp(&lds, &lat, sizeof lds)) {
        snprintf(problem, sizeof problem, "its dimension labels (%s) and its 'dims' attribute "
                 "(%s) disagree", dsj, atj);
    }
    rep->layout = cpr;
    if (problem[0] && !override)
        return stap_fail(err, STAP_EFORMAT, "'%s' in '%s': %s (a layout given explicitly "
                         "overrides them)", dname, path, problem);
    const int usable = rep->labelled && !problem[0];
    const stap_layout file = ds.present ? lds : lat;
    if (override) {
        rep->source = STAP_LAYOUT_OVERRIDE;
        rep->layout = opts->layout;
        rep->labels_differ = rep->labelled && (!usable || memcmp(&file, &opts->layout, sizeof file));
    } else if (usable) {
        rep->source = STAP_LAYOUT_LABELS;
        rep->layout = file;
    }
    return STAP_OK;
}

/* ---- writing labels, transposing ------------------------------------------------------ */

int stap_h5layout_write_labels(hid_t dset, int rank)
{
    static const char *const cube[3] = {"channel", "pulse", "range"};
    if (rank == 4 && H5DSset_label(dset, 0, "cpi") < 0) return -1;
    for (int k = 0; k < 3; k++)
        if (H5DSset_label(dset, (unsigned)(k + rank - 3), cube[k]) < 0) return -1;
    return 0;
}

void stap_h5layout_logical_dims(const stap_layout *l, const hsize_t *sd, hsize_t *cpr)
{
    for (int k = 0; k < 3; k++) cpr[l->axis[k]] = sd[k];
}

void stap_h5layout_transpose(const stap_cf32 *src, stap_cf32 *dst, const stap_layout *l, const hsize_t *sd)
{
    hsize_t cpr[3];
    stap_h5layout_logical_dims(l, sd, cpr);
    const size_t stride_cpr[3] = {(size_t)(cpr[1] * cpr[2]), (size_t)cpr[2], 1};
    /* the source stride and the destination stride of each stored axis */
    const size_t ss[3] = {(size_t)(sd[1] * sd[2]), (size_t)sd[2], 1};
    const size_t ds[3] = {stride_cpr[l->axis[0]], stride_cpr[l->axis[1]], stride_cpr[l->axis[2]]};
    if (l->axis[2] == STAP_AXIS_RANGE) { /* the last axis stays last: rows copy in order */
        for (hsize_t i0 = 0; i0 < sd[0]; i0++)
            for (hsize_t i1 = 0; i1 < sd[1]; i1++)
                memcpy(dst + i0 * ds[0] + i1 * ds[1], src + i0 * ss[0] + i1 * ss[1],
                       sizeof(stap_cf32) * (size_t)sd[2]);
        return;
    }
    /* range is stored at position kr < 2: tiles of (axis kr, the last axis), read along the
     * last axis and written along range, each tile small enough to stay in L1 */
    const int kr = l->axis[0] == STAP_AXIS_RANGE ? 0 : 1, ko = 1 - kr;
    enum { TILE = 32 };
    for (hsize_t io = 0; io < sd[ko]; io++)
        for (hsize_t r0 = 0; r0 < sd[kr]; r0 += TILE)
            for (hsize_t j0 = 0; j0 < sd[2]; j0 += TILE) {
                const hsize_t r1 = r0 + TILE < sd[kr] ? r0 + TILE : sd[kr];
                const hsize_t j1 = j0 + TILE < sd[2] ? j0 + TILE : sd[2];
                for (hsize_t j = j0; j < j1; j++) {
                    const stap_cf32 *s0 = src + io * ss[ko] + j;
                    stap_cf32 *d0 = dst + io * ds[ko] + j * ds[2];
                    for (hsize_t r = r0; r < r1; r++) d0[r] = s0[r * ss[kr]];
                }
            }
}
