/* config.c: pipeline configuration — presets (the RT_STAP benchmark sizes), defaults,
 * validation, Doppler windows and the default steering vectors (contract step 6). */
#include "stap.h"

#include "algorithm.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *const stap_stage_names[STAP_STAGE_COUNT] = {
    "copy_in", "doppler", "training", "qr", "weights", "apply", "detect", "copy_out"};

/* The batched complex QR table of the RT_STAP reference paper (docs/processing.md "Presets"). */
static const struct {
    const char *name;
    int C, P, R, D, Q, S, K, B;
} presets[STAP_PRESET_COUNT] = {
    {"easy", 16, 128, 480, 128, 1, 3, 80, 16},
    {"medium", 32, 128, 384, 128, 3, 1, 192, 16},
    {"hard", 22, 128, 480, 128, 3, 1, 240, 16},
};

int stap_preset_parse(const char *name, stap_preset *out, stap_error *err)
{
    for (int p = 0; p < STAP_PRESET_COUNT; p++)
        if (name && strcasecmp(name, presets[p].name) == 0) {
            *out = (stap_preset)p;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown preset '%s' (expected easy, medium or hard)",
                     name ? name : "");
}

const char *stap_preset_name(stap_preset p)
{
    return (p >= 0 && p < STAP_PRESET_COUNT) ? presets[p].name : "invalid";
}

void stap_config_defaults(stap_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->doppler_order = 1;
    cfg->segments = 1;
    cfg->beams = 1;
    cfg->loading = 0.0;
    cfg->window = STAP_WINDOW_NONE;
    cfg->chebyshev_db = 60.0;
    cfg->element_spacing = 0.5;
    cfg->backend = STAP_BACKEND_AUTO;
    cfg->threads = 0;
    cfg->training_window = STAP_TRAINING_SEGMENT;
    cfg->block = 1;
    cfg->guard = 2;
}

const char *stap_training_window_name(stap_training_window w)
{
    return w == STAP_TRAINING_SLIDING ? "sliding" : w == STAP_TRAINING_SEGMENT ? "segment"
                                                                                : "invalid";
}

int stap_training_window_parse(const char *name, stap_training_window *out, stap_error *err)
{
    if (name && strcasecmp(name, "segment") == 0) *out = STAP_TRAINING_SEGMENT;
    else if (name && strcasecmp(name, "sliding") == 0) *out = STAP_TRAINING_SLIDING;
    else
        return stap_fail(err, STAP_EINVAL, "training window '%s': expected segment or sliding",
                         name ? name : "");
    return STAP_OK;
}

/* Sliding block s: the cells left of it beyond its guard, [0, lo), and right of it,
 * [hi, R); the K nearest, half on each side where both sides have them. */
static void sliding_sides(const stap_config *c, int s, int *lo, int *hi, int *kl, int *kr)
{
    const int R = c->range_gates, Lb = c->block, G = c->guard, K = c->training;
    const long long l = (long long)s * Lb - G, h = (long long)(s + 1) * Lb + G;
    *lo = l > 0 ? (int)l : 0;
    *hi = h < R ? (int)h : R;
    int a = *lo, b = R - *hi; /* cells available on each side */
    int left = K / 2, right = K - left;
    if (left > a) {
        left = a;
        right = K - a;
    }
    if (right > b) {
        right = b;
        left = K - b;
    }
    *kl = left;
    *kr = right;
}

void stap_training_cells(const stap_config *c, int s, int *cells)
{
    const int K = c->training;
    if (c->training_window == STAP_TRAINING_SLIDING) {
        int lo, hi, kl, kr;
        sliding_sides(c, s, &lo, &hi, &kl, &kr);
        for (int i = 0; i < kl; i++) cells[i] = lo - kl + i;
        for (int i = 0; i < kr; i++) cells[kl + i] = hi + i;
        return;
    }
    const int L = c->range_gates / c->segments;
    for (int i = 0; i < K; i++) cells[i] = s * L + (int)((long long)i * L / K);
}

void stap_preset_config(stap_preset p, stap_config *cfg)
{
    cfg->channels = presets[p].C;
    cfg->pulses = presets[p].P;
    cfg->range_gates = presets[p].R;
    cfg->doppler_bins = presets[p].D;
    cfg->doppler_order = presets[p].Q;
    cfg->segments = presets[p].S;
    cfg->training = presets[p].K;
    cfg->beams = presets[p].B;
}

