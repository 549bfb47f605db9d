/* test_response: the angle–Doppler response of adapted weights and of the clairvoyant
 * optimum (datasets/scene_response.h), the data of `rtstap plot`'s adapted_response.png.
 *  1. Against a brute-force reference on a small scene (C = 5, P = 7 zero-padded to
 *     D = 10, Q = 3, Hann window, random weights): the full space-time snapshot of a unit
 *     target at (u, f) is windowed and DFT'd in double precision, bin d's three taps are
 *     picked, and |w^H s|^2 is compared with every grid value (relative 1e-9). The optimum
 *     weights against R_d = T_d^H R_st T_d formed explicitly from the space-time
 *     covariance and solved by LU (1e-8), and w_opt^H v = 1.
 *  2. The optimum's peak lies within one grid step of the look direction and the bin's
 *     Doppler where nothing interferes near them (no clutter, jammers at u = -0.3 and
 *     0.5, beam u = -2/3, f = 1/6: a mirrored angle or Doppler would move it).
 *  3. Theory on Ward's example (18 x 18, beta = 1, CNR 47 dB, 35 dB jammers at u = -0.3
 *     and 0.5), broadside beam, bin 3 (f = 1/6, whose clutter lies at u = 1/3), for Q = 1
 *     behind a 60 dB Chebyshev taper and Q = 3 without a window: at each jammer's angle
 *     the response is below -30 dB of the peak at every Doppler, and so it is on the
 *     clutter ridge (each clutter patch's own (u, f), wherever bin d's Doppler filter is
 *     within 20 dB of its peak), for the optimum and for the adapted weights of a run with
 *     K = 30 N (Q = 1) and 10 N (Q = 3) training cells; the adapted weights approach the
 *     optimum: over the optimum's -3 dB main lobe the two responses, each over its peak,
 *     agree within 2 dB, and their peaks lie within two grid steps of each other. (With
 *     clutter the peak need not be at the look point: bin 3's clutter at u = 1/3 pushes
 *     the Q = 1 lobe to u = -0.05, and Q = 3 shapes its Doppler response to f = 0.157.) */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "scene.h"
#include "scene_response.h"
#include "stap.h"
#include "testutil.h"

static double db(double x) { return 10 * log10(x > 1e-300 ? x : 1e-300); }

/* |w^H s(u, f)|^2 from the whole space-time snapshot x[c, p] = exp(2 pi i (sp c u + f p)):
 * X[c, k] = sum_p win[p] x[c, p] exp(-2 pi i k p / D) (contract step 1), s[c Q + q] =
 * X[c, (d - (Q-1)/2 + q) mod D] (step 2). */
static double brute_response(const stap_cf64 *w, int C, int P, int D, int Q, int d, double sp,
                             const double *win, double u, double f)
{
    stap_cf64 acc = 0;
    for (int c = 0; c < C; c++)
        for (int q = 0; q < Q; q++) {
            int k = ((d - (Q - 1) / 2 + q) % D + D) % D;
            stap_cf64 X = 0;
            for (int p = 0; p < P; p++)
                X += win[p] * cexp(2 * M_PI * I * (sp * c * u + f * p)) *
                     cexp(-2 * M_PI * I * (double)k * p / D);
            acc += conj(w[c * Q + q]) * X;
        }
    return creal(acc * conj(acc));
}

static void window_of(const stap_config *cfg, double *win)
{
    float wf[512];
    stap_error err;
    stap_window(cfg, wf, &err);
    for (int p = 0; p < cfg->pulses; p++) win[p] = wf[p];
}

/* A run's configuration on scene sc: D bins, order Q, S segments of K training cells, B
 * default beams, the window; the CPU backend. */
static stap_config config_for(const scene_config *sc, int D, int Q, int S, int K, int B,
                              stap_window_kind window, double cheb_db)
{
    stap_config cfg;
    stap_config_defaults(&cfg);
    cfg.channels = sc->channels;
    cfg.pulses = sc->pulses;
    cfg.range_gates = sc->range_gates;
    cfg.doppler_bins = D;
    cfg.doppler_order = Q;
    cfg.segments = S;
    cfg.training = K;
    cfg.beams = B;
    cfg.window = window;
    cfg.chebyshev_db = cheb_db;
    cfg.element_spacing = sc->element_spacing;
    cfg.backend = STAP_BACKEND_CPU;
    return cfg;
}

