/* test_gpu_qr: the batched QR of the gpu (own kernels) and cublas backends against
 * LAPACK's test ratios (Gram residual; |diag R| against LAPACKE_zgeqrf over its first-order
 * bound; both < 30) on random
 * and ill-conditioned inputs (cond 1e2, 1e4, 1e6): every preset size (once at full
 * batch), the diagonally-loaded sizes, odd shapes, and every row of the kernels'
 * dispatch table; strided layouts whose gaps must stay untouched; stap_la_bench_qr's R.
 * Exits 77 (skipped) without a usable GPU. RTSTAP_SEED=N replays a run;
 * RTSTAP_GPU_QUICK=1 (for compute-sanitizer) keeps the gpu backend, random inputs and
 * batches of at most 3. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "linalg.h"
#ifdef RTSTAP_HAVE_CUDA
#include "la_device.h" /* rtk.h and stap_la_gpu_force_variant */
#endif
#include "testutil.h"

#define THRESHOLD 30.0

static int cases = 0;

static int same_bits(stap_cf32 a, stap_cf32 b) { return memcmp(&a, &b, sizeof a) == 0; }

static void make_input(tc_rng *rng, int m, int n, int batch, double cond, stap_cf32 *T)
{
    if (cond > 0)
        tc_illcond_batch(rng, m, n, batch, cond, T);
    else
        tc_random_batch(rng, m, n, batch, T);
}

static const char *cond_name(double cond)
{
    static char buf[32];
    if (cond <= 0) return "random";
    snprintf(buf, sizeof buf, "cond=%.0e", cond);
    return buf;
}

/* Factor a fresh batch (lda = m, contiguous) and check LAPACK's ratios; gpu backend:
 * also a real diagonal. */
static void qr_case(stap_la_ctx *ctx, const char *what, tc_rng *rng, int m, int n, int batch,
                    double cond)
{
    const size_t one = (size_t)m * n, total = one * batch;
    stap_cf32 *T = tc_xmalloc(total * sizeof *T), *R = tc_xmalloc(total * sizeof *R);
    make_input(rng, m, n, batch, cond, T);
    memcpy(R, T, total * sizeof *R);
    stap_error err = {0};
    int st = stap_la_qr(ctx, m, n, batch, R, m, (ptrdiff_t)one, &err);
    cases++;
    CHECK(st == STAP_OK, "%s %dx%dx%d %s: stap_la_qr: %s", what, m, n, batch, cond_name(cond), err.msg);
    if (st == STAP_OK) {
        la_qr_accuracy acc;
        st = stap_la_qr_check(m, n, batch, T, R, 1, &acc, &err);
        CHECK(st == STAP_OK, "stap_la_qr_check: %s", err.msg);
        int ok = st == STAP_OK && acc.residual < THRESHOLD && acc.diag < THRESHOLD;
        printf("  %-26s %4dx%-4d x%-5d %-9s residual %7.3f  diag %7.3f  %s\n", what, m, n,
               batch, cond_name(cond), acc.residual, acc.diag, ok ? "ok" : "FAIL");
        CHECK(ok, "%s %dx%dx%d %s: residual %.3f diag %.3f (worst item %d)", what, m, n, batch,
              cond_name(cond), acc.residual, acc.diag, acc.worst);
        if (stap_la_ctx_backend(ctx) == STAP_BACKEND_GPU) {
            int complex_diag = 0;
            for (int k = 0; k < batch; k++)
                for (int i = 0; i < n; i++)
                    if (cimagf(R[one * k + (size_t)i * m + i]) != 0.0f) complex_diag++;
            CHECK(complex_diag == 0, "%s %dx%d: %d diagonal entries of R are not real", what, m,
                  n, complex_diag);
        }
    }
    free(T);
    free(R);
}

/* lda > m and stride > lda*n: the gaps (rows m..lda-1, the tail after each matrix) and
 * everything below row n must keep their values; R must pass the ratios. */
