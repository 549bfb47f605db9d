/* cholqr_cpu.c: the cpu backend's CholeskyQR2 and CholeskyQR factors (issue 47), rtstap's own code like
 * qr_cpu.c (no BLAS: its results depend on the CPU's instruction set alone).
 *
 * MVDR needs only R (R^H R = T^H T). CholeskyQR2 (Fukaya, Nakatsukasa, Yanagisawa and
 * Yamamoto, "CholeskyQR2: a simple and communication-avoiding algorithm for computing a
 * tall-skinny QR factorization", 2014; Yamamoto et al., "Roundoff error analysis of the
 * CholeskyQR2 algorithm", ETNA 44, 2015):
 *     G1 = T^H T,  R1 = chol(G1),  Q1 = T R1^-1,  G2 = Q1^H Q1,  R2 = chol(G2),  R = R2 R1.
 * Orthogonality and R are as good as Householder's while cond(T) <~ u^-1/2 (about 4 000 in
 * FP32). cholqr is the first pass alone, mixed precision: R = R1 with G1 summed in double
 * (each product of two floats exact); a float Gram's rounding would cost cond(T)^2 u in the
 * weights (linalg.h, "cholqr"). cholqr2's Gram products and triangular solve run in float
 * on split (re, im) columns padded to a multiple of 8 rows (vectorized by GCC; FMA in the
 * AVX2 copy); the Cholesky factorizations and R2 R1 (n^3 work, small next to the m n^2 of
 * the products) in double.
 *
 * The guard (docs/processing.md "QR factor"): a matrix whose Cholesky breaks down (a pivot
 * not > 0 or not finite), or whose R has min|R_ii| / max|R_ii| < STAP_CHOLQR2_MIN_RATIO or an
 * element past a float's range, is refactored by Householder (qr_cpu.c) in the same call;
 * the context counts it.
 *
 * Compiled twice on x86-64, like qr_cpu.c: as itself and as cholqr_cpu_avx2.c with -mavx2
 * -mfma; stap_la_cpu_cholqr chooses the copy with stap_la_cpu_use_avx2. */
#include "la_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef LA_CPU_AVX2_COPY
#define LA_CHOL_COPY(name) name##_avx2
#else
#define LA_CHOL_COPY(name) name##_portable
#endif

/* Factor each matrix of the batch; failed[k] = 1 where the guard sends matrix k to
 * Householder (A_k then untouched). Returns STAP_OK or STAP_ENOMEM. */
RT_INTERNAL int LA_CHOL_COPY(stap_la_cpu_cholqr_batch)(int threads, int passes, int m, int n, int batch, stap_cf32 *A,
                                      int lda, ptrdiff_t stride_a, unsigned char *failed);

#if defined(__FMA__)
#define FMADDF(a, b, c) __builtin_fmaf(a, b, c)
#else
#define FMADDF(a, b, c) ((a) * (b) + (c))
#endif

#if defined(__GNUC__)
#define CQ_KERNEL static __attribute__((noinline))
#else
#define CQ_KERNEL static
#endif

/* Gram block: g[2*p + q] = sum_t conj(x_p[t]) y_q[t] for the columns x_0 = x, x_1 = x + ld
 * and y_0 = y, y_1 = y + ld (len a multiple of 8; the padding rows are zero). ny: 1 or 2. */
