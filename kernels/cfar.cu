/* cfar.cu: CA/OS/GO/SO CFAR along range and CA-CFAR over range x Doppler on the GPU
 * (rtk_pipeline.h): one warp per line builds the prefix sums of |y|^2 (every kind but OS),
 * one thread per cell under test decides (OS: one thread per run of cells, with sorted
 * window halves), hits are compacted with an atomic counter. The
 * arithmetic is stap/detect/cfar.c's, operation for operation (powers and sums in double,
 * explicit _rn intrinsics so that nothing is contracted), so that the two detectors give
 * identical lists on the same output; tests/unit/test_gpu_cfar.c checks that bit for bit. */
#include "rtk_cfar_line.cuh"
#include "rtk_device.cuh"
#include "rtk_pipeline.h"

namespace {

using namespace rtk::cfar;

/* One warp per line. The prefix sums are defined block-wise (rtk_pipeline.h): lane l sums
 * its blocks of 32 cells left to right, lane 0 chains the block offsets, and every lane
 * writes offset + running sum for its blocks — the order stap/detect/cfar.c follows too. */
constexpr int PREFIX_WARPS = 4;

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

/* The CA window sum from one line's prefix sums (the order of stap/detect/cfar.c). */
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
    if (KIND == RTK_CFAR_CA2D) {
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
    test_cell(power_of(yl[r]), z, alpha[n], (unsigned long long)i, hits, cap, st);
}

/* ---- CA/GO/SO in one pass: each power read once ---------------------------------------
 * TPL threads per line (issue 34), LINE_THREADS / TPL lines a block: the line's powers into
 * shared memory (read from y once, coalesced), its prefix sums built there in the order of
 * prefix_kernel (block sums left to right, the line's first thread chaining the offsets),
 * then every cell tested from shared memory — the same doubles as prefix_kernel +
 * test_kernel, with no prefix array in global memory and no second read of y. TPL = 32 (a
 * warp a line) spends most of its time on its 15 serial rounds of loads and tests at
 * R = 480; TPL = 128 (a block a line) cuts each to 4 (kernels/journal.md). Shared memory per
 * line: R powers and R + 1 prefix sums, padded one double in 32 so that thread b's walk
 * over block b meets no bank conflict. */
constexpr int LINE_THREADS = 128;

template <int KIND, int TPL>
__global__ void __launch_bounds__(LINE_THREADS)
line_kernel(const float2 *__restrict__ y, long long lines, int R, rtk_cfar_window w,
            const double *__restrict__ alpha, rtk_cfar_hit *hits, unsigned int cap,
            rtk_cpi_status *st)
{
    static_assert(TPL % 32 == 0 && LINE_THREADS % TPL == 0, "whole warps a line");
    constexpr int LPB = LINE_THREADS / TPL;
    extern __shared__ double sh[];
    const int g = threadIdx.x / TPL, tid = threadIdx.x % TPL;
    const long long line = (long long)blockIdx.x * LPB + g;
    if (line >= lines) return; /* (whole groups: their barriers are their own) */
    double *pw = sh + (size_t)g * line_doubles(R); /* powers, prefix sums, block sums */
    const float2 *yl = y + line * R;
#pragma unroll 4
    for (int r = tid; r < R; r += TPL) pw[padded(r)] = power_of(yl[r]);
    line_sync<TPL, LINE_THREADS>(g);
    line_scan_test<KIND, TPL, LINE_THREADS>(pw, tid, g, line, R, w, alpha, hits, cap, st);
}

/* shared memory of one line of line_kernel */
size_t line_smem(int R) { return sizeof(double) * (size_t)line_doubles(R); }

/* ---- OS-CFAR: the rank[n]-th smallest power of each window ---------------------------
 * Each thread takes a run of consecutive cells of one line and keeps the two halves of
 * the window as sorted rows in shared memory: moving to the next cell replaces (or, at
 * the line's ends, only adds or drops) one value per row, a shift between the old and the
 * new value's places; the order statistic of the two sorted rows is a binary search
 * (O(log train)). Per cell: O(train) shared-memory moves instead of a selection over the
 * whole window. Values are compared as the bit patterns of the non-negative double
 * powers, which order as the numbers do (and keep a NaN power from breaking the rows);
 * the k-th smallest value of a set does not depend on how it is found, so the hits are
 * those of stap/detect/cfar.c bit for bit. Rows are interleaved by thread (element e of thread t
 * at e * threads + t): a warp's accesses at one element index are conflict-free. */
using os_key = unsigned long long;
constexpr int OS_SMEM = 64 * 1024; /* shared memory for the rows of one block */

__device__ __forceinline__ os_key power_key(float2 v) { return (os_key)__double_as_longlong(power_of(v)); }

struct sorted_row {
    os_key *v; /* element e at v[e * stride] */
    int stride, len;
    __device__ os_key at(int e) const { return v[(size_t)e * stride]; }
    __device__ void put(int e, os_key x) { v[(size_t)e * stride] = x; }
    /* the first place whose value is not below x */
    __device__ int lower_bound(os_key x) const
    {
        int lo = 0, hi = len;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (at(mid) < x) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }
    __device__ void insert(os_key x)
    {
        int e = len++;
        for (; e > 0 && at(e - 1) > x; e--) put(e, at(e - 1));
        put(e, x);
    }
    __device__ void remove(os_key x) /* x is in the row */
    {
        for (int e = lower_bound(x); e + 1 < len; e++) put(e, at(e + 1));
        len--;
    }
    __device__ void replace(os_key out, os_key in) /* out is in the row */
    {
        int e = lower_bound(out);
        if (in > out)
            for (; e + 1 < len && at(e + 1) < in; e++) put(e, at(e + 1));
        else
            for (; e > 0 && at(e - 1) > in; e--) put(e, at(e - 1));
        put(e, in);
    }
};

/* The k-th smallest (1-based, 1 <= k <= a.len + b.len) of the union of two sorted rows:
 * the first i (values taken from a) with a[i] >= b[k-i-1]. */
__device__ os_key kth_of_two(const sorted_row &a, const sorted_row &b, int k)
{
    int lo = max(0, k - b.len), hi = min(k, a.len);
    while (lo < hi) {
        const int i = (lo + hi) / 2;
        if (a.at(i) < b.at(k - i - 1)) lo = i + 1;
        else hi = i;
    }
    const os_key x = lo > 0 ? a.at(lo - 1) : 0, y = k - lo > 0 ? b.at(k - lo - 1) : 0;
    return x > y ? x : y;
}

__global__ void os_kernel(const float2 *__restrict__ y, long long lines, int R, int run,
                          rtk_cfar_window w, const double *__restrict__ alpha,
                          const int *__restrict__ rank, rtk_cfar_hit *hits, unsigned int cap,
                          rtk_cpi_status *st)
{
    extern __shared__ os_key rows[]; /* per thread: the left row, then the right row */
    const int T = w.train, G = w.guard, nt = blockDim.x;
    const long long runs_per_line = (R + run - 1) / run;
    const long long t = (long long)blockIdx.x * nt + threadIdx.x;
    if (t >= lines * runs_per_line) return;
    const long long line = t / runs_per_line;
    const int r0 = (int)(t - line * runs_per_line) * run, r1 = min(R, r0 + run);
    const float2 *yl = y + line * R;
    sorted_row left = {rows + threadIdx.x, nt, 0}, right = {rows + (size_t)T * nt + threadIdx.x, nt, 0};
    int lo0, hi0, lo1, hi1;
    window_of(r0, R, G, T, &lo0, &hi0, &lo1, &hi1);
    for (int j = lo0; j < hi0; j++) left.insert(power_key(yl[j]));
    for (int j = lo1; j < hi1; j++) right.insert(power_key(yl[j]));
    for (int r = r0;;) {
        const int k = rank[left.len + right.len];
        const double z = __longlong_as_double((long long)kth_of_two(left, right, k));
        test_cell(power_of(yl[r]), z, alpha[left.len + right.len],
                  (unsigned long long)(line * R + r), hits, cap, st);
        if (++r == r1) break;
        /* cell r's window from cell r-1's: [r-G-T, r-G) and [r+G+1, r+G+T+1), clipped */
        const int out0 = r - 1 - G - T, in0 = r - 1 - G, out1 = r + G, in1 = r + G + T;
        const bool drop0 = out0 >= 0, add0 = in0 >= 0;
        const bool drop1 = out1 < R, add1 = in1 < R;
        if (drop0 && add0) left.replace(power_key(yl[out0]), power_key(yl[in0]));
        else if (add0) left.insert(power_key(yl[in0]));
        if (drop1 && add1) right.replace(power_key(yl[out1]), power_key(yl[in1]));
        else if (drop1) right.remove(power_key(yl[out1]));
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

extern "C" int rtk_cfar_line_fits(int kind, int R)
{
    return (kind == RTK_CFAR_CA || kind == RTK_CFAR_GO || kind == RTK_CFAR_SO) && R >= 1 &&
           line_smem(R) * 4 <= 96 * 1024;
}

template <int TPL>
static int line_launch_as(const void *y, long long lines, int R, const rtk_cfar_window *w,
                          const double *alpha, rtk_cfar_hit *hits, unsigned int capacity,
                          rtk_cpi_status *status, cudaStream_t stream)
{
    constexpr int LPB = LINE_THREADS / TPL;
    if ((lines + LPB - 1) / LPB > 0x7fffffffLL) return (int)cudaErrorInvalidValue;
    void (*k)(const float2 *, long long, int, rtk_cfar_window, const double *, rtk_cfar_hit *,
              unsigned int, rtk_cpi_status *) =
        w->kind == RTK_CFAR_CA ? line_kernel<RTK_CFAR_CA, TPL>
        : w->kind == RTK_CFAR_GO ? line_kernel<RTK_CFAR_GO, TPL> : line_kernel<RTK_CFAR_SO, TPL>;
    const size_t smem = line_smem(R) * LPB;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    k<<<(unsigned)((lines + LPB - 1) / LPB), LINE_THREADS, smem, stream>>>(
        (const float2 *)y, lines, R, *w, alpha, hits, capacity, status);
    return (int)cudaGetLastError();
}

extern "C" int rtk_cfar_line_launch(const void *y, long long lines, int R, const rtk_cfar_window *w,
                                    const double *alpha, rtk_cfar_hit *hits, unsigned int capacity,
                                    int threads_per_line, rtk_cpi_status *status, void *stream)
{
    if (lines < 1 || !w || !rtk_cfar_line_fits(w->kind, R) || w->train < 1 || w->train > 128 ||
        w->guard < 0)
        return (int)cudaErrorInvalidValue;
    const cudaStream_t s = (cudaStream_t)stream;
    switch (threads_per_line) {
    case 32: return line_launch_as<32>(y, lines, R, w, alpha, hits, capacity, status, s);
    case 64: return line_launch_as<64>(y, lines, R, w, alpha, hits, capacity, status, s);
    case 0:
    case 128: return line_launch_as<128>(y, lines, R, w, alpha, hits, capacity, status, s);
    default: return (int)cudaErrorInvalidValue;
    }
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
    if (w->kind == RTK_CFAR_OS) {
        /* threads per block: the two rows of each (16 train bytes) within 64 KiB; a run of
         * max(8, train) cells per thread spreads the rows' first sort (~train^2/2 moves)
         * over the cells that then cost ~train moves each */
        const int T = w->train;
        int nt = (OS_SMEM / (16 * T)) / 32 * 32;
        nt = nt < 32 ? 32 : nt > 256 ? 256 : nt;
        const int run = T < 8 ? 8 : T;
        const size_t smem = (size_t)16 * T * nt;
        const long long threads = lines * ((R + run - 1) / run);
        if (smem > 48 * 1024) {
            cudaError_t e = cudaFuncSetAttribute(os_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)smem);
            if (e != cudaSuccess) return (int)e;
        }
        os_kernel<<<(unsigned)((threads + nt - 1) / nt), nt, smem, (cudaStream_t)stream>>>(
            (const float2 *)y, lines, R, run, *w, alpha, rank, hits, capacity, status);
        return (int)cudaGetLastError();
    }
    switch (w->kind) {
    case RTK_CFAR_CA: launch = launch_test<RTK_CFAR_CA>; break;
    case RTK_CFAR_GO: launch = launch_test<RTK_CFAR_GO>; break;
    case RTK_CFAR_SO: launch = launch_test<RTK_CFAR_SO>; break;
    case RTK_CFAR_CA2D: launch = launch_test<RTK_CFAR_CA2D>; break;
    default: return (int)cudaErrorInvalidValue;
    }
    launch(y, prefix, lines, R, *w, alpha, rank, hits, capacity, status, stream);
    return (int)cudaGetLastError();
}
