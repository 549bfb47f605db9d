/* rtstap/linalg.h: rtstap's embedded batched linear-algebra core (complex single precision).
 * One API over several backends: cpu (own Householder, OpenMP across the batch),
 * lapack (LAPACKE cgeqrf/ctrtrs on OpenBLAS, one matrix per thread), gpu (own CUDA
 * kernels, kernels/), cublas (cublasCgeqrfBatched, the vendor baseline).
 *
 * Conventions
 *  - Matrices are column-major (LAPACK layout) with a leading dimension; a batch is
 *    one base pointer plus a stride (in elements) between consecutive matrices.
 *  - Host pointers everywhere in this header; GPU backends copy in and out and keep
 *    their device buffers in the context between calls.
 *  - Every function returns STAP_OK or a stap_status code with err->msg filled.
 */
#ifndef RTSTAP_LINALG_H
#define RTSTAP_LINALG_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stap_backend {
    STAP_BACKEND_AUTO = 0, /* gpu when a CUDA device is usable, else cpu        */
    STAP_BACKEND_CPU,      /* own Householder QR, OpenMP across the batch       */
    STAP_BACKEND_LAPACK,   /* LAPACKE on OpenBLAS, one matrix per thread        */
    STAP_BACKEND_GPU,      /* own CUDA kernels                                  */
    STAP_BACKEND_CUBLAS,   /* cublasCgeqrfBatched + cublasCtrsmBatched          */
    STAP_BACKEND_COUNT
} stap_backend;

/* "auto", "cpu", "lapack", "gpu", "cublas" */
const char *stap_backend_name(stap_backend b);
/* Parse a backend name; returns STAP_OK or STAP_EINVAL. */
int stap_backend_parse(const char *name, stap_backend *out, stap_error *err);
/* STAP_OK when backend b can run in this process; otherwise a code and err says why in
 * plain words, CUDA's own in parentheses (e.g. "... built without CUDA support", "no CUDA
 * driver (...)", "no CUDA device (...)"). AUTO is always available. */
int stap_backend_available(stap_backend b, stap_error *err);
/* Make CUDA device `device` (0-based, as CUDA numbers them: CUDA_VISIBLE_DEVICES applies)
 * the current one of the calling thread, for every GPU context and engine created after it
 * on this thread (rtstap creates them all on its main thread). STAP_EINVAL when there is no
 * such device (err gives the count), STAP_EDEVICE when CUDA is unusable, STAP_EUNSUPPORTED in a
 * build without CUDA. */
int stap_la_gpu_select(int device, stap_error *err);
/* The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies): STAP_OK with *devices
 * >= 1; else 0 devices and STAP_EDEVICE (no device, no driver) or STAP_EUNSUPPORTED (a build
 * without CUDA, or the GPU library not loadable), err saying why. A thread that calls
 * stap_la_gpu_select(k) then creates and runs its engines on device k: one thread per
 * device runs every GPU of a host in one process. */
int stap_la_gpu_count(int *devices, stap_error *err);
/* The file of the GPU backends' library this process loaded (found beside librtstap, or
 * beside the program or in its ../lib when librtstap is linked in statically, then by the
 * loader's search), or "" when none is loaded yet or none could be. */
const char *stap_la_gpu_library(void);

/* Time spent inside a call, by phase, in milliseconds (wall clock for CPU backends,
 * CUDA events for GPU ones; transfer is host<->device copying, 0 on the CPU). */
typedef struct stap_la_timing {
    double qr_ms;
    double weights_ms;
    double transfer_ms;
} stap_la_timing;

typedef struct stap_la_ctx stap_la_ctx;

/* Create a context for backend b (AUTO resolves here; stap_la_ctx_backend tells which).
 * threads: CPU threads to use (0 = all available). */
int stap_la_ctx_create(stap_la_ctx **ctx, stap_backend b, int threads, stap_error *err);
void stap_la_ctx_destroy(stap_la_ctx *ctx);
stap_backend stap_la_ctx_backend(const stap_la_ctx *ctx);
/* CPU threads the context uses (>= 1). */
int stap_la_ctx_threads(const stap_la_ctx *ctx);

/* Batched QR: for each of batch matrices A_k (m x n, m >= n >= 1, column-major,
 * leading dimension lda >= m, A_k = A + k*stride_a), compute the Householder QR and
 * leave R (n x n, upper triangular) in the upper triangle of A_k. What is left below
 * the diagonal is unspecified. R's diagonal follows LAPACK's sign convention
 * (real, any sign); only |R_ii| is unique. */
int stap_la_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
               stap_error *err);

