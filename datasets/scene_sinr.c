/* scene_sinr.c: the SINR loss of a run's adaptive weights against the optimum from a
 * generated scene's true covariance (scene_sinr.h; the model is stap's sinr.h). */
#include "scene_sinr.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Solve L x = b in place (L lower triangular, column-major N x N). */
static void trsv_lower(int N, const stap_cf64 *L, stap_cf64 *x)
{
    for (int i = 0; i < N; i++) {
        stap_cf64 s = x[i];
        for (int j = 0; j < i; j++) s -= L[(size_t)j * N + i] * x[j];
        x[i] = s / L[(size_t)i * N + i];
    }
}

/* Solve L^H x = b in place (L as trsv_lower). */
static void trsv_upper_h(int N, const stap_cf64 *L, stap_cf64 *x)
{
    for (int i = N - 1; i >= 0; i--) {
        stap_cf64 s = x[i];
        for (int j = i + 1; j < N; j++) s -= conj(L[(size_t)i * N + j]) * x[j];
        x[i] = s / conj(L[(size_t)i * N + i]);
    }
}

/* w^H R w = ||L^H w||^2 (R = L L^H, L as trsv_lower). */
static double quad_form(int N, const stap_cf64 *L, const stap_cf64 *w)
{
    double q = 0;
    for (int i = 0; i < N; i++) {
        stap_cf64 acc = 0;
        for (int j = i; j < N; j++) acc += conj(L[(size_t)i * N + j]) * w[j];
        q += creal(acc * conj(acc));
    }
    return q;
}

/* |w^H t|^2 / (w^H R w): the output SINR of w per unit target power (R = L L^H). */
static double sinr_on(int N, const stap_cf64 *L, const stap_cf64 *w, const stap_cf64 *t)
{
    stap_cf64 wt = 0;
    for (int j = 0; j < N; j++) wt += conj(w[j]) * t[j];
    const double q = quad_form(N, L, w);
    return q > 0 ? creal(wt * conj(wt)) / q : 0;
}

int stap_scene_run_config(const scene_truth *t, const stap_config *run, int B, stap_config *cfg,
                     stap_error *err)
{
    *cfg = *run;
    int st = stap_config_validate(cfg, 1, B, stap_dof(cfg), err);
    if (st) return st;
    if (cfg->channels != t->cfg.channels || cfg->pulses != t->cfg.pulses ||
        cfg->range_gates != t->cfg.range_gates)
        return stap_fail(err, STAP_EINVAL, "the run is on a %d x %d x %d cube but the scene is "
                         "%d x %d x %d (channels x pulses x range gates)", cfg->channels,
                         cfg->pulses, cfg->range_gates, t->cfg.channels, t->cfg.pulses,
                         t->cfg.range_gates);
    if (fabs(cfg->element_spacing - t->cfg.element_spacing) > 1e-9 * t->cfg.element_spacing)
        return stap_fail(err, STAP_EINVAL, "the run assumed an element spacing of %g wavelengths, "
                         "the scene has %g", cfg->element_spacing, t->cfg.element_spacing);
    return STAP_OK;
}

/* JDL's best SINR (over xi): t~^H (T^H R T)^{-1} t~, t~ = T^H t, T = I_Q (x) A (A: C x Na,
 * (re, im) pairs, column j at A + 2 j C; DOF j*Q + q). R: N x N column-major (untouched);
 * RT (N x Nt), Rt (Nt x Nt), tt (Nt): work space. */
static int jdl_optimum(const stap_config *cfg, const double *A, const stap_cf64 *R, const stap_cf64 *t,
                       stap_cf64 *RT, stap_cf64 *Rt, stap_cf64 *tt, double *out, stap_error *err)
{
    const int C = cfg->channels, Q = cfg->doppler_order, Na = cfg->angle_bins;
    const int N = C * Q, Nt = Na * Q;
#define TA(c, j) (A[2 * ((size_t)(j) * C + (c))] + I * A[2 * ((size_t)(j) * C + (c)) + 1])
    /* RT[:, j*Q + q] = R T e_{jq} = sum_c R[:, c*Q + q] A[c][j] */
    for (int j = 0; j < Na; j++)
        for (int q = 0; q < Q; q++) {
            stap_cf64 *col = RT + (size_t)(j * Q + q) * N;
            for (int i = 0; i < N; i++) col[i] = 0;
            for (int c = 0; c < C; c++) {
                const stap_cf64 a = TA(c, j);
                const stap_cf64 *rc = R + (size_t)(c * Q + q) * N;
                for (int i = 0; i < N; i++) col[i] += rc[i] * a;
            }
        }
    /* Rt = T^H RT; tt = T^H t */
    for (int j = 0; j < Na; j++)
        for (int q = 0; q < Q; q++) {
            const int row = j * Q + q;
            for (int k = 0; k < Nt; k++) {
                stap_cf64 acc = 0;
                for (int c = 0; c < C; c++) acc += conj(TA(c, j)) * RT[(size_t)k * N + c * Q + q];
                Rt[(size_t)k * Nt + row] = acc;
            }
            stap_cf64 acc = 0;
            for (int c = 0; c < C; c++) acc += conj(TA(c, j)) * t[c * Q + q];
            tt[row] = acc;
        }
#undef TA
    lapack_int info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, 'L', Nt, (lapack_complex_double *)Rt, Nt);
    if (info != 0)
        return stap_fail(err, STAP_ENUMERIC, "JDL: T^H R T is not positive definite (zpotrf info %d)",
                         (int)info);
    trsv_lower(Nt, Rt, tt);
    double s = 0;
    for (int j = 0; j < Nt; j++) s += creal(tt[j] * conj(tt[j]));
    *out = s;
    return STAP_OK;
}

