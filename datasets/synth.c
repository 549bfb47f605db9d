/* synth.c: the fixed-seed demonstration cube (noise, two barrage jammers, a target). */
#include "synth.h"
#include "rt_rng.h"

#include <math.h>

void stap_synth_defaults(synth_params *sp, int C, int P, int R)
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

int stap_synth_cube(const synth_params *sp, stap_cf32 *cube, stap_error *err)
{
    const int C = sp->channels, P = sp->pulses, R = sp->range_gates;
    if (C < 1 || P < 1 || R < 1)
        return stap_fail(err, STAP_EINVAL, "synthetic cube needs positive dimensions");
    rt_rng g;
    rt_rng_seed(&g, sp->seed, 0);
    const double d = sp->element_spacing;
    /* thermal noise, unit power per element, pulse and range cell */
    for (size_t i = 0; i < (size_t)C * P * R; i++) cube[i] = (stap_cf32)rt_cgauss(&g);
    /* barrage jammers: one complex Gaussian waveform sample per (pulse, range cell),
     * white over pulses and range, arriving on the array with a plane-wave steering */
    for (int j = 0; j < 2; j++) {
        double amp = pow(10.0, sp->jammer_jnr_db[j] / 20.0);
        for (int p = 0; p < P; p++)
            for (int r = 0; r < R; r++) {
                double complex s = amp * rt_cgauss(&g);
                for (int c = 0; c < C; c++) {
                    double ph = 2 * M_PI * d * c * sp->jammer_u[j];
                    cube[((size_t)c * P + p) * R + r] += (stap_cf32)(s * (cos(ph) + I * sin(ph)));
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
                    (stap_cf32)(amp * (cos(ph) + I * sin(ph)));
            }
    }
    return STAP_OK;
}
