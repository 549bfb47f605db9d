/* h5same: are datasets of two HDF5 files identical — the same shape, the same element type
 * and the same bytes? For the CLI tests (hdf5-tools' h5diff is not a dependency).
 * usage: h5same A.h5 B.h5 DATASET...   prints one line per dataset; exit 0 when all are the
 * same, 1 when one differs or is missing. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The dataset's bytes in its file type (no conversion), its shape and its type. */
static unsigned char *load(hid_t f, const char *name, int *rank, hsize_t *dims, hid_t *type,
                           size_t *bytes)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    *type = H5Dget_type(d);
    *rank = H5Sget_simple_extent_dims(s, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    *bytes = (size_t)n * H5Tget_size(*type);
    unsigned char *buf = malloc(*bytes ? *bytes : 1);
    if (buf && n > 0 && H5Dread(d, *type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        buf = NULL;
    }
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: h5same A.h5 B.h5 DATASET...\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t a = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t b = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (a < 0 || b < 0) {
        printf("cannot open %s\n", a < 0 ? argv[1] : argv[2]);
        return 1;
    }
    int differ = 0;
    for (int k = 3; k < argc; k++) {
        int ra = -1, rb = -1;
        hsize_t da[32], db[32];
        hid_t ta = -1, tb = -1;
        size_t na = 0, nb = 0;
        unsigned char *xa = load(a, argv[k], &ra, da, &ta, &na);
        unsigned char *xb = load(b, argv[k], &rb, db, &tb, &nb);
        const char *why = NULL;
        if (!xa || !xb) why = "missing or unreadable";
        else if (ra != rb || memcmp(da, db, sizeof(hsize_t) * (size_t)ra)) why = "shapes differ";
        else if (H5Tequal(ta, tb) <= 0) why = "element types differ";
        else if (na != nb || memcmp(xa, xb, na)) why = "values differ";
        printf("%s %s\n", argv[k], why ? why : "same");
        differ |= why != NULL;
        free(xa);
        free(xb);
        if (ta >= 0) H5Tclose(ta);
        if (tb >= 0) H5Tclose(tb);
    }
    H5Fclose(a);
    H5Fclose(b);
    return differ;
}
