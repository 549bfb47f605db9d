/* scene: airborne radar scenes for testing and demonstrating rtstap without recorded
 * data — a side-looking uniform linear array on a moving platform, ground clutter,
 * barrage jammers, thermal noise and point targets, after Ward, "Space-Time Adaptive
 * Processing for Airborne Radar", MIT Lincoln Laboratory TR-1015 (1994), chapter 2.
 *
 * Model (docs/scene.md has the derivations):
 *  - Geometry: flat earth, platform at altitude h, velocity v along the array axis;
 *    the clutter of every range cell is evaluated at one reference slant range Rs
 *    (depression angle phi, sin phi = h / Rs, grazing angle psi = phi), so the
 *    clutter is range-homogeneous — the assumption of Ward's analysis and of the
 *    Reed–Mallett–Brennan law.
 *  - Clutter: a ring of Nc patches at azimuths theta_i = -pi + 2 pi (i + 1/2) / Nc
 *    (broadside = 0). Spatial frequency vt_i = (d/lambda) cos phi sin theta_i,
 *    normalized Doppler w_i = beta vt_i, beta = 2 v T_r / d (T_r = 1 / PRF).
 *    Per-patch CNR xi_i proportional to G_tx(theta_i) g(theta_i) sigma_i, where g is
 *    the element power pattern cos^2 theta (times the backlobe level behind the
 *    array), G_tx = g times the array factor of the uniformly weighted transmit array
 *    steered to sine-angle transmit_u, and sigma_i = gamma sin psi * (patch area) the
 *    constant-gamma reflectivity (equal for all patches of a ring, so it cancels in
 *    the normalization); the xi_i are scaled so that sum_i xi_i = CNR (linear).
 *    Patch amplitudes are independent complex Gaussians, CN(0, xi_i sigma^2), drawn
 *    afresh for every range cell.
 *  - Barrage jammers: spatial steering at sine-angle u_j (vt_j = (d/lambda) u_j),
 *    a complex Gaussian waveform white over pulses and range cells, power
 *    JNR_j sigma^2 per element.
 *  - Noise: CN(0, sigma^2) per element, pulse and range cell (sigma^2 = 1).
 *  - Targets: x[c,p,r_t] += a exp(i phi_t) exp(2 pi i (c vt_t + p w_t)), vt_t =
 *    (d/lambda) u_t, w_t = f_D / PRF, a^2 = SNR sigma^2 per element per pulse, phi_t a
 *    random phase.
 * Cube layout C x P x R row-major, x[c,p,r]; the space-time vector of a range cell is
 * indexed c*P + p (the cube's order). Steering phase conventions are those of
 * stap.h: a_c = exp(+2 pi i (d/lambda) c u); Doppler bin k holds exp(+2 pi i k p / D). */
#ifndef SCENE_H
#define SCENE_H

#include <stdint.h>

#include "h5io.h"
#include "stap.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

#define SCENE_MAX_JAMMERS 16
#define SCENE_MAX_TARGETS 64

typedef struct scene_jammer {
    double u;        /* sine of the azimuth, -1..1                              */
    double jnr_db;   /* jammer-to-noise ratio per element, dB                    */
} scene_jammer;

typedef struct scene_target {
    int range_cell;     /* 0..R-1                                                */
    double u;           /* sine of the azimuth, -1..1                            */
    double doppler_hz;  /* Doppler frequency (normalized Doppler = / PRF)         */
    double snr_db;      /* per element and pulse, dB                             */
    double el_deg;      /* elevation, degrees (0: in the array's plane); u stays the
                           sine of the azimuth, the line sees cos(el) u          */
} scene_target;

typedef struct scene_config {
    int channels, pulses, range_gates;  /* C, P, R                                   */
    double element_spacing;   /* d / lambda (> 0)                                    */
    double carrier_hz;        /* carrier frequency; lambda = c0 / carrier            */
    double prf_hz;            /* pulse repetition frequency                          */
    double velocity_mps;      /* platform speed along the array axis (>= 0)         */
    double altitude_m;        /* platform altitude (> 0)                             */
    double slant_range_m;     /* reference slant range of the clutter ring (> alt.) */
    int clutter;              /* 0: no clutter                                       */
    double cnr_db;            /* total clutter-to-noise ratio per element and pulse */
    int patches;              /* Nc clutter patches on the ring, >= 1; 0 = default  */
    double backlobe_db;       /* element backlobe level (<= 0 dB)                   */
    double transmit_u;        /* sine-angle the transmit beam points at              */
    double noise_power;       /* sigma^2 (> 0), 1 by default                         */
    int njammers;
    scene_jammer jammers[SCENE_MAX_JAMMERS];
    int ntargets;
    scene_target targets[SCENE_MAX_TARGETS];
    uint64_t seed;
    /* Optional geometry (gen --array): element positions C x 3 (x, y, z) in wavelengths
     * (x the array axis, y broadside, z up; the caller's, NULL: the line at element_spacing),
     * and the channels' complex gains applied to everything received (NULL: 1). The exact
     * covariances (stap_scene_covariance_*) follow both. */
    const double *position;
    const stap_cf32 *calibration;
} scene_config;

typedef enum scene_preset { SCENE_PRESET_EASY = 0, SCENE_PRESET_MEDIUM, SCENE_PRESET_HARD,
                            SCENE_PRESET_WARD, SCENE_PRESET_COUNT } scene_preset;

/* "easy" | "medium" | "hard" (the cube shapes of the run presets) | "ward" (TR-1015's
 * example: 18 elements at lambda/2, 18 pulses, beta = 1, CNR 47 dB, two 35 dB
 * jammers, 300 range gates). */
