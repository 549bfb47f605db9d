/* engine_cpu.c: the STAP engine on the host (backends cpu and lapack) — the baseline the
 * GPU engine is measured against and the fallback without a GPU, each stage at honest
 * CPU speed: FFTW (plans made once), training matrices, the linalg backend's batched QR
 * and MVDR solves, weight application as complex GEMMs (the backend's own, or cblas_cgemm
 * for lapack; one Doppler bin per thread), CFAR with prefix sums. A CPI is computed when it is submitted; each slot keeps
 * its own results until it is collected. Steps cite docs/processing.md. */
#include <cblas.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "algorithm_stages.h"
#include "engine_detect.h"
#include "engine_internal.h"

extern void openblas_set_num_threads(int num_threads);

typedef struct cpu_slot {
    stap_cf32 *W;                   /* D x S x B x N                        */
    stap_cf32 *Y;                   /* B x D x R                            */
    stap_detection *det;       /* a copy of the CFAR plan's list       */
    size_t ndet, det_cap;
    double stage_ms[STAP_STAGE_COUNT];
    double submit_ms, done_ms;
    float diag_ratio;          /* conditioning of the factors (engine.h)   */
    int diag_ratio_item;
    long long qr_cholqr2, qr_guarded; /* the CPI's factors by cholqr2, refactored by the guard */
    int status;                /* the CPI's outcome, reported by collect */
    stap_error err;
} cpu_slot;

typedef struct cpu_engine {
    stap_la_ctx *la;
    int threads;
    stap_cf32 *X;                   /* C x D x R Doppler cube (the last CPI's); sub-CPI:
                                  (C*Q) x D x R, row c*Q + q the staggered cube of
                                  the sub-CPIs' pulse q                           */
    stap_cf32 *T;                   /* training matrices, M x Nt each: D*S, or for JDL
                                  B x D*S (beam-major)                         */
    stap_cf32 *Wt;                  /* JDL: B x D*S x Nt beamspace weights; sub-CPI:
                                  S x nvs x N weights of the solves              */
    stap_cf32 *wc;                  /* per thread: B x C conjugated weights of a tap */
    fftwf_plan fft;
    stap_cfar_plan *cfar;
    stap_engine_detect *adaptive; /* the adaptive detector (instead of a CFAR plan) */
    cpu_slot slot[STAP_ENGINE_MAX_SLOTS];
} cpu_engine;

static void *xmalloc(size_t n) { return fftwf_malloc(n ? n : 1); }

static void cpu_destroy(stap_engine *e)
{
    cpu_engine *c = e->impl;
    if (!c) return;
    if (c->fft) fftwf_destroy_plan(c->fft);
    stap_la_ctx_destroy(c->la);
    stap_cfar_plan_destroy(c->cfar);
    stap_engine_detect_destroy(c->adaptive);
    fftwf_free(c->X);
    fftwf_free(c->T);
    fftwf_free(c->Wt);
    fftwf_free(c->wc);
    for (int s = 0; s < STAP_ENGINE_MAX_SLOTS; s++) {
        fftwf_free(c->slot[s].W);
        fftwf_free(c->slot[s].Y);
        free(c->slot[s].det);
    }
    free(c);
    e->impl = NULL;
}

