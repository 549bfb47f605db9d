/* mkfill: a few-KB HDF5 file whose /data/iq declares a huge chunked cube (1 x 1 x 2^29
 * complex64, 4 GiB) with no chunk written — reading it yields 4 GiB of fill values. For
 * cli_reject: run must refuse a configuration that does not fit before reading any data.
 * usage: mkfill OUT.h5 */
#include <hdf5.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkfill OUT.h5\n");
        return 2;
    }
    hid_t f = H5Fcreate(argv[1], H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "r", 0, H5T_IEEE_F32LE);
    H5Tinsert(t, "i", 4, H5T_IEEE_F32LE);
    const hsize_t dims[3] = {1, 1, (hsize_t)1 << 29}, chunk[3] = {1, 1, 1 << 20};
    hid_t sp = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    hid_t g = H5Gcreate2(f, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t d = H5Dcreate2(g, "iq", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int bad = f < 0 || d < 0;
    H5Dclose(d);
    H5Gclose(g);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
    return bad;
}