/* The sub-CPI algorithms (sinr.h): for each bin d the covariance R_z(d) of the staggered
 * snapshot and the signature t_d of a target in beam b's look direction at the bin's
 * centre Doppler; the clairvoyant weights R_sub^{-1} s_{d,b} and the run's weights w on
 * z_d, rho of w in the sub-CPI domain. Fills res's arrays (allocated, D x B and D x S x B). */
static int subcpi_losses(const scene_truth *t, const stap_config *cfg, const double *win,
                         const stap_cf32 *V, int B, const stap_cf32 *W, stap_sinr_result *res,
                         stap_error *err)
{
    const int C = cfg->channels, P = cfg->pulses, D = cfg->doppler_bins, Q = cfg->doppler_order;
    const int S = cfg->segments, N = C * Q, Pw = stap_window_len(cfg);
    const double sigma2 = t->cfg.noise_power, one = 1.0;
    stap_cf64 *Rs = malloc(sizeof(stap_cf64) * (size_t)N * N), *Rz = malloc(sizeof(stap_cf64) * (size_t)N * N);
    stap_cf64 *a = malloc(sizeof(stap_cf64) * (size_t)B * C), *tz = malloc(sizeof(stap_cf64) * N);
    stap_cf64 *sv = malloc(sizeof(stap_cf64) * N), *x = malloc(sizeof(stap_cf64) * N);
    stap_cf64 *w = malloc(sizeof(stap_cf64) * N);
    double *an = malloc(sizeof(double) * B), *s2 = malloc(sizeof(double) * 2 * (size_t)N);
    const int fixed = (stap_algorithm_traits(cfg) & STAP_TRAIT_FIXED) != 0;
    stap_cf32 *wd = malloc(sizeof(stap_cf32) * N); /* fixed weights (DPCA) */
    int st = STAP_OK;
    if (!Rs || !Rz || !a || !tz || !sv || !x || !w || !an || !s2 || !wd) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the sub-CPI SINR computation");
        goto out;
    }
    /* R_sub = L_s L_s^H: the covariance of one sub-CPI (pulses 0..Q-1, as trained) */
    if ((st = stap_scene_covariance_staggered(t, &one, 1, D, Q, 0, Rs, err))) goto out;
    lapack_int info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, 'L', N, (lapack_complex_double *)Rs, N);
    if (info != 0) {
        st = stap_fail(err, STAP_ENUMERIC, "true covariance of a sub-CPI is not positive definite "
                       "(zpotrf info %d)", (int)info);
        goto out;
    }
    /* beam b's spatial response: the tap of v_b with the most energy (pre-Doppler a_b on
     * every tap; ADPCA a_b times the canceller's coefficient); the losses do not depend on
     * its scale */
    for (int b = 0; b < B; b++) {
        const stap_cf32 *v = V + (size_t)b * N;
        int best = 0;
        double emax = -1;
        for (int q = 0; q < Q; q++) {
            double e = 0;
            for (int c = 0; c < C; c++) e += crealf(v[c * Q + q] * conjf(v[c * Q + q]));
            if (e > emax) {
                emax = e;
                best = q;
            }
        }
        for (int c = 0; c < C; c++) a[(size_t)b * C + c] = v[c * Q + best];
        an[b] = emax;
    }
    for (int d = 0; d < D; d++) {
        const double f = (double)d / D;
        if ((st = stap_scene_covariance_staggered(t, win, Pw, D, Q, d, Rz, err))) goto out;
        info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, 'L', N, (lapack_complex_double *)Rz, N);
        if (info != 0) {
            st = stap_fail(err, STAP_ENUMERIC, "true covariance of the staggered snapshot of Doppler "
                           "bin %d is not positive definite (zpotrf info %d)", d, (int)info);
            goto out;
        }
        for (int b = 0; b < B; b++) {
            const size_t db = (size_t)d * B + b;
            stap_scene_staggered_signature(C, a + (size_t)b * C, f, win, Pw, D, Q, d, tz);
            /* L_opt: t^H R_z^{-1} t = ||L_z^{-1} t||^2 */
            memcpy(x, tz, sizeof(stap_cf64) * N);
            trsv_lower(N, Rz, x);
            double topt = 0;
            for (int j = 0; j < N; j++) topt += creal(x[j] * conj(x[j]));
            const double snr0 = an[b] > 0 ? an[b] * P / sigma2 : 0; /* per unit xi */
            res->optimum_loss[db] = snr0 > 0 ? topt / snr0 : 0;
            /* the clairvoyant weights R_sub^{-1} s and s^H R_sub^{-1} s = ||L_s^{-1} s||^2;
             * DPCA: its fixed weights (rho = SINR(w) / SINR(w_alg), 1 but for rounding) */
            double srs = 0, salg;
            if (fixed) {
                if ((st = stap_fixed_weights(cfg, V + (size_t)b * N, wd, err))) goto out;
                for (int j = 0; j < N; j++) w[j] = wd[j];
                salg = sinr_on(N, Rz, w, tz);
            } else {
                stap_subcpi_steering(cfg, V + (size_t)b * N, d, s2);
                for (int j = 0; j < N; j++) sv[j] = s2[2 * j] + I * s2[2 * j + 1];
                memcpy(w, sv, sizeof(stap_cf64) * N);
                trsv_lower(N, Rs, w);
                for (int j = 0; j < N; j++) srs += creal(w[j] * conj(w[j]));
                trsv_upper_h(N, Rs, w);
                salg = sinr_on(N, Rz, w, tz);
            }
            res->algorithm_loss[db] = snr0 > 0 ? salg / snr0 : 0;
            for (int g = 0; g < S; g++) {
                const size_t k = ((size_t)d * S + g) * B + b;
                const stap_cf32 *wf = W + k * N;
                stap_cf64 ws = 0;
                for (int j = 0; j < N; j++) {
                    w[j] = wf[j];
                    if (!fixed) ws += conj(w[j]) * sv[j]; /* (fixed weights: no solve steering) */
                }
                const double wrw = quad_form(N, Rs, w), sw = sinr_on(N, Rz, w, tz);
                if (fixed) /* the canceller's own nulls (SINR 0 for both): rho 1 */
                    res->rho[k] = salg > 0 ? sw / salg : sw == salg ? 1.0 : 0.0;
                else res->rho[k] = wrw > 0 && srs > 0 ? creal(ws * conj(ws)) / (wrw * srs) : 0;
                res->adaptive_loss[k] = snr0 > 0 ? sw / snr0 : 0;
            }
        }
    }
