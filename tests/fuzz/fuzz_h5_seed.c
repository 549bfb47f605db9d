/* fuzz_h5_seed: write the HDF5 file that fuzz_h5_cube or fuzz_h5_meta builds from an input
 * of theirs, for the seed corpus of fuzz_h5_file (make-seeds.sh) or to look at a finding.
 * usage: fuzz_h5_seed cube|meta CHOICES OUT.h5 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_schema.h"

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "cube") && strcmp(argv[1], "meta"))) {
        fprintf(stderr, "usage: fuzz_h5_seed cube|meta CHOICES OUT.h5\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    static uint8_t data[1 << 16];
    const size_t n = f ? fread(data, 1, sizeof data, f) : 0;
    if (!f) {
        fprintf(stderr, "fuzz_h5_seed: cannot read %s\n", argv[2]);
        return 1;
    }
    fclose(f);
    fz_bytes b = {data, n};
    fzh5_build(argv[3], &b, strcmp(argv[1], "cube") ? FZH5_META_FIRST : FZH5_CUBE_FIRST);
    return 0;
}
