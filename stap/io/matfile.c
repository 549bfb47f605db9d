/* matfile.c: where the cube of an input file is (io_internal.h: stap_io_cube_locate) — /data/iq,
 * the dataset named by stap_read_options.dataset (--dataset), or the one array variable
 * of a file that Octave (`save -hdf5`) or MATLAB (`save -v7.3`) wrote; and whether its
 * extents are MATLAB's in reverse (column-major), docs/matlab.md. */
#include "io_internal.h"
#include "h5check.h"

#include <stdio.h>
#include <string.h>

/* 1 when obj (an absolute path) has the attribute name. Its header is checked first
 * (h5check.h): any attribute call on a damaged one crashes libhdf5 1.10.8 (fuzz_h5_cube);
 * a damaged object is no MATLAB or Octave variable, and the cube's own checks report it. */
static int has_attr(h5_src *s, const char *obj, const char *name)
{
    stap_error e;
    if (stap_h5check_attributes(s->path, s->file, obj, s->lapl, &e) != STAP_OK) return 0;
    return H5Aexists_by_name(s->file, obj, name, s->lapl) > 0;
}

static int is_type(h5_src *s, const char *obj, H5O_type_t want)
{
    H5O_info_t oi;
    return H5Oget_info_by_name(s->file, obj, &oi, s->lapl) >= 0 && oi.type == want;
}

/* An Octave variable: a group with the attribute OCTAVE_NEW_FORMAT holding a dataset `value`
 * (a struct's `value` is a group: not an array). */
static int octave_array(h5_src *s, const char *group, char *value, size_t len)
{
    if (snprintf(value, len, "%s/value", group) >= (int)len) return 0;
    return has_attr(s, group, "OCTAVE_NEW_FORMAT") && stap_io_link_exists(s, value) &&
           is_type(s, value, H5O_TYPE_DATASET);
}

typedef struct found {
    h5_src *s;
    int n;
    char first[256], names[300];
} found;

/* The root's array variables: Octave's (group/value) and MATLAB's (datasets with a
 * MATLAB_class attribute); soft and external links are not followed. */
static herr_t visit_root(hid_t g, const char *name, const H5L_info_t *li, void *user)
{
    (void)g;
    found *f = user;
    char obj[200], value[256];
    if (li->type != H5L_TYPE_HARD || snprintf(obj, sizeof obj, "/%s", name) >= (int)sizeof obj)
        return 0;
    const char *hit = NULL;
    if (octave_array(f->s, obj, value, sizeof value)) hit = value;
    else if (is_type(f->s, obj, H5O_TYPE_DATASET) && has_attr(f->s, obj, "MATLAB_class")) hit = obj;
    if (!hit) return 0;
    if (!f->n++) snprintf(f->first, sizeof f->first, "%s", hit);
    const size_t at = strlen(f->names);
    if (at < sizeof f->names - 1)
        snprintf(f->names + at, sizeof f->names - at, "%s%s", at ? ", " : "", name);
    return 0;
}

/* The dataset's extents are MATLAB's reversed: MATLAB's class attribute on it, or Octave's
 * group around it. */
int stap_io_cube_column_major(h5_src *s, const char *dname)
{
    if (has_attr(s, dname, "MATLAB_class")) return 1;
    const size_t n = strlen(dname);
    if (n < 7 || strcmp(dname + n - 6, "/value")) return 0;
    char group[256];
    snprintf(group, sizeof group, "%.*s", (int)(n - 6), dname);
    return group[0] && has_attr(s, group, "OCTAVE_NEW_FORMAT");
}

int stap_io_cube_locate(h5_src *s, const char *want, char *dname, size_t len, stap_error *err)
{
    char value[256];
    if (want && *want) {
        char obj[256];
        if (snprintf(obj, sizeof obj, "%s%s", want[0] == '/' ? "" : "/", want) >= (int)sizeof obj)
            return stap_fail(err, STAP_EINVAL, "dataset path '%s' is too long", want);
        if (!stap_io_link_exists(s, obj)) {
            const int st = stap_io_src_refused(s, obj, err);
            return st ? st : stap_fail(err, STAP_EFORMAT, "'%s' is not in '%s' (the dataset "
                                       "asked for)", obj, s->path);
        }
        /* an Octave variable is named by its group */
        snprintf(dname, len, "%s", octave_array(s, obj, value, sizeof value) ? value : obj);
    } else if (stap_io_link_exists(s, "/data/iq")) {
        snprintf(dname, len, "/data/iq");
    } else if (stap_io_link_exists(s, "/data/value/iq") && octave_array(s, "/data/value/iq", value, sizeof value)) {
        snprintf(dname, len, "%s", value); /* Octave's `data.iq = x; save -hdf5 f data` */
    } else {
        found f = {.s = s};
        hsize_t idx = 0;
        H5Literate_by_name(s->file, "/", H5_INDEX_NAME, H5_ITER_NATIVE, &idx, visit_root, &f, s->lapl);
        if (f.n > 1)
            return stap_fail(err, STAP_EFORMAT, "'/data/iq' is missing from '%s', and it holds %d "
                             "MATLAB/Octave arrays (%s): name the cube with stap_read_options.dataset", s->path,
                             f.n, f.names);
        if (f.n == 0) return -1;
        snprintf(dname, len, "%s", f.first);
    }
    return STAP_OK;
}
