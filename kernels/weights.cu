/* weights.cu: batched MVDR weights from triangular factors already on the device
 * (R^H R z = v_b, w = z / (v_b^H z)), the normalization step of the cuBLAS baseline,
 * the right-hand-side broadcast it needs, and the timing spin kernel. One block per
 * matrix: R is staged row-major in shared memory (odd leading dimension) when it fits,
 * else read in place; n <= 32 solves one beam per lane, larger n one beam pair per warp
 * (rtk_device.cuh). */
#include "rtk_device.cuh"
#include "rtk_model.h"

namespace rtk {

/* n <= NC (32, 64, 96, 128, 256): solver shape SolveShape<NC> (rtk_device.cuh) */
template <int NC>
__global__ void __launch_bounds__(256, 1) weights_kernel(const float2 *R, int ldr, long long stride,
                                                      int groups, int n, int nbeams,
                                                      const float2 *V, long long vstride,
                                                      float2 *W, rtk_factor_flags *flags, int staged)
{
    extern __shared__ float2 sm[];
    const int k = blockIdx.x, t = threadIdx.x;
    const float2 *Rk = R + (long long)(k % groups) * stride;
    V += (long long)(k / groups) * vstride;
    const float2 *Rp;
    int rs, cs;
    float2 *dinv;
    if (staged) {
        const int ld = n | 1;
        for (int idx = t; idx < n * n; idx += blockDim.x) {
            const int c = idx / n, r = idx - c * n;
            if (r <= c) sm[r * ld + c] = Rk[(size_t)c * ldr + r];
        }
        Rp = sm;
        rs = ld;
        cs = 1;
        dinv = sm + n * ld;
    } else {
        Rp = Rk;
        rs = 1;
        cs = ldr;
        dinv = sm;
    }
    int *flag = reinterpret_cast<int *>(dinv + n);
    if (t == 0) *flag = 0;
    __syncthreads();
    for (int i = t; i < n; i += blockDim.x) {
        const float2 d = Rp[i * rs + i * cs];
        if (!cfinite_nonzero(d)) *flag = 1;
        dinv[i] = crecip(d);
    }
    __syncthreads();
    if (*flag) {
        if (t == 0) atomicMin(&flags->bad_item, k);
        return;
    }
    if (t < 32) diag_ratio_warp([&](int i) { return Rp[i * rs + i * cs]; }, n, k, flags, t);
    float2 *Wk = W + (size_t)k * nbeams * n;
    using SS = SolveShape<NC>;
    if constexpr (SS::DOT_FWD) /* never staged: R in place, column-major */
        solve_beams_warp<SS::RR, SS::NB, true>(Rp, rs, cs, dinv, n, nbeams, V, Wk, t >> 5,
                                               blockDim.x >> 5);
    else
        solve_beams_warp<SS::RR, SS::NB>(Rp, rs, cs, dinv, n, nbeams, V, Wk, t >> 5,
                                         blockDim.x >> 5);
}

/* cuBLAS baseline, after the two trsm: W_k(:, b) = z_b / (v_b^H z_b); check diag R_k */
__global__ void __launch_bounds__(256) normalize_kernel(const float2 *R, int ldr, long long stride,
                                                        int groups, int n, int nbeams,
                                                        const float2 *V, long long vstride,
                                                        float2 *W, rtk_factor_flags *flags)
{
    const int k = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float2 *Rk = R + (long long)(k % groups) * stride;
    V += (long long)(k / groups) * vstride;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (!cfinite_nonzero(Rk[(size_t)i * ldr + i])) atomicMin(&flags->bad_item, k);
    if (warp == 0) diag_ratio_warp([&](int i) { return Rk[(size_t)i * ldr + i]; }, n, k, flags, lane);
    float2 *Wk = W + (size_t)k * nbeams * n;
    for (int b = warp; b < nbeams; b += blockDim.x >> 5) {
        const float2 *v = V + (size_t)b * n;
        float2 *z = Wk + (size_t)b * n;
        float2 s = c0();
        for (int l = lane; l < n; l += 32) s = cjfma(v[l], z[l], s);
        s = group_sum2<32>(s, 0xffffffffu);
        const float2 is = crecip(s);
        for (int l = lane; l < n; l += 32) z[l] = cmul(z[l], is);
    }
}

/* W_k = V for every k (the right-hand sides of the cuBLAS solves, solved in place) */
__global__ void fill_rhs_kernel(int per, int batch, int groups, const float2 *V,
                                long long vstride, float2 *W)
{
    const size_t total = (size_t)per * batch;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t k = i / per;
        W[i] = V[(long long)(k / groups) * vstride + (long long)(i - k * per)];
    }
}

__global__ void spin_kernel(unsigned long long ns)
{
    const unsigned long long t0 = globaltimer();
    while (globaltimer() - t0 < ns) {
    }
}

template <int NC>
cudaError_t weights_launch(int n, int batch, int groups, const float2 *R, int ldr, long long stride,
                           int nbeams, const float2 *V, long long vstride, float2 *W,
                           rtk_factor_flags *flags, cudaStream_t s)
{
    /* the launch the performance model assumes (rtk_model.h) */
    const rtk_weights_shape ws = rtk_weights_launch_shape(n, nbeams);
    static_assert(SolveShape<NC>::DOT_FWD == (NC > 256), "rtk_weights_launch_shape: staging");
    const int staged = ws.staged, threads = ws.threads;
    const size_t smem = (size_t)ws.smem;
    if (ws.nc != NC || ws.nb != SolveShape<NC>::NB) return cudaErrorInvalidValue;
    auto kern = weights_kernel<NC>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return e;
    }
    kern<<<batch, threads, smem, s>>>(R, ldr, stride, groups, n, nbeams, V, vstride, W, flags,
                                      staged);
    return cudaGetLastError();
}

} // namespace rtk

