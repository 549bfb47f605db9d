/* algorithms.c: the STAP algorithms, one descriptor each (algorithm.h) — post-Doppler
 * (factored / EFA), JDL, pre-Doppler, ADPCA and DPCA — with the mathematics only one of
 * them uses (JDL's beamspace transforms, the sub-CPI steering, DPCA's fixed weights) and
 * their CPU stages: the training formers of contract steps 2-4 and the weight solves of
 * steps 5-7. Adding an algorithm means adding its descriptor here, its GPU hooks in
 * algorithms_gpu.cu and its enum value in stap.h; nothing else names one. */
#include "algorithm.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_internal.h"

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

/* ---- engine creation: the host tables ------------------------------------------------- */

/* JDL: each beam's transform A_b (stap_jdl_beams) and beamspace steering T_b^H v_b, the
 * latter in double before rounding. */
static int jdl_prepare(stap_engine *e, stap_error *err)
{
    const int C = e->cfg.channels, Q = e->cfg.doppler_order, Na = e->cfg.angle_bins;
    e->A = malloc(sizeof(stap_cf32) * (size_t)e->B * C * Na);
    e->Vt = malloc(sizeof(stap_cf32) * (size_t)e->B * e->Nt);
    double *a = malloc(sizeof(double) * 2 * (size_t)C * Na);
    if (!e->A || !e->Vt || !a) {
        free(a);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the JDL transforms");
    }
    for (int b = 0; b < e->B; b++) {
        const stap_cf32 *v = e->V + (size_t)b * e->N;
        int st = stap_jdl_beams(&e->cfg, v, a, err);
        if (st) {
            free(a);
            return stap_error_prefix(err, "beam %d", b);
        }
        for (int i = 0; i < C * Na; i++)
            e->A[(size_t)b * C * Na + i] = (float)a[2 * i] + I * (float)a[2 * i + 1];
        for (int j = 0; j < Na; j++)
            for (int q = 0; q < Q; q++) {
                double re = 0, im = 0; /* sum_c conj(A[j][c]) v[c*Q + q] */
                for (int c = 0; c < C; c++) {
                    const double ar = a[2 * ((size_t)j * C + c)], ai = a[2 * ((size_t)j * C + c) + 1];
                    const double vr = crealf(v[c * Q + q]), vi = cimagf(v[c * Q + q]);
                    re += ar * vr + ai * vi;
                    im += ar * vi - ai * vr;
                }
                e->Vt[(size_t)b * e->Nt + j * Q + q] = (float)re + I * (float)im;
            }
    }
    free(a);
    return STAP_OK;
}

/* Pre-Doppler, ADPCA: the steering vectors of the solves, bin-major when each bin steers
 * on its own (stap_subcpi_steering, in double before rounding); DPCA: the B fixed weights
 * themselves. */
static int subcpi_prepare(stap_engine *e, stap_error *err)
{
    const stap_algo *al = stap_algo_of(&e->cfg);
    const int N = e->N;
    const int nd = al->info.traits & STAP_TRAIT_STEER_PER_BIN ? e->cfg.doppler_bins : 1;
    e->nvs = nd * e->B;
    e->Vs = malloc(sizeof(stap_cf32) * (size_t)e->nvs * N);
    double *s = malloc(sizeof(double) * 2 * (size_t)N);
    if (!e->Vs || !s) {
        free(s);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the sub-CPI steering vectors");
    }
    if (al->fixed_weights) {
        for (int b = 0; b < e->B; b++) al->fixed_weights(&e->cfg, e->V + (size_t)b * N, e->Vs + (size_t)b * N);
        free(s);
        return STAP_OK;
    }
    for (int d = 0; d < nd; d++)
        for (int b = 0; b < e->B; b++) {
            stap_subcpi_steering(&e->cfg, e->V + (size_t)b * N, d, s);
            stap_cf32 *o = e->Vs + ((size_t)d * e->B + b) * N;
            for (int j = 0; j < N; j++) o[j] = (float)s[2 * j] + I * (float)s[2 * j + 1];
        }
    free(s);
    return STAP_OK;
}

