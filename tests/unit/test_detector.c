/* test_detector: the adaptive detectors (AMF, Kelly's GLRT, ACE; cfar.h, stap/detect/adaptive.c,
 * stap/engine/engine_detect.c).
 *  1. The false-alarm formulas: pfa(threshold(pfa)) = pfa; Kelly's closed form; the ACE
 *     integral against the hypergeometric series (1 - eta)^L 2F1(L, L+1; K+1; eta) summed
 *     here; the AMF integral against its own Simpson here on a different grid (N = 2:
 *     f(rho) = (L+1) rho^L).
 *  2. Monte Carlo from the definitions, independent of the detectors' code: S = sum of K
 *     CN(0, I) snapshots x_k x_k^H formed explicitly, its Cholesky factor (the double
 *     Cholesky of stap/analysis/roc.c, not the engine's QR), a CN(0, I) cell
 *     x, the three statistics; 10^6 trials (fresh S and x each) for (N, K) = (4, 12) and
 *     4 x 10^5 for (8, 20). At pfa 1e-3 the measured / requested must be within [0.8, 1.25]:
 *     the count is Binomial(n, p), np = 1000 (resp. 400), so a correct detector fails with
 *     probability P(X < 800) + P(X > 1250) < 2e-10 (resp. P(X < 320) + P(X > 500) < 6e-5,
 *     normal tails at 6.3 / 4.0 sigma); at pfa 1e-2 within 5 binomial standard errors
 *     (false failure < 6e-7 each). A control: the same check at half the threshold's pfa
 *     (a detector off by 2) must fail.
 *  3. The engine against a double reference written here (post-Doppler EFA, sliding
 *     training with guard cells, Hann window, zero-padded Doppler, a target; backends cpu
 *     (Householder and CholeskyQR2) and lapack, and where there is a GPU gpu and cublas
 *     (the device's detector kernel); JDL in each beam's beamspace, the reference
 *     with its own transform from stap_jdl_beams): the reference forms S of each cell's K
 *     training snapshots from the engine's Doppler cube, and every cell whose statistic is
 *     clear of the threshold (1e-3 relative) is detected or not alike; the statistics agree
 *     to 1e-3, the threshold and snr_db (the AMF in dB) too; the target's cell is detected.
 *  4. The engine's false-alarm rate on white noise (N = 4, K = 16, sliding, 40 CPIs of
 *     2 x 16 x 1000 cells): within [0.8, 1.25] of pfa 1e-3 for each detector (np = 1280;
 *     cells of one CPI share training, so the count is over-dispersed: with a variance
 *     inflation up to 2 the bounds are 4.5 sigma away, false failure < 1e-5).
 *  5. Where the detectors are not defined: segment training, loading, the sub-CPI and
 *     fixed-weight algorithms are refused with STAP_EINVAL; the GPU backends run them (where
 *     there is no GPU they are refused for that, not for the detector). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfar.h"
#include "engine.h"
#include "la_check.h"
#include "roc.h"
#include "synth.h"
#include "testutil.h"

static const stap_cfar_kind KINDS[3] = {STAP_CFAR_AMF, STAP_CFAR_KELLY, STAP_CFAR_ACE};

/* ---- 1. formulas ------------------------------------------------------------------------- */

