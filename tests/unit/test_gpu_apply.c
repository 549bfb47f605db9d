/* test_gpu_apply: the weight application on the GPU (kernels/pipeline_apply.cu: rtk_apply_launch
 * as dispatched — the tensor-core kernel (3xTF32 products) for N > 16, the row kernel for
 * N <= 16 — rtk_apply_rows_launch, the row kernel for every N, and rtk_apply_fp32_launch,
 * the FP32 register-tiled kernel for N > 16) against a double-precision CPU
 * reference of the contract (rtk_pipeline.h, docs/processing.md step 8), on fresh random
 * cubes and weights: the presets' shapes, segments, odd shapes (cells and beams that leave
 * tiles and warps partly idle, ranges longer than the segments, N % 4 = 1 and 3, partial beam
 * groups of 13 and 5), wide snapshots (N up to 512: many shared-memory chunks; 513: the row
 * kernel's fallback), and ill-scaled entries (magnitudes over twelve decades,
 * where sums cancel). Criteria: every output within the forward error bound of a float dot
 * product, 4 N u sum_j |w_j| |x_j| (u = 2^-24), and, for well-scaled inputs, an SNR of at
 * least 110 dB against the reference; cells beyond the segments left untouched; a
 * non-finite weight reported at its lowest flat index. Exits 77 (skipped) without CUDA or
 * without a usable GPU; RTSTAP_SEED=N replays a run; RTSTAP_GPU_QUICK=1 (for
 * compute-sanitizer) leaves out the preset-sized cubes. Also the apply fused with the
 * CA/GO/SO detector (rtk_apply_cfar_launch): its hits against rtk_apply_launch followed by
 * rtk_cfar_line_launch, bit for bit, and the shapes it refuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "testutil.h"
#ifdef RTSTAP_HAVE_CUDA
#include <cuda_runtime.h>

#include "rtk_pipeline.h"

typedef int (*apply_fn)(const rtk_gather *, int, const void *, void *, rtk_cpi_status *, void *);

typedef struct shape {
    int C, Q, D, R, S, L, B;
} shape;

static stap_cf32 draw(tc_rng *rng, int ill)
{
    stap_cf32 v = tc_cnormal(rng);
    if (ill) v *= (float)pow(10.0, 12 * tc_uniform(rng) - 6); /* 1e-6 .. 1e6 */
    return v;
}

