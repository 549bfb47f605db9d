/* qr_cpu.c: the cpu backend, rtstap's own batched complex Householder QR and MVDR weight
 * solves, OpenMP across the matrices of a batch (one matrix per thread at a time).
 *
 * Compiled twice on x86-64: as itself for the build's target (portable x86-64 unless
 * RTSTAP_NATIVE), and as qr_cpu_avx2.c with -mavx2 -mfma; stap_la_cpu_qr and stap_la_cpu_weights
 * (end of file) choose the AVX2 copy at run time when the CPU has AVX2 and FMA.
 *
 * QR: blocked Householder with compact-WY trailing updates (LAPACK cgeqrf/clarft/clarfb;
 * Schreiber & Van Loan 1989), on a thread-local copy of each matrix with real and
 * imaginary parts in separate arrays, so that every inner loop is a plain float loop
 * (vectorized by GCC; the two trailing-update kernels are written with AVX2/FMA
 * intrinsics when the target has them, with portable C versions otherwise). Reflectors
 * follow LAPACK's clarfg: H = I - tau v v^H, v(0) = 1, beta = -sign(Re alpha) ||x||, so
 * R's diagonal is real. Column norms are accumulated in double, which cannot overflow or
 * underflow for float data, so no scaling pass is needed. No BLAS is called. */
#include "la_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

/* The names of this copy's entry points: stap_la_cpu_qr_avx2 in qr_cpu_avx2.c, else
 * stap_la_cpu_qr_portable (and the same for stap_la_cpu_weights). */
#ifdef LA_CPU_AVX2_COPY
#define LA_CPU_COPY(name) name##_avx2
#else
#define LA_CPU_COPY(name) name##_portable
#endif
RT_INTERNAL int LA_CPU_COPY(stap_la_cpu_qr)(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                           ptrdiff_t stride_a, stap_error *err);
RT_INTERNAL int LA_CPU_COPY(stap_la_cpu_weights)(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                                ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                                stap_error *err);

/* Reflectors per compact-WY block, a multiple of 4. Measured on 128 x 240x66 with 2
 * threads: 4 is fastest (wider blocks move more work into the level-2 panel, and the
 * 4-wide trailing kernels already run near the FMA throughput from L1). */
#ifndef PANEL
#define PANEL 4
#endif

static int round8(int x) { return (x + 7) & ~7; }

/* a*b + c: one fused multiply-add where the target has the instruction; elsewhere a
 * multiply and an add — fmaf there is a library call per element (rounded once, in
 * software) that no loop around it can vectorize: the portable x86-64 copy ran 70 x
 * slower with it. (-std=c11 does not contract a*b + c into an FMA by itself.) */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define MADDF(a, b, c) fmaf(a, b, c)
#define MADD(a, b, c) fma(a, b, c)
#else
#define MADDF(a, b, c) ((a) * (b) + (c))
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

/* The kernels stay out of line: GCC vectorizes each once, whereas some inlined copies
 * inside the nested loops of qr_one lost their vectorization. */
#if defined(__GNUC__)
#define KERNEL static __attribute__((noinline))
#else
#define KERNEL static
#endif

/* ---- float kernels on split (re, im) columns ----------------------------------------
 * Every kernel runs over 8*nb8 rows starting at a multiple of 8: the work arrays are
 * padded with zero rows to a multiple of 8 and the reflectors are stored with explicit
 * zeros above their unit entry, so the rows added at either end contribute exactly
 * nothing and no loop needs a scalar remainder. */

/* s = sum_t conj(a[t]) * b[t] */
KERNEL void dot_1x1(int nb8, const float *restrict ar, const float *restrict ai,
                    const float *restrict br, const float *restrict bi, float *sr, float *si)
{
    float r = 0, im = 0;
    const int len = nb8 * 8;
#pragma omp simd reduction(+ : r, im) aligned(ar, ai, br, bi : 32)
    for (int t = 0; t < len; t++) {
        r = MADDF(ai[t], bi[t], MADDF(ar[t], br[t], r));
        im = MADDF(-ai[t], br[t], MADDF(ar[t], bi[t], im));
    }
    *sr = r, *si = im;
}

/* b_k -= s_k * a for the ncol (<= 4) columns b_k = b + k*ldb. */
KERNEL void axpy_1xk(int nb8, int ncol, const float *restrict ar, const float *restrict ai,
                     float *restrict br, float *restrict bi, ptrdiff_t ldb, const float sr[4],
                     const float si[4])
{
    const int len = nb8 * 8;
    for (int k = 0; k < ncol; k++) {
        float *cr = br + k * ldb, *ci = bi + k * ldb;
        const float s_r = sr[k], s_i = si[k];
#pragma omp simd aligned(ar, ai, cr, ci : 32)
        for (int t = 0; t < len; t++) {
            float xr = ar[t], xi = ai[t];
            cr[t] = MADDF(s_i, xi, MADDF(-s_r, xr, cr[t]));
            ci[t] = MADDF(-s_i, xr, MADDF(-s_r, xi, ci[t]));
        }
    }
}