/* (1 - eta)^L 2F1(L, L+1; K+1; eta) by its series (eta < 1: terms eventually fall). */
static double ace_series(int N, int K, double eta)
{
    const int L = K - N + 1;
    double term = 1, sum = 1;
    for (int n = 0; n < 200000; n++) {
        term *= (L + n) * (double)(L + 1 + n) / ((K + 1.0 + n) * (n + 1.0)) * eta;
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    return pow(1 - eta, L) * sum;
}

/* AMF, N = 2: int_0^1 (L+1) rho^L (1 + eta rho / K)^-L, Simpson on 3000 panels */
static double amf_n2(int K, double eta)
{
    const int L = K - 1, n = 3000;
    double s = 0;
    for (int i = 0; i <= n; i++) {
        const double r = (double)i / n, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        s += w * (L + 1) * pow(r, L) * pow(1 + eta * r / K, -L);
    }
    return s / (3.0 * n);
}

static void test_formulas(void)
{
    stap_error err;
    const int NK[][2] = {{2, 4}, {4, 12}, {8, 20}, {12, 60}, {36, 72}, {1, 10}};
    const double P[] = {1e-2, 1e-3, 1e-4, 1e-6, 1e-8};
    for (size_t c = 0; c < sizeof NK / sizeof NK[0]; c++)
        for (int k = 0; k < 3; k++)
            for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
                const int N = NK[c][0], K = NK[c][1];
                double eta = -1;
                const int st = stap_detector_threshold(KINDS[k], N, K, P[p], &eta, &err);
                if (KINDS[k] == STAP_CFAR_ACE && N == 1) {
                    CHECK(st == STAP_EINVAL, "ACE with N = 1 accepted");
                    continue;
                }
                CHECK(st == STAP_OK, "%s N %d K %d pfa %g: %s", stap_cfar_kind_name(KINDS[k]), N,
                      K, P[p], err.msg);
                const double back = stap_detector_pfa(KINDS[k], N, K, eta);
                CHECK(fabs(back / P[p] - 1) < 1e-6, "%s N %d K %d: pfa(threshold(%g)) = %g",
                      stap_cfar_kind_name(KINDS[k]), N, K, P[p], back);
                if (KINDS[k] == STAP_CFAR_KELLY)
                    CHECK(fabs(pow(1 - eta, K - N + 1) / P[p] - 1) < 1e-9, "Kelly closed form");
                if (KINDS[k] == STAP_CFAR_ACE && eta < 0.995) {
                    const double s = ace_series(N, K, eta);
                    CHECK(fabs(s / back - 1) < 1e-6, "ACE N %d K %d eta %g: integral %g, series %g",
                          N, K, eta, back, s);
                }
                if (KINDS[k] == STAP_CFAR_AMF && N == 2) {
                    const double s = amf_n2(K, eta);
                    CHECK(fabs(s / back - 1) < 1e-6, "AMF N 2 K %d: integral %g, reference %g", K,
                          back, s);
                }
                if (KINDS[k] == STAP_CFAR_AMF && N == 1) /* rho = 1: (1 + eta/K)^-K */
                    CHECK(fabs(pow(1 + eta / K, -K) / P[p] - 1) < 1e-9, "AMF N 1");
            }
    double eta;
    CHECK(stap_detector_threshold(STAP_CFAR_AMF, 8, 7, 1e-3, &eta, &err) == STAP_EINVAL,
          "K < N accepted");
    CHECK(stap_detector_threshold(STAP_CFAR_KELLY, 8, 20, 1.0, &eta, &err) == STAP_EINVAL,
          "pfa 1 accepted");
}

/* ---- 2. Monte Carlo from the definitions ------------------------------------------------- */

/* the three statistics of x against v and the factor of S (a, b as cfar.h defines them) */
static void ref_stats(const double complex *Lm, int n, int K, const double complex *v,
                      const double complex *x, double complex *wv, double complex *wx, double out[3])
{
    stap_roc_forward(Lm, n, v, wv);
    stap_roc_forward(Lm, n, x, wx);
    double vv = 0, xx = 0;
    double complex vx = 0;
    for (int i = 0; i < n; i++) {
        vv += creal(wv[i] * conj(wv[i]));
        xx += creal(wx[i] * conj(wx[i]));
        vx += conj(wv[i]) * wx[i];
    }
    const double a = creal(vx * conj(vx)) / vv;
    out[0] = K * a;          /* AMF with Rhat = S / K */
    out[1] = a / (1 + xx);   /* Kelly */
    out[2] = a / xx;         /* ACE */
}

static double complex cn(tc_rng *r) { return (double complex)tc_cnormal(r); }

