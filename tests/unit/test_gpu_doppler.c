/* test_gpu_doppler: the one-pass Doppler filter on the GPU (kernels/pipeline_doppler.cu
 * doppler_fft_kernel, and doppler_fft128_kernel for D = 128 in 16- and 32-cell blocks:
 * window, sample conversion, zero padding, the D-point FFT along pulses and the D x C x R
 * layout in one kernel) against a double-precision DFT of the
 * contract (rtk_pipeline.h, docs/processing.md steps 1 and 2) on fresh random cubes:
 * the presets' shape, zero padding (P < D), every transform length the kernel takes
 * (2 .. 4096, so every tile width and the opted-in shared memory), odd channel and range
 * counts, complex64 and int8/int16/int32 pairs in either byte order, scaled or not, stored
 * in other axis orders (read transposed), and ill-scaled samples (magnitudes over twelve
 * decades). Criteria: each transform's error, in 2-norm, at most 30 x log2(D) u its norm
 * (u = 2^-24; an FFT's normwise bound, LAPACK's threshold 30 on the ratio), every output
 * written, and a non-finite sample reported at its lowest flat index (c*P + p)*R + r.
 * Exits 77 (skipped) without CUDA or without a usable GPU; RTSTAP_SEED=N replays a run;
 * RTSTAP_GPU_QUICK=1 (for compute-sanitizer) leaves out the hard preset's cubes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_check.h"
#include "testutil.h"
#ifdef RTSTAP_HAVE_CUDA
#include <cuda_runtime.h>

#include "rtk_pipeline.h"

typedef struct dcase {
    int C, P, R, D;
    int type;       /* rtk_samples.type: 0 complex64, 1 int8, 2 int16, 3 int32 pairs */
    int big_endian, scaled, order; /* order: 0 (c, p, r), 1 (r, c, p), 2 (p, r, c) */
    int ill, nan;
} dcase;

static const int type_bytes[4] = {8, 2, 4, 8};
static int g_tile; /* rtk_doppler_fft_launch's tile: 0 (default) or 32 (D = 128's 32-cell blocks) */

static void put_int(unsigned char *at, int bytes, long long v, int big)
{
    for (int b = 0; b < bytes; b++) {
        const unsigned char byte = (unsigned char)((unsigned long long)v >> (8 * b));
        at[big ? bytes - 1 - b : b] = byte;
    }
}