out:
    free(Rs);
    free(Rz);
    free(a);
    free(tz);
    free(sv);
    free(x);
    free(w);
    free(an);
    free(s2);
    free(wd);
    return st;
}

static double beta_fn_sd(double a, double b)
{
    return sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)));
}

/* the table's description of the run: sizes, algorithm, training window, window */
static void sinr_describe(stap_sinr_result *res, const stap_config *cfg, int B)
{
    res->D = cfg->doppler_bins;
    res->S = cfg->segments;
    res->B = B;
    res->N = stap_dof(cfg);
    res->Nt = stap_adaptive_dof(cfg);
    stap_algorithm_label(cfg, res->algorithm, sizeof res->algorithm);
    res->K = cfg->training;
    res->C = cfg->channels;
    res->P = cfg->pulses;
    res->Q = cfg->doppler_order;
    if (cfg->training_window == STAP_TRAINING_SLIDING)
        snprintf(res->training, sizeof res->training, "sliding LB=%d G=%d", cfg->block, cfg->guard);
    else
        snprintf(res->training, sizeof res->training, "segment");
    if (cfg->window == STAP_WINDOW_CHEBYSHEV)
        snprintf(res->window, sizeof res->window, "chebyshev:%g", cfg->chebyshev_db);
    else
        snprintf(res->window, sizeof res->window, "%s", cfg->window == STAP_WINDOW_HANN ? "hann"
                                                                                     : "none");
}

