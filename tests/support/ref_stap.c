/* ref_stap.c: the contract in double precision, written for clarity, not speed. */
#include "ref_stap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Householder QR in double of A (m x n, column-major, lda = m), R left in the upper
 * triangle. Returns 0, or -1 on a zero column. */
static int qr_double(int m, int n, stap_cf64 *A)
{
    for (int k = 0; k < n; k++) {
        stap_cf64 *x = A + (size_t)k * m + k;
        int len = m - k;
        double nrm = 0;
        for (int i = 0; i < len; i++) nrm += creal(x[i] * conj(x[i]));
        nrm = sqrt(nrm);
        if (nrm == 0) return -1;
        stap_cf64 alpha = x[0];
        double absa = cabs(alpha);
        stap_cf64 phase = absa > 0 ? alpha / absa : 1.0;
        stap_cf64 beta = -phase * nrm;        /* x - beta e1 avoids cancellation */
        /* v = x - beta e1, H = I - 2 v v^H / (v^H v) maps x to beta e1 */
        stap_cf64 *v = malloc(sizeof(stap_cf64) * len);
        memcpy(v, x, sizeof(stap_cf64) * len);
        v[0] -= beta;
        double vv = 0;
        for (int i = 0; i < len; i++) vv += creal(v[i] * conj(v[i]));
        for (int j = k; j < n; j++) {
            stap_cf64 *a = A + (size_t)j * m + k;
            stap_cf64 s = 0;
            for (int i = 0; i < len; i++) s += conj(v[i]) * a[i];
            s *= 2.0 / vv;
            for (int i = 0; i < len; i++) a[i] -= s * v[i];
        }
        free(v);
    }
    return 0;
}

/* The sliding window's training cells of block s, found another way than
 * stap_training_cells: every cell outside the block and its guards, ranked by distance
 * from the block (ties: the right side first), the K nearest taken. -1 when short. */
static int sliding_cells(int R, int Lb, int G, int K, int s, int *cells)
{
    const int b0 = s * Lb, b1 = b0 + Lb; /* the block: [b0, b1) */
    int n = 0;
    for (int dist = G + 1; n < K && dist <= R; dist++) {
        const int right = b1 - 1 + dist, left = b0 - dist;
        if (right < R && n < K) cells[n++] = right;
        if (left >= 0 && n < K) cells[n++] = left;
    }
    return n == K ? 0 : -1;
}

/* Solve R^H R z = v (R upper, column-major with leading dimension M), w = z / (v^H z). */
static void mvdr_solve(int M, int N, const stap_cf64 *T, const stap_cf64 *v, stap_cf64 *y, stap_cf64 *w)
{
    for (int i = 0; i < N; i++) {
        stap_cf64 acc = v[i];
        for (int k = 0; k < i; k++) acc -= conj(T[(size_t)i * M + k]) * y[k];
        y[i] = acc / conj(T[(size_t)i * M + i]);
    }
    for (int i = N - 1; i >= 0; i--) {
        stap_cf64 acc = y[i];
        for (int k = i + 1; k < N; k++) acc -= T[(size_t)k * M + i] * w[k];
        w[i] = acc / T[(size_t)i * M + i];
    }
    stap_cf64 vw = 0;
    for (int i = 0; i < N; i++) vw += conj(v[i]) * w[i];
    for (int i = 0; i < N; i++) w[i] /= vw;
}

/* Pre-Doppler and ADPCA (docs/processing.md "Algorithms and detectors"): Q = M' pulses a sub-CPI, N = C*Q. Segment s
 * trains on the first sub-CPI x[c, q, cell] (q < Q) of its cells; bin d's weights solve
 * for s_d = v exp(2 pi i d q / D) (pre-Doppler) or v (ADPCA); the output is
 * y = w^H z_d, z_d[c*Q + q] = sum_{p'} win[p'] x[c, p' + q, r] exp(-2 pi i d p' / D),
 * p' = 0..P-Q (win: P-Q+1 coefficients). */
