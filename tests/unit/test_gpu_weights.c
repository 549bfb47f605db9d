/* test_gpu_weights: MVDR weights of the gpu and cublas backends — stap_la_adaptive_weights
 * (QR + solves, fused on the device) and stap_la_weights (solves from given factors) —
 * against the cpu backend: relative error where the problem is well conditioned, the
 * normalization w^H v = 1, and a backward residual ||A^H A w - alpha v|| /
 * (||A||_F^2 ||w|| m eps) < 30 that holds at any conditioning. Every preset, loaded and
 * odd size, every row of the dispatch table (at 16, 7 and 40 beams: several passes of the
 * fused solvers), and singular / non-finite factors (must be
 * STAP_ENUMERIC naming the batch item). Exits 77 without a usable GPU. RTSTAP_SEED=N
 * replays a run; RTSTAP_GPU_QUICK=1 (for compute-sanitizer) keeps the gpu backend,
 * random inputs and batches of at most 3. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "linalg.h"
#ifdef RTSTAP_HAVE_CUDA
#include "la_device.h" /* rtk.h and stap_la_gpu_force_variant */
#include "rtk_model.h"
#include <cuda_runtime_api.h>
#endif
#include "testutil.h"

#define EPS ((double)FLT_EPSILON / 2.0)
#define RESIDUAL_MAX 30.0
#define RELERR_MAX 1e-3 /* well-conditioned problems (m >= 2n, random) */
#define UNIT_MAX 1e-3   /* |v^H w - 1| */

static int cases = 0;

typedef struct {
    double relerr, unit, residual;
} wstats;

/* Compare W (batch x nbeams x n) with Wref; residual against M_k^H M_k where M_k is
 * rows x n with leading dimension ld (A itself, or R with rows = n). */
static wstats weight_stats(int rows, int n, int batch, const stap_cf32 *M, int ld, ptrdiff_t stride,
                           int nbeams, const stap_cf32 *V, const stap_cf32 *W, const stap_cf32 *Wref)
{
    wstats s = {0, 0, 0};
    stap_cf64 *Mw = tc_xmalloc((size_t)rows * sizeof *Mw), *u = tc_xmalloc((size_t)n * sizeof *u);
    for (int k = 0; k < batch; k++) {
        const stap_cf32 *Mk = M + stride * k;
        double fro = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < rows; i++) {
                const stap_cf32 x = Mk[(size_t)j * ld + i];
                fro += crealf(x) * crealf(x) + cimagf(x) * cimagf(x);
            }
        for (int b = 0; b < nbeams; b++) {
            const stap_cf32 *v = V + (size_t)b * n, *w = W + ((size_t)k * nbeams + b) * n;
            const stap_cf32 *wr = Wref + ((size_t)k * nbeams + b) * n;
            double d2 = 0, r2 = 0, w2 = 0, v2 = 0;
            stap_cf64 vw = 0, vu = 0;
            for (int j = 0; j < n; j++) {
                const stap_cf64 d = (stap_cf64)w[j] - (stap_cf64)wr[j];
                d2 += creal(d * conj(d));
                r2 += creal((stap_cf64)wr[j] * conj((stap_cf64)wr[j]));
                w2 += creal((stap_cf64)w[j] * conj((stap_cf64)w[j]));
                v2 += creal((stap_cf64)v[j] * conj((stap_cf64)v[j]));
                vw += conj((stap_cf64)v[j]) * (stap_cf64)w[j];
            }
            for (int i = 0; i < rows; i++) { /* Mw = M w */
                stap_cf64 acc = 0;
                for (int j = 0; j < n; j++) acc += (stap_cf64)Mk[(size_t)j * ld + i] * (stap_cf64)w[j];
                Mw[i] = acc;
            }
            for (int j = 0; j < n; j++) { /* u = M^H (M w) */
                stap_cf64 acc = 0;
                for (int i = 0; i < rows; i++) acc += conj((stap_cf64)Mk[(size_t)j * ld + i]) * Mw[i];
                u[j] = acc;
                vu += conj((stap_cf64)v[j]) * acc;
            }
            const stap_cf64 alpha = vu / v2;
            double res2 = 0;
            for (int j = 0; j < n; j++) {
                const stap_cf64 e = u[j] - alpha * (stap_cf64)v[j];
                res2 += creal(e * conj(e));
            }
            const double rel = r2 > 0 ? sqrt(d2 / r2) : INFINITY;
            const double unit = cabs(vw - 1.0);
            const double res = sqrt(res2) / (fro * sqrt(w2) * (rows > n ? rows : n) * EPS);
            if (!(rel <= s.relerr)) s.relerr = rel;
            if (!(unit <= s.unit)) s.unit = unit;
            if (!(res <= s.residual)) s.residual = res;
        }
    }
    free(Mw);
    free(u);
    return s;
}

