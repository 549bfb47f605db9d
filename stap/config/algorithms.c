/* algorithms.c: the STAP algorithms, one descriptor each (algorithm.h) — post-Doppler
 * (factored / EFA), JDL, pre-Doppler, ADPCA and DPCA: what each is, how a configuration of it
 * is checked, sized and labelled, its default and per-bin steering, and the mathematics only
 * one of them uses (JDL's beamspace transforms, the sub-CPI steering, DPCA's fixed weights).
 * Below the configuration (config.c reads it) and the engine (its stages, stap/engine/
 * algorithm_stages.c, are chosen by the traits declared here). Adding an algorithm means adding
 * its descriptor here, its GPU hooks in stap/engine/algorithms_gpu.cu and its enum value in
 * stap.h; nothing else names one. */
#include "algorithm.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the mathematics of one algorithm each --------------------------------------------- */

void stap_dpca_weights(const stap_config *cfg, const stap_cf32 *v, stap_cf32 *w)
{
    const int C = cfg->channels, Q = cfg->doppler_order, sh = cfg->dpca_shift;
    const int span = (Q - 1) * abs(sh), Cs = C - span, c0 = sh < 0 ? span : 0;
    for (int j = 0; j < C * Q; j++) w[j] = 0;
    for (int c = c0; c < c0 + Cs; c++)
        for (int q = 0; q < Q; q++) w[(c + (Q - 1 - q) * sh) * Q + q] = v[c * Q + q] / (float)Cs;
}

/* pre-Doppler: bin d's steering s[c*Q + q] = v[c*Q + q] exp(2 pi i d q / D) */
static void predoppler_bin_steering(const stap_config *cfg, const stap_cf32 *v, int d, double *s)
{
    const int C = cfg->channels, Q = cfg->doppler_order, D = cfg->doppler_bins;
    for (int c = 0; c < C; c++)
        for (int q = 0; q < Q; q++) {
            const int j = c * Q + q;
            /* exp(2 pi i d q / D), the phase reduced exactly first */
            const double ph = 2.0 * M_PI * (double)(((long long)d * q) % D) / D;
            const double cr = cos(ph), ci = sin(ph), vr = crealf(v[j]), vi = cimagf(v[j]);
            s[2 * j] = vr * cr - vi * ci;
            s[2 * j + 1] = vr * ci + vi * cr;
        }
}

void stap_subcpi_steering(const stap_config *cfg, const stap_cf32 *v, int d, double *s)
{
    const stap_algo *a = stap_algo_of(cfg);
    if (a && a->bin_steering) {
        a->bin_steering(cfg, v, d, s);
        return;
    }
    for (int j = 0; j < cfg->channels * cfg->doppler_order; j++) { /* every bin steers v */
        s[2 * j] = crealf(v[j]);
        s[2 * j + 1] = cimagf(v[j]);
    }
}

int stap_jdl_beams(const stap_config *cfg, const stap_cf32 *v, double *A, stap_error *err)
{
    const int C = cfg->channels, Q = cfg->doppler_order, Na = cfg->angle_bins;
    double norm = 0;
    for (int c = 0; c < C; c++) {
        const stap_cf32 x = v[c * Q + (Q - 1) / 2];
        norm += (double)crealf(x) * crealf(x) + (double)cimagf(x) * cimagf(x);
    }
    if (!(norm > 0) || !isfinite(norm))
        return stap_fail(err, STAP_EINVAL, "JDL: the steering vector's centre tap (entries c*Q + "
                         "%d) is zero or not finite: it gives no look direction", (Q - 1) / 2);
    norm = sqrt(norm);
    for (int j = 0; j < Na; j++) {
        const double shift = (double)(j - (Na - 1) / 2) / C; /* cycles per element */
        for (int c = 0; c < C; c++) {
            const stap_cf32 x = v[c * Q + (Q - 1) / 2];
            const double ph = 2.0 * M_PI * shift * c, cr = cos(ph), ci = sin(ph);
            const double xr = crealf(x) / norm, xi = cimagf(x) / norm;
            A[2 * ((size_t)j * C + c)] = xr * cr - xi * ci;
            A[2 * ((size_t)j * C + c) + 1] = xr * ci + xi * cr;
        }
    }
    return STAP_OK;
}

/* ---- checks, sizes, labels, default steering ------------------------------------------ */

static int jdl_validate(stap_config *c, stap_error *err)
{
    if (c->angle_bins == 0) c->angle_bins = c->channels < 3 ? 1 : 3;
    if (c->angle_bins < 1 || c->angle_bins % 2 == 0 || c->angle_bins > c->channels)
        return stap_fail(err, STAP_EINVAL, "stap_config.angle_bins %d must be odd and between "
                         "1 and the %d channels", c->angle_bins, c->channels);
    return STAP_OK;
}