static int cpu_create(stap_engine *e, stap_error *err)
{
    cpu_engine *c = calloc(1, sizeof *c);
    if (!c) return stap_fail(err, STAP_ENOMEM, "out of memory creating the CPU engine");
    e->impl = c;
    const stap_config *cfg = &e->cfg;
    int st = stap_la_ctx_create(&c->la, cfg->backend, cfg->threads, err);
    if (!st) st = stap_la_set_qr(c->la, cfg->qr, err);
    if (st) return st;
    c->threads = stap_la_ctx_threads(c->la);
    e->threads = c->threads;
    /* BLAS calls run one per OpenMP thread (the GEMMs of the apply stage, LAPACKE) */
    openblas_set_num_threads(1);
    const int sub = stap_is_subcpi(cfg);
    /* the apply's channels: C, or C*Q staggered sequences for the sub-CPI algorithms */
    const size_t C = (size_t)cfg->channels * (sub ? cfg->doppler_order : 1);
    const size_t D = cfg->doppler_bins, R = cfg->range_gates;
    c->X = xmalloc(sizeof(stap_cf32) * C * D * R);
    const size_t nx = C * D * R, nt = (size_t)stap_training_matrices(cfg) * e->M * e->Nt;
    c->T = xmalloc(sizeof(stap_cf32) * nt);
    c->wc = xmalloc(sizeof(stap_cf32) * (size_t)c->threads * e->B * C);
    const int solves = stap_engine_needs_wt(cfg);
    if (solves) c->Wt = xmalloc(sizeof(stap_cf32) * (size_t)e->B * e->batch * e->Nt);
    if (!c->X || !c->T || !c->wc || (solves && !c->Wt))
        return stap_fail(err, STAP_ENOMEM, "out of memory for the CPU engine's work buffers");
    /* touch every page now, from the threads that will use it: the first CPI must not pay
     * the page faults (measured: 24 ms Doppler and 34 ms training cold vs 5 and 4 warm) */
#pragma omp parallel num_threads(c->threads)
    {
#pragma omp for schedule(static) nowait
        for (size_t i = 0; i < nx; i++) c->X[i] = 0;
#pragma omp for schedule(static)
        for (size_t i = 0; i < nt; i++) c->T[i] = 0;
    }
    for (int s = 0; s < e->opt.slots; s++) {
        c->slot[s].W = xmalloc(sizeof(stap_cf32) * stap_weights_count(cfg, e->B));
        c->slot[s].Y = xmalloc(sizeof(stap_cf32) * stap_output_count(cfg, e->B));
        if (!c->slot[s].W || !c->slot[s].Y)
            return stap_fail(err, STAP_ENOMEM, "out of memory for slot %d's results", s);
        memset(c->slot[s].W, 0, sizeof(stap_cf32) * stap_weights_count(cfg, e->B));
        memset(c->slot[s].Y, 0, sizeof(stap_cf32) * stap_output_count(cfg, e->B));
    }
    /* One channel's D x R block: R transforms of length D, stride R, distance 1; the plan is
     * reused for every channel (fftwf_execute_dft is thread-safe), channels in parallel. */
    fftwf_iodim dim = {(int)D, (int)R, (int)R};
    fftwf_iodim howmany = {(int)R, 1, 1};
    c->fft = fftwf_plan_guru_dft(1, &dim, 1, &howmany, (fftwf_complex *)c->X,
                                 (fftwf_complex *)c->X, FFTW_FORWARD,
                                 FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!c->fft) return stap_fail(err, STAP_EINVAL, "FFTW could not plan a %zu-point transform", D);
    const int adaptive = stap_cfar_is_adaptive(e->opt.cfar.kind);
    if (adaptive && (st = stap_engine_detect_create(e, c->threads, &c->adaptive, err))) return st;
    if (!adaptive && e->opt.cfar.kind != STAP_CFAR_NONE &&
        (st = stap_cfar_plan_create(&c->cfar, &e->opt.cfar, e->B, (int)D, (int)R, c->threads, err)))
        return st;
    const int own = cfg->backend != STAP_BACKEND_LAPACK;
    const stap_algo_stages *al = stap_algo_stages_of(cfg);
    char algo[64] = "";
    if (al->cpu_describe) al->cpu_describe(cfg, algo, sizeof algo);
    const int dpca = (stap_algorithm_traits(cfg) & STAP_TRAIT_FIXED) != 0; /* no QR, no solves */
    snprintf(e->describe, sizeof e->describe,
             "%s: FFTW, %s%s%s%s%s%s, %s apply, %s %s, %d threads, "
             "%d slot%s",
             stap_backend_name(cfg->backend), algo,
             dpca ? "" : !own ? "LAPACKE cgeqrf" : cfg->qr == STAP_QR_CHOLQR2 ? "own CholeskyQR2 (guarded)"
                                  : cfg->qr == STAP_QR_CHOLQR ? "own CholeskyQR (guarded)"
                       : cfg->qr == STAP_QR_AUTO ? "own Householder or CholeskyQR2 (auto)" : "own Householder",
             dpca ? "no QR" : " QR + MVDR solves", own && !dpca ? " (" : "",
             own && !dpca ? stap_la_cpu_kernels() : "", own && !dpca ? ")" : "",
             own ? "own cgemm" : "cblas_cgemm", stap_cfar_kind_name(e->opt.cfar.kind),
             adaptive ? "detector" : "CFAR", c->threads, e->opt.slots,
             e->opt.slots > 1 ? "s" : "");
    return STAP_OK;
}

