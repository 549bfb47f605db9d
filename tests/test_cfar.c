/* test_cfar: the CA and OS CFAR detectors of stap/cfar.c.
 *  1. Against a naive reference written here (windows rebuilt cell by cell, OS rank by
 *     sorting, OS threshold from its own Newton solve) on random lines with spikes:
 *     identical detection lists.
 *  2. False-alarm rate on target-free exponential noise (long lines, and short lines
 *     where most cells use the one-sided edge windows) matches pfa within 4 binomial
 *     standard errors, for CA and OS.
 *  3. False-alarm rate on the adaptive output of target-free Ward scenes (K = R: every
 *     cell is a training cell, which makes the output of a segment an exchangeable,
 *     scale-mixed exponential vector, so CFAR's pfa is exact there too).
 *  4. Targets placed in a Ward scene with a predicted output SINR (SNR_0 x optimum
 *     loss x adaptive loss, from the truth) of 15 dB or more are detected in their
 *     exact (beam, Doppler bin, range cell); false alarms elsewhere stay at pfa. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfar.h"
#include "la_check.h"
#include "scene.h"
#include "scene_sinr.h"
#include "stap.h"
#include "testutil.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* OS threshold by Newton's method on f(a) = sum_{i<k} log((n-i)/(n-i+a)) - log pfa. */
static double ref_os_alpha(int n, int k, double pfa)
{
    double a = 1;
    for (int it = 0; it < 200; it++) {
        double f = -log(pfa), df = 0;
        for (int i = 0; i < k; i++) {
            f += log((double)(n - i)) - log(n - i + a);
            df -= 1.0 / (n - i + a);
        }
        double step = f / df;
        a -= step;
        if (a <= 0) a = 1e-9;
        if (fabs(step) < 1e-13 * a) break;
    }
    return a;
}

/* The detector written out directly: returns the count, fills flat indices. */
static size_t ref_cfar(const stap_cfar_config *c, const cf32 *y, int lines, int R, size_t *flat)
{
    size_t cnt = 0;
    int kfull = c->os_rank > 0 ? c->os_rank : (int)lround(1.5 * c->train);
    double *tr = malloc(sizeof(double) * 2 * c->train);
    for (int l = 0; l < lines; l++)
        for (int r = 0; r < R; r++) {
            int n = 0;
            for (int j = r - c->guard - c->train; j < r - c->guard; j++)
                if (j >= 0) tr[n++] = (double)crealf(y[(size_t)l * R + j]) * crealf(y[(size_t)l * R + j]) +
                                      (double)cimagf(y[(size_t)l * R + j]) * cimagf(y[(size_t)l * R + j]);
            for (int j = r + c->guard + 1; j <= r + c->guard + c->train; j++)
                if (j < R) tr[n++] = (double)crealf(y[(size_t)l * R + j]) * crealf(y[(size_t)l * R + j]) +
                                     (double)cimagf(y[(size_t)l * R + j]) * cimagf(y[(size_t)l * R + j]);
            cf32 v = y[(size_t)l * R + r];
            double p = (double)crealf(v) * crealf(v) + (double)cimagf(v) * cimagf(v), thr;
            if (c->kind == STAP_CFAR_CA) {
                double s = 0;
                for (int i = 0; i < n; i++) s += tr[i];
                thr = n * (pow(c->pfa, -1.0 / n) - 1) * s / n;
            } else {
                int k = (int)lround((double)kfull * n / (2 * c->train));
                k = k < 1 ? 1 : k > n ? n : k;
                qsort(tr, n, sizeof(double), cmp_double);
                thr = ref_os_alpha(n, k, c->pfa) * tr[k - 1];
            }
            /* cells within 1e-9 of the threshold are ambiguous between two correct
             * solvers; the random data never put one there */
            if (p > thr) flat[cnt++] = (size_t)l * R + r;
        }
    free(tr);
    return cnt;
}

