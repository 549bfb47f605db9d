/* linalg.c: backend selection, argument checks and dispatch of the batched
 * linear-algebra API (linalg.h) to the cpu, lapack and GPU backends. */
#include "la_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const backend_names[STAP_BACKEND_COUNT] = {"auto", "cpu", "lapack", "gpu",
                                                            "cublas"};

const char *stap_backend_name(stap_backend b)
{
    return (b >= 0 && b < STAP_BACKEND_COUNT) ? backend_names[b] : "invalid";
}

int stap_backend_parse(const char *name, stap_backend *out, stap_error *err)
{
    for (int b = 0; b < STAP_BACKEND_COUNT; b++)
        if (name && strcasecmp(name, backend_names[b]) == 0) {
            *out = (stap_backend)b;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown backend '%s' (expected auto, cpu, lapack, gpu or cublas)",
                     name ? name : "");
}

static const char *const qr_names[STAP_QR_COUNT] = {"householder", "cholqr2", "auto", "cholqr"};

const char *stap_qr_method_name(stap_qr_method q)
{
    return (q >= 0 && q < STAP_QR_COUNT) ? qr_names[q] : "invalid";
}

int stap_qr_method_parse(const char *name, stap_qr_method *out, stap_error *err)
{
    for (int q = 0; q < STAP_QR_COUNT; q++)
        if (name && strcasecmp(name, qr_names[q]) == 0) {
            *out = (stap_qr_method)q;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown QR factor '%s' (expected householder, cholqr2, cholqr or auto)",
                     name ? name : "");
}

int stap_la_set_qr(stap_la_ctx *ctx, stap_qr_method q, stap_error *err)
{
    if (q < 0 || q >= STAP_QR_COUNT) return stap_fail(err, STAP_EINVAL, "invalid QR factor %d", (int)q);
    if ((q == STAP_QR_CHOLQR2 || q == STAP_QR_CHOLQR) && ctx->backend != STAP_BACKEND_CPU &&
        ctx->backend != STAP_BACKEND_GPU)
        return stap_fail(err, STAP_EUNSUPPORTED,
                         "the %s factor runs on the cpu and gpu backends only (backend %s has householder)",
                         stap_qr_method_name(q), stap_backend_name(ctx->backend));
    ctx->qr = q;
    return STAP_OK;
}

stap_qr_method stap_la_get_qr(const stap_la_ctx *ctx) { return ctx->qr; }

int stap_la_tuning_check(const stap_la_tuning *t, stap_error *err)
{
    if (t && (t->qr_dispatch < STAP_QR_DISPATCH_MODEL || t->qr_dispatch > STAP_QR_DISPATCH_SEPARATE))
        return stap_fail(err, STAP_EINVAL, "QR dispatch %d: expected 0..3 (model, table, fused, "
                         "separate)", t->qr_dispatch);
    if (t && t->fused_subst != 0 && t->fused_subst != 1)
        return stap_fail(err, STAP_EINVAL, "fused solver %d: expected 0 (blocked) or 1 (substitution)",
                         t->fused_subst);
    return STAP_OK;
}

int stap_la_set_tuning(stap_la_ctx *ctx, const stap_la_tuning *t, stap_error *err)
{
    int st = stap_la_tuning_check(t, err);
    if (st) return st;
    ctx->tune = t ? *t : (stap_la_tuning){0, 0};
    return STAP_OK;
}

stap_qr_method stap_la_qr_resolve(const stap_la_ctx *ctx, int m, int n)
{
    if (ctx->qr == STAP_QR_HOUSEHOLDER) return STAP_QR_HOUSEHOLDER;
    if (ctx->qr == STAP_QR_CHOLQR2)
        return ctx->backend == STAP_BACKEND_CPU || ctx->backend == STAP_BACKEND_GPU ? STAP_QR_CHOLQR2
                                                                                    : STAP_QR_HOUSEHOLDER;
    if (ctx->qr == STAP_QR_CHOLQR)
        return ctx->backend == STAP_BACKEND_CPU || ctx->backend == STAP_BACKEND_GPU ? STAP_QR_CHOLQR
                                                                                    : STAP_QR_HOUSEHOLDER;
    if (ctx->backend == STAP_BACKEND_GPU) return la_qr_auto_gpu(m, n); /* auto: where measured the faster */
    if (ctx->backend != STAP_BACKEND_CPU) return STAP_QR_HOUSEHOLDER; /* auto: not measured faster there */
    return n <= STAP_CHOLQR2_AUTO_MAX_N && (long long)m >= (long long)STAP_CHOLQR2_AUTO_ROWS * n
               ? STAP_QR_CHOLQR2
               : STAP_QR_HOUSEHOLDER;
}

