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

#ifdef RTSTAP_HAVE_CUDA
/* ---- issue 47: cholqr fused with the gather and the weights --------------------------------
 * rtk_cholqr1_gather_weights_launch (its guard's Householder in the same kernel) against the
 * materialized path (rtk_training_launch, rtk_cholqr1_launch, rtk_qr_guard_launch,
 * rtk_weights_launch) on random Doppler cubes, with either solve: the same weights (counted
 * bit for bit; required within 1e-5 relative by the weight kernel's substitutions, subst, 1e-3
 * by the blocked solve, whose rounding differs), the same fail list, flags (bad_item, guarded,
 * worst) and kept R (cholqr's bit for bit; the guard's Householder R within 1e-6 of the
 * generic kernel's, counted bit for bit). weak: channel 0 of two bins at
 * 1e-5 (the items whose taps read them trip the guard's ratio) and channel 1 of one bin zero
 * (a zero column: breakdown, then a Householder R with a zero diagonal, bad_item). */
typedef struct { int C, Q, D, wrap, R, S, K, nbeams, loaded, weak; } cqf_shape;

#define CQF_CU(call)                                                                        \
    do {                                                                                    \
        const int e_ = (int)(call);                                                         \
        CHECK(e_ == 0, "%s: CUDA error %d (%s)", #call, e_, cudaGetErrorString((cudaError_t)e_)); \
        if (e_) goto out;                                                                   \
    } while (0)

static int cqf_cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* the host's Doppler cube, bins x channels x range (weak: as described above) */
static stap_cf32 *cqf_cube(tc_rng *rng, const cqf_shape *c)
{
    const size_t plane = (size_t)c->C * c->R, total = plane * c->D;
    stap_cf32 *X = tc_xmalloc(total * sizeof *X);
    for (size_t i = 0; i < total; i++) X[i] = tc_cnormal(rng);
    if (c->weak) {
        for (int r = 0; r < c->R; r++) {
            X[4 * plane + r] *= 1e-5f; /* bins 4, 5: channel 0 */
            X[5 * plane + r] *= 1e-5f;
            X[(size_t)(c->D - 2) * plane + c->R + r] = 0; /* bin D - 2: channel 1 */
        }
    }
    return X;
}

/* the two paths' outputs: weights, lists, flags, and the kept R of the items not listed */
static void cqf_compare(const cqf_shape *c, int m, int n, int batch, int subst, const stap_cf32 *W1, const stap_cf32 *W2,
                        const stap_cf32 *T1, const stap_cf32 *Rk, int *l1, int *l2, const rtk_factor_flags *f)
{
    const int nb = c->nbeams;
    const double tol = subst ? 1e-5 : 1e-3;
    long long same = 0, total = 0, rdiff = 0;
    double worst = 0;
    for (int k = 0; k < batch * nb; k++) {
        const stap_cf32 *a = W1 + (size_t)k * n, *b = W2 + (size_t)k * n;
        double d2 = 0, r2 = 0;
        for (int j = 0; j < n; j++) {
            same += !memcmp(a + j, b + j, sizeof *a), total++;
            const stap_cf64 d = (stap_cf64)a[j] - (stap_cf64)b[j];
            d2 += creal(d * conj(d));
            r2 += creal((stap_cf64)a[j] * conj((stap_cf64)a[j]));
        }
        const double rel = isnan(d2) && isnan(r2) ? 0 : sqrt(d2 / r2); /* both unwritten: NaN alike */
        if (!(rel <= worst)) worst = rel;
    }
    const int cnt = l1[0] < 0 || l1[0] > batch ? -1 : l1[0];
    int lists_same = cnt >= 0 && l2[0] == cnt;
    if (lists_same) {
        qsort(l1 + 1, (size_t)cnt, sizeof *l1, cqf_cmp_int);
        qsort(l2 + 1, (size_t)cnt, sizeof *l2, cqf_cmp_int);
        lists_same = !memcmp(l1 + 1, l2 + 1, (size_t)cnt * sizeof *l1);
    }
    long long gdiff = 0; /* kept R: cholqr1_kernel's bits where not listed; the guard's R where listed */
    double gworst = 0;
    for (int k = 0; k < batch; k++) {
        int listed = 0;
        for (int i = 1; i <= cnt && !listed; i++) listed = l1[i] == k;
        double rmax = 0, dmax = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i <= j; i++) {
                const stap_cf32 a = Rk[(size_t)k * n * n + (size_t)j * n + i], b = T1[(size_t)k * m * n + (size_t)j * m + i];
                const int differ = memcmp(&a, &b, sizeof a) != 0;
                if (!listed) rdiff += differ;
                gdiff += listed && differ;
                if (cabsf(b) > rmax) rmax = cabsf(b);
                if (listed && cabsf(a - b) > dmax) dmax = cabsf(a - b);
            }
        if (listed && rmax > 0 && dmax / rmax > gworst) gworst = dmax / rmax;
        if (listed && !(rmax > 0) && dmax > 0) gworst = INFINITY;
    }
    const int flags_same = f[0].bad_item == f[1].bad_item && f[0].guarded == f[1].guarded && f[0].worst == f[1].worst;
    printf("  cholqr fused %s %4dx%-3d x%-4d b%-3d %s%s: guarded %d/%d, bad_item %d/%d, worst %016llx/%016llx; "
           "weights bit-equal %lld of %lld, max rel %.1e; kept R differs in %lld, the guard's in %lld (%.1e)  %s\n",
           subst ? "subst  " : "blocked", m, n, batch, nb, c->loaded ? "loaded" : "plain", c->weak ? ", weak items" : "", f[0].guarded, f[1].guarded,
           f[0].bad_item, f[1].bad_item, f[0].worst, f[1].worst, same, total, worst, rdiff, gdiff, gworst,
           lists_same && flags_same && worst <= tol && rdiff == 0 && gworst <= 1e-6 ? "ok" : "FAIL");
    cases++;
    CHECK(lists_same, "cholqr fused %dx%d: fail lists differ (%d / %d items)", m, n, l1[0], l2[0]);
    CHECK(flags_same, "cholqr fused %dx%d: flags differ", m, n);
    CHECK(worst <= tol, "cholqr fused %dx%d (subst %d): weights differ by %.2e relative", m, n, subst, worst);
    CHECK(rdiff == 0, "cholqr fused %dx%d: kept R differs from cholqr1's in %lld elements", m, n, rdiff);
    CHECK(gworst <= 1e-6, "cholqr fused %dx%d: the guard's kept R differs from the generic kernel's by %.2e", m, n,
          gworst);
    CHECK(!c->weak || (f[0].guarded > 0 && f[0].guarded < batch && f[0].bad_item != RTK_NO_BAD),
          "cholqr fused %dx%d: the weak cube guarded %d of %d, bad_item %d", m, n, f[0].guarded, batch, f[0].bad_item);
}