static void monte_carlo(tc_rng *rng, int N, int K, long trials, double lo, double hi)
{
    stap_error err;
    const double pfas[2] = {1e-3, 1e-2};
    double eta[2][3], ctl[3];
    for (int k = 0; k < 3; k++) {
        for (int p = 0; p < 2; p++) stap_detector_threshold(KINDS[k], N, K, pfas[p], &eta[p][k], &err);
        stap_detector_threshold(KINDS[k], N, K, 5e-4, &ctl[k], &err); /* a detector off by 2 */
    }
    double complex *S = tc_xmalloc(sizeof *S * N * N), *v = tc_xmalloc(sizeof *v * N),
                   *x = tc_xmalloc(sizeof *x * N), *s = tc_xmalloc(sizeof *s * N),
                   *wv = tc_xmalloc(sizeof *wv * N), *wx = tc_xmalloc(sizeof *wx * N);
    double nv = 0;
    for (int i = 0; i < N; i++) {
        v[i] = cn(rng);
        nv += creal(v[i] * conj(v[i]));
    }
    for (int i = 0; i < N; i++) v[i] /= sqrt(nv);
    long count[2][3] = {{0}}, count_ctl[3] = {0}, singular = 0;
    for (long t = 0; t < trials; t++) {
        memset(S, 0, sizeof *S * N * N);
        for (int k = 0; k < K; k++) {
            for (int i = 0; i < N; i++) s[i] = cn(rng);
            for (int i = 0; i < N; i++)
                for (int j = 0; j <= i; j++) S[i * N + j] += s[i] * conj(s[j]);
        }
        if (!stap_roc_cholesky(S, N)) {
            singular++;
            continue;
        }
        for (int i = 0; i < N; i++) x[i] = cn(rng);
        double st[3];
        ref_stats(S, N, K, v, x, wv, wx, st);
        for (int k = 0; k < 3; k++) {
            for (int p = 0; p < 2; p++) count[p][k] += st[k] > eta[p][k];
            count_ctl[k] += st[k] > ctl[k];
        }
    }
    CHECK(singular == 0, "N %d K %d: %ld singular sample covariances", N, K, singular);
    for (int k = 0; k < 3; k++) {
        const double r3 = count[0][k] / (trials * 1e-3), r2 = count[1][k] / (trials * 1e-2);
        const double se2 = sqrt(trials * 1e-2 * (1 - 1e-2));
        printf("Monte Carlo %-5s N %d K %d, %ld trials: pfa 1e-3 measured/requested %.3f, 1e-2 "
               "%.3f\n", stap_cfar_kind_name(KINDS[k]), N, K, trials, r3, r2);
        CHECK(r3 >= lo && r3 <= hi, "%s N %d K %d: pfa 1e-3 measured %.4g x requested",
              stap_cfar_kind_name(KINDS[k]), N, K, r3);
        CHECK(fabs(count[1][k] - trials * 1e-2) < 5 * se2, "%s N %d K %d: pfa 1e-2 measured %.4g x",
              stap_cfar_kind_name(KINDS[k]), N, K, r2);
        const double rc = count_ctl[k] / (trials * 1e-3);
        CHECK(!(rc >= lo && rc <= hi), "control: a threshold for pfa 5e-4 passes the 1e-3 check "
              "(%s, %.3f)", stap_cfar_kind_name(KINDS[k]), rc);
    }
    free(S);
    free(v);
    free(x);
    free(s);
    free(wv);
    free(wx);
}

/* ---- 3, 4. the engine ---------------------------------------------------------------------- */

static stap_config det_config(stap_backend be)
{
    stap_config c;
    stap_config_defaults(&c);
    c.channels = 3;
    c.pulses = 16;
    c.range_gates = 240;
    c.doppler_bins = 20;
    c.doppler_order = 3; /* N = 9 */
    c.training = 24;
    c.beams = 3;
    c.window = STAP_WINDOW_HANN;
    c.training_window = STAP_TRAINING_SLIDING;
    c.block = 4;
    c.guard = 2;
    c.backend = be;
    return c;
}

