/* test_scene: the airborne scene generator against its own truth.
 *  1. The sample covariance of generated space-time snapshots converges to
 *     stap_scene_covariance_spacetime: E||Rhat - R||_F^2 = (tr R)^2 / K exactly for complex
 *     Gaussian snapshots, so the normalized error K ||Rhat - R||_F^2 / (tr R)^2 must
 *     stay near 1 while K grows 64-fold (a wrong truth makes it grow like K).
 *  2. The same for the Doppler-domain snapshots the STAP plan forms (window, zero
 *     padding, Q = 3) against stap_scene_covariance_doppler.
 *  3. stap_scene_covariance_doppler equals T_d^H R_st T_d formed explicitly.
 *  4. Jammer placement and power (spatial spectrum peak, white over pulses); target
 *     placement (the exact difference of two draws with and without the target).
 *  5. /truth round trip through HDF5, and rejected configurations. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "la_check.h"
#include "scene.h"
#include "h5x.h"
#include "stap.h"
#include "testutil.h"

static double cabs2(stap_cf64 z) { return creal(z) * creal(z) + cimag(z) * cimag(z); }

/* K ||Rhat - R||_F^2 / (tr R)^2 for the first K of the snapshots (N x ncells, column k
 * = snapshot k). */
static double normalized_error(int N, const stap_cf64 *snap, int K, const stap_cf64 *R)
{
    double e = 0, tr = 0;
    for (int i = 0; i < N; i++) tr += creal(R[(size_t)i * N + i]);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            stap_cf64 s = 0;
            for (int k = 0; k < K; k++) s += snap[(size_t)k * N + i] * conj(snap[(size_t)k * N + j]);
            e += cabs2(s / K - R[(size_t)j * N + i]);
        }
    return K * e / (tr * tr);
}

/* The whitened version: with R = L L^H and z = L^{-1} s, E||Zhat - I||_F^2 = N^2 / K;
 * returns K ||Zhat - I||_F^2 / N^2. Far more sensitive to errors of the small
 * eigenvalues (the noise floor under 30-47 dB of clutter) than the raw error. */
static double whitened_error(int N, const stap_cf64 *snap, int K, const stap_cf64 *R)
{
    stap_cf64 *L = malloc(sizeof(stap_cf64) * N * N), *z = malloc(sizeof(stap_cf64) * (size_t)N * K);
    memcpy(L, R, sizeof(stap_cf64) * N * N);
    if (LAPACKE_zpotrf(LAPACK_COL_MAJOR, 'L', N, L, N) != 0) {
        free(L);
        free(z);
        return INFINITY;
    }
    memcpy(z, snap, sizeof(stap_cf64) * (size_t)N * K);
    LAPACKE_ztrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', N, K, L, N, z, N);
    double e = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            stap_cf64 s = 0;
            for (int k = 0; k < K; k++) s += z[(size_t)k * N + i] * conj(z[(size_t)k * N + j]);
            e += cabs2(s / K - (i == j ? 1.0 : 0.0));
        }
    free(L);
    free(z);
    return K * e / ((double)N * N);
}

/* the largest eigenvalue of the Hermitian N x N matrix R (column-major) */
static double largest_eigenvalue(int N, const stap_cf64 *R)
{
    stap_cf64 *A = malloc(sizeof(stap_cf64) * N * N);
    double *w = malloc(sizeof(double) * N), lmax = INFINITY; /* a failed solve fails the check */
    memcpy(A, R, sizeof(stap_cf64) * N * N);
    if (LAPACKE_zheevd(LAPACK_COL_MAJOR, 'N', 'L', N, A, N, w) == 0) lmax = w[N - 1];
    free(A);
    free(w);
    return lmax;
}

static void small_scene(scene_config *c, tc_rng *rng, int C, int P, int R)
{
    stap_scene_preset_config(SCENE_PRESET_WARD, c);
    c->channels = C;
    c->pulses = P;
    c->range_gates = R;
    c->cnr_db = 30;
    c->patches = 360;
    c->velocity_mps = stap_scene_velocity_for_beta(c, 0.5 + tc_uniform(rng)); /* beta 0.5..1.5 */
    c->jammers[0] = (scene_jammer){-0.8 + 0.5 * tc_uniform(rng), 25};
    c->jammers[1] = (scene_jammer){0.3 + 0.5 * tc_uniform(rng), 20};
    c->seed = (uint64_t)(tc_uniform(rng) * 1e15);
}

