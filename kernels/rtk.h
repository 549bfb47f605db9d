/* rtk: rtstap's CUDA kernels behind a C API — batched complex Householder QR (R only)
 * with a dispatch table from (m, n) to kernel variant, and batched MVDR weight solves.
 *
 * Device pointers are passed as void* (float2 / cuComplex data, column-major, LAPACK
 * layout) and the stream as void* (a cudaStream_t), so that this header also compiles
 * in plain C without the CUDA headers. Launch functions return a cudaError_t value
 * (0 = cudaSuccess); they never print and never synchronize. No type of linalg/ or stap/
 * appears here: kernels/ is below them (docs/architecture.md; linalg/la_device.h builds on it).
 * Design, performance model and measurements: docs/kernels/design.md. */
#ifndef RTK_H
#define RTK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a QR variant keeps the matrix while it factors it. */
typedef enum rtk_storage {
    RTK_REGISTERS = 0, /* 2-D cyclic over the threads' registers, shared memory for
                          the reflector broadcast; one matrix per warp or per block  */
    RTK_SHARED,        /* whole matrix in shared memory, one block per matrix        */
    RTK_GLOBAL,        /* in place in global memory (through L1/L2), any size        */
    RTK_CLUSTER        /* the rows over the register tiles of a thread-block cluster's
                          CTAs (sm_90), one cluster per matrix                        */
} rtk_storage;

/* One row of the QR dispatch table (kernels/dispatch.cu). */
typedef struct rtk_qr_variant {
    const char *name;    /* e.g. "flw16x22_15x3" (thread grid, registers per thread) */
    rtk_storage storage;
    int max_m, max_n;    /* capacity (0 = unbounded; RTK_SHARED: bounded by bytes)  */
    int threads;         /* threads per block                                       */
    int mats_per_block;  /* matrices per block                                      */
    int fused_weights;   /* 1: solves the weights while R is still on-chip          */
    /* RTK_REGISTERS: the template's geometry (kernels/qr_variants.cuh), 0 otherwise: a
       TR x TC thread grid holding RPT x CPT complex values a thread; v kept in
       registers (vreg) or re-read from shared memory */
    int tr, tc, rpt, cpt, vreg;
    int flow; /* the FLOW bits (kernels/qr_variants.cuh): & 1 column steps synchronized per
                 reflector (mbarriers), not per block barrier; & 2048 fused with a solver warp */
} rtk_qr_variant;

int rtk_qr_variant_count(void);
/* Row v of the table, NULL when v is out of range. */
const rtk_qr_variant *rtk_qr_variant_get(int v);
/* 1 when variant v can factor m x n (m >= n >= 1) given the device's per-block
 * shared-memory limit in bytes (cudaDevAttrMaxSharedMemoryPerBlockOptin). */
int rtk_qr_fits(int v, int m, int n, int smem_limit);
/* First fit: the first row of the table that fits m x n (the table is ordered by
 * preference at the tuned sizes); -1 when none fits (not possible for m >= n >= 1: the
 * last row, RTK_GLOBAL, takes any size). The dispatch uses rtk_qr_select_batch, which
 * falls back to this. */
int rtk_qr_select(int m, int n, int smem_limit);

/* What the device gives variant v's kernel: kind 0 = QR alone, 1 = QR + fused weights,
 * 2 = QR + weights gathering its rows (2 needs rtk_qr_can_gather). blocks_per_sm from
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor with the launch's dynamic shared memory
 * (m x n only matters for RTK_SHARED); registers and local (spill) bytes per thread from
 * cudaFuncGetAttributes. Returns a cudaError_t value. */
typedef struct rtk_qr_resources {
    int blocks_per_sm, threads, registers, local_bytes, smem_bytes;
    int cluster_ctas; /* RTK_CLUSTER: CTAs a matrix (its m over the tile's rows)     */
    int clusters;     /* RTK_CLUSTER: clusters of that size resident at once (0: cannot run) */
} rtk_qr_resources;
int rtk_qr_resources_get(int v, int kind, int m, int n, rtk_qr_resources *out);