/* Contract step 1: X[c,d,r] = sum_p win[p] x[c,p,r] exp(-2 pi i d p / D). The sub-CPI
 * algorithms (step 1'): row c*Q + q of X is the D-point DFT of u[p'] x[c, p' + q, r],
 * p' = 0..P-Q (the window u over the sub-CPIs' pulse q):
 * X[c*Q + q, d, r] = sum_p' u[p'] x[c, p' + q, r] exp(-2 pi i d p' / D) — the same loop
 * with Q rows a channel and P - Q + 1 pulses (Q = 1: step 1). */
static void doppler_filter(stap_engine *e, cpu_engine *c, const stap_cf32 *x)
{
    const int C = e->cfg.channels, P = e->cfg.pulses, D = e->cfg.doppler_bins;
    const int Q = stap_is_subcpi(&e->cfg) ? e->cfg.doppler_order : 1, Pw = P - Q + 1;
    const size_t R = e->cfg.range_gates;
#pragma omp parallel for schedule(static) num_threads(c->threads)
    for (int cq = 0; cq < C * Q; cq++) {
        const int ch = cq / Q, q = cq % Q;
        stap_cf32 *Xc = c->X + (size_t)cq * D * R;
        const stap_cf32 *xc = x + ((size_t)ch * P + q) * R;
        for (int p = 0; p < Pw; p++) {
            const float w = e->win[p];
            for (size_t r = 0; r < R; r++) Xc[p * R + r] = w * xc[p * R + r];
        }
        memset(Xc + (size_t)Pw * R, 0, sizeof(stap_cf32) * (size_t)(D - Pw) * R);
        fftwf_execute_dft(c->fft, (fftwf_complex *)Xc, (fftwf_complex *)Xc);
    }
}

/* Contract step 8 as GEMMs: for Doppler bin d, segment s and tap q,
 * Y[:, d, sL:(s+1)L] (B x L) += conj(W_q) (B x C) * X[:, tap(d,q), sL:(s+1)L] (C x L),
 * W_q[b][c] = w[d,s,b][c*Q + q]; rows of X and Y are D*R apart. The sub-CPI algorithms
 * are the case C*Q channels (the staggered cubes), one tap. The cpu backend runs its own
 * product (stap_la_cgemm: its results never depend on the kernels OpenBLAS picked), the
 * lapack baseline cblas_cgemm. */
static void apply_weights(stap_engine *e, cpu_engine *c, const stap_cf32 *W, stap_cf32 *Y)
{
    const int sub = stap_is_subcpi(&e->cfg);
    const int C = e->cfg.channels * (sub ? e->cfg.doppler_order : 1), D = e->cfg.doppler_bins;
    const int Q = sub ? 1 : e->cfg.doppler_order;
    const int S = e->cfg.segments, L = e->L, N = e->N, B = e->B;
    const size_t R = e->cfg.range_gates;
    const stap_cf32 one = 1.0f, zero = 0.0f;
    const int vendor = e->cfg.backend == STAP_BACKEND_LAPACK; /* the baseline: all OpenBLAS */
#pragma omp parallel num_threads(c->threads)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        stap_cf32 *wc = c->wc + (size_t)t * B * C;
#pragma omp for collapse(2) schedule(static)
        for (int d = 0; d < D; d++)
            for (int s = 0; s < S; s++) {
                const stap_cf32 *w = W + ((size_t)d * S + s) * B * N;
                for (int q = 0; q < Q; q++) {
                    for (int b = 0; b < B; b++)
                        for (int ch = 0; ch < C; ch++) wc[b * C + ch] = conjf(w[(size_t)b * N + ch * Q + q]);
                    const stap_cf32 *xq = c->X + (size_t)stap_tap_bin(d, q, Q, D) * R + (size_t)s * L;
                    stap_cf32 *ys = Y + (size_t)d * R + (size_t)s * L;
                    if (vendor)
                        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, L, C, &one, wc, C,
                                    xq, (int)((size_t)D * R), q ? &one : &zero, ys, (int)((size_t)D * R));
                    else
                        stap_la_cgemm(B, L, C, wc, C, xq, (size_t)D * R, q > 0, ys, (size_t)D * R);
                }
            }
    }
}

