/* test_cfar: the CFAR detectors of stap/detect/cfar.c (CA, OS, GO, SO along range; CA2D over
 * range x Doppler).
 *  1. Threshold tables against independent computations: the GO/SO false-alarm
 *     probability at the library's alpha by numerical integration over the training
 *     sums (Simpson), the GO/SO noise divisors by integration, CA/CA2D alpha from the
 *     closed form, the edge entries of GO/SO equal CA's.
 *  2. Against a naive reference written here (windows rebuilt cell by cell, the 2-D
 *     rectangle by loops with circular Doppler, OS rank by sorting, OS threshold from its
 *     own Newton solve, GO/SO thresholds by bisection on 2(1+T)^-m - SO) on random lines
 *     with spikes: identical detection lists, and the SNR estimates.
 *  3. Monte-Carlo false-alarm rate on noise-only complex Gaussian data (4.1 M cells,
 *     fixed seed) for CA, OS, GO, SO and CA2D at pfa 1e-3 and 1e-4: measured / requested
 *     within [0.5, 2] (and within 5 binomial standard errors); a control shows that the
 *     check rejects a detector off by a factor 3.
 *  4. False-alarm rate on target-free exponential noise (long lines, and short lines
 *     where most cells use the one-sided edge windows) matches pfa within 4 binomial
 *     standard errors, for every kind.
 *  5. False-alarm rate on the adaptive output of target-free Ward scenes (K = R: every
 *     cell is a training cell, which makes the output of a segment an exchangeable,
 *     scale-mixed exponential vector, so CFAR's pfa is exact there too), CA, OS, GO, SO.
 *  6. Targets placed in a Ward scene with a predicted output SINR (SNR_0 x optimum
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

/* A configuration of the given kind and range window (the rest at the defaults). */
static stap_cfar_config config(stap_cfar_kind kind, double pfa, int guard, int train, int os_rank)
{
    stap_cfar_config c;
    stap_cfar_defaults(&c);
    c.kind = kind;
    c.pfa = pfa;
    c.guard = guard;
    c.train = train;
    c.os_rank = os_rank;
    return c;
}

/* SO-CFAR's pfa for m cells each side, T = alpha/m: 2 sum_{k<m} C(m-1+k,k) (2+T)^-(m+k),
 * the binomials from lgamma; GO's is 2 (1+T)^-m minus it. */
static double ref_goso_pfa(int m, int greatest, double T)
{
    double so = 0;
    for (int k = 0; k < m; k++)
        so += 2 * exp(lgamma(m + k) - lgamma(k + 1.0) - lgamma(m) - (m + k) * log(2 + T));
    return greatest ? 2 * pow(1 + T, -m) - so : so;
}

/* alpha for GO/SO by plain bisection on T (the pfa falls from 1 at T = 0). */
static double ref_goso_alpha(int m, int greatest, double pfa)
{
    double lo = 0, hi = 1;
    while (ref_goso_pfa(m, greatest, hi) > pfa) hi *= 2;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (ref_goso_pfa(m, greatest, mid) > pfa) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi) * m;
}

/* E[max or min of two Gamma(m) sums] / m = 1 +- C(2m, m) / 4^m */
static double ref_goso_norm(int m, int greatest)
{
    double b = exp(lgamma(2 * m + 1.0) - 2 * lgamma(m + 1.0) - 2 * m * log(2.0));
    return greatest ? 1 + b : 1 - b;
}

static double power_at(const stap_cf32 *y, size_t i)
{
    return (double)crealf(y[i]) * crealf(y[i]) + (double)cimagf(y[i]) * cimagf(y[i]);
}

/* The detector written out directly on a B x D x R output: returns the count, fills
 * flat indices and noise estimates. */