static void gap_case(stap_la_ctx *ctx, const char *what, tc_rng *rng, int m, int n, int batch)
{
    const int lda = m + 3;
    const ptrdiff_t stride = (ptrdiff_t)lda * n + 7;
    const size_t span = (size_t)stride * batch, one = (size_t)m * n;
    stap_cf32 *T = tc_xmalloc(one * batch * sizeof *T), *A = tc_xmalloc(span * sizeof *A);
    stap_cf32 *R = tc_xmalloc(one * batch * sizeof *R);
    tc_random_batch(rng, m, n, batch, T);
    for (size_t i = 0; i < span; i++) A[i] = tc_poison(i);
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            memcpy(A + stride * k + (size_t)j * lda, T + one * k + (size_t)j * m, m * sizeof *A);
    stap_error err = {0};
    int st = stap_la_qr(ctx, m, n, batch, A, lda, stride, &err);
    cases++;
    CHECK(st == STAP_OK, "%s gaps %dx%d: stap_la_qr: %s", what, m, n, err.msg);
    if (st) goto out;
    size_t touched = 0;
    for (size_t i = 0; i < span; i++) {
        const size_t k = i / stride, off = i % stride, j = off / lda, r = off % lda;
        const int in_matrix = off < (size_t)lda * n && r < (size_t)m;
        if (!in_matrix && !same_bits(A[i], tc_poison(i))) touched++;
        if (in_matrix && (int)r >= n && !same_bits(A[i], T[one * k + j * m + r])) touched++;
    }
    CHECK(touched == 0, "%s gaps %dx%d: %zu entries outside R changed", what, m, n, touched);
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            memcpy(R + one * k + (size_t)j * m, A + stride * k + (size_t)j * lda, m * sizeof *R);
    la_qr_accuracy acc;
    st = stap_la_qr_check(m, n, batch, T, R, 1, &acc, &err);
    int ok = st == STAP_OK && acc.residual < THRESHOLD && acc.diag < THRESHOLD;
    printf("  %-26s %4dx%-4d x%-5d %-9s residual %7.3f  diag %7.3f  gaps %s  %s\n", what, m, n,
           batch, "lda+3", acc.residual, acc.diag, touched ? "CHANGED" : "untouched",
           ok ? "ok" : "FAIL");
    CHECK(ok, "%s gaps %dx%d: residual %.3f diag %.3f", what, m, n, acc.residual, acc.diag);
out:
    free(T);
    free(A);
    free(R);
}

/* stap_la_bench_qr: positive median, R of set 0 fully written (poisoned first) and accurate */
static void bench_case(stap_la_ctx *ctx, const char *what, tc_rng *rng, int m, int n, int batch)
{
    const int nsets = 2;
    const size_t one = (size_t)m * n * batch;
    stap_cf32 *sets = tc_xmalloc(one * nsets * sizeof *sets), *R = tc_xmalloc(one * sizeof *R);
    tc_random_batch(rng, m, n, batch * nsets, sets);
    for (size_t i = 0; i < one; i++) R[i] = tc_poison(i);
    double us = -1;
    stap_error err = {0};
    int st = stap_la_bench_qr(ctx, m, n, batch, sets, nsets, 3, 0, 0, NULL, &us, R, &err);
    cases++;
    CHECK(st == STAP_OK, "%s bench %dx%d: %s", what, m, n, err.msg);
    if (st == STAP_OK) {
        size_t unwritten = 0;
        for (int k = 0; k < batch; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) {
                    const size_t idx = (size_t)m * n * k + (size_t)j * m + i;
                    if (same_bits(R[idx], tc_poison(idx))) unwritten++;
                }
        la_qr_accuracy acc;
        st = stap_la_qr_check(m, n, batch, sets, R, 1, &acc, &err);
        int ok = st == STAP_OK && unwritten == 0 && us > 0 && acc.residual < THRESHOLD &&
                 acc.diag < THRESHOLD;
        printf("  %-26s %4dx%-4d x%-5d %-9s residual %7.3f  diag %7.3f  median %.1f us  %s\n",
               what, m, n, batch, "bench", acc.residual, acc.diag, us, ok ? "ok" : "FAIL");
        CHECK(ok, "%s bench %dx%d: %zu entries of R unwritten, median %.3f us, residual %.3f",
              what, m, n, unwritten, us, acc.residual);
    }
    free(sets);
    free(R);
}

