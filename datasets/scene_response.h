/* scene_response: the angle–Doppler response of a run's adapted weights and of the
 * clairvoyant optimum built from a generated scene's true covariance — what the
 * picture adapted_response.png of `rtstap plot` shows (stap/plot/plot.h draws it).
 *
 * For Doppler bin d, range segment s and beam b of a factored post-Doppler run (weights
 * D x S x B x N, N = C Q; docs/processing.md), the response of a weight
 * vector w at sine-space angle u and normalized Doppler f (cycles per pulse) is
 *
 *   G(u, f) = |w^H s(u, f)|^2,
 *   s(u, f) = the snapshot a unit point target at (u, f) leaves in bin d's Q taps after
 *             the windowed, zero-padded Doppler DFT: stap_scene_doppler_signature(C, P,
 *             a(u), f, win, D, Q, d), a_c(u) = exp(2 pi i (d/lambda) c u) (scene.h).
 *
 * Since s = a(u) (x) g(f) (the spatial response times bin d's Q temporal taps, index
 * c Q + q), G is evaluated as |sum_q g_q(f) sum_c conj(w_{cQ+q}) a_c(u)|^2: C Q nu + Q P nf
 * exponentials instead of C Q P nu nf.
 *
 * The clairvoyant optimum for the same bin and beam is w_opt = R_d^{-1} v / (v^H R_d^{-1}
 * v), R_d the true covariance of bin d's snapshot (stap_scene_covariance_doppler) and v the
 * beam's steering vector; it is normalized like the run's weights (w^H v = 1, contract
 * step 7), so both responses are 1 in the look direction at the steering's Doppler.
 *
 * Pre-Doppler, ADPCA and DPCA (Q = pulses of a sub-CPI): s(u, f) is the staggered snapshot
 * of bin d, a(u) (x) g(f), g_q(f) = exp(2 pi i f q) sum_p' win[p'] exp(2 pi i (f - d/D) p')
 * (stap_scene_staggered_signature), and the clairvoyant weights are the algorithm's own:
 * R_sub^{-1} s_d / (s_d^H R_sub^{-1} s_d), R_sub the true covariance of one sub-CPI and s_d
 * bin d's solve steering (stap_subcpi_steering); DPCA's "optimum" is its fixed weights. At
 * the look direction and the bin's centre both responses are (sum_p' win[p'])^2. */
#ifndef SCENE_RESPONSE_H
#define SCENE_RESPONSE_H

#include "rt_hidden.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grid limits: nu sine-angles u_i = -1 + 2 i / (nu - 1) (both ends included), nf Doppler
 * frequencies f_j = -1/2 + j / nf (cycles per pulse, [-1/2, 1/2)). */
#define SCENE_RESPONSE_MAX_POINTS 4097

typedef struct scene_response {
    int nu, nf;            /* the grid (above)                                           */
    int bin, segment, beam;/* what was evaluated                                          */
    int N;                 /* degrees of freedom, C Q                                     */
    double look_u;         /* the beam's look direction (stap_look_direction)             */
    double bin_doppler;    /* bin d's centre d / D, wrapped to [-1/2, 1/2)                 */
    double *adapted;       /* nf x nu, row j = f_j: G of the run's weights; NULL when no
                              weights were given                                          */
    double *optimum;       /* nf x nu: G of w_opt                                         */
    stap_cf64 *optimum_weights; /* N: w_opt                                                    */
} scene_response;

/* The two responses on an nu x nf grid (2 <= nu, 1 <= nf, each <= SCENE_RESPONSE_MAX_POINTS).
 * t: the scene's truth; cfg: the run's configuration (its C, P, R and element spacing
 * must be the scene's); steering: B x N; weights: D x S x B x N, or NULL for the optimum
 * alone; bin 0..D-1, segment 0..S-1, beam 0..B-1. STAP_EINVAL names the parameter out of
 * range; STAP_ENUMERIC when R_d is not positive definite. */
RT_INTERNAL int stap_scene_response_compute(const scene_truth *t, const stap_config *cfg, const stap_cf32 *steering,
                           int B, const stap_cf32 *weights, int bin, int segment, int beam, int nu,
                           int nf, scene_response *res, stap_error *err);
RT_INTERNAL void stap_scene_response_free(scene_response *res);

/* The grid's coordinates. */
static inline double scene_response_u(const scene_response *r, int i)
{
    return -1.0 + 2.0 * i / (r->nu - 1);
}
static inline double scene_response_f(const scene_response *r, int j)
{
    return -0.5 + (double)j / r->nf;
}

#ifdef __cplusplus
}
#endif

#endif
