/* rtk_cfar_line.cuh: the CFAR arithmetic of stap/detect/cfar.c, operation for operation (powers and
 * sums in double, explicit _rn intrinsics so that nothing is contracted), and one line's
 * CA/GO/SO detection from its powers in shared memory: used by the CFAR kernels (cfar.cu)
 * and by the apply kernel fused with the detector (pipeline_apply.cu), so that every GPU path
 * gives the CPU detector's list bit for bit (tests/unit/test_gpu_cfar.c, test_gpu_apply.c).
 * Listed in rtk_device.cuh, included where used. */
#ifndef RTK_CFAR_LINE_CUH
#define RTK_CFAR_LINE_CUH

#include <cuda_runtime.h>

#include "rtk_pipeline.h"

namespace rtk {
namespace cfar {

/* cells of a prefix block: block sums left to right, offsets chained left to right */
constexpr int SCAN_BLOCK = 32;

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

/* A detection when p > alpha * z: the hit goes to the next slot of the list (those past
 * its capacity are only counted). */
__device__ __forceinline__ void test_cell(double p, double z, double alpha, unsigned long long flat,
                                          rtk_cfar_hit *hits, unsigned int cap, rtk_cpi_status *st)
{
    if (p > __dmul_rn(alpha, z)) {
        const unsigned int slot = atomicAdd(&st->detections, 1u);
        if (slot < cap) hits[slot] = rtk_cfar_hit{flat, z, p};
    }
}

/* a line's arrays in shared memory, padded one double in 32 so that thread b's walk over
 * block b meets no bank conflict: R powers, R + 1 prefix sums, the block sums */
__host__ __device__ __forceinline__ int padded(int r) { return r + (r >> 5); }
__host__ __device__ __forceinline__ int line_doubles(int R)
{
    return padded(R) + 1 + padded(R + 1) + 1 + (R + SCAN_BLOCK - 1) / SCAN_BLOCK;
}

/* the TPL threads of line group g of a BT-thread block meet: a warp, a named barrier
 * (1 + g), or the block */
template <int TPL, int BT> __device__ __forceinline__ void line_sync(int g)
{
    if constexpr (TPL == 32) {
        __syncwarp();
    } else if constexpr (TPL == BT) {
        __syncthreads();
    } else {
        asm volatile("bar.sync %0, %1;" ::"r"(1 + g), "r"(TPL) : "memory");
    }
}

/* One line (flat index line) whose powers are at pw[padded(r)], by its TPL threads (tid):
 * the prefix sums built in shared memory in the order of stap/detect/cfar.c (block sums left to
 * right, the line's first thread chaining the offsets), then every cell tested. The caller
 * has synchronized the group after writing the powers. */
template <int KIND, int TPL, int BT>
__device__ __forceinline__ void line_scan_test(double *pw, int tid, int g, long long line, int R,
                                               const rtk_cfar_window &w, const double *alpha,
                                               rtk_cfar_hit *hits, unsigned int cap, rtk_cpi_status *st)
{
    const int nblk = (R + SCAN_BLOCK - 1) / SCAN_BLOCK, np = padded(R) + 1, nq = padded(R + 1) + 1;
    double *pre = pw + np; /* prefix  */
    double *bs = pre + nq; /* blocks  */
    for (int b = tid; b < nblk; b += TPL) {
        double acc = 0.0;
        const int end = min(R, (b + 1) * SCAN_BLOCK);
        for (int r = b * SCAN_BLOCK; r < end; r++) acc = __dadd_rn(acc, pw[padded(r)]);
        bs[b] = acc;
    }
    line_sync<TPL, BT>(g);
    if (tid == 0) {
        double off = 0.0;
        for (int b = 0; b < nblk; b++) {
            const double t = bs[b];
            bs[b] = off;
            off = __dadd_rn(off, t);
        }
        pre[padded(0)] = 0.0;
    }
    line_sync<TPL, BT>(g);
    for (int b = tid; b < nblk; b += TPL) {
        double acc = 0.0;
        const double off = bs[b];
        const int end = min(R, (b + 1) * SCAN_BLOCK);
        for (int r = b * SCAN_BLOCK; r < end; r++) {
            acc = __dadd_rn(acc, pw[padded(r)]);
            pre[padded(r + 1)] = __dadd_rn(off, acc);
        }
    }
    line_sync<TPL, BT>(g);
    for (int r = tid; r < R; r += TPL) {
        int lo0, hi0, lo1, hi1;
        window_of(r, R, w.guard, w.train, &lo0, &hi0, &lo1, &hi1);
        const int n = (hi0 - lo0) + (hi1 - lo1);
        double z;
        if ((KIND == RTK_CFAR_GO || KIND == RTK_CFAR_SO) && n == 2 * w.train) {
            const double sl = __dsub_rn(pre[padded(hi0)], pre[padded(lo0)]);
            const double sr = __dsub_rn(pre[padded(hi1)], pre[padded(lo1)]);
            const double side = KIND == RTK_CFAR_GO ? (sl > sr ? sl : sr) : (sl < sr ? sl : sr);
            z = __ddiv_rn(side, (double)w.train);
        } else { /* CA, and GO/SO at the edges: window_sum's order */
            const double s = __dadd_rn(__dsub_rn(pre[padded(hi0)], pre[padded(lo0)]),
                                       __dsub_rn(pre[padded(hi1)], pre[padded(lo1)]));
            z = __ddiv_rn(s, (double)n);
        }
        test_cell(pw[padded(r)], z, __ldg(alpha + n), (unsigned long long)(line * R + r), hits, cap, st);
    }
}

} // namespace cfar
} // namespace rtk

#endif