/* ---- 1 ------------------------------------------------------------------------------ */
static void brute_force(tc_rng *rng)
{
    scene_config sc;
    stap_scene_preset_config(SCENE_PRESET_WARD, &sc);
    sc.channels = 5;
    sc.pulses = 7;
    sc.range_gates = 40;
    sc.cnr_db = 30;
    const int C = 5, P = 7, D = 10, Q = 3, N = C * Q, B = 3;
    stap_error err;
    scene_truth tr;
    if (stap_scene_truth_build(&sc, &tr, &err)) {
        CHECK(0, "scene: %s", err.msg);
        return;
    }
    stap_config cfg = config_for(&sc, D, Q, 2, 20, B, STAP_WINDOW_HANN, 0);
    stap_cf32 V[B * N];
    stap_default_steering(&cfg, V);
    const size_t nw = (size_t)D * cfg.segments * B * N;
    stap_cf32 *W = malloc(sizeof(stap_cf32) * nw);
    for (size_t i = 0; i < nw; i++) W[i] = tc_cnormal(rng);
    double win[16];
    window_of(&cfg, win);

    const int nu = 21, nf = 20;
    double worst = 0, worst_opt = 0;
    for (int d = 0; d < D; d += 3)
        for (int s = 0; s < cfg.segments; s++) {
            const int b = (d + s) % B;
            scene_response r;
            int st = stap_scene_response_compute(&tr, &cfg, V, B, W, d, s, b, nu, nf, &r, &err);
            CHECK(st == STAP_OK, "response bin %d segment %d: %s", d, s, err.msg);
            if (st) continue;
            stap_cf64 w[N];
            const stap_cf32 *wr = W + (((size_t)d * cfg.segments + s) * B + b) * N;
            for (int k = 0; k < N; k++) w[k] = wr[k];
            for (int j = 0; j < nf; j++)
                for (int i = 0; i < nu; i++) {
                    double u = scene_response_u(&r, i), f = scene_response_f(&r, j);
                    double ref = brute_response(w, C, P, D, Q, d, sc.element_spacing, win, u, f);
                    double got = r.adapted[(size_t)j * nu + i];
                    double e = fabs(got - ref) / fmax(ref, 1e-3);
                    if (e > worst) worst = e;
                    ref = brute_response(r.optimum_weights, C, P, D, Q, d, sc.element_spacing,
                                         win, u, f);
                    got = r.optimum[(size_t)j * nu + i];
                    e = fabs(got - ref) / fmax(ref, 1e-3);
                    if (e > worst_opt) worst_opt = e;
                }
            /* the optimum weights from T_d^H R_st T_d and an LU solve */
            const int CP = C * P;
            stap_cf64 *Rst = malloc(sizeof(stap_cf64) * CP * CP), *T = calloc((size_t)CP * N, sizeof(stap_cf64));
            stap_cf64 *RT = malloc(sizeof(stap_cf64) * CP * N), Rd[N * N], x[N];
            lapack_int ipiv[N];
            stap_scene_covariance_spacetime(&tr, Rst, &err);
            for (int c = 0; c < C; c++)
                for (int q = 0; q < Q; q++) {
                    int k = ((d - (Q - 1) / 2 + q) % D + D) % D;
                    for (int p = 0; p < P; p++) /* s = T^H x: T[c P + p, c Q + q] */
                        T[(size_t)(c * Q + q) * CP + c * P + p] =
                            win[p] * cexp(2 * M_PI * I * (double)k * p / D);
                }
            for (int j = 0; j < N; j++)
                for (int i = 0; i < CP; i++) {
                    stap_cf64 acc = 0;
                    for (int k = 0; k < CP; k++) acc += Rst[(size_t)k * CP + i] * T[(size_t)j * CP + k];
                    RT[(size_t)j * CP + i] = acc;
                }
            for (int j = 0; j < N; j++)
                for (int i = 0; i < N; i++) {
                    stap_cf64 acc = 0;
                    for (int k = 0; k < CP; k++) acc += conj(T[(size_t)i * CP + k]) * RT[(size_t)j * CP + k];
                    Rd[(size_t)j * N + i] = acc;
                }
            for (int k = 0; k < N; k++) x[k] = V[b * N + k];
            LAPACKE_zgesv(LAPACK_COL_MAJOR, N, 1, Rd, N, ipiv, x, N);
            stap_cf64 vx = 0, vw = 0;
            for (int k = 0; k < N; k++) vx += conj((stap_cf64)V[b * N + k]) * x[k];
            double dw = 0, nx = 0;
            for (int k = 0; k < N; k++) {
                stap_cf64 ref = x[k] / vx;
                dw += creal((ref - r.optimum_weights[k]) * conj(ref - r.optimum_weights[k]));
                nx += creal(ref * conj(ref));
                vw += conj(r.optimum_weights[k]) * V[b * N + k];
            }
            CHECK(sqrt(dw / nx) < 1e-8, "bin %d beam %d: optimum weights differ from the LU "
                  "solution of T^H R_st T by %.2e", d, b, sqrt(dw / nx));
            CHECK(cabs(vw - 1) < 1e-10, "bin %d beam %d: w_opt^H v = %g%+gi, not 1", d, b,
                  creal(vw), cimag(vw));
            free(Rst);
            free(T);
            free(RT);
            stap_scene_response_free(&r);
        }
    fprintf(stderr, "  brute force (C=%d P=%d D=%d Q=%d, Hann): worst relative difference "
            "%.2e (adapted), %.2e (optimum)\n", C, P, D, Q, worst, worst_opt);
    CHECK(worst < 1e-9 && worst_opt < 1e-9, "response differs from the brute-force "
          "reference by %.2e / %.2e", worst, worst_opt);

    /* errors name what is wrong */
    scene_response r;
    CHECK(stap_scene_response_compute(&tr, &cfg, V, B, W, D, 0, 0, nu, nf, &r, &err) == STAP_EINVAL &&
              strstr(err.msg, "Doppler bin"), "bin out of range: %s", err.msg);
    CHECK(stap_scene_response_compute(&tr, &cfg, V, B, W, 0, 2, 0, nu, nf, &r, &err) == STAP_EINVAL &&
              strstr(err.msg, "segment"), "segment out of range: %s", err.msg);
    CHECK(stap_scene_response_compute(&tr, &cfg, V, B, W, 0, 0, 3, nu, nf, &r, &err) == STAP_EINVAL &&
              strstr(err.msg, "beam"), "beam out of range: %s", err.msg);
    CHECK(stap_scene_response_compute(&tr, &cfg, V, B, W, 0, 0, 0, 1, nf, &r, &err) == STAP_EINVAL &&
              strstr(err.msg, "grid"), "grid too small: %s", err.msg);
    stap_config other = cfg;
    other.pulses = 8;
    CHECK(stap_scene_response_compute(&tr, &other, V, B, W, 0, 0, 0, nu, nf, &r, &err) == STAP_EINVAL &&
              strstr(err.msg, "scene"), "cube of another shape: %s", err.msg);
    /* without weights: the optimum alone */
    CHECK(stap_scene_response_compute(&tr, &cfg, V, B, NULL, 1, 0, 1, nu, nf, &r, &err) == STAP_OK &&
              !r.adapted && r.optimum, "optimum alone: %s", err.msg);
    stap_scene_response_free(&r);
    free(W);
    stap_scene_truth_free(&tr);
}