static size_t ref_cfar(const stap_cfar_config *c, const stap_cf32 *y, int B, int D, int R,
                       size_t *flat, double *noise)
{
    size_t cnt = 0;
    int kfull = c->os_rank > 0 ? c->os_rank : (int)lround(1.5 * c->train);
    const int g = c->guard, t = c->train, gd = c->guard_doppler, wd = gd + c->train_doppler;
    double *tr = malloc(sizeof(double) * 2 * t);
    const double go_alpha =
        c->kind == STAP_CFAR_GO || c->kind == STAP_CFAR_SO
            ? ref_goso_alpha(t, c->kind == STAP_CFAR_GO, c->pfa) : 0;
    for (int l = 0; l < B * D; l++)
        for (int r = 0; r < R; r++) {
            int n = 0, nl = 0;
            double thr, est, sl = 0, sr = 0, s2 = 0;
            for (int j = r - g - t; j < r - g; j++)
                if (j >= 0) sl += tr[n++] = power_at(y, (size_t)l * R + j);
            nl = n;
            for (int j = r + g + 1; j <= r + g + t; j++)
                if (j < R) sr += tr[n++] = power_at(y, (size_t)l * R + j);
            const double p = power_at(y, (size_t)l * R + r);
            if (c->kind == STAP_CFAR_CA2D) {
                const int b = l / D, d = l % D;
                n = 0;
                for (int dd = -wd; dd <= wd; dd++)
                    for (int dr = -g - t; dr <= g + t; dr++) {
                        const int rr = r + dr, bin = ((d + dd) % D + D) % D;
                        if (rr < 0 || rr >= R || (abs(dd) <= gd && abs(dr) <= g)) continue;
                        s2 += power_at(y, ((size_t)b * D + bin) * R + rr);
                        n++;
                    }
                est = s2 / n;
                thr = n * (pow(c->pfa, -1.0 / n) - 1) * est;
            } else if (c->kind == STAP_CFAR_OS) {
                int k = (int)lround((double)kfull * n / (2 * c->train));
                k = k < 1 ? 1 : k > n ? n : k;
                qsort(tr, n, sizeof(double), cmp_double);
                thr = ref_os_alpha(n, k, c->pfa) * tr[k - 1];
                double h = 0;
                for (int i = 0; i < k; i++) h += 1.0 / (n - i);
                est = tr[k - 1] / h;
            } else if (c->kind != STAP_CFAR_CA && nl == t && n == 2 * t) {
                const int go = c->kind == STAP_CFAR_GO;
                const double z = (go ? fmax(sl, sr) : fmin(sl, sr)) / t;
                thr = go_alpha * z;
                est = z / ref_goso_norm(t, go);
            } else { /* CA, and GO/SO with a side partial or missing */
                double s = 0;
                for (int i = 0; i < n; i++) s += tr[i];
                thr = n * (pow(c->pfa, -1.0 / n) - 1) * s / n;
                est = s / n;
            }
            /* cells within 1e-9 of the threshold are ambiguous between two correct
             * solvers; the random data never put one there */
            if (p > thr) {
                noise[cnt] = est;
                flat[cnt++] = (size_t)l * R + r;
            }
        }
    free(tr);
    return cnt;
}

static void test_reference(tc_rng *rng)
{
    const int B = 3, D = 20, R = 150, lines = B * D;
    stap_cf32 *y = malloc(sizeof(stap_cf32) * (size_t)lines * R);
    size_t *flat = malloc(sizeof(size_t) * (size_t)lines * R);
    double *noise = malloc(sizeof(double) * (size_t)lines * R);
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++)
        for (int rep = 0; rep < 4; rep++) {
            stap_cfar_config c = config((stap_cfar_kind)kind, pow(10, -1 - 4 * tc_uniform(rng)),
                                        (int)(tc_uniform(rng) * 4),
                                        2 + (int)(tc_uniform(rng) * 20), 0);
            c.os_rank = rep == 2 ? 1 + (int)(tc_uniform(rng) * 2 * c.train) : 0;
            c.guard_doppler = (int)(tc_uniform(rng) * 3);
            c.train_doppler = rep == 3 ? 0 : (int)(tc_uniform(rng) * 4);
            if (rep == 1) c.train = 1; /* GO/SO of single cells */
            /* lines of about 2 (guard + train): most cells at an edge */
            const int Rr = rep == 3 ? 2 * (c.guard + c.train) + 1 + (int)(tc_uniform(rng) * 3) : R;
            /* the noise level is one per beam (CA2D's window spans bins), a target in
             * about 1 % of the cells and a clutter-like step in some lines */
            for (int l = 0; l < lines; l++)
                for (int r = 0; r < Rr; r++) {
                    size_t i = (size_t)l * Rr + r;
                    y[i] = tc_cnormal(rng) * (float)(1 + 3 * (l / D == 1));
                    if (l % 7 == 3 && r > Rr / 2) y[i] *= 4;
                    if (tc_uniform(rng) < 0.01) y[i] *= 10; /* targets */
                }
            stap_detection *det;
            size_t n;
            stap_error err;
            int st = stap_cfar_detect(&c, y, B, D, Rr, &det, &n, &err);
            CHECK(st == STAP_OK, "detect: %s", err.msg);
            if (st) continue;
            size_t nref = ref_cfar(&c, y, B, D, Rr, flat, noise);
            char desc[128];
            stap_cfar_describe(&c, desc, sizeof desc);
            int same = n == nref;
            for (size_t i = 0; same && i < n; i++)
                same = ((size_t)det[i].beam * D + det[i].doppler_bin) * Rr + det[i].range_cell ==
                       flat[i];
            fprintf(stderr, "  reference (%s, R %d): %zu detections, library %zu%s\n", desc, Rr,
                    nref, n, same ? ", identical" : "");
            CHECK(same, "%s: library and reference detections differ (%zu vs %zu)", desc, n, nref);
            for (size_t i = 0; same && i < n; i++) {
                size_t f = flat[i];
                double p = power_at(y, f), snr = 10 * log10(p / noise[i]);
                if (det[i].power != (float)p || !(det[i].snr_db > 0) ||
                    fabs(det[i].snr_db - snr) > 1e-4 * fmax(1, fabs(snr))) {
                    CHECK(0, "%s: detection %zu: power %g (cell %g), snr %.7g dB (reference %.7g)",
                          desc, i, det[i].power, p, det[i].snr_db, snr);
                    break;
                }
            }
            free(det);
        }
    free(y);
    free(flat);
    free(noise);
}

