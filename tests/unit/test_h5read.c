/* test_h5read: what the recording reader publishes as samples is the file's (issue 43):
 *  - a /data/iq whose float32 has a non-standard exponent bias (H5Tset_ebias) is converted
 *    by HDF5, not read as IEEE by the direct path (which gave values off by 2^27); the
 *    standard types, either byte order, still go the direct way;
 *  - a file cut short while it is read fails the CPI that lost bytes ("the file ends
 *    early") on the HDF5 path too — chunks of 2 CPIs, a user block, hdf5_only (rtstap: RTSTAP_READER=hdf5),
 *    contiguous storage — where libhdf5's sec2 driver reads zeros past the end of the file;
 *  - the direct reader reads the file HDF5 opened: another file renamed over the path while
 *    the recording opens (here, deterministically, at the first open of the path while the
 *    process holds the file: this test's open() below) is never read. */
#undef _FORTIFY_SOURCE /* open() is defined here */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "h5io.h"
#include "la_check.h"
#include "testutil.h"

enum { C = 4, P = 8, R = 48, N = C * P * R };
static char dir[4096];

/* ---- open(): the path `watch` is replaced by `swap_from` (rename) the first time it is
 * opened while the process already holds the file it names ---------------------------- */
static char watch[4200], swap_from[4200];
static int swapped;

static int held_open(const char *path)
{
    struct stat want, sb;
    if (stat(path, &want) != 0) return 0;
    DIR *d = opendir("/proc/self/fd");
    int held = 0;
    for (struct dirent *de; d && !held && (de = readdir(d));) {
        const int fd = atoi(de->d_name);
        held = de->d_name[0] != '.' && fd != dirfd(d) && fstat(fd, &sb) == 0 &&
               sb.st_dev == want.st_dev && sb.st_ino == want.st_ino;
    }
    if (d) closedir(d);
    return held;
}

static int open_watched(const char *path, int flags, mode_t mode)
{
    if (watch[0] && !swapped && !strcmp(path, watch) && held_open(path)) {
        swapped = rename(swap_from, watch) == 0;
        CHECK(swapped, "rename %s over %s: %s", swap_from, watch, strerror(errno));
    }
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open_watched(path, flags, mode);
}

/* the same function under glibc's large-file name */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

/* ---- files ----------------------------------------------------------------------------- */

typedef struct {
    hid_t comp;        /* the component's file type                                  */
    int cpis;          /* 0: one CPI (rank 3)                                        */
    int rows;          /* CPIs a chunk; 0: contiguous                                */
    hsize_t userblock; /* bytes                                                      */
    double scale;      /* the scale attribute, 0: none                               */
} rec_spec;

/* /data/iq of {r, i} compounds of s->comp holding x (cpis x N, or N), labelled. */
static int write_rec(const char *path, const rec_spec *s, const stap_cf32 *x)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (s->userblock) H5Pset_userblock(fcpl, s->userblock);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    const size_t cs = H5Tget_size(s->comp);
    hid_t ft = H5Tcreate(H5T_COMPOUND, 2 * cs), mt = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(ft, "r", 0, s->comp);
    H5Tinsert(ft, "i", cs, s->comp);
    H5Tinsert(mt, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, "i", 4, H5T_NATIVE_FLOAT);
    const int rank = s->cpis ? 4 : 3;
    const hsize_t d4[4] = {(hsize_t)s->cpis, C, P, R}, *dims = s->cpis ? d4 : d4 + 1;
    hsize_t chunk[4] = {(hsize_t)s->rows, C, P, R};
    hid_t sp = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (s->rows) H5Pset_chunk(dcpl, rank, s->cpis ? chunk : chunk + 1);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(f, "/data/iq", ft, sp, lcpl, dcpl, H5P_DEFAULT);
    int bad = f < 0 || d < 0 || H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0;
    const char *labels[4] = {"cpi", "channel", "pulse", "range"};
    for (int k = 0; k < rank && !bad; k++) bad = H5DSset_label(d, (unsigned)k, labels[k + 4 - rank]) < 0;
    if (s->scale && !bad) {
        hid_t as = H5Screate(H5S_SCALAR), a = H5Acreate2(d, "scale", H5T_IEEE_F64LE, as, H5P_DEFAULT, H5P_DEFAULT);
        bad = a < 0 || H5Awrite(a, H5T_NATIVE_DOUBLE, &s->scale) < 0;
        H5Aclose(a);
        H5Sclose(as);
    }
    H5Dclose(d);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Tclose(mt);
    if (H5Fclose(f) < 0) bad = 1;
    CHECK(!bad, "cannot write %s", path);
    return bad ? -1 : 0;
}

static void noise(tc_rng *rng, stap_cf32 *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = tc_cnormal(rng);
}