static void test_spacetime_convergence(tc_rng *rng)
{
    const int C = 4, P = 6, N = C * P, R = 8192, trials = 4;
    const int Ks[] = {128, 512, 2048, 8192};
    double mean_ratio[4] = {0}, white_ratio[4] = {0}, c2 = 0, c_inf = 0;
    for (int t = 0; t < trials; t++) {
        scene_config cfg;
        small_scene(&cfg, rng, C, P, R);
        scene_truth tr;
        stap_error err;
        int st = stap_scene_truth_build(&cfg, &tr, &err);
        CHECK(st == STAP_OK, "stap_scene_truth_build: %s", err.msg);
        if (st) return;
        stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)N * R);
        stap_cf64 *snap = malloc(sizeof(stap_cf64) * (size_t)N * R);
        stap_cf64 *Rst = malloc(sizeof(stap_cf64) * N * N);
        CHECK(stap_scene_generate(&tr, cube, &err) == STAP_OK, "generate: %s", err.msg);
        CHECK(stap_scene_covariance_spacetime(&tr, Rst, &err) == STAP_OK, "covariance: %s", err.msg);
        for (int r = 0; r < R; r++)
            for (int i = 0; i < N; i++) snap[(size_t)r * N + i] = cube[(size_t)i * R + r];
        /* the distribution of K ||Rhat - R||^2 / (tr R)^2 (mean exactly 1 for Gaussian
         * snapshots): in R's eigenbasis, as K grows, K|Rhat_ij - R_ij|^2 tends to
         * lambda_i lambda_j chi^2_2 / 2 for each pair i < j (counted twice: Rhat is
         * Hermitian) and K|Rhat_ii - R_ii|^2 to lambda_i^2 chi^2_1, all independent, so the
         * trials' mean is a sum of independent chi^2_1 terms with weights c_m >= 0 (sum 1):
         * ||c||_2^2 = (tr R^2)^2 / (tr R)^4 and ||c||_inf = lambda_max^2 / (tr R)^2, summed
         * and maximized over the trials and divided by T^2 and T. Few eigenvalues (the
         * clutter ridge, the jammers) hold the power of these scenes: the largest weight
         * makes the tail heavy (seed 7740945106771925638 gave 1.82 at K = 8192, 5.3
         * standard deviations; one eigenvalue of a trial holds about half its power) */
        double trr = 0, trr2 = 0;
        for (int i = 0; i < N; i++) trr += creal(Rst[(size_t)i * N + i]);
        for (size_t i = 0; i < (size_t)N * N; i++) trr2 += cabs2(Rst[i]);
        c2 += trr2 * trr2 / (trr * trr * trr * trr) / ((double)trials * trials);
        const double lmax = largest_eigenvalue(N, Rst);
        c_inf = fmax(c_inf, lmax * lmax / (trr * trr) / trials);
        for (int k = 0; k < 4; k++) {
            mean_ratio[k] += normalized_error(N, snap, Ks[k], Rst) / trials;
            white_ratio[k] += whitened_error(N, snap, Ks[k], Rst) / trials;
        }
        free(cube);
        free(snap);
        free(Rst);
        stap_scene_truth_free(&tr);
    }
    /* Laurent and Massart (2000, lemma 1): for such a sum Q, P(Q >= 1 + 2 ||c||_2 sqrt(x)
     * + 2 ||c||_inf x) <= e^-x and P(Q <= 1 - 2 ||c||_2 sqrt(x)) <= e^-x. x = ln(16e6)
     * for the 8 one-sided checks here and the 8 whitened ones below: a false failure has
     * probability <= 1e-6 (in the limit of large K; a wrong truth, a missing jammer or a
     * wrong clutter ridge, adds a bias that grows like K: hundreds of these widths at
     * K = 8192) */
    const double x = log(16e6), lo = 1 - 2 * sqrt(c2 * x), hi = 1 + 2 * sqrt(c2 * x) + 2 * c_inf * x;
    for (int k = 0; k < 4; k++) {
        fprintf(stderr, "  space-time: K = %5d  K ||Rhat - R||^2 / (tr R)^2 = %.3f (expect 1, "
                "within %.3f..%.3f)\n", Ks[k], mean_ratio[k], lo, hi);
        CHECK(mean_ratio[k] > lo && mean_ratio[k] < hi,
              "space-time sample covariance error at K = %d is %.3f x its expectation "
              "(outside %.3f..%.3f)", Ks[k], mean_ratio[k], lo, hi);
    }
    /* whitened, every weight is 1 / (T N^2): the same bounds are 0.834..1.180 for N = 24 */
    for (int k = 0; k < 4; k++) {
        fprintf(stderr, "  space-time: K = %5d  whitened K ||Zhat - I||^2 / N^2 = %.3f (expect 1)\n",
                Ks[k], white_ratio[k]);
        CHECK(white_ratio[k] > 0.8 && white_ratio[k] < 1.25,
              "whitened space-time sample covariance error at K = %d is %.3f x its expectation",
              Ks[k], white_ratio[k]);
    }
    /* slope of log ||Zhat - I|| against log K: -1/2 (a wrong truth flattens it; within the
     * whitened bounds above it is off by 0.042 at most) */
    double slope = 0.5 * log(white_ratio[3] / white_ratio[0]) / log((double)Ks[3] / Ks[0]) - 0.5;
    fprintf(stderr, "  space-time: error ~ K^%.3f\n", slope);
    CHECK(fabs(slope + 0.5) < 0.1, "error decays like K^%.3f, expected K^-0.5", slope);
}