/* ---- 2-3 ---------------------------------------------------------------------------- */
typedef struct {
    double peak_u, peak_f, jammer_db[2], ridge_db, mainlobe_db;
    int ridge_points;
} shape;

/* Where G (nf x nu) peaks, its worst jammer-null and clutter-ridge levels relative to the
 * peak. The ridge is checked at the clutter patches' own (u, f) in front of the array
 * wherever bin d's Doppler response (|g|^2 of the tap at the look Doppler) is within
 * 20 dB of its peak: there the Doppler filter alone does not reject the clutter. */
static shape shape_of(const scene_response *r, const double *G, const stap_cf64 *w,
                      const scene_truth *tr, const stap_config *cfg, const double *win)
{
    shape s = {0};
    const int nu = r->nu, nf = r->nf, C = cfg->channels, P = cfg->pulses;
    double peak = -1;
    for (int j = 0; j < nf; j++)
        for (int i = 0; i < nu; i++)
            if (G[(size_t)j * nu + i] > peak) {
                peak = G[(size_t)j * nu + i];
                s.peak_u = scene_response_u(r, i);
                s.peak_f = scene_response_f(r, j);
            }
    const double sp = tr->cfg.element_spacing;
    for (int k = 0; k < tr->cfg.njammers && k < 2; k++) {
        double worst = 0;
        for (int j = 0; j < nf; j++) {
            double g = brute_response(w, C, P, cfg->doppler_bins, cfg->doppler_order, r->bin, sp,
                                      win, tr->cfg.jammers[k].u, scene_response_f(r, j));
            worst = fmax(worst, g / peak);
        }
        s.jammer_db[k] = db(worst);
    }
    /* the Doppler filter's own response: a one-element array, centre tap only */
    double gmax = 0, gq[4096];
    const int nfine = 2000;
    for (int j = 0; j < nfine; j++) {
        double f = -0.5 + (double)j / nfine;
        stap_cf64 acc = 0;
        for (int p = 0; p < P; p++)
            acc += win[p] * cexp(2 * M_PI * I * (f - r->bin_doppler) * p);
        gq[j] = creal(acc * conj(acc));
        gmax = fmax(gmax, gq[j]);
    }
    double worst = 0;
    for (int i = 0; i < tr->patches; i++) {
        if (fabs(tr->patch_azimuth[i]) > M_PI / 2) continue; /* behind: -30 dB backlobe */
        double f = tr->patch_doppler[i], u = tr->patch_spatial[i] / sp;
        int j = (int)lround((remainder(f, 1.0) + 0.5) * nfine) % nfine;
        if (gq[j] < 0.01 * gmax) continue;
        double g = brute_response(w, C, P, cfg->doppler_bins, cfg->doppler_order, r->bin, sp, win,
                                  u, f);
        worst = fmax(worst, g / peak);
        s.ridge_points++;
    }
    s.ridge_db = db(worst);
    return s;
}