/* index of the first sample of a that differs from b times scale, or -1 */
static long first_diff(const stap_cf32 *a, const stap_cf32 *b, double scale, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (crealf(a[i]) != (float)(crealf(b[i]) * scale) || cimagf(a[i]) != (float)(cimagf(b[i]) * scale))
            return (long)i;
    return -1;
}

/* ---- row 5: the direct path reads only the standard element types ------------------ */
static void test_types(tc_rng *rng)
{
    stap_cf32 *x = tc_xmalloc(sizeof *x * N), *got = tc_xmalloc(sizeof *got * N);
    noise(rng, x, N);
    hid_t bias = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_ebias(bias, 100); /* IEEE: 127 */
    hid_t inpad = H5Tcopy(H5T_IEEE_F32BE);
    H5Tset_inpad(inpad, H5T_PAD_ONE); /* no padding bits: the same values, but not IEEE's type */
    const struct { const char *name; hid_t comp; int direct; } kinds[] = {
        {"float32 LE", H5T_IEEE_F32LE, 1}, {"float32 BE", H5T_IEEE_F32BE, 1},
        {"float32 with exponent bias 100", bias, 0}, {"float32 BE, internal padding one", inpad, 0}};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/type%zu.h5", dir, k);
        const rec_spec s = {.comp = kinds[k].comp, .cpis = 2, .rows = 1};
        stap_cf32 *x2 = tc_xmalloc(sizeof *x2 * 2 * N);
        memcpy(x2, x, sizeof *x * N);
        memcpy(x2 + N, x, sizeof *x * N);
        if (write_rec(path, &s, x2)) continue;
        free(x2);
        stap_recording *r = NULL;
        stap_input in;
        stap_error err;
        if (stap_recording_open(path, &r, &in, NULL, &err)) {
            CHECK(0, "%s: %s", kinds[k].name, err.msg);
            continue;
        }
        const char *how = stap_recording_read_path(r);
        CHECK(!strncmp(how, kinds[k].direct ? "direct" : "HDF5", kinds[k].direct ? 6 : 4),
              "%s: read path %s", kinds[k].name, how);
        for (int cpi = 0; cpi < 2; cpi++) {
            const int st = stap_recording_read(r, cpi, got, &err);
            const long at = st ? -2 : first_diff(got, x, 1, N);
            CHECK(at == -1, "%s, CPI %d (%s): %s sample %ld is %g%+gi, written %g%+gi", kinds[k].name,
                  cpi, how, st ? err.msg : "", at, at >= 0 ? crealf(got[at]) : 0,
                  at >= 0 ? cimagf(got[at]) : 0, at >= 0 ? crealf(x[at]) : 0, at >= 0 ? cimagf(x[at]) : 0);
        }
        stap_recording_close(r);
        stap_input_free(&in);
    }
    H5Tclose(bias);
    H5Tclose(inpad);
    free(x);
    free(got);
}

/* ---- row 3: a file cut short while it is read --------------------------------------- */

/* where the stored bytes of CPI cpi of path's /data/iq end, from HDF5's own answers */
static long long cpi_end(const char *path, int cpi, hsize_t ub)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/data/iq", H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    long long end = -1;
    if (H5Pget_layout(dcpl) == H5D_CONTIGUOUS) {
        end = (long long)(ub + H5Dget_offset(d)) + (long long)(cpi + 1) * N * 8;
    } else {
        hsize_t off[4] = {(hsize_t)cpi, 0, 0, 0}, ch[4], size = 0;
        H5Pget_chunk(dcpl, 4, ch);
        off[0] = off[0] / ch[0] * ch[0];
        unsigned mask;
        haddr_t addr;
        if (H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0)
            end = (long long)(ub + addr + size);
    }
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    return end;
}