/* P(Poisson(x) < m) (lower = 1) or >= m (lower = 0), both as sums of positive terms. */
static double poisson_part(double x, int m, int lower)
{
    double term = exp(-x), s = 0;
    for (int j = 0;; j++) {
        if ((j < m) == lower) s += term;
        if (lower ? j + 1 >= m : (j >= m && j > x && term <= 1e-20 * s)) break;
        term *= x / (j + 1);
    }
    return s;
}

/* Composite Simpson over [0, xmax] of f(x) for the two-sided sums: with the Gamma(m)
 * density g, SO: 2 g(x) e^(-Tx) P(S > x), GO: 2 g(x) e^(-Tx) P(S < x) (the CUT exceeds
 * alpha Z with probability E exp(-T min/max(S_l, S_r)), T = alpha/m); which = 2: the
 * mean of the smaller sum, P(S > x)^2. */
static double integrate(int m, int which, double T)
{
    /* the integrands fall at least as fast as x^(2m-1) e^(-(1+T)x): [0, xmax] holds all
     * but a negligible part of them, on 4000 intervals */
    const int N = 4000;
    const double xmax = (2 * m + 30 * sqrt(2.0 * m) + 40) / (1 + T), h = xmax / N;
    double s = 0;
    for (int i = 0; i <= N; i++) {
        const double x = i * h, w = i == 0 || i == N ? 1 : i % 2 ? 4 : 2;
        double f;
        if (which == 2) {
            const double q = poisson_part(x, m, 1);
            f = q * q;
        } else {
            const double g = x > 0 ? exp((m - 1) * log(x) - x - lgamma(m)) : (m == 1);
            f = 2 * g * exp(-T * x) * poisson_part(x, m, which == 1);
        }
        s += w * f;
    }
    return s * h / 3;
}