/* The peak of the optimum where nothing interferes near the look point: no clutter, the
 * 35 dB jammers at u = -0.3 and 0.5, beam u = -2/3 (so that a mirrored angle or Doppler
 * would put the peak elsewhere), bin 3 (f = 1/6). */
static void peak_without_clutter(void)
{
    scene_config sc;
    stap_scene_preset_config(SCENE_PRESET_WARD, &sc);
    sc.clutter = 0;
    sc.range_gates = 60;
    stap_error err;
    scene_truth tr;
    if (stap_scene_truth_build(&sc, &tr, &err)) {
        CHECK(0, "scene: %s", err.msg);
        return;
    }
    const int nu = 241, nf = 216, B = 3, beam = 0, bin = 3;
    for (int Q = 1; Q <= 3; Q += 2) {
        stap_config cfg =
            config_for(&sc, sc.pulses, Q, 1, sc.range_gates, B, STAP_WINDOW_NONE, 0);
        stap_cf32 V[3 * 54];
        stap_default_steering(&cfg, V);
        scene_response r;
        if (stap_scene_response_compute(&tr, &cfg, V, B, NULL, bin, 0, beam, nu, nf, &r, &err)) {
            CHECK(0, "response: %s", err.msg);
            continue;
        }
        double peak = -1, pu = 0, pf = 0;
        for (int j = 0; j < nf; j++)
            for (int i = 0; i < nu; i++)
                if (r.optimum[(size_t)j * nu + i] > peak) {
                    peak = r.optimum[(size_t)j * nu + i];
                    pu = scene_response_u(&r, i);
                    pf = scene_response_f(&r, j);
                }
        fprintf(stderr, "  no clutter, Q=%d: optimum peak at u=%+.4f f=%+.4f (look %+.4f, bin "
                "%+.4f)\n", Q, pu, pf, r.look_u, r.bin_doppler);
        CHECK(fabs(pu - r.look_u) <= 2.0 / (nu - 1) + 1e-12 &&
                  fabs(pf - r.bin_doppler) <= 1.0 / nf + 1e-12,
              "Q=%d: without clutter the optimum peaks at (%.4f, %.4f), not within a grid step "
              "of the look direction %.4f and the bin's Doppler %.4f", Q, pu, pf, r.look_u,
              r.bin_doppler);
        stap_scene_response_free(&r);
    }
    stap_scene_truth_free(&tr);
}

