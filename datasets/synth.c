/* synth.c: the fixed-seed demonstration cube (noise, two barrage jammers, a target). */
#include "synth.h"

#include <math.h>

/* splitmix64 -> xoshiro256**: small, fast, reproducible on every platform. */
typedef struct { uint64_t s[4]; } rng_t;
static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t next(rng_t *r)
{
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return res;
}
static double uniform(rng_t *r) { return (next(r) >> 11) * 0x1.0p-53; }
/* circular complex Gaussian with E|z|^2 = 1 (Box–Muller) */
static double complex cgauss(rng_t *r)
{
    double u1 = uniform(r), u2 = uniform(r);
    double rad = sqrt(-log(u1 > 0 ? u1 : 0x1.0p-53));
    return rad * (cos(2 * M_PI * u2) + I * sin(2 * M_PI * u2));
}

void synth_defaults(synth_params *sp, int C, int P, int R)
{
    sp->channels = C;
    sp->pulses = P;
    sp->range_gates = R;
    sp->element_spacing = 0.5;
    sp->seed = 20101;
    sp->jammer_u[0] = -0.45;
    sp->jammer_u[1] = 0.6;
    sp->jammer_jnr_db[0] = 30;
    sp->jammer_jnr_db[1] = 25;
    sp->target_range = R / 3;
    sp->target_u = 0.0625;
    sp->target_doppler = 0.25;
    sp->target_snr_db = 0;
}

int synth_cube(const synth_params *sp, cf32 *cube, rt_error *err)
{
    const int C = sp->channels, P = sp->pulses, R = sp->range_gates;
    if (C < 1 || P < 1 || R < 1)
        return rt_fail(err, RT_EINVAL, "synthetic cube needs positive dimensions");
    rng_t g;
    uint64_t x = sp->seed;
    for (int i = 0; i < 4; i++) g.s[i] = splitmix(&x);
    const double d = sp->element_spacing;
    /* thermal noise, unit power per element, pulse and range cell */
    for (size_t i = 0; i < (size_t)C * P * R; i++) cube[i] = (cf32)cgauss(&g);
    /* barrage jammers: one complex Gaussian waveform sample per (pulse, range cell),
     * white over pulses and range, arriving on the array with a plane-wave steering */
    for (int j = 0; j < 2; j++) {
        double amp = pow(10.0, sp->jammer_jnr_db[j] / 20.0);
        for (int p = 0; p < P; p++)
            for (int r = 0; r < R; r++) {
                double complex s = amp * cgauss(&g);
                for (int c = 0; c < C; c++) {
                    double ph = 2 * M_PI * d * c * sp->jammer_u[j];
                    cube[((size_t)c * P + p) * R + r] += (cf32)(s * (cos(ph) + I * sin(ph)));
                }
            }
    }
    /* the target: a point scatterer in one range cell, spatial x temporal steering */
    if (sp->target_range >= 0 && sp->target_range < R) {
        double amp = pow(10.0, sp->target_snr_db / 20.0);
        for (int c = 0; c < C; c++)
            for (int p = 0; p < P; p++) {
                double ph = 2 * M_PI * (d * c * sp->target_u + sp->target_doppler * p);
                cube[((size_t)c * P + p) * R + sp->target_range] +=
                    (cf32)(amp * (cos(ph) + I * sin(ph)));
            }
    }
    return RT_OK;
}
