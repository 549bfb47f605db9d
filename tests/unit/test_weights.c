/* test_weights: MVDR weights of the cpu and lapack backends (stap_la_weights on R from stap_la_qr)
 * against a double-precision solve of (T^H T) z = v, w = z / (v^H z); the distortionless
 * constraint w^H v = 1; singular factors and degenerate steering vectors; arguments. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "linalg.h"
#include "testutil.h"

/* Reference weights in double: G = T^H T, Cholesky G = L L^H, G z = v, w = z / (v^H z).
 * T is m x n column-major (lda = m); V is nbeams x n row-major; Wref is nbeams x n. */
static int reference_weights(int m, int n, const stap_cf32 *T, int nbeams, const stap_cf32 *V, stap_cf64 *Wref)
{
    stap_cf64 *L = tc_xmalloc((size_t)n * n * sizeof *L), *z = tc_xmalloc((size_t)n * sizeof *z);
    for (int j = 0; j < n; j++) /* lower triangle of G, column-major */
        for (int i = j; i < n; i++) {
            stap_cf64 s = 0;
            for (int r = 0; r < m; r++) s += conj((stap_cf64)T[(size_t)i * m + r]) * (stap_cf64)T[(size_t)j * m + r];
            L[(size_t)j * n + i] = s;
        }
    for (int j = 0; j < n; j++) { /* in-place Cholesky, lower */
        double d = creal(L[(size_t)j * n + j]);
        for (int p = 0; p < j; p++) d -= creal(L[(size_t)p * n + j] * conj(L[(size_t)p * n + j]));
        if (!(d > 0)) {
            free(L);
            free(z);
            return -1;
        }
        d = sqrt(d);
        L[(size_t)j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            stap_cf64 s = L[(size_t)j * n + i];
            for (int p = 0; p < j; p++) s -= L[(size_t)p * n + i] * conj(L[(size_t)p * n + j]);
            L[(size_t)j * n + i] = s / d;
        }
    }
    for (int b = 0; b < nbeams; b++) {
        const stap_cf32 *v = V + (size_t)b * n;
        for (int i = 0; i < n; i++) { /* L y = v */
            stap_cf64 s = v[i];
            for (int p = 0; p < i; p++) s -= L[(size_t)p * n + i] * z[p];
            z[i] = s / L[(size_t)i * n + i];
        }
        for (int i = n - 1; i >= 0; i--) { /* L^H z = y */
            stap_cf64 s = z[i];
            for (int p = i + 1; p < n; p++) s -= conj(L[(size_t)i * n + p]) * z[p];
            z[i] = s / L[(size_t)i * n + i];
        }
        stap_cf64 vz = 0;
        for (int i = 0; i < n; i++) vz += conj((stap_cf64)v[i]) * z[i];
        for (int i = 0; i < n; i++) Wref[(size_t)b * n + i] = z[i] / vz;
    }
    free(L);
    free(z);
    return 0;
}

/* Weights from the float factor R itself, solved in double: isolates the solver's own
 * error from that of the QR. R is upper n x n with leading dimension ldr. */
static void weights_from_R(int n, const stap_cf32 *R, int ldr, int nbeams, const stap_cf32 *V, stap_cf64 *Wr)
{
    stap_cf64 *z = tc_xmalloc((size_t)n * sizeof *z);
    for (int b = 0; b < nbeams; b++) {
        const stap_cf32 *v = V + (size_t)b * n;
        for (int i = 0; i < n; i++) { /* R^H y = v */
            stap_cf64 s = v[i];
            for (int p = 0; p < i; p++) s -= conj((stap_cf64)R[(size_t)i * ldr + p]) * z[p];
            z[i] = s / conj((stap_cf64)R[(size_t)i * ldr + i]);
        }
        for (int i = n - 1; i >= 0; i--) { /* R z = y */
            stap_cf64 s = z[i];
            for (int p = i + 1; p < n; p++) s -= (stap_cf64)R[(size_t)p * ldr + i] * z[p];
            z[i] = s / (stap_cf64)R[(size_t)i * ldr + i];
        }
        stap_cf64 vz = 0;
        for (int i = 0; i < n; i++) vz += conj((stap_cf64)v[i]) * z[i];
        for (int i = 0; i < n; i++) Wr[(size_t)b * n + i] = z[i] / vz;
    }
    free(z);
}