static void test_doppler_convergence(tc_rng *rng)
{
    const int C = 4, P = 8, D = 12, Q = 3, N = C * Q, R = 6000;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, R);
    scene_truth tr;
    stap_error err;
    if (stap_scene_truth_build(&cfg, &tr, &err)) {
        CHECK(0, "build: %s", err.msg);
        return;
    }
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)C * P * R);
    stap_scene_generate(&tr, cube, &err);
    stap_config sc;
    stap_config_defaults(&sc);
    sc.channels = C;
    sc.pulses = P;
    sc.range_gates = R;
    sc.doppler_bins = D;
    sc.doppler_order = Q;
    sc.segments = 1;
    sc.training = R;
    sc.beams = 1;
    sc.window = STAP_WINDOW_HANN;
    sc.backend = STAP_BACKEND_CPU;
    stap_plan *plan;
    int st = stap_plan_create(&plan, &sc, NULL, 0, 0, &err);
    CHECK(st == STAP_OK, "plan: %s", err.msg);
    if (st) {
        free(cube);
        stap_scene_truth_free(&tr);
        return;
    }
    stap_cf32 *W = malloc(sizeof(stap_cf32) * stap_weights_len(plan));
    stap_cf32 *Y = malloc(sizeof(stap_cf32) * stap_output_len(plan));
    CHECK(stap_plan_execute(plan, cube, W, Y, NULL, &err) == STAP_OK, "execute: %s", err.msg);
    const stap_cf32 *X = stap_plan_doppler(plan);
    float winf[64];
    double win[64];
    stap_window(&sc, winf, &err);
    for (int p = 0; p < P; p++) win[p] = winf[p];
    stap_cf64 *snap = malloc(sizeof(stap_cf64) * (size_t)N * R), *Rd = malloc(sizeof(stap_cf64) * N * N);
    double worst = 0, lo = 1e9;
    for (int d = 0; d < D; d++) {
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                for (int q = 0; q < Q; q++) {
                    int b = ((d - (Q - 1) / 2 + q) % D + D) % D;
                    snap[(size_t)r * N + c * Q + q] = X[((size_t)c * D + b) * R + r];
                }
        stap_scene_covariance_doppler(&tr, win, D, Q, d, Rd, &err);
        double ratio = whitened_error(N, snap, R, Rd);
        if (ratio > worst) worst = ratio;
        if (ratio < lo) lo = ratio;
    }
    fprintf(stderr, "  Doppler domain (hann, D=%d, Q=%d): whitened error %.3f..%.3f over the "
            "bins (expect 1)\n", D, Q, lo, worst);
    /* K ||Zhat - I||^2 / N^2 has mean 1 and, for complex Gaussian snapshots, standard
     * deviation about sqrt(2)/N (N(N-1)/2 independent off-diagonal pairs of unit
     * exponentials counted twice, N diagonal terms of variance 2): the band is 5 of them,
     * so that the worst of D bins stays inside it (the former fixed 0.7..1.4 failed about 3
     * seeds in 100). A wrong window, tap or sign gives errors of tens under this clutter. */
    const double band = 5 * sqrt(2.0) / N;
    CHECK(worst < 1 + band && lo > 1 - band, "Doppler-domain whitened sample covariance error "
          "%.3f..%.3f x its expectation (band 1 +- %.3f)", lo, worst, band);
    free(snap);
    free(Rd);
    free(W);
    free(Y);
    free(cube);
    stap_plan_destroy(plan);
    stap_scene_truth_free(&tr);
}