static void test_tables(void)
{
    static const int ms[] = {1, 2, 5, 16, 64, 128};
    static const double pfas[] = {1e-2, 1e-4, 1e-6, 1e-9};
    double worst = 0, worst_norm = 0;
    for (int kind = STAP_CFAR_GO; kind <= STAP_CFAR_SO; kind++)
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
            for (size_t j = 0; j < sizeof pfas / sizeof *pfas; j++) {
                stap_cfar_config c = config((stap_cfar_kind)kind, pfas[j], 2, ms[i], 0);
                const int nt = (int)stap_cfar_table_len(&c), m = ms[i];
                double *alpha = malloc(sizeof(double) * nt), *norm = malloc(sizeof(double) * nt);
                int *rank = malloc(sizeof(int) * nt);
                stap_error err;
                CHECK(nt == 2 * m + 1, "table length %d for train %d", nt, m);
                if (stap_cfar_tables(&c, alpha, rank, norm, &err)) {
                    CHECK(0, "tables: %s", err.msg);
                    continue;
                }
                const int go = kind == STAP_CFAR_GO;
                const double P = integrate(m, go ? 0 : 1, alpha[2 * m] / m);
                const double e = fabs(P / pfas[j] - 1);
                worst = fmax(worst, e);
                CHECK(e < 1e-7, "%s m %d pfa %g: alpha %.17g gives pfa %.12g by integration",
                      go ? "GO" : "SO", m, pfas[j], alpha[2 * m], P);
                /* the closed form of the library agrees with the other closed form */
                const double P2 = ref_goso_pfa(m, go, alpha[2 * m] / m);
                CHECK(fabs(P2 / pfas[j] - 1) < 1e-9, "%s m %d pfa %g: closed form %.12g",
                      go ? "GO" : "SO", m, pfas[j], P2);
                const double lo = integrate(m, 2, 0) / m, want = go ? 2 - lo : lo;
                worst_norm = fmax(worst_norm, fabs(norm[2 * m] / want - 1));
                CHECK(fabs(norm[2 * m] / want - 1) < 1e-7, "%s m %d: noise divisor %.12g, "
                      "integral %.12g", go ? "GO" : "SO", m, norm[2 * m], want);
                /* GO >= CA >= SO thresholds: the CA alpha for n = 2m lies between */
                const double ca = 2 * m * (pow(pfas[j], -1.0 / (2 * m)) - 1);
                CHECK(go ? alpha[2 * m] <= ca * (1 + 1e-12) : alpha[2 * m] >= ca * (1 - 1e-12),
                      "%s m %d pfa %g: alpha %g against CA's %g", go ? "GO" : "SO", m, pfas[j],
                      alpha[2 * m], ca);
                for (int n = 1; n < 2 * m; n++) /* the edges: CA over the cells that exist */
                    if (fabs(alpha[n] / (n * (pow(pfas[j], -1.0 / n) - 1)) - 1) > 1e-13 ||
                        norm[n] != 1) {
                        CHECK(0, "%s m %d: edge entry %d is not CA's", go ? "GO" : "SO", m, n);
                        break;
                    }
                free(alpha);
                free(norm);
                free(rank);
            }
    fprintf(stderr, "  GO/SO tables: pfa at alpha within %.1e of the request by integration, "
            "noise divisors within %.1e\n", worst, worst_norm);
    /* CA2D: the table covers the full rectangle's count; each entry is CA's */
    stap_cfar_config c = config(STAP_CFAR_CA2D, 1e-5, 3, 10, 0);
    c.guard_doppler = 2;
    c.train_doppler = 3;
    const int nt = (int)stap_cfar_table_len(&c);
    CHECK(nt == 2 * 3 * (2 * 13 + 1) + 2 * 10 * 5 + 1, "CA2D table length %d", nt);
    double *alpha = malloc(sizeof(double) * nt), *norm = malloc(sizeof(double) * nt);
    int *rank = malloc(sizeof(int) * nt);
    stap_error err;
    CHECK(stap_cfar_tables(&c, alpha, rank, norm, &err) == STAP_OK, "CA2D tables: %s", err.msg);
    for (int n = 1; n < nt; n++)
        if (fabs(alpha[n] / (n * (pow(c.pfa, -1.0 / n) - 1)) - 1) > 1e-13 || norm[n] != 1 ||
            fabs(pow(1 + alpha[n] / n, -n) / c.pfa - 1) > 1e-12) {
            CHECK(0, "CA2D entry %d: alpha %.17g", n, alpha[n]);
            break;
        }
    free(alpha);
    free(norm);
    free(rank);
}

/* The Monte-Carlo criterion: measured / requested within [0.5, 2], and within 5 binomial
 * standard errors. */
static int ratio_ok(double ratio, double z) { return ratio >= 0.5 && ratio <= 2 && fabs(z) < 5; }

/* Monte-Carlo false-alarm rate on noise-only complex Gaussian data: every kind at pfa 1e-3
 * and 1e-4 on one block of 4 beams x 256 bins x 4000 cells (a noise level per beam: CA2D's
 * window spans bins), fixed seed. */