static void one_case(tc_rng *rng, const char *name, apply_fn fn, shape sh, int ill, int nan_at)
{
    const int C = sh.C, Q = sh.Q, D = sh.D, R = sh.R, S = sh.S, L = sh.L, B = sh.B, N = C * Q;
    const size_t nx = (size_t)D * C * R, nw = (size_t)D * S * B * N, ny = (size_t)B * D * R;
    stap_cf32 *X = tc_xmalloc(sizeof *X * nx), *W = tc_xmalloc(sizeof *W * nw);
    stap_cf32 *Y = tc_xmalloc(sizeof *Y * ny);
    for (size_t i = 0; i < nx; i++) X[i] = draw(rng, ill);
    for (size_t i = 0; i < nw; i++) W[i] = draw(rng, ill);
    /* |x| and |w| once, for the error bound's sum (the reference's inner loop stays cheap) */
    double *ax = tc_xmalloc(sizeof *ax * nx), *aw = tc_xmalloc(sizeof *aw * nw);
    for (size_t i = 0; i < nx; i++) ax[i] = hypot(crealf(X[i]), cimagf(X[i]));
    for (size_t i = 0; i < nw; i++) aw[i] = hypot(crealf(W[i]), cimagf(W[i]));
    size_t bad = (size_t)-1;
    if (nan_at) { /* two non-finite weights; the lower index must be reported */
        size_t a = (size_t)(tc_uniform(rng) * nw), b = (size_t)(tc_uniform(rng) * nw);
        W[a] = STAP_CMPLXF(NAN, 0.f);
        W[b] = STAP_CMPLXF(0.f, INFINITY);
        bad = a < b ? a : b;
    }
    void *dX = NULL, *dW = NULL, *dY = NULL, *dst = NULL;
    int ok = cudaMalloc(&dX, sizeof *X * nx) == cudaSuccess && cudaMalloc(&dW, sizeof *W * nw) == cudaSuccess &&
             cudaMalloc(&dY, sizeof *Y * ny) == cudaSuccess &&
             cudaMalloc(&dst, sizeof(rtk_cpi_status)) == cudaSuccess;
    CHECK(ok, "%s: cudaMalloc failed", name);
    /* poison: cells the kernel must not write keep it */
    for (size_t i = 0; i < ny; i++) Y[i] = tc_poison(i);
    ok = ok && cudaMemcpy(dX, X, sizeof *X * nx, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dW, W, sizeof *W * nw, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dY, Y, sizeof *Y * ny, cudaMemcpyHostToDevice) == cudaSuccess;
    rtk_gather g = {dX, NULL, C, Q, D, R, S, L, 0, 0.f, 0};
    rtk_cpi_status st;
    memset(&st, 0, sizeof st);
    ok = ok && rtk_status_reset_launch(dst, NULL) == 0;
    int e = ok ? fn(&g, B, dW, dY, dst, NULL) : -1;
    CHECK(e == 0, "%s: launch failed (%d)", name, e);
    ok = ok && e == 0 && cudaDeviceSynchronize() == cudaSuccess &&
         cudaMemcpy(Y, dY, sizeof *Y * ny, cudaMemcpyDeviceToHost) == cudaSuccess &&
         cudaMemcpy(&st, dst, sizeof st, cudaMemcpyDeviceToHost) == cudaSuccess;
    CHECK(ok, "%s: device run failed: %s", name, cudaGetErrorString(cudaGetLastError()));
    double sig = 0, noise = 0, worst = 0;
    long long over = 0, untouched_bad = 0;
    const int h = (Q - 1) / 2;
    for (int b = 0; ok && b < B; b++)
        for (int d = 0; d < D; d++)
            for (int r = 0; r < R; r++) {
                const size_t yi = ((size_t)b * D + d) * R + r;
                const stap_cf32 y = Y[yi];
                if (r >= S * L) { /* beyond the segments: untouched */
                    const stap_cf32 p = tc_poison(yi);
                    untouched_bad += memcmp(&y, &p, sizeof y) != 0;
                    continue;
                }
                if (nan_at) continue; /* only the flag is checked */
                const int s = r / L;
                const size_t w0 = (((size_t)d * S + s) * B + b) * N;
                const stap_cf32 *w = W + w0;
                double re = 0, im = 0, mag = 0;
                for (int c = 0; c < C; c++)
                    for (int q = 0; q < Q; q++) {
                        int bin = (d - h + q) % D;
                        if (bin < 0) bin += D;
                        const size_t xi_ = ((size_t)bin * C + c) * R + r;
                        const stap_cf32 x = X[xi_], wj = w[c * Q + q];
                        const double wr = crealf(wj), wi = -cimagf(wj), xr = crealf(x), xi = cimagf(x);
                        re += wr * xr - wi * xi;
                        im += wr * xi + wi * xr;
                        mag += aw[w0 + c * Q + q] * ax[xi_];
                    }
                const double er = crealf(y) - re, ei = cimagf(y) - im, err = hypot(er, ei);
                const double bound = 4.0 * N * ldexp(1.0, -24) * mag;
                if (!(err <= bound)) over++;
                if (bound > 0 && err / bound > worst) worst = err / bound;
                sig += re * re + im * im;
                noise += er * er + ei * ei;
            }
    CHECK(untouched_bad == 0, "%s: %lld cells beyond the segments were written", name, untouched_bad);
    if (nan_at) {
        CHECK(st.bad_weight == bad, "%s: bad_weight %llu, expected %zu", name, st.bad_weight, bad);
    } else {
        const double snr = noise > 0 ? 10 * log10(sig / noise) : 400;
        CHECK(over == 0, "%s: %lld outputs beyond the dot product's error bound (worst %.2f x)", name,
              over, worst);
        CHECK(ill || snr >= 110, "%s: SNR %.1f dB < 110", name, snr);
        CHECK(st.bad_weight == RTK_NO_INDEX, "%s: bad_weight %llu without a bad weight", name,
              st.bad_weight);
        printf("  %-6s C=%-3d Q=%d D=%-3d R=%-4d S=%-2d L=%-4d B=%-2d %-8s SNR %6.1f dB, worst %.3f of the bound\n",
               name, C, Q, D, R, S, L, B, ill ? "ill" : "random", snr, worst);
    }
    cudaFree(dX);
    cudaFree(dW);
    cudaFree(dY);
    cudaFree(dst);
    free(X);
    free(W);
    free(ax);
    free(aw);
    free(Y);
}

