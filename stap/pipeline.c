/* pipeline.c: one CPI through the STAP chain of the processing contract (README):
 * Doppler filtering (FFTW), training matrices, batched QR and MVDR weights (linalg/),
 * and adaptive filtering. A plan is made once per CPI shape and executed per CPI. */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "la_internal.h" /* la_now_ms */
#include "stap.h"

struct stap_plan {
    stap_config cfg;
    int N, M, L, B;          /* DOF, training rows, cells per segment, beams */
    int batch;               /* D * S QR problems                             */
    float *win;              /* P window coefficients                         */
    cf32 *V;                 /* B x N steering, row-major                     */
    cf32 *X;                 /* C x D x R Doppler-domain cube                 */
    cf32 *T;                 /* batch x (M x N) training matrices, col-major  */
    fftwf_plan fft;          /* D-point FFTs along pulses of one channel      */
    la_ctx *la;
};

static void *xmalloc(size_t n) { return fftwf_malloc(n ? n : 1); }

void stap_plan_destroy(stap_plan *p)
{
    if (!p) return;
    if (p->fft) fftwf_destroy_plan(p->fft);
    la_ctx_destroy(p->la);
    free(p->win);
    free(p->V);
    fftwf_free(p->X);
    fftwf_free(p->T);
    free(p);
}

int stap_plan_create(stap_plan **out, const stap_config *cfg_in, const cf32 *steering,
                     int nbeams, rt_error *err)
{
    *out = NULL;
    stap_config cfg = *cfg_in;
    int st = stap_config_validate(&cfg, steering != NULL, nbeams, steering ? stap_dof(&cfg) : 0,
                                  err);
    if (st) return st;
    stap_plan *p = calloc(1, sizeof *p);
    if (!p) return rt_fail(err, RT_ENOMEM, "out of memory creating the STAP plan");
    p->cfg = cfg;
    p->N = stap_dof(&cfg);
    p->M = stap_training_rows(&cfg);
    p->L = cfg.range_gates / cfg.segments;
    p->B = cfg.beams;
    p->batch = cfg.doppler_bins * cfg.segments;
    size_t C = cfg.channels, D = cfg.doppler_bins, R = cfg.range_gates;

    p->win = malloc(sizeof(float) * cfg.pulses);
    p->V = malloc(sizeof(cf32) * (size_t)p->B * p->N);
    p->X = xmalloc(sizeof(cf32) * C * D * R);
    p->T = xmalloc(sizeof(cf32) * (size_t)p->batch * p->M * p->N);
    if (!p->win || !p->V || !p->X || !p->T) {
        stap_plan_destroy(p);
        return rt_fail(err, RT_ENOMEM, "out of memory for the STAP work buffers");
    }
    if ((st = stap_window(&cfg, p->win, err))) goto fail;
    if (steering) memcpy(p->V, steering, sizeof(cf32) * (size_t)p->B * p->N);
    else stap_default_steering(&cfg, p->V);

    /* One channel's D x R block: R transforms of length D, stride R, distance 1. The
     * plan is reused for every channel (fftwf_execute_dft is thread-safe). */
    fftwf_iodim dim = {(int)D, (int)R, (int)R};
    fftwf_iodim howmany = {(int)R, 1, 1};
    p->fft = fftwf_plan_guru_dft(1, &dim, 1, &howmany, (fftwf_complex *)p->X,
                                 (fftwf_complex *)p->X, FFTW_FORWARD,
                                 FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!p->fft) {
        st = rt_fail(err, RT_EINVAL, "FFTW could not plan a %zu-point transform", D);
        goto fail;
    }
    if ((st = la_ctx_create(&p->la, cfg.backend, cfg.threads, err))) goto fail;
    p->cfg.backend = la_ctx_backend(p->la);
    *out = p;
    return RT_OK;
fail:
    stap_plan_destroy(p);
    return st;
}

const stap_config *stap_plan_config(const stap_plan *p) { return &p->cfg; }
int stap_plan_beams(const stap_plan *p) { return p->B; }
const cf32 *stap_plan_steering(const stap_plan *p) { return p->V; }
la_backend stap_plan_backend(const stap_plan *p) { return p->cfg.backend; }
const cf32 *stap_plan_doppler(const stap_plan *p) { return p->X; }
size_t stap_weights_len(const stap_plan *p) { return (size_t)p->batch * p->B * p->N; }
size_t stap_output_len(const stap_plan *p)
{
    return (size_t)p->B * p->cfg.doppler_bins * p->cfg.range_gates;
}

/* Contract step 1: X[c,d,r] = sum_p win[p] x[c,p,r] exp(-2 pi i d p / D). */
static void doppler_filter(stap_plan *p, const cf32 *x)
{
    const int C = p->cfg.channels, P = p->cfg.pulses, D = p->cfg.doppler_bins;
    const size_t R = p->cfg.range_gates;
#pragma omp parallel for schedule(static) num_threads(la_ctx_threads(p->la))
    for (int c = 0; c < C; c++) {
        cf32 *Xc = p->X + (size_t)c * D * R;
        const cf32 *xc = x + (size_t)c * P * R;
        for (int q = 0; q < P; q++) {
            const float w = p->win[q];
            for (size_t r = 0; r < R; r++) Xc[q * R + r] = w * xc[q * R + r];
        }
        memset(Xc + (size_t)P * R, 0, sizeof(cf32) * (size_t)(D - P) * R);
        fftwf_execute_dft(p->fft, (fftwf_complex *)Xc, (fftwf_complex *)Xc);
    }
}

/* Doppler bin of tap q for centre bin d (contract step 2). */
static inline int tap_bin(int d, int q, int Q, int D)
{
    int b = (d - (Q - 1) / 2 + q) % D;
    return b < 0 ? b + D : b;
}

