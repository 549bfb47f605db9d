/* la_device: linalg's batched QR + MVDR weights on device-resident data, enqueued on a
 * caller's CUDA stream — for engines that keep a whole CPI on the GPU (stap/engine/engine_gpu.cu).
 * The training matrices are described by a gather from the Doppler cube (rtk_gather):
 *  - gpu: when the dispatch table's variant for m x n is a register kernel, one kernel
 *    gathers the rows, factors and solves (nothing materialized); otherwise the matrices
 *    are materialized (rtk_training_launch), factored and solved by separate kernels;
 *  - cublas: materialized, cublasCgeqrfBatched, two cublasCtrsmBatched, normalization.
 * Created once per shape and stream with every buffer, handle and pointer array it
 * needs; enqueue allocates nothing and never synchronizes (it may be captured in a
 * CUDA graph). Only in builds with CUDA (without, gpu_loader.c answers STAP_EUNSUPPORTED). */
#ifndef LA_DEVICE_H
#define LA_DEVICE_H

#include "linalg.h"
#include "rtk.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_dev_weights la_dev_weights;

/* backend: STAP_BACKEND_GPU or STAP_BACKEND_CUBLAS. variant: a QR variant to force (gpu; -1 =
 * the dispatch table); tune: the dispatch switches (NULL: the defaults). qr: the factor
 * (stap_qr_method, resolved): cholqr or cholqr2 on the gpu backend materialize the training,
 * factor by CholeskyQR with its guard's Householder on the device (kernels/cholqr.cu,
 * rtk_qr_guard_launch: dbad->guarded counts it), then solve (a shape the kernel does not
 * take: Householder); cholqr where n <= 96 and T_k fits a block's shared memory instead
 * gathers, factors and solves in one kernel, its guard's Householder in the same block
 * (kernels/cholqr1_gather.cu; la_dev_weights_keep_factors: the materialized path); anything
 * else: Householder. g: the gather (its X pointer is fixed for the object's life).
 * m x n: the training matrix; batch: D*S; dV: nbeams x n steering (device); dW: batch x
 * nbeams x n weights (device, written per enqueue); dbad: the factor flags
 * (rtk_factor_flags, preset by the caller); dphase: 3 timestamps of the fused kernel, or NULL. */
int la_dev_weights_create(la_dev_weights **out, stap_backend backend, int variant,
                          const stap_la_tuning *tune, stap_qr_method qr, const rtk_gather *g, int m, int n,
                          int batch, int nbeams,
                          const void *dV, void *dW, rtk_factor_flags *dbad, unsigned long long *dphase,
                          void *stream, stap_error *err);
/* Enqueue one batch. ev_training / ev_qr (cudaEvent_t, may be NULL) are recorded when the
 * training matrices are formed and when the factorization is done (both at the start of
 * the one kernel when fused). */
int la_dev_weights_enqueue(la_dev_weights *w, void *ev_training, void *ev_qr, stap_error *err);
/* 1 when an object made with these arguments would materialize the m x n training
 * matrices (cuBLAS, no gathering QR variant for the shape on the current device, or the
 * model's plan runs the QR alone and the weights after it); 0 when gather, QR and weights
 * would run as one kernel. */
RT_INTERNAL int stap_la_dev_weights_materializes(stap_backend backend, int variant,
                                                 const stap_la_tuning *tune, int m, int n, int batch,
                                                 int nbeams);
/* The sub-CPI algorithms' solver: `groups` training matrices (m x n, column-major, leading
 * dimension m, written by the caller before each enqueue into la_dev_weights_matrices)
 * factored in place, then batch items k = 0..batch-1 solve factor k % groups for the
 * nbeams steering vectors dV + (k / groups)*vstride into dW + k*nbeams*n (rtk.h's grouped
 * launches; cuBLAS: geqrf of the groups, two trsm over the batch). */
int la_dev_weights_create_grouped(la_dev_weights **out, stap_backend backend, int variant,
                                  const stap_la_tuning *tune, stap_qr_method qr,
                                  int m, int n, int groups, int batch, int nbeams,
                                  const void *dV, long long vstride, void *dW,
                                  rtk_factor_flags *dbad, void *stream, stap_error *err);
/* The grouped solver's matrix buffer (device). */
void *la_dev_weights_matrices(la_dev_weights *w);
/* Keep every item's R factor after each enqueue, for later kernels on the stream (the
 * adaptive detectors): where the fused kernel factors, it then also writes R out (one n x n
 * buffer per item, allocated here, once); materialized objects keep R in their matrices
 * anyway. Call before the first enqueue (and before a graph capture). */
int la_dev_weights_keep_factors(la_dev_weights *w, stap_error *err);
/* Where item k's R is after an enqueue: the upper n x n triangle of *R + k*stride, leading
 * dimension *ldr (column-major). Returns 0 when not kept (fused without
 * la_dev_weights_keep_factors, or the grouped solver, whose factors are not per item). */
int la_dev_weights_factors(const la_dev_weights *w, const void **R, int *ldr, long long *stride);
/* 1 when gather, QR and weights run as one kernel. */
int la_dev_weights_fused(const la_dev_weights *w);
/* The CholeskyQR passes the object factors with (1: cholqr, 2: cholqr2), 0 for Householder. */
int la_dev_weights_cholesky(const la_dev_weights *w);
/* The matrices it factors per enqueue (batch, or the grouped solver's groups). */
int la_dev_weights_groups(const la_dev_weights *w);
/* e.g. "flw16x22_15x3 (gather + QR + weights fused)", "cublasCgeqrfBatched + 2 trsm" */
const char *la_dev_weights_describe(const la_dev_weights *w);
/* Device memory it holds, bytes. */
size_t la_dev_weights_device_bytes(const la_dev_weights *w);
void la_dev_weights_destroy(la_dev_weights *w);

/* stap_la_gpu_force_variant (the test and tuning hook) is in <rtstap/linalg.h>. */

#ifdef __cplusplus
}
#endif

#endif