/* Dispatch by prediction (issue 11 item 5; the model is kernels/rtk_model.h, its H100
 * parameters kernels/qr_model.cu). kind as in rtk_qr_resources_get; nbeams = 0 for the
 * QR alone. rtk_qr_predict: the predicted time in microseconds (a cudaError_t value).
 * rtk_qr_select_batch: the variant predicted fastest among the rows that fit (and, for
 * kind 1 or 2, that fuse or gather; when none does, the kind 0 choice: the QR runs alone and
 * the weights after it); the first-fit choice when none can be predicted. */
int rtk_qr_predict(int v, int kind, int m, int n, int batch, int nbeams, double *us);
/* dispatch (both): RTK_DISPATCH_MODEL (0), or for A/B runs RTK_DISPATCH_TABLE (the table's
 * first fit, the pre-model dispatch), RTK_DISPATCH_FUSED (always the fused choice) or
 * RTK_DISPATCH_SEPARATE (always the QR alone and the weight kernel where n fits it) —
 * stap_la_tuning.qr_dispatch, the same numbers. */
enum { RTK_DISPATCH_MODEL = 0, RTK_DISPATCH_TABLE = 1, RTK_DISPATCH_FUSED = 2, RTK_DISPATCH_SEPARATE = 3 };
int rtk_qr_select_batch(int kind, int m, int n, int batch, int nbeams, int smem_limit, int dispatch);
/* The plan for QR + weights (kind 1, or 2 gathering the rows): rtk_qr_select_batch's fused
 * choice, or, where the model predicts it faster (docs/kernels/journal.md "Fused or not"), the QR
 * alone with the kind-0 choice followed by the weight kernel (for kind 2 after the rows are
 * gathered into matrices): then *separate = 1 and the variant returned is that QR's. With
 * dispatch RTK_DISPATCH_FUSED (or _TABLE) always the fused choice, _SEPARATE always the QR
 * alone and the weight kernel (n <= RTK_WEIGHTS_MAX_N; for A/B runs). kind 0: as
 * rtk_qr_select_batch, *separate = 0. rtk_qr_predict_separate: the prediction of the QR alone
 * with variant v, then the weight kernel (+ the gather for kind 2), in microseconds. */
int rtk_qr_plan_batch(int kind, int m, int n, int batch, int nbeams, int smem_limit,
                      int dispatch, int *separate);
int rtk_qr_predict_separate(int v, int kind, int m, int n, int batch, int nbeams, double *us);
/* Resident blocks an SM holds of the weight kernel for (n, nbeams), as rtk_weights_launch
 * launches it (cudaOccupancyMaxActiveBlocksPerMultiprocessor). A cudaError_t value. */
int rtk_weights_occupancy(int n, int nbeams, int *blocks_per_sm);

/* Batched QR in place: A_k = A + k*stride (m x n, leading dimension lda) is replaced
 * by R in its upper triangle (real diagonal, LAPACK's sign convention beta =
 * -sign(Re alpha) ||x||). Register and shared-memory variants leave everything below
 * the diagonal unchanged; the global variant leaves the reflectors there. */
int rtk_qr_launch(int v, int m, int n, int batch, void *A, int lda, long long stride,
                  void *stream);

/* cudaMalloc for every device buffer of rtk's users (engine, linalg), with a test hook:
 * after rtk_test_hooks_set(N, ...) with N > 0, the N-th call from then on (from 1) fails
 * with cudaErrorMemoryAllocation, as a full device would. Returns a cudaError_t value. */
int rtk_malloc(void **p, size_t bytes);
/* Test hook (issue 29): after rtk_test_hooks_set(..., K) with K > 0, the K-th call from
 * then on (from 1) launches a kernel that traps on `stream` — a real device fault: the
 * context is lost and every later CUDA call fails — and returns 1; otherwise it returns 0. */