void stap_la_qr_counts(const stap_la_ctx *ctx, long long *cholqr2, long long *guarded)
{
    if (cholqr2) *cholqr2 = ctx->qr_cholqr2;
    if (guarded) *guarded = ctx->qr_guarded;
}

int stap_backend_available(stap_backend b, stap_error *err)
{
    switch (b) {
    case STAP_BACKEND_AUTO:
    case STAP_BACKEND_CPU:
    case STAP_BACKEND_LAPACK: return STAP_OK;
    case STAP_BACKEND_GPU:
    case STAP_BACKEND_CUBLAS: return stap_la_gpu_probe(err);
    default: return stap_fail(err, STAP_EINVAL, "invalid backend %d", (int)b);
    }
}

int stap_la_ctx_create(stap_la_ctx **out, stap_backend b, int threads, stap_error *err)
{
    *out = NULL;
    if (b == STAP_BACKEND_AUTO) {
        stap_error probe;
        b = stap_la_gpu_probe(&probe) == STAP_OK ? STAP_BACKEND_GPU : STAP_BACKEND_CPU;
    }
    int st = stap_backend_available(b, err);
    if (st) return st;
    stap_la_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return stap_fail(err, STAP_ENOMEM, "out of memory creating the linalg context");
    ctx->backend = b;
#ifdef _OPENMP
    ctx->threads = threads > 0 ? threads : omp_get_max_threads();
#else
    ctx->threads = 1;
    (void)threads;
#endif
    if (b == STAP_BACKEND_GPU || b == STAP_BACKEND_CUBLAS) {
        st = stap_la_gpu_init(ctx, err);
        if (st) {
            free(ctx);
            return st;
        }
    }
    *out = ctx;
    return STAP_OK;
}

void stap_la_ctx_destroy(stap_la_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->gpu) stap_la_gpu_fini(ctx);
    free(ctx);
}

stap_backend stap_la_ctx_backend(const stap_la_ctx *ctx) { return ctx->backend; }
int stap_la_ctx_threads(const stap_la_ctx *ctx) { return ctx->threads; }

static int la_check_qr_args(int m, int n, int batch, const void *A, int lda, ptrdiff_t stride_a,
                            stap_error *err)
{
    if (n < 1 || m < n)
        return stap_fail(err, STAP_EINVAL, "QR needs m >= n >= 1 (got m=%d, n=%d)", m, n);
    if (batch < 0) return stap_fail(err, STAP_EINVAL, "negative batch count %d", batch);
    if (lda < m) return stap_fail(err, STAP_EINVAL, "leading dimension %d < m=%d", lda, m);
    if (batch > 1 && stride_a < (ptrdiff_t)lda * n)
        return stap_fail(err, STAP_EINVAL, "batch stride %td is smaller than one matrix (%d x %d)",
                         stride_a, lda, n);
    if (batch > 0 && !A) return stap_fail(err, STAP_EINVAL, "null matrix pointer");
    return STAP_OK;
}

static int la_check_weights_args(int n, int batch, const void *R, int ldr, ptrdiff_t stride_r,
                                 int nbeams, const void *V, const void *W, stap_error *err)
{
    if (n < 1) return stap_fail(err, STAP_EINVAL, "weights need n >= 1 (got %d)", n);
    if (batch < 0) return stap_fail(err, STAP_EINVAL, "negative batch count %d", batch);
    if (nbeams < 1) return stap_fail(err, STAP_EINVAL, "need at least one beam (got %d)", nbeams);
    if (ldr < n) return stap_fail(err, STAP_EINVAL, "leading dimension %d < n=%d", ldr, n);
    if (batch > 1 && stride_r < (ptrdiff_t)ldr * n)
        return stap_fail(err, STAP_EINVAL, "batch stride %td is smaller than one factor", stride_r);
    if (batch > 0 && (!R || !V || !W)) return stap_fail(err, STAP_EINVAL, "null pointer argument");
    return STAP_OK;
}

