/* h5shape: print the shape of HDF5 datasets, and for a /detections table with a cpi column
 * every row as "cpi beam doppler_bin range_cell" — what the CLI tests check of a result
 * file without HDF5's command-line tools. usage: h5shape FILE DATASET... ; h5shape FILE
 * --detections */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: h5shape FILE DATASET... | FILE --detections\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        printf("cannot open %s\n", argv[1]);
        return 1;
    }
    if (!strcmp(argv[2], "--detections")) {
        typedef struct { long long cpi; int beam, bin, cell; } row;
        hid_t d = H5Dopen2(f, "/detections", H5P_DEFAULT);
        hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(row));
        H5Tinsert(t, "cpi", HOFFSET(row, cpi), H5T_NATIVE_LLONG);
        H5Tinsert(t, "beam", HOFFSET(row, beam), H5T_NATIVE_INT);
        H5Tinsert(t, "doppler_bin", HOFFSET(row, bin), H5T_NATIVE_INT);
        H5Tinsert(t, "range_cell", HOFFSET(row, cell), H5T_NATIVE_INT);
        hid_t s = H5Dget_space(d);
        hssize_t n = H5Sget_simple_extent_npoints(s);
        static row rows[1 << 16];
        if (d < 0 || n < 0 || n > (1 << 16) || (n > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)) {
            printf("cannot read /detections\n");
            return 1;
        }
        for (hssize_t i = 0; i < n; i++) printf("%lld %d %d %d\n", rows[i].cpi, rows[i].beam, rows[i].bin, rows[i].cell);
        return 0;
    }
    for (int a = 2; a < argc; a++) {
        hid_t d = H5Dopen2(f, argv[a], H5P_DEFAULT);
        if (d < 0) {
            printf("%s missing\n", argv[a]);
            continue;
        }
        hid_t s = H5Dget_space(d);
        hsize_t dims[8];
        int r = H5Sget_simple_extent_dims(s, dims, NULL);
        printf("%s", argv[a]);
        for (int k = 0; k < r; k++) printf("%s%llu", k ? "x" : " ", (unsigned long long)dims[k]);
        printf("\n");
        H5Sclose(s);
        H5Dclose(d);
    }
    H5Fclose(f);
    return 0;
}
