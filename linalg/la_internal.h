/* Internal backend interface of linalg/: the context and the per-backend entry points
 * that linalg.c dispatches to. Not part of the public API. */
#ifndef LA_INTERNAL_H
#define LA_INTERNAL_H

#include "linalg.h"

struct la_ctx {
    la_backend backend; /* resolved, never AUTO */
    int threads;        /* CPU threads (>= 1)   */
    void *gpu;          /* GPU backend state (device buffers, handles, stream) */
};

/* cpu: own Householder (qr_cpu.c) */
int la_cpu_qr(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda, ptrdiff_t stride_a,
              rt_error *err);
int la_cpu_weights(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr,
                   ptrdiff_t stride_r, int nbeams, const cf32 *V, cf32 *W, rt_error *err);

/* lapack: LAPACKE cgeqrf / ctrtrs on OpenBLAS (qr_lapack.c) */
int la_lapack_qr(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda,
                 ptrdiff_t stride_a, rt_error *err);
int la_lapack_weights(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr,
                      ptrdiff_t stride_r, int nbeams, const cf32 *V, cf32 *W, rt_error *err);

/* gpu and cublas (gpu_dispatch.cu when built with CUDA, gpu_none.c otherwise).
 * la_gpu_init fills ctx->gpu; la_gpu_fini releases it. */
int la_gpu_probe(rt_error *err);
int la_gpu_init(la_ctx *ctx, rt_error *err);
void la_gpu_fini(la_ctx *ctx);
int la_gpu_qr(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda, ptrdiff_t stride_a,
              rt_error *err);
int la_gpu_weights(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const cf32 *V, cf32 *W, rt_error *err);
int la_gpu_adaptive_weights(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const cf32 *V, cf32 *W,
                            la_timing *timing, rt_error *err);
int la_gpu_bench_qr(la_ctx *ctx, int m, int n, int batch, const cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const cf32 *V,
                    double *median_us, cf32 *R_out, rt_error *err);

/* Shared helpers (linalg.c) */
int la_check_qr_args(int m, int n, int batch, const void *A, int lda, ptrdiff_t stride_a,
                     rt_error *err);
int la_check_weights_args(int n, int batch, const void *R, int ldr, ptrdiff_t stride_r,
                          int nbeams, const void *V, const void *W, rt_error *err);

#endif