static int dpca_validate(stap_config *c, stap_error *err)
{
    if (c->dpca_shift == 0) c->dpca_shift = 1;
    if (c->dpca_shift > INT_MAX / 4 || c->dpca_shift < -INT_MAX / 4 ||
        (c->doppler_order - 1) * abs(c->dpca_shift) >= c->channels)
        return stap_fail(err, STAP_EINVAL, "stap_config.dpca_shift %d: the %d pulses' "
                         "subarrays need (pulses - 1) x |shift| < the %d channels",
                         c->dpca_shift, c->doppler_order, c->channels);
    return STAP_OK;
}

static int jdl_adapted_dof(const stap_config *c) { return c->angle_bins * c->doppler_order; }

/* post-Doppler, JDL: the look direction on the centre tap */
static float centre_tap(int Q, int q) { return q == (Q - 1) / 2 ? 1.0f : 0.0f; }
/* pre-Doppler: every pulse of the sub-CPI */
static float flat_tap(int Q, int q) { return 1.0f; }
/* ADPCA, DPCA: the binomial canceller (1, -1) or (1, -2, 1) */
static float binomial_tap(int Q, int q)
{
    return (q % 2 ? -1.0f : 1.0f) * (Q == 3 && q == 1 ? 2.0f : 1.0f);
}

/* post-Doppler, JDL: a tone delta bins off bin d0 seen by the taps' bins d0 + q - (Q-1)/2 of
 * the windowed DFT (bin k holds exp(+2 pi i k p / D)): t_q = sum_p win[p] exp(2 pi i (delta -
 * q + (Q-1)/2) p / D) / sum_p win[p]; delta = 0 with no window and D = P gives the centre tap */
static void window_doppler_taps(const stap_config *c, const float *win, double delta, double *t)
{
    const int Q = c->doppler_order, D = c->doppler_bins > 0 ? c->doppler_bins : c->pulses;
    const int P = stap_window_len(c);
    double gain = 0;
    for (int p = 0; p < P; p++) gain += win[p];
    for (int q = 0; q < Q; q++) {
        const double f = (delta - (q - (Q - 1) / 2)) / D;
        double re = 0, im = 0;
        for (int p = 0; p < P; p++) {
            re += win[p] * cos(2.0 * M_PI * f * p);
            im += win[p] * sin(2.0 * M_PI * f * p);
        }
        t[2 * q] = re / gain;
        t[2 * q + 1] = im / gain;
    }
}
/* pre-Doppler: bin d0's steering is v exp(2 pi i d0 q / D) (predoppler_bin_steering); the
 * target's sub-CPI pulses add exp(2 pi i delta q / D) */
static void ramp_doppler_taps(const stap_config *c, const float *win, double delta, double *t)
{
    const int D = c->doppler_bins > 0 ? c->doppler_bins : c->pulses;
    (void)win;
    for (int q = 0; q < c->doppler_order; q++) {
        t[2 * q] = cos(2.0 * M_PI * delta * q / D);
        t[2 * q + 1] = sin(2.0 * M_PI * delta * q / D);
    }
}

static void jdl_label(const stap_config *c, char *buf, size_t len)
{
    snprintf(buf, len, " NA=%d", c->angle_bins);
}
static void subcpi_label(const stap_config *c, char *buf, size_t len)
{
    snprintf(buf, len, " M=%d", c->doppler_order);
}
static void dpca_label(const stap_config *c, char *buf, size_t len)
{
    snprintf(buf, len, " M=%d shift=%d", c->doppler_order, c->dpca_shift);
}

/* ---- the table ------------------------------------------------------------------------- */

static const stap_algo algorithms[] = {
    [STAP_ALGORITHM_POST_DOPPLER] = {
        .info = {"post-doppler", "post-Doppler", 0, 0, 0, 0, NULL, "channels x Doppler order"},
        .steering_tap = centre_tap,
        .doppler_taps = window_doppler_taps,
    },
    [STAP_ALGORITHM_JDL] = {
        .info = {"jdl", "JDL", STAP_TRAIT_BEAMSPACE, 0, 0, 0, "angle_bins",
                 "angle bins x Doppler order"},
        .validate = jdl_validate,
        .adapted_dof = jdl_adapted_dof,
        .steering_tap = centre_tap,
        .doppler_taps = window_doppler_taps,
        .label = jdl_label,
    },
    [STAP_ALGORITHM_PRE_DOPPLER] = {
        .info = {"pre-doppler", "pre-Doppler", STAP_TRAIT_SUBCPI | STAP_TRAIT_STEER_PER_BIN, 0,
                 0, 3, NULL, "channels x sub-CPI pulses"},
        .steering_tap = flat_tap,
        .bin_steering = predoppler_bin_steering,
        .doppler_taps = ramp_doppler_taps,
        .label = subcpi_label,
    },
    [STAP_ALGORITHM_ADPCA] = {
        .info = {"adpca", "ADPCA", STAP_TRAIT_SUBCPI, 2, 3, 2, NULL, "channels x sub-CPI pulses"},
        .steering_tap = binomial_tap,
        .label = subcpi_label,
    },
    [STAP_ALGORITHM_DPCA] = {
        .info = {"dpca", "DPCA", STAP_TRAIT_SUBCPI | STAP_TRAIT_FIXED, 2, 3, 2, "dpca_shift",
                 "channels x sub-CPI pulses"},
        .validate = dpca_validate,
        .steering_tap = binomial_tap,
        .fixed_weights = stap_dpca_weights,
        .label = dpca_label,
    },
};
enum { ALGORITHM_COUNT = (int)(sizeof algorithms / sizeof *algorithms) };