static int hit_order(const void *a, const void *b)
{
    const rtk_cfar_hit *x = a, *y = b;
    return x->flat < y->flat ? -1 : x->flat > y->flat;
}

/* The apply fused with the detector (rtk_apply_cfar_launch) against rtk_apply_launch
 * followed by the one-pass line detector (rtk_cfar_line_launch, itself equal to the CPU
 * detector bit for bit: test_gpu_cfar): the same hits, flat index, window statistic and power
 * bit for bit, the same count, the same bad-weight report; a threshold of 2 (alpha[n] = 2 for
 * every n) so that about one cell in eight is a hit. */
static void fused_case(tc_rng *rng, shape sh, int kind, int guard, int train, int nan_beam)
{
    const int C = sh.C, Q = sh.Q, D = sh.D, R = sh.R, B = sh.B, N = C * Q;
    const size_t nx = (size_t)D * C * R, nw = (size_t)D * B * N, ny = (size_t)B * D * R;
    const char *kn = kind == RTK_CFAR_CA ? "CA" : kind == RTK_CFAR_GO ? "GO" : "SO";
    stap_cf32 *X = tc_xmalloc(sizeof *X * nx), *W = tc_xmalloc(sizeof *W * nw);
    for (size_t i = 0; i < nx; i++) X[i] = draw(rng, 0);
    for (size_t i = 0; i < nw; i++) W[i] = draw(rng, 0);
    const int nan_at = nan_beam >= 0; /* a NaN weight of beam nan_beam, at a random bin and row */
    if (nan_at) {
        const int d = (int)(tc_uniform(rng) * D), j = (int)(tc_uniform(rng) * N);
        W[((size_t)d * B + nan_beam) * N + j] = STAP_CMPLXF(NAN, 0.f);
    }
    double alpha[257];
    for (int i = 0; i < 257; i++) alpha[i] = 2.0;
    rtk_cfar_hit *h[2] = {tc_xmalloc(sizeof(rtk_cfar_hit) * ny), tc_xmalloc(sizeof(rtk_cfar_hit) * ny)};
    rtk_cpi_status st[2];
    void *dX = NULL, *dW = NULL, *dY = NULL, *dA = NULL, *dH = NULL, *dst = NULL;
    int ok = cudaMalloc(&dX, sizeof *X * nx) == cudaSuccess && cudaMalloc(&dW, sizeof *W * nw) == cudaSuccess &&
             cudaMalloc(&dY, sizeof(stap_cf32) * ny) == cudaSuccess && cudaMalloc(&dA, sizeof alpha) == cudaSuccess &&
             cudaMalloc(&dH, sizeof(rtk_cfar_hit) * ny) == cudaSuccess &&
             cudaMalloc(&dst, sizeof(rtk_cpi_status)) == cudaSuccess;
    ok = ok && cudaMemcpy(dX, X, sizeof *X * nx, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dW, W, sizeof *W * nw, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dA, alpha, sizeof alpha, cudaMemcpyHostToDevice) == cudaSuccess;
    CHECK(ok, "fused %s: device setup failed", kn);
    const rtk_gather g = {dX, NULL, C, Q, D, R, 1, R, 0, 0.f, 0};
    const rtk_cfar_window w = {kind, guard, train, 0, 0, D};
    CHECK(rtk_apply_cfar_fits(&g, kind), "fused %s: C=%d Q=%d R=%d does not fit", kn, C, Q, R);
    for (int k = 0; ok && k < 2; k++) { /* 0: apply, then the line detector; 1: fused */
        int e = rtk_status_reset_launch(dst, NULL);
        if (!e && k == 0) e = rtk_apply_launch(&g, B, dW, dY, dst, NULL);
        if (!e && k == 0) e = rtk_cfar_line_launch(dY, (long long)B * D, R, &w, dA, dH, (unsigned)ny, 32, dst, NULL);
        if (!e && k == 1) e = rtk_apply_cfar_launch(&g, B, dW, &w, dA, dH, (unsigned)ny, dst, NULL);
        ok = e == 0 && cudaDeviceSynchronize() == cudaSuccess &&
             cudaMemcpy(&st[k], dst, sizeof st[k], cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(h[k], dH, sizeof(rtk_cfar_hit) * ny, cudaMemcpyDeviceToHost) == cudaSuccess;
        CHECK(ok, "fused %s: run %d failed (%d): %s", kn, k, e, cudaGetErrorString(cudaGetLastError()));
    }
    if (ok) {
        const unsigned n0 = st[0].detections, n1 = st[1].detections;
        CHECK(n0 == n1, "fused %s: %u hits against %u", kn, n1, n0);
        CHECK(st[0].bad_weight == st[1].bad_weight, "fused %s: bad_weight %llu against %llu", kn, st[1].bad_weight,
              st[0].bad_weight);
        CHECK(!nan_at || st[1].bad_weight != RTK_NO_INDEX, "fused %s: a bad weight not reported", kn);
        if (n0 == n1 && n0 <= ny) {
            qsort(h[0], n0, sizeof(rtk_cfar_hit), hit_order);
            qsort(h[1], n1, sizeof(rtk_cfar_hit), hit_order);
            CHECK(!memcmp(h[0], h[1], sizeof(rtk_cfar_hit) * n0), "fused %s: the hits differ", kn);
        }
        printf("  fused  C=%-3d Q=%d D=%-3d R=%-4d B=%-2d %s guard %d train %-2d%s: %u hits, the same\n", C, Q, D, R, B,
               kn, guard, train, nan_at ? " (a NaN weight of the last beam)" : "", n1);
    }
    cudaFree(dX);
    cudaFree(dW);
    cudaFree(dY);
    cudaFree(dA);
    cudaFree(dH);
    cudaFree(dst);
    free(X);
    free(W);
    free(h[0]);
    free(h[1]);
}
#endif

int main(void)
{
#ifndef RTSTAP_HAVE_CUDA
    fprintf(stderr, "test_gpu_apply: built without CUDA: skipped\n");
    return 77;
#else
    stap_error err;
    if (stap_backend_available(STAP_BACKEND_GPU, &err) != STAP_OK) {
        fprintf(stderr, "test_gpu_apply: no GPU (%s): skipped\n", err.msg);
        return 77;
    }
    const uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    const shape fixed[] = {
        {22, 3, 128, 480, 1, 480, 16}, /* hard */
        {32, 3, 128, 384, 1, 384, 16}, /* medium */
        {16, 1, 128, 480, 3, 160, 16}, /* easy: 3 segments of 160 */
        {8, 3, 16, 4096, 64, 64, 16},  /* PERFECT large's N = 24: 64 segments of 64 */
        {6, 3, 7, 101, 2, 50, 5},      /* a cell beyond the segments, 5 beams (2 warps) */
        {17, 1, 4, 480, 1, 480, 12},   /* N = 17 (a last chunk of one row), 4 cells a lane, 12 beams */
        {7, 5, 3, 256, 2, 128, 29},    /* N = 35 (N % 4 = 3), a last beam group of 13 */
        {171, 3, 2, 16, 1, 16, 3},     /* N = 513: the launchers' fallback to the row kernel */
        {13, 2, 9, 77, 1, 77, 37},     /* 3 groups of beams, the last of 5 */
        {40, 3, 8, 64, 1, 64, 16},     /* N = 120: eight chunks of 15 */
        {128, 4, 4, 40, 2, 20, 3},     /* N = 512, an even order */
        {1, 1, 1, 1, 1, 1, 1},         /* one of everything */
    };
    const struct {
        const char *name;
        apply_fn fn;
    } kernels[] = {{"apply", rtk_apply_launch}, {"rows", rtk_apply_rows_launch}, {"fp32", rtk_apply_fp32_launch}};
    /* RTSTAP_GPU_QUICK=1 (for compute-sanitizer): without the four preset-sized cubes */
    const char *quick = getenv("RTSTAP_GPU_QUICK");
    const size_t first = quick && quick[0] == '1' ? 4 : 0;
    for (int k = 0; k < (int)(sizeof kernels / sizeof kernels[0]); k++) {
        printf("%s kernel:\n", kernels[k].name);
        for (size_t i = first; i < sizeof fixed / sizeof fixed[0]; i++)
            for (int ill = 0; ill < 2; ill++) one_case(&rng, kernels[k].name, kernels[k].fn, fixed[i], ill, 0);
        for (int rep = 0; rep < 12; rep++) { /* random shapes */
            shape s;
            s.C = 1 + (int)(tc_uniform(&rng) * 40);
            s.Q = 1 + (int)(tc_uniform(&rng) * 3);
            s.D = 1 + (int)(tc_uniform(&rng) * 20);
            s.S = 1 + (int)(tc_uniform(&rng) * 4);
            s.L = 1 + (int)(tc_uniform(&rng) * 300);
            s.R = s.S * s.L + (int)(tc_uniform(&rng) * 3);
            s.B = 1 + (int)(tc_uniform(&rng) * 40);
            one_case(&rng, kernels[k].name, kernels[k].fn, s, rep % 3 == 2, 0);
        }
        one_case(&rng, kernels[k].name, kernels[k].fn, fixed[4], 0, 1);
        one_case(&rng, kernels[k].name, kernels[k].fn, fixed[first ? 6 : 0], 0, 1);
    }
    printf("apply fused with the detector:\n");
    const shape fz[] = {
        {22, 3, 128, 480, 1, 480, 16}, /* hard */
        {32, 3, 128, 384, 1, 384, 16}, /* medium: three tiles a warp */
        {17, 1, 5, 512, 1, 512, 13},   /* N = 17, R = 512 (every cell of the block), 13 beams */
        {7, 5, 3, 33, 1, 33, 29},      /* N = 35, two beam groups, a short line (one tile a warp) */
        {9, 2, 6, 250, 1, 250, 20},    /* N = 18, two tiles a warp, two beam groups */
        {20, 1, 4, 300, 1, 300, 17},   /* N = 20, three tiles a warp, a last group of one beam */
        {128, 4, 2, 100, 1, 100, 3},   /* N = 512 */
    };
    for (size_t i = first ? 2 : 0; i < sizeof fz / sizeof fz[0]; i++)
        for (int kind = RTK_CFAR_CA; kind <= RTK_CFAR_SO; kind++) {
            if (kind == RTK_CFAR_OS) continue;
            fused_case(&rng, fz[i], kind, 2, fz[i].R < 40 ? 4 : 16, -1);
        }
    /* a NaN weight in the last beam group, at one to four tiles a warp */
    for (size_t i = first ? 2 : 0; i < sizeof fz / sizeof fz[0]; i++)
        fused_case(&rng, fz[i], RTK_CFAR_CA, 1, 3, fz[i].B - 1);
    { /* what it does not take: two segments, R > 512, N <= 16, OS */
        const rtk_gather s2 = {NULL, NULL, 22, 3, 4, 480, 2, 240, 0, 0.f, 0},
                         r5 = {NULL, NULL, 22, 3, 4, 513, 1, 513, 0, 0.f, 0},
                         n16 = {NULL, NULL, 16, 1, 4, 480, 1, 480, 0, 0.f, 0},
                         ok1 = {NULL, NULL, 22, 3, 4, 480, 1, 480, 0, 0.f, 0};
        CHECK(!rtk_apply_cfar_fits(&s2, RTK_CFAR_CA) && !rtk_apply_cfar_fits(&r5, RTK_CFAR_CA) &&
                  !rtk_apply_cfar_fits(&n16, RTK_CFAR_CA) && !rtk_apply_cfar_fits(&ok1, RTK_CFAR_OS) &&
                  rtk_apply_cfar_fits(&ok1, RTK_CFAR_SO),
              "rtk_apply_cfar_fits: wrong about a shape");
        const rtk_cfar_window w = {RTK_CFAR_CA, 2, 16, 0, 0, 4};
        CHECK(rtk_apply_cfar_launch(&s2, 16, NULL, &w, NULL, NULL, 0, NULL, NULL) != 0,
              "rtk_apply_cfar_launch took two segments");
    }
    if (tc_failures) {
        fprintf(stderr, "test_gpu_apply: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_gpu_apply: all passed\n");
    return 0;
#endif
}