#if defined(__AVX2__) && defined(__FMA__)
/* AVX2/FMA versions of the two kernels that carry the compact-WY updates. Written with
 * intrinsics for their ends: dot_1x4 finishes its 8 vector sums with one transposing
 * horizontal add (GCC's generic reduction epilogue cost as much as the loop on these
 * short columns), and axpy_4x1 splits its dependency chain in two. */

/* lanes of a, b, c, d summed: {sum a, sum b, sum c, sum d} */
static inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d)
{
    __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d);
    __m256 abcd = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

KERNEL void dot_1x4(int nb8, const float *restrict ar, const float *restrict ai,
                    const float *restrict br, const float *restrict bi, ptrdiff_t ldb,
                    float sr[4], float si[4])
{
    __m256 r0 = _mm256_setzero_ps(), r1 = r0, r2 = r0, r3 = r0;
    __m256 i0 = r0, i1 = r0, i2 = r0, i3 = r0;
    for (int b = 0; b < nb8; b++) {
        const ptrdiff_t t = 8 * (ptrdiff_t)b;
        const __m256 xr = _mm256_load_ps(ar + t), xi = _mm256_load_ps(ai + t);
        __m256 yr = _mm256_load_ps(br + t), yi = _mm256_load_ps(bi + t);
        r0 = _mm256_fmadd_ps(xi, yi, _mm256_fmadd_ps(xr, yr, r0));
        i0 = _mm256_fnmadd_ps(xi, yr, _mm256_fmadd_ps(xr, yi, i0));
        yr = _mm256_load_ps(br + ldb + t), yi = _mm256_load_ps(bi + ldb + t);
        r1 = _mm256_fmadd_ps(xi, yi, _mm256_fmadd_ps(xr, yr, r1));
        i1 = _mm256_fnmadd_ps(xi, yr, _mm256_fmadd_ps(xr, yi, i1));
        yr = _mm256_load_ps(br + 2 * ldb + t), yi = _mm256_load_ps(bi + 2 * ldb + t);
        r2 = _mm256_fmadd_ps(xi, yi, _mm256_fmadd_ps(xr, yr, r2));
        i2 = _mm256_fnmadd_ps(xi, yr, _mm256_fmadd_ps(xr, yi, i2));
        yr = _mm256_load_ps(br + 3 * ldb + t), yi = _mm256_load_ps(bi + 3 * ldb + t);
        r3 = _mm256_fmadd_ps(xi, yi, _mm256_fmadd_ps(xr, yr, r3));
        i3 = _mm256_fnmadd_ps(xi, yr, _mm256_fmadd_ps(xr, yi, i3));
    }
    _mm_storeu_ps(sr, hsum4(r0, r1, r2, r3));
    _mm_storeu_ps(si, hsum4(i0, i1, i2, i3));
}