static void test_doppler_structure(tc_rng *rng)
{
    const int C = 5, P = 7, D = 11, Q = 3, N = C * Q, CP = C * P;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, 4);
    cfg.patches = 97;
    scene_truth tr;
    stap_error err;
    if (stap_scene_truth_build(&cfg, &tr, &err)) {
        CHECK(0, "build: %s", err.msg);
        return;
    }
    double win[7];
    for (int p = 0; p < P; p++) win[p] = 0.2 + tc_uniform(rng);
    stap_cf64 *Rst = malloc(sizeof(stap_cf64) * CP * CP), *Rd = malloc(sizeof(stap_cf64) * N * N);
    stap_cf64 *T = malloc(sizeof(stap_cf64) * CP * N);
    stap_scene_covariance_spacetime(&tr, Rst, &err);
    double worst = 0;
    for (int d = 0; d < D; d++) {
        /* s = T^H x with T[(c,p), (c',q)] = delta_cc' win[p] exp(+2 pi i b_q p / D) */
        memset(T, 0, sizeof(stap_cf64) * CP * N);
        for (int c = 0; c < C; c++)
            for (int q = 0; q < Q; q++) {
                int b = ((d - 1 + q) % D + D) % D;
                for (int p = 0; p < P; p++)
                    T[(size_t)(c * Q + q) * CP + c * P + p] =
                        win[p] * cexp(2 * M_PI * I * (double)b * p / D);
            }
        stap_scene_covariance_doppler(&tr, win, D, Q, d, Rd, &err);
        double num = 0, den = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                stap_cf64 s = 0;
                for (int a = 0; a < CP; a++) {
                    stap_cf64 ra = 0;
                    for (int bb = 0; bb < CP; bb++) ra += Rst[(size_t)bb * CP + a] * T[(size_t)j * CP + bb];
                    s += conj(T[(size_t)i * CP + a]) * ra;
                }
                num += cabs2(s - Rd[(size_t)j * N + i]);
                den += cabs2(s);
            }
        double rel = sqrt(num / den);
        if (rel > worst) worst = rel;
    }
    fprintf(stderr, "  Doppler covariance vs T^H R T: worst relative error %.2e\n", worst);
    CHECK(worst < 1e-12, "stap_scene_covariance_doppler differs from T^H R_st T by %.2e", worst);
    /* Hermitian positive diagonal of the space-time covariance */
    for (int i = 0; i < CP; i++)
        for (int j = 0; j < CP; j++)
            CHECK(cabs(Rst[(size_t)j * CP + i] - conj(Rst[(size_t)i * CP + j])) < 1e-9,
                  "space-time covariance not Hermitian at (%d,%d)", i, j);
    free(Rst);
    free(Rd);
    free(T);
    stap_scene_truth_free(&tr);
}