CQ_KERNEL void gram_2x2(int len, ptrdiff_t ld, const float *restrict xr, const float *restrict xi,
                        const float *restrict yr, const float *restrict yi, int nx, int ny,
                        float gr[4], float gi[4])
{
    const float *x1r = nx > 1 ? xr + ld : xr, *x1i = nx > 1 ? xi + ld : xi;
    const float *y1r = ny > 1 ? yr + ld : yr, *y1i = ny > 1 ? yi + ld : yi;
    float a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
#pragma omp simd reduction(+ : a, b, c, d, e, f, g, h)
    for (int t = 0; t < len; t++) {
        const float p0r = xr[t], p0i = xi[t], p1r = x1r[t], p1i = x1i[t];
        const float q0r = yr[t], q0i = yi[t], q1r = y1r[t], q1i = y1i[t];
        a = FMADDF(p0i, q0i, FMADDF(p0r, q0r, a)); /* conj(x0) y0 */
        b = FMADDF(-p0i, q0r, FMADDF(p0r, q0i, b));
        c = FMADDF(p0i, q1i, FMADDF(p0r, q1r, c)); /* conj(x0) y1 */
        d = FMADDF(-p0i, q1r, FMADDF(p0r, q1i, d));
        e = FMADDF(p1i, q0i, FMADDF(p1r, q0r, e)); /* conj(x1) y0 */
        f = FMADDF(-p1i, q0r, FMADDF(p1r, q0i, f));
        g = FMADDF(p1i, q1i, FMADDF(p1r, q1r, g)); /* conj(x1) y1 */
        h = FMADDF(-p1i, q1r, FMADDF(p1r, q1i, h));
    }
    gr[0] = a, gi[0] = b, gr[1] = c, gi[1] = d, gr[2] = e, gi[2] = f, gr[3] = g, gi[3] = h;
}

/* gram_2x2 in double: each product of two floats exact, the sums in double (cholqr's Gram,
 * mixed precision) */
CQ_KERNEL void gram_2x2_d(int len, ptrdiff_t ld, const float *restrict xr, const float *restrict xi,
                          const float *restrict yr, const float *restrict yi, int nx, int ny,
                          double gr[4], double gi[4])
{
    const float *x1r = nx > 1 ? xr + ld : xr, *x1i = nx > 1 ? xi + ld : xi;
    const float *y1r = ny > 1 ? yr + ld : yr, *y1i = ny > 1 ? yi + ld : yi;
    double a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
#pragma omp simd reduction(+ : a, b, c, d, e, f, g, h)
    for (int t = 0; t < len; t++) {
        const double p0r = xr[t], p0i = xi[t], p1r = x1r[t], p1i = x1i[t];
        const double q0r = yr[t], q0i = yi[t], q1r = y1r[t], q1i = y1i[t];
        a += p0r * q0r + p0i * q0i; /* conj(x0) y0 */
        b += p0r * q0i - p0i * q0r;
        c += p0r * q1r + p0i * q1i; /* conj(x0) y1 */
        d += p0r * q1i - p0i * q1r;
        e += p1r * q0r + p1i * q0i; /* conj(x1) y0 */
        f += p1r * q0i - p1i * q0r;
        g += p1r * q1r + p1i * q1i; /* conj(x1) y1 */
        h += p1r * q1i - p1i * q1r;
    }
    gr[0] = a, gi[0] = b, gr[1] = c, gi[1] = d, gr[2] = e, gi[2] = f, gr[3] = g, gi[3] = h;
}

/* The lower triangle of G = P^H P (n x n, column-major double, ldg = n) of the split
 * columns P (ld rows each, rows m..ld-1 zero): G(j, i) = conj(p_i^H p_j), i <= j; the sums
 * in float (cholqr2) or double (wide: cholqr). */
static void gram(int n, int ld, int wide, const float *pr, const float *pi, double *Gr, double *Gi)
{
    for (int i = 0; i < n; i += 2) {
        const int nx = n - i < 2 ? n - i : 2;
        for (int j = i; j < n; j += 2) {
            const int ny = n - j < 2 ? n - j : 2;
            double gr[4], gi[4];
            if (wide) {
                gram_2x2_d(ld, ld, pr + (size_t)i * ld, pi + (size_t)i * ld, pr + (size_t)j * ld,
                           pi + (size_t)j * ld, nx, ny, gr, gi);
            } else {
                float fr[4], fi[4];
                gram_2x2(ld, ld, pr + (size_t)i * ld, pi + (size_t)i * ld, pr + (size_t)j * ld,
                         pi + (size_t)j * ld, nx, ny, fr, fi);
                for (int q = 0; q < 4; q++) gr[q] = fr[q], gi[q] = fi[q];
            }
            for (int p = 0; p < nx; p++)
                for (int q = 0; q < ny; q++) {
                    Gr[(size_t)(i + p) * n + j + q] = gr[2 * p + q];
                    Gi[(size_t)(i + p) * n + j + q] = -gi[2 * p + q];
                }
        }
    }
}