/* One batch: cpu reference (stap_la_qr + stap_la_weights), then on the backend under test
 * stap_la_adaptive_weights (from A) and stap_la_weights (from the cpu's R). */
static void weights_case(stap_la_ctx *ctx, stap_la_ctx *cpu, const char *what, tc_rng *rng, int m, int n,
                         int batch, int nbeams, double cond)
{
    const size_t one = (size_t)m * n, total = one * batch, nw = (size_t)batch * nbeams * n;
    stap_cf32 *A = tc_xmalloc(total * sizeof *A), *R = tc_xmalloc(total * sizeof *R);
    stap_cf32 *work = tc_xmalloc(total * sizeof *work), *V = tc_xmalloc((size_t)nbeams * n * sizeof *V);
    stap_cf32 *Wref = tc_xmalloc(nw * sizeof *Wref), *Wa = tc_xmalloc(nw * sizeof *Wa), *Ws = tc_xmalloc(nw * sizeof *Ws);
    if (cond > 0)
        tc_illcond_batch(rng, m, n, batch, cond, A);
    else
        tc_random_batch(rng, m, n, batch, A);
    tc_random_batch(rng, nbeams, n, 1, V);
    for (size_t i = 0; i < nw; i++) Wa[i] = Ws[i] = NAN;
    stap_error err = {0};
    memcpy(R, A, total * sizeof *R);
    int st = stap_la_qr(cpu, m, n, batch, R, m, (ptrdiff_t)one, &err);
    if (!st) st = stap_la_weights(cpu, n, batch, R, m, (ptrdiff_t)one, nbeams, V, Wref, &err);
    CHECK(st == STAP_OK, "cpu reference %dx%d: %s", m, n, err.msg);
    cases++;
    if (st) goto out;
    for (int k = 0; k < batch; k++) /* R's strict lower part: 0 (the residual reads it) */
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < m; i++) R[one * k + (size_t)j * m + i] = 0;
    memcpy(work, A, total * sizeof *work);
    stap_la_timing t = {-1, -1, -1};
    st = stap_la_adaptive_weights(ctx, m, n, batch, work, m, (ptrdiff_t)one, nbeams, V, Wa, &t, &err);
    CHECK(st == STAP_OK, "%s %dx%d stap_la_adaptive_weights: %s", what, m, n, err.msg);
    if (st == STAP_OK)
        CHECK(t.qr_ms > 0 && t.weights_ms >= 0 && t.transfer_ms > 0,
              "%s %dx%d: timing qr %.4f weights %.4f transfer %.4f ms", what, m, n, t.qr_ms,
              t.weights_ms, t.transfer_ms);
    int st2 = stap_la_weights(ctx, n, batch, R, m, (ptrdiff_t)one, nbeams, V, Ws, &err);
    CHECK(st2 == STAP_OK, "%s %dx%d stap_la_weights: %s", what, m, n, err.msg);
    if (st || st2) goto out;
    const int wellcond = cond <= 0 && m >= 2 * n;
    wstats sa = weight_stats(m, n, batch, A, m, (ptrdiff_t)one, nbeams, V, Wa, Wref);
    wstats ss = weight_stats(n, n, batch, R, m, (ptrdiff_t)one, nbeams, V, Ws, Wref);
    int ok = sa.residual < RESIDUAL_MAX && ss.residual < RESIDUAL_MAX && sa.unit < UNIT_MAX &&
             ss.unit < UNIT_MAX && (!wellcond || (sa.relerr < RELERR_MAX && ss.relerr < RELERR_MAX));
    printf("  %-26s %4dx%-4d x%-4d b%-3d %-8s adaptive: rel %.1e unit %.1e res %6.2f | "
           "from R: rel %.1e unit %.1e res %6.2f | qr %.3f w %.3f ms  %s\n",
           what, m, n, batch, nbeams, cond > 0 ? "illcond" : "random", sa.relerr, sa.unit,
           sa.residual, ss.relerr, ss.unit, ss.residual, t.qr_ms, t.weights_ms, ok ? "ok" : "FAIL");
    CHECK(ok, "%s %dx%dx%d (%s): adaptive rel %.2e unit %.2e res %.2f; from R rel %.2e unit %.2e res %.2f",
          what, m, n, batch, cond > 0 ? "illcond" : "random", sa.relerr, sa.unit, sa.residual,
          ss.relerr, ss.unit, ss.residual);
out:
    free(A);
    free(R);
    free(work);
    free(V);
    free(Wref);
    free(Wa);
    free(Ws);
}