/* the summary: rho's mean and spread over the beam (or all), against the RMB law */
static void sinr_summary(stap_sinr_result *res, int beam, int applicable, int K, int Nt,
                         size_t estimates)
{
    const int D = res->D, S = res->S, B = res->B;
    double s1 = 0, s2 = 0;
    size_t n = 0;
    for (int d = 0; d < D; d++)
        for (int g = 0; g < S; g++)
            for (int b = 0; b < B; b++) {
                if (beam >= 0 && b != beam) continue;
                double r = res->rho[((size_t)d * S + g) * B + b];
                s1 += r;
                s2 += r * r;
                n++;
            }
    res->count = n;
    res->rho_mean = s1 / n;
    res->rho_sd = n > 1 ? sqrt(fmax(0, (s2 - s1 * s1 / n) / (n - 1))) : 0;
    res->rmb_applicable = applicable;
    if (K + 2 - Nt > 0 && Nt > 1) {
        double aa = K + 2 - Nt, bb = Nt - 1;
        res->rmb_mean = aa / (aa + bb);
        res->rmb_sd = beta_fn_sd(aa, bb);
    } else {
        res->rmb_mean = Nt == 1 ? 1.0 : NAN;
        res->rmb_sd = Nt == 1 ? 0.0 : NAN;
    }
    res->estimates = estimates < n ? estimates : n;
    res->rho_se = res->rmb_sd / sqrt((double)res->estimates);
    res->z = res->rho_se > 0 ? (res->rho_mean - res->rmb_mean) / res->rho_se : 0;
}