static void test_reference(tc_rng *rng)
{
    const int B = 3, D = 20, R = 150, lines = B * D;
    cf32 *y = malloc(sizeof(cf32) * (size_t)lines * R);
    size_t *flat = malloc(sizeof(size_t) * (size_t)lines * R);
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_OS; kind++)
        for (int rep = 0; rep < 3; rep++) {
            stap_cfar_config c;
            stap_cfar_defaults(&c);
            c.kind = (stap_cfar_kind)kind;
            c.pfa = pow(10, -1 - 4 * tc_uniform(rng));
            c.guard = (int)(tc_uniform(rng) * 4);
            c.train = 2 + (int)(tc_uniform(rng) * 20);
            c.os_rank = rep == 2 ? 1 + (int)(tc_uniform(rng) * 2 * c.train) : 0;
            for (size_t i = 0; i < (size_t)lines * R; i++) {
                y[i] = tc_cnormal(rng) * (float)(1 + 3 * (int)(tc_uniform(rng) * 1.02));
                if (tc_uniform(rng) < 0.01) y[i] *= 10; /* targets */
            }
            stap_detection *det;
            size_t n;
            rt_error err;
            int st = stap_cfar_detect(&c, y, B, D, R, &det, &n, &err);
            CHECK(st == RT_OK, "detect: %s", err.msg);
            size_t nref = ref_cfar(&c, y, lines, R, flat);
            char desc[128];
            stap_cfar_describe(&c, desc, sizeof desc);
            int same = n == nref;
            for (size_t i = 0; same && i < n; i++)
                same = (((size_t)det[i].beam * D + det[i].doppler_bin) * R + det[i].range_cell) == flat[i];
            fprintf(stderr, "  reference (%s): %zu detections, library %zu%s\n", desc, nref, n,
                    same ? ", identical" : "");
            CHECK(same, "%s: library and reference detections differ (%zu vs %zu)", desc, n, nref);
            for (size_t i = 0; i < n; i++) {
                size_t f = ((size_t)det[i].beam * D + det[i].doppler_bin) * R + det[i].range_cell;
                double p = (double)crealf(y[f]) * crealf(y[f]) + (double)cimagf(y[f]) * cimagf(y[f]);
                if (det[i].power != (float)p || !(det[i].snr_db > 0)) {
                    CHECK(0, "detection %zu: power %g (cell %g), snr %g dB", i, det[i].power, p,
                          det[i].snr_db);
                    break;
                }
            }
            free(det);
        }
    free(y);
    free(flat);
}

/* Count false alarms on exponential noise; returns the z-score. */
static double pfa_noise(tc_rng *rng, stap_cfar_kind kind, double pfa, int guard, int train,
                        int os_rank, int lines, int R)
{
    stap_cfar_config c = {kind, pfa, guard, train, os_rank};
    size_t cells = (size_t)lines * R, total = 0;
    cf32 *y = malloc(sizeof(cf32) * cells);
    double scale = 1;
    for (size_t i = 0; i < cells; i++) {
        if (i % R == 0) scale = exp(4 * tc_uniform(rng)); /* unknown noise level per line */
        y[i] = (float)scale * tc_cnormal(rng);
    }
    stap_detection *det;
    size_t n;
    rt_error err;
    if (stap_cfar_detect(&c, y, 1, lines, R, &det, &n, &err)) {
        CHECK(0, "detect: %s", err.msg);
        free(y);
        return 0;
    }
    total = n;
    free(det);
    free(y);
    double expect = pfa * cells, sd = sqrt(cells * pfa * (1 - pfa)), z = (total - expect) / sd;
    char desc[128];
    stap_cfar_describe(&c, desc, sizeof desc);
    fprintf(stderr, "  noise, %s, lines of %d: %zu false alarms in %zu cells, expected %.1f "
            "+- %.1f (z = %.2f)\n", desc, R, total, cells, expect, sd, z);
    CHECK(fabs(z) < 4, "%s: false-alarm count %zu, expected %.1f +- %.1f", desc, total, expect, sd);
    return z;
}

