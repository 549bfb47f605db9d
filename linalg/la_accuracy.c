/* la_accuracy.c: LAPACK-style test ratios for a batched QR (la_accuracy.h), computed in
 * double precision: the Gram residual ||T^H T - R^H R||_F / (||T||_F^2 m eps) (LAPACK
 * Working Note 41) and the forward error of |diag R| against a double-precision
 * LAPACKE_zgeqrf, each entry over its first-order bound (la_accuracy.h). */
#include "la_accuracy.h"

#include <float.h>
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern void openblas_set_num_threads(int num_threads);

/* Single-precision unit roundoff: LAPACK's slamch('E'). */
#define LA_EPS ((double)FLT_EPSILON / 2.0)

/* max that lets a NaN through (a NaN ratio must fail the test, not vanish). */
static double nanmax(double a, double b) { return (isnan(a) || a >= b) ? a : b; }

/* Is ratio a (of batch item ka) worse than the current worst b (item kb)? A NaN is worst;
 * ties go to the lower index so that the answer does not depend on the thread count. */
static int worse(double a, int ka, double b, int kb)
{
    if (isnan(b)) return isnan(a) && ka < kb;
    if (isnan(a)) return 1;
    return a > b || (a == b && ka < kb);
}

static double ratio(double num, double den)
{
    if (den > 0) return num / den;
    return num == 0 ? 0.0 : INFINITY;
}

/* ||T^H T - R^H R||_F and ||T||_F^2 for one matrix; Tr/Ti are m x n double scratch. */
static void gram_residual(int m, int n, const stap_cf32 *T, const stap_cf32 *R, double *Tr, double *Ti,
                          double *num, double *tnorm2)
{
    double fro = 0.0;
    for (int j = 0; j < n; j++)
        for (int r = 0; r < m; r++) {
            Tr[(size_t)j * m + r] = crealf(T[(size_t)j * m + r]);
            Ti[(size_t)j * m + r] = cimagf(T[(size_t)j * m + r]);
            fro += Tr[(size_t)j * m + r] * Tr[(size_t)j * m + r] +
                   Ti[(size_t)j * m + r] * Ti[(size_t)j * m + r];
        }
    double d2 = 0.0;
    for (int j = 0; j < n; j++) {
        const double *br = Tr + (size_t)j * m, *bi = Ti + (size_t)j * m;
        const stap_cf32 *rj = R + (size_t)j * m;
        for (int i = 0; i <= j; i++) {
            const double *ar = Tr + (size_t)i * m, *ai = Ti + (size_t)i * m;
            double sr = 0.0, si = 0.0;
#pragma omp simd reduction(+ : sr, si)
            for (int r = 0; r < m; r++) { /* conj(T_ri) T_rj */
                sr += ar[r] * br[r] + ai[r] * bi[r];
                si += ar[r] * bi[r] - ai[r] * br[r];
            }
            const stap_cf32 *ri = R + (size_t)i * m;
            for (int r = 0; r <= i; r++) { /* - conj(R_ri) R_rj, upper triangle only */
                double xr = crealf(ri[r]), xi = cimagf(ri[r]);
                double yr = crealf(rj[r]), yi = cimagf(rj[r]);
                sr -= xr * yr + xi * yi;
                si -= xr * yi - xi * yr;
            }
            double e = sr * sr + si * si;
            d2 += (i == j) ? e : 2.0 * e; /* the difference is Hermitian */
        }
    }
    *num = sqrt(d2);
    *tnorm2 = fro;
}

/* The forward error of |R_ii| over its first-order bound, worst over i. Householder QR is
 * columnwise backward stable (Higham, Accuracy and Stability, Thm 19.4): the computed R is
 * the exact factor of T + dT with ||dt_j|| <~ m eps ||t_j||. |R_ii| is the distance of t_i
 * from span(t_1..t_{i-1}), i.e. a least-squares residual norm; to first order it moves by
 * Re q_i^H (dt_i - dT_{1:i-1} x_i), x_i = R_{1:i-1}^{-1} R_{1:i-1,i} (t_i's least-squares
 * coefficients), so | |R_ii| - |Rx_ii| | <= m eps (||t_i|| + sum_k |x_ik| ||t_k||). That is
 * the denominator (as LAPACK's xGET04 divides a forward error by its condition-scaled
 * bound); a fixed |R_11| m eps, used before, is exceeded legitimately at cond 1e6.
 * Rx: the double-precision reference (column-major, m x n), Tr/Ti: T in double; cn, x:
 * n scratch entries each. Columns with an exactly zero reference pivot get x_k = 0 (their
 * t_k lies in the span of the earlier ones; they add nothing to the later distances). */