static void test_monte_carlo(void)
{
    const int B = 4, D = 256, R = 4000;
    const size_t cells = (size_t)B * D * R;
    tc_rng rng;
    tc_rng_seed(&rng, 20240613);
    stap_cf32 *y = malloc(sizeof(stap_cf32) * cells);
    for (size_t i = 0; i < cells; i++) {
        const float level = (float)exp(2.0 * (int)(i / ((size_t)D * R)));
        y[i] = level * tc_cnormal(&rng);
    }
    static const double pfas[] = {1e-3, 1e-4};
    size_t count_1e3_ca = 0;
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++)
        for (int j = 0; j < 2; j++) {
            stap_cfar_config c = config((stap_cfar_kind)kind, pfas[j], 2, 16, 0);
            stap_detection *det;
            size_t n;
            stap_error err;
            double t0 = stap_now_ms();
            if (stap_cfar_detect(&c, y, B, D, R, &det, &n, &err)) {
                CHECK(0, "detect: %s", err.msg);
                continue;
            }
            free(det);
            const double expect = pfas[j] * cells, ratio = n / expect,
                         z = (n - expect) / sqrt(expect * (1 - pfas[j]));
            char desc[128];
            stap_cfar_describe(&c, desc, sizeof desc);
            fprintf(stderr, "  Monte Carlo, %s: %zu false alarms in %zu cells, expected %.1f: "
                    "ratio %.3f (z = %.2f, %.0f ms)\n", desc, n, cells, expect, ratio, z,
                    stap_now_ms() - t0);
            CHECK(ratio_ok(ratio, z), "%s: measured / requested false-alarm rate %.3f", desc,
                  ratio);
            if (kind == STAP_CFAR_CA && j == 0) count_1e3_ca = n;
        }
    /* the check can fail: CA at pfa 1e-3 judged against 3.3e-4 is off by 3 */
    const double e3 = 3.3e-4 * cells;
    CHECK(!ratio_ok(count_1e3_ca / e3, (count_1e3_ca - e3) / sqrt(e3)),
          "the Monte-Carlo check accepts a detector off by a factor 3");
    free(y);
}