KERNEL void axpy_4x1(int nb8, const float *restrict vr, const float *restrict vi,
                     ptrdiff_t ldv, const float wr[4], const float wi[4], float *restrict cr,
                     float *restrict ci)
{
    const __m256 w0r = _mm256_set1_ps(wr[0]), w1r = _mm256_set1_ps(wr[1]);
    const __m256 w2r = _mm256_set1_ps(wr[2]), w3r = _mm256_set1_ps(wr[3]);
    const __m256 w0i = _mm256_set1_ps(wi[0]), w1i = _mm256_set1_ps(wi[1]);
    const __m256 w2i = _mm256_set1_ps(wi[2]), w3i = _mm256_set1_ps(wi[3]);
    for (int b = 0; b < nb8; b++) {
        const ptrdiff_t t = 8 * (ptrdiff_t)b;
        __m256 v_r = _mm256_load_ps(vr + t), v_i = _mm256_load_ps(vi + t);
        /* two half sums per part, (c - w0 v0 - w1 v1) + (-w2 v2 - w3 v3) */
        __m256 xr = _mm256_fmadd_ps(w0i, v_i, _mm256_fnmadd_ps(w0r, v_r, _mm256_load_ps(cr + t)));
        __m256 xi = _mm256_fnmadd_ps(w0i, v_r, _mm256_fnmadd_ps(w0r, v_i, _mm256_load_ps(ci + t)));
        v_r = _mm256_load_ps(vr + ldv + t), v_i = _mm256_load_ps(vi + ldv + t);
        xr = _mm256_fmadd_ps(w1i, v_i, _mm256_fnmadd_ps(w1r, v_r, xr));
        xi = _mm256_fnmadd_ps(w1i, v_r, _mm256_fnmadd_ps(w1r, v_i, xi));
        v_r = _mm256_load_ps(vr + 2 * ldv + t), v_i = _mm256_load_ps(vi + 2 * ldv + t);
        __m256 yr = _mm256_fmsub_ps(w2i, v_i, _mm256_mul_ps(w2r, v_r));
        __m256 yi = _mm256_fnmsub_ps(w2i, v_r, _mm256_mul_ps(w2r, v_i));
        v_r = _mm256_load_ps(vr + 3 * ldv + t), v_i = _mm256_load_ps(vi + 3 * ldv + t);
        yr = _mm256_fmadd_ps(w3i, v_i, _mm256_fnmadd_ps(w3r, v_r, yr));
        yi = _mm256_fnmadd_ps(w3i, v_r, _mm256_fnmadd_ps(w3r, v_i, yi));
        _mm256_store_ps(cr + t, _mm256_add_ps(xr, yr));
        _mm256_store_ps(ci + t, _mm256_add_ps(xi, yi));
    }
}
#else
/* s[k] = sum_t conj(a[t]) * b_k[t] for the 4 columns b_k = b + k*ldb. */
KERNEL void dot_1x4(int nb8, const float *restrict ar, const float *restrict ai,
                    const float *restrict br, const float *restrict bi, ptrdiff_t ldb,
                    float sr[4], float si[4])
{
    const float *b0r = br, *b1r = br + ldb, *b2r = br + 2 * ldb, *b3r = br + 3 * ldb;
    const float *b0i = bi, *b1i = bi + ldb, *b2i = bi + 2 * ldb, *b3i = bi + 3 * ldb;
    float r0 = 0, r1 = 0, r2 = 0, r3 = 0, i0 = 0, i1 = 0, i2 = 0, i3 = 0;
    const int len = nb8 * 8;
#pragma omp simd reduction(+ : r0, r1, r2, r3, i0, i1, i2, i3) aligned(ar, ai, br, bi : 32)
    for (int t = 0; t < len; t++) {
        float xr = ar[t], xi = ai[t];
        r0 = MADDF(xi, b0i[t], MADDF(xr, b0r[t], r0));
        i0 = MADDF(-xi, b0r[t], MADDF(xr, b0i[t], i0));
        r1 = MADDF(xi, b1i[t], MADDF(xr, b1r[t], r1));
        i1 = MADDF(-xi, b1r[t], MADDF(xr, b1i[t], i1));
        r2 = MADDF(xi, b2i[t], MADDF(xr, b2r[t], r2));
        i2 = MADDF(-xi, b2r[t], MADDF(xr, b2i[t], i2));
        r3 = MADDF(xi, b3i[t], MADDF(xr, b3r[t], r3));
        i3 = MADDF(-xi, b3r[t], MADDF(xr, b3i[t], i3));
    }
    sr[0] = r0, sr[1] = r1, sr[2] = r2, sr[3] = r3;
    si[0] = i0, si[1] = i1, si[2] = i2, si[3] = i3;
}

/* c -= sum_{k<4} w_k * V_k for the 4 columns V_k = V + k*ldv. */
KERNEL void axpy_4x1(int nb8, const float *restrict vr, const float *restrict vi,
                     ptrdiff_t ldv, const float wr[4], const float wi[4], float *restrict cr,
                     float *restrict ci)
{
    const float *v0r = vr, *v1r = vr + ldv, *v2r = vr + 2 * ldv, *v3r = vr + 3 * ldv;
    const float *v0i = vi, *v1i = vi + ldv, *v2i = vi + 2 * ldv, *v3i = vi + 3 * ldv;
    const float w0r = wr[0], w1r = wr[1], w2r = wr[2], w3r = wr[3];
    const float w0i = wi[0], w1i = wi[1], w2i = wi[2], w3i = wi[3];
    const int len = nb8 * 8;
#pragma omp simd aligned(vr, vi, cr, ci : 32)
    for (int t = 0; t < len; t++) {
        float xr = cr[t], xi = ci[t];
        xr = MADDF(w0i, v0i[t], MADDF(-w0r, v0r[t], xr));
        xi = MADDF(-w0i, v0r[t], MADDF(-w0r, v0i[t], xi));
        xr = MADDF(w1i, v1i[t], MADDF(-w1r, v1r[t], xr));
        xi = MADDF(-w1i, v1r[t], MADDF(-w1r, v1i[t], xi));
        xr = MADDF(w2i, v2i[t], MADDF(-w2r, v2r[t], xr));
        xi = MADDF(-w2i, v2r[t], MADDF(-w2r, v2i[t], xi));
        xr = MADDF(w3i, v3i[t], MADDF(-w3r, v3r[t], xr));
        xi = MADDF(-w3i, v3r[t], MADDF(-w3r, v3i[t], xi));
        cr[t] = xr;
        ci[t] = xi;
    }
}
#endif

/* ---- one matrix ----------------------------------------------------------------------- */

typedef struct qr_work {
    float *pr, *pi; /* the matrix, split, ld x n; rows m..ld-1 are zero               */
    float *vr, *vi; /* the current block of reflectors, ld x PANEL, by absolute row   */
    int ld;         /* m rounded up to a multiple of 8                                 */
} qr_work;

/* Generate the reflector of x = P(j:m-1, j) (clarfg): v (with v[0] = 1) and tau; leave
 * beta in x[0]. len = m - j >= 1. */