static double rel_error(int n, const stap_cf32 *w, const stap_cf64 *ref)
{
    double e2 = 0, r2 = 0;
    for (int i = 0; i < n; i++) {
        stap_cf64 d = (stap_cf64)w[i] - ref[i];
        e2 += creal(d * conj(d));
        r2 += creal(ref[i] * conj(ref[i]));
    }
    return sqrt(e2 / r2);
}

/* One case: factor T (lda = m + 2, stride gap 3), weights from R, compare with the
 * double reference; tol bounds the norm-wise relative error. */
static void check_case(stap_la_ctx *ctx, tc_rng *rng, int m, int n, int batch, int nbeams, double cond,
                       double tol)
{
    const char *bn = stap_backend_name(stap_la_ctx_backend(ctx));
    const int lda = m + 2;
    const ptrdiff_t stride = (ptrdiff_t)lda * n + 3;
    stap_cf32 *T = tc_xmalloc((size_t)m * n * batch * sizeof *T), *A = tc_xmalloc((size_t)stride * batch * sizeof *A);
    stap_cf32 *V = tc_xmalloc((size_t)nbeams * n * sizeof *V), *W = tc_xmalloc((size_t)batch * nbeams * n * sizeof *W);
    stap_cf64 *Wref = tc_xmalloc((size_t)nbeams * n * sizeof *Wref), *WR = tc_xmalloc((size_t)nbeams * n * sizeof *WR);
    if (cond > 1)
        tc_illcond_batch(rng, m, n, batch, cond, T);
    else
        tc_random_batch(rng, m, n, batch, T);
    tc_random_batch(rng, n, nbeams, 1, V);
    memset(A, 0, (size_t)stride * batch * sizeof *A);
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            memcpy(A + k * stride + (size_t)j * lda, T + ((size_t)k * n + j) * m, (size_t)m * sizeof *A);
    stap_error err = {0};
    int st = stap_la_qr(ctx, m, n, batch, A, lda, stride, &err);
    CHECK(st == STAP_OK, "%s: stap_la_qr %dx%d: %s", bn, m, n, err.msg);
    st = stap_la_weights(ctx, n, batch, A, lda, stride, nbeams, V, W, &err);
    CHECK(st == STAP_OK, "%s: stap_la_weights n=%d: %s", bn, n, err.msg);
    double worst_rel = 0, worst_solve = 0, worst_constraint = 0;
    for (int k = 0; k < batch && st == STAP_OK; k++) {
        if (reference_weights(m, n, T + (size_t)k * m * n, nbeams, V, Wref) != 0) {
            CHECK(0, "reference Cholesky failed (%dx%d, cond %g)", m, n, cond);
            break;
        }
        weights_from_R(n, A + k * stride, lda, nbeams, V, WR);
        for (int b = 0; b < nbeams; b++) {
            const stap_cf32 *w = W + ((size_t)k * nbeams + b) * n;
            const stap_cf32 *v = V + (size_t)b * n;
            stap_cf64 wv = 0;
            for (int i = 0; i < n; i++) wv += conj((stap_cf64)w[i]) * (stap_cf64)v[i];
            double rel = rel_error(n, w, Wref + (size_t)b * n), sol = rel_error(n, w, WR + (size_t)b * n);
            double con = cabs(wv - 1.0);
            if (!(rel <= worst_rel)) worst_rel = rel;
            if (!(sol <= worst_solve)) worst_solve = sol;
            if (!(con <= worst_constraint)) worst_constraint = con;
        }
    }
    printf("  %-6s %4dx%-4d batch %3d beams %2d cond %-6.0e  vs T^H T: %.2e  vs R: %.2e  "
           "|w^H v - 1| %.2e\n", bn, m, n, batch, nbeams, cond > 1 ? cond : 0.0, worst_rel,
           worst_solve, worst_constraint);
    CHECK(worst_rel < tol, "%s %dx%d cond %g: relative error %g >= %g", bn, m, n, cond, worst_rel, tol);
    CHECK(worst_solve < 1e-5, "%s %dx%d cond %g: error of the solves from R %g >= 1e-5", bn, m, n,
          cond, worst_solve);
    CHECK(worst_constraint < 1e-4, "%s %dx%d: |w^H v - 1| = %g", bn, m, n, worst_constraint);
    free(T);
    free(A);
    free(V);
    free(W);
    free(Wref);
    free(WR);
}

