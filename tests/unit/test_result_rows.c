/* test_result_rows: a recording's result writer places its rows at open (allocated, written
 * in place) only up to STAP_RESULT_PLACE_ROWS, or when stap_write_options.place asks for all
 * (rtstap-mpi); more rows are appended as they come (issue 43: placing is quadratic in the
 * chunks with HDF5 1.10). Every row placed puts several rows in a chunk, about
 * STAP_RESULT_PLACE_ROWS chunks in all. Whichever way, the file holds the same rows bit for
 * bit, cut to the rows written, and rows written by another process at the placed offsets
 * read back. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5io.h"
#include "h5io_extra.h"
#include "testutil.h"

static char dir[4096];

enum { MOST = 3000 };

/* row c's weight and output (one sample each: a 1 x 1 x 1 configuration) */
static stap_cf32 weight_of(long long c) { return STAP_CMPLXF((float)c + 0.25f, -(float)c); }
static stap_cf32 output_of(long long c) { return STAP_CMPLXF(-0.5f * (float)c, (float)c + 1.0f); }

/* a dataset of n stap_cf32 (or int64 when cf = 0) read back; its leading extent into rows */
static int read_back(const char *path, const char *name, int cf, void *out, hsize_t *rows)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1, sp = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[6] = {0};
    if (sp >= 0) H5Sget_simple_extent_dims(sp, dims, NULL);
    *rows = dims[0];
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(stap_cf32));
    H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "i", 4, H5T_NATIVE_FLOAT);
    const int ok = sp >= 0 && dims[0] <= MOST &&
                   H5Dread(d, cf ? t : H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
    H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return ok;
}

/* the rows of a chunk of dataset `name` of the file `name0` in dir (0: not chunked, or none) */
static hsize_t chunk_rows(const char *name0, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1, p = d >= 0 ? H5Dget_create_plist(d) : -1;
    hsize_t c[6] = {0};
    if (p >= 0 && H5Pget_layout(p) == H5D_CHUNKED) H5Pget_chunk(p, 6, c);
    if (p >= 0) H5Pclose(p);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return c[0];
}

/* A writer opened for `cpis` rows (place: .place), given `written` of them (by another
 * process's pwrite at the placed offsets when `by_offset`), closed; its rows placed at open
 * into *placed; 1 when the file holds exactly the rows written. */
static stap_config cfg;
static stap_cf32 steering = 1;
static stap_result hdr;

/* the header of a 1 x 1 x 1 configuration's results */
static void make_header(void)
{
    stap_config_defaults(&cfg);
    cfg.channels = cfg.pulses = cfg.range_gates = cfg.doppler_bins = 1;
    cfg.doppler_order = cfg.segments = cfg.training = cfg.beams = 1;
    memset(&hdr, 0, sizeof hdr);
    hdr.cfg = &cfg;
    hdr.input_name = "unit";
    hdr.backend_name = "cpu";
    hdr.beams = 1;
    hdr.steering = &steering;
}