KERNEL void make_reflector(int len, float *restrict xr, float *restrict xi,
                           float *restrict vr, float *restrict vi, float *tau_r, float *tau_i)
{
    double ss = 0.0;
#pragma omp simd reduction(+ : ss)
    for (int t = 1; t < len; t++) ss += (double)xr[t] * xr[t] + (double)xi[t] * xi[t];
    double ar = xr[0], ai = xi[0];
    vr[0] = 1.0f;
    vi[0] = 0.0f;
    if (ss == 0.0 && ai == 0.0) { /* H = I */
        for (int t = 1; t < len; t++) vr[t] = vi[t] = 0.0f;
        *tau_r = *tau_i = 0.0f;
        return;
    }
    double beta = -copysign(sqrt(ar * ar + ai * ai + ss), ar);
    *tau_r = (float)((beta - ar) / beta);
    *tau_i = (float)(-ai / beta);
    /* v = x / (alpha - beta), in double: 1/(alpha - beta) may exceed the float range
     * when the column is tiny, while the quotients are at most 1 in magnitude. */
    double dr = ar - beta, di = ai, dd = dr * dr + di * di;
    double ir = dr / dd, ii = -di / dd;
#pragma omp simd
    for (int t = 1; t < len; t++) {
        double a = xr[t], b = xi[t];
        vr[t] = (float)(a * ir - b * ii);
        vi[t] = (float)(a * ii + b * ir);
    }
    xr[0] = (float)beta;
    xi[0] = 0.0f;
}

static void qr_one(int m, int n, qr_work *w)
{
    const int ld = w->ld;
    float *const pr = w->pr, *const pi = w->pi, *const vr = w->vr, *const vi = w->vi;
#define COL(base, col) ((base) + (size_t)(col) * ld)
    float tau_r[PANEL], tau_i[PANEL];
    float tr[PANEL][PANEL], ti[PANEL][PANEL]; /* T of the block, T[row][col], upper */
    for (int j0 = 0; j0 < n; j0 += PANEL) {
        const int jb = n - j0 < PANEL ? n - j0 : PANEL;
        const int jw = (jb + 3) & ~3; /* block width padded to whole groups of 4 */
        const int s0 = j0 & ~7;       /* first row the block's loops touch */
        /* ---- panel: unblocked, one reflector at a time, 4 panel columns per pass */
        for (int p = 0; p < jb; p++) {
            const int j = j0 + p, sj = j & ~7, nb8 = (ld - sj) / 8;
            float *cvr = COL(vr, p), *cvi = COL(vi, p);
            for (int t = s0; t < j; t++) cvr[t] = cvi[t] = 0.0f;
            make_reflector(m - j, COL(pr, j) + j, COL(pi, j) + j, cvr + j, cvi + j, &tau_r[p],
                           &tau_i[p]);
            if (tau_r[p] == 0.0f && tau_i[p] == 0.0f) continue;
            /* columns j+1 .. j0+jb-1: c -= conj(tau) (v^H c) v */
            for (int k = j + 1; k < j0 + jb; k += 4) {
                const int ncol = j0 + jb - k < 4 ? j0 + jb - k : 4;
                float sr[4], si[4];
                if (ncol == 4)
                    dot_1x4(nb8, cvr + sj, cvi + sj, COL(pr, k) + sj, COL(pi, k) + sj, ld, sr, si);
                else
                    for (int q = 0; q < ncol; q++)
                        dot_1x1(nb8, cvr + sj, cvi + sj, COL(pr, k + q) + sj, COL(pi, k + q) + sj,
                                &sr[q], &si[q]);
                for (int q = 0; q < ncol; q++) { /* s = conj(tau) * s */
                    const float a = sr[q], b = si[q];
                    sr[q] = tau_r[p] * a + tau_i[p] * b;
                    si[q] = tau_r[p] * b - tau_i[p] * a;
                }
                axpy_1xk(nb8, ncol, cvr + sj, cvi + sj, COL(pr, k) + sj, COL(pi, k) + sj, ld, sr, si);
            }
        }
        if (j0 + jb >= n) break;
        /* padding reflectors (zero columns) so that groups of 4 need no remainder code */
        for (int p = jb; p < jw; p++) {
            memset(COL(vr, p), 0, (size_t)ld * sizeof *vr);
            memset(COL(vi, p), 0, (size_t)ld * sizeof *vi);
        }
        /* ---- T (clarft, forward, columnwise): T(0:p-1, p) = -tau_p T(0:p-1,0:p-1) V^H v_p */
        for (int p = 0; p < jw; p++) {
            float gr[PANEL] = {0}, gi[PANEL] = {0};
            const float t_r = p < jb ? tau_r[p] : 0.0f, t_i = p < jb ? tau_i[p] : 0.0f;
            if (p < jb) {
                const int sp = (j0 + p) & ~7;
                for (int q = 0; q < p; q += 4) { /* V_q^H v_p = conj(v_p^H V_q) */
                    float sr[4], si[4];
                    dot_1x4((ld - sp) / 8, COL(vr, p) + sp, COL(vi, p) + sp, COL(vr, q) + sp,
                            COL(vi, q) + sp, ld, sr, si);
                    for (int u = 0; u < 4 && q + u < p; u++) gr[q + u] = sr[u], gi[q + u] = -si[u];
                }
            }
            for (int q = 0; q < p; q++) { /* T(0:p-1,p) = T(0:p-1,0:p-1) * g, then * -tau */
                float ar = 0, ai = 0;
                for (int u = q; u < p; u++) {
                    ar += tr[q][u] * gr[u] - ti[q][u] * gi[u];
                    ai += tr[q][u] * gi[u] + ti[q][u] * gr[u];
                }
                tr[q][p] = -(t_r * ar - t_i * ai);
                ti[q][p] = -(t_r * ai + t_i * ar);
            }
            tr[p][p] = t_r;
            ti[p][p] = t_i;
        }
        /* ---- trailing columns: c -= V T^H V^H c (clarfb, left, conjugate transpose) */
        const int nb8 = (ld - s0) / 8;
        for (int k = j0 + jb; k < n; k++) {
            float *cr = COL(pr, k) + s0, *ci = COL(pi, k) + s0;
            float yr[PANEL], yi[PANEL], zr[PANEL], zi[PANEL];
            for (int q = 0; q < jw; q += 4) { /* y = V^H c = conj(c^H V) */
                float sr[4], si[4];
                dot_1x4(nb8, cr, ci, COL(vr, q) + s0, COL(vi, q) + s0, ld, sr, si);
                for (int u = 0; u < 4; u++) yr[q + u] = sr[u], yi[q + u] = -si[u];
            }
            for (int q = 0; q < jw; q++) { /* z = T^H y */
                float ar = 0, ai = 0;
                for (int u = 0; u <= q; u++) {
                    ar += tr[u][q] * yr[u] + ti[u][q] * yi[u];
                    ai += tr[u][q] * yi[u] - ti[u][q] * yr[u];
                }
                zr[q] = ar, zi[q] = ai;
            }
            for (int q = 0; q < jw; q += 4)
                axpy_4x1(nb8, COL(vr, q) + s0, COL(vi, q) + s0, ld, zr + q, zi + q, cr, ci);
        }
    }
#undef COL
}