int rtk_fault_trap_maybe(void *stream);
/* The two hooks above, process-wide (stap_test_hooks_set, include/rtstap/testing.h, hands
 * them on); 0 = off. Resets both call counts. */
void rtk_test_hooks_set(long long fail_alloc_at, long long trap_at);

/* What the weight solvers report about the triangular factors of a batch. The caller
 * presets the whole struct with cudaMemset(0x7f) (RTK_NO_BAD / RTK_NO_WORST). */
typedef struct rtk_factor_flags {
    int bad_item;             /* lowest item k with a zero or non-finite diagonal of R_k
                                 (atomicMin); RTK_NO_BAD when none                    */
    int guarded;              /* matrices the CholeskyQR guard refactored by Householder
                                 (rtk_qr_guard_launch adds its list's count; the engine
                                 zeroes it each CPI)                                    */
    unsigned long long worst; /* the smallest min_i |R_ii| / max_i |R_ii| over the batch:
                                 (float bits of the ratio) << 32 | k (atomicMin, so ties
                                 go to the lowest k); RTK_NO_WORST when none           */
} rtk_factor_flags;
#define RTK_NO_BAD 0x7f7f7f7f                /* as cudaMemset(0x7f) leaves it         */
#define RTK_NO_WORST 0x7f7f7f7f7f7f7f7fULL

/* QR + MVDR weights with variant v (fused_weights must be 1): for each k and beam b,
 * solve R^H R z = v_b and write w = z / (v_b^H z) to W[(k*nbeams + b)*n + j]; V is
 * nbeams x n row-major. R stays on-chip: A is read, not written (a write-back path cost the
 * fused kernels registers: the 320-row kernel spilled 484 bytes instead of 168; kernels/
 * docs/kernels/journal.md "Fused or not"). A zero or
 * non-finite diagonal of R_k lowers flags->bad_item to k, and flags->worst takes the
 * diagonal ratio of every factor (rtk_factor_flags). phase_ns, when not NULL, receives
 * three %globaltimer readings of block
 * 0 (start, QR done, weights done) to split the fused time between the phases. subst = 1:
 * the fused weights by substitution, as before the blocked solve (stap_la_tuning's
 * fused_solver, for A/B runs); 0: the blocked solve. */
int rtk_qr_weights_launch(int v, int m, int n, int batch, void *A, int lda, long long stride,
                          int nbeams, const void *V, void *W, rtk_factor_flags *flags,
                          unsigned long long *phase_ns, int subst, void *stream);


/* Training matrices gathered straight from a Doppler cube (docs/processing.md,
 * steps 2-4), so that no training matrix is materialized and re-read. X is the device
 * Doppler cube laid out [bins][channels][range] (complex). Batch item k = d*segments + s
 * is the m x n matrix, n = channels*order, m = training (+ n loading rows when load > 0):
 *   row i < training, column j = c*order + q:
 *       conj(X[base + (dl - (order-1)/2 + q) mod W][c][cells[s*training + i]]),
 *       W = wrap (or bins), dl = d mod W, base = d - dl (one group when wrap = 0);
 *   row training + i' (loading): load when i' == j, else 0.
 * Segment (range block) s is filtered with its weights over cells [s*seg_len, (s+1)*seg_len)
 * (rtk_apply_launch); which cells train it is the table's business (segments or a sliding
 * window around the block, stap_training_cells). */
typedef struct rtk_gather {
    const void *X;      /* bins x channels x range, device                         */
    const int *cells;   /* segments x training range cells, each in [0, range), device */
    int channels, order, bins, range;
    int segments, seg_len, training;
    float load;         /* sqrt(K * delta); 0 = no loading rows                    */
    int wrap;           /* bins per group whose taps wrap within it (0 = bins): JDL
                           stacks its beams' cubes as B groups of D bins             */
} rtk_gather;

