/* scene_response.c: the angle–Doppler response of a run's adapted weights and of the
 * clairvoyant optimum R_d^{-1} v from a scene's true covariance (scene_response.h). */
#include "scene_response.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_sinr.h" /* stap_scene_run_config */

void stap_scene_response_free(scene_response *res)
{
    if (!res) return;
    free(res->adapted);
    free(res->optimum);
    free(res->optimum_weights);
    res->adapted = res->optimum = NULL;
    res->optimum_weights = NULL;
}

/* G(u_i, f_j) = |sum_q g_j[q] A_i[q]|^2 with A_i[q] = sum_c conj(w[cQ+q]) a_c(u_i) over the
 * grid; A is nu x Q scratch, g the nf x Q temporal taps. */
static void response_grid(const stap_cf64 *w, int C, int Q, double spacing, int nu, int nf,
                          const stap_cf64 *g, stap_cf64 *A, double *out)
{
    for (int i = 0; i < nu; i++) {
        double u = -1.0 + 2.0 * i / (nu - 1);
        for (int q = 0; q < Q; q++) A[(size_t)i * Q + q] = 0;
        for (int c = 0; c < C; c++) {
            double ph = 2 * M_PI * spacing * c * u;
            stap_cf64 a = cos(ph) + I * sin(ph);
            for (int q = 0; q < Q; q++) A[(size_t)i * Q + q] += conj(w[c * Q + q]) * a;
        }
    }
    for (int j = 0; j < nf; j++)
        for (int i = 0; i < nu; i++) {
            stap_cf64 acc = 0;
            for (int q = 0; q < Q; q++) acc += g[(size_t)j * Q + q] * A[(size_t)i * Q + q];
            out[(size_t)j * nu + i] = creal(acc) * creal(acc) + cimag(acc) * cimag(acc);
        }
}