static void test_truncated(tc_rng *rng)
{
    const int cpis = 4;
    stap_cf32 *x = tc_xmalloc(sizeof *x * N * cpis), *got = tc_xmalloc(sizeof *got * N);
    noise(rng, x, (size_t)N * cpis);
    const struct { const char *name; rec_spec s; int hdf5; } kinds[] = {
        {"chunks of 2 CPIs", {.comp = H5T_IEEE_F32LE, .cpis = cpis, .rows = 2}, 0},
        {"a user block", {.comp = H5T_IEEE_F32LE, .cpis = cpis, .rows = 1, .userblock = 1024}, 0},
        {"hdf5_only", {.comp = H5T_IEEE_F32LE, .cpis = cpis, .rows = 1}, 1},
        {"contiguous, hdf5_only", {.comp = H5T_IEEE_F32LE, .cpis = cpis}, 1},
        {"direct", {.comp = H5T_IEEE_F32LE, .cpis = cpis, .rows = 1}, 0},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/cut%zu.h5", dir, k);
        if (write_rec(path, &kinds[k].s, x)) continue;
        const long long end = cpi_end(path, cpis - 1, kinds[k].s.userblock);
        const stap_read_options ro = {.hdf5_only = kinds[k].hdf5};
        stap_recording *r = NULL;
        stap_input in;
        stap_error err;
        const int ost = stap_recording_open(path, &r, &in, &ro, &err);
        if (ost) {
            CHECK(0, "%s: %s", kinds[k].name, err.msg);
            continue;
        }
        /* whole, every CPI reads */
        for (int cpi = 0; cpi < cpis; cpi++) {
            const int wst = stap_recording_read(r, cpi, got, &err);
            CHECK(!wst && first_diff(got, x + (size_t)cpi * N, 1, N) == -1,
                  "%s: CPI %d of the whole file misread: %s", kinds[k].name, cpi,
                  wst ? err.msg : "other samples");
        }
        /* the last CPI loses its last 200 bytes (and whatever followed it) */
        CHECK(end > 200 && truncate(path, end - 200) == 0, "%s: cannot cut at %lld", kinds[k].name, end);
        const char *how = stap_recording_read_path(r);
        CHECK(!strncmp(how, kinds[k].name[0] == 'd' ? "direct" : "HDF5", 4), "%s: read path %s",
              kinds[k].name, how);
        int st = stap_recording_read(r, 0, got, &err);
        CHECK(!st && first_diff(got, x, 1, N) == -1, "%s: CPI 0, whole, misread: %s", kinds[k].name,
              st ? err.msg : "other samples");
        st = stap_recording_read(r, cpis - 1, got, &err);
        CHECK(st && strstr(err.msg, "CPI 3 ") && strstr(err.msg, "the file ends early"),
              "%s (%s): the CPI cut short read with status %d: %s", kinds[k].name, how, st,
              st ? err.msg : "");
        stap_recording_close(r);
        stap_input_free(&in);
    }
    free(x);
    free(got);
}

/* ---- row 4: another file renamed over the path while the recording opens ----------- */
static void test_renamed(tc_rng *rng)
{
    stap_cf32 *xa = tc_xmalloc(sizeof *xa * 2 * N), *xb = tc_xmalloc(sizeof *xb * 2 * N);
    stap_cf32 *got = tc_xmalloc(sizeof *got * N);
    noise(rng, xa, 2 * N);
    noise(rng, xb, 2 * N);
    snprintf(watch, sizeof watch, "%s/a.h5", dir);
    snprintf(swap_from, sizeof swap_from, "%s/b.h5", dir);
    const rec_spec sa = {.comp = H5T_IEEE_F32LE, .cpis = 2, .rows = 1, .scale = 2};
    const rec_spec sb = {.comp = H5T_IEEE_F32LE, .cpis = 2, .rows = 1, .scale = 0.5};
    if (write_rec(watch, &sa, xa) || write_rec(swap_from, &sb, xb)) return;
    stap_recording *r = NULL;
    stap_input in;
    stap_error err;
    swapped = 0;
    const int st = stap_recording_open(watch, &r, &in, NULL, &err);
    CHECK(!st, "a.h5: %s", err.msg);
    if (!swapped) CHECK(rename(swap_from, watch) == 0, "rename: %s", strerror(errno));
    watch[0] = '\0';
    if (!st) {
        CHECK(!strncmp(stap_recording_read_path(r), "direct", 6), "read path %s",
              stap_recording_read_path(r));
        CHECK(in.scale == 2, "the scale read: %g, a.h5's 2", in.scale);
        for (int cpi = 0; cpi < 2; cpi++) {
            const int rst = stap_recording_read(r, cpi, got, &err);
            CHECK(!rst && first_diff(got, xa + (size_t)cpi * N, 2, N) == -1,
                  "CPI %d: not a.h5's samples times its scale 2 (%s; b.h5's: %s)", cpi,
                  rst ? err.msg : "other samples",
                  !rst && first_diff(got, xb + (size_t)cpi * N, 2, N) == -1 ? "yes" : "no");
        }
        stap_recording_close(r);
        stap_input_free(&in);
    }
    free(xa);
    free(xb);
    free(got);
}

int main(void)
{
    tc_rng rng;
    tc_rng_seed(&rng, 43);
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_h5read.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_h5read: cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    test_types(&rng);
    test_truncated(&rng);
    test_renamed(&rng);
    CHECK(stap_io_open_objects() == 0, "HDF5 objects left open at the end");
    tc_remove_tree(dir);
    if (tc_failures) {
        fprintf(stderr, "test_h5read: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_h5read: ok\n");
    return 0;
}