static int ref_subcpi(const stap_config *cfg, const double *win, int B, const stap_cf32 *V,
                      const stap_cf32 *cube, stap_cf64 *W, stap_cf64 *Y)
{
    const int C = cfg->channels, P = cfg->pulses, R = cfg->range_gates, D = cfg->doppler_bins;
    const int Q = cfg->doppler_order, N = C * Q, K = cfg->training, Pp = P - Q + 1;
    const int sliding = cfg->training_window == STAP_TRAINING_SLIDING;
    const int Lb = cfg->block > 0 ? cfg->block : 1, S = sliding ? R / Lb : cfg->segments;
    const int L = R / S, M = K + (cfg->loading > 0 ? N : 0);
    const int pre = cfg->algorithm == STAP_ALGORITHM_PRE_DOPPLER;
#define X(c, p, r) ((stap_cf64)cube[((size_t)(c) * P + (p)) * R + (r)])
    int *cells = malloc(sizeof(int) * (size_t)K);
    stap_cf64 *T = malloc(sizeof(stap_cf64) * (size_t)M * N);
    stap_cf64 *sv = malloc(sizeof(stap_cf64) * N), *y = malloc(sizeof(stap_cf64) * N);
    int status = 0;
    if (cfg->algorithm == STAP_ALGORITHM_DPCA) {
        /* docs/processing.md: tap q of the pulse-q subarray, channels c + (Q-1-q) shift, c over the
         * Cs = C - (Q-1)|shift| channels that keep every tap inside the array */
        const int sh = cfg->dpca_shift ? cfg->dpca_shift : 1; /* 0: the default, 1 */
        const int span = (Q - 1) * (sh < 0 ? -sh : sh);
        for (size_t k = 0; k < (size_t)D * S; k++)
            for (int b = 0; b < B; b++) {
                stap_cf64 *w = W + (k * B + b) * N;
                for (int j = 0; j < N; j++) w[j] = 0;
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++) {
                        const int ch = c + (Q - 1 - q) * sh;
                        if (c + (Q - 1) * (sh > 0 ? sh : 0) < C && c + (Q - 1) * (sh < 0 ? sh : 0) >= 0)
                            w[ch * Q + q] = (stap_cf64)V[(size_t)b * N + c * Q + q] / (C - span);
                    }
            }
    }
    for (int s = 0; s < S && !status && cfg->algorithm != STAP_ALGORITHM_DPCA; s++) {
        if (sliding && sliding_cells(R, Lb, cfg->guard, K, s, cells)) {
            status = -1;
            break;
        }
        for (int i = 0; i < K; i++) {
            const int cell = sliding ? cells[i] : s * L + (int)((long)i * L / K);
            for (int c = 0; c < C; c++)
                for (int q = 0; q < Q; q++) T[(size_t)(c * Q + q) * M + i] = conj(X(c, q, cell));
        }
        for (int i = K; i < M; i++)
            for (int j = 0; j < N; j++) T[(size_t)j * M + i] = (i - K == j) ? sqrt(K * cfg->loading) : 0.0;
        if (qr_double(M, N, T)) {
            status = -1;
            break;
        }
        for (int d = 0; d < D; d++)
            for (int b = 0; b < B; b++) {
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++)
                        sv[c * Q + q] = (stap_cf64)V[(size_t)b * N + c * Q + q] *
                                        (pre ? cexp(2.0 * M_PI * I * (double)d * q / D) : 1.0);
                mvdr_solve(M, N, T, sv, y, W + (((size_t)d * S + s) * B + b) * N);
            }
    }
    /* the staggered snapshots by a direct DFT, then the adaptive filter */
    stap_cf64 *Z = malloc(sizeof(stap_cf64) * (size_t)N * D * R); /* [c*Q + q][d][r] */
    for (int c = 0; c < C && !status; c++)
        for (int q = 0; q < Q; q++)
            for (int d = 0; d < D; d++)
                for (int r = 0; r < R; r++) {
                    stap_cf64 acc = 0;
                    for (int p = 0; p < Pp; p++)
                        acc += win[p] * X(c, p + q, r) * cexp(-2.0 * M_PI * I * (double)d * p / D);
                    Z[((size_t)(c * Q + q) * D + d) * R + r] = acc;
                }
    for (int b = 0; b < B && !status; b++)
        for (int d = 0; d < D; d++)
            for (int r = 0; r < R; r++) {
                const stap_cf64 *w = W + (((size_t)d * S + r / L) * B + b) * N;
                stap_cf64 acc = 0;
                for (int j = 0; j < N; j++) acc += conj(w[j]) * Z[((size_t)j * D + d) * R + r];
                Y[((size_t)b * D + d) * R + r] = acc;
            }