int LA_CPU_COPY(stap_la_cpu_qr)(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                           ptrdiff_t stride_a, stap_error *err)
{
    int nomem = 0;
    const int ld = round8(m);
    const size_t plane = (size_t)ld * n, vplane = (size_t)ld * PANEL;
#pragma omp parallel num_threads(ctx->threads)
    {
        /* one buffer per thread for the whole call: the matrix (re, im) and V (re, im);
         * zeroed once, so that the padding rows m..ld-1 are zero from the start */
        float *buf = aligned_alloc(32, (2 * plane + 2 * vplane) * sizeof(float));
        if (!buf) {
#pragma omp atomic write
            nomem = 1;
        } else {
            memset(buf, 0, (2 * plane + 2 * vplane) * sizeof(float));
        }
        qr_work w = {buf, buf + plane, buf + 2 * plane, buf + 2 * plane + vplane, ld};
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            if (!buf) continue;
            stap_cf32 *Ak = A + (ptrdiff_t)k * stride_a;
            for (int j = 0; j < n; j++) {
                const stap_cf32 *a = Ak + (size_t)j * lda;
                float *cr = w.pr + (size_t)j * ld, *ci = w.pi + (size_t)j * ld;
                for (int i = 0; i < m; i++) {
                    cr[i] = crealf(a[i]);
                    ci[i] = cimagf(a[i]);
                }
                for (int i = m; i < ld; i++) cr[i] = ci[i] = 0.0f; /* a NaN must not linger */
            }
            qr_one(m, n, &w);
            for (int j = 0; j < n; j++) { /* R only: the upper triangle */
                stap_cf32 *a = Ak + (size_t)j * lda;
                const float *cr = w.pr + (size_t)j * ld, *ci = w.pi + (size_t)j * ld;
                for (int i = 0; i <= j; i++) a[i] = cr[i] + I * ci[i];
            }
        }
        free(buf);
    }
    if (nomem) return stap_fail(err, STAP_ENOMEM, "cpu QR: out of memory for %dx%d work buffers", m, n);
    return STAP_OK;
}

/* ---- weights --------------------------------------------------------------------------
 * For each factor R and each steering vector v: R^H y = v, R z = y, w = z / (v^H z).
 * The two triangular solves run in double precision (cheap next to the QR, and they
 * carry cond(R) into the weights) on BEAMS right-hand sides at a time, vectorized
 * across the beams; R is copied once per matrix into row-major double arrays so that
 * both substitutions read it contiguously. */

#define BEAMS 8 /* right-hand sides per pass; a multiple of 4 (one AVX2 double vector) */

typedef struct wt_work {
    double *lr, *li; /* R^H, row-major lower: L[i*n + j] = conj(R(j, i)), j <= i */
    double *ur, *ui; /* R, row-major upper:   U[i*n + j] = R(i, j), j >= i       */
    double *dr, *di; /* 1 / R(i, i)                                              */
    double *yr, *yi; /* n x BEAMS solution block, beam-fastest                   */
} wt_work;

/* y(i, :) = (rhs(i, :) - sum_{j in [j_lo, j_hi)} M[i][j] y(j, :)) * d_i, for i running
 * forward (lower, M = L) or backward (upper, M = U); rhs is already in y. */
