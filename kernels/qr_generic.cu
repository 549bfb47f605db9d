/* qr_generic.cu: the fallback QR for any m >= n, one 512-thread block per matrix with
 * the matrix in shared memory (when m*n*8 bytes fit in the block's 227 KB) or in place
 * in global memory (through L1/L2; e.g. 512x128, 524 KB). Columns are dealt to the 16
 * warps cyclically; a warp owns its columns for the whole factorization, so each column
 * is updated (dot, butterfly, axpy) by one warp with no barrier, and a step costs one
 * __syncthreads: the owner of column j+1 updates it first and forms reflector j+1
 * (lookahead) while the other warps update the rest. The reflectors stay below the
 * diagonal (v(j) = 1 implicit), tau is double-buffered in shared memory. */
#include "qr_variants.cuh"

namespace rtk {

/* A(:, c) -= v conj(tau) (v^H A(:, c)), rows j..m-1, one warp */
__device__ __forceinline__ void mem_apply(float2 *M, size_t ld, int m, int j, float2 tau, int c,
                                          int lane)
{
    const float2 *v = M + (size_t)j * ld;
    float2 *x = M + (size_t)c * ld;
    float2 w = c0();
    for (int i = j + lane; i < m; i += 32) w = cjfma(i == j ? make_float2(1.f, 0.f) : v[i], x[i], w);
    w = group_sum2<32>(w, 0xffffffffu);
    const float2 s = cjmul(tau, w);
    for (int i = j + lane; i < m; i += 32) x[i] = cfms(i == j ? make_float2(1.f, 0.f) : v[i], s, x[i]);
    __syncwarp(); /* the reflector that may follow reads rows this warp's other lanes wrote */
}

/* reflector of column j (rows j..m-1), one warp: v below the diagonal, beta on it */
__device__ __forceinline__ void mem_reflector(float2 *M, size_t ld, int m, int j, int lane,
                                              float2 *tauout)
{
    float2 *x = M + (size_t)j * ld;
    float sigma = 0.f;
    for (int i = j + 1 + lane; i < m; i += 32) sigma = fmaf(x[i].x, x[i].x, fmaf(x[i].y, x[i].y, sigma));
    const float2 alpha = x[j];
    sigma = group_sum<32>(sigma, 0xffffffffu);
    float2 beta, tau, scale;
    clarfg(alpha.x, alpha.y, sigma, &beta, &tau, &scale);
    for (int i = j + 1 + lane; i < m; i += 32) x[i] = cmul(x[i], scale);
    __syncwarp();
    if (lane == 0) {
        x[j] = beta;
        *tauout = tau;
    }
}

template <bool SMEM>
__global__ void __launch_bounds__(RTK_MEM_THREADS) qr_mem_kernel(const QrArgs args)
{
    extern __shared__ float2 smem[];
    __shared__ float2 taub[2];
    const int m = args.m, n = args.n;
    int k = (int)blockIdx.x;
    if (args.list) { /* the CholeskyQR guard's list (rtk_qr_guard_launch) */
        const int count = args.list[0];
        if (blockIdx.x == 0 && threadIdx.x == 0 && args.flags) atomicAdd(&args.flags->guarded, count);
        if ((int)blockIdx.x >= count) return;
        k = args.list[1 + blockIdx.x];
    }
    float2 *Ak = args.A + (long long)k * args.stride;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    float2 *M;
    size_t ld;
    if (SMEM) {
        M = smem;
        ld = (size_t)m;
        for (int c = warp; c < n; c += nw)
            for (int i = lane; i < m; i += 32) M[(size_t)c * m + i] = Ak[(size_t)c * args.lda + i];
        __syncthreads();
    } else {
        M = Ak;
        ld = (size_t)args.lda;
    }
    if (warp == 0) mem_reflector(M, ld, m, 0, lane, &taub[0]);
    for (int j = 0; j + 1 < n; j++) {
        __syncthreads();
        const float2 tau = taub[j & 1];
        const int j1 = j + 1;
        if (j1 % nw == warp) {
            mem_apply(M, ld, m, j, tau, j1, lane);
            mem_reflector(M, ld, m, j1, lane, &taub[j1 & 1]);
        }
        int c = j1 + 1 + ((warp - (j1 + 1)) % nw + nw) % nw; /* first c > j1 with c % nw == warp */
        for (; c < n; c += nw) mem_apply(M, ld, m, j, tau, c, lane);
    }
    if (SMEM) {
        __syncthreads();
        for (int c = warp; c < n; c += nw)
            for (int i = lane; i <= c; i += 32) Ak[(size_t)c * args.lda + i] = M[(size_t)c * m + i];
    }
}

} // namespace rtk

cudaError_t rtk_smem_qr(const rtk::QrArgs &args, cudaStream_t stream)
{
    const size_t smem = (size_t)args.m * args.n * sizeof(float2);
    cudaError_t e = cudaFuncSetAttribute(rtk::qr_mem_kernel<true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    rtk::qr_mem_kernel<true><<<args.batch, RTK_MEM_THREADS, smem, stream>>>(args);
    return cudaGetLastError();
}

static cudaError_t mem_res(void (*kern)(const rtk::QrArgs), int smem, rtk_qr_resources *r)
{
    cudaFuncAttributes fa{};
    cudaError_t e = cudaFuncGetAttributes(&fa, kern);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->blocks_per_sm, kern, RTK_MEM_THREADS, smem);
    r->threads = RTK_MEM_THREADS;
    r->registers = fa.numRegs;
    r->local_bytes = (int)fa.localSizeBytes;
    r->smem_bytes = smem;
    return e;
}

cudaError_t rtk_smem_res(int m, int n, rtk_qr_resources *r)
{
    const int smem = (int)((size_t)m * n * sizeof(float2));
    cudaError_t e = cudaFuncSetAttribute(rtk::qr_mem_kernel<true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    return e == cudaSuccess ? mem_res(rtk::qr_mem_kernel<true>, smem, r) : e;
}

cudaError_t rtk_global_res(rtk_qr_resources *r) { return mem_res(rtk::qr_mem_kernel<false>, 0, r); }

cudaError_t rtk_global_qr(const rtk::QrArgs &args, cudaStream_t stream)
{
    rtk::qr_mem_kernel<false><<<args.batch, RTK_MEM_THREADS, 0, stream>>>(args);
    return cudaGetLastError();
}