typedef struct { int m, n, batch; } shape;

/* CholeskyQR2 and cholqr (one pass, the double Gram) on the gpu backend (kernels/cholqr.cu,
 * issue 47): the ratios of qr_case, guard included, and the guard's counts: none guarded at
 * cond <= 1e2, every matrix at 1e6 (its min|R_ii| / max|R_ii| is far under
 * STAP_CHOLQR2_MIN_RATIO); a batch mixing both sends exactly the ill-conditioned ones to
 * Householder (rtk_qr_guard_launch, by the fail list on the device). cholqr: n <= 96 (200 x 128 and 512 x 128
 * by Householder, uncounted). */
static void cholqr_cases(tc_rng *rng, int quick, stap_qr_method q)
{
    const char *qn = stap_qr_method_name(q);
    char what[64];
    snprintf(what, sizeof what, "gpu/%s", qn);
    stap_error err = {0};
    stap_la_ctx *ctx = NULL;
    if (stap_la_ctx_create(&ctx, STAP_BACKEND_GPU, 0, &err) || stap_la_set_qr(ctx, q, &err)) {
        CHECK(0, "a gpu context with %s: %s", qn, err.msg);
        stap_la_ctx_destroy(ctx);
        return;
    }
    printf("backend gpu, %s (guarded)\n", qn);
    const shape sizes[] = {{80, 16, 7}, {240, 66, 5}, {192, 96, 5}, {96, 16, 7}, {306, 66, 4},
                           {1, 1, 9},   {7, 5, 9},    {33, 32, 6},  {64, 64, 5}, {100, 1, 6},
                           {300, 7, 5}, {200, 128, 2}, {512, 128, 2}};
    const double conds[] = {0, 1e2, 1e4, 1e6};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int c = 0; c < (quick ? 1 : 4); c++) {
            const shape sz = sizes[z];
            long long k0, g0, k1, g1;
            stap_la_qr_counts(ctx, &k0, &g0);
            qr_case(ctx, what, rng, sz.m, sz.n, sz.batch, conds[c]);
            stap_la_qr_counts(ctx, &k1, &g1);
            const long long kept = k1 - k0, guarded = g1 - g0;
            /* 1 x 1 has no conditioning; 512 x 128 does not fit in shared memory, cholqr
               takes n <= 96 (Householder, uncounted) */
            if (sz.n == 1 || kept + guarded == 0) continue;
            CHECK(kept + guarded == sz.batch, "%dx%d: %lld kept + %lld guarded != batch %d", sz.m, sz.n,
                  kept, guarded, sz.batch);
            if (conds[c] <= 1e2)
                CHECK(guarded == 0, "%dx%d %s: %lld guarded", sz.m, sz.n, cond_name(conds[c]), guarded);
            if (conds[c] >= 1e6 && sz.n >= 5)
                CHECK(guarded == sz.batch, "%dx%d cond 1e6: %lld of %d guarded", sz.m, sz.n, guarded,
                      sz.batch);
        }
    /* a hard-preset batch with matrices 1, 3 and 126 ill-conditioned */
    const int m = 240, n = 66, batch = quick ? 8 : 128;
    const size_t one = (size_t)m * n;
    stap_cf32 *T = tc_xmalloc(one * batch * sizeof *T), *R = tc_xmalloc(one * batch * sizeof *R);
    tc_random_batch(rng, m, n, batch, T);
    const int bad[] = {1, 3, batch - 2};
    for (int i = 0; i < 3; i++) tc_illcond_batch(rng, m, n, 1, 1e6, T + one * bad[i]);
    memcpy(R, T, one * batch * sizeof *R);
    long long k0, g0, k1, g1;
    stap_la_qr_counts(ctx, &k0, &g0);
    int st = stap_la_qr(ctx, m, n, batch, R, m, (ptrdiff_t)one, &err);
    stap_la_qr_counts(ctx, &k1, &g1);
    CHECK(st == STAP_OK, "%s mixed batch: %s", qn, err.msg);
    CHECK(g1 - g0 == 3 && k1 - k0 == batch - 3, "mixed batch: %lld guarded, %lld kept (3 and %d expected)",
          g1 - g0, k1 - k0, batch - 3);
    la_qr_accuracy acc;
    if (st == STAP_OK && stap_la_qr_check(m, n, batch, T, R, 1, &acc, &err) == STAP_OK) {
        printf("  %-26s %4dx%-4d x%-5d %-9s residual %7.3f  diag %7.3f\n", q == STAP_QR_CHOLQR ? "gpu/cholqr mixed" : "gpu/cholqr2 mixed", m, n,
               batch, "3 at 1e6", acc.residual, acc.diag);
        CHECK(acc.residual < THRESHOLD && acc.diag < THRESHOLD, "mixed batch: residual %.3f diag %.3f (item %d)",
              acc.residual, acc.diag, acc.worst);
    }
    int below = 0; /* everything under R's triangle is the input's */
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < m; i++) below += !same_bits(R[one * k + (size_t)j * m + i], T[one * k + (size_t)j * m + i]);
    CHECK(below == 0, "mixed batch: %d entries under the diagonal changed", below);
    free(T);
    free(R);
    stap_la_ctx_destroy(ctx);
}

