/* gemm_cpu.c: the cpu backend's complex matrix product, Y = A X (+ Y), the engine's weight
 * application (docs/processing.md step 8). rtstap's own code rather than cblas_cgemm, so
 * that the cpu backend's results depend on the CPU's instruction set alone and never on
 * which kernels OpenBLAS picked when it loaded (issue 42: the library, Python and the
 * program must agree bit for bit on any CPU; OpenBLAS stays the lapack baseline's).
 *
 * Compiled twice on x86-64, like qr_cpu.c: as itself for the build's target and as
 * gemm_cpu_avx2.c with -mavx2 -mfma; stap_la_cgemm chooses with stap_la_cpu_use_avx2.
 * Each output element is the same sum in the same order in every blocking of the loops
 * (k ascending, one rounding per product term as the target's FMA gives it), so the
 * result does not depend on m, n, or the thread that computes it. */
#include "la_internal.h"

#include <complex.h>
#include <string.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#ifdef LA_CPU_AVX2_COPY
#define LA_GEMM_COPY(name) name##_avx2
#else
#define LA_GEMM_COPY(name) name##_portable
#endif

RT_INTERNAL void LA_GEMM_COPY(stap_la_cpu_cgemm)(int m, int n, int k, const stap_cf32 *A, int lda, const stap_cf32 *X,
                                size_t ldx, int accumulate, stap_cf32 *Y, size_t ldy);

/* One output element's sum, term by term: y += a_re x + a_im (i x), the two real products
 * of each term rounded as the vector kernel rounds them (an FMA each where the target has
 * FMA). Used by the portable copy throughout and by the AVX2 copy for the column tail. */
static inline void term(float ar, float ai, const float *x, float *y)
{
#if defined(__FMA__)
    y[0] = __builtin_fmaf(-ai, x[1], __builtin_fmaf(ar, x[0], y[0]));
    y[1] = __builtin_fmaf(ai, x[0], __builtin_fmaf(ar, x[1], y[1]));
#else
    y[0] = (y[0] + ar * x[0]) + -ai * x[1];
    y[1] = (y[1] + ar * x[1]) + ai * x[0];
#endif
}

/* columns [j0, n) of rows [i0, i1), one element at a time */
static void gemm_scalar(int i0, int i1, int j0, int n, int k, const stap_cf32 *A, int lda,
                        const stap_cf32 *X, size_t ldx, int accumulate, stap_cf32 *Y, size_t ldy)
{
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < n; j++) {
            float y[2] = {0, 0};
            if (accumulate) y[0] = crealf(Y[i * ldy + j]), y[1] = cimagf(Y[i * ldy + j]);
            for (int p = 0; p < k; p++)
                term(crealf(A[(size_t)i * lda + p]), cimagf(A[(size_t)i * lda + p]),
                     (const float *)&X[p * ldx + j], y);
            float *yo = (float *)&Y[i * ldy + j]; /* (re, im), C11's layout of a complex */
            yo[0] = y[0];
            yo[1] = y[1];
        }
}

#if defined(__AVX2__) && defined(__FMA__)
/* Rows [i, i + MR) x columns [j, j + 8): 8 complex columns in two vectors of 4 (re, im
 * interleaved), MR x 2 accumulators. A term: y = fma(a_re, x, y), then
 * y = fma((-a_im, a_im, ...), swap(x), y), the order term() uses. */
#define GEMM_TILE(MR)                                                                          \
    static void tile##MR(int i, int j, int k, const stap_cf32 *A, int lda, const stap_cf32 *X, \
                         size_t ldx, int accumulate, stap_cf32 *Y, size_t ldy)                  \
    {                                                                                          \
        __m256 acc[MR][2];                                                                     \
        for (int r = 0; r < MR; r++)                                                           \
            for (int h = 0; h < 2; h++)                                                        \
                acc[r][h] = accumulate ? _mm256_loadu_ps((const float *)&Y[(i + r) * ldy + j + 4 * h]) \
                                       : _mm256_setzero_ps();                                  \
        const __m256 sign = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);                        \
        for (int p = 0; p < k; p++) {                                                          \
            const float *xp = (const float *)&X[p * ldx + j];                                  \
            const __m256 x0 = _mm256_loadu_ps(xp), x1 = _mm256_loadu_ps(xp + 8);              \
            const __m256 s0 = _mm256_permute_ps(x0, 0xB1), s1 = _mm256_permute_ps(x1, 0xB1);  \
            for (int r = 0; r < MR; r++) {                                                     \
                const float *a = (const float *)&A[(size_t)(i + r) * lda + p];                 \
                const __m256 ar = _mm256_broadcast_ss(a);                                      \
                const __m256 ai = _mm256_mul_ps(_mm256_broadcast_ss(a + 1), sign);             \
                acc[r][0] = _mm256_fmadd_ps(ai, s0, _mm256_fmadd_ps(ar, x0, acc[r][0]));       \
                acc[r][1] = _mm256_fmadd_ps(ai, s1, _mm256_fmadd_ps(ar, x1, acc[r][1]));       \
            }                                                                                  \
        }                                                                                      \
        for (int r = 0; r < MR; r++)                                                           \
            for (int h = 0; h < 2; h++)                                                        \
                _mm256_storeu_ps((float *)&Y[(i + r) * ldy + j + 4 * h], acc[r][h]);           \
    }
GEMM_TILE(4)
GEMM_TILE(1)
#endif

void LA_GEMM_COPY(stap_la_cpu_cgemm)(int m, int n, int k, const stap_cf32 *A, int lda, const stap_cf32 *X,
                                size_t ldx, int accumulate, stap_cf32 *Y, size_t ldy)
{
    int j0 = 0;
#if defined(__AVX2__) && defined(__FMA__)
    /* a column tile of X (k x 8) stays in L1 while every row block of A passes over it */
    for (; j0 + 8 <= n; j0 += 8) {
        int i = 0;
        for (; i + 4 <= m; i += 4) tile4(i, j0, k, A, lda, X, ldx, accumulate, Y, ldy);
        for (; i < m; i++) tile1(i, j0, k, A, lda, X, ldx, accumulate, Y, ldy);
    }
#endif
    gemm_scalar(0, m, j0, n, k, A, lda, X, ldx, accumulate, Y, ldy);
}

/* ---- the choice between the copies (once, in the portable copy) ----------------------- */
#ifndef LA_CPU_AVX2_COPY
#if defined(RTSTAP_CPU_AVX2) && (defined(__x86_64__) || defined(__i386__))
RT_INTERNAL void stap_la_cpu_cgemm_avx2(int m, int n, int k, const stap_cf32 *A, int lda, const stap_cf32 *X, size_t ldx,
                       int accumulate, stap_cf32 *Y, size_t ldy);
#define LA_GEMM_AVX2 stap_la_cpu_use_avx2()
#else
#define stap_la_cpu_cgemm_avx2 stap_la_cpu_cgemm_portable
#define LA_GEMM_AVX2 0
#endif

void stap_la_cgemm(int m, int n, int k, const stap_cf32 *A, int lda, const stap_cf32 *X, size_t ldx,
                   int accumulate, stap_cf32 *Y, size_t ldy)
{
    (LA_GEMM_AVX2 ? stap_la_cpu_cgemm_avx2 : stap_la_cpu_cgemm_portable)(m, n, k, A, lda, X, ldx, accumulate, Y,
                                                               ldy);
}
#endif
