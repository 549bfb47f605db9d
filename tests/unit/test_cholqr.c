/* test_cholqr: the cpu backend's CholeskyQR2 and one-pass CholeskyQR factors (--qr cholqr2,
 * --qr cholqr; linalg/cholqr_cpu.c) against LAPACK's test ratios (Gram residual, and |diag R|
 * against LAPACKE_zgeqrf over its first-order bound; both < 30) at condition numbers 1 to
 * 1e6 at every preset size and some odd shapes, the guard included: it must keep both
 * where their R is as good as Householder's (cond <= 1e3 here) and hand to Householder
 * what they cannot factor (cond 1e6, zero matrices; cholqr2 also the matrices whose float
 * Gram overflows or underflows, which cholqr's double Gram factors), counting them; the
 * factor names, the auto rule, other backends' refusal, and 1 vs 2 threads bit for bit.
 * Fixed seeds. (The weights' accuracy with each factor: test_weights, test_pipeline.) */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "linalg.h"
#include "testutil.h"

#define THRESHOLD 30.0

/* Factor the batch T (contiguous, lda = m) with ctx's factor through lda = m + 2 and stride
 * gaps; check the ratios and that the guard refactored between min_guard and max_guard
 * matrices. */
static void check_batch(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *T, const char *what,
                        long long min_guard, long long max_guard)
{
    const char *qn = stap_qr_method_name(stap_la_get_qr(ctx));
    const int lda = m + 2;
    const ptrdiff_t stride = (ptrdiff_t)lda * n + 3;
    stap_cf32 *A = tc_xmalloc((size_t)stride * batch * sizeof *A);
    stap_cf32 *R = tc_xmalloc((size_t)m * n * batch * sizeof *R);
    for (size_t i = 0; i < (size_t)stride * batch; i++) A[i] = tc_poison(i);
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            memcpy(A + k * stride + (size_t)j * lda, T + ((size_t)k * n + j) * m, (size_t)m * sizeof *A);
    long long c0, g0, c1, g1;
    stap_la_qr_counts(ctx, &c0, &g0);
    stap_error err = {0};
    int st = stap_la_qr(ctx, m, n, batch, A, lda, stride, &err);
    CHECK(st == STAP_OK, "%s %s %dx%d: %s", qn, what, m, n, err.msg);
    stap_la_qr_counts(ctx, &c1, &g1);
    int untouched = 1;
    for (int k = 0; k < batch; k++) {
        for (int j = 0; j < n; j++) {
            for (int i = m; i < lda; i++) {
                const size_t at = k * stride + (size_t)j * lda + i;
                if (memcmp(&A[at], &(stap_cf32){tc_poison(at)}, sizeof(stap_cf32))) untouched = 0;
            }
            memcpy(R + ((size_t)k * n + j) * m, A + k * stride + (size_t)j * lda, (size_t)m * sizeof *A);
        }
        for (ptrdiff_t g = (ptrdiff_t)lda * n; g < stride; g++)
            if (memcmp(&A[k * stride + g], &(stap_cf32){tc_poison(k * stride + g)}, sizeof(stap_cf32)))
                untouched = 0;
    }
    CHECK(untouched, "%s %s %dx%d wrote into lda padding or stride gaps", qn, what, m, n);
    la_qr_accuracy acc;
    st = stap_la_qr_check(m, n, batch, T, R, 1, &acc, &err);
    CHECK(st == STAP_OK, "stap_la_qr_check: %s", err.msg);
    const long long guarded = g1 - g0;
    printf("  %-7s %-12s %4dx%-4d batch %3d  residual %8.3f  diag %8.3f  guarded %lld\n",
           stap_qr_method_name(stap_la_get_qr(ctx)), what, m, n, batch, acc.residual, acc.diag, guarded);
    CHECK(acc.residual < THRESHOLD, "%s %s %dx%d: residual ratio %g (item %d) >= %g", qn, what, m, n,
          acc.residual, acc.worst, THRESHOLD);
    CHECK(acc.diag < THRESHOLD, "%s %s %dx%d: diag ratio %g >= %g", qn, what, m, n, acc.diag, THRESHOLD);
    CHECK(guarded >= min_guard && guarded <= max_guard,
          "%s %s %dx%d: the guard refactored %lld of %d (expected %lld to %lld)", qn, what, m, n, guarded,
          batch, min_guard, max_guard);
    CHECK(c1 - c0 + guarded == batch, "%s %s: counts %lld + %lld != batch %d", qn, what, c1 - c0, guarded,
          batch);
    free(A);
    free(R);
}