static void test_jammer(tc_rng *rng)
{
    const int C = 8, P = 16, R = 500;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, R);
    cfg.clutter = 0;
    cfg.njammers = 1;
    double u = -0.8 + 1.6 * tc_uniform(rng), jnr_db = 20 + 10 * tc_uniform(rng);
    cfg.jammers[0] = (scene_jammer){u, jnr_db};
    scene_truth tr;
    stap_error err;
    if (stap_scene_truth_build(&cfg, &tr, &err)) {
        CHECK(0, "build: %s", err.msg);
        return;
    }
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)C * P * R);
    stap_scene_generate(&tr, cube, &err);
    /* spatial sample covariance over pulses and range cells */
    stap_cf64 Rs[8 * 8] = {0};
    for (int p = 0; p < P; p++)
        for (int r = 0; r < R; r++)
            for (int i = 0; i < C; i++)
                for (int j = 0; j < C; j++)
                    Rs[j * C + i] += cube[((size_t)i * P + p) * R + r] *
                                     conjf(cube[((size_t)j * P + p) * R + r]) / ((double)P * R);
    double best = -1, ubest = 0;
    for (int k = 0; k <= 4000; k++) {
        double uu = -1 + 2.0 * k / 4000;
        stap_cf64 a[8], s = 0;
        for (int c = 0; c < C; c++) a[c] = cexp(2 * M_PI * I * 0.5 * c * uu);
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++) s += conj(a[i]) * Rs[j * C + i] * a[j];
        if (creal(s) > best) {
            best = creal(s);
            ubest = uu;
        }
    }
    double jnr_est = best / (C * C) - 1.0 / C; /* a^H R a / C^2 = JNR + sigma^2 / C */
    fprintf(stderr, "  jammer at u = %.4f, %.1f dB: spectrum peak at u = %.4f, %.2f dB\n", u,
            jnr_db, ubest, 10 * log10(jnr_est));
    CHECK(fabs(ubest - u) < 0.01, "jammer peak at u = %.4f, placed at %.4f", ubest, u);
    /* the jammer power estimate from P*R = 8000 samples: relative sd 1/sqrt(8000) */
    CHECK(fabs(jnr_est / pow(10, jnr_db / 10) - 1) < 5 / sqrt((double)P * R),
          "jammer power %.3f dB, configured %.3f dB", 10 * log10(jnr_est), jnr_db);
    /* white over pulses: lag-1 correlation of the jammer beam output */
    stap_cf64 a[8], acc = 0;
    double pw = 0;
    for (int c = 0; c < C; c++) a[c] = cexp(2 * M_PI * I * 0.5 * c * u);
    for (int r = 0; r < R; r++)
        for (int p = 0; p + 1 < P; p++) {
            stap_cf64 y0 = 0, y1 = 0;
            for (int c = 0; c < C; c++) {
                y0 += conj(a[c]) * cube[((size_t)c * P + p) * R + r];
                y1 += conj(a[c]) * cube[((size_t)c * P + p + 1) * R + r];
            }
            acc += y1 * conj(y0);
            pw += cabs2(y0);
        }
    double rho1 = cabs(acc) / pw, n = (double)R * (P - 1);
    fprintf(stderr, "  jammer lag-1 pulse correlation %.4f (noise level %.4f)\n", rho1, 1 / sqrt(n));
    CHECK(rho1 < 5 / sqrt(n), "jammer not white over pulses: lag-1 correlation %.4f", rho1);
    free(cube);
    stap_scene_truth_free(&tr);
}