/* Zero or non-finite diagonal in one item -> STAP_ENUMERIC naming it; zero steering vector
 * -> STAP_ENUMERIC; bad arguments -> STAP_EINVAL. */
static void check_failures(stap_la_ctx *ctx, tc_rng *rng)
{
    const char *bn = stap_backend_name(stap_la_ctx_backend(ctx));
    const int m = 40, n = 12, batch = 5, nbeams = 3;
    stap_cf32 *A = tc_xmalloc((size_t)m * n * batch * sizeof *A), *V = tc_xmalloc((size_t)nbeams * n * sizeof *V);
    stap_cf32 *W = tc_xmalloc((size_t)batch * nbeams * n * sizeof *W);
    tc_random_batch(rng, m, n, batch, A);
    tc_random_batch(rng, n, nbeams, 1, V);
    stap_error err = {0};
    CHECK(stap_la_qr(ctx, m, n, batch, A, m, (ptrdiff_t)m * n, &err) == STAP_OK, "stap_la_qr: %s", err.msg);

    stap_cf32 *d = A + (size_t)3 * m * n + (size_t)7 * m + 7; /* R(7,7) of item 3 */
    stap_cf32 saved = *d;
    *d = 0;
    int st = stap_la_weights(ctx, n, batch, A, m, (ptrdiff_t)m * n, nbeams, V, W, &err);
    CHECK(st == STAP_ENUMERIC && strstr(err.msg, "batch item 3"),
          "%s: zero diagonal: status %d, message '%s'", bn, st, err.msg);
    *d = NAN;
    st = stap_la_weights(ctx, n, batch, A, m, (ptrdiff_t)m * n, nbeams, V, W, &err);
    CHECK(st == STAP_ENUMERIC && strstr(err.msg, "batch item 3"),
          "%s: NaN diagonal: status %d, message '%s'", bn, st, err.msg);
    *d = saved;

    memset(V + n, 0, (size_t)n * sizeof *V); /* beam 1 all zero */
    st = stap_la_weights(ctx, n, batch, A, m, (ptrdiff_t)m * n, nbeams, V, W, &err);
    CHECK(st == STAP_ENUMERIC, "%s: zero steering vector accepted (status %d)", bn, st);
    tc_random_batch(rng, n, 1, 1, V + n);

    CHECK(stap_la_weights(ctx, n, batch, A, n - 1, (ptrdiff_t)m * n, nbeams, V, W, &err) == STAP_EINVAL,
          "%s: ldr < n accepted", bn);
    CHECK(stap_la_weights(ctx, n, batch, A, m, (ptrdiff_t)m * n, 0, V, W, &err) == STAP_EINVAL,
          "%s: zero beams accepted", bn);
    CHECK(stap_la_weights(ctx, n, batch, A, m, (ptrdiff_t)m * n, nbeams, V, W, &err) == STAP_OK,
          "%s: restored factors rejected: %s", bn, err.msg);
    free(A);
    free(V);
    free(W);
}

/* stap_la_adaptive_weights = stap_la_qr then stap_la_weights, bit for bit on the CPU backends. */
static void check_adaptive(stap_la_ctx *ctx, tc_rng *rng)
{
    const char *bn = stap_backend_name(stap_la_ctx_backend(ctx));
    const int m = 96, n = 16, batch = 6, nbeams = 5;
    size_t tot = (size_t)m * n * batch;
    stap_cf32 *A1 = tc_xmalloc(tot * sizeof *A1), *A2 = tc_xmalloc(tot * sizeof *A2), *V = tc_xmalloc((size_t)nbeams * n * sizeof *V);
    stap_cf32 *W1 = tc_xmalloc((size_t)batch * nbeams * n * sizeof *W1), *W2 = tc_xmalloc((size_t)batch * nbeams * n * sizeof *W2);
    tc_random_batch(rng, m, n, batch, A1);
    memcpy(A2, A1, tot * sizeof *A2);
    tc_random_batch(rng, n, nbeams, 1, V);
    stap_error err = {0};
    stap_la_timing tm;
    int st = stap_la_adaptive_weights(ctx, m, n, batch, A1, m, (ptrdiff_t)m * n, nbeams, V, W1, &tm, &err);
    CHECK(st == STAP_OK, "%s: stap_la_adaptive_weights: %s", bn, err.msg);
    st = stap_la_qr(ctx, m, n, batch, A2, m, (ptrdiff_t)m * n, &err);
    if (!st) st = stap_la_weights(ctx, n, batch, A2, m, (ptrdiff_t)m * n, nbeams, V, W2, &err);
    CHECK(st == STAP_OK, "%s: stap_la_qr/stap_la_weights: %s", bn, err.msg);
    CHECK(memcmp(W1, W2, (size_t)batch * nbeams * n * sizeof *W1) == 0,
          "%s: stap_la_adaptive_weights differs from stap_la_qr + stap_la_weights", bn);
    CHECK(tm.qr_ms >= 0 && tm.weights_ms >= 0, "%s: negative stage times", bn);
    free(A1);
    free(A2);
    free(V);
    free(W1);
    free(W2);
}