static double diag_ratio(int m, int n, const double *Tr, const double *Ti,
                         const double complex *Rx, const stap_cf32 *Rk, double *cn, double complex *x)
{
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int r = 0; r < m; r++)
            s += Tr[(size_t)j * m + r] * Tr[(size_t)j * m + r] + Ti[(size_t)j * m + r] * Ti[(size_t)j * m + r];
        cn[j] = sqrt(s);
    }
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        /* back substitution: R_{1:i-1} x = R_{1:i-1,i} */
        double bound = cn[i];
        for (int l = i - 1; l >= 0; l--) {
            double complex s = Rx[(size_t)i * m + l];
            for (int c = l + 1; c < i; c++) s -= Rx[(size_t)c * m + l] * x[c];
            double complex p = Rx[(size_t)l * m + l];
            x[l] = p != 0 ? s / p : 0;
        }
        for (int l = 0; l < i; l++) bound += cabs(x[l]) * cn[l];
        double d = fabs((double)cabsf(Rk[(size_t)i * m + i]) - cabs(Rx[(size_t)i * m + i]));
        worst = nanmax(ratio(d, bound * m * LA_EPS), worst);
    }
    return worst;
}

int stap_la_qr_check(int m, int n, int batch, const stap_cf32 *T, const stap_cf32 *R, int compute_ref,
                la_qr_accuracy *acc, stap_error *err)
{
    if (!acc) return stap_fail(err, STAP_EINVAL, "stap_la_qr_check: null result pointer");
    acc->residual = 0.0;
    acc->diag = 0.0;
    acc->worst = 0;
    if (n < 1 || m < n || batch < 0)
        return stap_fail(err, STAP_EINVAL, "stap_la_qr_check: needs m >= n >= 1 (got m=%d, n=%d, batch=%d)",
                         m, n, batch);
    if (batch > 0 && (!T || !R)) return stap_fail(err, STAP_EINVAL, "stap_la_qr_check: null matrix pointer");
    if (compute_ref) openblas_set_num_threads(1);

    const size_t one = (size_t)m * n;
    double res = 0.0, dg = 0.0;
    int worst = batch, nomem = 0, lapack_fail = -1;
#pragma omp parallel
    {
        double *Tr = malloc(one * sizeof *Tr), *Ti = malloc(one * sizeof *Ti);
        double complex *ref = compute_ref ? malloc(one * sizeof *ref) : NULL;
        double complex *tau = compute_ref ? malloc((size_t)n * sizeof *tau) : NULL;
        double *cn = compute_ref ? malloc((size_t)n * sizeof *cn) : NULL;
        double complex *x = compute_ref ? malloc((size_t)n * sizeof *x) : NULL;
        int have = Tr && Ti && (!compute_ref || (ref && tau && cn && x));
        if (!have) {
#pragma omp atomic write
            nomem = 1;
        }
        double my_res = 0.0, my_dg = 0.0;
        int my_worst = batch;
#pragma omp for schedule(dynamic, 4)
        for (int k = 0; k < batch; k++) {
            if (!have) continue;
            const stap_cf32 *Tk = T + one * k, *Rk = R + one * k;
            double num, t2;
            gram_residual(m, n, Tk, Rk, Tr, Ti, &num, &t2);
            double rk = ratio(num, t2 * m * LA_EPS);
            if (worse(rk, k, my_res, my_worst)) {
                my_res = rk;
                my_worst = k;
            }
            if (compute_ref) {
                for (size_t e = 0; e < one; e++) ref[e] = STAP_CMPLX(Tr[e], Ti[e]);
                if (LAPACKE_zgeqrf(LAPACK_COL_MAJOR, m, n, ref, m, tau) != 0) {
#pragma omp atomic write
                    lapack_fail = k;
                    continue;
                }
                my_dg = nanmax(diag_ratio(m, n, Tr, Ti, ref, Rk, cn, x), my_dg);
            }
        }
        free(Tr);
        free(Ti);
        free(ref);
        free(tau);
        free(cn);
        free(x);
#pragma omp critical(stap_la_qr_check_merge)
        {
            if (worse(my_res, my_worst, res, worst)) {
                res = my_res;
                worst = my_worst;
            }
            dg = nanmax(my_dg, dg);
        }
    }
    if (nomem) return stap_fail(err, STAP_ENOMEM, "stap_la_qr_check: out of memory (m=%d, n=%d)", m, n);
    if (lapack_fail >= 0)
        return stap_fail(err, STAP_ENUMERIC, "stap_la_qr_check: reference cgeqrf failed on batch item %d",
                         lapack_fail);
    acc->residual = res;
    acc->diag = dg;
    acc->worst = worst < batch ? worst : 0;
    return STAP_OK;
}