/* A Ward scene through a plan; y: B x D x R output. */
static int ward_output(const scene_truth *tr, stap_plan *plan, cf32 *y, rt_error *err)
{
    const scene_config *c = &tr->cfg;
    cf32 *cube = malloc(sizeof(cf32) * (size_t)c->channels * c->pulses * c->range_gates);
    cf32 *W = malloc(sizeof(cf32) * stap_weights_len(plan));
    int st = scene_generate(tr, cube, err);
    if (!st) st = stap_plan_execute(plan, cube, W, y, NULL, err);
    free(cube);
    free(W);
    return st;
}

static void test_scene_false_alarms(tc_rng *rng)
{
    scene_config sc;
    scene_preset_config(SCENE_PRESET_WARD, &sc);
    scene_truth tr;
    rt_error err;
    scene_truth_build(&sc, &tr, &err);
    stap_config cfg;
    stap_config_defaults(&cfg);
    cfg.channels = sc.channels;
    cfg.pulses = sc.pulses;
    cfg.range_gates = sc.range_gates;
    cfg.doppler_order = 1;
    cfg.segments = 1;
    cfg.training = sc.range_gates; /* every cell trains: exchangeable output */
    cfg.beams = 1;   /* broadside; beams of one CPI share their data and alarm together */
    cfg.backend = LA_BACKEND_CPU;
    stap_plan *plan;
    if (stap_plan_create(&plan, &cfg, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    const stap_config *pc = stap_plan_config(plan);
    enum { trials = 400 };
    const int B = 1, D = pc->doppler_bins, R = pc->range_gates;
    cf32 *y = malloc(sizeof(cf32) * stap_output_len(plan));
    size_t count[2] = {0, 0}, per_trial[2][trials];
    const double pfa = 1e-3;
    for (int t = 0; t < trials; t++) {
        tr.cfg.seed = (uint64_t)(tc_uniform(rng) * 1e15);
        if (ward_output(&tr, plan, y, &err)) {
            CHECK(0, "scene: %s", err.msg);
            break;
        }
        for (int k = 0; k < 2; k++) {
            stap_cfar_config c = {k ? STAP_CFAR_OS : STAP_CFAR_CA, pfa, 2, 16, 0};
            stap_detection *det;
            size_t n;
            if (stap_cfar_detect(&c, y, B, D, R, &det, &n, &err)) CHECK(0, "detect: %s", err.msg);
            count[k] += n;
            per_trial[k][t] = n;
            free(det);
        }
    }
    size_t cells = (size_t)trials * B * D * R;
    double expect = pfa * cells, sd = sqrt(cells * pfa * (1 - pfa));
    for (int k = 0; k < 2; k++) {
        /* the Doppler bins of one CPI are not independent either: the standard error is
         * the larger of the binomial one and the one from the spread over the trials */
        double m = (double)count[k] / trials, v = 0;
        for (int t = 0; t < trials; t++) v += (per_trial[k][t] - m) * (per_trial[k][t] - m);
        double sd_trials = sqrt(v / (trials - 1) * trials), se = fmax(sd, sd_trials);
        double z = (count[k] - expect) / se;
        fprintf(stderr, "  target-free Ward scenes, %s-CFAR pfa %g: %zu false alarms in %zu "
                "cells, expected %.1f +- %.1f (binomial) / %.1f (spread over trials), "
                "z = %.2f\n", k ? "OS" : "CA", pfa, count[k], cells, expect, sd, sd_trials, z);
        CHECK(fabs(z) < 4, "%s-CFAR on scene output: %zu false alarms, expected %.1f +- %.1f",
              k ? "OS" : "CA", count[k], expect, se);
    }
    free(y);
    stap_plan_destroy(plan);
    scene_truth_free(&tr);
}

static void test_targets(tc_rng *rng)
{
    scene_config sc;
    scene_preset_config(SCENE_PRESET_WARD, &sc);
    sc.range_gates = 324;
    const int C = sc.channels, P = sc.pulses, B = 3, Q = 3, N = C * Q;
    stap_config cfg;
    stap_config_defaults(&cfg);
    cfg.channels = C;
    cfg.pulses = P;
    cfg.range_gates = sc.range_gates;
    cfg.doppler_order = Q; /* extended factored: a one-bin clutter notch */
    cfg.window = STAP_WINDOW_CHEBYSHEV;
    cfg.chebyshev_db = 80;
    cfg.segments = 1;
    /* Every cell trains (K = R), so the target-free output of a Doppler bin is
     * exchangeable along range and CFAR keeps its pfa; the targets are in the training
     * data too, which costs them SINR (self-nulling). */
    cfg.training = sc.range_gates;
    cfg.beams = B;
    cfg.backend = LA_BACKEND_CPU;
    stap_plan *plan;
    rt_error err;
    if (stap_plan_create(&plan, &cfg, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    cfg = *stap_plan_config(plan);
    const int D = cfg.doppler_bins, R = cfg.range_gates;
    /* the optimum loss per (bin, beam) from the target-free truth */
    scene_truth tr0;
    scene_truth_build(&sc, &tr0, &err);
    cf32 *W = calloc(stap_weights_len(plan), sizeof(cf32));
    stap_sinr_result lo;
    if (stap_sinr_compute(&tr0, &cfg, stap_plan_steering(plan), B, W, -1, &lo, &err)) {
        CHECK(0, "sinr: %s", err.msg);
        return;
    }
    const double rho = (double)(cfg.training + 2 - N) / (cfg.training + 1);
    const stap_cfar_config cc = {STAP_CFAR_CA, 1e-4, 2, 16, 0};
    cf32 *y = malloc(sizeof(cf32) * stap_output_len(plan));
    int detected = 0, expected = 0;
    size_t other = 0, cells = 0;
    /* Per trial 7 targets, 40 range cells apart; within a beam their Doppler bins are
     * at least 5 apart, so that no target sits in the training data of another's bin
     * (Q = 3 taps plus the taper's mainlobe) with the same spatial signature, and
     * away from the beam's clutter notch. */
    static const int plan_beam[7] = {1, 1, 1, 0, 0, 2, 2};
    static const int plan_bin[7] = {3, 9, 15, 1, 6, 12, 17};
    double worst_margin = INFINITY;
    for (int trial = 0; trial < 3; trial++) {
        scene_config s = sc;
        s.seed = (uint64_t)(tc_uniform(rng) * 1e15);
        s.ntargets = 7;
        int tb[7], td[7];
        double want_db[7];
        int shift = (int)(tc_uniform(rng) * 2); /* bins 3,9,15 or 4,10,16 for beam 1 */
        for (int k = 0; k < 7; k++) {
            int b = plan_beam[k];
            int d = plan_bin[k] + (b == 1 ? shift : 0);
            int r = 21 + 40 * k + (int)(tc_uniform(rng) * 10);
            double u = -1.0 + (2.0 * b + 1.0) / B;
            double f = (d < D / 2.0 ? d : d - D) * sc.prf_hz / D;
            double L = lo.optimum_loss[(size_t)d * B + b];
            /* SNR per element and pulse for a predicted output SINR of 21..25 dB. The
             * targets are in the training data (K = R): self-nulling costs them
             * several dB (most at SINR ~ K), which the CFAR's SNR estimate shows. */
            want_db[k] = 21 + 4 * tc_uniform(rng);
            double snr = want_db[k] - 10 * log10((double)C * P * L * rho);
            s.targets[k] = (scene_target){r, u, f, snr};
            tb[k] = b;
            td[k] = d;
        }
        scene_truth tr;
        scene_truth_build(&s, &tr, &err);
        if (ward_output(&tr, plan, y, &err)) {
            CHECK(0, "scene: %s", err.msg);
            break;
        }
        stap_detection *det;
        size_t n;
        stap_cfar_detect(&cc, y, B, D, R, &det, &n, &err);
        for (int k = 0; k < 7; k++) {
            int found = 0;
            float snr = 0;
            for (size_t i = 0; i < n; i++)
                if (det[i].beam == tb[k] && det[i].doppler_bin == td[k] &&
                    det[i].range_cell == s.targets[k].range_cell) {
                    found = 1;
                    snr = det[i].snr_db;
                }
            expected++;
            detected += found;
            if (found && snr - want_db[k] < worst_margin) worst_margin = snr - want_db[k];
            CHECK(found, "target %d (beam %d, bin %d, cell %d, predicted SINR %.1f dB) "
                  "not detected", k, tb[k], td[k], s.targets[k].range_cell, want_db[k]);
        }
        /* everything outside the targets' range cells is a false alarm (in its own
         * cell a target also shows in other beams' spatial and the neighbouring bins'
         * Doppler sidelobes) */
        for (size_t i = 0; i < n; i++) {
            int at_target = 0;
            for (int k = 0; k < 7; k++)
                at_target |= det[i].range_cell == s.targets[k].range_cell;
            other += !at_target;
        }
        cells += (size_t)B * D * R;
        free(det);
        scene_truth_free(&tr);
    }
    double expect = cc.pfa * cells, sd = sqrt(expect);
    fprintf(stderr, "  targets: %d of %d (predicted SINR 21-25 dB without self-nulling) detected "
            "in their exact cell, CFAR SNR estimate >= prediction %+.1f dB; %zu other detections "
            "(false-alarm expectation %.1f +- %.1f)\n", detected, expected, worst_margin,
            other, expect, sd);
    CHECK(other <= expect + 5 * sd + 2, "%zu detections away from the targets", other);
    free(y);
    free(W);
    stap_sinr_free(&lo);
    scene_truth_free(&tr0);
    stap_plan_destroy(plan);
}

static void test_validation(void)
{
    stap_cfar_config c;
    rt_error err;
    stap_cfar_kind k;
    stap_cfar_defaults(&c);
    CHECK(c.kind == STAP_CFAR_CA && c.pfa == 1e-6 && c.guard == 2 && c.train == 16 && c.os_rank == 0,
          "defaults");
    CHECK(stap_cfar_parse_kind("os", &k, &err) == RT_OK && k == STAP_CFAR_OS, "parse os");
    CHECK(stap_cfar_parse_kind("CA", &k, &err) == RT_EINVAL, "parse CA accepted");
    CHECK(stap_cfar_validate(&c, 37, &err) == RT_OK, "R = 37 is enough for guard 2, train 16");
    CHECK(stap_cfar_validate(&c, 36, &err) == RT_EINVAL && strstr(err.msg, "range gates"),
          "R = 36 accepted");
    c.pfa = 1;
    CHECK(stap_cfar_validate(&c, 100, &err) == RT_EINVAL && strstr(err.msg, "stap_cfar_config.pfa"),
          "pfa 1 accepted");
    stap_cfar_defaults(&c);
    c.kind = STAP_CFAR_OS;
    c.os_rank = 33;
    CHECK(stap_cfar_validate(&c, 100, &err) == RT_EINVAL && strstr(err.msg, "stap_cfar_config.os_rank"),
          "rank 33 of 32 accepted");
    c.os_rank = 0;
    char buf[128];
    stap_cfar_describe(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "os pfa=1e-06 guard=2 train=16 rank=24"), "describe: '%s'", buf);
    c.kind = STAP_CFAR_NONE;
    stap_detection *det = (stap_detection *)&c;
    size_t n = 7;
    cf32 y[40] = {0};
    CHECK(stap_cfar_detect(&c, y, 1, 1, 40, &det, &n, &err) == RT_OK && n == 0 && !det,
          "kind none must detect nothing");
}

int main(void)
{
    uint64_t seed = tc_seed_from_env_or_time();
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    test_validation();
    test_reference(&rng);
    pfa_noise(&rng, STAP_CFAR_CA, 1e-3, 2, 16, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_OS, 1e-3, 2, 16, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_OS, 1e-3, 0, 12, 5, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_CA, 1e-2, 1, 6, 0, 4000, 15);  /* mostly edge windows */
    pfa_noise(&rng, STAP_CFAR_OS, 1e-2, 1, 6, 0, 4000, 15);
    test_scene_false_alarms(&rng);
    test_targets(&rng);
    if (tc_failures) {
        fprintf(stderr, "test_cfar: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_cfar: all passed\n");
    return 0;
}