#if defined(__AVX2__) && defined(__FMA__) && BEAMS == 8
/* Beams in two 4-wide double vectors per part; even and odd j feed separate
 * accumulators so that the FMA latency is covered. */
static void subst_block(int n, int lower, const double *mr, const double *mi, const double *dr,
                        const double *di, double *restrict yr, double *restrict yi)
{
    for (int s = 0; s < n; s++) {
        const int i = lower ? s : n - 1 - s;
        const int j_lo = lower ? 0 : i + 1, j_hi = lower ? i : n;
        const double *rowr = mr + (size_t)i * n, *rowi = mi + (size_t)i * n;
        double *tr = yr + (size_t)i * 8, *ti = yi + (size_t)i * 8;
        __m256d a0r = _mm256_load_pd(tr), a1r = _mm256_load_pd(tr + 4);
        __m256d a0i = _mm256_load_pd(ti), a1i = _mm256_load_pd(ti + 4);
        __m256d b0r = _mm256_setzero_pd(), b1r = b0r, b0i = b0r, b1i = b0r;
        int j = j_lo;
        for (; j + 1 < j_hi; j += 2) {
            __m256d xr = _mm256_broadcast_sd(rowr + j), xi = _mm256_broadcast_sd(rowi + j);
            const double *zr = yr + (size_t)j * 8, *zi = yi + (size_t)j * 8;
            __m256d z0r = _mm256_load_pd(zr), z1r = _mm256_load_pd(zr + 4);
            __m256d z0i = _mm256_load_pd(zi), z1i = _mm256_load_pd(zi + 4);
            a0r = _mm256_fmadd_pd(xi, z0i, _mm256_fnmadd_pd(xr, z0r, a0r));
            a1r = _mm256_fmadd_pd(xi, z1i, _mm256_fnmadd_pd(xr, z1r, a1r));
            a0i = _mm256_fnmadd_pd(xi, z0r, _mm256_fnmadd_pd(xr, z0i, a0i));
            a1i = _mm256_fnmadd_pd(xi, z1r, _mm256_fnmadd_pd(xr, z1i, a1i));
            xr = _mm256_broadcast_sd(rowr + j + 1), xi = _mm256_broadcast_sd(rowi + j + 1);
            zr += 8, zi += 8;
            z0r = _mm256_load_pd(zr), z1r = _mm256_load_pd(zr + 4);
            z0i = _mm256_load_pd(zi), z1i = _mm256_load_pd(zi + 4);
            b0r = _mm256_fmadd_pd(xi, z0i, _mm256_fnmadd_pd(xr, z0r, b0r));
            b1r = _mm256_fmadd_pd(xi, z1i, _mm256_fnmadd_pd(xr, z1r, b1r));
            b0i = _mm256_fnmadd_pd(xi, z0r, _mm256_fnmadd_pd(xr, z0i, b0i));
            b1i = _mm256_fnmadd_pd(xi, z1r, _mm256_fnmadd_pd(xr, z1i, b1i));
        }
        if (j < j_hi) {
            const __m256d xr = _mm256_broadcast_sd(rowr + j), xi = _mm256_broadcast_sd(rowi + j);
            const double *zr = yr + (size_t)j * 8, *zi = yi + (size_t)j * 8;
            const __m256d z0r = _mm256_load_pd(zr), z1r = _mm256_load_pd(zr + 4);
            const __m256d z0i = _mm256_load_pd(zi), z1i = _mm256_load_pd(zi + 4);
            a0r = _mm256_fmadd_pd(xi, z0i, _mm256_fnmadd_pd(xr, z0r, a0r));
            a1r = _mm256_fmadd_pd(xi, z1i, _mm256_fnmadd_pd(xr, z1r, a1r));
            a0i = _mm256_fnmadd_pd(xi, z0r, _mm256_fnmadd_pd(xr, z0i, a0i));
            a1i = _mm256_fnmadd_pd(xi, z1r, _mm256_fnmadd_pd(xr, z1i, a1i));
        }
        a0r = _mm256_add_pd(a0r, b0r), a1r = _mm256_add_pd(a1r, b1r);
        a0i = _mm256_add_pd(a0i, b0i), a1i = _mm256_add_pd(a1i, b1i);
        const __m256d er = _mm256_set1_pd(dr[i]), ei = _mm256_set1_pd(di[i]);
        _mm256_store_pd(tr, _mm256_fmsub_pd(a0r, er, _mm256_mul_pd(a0i, ei)));
        _mm256_store_pd(tr + 4, _mm256_fmsub_pd(a1r, er, _mm256_mul_pd(a1i, ei)));
        _mm256_store_pd(ti, _mm256_fmadd_pd(a0r, ei, _mm256_mul_pd(a0i, er)));
        _mm256_store_pd(ti + 4, _mm256_fmadd_pd(a1r, ei, _mm256_mul_pd(a1i, er)));
    }
}
#else
static void subst_block(int n, int lower, const double *mr, const double *mi, const double *dr,
                        const double *di, double *restrict yr, double *restrict yi)
{
    for (int s = 0; s < n; s++) {
        const int i = lower ? s : n - 1 - s;
        const int j_lo = lower ? 0 : i + 1, j_hi = lower ? i : n;
        const double *rowr = mr + (size_t)i * n, *rowi = mi + (size_t)i * n;
        double ar[BEAMS], ai[BEAMS];
        for (int b = 0; b < BEAMS; b++) ar[b] = yr[(size_t)i * BEAMS + b], ai[b] = yi[(size_t)i * BEAMS + b];
        for (int j = j_lo; j < j_hi; j++) {
            const double xr = rowr[j], xi = rowi[j];
            const double *zr = yr + (size_t)j * BEAMS, *zi = yi + (size_t)j * BEAMS;
            for (int b = 0; b < BEAMS; b++) {
                ar[b] = MADD(xi, zi[b], MADD(-xr, zr[b], ar[b]));
                ai[b] = MADD(-xi, zr[b], MADD(-xr, zi[b], ai[b]));
            }
        }
        const double er = dr[i], ei = di[i];
        for (int b = 0; b < BEAMS; b++) {
            yr[(size_t)i * BEAMS + b] = ar[b] * er - ai[b] * ei;
            yi[(size_t)i * BEAMS + b] = ar[b] * ei + ai[b] * er;
        }
    }
}
#endif