/* Batched MVDR weights from triangular factors: for each k, with R_k = R + k*stride_r
 * (upper n x n in a column-major array with leading dimension ldr) and each of the
 * nbeams steering vectors v_b (row b of V, V is nbeams x n row-major, shared by the
 * whole batch), solve R_k^H R_k z = v_b (two triangular solves) and set
 * w = z / (v_b^H z), so that w^H v_b = 1.  W is batch x nbeams x n (row-major:
 * W[(k*nbeams + b)*n + j]).  A zero or non-finite diagonal of R_k is reported as
 * STAP_ENUMERIC naming k; W is then unspecified. */
int stap_la_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                    int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);

/* stap_la_qr followed by stap_la_weights on the same batch; a GPU backend keeps R on the
 * device between the two (and may fuse them). A is used as workspace: its contents
 * afterwards are unspecified (CPU backends leave R there, GPU backends do not copy R
 * back). timing may be NULL. */
int stap_la_adaptive_weights(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                             ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                             stap_la_timing *timing, stap_error *err);

/* ---- the factor: Householder or CholeskyQR2 (issue 47; docs/processing.md "QR factor") ----
 * householder: the backend's Householder QR (the default).
 * cholqr2:     CholeskyQR2, R1 = chol(T^H T), Q1 = T R1^-1, R = chol(Q1^H Q1) R1 — all but
 *              n^3 of its work in matrix products; the cpu backend (rtstap's own code,
 *              linalg/cholqr_cpu.c) and the gpu backend (kernels/cholqr.cu: a block a matrix in
 *              shared memory, the products on the tensor cores in 3xTF32; a shape that does not fit there, n > 128 or m n too
 *              large, is factored by Householder and not counted). Guarded: a matrix whose Cholesky breaks down, or whose R
 *              has min|R_ii| / max|R_ii| < STAP_CHOLQR2_MIN_RATIO, is refactored by Householder
 *              in the same call, and counted (stap_la_qr_counts). R's diagonal is real and
 *              positive; only |R_ii| and R^H R are comparable with Householder's R.
 * cholqr:      CholeskyQR in one pass, mixed precision: G = T^H T accumulated in double
 *              (each product of two floats exact), R = chol(G) in double, rounded to float
 *              (Yamazaki, Tomov and Dongarra, "Mixed-precision Cholesky QR factorization and
 *              its case studies on multicore CPU with multiple GPUs", SISC 2015). Its weights
 *              are as accurate as Householder's (test_pipeline's 90 dB against double); with
 *              a float Gram they were not (62-89 dB on jammed cubes: the Gram's rounding
 *              costs cond(T)^2 u, docs/processing.md "QR factor"). The cpu and gpu backends
 *              (gpu: kernels/cholqr.cu, the Gram on the FP64 tensor cores, n <= 96; a larger
 *              n by Householder); the same guard as cholqr2, and a matrix whose R does not
 *              fit a float is refactored by Householder too.
 * auto:        the faster where it was measured so (stap_la_qr_resolve): on the cpu backend
 *              cholqr2 for n <= STAP_CHOLQR2_AUTO_MAX_N, m >= STAP_CHOLQR2_AUTO_ROWS n; on
 *              the gpu backend cholqr for STAP_CHOLQR_GPU_AUTO_MIN_N <= n <= _MAX_N (the
 *              GPU engine: where its fused kernel takes the shape, plain objects only);
 *              householder elsewhere and on every other backend. */
typedef enum stap_qr_method {
    STAP_QR_HOUSEHOLDER = 0,
    STAP_QR_CHOLQR2,
    STAP_QR_AUTO,
    STAP_QR_CHOLQR, /* after auto: the values before it keep their numbers */
    STAP_QR_COUNT
} stap_qr_method;
/* The guard's threshold on min|R_ii| / max|R_ii|, cholqr2 and cholqr alike (docs/processing.md
 * "QR factor": below it cond(T) > 1 / ratio exceeds FP32 CholeskyQR2's reach, u^-1/2 ~ 4 000,
 * by a margin). */
#define STAP_CHOLQR2_MIN_RATIO 5e-4
/* auto on the cpu backend: cholqr2 for n <= STAP_CHOLQR2_AUTO_MAX_N and m >= STAP_CHOLQR2_AUTO_ROWS
 * * n only (measured with bench-qr, docs/processing.md "QR factor": the own Householder is the
 * faster at every preset shape and at n >= 32; cholqr2 by 3-15 % for n <= 16, m >= 64 n) */
