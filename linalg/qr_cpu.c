/* qr_cpu.c: the cpu backend, rtstap's own batched complex Householder QR and MVDR
 * weight solves, OpenMP across the matrices of a batch (simple unblocked version). */
#include "la_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One m x n QR in place (LAPACK cgeqr2 conventions: H = I - tau v v^H, v(0) = 1,
 * beta = -sign(Re alpha) * ||x||, so R's diagonal is real). */
static void qr_one(int m, int n, cf32 *A, int lda)
{
    for (int j = 0; j < n; j++) {
        cf32 *x = A + (size_t)j * lda + j;
        int len = m - j;
        double scale = 0.0;
        for (int i = 1; i < len; i++) {
            double a = fabs(crealf(x[i])), b = fabs(cimagf(x[i]));
            if (a > scale) scale = a;
            if (b > scale) scale = b;
        }
        double xn2 = 0.0;
        if (scale > 0)
            for (int i = 1; i < len; i++) {
                double a = crealf(x[i]) / scale, b = cimagf(x[i]) / scale;
                xn2 += a * a + b * b;
            }
        double ar = crealf(x[0]), ai = cimagf(x[0]);
        if (scale == 0.0 && ai == 0.0) continue; /* tau = 0: H = I */
        double xnorm = scale * sqrt(xn2);
        double beta = -copysign(hypot(hypot(ar, ai), xnorm), ar);
        double tr = (beta - ar) / beta, ti = -ai / beta;
        cf64 inv = 1.0 / ((ar - beta) + I * ai);
        for (int i = 1; i < len; i++) x[i] = (cf32)(x[i] * inv);
        x[0] = (cf32)beta;
        cf32 ctau = (float)tr - I * (float)ti; /* apply H^H = I - conj(tau) v v^H */
        for (int k = j + 1; k < n; k++) {
            cf32 *y = A + (size_t)k * lda + j;
            cf32 s = y[0];
            for (int i = 1; i < len; i++) s += conjf(x[i]) * y[i];
            s *= ctau;
            y[0] -= s;
            for (int i = 1; i < len; i++) y[i] -= s * x[i];
        }
    }
}

int la_cpu_qr(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda, ptrdiff_t stride_a,
              rt_error *err)
{
    (void)err;
#pragma omp parallel for num_threads(ctx->threads) schedule(static)
    for (int k = 0; k < batch; k++) qr_one(m, n, A + (ptrdiff_t)k * stride_a, lda);
    return RT_OK;
}

int la_cpu_weights(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const cf32 *V, cf32 *W, rt_error *err)
{
    int bad = -1;
#pragma omp parallel num_threads(ctx->threads)
    {
        cf64 *y = malloc((size_t)n * sizeof *y);
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            const cf32 *Rk = R + (ptrdiff_t)k * stride_r;
            int ok = y != NULL;
            for (int i = 0; i < n && ok; i++) {
                cf32 d = Rk[(size_t)i * ldr + i];
                if (!isfinite(crealf(d)) || !isfinite(cimagf(d)) || (crealf(d) == 0 && cimagf(d) == 0))
                    ok = 0;
            }
            if (!ok) {
#pragma omp critical(la_cpu_weights_bad)
                if (bad < 0 || k < bad) bad = k;
                continue;
            }
            for (int b = 0; b < nbeams; b++) {
                const cf32 *v = V + (size_t)b * n;
                for (int i = 0; i < n; i++) { /* R^H y = v */
                    const cf32 *c = Rk + (size_t)i * ldr;
                    cf64 s = v[i];
                    for (int j = 0; j < i; j++) s -= conj((cf64)c[j]) * y[j];
                    y[i] = s / conj((cf64)c[i]);
                }
                for (int j = n - 1; j >= 0; j--) { /* R z = y */
                    const cf32 *c = Rk + (size_t)j * ldr;
                    y[j] /= (cf64)c[j];
                    for (int i = 0; i < j; i++) y[i] -= (cf64)c[i] * y[j];
                }
                cf64 vz = 0;
                for (int i = 0; i < n; i++) vz += conj((cf64)v[i]) * y[i];
                cf32 *w = W + ((size_t)k * nbeams + b) * n;
                for (int i = 0; i < n; i++) w[i] = (cf32)(y[i] / vz);
            }
        }
        free(y);
    }
    if (bad >= 0) return rt_fail(err, RT_ENUMERIC, "singular triangular factor in batch item %d", bad);
    return RT_OK;
}
