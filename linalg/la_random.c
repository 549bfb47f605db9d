/* la_random.c: complex Gaussian test matrices from splitmix64-seeded xoshiro256**. */
#include "la_random.h"

#include <math.h>

static uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void la_random_batch(uint64_t seed, int m, int n, int batch, cf32 *A)
{
    uint64_t s[4], x = seed;
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        s[i] = z ^ (z >> 31);
    }
    size_t total = (size_t)m * n * batch;
    for (size_t i = 0; i < total; i++) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            uint64_t r = rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
            s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
            s[3] = rotl64(s[3], 45);
            u[k] = ((r >> 11) + 0.5) * 0x1.0p-53; /* (0,1) */
        }
        double rad = sqrt(-log(u[0])), ph = 2 * M_PI * u[1];
        A[i] = (float)(rad * cos(ph)) + I * (float)(rad * sin(ph));
    }
}