/* Count false alarms on exponential noise; returns the z-score. */
static double pfa_noise(tc_rng *rng, stap_cfar_kind kind, double pfa, int guard, int train,
                        int os_rank, int lines, int R)
{
    stap_cfar_config c = config(kind, pfa, guard, train, os_rank);
    size_t cells = (size_t)lines * R, total = 0;
    stap_cf32 *y = malloc(sizeof(stap_cf32) * cells);
    double scale = 1;
    for (size_t i = 0; i < cells; i++) {
        /* unknown noise level per line (CA2D: one level, its window spans the lines) */
        if (i % R == 0 && kind != STAP_CFAR_CA2D) scale = exp(4 * tc_uniform(rng));
        y[i] = (float)scale * tc_cnormal(rng);
    }
    stap_detection *det;
    size_t n;
    stap_error err;
    if (stap_cfar_detect(&c, y, 1, lines, R, &det, &n, &err)) {
        CHECK(0, "detect: %s", err.msg);
        free(y);
        return 0;
    }
    total = n;
    /* The binomial standard error assumes independent cells, but cells that share training
     * cells alarm together: the count of OS with 12 training cells and rank 5 spreads 1.17x
     * wider than binomial (23.4 against 20.0), which turns |z| < 4 into |z| < 3.4 of the
     * real spread. So the standard error also comes from the counts themselves, over
     * blocks of lines that share no window (a line; CA2D: as many lines as its Doppler
     * window), and the larger of the two is used. */
    const int B = kind == STAP_CFAR_CA2D ? 2 * (c.guard_doppler + c.train_doppler) + 1 : 1;
    const int nblk = lines / B;
    double *blk = calloc((size_t)nblk + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        if (det[i].doppler_bin / B < nblk) blk[det[i].doppler_bin / B] += 1;
    double bm = 0, bv = 0;
    for (int b = 0; b < nblk; b++) bm += blk[b] / nblk;
    for (int b = 0; b < nblk; b++) bv += (blk[b] - bm) * (blk[b] - bm) / (nblk - 1);
    free(blk);
    free(det);
    free(y);
    const double sd_bin = sqrt(cells * pfa * (1 - pfa)), sd_emp = sqrt(bv * (double)lines / B);
    double expect = pfa * cells, sd = fmax(sd_bin, sd_emp), z = (total - expect) / sd;
    char desc[128];
    stap_cfar_describe(&c, desc, sizeof desc);
    fprintf(stderr, "  noise, %s, lines of %d: %zu false alarms in %zu cells, expected %.1f "
            "+- %.1f (binomial %.1f; z = %.2f)\n", desc, R, total, cells, expect, sd, sd_bin, z);
    CHECK(fabs(z) < 4, "%s: false-alarm count %zu, expected %.1f +- %.1f", desc, total, expect, sd);
    return z;
}

/* A Ward scene through a plan; y: B x D x R output. */
static int ward_output(const scene_truth *tr, stap_plan *plan, stap_cf32 *y, stap_error *err)
{
    const scene_config *c = &tr->cfg;
    stap_cf32 *cube = malloc(sizeof(stap_cf32) * (size_t)c->channels * c->pulses * c->range_gates);
    stap_cf32 *W = malloc(sizeof(stap_cf32) * stap_weights_len(plan));
    int st = stap_scene_generate(tr, cube, err);
    if (!st) st = stap_plan_execute(plan, cube, W, y, NULL, err);
    free(cube);
    free(W);
    return st;
}

static void test_scene_false_alarms(tc_rng *rng)
{
    scene_config sc;
    stap_scene_preset_config(SCENE_PRESET_WARD, &sc);
    scene_truth tr;
    stap_error err;
    stap_scene_truth_build(&sc, &tr, &err);
    stap_config cfg;
    stap_config_defaults(&cfg);
    cfg.channels = sc.channels;
    cfg.pulses = sc.pulses;
    cfg.range_gates = sc.range_gates;
    cfg.doppler_order = 1;
    cfg.segments = 1;
    cfg.training = sc.range_gates; /* every cell trains: exchangeable output */
    cfg.beams = 1;   /* broadside; beams of one CPI share their data and alarm together */
    cfg.backend = STAP_BACKEND_CPU;
    stap_plan *plan;
    if (stap_plan_create(&plan, &cfg, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    const stap_config *pc = stap_plan_config(plan);
    enum { trials = 400 };
    const int B = 1, D = pc->doppler_bins, R = pc->range_gates;
    stap_cf32 *y = malloc(sizeof(stap_cf32) * stap_output_len(plan));
    static const stap_cfar_kind kinds[] = {STAP_CFAR_CA, STAP_CFAR_OS, STAP_CFAR_GO, STAP_CFAR_SO};
    enum { NK = sizeof kinds / sizeof *kinds };
    size_t count[NK] = {0}, per_trial[NK][trials];
    const double pfa = 1e-3;
    for (int t = 0; t < trials; t++) {
        tr.cfg.seed = (uint64_t)(tc_uniform(rng) * 1e15);
        if (ward_output(&tr, plan, y, &err)) {
            CHECK(0, "scene: %s", err.msg);
            break;
        }
        for (int k = 0; k < NK; k++) {
            stap_cfar_config c = config(kinds[k], pfa, 2, 16, 0);
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
    for (int k = 0; k < NK; k++) {
        /* the Doppler bins of one CPI are not independent either: the standard error is
         * the larger of the binomial one and the one from the spread over the trials */
        double m = (double)count[k] / trials, v = 0;
        for (int t = 0; t < trials; t++) v += (per_trial[k][t] - m) * (per_trial[k][t] - m);
        double sd_trials = sqrt(v / (trials - 1) * trials), se = fmax(sd, sd_trials);
        double z = (count[k] - expect) / se;
        fprintf(stderr, "  target-free Ward scenes, %s-CFAR pfa %g: %zu false alarms in %zu "
                "cells, expected %.1f +- %.1f (binomial) / %.1f (spread over trials), "
                "z = %.2f\n", stap_cfar_kind_name(kinds[k]), pfa, count[k], cells, expect, sd,
                sd_trials, z);
        CHECK(fabs(z) < 4, "%s-CFAR on scene output: %zu false alarms, expected %.1f +- %.1f",
              stap_cfar_kind_name(kinds[k]), count[k], expect, se);
    }
    free(y);
    stap_plan_destroy(plan);
    stap_scene_truth_free(&tr);
}

static void test_targets(tc_rng *rng)
{
    scene_config sc;
    stap_scene_preset_config(SCENE_PRESET_WARD, &sc);
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
    cfg.backend = STAP_BACKEND_CPU;
    stap_plan *plan;
    stap_error err;
    if (stap_plan_create(&plan, &cfg, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    cfg = *stap_plan_config(plan);
    const int D = cfg.doppler_bins, R = cfg.range_gates;
    /* the optimum loss per (bin, beam) from the target-free truth */
    scene_truth tr0;
    stap_scene_truth_build(&sc, &tr0, &err);
    stap_cf32 *W = calloc(stap_weights_len(plan), sizeof(stap_cf32));
    stap_sinr_result lo;
    if (stap_sinr_compute(&tr0, &cfg, stap_plan_steering(plan), B, W, -1, &lo, &err)) {
        CHECK(0, "sinr: %s", err.msg);
        return;
    }
    const double rho = (double)(cfg.training + 2 - N) / (cfg.training + 1);
    const stap_cfar_config cc = config(STAP_CFAR_CA, 1e-4, 2, 16, 0);
    stap_cf32 *y = malloc(sizeof(stap_cf32) * stap_output_len(plan));
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
            s.targets[k] = (scene_target){r, u, f, snr, 0};
            tb[k] = b;
            td[k] = d;
        }
        scene_truth tr;
        stap_scene_truth_build(&s, &tr, &err);
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
        stap_scene_truth_free(&tr);
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
    stap_scene_truth_free(&tr0);
    stap_plan_destroy(plan);
}

static void test_validation(void)
{
    stap_cfar_config c;
    stap_error err;
    stap_cfar_kind k;
    stap_cfar_defaults(&c);
    CHECK(c.kind == STAP_CFAR_CA && c.pfa == 1e-6 && c.guard == 2 && c.train == 16 &&
              c.os_rank == 0 && c.guard_doppler == 1 && c.train_doppler == 2,
          "defaults");
    static const char *names[] = {"none", "ca", "os", "go", "so", "ca2d"};
    for (int i = 0; i < 6; i++)
        CHECK(stap_cfar_parse_kind(names[i], &k, &err) == STAP_OK && (int)k == i &&
                  !strcmp(stap_cfar_kind_name(k), names[i]),
              "parse %s", names[i]);
    /* names in any case (issue 33); others refused, naming the kinds */
    CHECK(stap_cfar_parse_kind("CA", &k, &err) == STAP_OK && k == STAP_CFAR_CA, "parse CA: %s", err.msg);
    CHECK(stap_cfar_parse_kind("gO", &k, &err) == STAP_OK && k == STAP_CFAR_GO, "parse gO: %s", err.msg);
    CHECK(stap_cfar_parse_kind("cx", &k, &err) == STAP_EINVAL &&
              strstr(err.msg, "expected none, ca, os, go, so or ca2d"),
          "parse cx: %s", err.msg);
    CHECK(stap_cfar_validate(&c, 1, 37, &err) == STAP_OK, "R = 37 is enough for guard 2, train 16");
    CHECK(stap_cfar_validate(&c, 1, 36, &err) == STAP_EINVAL && strstr(err.msg, "range gates"),
          "R = 36 accepted");
    c.pfa = 1;
    CHECK(stap_cfar_validate(&c, 1, 100, &err) == STAP_EINVAL &&
              strstr(err.msg, "stap_cfar_config.pfa"),
          "pfa 1 accepted");
    stap_cfar_defaults(&c);
    c.kind = (stap_cfar_kind)(STAP_CFAR_ACE + 1);
    CHECK(stap_cfar_validate(&c, 1, 100, &err) == STAP_EINVAL &&
              strstr(err.msg, "stap_cfar_config.kind 9"),
          "kind 9 accepted");
    c.kind = STAP_CFAR_OS;
    c.os_rank = 33;
    CHECK(stap_cfar_validate(&c, 1, 100, &err) == STAP_EINVAL &&
              strstr(err.msg, "stap_cfar_config.os_rank"),
          "rank 33 of 32 accepted");
    c.os_rank = 0;
    char buf[128];
    stap_cfar_describe(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "os pfa=1e-06 guard=2 train=16 rank=24"), "describe: '%s'", buf);
    /* GO/SO: the range window only; the Doppler fields are not theirs to check */
    c.kind = STAP_CFAR_GO;
    c.guard_doppler = -1;
    CHECK(stap_cfar_validate(&c, 1, 37, &err) == STAP_OK, "GO checked guard_doppler");
    CHECK(stap_cfar_validate(&c, 1, 36, &err) == STAP_EINVAL && strstr(err.msg, "range gates"),
          "GO: R = 36 accepted");
    stap_cfar_describe(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "go pfa=1e-06 guard=2 train=16"), "describe: '%s'", buf);
    c.kind = STAP_CFAR_SO;
    stap_cfar_describe(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "so pfa=1e-06 guard=2 train=16"), "describe: '%s'", buf);
    CHECK(stap_cfar_table_len(&c) == 33, "SO table length %zu", stap_cfar_table_len(&c));
    /* CA2D: the Doppler window against the bins, its fields, the rectangle's size */
    stap_cfar_defaults(&c);
    c.kind = STAP_CFAR_CA2D;
    stap_cfar_describe(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "ca2d pfa=1e-06 guard=2 train=16 guard_doppler=1 train_doppler=2"),
          "describe: '%s'", buf);
    CHECK(stap_cfar_validate(&c, 7, 37, &err) == STAP_OK, "D = 7 is enough for 1 + 2 bins");
    CHECK(stap_cfar_validate(&c, 6, 37, &err) == STAP_EINVAL &&
              strstr(err.msg, "(2 x (stap_cfar_config.guard_doppler 1 + "
                              "stap_cfar_config.train_doppler 2) + 1 = 7 bins) is longer than "
                              "the 6 Doppler bins"),
          "D = 6 accepted: %s", err.msg);
    CHECK(stap_cfar_validate(&c, 7, 36, &err) == STAP_EINVAL && strstr(err.msg, "range gates"),
          "CA2D: R = 36 accepted");
    c.guard_doppler = -1;
    CHECK(stap_cfar_validate(&c, 100, 100, &err) == STAP_EINVAL &&
              strstr(err.msg, "stap_cfar_config.guard_doppler -1 must be between 0 and 64"),
          "guard_doppler -1: %s", err.msg);
    c.guard_doppler = 0;
    c.train_doppler = 65;
    CHECK(stap_cfar_validate(&c, 1000, 100, &err) == STAP_EINVAL &&
              strstr(err.msg, "stap_cfar_config.train_doppler 65 must be between 0 and 64"),
          "train_doppler 65: %s", err.msg);
    c.train_doppler = 0; /* a one-bin rectangle is CA along range */
    CHECK(stap_cfar_validate(&c, 1, 37, &err) == STAP_OK, "CA2D with one bin: %s", err.msg);
    c.train_doppler = 64;
    c.guard = 300; /* 2 x 64 x 633 + 2 x 16 x 1 = 81056 cells */
    CHECK(stap_cfar_validate(&c, 1000, 1000, &err) == STAP_EINVAL &&
              strstr(err.msg, "= 81056 training cells, more than 65536"),
          "a 2-D window of 81056 cells accepted: %s", err.msg);
    c.guard = 2;
    CHECK(stap_cfar_table_len(&c) == (size_t)(2 * 64 * 37 + 2 * 16 + 1), "CA2D table length %zu",
          stap_cfar_table_len(&c));
    c.kind = STAP_CFAR_NONE;
    stap_detection *det = (stap_detection *)&c;
    size_t n = 7;
    stap_cf32 y[40] = {0};
    CHECK(stap_cfar_detect(&c, y, 1, 1, 40, &det, &n, &err) == STAP_OK && n == 0 && !det,
          "kind none must detect nothing");
}

int main(void)
{
    uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    test_validation();
    test_tables();
    test_reference(&rng);
    test_monte_carlo();
    pfa_noise(&rng, STAP_CFAR_CA, 1e-3, 2, 16, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_OS, 1e-3, 2, 16, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_OS, 1e-3, 0, 12, 5, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_GO, 1e-3, 2, 16, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_SO, 1e-3, 0, 4, 0, 400, 1000);
    pfa_noise(&rng, STAP_CFAR_CA2D, 1e-3, 1, 8, 0, 400, 1000);
    /* mostly edge windows */
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++)
        pfa_noise(&rng, (stap_cfar_kind)kind, 1e-2, 1, 6, 0, 4000, 15);
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