/* Contract steps 3-4: T_k (M x N, column-major), k = d*S + s; row i = snapshot^H of
 * training cell s*L + floor(i*L/K); with loading, N more rows sqrt(K*delta) I. */
static void form_training(stap_plan *p)
{
    const int C = p->cfg.channels, D = p->cfg.doppler_bins, Q = p->cfg.doppler_order;
    const int S = p->cfg.segments, K = p->cfg.training, L = p->L, M = p->M, N = p->N;
    const size_t R = p->cfg.range_gates;
    const float load = p->cfg.loading > 0 ? (float)sqrt(K * p->cfg.loading) : 0.0f;
#pragma omp parallel for schedule(static) num_threads(la_ctx_threads(p->la))
    for (int k = 0; k < p->batch; k++) {
        int d = k / S, s = k % S;
        cf32 *T = p->T + (size_t)k * M * N;
        for (int c = 0; c < C; c++)
            for (int q = 0; q < Q; q++) {
                int j = c * Q + q;
                const cf32 *row = p->X + ((size_t)c * D + tap_bin(d, q, Q, D)) * R + (size_t)s * L;
                cf32 *col = T + (size_t)j * M;
                for (int i = 0; i < K; i++) col[i] = conjf(row[(size_t)i * L / K]);
                if (M > K) {
                    memset(col + K, 0, sizeof(cf32) * (size_t)N);
                    col[K + j] = load;
                }
            }
    }
}

/* Contract step 8: y[b,d,r] = w^H s(d,r) with the weights of r's segment. */
static void apply_weights(stap_plan *p, const cf32 *W, cf32 *y)
{
    const int C = p->cfg.channels, D = p->cfg.doppler_bins, Q = p->cfg.doppler_order;
    const int S = p->cfg.segments, L = p->L, N = p->N, B = p->B;
    const size_t R = p->cfg.range_gates;
#pragma omp parallel for collapse(2) schedule(static) num_threads(la_ctx_threads(p->la))
    for (int b = 0; b < B; b++)
        for (int d = 0; d < D; d++) {
            cf32 *yr = y + ((size_t)b * D + d) * R;
            for (int s = 0; s < S; s++) {
                const cf32 *w = W + (((size_t)d * S + s) * B + b) * N;
                cf32 *ys = yr + (size_t)s * L;
                for (int r = 0; r < L; r++) ys[r] = 0;
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++) {
                        const cf32 a = conjf(w[c * Q + q]);
                        const cf32 *xs =
                            p->X + ((size_t)c * D + tap_bin(d, q, Q, D)) * R + (size_t)s * L;
                        for (int r = 0; r < L; r++) ys[r] += a * xs[r];
                    }
            }
        }
}

static int check_finite(const cf32 *x, size_t n, const stap_config *c, const char *what,
                        rt_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(crealf(x[i])) || !isfinite(cimagf(x[i]))) {
            size_t R = c->range_gates, P = c->pulses;
            return rt_fail(err, RT_EFORMAT, "non-finite %s sample at (channel %zu, pulse %zu, "
                           "range %zu)", what, i / (P * R), (i / R) % P, i % R);
        }
    return RT_OK;
}

int stap_plan_execute(stap_plan *p, const cf32 *cube, cf32 *W, cf32 *y, double *timing,
                      rt_error *err)
{
    double t[STAP_STAGE_COUNT] = {0};
    size_t n = (size_t)p->cfg.channels * p->cfg.pulses * p->cfg.range_gates;
    int st = check_finite(cube, n, &p->cfg, "input", err);
    if (st) return st;

    double t0 = la_now_ms();
    doppler_filter(p, cube);
    double t1 = la_now_ms();
    form_training(p);
    double t2 = la_now_ms();
    la_timing lt;
    st = la_adaptive_weights(p->la, p->M, p->N, p->batch, p->T, p->M, (ptrdiff_t)p->M * p->N,
                             p->B, p->V, W, &lt, err);
    double t3 = la_now_ms();
    if (st) {
        if (st == RT_ENUMERIC) rt_prefix(err, "adaptive weights (batch item = Doppler bin x "
                                         "%d segments + segment)", p->cfg.segments);
        return st;
    }
    /* No silent NaN: a weight that is not finite is a processing error. */
    size_t nw = stap_weights_len(p);
    for (size_t i = 0; i < nw; i++)
        if (!isfinite(crealf(W[i])) || !isfinite(cimagf(W[i]))) {
            size_t k = i / ((size_t)p->B * p->N);
            return rt_fail(err, RT_ENUMERIC, "non-finite adaptive weight at Doppler bin %zu, "
                           "segment %zu, beam %zu", k / p->cfg.segments, k % p->cfg.segments,
                           (i / p->N) % p->B);
        }
    apply_weights(p, W, y);
    double t4 = la_now_ms();

    t[STAP_STAGE_DOPPLER] = t1 - t0;
    t[STAP_STAGE_TRAINING] = t2 - t1;
    t[STAP_STAGE_QR] = lt.qr_ms;
    t[STAP_STAGE_WEIGHTS] = lt.weights_ms;
    t[STAP_STAGE_TRANSFER] = lt.transfer_ms;
    /* whatever la_adaptive_weights spent outside its own phases (e.g. launch, checks) */
    double rest = (t3 - t2) - (lt.qr_ms + lt.weights_ms + lt.transfer_ms);
    if (rest > 0) t[STAP_STAGE_TRANSFER] += rest;
    t[STAP_STAGE_APPLY] = t4 - t3;
    if (timing) memcpy(timing, t, sizeof t);
    return RT_OK;
}
