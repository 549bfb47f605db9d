/* cfar.cu: CA/OS/GO/SO CFAR along range and CA-CFAR over range x Doppler on the GPU
 * (rtk_pipeline.h): one warp per line builds the prefix sums of |y|^2 (every kind but OS),
 * one thread per cell under test decides, hits are compacted with an atomic counter. The
 * arithmetic is stap/cfar.c's, operation for operation (powers and sums in double,
 * explicit _rn intrinsics so that nothing is contracted), so that the two detectors give
 * identical lists on the same output; tests/test_gpu_cfar.c checks that bit for bit. */
#include "rtk_device.cuh"
#include "rtk_pipeline.h"

namespace {

/* |y|^2 in double: the float products are exact in double, one rounding for the sum */
__device__ __forceinline__ double power_of(float2 v)
{
    return __dadd_rn(__dmul_rn((double)v.x, (double)v.x), __dmul_rn((double)v.y, (double)v.y));
}

__device__ __forceinline__ void window_of(int r, int R, int guard, int train, int *lo0, int *hi0,
                                          int *lo1, int *hi1)
{
    int a = r - guard - train, b = r - guard;
    *lo0 = a < 0 ? 0 : a;
    *hi0 = b < 0 ? 0 : b;
    int c0 = r + guard + 1, d = r + guard + 1 + train;
    *lo1 = c0 > R ? R : c0;
    *hi1 = d > R ? R : d;
}

/* One warp per line. The prefix sums are defined block-wise (rtk_pipeline.h): lane l sums
 * its blocks of 32 cells left to right, lane 0 chains the block offsets, and every lane
 * writes offset + running sum for its blocks — the order stap/cfar.c follows too. */
constexpr int SCAN_BLOCK = 32, PREFIX_WARPS = 4;

__global__ void __launch_bounds__(32 * PREFIX_WARPS)
prefix_kernel(const float2 *__restrict__ y, long long lines, int R, double *__restrict__ prefix)
{
    extern __shared__ double bsum[]; /* per warp: nblk block sums, then offsets */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long line = (long long)blockIdx.x * PREFIX_WARPS + warp;
    const int nblk = (R + SCAN_BLOCK - 1) / SCAN_BLOCK;
    double *bs = bsum + (size_t)warp * nblk;
    const float2 *yl = y + line * R;
    double *pl = prefix + line * (R + 1);
    if (line < lines)
        for (int b = lane; b < nblk; b += 32) {
            double acc = 0.0;
            const int end = min(R, (b + 1) * SCAN_BLOCK);
            for (int r = b * SCAN_BLOCK; r < end; r++) acc = __dadd_rn(acc, power_of(yl[r]));
            bs[b] = acc;
        }
    __syncwarp();
    if (line < lines && lane == 0) { /* block sums -> block offsets, in place */
        double off = 0.0;
        for (int b = 0; b < nblk; b++) {
            const double t = bs[b];
            bs[b] = off;
            off = __dadd_rn(off, t);
        }
        pl[0] = 0.0;
    }
    __syncwarp();
    if (line < lines)
        for (int b = lane; b < nblk; b += 32) {
            double acc = 0.0;
            const double off = bs[b];
            const int end = min(R, (b + 1) * SCAN_BLOCK);
            for (int r = b * SCAN_BLOCK; r < end; r++) {
                acc = __dadd_rn(acc, power_of(yl[r]));
                pl[r + 1] = __dadd_rn(off, acc);
            }
        }
}

/* The CA window sum from one line's prefix sums (the order of stap/cfar.c). */
__device__ __forceinline__ double window_sum(const double *pl, int lo0, int hi0, int lo1, int hi1)
{
    return __dadd_rn(__dsub_rn(pl[hi0], pl[lo0]), __dsub_rn(pl[hi1], pl[lo1]));
}

template <int KIND>
__global__ void test_kernel(const float2 *__restrict__ y, const double *__restrict__ prefix,
                            long long lines, int R, rtk_cfar_window w, const double *alpha,
                            const int *rank, rtk_cfar_hit *hits, unsigned int cap,
                            rtk_cpi_status *st)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lines * R) return;
    const long long line = i / R;
    const int r = (int)(i - line * R);
    const float2 *yl = y + line * R;
    int lo0, hi0, lo1, hi1;
    window_of(r, R, w.guard, w.train, &lo0, &hi0, &lo1, &hi1);
    const int n1 = (hi0 - lo0) + (hi1 - lo1);
    int n = n1;
    double z;
    if (KIND == RTK_CFAR_OS) {
        double v[2 * 128]; /* STAP_CFAR_MAX_TRAIN = 128 each side */
        int m = 0;
        for (int j = lo0; j < hi0; j++) v[m++] = power_of(yl[j]);
        for (int j = lo1; j < hi1; j++) v[m++] = power_of(yl[j]);
        const int k = rank[n]; /* k-th smallest by partial selection sort */
        for (int a = 0; a < k; a++) {
            int best = a;
            for (int b = a + 1; b < m; b++)
                if (v[b] < v[best]) best = b;
            const double t = v[a];
            v[a] = v[best];
            v[best] = t;
        }
        z = v[k - 1];
    } else if (KIND == RTK_CFAR_CA2D) {
        const int D = w.bins, wd = w.guard_doppler + w.train_doppler;
        const long long d = line % D;
        const double *pb = prefix + (line - d) * (R + 1); /* bin 0 of the beam */
        n = 2 * w.train_doppler * (hi1 - lo0) + (2 * w.guard_doppler + 1) * n1;
        double s = 0.0;
        for (int o = -wd; o <= wd; o++) {
            const double *q = pb + (long long)((d + o + D) % D) * (R + 1);
            const double t = (o < -w.guard_doppler || o > w.guard_doppler)
                                 ? __dsub_rn(q[hi1], q[lo0])
                                 : window_sum(q, lo0, hi0, lo1, hi1);
            s = __dadd_rn(s, t);
        }
        z = __ddiv_rn(s, (double)n);
    } else {
        const double *pl = prefix + line * (R + 1);
        if ((KIND == RTK_CFAR_GO || KIND == RTK_CFAR_SO) && n == 2 * w.train) {
            const double sl = __dsub_rn(pl[hi0], pl[lo0]), sr = __dsub_rn(pl[hi1], pl[lo1]);
            const double side = KIND == RTK_CFAR_GO ? (sl > sr ? sl : sr) : (sl < sr ? sl : sr);
            z = __ddiv_rn(side, (double)w.train);
        } else { /* CA, and GO/SO at the edges */
            z = __ddiv_rn(window_sum(pl, lo0, hi0, lo1, hi1), (double)n);
        }
    }
    const double p = power_of(yl[r]);
    if (p > __dmul_rn(alpha[n], z)) {
        const unsigned int slot = atomicAdd(&st->detections, 1u);
        if (slot < cap) hits[slot] = rtk_cfar_hit{(unsigned long long)i, z, p};
    }
}