/* Zero, overflowing and underflowing matrices, and R past a float: Householder takes them. */
static void check_special(stap_la_ctx *ctx, stap_qr_method q, tc_rng *rng)
{
    const int m = 40, n = 12, batch = 4;
    stap_cf32 *T = tc_xmalloc((size_t)m * n * batch * sizeof *T);
    tc_random_batch(rng, m, n, batch, T);
    memset(T, 0, (size_t)m * n * sizeof *T);                         /* item 0: zero       */
    memset(T + (size_t)m * n + 3 * m, 0, 2 * (size_t)m * sizeof *T); /* item 1: zero columns */
    check_batch(ctx, m, n, batch, T, "special", 2, 2);
    static const double scales[] = {1e-25, 1e25};
    for (int s = 0; s < 2; s++) {
        tc_random_batch(rng, m, n, batch, T);
        for (size_t i = 0; i < (size_t)m * n * batch; i++) T[i] *= (float)scales[s];
        char what[32];
        snprintf(what, sizeof what, "scale %.0e", scales[s]);
        /* cholqr2's float Gram overflows or underflows; cholqr's double one does not */
        const int all = q == STAP_QR_CHOLQR2 ? batch : 0;
        check_batch(ctx, m, n, batch, T, what, all, all);
    }
    /* every entry 1e38 in modulus, random phases: finite and well conditioned, but R_ii =
     * |t_i| ~ 6e38 is past a float: both hand them to Householder (whose R overflows alike:
     * only the count is checked here, and that nothing infinite came from CholeskyQR) */
    tc_random_batch(rng, m, n, batch, T);
    for (size_t i = 0; i < (size_t)m * n * batch; i++) {
        const float a = cabsf(T[i]);
        T[i] = a > 0 ? T[i] / a * 1e38f : 1e38f;
    }
    long long c0, g0, c1, g1;
    stap_la_qr_counts(ctx, &c0, &g0);
    stap_error err = {0};
    const int st = stap_la_qr(ctx, m, n, batch, T, m, (ptrdiff_t)m * n, &err);
    stap_la_qr_counts(ctx, &c1, &g1);
    CHECK(st == STAP_OK && c1 == c0 && g1 - g0 == batch, "R past a float: status %d, %lld kept, %lld guarded of %d",
          st, c1 - c0, g1 - g0, batch);
    free(T);
}