static int one_case(tc_rng *rng, const dcase *k)
{
    const int C = k->C, P = k->P, R = k->R, D = k->D;
    const size_t ns = (size_t)C * P * R, nx = (size_t)D * C * R;
    const int eb = type_bytes[k->type];
    unsigned char *raw = tc_xmalloc(eb * ns);
    stap_cf32 *val = tc_xmalloc(sizeof *val * ns); /* the converted samples, (c, p, r) */
    float *win = tc_xmalloc(sizeof *win * P);
    stap_cf32 *X = tc_xmalloc(sizeof *X * nx);
    const double scale = k->scaled ? 1.0 / 256 : 1.0;
    long long stride[3]; /* samples between neighbours along c, p, r */
    if (k->order == 0) stride[0] = (long long)P * R, stride[1] = R, stride[2] = 1;
    else if (k->order == 1) stride[0] = P, stride[1] = 1, stride[2] = (long long)C * P;
    else stride[0] = 1, stride[1] = (long long)R * C, stride[2] = C;
    const long long lim[4] = {0, 127, 32767, 2147483647LL};
    for (int p = 0; p < P; p++) win[p] = (float)(0.1 + tc_uniform(rng));
    size_t bad = (size_t)-1;
    for (int c = 0; c < C; c++)
        for (int p = 0; p < P; p++)
            for (int r = 0; r < R; r++) {
                const size_t i = ((size_t)c * P + p) * R + r;
                unsigned char *at = raw + eb * (size_t)(c * stride[0] + p * stride[1] + r * stride[2]);
                if (k->type == 0) {
                    stap_cf32 v = tc_cnormal(rng);
                    if (k->ill) v *= (float)pow(10.0, 12 * tc_uniform(rng) - 6);
                    memcpy(at, &v, sizeof v);
                    val[i] = v;
                } else {
                    const long long m = lim[k->type];
                    const long long re = (long long)((2 * tc_uniform(rng) - 1) * m);
                    const long long im = (long long)((2 * tc_uniform(rng) - 1) * m);
                    put_int(at, eb / 2, re, k->big_endian);
                    put_int(at + eb / 2, eb / 2, im, k->big_endian);
                    val[i] = k->scaled ? STAP_CMPLXF((float)((double)re * scale), (float)((double)im * scale))
                                       : STAP_CMPLXF((float)re, (float)im);
                }
            }
    if (k->nan && k->type == 0) { /* two non-finite samples; the lower index is reported */
        for (int t = 0; t < 2; t++) {
            const int c = (int)(tc_uniform(rng) * C), p = (int)(tc_uniform(rng) * P), r = (int)(tc_uniform(rng) * R);
            const size_t i = ((size_t)c * P + p) * R + r;
            const stap_cf32 v = t ? STAP_CMPLXF(INFINITY, 0.f) : STAP_CMPLXF(0.f, NAN);
            memcpy(raw + 8 * (size_t)(c * stride[0] + p * stride[1] + r * stride[2]), &v, sizeof v);
            if (i < bad) bad = i;
        }
    }
    const rtk_samples fmt = {k->type, k->big_endian, k->scaled, scale, {stride[0], stride[1], stride[2]}, P, R};
    void *dr = NULL, *dw = NULL, *dX = NULL, *dst = NULL;
    int ok = cudaMalloc(&dr, eb * ns) == cudaSuccess && cudaMalloc(&dw, sizeof *win * P) == cudaSuccess &&
             cudaMalloc(&dX, sizeof *X * nx) == cudaSuccess &&
             cudaMalloc(&dst, sizeof(rtk_cpi_status)) == cudaSuccess;
    for (size_t i = 0; i < nx; i++) X[i] = tc_poison(i);
    ok = ok && cudaMemcpy(dr, raw, eb * ns, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dw, win, sizeof *win * P, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(dX, X, sizeof *X * nx, cudaMemcpyHostToDevice) == cudaSuccess &&
         rtk_status_reset_launch(dst, NULL) == 0;
    const int e = ok ? rtk_doppler_fft_launch(dr, &fmt, dw, C, P, R, D, g_tile, dX, dst, NULL) : -1;
    rtk_cpi_status st;
    memset(&st, 0, sizeof st);
    ok = ok && e == 0 && cudaDeviceSynchronize() == cudaSuccess &&
         cudaMemcpy(X, dX, sizeof *X * nx, cudaMemcpyDeviceToHost) == cudaSuccess &&
         cudaMemcpy(&st, dst, sizeof st, cudaMemcpyDeviceToHost) == cudaSuccess;
    CHECK(ok, "C=%d P=%d R=%d D=%d type %d: device run failed (%d, %s)", C, P, R, D, k->type, e,
          cudaGetErrorString(cudaGetLastError()));
    double worst = 0;
    long long over = 0;
    int logD = 0;
    while ((1 << logD) < D) logD++;
    double *tr = tc_xmalloc(sizeof(double) * D), *ti = tc_xmalloc(sizeof(double) * D);
    for (int d = 0; d < D; d++) { /* exp(-2 pi i d / D) */
        tr[d] = cos(2 * M_PI * d / D);
        ti[d] = -sin(2 * M_PI * d / D);
    }
    for (int c = 0; ok && !k->nan && c < C; c++)
        for (int r = 0; r < R; r++) {
            double en = 0, yn = 0;
            for (int d = 0; d < D; d++) {
                double re = 0, im = 0;
                for (int p = 0; p < P; p++) {
                    const stap_cf32 v = val[((size_t)c * P + p) * R + r];
                    const double xr = (double)win[p] * crealf(v), xi = (double)win[p] * cimagf(v);
                    const int m = (int)(((long long)d * p) % D);
                    re += xr * tr[m] - xi * ti[m];
                    im += xr * ti[m] + xi * tr[m];
                }
                const stap_cf32 y = X[((size_t)d * C + c) * R + r];
                const double er = crealf(y) - re, ei = cimagf(y) - im;
                en += er * er + ei * ei;
                yn += re * re + im * im;
            }
            const double ratio = yn > 0 ? sqrt(en / yn) / ((logD ? logD : 1) * ldexp(1.0, -24))
                                        : (en > 0 || isnan(en) ? INFINITY : 0);
            if (!(ratio <= 30)) over++;
            if (ratio > worst) worst = ratio;
        }
    if (k->nan) {
        CHECK(st.bad_input == bad, "D=%d: bad_input %llu, expected %zu", D, st.bad_input, bad);
    } else {
        CHECK(over == 0, "C=%d P=%d R=%d D=%d type %d order %d%s: %lld transforms over the bound (worst ratio %.1f)",
              C, P, R, D, k->type, k->order, k->ill ? " ill" : "", over, worst);
        CHECK(st.bad_input == RTK_NO_INDEX, "D=%d: bad_input %llu without a bad sample", D, st.bad_input);
        printf("  C=%-3d P=%-4d R=%-4d D=%-4d type %d%s%s order %d%s: worst ratio %.2f\n", C, P, R, D,
               k->type, k->big_endian ? " big-endian" : "", k->scaled ? " scaled" : "", k->order,
               k->ill ? " ill" : "", worst);
    }
    cudaFree(dr);
    cudaFree(dw);
    cudaFree(dX);
    cudaFree(dst);
    free(raw);
    free(val);
    free(win);
    free(X);
    free(tr);
    free(ti);
    return ok;
}
#endif

int main(void)
{
#ifndef RTSTAP_HAVE_CUDA
    fprintf(stderr, "test_gpu_doppler: built without CUDA: skipped\n");
    return 77;
#else
    stap_error err;
    if (stap_backend_available(STAP_BACKEND_GPU, &err) != STAP_OK) {
        fprintf(stderr, "test_gpu_doppler: no GPU (%s): skipped\n", err.msg);
        return 77;
    }
    const uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    const dcase cases[] = {
        {22, 128, 480, 128, 0, 0, 0, 0, 0, 0}, /* hard */
        {22, 128, 480, 128, 2, 0, 1, 1, 0, 0}, /* hard as int16, scaled, (r, c, p) order */
        {3, 100, 37, 128, 0, 0, 0, 0, 1, 0},   /* zero padding, ill-scaled */
        {5, 2, 33, 2, 0, 0, 0, 0, 0, 0},       /* the shortest transform */
        {2, 1, 7, 4, 1, 0, 0, 2, 0, 0},        /* one pulse, int8, (p, r, c) order */
        {4, 200, 45, 256, 2, 1, 0, 0, 0, 0},   /* int16 big-endian; 65 KB of shared memory */
        {3, 512, 17, 512, 3, 0, 1, 1, 0, 0},   /* int32 scaled; 16-cell tiles */
        {2, 700, 9, 1024, 3, 1, 0, 2, 1, 0},   /* 8-cell tiles */
        {1, 3000, 5, 4096, 0, 0, 0, 0, 0, 0},  /* the longest, 2-cell tiles */
        {1, 2000, 7, 2048, 2, 0, 0, 0, 0, 0},  /* 4-cell tiles */
        {2, 5, 9, 8, 0, 0, 0, 0, 0, 0},        /* D = 8, 16, 32: the short transforms */
        {3, 16, 40, 16, 1, 1, 1, 0, 0, 0},
        {2, 30, 33, 32, 0, 0, 0, 2, 1, 0},
        {7, 64, 129, 64, 0, 0, 0, 1, 0, 0},    /* (r, c, p) order complex64 */
        {6, 96, 61, 128, 0, 0, 0, 0, 0, 1},    /* non-finite samples */
        {3, 5, 50, 128, 1, 1, 1, 2, 0, 0},     /* D = 128 with 5 pulses (empty pulse groups), int8 big-endian scaled */
        {2, 128, 19, 128, 3, 0, 0, 1, 1, 0},   /* D = 128, int32 in (r, c, p) order, ill-scaled */
    };
    /* RTSTAP_GPU_QUICK=1 (for compute-sanitizer): without the two hard-preset cubes */
    const char *q = getenv("RTSTAP_GPU_QUICK");
    const size_t first = q && q[0] == '1' ? 2 : 0;
    for (size_t i = first; i < sizeof cases / sizeof cases[0]; i++) one_case(&rng, &cases[i]);
    g_tile = 32; /* the D = 128 cases again with 32-cell blocks */
    printf("D = 128 with 32-cell blocks:\n");
    for (size_t i = first; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].D == 128) one_case(&rng, &cases[i]);
    g_tile = 0;
    CHECK(rtk_doppler_fft_launch(NULL, NULL, NULL, 1, 128, 16, 128, 8, NULL, NULL, NULL) != 0 &&
              rtk_doppler_fft_launch(NULL, NULL, NULL, 1, 128, 16, 128, 64, NULL, NULL, NULL) != 0,
          "rtk_doppler_fft_launch accepts a tile other than 0, 16 or 32");
    CHECK(!rtk_doppler_fft_fits(22, 128, 96) && !rtk_doppler_fft_fits(22, 129, 128) &&
              !rtk_doppler_fft_fits(1, 1, 8192) && !rtk_doppler_fft_fits(65536, 128, 128) &&
              rtk_doppler_fft_fits(22, 128, 128),
          "rtk_doppler_fft_fits");
    if (tc_failures) {
        fprintf(stderr, "test_gpu_doppler: %d failure(s) (seed %llu)\n", tc_failures, (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_gpu_doppler: all passed\n");
    return 0;
#endif
}