int stap_config_validate(stap_config *c, int have_steering, int steering_beams,
                         int steering_len, stap_error *err)
{
    int st;
    if (c->channels < 1 || c->pulses < 1 || c->range_gates < 1)
        return stap_fail(err, STAP_EINVAL, "cube shape %d x %d x %d has a zero dimension",
                         c->channels, c->pulses, c->range_gates);
    if (c->doppler_bins == 0) c->doppler_bins = c->pulses;
    if (c->doppler_bins < c->pulses)
        return stap_fail(err, STAP_EINVAL,
                         "stap_config.doppler_bins %d is smaller than the %d pulses",
                         c->doppler_bins, c->pulses);
    /* zero padding beyond 8 x P only interpolates the spectrum further; the GPU kernels
     * take at most 65535 bins */
    if (c->doppler_bins > 8 * c->pulses || c->doppler_bins > 65535)
        return stap_fail(err, STAP_EINVAL, "stap_config.doppler_bins %d: at most 8 x the %d "
                         "pulses (and 65535)", c->doppler_bins, c->pulses);
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (c->threads < 0 || (cpus > 0 && c->threads > 4 * cpus))
        return stap_fail(err, STAP_EINVAL, "stap_config.threads %d: at most 4 x the %ld CPUs",
                         c->threads, cpus);
    const stap_algo *al = stap_algo_of(c);
    if (al && (al->info.traits & STAP_TRAIT_SUBCPI)) {
        /* the taps are the pulses of a sub-CPI: any count up to P (a canceller: 2 or 3) */
        if (al->info.taps_max &&
            (c->doppler_order < al->info.taps_min || c->doppler_order > al->info.taps_max))
            return stap_fail(err, STAP_EINVAL, STAP_SUBCPI_PARAM " %d: %s cancels over %d "
                             "or %d pulses", c->doppler_order, al->info.label, al->info.taps_min,
                             al->info.taps_max);
        if (al->validate && (st = al->validate(c, err))) return st;
        if (c->doppler_order < 1 || c->doppler_order > c->pulses)
            return stap_fail(err, STAP_EINVAL, STAP_SUBCPI_PARAM " %d: a sub-CPI has 1 to "
                             "the %d pulses", c->doppler_order, c->pulses);
    } else {
        if (c->doppler_order < 1 || c->doppler_order % 2 == 0)
            return stap_fail(err, STAP_EINVAL, "stap_config.doppler_order %d must be odd and >= 1",
                             c->doppler_order);
        if (c->doppler_order > c->doppler_bins)
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.doppler_order %d exceeds the %d Doppler bins",
                             c->doppler_order, c->doppler_bins);
    }
    if (!al)
        return stap_fail(err, STAP_EINVAL, "stap_config.algorithm %d is not an algorithm",
                         (int)c->algorithm);
    if (!(al->info.traits & STAP_TRAIT_SUBCPI) && al->validate && (st = al->validate(c, err)))
        return st;
    const int N = stap_dof(c), Nt = stap_adaptive_dof(c);
    /* a fixed canceller (DPCA) trains nothing: its training is not checked (a result file
     * records it as 0) */
    const int trains = !(al->info.traits & STAP_TRAIT_FIXED);
    if (c->training_window == STAP_TRAINING_SLIDING) {
        if (c->block == 0) c->block = 1;
        if (c->block < 1 || c->range_gates % c->block != 0)
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.block %d must divide the %d range gates", c->block,
                             c->range_gates);
        if (c->guard < 0 || c->guard > c->range_gates)
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.guard %d must be between 0 and the %d range gates",
                             c->guard, c->range_gates);
        c->segments = c->range_gates / c->block;
        /* the block whose guards leave the fewest cells outside: an inner one when any */
        int fewest = c->range_gates, at = 0;
        for (int s = 0; s < c->segments; s++) {
            int lo, hi, kl, kr;
            sliding_sides(c, s, &lo, &hi, &kl, &kr);
            const int out = lo + (c->range_gates - hi);
            if (out < fewest) {
                fewest = out;
                at = s;
            }
        }
        if (trains && (c->training < 1 || c->training > fewest))
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.training %d must be between 1 and the %d range cells "
                             "outside block %d (cells %d..%d) and its %d guard cells on each "
                             "side", c->training, fewest, at, at * c->block,
                             (at + 1) * c->block - 1, c->guard);
    } else if (c->training_window != STAP_TRAINING_SEGMENT) {
        return stap_fail(err, STAP_EINVAL, "stap_config.training_window %d is not a training window",
                         (int)c->training_window);
    } else {
        if (c->segments < 1 || c->range_gates % c->segments != 0)
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.segments %d must divide the %d range gates",
                             c->segments, c->range_gates);
        int L = c->range_gates / c->segments;
        if (trains && (c->training < 1 || c->training > L))
            return stap_fail(err, STAP_EINVAL,
                             "stap_config.training %d must be between 1 and the %d range cells "
                             "of a segment", c->training, L);
    }
    if (c->qr < 0 || c->qr >= STAP_QR_COUNT)
        return stap_fail(err, STAP_EINVAL, "stap_config.qr %d is not a QR factor", (int)c->qr);
    if ((c->qr == STAP_QR_CHOLQR2 || c->qr == STAP_QR_CHOLQR) && c->backend != STAP_BACKEND_CPU &&
        c->backend != STAP_BACKEND_GPU && c->backend != STAP_BACKEND_AUTO)
        return stap_fail(err, STAP_EUNSUPPORTED,
                         "stap_config.qr %s runs on the cpu and gpu backends only (backend %s factors by "
                         "Householder)", stap_qr_method_name(c->qr), stap_backend_name(c->backend));
    if (!(c->loading >= 0.0) || !isfinite(c->loading))
        return stap_fail(err, STAP_EINVAL, "stap_config.loading must be a finite number >= 0");
    if (c->training < Nt && c->loading == 0.0 && trains)
        return stap_fail(err, STAP_EINVAL,
                         "stap_config.training %d is smaller than the N = %d degrees of freedom "
                         "(%s): the training matrix is rank-deficient; "
                         "use stap_config.training >= %d or stap_config.loading > 0",
                         c->training, Nt, al->info.dof, Nt);
    if (c->window == STAP_WINDOW_HANN && stap_window_len(c) < 3) /* 0.5 - 0.5 cos: all zero */
        return stap_fail(err, STAP_EINVAL, "stap_config.window: a Hann window of %d points is all "
                         "zeros (it needs 3 or more)", stap_window_len(c));
    if (c->window == STAP_WINDOW_CHEBYSHEV && !(c->chebyshev_db > 0 && c->chebyshev_db < 400))
        return stap_fail(err, STAP_EINVAL,
                         "stap_config.chebyshev_db %g: the Chebyshev window needs 0 < DB < 400",
                         c->chebyshev_db);
    if (!(c->element_spacing > 0) || !isfinite(c->element_spacing))
        return stap_fail(err, STAP_EINVAL, "stap_config.element_spacing must be > 0 wavelengths");
    if (have_steering) {
        if (steering_len != N)
            return stap_fail(err, STAP_EINVAL,
                             "/steering has vectors of length %d; expected channels x Doppler "
                             "order = %d x %d = %d",
                             steering_len, c->channels, c->doppler_order, N);
        if (steering_beams < 1) return stap_fail(err, STAP_EINVAL, "/steering holds no vectors");
        if (steering_beams > 4096) /* the cap of stap_config.beams: outputs grow with them */
            return stap_fail(err, STAP_EINVAL, "/steering holds %d vectors; at most 4096 beams",
                             steering_beams);
        c->beams = steering_beams;
    } else if (c->beams < 1 || c->beams > 4096) {
        return stap_fail(err, STAP_EINVAL, "stap_config.beams %d must be between 1 and 4096",
                         c->beams);
    }
    /* Sizes that would not fit in memory are refused before anything is allocated. */
    /* (the sub-CPI algorithms keep Q staggered Doppler cubes) */
    double doppler_bytes = 8.0 * c->channels * c->doppler_bins * c->range_gates *
                           (stap_is_subcpi(c) ? c->doppler_order : 1);
    double train_bytes = 8.0 * (double)stap_training_matrices(c) * stap_training_rows(c) * Nt;
    double out_bytes = 8.0 * c->beams * c->doppler_bins * c->range_gates;
    if (doppler_bytes + train_bytes + out_bytes > 16e9)
        return stap_fail(err, STAP_EINVAL, "the configuration needs %.1f GB of working memory "
                         "(over the 16 GB limit)", (doppler_bytes + train_bytes + out_bytes) / 1e9);
    return STAP_OK;
}