/* ---- CPU stages ------------------------------------------------------------------------ */

/* Contract steps 2-4: T_k (M x N, column-major), k = d*S + s; row i = snapshot^H of
 * training cell i of segment (block) s, e->cells[s*K + i]; with loading, N more rows
 * sqrt(K*delta) I. */
static void training_doppler(const stap_engine *e, const stap_cf32 *X, const stap_cf32 *x, stap_cf32 *Tall,
                             int threads)
{
    const int C = e->cfg.channels, D = e->cfg.doppler_bins, Q = e->cfg.doppler_order;
    const int S = e->cfg.segments, K = e->cfg.training, M = e->M, N = e->N;
    const size_t R = e->cfg.range_gates;
    const float load = e->cfg.loading > 0 ? (float)sqrt(K * e->cfg.loading) : 0.0f;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < e->batch; k++) {
        int d = k / S, s = k % S;
        stap_cf32 *T = Tall + (size_t)k * M * N;
        const int *cell = e->cells + (size_t)s * K;
        for (int ch = 0; ch < C; ch++)
            for (int q = 0; q < Q; q++) {
                int j = ch * Q + q;
                const stap_cf32 *row = X + ((size_t)ch * D + stap_tap_bin(d, q, Q, D)) * R;
                stap_cf32 *col = T + (size_t)j * M;
                for (int i = 0; i < K; i++) col[i] = conjf(row[cell[i]]);
                if (M > K) {
                    memset(col + K, 0, sizeof(stap_cf32) * (size_t)N);
                    col[K + j] = load;
                }
            }
    }
}

/* JDL (contract steps 2-4 in beamspace): T_k (M x Nt), k = b*D*S + d*S + s; row i =
 * conj(z) of training cell i, z_{j*Q+q} = sum_c conj(A_b[j][c]) X[c, tap(d,q), cell]; with
 * loading, Nt more rows sqrt(K*delta) I. */
static void training_jdl(const stap_engine *e, const stap_cf32 *X, const stap_cf32 *x, stap_cf32 *Tall,
                         int threads)
{
    const int C = e->cfg.channels, D = e->cfg.doppler_bins, Q = e->cfg.doppler_order;
    const int S = e->cfg.segments, K = e->cfg.training, M = e->M, Nt = e->Nt;
    const int Na = e->cfg.angle_bins, DS = e->batch;
    const size_t R = e->cfg.range_gates;
    const float load = e->cfg.loading > 0 ? (float)sqrt(K * e->cfg.loading) : 0.0f;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < e->B * DS; k++) {
        const int b = k / DS, d = (k % DS) / S, s = k % S;
        const stap_cf32 *A = e->A + (size_t)b * C * Na;
        stap_cf32 *T = Tall + (size_t)k * M * Nt;
        const int *cell = e->cells + (size_t)s * K;
        memset(T, 0, sizeof(stap_cf32) * (size_t)M * Nt);
        for (int q = 0; q < Q; q++)
            for (int ch = 0; ch < C; ch++) {
                const stap_cf32 *row = X + ((size_t)ch * D + stap_tap_bin(d, q, Q, D)) * R;
                for (int j = 0; j < Na; j++) {
                    const stap_cf32 a = A[(size_t)j * C + ch]; /* conj(z) = sum_c A conj(x) */
                    stap_cf32 *col = T + (size_t)(j * Q + q) * M;
                    for (int i = 0; i < K; i++) col[i] += a * conjf(row[cell[i]]);
                }
            }
        if (M > K)
            for (int j = 0; j < Nt; j++) T[(size_t)j * M + K + j] = load;
    }
}

/* Sub-CPI training: T_s (M x N), row i = conj of the first sub-CPI of training cell i,
 * column c*Q + q = x[c, q, cell]; with loading, N more rows sqrt(K*delta) I. */