/* Weights of one factor for all beams; returns 0, or 1 + b when beam b has v^H z = 0. */
static int weights_one(int n, const stap_cf32 *Rk, int ldr, int nbeams, const stap_cf32 *V, stap_cf32 *Wk,
                       wt_work *w)
{
    for (int j = 0; j < n; j++) { /* column j of R, read contiguously */
        const stap_cf32 *col = Rk + (size_t)j * ldr;
        for (int i = 0; i <= j; i++) {
            w->lr[(size_t)j * n + i] = crealf(col[i]), w->li[(size_t)j * n + i] = -cimagf(col[i]);
            w->ur[(size_t)i * n + j] = crealf(col[i]), w->ui[(size_t)i * n + j] = cimagf(col[i]);
        }
        const stap_cf64 inv = 1.0 / (stap_cf64)col[j];
        w->dr[j] = creal(inv), w->di[j] = cimag(inv);
    }
    for (int b0 = 0; b0 < nbeams; b0 += BEAMS) {
        const int nb = nbeams - b0 < BEAMS ? nbeams - b0 : BEAMS;
        for (int i = 0; i < n; i++)
            for (int b = 0; b < BEAMS; b++) {
                const stap_cf32 v = b < nb ? V[(size_t)(b0 + b) * n + i] : 0.0f;
                w->yr[(size_t)i * BEAMS + b] = crealf(v), w->yi[(size_t)i * BEAMS + b] = cimagf(v);
            }
        /* R^H y = v: lower, diagonal conj(R(i,i)), inverse conj(1/R(i,i)) */
        for (int i = 0; i < n; i++) w->di[i] = -w->di[i];
        subst_block(n, 1, w->lr, w->li, w->dr, w->di, w->yr, w->yi);
        for (int i = 0; i < n; i++) w->di[i] = -w->di[i];
        subst_block(n, 0, w->ur, w->ui, w->dr, w->di, w->yr, w->yi); /* R z = y */
        for (int b = 0; b < nb; b++) {
            const stap_cf32 *v = V + (size_t)(b0 + b) * n;
            double sr = 0, si = 0; /* v^H z */
            for (int i = 0; i < n; i++) {
                const double zr = w->yr[(size_t)i * BEAMS + b], zi = w->yi[(size_t)i * BEAMS + b];
                sr += crealf(v[i]) * zr + cimagf(v[i]) * zi;
                si += crealf(v[i]) * zi - cimagf(v[i]) * zr;
            }
            const double den = sr * sr + si * si;
            if (!(den > 0) || !isfinite(den)) return 1 + b0 + b;
            const double qr = sr / den, qi = -si / den; /* 1 / (v^H z) */
            stap_cf32 *out = Wk + (size_t)(b0 + b) * n;
            for (int i = 0; i < n; i++) {
                const double zr = w->yr[(size_t)i * BEAMS + b], zi = w->yi[(size_t)i * BEAMS + b];
                out[i] = (float)(zr * qr - zi * qi) + I * (float)(zr * qi + zi * qr);
            }
        }
    }
    return 0;
}

static int diag_usable(int n, const stap_cf32 *Rk, int ldr)
{
    for (int i = 0; i < n; i++) {
        const stap_cf32 d = Rk[(size_t)i * ldr + i];
        if (!isfinite(crealf(d)) || !isfinite(cimagf(d)) || (crealf(d) == 0.0f && cimagf(d) == 0.0f))
            return 0;
    }
    return 1;
}