static void test_target(tc_rng *rng)
{
    const int C = 6, P = 10, R = 40;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, R);
    scene_truth t0, t1;
    stap_error err;
    stap_scene_truth_build(&cfg, &t0, &err);
    scene_target tg = {(int)(tc_uniform(rng) * R), -0.9 + 1.8 * tc_uniform(rng),
                       cfg.prf_hz * (-0.5 + tc_uniform(rng)), -10 + 30 * tc_uniform(rng), 0};
    cfg.ntargets = 1;
    cfg.targets[0] = tg;
    CHECK(stap_scene_truth_build(&cfg, &t1, &err) == STAP_OK, "build with a target: %s", err.msg);
    stap_cf32 *x0 = malloc(sizeof(stap_cf32) * C * P * R), *x1 = malloc(sizeof(stap_cf32) * C * P * R);
    stap_scene_generate(&t0, x0, &err);
    stap_scene_generate(&t1, x1, &err);
    double amp = sqrt(pow(10, tg.snr_db / 10)), worst = 0, elsewhere = 0;
    for (int c = 0; c < C; c++)
        for (int p = 0; p < P; p++)
            for (int r = 0; r < R; r++) {
                size_t i = ((size_t)c * P + p) * R + r;
                stap_cf64 diff = (stap_cf64)x1[i] - (stap_cf64)x0[i];
                if (r == tg.range_cell) {
                    stap_cf64 want = amp * cexp(I * t1.target_phase[0]) *
                                cexp(2 * M_PI * I * (0.5 * tg.u * c + tg.doppler_hz / cfg.prf_hz * p));
                    double e = cabs(diff - want) / amp;
                    if (e > worst) worst = e;
                } else if (cabs(diff) > elsewhere) {
                    elsewhere = cabs(diff);
                }
            }
    fprintf(stderr, "  target at cell %d, u %.3f, %.1f Hz, %.1f dB: signal error %.1e, "
            "elsewhere %.1e\n", tg.range_cell, tg.u, tg.doppler_hz, tg.snr_db, worst, elsewhere);
    /* the samples are float: the difference is exact up to the float rounding of the
     * clutter-plus-jammer-plus-noise sum (|x| ~ 40, so ~1e-5 absolute) */
    CHECK(worst * amp < 1e-4, "target signal wrong by %.2e (relative)", worst);
    CHECK(elsewhere == 0, "adding a target changed other range cells (by %.2e)", elsewhere);
    free(x0);
    free(x1);
    stap_scene_truth_free(&t0);
    stap_scene_truth_free(&t1);
}

static void test_truth_roundtrip(tc_rng *rng)
{
    const int C = 4, P = 5;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, 10);
    cfg.ntargets = 2;
    cfg.targets[0] = (scene_target){3, 0.1, 25, 10, 0};
    cfg.targets[1] = (scene_target){7, -0.4, -80, 5, 0};
    scene_truth t, back;
    stap_error err;
    stap_scene_truth_build(&cfg, &t, &err);
    char path[] = "/tmp/rtstap_test_scene_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    h5x *f = NULL;
    CHECK(stap_h5x_create(&f, path, STAP_WRITE_REPLACE, &err) == STAP_OK, "truth file: %s", err.msg);
    if (f) {
        CHECK(stap_scene_truth_write(f, &t, &err) == STAP_OK, "truth write: %s", err.msg);
        CHECK(stap_h5x_finish(f, &err) == STAP_OK, "truth file: %s", err.msg);
    }
    int st = stap_scene_truth_read(path, &back, &err);
    CHECK(st == STAP_OK, "truth read: %s", err.msg);
    if (st == STAP_OK) {
        stap_cf64 *R0 = malloc(sizeof(stap_cf64) * 400), *R1 = malloc(sizeof(stap_cf64) * 400);
        stap_scene_covariance_spacetime(&t, R0, &err);
        stap_scene_covariance_spacetime(&back, R1, &err);
        CHECK(!memcmp(R0, R1, sizeof(stap_cf64) * 400), "covariance changed by the /truth round trip");
        CHECK(back.cfg.ntargets == 2 && back.cfg.targets[1].range_cell == 7 &&
              back.cfg.targets[1].doppler_hz == -80 && back.target_phase[1] == t.target_phase[1] &&
              back.cfg.njammers == 2 && back.cfg.jammers[1].u == t.cfg.jammers[1].u &&
              back.beta == t.beta && back.cfg.seed == t.cfg.seed,
              "targets/jammers/parameters changed by the /truth round trip");
        free(R0);
        free(R1);
        stap_scene_truth_free(&back);
    }
    unlink(path);
    /* a file without /truth */
    CHECK(stap_scene_truth_read("/nonexistent/file.h5", &back, &err) == STAP_EIO, "missing file");
    stap_scene_truth_free(&t);
}