/* Ward's scene with clutter, broadside beam, bin 3: Q = 1 behind a 60 dB Chebyshev
 * taper (factored post-Doppler needs a low-sidelobe Doppler filter, Ward ch. 4: without
 * one, mainbeam clutter leaks into every bin in the look direction and the optimum's
 * largest lobe moves near endfire) and Q = 3 without a window (docs/scene.md's Ward run). */
/* Ward's scene with 540 range gates (a fresh seed) and one CPI of it into *cube (the
 * caller frees both); 0, or -1 after reporting the failure. */
static int ward_cpi(tc_rng *rng, scene_config *sc, scene_truth *tr, stap_cf32 **cube)
{
    stap_scene_preset_config(SCENE_PRESET_WARD, sc);
    sc->range_gates = 540;
    sc->seed = (uint64_t)(tc_uniform(rng) * 1e15);
    stap_error err;
    if (stap_scene_truth_build(sc, tr, &err)) {
        CHECK(0, "scene: %s", err.msg);
        return -1;
    }
    *cube = malloc(sizeof(stap_cf32) * (size_t)sc->channels * sc->pulses * sc->range_gates);
    CHECK(stap_scene_generate(tr, *cube, &err) == STAP_OK, "generate: %s", err.msg);
    return 0;
}

/* A CPU run of *cfg on cube (*cfg becomes the validated configuration), and the response of
 * its weights in bin, segment 0 and beam on an nu x nf grid. The weights into *W (the
 * caller frees them, also on failure); STAP_OK, or the failure reported naming `what`. */