#define STAP_CHOLQR2_AUTO_ROWS 64
#define STAP_CHOLQR2_AUTO_MAX_N 16
/* auto on the gpu backend: cholqr for STAP_CHOLQR_GPU_AUTO_MIN_N <= n <= 96 (measured on an
 * H200, 2026-12-04, docs/benchmarks.md "cholqr fused": bench-qr 240x66 62.9 against 73.7 us,
 * 192x96 86.8 against 109.7; the engine's hard and medium presets 15-19 % more CPIs/s; 80x16
 * 37.1 against 13.9 us, so not small n; 16 < n < 64 not measured) */
#define STAP_CHOLQR_GPU_AUTO_MIN_N 64
#define STAP_CHOLQR_GPU_AUTO_MAX_N 96
/* "householder", "cholqr2", "auto", "cholqr" */
const char *stap_qr_method_name(stap_qr_method q);
/* Parse a factor name; STAP_OK or STAP_EINVAL. */
int stap_qr_method_parse(const char *name, stap_qr_method *out, stap_error *err);
/* The factor of the later stap_la_qr, stap_la_adaptive_weights and stap_la_bench_qr calls on
 * ctx (householder when never set). cholqr2 or cholqr on a backend other than cpu and gpu:
 * STAP_EUNSUPPORTED. */
int stap_la_set_qr(stap_la_ctx *ctx, stap_qr_method q, stap_error *err);
/* The gpu backend's QR dispatch switches, for comparisons (A/B runs); all zero = the
 * defaults (stap_engine_tuning carries them for an engine). */
enum {
    STAP_QR_DISPATCH_MODEL = 0,   /* the model's choice: a fused QR + weights kernel, or the QR
                                     alone then the weight kernel where predicted faster     */
    STAP_QR_DISPATCH_TABLE = 1,   /* the table's first fit (the dispatch before the model)  */
    STAP_QR_DISPATCH_FUSED = 2,   /* always the model's fused kernel where one fits         */
    STAP_QR_DISPATCH_SEPARATE = 3 /* always the QR alone, then the weight kernel            */
};
typedef struct stap_la_tuning {
    int qr_dispatch; /* STAP_QR_DISPATCH_*                                                  */
    int fused_subst; /* 1: the fused kernels solve the weights by substitution (as before the
                        blocked solve); 0: the blocked solve                                */
} stap_la_tuning;
/* The switches of the later calls on ctx (t NULL: the defaults). STAP_EINVAL when out of
 * range. */
int stap_la_set_tuning(stap_la_ctx *ctx, const stap_la_tuning *t, stap_error *err);
/* STAP_OK when every switch of t is in range, else STAP_EINVAL naming it. */
int stap_la_tuning_check(const stap_la_tuning *t, stap_error *err);
stap_qr_method stap_la_get_qr(const stap_la_ctx *ctx);
/* The factor ctx runs for a batch of m x n matrices: householder, cholqr2 or cholqr (auto
 * resolved: on the cpu backend cholqr2 where n <= STAP_CHOLQR2_AUTO_MAX_N and m >=
 * STAP_CHOLQR2_AUTO_ROWS * n, measured). */
stap_qr_method stap_la_qr_resolve(const stap_la_ctx *ctx, int m, int n);
/* Matrices ctx factored by cholqr2 or cholqr (kept) and refactored by Householder by the
 * guard, since the context was created. */
void stap_la_qr_counts(const stap_la_ctx *ctx, long long *cholqr2, long long *guarded);

/* ---- the gpu backend's QR variants and its performance model -----------------
 * The gpu backend factors with one of several kernel variants (kernels/dispatch.cu) and
 * picks, per (m, n, batch, beams), the one its performance model predicts fastest
 * (kernels/rtk_model.h, docs/kernels/design.md). These calls expose the variants and the model
 * for `rtstap bench-qr --model`. Without CUDA there are no variants (count 0) and every
 * other call returns STAP_EUNSUPPORTED. */
typedef struct stap_la_gpu_variant {
    char name[32];        /* e.g. "flw16x22_15x3"                                     */
    int fits;             /* 1: can factor m x n                                      */
    int fused;            /* 1: solves the weights in the same kernel                 */
    double predicted_us;  /* the model's time for the batch (QR alone when nbeams is 0,
                             else QR + nbeams fused weights); < 0 when not predicted  */
    double separate_us;   /* nbeams > 0: the QR alone with this variant, then the weight
                             kernel; < 0 when not predicted                            */
} stap_la_gpu_variant;
int stap_la_gpu_variant_count(void);
/* Variant v for `batch` m x n factorizations (+ nbeams weight solves when > 0). */
int stap_la_gpu_variant_query(int v, int m, int n, int batch, int nbeams, stap_la_gpu_variant *out,
                              stap_error *err);