#undef X
    free(cells);
    free(T);
    free(sv);
    free(y);
    free(Z);
    return status;
}

int ref_stap(const stap_config *cfg, const double *win, int B, const stap_cf32 *V,
             const stap_cf32 *cube, stap_cf64 *W, stap_cf64 *Y)
{
    if (cfg->algorithm == STAP_ALGORITHM_PRE_DOPPLER || cfg->algorithm == STAP_ALGORITHM_ADPCA ||
        cfg->algorithm == STAP_ALGORITHM_DPCA)
        return ref_subcpi(cfg, win, B, V, cube, W, Y);
    const int C = cfg->channels, P = cfg->pulses, R = cfg->range_gates;
    const int sliding = cfg->training_window == STAP_TRAINING_SLIDING;
    const int Lb = cfg->block > 0 ? cfg->block : 1;
    const int D = cfg->doppler_bins, Q = cfg->doppler_order, S = sliding ? R / Lb : cfg->segments;
    const int K = cfg->training, N = C * Q, L = R / S;
    int *cells = malloc(sizeof(int) * (size_t)K);
    /* the adapted space: post-Doppler adapts all N; JDL adapts Nt = Na*Q through beam b's
     * own N x Nt transform Tm (one group of beams per transform) */
    const int jdl = cfg->algorithm == STAP_ALGORITHM_JDL, Na = jdl ? cfg->angle_bins : C;
    const int Nt = jdl ? Na * Q : N, groups = jdl ? B : 1;
    const int M = K + (cfg->loading > 0 ? Nt : 0);
    int status = 0;
    stap_cf64 *Tm = calloc((size_t)groups * N * Nt, sizeof(stap_cf64)); /* column k at Tm + k*N */
    for (int g = 0; g < groups; g++) {
        stap_cf64 *tg = Tm + (size_t)g * N * Nt;
        if (!jdl) {
            for (int i = 0; i < N; i++) tg[(size_t)i * N + i] = 1;
            continue;
        }
        /* JDL (docs/processing.md): v's centre tap, unit norm, and its shifts by whole spatial DFT bins */
        const stap_cf32 *v = V + (size_t)g * N;
        double nv = 0;
        for (int c = 0; c < C; c++) nv += pow(cabs((stap_cf64)v[c * Q + (Q - 1) / 2]), 2);
        for (int j = 0; j < Na; j++)
            for (int q = 0; q < Q; q++)
                for (int c = 0; c < C; c++)
                    tg[(size_t)(j * Q + q) * N + c * Q + q] =
                        (stap_cf64)v[c * Q + (Q - 1) / 2] / sqrt(nv) *
                        cexp(2.0 * M_PI * I * (double)(j - (Na - 1) / 2) * c / C);
    }

    /* 1. Doppler filtering by a direct DFT */
    stap_cf64 *X = malloc(sizeof(stap_cf64) * (size_t)C * D * R);
    stap_cf64 *tw = malloc(sizeof(stap_cf64) * (size_t)D);
    for (int i = 0; i < D; i++) tw[i] = cexp(-2.0 * M_PI * I * i / D);
    for (int c = 0; c < C; c++)
        for (int d = 0; d < D; d++)
            for (int r = 0; r < R; r++) {
                stap_cf64 acc = 0;
                for (int p = 0; p < P; p++)
                    acc += win[p] * (stap_cf64)cube[((size_t)c * P + p) * R + r] *
                           tw[(int)(((long)d * p) % D)];
                X[((size_t)c * D + d) * R + r] = acc;
            }
    /* 2. snapshot s[c*Q+q] of bin d at cell r */
#define SNAP(d, r, c, q) X[((size_t)(c) * D + (((d) - (Q - 1) / 2 + (q)) % D + D) % D) * R + (r)]

    stap_cf64 *T = malloc(sizeof(stap_cf64) * (size_t)M * Nt);
    stap_cf64 *y = malloc(sizeof(stap_cf64) * Nt), *z = malloc(sizeof(stap_cf64) * Nt), *vt = malloc(sizeof(stap_cf64) * Nt);
    for (int d = 0; d < D && !status; d++)
        for (int s = 0; s < S && !status; s++)
            for (int g = 0; g < groups && !status; g++) {
            const stap_cf64 *tg = Tm + (size_t)g * N * Nt;
            /* 3-4. training matrix: row i = (Tm^H snapshot)^H */
            if (sliding && sliding_cells(R, Lb, cfg->guard, K, s, cells)) {
                status = -1;
                break;
            }
            for (int i = 0; i < K; i++) {
                int cell = sliding ? cells[i] : s * L + (int)((long)i * L / K);
                for (int k = 0; k < Nt; k++) {
                    stap_cf64 acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int q = 0; q < Q; q++)
                            acc += conj(tg[(size_t)k * N + c * Q + q]) * SNAP(d, cell, c, q);
                    T[(size_t)k * M + i] = conj(acc);
                }
            }
            for (int i = K; i < M; i++)
                for (int j = 0; j < Nt; j++)
                    T[(size_t)j * M + i] = (i - K == j) ? sqrt(K * cfg->loading) : 0.0;
            /* 5. R */
            if (qr_double(M, Nt, T)) {
                status = -1;
                break;
            }
            /* 6-7. weights: v~ = Tm^H v, R^H y = v~, R z = y, w = Tm z / (v~^H z) */
            for (int b = jdl ? g : 0; b < (jdl ? g + 1 : B); b++) {
                const stap_cf32 *v = V + (size_t)b * N;
                for (int k = 0; k < Nt; k++) {
                    stap_cf64 acc = 0;
                    for (int i = 0; i < N; i++) acc += conj(tg[(size_t)k * N + i]) * v[i];
                    vt[k] = acc;
                }
                mvdr_solve(M, Nt, T, vt, y, z); /* z / (v~^H z) */
                stap_cf64 *w = W + (((size_t)d * S + s) * B + b) * N;
                for (int i = 0; i < N; i++) {
                    stap_cf64 acc = 0;
                    for (int k = 0; k < Nt; k++) acc += tg[(size_t)k * N + i] * z[k];
                    w[i] = acc;
                }
            }
        }
    /* 8. output y[b,d,r] = w^H s(d,r) */
    for (int b = 0; b < B && !status; b++)
        for (int d = 0; d < D; d++)
            for (int r = 0; r < R; r++) {
                const stap_cf64 *w = W + (((size_t)d * S + r / L) * B + b) * N;
                stap_cf64 acc = 0;
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++) acc += conj(w[c * Q + q]) * SNAP(d, r, c, q);
                Y[((size_t)b * D + d) * R + r] = acc;
            }
#undef SNAP
    free(cells);
    free(X);
    free(tw);
    free(T);
    free(Tm);
    free(y);
    free(z);
    free(vt);
    return status;
}

double ref_snr_db(const stap_cf64 *ref, const stap_cf32 *out, size_t n)
{
    double sig = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        stap_cf64 e = ref[i] - (stap_cf64)out[i];
        sig += creal(ref[i] * conj(ref[i]));
        err += creal(e * conj(e));
    }
    if (!(err == err)) return -INFINITY; /* NaN */
    return err == 0 ? INFINITY : 10 * log10(sig / err);
}