static void training_subcpi(const stap_engine *e, const stap_cf32 *X, const stap_cf32 *x, stap_cf32 *Tall,
                            int threads)
{
    const int P = e->cfg.pulses, Q = e->cfg.doppler_order;
    const int S = e->cfg.segments, K = e->cfg.training, M = e->M, N = e->N;
    const size_t R = e->cfg.range_gates;
    const float load = e->cfg.loading > 0 ? (float)sqrt(K * e->cfg.loading) : 0.0f;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int s = 0; s < S; s++) {
        stap_cf32 *T = Tall + (size_t)s * M * N;
        const int *cell = e->cells + (size_t)s * K;
        for (int j = 0; j < N; j++) {
            const stap_cf32 *row = x + ((size_t)(j / Q) * P + j % Q) * R;
            stap_cf32 *col = T + (size_t)j * M;
            for (int i = 0; i < K; i++) col[i] = conjf(row[cell[i]]);
            if (M > K) {
                memset(col + K, 0, sizeof(stap_cf32) * (size_t)N);
                col[K + j] = load;
            }
        }
    }
}

/* post-Doppler: one batch of D*S, every beam's steering vector */
static int weights_doppler(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                           stap_la_timing *lt, stap_error *err)
{
    return stap_la_adaptive_weights(la, e->M, e->N, e->batch, T, e->M, (ptrdiff_t)e->M * e->N, e->B,
                                    e->V, W, lt, err);
}

/* JDL: element-space weights from beamspace ones, w_b = T_b w~_b:
 * W[(k*B + b)*N + c*Q + q] = sum_j A_b[j][c] Wt[b][k][j*Q + q], k = d*S + s. */
static void jdl_expand(const stap_engine *e, const stap_cf32 *Wt, stap_cf32 *W)
{
    const int C = e->cfg.channels, Q = e->cfg.doppler_order, Na = e->cfg.angle_bins;
    const int N = e->N, Nt = e->Nt, B = e->B;
    for (int b = 0; b < B; b++) {
        const stap_cf32 *A = e->A + (size_t)b * C * Na;
        for (int k = 0; k < e->batch; k++) {
            const stap_cf32 *wt = Wt + ((size_t)b * e->batch + k) * Nt;
            stap_cf32 *w = W + ((size_t)k * B + b) * N;
            for (int ch = 0; ch < C; ch++)
                for (int q = 0; q < Q; q++) {
                    stap_cf32 acc = 0;
                    for (int j = 0; j < Na; j++) acc += A[(size_t)j * C + ch] * wt[j * Q + q];
                    w[ch * Q + q] = acc;
                }
        }
    }
}

/* JDL: one batch of D*S per beam, each with its own transform and steering */
static int weights_jdl(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                       stap_la_timing *lt, stap_error *err)
{
    int st = STAP_OK;
    for (int b = 0; b < e->B && !st; b++) {
        stap_la_timing lb;
        const size_t mn = (size_t)e->M * e->Nt;
        st = stap_la_adaptive_weights(la, e->M, e->Nt, e->batch, T + (size_t)b * e->batch * mn, e->M,
                                      (ptrdiff_t)mn, 1, e->Vt + (size_t)b * e->Nt,
                                      Wt + (size_t)b * e->batch * e->Nt, &lb, err);
        if (st == STAP_ENUMERIC) stap_error_prefix(err, "beam %d", b);
        lt->qr_ms += lb.qr_ms;
    }
    if (!st) jdl_expand(e, Wt, W);
    return st;
}

/* Pre-Doppler, ADPCA: S factors, each solved for every bin's steering set (pre-Doppler)
 * or one (ADPCA), into Wt (S x nvs x N); then W (D x S x B x N). */