int stap_la_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
               stap_error *err)
{
    int st = la_check_qr_args(m, n, batch, A, lda, stride_a, err);
    if (st || batch == 0) return st;
    switch (ctx->backend) {
    case STAP_BACKEND_CPU:
        if (stap_la_qr_resolve(ctx, m, n) != STAP_QR_HOUSEHOLDER)
            return stap_la_cpu_cholqr(ctx, stap_la_qr_resolve(ctx, m, n) == STAP_QR_CHOLQR ? 1 : 2, m, n,
                                      batch, A, lda, stride_a, err);
        return stap_la_cpu_qr(ctx, m, n, batch, A, lda, stride_a, err);
    case STAP_BACKEND_LAPACK: return stap_la_lapack_qr(ctx, m, n, batch, A, lda, stride_a, err);
    default: return stap_la_gpu_qr(ctx, m, n, batch, A, lda, stride_a, err);
    }
}

int stap_la_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                    int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err)
{
    int st = la_check_weights_args(n, batch, R, ldr, stride_r, nbeams, V, W, err);
    if (st || batch == 0) return st;
    switch (ctx->backend) {
    case STAP_BACKEND_CPU:
        return stap_la_cpu_weights(ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err);
    case STAP_BACKEND_LAPACK:
        return stap_la_lapack_weights(ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err);
    default: return stap_la_gpu_weights(ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err);
    }
}

int stap_la_adaptive_weights(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                             ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                             stap_la_timing *timing, stap_error *err)
{
    stap_la_timing t = {0, 0, 0};
    int st = la_check_qr_args(m, n, batch, A, lda, stride_a, err);
    if (!st) st = la_check_weights_args(n, batch, A, lda, stride_a, nbeams, V, W, err);
    if (st || batch == 0) goto done;
    if (ctx->backend == STAP_BACKEND_GPU || ctx->backend == STAP_BACKEND_CUBLAS) {
        st = stap_la_gpu_adaptive_weights(ctx, m, n, batch, A, lda, stride_a, nbeams, V, W, &t, err);
        goto done;
    }
    double t0 = stap_now_ms();
    st = stap_la_qr(ctx, m, n, batch, A, lda, stride_a, err);
    double t1 = stap_now_ms();
    t.qr_ms = t1 - t0;
    if (st) goto done;
    st = stap_la_weights(ctx, n, batch, A, lda, stride_a, nbeams, V, W, err);
    t.weights_ms = stap_now_ms() - t1;
done:
    if (timing) *timing = t;
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int stap_la_bench_qr(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                     int repeat, int with_weights, int nbeams, const stap_cf32 *V, double *median_us,
                     stap_cf32 *R_out, stap_error *err)
{
    if (m < n || n < 1 || batch < 1 || nsets < 1 || repeat < 1 || !sets)
        return stap_fail(err, STAP_EINVAL, "bench: bad arguments (m=%d n=%d batch=%d sets=%d repeat=%d)",
                         m, n, batch, nsets, repeat);
    if (with_weights && (nbeams < 1 || !V))
        return stap_fail(err, STAP_EINVAL, "bench: weights need steering vectors");
    if (ctx->backend == STAP_BACKEND_GPU || ctx->backend == STAP_BACKEND_CUBLAS)
        return stap_la_gpu_bench_qr(ctx, m, n, batch, sets, nsets, repeat, with_weights, nbeams, V,
                               median_us, R_out, err);

    size_t one = (size_t)m * n * batch;
    stap_cf32 *work = malloc(one * sizeof *work);
    stap_cf32 *W = with_weights ? malloc((size_t)batch * nbeams * n * sizeof *W) : NULL;
    double *times = malloc((size_t)repeat * sizeof *times);
    int st = STAP_OK;
    if (!work || !times || (with_weights && !W)) {
        st = stap_fail(err, STAP_ENOMEM, "bench: out of memory");
        goto out;
    }
    for (int r = -1; r < repeat; r++) { /* r = -1: warm-up, not timed */
        int set = (r + nsets) % nsets;
        memcpy(work, sets + one * set, one * sizeof *work);
        double t0 = stap_now_ms();
        if (with_weights)
            st = stap_la_adaptive_weights(ctx, m, n, batch, work, m, (ptrdiff_t)m * n, nbeams, V, W,
                                          NULL, err);
        else
            st = stap_la_qr(ctx, m, n, batch, work, m, (ptrdiff_t)m * n, err);
        double t1 = stap_now_ms();
        if (st) goto out;
        if (r >= 0) times[r] = (t1 - t0) * 1e3;
        if (set == 0 && R_out) memcpy(R_out, work, one * sizeof *work);
    }
    qsort(times, (size_t)repeat, sizeof *times, cmp_double);
    *median_us = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
out:
    free(work);
    free(W);
    free(times);
    return st;
}