RT_INTERNAL int stap_scene_preset_parse(const char *name, scene_preset *p, stap_error *err);
RT_INTERNAL const char *stap_scene_preset_name(scene_preset p);
/* Fill every field of cfg with the preset's values (no targets, seed 1). */
RT_INTERNAL void stap_scene_preset_config(scene_preset p, scene_config *cfg);
/* Velocity giving a chosen beta for cfg's spacing, carrier and PRF. */
RT_INTERNAL double stap_scene_velocity_for_beta(const scene_config *cfg, double beta);

/* The model derived from a configuration: geometry and the clutter patches. */
typedef struct scene_truth {
    scene_config cfg;
    double wavelength_m, beta, depression_rad, grazing_rad;
    int patches;                 /* Nc (0 without clutter)                          */
    double *patch_azimuth;       /* theta_i, radians                                */
    double *patch_spatial;       /* vt_i, cycles per element                        */
    double *patch_doppler;       /* w_i, cycles per pulse                           */
    double *patch_cnr;           /* xi_i, linear, per element and pulse             */
    double target_phase[SCENE_MAX_TARGETS]; /* radians                              */
    double *own_position;        /* read back from a file's /array (cfg.position points
                                    here; freed with the truth)                       */
    stap_cf32 *own_calibration;
} scene_truth;

/* Validate cfg and derive the model (patches, geometry, target phases from the seed). */
RT_INTERNAL int stap_scene_truth_build(const scene_config *cfg, scene_truth *t, stap_error *err);
RT_INTERNAL void stap_scene_truth_free(scene_truth *t);

/* Draw one CPI: cube is C x P x R (row-major), from t->cfg.seed. */
RT_INTERNAL int stap_scene_generate(const scene_truth *t, stap_cf32 *cube, stap_error *err);

/* /radar and /array metadata of a scene for stap_input_write. */
RT_INTERNAL void stap_scene_radar_meta(const scene_truth *t, stap_radar_meta *meta);

/* Write /truth (parameters as attributes; clutter patches, jammers and targets as
 * datasets) into a file being written (a writer's hook); stap_scene_truth_write_hook has the
 * stap_h5_extra_fn signature with user = const scene_truth *. */
RT_INTERNAL int stap_scene_truth_write(stap_h5_file *f, const scene_truth *t, stap_error *err);
RT_INTERNAL int stap_scene_truth_write_hook(stap_h5_file *f, void *user, stap_error *err);
/* Read /truth of a generated scene file back (the patch arrays as stored, so the
 * covariance is the exact one of the file), with its /array's positions and gains. */
RT_INTERNAL int stap_scene_truth_read(const char *path, scene_truth *t, stap_error *err);

/* Exact clutter-plus-jammer-plus-noise covariance of one range cell's space-time
 * vector, CP x CP, column-major, index c*P + p. Rst must hold (CP)^2 elements. */
RT_INTERNAL int stap_scene_covariance_spacetime(const scene_truth *t, stap_cf64 *Rst, stap_error *err);

/* The covariance of the Doppler-domain snapshot s(d, .) of contract steps 1-2
 * (window win[0..P-1], DFT zero-padded to D bins, taps at bins d-(Q-1)/2+q mod D,
 * index c*Q + q): T_d^H Rst T_d, N x N column-major (N = C Q), computed from the
 * rank-1 / Kronecker structure of the model without forming Rst. */
RT_INTERNAL int stap_scene_covariance_doppler(const scene_truth *t, const double *win, int D, int Q, int d,
                             stap_cf64 *Rd, stap_error *err);

/* The covariance of the staggered snapshot of the sub-CPI algorithms (pre-Doppler, ADPCA):
 * z[c*Q + q] = sum_{p'=0}^{Pw-1} win[p'] exp(-2 pi i d p' / D) x[c, p' + q] (the window
 * over Pw = P - Q + 1 sub-CPIs, as the engine's staggered Doppler filter; Pw + Q - 1 <= P,
 * 0 <= d < D), N x N column-major (N = C Q), from the Toeplitz structure of the model
 * without forming Rst. Pw = 1, win = {1}, d = 0 gives the covariance of one sub-CPI,
 * x[c, q] for q < Q (the principal block of Rst, reordered c*Q + q). */
RT_INTERNAL int stap_scene_covariance_staggered(const scene_truth *t, const double *win, int Pw, int D, int Q,
                               int d, stap_cf64 *Rz, stap_error *err);

/* Staggered signature (as stap_scene_covariance_staggered) of a unit-amplitude point target
 * with spatial response a[0..C-1] and normalized Doppler w: s[c*Q+q] = a[c] exp(2 pi i w q)
 * sum_p' win[p'] exp(2 pi i (w - d/D) p'). */
RT_INTERNAL void stap_scene_staggered_signature(int C, const stap_cf64 *a, double w, const double *win, int Pw,
                               int D, int Q, int d, stap_cf64 *s);

/* Doppler-domain signature of a unit-amplitude point target with spatial response
 * a[0..C-1] and normalized Doppler w (cycles per pulse) in bin d: s[c*Q+q] =
 * a[c] sum_p win[p] exp(2 pi i w p) exp(-2 pi i b_q p / D). */
RT_INTERNAL void stap_scene_doppler_signature(int C, int P, const stap_cf64 *a, double w, const double *win, int D,
                             int Q, int d, stap_cf64 *s);

#ifdef __cplusplus
}
#endif

#endif