static int weights_subcpi(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                          stap_la_timing *lt, stap_error *err)
{
    int st = stap_la_adaptive_weights(la, e->M, e->N, e->cfg.segments, T, e->M,
                                      (ptrdiff_t)e->M * e->N, e->nvs, e->Vs, Wt, lt, err);
    if (st) return st;
    const int D = e->cfg.doppler_bins, S = e->cfg.segments, B = e->B, N = e->N;
    const int per_bin = e->nvs == D * B && (stap_algorithm_traits(&e->cfg) & STAP_TRAIT_STEER_PER_BIN);
    for (int d = 0; d < D; d++)
        for (int s = 0; s < S; s++)
            memcpy(W + ((size_t)d * S + s) * B * N,
                   Wt + ((size_t)s * e->nvs + (per_bin ? (size_t)d * B : 0)) * N,
                   sizeof(stap_cf32) * (size_t)B * N);
    return STAP_OK;
}

/* DPCA: the fixed weights, the same for every bin and segment */
static int weights_fixed(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                         stap_la_timing *lt, stap_error *err)
{
    for (int k = 0; k < e->batch; k++)
        memcpy(W + (size_t)k * e->B * e->N, e->Vs, sizeof(stap_cf32) * (size_t)e->B * e->N);
    return STAP_OK;
}

static void jdl_describe(const stap_config *c, char *buf, size_t len)
{
    snprintf(buf, len, "JDL %d beams x %d bins, ", c->angle_bins, c->doppler_order);
}
static void subcpi_describe(const stap_config *c, char *buf, size_t len)
{
    const stap_algo *a = stap_algo_of(c);
    snprintf(buf, len, "%s%s %d-pulse sub-CPIs, ", a->info.label,
             a->info.traits & STAP_TRAIT_FIXED ? " (fixed weights)" : "", c->doppler_order);
}

/* ---- the table ------------------------------------------------------------------------- */

static const stap_algo algorithms[] = {
    [STAP_ALGORITHM_POST_DOPPLER] = {
        .info = {"post-doppler", "post-Doppler", 0, 0, 0, 0, NULL, "channels x Doppler order"},
        .steering_tap = centre_tap,
        .cpu_training = training_doppler,
        .cpu_weights = weights_doppler,
    },
    [STAP_ALGORITHM_JDL] = {
        .info = {"jdl", "JDL", STAP_TRAIT_BEAMSPACE, 0, 0, 0, "angle_bins",
                 "angle bins x Doppler order"},
        .validate = jdl_validate,
        .adapted_dof = jdl_adapted_dof,
        .steering_tap = centre_tap,
        .label = jdl_label,
        .prepare = jdl_prepare,
        .cpu_training = training_jdl,
        .cpu_weights = weights_jdl,
        .cpu_describe = jdl_describe,
    },
    [STAP_ALGORITHM_PRE_DOPPLER] = {
        .info = {"pre-doppler", "pre-Doppler", STAP_TRAIT_SUBCPI | STAP_TRAIT_STEER_PER_BIN, 0,
                 0, 3, NULL, "channels x sub-CPI pulses"},
        .steering_tap = flat_tap,
        .bin_steering = predoppler_bin_steering,
        .label = subcpi_label,
        .prepare = subcpi_prepare,
        .cpu_training = training_subcpi,
        .cpu_weights = weights_subcpi,
        .cpu_describe = subcpi_describe,
    },
    [STAP_ALGORITHM_ADPCA] = {
        .info = {"adpca", "ADPCA", STAP_TRAIT_SUBCPI, 2, 3, 2, NULL, "channels x sub-CPI pulses"},
        .steering_tap = binomial_tap,
        .label = subcpi_label,
        .prepare = subcpi_prepare,
        .cpu_training = training_subcpi,
        .cpu_weights = weights_subcpi,
        .cpu_describe = subcpi_describe,
    },
    [STAP_ALGORITHM_DPCA] = {
        .info = {"dpca", "DPCA", STAP_TRAIT_SUBCPI | STAP_TRAIT_FIXED, 2, 3, 2, "dpca_shift",
                 "channels x sub-CPI pulses"},
        .validate = dpca_validate,
        .steering_tap = binomial_tap,
        .fixed_weights = stap_dpca_weights,
        .label = dpca_label,
        .prepare = subcpi_prepare,
        .cpu_weights = weights_fixed,
        .cpu_describe = subcpi_describe,
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
