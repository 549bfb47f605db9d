/* Internal backend interface of linalg/: the context and the per-backend entry points
 * that linalg.c dispatches to. Not part of the public API. */
#ifndef LA_INTERNAL_H
#define LA_INTERNAL_H

#include "rt_hidden.h"
#include "linalg.h"

struct stap_la_ctx {
    stap_backend backend; /* resolved, never AUTO */
    int threads;        /* CPU threads (>= 1)   */
    void *gpu;          /* GPU backend state (device buffers, handles, stream) */
    stap_qr_method qr;  /* the factor asked (stap_la_set_qr)                   */
    long long qr_cholqr2, qr_guarded; /* stap_la_qr_counts                     */
    stap_la_tuning tune; /* the dispatch switches (stap_la_set_tuning)              */
};

/* auto's rule on the gpu backend (linalg.h, STAP_CHOLQR_GPU_AUTO_*), for stap_la_qr_resolve and
 * the GPU library alike (its own calls and la_dev_weights_create, which also asks that its
 * fused cholqr kernel takes the shape) */
static inline stap_qr_method la_qr_auto_gpu(int m, int n)
{
    return n >= STAP_CHOLQR_GPU_AUTO_MIN_N && n <= STAP_CHOLQR_GPU_AUTO_MAX_N && m >= n ? STAP_QR_CHOLQR
                                                                                       : STAP_QR_HOUSEHOLDER;
}

/* cpu: own Householder (qr_cpu.c) */
RT_INTERNAL int stap_la_cpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err);
RT_INTERNAL int stap_la_cpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                   ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);
/* cpu: own CholeskyQR (passes 1: cholqr, 2: cholqr2) with the Householder guard (cholqr_cpu.c) */
RT_INTERNAL int stap_la_cpu_cholqr(stap_la_ctx *ctx, int passes, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
                  stap_error *err);
/* 1 where the cpu backend runs its AVX2 + FMA copies (qr_cpu_avx2.c, gemm_cpu_avx2.c);
 * defined on x86-64 builds with RTSTAP_CPU_AVX2 only */
RT_INTERNAL int stap_la_cpu_use_avx2(void);

/* lapack: LAPACKE cgeqrf / ctrtrs on OpenBLAS (qr_lapack.c) */
RT_INTERNAL int stap_la_lapack_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                 ptrdiff_t stride_a, stap_error *err);
RT_INTERNAL int stap_la_lapack_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                      ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);

/* gpu and cublas (gpu_dispatch.cu when built with CUDA, gpu_loader.c, which loads it, answering STAP_EUNSUPPORTED without it).
 * stap_la_gpu_init fills ctx->gpu; stap_la_gpu_fini releases it. */
RT_INTERNAL int stap_la_gpu_probe(stap_error *err);
RT_INTERNAL int stap_la_gpu_init(stap_la_ctx *ctx, stap_error *err);
RT_INTERNAL void stap_la_gpu_fini(stap_la_ctx *ctx);
RT_INTERNAL int stap_la_gpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err);
RT_INTERNAL int stap_la_gpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);
RT_INTERNAL int stap_la_gpu_adaptive_weights(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                            stap_la_timing *timing, stap_error *err);
RT_INTERNAL int stap_la_gpu_bench_qr(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const stap_cf32 *V,
                    double *median_us, stap_cf32 *R_out, stap_error *err);


#endif
