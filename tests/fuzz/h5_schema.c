/* h5_schema.c: structure-aware HDF5 files from fuzz bytes, and the reader checks (see
 * h5_schema.h). The writer uses the raw HDF5 API, never stap/io/. Every choice is
 * fz_pick: choice 0 is always the valid default. */
#include "h5_schema.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "h5io.h"

enum { MAX_WRITE_ELEMS = 4096, MAX_CHUNK_ELEMS = 1 << 20 };
/* The chunks a write or an early allocation fills, in bytes: chunks larger than the
 * dataset (up to MAX_CHUNK_ELEMS, on extensible dimensions) stay possible, but the storage
 * they add up to is bounded. Without it a 4 x 1 x 107 x 1 x 1 x 3 dataset of 4 096
 * elements took 648 chunks of 1 x 116 x 2 x 256 x 11 x 1: 5 GB written, 33 s an input
 * (CI at d99a5c4: a libFuzzer timeout in the harness's own H5Dwrite; regress-chunks-5gb). */
#define MAX_CHUNKED_BYTES ((size_t)16 << 20)

/* ---- the decoy and the FIFO ---------------------------------------------------------- */

static char decoy_path[4096], fifo_path[4096], ext_path[4096];

static hid_t cf_type(hid_t member, size_t size)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * size);
    H5Tinsert(t, "r", 0, member);
    H5Tinsert(t, "i", size, member);
    return t;
}

static void attr_double(hid_t obj, const char *name, double v)
{
    hid_t s = H5Screate(H5S_SCALAR), a = H5Acreate2(obj, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
    H5Sclose(s);
}

/* A decoy: /data/iq (2 x 3 x 4), /steering (2 x 2), /radar, /array and /g with every
 * attribute, all of value FZ_DECOY_VALUE. */
static void write_decoy(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) fz_die("harness: cannot create the decoy %s", path);
    hid_t t = cf_type(H5T_IEEE_F32LE, 4), mt = cf_type(H5T_NATIVE_DOUBLE, 8);
    double v[2 * 24];
    for (int k = 0; k < 48; k++) v[k] = FZ_DECOY_VALUE;
    const hsize_t d3[3] = {2, 3, 4}, d2[2] = {2, 2};
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const struct { const char *name; int rank; const hsize_t *dims; } ds[] = {
        {"/data/iq", 3, d3}, {"/steering", 2, d2}, {"/d", 3, d3}};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) {
        hid_t s = H5Screate_simple(ds[i].rank, ds[i].dims, NULL);
        hid_t d = H5Dcreate2(f, ds[i].name, t, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        H5Dclose(d);
        H5Sclose(s);
    }
    const char *groups[] = {"/radar", "/array", "/g"};
    for (size_t i = 0; i < 3; i++) {
        hid_t g = H5Gcreate2(f, groups[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        attr_double(g, "prf_hz", FZ_DECOY_VALUE);
        attr_double(g, "carrier_frequency_hz", FZ_DECOY_VALUE);
        attr_double(g, "sample_rate_hz", FZ_DECOY_VALUE);
        attr_double(g, "element_spacing_wavelengths", FZ_DECOY_VALUE);
        H5Gclose(g);
    }
    H5Pclose(lcpl);
    H5Tclose(t);
    H5Tclose(mt);
    H5Fclose(f);
}

void fzh5_setup(void)
{
    if (decoy_path[0]) return;
    fz_h5_init();
    fz_path("decoy.h5", decoy_path, sizeof decoy_path);
    fz_path("fifo.h5", fifo_path, sizeof fifo_path);
    fz_path("external.bin", ext_path, sizeof ext_path);
    write_decoy(decoy_path);
    fz_remove(fifo_path);
    if (mkfifo(fifo_path, 0600) != 0) fz_die("harness: cannot make the FIFO %s", fifo_path);
    float ext[64];
    for (int k = 0; k < 64; k++) ext[k] = (float)FZ_DECOY_VALUE;
    fz_write_file(ext_path, ext, sizeof ext);
}

/* ---- types --------------------------------------------------------------------------- */

typedef struct bctx {
    fz_bytes *b;
    hid_t file, lcpl;
} bctx;

/* the other file a link or a mapping points at: the decoy, or the FIFO */
static const char *other_file(bctx *c) { return fz_pick(c->b, 2) ? fifo_path : decoy_path; }

/* An IEEE half-precision float (class H5T_FLOAT, 2 bytes), or f32 where HDF5 refuses it. */
static hid_t half_type(void)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_precision(t, 16) < 0 ||
        H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return H5Tcopy(H5T_IEEE_F32LE);
    }
    return t;
}