/* z = T^H s for JDL's transform of a beam (A: C x Na in double pairs, A[2 (j C + c)]), or
 * z = s (A NULL) */
static void to_space(const stap_config *c, const double *A, const double complex *s, double complex *z)
{
    const int C = c->channels, Q = c->doppler_order, Na = A ? c->angle_bins : 0;
    if (!A) {
        memcpy(z, s, sizeof *z * C * Q);
        return;
    }
    for (int j = 0; j < Na; j++)
        for (int q = 0; q < Q; q++) {
            double complex acc = 0;
            for (int ch = 0; ch < C; ch++)
                acc += conj(A[2 * (j * C + ch)] + I * A[2 * (j * C + ch) + 1]) * s[ch * Q + q];
            z[j * Q + q] = acc;
        }
}

/* The element-space snapshot of cell r in bin d of the Doppler cube X (C x D x R). */
static void element_snapshot(const stap_config *c, const stap_cf32 *X, int d, int r, double complex *s)
{
    const int C = c->channels, D = c->doppler_bins, Q = c->doppler_order, R = c->range_gates;
    for (int ch = 0; ch < C; ch++)
        for (int q = 0; q < Q; q++) {
            const int bin = ((d - (Q - 1) / 2 + q) % D + D) % D;
            s[ch * Q + q] = X[((size_t)ch * D + bin) * R + r];
        }
}

/* The reference statistic of every cell (3 kinds x B x D x R) from the engine's Doppler cube
 * X: S of each cell's K training snapshots formed explicitly; JDL (jdl) in each beam's
 * beamspace, from its own transform (stap_jdl_beams). */
static void ref_cells(const stap_config *c, int jdl, const stap_cf32 *V, const stap_cf32 *X, double *stat)
{
    const int C = c->channels, D = c->doppler_bins, Q = c->doppler_order, R = c->range_gates;
    const int Ne = C * Q, N = jdl ? c->angle_bins * Q : Ne, K = c->training, B = c->beams;
    double complex *S = tc_xmalloc(sizeof *S * N * N), *s = tc_xmalloc(sizeof *s * Ne),
                   *x = tc_xmalloc(sizeof *x * N), *v = tc_xmalloc(sizeof *v * N),
                   *z = tc_xmalloc(sizeof *z * N), *wv = tc_xmalloc(sizeof *wv * N),
                   *wx = tc_xmalloc(sizeof *wx * N);
    double *A = jdl ? tc_xmalloc(sizeof(double) * 2 * C * c->angle_bins) : NULL;
    int *cells = tc_xmalloc(sizeof(int) * K);
    stap_error err;
    for (int b = 0; b < B; b++) {
        if (jdl) CHECK(stap_jdl_beams(c, V + (size_t)b * Ne, A, &err) == STAP_OK, "jdl beams: %s", err.msg);
        for (int i = 0; i < Ne; i++) s[i] = V[(size_t)b * Ne + i];
        to_space(c, A, s, v);
        for (int d = 0; d < D; d++)
            for (int r = 0; r < R; r++) {
                stap_training_cells(c, r / c->block, cells);
                memset(S, 0, sizeof *S * N * N);
                for (int k = 0; k < K; k++) {
                    CHECK(abs(cells[k] - r) > c->guard, "training cell %d of cell %d is in its guard",
                          cells[k], r);
                    element_snapshot(c, X, d, cells[k], s);
                    to_space(c, A, s, z);
                    for (int i = 0; i < N; i++)
                        for (int j = 0; j <= i; j++) S[i * N + j] += z[i] * conj(z[j]);
                }
                CHECK(stap_roc_cholesky(S, N), "cell %d %d: singular", d, r);
                element_snapshot(c, X, d, r, s);
                to_space(c, A, s, x);
                double st[3];
                ref_stats(S, N, K, v, x, wv, wx, st);
                for (int k = 0; k < 3; k++) stat[(((size_t)k * B + b) * D + d) * R + r] = st[k];
            }
    }
    free(S);
    free(s);
    free(x);
    free(v);
    free(z);
    free(wv);
    free(wx);
    free(A);
    free(cells);
}