/* cholqr on the gpu against the cpu backend's cholqr (both the double Gram and the double
 * Cholesky, R rounded to float): max |R_gpu - R_cpu| over max |R| small (a few float
 * roundings; the two sum in other orders), at cond <= 1e2 where neither guards. */
static void cholqr_vs_cpu(tc_rng *rng, int quick)
{
    stap_error err = {0};
    stap_la_ctx *g = NULL, *c = NULL;
    if (stap_la_ctx_create(&g, STAP_BACKEND_GPU, 0, &err) || stap_la_set_qr(g, STAP_QR_CHOLQR, &err) ||
        stap_la_ctx_create(&c, STAP_BACKEND_CPU, 1, &err) || stap_la_set_qr(c, STAP_QR_CHOLQR, &err)) {
        CHECK(0, "gpu and cpu contexts with cholqr: %s", err.msg);
        stap_la_ctx_destroy(g);
        stap_la_ctx_destroy(c);
        return;
    }
    printf("gpu cholqr against the cpu's cholqr\n");
    const shape sizes[] = {{80, 16, 5}, {240, 66, 4}, {192, 96, 3}, {33, 32, 3}, {7, 5, 3}, {300, 7, 3}, {1000, 50, 2}};
    const double conds[] = {0, 1e2};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int ci = 0; ci < 2; ci++) {
            const shape sz = sizes[z];
            const int batch = quick && sz.batch > 2 ? 2 : sz.batch;
            const size_t one = (size_t)sz.m * sz.n, total = one * batch;
            stap_cf32 *T = tc_xmalloc(total * sizeof *T), *Rg = tc_xmalloc(total * sizeof *Rg),
                      *Rc = tc_xmalloc(total * sizeof *Rc);
            make_input(rng, sz.m, sz.n, batch, conds[ci], T);
            memcpy(Rg, T, total * sizeof *T);
            memcpy(Rc, T, total * sizeof *T);
            long long k0, g0, k1, g1;
            stap_la_qr_counts(g, &k0, &g0);
            int st = stap_la_qr(g, sz.m, sz.n, batch, Rg, sz.m, (ptrdiff_t)one, &err);
            stap_la_qr_counts(g, &k1, &g1);
            cases++;
            CHECK(st == STAP_OK, "gpu cholqr %dx%d: %s", sz.m, sz.n, err.msg);
            st = stap_la_qr(c, sz.m, sz.n, batch, Rc, sz.m, (ptrdiff_t)one, &err);
            CHECK(st == STAP_OK, "cpu cholqr %dx%d: %s", sz.m, sz.n, err.msg);
            CHECK(k1 - k0 == batch && g1 == g0, "%dx%d %s: gpu kept %lld of %d", sz.m, sz.n, cond_name(conds[ci]),
                  k1 - k0, batch);
            double worst = 0;
            for (int k = 0; k < batch; k++) {
                double dmax = 0, rmax = 0;
                for (int j = 0; j < sz.n; j++)
                    for (int i = 0; i <= j; i++) {
                        const size_t at = one * k + (size_t)j * sz.m + i;
                        const double d = cabs((double complex)Rg[at] - (double complex)Rc[at]);
                        const double r = cabs((double complex)Rc[at]);
                        dmax = d > dmax ? d : dmax;
                        rmax = r > rmax ? r : rmax;
                    }
                const double rel = rmax > 0 ? dmax / rmax : dmax;
                worst = rel > worst ? rel : worst;
            }
            printf("  %-26s %4dx%-4d x%-5d %-9s max|R_gpu - R_cpu| / max|R| %.2e\n", "gpu/cholqr vs cpu", sz.m,
                   sz.n, batch, cond_name(conds[ci]), worst);
            CHECK(worst < 1e-5, "%dx%d %s: gpu and cpu cholqr differ by %.2e of |R|", sz.m, sz.n,
                  cond_name(conds[ci]), worst);
            free(T);
            free(Rg);
            free(Rc);
        }
    stap_la_ctx_destroy(g);
    stap_la_ctx_destroy(c);
}