/* The variant the gpu backend uses for that batch (the model's choice); with nbeams > 0,
 * *separate (when not NULL) = 1 where it runs the QR alone with *v and the weight kernel
 * after it (predicted faster than every fused kernel), 0 where *v fuses the weights; t: the
 * dispatch switches (NULL: the defaults). */
int stap_la_gpu_variant_choice(int m, int n, int batch, int nbeams, const stap_la_tuning *t,
                               int *v, int *separate, stap_error *err);
/* Force variant v (-1: back to the model's choice) for the later stap_la_qr,
 * stap_la_adaptive_weights and stap_la_bench_qr calls on ctx (backend gpu): the tuning and test
 * hook. STAP_EINVAL when v is out of range or ctx is not a gpu context; a forced variant
 * that does not fit a shape makes those calls fail with STAP_EINVAL. */
int stap_la_gpu_force_variant(stap_la_ctx *ctx, int v, stap_error *err);
/* As stap_la_gpu_force_variant; separate != 0: QR + weights run the forced variant's QR alone and
 * the weight kernel after it even where the variant fuses them. */
int stap_la_gpu_force_plan(stap_la_ctx *ctx, int v, int separate, stap_error *err);

/* ---- device-resident timing (bench-qr) ---------------------------------------
 * Time the backend's batched QR on data already resident where the backend computes
 * (device memory for gpu/cublas; host memory for cpu/lapack). nsets input sets
 * (each batch matrices m x n, lda = m, contiguous) are uploaded once and rotated
 * through so that caches do not flatter the result; each timed run factors a fresh
 * copy of one set. Returns the median over `repeat` runs in microseconds, and R of
 * set 0 (batch x m x n, as stap_la_qr leaves it) in R_out when R_out != NULL.
 * with_weights != 0 times stap_la_adaptive_weights (QR + nbeams solves) instead. */
int stap_la_bench_qr(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                     int repeat, int with_weights, int nbeams, const stap_cf32 *V,
                     double *median_us, stap_cf32 *R_out, stap_error *err);

/* The kernels the cpu backend runs in this process: "avx2+fma" (x86-64 CPUs with AVX2 and
 * FMA, chosen at run time) or "portable" (the build's target, baseline x86-64 unless built
 * RTSTAP_NATIVE). */
const char *stap_la_cpu_kernels(void);
/* Choose them for the whole process, before any computation: "auto" (the above) or
 * "portable" (the portable copy on an AVX2 machine too: the tests run both; rtstap hands on
 * RTSTAP_CPU_KERNELS). Process-wide, not per engine: the cpu backend's results are bit for
 * bit those of its instruction set, so one process runs one copy. STAP_EINVAL for another
 * name; STAP_EUNSUPPORTED for "portable" in a build with only an AVX2 copy. */
int stap_la_cpu_kernels_select(const char *name, stap_error *err);

/* The cpu backend's complex matrix product (gemm_cpu.c), single-threaded:
 * Y (m x n, rows ldy apart) = A (m x k, rows lda apart) X (k x n, rows ldx apart), plus Y
 * when accumulate != 0. rtstap's own kernels (those stap_la_cpu_kernels names), never the
 * BLAS: the result depends on the CPU's instruction set alone, and each element is the
 * same sum in the same order whatever m and n are. */
void stap_la_cgemm(int m, int n, int k, const stap_cf32 *A, int lda, const stap_cf32 *X, size_t ldx,
                   int accumulate, stap_cf32 *Y, size_t ldy);

/* ---- the BLAS under the lapack backend (blas_info.c) ------------------------------ */
typedef struct stap_la_blas_info {
    char library[192];      /* openblas_get_config(): version, build options, core   */
    char core[32];          /* the kernels OpenBLAS runs (openblas_get_corename())   */
    int threads;            /* OpenBLAS's own threads now (the backends set 1)       */
    char cpu_model[128];    /* /proc/cpuinfo "model name"                            */
    char cpu_features[64];  /* e.g. "avx2 fma avx512f/bw/vl/dq"                     */
    const char *better_core;/* an OPENBLAS_CORETYPE that fits the CPU when OpenBLAS
                               chose kernels without AVX2 on a CPU that has it, else NULL.
                               OpenBLAS reads the variable only when it loads: the
                               program has to restart itself with it (app/main.c). */
} stap_la_blas_info;
void stap_la_blas_query(stap_la_blas_info *info);

#ifdef __cplusplus
}
#endif

#endif
