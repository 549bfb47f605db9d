/* h5attr: print attributes of an HDF5 object, one "NAME VALUE" line each (numbers as %.17g,
 * strings as they are, arrays space-separated) — what the CLI tests check of a file without
 * HDF5's command-line tools. usage: h5attr FILE OBJECT NAME... ; exit 1 when one is missing. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_attr(hid_t f, const char *obj, const char *name)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) <= 0) {
        printf("%s (missing)\n", name);
        return 1;
    }
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    int bad = 0;
    printf("%s", name);
    if (H5Tget_class(t) == H5T_STRING) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_cset(mt, H5Tget_cset(t));
        char **v = calloc((size_t)n, sizeof *v);
        char *fixed = NULL;
        if (H5Tis_variable_str(t) > 0) {
            H5Tset_size(mt, H5T_VARIABLE);
            bad = H5Aread(a, mt, v) < 0;
        } else {
            size_t sz = H5Tget_size(t);
            H5Tset_size(mt, sz + 1);
            fixed = calloc((size_t)n, sz + 1);
            bad = H5Aread(a, mt, fixed) < 0;
            for (hssize_t i = 0; i < n; i++) v[i] = fixed + i * (sz + 1);
        }
        for (hssize_t i = 0; !bad && i < n; i++) printf(" %s", v[i] ? v[i] : "");
        if (!fixed)
            for (hssize_t i = 0; i < n; i++) H5free_memory(v[i]);
        free(fixed);
        free(v);
        H5Tclose(mt);
    } else {
        double *v = calloc((size_t)n, sizeof *v);
        bad = H5Aread(a, H5T_NATIVE_DOUBLE, v) < 0;
        for (hssize_t i = 0; !bad && i < n; i++) printf(" %.17g", v[i]);
        free(v);
    }
    printf("\n");
    H5Sclose(s);
    H5Tclose(t);
    H5Aclose(a);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: h5attr FILE OBJECT NAME...\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        printf("cannot open %s\n", argv[1]);
        return 1;
    }
    int bad = 0;
    for (int k = 3; k < argc; k++) bad |= print_attr(f, argv[2], argv[k]);
    H5Fclose(f);
    return bad;
}