static hid_t enum_type(void)
{
    hid_t t = H5Tenum_create(H5T_NATIVE_INT);
    int v0 = 0, v1 = 1;
    H5Tenum_insert(t, "a", &v0);
    H5Tenum_insert(t, "b", &v1);
    return t;
}

/* A scalar type: floats first (valid members and attributes), then everything else.
 * *ptr is set when values of the type hold pointers (not written from raw bytes). */
static hid_t scalar_type(bctx *c, int *ptr)
{
    const hsize_t two = 2;
    hid_t t, s;
    switch (fz_pick(c->b, 18)) {
    case 0: return H5Tcopy(H5T_IEEE_F32LE);
    case 1: return H5Tcopy(H5T_IEEE_F64LE);
    case 2: return H5Tcopy(H5T_IEEE_F32BE);
    case 3: return H5Tcopy(H5T_IEEE_F64BE);
    case 4: return half_type();
    case 5: return H5Tcopy(H5T_NATIVE_LDOUBLE);
    case 6: return H5Tcopy(H5T_STD_I32LE);
    case 7: return H5Tcopy(H5T_STD_U8LE);
    case 8: return H5Tcopy(H5T_STD_I64BE);
    case 9:
        t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 1 + fz_pick(c->b, 8));
        return t;
    case 10:
        *ptr = 1;
        t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        return t;
    case 11: return H5Tcreate(H5T_OPAQUE, 1 + fz_pick(c->b, 8));
    case 12: return H5Tcopy(H5T_STD_B16LE);
    case 13: return enum_type();
    case 14: return H5Tarray_create2(H5T_IEEE_F32LE, 1, &two);
    case 15: *ptr = 1; return H5Tvlen_create(H5T_IEEE_F32LE);
    case 16: *ptr = 1; return H5Tcopy(H5T_STD_REF_OBJ);
    default:
        t = H5Tcreate(H5T_COMPOUND, 4);
        s = H5Tcopy(H5T_IEEE_F32LE);
        H5Tinsert(t, "r", 0, s);
        H5Tclose(s);
        return t;
    }
}

static const char *member_name(bctx *c, int k)
{
    static const char *const names[] = {
        "re", "im", "R", "I", "j", "r ", "real",
        /* longer than the reader's list of member names */
        ("a_member_name_long_enough_to_fill_the_message_buffer_of_the_reader_on_its_own_and_"
         "more_than_that_so_that_the_list_is_cut_off_somewhere_in_the_middle")};
    unsigned p = fz_pick(c->b, 16);
    if (p < 8) return k == 0 ? "r" : k == 1 ? "i" : "j"; /* the default names */
    return names[p - 8];
}

/* The element type of a complex dataset: the {r, i} compound of float32 by default. */
static hid_t complex_type(bctx *c, int *ptr)
{
    *ptr = 0;
    unsigned form = fz_pick(c->b, 8);
    if (form == 7) return scalar_type(c, ptr); /* not a compound */
    int members = 2;
    if (form == 6) members = (int)fz_pick(c->b, 5); /* 0 .. 4 members */
    hid_t mt[4];
    size_t off[4], size = 0;
    for (int k = 0; k < members; k++) {
        int p = 0;
        if (form == 0) mt[k] = H5Tcopy(H5T_IEEE_F32LE);
        else if (form == 1) mt[k] = H5Tcopy(H5T_IEEE_F64LE);
        else if (form == 2) mt[k] = H5Tcopy(H5T_IEEE_F32BE);
        else mt[k] = scalar_type(c, &p);
        *ptr |= p;
        size += fz_pick(c->b, 4) == 3 ? 4 : 0; /* padding before the member */
        off[k] = size;
        size += H5Tget_size(mt[k]);
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, size ? size : 1);
    const int swap = form == 3; /* stored {i, r} */
    for (int k = 0; k < members; k++) {
        const int kk = swap && k < 2 ? 1 - k : k;
        const char *name = form >= 4 ? member_name(c, kk) : kk == 0 ? "r" : kk == 1 ? "i" : "j";
        H5Tinsert(t, name, off[k], mt[k]); /* a duplicate name fails: one member less */
        H5Tclose(mt[k]);
    }
    return t;
}

/* ---- data ---------------------------------------------------------------------------- */

static double special(bctx *c)
{
    switch (fz_pick(c->b, 10)) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 1e39; /* beyond float32 */
    case 4: return -1e300;
    case 5: return FLT_MAX;
    case 6: return 1e-45;
    case 7: return -0.0;
    case 8: return 4e-310; /* a float64 denormal */
    default: return (double)(int32_t)fz_u32(c->b) / 16.0;
    }
}

/* Fill n values of type t: complex compounds through a {r, i} float64 memory type from
 * generated values (a few of them special), other fixed-size types from raw bytes. */
