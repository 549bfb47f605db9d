/* algorithm_stages.c: the CPU engine's stages of each kind of STAP algorithm (algorithm_stages.h):
 * the host tables at engine creation, the training formers of contract steps 2-4 and the
 * weight solves of steps 5-7 — element space by Doppler bin, beamspace (JDL), sub-CPI, fixed
 * weights. A configuration's stages follow its algorithm's traits (stap/config/algorithm.h,
 * which names the algorithms); this file names none. */
#include "algorithm_stages.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm.h"
#include "engine_internal.h"

/* ---- engine creation: the host tables ------------------------------------------------- */

/* JDL: each beam's transform A_b (stap_jdl_beams) and beamspace steering T_b^H v_b, the
 * latter in double before rounding. */
static int jdl_prepare(stap_engine *e, stap_error *err)
{
    const int C = e->cfg.channels, Q = e->cfg.doppler_order, Na = e->cfg.angle_bins;
    e->tables.beamspace.A = malloc(sizeof(stap_cf32) * (size_t)e->B * C * Na);
    e->tables.beamspace.Vt = malloc(sizeof(stap_cf32) * (size_t)e->B * e->Nt);
    double *a = malloc(sizeof(double) * 2 * (size_t)C * Na);
    if (!e->tables.beamspace.A || !e->tables.beamspace.Vt || !a) {
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
            e->tables.beamspace.A[(size_t)b * C * Na + i] = (float)a[2 * i] + I * (float)a[2 * i + 1];
        for (int j = 0; j < Na; j++)
            for (int q = 0; q < Q; q++) {
                double re = 0, im = 0; /* sum_c conj(A[j][c]) v[c*Q + q] */
                for (int c = 0; c < C; c++) {
                    const double ar = a[2 * ((size_t)j * C + c)], ai = a[2 * ((size_t)j * C + c) + 1];
                    const double vr = crealf(v[c * Q + q]), vi = cimagf(v[c * Q + q]);
                    re += ar * vr + ai * vi;
                    im += ar * vi - ai * vr;
                }
                e->tables.beamspace.Vt[(size_t)b * e->Nt + j * Q + q] = (float)re + I * (float)im;
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
    e->tables.subcpi.nvs = nd * e->B;
    e->tables.subcpi.Vs = malloc(sizeof(stap_cf32) * (size_t)e->tables.subcpi.nvs * N);
    double *s = malloc(sizeof(double) * 2 * (size_t)N);
    if (!e->tables.subcpi.Vs || !s) {
        free(s);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the sub-CPI steering vectors");
    }
    if (al->fixed_weights) {
        for (int b = 0; b < e->B; b++) al->fixed_weights(&e->cfg, e->V + (size_t)b * N, e->tables.subcpi.Vs + (size_t)b * N);
        free(s);
        return STAP_OK;
    }
    for (int d = 0; d < nd; d++)
        for (int b = 0; b < e->B; b++) {
            stap_subcpi_steering(&e->cfg, e->V + (size_t)b * N, d, s);
            stap_cf32 *o = e->tables.subcpi.Vs + ((size_t)d * e->B + b) * N;
            for (int j = 0; j < N; j++) o[j] = (float)s[2 * j] + I * (float)s[2 * j + 1];
        }
    free(s);
    return STAP_OK;
}

void stap_algo_tables_free(stap_algo_tables *t)
{
    free(t->beamspace.A);
    free(t->beamspace.Vt);
    free(t->subcpi.Vs);
    memset(t, 0, sizeof *t);
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
        const stap_cf32 *A = e->tables.beamspace.A + (size_t)b * C * Na;
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
        const stap_cf32 *A = e->tables.beamspace.A + (size_t)b * C * Na;
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
                                      (ptrdiff_t)mn, 1, e->tables.beamspace.Vt + (size_t)b * e->Nt,
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
                                      (ptrdiff_t)e->M * e->N, e->tables.subcpi.nvs, e->tables.subcpi.Vs, Wt, lt, err);
    if (st) return st;
    const int D = e->cfg.doppler_bins, S = e->cfg.segments, B = e->B, N = e->N;
    const int per_bin = e->tables.subcpi.nvs == D * B && (stap_algorithm_traits(&e->cfg) & STAP_TRAIT_STEER_PER_BIN);
    for (int d = 0; d < D; d++)
        for (int s = 0; s < S; s++)
            memcpy(W + ((size_t)d * S + s) * B * N,
                   Wt + ((size_t)s * e->tables.subcpi.nvs + (per_bin ? (size_t)d * B : 0)) * N,
                   sizeof(stap_cf32) * (size_t)B * N);
    return STAP_OK;
}

/* DPCA: the fixed weights, the same for every bin and segment */
static int weights_fixed(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                         stap_la_timing *lt, stap_error *err)
{
    for (int k = 0; k < e->batch; k++)
        memcpy(W + (size_t)k * e->B * e->N, e->tables.subcpi.Vs, sizeof(stap_cf32) * (size_t)e->B * e->N);
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

/* ---- the stages of each kind, by the algorithm's traits ------------------------------- */

static const stap_algo_stages element_stages = {
    .cpu_training = training_doppler,
    .cpu_weights = weights_doppler,
};
static const stap_algo_stages beamspace_stages = {
    .prepare = jdl_prepare,
    .cpu_training = training_jdl,
    .cpu_weights = weights_jdl,
    .cpu_describe = jdl_describe,
};
static const stap_algo_stages subcpi_stages = {
    .prepare = subcpi_prepare,
    .cpu_training = training_subcpi,
    .cpu_weights = weights_subcpi,
    .cpu_describe = subcpi_describe,
};
static const stap_algo_stages fixed_stages = {
    .prepare = subcpi_prepare,
    .cpu_weights = weights_fixed,
    .cpu_describe = subcpi_describe,
};

const stap_algo_stages *stap_algo_stages_of(const stap_config *c)
{
    const unsigned t = stap_algorithm_traits(c);
    if (t & STAP_TRAIT_FIXED) return &fixed_stages;
    if (t & STAP_TRAIT_SUBCPI) return &subcpi_stages;
    if (t & STAP_TRAIT_BEAMSPACE) return &beamspace_stages;
    return &element_stages;
}