/* Singular and non-finite factors: STAP_ENUMERIC naming the (lowest) bad batch item. */
static void singular_cases(stap_la_ctx *ctx, const char *what, tc_rng *rng, int m, int n)
{
    const int batch = 6, nbeams = 4, bad = 3;
    const size_t one = (size_t)m * n, total = one * batch;
    stap_cf32 *A = tc_xmalloc(total * sizeof *A), *V = tc_xmalloc((size_t)nbeams * n * sizeof *V);
    stap_cf32 *W = tc_xmalloc((size_t)batch * nbeams * n * sizeof *W);
    tc_random_batch(rng, m, n, batch, A);
    tc_random_batch(rng, nbeams, n, 1, V);
    for (int i = 0; i < m; i++) A[one * bad + (size_t)2 * m + i] = 0; /* column 2 of item 3 */
    stap_error err = {0};
    char want[64];
    snprintf(want, sizeof want, "batch item %d", bad);
    int st = stap_la_adaptive_weights(ctx, m, n, batch, A, m, (ptrdiff_t)one, nbeams, V, W, NULL, &err);
    cases++;
    CHECK(st == STAP_ENUMERIC && strstr(err.msg, want),
          "%s %dx%d: a zero column in item %d gave status %d '%s'", what, m, n, bad, st, err.msg);
    printf("  %-26s %4dx%-4d zero column in item %d: %s: %s\n", what, m, n, bad,
           stap_status_name(st), err.msg);
    /* triangular factors with a zero (item 4) and a NaN (item 1) diagonal */
    stap_cf32 *R = tc_xmalloc((size_t)n * n * batch * sizeof *R);
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                R[(size_t)n * n * k + (size_t)j * n + i] = i == j ? 2.0f + 0.5f * I : (i < j ? 0.3f : 0.0f);
    R[(size_t)n * n * 4 + (size_t)(n - 1) * n + (n - 1)] = 0;
    st = stap_la_weights(ctx, n, batch, R, n, (ptrdiff_t)n * n, nbeams, V, W, &err);
    cases++;
    CHECK(st == STAP_ENUMERIC && strstr(err.msg, "batch item 4"),
          "%s n=%d: zero diagonal in item 4 gave status %d '%s'", what, n, st, err.msg);
    R[(size_t)n * n * 1] = NAN;
    st = stap_la_weights(ctx, n, batch, R, n, (ptrdiff_t)n * n, nbeams, V, W, &err);
    cases++;
    CHECK(st == STAP_ENUMERIC && strstr(err.msg, "batch item 1"),
          "%s n=%d: NaN diagonal in item 1 gave status %d '%s'", what, n, st, err.msg);
    free(A);
    free(V);
    free(W);
    free(R);
}

typedef struct { int m, n, batch, nbeams; } wshape;

int main(void)
{
    stap_error err = {0};
    if (stap_backend_available(STAP_BACKEND_GPU, &err) != STAP_OK) {
        printf("test_gpu_weights: skipped: %s\n", err.msg);
        return 77;
    }
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    const int quick = getenv("RTSTAP_GPU_QUICK") != NULL;
    stap_la_ctx *cpu = NULL;
    if (stap_la_ctx_create(&cpu, STAP_BACKEND_CPU, 0, &err) != STAP_OK) {
        fprintf(stderr, "cpu context: %s\n", err.msg);
        return 1;
    }
    const wshape sizes[] = {{80, 16, 7, 16},  {96, 16, 7, 16},  {240, 66, 5, 16}, {306, 66, 3, 16},
                            {192, 96, 4, 16}, {288, 96, 3, 16}, {1, 1, 5, 3},     {7, 5, 6, 3},
                            {33, 32, 4, 16},  {64, 64, 3, 5},   {100, 1, 4, 2},   {300, 7, 4, 16},
                            {512, 128, 2, 16}, {300, 257, 2, 16}, {520, 512, 2, 9}};
    const wshape full[] = {{80, 16, 384, 16}, {240, 66, 128, 16}, {192, 96, 128, 16},
                           {240, 66, 1280, 16}};
    const stap_backend backends[] = {STAP_BACKEND_GPU, STAP_BACKEND_CUBLAS};
    for (int bi = 0; bi < (quick ? 1 : 2); bi++) {
        stap_la_ctx *ctx = NULL;
        const char *bname = stap_backend_name(backends[bi]);
        if (stap_la_ctx_create(&ctx, backends[bi], 0, &err) != STAP_OK) {
            CHECK(0, "creating a %s context: %s", bname, err.msg);
            continue;
        }
        printf("backend %s: preset and odd sizes\n", bname);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            const int b = quick && sizes[s].batch > 3 ? 3 : sizes[s].batch;
            weights_case(ctx, cpu, bname, &rng, sizes[s].m, sizes[s].n, b, sizes[s].nbeams, 0);
            if (!quick)
                weights_case(ctx, cpu, bname, &rng, sizes[s].m, sizes[s].n, b, sizes[s].nbeams, 1e2);
        }
        printf("backend %s: full batches\n", bname);
        for (size_t s = 0; s < sizeof full / sizeof *full && !quick; s++)
            weights_case(ctx, cpu, bname, &rng, full[s].m, full[s].n, full[s].batch,
                         full[s].nbeams, 0);
        printf("backend %s: singular and non-finite factors\n", bname);
        singular_cases(ctx, bname, &rng, 80, 16);
        singular_cases(ctx, bname, &rng, 240, 66);
        stap_la_ctx_destroy(ctx);
    }