static void engine_vs_reference(stap_backend be, stap_qr_method qr, int jdl)
{
    stap_config c = det_config(be);
    c.qr = qr;
    if (jdl) {
        stap_error e;
        CHECK(stap_algorithm_parse("jdl", &c.algorithm, &e) == STAP_OK, "jdl: %s", e.msg);
        c.angle_bins = 3; /* N = 9 beamspace DOF of 9 element DOF */
        c.channels = 5;   /* 15 element DOF */
    }
    stap_error err;
    const int C = c.channels, R = c.range_gates, D = c.doppler_bins, B = c.beams, N = C * c.doppler_order;
    const int Nt = jdl ? c.angle_bins * c.doppler_order : N;
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * C * c.pulses * R);
    synth_params sp;
    stap_synth_defaults(&sp, C, c.pulses, R);
    sp.seed = 4646;
    sp.target_snr_db = 10;
    sp.target_u = stap_beam_u(1, B); /* beam 1's look direction */
    sp.target_doppler = 5.0 / D;     /* bin 5 */
    CHECK(stap_synth_cube(&sp, cube, &err) == STAP_OK, "synth: %s", err.msg);
    stap_cf32 *X = tc_xmalloc(sizeof(stap_cf32) * C * D * R), *V = tc_xmalloc(sizeof(stap_cf32) * B * N);
    double *stat = tc_xmalloc(sizeof(double) * 3 * B * D * R);
    stap_config cv = c;
    stap_config_validate(&cv, 0, 0, 0, &err);
    stap_default_steering(&cv, V);
    for (int k = 0; k < 3; k++) {
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.slots = 1;
        o.keep_output = 1;
        o.cfar.kind = KINDS[k];
        o.cfar.pfa = 0.02;
        stap_engine *e;
        const char *name = stap_cfar_kind_name(KINDS[k]);
        if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err)) {
            CHECK(0, "%s engine (%s): %s", name, stap_backend_name(be), err.msg);
            continue;
        }
        stap_cpi_result r;
        CHECK(stap_engine_submit(e, 0, cube, &err) == STAP_OK && stap_engine_collect(e, 0, &r, &err) == STAP_OK &&
                  stap_engine_doppler(e, 0, X, &err) == STAP_OK,
              "%s: CPI: %s", name, err.msg);
        if (k == 0) ref_cells(&cv, jdl, V, X, stat);
        double eta;
        stap_detector_threshold(KINDS[k], Nt, c.training, o.cfar.pfa, &eta, &err);
        const double *ref = stat + (size_t)k * B * D * R;
        size_t j = 0, agree = 0, unclear = 0, bad = 0;
        int target = 0;
        for (size_t cell = 0; cell < (size_t)B * D * R; cell++) {
            const int b = (int)(cell / ((size_t)D * R)), d = (int)(cell / R % D), rr = (int)(cell % R);
            const stap_detection *hit = NULL;
            if (j < r.detection_count && r.detections[j].beam == b && r.detections[j].doppler_bin == d &&
                r.detections[j].range_cell == rr)
                hit = &r.detections[j++];
            const double t = ref[cell];
            if (fabs(t / eta - 1) < 1e-3) {
                unclear++;
                continue;
            }
            if (!!hit != (t > eta)) {
                if (bad++ < 5) CHECK(0, "%s %s: cell (%d, %d, %d) statistic %g, threshold %g, engine %s",
                                     name, stap_backend_name(be), b, d, rr, t, eta, hit ? "detects" : "does not");
                continue;
            }
            if (!hit) continue;
            agree++;
            if (b == 1 && d == 5 && rr == sp.target_range) target = 1;
            const stap_cf32 y = r.output[cell];
            CHECK(fabs(hit->statistic / t - 1) < 1e-3 && fabs(hit->threshold / eta - 1) < 1e-6 &&
                      fabs(hit->power / (crealf(y) * crealf(y) + cimagf(y) * cimagf(y)) - 1) < 1e-5,
                  "%s: cell (%d, %d, %d): statistic %g (reference %g), threshold %g (%g), power %g",
                  name, b, d, rr, hit->statistic, t, hit->threshold, eta, hit->power);
            const double amf = stat[((size_t)0 * B * D * R) + cell];
            CHECK(fabs(hit->snr_db - 10 * log10(amf)) < 1e-2, "%s: snr_db %g, AMF %g dB", name,
                  hit->snr_db, 10 * log10(amf));
        }
        CHECK(j == r.detection_count, "%s: detections out of order or duplicated", name);
        CHECK(target, "%s (%s): the target (beam 1, bin 5, cell %d) is not detected", name,
              stap_backend_name(be), sp.target_range);
        CHECK(agree > 50, "%s: only %zu detections to compare", name, agree);
        printf("engine %s %s%s qr %d: %zu detections agree with the reference, %zu cells within "
               "1e-3 of the threshold\n", stap_backend_name(be), jdl ? "jdl " : "", name, (int)qr,
               agree, unclear);
        stap_engine_destroy(e);
    }
    free(cube);
    free(X);
    free(V);
    free(stat);
}