/* QR + weights as rtk_qr_weights_launch, reading A_k through the gather g instead of
 * from memory (m, n as described at rtk_gather; A is not used). Only
 * register variants gather: RTK_SHARED/RTK_GLOBAL rows return cudaErrorInvalidValue
 * (materialize with rtk_training_launch instead). */
int rtk_qr_weights_gather_launch(int v, const rtk_gather *g, int m, int n, int batch,
                                 int nbeams, const void *V, void *W, rtk_factor_flags *flags,
                                 unsigned long long *phase_ns, int subst, void *stream);
/* The same, keeping every factor: R (when not NULL) receives R_k's upper triangle, column-major
 * n x n at R + k*n*n (leading dimension n; the strict lower triangle is not written), copied
 * from shared memory after the factorization — for the adaptive detectors
 * (rtk_adaptive_detect_launch). An item whose R has a zero or non-finite diagonal is not
 * written. */
int rtk_qr_weights_gather_keep_launch(int v, const rtk_gather *g, int m, int n, int batch,
                                      int nbeams, const void *V, void *W, rtk_factor_flags *flags,
                                      unsigned long long *phase_ns, int subst, void *R, void *stream);
/* 1 when variant v can gather its input (register variants with fused weights). */
int rtk_qr_can_gather(int v);
/* Materialize the gathered matrices: T_k = T + k*stride (m x n, leading dimension ldt). */
int rtk_training_launch(const rtk_gather *g, int m, int n, int batch, void *T, int ldt,
                        long long stride, void *stream);
/* Batched CholeskyQR (kernels/cholqr.cu; issue 47): passes 2, CholeskyQR2 (the matrix in
 * shared memory, the products on the tensor cores, 3xTF32); passes 1, cholqr (mixed
 * precision: the Gram on the FP64 tensor cores from T streamed in chunks, the Cholesky in
 * FP64, R rounded to float; n <= 96). A_k's upper n x n triangle replaced by R (R^H R =
 * T^H T, real positive diagonal), everything else of A_k unchanged. One block a matrix:
 * rtk_cholqr2_fits says whether m x n fits the device's per-block limit (bytes) for that
 * many passes. A matrix whose Cholesky breaks down, or whose R has min|R_ii| / max|R_ii| <
 * min_ratio (passes 1: or an element not finite in float), is left as it was and its index k appended to
 * fail_list: fail_list[0] counts them (the caller zeroes it first), fail_list[1..] are the
 * indices in no particular order (batch + 1 ints); rtk_qr_guard_launch factors the listed
 * ones by Householder. cudaError_t values. */
#define RTK_CHOLQR2_MAX_N 128
int rtk_cholqr2_fits(int m, int n, int passes, int smem_limit);
/* passes 1 (kernels/cholqr1.cu), as rtk_cholqr2_fits / rtk_cholqr2_launch call them */
int rtk_cholqr1_fits(int m, int n, int smem_limit);
int rtk_cholqr1_launch(int m, int n, int batch, void *A, int lda, long long stride, float min_ratio,
                       int *fail_list, void *stream);
int rtk_cholqr2_launch(int m, int n, int batch, void *A, int lda, long long stride, int passes,
                       float min_ratio, int *fail_list, void *stream);
/* The guard on the device, for streams and graphs (no count read back): the Householder
 * QR, in place, of A_k for k = fail_list[1 .. fail_list[0]] (rtk_cholqr2_launch's list),
 * one block a listed matrix on a grid of batch blocks (the rest return at once; the
 * matrix in shared memory where m x n fits smem_limit, else in global memory); block 0
 * adds the count to flags->guarded (flags may be NULL). cudaError_t values. */
int rtk_qr_guard_launch(int m, int n, int batch, void *A, int lda, long long stride, const int *fail_list,
                        rtk_factor_flags *flags, int smem_limit, void *stream);