static void write_values(bctx *c, hid_t dset, hid_t t, int ptr, size_t n)
{
    const size_t tsize = H5Tget_size(t);
    if (ptr || n == 0 || n > MAX_WRITE_ELEMS || tsize == 0 || tsize > 64) return;
    const unsigned how = fz_pick(c->b, 4);
    if (how == 3) return; /* leave the fill values */
    if (how < 2) {
        double *v = malloc(2 * n * sizeof *v);
        for (size_t k = 0; k < 2 * n; k++) v[k] = (double)((int)(k % 7) - 3) * 0.5;
        for (unsigned p = how ? fz_pick(c->b, 4) : 0; p > 0; p--) {
            const size_t at = fz_u32(c->b) % (2 * n);
            v[at] = special(c);
        }
        hid_t mt = cf_type(H5T_NATIVE_DOUBLE, 8);
        herr_t w = H5Dwrite(dset, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        H5Tclose(mt);
        free(v);
        if (w >= 0) return;
    }
    /* raw bytes, repeating the next 16 of the input */
    uint8_t pat[16], *raw = malloc(n * tsize);
    fz_take(c->b, pat, sizeof pat);
    for (size_t k = 0; k < n * tsize; k++) raw[k] = pat[k % sizeof pat];
    H5Dwrite(dset, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
    free(raw);
}

/* ---- datasets ------------------------------------------------------------------------ */

/* The dataspace: the default rank and shape, or another rank (0 = scalar, -1 = null),
 * dimensions from 0 to huge. *n is its element count (SIZE_MAX when over 2^62). */
static hid_t make_space(bctx *c, int def_rank, const hsize_t *def_dims, int *rank, hsize_t *dims,
                        hsize_t *maxdims, size_t *n)
{
    unsigned r = fz_pick(c->b, 9);
    *rank = r == 0 ? def_rank : r == 8 ? -1 : (int)r - 1;
    *n = 1;
    if (*rank < 0) {
        *n = 0;
        return H5Screate(H5S_NULL);
    }
    if (*rank == 0) return H5Screate(H5S_SCALAR);
    const int unlimited = fz_pick(c->b, 4) == 3;
    for (int k = 0; k < *rank; k++) {
        const hsize_t def = k < def_rank && *rank == def_rank ? def_dims[k] : 1;
        unsigned p = fz_pick(c->b, 8);
        dims[k] = p == 0 ? def : p <= 4 ? p : p == 5 ? 0 : p == 6 ? fz_u8(c->b) : (hsize_t)fz_u32(c->b) << fz_pick(c->b, 16);
        maxdims[k] = unlimited || dims[k] == 0 ? H5S_UNLIMITED : dims[k];
        *n = dims[k] && *n > ((size_t)1 << 62) / dims[k] ? SIZE_MAX : *n * dims[k];
    }
    return H5Screate_simple(*rank, dims, maxdims);
}

/* The creation properties: contiguous, compact, chunked (with filters), external raw
 * storage or a virtual mapping into another file. *data: whether values may be written. */
static hid_t make_dcpl(bctx *c, hid_t type, int ptr, int rank, const hsize_t *dims,
                       const hsize_t *maxdims, size_t n, int *data)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    *data = 1;
    int layout = (int)fz_pick(c->b, 8);
    int extensible = 0;
    for (int k = 0; k < rank; k++) extensible |= maxdims[k] == H5S_UNLIMITED;
    if (extensible && layout < 2) layout = 2; /* extensible datasets are chunked */
    if (rank < 1 && layout >= 2 && layout <= 4) layout = 0;
    if (layout == 1) {
        H5Pset_layout(dcpl, H5D_COMPACT);
    } else if (layout >= 2 && layout <= 4) {
        hsize_t chunk[H5S_MAX_RANK];
        size_t elems = 1;
        for (int k = 0; k < rank; k++) {
            const unsigned p = fz_pick(c->b, 4);
            hsize_t want = p == 0 ? dims[k] : p == 1 ? 1 : p == 2 ? 2 : 1 + fz_u8(c->b);
            if (maxdims[k] != H5S_UNLIMITED && want > dims[k]) want = dims[k];
            if (want < 1) want = 1;
            if (elems * want > MAX_CHUNK_ELEMS) want = 1;
            chunk[k] = want;
            elems *= want;
        }
        /* the chunks over the extent: when they add up to more than MAX_CHUNKED_BYTES,
         * no chunk dimension exceeds the dataset's (then at most 2^rank x n elements) */
        size_t nchunks = 1, tsize = H5Tget_size(type);
        for (int k = 0; k < rank; k++) {
            const hsize_t per = dims[k] ? (dims[k] + chunk[k] - 1) / chunk[k] : 1;
            nchunks = nchunks > SIZE_MAX / per ? SIZE_MAX : nchunks * per;
        }
        if (tsize == 0 || nchunks > MAX_CHUNKED_BYTES / tsize / elems)
            for (int k = 0; k < rank; k++)
                if (chunk[k] > dims[k]) chunk[k] = dims[k] ? dims[k] : 1;
        H5Pset_chunk(dcpl, rank, chunk);
        if (layout >= 3) {
            if (fz_pick(c->b, 2)) H5Pset_shuffle(dcpl);
            if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) H5Pset_deflate(dcpl, fz_pick(c->b, 10));
            if (layout == 4) H5Pset_fletcher32(dcpl);
        }
    } else if (layout == 5) {
        H5Pset_external(dcpl, fz_pick(c->b, 2) ? fifo_path : ext_path, 0, H5F_UNLIMITED);
        *data = 0;
    } else if (layout == 6 && rank >= 1) {
        hid_t vs = H5Screate_simple(rank, dims, maxdims), src = H5Screate_simple(rank, dims, NULL);
        H5Pset_virtual(dcpl, vs, other_file(c), fz_pick(c->b, 2) ? "/d" : "/data/iq", src);
        H5Sclose(vs);
        H5Sclose(src);
        *data = 0;
    }
    const unsigned fill = fz_pick(c->b, 4);
    /* early allocation writes the fill values at once: only for small datasets */
    if (fill == 1 && n <= MAX_WRITE_ELEMS) H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    if (fill == 2 && !ptr && H5Tget_size(type) <= 64) {
        uint8_t v[64];
        fz_take(c->b, v, sizeof v);
        H5Pset_fill_value(dcpl, type, v);
    }
    if (fill == 3) H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    return dcpl;
}