/* the exact covariances through an /array geometry (gen --array): the line written as
 * positions, with unit gains, gives the line's Toeplitz covariances (every one of the three
 * to rounding: the general path's pair indexing); an irregular planar array with complex
 * gains gives the space-time covariance that the generated snapshots converge to (the
 * whitened error's Laurent-Massart band for one trial, false failure <= 1e-6; a geometry or
 * gain ignored is off by the 30 dB clutter: tens) */
static double max_abs_diff(int n, const stap_cf64 *a, const stap_cf64 *b, double *scale)
{
    double d = 0, m = 0;
    for (int i = 0; i < n; i++) {
        d = fmax(d, cabs(a[i] - b[i]));
        m = fmax(m, cabs(a[i]));
    }
    *scale = m;
    return d;
}

static void test_geometry(tc_rng *rng)
{
    const int C = 4, P = 6, N = C * P, D = 8, Q = 3, R = 8192;
    scene_config cfg;
    small_scene(&cfg, rng, C, P, R);
    double line[3 * 4];
    stap_cf32 ones[4];
    for (int c = 0; c < C; c++) {
        line[3 * c] = c * cfg.element_spacing;
        line[3 * c + 1] = line[3 * c + 2] = 0;
        ones[c] = 1;
    }
    scene_truth t0, t1;
    stap_error err;
    CHECK(stap_scene_truth_build(&cfg, &t0, &err) == STAP_OK, "build: %s", err.msg);
    scene_config g = cfg;
    g.position = line;
    g.calibration = ones;
    CHECK(stap_scene_truth_build(&g, &t1, &err) == STAP_OK, "build with positions: %s", err.msg);
    double win[8];
    for (int p = 0; p < P; p++) win[p] = 0.5 - 0.5 * cos(2 * M_PI * (p + 1) / (P + 1));
    const int M = N * N > C * Q * C * Q ? N * N : C * Q * C * Q;
    stap_cf64 *A = malloc(sizeof(stap_cf64) * M), *B = malloc(sizeof(stap_cf64) * M);
    double scale, d;
    CHECK(stap_scene_covariance_spacetime(&t0, A, &err) == STAP_OK &&
          stap_scene_covariance_spacetime(&t1, B, &err) == STAP_OK, "space-time: %s", err.msg);
    d = max_abs_diff(N * N, A, B, &scale);
    CHECK(d < 1e-12 * scale, "space-time: the line as positions differs by %.3g of %.3g", d, scale);
    CHECK(stap_scene_covariance_doppler(&t0, win, D, Q, 2, A, &err) == STAP_OK &&
          stap_scene_covariance_doppler(&t1, win, D, Q, 2, B, &err) == STAP_OK, "Doppler: %s", err.msg);
    d = max_abs_diff(C * Q * C * Q, A, B, &scale);
    CHECK(d < 1e-12 * scale, "Doppler: the line as positions differs by %.3g of %.3g", d, scale);
    CHECK(stap_scene_covariance_staggered(&t0, win, P - Q + 1, D, Q, 1, A, &err) == STAP_OK &&
          stap_scene_covariance_staggered(&t1, win, P - Q + 1, D, Q, 1, B, &err) == STAP_OK,
          "staggered: %s", err.msg);
    d = max_abs_diff(C * Q * C * Q, A, B, &scale);
    CHECK(d < 1e-12 * scale, "staggered: the line as positions differs by %.3g of %.3g", d, scale);
    stap_scene_truth_free(&t0);
    stap_scene_truth_free(&t1);
    free(A);
    free(B);

    /* an irregular planar array in the x-z plane, complex gains */
    double pos[3 * 4];
    stap_cf32 gain[4];
    for (int c = 0; c < C; c++) {
        pos[3 * c] = 2 * tc_uniform(rng);
        pos[3 * c + 1] = 0;
        pos[3 * c + 2] = tc_uniform(rng);
        const double a = 0.5 + tc_uniform(rng), ph = 2 * M_PI * tc_uniform(rng);
        gain[c] = (stap_cf32)(a * cexp(I * ph));
    }
    g = cfg;
    g.position = pos;
    g.calibration = gain;
    scene_truth tg;
    CHECK(stap_scene_truth_build(&g, &tg, &err) == STAP_OK, "build planar: %s", err.msg);
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)N * R);
    stap_cf64 *snap = malloc(sizeof(stap_cf64) * (size_t)N * R), *Rst = malloc(sizeof(stap_cf64) * N * N);
    CHECK(stap_scene_generate(&tg, cube, &err) == STAP_OK, "generate planar: %s", err.msg);
    CHECK(stap_scene_covariance_spacetime(&tg, Rst, &err) == STAP_OK, "covariance planar: %s", err.msg);
    for (int r = 0; r < R; r++)
        for (int i = 0; i < N; i++) snap[(size_t)r * N + i] = cube[(size_t)i * R + r];
    const double w = whitened_error(N, snap, R, Rst), x = log(2e6);
    const double lo = 1 - 2 * sqrt(x) / N, hi = 1 + 2 * sqrt(x) / N + 2 * x / ((double)N * N);
    fprintf(stderr, "  planar array with gains: whitened K ||Zhat - I||^2 / N^2 = %.3f (expect 1, "
            "within %.3f..%.3f)\n", w, lo, hi);
    CHECK(w > lo && w < hi, "planar array: whitened sample covariance error %.3f x its expectation", w);
    free(cube);
    free(snap);
    free(Rst);
    stap_scene_truth_free(&tg);
}