static int first_nonfinite(const stap_cf32 *x, size_t n, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(crealf(x[i])) || !isfinite(cimagf(x[i]))) {
            *at = i;
            return 1;
        }
    return 0;
}

static int compute(stap_engine *e, cpu_engine *c, cpu_slot *sl, const stap_cf32 *cube, stap_error *err)
{
    double *t = sl->stage_ms;
    size_t at;
    if (first_nonfinite(cube, (size_t)e->cfg.channels * e->cfg.pulses * e->cfg.range_gates, &at))
        return stap_engine_fail_input(e, at, err);
    double t0 = stap_now_ms();
    const stap_algo_stages *al = stap_algo_stages_of(&e->cfg);
    doppler_filter(e, c, cube);
    double t1 = stap_now_ms();
    if (al->cpu_training) al->cpu_training(e, c->X, cube, c->T, c->threads);
    double t2 = stap_now_ms();
    stap_la_timing lt = {0};
    long long q0, g0;
    stap_la_qr_counts(c->la, &q0, &g0);
    int st = al->cpu_weights(e, c->la, c->T, c->Wt, sl->W, &lt, err);
    stap_la_qr_counts(c->la, &sl->qr_cholqr2, &sl->qr_guarded);
    sl->qr_cholqr2 -= q0;
    sl->qr_guarded -= g0;
    double t3 = stap_now_ms();
    if (st) {
        if (st == STAP_ENUMERIC && stap_is_subcpi(&e->cfg))
            stap_error_prefix(err, "adaptive weights (batch item = segment)");
        else if (st == STAP_ENUMERIC)
            stap_error_prefix(err, "adaptive weights (batch item = Doppler bin x %d segments + segment)",
                              e->cfg.segments);
        return st;
    }
    /* The conditioning of every factor (R is left in T by the CPU backends). */
    sl->diag_ratio = 1.0f;
    sl->diag_ratio_item = 0;
    const long long mats = stap_training_matrices(&e->cfg);
    for (long long k = 0; k < mats; k++) {
        const stap_cf32 *Rk = c->T + (size_t)k * e->M * e->Nt;
        float lo = INFINITY, hi = 0;
        for (int i = 0; i < e->Nt; i++) {
            const float a = cabsf(Rk[(size_t)i * e->M + i]);
            lo = fminf(lo, a);
            hi = fmaxf(hi, a);
        }
        const float r = hi > 0 ? lo / hi : 0;
        if (r < sl->diag_ratio) {
            sl->diag_ratio = r;
            sl->diag_ratio_item = (int)(k % e->batch); /* JDL: the beam is not reported;
                                                          sub-CPI: item = segment (bin 0) */
        }
    }
    /* No silent NaN: a weight that is not finite is a processing error. */
    if (first_nonfinite(sl->W, stap_weights_count(&e->cfg, e->B), &at))
        return stap_engine_fail_weight(e, at, err);
    double t4 = stap_now_ms();
    apply_weights(e, c, sl->W, sl->Y);
    double t5 = stap_now_ms();
    sl->ndet = 0;
    if (c->cfar || c->adaptive) {
        const stap_detection *d;
        size_t n;
        st = c->cfar ? stap_cfar_plan_execute(c->cfar, sl->Y, &d, &n, err)
                     : stap_engine_detect_run(e, c->adaptive, c->X, c->T, sl->Y, &d, &n, err);
        if (st) return st;
        if (n > sl->det_cap) {
            stap_detection *nd = realloc(sl->det, sizeof *nd * n);
            if (!nd) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", n);
            sl->det = nd;
            sl->det_cap = n;
        }
        if (n) memcpy(sl->det, d, sizeof *d * n);
        sl->ndet = n;
    }
    double t6 = stap_now_ms();
    t[STAP_STAGE_COPY_IN] = 0;
    t[STAP_STAGE_DOPPLER] = t1 - t0;
    t[STAP_STAGE_TRAINING] = t2 - t1;
    t[STAP_STAGE_QR] = lt.qr_ms;
    t[STAP_STAGE_WEIGHTS] = (t3 - t2 - lt.qr_ms) + (t4 - t3); /* solves + finiteness check */
    t[STAP_STAGE_APPLY] = t5 - t4;
    t[STAP_STAGE_DETECT] = t6 - t5;
    t[STAP_STAGE_COPY_OUT] = 0;
    return STAP_OK;
}