int main(void)
{
    stap_error err = {0};
    if (stap_backend_available(STAP_BACKEND_GPU, &err) != STAP_OK) {
        printf("test_gpu_qr: skipped: %s\n", err.msg);
        return 77;
    }
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    const int quick = getenv("RTSTAP_GPU_QUICK") != NULL;
    const double conds[] = {0, 1e2, 1e4, 1e6};
    const int nconds = quick ? 1 : 4, nbackends = quick ? 1 : 2;
    /* presets, diagonally-loaded presets, odd shapes (small batches) */
    const shape sizes[] = {{80, 16, 7},  {240, 66, 5}, {192, 96, 5}, {96, 16, 7},
                           {288, 96, 4}, {306, 66, 4}, {1, 1, 9},    {7, 5, 9},
                           {33, 32, 6},  {64, 64, 5},  {100, 1, 6},  {512, 128, 3},
                           {300, 7, 5},  {1000, 100, 2}, {2100, 40, 2}};
    const shape full[] = {{80, 16, 384}, {240, 66, 128}, {192, 96, 128}, {240, 66, 1280}};
    const stap_backend backends[] = {STAP_BACKEND_GPU, STAP_BACKEND_CUBLAS};

    for (int bi = 0; bi < nbackends; bi++) {
        stap_la_ctx *ctx = NULL;
        const char *bname = stap_backend_name(backends[bi]);
        if (stap_la_ctx_create(&ctx, backends[bi], 0, &err) != STAP_OK) {
            CHECK(0, "creating a %s context: %s", bname, err.msg);
            continue;
        }
        printf("backend %s: preset and odd sizes\n", bname);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int c = 0; c < nconds; c++)
                qr_case(ctx, bname, &rng, sizes[s].m, sizes[s].n,
                        quick && sizes[s].batch > 3 ? 3 : sizes[s].batch, conds[c]);
        printf("backend %s: full batches\n", bname);
        for (size_t s = 0; s < sizeof full / sizeof *full && !quick; s++)
            qr_case(ctx, bname, &rng, full[s].m, full[s].n, full[s].batch, 0);
        printf("backend %s: strided layouts and stap_la_bench_qr\n", bname);
        gap_case(ctx, bname, &rng, 33, 32, 5);
        gap_case(ctx, bname, &rng, 240, 66, 3);
        gap_case(ctx, bname, &rng, 80, 16, 1);
        bench_case(ctx, bname, &rng, 80, 16, quick ? 3 : 12);
        bench_case(ctx, bname, &rng, 240, 66, quick ? 2 : 6);
        stap_la_ctx_destroy(ctx);
    }

    cholqr_cases(&rng, quick, STAP_QR_CHOLQR2);
    cholqr_cases(&rng, quick, STAP_QR_CHOLQR);
    cholqr_vs_cpu(&rng, quick);