int main(void)
{
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    /* the cpu backend's kernel copy: RTSTAP_CPU_KERNELS=portable (the CTest test *_portable)
     * must be honoured, so that the portable copy is tested on AVX2 machines too */
    const char *want_kernels = getenv("RTSTAP_CPU_KERNELS");
    CHECK(tc_cpu_kernels_from_env() == 0, "the kernels RTSTAP_CPU_KERNELS asks for");
    CHECK(!want_kernels || strcmp(want_kernels, "portable") || !strcmp(stap_la_cpu_kernels(), "portable"),
          "RTSTAP_CPU_KERNELS=portable, yet the cpu backend runs its %s kernels", stap_la_cpu_kernels());
    static const stap_backend backends[] = {STAP_BACKEND_CPU, STAP_BACKEND_LAPACK};
    /* Against T^H T the QR's own rounding dominates; its worst case grows like
     * cond(T)^2 eps, observed errors stay near 1e-6 (cond(T) <= 30) and 1e-5 (1e3), so the
     * tolerances leave a margin of 10 or more while any wrong solve gives O(1). */
    static const struct { int m, n, batch, nbeams; double cond, tol; } cases[] = {
        {240, 66, 8, 16, 0, 1e-4},  {80, 16, 16, 16, 0, 1e-4},   {192, 96, 4, 16, 0, 1e-4},
        {306, 66, 4, 9, 0, 1e-4},   {5, 3, 8, 1, 0, 1e-4},       {1, 1, 8, 2, 0, 1e-4},
        {33, 32, 4, 13, 0, 1e-4},   {240, 66, 4, 16, 30, 1e-4},  {192, 96, 2, 16, 30, 1e-4},
        {80, 16, 8, 7, 30, 1e-4},   {240, 66, 4, 16, 100, 1e-3}, {240, 66, 2, 16, 1000, 1e-2},
    };
    /* b = 2, 3: the cpu backend again, factoring by CholeskyQR2 and CholeskyQR (issue 47) */
    for (int b = 0; b < 4; b++) {
        stap_la_ctx *ctx = NULL;
        stap_error err = {0};
        if (stap_la_ctx_create(&ctx, backends[b == 1], 0, &err) != STAP_OK ||
            (b >= 2 && stap_la_set_qr(ctx, b == 2 ? STAP_QR_CHOLQR2 : STAP_QR_CHOLQR, &err) != STAP_OK)) {
            CHECK(0, "stap_la_ctx_create(%s): %s", stap_backend_name(backends[b == 1]), err.msg);
            stap_la_ctx_destroy(ctx);
            continue;
        }
        if (b >= 2) printf("cpu backend, %s factor\n", b == 2 ? "cholqr2" : "cholqr");
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_case(ctx, &rng, cases[c].m, cases[c].n, cases[c].batch, cases[c].nbeams,
                       cases[c].cond, cases[c].tol);
        check_failures(ctx, &rng);
        check_adaptive(ctx, &rng);
        stap_la_ctx_destroy(ctx);
    }
    if (tc_failures) {
        fprintf(stderr, "test_weights: %d check(s) failed\n", tc_failures);
        return 1;
    }
    printf("test_weights: all checks passed\n");
    return 0;
}
