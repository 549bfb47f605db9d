/* mkinput: write one small schema-v1 input file, valid or malformed in a named way, for
 * the CLI rejection tests (tests/cli/cli_reject.sh). Uses the raw HDF5 API, not stap/io/.
 * usage: mkinput KIND OUT.h5 [SEED] | mkinput --complex64 KIND OUT.h5 [SEED] (the complex64
 * equivalent of a valid kind: the samples a reader must give) | mkinput --list */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "mkinput_lib.h"

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        /* name|valid or reject|keyword|keyword2|description: the words a rejection
         * message must contain ('|'-separated: empty fields survive `read`) */
        for (int k = 0; k < mkinput_nkinds; k++) {
            const mkinput_kind *m = &mkinput_kinds[k];
            printf("%s|%s|%s|%s|%s\n", m->name, m->valid == 1 ? "valid" : "reject",
                   m->keyword ? m->keyword : "", m->keyword2 ? m->keyword2 : "", m->what);
        }
        return 0;
    }
    /* --complex64 KIND OUT.h5 SEED: the complex64 equivalent of a valid kind */
    const int c64 = argc > 1 && !strcmp(argv[1], "--complex64");
    if (c64) {
        argc--;
        argv++;
    }
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: mkinput [--complex64] KIND OUT.h5 [SEED]   (mkinput --list names "
                "the kinds)\n");
        return 2;
    }
    uint64_t seed;
    if (argc == 4) {
        char *end;
        seed = strtoull(argv[3], &end, 0);
        if (!*argv[3] || *end) {
            fprintf(stderr, "mkinput: SEED must be an integer (got '%s')\n", argv[3]);
            return 2;
        }
    } else {
        seed = tc_seed_from_env(TC_FIXED_SEED);
    }
    char why[256];
    if (c64 ? mkinput_write_complex64(argv[1], argv[2], seed, why, sizeof why)
            : mkinput_write(argv[1], argv[2], seed, why, sizeof why)) {
        fprintf(stderr, "mkinput: %s\n", why);
        return 1;
    }
    return 0;
}