/* In place: the lower Cholesky factor L of the Hermitian G (lower triangle read, L L^H = G,
 * real positive diagonal), left-looking by columns so that every inner loop runs down a
 * column. R = L^H. Returns 0, or 1 at a breakdown (a pivot not > 0 or not finite). */
static int cholesky(int n, double *Lr, double *Li)
{
    for (int j = 0; j < n; j++) {
        double *cr = Lr + (size_t)j * n, *ci = Li + (size_t)j * n;
        for (int k = 0; k < j; k++) { /* L(j:n, j) -= L(j:n, k) conj(L(j, k)) */
            const double *xr = Lr + (size_t)k * n, *xi = Li + (size_t)k * n;
            const double sr = xr[j], si = -xi[j];
#pragma omp simd
            for (int i = j; i < n; i++) {
                cr[i] -= xr[i] * sr - xi[i] * si;
                ci[i] -= xr[i] * si + xi[i] * sr;
            }
        }
        const double d = cr[j];
        if (!(d > 0) || !isfinite(d)) return 1;
        const double r = sqrt(d), inv = 1.0 / r;
        cr[j] = r, ci[j] = 0;
#pragma omp simd
        for (int i = j + 1; i < n; i++) cr[i] *= inv, ci[i] *= inv;
    }
    return 0;
}

/* c -= s_0 x_0 + s_1 x_1 (complex scalars, split columns of len rows, x_1 = x + ld); nx 1 or 2 */
CQ_KERNEL void update_2(int len, ptrdiff_t ld, int nx, const float *restrict xr,
                        const float *restrict xi, const float s_r[2], const float s_i[2],
                        float *restrict cr, float *restrict ci)
{
    const float a = s_r[0], b = s_i[0], c = nx > 1 ? s_r[1] : 0.0f, d = nx > 1 ? s_i[1] : 0.0f;
    const float *x1r = nx > 1 ? xr + ld : xr, *x1i = nx > 1 ? xi + ld : xi;
#pragma omp simd
    for (int t = 0; t < len; t++) {
        const float p0r = xr[t], p0i = xi[t], p1r = x1r[t], p1i = x1i[t];
        cr[t] = FMADDF(d, p1i, FMADDF(-c, p1r, FMADDF(b, p0i, FMADDF(-a, p0r, cr[t]))));
        ci[t] = FMADDF(-d, p1r, FMADDF(-c, p1i, FMADDF(-b, p0r, FMADDF(-a, p0i, ci[t]))));
    }
}

/* In place: P = P L^-H (L lower n x n, column-major double; U = L^H upper, U(i, j) =
 * conj(L(j, i))), column by column: p_j = (p_j - sum_{i<j} p_i U(i,j)) / U(j,j). */
static void solve_right(int n, int ld, float *pr, float *pi, const double *Lr, const double *Li)
{
    for (int j = 0; j < n; j++) {
        float *cr = pr + (size_t)j * ld, *ci = pi + (size_t)j * ld;
        for (int i = 0; i < j; i += 2) {
            const int nx = j - i < 2 ? j - i : 2;
            float sr[2] = {(float)Lr[(size_t)i * n + j], 0.0f};
            float si[2] = {(float)-Li[(size_t)i * n + j], 0.0f};
            if (nx > 1) sr[1] = (float)Lr[(size_t)(i + 1) * n + j], si[1] = (float)-Li[(size_t)(i + 1) * n + j];
            update_2(ld, ld, nx, pr + (size_t)i * ld, pi + (size_t)i * ld, sr, si, cr, ci);
        }
        const float inv = (float)(1.0 / Lr[(size_t)j * n + j]); /* real and positive */
#pragma omp simd
        for (int t = 0; t < ld; t++) cr[t] *= inv, ci[t] *= inv;
    }
}