#ifdef RTSTAP_HAVE_CUDA
    /* every row of the dispatch table, at its capacity and at an odd smaller shape */
    stap_la_ctx *ctx = NULL;
    if (stap_la_ctx_create(&ctx, STAP_BACKEND_GPU, 0, &err) == STAP_OK) {
        printf("gpu dispatch table: every variant\n");
        for (int v = 0; v < rtk_qr_variant_count(); v++) {
            const rtk_qr_variant *info = rtk_qr_variant_get(v);
            shape s[3];
            int ns = 2;
            if (info->storage == RTK_CLUSTER) { /* capacity, an odd cluster, a single CTA */
                const int tile = info->tr * info->rpt;
                /* quick (the sanitizers' run): four CTAs, not the 16 of its capacity, which
                 * racecheck alone takes minutes a case over */
                s[0] = (shape){quick && info->max_m > 4 * tile ? 4 * tile : info->max_m, info->max_n, 3};
                s[1] = (shape){3 * tile - 5, info->max_n - 3, 4};
                s[2] = (shape){tile - 7 >= info->max_n - 5 ? tile - 7 : info->max_n - 5, info->max_n - 5, 3};
                ns = 3;
            } else if (info->storage == RTK_REGISTERS) {
                s[0] = (shape){info->max_m, info->max_n, 5};
                int n2 = info->max_n > 3 ? info->max_n - 3 : 1, m2 = info->max_m - 5;
                s[1] = (shape){m2 >= n2 ? m2 : n2, n2, 3};
            } else if (info->storage == RTK_SHARED) {
                s[0] = (shape){288, 96, 3};
                s[1] = (shape){151, 37, 4};
            } else {
                s[0] = (shape){512, 128, 3};
                s[1] = (shape){70, 33, 4};
            }
            CHECK(stap_la_gpu_force_variant(ctx, v, &err) == STAP_OK, "forcing variant %d: %s", v, err.msg);
            char what[64];
            snprintf(what, sizeof what, "gpu %s", info->name);
            for (int i = 0; i < ns; i++) {
                const int b = quick && s[i].batch > 3 ? 3 : s[i].batch;
                qr_case(ctx, what, &rng, s[i].m, s[i].n, b, 0);
                if (!quick) qr_case(ctx, what, &rng, s[i].m, s[i].n, b, 1e4);
            }
            /* cond 1e6 over a three-CTA cluster: reflectors formed from partial sums of
             * nearly dependent columns, summed in the same order in every CTA */
            if (info->storage == RTK_CLUSTER) qr_case(ctx, what, &rng, s[1].m, s[1].n, 2, 1e6);
        }
        /* a forced variant too small for the shape, and an out-of-range variant */
        stap_cf32 *A = tc_xmalloc(100 * 50 * sizeof *A);
        tc_random_batch(&rng, 100, 50, 1, A);
        CHECK(stap_la_gpu_force_variant(ctx, 0, &err) == STAP_OK, "forcing variant 0: %s", err.msg);
        CHECK(stap_la_qr(ctx, 100, 50, 1, A, 100, 5000, &err) == STAP_EINVAL,
              "a variant that cannot hold 100x50 must be refused");
        CHECK(stap_la_gpu_force_variant(ctx, rtk_qr_variant_count(), &err) == STAP_EINVAL,
              "an out-of-range variant must be refused");
        CHECK(stap_la_gpu_force_variant(ctx, -1, &err) == STAP_OK, "back to dispatch: %s", err.msg);
        CHECK(stap_la_qr(ctx, 100, 50, 1, A, 100, 5000, &err) == STAP_OK, "dispatch 100x50: %s", err.msg);
        free(A);

        /* dispatch by prediction (kernels/qr_model.cu) on random shapes: the choice fits,
           fuses or gathers when the kind asks for it, has the smallest prediction of the
           rows that qualify, and factors the shape correctly */
        int dev_smem = 232448;
        printf("gpu dispatch by the performance model: random shapes\n");
        for (int it = 0; it < (quick ? 12 : 40); it++) {
            const int n = 1 + (int)(tc_uniform(&rng) * 96), m = n + (int)(tc_uniform(&rng) * (330 - n));
            const int batch = 1 + (int)(tc_uniform(&rng) * 4000), kind = it % 3;
            const int nb = kind ? 1 + (int)(tc_uniform(&rng) * 32) : 0;
            const int v = rtk_qr_select_batch(kind, m, n, batch, nb, dev_smem, RTK_DISPATCH_MODEL);
            CHECK(v >= 0 && rtk_qr_fits(v, m, n, dev_smem), "%dx%dx%d kind %d: choice %d does not fit",
                  m, n, batch, kind, v);
            if (v < 0) continue;
            const int regs_fit = rtk_qr_select(m, n, dev_smem) >= 0 &&
                                 rtk_qr_variant_get(rtk_qr_select(m, n, dev_smem))->storage == RTK_REGISTERS;
            if (kind == 2 && regs_fit)
                CHECK(rtk_qr_can_gather(v), "%dx%d kind 2: %s cannot gather", m, n,
                      rtk_qr_variant_get(v)->name);
            if (kind == 1 && regs_fit)
                CHECK(rtk_qr_variant_get(v)->fused_weights, "%dx%d kind 1: %s does not fuse", m, n,
                      rtk_qr_variant_get(v)->name);
            double tv = -1;
            CHECK(rtk_qr_predict(v, kind, m, n, batch, nb, &tv) == 0 && tv > 0,
                  "%dx%d: no prediction for the choice %s", m, n, rtk_qr_variant_get(v)->name);
            for (int u = 0; u < rtk_qr_variant_count(); u++) {
                double tu = 0;
                if (u == v || !rtk_qr_fits(u, m, n, dev_smem) || (kind == 2 && !rtk_qr_can_gather(u)) ||
                    (kind == 1 && !rtk_qr_variant_get(u)->fused_weights) ||
                    rtk_qr_predict(u, kind, m, n, batch, nb, &tu))
                    continue;
                CHECK(tu >= tv, "%dx%dx%d kind %d: %s predicted %.1f us, faster than the choice %s %.1f",
                      m, n, batch, kind, rtk_qr_variant_get(u)->name, tu, rtk_qr_variant_get(v)->name, tv);
            }
            if (it < 8) {
                CHECK(stap_la_gpu_force_variant(ctx, v, &err) == STAP_OK, "forcing %d: %s", v, err.msg);
                char what[64];
                snprintf(what, sizeof what, "model's choice %s", rtk_qr_variant_get(v)->name);
                qr_case(ctx, what, &rng, m, n, 3, 0);
            }
        }
        CHECK(stap_la_gpu_force_variant(ctx, -1, &err) == STAP_OK, "back to dispatch: %s", err.msg);
        stap_la_ctx_destroy(ctx);
    } else {
        CHECK(0, "creating a gpu context: %s", err.msg);
    }
#endif
    printf("test_gpu_qr: %d cases, %d failures\n", cases, tc_failures);
    return tc_failures ? 1 : 0;
}