static void cqf_case(tc_rng *rng, const cqf_shape *c, int smem_limit)
{
    const int n = c->C * c->Q, K = c->K, m = K + (c->loaded ? n : 0), batch = c->D * c->S, nb = c->nbeams;
    const size_t mn = (size_t)m * n, nw = (size_t)batch * nb * n;
    if (!rtk_cholqr1_gather_fits(m, n, smem_limit)) { /* every shape here is one the engine fuses */
        CHECK(0, "cholqr fused %dx%d: does not fit %d bytes of shared memory", m, n, smem_limit);
        return;
    }
    stap_cf32 *X = cqf_cube(rng, c), *V = tc_xmalloc((size_t)nb * n * sizeof *V);
    int *cells = tc_xmalloc((size_t)c->S * K * sizeof *cells), *l1 = tc_xmalloc((size_t)(batch + 1) * sizeof *l1),
        *l2 = tc_xmalloc((size_t)(batch + 1) * sizeof *l2);
    stap_cf32 *W1 = tc_xmalloc(nw * sizeof *W1), *W2 = tc_xmalloc(nw * sizeof *W2);
    stap_cf32 *T1 = tc_xmalloc(mn * batch * sizeof *T1), *Rk = tc_xmalloc((size_t)n * n * batch * sizeof *Rk);
    void *dX = NULL, *dV = NULL, *dW1 = NULL, *dW2 = NULL, *dT1 = NULL, *dR = NULL;
    int *dcells = NULL, *dl1 = NULL, *dl2 = NULL;
    rtk_factor_flags *df = NULL, f[2];
    tc_random_batch(rng, nb, n, 1, V);
    for (int s = 0; s < c->S; s++) /* range cells: distinct within a segment */
        for (int i = 0; i < K; i++) cells[s * K + i] = (int)(((long long)i * 3 + s * 5) % c->R);
    const size_t xb = (size_t)c->D * c->C * c->R * sizeof(stap_cf32), wb = nw * sizeof(stap_cf32);
    const size_t tb = mn * batch * sizeof(stap_cf32), lb = (size_t)(batch + 1) * sizeof(int);
    CQF_CU(cudaMalloc(&dX, xb));
    CQF_CU(cudaMalloc(&dV, (size_t)nb * n * sizeof(stap_cf32)));
    CQF_CU(cudaMalloc((void **)&dcells, (size_t)c->S * K * sizeof(int)));
    CQF_CU(cudaMalloc(&dW1, wb));
    CQF_CU(cudaMalloc(&dW2, wb));
    CQF_CU(cudaMalloc(&dT1, tb));
    CQF_CU(cudaMalloc(&dR, (size_t)n * n * batch * sizeof(stap_cf32)));
    CQF_CU(cudaMalloc((void **)&dl1, lb));
    CQF_CU(cudaMalloc((void **)&dl2, lb));
    CQF_CU(cudaMalloc((void **)&df, 2 * sizeof(rtk_factor_flags)));
    CQF_CU(cudaMemcpy(dX, X, xb, cudaMemcpyHostToDevice));
    CQF_CU(cudaMemcpy(dV, V, (size_t)nb * n * sizeof(stap_cf32), cudaMemcpyHostToDevice));
    CQF_CU(cudaMemcpy(dcells, cells, (size_t)c->S * K * sizeof(int), cudaMemcpyHostToDevice));
    CQF_CU(cudaMemset(dW1, 0xff, wb)); /* NaN: where no weights are written, both stay so */
    CQF_CU(cudaMemset(df, 0x7f, sizeof(rtk_factor_flags))); /* guarded from 0, as the engine zeroes it */
    CQF_CU(cudaMemset(&df->guarded, 0, sizeof(int)));
    CQF_CU(cudaMemset(dl1, 0, lb));
    rtk_gather g = {dX, dcells, c->C, c->Q, c->D, c->R, c->S, c->R / c->S, K, c->loaded ? 0.7f : 0.f, c->wrap};
    const float mr = (float)STAP_CHOLQR2_MIN_RATIO;
    const long long st = (long long)mn;
    /* the materialized path */
    CQF_CU(rtk_training_launch(&g, m, n, batch, dT1, m, st, NULL));
    CQF_CU(rtk_cholqr1_launch(m, n, batch, dT1, m, st, mr, dl1, NULL));
    CQF_CU(rtk_qr_guard_launch(m, n, batch, dT1, m, st, dl1, df, smem_limit, NULL));
    CQF_CU(rtk_weights_launch(n, batch, dT1, m, st, nb, dV, dW1, df, NULL));
    CQF_CU(cudaMemcpy(W1, dW1, wb, cudaMemcpyDeviceToHost));
    CQF_CU(cudaMemcpy(T1, dT1, tb, cudaMemcpyDeviceToHost));
    CQF_CU(cudaMemcpy(l1, dl1, lb, cudaMemcpyDeviceToHost));
    for (int subst = 1; subst >= 0; subst--) { /* the fused one, its guard inside */
        CQF_CU(cudaMemset(dW2, 0xff, wb));
        CQF_CU(cudaMemset(dR, 0, (size_t)n * n * batch * sizeof(stap_cf32)));
        CQF_CU(cudaMemset(df + 1, 0x7f, sizeof(rtk_factor_flags)));
        CQF_CU(cudaMemset(&df[1].guarded, 0, sizeof(int)));
        CQF_CU(cudaMemset(dl2, 0, lb));
        CQF_CU(rtk_cholqr1_gather_weights_launch(&g, m, n, batch, nb, dV, dW2, df + 1, mr, dl2, dR, subst, NULL));
        CQF_CU(cudaDeviceSynchronize());
        CQF_CU(cudaMemcpy(W2, dW2, wb, cudaMemcpyDeviceToHost));
        CQF_CU(cudaMemcpy(Rk, dR, (size_t)n * n * batch * sizeof(stap_cf32), cudaMemcpyDeviceToHost));
        CQF_CU(cudaMemcpy(l2, dl2, lb, cudaMemcpyDeviceToHost));
        CQF_CU(cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost));
        cqf_compare(c, m, n, batch, subst, W1, W2, T1, Rk, l1, l2, f);
    }
