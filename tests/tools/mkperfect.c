/* mkperfect: write synthesized PERFECT STAP inputs of a size (the suite's statistics:
 * uniform [0, 1e6) complex samples, uniform [0, 1) steering) into a directory, for
 * timing the medium and large sizes whose inputs are not shipped.
 * usage: mkperfect small|medium|large DIR [SEED] */
#include <stdio.h>
#include <stdlib.h>

#include "la_check.h"
#include "perfect_io.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mkperfect small|medium|large DIR [SEED]\n");
        return 2;
    }
    stap_error err;
    perfect_size size;
    if (stap_perfect_size_parse(argv[1], &size, &err)) {
        fprintf(stderr, "mkperfect: %s\n", err.msg);
        return 2;
    }
    tc_rng rng;
    tc_rng_seed(&rng, argc > 3 ? strtoull(argv[3], NULL, 10) : 1);
    const perfect_dims *d = stap_perfect_get_dims(size);
    size_t n = (size_t)d->channels * d->pulses * d->range_cells;
    size_t nv = (size_t)d->steering * d->channels * d->doppler_order;
    stap_cf32 *x = malloc(sizeof(stap_cf32) * n), *v = malloc(sizeof(stap_cf32) * nv);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(1e6 * tc_uniform(&rng)) + I * (float)(1e6 * tc_uniform(&rng));
    for (size_t i = 0; i < nv; i++) v[i] = (float)tc_uniform(&rng) + I * (float)tc_uniform(&rng);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_app_input.bin", argv[2], d->name);
    int st = stap_perfect_write_raw(path, x, n, STAP_WRITE_NEW, &err);
    if (!st) {
        snprintf(path, sizeof path, "%s/%s_app_steering_vectors.bin", argv[2], d->name);
        st = stap_perfect_write_raw(path, v, nv, STAP_WRITE_NEW, &err);
    }
    free(x);
    free(v);
    if (st) {
        fprintf(stderr, "mkperfect: %s\n", err.msg);
        return 1;
    }
    return 0;
}