using rtk::weights_launch;

extern "C" int rtk_weights_grouped_launch(int n, int batch, int groups, const void *R, int ldr,
                                          long long stride, int nbeams, const void *V,
                                          long long vstride, void *W, rtk_factor_flags *flags,
                                          void *stream)
{
    const float2 *r = (const float2 *)R, *v = (const float2 *)V;
    float2 *w = (float2 *)W;
    cudaStream_t s = (cudaStream_t)stream;
    if (n < 1 || n > RTK_WEIGHTS_MAX_N || batch < 1 || nbeams < 1 || groups < 1 || vstride < 0)
        return (int)cudaErrorInvalidValue;
#define RTK_WL(NC) (int)weights_launch<NC>(n, batch, groups, r, ldr, stride, nbeams, v, vstride, w, flags, s)
    if (n <= 32) return RTK_WL(32);
    if (n <= 64) return RTK_WL(64);
    if (n <= 96) return RTK_WL(96);
    if (n <= 128) return RTK_WL(128);
    if (n <= 256) return RTK_WL(256);
    return RTK_WL(512);
#undef RTK_WL
}

/* Resident blocks of the weight kernel an SM holds for (n, nbeams), as launched */
template <int NC>
static int weights_occupancy(int n, int nbeams, int *blocks)
{
    const rtk_weights_shape ws = rtk_weights_launch_shape(n, nbeams);
    auto kern = rtk::weights_kernel<NC>;
    cudaError_t e = cudaSuccess;
    if (ws.smem > 48 * 1024)
        e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ws.smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kern, ws.threads, (size_t)ws.smem);
    return (int)e;
}

extern "C" int rtk_weights_occupancy(int n, int nbeams, int *blocks_per_sm)
{
    if (n < 1 || n > RTK_WEIGHTS_MAX_N || nbeams < 1 || !blocks_per_sm) return (int)cudaErrorInvalidValue;
    if (n <= 32) return weights_occupancy<32>(n, nbeams, blocks_per_sm);
    if (n <= 64) return weights_occupancy<64>(n, nbeams, blocks_per_sm);
    if (n <= 96) return weights_occupancy<96>(n, nbeams, blocks_per_sm);
    if (n <= 128) return weights_occupancy<128>(n, nbeams, blocks_per_sm);
    if (n <= 256) return weights_occupancy<256>(n, nbeams, blocks_per_sm);
    return weights_occupancy<512>(n, nbeams, blocks_per_sm);
}

extern "C" int rtk_weights_launch(int n, int batch, const void *R, int ldr, long long stride,
                                  int nbeams, const void *V, void *W, rtk_factor_flags *flags, void *stream)
{
    return rtk_weights_grouped_launch(n, batch, batch, R, ldr, stride, nbeams, V, 0, W, flags,
                                      stream);
}

extern "C" int rtk_normalize_grouped_launch(int n, int batch, int groups, const void *R, int ldr,
                                            long long stride, int nbeams, const void *V,
                                            long long vstride, void *W, rtk_factor_flags *flags,
                                            void *stream)
{
    if (n < 1 || batch < 1 || nbeams < 1 || groups < 1 || vstride < 0)
        return (int)cudaErrorInvalidValue;
    const int threads = 32 * max(1, min(8, nbeams));
    rtk::normalize_kernel<<<batch, threads, 0, (cudaStream_t)stream>>>(
        (const float2 *)R, ldr, stride, groups, n, nbeams, (const float2 *)V, vstride, (float2 *)W,
        flags);
    return (int)cudaGetLastError();
}

extern "C" int rtk_normalize_launch(int n, int batch, const void *R, int ldr, long long stride,
                                    int nbeams, const void *V, void *W, rtk_factor_flags *flags, void *stream)
{
    return rtk_normalize_grouped_launch(n, batch, batch, R, ldr, stride, nbeams, V, 0, W, flags,
                                        stream);
}

extern "C" int rtk_fill_rhs_grouped_launch(int n, int batch, int groups, int nbeams,
                                           const void *V, long long vstride, void *W, void *stream)
{
    if (n < 1 || nbeams < 1 || batch < 1 || groups < 1 || vstride < 0)
        return (int)cudaErrorInvalidValue;
    const int per = n * nbeams;
    const size_t total = (size_t)per * batch;
    const int blocks = (int)min((size_t)4096, (total + 255) / 256);
    rtk::fill_rhs_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(per, batch, groups,
                                                                     (const float2 *)V, vstride,
                                                                     (float2 *)W);
    return (int)cudaGetLastError();
}

extern "C" int rtk_fill_rhs_launch(int n, int batch, int nbeams, const void *V, void *W,
                                   void *stream)
{
    return rtk_fill_rhs_grouped_launch(n, batch, batch, nbeams, V, 0, W, stream);
}

extern "C" int rtk_spin_launch(unsigned microseconds, void *stream)
{
    rtk::spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(1000ull * microseconds);
    return (int)cudaGetLastError();
}