/* Dolph–Chebyshev window (as in scipy.signal.windows.chebwin): the window is the
 * inverse DFT of the Chebyshev polynomial T_{M-1}(beta cos(pi k / M)), normalized to a
 * peak of 1, which puts every sidelobe of its transform at -at_db. */
static void chebyshev_window(int M, double at_db, double *w)
{
    if (M == 1) {
        w[0] = 1.0;
        return;
    }
    int order = M - 1;
    double beta = cosh(acosh(pow(10.0, at_db / 20.0)) / order);
    double *p = malloc(sizeof(double) * M);
    for (int k = 0; k < M; k++) {
        double x = beta * cos(M_PI * k / M);
        if (x > 1) p[k] = cosh(order * acosh(x));
        else if (x < -1) p[k] = (2 * (M % 2) - 1) * cosh(order * acosh(-x));
        else p[k] = cos(order * acos(x));
    }
    /* real part of the DFT of p (times a half-sample shift for even M) */
    double *f = malloc(sizeof(double) * M);
    for (int n = 0; n < M; n++) {
        double acc = 0;
        for (int k = 0; k < M; k++) {
            double ph = -2.0 * M_PI * (double)k * n / M;
            if (M % 2 == 0) ph += M_PI * k / M;
            acc += p[k] * cos(ph);
        }
        f[n] = acc;
    }
    if (M % 2) {
        int n = (M + 1) / 2; /* w = [f[n-1..1], f[0..n-1]] */
        int o = 0;
        for (int i = n - 1; i >= 1; i--) w[o++] = f[i];
        for (int i = 0; i < n; i++) w[o++] = f[i];
    } else {
        int n = M / 2 + 1; /* w = [f[n-1..1], f[1..n-1]] */
        int o = 0;
        for (int i = n - 1; i >= 1; i--) w[o++] = f[i];
        for (int i = 1; i < n; i++) w[o++] = f[i];
    }
    double mx = 0;
    for (int i = 0; i < M; i++) mx = fmax(mx, w[i]);
    for (int i = 0; i < M; i++) w[i] /= mx;
    free(p);
    free(f);
}