static void test_rejections(void)
{
    scene_config c;
    stap_error err;
    scene_truth t;
    stap_scene_preset_config(SCENE_PRESET_WARD, &c);
    c.ntargets = 1;
    c.targets[0] = (scene_target){300, 0, 0, 0, 0};
    CHECK(stap_scene_truth_build(&c, &t, &err) == STAP_EINVAL && strstr(err.msg, "scene_config.targets["),
          "target outside the range gates accepted (%s)", err.msg);
    stap_scene_preset_config(SCENE_PRESET_WARD, &c);
    c.jammers[1].u = 1.5;
    CHECK(stap_scene_truth_build(&c, &t, &err) == STAP_EINVAL && strstr(err.msg, "scene_config.jammers["),
          "jammer at u = 1.5 accepted");
    stap_scene_preset_config(SCENE_PRESET_WARD, &c);
    c.prf_hz = 0;
    CHECK(stap_scene_truth_build(&c, &t, &err) == STAP_EINVAL && strstr(err.msg, "scene_config.prf_hz"), "PRF 0 accepted");
    stap_scene_preset_config(SCENE_PRESET_WARD, &c);
    c.slant_range_m = 100;
    CHECK(stap_scene_truth_build(&c, &t, &err) == STAP_EINVAL, "slant range below altitude accepted");
    scene_preset p;
    CHECK(stap_scene_preset_parse("nope", &p, &err) == STAP_EINVAL, "bad preset name accepted");
    /* the Ward preset is TR-1015's example */
    stap_scene_preset_config(SCENE_PRESET_WARD, &c);
    CHECK(stap_scene_truth_build(&c, &t, &err) == STAP_OK, "ward preset: %s", err.msg);
    CHECK(c.channels == 18 && c.pulses == 18 && fabs(t.beta - 1) < 1e-12 && c.cnr_db == 47,
          "ward preset is not C = P = 18, beta = 1, CNR 47 dB (beta %.6f)", t.beta);
    double sum = 0;
    for (int i = 0; i < t.patches; i++) sum += t.patch_cnr[i];
    CHECK(fabs(10 * log10(sum) - 47) < 1e-9, "total CNR %.6f dB, configured 47", 10 * log10(sum));
    stap_scene_truth_free(&t);
}

int main(void)
{
    uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    test_spacetime_convergence(&rng);
    test_doppler_convergence(&rng);
    test_doppler_structure(&rng);
    test_jammer(&rng);
    test_target(&rng);
    test_truth_roundtrip(&rng);
    test_geometry(&rng);
    test_rejections();
    if (tc_failures) {
        fprintf(stderr, "test_scene: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_scene: all passed\n");
    return 0;
}