static int run_response(const scene_truth *tr, const stap_cf32 *cube, stap_config *cfg, int bin,
                        int beam, int nu, int nf, const char *what, stap_cf32 **W, scene_response *r)
{
    stap_error err;
    stap_plan *plan = NULL;
    *W = NULL;
    if (stap_plan_create(&plan, cfg, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return STAP_EINVAL;
    }
    *cfg = *stap_plan_config(plan);
    *W = malloc(sizeof(stap_cf32) * stap_weights_len(plan));
    stap_cf32 *Y = malloc(sizeof(stap_cf32) * stap_output_len(plan));
    int st = stap_plan_execute(plan, cube, *W, Y, NULL, &err);
    CHECK(st == STAP_OK, "execute: %s", err.msg);
    if (!st)
        st = stap_scene_response_compute(tr, cfg, stap_plan_steering(plan), cfg->beams, *W, bin, 0,
                                    beam, nu, nf, r, &err);
    CHECK(st == STAP_OK, "response %s: %s", what, err.msg);
    free(Y);
    stap_plan_destroy(plan);
    return st;
}

static void theory(tc_rng *rng)
{
    scene_config sc;
    scene_truth tr;
    stap_cf32 *cube;
    if (ward_cpi(rng, &sc, &tr, &cube)) return; /* K = 30 N for Q = 1, 10 N for Q = 3 */
    const int C = sc.channels, P = sc.pulses;
    const int B = 5, beam = 2; /* u = 0 */
    const int bin = 3;         /* f = 1/6: clutter at u = f / (beta d/lambda) = 1/3 */
    const int nu = 241, nf = 216;
    const double du = 2.0 / (nu - 1), df = 1.0 / nf;
    const struct {
        int Q;
        stap_window_kind window;
        double db;
    } cases[2] = {{1, STAP_WINDOW_CHEBYSHEV, 60}, {3, STAP_WINDOW_NONE, 0}};
    for (int k = 0; k < 2; k++) {
        const int Q = cases[k].Q, N = C * Q;
        stap_config cfg = config_for(&sc, P, Q, 1, sc.range_gates, B, cases[k].window,
                                     cases[k].db);
        char what[16];
        snprintf(what, sizeof what, "Q=%d", Q);
        stap_cf32 *W;
        scene_response r;
        const int st = run_response(&tr, cube, &cfg, bin, beam, nu, nf, what, &W, &r);
        if (!st) {
            double win[64];
            window_of(&cfg, win);
            stap_cf64 wa[64];
            const stap_cf32 *wr = W + ((size_t)bin * B + beam) * N;
            for (int i = 0; i < N; i++) wa[i] = wr[i];
            shape o = shape_of(&r, r.optimum, r.optimum_weights, &tr, &cfg, win);
            shape a = shape_of(&r, r.adapted, wa, &tr, &cfg, win);
            /* main lobe: where the optimum is within 3 dB of its peak */
            double po = 0, pa = 0, dev = 0;
            int nml = 0;
            for (size_t g = 0; g < (size_t)nu * nf; g++) {
                po = fmax(po, r.optimum[g]);
                pa = fmax(pa, r.adapted[g]);
            }
            for (size_t g = 0; g < (size_t)nu * nf; g++)
                if (r.optimum[g] >= 0.5 * po) {
                    dev = fmax(dev, fabs(db(r.adapted[g] / pa) - db(r.optimum[g] / po)));
                    nml++;
                }
            fprintf(stderr, "  Q=%d K=%d %s: optimum peak at u=%+.4f f=%+.4f (look %+.4f, bin "
                    "%+.4f); jammer nulls %.1f / %.1f dB; clutter ridge %.1f dB (%d patches)\n",
                    Q, cfg.training, Q == 1 ? "Chebyshev 60 dB" : "no window", o.peak_u,
                    o.peak_f, r.look_u, r.bin_doppler, o.jammer_db[0], o.jammer_db[1],
                    o.ridge_db, o.ridge_points);
            fprintf(stderr, "        adapted: peak at u=%+.4f f=%+.4f; jammer nulls %.1f / %.1f "
                    "dB; clutter ridge %.1f dB; main lobe (%d points) within %.2f dB of the "
                    "optimum\n", a.peak_u, a.peak_f, a.jammer_db[0], a.jammer_db[1], a.ridge_db,
                    nml, dev);
            for (int j = 0; j < 2; j++) {
                CHECK(o.jammer_db[j] < -30, "Q=%d: optimum at jammer u=%.2f only %.1f dB below "
                      "the peak", Q, sc.jammers[j].u, o.jammer_db[j]);
                CHECK(a.jammer_db[j] < -30, "Q=%d: adapted at jammer u=%.2f only %.1f dB below "
                      "the peak", Q, sc.jammers[j].u, a.jammer_db[j]);
            }
            CHECK(o.ridge_points >= 10 && o.ridge_db < -30, "Q=%d: optimum on the clutter ridge "
                  "only %.1f dB below the peak (%d patches)", Q, o.ridge_db, o.ridge_points);
            CHECK(a.ridge_db < -30, "Q=%d: adapted on the clutter ridge only %.1f dB below the "
                  "peak", Q, a.ridge_db);
            CHECK(nml >= 20 && dev < 2.0, "Q=%d: adapted main lobe (%d points) deviates %.2f dB "
                  "from the optimum", Q, nml, dev);
            CHECK(fabs(a.peak_u - o.peak_u) <= 2 * du + 1e-12 &&
                      fabs(a.peak_f - o.peak_f) <= 2 * df + 1e-12,
                  "Q=%d: adapted peak at (%.4f, %.4f), the optimum's at (%.4f, %.4f)", Q,
                  a.peak_u, a.peak_f, o.peak_u, o.peak_f);
            stap_scene_response_free(&r);
        }
        free(W);
    }
    free(cube);
    stap_scene_truth_free(&tr);
}

/* ---- sub-CPI: the staggered snapshot's response ------------------------------------- */
/* Pre-Doppler (M = 3) and ADPCA (M = 2) runs on Ward's scene: (a) pre-Doppler: at the look
 * direction and the bin's centre both responses are (sum win)^2 (w^H s_d = 1); (b) 200 random grid
 * points of both panels against the response written out here from the staggered
 * snapshot's definition; (c) both null the two jammers by 30 dB. */
static void subcpi_response(tc_rng *rng)
{
    scene_config sc;
    scene_truth tr;
    stap_cf32 *cube;
    if (ward_cpi(rng, &sc, &tr, &cube)) return;
    const int C = sc.channels, P = sc.pulses;
    stap_error err;
    const int B = 5, beam = 2, bin = 3, nu = 241, nf = 216; /* u = 0 and f = 1/6 on the grid */
    const stap_algorithm algs[2] = {STAP_ALGORITHM_PRE_DOPPLER, STAP_ALGORITHM_ADPCA};
    const int Ms[2] = {3, 2};
    for (int k = 0; k < 2; k++) {
        const int Q = Ms[k], N = C * Q, Pw = P - Q + 1;
        stap_config cfg = config_for(&sc, P, Q, 1, sc.range_gates, B, STAP_WINDOW_HANN, 0);
        cfg.algorithm = algs[k];
        stap_cf32 *W;
        scene_response r;
        const int st = run_response(&tr, cube, &cfg, bin, beam, nu, nf,
                                    stap_algorithm_name(cfg.algorithm), &W, &r);
        if (!st) {
            float wf[64];
            stap_window(&cfg, wf, &err);
            double sw = 0;
            for (int p = 0; p < Pw; p++) sw += wf[p];
            const size_t look = (size_t)(nf / 2 + nf / 6) * nu + nu / 2;
            const double ea = fabs(r.adapted[look] / (sw * sw) - 1);
            const double eo = fabs(r.optimum[look] / (sw * sw) - 1);
            /* (b): G(u, f) = |sum_{c,q} conj(w) a_c(u) e^{2 pi i f q} sum_p' win e^{2 pi i
             * (f - d/D) p'}|^2 */
            const stap_cf32 *wr = W + ((size_t)bin * B + beam) * N;
            double worst = 0;
            for (int t = 0; t < 200; t++) {
                const int i = (int)(tc_uniform(rng) * nu) % nu, j = (int)(tc_uniform(rng) * nf) % nf;
                const double u = -1.0 + 2.0 * i / (nu - 1), f = -0.5 + (double)j / nf;
                stap_cf64 ga = 0, go = 0, hp = 0;
                for (int p = 0; p < Pw; p++)
                    hp += wf[p] * cexp(2 * M_PI * I * (f - (double)bin / cfg.doppler_bins) * p);
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++) {
                        const stap_cf64 x = cexp(2 * M_PI * I * (cfg.element_spacing * c * u + f * q)) * hp;
                        ga += conj((stap_cf64)wr[c * Q + q]) * x;
                        go += conj(r.optimum_weights[c * Q + q]) * x;
                    }
                const double Ga = creal(ga * conj(ga)), Go = creal(go * conj(go));
                const size_t g = (size_t)j * nu + i;
                worst = fmax(worst, fabs(r.adapted[g] - Ga) / (sw * sw));
                worst = fmax(worst, fabs(r.optimum[g] - Go) / (sw * sw));
            }
            /* (c): the jammers' columns, every Doppler, against the panel's peak */
            double pa = 0, po = 0, ja = -INFINITY, jo = -INFINITY;
            for (size_t g = 0; g < (size_t)nu * nf; g++) {
                pa = fmax(pa, r.adapted[g]);
                po = fmax(po, r.optimum[g]);
            }
            for (int jm = 0; jm < sc.njammers; jm++) {
                const int i = (int)lround((sc.jammers[jm].u + 1) * (nu - 1) / 2);
                for (int j = 0; j < nf; j++) {
                    ja = fmax(ja, db(r.adapted[(size_t)j * nu + i] / pa));
                    jo = fmax(jo, db(r.optimum[(size_t)j * nu + i] / po));
                }
            }
            fprintf(stderr, "  %s M=%d: look point (sum win)^2 within %.1e (adapted) / %.1e "
                    "(clairvoyant); 200 points vs the written-out response %.1e; jammer columns "
                    "%.1f / %.1f dB under the peaks\n", stap_algorithm_name(cfg.algorithm), Q,
                    ea, eo, worst, ja, jo);
            /* (ADPCA's weights pass the canceller (x) a, not the bin's target: no identity) */
            CHECK(cfg.algorithm != STAP_ALGORITHM_PRE_DOPPLER || (ea < 1e-3 && eo < 1e-6),
                  "%s: look-point response off by %.2g / %.2g", stap_algorithm_name(cfg.algorithm),
                  ea, eo);
            CHECK(worst < 1e-6, "%s: response differs from its definition by %.2g",
                  stap_algorithm_name(cfg.algorithm), worst);
            CHECK(ja < -30 && jo < -30, "%s: jammer columns only %.1f / %.1f dB down",
                  stap_algorithm_name(cfg.algorithm), ja, jo);
            stap_scene_response_free(&r);
        }
        free(W);
    }
    free(cube);
    stap_scene_truth_free(&tr);
}

int main(void)
{
    uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    brute_force(&rng);
    peak_without_clutter();
    theory(&rng);
    subcpi_response(&rng);
    if (tc_failures) {
        fprintf(stderr, "test_response: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_response: all passed\n");
    return 0;
}