int stap_window(const stap_config *cfg, float *win, stap_error *err)
{
    int P = stap_window_len(cfg);
    switch (cfg->window) {
    case STAP_WINDOW_NONE:
        for (int p = 0; p < P; p++) win[p] = 1.0f;
        return STAP_OK;
    case STAP_WINDOW_HANN:
        for (int p = 0; p < P; p++)
            win[p] = P == 1 ? 1.0f : (float)(0.5 - 0.5 * cos(2.0 * M_PI * p / (P - 1)));
        return STAP_OK;
    case STAP_WINDOW_CHEBYSHEV: {
        double *w = malloc(sizeof(double) * P);
        if (!w) return stap_fail(err, STAP_ENOMEM, "out of memory for the window");
        chebyshev_window(P, cfg->chebyshev_db, w);
        for (int p = 0; p < P; p++) win[p] = (float)w[p];
        free(w);
        return STAP_OK;
    }
    }
    return stap_fail(err, STAP_EINVAL, "unknown window kind %d", (int)cfg->window);
}

double stap_beam_u(int b, int B) { return -1.0 + (2.0 * b + 1.0) / B; }

void stap_default_steering(const stap_config *cfg, stap_cf32 *V)
{
    int B = cfg->beams, C = cfg->channels, Q = cfg->doppler_order, N = C * Q;
    const stap_algo *al = stap_algo_of(cfg);
    for (int b = 0; b < B; b++) {
        double u = stap_beam_u(b, B);
        for (int j = 0; j < N; j++) V[(size_t)b * N + j] = 0;
        for (int c = 0; c < C; c++) {
            double ph = 2.0 * M_PI * cfg->element_spacing * c * u;
            const stap_cf32 a = (float)cos(ph) + I * (float)sin(ph);
            for (int q = 0; q < Q; q++) {
                const float h = al ? al->steering_tap(Q, q) : q == (Q - 1) / 2;
                if (h != 0) V[(size_t)b * N + c * Q + q] = h * a;
            }
        }
    }
}

double stap_look_direction(const stap_cf32 *v, int C, int Q, double spacing)
{
    double best = -1, ub = 0;
    for (int k = 0; k <= 4000; k++) {
        double u = -1 + 2.0 * k / 4000;
        double complex s = 0;
        for (int c = 0; c < C; c++)
            s += conj(cexp(2 * M_PI * I * spacing * c * u)) * v[c * Q + (Q - 1) / 2];
        if (cabs(s) > best) {
            best = cabs(s);
            ub = u;
        }
    }
    return ub;
}
