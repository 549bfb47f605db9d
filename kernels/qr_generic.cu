/* qr_generic.cu: the fallback QR for any m >= n, one 512-thread block per matrix with
 * the matrix in shared memory (when m*n*8 bytes fit in the block's 227 KB) or in place
 * in global memory (through L1/L2; e.g. 512x128, 524 KB), by warps over the columns
 * (kernels/qr_mem.cuh, mem_factor). The reflectors stay below the diagonal (v(j) = 1
 * implicit). */
#include "qr_variants.cuh"
#include "qr_mem.cuh"

namespace rtk {

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
    mem_factor(M, ld, m, n, taub);
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
