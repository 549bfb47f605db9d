/* synth: the built-in demonstration cube that `rtstap run` processes when no --input is
 * given: thermal noise, two barrage jammers and one target, from a fixed seed. (The
 * physically detailed airborne scene generator is datasets/scene.h.) */
#ifndef SYNTH_H
#define SYNTH_H

#include <stdint.h>

#include "stap.h"

#include "rt_hidden.h"
typedef struct synth_params {
    int channels, pulses, range_gates;
    double element_spacing;   /* d / lambda                                        */
    uint64_t seed;
    double jammer_u[2];       /* sine-space angles of the two barrage jammers       */
    double jammer_jnr_db[2];  /* jammer-to-noise ratio per element, dB              */
    int target_range;         /* range cell of the target                           */
    double target_u;          /* its sine-space angle                               */
    double target_doppler;    /* its normalized Doppler frequency, cycles per pulse */
    double target_snr_db;     /* per element and pulse, dB                          */
} synth_params;

/* Defaults for a cube shape: jammers at u = -0.45 (30 dB) and +0.6 (25 dB); the target
 * at range cell R/3, u = 0.0625, Doppler 0.25 cycles/pulse, SNR 0 dB; seed 20101. */
RT_INTERNAL void stap_synth_defaults(synth_params *sp, int channels, int pulses, int range_gates);

/* Fill cube (C x P x R, row-major) with unit-power complex white noise plus the jammers
 * and the target. */
RT_INTERNAL int stap_synth_cube(const synth_params *sp, stap_cf32 *cube, stap_error *err);

#endif