/* A dataset at `where` (a full path) from the choices of type, space and layout. */
static void dataset_at(bctx *c, const char *where, int def_rank, const hsize_t *def_dims)
{
    int ptr, rank, data;
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    size_t n;
    hid_t type = complex_type(c, &ptr);
    hid_t space = make_space(c, def_rank, def_dims, &rank, dims, maxdims, &n);
    hid_t dcpl = make_dcpl(c, type, ptr, rank, dims, maxdims, n, &data);
    hid_t d = H5Dcreate2(c->file, where, type, space, c->lcpl, dcpl, H5P_DEFAULT);
    if (d >= 0 && data) write_values(c, d, type, ptr, n);
    if (d >= 0) H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Tclose(type);
}

/* The object `name` (a full path, e.g. "/data/iq"): absent, a dataset, a group, or links
 * in the file and out of it. `make` creates the real object at a path. */
typedef void (*make_fn)(bctx *c, const char *where, const void *user);

static void object_at(bctx *c, const char *name, make_fn make, const void *user)
{
    char ext_name[300];
    snprintf(ext_name, sizeof ext_name, "/ext%s", name);
    for (char *p = ext_name + 1; *p; p++)
        if (*p == '/') *p = '_';
    const char *slash = strrchr(name, '/');
    switch (fz_pick(c->b, 11)) {
    case 0: make(c, name, user); break;
    case 1: break; /* absent */
    case 2: H5Gclose(H5Gcreate2(c->file, name, c->lcpl, H5P_DEFAULT, H5P_DEFAULT)); break;
    case 3: /* a soft link to the object elsewhere */
        make(c, "/hidden/obj", user);
        H5Lcreate_soft("/hidden/obj", c->file, name, c->lcpl, H5P_DEFAULT);
        break;
    case 4: H5Lcreate_soft("/nowhere", c->file, name, c->lcpl, H5P_DEFAULT); break;
    case 5: H5Lcreate_external(other_file(c), name, c->file, name, c->lcpl, H5P_DEFAULT); break;
    case 6: /* a soft link to an external link */
        H5Lcreate_external(other_file(c), name, c->file, ext_name, c->lcpl, H5P_DEFAULT);
        H5Lcreate_soft(ext_name, c->file, name, c->lcpl, H5P_DEFAULT);
        break;
    case 7: /* a second hard link */
        make(c, "/hidden/obj2", user);
        H5Lcreate_hard(c->file, "/hidden/obj2", c->file, name, c->lcpl, H5P_DEFAULT);
        break;
    case 8: /* the parent group is an external link (for /data/iq) */
        if (slash && slash != name) {
            char parent[256];
            snprintf(parent, sizeof parent, "%.*s", (int)(slash - name), name);
            H5Lcreate_external(other_file(c), parent, c->file, parent, c->lcpl, H5P_DEFAULT);
        }
        break;
    case 9: /* the parent group is a soft link */
        if (slash && slash != name) {
            char parent[256], real[300];
            snprintf(parent, sizeof parent, "%.*s", (int)(slash - name), name);
            snprintf(real, sizeof real, "/real_parent%s", slash);
            make(c, real, user);
            H5Lcreate_soft("/real_parent", c->file, parent, c->lcpl, H5P_DEFAULT);
        }
        break;
    default: { /* a scalar integer dataset of that name */
        hid_t s = H5Screate(H5S_SCALAR);
        H5Dclose(H5Dcreate2(c->file, name, H5T_STD_I32LE, s, c->lcpl, H5P_DEFAULT, H5P_DEFAULT));
        H5Sclose(s);
    }
    }
}

