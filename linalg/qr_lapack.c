/* qr_lapack.c: the lapack backend, the CPU baseline run the way the reference paper ran
 * MKL: LAPACKE cgeqrf / ctrtrs on OpenBLAS, one matrix per thread, OpenMP across the batch. */
#include "la_internal.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS's own threading must be 1 so that each OpenMP thread factors its matrix alone.
 * Declared here because not every lapacke/cblas header set exports it. */
extern void openblas_set_num_threads(int num_threads);

/* Called on every entry rather than once: cheap next to a batch, and free of a racy
 * "done" flag when several contexts run at once. */
static void single_threaded_blas(void) { openblas_set_num_threads(1); }

int stap_la_lapack_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
                 stap_error *err)
{
    single_threaded_blas();
    /* Workspace query once; each thread then owns tau and work for the whole call. */
    stap_cf32 wq = 0, tq = 0;
    lapack_int info = LAPACKE_cgeqrf_work(LAPACK_COL_MAJOR, m, n, A, lda, &tq, &wq, -1);
    if (info != 0) return stap_fail(err, STAP_EINVAL, "cgeqrf workspace query failed (info %d)", (int)info);
    lapack_int lwork = (lapack_int)crealf(wq);
    if (lwork < n) lwork = n;
    int fail_item = -1, fail_info = 0, nomem = 0;
#pragma omp parallel num_threads(ctx->threads)
    {
        stap_cf32 *tau = malloc((size_t)n * sizeof *tau);
        stap_cf32 *work = malloc((size_t)lwork * sizeof *work);
        if (!tau || !work) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            if (!tau || !work) continue;
            lapack_int inf = LAPACKE_cgeqrf_work(LAPACK_COL_MAJOR, m, n, A + (ptrdiff_t)k * stride_a,
                                                 lda, tau, work, lwork);
            if (inf != 0) {
#pragma omp critical(stap_la_lapack_qr_fail)
                if (fail_item < 0 || k < fail_item) {
                    fail_item = k;
                    fail_info = (int)inf;
                }
            }
        }
        free(tau);
        free(work);
    }
    if (nomem) return stap_fail(err, STAP_ENOMEM, "out of memory for the cgeqrf workspace (n=%d)", n);
    if (fail_item >= 0)
        return stap_fail(err, STAP_ENUMERIC, "cgeqrf failed on batch item %d (info %d)", fail_item,
                         fail_info);
    return STAP_OK;
}

static int diag_ok(int n, const stap_cf32 *R, int ldr)
{
    for (int i = 0; i < n; i++) {
        stap_cf32 d = R[(size_t)i * ldr + i];
        if (!isfinite(crealf(d)) || !isfinite(cimagf(d)) || (crealf(d) == 0.f && cimagf(d) == 0.f))
            return 0;
    }
    return 1;
}

int stap_la_lapack_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                      int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err)
{
    single_threaded_blas();
    int bad = -1, bad_beam = -1, nomem = 0;
#pragma omp parallel num_threads(ctx->threads)
    {
        stap_cf32 *B = malloc((size_t)n * nbeams * sizeof *B); /* n x nbeams, column b = v_b */
        if (!B) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            if (!B) continue;
            const stap_cf32 *Rk = R + (ptrdiff_t)k * stride_r;
            lapack_int i1 = -1, i2 = -1;
            if (diag_ok(n, Rk, ldr)) {
                /* V is row-major nbeams x n, i.e. column-major n x nbeams: B = V. */
                memcpy(B, V, (size_t)n * nbeams * sizeof *B);
                i1 = LAPACKE_ctrtrs_work(LAPACK_COL_MAJOR, 'U', 'C', 'N', n, nbeams, Rk, ldr, B, n);
                if (i1 == 0)
                    i2 = LAPACKE_ctrtrs_work(LAPACK_COL_MAJOR, 'U', 'N', 'N', n, nbeams, Rk, ldr, B, n);
            }
            if (i1 != 0 || i2 != 0) {
#pragma omp critical(stap_la_lapack_weights_bad)
                if (bad < 0 || k < bad) {
                    bad = k;
                    bad_beam = -1;
                }
                continue;
            }
            for (int b = 0; b < nbeams; b++) {
                const stap_cf32 *v = V + (size_t)b * n, *z = B + (size_t)b * n;
                stap_cf64 vz = 0;
                for (int j = 0; j < n; j++) vz += conj((stap_cf64)v[j]) * (stap_cf64)z[j];
                if (!(cabs(vz) > 0) || !isfinite(cabs(vz))) {
#pragma omp critical(stap_la_lapack_weights_bad)
                    if (bad < 0 || k < bad) {
                        bad = k;
                        bad_beam = b;
                    }
                    break;
                }
                stap_cf32 s = (stap_cf32)(1.0 / vz);
                stap_cf32 *w = W + ((size_t)k * nbeams + b) * n;
                for (int j = 0; j < n; j++) w[j] = z[j] * s;
            }
        }
        free(B);
    }
    if (nomem) return stap_fail(err, STAP_ENOMEM, "out of memory for the right-hand sides (n=%d)", n);
    if (bad >= 0 && bad_beam >= 0)
        return stap_fail(err, STAP_ENUMERIC,
                         "steering vector %d gives v^H (R^H R)^-1 v = 0 or non-finite in batch item %d",
                         bad_beam, bad);
    if (bad >= 0) return stap_fail(err, STAP_ENUMERIC, "singular triangular factor in batch item %d", bad);
    return STAP_OK;
}