int LA_CPU_COPY(stap_la_cpu_weights)(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                                ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                                stap_error *err)
{
    int bad = -1, bad_beam = -1, nomem = 0;
    const size_t nn = (size_t)n * n;
#pragma omp parallel num_threads(ctx->threads)
    {
        /* the y block first, so that it is 32-byte aligned for the vector loads */
        const size_t count = 2 * (size_t)n * BEAMS + 4 * nn + 2 * (size_t)n;
        double *buf = aligned_alloc(32, (count * sizeof(double) + 31) & ~(size_t)31);
        if (!buf) {
#pragma omp atomic write
            nomem = 1;
        }
        wt_work w = {0};
        if (buf) {
            w.yr = buf, w.yi = buf + (size_t)n * BEAMS;
            w.lr = w.yi + (size_t)n * BEAMS, w.li = w.lr + nn, w.ur = w.li + nn, w.ui = w.ur + nn;
            w.dr = w.ui + nn, w.di = w.dr + n;
        }
#pragma omp for schedule(static)
        for (int k = 0; k < batch; k++) {
            if (!buf) continue;
            const stap_cf32 *Rk = R + (ptrdiff_t)k * stride_r;
            int beam = -1;
            if (diag_usable(n, Rk, ldr)) {
                int st = weights_one(n, Rk, ldr, nbeams, V, W + (size_t)k * nbeams * n, &w);
                if (st == 0) continue;
                beam = st - 1;
            }
#pragma omp critical(stap_la_cpu_weights_bad)
            if (bad < 0 || k < bad) {
                bad = k;
                bad_beam = beam;
            }
        }
        free(buf);
    }
    if (nomem) return stap_fail(err, STAP_ENOMEM, "cpu weights: out of memory (n=%d)", n);
    if (bad >= 0 && bad_beam >= 0)
        return stap_fail(err, STAP_ENUMERIC,
                         "steering vector %d gives v^H (R^H R)^-1 v = 0 or non-finite in batch item %d",
                         bad_beam, bad);
    if (bad >= 0) return stap_fail(err, STAP_ENUMERIC, "singular triangular factor in batch item %d", bad);
    return STAP_OK;
}

/* ---- the choice between the copies (once, in the portable copy) ----------------------- */
#ifndef LA_CPU_AVX2_COPY
#if defined(RTSTAP_CPU_AVX2) && (defined(__x86_64__) || defined(__i386__))

RT_INTERNAL int stap_la_cpu_qr_avx2(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
                   stap_error *err);
RT_INTERNAL int stap_la_cpu_weights_avx2(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                        ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);

/* 1 for the AVX2 copies (qr_cpu_avx2.c, gemm_cpu_avx2.c): the CPU has AVX2 and FMA, and
 * stap_la_cpu_kernels_select did not ask for the portable copy (the tests run it on AVX2
 * machines too). Decided once, unless selected again. */
static int cpu_decided = -1; /* read and written whole; every thread decides alike */

int stap_la_cpu_use_avx2(void)
{
    int d = __atomic_load_n(&cpu_decided, __ATOMIC_RELAXED);
    if (d < 0) {
        __builtin_cpu_init();
        d = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&cpu_decided, d, __ATOMIC_RELAXED);
    }
    return d;
}

int stap_la_cpu_kernels_select(const char *name, stap_error *err)
{
    if (name && !strcmp(name, "portable")) {
        __atomic_store_n(&cpu_decided, 0, __ATOMIC_RELAXED);
        return STAP_OK;
    }
    if (name && strcmp(name, "auto"))
        return stap_fail(err, STAP_EINVAL, "CPU kernels '%s': expected auto or portable", name);
    __atomic_store_n(&cpu_decided, -1, __ATOMIC_RELAXED);
    return STAP_OK;
}

const char *stap_la_cpu_kernels(void) { return stap_la_cpu_use_avx2() ? "avx2+fma" : "portable"; }

int stap_la_cpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err)
{
    return (stap_la_cpu_use_avx2() ? stap_la_cpu_qr_avx2 : stap_la_cpu_qr_portable)(ctx, m, n, batch, A, lda,
                                                               stride_a, err);
}

int stap_la_cpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err)
{
    return (stap_la_cpu_use_avx2() ? stap_la_cpu_weights_avx2 : stap_la_cpu_weights_portable)(
        ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err);
}
#else /* one copy: the build's target decides (AVX2 when compiled with it, e.g. RTSTAP_NATIVE) */
const char *stap_la_cpu_kernels(void)
{
#if defined(__AVX2__) && defined(__FMA__)
    return "avx2+fma";
#else
    return "portable";
#endif
}

int stap_la_cpu_kernels_select(const char *name, stap_error *err)
{
    if (name && strcmp(name, "auto") && strcmp(name, "portable"))
        return stap_fail(err, STAP_EINVAL, "CPU kernels '%s': expected auto or portable", name);
    if (name && !strcmp(name, "portable") && strcmp(stap_la_cpu_kernels(), "portable"))
        return stap_fail(err, STAP_EUNSUPPORTED, "CPU kernels 'portable': this build has one copy, "
                         "compiled for %s (RTSTAP_NATIVE)", stap_la_cpu_kernels());
    return STAP_OK;
}

int stap_la_cpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err)
{
    return stap_la_cpu_qr_portable(ctx, m, n, batch, A, lda, stride_a, err);
}

int stap_la_cpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err)
{
    return stap_la_cpu_weights_portable(ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err);
}
#endif
#endif