/* Names, parsing, the auto rule, and the backends that do not have cholqr2. */
static void check_api(void)
{
    stap_error err = {0};
    stap_qr_method q;
    for (int i = 0; i < STAP_QR_COUNT; i++)
        CHECK(stap_qr_method_parse(stap_qr_method_name((stap_qr_method)i), &q, &err) == STAP_OK && (int)q == i,
              "factor name %d does not parse back", i);
    CHECK(stap_qr_method_parse("cholqr3", &q, &err) == STAP_EINVAL, "'cholqr3' accepted");
    CHECK(stap_qr_method_parse("cholqr", &q, &err) == STAP_OK && q == STAP_QR_CHOLQR, "'cholqr' refused");
    CHECK(STAP_QR_HOUSEHOLDER == 0 && STAP_QR_CHOLQR2 == 1 && STAP_QR_AUTO == 2,
          "the factors' numbers moved (stap_config.qr is stored by number)");
    stap_la_ctx *cpu = NULL, *lap = NULL;
    if (stap_la_ctx_create(&cpu, STAP_BACKEND_CPU, 1, &err) ||
        stap_la_ctx_create(&lap, STAP_BACKEND_LAPACK, 1, &err)) {
        CHECK(0, "stap_la_ctx_create: %s", err.msg);
    } else {
        CHECK(stap_la_get_qr(cpu) == STAP_QR_HOUSEHOLDER, "the default factor is not householder");
        CHECK(stap_la_qr_resolve(cpu, 240, 66) == STAP_QR_HOUSEHOLDER, "householder resolves otherwise");
        CHECK(stap_la_set_qr(cpu, STAP_QR_AUTO, &err) == STAP_OK, "auto refused: %s", err.msg);
        const int rows = STAP_CHOLQR2_AUTO_ROWS, nmax = STAP_CHOLQR2_AUTO_MAX_N;
        CHECK(stap_la_qr_resolve(cpu, rows * nmax, nmax) == STAP_QR_CHOLQR2 &&
                  stap_la_qr_resolve(cpu, rows * nmax - 1, nmax) == STAP_QR_HOUSEHOLDER &&
                  stap_la_qr_resolve(cpu, rows * 1000, nmax + 1) == STAP_QR_HOUSEHOLDER &&
                  stap_la_qr_resolve(cpu, 240, 66) == STAP_QR_HOUSEHOLDER,
              "auto does not follow its rule n <= %d and m >= %d n", nmax, rows);
        CHECK(stap_la_set_qr(lap, STAP_QR_CHOLQR2, &err) == STAP_EUNSUPPORTED && strstr(err.msg, "cpu"),
              "lapack accepted cholqr2 (%s)", err.msg);
        CHECK(stap_la_set_qr(lap, STAP_QR_CHOLQR, &err) == STAP_EUNSUPPORTED && strstr(err.msg, "cholqr"),
              "lapack accepted cholqr (%s)", err.msg);
        stap_la_ctx *gpu = NULL; /* created without a device too; cholqr runs on the gpu backend (issue 47) */
        if (stap_la_ctx_create(&gpu, STAP_BACKEND_GPU, 1, &err) == STAP_OK) {
            CHECK(stap_la_set_qr(gpu, STAP_QR_CHOLQR, &err) == STAP_OK && stap_la_qr_resolve(gpu, 240, 66) == STAP_QR_CHOLQR,
                  "gpu refused cholqr (%s)", err.msg);
            const int lo = STAP_CHOLQR_GPU_AUTO_MIN_N, hi = STAP_CHOLQR_GPU_AUTO_MAX_N;
            CHECK(stap_la_set_qr(gpu, STAP_QR_AUTO, &err) == STAP_OK && stap_la_qr_resolve(gpu, 240, 66) == STAP_QR_CHOLQR &&
                      stap_la_qr_resolve(gpu, 192, 96) == STAP_QR_CHOLQR &&
                      stap_la_qr_resolve(gpu, 4 * lo, lo) == STAP_QR_CHOLQR &&
                      stap_la_qr_resolve(gpu, 4 * lo, lo - 1) == STAP_QR_HOUSEHOLDER &&
                      stap_la_qr_resolve(gpu, 4 * hi, hi + 1) == STAP_QR_HOUSEHOLDER &&
                      stap_la_qr_resolve(gpu, 80, 16) == STAP_QR_HOUSEHOLDER,
                  "gpu: auto does not follow its rule %d <= n <= %d", lo, hi);
            stap_la_ctx_destroy(gpu);
        }
        CHECK(stap_la_set_qr(cpu, STAP_QR_CHOLQR, &err) == STAP_OK &&
                  stap_la_qr_resolve(cpu, 240, 66) == STAP_QR_CHOLQR,
              "cholqr does not resolve to itself on the cpu backend");
        CHECK(stap_la_set_qr(lap, STAP_QR_AUTO, &err) == STAP_OK &&
                  stap_la_qr_resolve(lap, 1000, 10) == STAP_QR_HOUSEHOLDER,
              "lapack: auto is not householder");
        CHECK(stap_la_set_qr(cpu, STAP_QR_COUNT, &err) == STAP_EINVAL, "an invalid factor accepted");
    }
    stap_la_ctx_destroy(cpu);
    stap_la_ctx_destroy(lap);
}