int stap_scene_response_compute(const scene_truth *t, const stap_config *cfg_in, const stap_cf32 *V,
                           int B, const stap_cf32 *W, int bin, int segment, int beam, int nu, int nf,
                           scene_response *res, stap_error *err)
{
    memset(res, 0, sizeof *res);
    stap_config cfg;
    int st = stap_scene_run_config(t, cfg_in, B, &cfg, err);
    if (st) return st;
    const int C = cfg.channels, P = cfg.pulses, D = cfg.doppler_bins, Q = cfg.doppler_order;
    const int S = cfg.segments, N = C * Q;
    if (bin < 0 || bin >= D)
        return stap_fail(err, STAP_EINVAL, "Doppler bin %d outside 0..%d", bin, D - 1);
    if (segment < 0 || segment >= S)
        return stap_fail(err, STAP_EINVAL, "segment %d outside 0..%d", segment, S - 1);
    if (beam < 0 || beam >= B)
        return stap_fail(err, STAP_EINVAL, "beam %d outside 0..%d", beam, B - 1);
    if (nu < 2 || nu > SCENE_RESPONSE_MAX_POINTS || nf < 1 || nf > SCENE_RESPONSE_MAX_POINTS)
        return stap_fail(err, STAP_EINVAL, "response grid %d x %d (angles x Dopplers): need 2..%d "
                         "angles and 1..%d Dopplers", nu, nf, SCENE_RESPONSE_MAX_POINTS,
                         SCENE_RESPONSE_MAX_POINTS);
    res->nu = nu;
    res->nf = nf;
    res->bin = bin;
    res->segment = segment;
    res->beam = beam;
    res->N = N;
    const stap_cf32 *v = V + (size_t)beam * N;
    res->look_u = stap_look_direction(v, C, Q, cfg.element_spacing);
    res->bin_doppler = (double)bin / D >= 0.5 ? (double)bin / D - 1.0 : (double)bin / D;

    const size_t grid = (size_t)nu * nf;
    res->optimum = malloc(sizeof(double) * grid);
    res->optimum_weights = malloc(sizeof(stap_cf64) * N);
    if (W) res->adapted = malloc(sizeof(double) * grid);
    float *winf = malloc(sizeof(float) * P);
    double *win = malloc(sizeof(double) * P);
    stap_cf64 *Rd = malloc(sizeof(stap_cf64) * (size_t)N * N), *w = malloc(sizeof(stap_cf64) * N);
    stap_cf64 *g = malloc(sizeof(stap_cf64) * (size_t)nf * Q), *A = malloc(sizeof(stap_cf64) * (size_t)nu * Q);
    if (!res->optimum || !res->optimum_weights || (W && !res->adapted) || !winf || !win || !Rd ||
        !w || !g || !A) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the %d x %d response grid", nu, nf);
        goto out;
    }
    if ((st = stap_window(&cfg, winf, err))) goto out;
    for (int p = 0; p < stap_window_len(&cfg); p++) win[p] = winf[p];

    /* bin d's Q temporal taps of a unit target at each Doppler: the signature of a
     * one-element array with a = 1 (sub-CPI: the staggered snapshot's) */
    const stap_cf64 one = 1;
    const int sub = stap_is_subcpi(&cfg), Pw = stap_window_len(&cfg);
    for (int j = 0; j < nf; j++) {
        const double f = -0.5 + (double)j / nf;
        if (sub) stap_scene_staggered_signature(1, &one, f, win, Pw, D, Q, bin, g + (size_t)j * Q);
        else stap_scene_doppler_signature(1, P, &one, f, win, D, Q, bin, g + (size_t)j * Q);
    }

    /* w_opt = R_d^{-1} v / (v^H R_d^{-1} v); sub-CPI: the algorithm's clairvoyant weights
     * R_sub^{-1} s / (s^H R_sub^{-1} s), s = bin d's solve steering (DPCA: its fixed
     * weights, nothing to compare them with) */
    stap_cf64 *sv = malloc(sizeof(stap_cf64) * N);
    double *s2 = malloc(sizeof(double) * 2 * (size_t)N);
    if (!sv || !s2) {
        free(sv);
        free(s2);
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the response's steering");
        goto out;
    }
    if (sub) stap_subcpi_steering(&cfg, v, bin, s2);
    for (int k = 0; k < N; k++) sv[k] = sub ? s2[2 * k] + I * s2[2 * k + 1] : (stap_cf64)v[k];
    free(s2);
    if (stap_algorithm_traits(&cfg) & STAP_TRAIT_FIXED) {
        stap_cf32 *wd = malloc(sizeof(stap_cf32) * N);
        if (!wd) {
            free(sv);
            st = stap_fail(err, STAP_ENOMEM, "out of memory for the fixed weights");
            goto out;
        }
        stap_fixed_weights(&cfg, v, wd, NULL); /* fixed: cannot fail */
        for (int k = 0; k < N; k++) res->optimum_weights[k] = wd[k];
        free(wd);
        free(sv);
        response_grid(res->optimum_weights, C, Q, cfg.element_spacing, nu, nf, g, A, res->optimum);
        goto adapted;
    }
    if (sub) {
        const double unit = 1;
        st = stap_scene_covariance_staggered(t, &unit, 1, D, Q, 0, Rd, err);
    } else {
        st = stap_scene_covariance_doppler(t, win, D, Q, bin, Rd, err);
    }
    if (st) {
        free(sv);
        goto out;
    }
    for (int k = 0; k < N; k++) w[k] = sv[k];
    lapack_int info = LAPACKE_zposv(LAPACK_COL_MAJOR, 'L', N, 1, (lapack_complex_double *)Rd, N,
                                    (lapack_complex_double *)w, N);
    if (info != 0) {
        free(sv);
        st = stap_fail(err, STAP_ENUMERIC, "true covariance of %s %d is not positive definite "
                       "(zposv info %d)", sub ? "a sub-CPI, bin" : "Doppler bin", bin, (int)info);
        goto out;
    }
    stap_cf64 vw = 0;
    for (int k = 0; k < N; k++) vw += conj(sv[k]) * w[k];
    free(sv);
    if (!(creal(vw) > 0)) {
        st = stap_fail(err, STAP_EINVAL, "steering vector of beam %d is zero", beam);
        goto out;
    }
    for (int k = 0; k < N; k++) res->optimum_weights[k] = w[k] / creal(vw);
    response_grid(res->optimum_weights, C, Q, cfg.element_spacing, nu, nf, g, A, res->optimum);
adapted:
    if (W) {
        const stap_cf32 *wr = W + (((size_t)bin * S + segment) * B + beam) * N;
        for (int k = 0; k < N; k++) w[k] = wr[k];
        response_grid(w, C, Q, cfg.element_spacing, nu, nf, g, A, res->adapted);
    }
out:
    free(winf);
    free(win);
    free(Rd);
    free(w);
    free(g);
    free(A);
    if (st) stap_scene_response_free(res);
    return st;
}