static int write_rows(const char *name, long long cpis, int place, long long written, int by_offset,
                      long long *placed)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const stap_write_options wo = {STAP_WRITE_NEW, STAP_KEEP_WEIGHTS | STAP_KEEP_OUTPUT, cpis, 0, place};
    stap_error err = {0};
    stap_result_writer *w = NULL;
    double ms[STAP_STAGE_COUNT] = {0};
    int st = stap_result_writer_open(&w, path, &hdr, &wo, &err);
    *placed = st == STAP_OK ? stap_result_writer_rows(w) : -1;
    long long wat[MOST], oat[MOST];
    const char *file = NULL;
    int fd = -1;
    if (st == STAP_OK && by_offset &&
        (st = stap_result_writer_placement(w, &file, wat, oat, NULL, NULL, &err)) == STAP_OK)
        fd = open(file, O_WRONLY | O_CLOEXEC);
    for (long long c = 0; c < written && st == STAP_OK; c++) {
        stap_cf32 y = weight_of(c), o = output_of(c);
        if (!by_offset) {
            st = stap_result_writer_append(w, c, c, &y, &o, NULL, 0, ms, &err);
        } else if (pwrite(fd, &y, sizeof y, wat[c]) != (ssize_t)sizeof y ||
                   pwrite(fd, &o, sizeof o, oat[c]) != (ssize_t)sizeof o) {
            st = stap_fail(&err, STAP_EIO, "pwrite: %s", strerror(errno));
        } else {
            st = stap_result_writer_append_placed(w, c, c, NULL, 0, ms, &err);
        }
    }
    if (fd >= 0) close(fd);
    if (st == STAP_OK) st = stap_result_writer_close(w, &hdr, &err);
    else if (w) stap_result_writer_abort(w);
    static stap_cf32 wv[MOST], ov[MOST];
    static long long iv[MOST];
    hsize_t nw = 0, no = 0, ni = 0;
    int ok = st == STAP_OK && read_back(path, "/weights", 1, wv, &nw) && read_back(path, "/output/iq", 1, ov, &no) &&
             read_back(path, "/axes/input_cpi", 0, iv, &ni) && nw == (hsize_t)written &&
             no == (hsize_t)written && ni == (hsize_t)written;
    for (long long c = 0; ok && c < written; c++) {
        const stap_cf32 y = weight_of(c), o = output_of(c);
        ok = !memcmp(&wv[c], &y, sizeof y) && !memcmp(&ov[c], &o, sizeof o) && iv[c] == c;
    }
    CHECK(ok, "%s: %lld rows of %lld (place %d%s): %d %s (rows %llu, %llu, %llu)", name, written,
          cpis, place, by_offset ? ", written at the placed offsets" : "", st, err.msg,
          (unsigned long long)nw, (unsigned long long)no, (unsigned long long)ni);
    return ok;
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_result_rows.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_result_rows: cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    make_header();
    long long placed = 0;
    /* up to STAP_RESULT_PLACE_ROWS: placed; all written, or a run stopped early */
    write_rows("few.h5", STAP_RESULT_PLACE_ROWS, 0, STAP_RESULT_PLACE_ROWS, 0, &placed);
    CHECK(placed == STAP_RESULT_PLACE_ROWS, "%d rows: placed at open (%lld)", STAP_RESULT_PLACE_ROWS, placed);
    write_rows("few_stopped.h5", STAP_RESULT_PLACE_ROWS, 0, 700, 0, &placed);
    /* more: appended as they come, none placed; all written, or stopped */
    write_rows("many.h5", MOST, 0, MOST, 0, &placed);
    CHECK(placed == 0, "%d rows of 8 bytes: appended, not placed at open (%lld placed)", MOST, placed);
    write_rows("many_stopped.h5", MOST, 0, 2000, 0, &placed);
    /* .place: every row placed however many, written in place or by another process */
    write_rows("placed.h5", MOST, 1, MOST, 0, &placed);
    CHECK(placed == MOST, "%d rows, .place: every row placed (%lld)", MOST, placed);
    write_rows("placed_stopped.h5", MOST, 1, 1501, 0, &placed);
    write_rows("placed_offsets.h5", MOST, 1, 2500, 1, &placed);
    write_rows("placed_offsets_all.h5", MOST, 1, MOST, 1, &placed);
    /* one row a chunk unless every row of more than STAP_RESULT_PLACE_ROWS is placed: then
     * 3 000 rows go 3 a chunk (1 000 chunk lookups at open, not 3 000: linear in the rows) */
    const hsize_t c_few = chunk_rows("few.h5", "/weights"), c_many = chunk_rows("many.h5", "/weights"),
                  c_placed = chunk_rows("placed.h5", "/weights"), c_out = chunk_rows("placed.h5", "/output/iq");
    CHECK(c_few == 1 && c_many == 1 && c_placed == 3 && c_out == 3,
          "rows a chunk: %llu placed by itself, %llu appended, %llu and %llu every row placed",
          (unsigned long long)c_few, (unsigned long long)c_many, (unsigned long long)c_placed,
          (unsigned long long)c_out);
    /* a writer not placed has no placement to give, and takes no row written elsewhere */
    char path[4200];
    snprintf(path, sizeof path, "%s/not_placed.h5", dir);
    const stap_write_options wo = {.keep = STAP_KEEP_WEIGHTS, .cpis = MOST};
    stap_error e1 = {0}, e2 = {0};
    stap_result_writer *w = NULL;
    double ms[STAP_STAGE_COUNT] = {0};
    int st = stap_result_writer_open(&w, path, &hdr, &wo, &e1);
    long long at[MOST];
    const int st1 = st ? st : stap_result_writer_placement(w, NULL, at, NULL, NULL, NULL, &e1);
    const int st2 = st ? st : stap_result_writer_append_placed(w, 0, 0, NULL, 0, ms, &e2);
    if (w) stap_result_writer_abort(w);
    CHECK(st == STAP_OK && st1 == STAP_EINVAL && st2 == STAP_EINVAL,
          "a writer not placed: placement %d (%s), a row placed elsewhere %d (%s)", st1, e1.msg, st2, e2.msg);
    CHECK(stap_io_open_objects() == 0, "HDF5 objects left open at the end");
    CHECK(tc_count_tmp(dir) == 0, "temporary files left in %s", dir);
    tc_remove_tree(dir);
    if (tc_failures) {
        fprintf(stderr, "test_result_rows: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_result_rows: all checks passed\n");
    return 0;
}
