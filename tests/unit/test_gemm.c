/* test_gemm: the cpu backend's complex product stap_la_cgemm (linalg/gemm_cpu.c), the
 * engine's weight application, against a double-precision reference on fresh random
 * inputs (the fixed seed, or RTSTAP_SEED), cancelling sums included: every element within the deterministic componentwise
 * bound 2 (k + 2) eps sum_p |a_p| |x_p| (so no seed can fail it by chance); Y += A X with
 * accumulate; nothing written outside the m x n block of Y; and each element the same bit
 * for bit whatever block of rows and columns it is computed in (the engine's segments and
 * beam groups must not change a result). Run again with RTSTAP_CPU_KERNELS=portable. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "linalg.h"
#include "testutil.h"

static int same_bits(stap_cf32 a, stap_cf32 b) { return memcmp(&a, &b, sizeof a) == 0; }

/* m x n x k with Y's rows ldy apart (ldy > n: the gap is poisoned and must stay so) */
static void one_case(tc_rng *r, int m, int n, int k, int cancel)
{
    const int lda = k + 3;
    const size_t ldx = (size_t)n + 5, ldy = (size_t)n + 7;
    stap_cf32 *A = tc_xmalloc(sizeof *A * (size_t)m * lda + 1);
    stap_cf32 *X = tc_xmalloc(sizeof *X * (size_t)(k ? k : 1) * ldx);
    stap_cf32 *Y0 = tc_xmalloc(sizeof *Y0 * (size_t)m * ldy), *Y = tc_xmalloc(sizeof *Y * (size_t)m * ldy);
    stap_cf32 *Z = tc_xmalloc(sizeof *Z * (size_t)m * ldy);
    for (size_t i = 0; i < (size_t)m * lda; i++) A[i] = tc_cnormal(r);
    for (size_t i = 0; i < (size_t)k * ldx; i++) X[i] = tc_cnormal(r) * (float)(1 << (i % 7));
    if (cancel && k >= 2) { /* row 0 of A: a[1] = -a[0] and row 1 of X = row 0: terms that cancel */
        A[1] = -A[0];
        for (int j = 0; j < n; j++) X[ldx + j] = X[j];
    }
    for (size_t i = 0; i < (size_t)m * ldy; i++) Y0[i] = (i % ldy) < (size_t)n ? tc_cnormal(r) : tc_poison(i);
    for (int acc = 0; acc <= 1; acc++) {
        memcpy(Y, Y0, sizeof *Y * (size_t)m * ldy);
        stap_la_cgemm(m, n, k, A, lda, X, ldx, acc, Y, ldy);
        int bad = 0, poison = 0;
        for (int i = 0; i < m; i++) {
            for (size_t j = n; j < ldy; j++) poison += !same_bits(Y[i * ldy + j], tc_poison(i * ldy + j));
            for (int j = 0; j < n; j++) {
                stap_cf64 s = acc ? (stap_cf64)Y0[i * ldy + j] : 0;
                double mag = acc ? cabs(s) : 0;
                for (int p = 0; p < k; p++) {
                    const stap_cf64 a = A[(size_t)i * lda + p], x = X[p * ldx + j];
                    s += a * x;
                    mag += cabs(a) * cabs(x);
                }
                const double bound = 2.0 * (k + 2) * FLT_EPSILON * mag;
                const stap_cf32 y = Y[i * ldy + j];
                if (!(fabs(crealf(y) - creal(s)) <= bound && fabs(cimagf(y) - cimag(s)) <= bound)) {
                    if (!bad)
                        fprintf(stderr, "  (%d,%d): %g%+gi against %g%+gi, bound %g\n", i, j, crealf(y),
                                cimagf(y), creal(s), cimag(s), bound);
                    bad++;
                }
            }
        }
        CHECK(!bad, "%dx%dx%d accumulate=%d cancel=%d: %d elements outside the bound", m, n, k, acc, cancel, bad);
        CHECK(!poison, "%dx%dx%d accumulate=%d: %d elements written outside the block", m, n, k, acc, poison);
        /* the same elements computed in blocks of 3 rows x 5 columns, at every offset */
        memcpy(Z, Y0, sizeof *Z * (size_t)m * ldy);
        for (int i0 = 0; i0 < m; i0 += 3)
            for (int j0 = 0; j0 < n; j0 += 5)
                stap_la_cgemm(m - i0 < 3 ? m - i0 : 3, n - j0 < 5 ? n - j0 : 5, k, A + (size_t)i0 * lda, lda,
                              X + j0, ldx, acc, Z + i0 * ldy + j0, ldy);
        int differ = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) differ += !same_bits(Z[i * ldy + j], Y[i * ldy + j]);
        CHECK(!differ, "%dx%dx%d accumulate=%d: %d elements differ when computed in 3x5 blocks", m, n, k, acc,
              differ);
    }
    free(A);
    free(X);
    free(Y0);
    free(Y);
    free(Z);
}

int main(void)
{
    tc_rng r;
    tc_rng_seed(&r, tc_seed_from_env(TC_FIXED_SEED));
    if (tc_cpu_kernels_from_env()) return 1;
    /* the engine's shapes (beams x range cells x channels), tails of every width, k = 0 */
    const int shapes[][3] = {{16, 480, 22}, {16, 160, 66}, {5, 37, 3},  {4, 8, 1},  {1, 1, 1},
                             {7, 13, 9},    {3, 8, 0},     {17, 100, 13}, {2, 7, 64}, {12, 24, 128}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int cancel = 0; cancel <= 1; cancel++) one_case(&r, shapes[s][0], shapes[s][1], shapes[s][2], cancel);
    printf("test_gemm: %s\n", tc_failures ? "FAILED" : "passed");
    return tc_failures != 0;
}