/* where each algorithm's own parameter lives in stap_config */
static int *param_field(stap_config *c, const char *name)
{
    if (!name) return NULL;
    if (!strcmp(name, "angle_bins")) return &c->angle_bins;
    if (!strcmp(name, "dpca_shift")) return &c->dpca_shift;
    return NULL;
}

/* ---- the public queries ---------------------------------------------------------------- */

const stap_algo *stap_algo_of(const stap_config *c)
{
    const int a = (int)c->algorithm;
    return a >= 0 && a < ALGORITHM_COUNT ? &algorithms[a] : NULL;
}

const stap_algorithm_info *stap_algorithm_info_of(stap_algorithm a)
{
    return (int)a >= 0 && (int)a < ALGORITHM_COUNT ? &algorithms[a].info : NULL;
}

unsigned stap_algorithm_traits(const stap_config *c)
{
    const stap_algo *a = stap_algo_of(c);
    return a ? a->info.traits : 0;
}

const char *stap_algorithm_name(stap_algorithm a)
{
    const stap_algorithm_info *i = stap_algorithm_info_of(a);
    return i ? i->name : "invalid";
}

int stap_algorithm_parse(const char *name, stap_algorithm *out, stap_error *err)
{
    for (int a = 0; name && a < ALGORITHM_COUNT; a++)
        if (strcasecmp(name, algorithms[a].info.name) == 0) {
            *out = (stap_algorithm)a;
            return STAP_OK;
        }
    char list[160] = "";
    size_t n = 0;
    for (int a = 0; a < ALGORITHM_COUNT && n < sizeof list; a++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                              a == 0 ? "" : a == ALGORITHM_COUNT - 1 ? " or " : ", ",
                              algorithms[a].info.name);
    return stap_fail(err, STAP_EINVAL, "algorithm '%s': expected %s", name ? name : "", list);
}

int stap_algorithm_of_label(const char *label, stap_algorithm *out, stap_error *err)
{
    char name[32];
    size_t n = label ? strcspn(label, " ,") : 0;
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, label ? label : "", n);
    name[n] = '\0';
    return stap_algorithm_parse(name, out, err);
}

const char *stap_algorithm_param(const stap_config *c, int *value)
{
    const stap_algo *a = stap_algo_of(c);
    if (!a || !a->info.param) return NULL;
    if (value) *value = *param_field((stap_config *)c, a->info.param);
    return a->info.param;
}

int stap_algorithm_set_param(stap_config *c, const char *name, int value, stap_error *err)
{
    const stap_algo *a = stap_algo_of(c);
    if (!a || !a->info.param || !name || strcmp(a->info.param, name))
        return stap_fail(err, STAP_EINVAL, "stap_config.%s does not apply to algorithm %s",
                         name ? name : "(null)", stap_algorithm_name(c->algorithm));
    *param_field(c, name) = value;
    return STAP_OK;
}

const char *stap_algorithm_label(const stap_config *c, char *buf, size_t len)
{
    const stap_algo *a = stap_algo_of(c);
    char own[64] = "";
    if (a && a->label) a->label(c, own, sizeof own);
    snprintf(buf, len, "%s%s", stap_algorithm_name(c->algorithm), own);
    return buf;
}

int stap_fixed_weights(const stap_config *cfg, const stap_cf32 *v, stap_cf32 *w, stap_error *err)
{
    const stap_algo *a = stap_algo_of(cfg);
    if (!a || !a->fixed_weights)
        return stap_fail(err, STAP_EINVAL, "algorithm %s adapts its weights: it has no fixed ones",
                         stap_algorithm_name(cfg->algorithm));
    a->fixed_weights(cfg, v, w);
    return STAP_OK;
}

int stap_adaptive_dof(const stap_config *c)
{
    const stap_algo *a = stap_algo_of(c);
    return a && a->adapted_dof ? a->adapted_dof(c) : stap_dof(c);
}

int stap_is_subcpi(const stap_config *c)
{
    return (stap_algorithm_traits(c) & STAP_TRAIT_SUBCPI) != 0;
}

long long stap_training_matrices(const stap_config *c)
{
    const unsigned t = stap_algorithm_traits(c);
    if (t & STAP_TRAIT_FIXED) return 0; /* fixed weights, nothing to train */
    if (t & STAP_TRAIT_SUBCPI) return c->segments;
    return (long long)c->doppler_bins * c->segments * (t & STAP_TRAIT_BEAMSPACE ? c->beams : 1);
}

int stap_window_len(const stap_config *c)
{
    return stap_is_subcpi(c) ? c->pulses - c->doppler_order + 1 : c->pulses;
}