int stap_sinr_compute(const scene_truth *t, const stap_config *cfg_in, const stap_cf32 *V, int B,
                      const stap_cf32 *W, int beam, stap_sinr_result *res, stap_error *err)
{
    memset(res, 0, sizeof *res);
    stap_config cfg;
    int st = stap_scene_run_config(t, cfg_in, B, &cfg, err);
    if (st) return st;
    const int C = cfg.channels, P = cfg.pulses, D = cfg.doppler_bins, Q = cfg.doppler_order;
    const int S = cfg.segments, N = C * Q, K = cfg.training, Nt = stap_adaptive_dof(&cfg);
    const unsigned traits = stap_algorithm_traits(&cfg);
    const int jdl = (traits & STAP_TRAIT_BEAMSPACE) != 0, Na = cfg.angle_bins;
    const int sub = (traits & STAP_TRAIT_SUBCPI) != 0;
    if (beam < -1 || beam >= B)
        return stap_fail(err, STAP_EINVAL, "beam %d outside 0..%d (-1: all beams)", beam, B - 1);
    sinr_describe(res, &cfg, B);
    res->beam = beam;
    res->prf_hz = t->cfg.prf_hz;
    res->doppler = malloc(sizeof(double) * D);
    res->optimum_loss = malloc(sizeof(double) * (size_t)D * B);
    res->algorithm_loss = malloc(sizeof(double) * (size_t)D * B);
    res->rho = malloc(sizeof(double) * (size_t)D * S * B);
    res->adaptive_loss = malloc(sizeof(double) * (size_t)D * S * B);
    float *winf = malloc(sizeof(float) * P);
    double *win = malloc(sizeof(double) * P);
    stap_cf64 *Rd = malloc(sizeof(stap_cf64) * (size_t)N * N);
    stap_cf64 *a = malloc(sizeof(stap_cf64) * C);
    stap_cf64 *sig = malloc(sizeof(stap_cf64) * N), *x = malloc(sizeof(stap_cf64) * N);
    stap_cf64 *w = malloc(sizeof(stap_cf64) * N);
    /* JDL: every beam's transform (stap_jdl_beams, as the engine makes it), T^H R_d T */
    double *At = jdl ? malloc(sizeof(double) * 2 * (size_t)B * C * Na) : NULL;
    stap_cf64 *Rt = jdl ? malloc(sizeof(stap_cf64) * (size_t)Nt * Nt) : NULL;
    stap_cf64 *RT = jdl ? malloc(sizeof(stap_cf64) * (size_t)N * Nt) : NULL;
    stap_cf64 *Rfull = jdl ? malloc(sizeof(stap_cf64) * (size_t)N * N) : NULL; /* R_d before zpotrf */
    stap_cf64 *st_ = jdl ? malloc(sizeof(stap_cf64) * Nt) : NULL;
    if (!res->doppler || !res->optimum_loss || !res->algorithm_loss || !res->rho ||
        !res->adaptive_loss || !winf ||
        !win || !Rd || !a || !sig || !x || !w || (jdl && (!At || !Rt || !RT || !st_ || !Rfull))) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the SINR computation");
        goto out;
    }
    if ((st = stap_window(&cfg, winf, err))) goto out;
    for (int p = 0; p < stap_window_len(&cfg); p++) win[p] = winf[p];
    for (int b = 0; jdl && b < B; b++)
        if ((st = stap_jdl_beams(&cfg, V + (size_t)b * N, At + 2 * (size_t)b * C * Na, err))) {
            stap_error_prefix(err, "beam %d", b);
            goto out;
        }

    int applicable = cfg.loading == 0 && K >= Nt && !(traits & STAP_TRAIT_FIXED);
    for (int d = 0; d < D; d++) {
        double f = (double)d / D;
        res->doppler[d] = f >= 0.5 ? f - 1.0 : f;
    }
    /* sub-CPI: rho is taken where the weights adapt (the RMB law holds for any fixed s) */
    if (sub && (st = subcpi_losses(t, &cfg, win, V, B, W, res, err))) goto out;
    for (int d = 0; !sub && d < D; d++) {
        double f = (double)d / D;
        if ((st = stap_scene_covariance_doppler(t, win, D, Q, d, Rd, err))) goto out;
        if (jdl) memcpy(Rfull, Rd, sizeof(stap_cf64) * (size_t)N * N);
        /* R_d = L L^H */
        lapack_int info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, 'L', N, (lapack_complex_double *)Rd, N);
        if (info != 0) {
            st = stap_fail(err, STAP_ENUMERIC, "true covariance of Doppler bin %d is not positive "
                           "definite (zpotrf info %d)", d, (int)info);
            goto out;
        }
        for (int b = 0; b < B; b++) {
            const stap_cf32 *v = V + (size_t)b * N;
            double an = 0;
            for (int c = 0; c < C; c++) {
                a[c] = v[c * Q + (Q - 1) / 2];
                an += creal(a[c] * conj(a[c]));
            }
            stap_scene_doppler_signature(C, P, a, f, win, D, Q, d, sig);
            /* is v proportional to the signature? (the RMB law assumes it) */
            stap_cf64 vs = 0;
            double vv = 0, ss = 0;
            for (int j = 0; j < N; j++) {
                vs += conj(v[j]) * sig[j];
                vv += crealf(v[j] * conjf(v[j]));
                ss += creal(sig[j] * conj(sig[j]));
            }
            if (creal(vs * conj(vs)) < (1 - 1e-6) * vv * ss) applicable = 0;
            /* t^H R^{-1} t = ||L^{-1} t||^2 */
            memcpy(x, sig, sizeof(stap_cf64) * N);
            trsv_lower(N, Rd, x);
            double topt = 0;
            for (int j = 0; j < N; j++) topt += creal(x[j] * conj(x[j]));
            double sigma2 = t->cfg.noise_power;
            res->optimum_loss[(size_t)d * B + b] = an > 0 ? sigma2 * topt / (an * P) : 0;
            double talg = topt; /* t~^H (T^H R_d T)^{-1} t~ */
            if (jdl && (st = jdl_optimum(&cfg, At + 2 * (size_t)b * C * Na, Rfull, sig, RT, Rt,
                                         st_, &talg, err))) {
                stap_error_prefix(err, "Doppler bin %d, beam %d", d, b);
                goto out;
            }
            res->algorithm_loss[(size_t)d * B + b] = an > 0 ? sigma2 * talg / (an * P) : 0;
            for (int g = 0; g < S; g++) {
                const stap_cf32 *wf = W + (((size_t)d * S + g) * B + b) * N;
                stap_cf64 ws = 0;
                for (int j = 0; j < N; j++) {
                    w[j] = wf[j];
                    ws += conj(w[j]) * sig[j];
                }
                const double wrw = quad_form(N, Rd, w); /* w^H R w = ||L^H w||^2 */
                double sinr_w = creal(ws * conj(ws)) / wrw;
                res->rho[((size_t)d * S + g) * B + b] = talg > 0 ? sinr_w / talg : 0;
                res->adaptive_loss[((size_t)d * S + g) * B + b] =
                    an > 0 ? sigma2 * sinr_w / (an * P) : 0;
            }
        }
    }
    /* the sub-CPI algorithms train one covariance per segment for every bin and beam; the
     * others one per bin and segment (shared by the beams) */
    sinr_summary(res, beam, applicable, K, Nt, (size_t)(sub ? S : D * S));
out:
    free(winf);
    free(win);
    free(Rd);
    free(Rfull);
    free(At);
    free(Rt);
    free(RT);
    free(st_);
    free(a);
    free(sig);
    free(x);
    free(w);
    if (st) stap_sinr_free(res);
    return st;
}
