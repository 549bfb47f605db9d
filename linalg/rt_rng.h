/* rt_rng: the project's one random-number generator — xoshiro256** (Blackman and Vigna)
 * seeded through splitmix64 — for synthetic cubes, scenes, benchmarks and tests.
 * Reproducible on every platform; independent streams of one seed by `stream`. */
#ifndef RT_RNG_H
#define RT_RNG_H

#include <complex.h>
#include <math.h>
#include <stdint.h>

typedef struct rt_rng { uint64_t s[4]; } rt_rng;

static inline uint64_t rt_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void rt_rng_seed(rt_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (0xd1b54a32d192ed03ull * (stream + 1));
    for (int i = 0; i < 4; i++) r->s[i] = rt_splitmix64(&x);
}

static inline uint64_t rt_rng_next(rt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return res;
}

/* uniform on the open interval (0, 1) */
static inline double rt_uniform(rt_rng *r) { return ((rt_rng_next(r) >> 11) + 0.5) * 0x1.0p-53; }

/* circular complex Gaussian with E|z|^2 = 1 (Box–Muller) */
static inline double _Complex rt_cgauss(rt_rng *r)
{
    double rad = sqrt(-log(rt_uniform(r))), ph = 2 * M_PI * rt_uniform(r);
    return rad * cos(ph) + I * (rad * sin(ph));
}

#endif