out:
    cudaFree(dX), cudaFree(dV), cudaFree(dcells), cudaFree(dW1), cudaFree(dW2), cudaFree(dT1);
    cudaFree(dR), cudaFree(dl1), cudaFree(dl2), cudaFree(df);
    free(X), free(V), free(cells), free(l1), free(l2), free(W1), free(W2), free(T1), free(Rk);
}

/* the shapes: post-Doppler hard (240 x 66) with and without loading, weak items; odd n, wrap
 * groups, n = 16, 32, 96; few beams and many */
static void cqf_cases(tc_rng *rng)
{
    int dev = 0, smem = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        CHECK(0, "cholqr fused: no device attributes");
        return;
    }
    const int quick = getenv("RTSTAP_GPU_QUICK") != NULL;
    const cqf_shape shapes[] = {
        /* C  Q   D wrap   R  S    K  beams loaded weak */
        {11, 6, 16, 0, 800, 2, 240, 16, 0, 1}, {11, 6, 16, 0, 800, 2, 174, 16, 1, 0},
        {11, 3, 12, 6, 400, 2, 70, 7, 0, 1},   {4, 4, 8, 0, 200, 3, 40, 16, 0, 0},
        {8, 4, 12, 6, 300, 2, 64, 40, 1, 0},   {12, 8, 6, 0, 700, 2, 192, 16, 1, 0},
        {24, 4, 16, 0, 700, 1, 230, 3, 0, 1},   {11, 6, 64, 0, 1000, 2, 240, 16, 0, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes - (quick ? 1 : 0); i++) cqf_case(rng, &shapes[i], smem);
}
#endif

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
#ifdef RTSTAP_HAVE_CUDA
    /* issue 47: cholqr fused with the gather and the weights; RTSTAP_WEIGHTS_CASES=cqfuse: these alone */
    printf("cholqr fused (gather + factor + weights) against the materialized path\n");
    cqf_cases(&rng);
    const char *only = getenv("RTSTAP_WEIGHTS_CASES");
    if (only && !strcmp(only, "cqfuse")) {
        printf("test_gpu_weights: %d cases, %d failures\n", cases, tc_failures);
        return tc_failures ? 1 : 0;
    }
#endif
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
