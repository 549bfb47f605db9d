/* relayout: copy an input file with /data/iq (rank 3, or a rank-4 recording) written in
 * another axis order and labelled as asked — for the CLI tests of axis labels
 * (tests/cli/cli_layout.sh). Everything else at the file's root (/steering, /radar, /array,
 * /truth) is copied as it is. Uses the raw HDF5 API (tests/support/layout_lib.c).
 * usage: relayout IN.h5 OUT.h5 ORDER [ds|ds=TEXT] [attr|attr=TEXT|list=TEXT] [f64] [contiguous]
 *                 [i16|ri16|f32iq] [quantize]
 *   ORDER       the stored order of the three cube axes, e.g. P,C,R (cpi stays first)
 *   ds          HDF5 dimension labels naming ORDER; ds=TEXT: these labels (comma-separated)
 *   attr        a `dims` attribute naming ORDER; attr=TEXT: this string; list=TEXT: an
 *               array of strings
 *   f64         float64 samples; contiguous: a recording without one CPI per chunk
 *   i16         interleaved int16 (last axis iq, labelled iq), scale 1/256; ri16: an int16
 *               {real, imag} compound, scale 1/256; f32iq: interleaved float32 (both int16
 *               forms round the samples to multiples of 1/256)
 *   quantize    complex64 samples rounded to multiples of 1/256: what i16 and ri16 read as
 * Without ds or attr the cube is unlabelled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "layout_lib.h"

static herr_t copy_root(hid_t src, const char *name, const H5L_info_t *info, void *dst)
{
    if (!strcmp(name, "data")) return 0;
    return H5Ocopy(src, name, *(hid_t *)dst, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: relayout IN.h5 OUT.h5 ORDER [ds|ds=TEXT] [attr|attr=TEXT|list=TEXT] "
                        "[f64] [contiguous] [i16|ri16|f32iq] [quantize]\n");
        return 2;
    }
    layout_spec spec = {argv[3], NULL, NULL, 0, 0, 0, LAYOUT_COMPLEX};
    int quantize = 0;
    char names[64];
    hid_t in = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = in >= 0 ? H5Dopen2(in, "/data/iq", H5P_DEFAULT) : -1;
    if (d < 0) {
        fprintf(stderr, "relayout: cannot read /data/iq of '%s'\n", argv[1]);
        return 1;
    }
    hid_t s = H5Dget_space(d);
    hsize_t dims[4];
    const int rank = H5Sget_simple_extent_dims(s, dims, NULL);
    if ((rank != 3 && rank != 4) || !layout_names(argv[3], rank, names, sizeof names)) {
        fprintf(stderr, "relayout: rank %d, or ORDER '%s' is not three of C, P, R\n", rank, argv[3]);
        return 2;
    }
    for (int a = 4; a < argc; a++) {
        if (!strcmp(argv[a], "ds")) spec.ds_labels = names;
        else if (!strncmp(argv[a], "ds=", 3)) spec.ds_labels = argv[a] + 3;
        else if (!strcmp(argv[a], "attr")) spec.dims_attr = names;
        else if (!strncmp(argv[a], "attr=", 5)) spec.dims_attr = argv[a] + 5;
        else if (!strncmp(argv[a], "list=", 5)) spec.dims_attr = argv[a] + 5, spec.dims_list = 1;
        else if (!strcmp(argv[a], "f64")) spec.f64 = 1;
        else if (!strcmp(argv[a], "contiguous")) spec.contiguous = 1;
        else if (!strcmp(argv[a], "i16")) spec.form = LAYOUT_I16_IQ;
        else if (!strcmp(argv[a], "ri16")) spec.form = LAYOUT_I16_REAL_IMAG;
        else if (!strcmp(argv[a], "f32iq")) spec.form = LAYOUT_F32_IQ;
        else if (!strcmp(argv[a], "quantize")) quantize = 1;
        else {
            fprintf(stderr, "relayout: unknown argument '%s'\n", argv[a]);
            return 2;
        }
    }
    const int off = rank - 3;
    const long long cpis = rank == 4 ? (long long)dims[0] : 1;
    const int C = (int)dims[off], P = (int)dims[off + 1], R = (int)dims[off + 2];
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)cpis * C * P * R);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(stap_cf32));
    H5Tinsert(mt, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, "i", sizeof(float), H5T_NATIVE_FLOAT);
    if (!cube || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, cube) < 0) {
        fprintf(stderr, "relayout: cannot read the samples of '%s'\n", argv[1]);
        return 1;
    }
    H5Tclose(mt);
    H5Sclose(s);
    H5Dclose(d);
    if ((quantize || spec.form == LAYOUT_I16_IQ || spec.form == LAYOUT_I16_REAL_IMAG) &&
        layout_quantize(cube, (size_t)cpis * C * P * R)) {
        fprintf(stderr, "relayout: a sample of '%s' is beyond int16 at scale 1/256\n", argv[1]);
        return 1;
    }
    hid_t out = H5Fcreate(argv[2], H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    char why[256] = "";
    int bad = out < 0 || layout_put_iq(out, cube, rank, cpis, C, P, R, &spec, why, sizeof why) ||
              H5Literate(in, H5_INDEX_NAME, H5_ITER_INC, NULL, copy_root, &out) < 0;
    if (out >= 0 && H5Fclose(out) < 0) bad = 1;
    H5Fclose(in);
    free(cube);
    if (bad) {
        fprintf(stderr, "relayout: cannot write '%s' %s\n", argv[2], why);
        return 1;
    }
    return 0;
}