#ifdef RTSTAP_HAVE_CUDA
    stap_la_ctx *ctx = NULL;
    if (stap_la_ctx_create(&ctx, STAP_BACKEND_GPU, 0, &err) == STAP_OK) {
        printf("gpu dispatch table: every variant (fused where the variant fuses)\n");
        for (int v = 0; v < rtk_qr_variant_count(); v++) {
            const rtk_qr_variant *info = rtk_qr_variant_get(v);
            int m = info->max_m, n = info->max_n;
            if (info->storage == RTK_SHARED) m = 288, n = 96;
            if (info->storage == RTK_GLOBAL) m = 512, n = 128;
            /* quick (the sanitizers' run): a cluster row at 512 rows, four CTAs exchanging,
             * not at its 2 048 (16 CTAs), which racecheck alone takes minutes a case over */
            if (quick && info->storage == RTK_CLUSTER && m > 512) m = 512;
            CHECK(stap_la_gpu_force_variant(ctx, v, &err) == STAP_OK, "forcing variant %d: %s", v, err.msg);
            char what[64];
            snprintf(what, sizeof what, "gpu %s", info->name);
            weights_case(ctx, cpu, what, &rng, m, n, quick ? 3 : 5, 16, 0);
            weights_case(ctx, cpu, what, &rng, m - 3 >= n - 1 ? m - 3 : n - 1, n > 1 ? n - 1 : 1, 3, 7, 0);
            /* 40 beams: several passes of the fused solvers (16 beams a pass when blocked) */
            weights_case(ctx, cpu, what, &rng, m, n, 3, 40, 0);
            singular_cases(ctx, what, &rng, m, n);
            if (info->fused_weights) { /* its QR alone, then the weight kernel (the plan's other way) */
                CHECK(stap_la_gpu_force_plan(ctx, v, 1, &err) == STAP_OK, "forcing %d separate: %s", v, err.msg);
                snprintf(what, sizeof what, "gpu %s, then wk", info->name);
                weights_case(ctx, cpu, what, &rng, m, n, 3, 16, 0);
                CHECK(stap_la_gpu_force_plan(ctx, v, 0, &err) == STAP_OK, "forcing %d: %s", v, err.msg);
            }
        }
        stap_la_ctx_destroy(ctx);
    } else {
        CHECK(0, "creating a gpu context: %s", err.msg);
    }
    /* the weight kernel's occupancy as the model's fit assumes it (rtk_model.h, H100 registers)
     * against the device's answer, on the device the parameters were fitted on */
    int dev = 0, sms = 0, major = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        major == 9 && sms == 132) {
        const int ns[] = {1, 7, 16, 31, 32, 33, 50, 64, 65, 66, 96, 97, 128, 129, 200, 256, 257, 400, 512};
        const int bs[] = {1, 3, 16, 40};
        int agree = 0, total = 0;
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (size_t j = 0; j < sizeof bs / sizeof *bs; j++) {
                int r = -1;
                const int e = rtk_weights_occupancy(ns[i], bs[j], &r);
                const int f = rtk_weights_blocks_per_sm_h100(ns[i], bs[j]);
                CHECK(e == 0 && r == f, "weight kernel n=%d, %d beams: %d blocks an SM, the model assumes %d",
                      ns[i], bs[j], r, f);
                agree += e == 0 && r == f, total++;
            }
        printf("weight kernel occupancy: the model's H100 formula agrees with the device in %d of %d cases\n",
               agree, total);
    } else {
        printf("weight kernel occupancy: not an H100 (132 SMs, sm_90); the model's formula not checked\n");
    }
#endif
    stap_la_ctx_destroy(cpu);
    printf("test_gpu_weights: %d cases, %d failures\n", cases, tc_failures);
    return tc_failures ? 1 : 0;
}
