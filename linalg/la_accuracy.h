/* la_accuracy: LAPACK-style test ratios for a batched QR, computed in double precision.
 * Used by tests and by `rtstap bench-qr` for its accuracy column. Threshold: 30. */
#ifndef LA_ACCURACY_H
#define LA_ACCURACY_H

#include "rt_hidden.h"
#include "linalg.h"

typedef struct la_qr_accuracy {
    double residual;  /* max over the batch of ||T^H T - R^H R||_F / (||T||_F^2 * m * eps) */
    double diag;      /* max over the batch and i of | |R_ii| - |Rref_ii| | / (m eps (||t_i|| +
                         sum_{k<i} |x_ik| ||t_k||)): the forward error of |diag R| over its
                         first-order bound (x_i: t_i's least-squares coefficients on the
                         earlier columns), Rref from LAPACKE_zgeqrf in double precision
                         (eps = FLT_EPSILON/2) */
    int worst;        /* batch index of the worst residual */
} la_qr_accuracy;

/* T: the original batch (m x n each, lda = m, contiguous); R: the factored batch as
 * stap_la_qr leaves it (upper triangle read only). Rref may be NULL (then diag = 0 and the
 * LAPACKE reference is computed internally when compute_ref != 0). */
RT_INTERNAL int stap_la_qr_check(int m, int n, int batch, const stap_cf32 *T, const stap_cf32 *R, int compute_ref,
                la_qr_accuracy *acc, stap_error *err);

#endif