static int cpu_submit(stap_engine *e, int slot, const void *cube, stap_error *err)
{
    cpu_engine *c = e->impl;
    cpu_slot *sl = &c->slot[slot];
    sl->submit_ms = stap_now_ms();
    stap_error_clear(&sl->err);
    sl->status = compute(e, c, sl, cube, &sl->err);
    sl->done_ms = stap_now_ms();
    return STAP_OK; /* a failed CPI is reported by collect, like the GPU engine's */
}

static int cpu_collect(stap_engine *e, int slot, stap_cpi_result *res, stap_error *err)
{
    cpu_engine *c = e->impl;
    cpu_slot *sl = &c->slot[slot];
    if (sl->status) {
        if (err) *err = sl->err;
        return sl->status;
    }
    res->weights = e->opt.keep_weights ? sl->W : NULL;
    res->output = e->opt.keep_output ? sl->Y : NULL;
    res->detections = sl->ndet ? sl->det : NULL;
    res->detection_count = sl->ndet;
    memcpy(res->stage_ms, sl->stage_ms, sizeof res->stage_ms);
    res->submit_ms = sl->submit_ms;
    res->done_ms = sl->done_ms;
    res->diag_ratio = sl->diag_ratio;
    res->diag_ratio_item = sl->diag_ratio_item;
    res->qr_cholqr2 = sl->qr_cholqr2;
    res->qr_guarded = sl->qr_guarded;
    return STAP_OK;
}

static void *cpu_host_alloc(stap_engine *e, size_t bytes) { return fftwf_malloc(bytes ? bytes : 1); }
static void cpu_host_free(stap_engine *e, void *p) { fftwf_free(p); }

static int cpu_doppler(stap_engine *e, int slot, stap_cf32 *X, stap_error *err)
{
    cpu_engine *c = e->impl;
    const size_t C = e->cfg.channels, DR = (size_t)e->cfg.doppler_bins * e->cfg.range_gates;
    /* sub-CPI: the staggered cube of pulse 0 of each channel */
    const size_t Q = stap_is_subcpi(&e->cfg) ? (size_t)e->cfg.doppler_order : 1;
    for (size_t ch = 0; ch < C; ch++) memcpy(X + ch * DR, c->X + ch * Q * DR, sizeof(stap_cf32) * DR);
    return STAP_OK;
}

static size_t cpu_memory_bytes(const stap_engine *e)
{
    const stap_config *cfg = &e->cfg;
    const size_t Q = stap_is_subcpi(cfg) ? (size_t)cfg->doppler_order : 1;
    size_t x = sizeof(stap_cf32) * (size_t)cfg->channels * Q * cfg->doppler_bins * cfg->range_gates;
    size_t t = sizeof(stap_cf32) * (size_t)stap_training_matrices(cfg) * e->M * e->Nt;
    if (stap_engine_needs_wt(cfg)) t += sizeof(stap_cf32) * (size_t)e->B * e->batch * e->Nt;
    t += sizeof(stap_cf32) * (size_t)e->threads * e->B * cfg->channels *
         (stap_is_subcpi(cfg) ? (size_t)cfg->doppler_order : 1); /* wc */
    size_t per = sizeof(stap_cf32) * (stap_weights_count(cfg, e->B) + stap_output_count(cfg, e->B));
    return x + t + per * e->opt.slots;
}

const stap_engine_ops stap_engine_cpu_ops = {
    "cpu", cpu_create, cpu_destroy, cpu_submit, cpu_collect, cpu_host_alloc, cpu_host_free,
    cpu_doppler, cpu_memory_bytes,
};