/* One matrix on one thread: 1 and 2 threads agree bit for bit. */
static void check_threads(tc_rng *rng)
{
    static const stap_qr_method qs[] = {STAP_QR_CHOLQR2, STAP_QR_CHOLQR};
    for (int i = 0; i < 2; i++) {
        stap_error err = {0};
        const int same = tc_same_r_on_1_and_2_threads(STAP_BACKEND_CPU, qs[i], rng, &err);
        CHECK(same >= 0, "1 and 2 threads: %s", err.msg);
        CHECK(same != 0, "%s: R differs between 1 and 2 threads", stap_qr_method_name(qs[i]));
    }
}

int main(void)
{
    tc_rng rng;
    tc_rng_seed(&rng, 4747);
    if (tc_cpu_kernels_from_env()) return 1;
    static const struct { int m, n, batch, ill_batch; } shapes[] = {
        {80, 16, 32, 8},  {192, 96, 8, 3},  {240, 66, 16, 4}, /* presets (batch reduced) */
        {96, 16, 32, 8},  {288, 96, 8, 3},  {306, 66, 16, 4}, /* with loading rows       */
        {1, 1, 16, 4},    {5, 3, 16, 4},    {33, 32, 8, 4},   {64, 64, 8, 3},
        {300, 7, 16, 4},  {512, 128, 4, 1},
    };
    /* cond: the guard must leave cholqr2 at 1e2 and 1e3 (within FP32 CholeskyQR2's reach,
     * u^-1/2 ~ 4e3) and take every matrix at 1e5 and 1e6; at 1e4 either may factor. */
    static const struct { double cond; int guard; } conds[] = {
        {10, 0}, {1e2, 0}, {1e3, 0}, {1e4, -1}, {1e5, 1}, {1e6, 1}};
    static const stap_qr_method qs[] = {STAP_QR_CHOLQR2, STAP_QR_CHOLQR};
    for (int qi = 0; qi < 2; qi++) {
        const stap_qr_method q = qs[qi];
        stap_la_ctx *ctx = NULL;
        stap_error err = {0};
        if (stap_la_ctx_create(&ctx, STAP_BACKEND_CPU, 0, &err) || stap_la_set_qr(ctx, q, &err)) {
            fprintf(stderr, "test_cholqr: %s\n", err.msg);
            return 1;
        }
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int m = shapes[s].m, n = shapes[s].n, ib = shapes[s].ill_batch;
            stap_cf32 *T = tc_xmalloc((size_t)m * n * shapes[s].batch * sizeof *T);
            tc_random_batch(&rng, m, n, shapes[s].batch, T);
            check_batch(ctx, m, n, shapes[s].batch, T, "random", 0, m == n ? shapes[s].batch : 0);
            for (size_t c = 0; c < sizeof conds / sizeof conds[0]; c++) {
                char what[32];
                snprintf(what, sizeof what, "cond %.0e", conds[c].cond);
                tc_illcond_batch(&rng, m, n, ib, conds[c].cond, T);
                /* n = 1 has cond 1 whatever is asked; square matrices lose more to the Gram */
                int g = n == 1 ? 0 : conds[c].guard;
                /* cholqr's double Gram reaches further than u^-1/2: at 1e5 it may keep some */
                if (q == STAP_QR_CHOLQR && conds[c].cond == 1e5) g = -1;
                check_batch(ctx, m, n, ib, T, what, g == 1 ? ib : 0, g == 0 && m > n ? 0 : ib);
            }
            free(T);
        }
        check_special(ctx, q, &rng);
        stap_la_ctx_destroy(ctx);
    }
    check_api();
    check_threads(&rng);
    if (tc_failures) {
        fprintf(stderr, "test_cholqr: %d check(s) failed\n", tc_failures);
        return 1;
    }
    printf("test_cholqr: all checks passed\n");
    return 0;
}