typedef struct cube_spec {
    int rank;
    hsize_t dims[4];
} cube_spec;

static void make_dataset(bctx *c, const char *where, const void *user)
{
    const cube_spec *s = user;
    dataset_at(c, where, s->rank, s->dims);
}

static void build_cube(bctx *c)
{
    /* a one-CPI cube, or a recording of two CPIs */
    static const cube_spec one = {3, {2, 3, 4}}, rec = {4, {2, 2, 3, 4}};
    object_at(c, "/data/iq", make_dataset, fz_pick(c->b, 4) == 3 ? &rec : &one);
}

static void build_steering(bctx *c)
{
    static const cube_spec steer = {2, {2, 2}};
    object_at(c, "/steering", make_dataset, &steer);
}

/* ---- attributes ---------------------------------------------------------------------- */

static void attribute(bctx *c, hid_t obj, const char *name, double def)
{
    if (fz_pick(c->b, 8) == 7) return; /* absent */
    int ptr = 0;
    const unsigned tp = fz_pick(c->b, 4);
    hid_t type = tp == 0 ? H5Tcopy(H5T_IEEE_F64LE) : scalar_type(c, &ptr);
    hid_t space;
    const unsigned sp = fz_pick(c->b, 6);
    size_t n = 1;
    if (sp == 0) space = H5Screate(H5S_SCALAR);
    else if (sp == 5) {
        space = H5Screate(H5S_NULL);
        n = 0;
    } else {
        hsize_t d = sp - 1; /* 0 .. 3 values */
        space = H5Screate_simple(1, &d, NULL);
        n = (size_t)d;
    }
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0 && n > 0) {
        const unsigned how = fz_pick(c->b, 3);
        double v[3] = {def, def, def};
        if (how == 1)
            for (size_t k = 0; k < n; k++) v[k] = special(c);
        if (how < 2 && !ptr && H5Awrite(a, H5T_NATIVE_DOUBLE, v) >= 0) {
            /* written as numbers */
        } else if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
            char text[16];
            fz_take(c->b, text, sizeof text - 1);
            text[sizeof text - 1] = '\0';
            const char *p[3] = {text, text, text};
            H5Awrite(a, type, p);
        } else if (!ptr && H5Tget_size(type) <= 64) {
            uint8_t raw[3 * 64];
            fz_take(c->b, raw, n * H5Tget_size(type));
            H5Awrite(a, type, raw);
        }
    }
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
}

typedef struct attr_spec {
    const char *names[3];
    double values[3];
} attr_spec;