/* R = R2 R1 = (L1 L2)^H (L1, L2 lower, double; L2 NULL: the identity, R = R1) into the upper
 * triangle of Rs (float, leading dimension n): column j of P = L1 L2 is sum_{k>=j} L1(:, k)
 * L2(k, j), and R(j, i) = conj(P(i, j)); acc: 2n doubles. Returns min|R_ii| / max|R_ii|, 0
 * when not finite or when an element of R does not fit a float. */
static double product_into(int n, const double *L1r, const double *L1i, const double *L2r,
                           const double *L2i, stap_cf32 *Rs, double *acc)
{
    double lo = INFINITY, hi = 0, *ar = acc, *ai = acc + n;
    int fits = 1;
    for (int j = 0; j < n; j++) {
        if (!L2r) {
            for (int i = j; i < n; i++) ar[i] = L1r[(size_t)j * n + i], ai[i] = L1i[(size_t)j * n + i];
        } else {
            for (int i = j; i < n; i++) ar[i] = ai[i] = 0;
            for (int k = j; k < n; k++) {
                const double br = L2r[(size_t)j * n + k], bi = L2i[(size_t)j * n + k];
                const double *xr = L1r + (size_t)k * n, *xi = L1i + (size_t)k * n;
#pragma omp simd
                for (int i = k; i < n; i++) {
                    ar[i] += xr[i] * br - xi[i] * bi;
                    ai[i] += xr[i] * bi + xi[i] * br;
                }
            }
        }
        for (int i = j; i < n; i++) {
            const float re = (float)ar[i], im = (float)ai[i];
            fits &= isfinite(re) && isfinite(im);
            Rs[(size_t)i * n + j] = re - I * im;
        }
        const double a = fabs(ar[j]);
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
    }
    const double r = hi > 0 ? lo / hi : 0;
    return fits && isfinite(r) && isfinite(hi) ? r : 0;
}

typedef struct cq_work {
    float *pr, *pi;       /* the matrix, split, ld x n; rows m..ld-1 zero */
    double *g1r, *g1i;    /* G1, then L1 = R1^H (n x n, lower)            */
    double *g2r, *g2i;    /* G2, then L2 = R2^H                           */
    double *acc;          /* 2n: a column of R2 R1                        */
    int ld;
} cq_work;

/* One matrix, one or two passes: 0 with R in A_k's upper triangle, or 1 (guard) with A_k
 * untouched. */
static int cholqr_one(int passes, int m, int n, stap_cf32 *Ak, int lda, cq_work *w)
{
    const int ld = w->ld;
    for (int j = 0; j < n; j++) {
        const stap_cf32 *a = Ak + (size_t)j * lda;
        float *cr = w->pr + (size_t)j * ld, *ci = w->pi + (size_t)j * ld;
        for (int i = 0; i < m; i++) cr[i] = crealf(a[i]), ci[i] = cimagf(a[i]);
        for (int i = m; i < ld; i++) cr[i] = ci[i] = 0.0f;
    }
    gram(n, ld, passes == 1, w->pr, w->pi, w->g1r, w->g1i);
    if (cholesky(n, w->g1r, w->g1i)) return 1;
    if (passes == 2) {
        solve_right(n, ld, w->pr, w->pi, w->g1r, w->g1i);
        gram(n, ld, 0, w->pr, w->pi, w->g2r, w->g2i);
        if (cholesky(n, w->g2r, w->g2i)) return 1;
    }
    /* R goes into a scratch copy first: A_k must stay intact if the guard refuses it */
    stap_cf32 *Rs = (stap_cf32 *)w->pr; /* P is no longer needed; ld*n*2 floats >= n*n complex */
    const double ratio = passes == 1 ? product_into(n, w->g1r, w->g1i, NULL, NULL, Rs, w->acc)
                                     : product_into(n, w->g1r, w->g1i, w->g2r, w->g2i, Rs, w->acc);
    if (!(ratio >= STAP_CHOLQR2_MIN_RATIO)) return 1;
    for (int j = 0; j < n; j++) memcpy(Ak + (size_t)j * lda, Rs + (size_t)j * n, (size_t)(j + 1) * sizeof *Ak);
    return 0;
}

