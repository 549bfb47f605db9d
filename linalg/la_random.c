/* la_random.c: complex Gaussian test matrices from splitmix64-seeded xoshiro256**. */
#include "la_random.h"
#include "rt_rng.h"


void stap_la_random_batch(uint64_t seed, int m, int n, int batch, stap_cf32 *A)
{
    rt_rng r;
    rt_rng_seed(&r, seed, 0);
    size_t total = (size_t)m * n * batch;
    for (size_t i = 0; i < total; i++) A[i] = (stap_cf32)rt_cgauss(&r);
}