static void engine_pfa(tc_rng *rng)
{
    stap_config c = det_config(STAP_BACKEND_CPU); /* changed to N = 4, K = 16, white noise: */
    c.channels = 4;
    c.range_gates = 1000;
    c.doppler_bins = c.pulses; /* independent bins */
    c.window = STAP_WINDOW_NONE;
    c.doppler_order = c.block = 1;
    c.training = 16;
    c.beams = 2;
    enum { CPIS = 40 };
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * n);
    stap_engine *e[3] = {0};
    stap_error err;
    for (int k = 0; k < 3; k++) {
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.slots = 1;
        o.cfar.kind = KINDS[k];
        o.cfar.pfa = 1e-3;
        CHECK(stap_engine_create(&e[k], &c, NULL, 0, 0, &o, &err) == STAP_OK, "engine: %s", err.msg);
    }
    long count[3] = {0};
    for (int cpi = 0; cpi < CPIS; cpi++) {
        for (size_t i = 0; i < n; i++) cube[i] = tc_cnormal(rng);
        for (int k = 0; k < 3; k++) {
            stap_cpi_result r;
            if (!e[k] || stap_engine_submit(e[k], 0, cube, &err) || stap_engine_collect(e[k], 0, &r, &err))
                continue;
            count[k] += (long)r.detection_count;
        }
    }
    const double cells = (double)CPIS * c.beams * c.pulses * c.range_gates;
    for (int k = 0; k < 3; k++) {
        const double ratio = count[k] / (cells * 1e-3);
        printf("engine on noise %-5s N 4 K 16: %ld false alarms in %.0f cells, measured/requested "
               "pfa %.3f\n", stap_cfar_kind_name(KINDS[k]), count[k], cells, ratio);
        CHECK(ratio >= 0.8 && ratio <= 1.25, "%s: engine pfa %.3f x requested",
              stap_cfar_kind_name(KINDS[k]), ratio);
        stap_engine_destroy(e[k]);
    }
    free(cube);
}

/* ---- 5. refusals --------------------------------------------------------------------------- */

