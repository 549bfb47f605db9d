/* mkpartial: recordings with CPIs never written, as recorders leave them (issue 29), for the
 * CLI tests (cli_never_destroy.sh).
 *   mkpartial recording OUT C,P,R CPIS ROWS LIST [gzip]
 *       a recording (CPIS x C x P x R complex64, labelled cpi, channel, pulse, range, chunks
 *       of ROWS CPIs, deflated with gzip) of which the CPIs in LIST are written ("0,1,3",
 *       "0-9", "all"), with complex normal noise (seed 1)
 *   mkpartial chunk FILE K
 *       prints the byte offset and size of the chunk holding CPI K of /data/iq
 *   mkpartial ints FILE DATASET
 *       prints a 1-D integer dataset's values on one line
 *   mkpartial dimsnul OUT
 *       a one-CPI cube (4 x 8 x 48) whose 'dims' attribute is "channel\0pulse,range"
 * Exit 0, or 1 with a message. */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"

static int in_list(const char *list, long long c)
{
    if (!strcmp(list, "all")) return 1;
    for (const char *p = list; *p;) {
        char *end;
        long long a = strtoll(p, &end, 10), b = a;
        if (*end == '-') b = strtoll(end + 1, &end, 10);
        if (c >= a && c <= b) return 1;
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
    }
    return 0;
}

static int recording(int argc, char **argv)
{
    int C, P, R;
    if (argc < 7 || sscanf(argv[3], "%d,%d,%d", &C, &P, &R) != 3) {
        fprintf(stderr, "usage: mkpartial recording OUT C,P,R CPIS ROWS LIST [gzip]\n");
        return 1;
    }
    const long long cpis = atoll(argv[4]), rows = atoll(argv[5]);
    const char *list = argv[6];
    const int gzip = argc > 7 && !strcmp(argv[7], "gzip");
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "i", 4, H5T_NATIVE_FLOAT);
    const hsize_t dims[4] = {(hsize_t)cpis, (hsize_t)C, (hsize_t)P, (hsize_t)R};
    const hsize_t chunk[4] = {(hsize_t)rows, (hsize_t)C, (hsize_t)P, (hsize_t)R};
    hid_t sp = H5Screate_simple(4, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 4, chunk);
    if (gzip) H5Pset_deflate(dcpl, 4);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(f, "/data/iq", t, sp, lcpl, dcpl, H5P_DEFAULT);
    if (f < 0 || d < 0) {
        fprintf(stderr, "mkpartial: cannot create %s\n", argv[2]);
        return 1;
    }
    const char *labels[4] = {"cpi", "channel", "pulse", "range"};
    for (int k = 0; k < 4; k++) H5DSset_label(d, (unsigned)k, labels[k]);
    const size_t n = (size_t)C * P * R;
    stap_cf32 *x = malloc(sizeof(stap_cf32) * n);
    tc_rng rng;
    tc_rng_seed(&rng, 1);
    int bad = !x;
    for (long long c = 0; c < cpis && !bad; c++) {
        if (!in_list(list, c)) continue;
        for (size_t i = 0; i < n; i++) x[i] = tc_cnormal(&rng);
        hsize_t start[4] = {(hsize_t)c, 0, 0, 0}, count[4] = {1, dims[1], dims[2], dims[3]};
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(4, count, NULL);
        bad = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
              H5Dwrite(d, t, ms, fs, H5P_DEFAULT, x) < 0;
        H5Sclose(fs);
        H5Sclose(ms);
    }
    free(x);
    H5Dclose(d);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(t);
    bad |= H5Fclose(f) < 0;
    if (bad) fprintf(stderr, "mkpartial: writing %s failed\n", argv[2]);
    return bad;
}

static int chunk_of(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mkpartial chunk FILE K\n");
        return 1;
    }
    hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "/data/iq", H5P_DEFAULT) : -1;
    hsize_t off[4] = {(hsize_t)atoll(argv[3]), 0, 0, 0}, size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    int bad = d < 0 || H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) < 0 ||
              addr == HADDR_UNDEF;
    if (!bad) printf("%llu %llu\n", (unsigned long long)addr, (unsigned long long)size);
    else fprintf(stderr, "mkpartial: no chunk of CPI %s in %s\n", argv[3], argv[2]);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return bad;
}

static int ints(int argc, char **argv)
{
    if (argc != 4) return 1;
    hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, argv[3], H5P_DEFAULT) : -1, sp = d >= 0 ? H5Dget_space(d) : -1;
    const hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    long long *v = n >= 0 ? malloc(sizeof *v * (size_t)(n + 1)) : NULL;
    int bad = !v || H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
    for (hssize_t i = 0; !bad && i < n; i++) printf("%s%lld", i ? " " : "", v[i]);
    if (!bad) printf("\n");
    free(v);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return bad;
}

static int dims_nul(int argc, char **argv)
{
    if (argc != 3) return 1;
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "i", 4, H5T_NATIVE_FLOAT);
    const hsize_t dims[3] = {4, 8, 48};
    hid_t sp = H5Screate_simple(3, dims, NULL), lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(f, "/data/iq", t, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    stap_cf32 *x = malloc(sizeof(stap_cf32) * 4 * 8 * 48);
    tc_rng rng;
    tc_rng_seed(&rng, 2);
    for (int i = 0; i < 4 * 8 * 48; i++) x[i] = tc_cnormal(&rng);
    H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
    static const char label[] = "channel\0pulse,range"; /* what h5py writes for b'...' */
    hid_t st = H5Tcopy(H5T_C_S1), as = H5Screate(H5S_SCALAR);
    H5Tset_size(st, sizeof label - 1);
    H5Tset_strpad(st, H5T_STR_NULLPAD);
    hid_t a = H5Acreate2(d, "dims", st, as, H5P_DEFAULT, H5P_DEFAULT);
    int bad = f < 0 || d < 0 || a < 0 || H5Awrite(a, st, label) < 0;
    free(x);
    H5Aclose(a);
    H5Sclose(as);
    H5Tclose(st);
    H5Dclose(d);
    H5Pclose(lcpl);
    H5Sclose(sp);
    H5Tclose(t);
    bad |= H5Fclose(f) < 0;
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "recording")) return recording(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "chunk")) return chunk_of(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "ints")) return ints(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "dimsnul")) return dims_nul(argc, argv);
    fprintf(stderr, "usage: mkpartial recording|chunk ...\n");
    return 1;
}