static void make_attr_group(bctx *c, const char *where, const void *user)
{
    const attr_spec *s = user;
    /* a group by default; a dataset can carry the attributes too */
    hid_t obj, sp = -1;
    const int dataset = fz_pick(c->b, 4) == 3;
    if (dataset) {
        sp = H5Screate(H5S_SCALAR);
        obj = H5Dcreate2(c->file, where, H5T_STD_I32LE, sp, c->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    } else {
        obj = H5Gcreate2(c->file, where, c->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    }
    if (obj < 0) { /* the name is taken (e.g. /hidden/obj by another object) */
        if (sp >= 0) H5Sclose(sp);
        return;
    }
    for (int k = 0; k < 3 && s->names[k]; k++) attribute(c, obj, s->names[k], s->values[k]);
    /* more attributes (dense attribute storage with the latest file format) */
    for (unsigned k = fz_pick(c->b, 4) == 3 ? fz_pick(c->b, 24) : 0; k > 0; k--) {
        char extra[32];
        snprintf(extra, sizeof extra, "extra_%u", k);
        attribute(c, obj, extra, 1.0);
    }
    if (dataset) {
        H5Dclose(obj);
        H5Sclose(sp);
    } else {
        H5Gclose(obj);
    }
}

static void build_attributes(bctx *c)
{
    static const attr_spec radar = {{"prf_hz", "carrier_frequency_hz", "sample_rate_hz"},
                                    {2000.0, 1.25e9, 5e6}};
    static const attr_spec array = {{"element_spacing_wavelengths", NULL, NULL}, {0.45, 0, 0}};
    object_at(c, "/radar", make_attr_group, &radar);
    object_at(c, "/array", make_attr_group, &array);
}

/* ---- damaged object headers -------------------------------------------------------------
 * A version-1 object header has no checksum: libhdf5 1.10.8 decodes a damaged attribute
 * message past its end, in every attribute call (../shared/data/regress/damaged-header-
 * label-lookup.h5). The readers check those messages first (stap/io/check.c); this damage
 * exercises that check: one field of one attribute message of a chosen object — the name,
 * datatype or dataspace size, the name's terminator, the datatype's element size, the
 * dataspace's rank or first extent — is overwritten after the file is written. (Damage
 * anywhere else in a header crashes libhdf5 itself in ways no reader can see beforehand:
 * fuzz_h5_file's byte mutations find those, and run.sh counts them as libhdf5's.) */

static uint64_t le_get(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | p[k];
    return v;
}

static herr_t no_external(const char *pf, const char *pg, const char *cf, const char *co,
                          unsigned *flags, hid_t fapl, void *user)
{
    return -1; /* the damage is for objects in this file (another may be a FIFO) */
}

static void damage_attributes(const char *path, fz_bytes *b)
{
    const unsigned what = fz_pick(b, 4);
    if (!what) return;
    static const char *const objects[] = {"/data/iq", "/radar", "/array"};
    const char *name = objects[what - 1];
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return;
    H5O_info_t oi;
    hsize_t base = 0;
    size_t addr_len = 8, size_len = 8;
    hid_t fcpl = H5Fget_create_plist(f);
    H5Pget_userblock(fcpl, &base);
    H5Pget_sizes(fcpl, &addr_len, &size_len);
    H5Pclose(fcpl);
    hid_t lapl = H5Pcreate(H5P_LINK_ACCESS);
    H5Pset_elink_cb(lapl, no_external, NULL);
    const int v1 = H5Oget_info_by_name2(f, name, &oi, H5O_INFO_BASIC | H5O_INFO_HDR, lapl) >= 0 &&
                   oi.hdr.version == 1;
    H5Pclose(lapl);
    H5Fclose(f);
    if (!v1) return;
    FILE *fp = fopen(path, "r+b");
    if (!fp) return;
    /* the attribute messages: their offsets in the file, chunk by chunk */
    uint64_t chunk[16], len[16], attr[32];
    int nchunks = 0, nattr = 0;
    unsigned char pre[16], *buf = NULL;
    if (fseeko(fp, (off_t)(base + oi.addr), SEEK_SET) == 0 && fread(pre, 1, 16, fp) == 16) {
        chunk[0] = base + oi.addr + 16;
        len[0] = le_get(pre + 8, 4);
        nchunks = 1;
    }
    for (int c = 0; c < nchunks && len[c] <= (1 << 16); c++) {
        free(buf);
        buf = malloc(len[c] + 1);
        if (!buf || fseeko(fp, (off_t)chunk[c], SEEK_SET) || fread(buf, 1, len[c], fp) != len[c]) break;
        for (uint64_t at = 0; at + 8 <= len[c];) {
            const unsigned type = (unsigned)le_get(buf + at, 2), size = (unsigned)le_get(buf + at + 2, 2);
            if (type == 0x0c && nattr < 32) attr[nattr++] = chunk[c] + at + 8;
            if (type == 0x10 && nchunks < 16 && size >= addr_len + size_len) {
                chunk[nchunks] = base + le_get(buf + at + 8, (int)addr_len);
                len[nchunks++] = le_get(buf + at + 8 + addr_len, (int)size_len);
            }
            at += 8 + size;
        }
    }
    free(buf);
    if (nattr) {
        const uint64_t m = attr[fz_pick(b, (unsigned)nattr)];
        unsigned char h[8];
        if (fseeko(fp, (off_t)m, SEEK_SET) == 0 && fread(h, 1, 8, fp) == 8) {
            const int version = h[0];
            const uint64_t ns = le_get(h + 2, 2), dt = le_get(h + 4, 2);
            const uint64_t name_at = version == 3 ? 9 : 8;
            const uint64_t dt_at = name_at + (version == 1 ? (ns + 7) / 8 * 8 : ns);
            const uint64_t ds_at = dt_at + (version == 1 ? (dt + 7) / 8 * 8 : dt);
            struct { uint64_t off; int n; } field[] = {
                {2, 2}, {4, 2}, {6, 2}, {name_at + ns - 1, 1}, {dt_at + 4, 4}, {ds_at + 1, 1},
                {ds_at + (h[0] == 1 ? 8 : 4), (int)size_len}};
            const unsigned k = fz_pick(b, sizeof field / sizeof *field);
            unsigned char v[8];
            fz_take(b, v, sizeof v);
            if (fseeko(fp, (off_t)(m + field[k].off), SEEK_SET) == 0)
                fwrite(v, 1, (size_t)field[k].n, fp);
        }
    }
    fclose(fp);
}

/* ---- the file ------------------------------------------------------------------------ */

void fzh5_build(const char *path, fz_bytes *b, fzh5_focus focus)
{
    fzh5_setup();
    fz_remove(path);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    const unsigned opts = fz_pick(b, 8);
    if (opts & 1) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    if (opts & 2) H5Pset_userblock(fcpl, 512);
    if (opts & 4) H5Pset_sym_k(fcpl, 2, 2);
    bctx c = {b, H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl), H5Pcreate(H5P_LINK_CREATE)};
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (c.file < 0) fz_die("harness: cannot create %s", path);
    H5Pset_create_intermediate_group(c.lcpl, 1);
    if (focus == FZH5_CUBE_FIRST) {
        build_cube(&c);
        build_steering(&c);
        build_attributes(&c);
    } else {
        build_attributes(&c);
        build_steering(&c);
        build_cube(&c);
    }
    H5Pclose(c.lcpl);
    if (H5Fclose(c.file) < 0) fz_die("harness: cannot close %s", path);
    damage_attributes(path, b);
}

/* ---- the readers --------------------------------------------------------------------- */

static void check_samples(const char *what, const stap_cf32 *x, size_t n, int finite)
{
    for (size_t k = 0; k < n; k++) {
        const float re = crealf(x[k]), im = cimagf(x[k]);
        if (re == (float)FZ_DECOY_VALUE || im == (float)FZ_DECOY_VALUE)
            fz_die("%s returned the decoy file's sample at %zu: it read another file", what, k);
        if (finite && (!isfinite(re) || !isfinite(im)))
            fz_die("%s returned a non-finite sample at %zu", what, k);
    }
}

static void check_meta(const char *what, int has, double v, const char *name)
{
    if (!has) return;
    if (v == FZ_DECOY_VALUE) fz_die("%s took %s from the decoy file: it read another file", what, name);
    if (!isfinite(v) || v <= 0) fz_die("%s accepted %s = %g", what, name, v);
}

static void check_input(const char *what, const stap_input *in, int have_iq)
{
    if (in->channels < 1 || in->pulses < 1 || in->range_gates < 1)
        fz_die("%s accepted a %d x %d x %d cube", what, in->channels, in->pulses, in->range_gates);
    const size_t n = (size_t)in->channels * in->pulses * in->range_gates;
    if (have_iq != (in->iq != NULL)) fz_die("%s: iq is %s", what, in->iq ? "set" : "NULL");
    if (in->iq) check_samples(what, in->iq, n, 1);
    if ((in->steering_beams > 0) != (in->steering != NULL) || in->steering_beams < 0 ||
        (in->steering_beams > 0 && in->steering_len < 1))
        fz_die("%s: steering %d x %d at %p", what, in->steering_beams, in->steering_len,
               (void *)in->steering);
    if (in->steering)
        check_samples(what, in->steering, (size_t)in->steering_beams * in->steering_len, 1);
    const stap_radar_meta *m = &in->meta;
    check_meta(what, m->has_prf, m->prf_hz, "prf_hz");
    check_meta(what, m->has_carrier, m->carrier_frequency_hz, "carrier_frequency_hz");
    check_meta(what, m->has_sample_rate, m->sample_rate_hz, "sample_rate_hz");
    check_meta(what, m->has_element_spacing, m->element_spacing_wavelengths,
               "element_spacing_wavelengths");
}

/* What stap_input_read accepted (one CPI) the recording reader must read alike. */
static void same_as_input(const stap_input *one, const stap_input *in, int rank, const stap_cf32 *cpi0,
                          int st0, const stap_error *err)
{
    const size_t n = (size_t)in->channels * in->pulses * in->range_gates;
    if (rank != 3 || in->channels != one->channels || in->pulses != one->pulses ||
        in->range_gates != one->range_gates)
        fz_die("stap_recording_open: rank %d, %d x %d x %d; stap_input_read: %d x %d x %d", rank,
               in->channels, in->pulses, in->range_gates, one->channels, one->pulses,
               one->range_gates);
    if (st0) fz_die("stap_input_read read the cube, stap_recording_read did not: %s", err->msg);
    if (memcmp(cpi0, one->iq, n * sizeof *cpi0))
        fz_die("stap_recording_read and stap_input_read read different samples");
    const size_t nv = (size_t)in->steering_beams * in->steering_len;
    if (in->steering_beams != one->steering_beams || in->steering_len != one->steering_len ||
        (nv && memcmp(in->steering, one->steering, nv * sizeof(stap_cf32))) ||
        memcmp(&in->meta, &one->meta, sizeof in->meta))
        fz_die("stap_recording_open and stap_input_read read different /steering or metadata");
}

/* stap_recording_open and reads of the first, last and one-past-last CPI; `one` is what
 * stap_input_read returned for the file, or NULL when it refused it. */
static void read_recording(const char *path, const stap_input *one)
{
    stap_recording *rec = NULL;
    stap_input in;
    stap_error err;
    stap_error_clear(&err);
    fz_h5_ids ids;
    fz_h5_ids_get(&ids);
    fz_watch("stap_recording_open");
    int st = stap_recording_open(path, &rec, &in, NULL, &err);
    fz_unwatch();
    fz_check_status("stap_recording_open", st, &err);
    if (st) {
        if (rec) fz_die("stap_recording_open failed but returned a recording");
        if (one) fz_die("stap_input_read accepted the file, stap_recording_open: %s", err.msg);
        fz_h5_ids_same("a failed stap_recording_open", &ids);
        return;
    }
    check_input("stap_recording_open", &in, 0);
    const long long cpis = stap_recording_cpis(rec);
    const int rank = stap_recording_rank(rec);
    if (cpis < 1 || (rank != 3 && rank != 4) || (rank == 3 && cpis != 1))
        fz_die("stap_recording_open: %lld CPIs of rank %d", cpis, rank);
    const size_t n = (size_t)in.channels * in.pulses * in.range_gates;
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * n);
    if (!cube) fz_die("harness: out of memory for %zu samples", n);
    const long long which[3] = {0, cpis - 1, cpis};
    /* Two NaNs that no conversion makes mark the samples a read must write. A file may
     * hold the first one itself (libFuzzer learns it from the comparison below and writes
     * it into the data): a sample is unwritten only when a second read, of a cube filled
     * with the other marker, leaves that one too. */
    const uint32_t untouched[2] = {0x7fbadbadu, 0x7fc0ffeeu};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < 2 * n; i++) memcpy((float *)cube + i, &untouched[0], 4);
        fz_watch("stap_recording_read");
        st = stap_recording_read(rec, which[k], cube, &err);
        fz_unwatch();
        fz_check_status("stap_recording_read", st, &err);
        if (k == 2 && st != STAP_EINVAL) fz_die("stap_recording_read of CPI %lld of %lld: %d", cpis, cpis, st);
        if (!st) check_samples("stap_recording_read", cube, n, 0);
        size_t marked = 2 * n;
        for (size_t i = 0; !st && i < 2 * n && marked == 2 * n; i++)
            if (!memcmp((float *)cube + i, &untouched[0], 4)) marked = i;
        if (marked < 2 * n) {
            float *again = malloc(sizeof(stap_cf32) * n);
            if (!again) fz_die("harness: out of memory for %zu samples", n);
            for (size_t i = 0; i < 2 * n; i++) memcpy(again + i, &untouched[1], 4);
            stap_error err2;
            stap_error_clear(&err2);
            if (stap_recording_read(rec, which[k], (stap_cf32 *)again, &err2))
                fz_die("stap_recording_read of CPI %lld failed the second time: %s", which[k], err2.msg);
            for (size_t i = marked; i < 2 * n; i++)
                if (!memcmp(again + i, &untouched[1], 4) && !memcmp((float *)cube + i, &untouched[0], 4))
                    fz_die("stap_recording_read left sample %zu of CPI %lld unwritten", i / 2, which[k]);
                else if (memcmp(again + i, (float *)cube + i, 4))
                    fz_die("two reads of CPI %lld differ at sample %zu", which[k], i / 2);
            free(again);
        }
        if (k == 0 && one) same_as_input(one, &in, rank, cube, st, &err);
    }
    free(cube);
    stap_recording_close(rec);
    stap_input_free(&in);
    fz_h5_ids_same("stap_recording_open, _read and _close", &ids);
}

void fzh5_read_all(const char *path)
{
    fzh5_setup();
    stap_input in;
    stap_error err;
    stap_error_clear(&err);
    fz_h5_ids ids;
    fz_h5_ids_get(&ids);
    fz_watch("stap_input_read");
    int st = stap_input_read(path, &in, NULL, &err);
    fz_unwatch();
    fz_check_status("stap_input_read", st, &err);
    if (!st) check_input("stap_input_read", &in, 1);
    else if (in.iq || in.steering) fz_die("stap_input_read failed but left arrays");
    fz_h5_ids_same("stap_input_read", &ids);
    read_recording(path, st ? NULL : &in);
    stap_input_free(&in);
}