static void refusals(void)
{
    stap_error err;
    stap_engine_options o;
    stap_engine_options_defaults(&o);
    o.slots = 1;
    o.cfar.kind = STAP_CFAR_KELLY;
    o.cfar.pfa = 1e-3;
    stap_engine *e = NULL;
    stap_config c = det_config(STAP_BACKEND_CPU);
    c.training_window = STAP_TRAINING_SEGMENT;
    c.segments = 2;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL && strstr(err.msg, "sliding"),
          "segment training accepted (%s)", err.msg);
    c = det_config(STAP_BACKEND_CPU);
    c.loading = 0.1;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL && strstr(err.msg, "loading"),
          "loading accepted (%s)", err.msg);
    const char *algos[] = {"pre-doppler", "adpca", "dpca"};
    for (int a = 0; a < 3; a++) {
        c = det_config(STAP_BACKEND_CPU);
        CHECK(stap_algorithm_parse(algos[a], &c.algorithm, &err) == STAP_OK, "%s", err.msg);
        c.doppler_order = 2;
        const int st = stap_engine_create(&e, &c, NULL, 0, 0, &o, &err);
        CHECK(st == STAP_EINVAL && strstr(err.msg, "kelly detector"), "%s accepted (%d: %s)", algos[a],
              st, err.msg);
        if (!st) stap_engine_destroy(e);
    }
    c = det_config(STAP_BACKEND_GPU); /* runs where there is a GPU (issue 46) */
    int st = stap_engine_create(&e, &c, NULL, 0, 0, &o, &err);
    if (st == STAP_OK) {
        CHECK(strstr(stap_engine_describe(e), "kelly detector kernel") != NULL, "gpu: %s",
              stap_engine_describe(e));
        stap_engine_destroy(e);
    } else {
        CHECK(!strstr(err.msg, "detector"), "gpu backend refused for the detector: %s", err.msg);
    }
    c = det_config(STAP_BACKEND_AUTO); /* auto: the GPU engine where there is one, else the CPU's */
    if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_OK) {
        CHECK(strstr(stap_engine_describe(e), "kelly detector") != NULL, "auto: %s", stap_engine_describe(e));
        stap_engine_destroy(e);
    } else {
        CHECK(0, "auto backend refused: %s", err.msg);
    }
    stap_cfar_kind k;
    CHECK(stap_detector_parse("ACE", &k, &err) == STAP_OK && k == STAP_CFAR_ACE, "parse ACE");
    CHECK(stap_detector_parse("ca", &k, &err) == STAP_EINVAL, "parse ca as a detector");
    CHECK(stap_cfar_parse_kind("amf", &k, &err) == STAP_EINVAL, "--cfar amf accepted");
    stap_cfar_plan *p;
    CHECK(stap_cfar_plan_create(&p, &o.cfar, 1, 16, 100, 1, &err) == STAP_EINVAL,
          "a CFAR plan of an adaptive detector");
}

int main(void)
{
    tc_rng rng;
    tc_rng_seed(&rng, 46046);
    test_formulas();
    monte_carlo(&rng, 4, 12, 1000000, 0.8, 1.25);
    monte_carlo(&rng, 8, 20, 400000, 0.8, 1.25);
    engine_vs_reference(STAP_BACKEND_CPU, STAP_QR_HOUSEHOLDER, 0);
    engine_vs_reference(STAP_BACKEND_CPU, STAP_QR_CHOLQR2, 0);
    engine_vs_reference(STAP_BACKEND_CPU, STAP_QR_CHOLQR, 0);
    engine_vs_reference(STAP_BACKEND_LAPACK, STAP_QR_HOUSEHOLDER, 0);
    engine_vs_reference(STAP_BACKEND_CPU, STAP_QR_HOUSEHOLDER, 1);
    stap_error why;
    if (stap_backend_available(STAP_BACKEND_GPU, &why) == STAP_OK) { /* the GPU machine */
        engine_vs_reference(STAP_BACKEND_GPU, STAP_QR_HOUSEHOLDER, 0);
        engine_vs_reference(STAP_BACKEND_CUBLAS, STAP_QR_HOUSEHOLDER, 0);
        engine_vs_reference(STAP_BACKEND_GPU, STAP_QR_HOUSEHOLDER, 1);
    } else {
        printf("engine on the GPU backends: skipped (%s)\n", why.msg);
    }
    engine_pfa(&rng);
    refusals();
    if (tc_failures) fprintf(stderr, "test_detector: %d failure(s)\n", tc_failures);
    return tc_failures ? 1 : 0;
}