template <int KIND>
void launch_test(const void *y, const double *prefix, long long lines, int R,
                 const rtk_cfar_window &w, const double *alpha, const int *rank,
                 rtk_cfar_hit *hits, unsigned int capacity, rtk_cpi_status *status, void *stream)
{
    const int threads = 256;
    const unsigned blocks = (unsigned)((lines * R + threads - 1) / threads);
    test_kernel<KIND><<<blocks, threads, 0, (cudaStream_t)stream>>>(
        (const float2 *)y, prefix, lines, R, w, alpha, rank, hits, capacity, status);
}

} // namespace

extern "C" int rtk_cfar_prefix_launch(const void *y, long long lines, int R, double *prefix,
                                      void *stream)
{
    if (lines < 1 || R < 1) return (int)cudaErrorInvalidValue;
    const int nblk = (R + SCAN_BLOCK - 1) / SCAN_BLOCK;
    const size_t smem = sizeof(double) * nblk * PREFIX_WARPS;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(prefix_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    prefix_kernel<<<(unsigned)((lines + PREFIX_WARPS - 1) / PREFIX_WARPS), 32 * PREFIX_WARPS, smem,
                    (cudaStream_t)stream>>>((const float2 *)y, lines, R, prefix);
    return (int)cudaGetLastError();
}

extern "C" int rtk_cfar_test_launch(const void *y, const double *prefix, long long lines, int R,
                                    const rtk_cfar_window *w, const double *alpha,
                                    const int *rank, rtk_cfar_hit *hits, unsigned int capacity,
                                    rtk_cpi_status *status, void *stream)
{
    if (lines < 1 || R < 1 || !w || w->train < 1 || w->train > 128 || w->guard < 0 ||
        (w->kind != RTK_CFAR_OS && !prefix))
        return (int)cudaErrorInvalidValue;
    if (w->kind == RTK_CFAR_CA2D &&
        (w->bins < 1 || lines % w->bins || w->guard_doppler < 0 || w->train_doppler < 0 ||
         2 * (w->guard_doppler + w->train_doppler) + 1 > w->bins))
        return (int)cudaErrorInvalidValue;
    void (*launch)(const void *, const double *, long long, int, const rtk_cfar_window &,
                   const double *, const int *, rtk_cfar_hit *, unsigned int, rtk_cpi_status *,
                   void *);
    switch (w->kind) {
    case RTK_CFAR_CA: launch = launch_test<RTK_CFAR_CA>; break;
    case RTK_CFAR_OS: launch = launch_test<RTK_CFAR_OS>; break;
    case RTK_CFAR_GO: launch = launch_test<RTK_CFAR_GO>; break;
    case RTK_CFAR_SO: launch = launch_test<RTK_CFAR_SO>; break;
    case RTK_CFAR_CA2D: launch = launch_test<RTK_CFAR_CA2D>; break;
    default: return (int)cudaErrorInvalidValue;
    }
    launch(y, prefix, lines, R, *w, alpha, rank, hits, capacity, status, stream);
    return (int)cudaGetLastError();
}