/* cholqr (one pass) fused with the gather and the weights (kernels/cholqr1_gather.cu): for
 * each item k, T_k read through the gather g (m, n as at rtk_gather; nothing materialized),
 * R_k = chol(T_k^H T_k) as rtk_cholqr1_launch computes it (the same bits), the same guard: a
 * refused k is appended to fail_list (which the caller zeroes first), counted in
 * flags->guarded, and factored by Householder in the same block (the bits rtk_qr_guard_launch
 * gives); then the weights from R (cholqr's rounded to float, or Householder's), in float, as
 * rtk_weights_launch writes them (W[(k*nbeams + b)*n + j]; the flags' bad_item and worst
 * alike): subst 1 by the weight kernel's substitutions (the same bits), 0 by the fused
 * Householder kernels' blocked solve (the whole block; rounding apart). R, when not NULL,
 * receives R_k's upper triangle (column-major n x n at R + k*n*n, leading dimension n).
 * rtk_cholqr1_gather_fits: n <= 96 and the shared memory (T_k whole, for the guard) fits
 * smem_limit. cudaError_t values. */
int rtk_cholqr1_gather_fits(int m, int n, int smem_limit);
int rtk_cholqr1_gather_weights_launch(const rtk_gather *g, int m, int n, int batch, int nbeams, const void *V,
                                      void *W, rtk_factor_flags *flags, float min_ratio, int *fail_list, void *R,
                                      int subst, void *stream);
#define RTK_WEIGHTS_MAX_N 512 /* largest n the weight solver takes                */

/* Weights from factors already on the device: R_k = R + k*stride (upper n x n,
 * leading dimension ldr); same outputs and flags protocol as above. n <= RTK_WEIGHTS_MAX_N. */
int rtk_weights_launch(int n, int batch, const void *R, int ldr, long long stride, int nbeams,
                       const void *V, void *W, rtk_factor_flags *flags, void *stream);

/* The last step of the cuBLAS baseline: W holds z (per k, an n x nbeams column-major
 * block, column b = z_b, after two cublasCtrsmBatched); scale each z_b to
 * w = z_b / (v_b^H z_b) and check R's diagonal (flags as above). */
int rtk_normalize_launch(int n, int batch, const void *R, int ldr, long long stride,
                         int nbeams, const void *V, void *W, rtk_factor_flags *flags, void *stream);

/* W_k = V for every k (W: batch x nbeams x n): the right-hand sides that the cuBLAS
 * baseline's two cublasCtrsmBatched solve in place. */
int rtk_fill_rhs_launch(int n, int batch, int nbeams, const void *V, void *W, void *stream);

/* Grouped forms (the sub-CPI algorithms: few factors, many steering sets): item
 * k = 0..batch-1 uses factor R + (k % groups)*stride and the steering vectors
 * V + (k / groups)*vstride (nbeams x n), and writes W + k*nbeams*n; flags name item k.
 * groups = batch, vstride = 0 are the plain launches above. */
int rtk_weights_grouped_launch(int n, int batch, int groups, const void *R, int ldr,
                               long long stride, int nbeams, const void *V, long long vstride,
                               void *W, rtk_factor_flags *flags, void *stream);
int rtk_normalize_grouped_launch(int n, int batch, int groups, const void *R, int ldr,
                                 long long stride, int nbeams, const void *V, long long vstride,
                                 void *W, rtk_factor_flags *flags, void *stream);
int rtk_fill_rhs_grouped_launch(int n, int batch, int groups, int nbeams, const void *V,
                                long long vstride, void *W, void *stream);

/* cudaEventRecord that also works while the stream is being captured into a CUDA graph:
 * there it records an external event node (a plain record during capture only orders the
 * capture and leaves the event unrecorded when the graph runs). */
int rtk_event_record(void *event, void *stream);

/* Keep the stream busy for about `microseconds` (one thread spinning on %globaltimer):
 * queued before a timed region so that the host's launch latency stays outside the
 * interval measured by CUDA events. */
int rtk_spin_launch(unsigned microseconds, void *stream);

#ifdef __cplusplus
}
#endif

#endif