int LA_CHOL_COPY(stap_la_cpu_cholqr_batch)(int threads, int passes, int m, int n, int batch, stap_cf32 *A,
                                      int lda, ptrdiff_t stride_a, unsigned char *failed)
{
    int nomem = 0;
    const int ld = (m + 7) & ~7;
    const size_t plane = (size_t)ld * n, nn = (size_t)n * n;
#pragma omp parallel num_threads(threads)
    {
        float *buf = aligned_alloc(32, ((2 * plane * sizeof(float)) + 31) & ~(size_t)31);
        double *gbuf = malloc((4 * nn + 2 * (size_t)n) * sizeof(double));
        if (!buf || !gbuf) {
#pragma omp atomic write
            nomem = 1;
        }
        cq_work w = {buf, buf ? buf + plane : NULL, gbuf, gbuf ? gbuf + nn : NULL,
                     gbuf ? gbuf + 2 * nn : NULL, gbuf ? gbuf + 3 * nn : NULL,
                     gbuf ? gbuf + 4 * nn : NULL, ld};
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            if (!buf || !gbuf) continue;
            failed[k] = (unsigned char)cholqr_one(passes, m, n, A + (ptrdiff_t)k * stride_a, lda, &w);
        }
        free(buf);
        free(gbuf);
    }
    return nomem ? STAP_ENOMEM : STAP_OK;
}

/* ---- the choice between the copies and the guard's Householder (portable copy) ------- */
#ifndef LA_CPU_AVX2_COPY
#if defined(RTSTAP_CPU_AVX2) && (defined(__x86_64__) || defined(__i386__))
RT_INTERNAL int stap_la_cpu_cholqr_batch_avx2(int threads, int passes, int m, int n, int batch, stap_cf32 *A,
                             int lda, ptrdiff_t stride_a, unsigned char *failed);
#define LA_CHOL_AVX2 stap_la_cpu_use_avx2()
#else
#define stap_la_cpu_cholqr_batch_avx2 stap_la_cpu_cholqr_batch_portable
#define LA_CHOL_AVX2 0
#endif

int stap_la_cpu_cholqr(stap_la_ctx *ctx, int passes, int m, int n, int batch, stap_cf32 *A, int lda,
                       ptrdiff_t stride_a, stap_error *err)
{
    const char *name = passes == 1 ? "cholqr" : "cholqr2";
    unsigned char *failed = calloc((size_t)batch, 1);
    if (!failed) return stap_fail(err, STAP_ENOMEM, "cpu %s: out of memory", name);
    int st = (LA_CHOL_AVX2 ? stap_la_cpu_cholqr_batch_avx2 : stap_la_cpu_cholqr_batch_portable)(
        ctx->threads, passes, m, n, batch, A, lda, stride_a, failed);
    if (st) {
        free(failed);
        return stap_fail(err, st, "cpu %s: out of memory for %dx%d work buffers", name, m, n);
    }
    /* the guard: Householder, in the same call, the refused matrices spread over the threads
     * (one matrix a thread, as stap_la_cpu_qr itself runs them) */
    long long guarded = 0;
    for (int k = 0; k < batch; k++) guarded += failed[k];
    stap_la_ctx one = *ctx;
    one.threads = 1;
    int bad = STAP_OK;
#pragma omp parallel for schedule(dynamic) num_threads(ctx->threads) if (guarded > 1)
    for (int k = 0; k < batch; k++) {
        if (!failed[k]) continue;
        stap_error e1;
        const int s1 = stap_la_cpu_qr(&one, m, n, 1, A + (ptrdiff_t)k * stride_a, lda, stride_a, &e1);
        if (s1) {
#pragma omp critical(stap_la_cpu_cholqr_guard)
            if (!bad) {
                bad = s1;
                if (err) *err = e1;
            }
        }
    }
    st = bad;
    free(failed);
    ctx->qr_cholqr2 += batch - guarded;
    ctx->qr_guarded += guarded;
    return st;
}
#endif
