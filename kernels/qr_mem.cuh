/* qr_mem.cuh: the generic Householder QR's device code (qr_generic.cu's kernel; the CholeskyQR
 * guard inside cholqr1_gather_kernel): one block factors one m x n matrix M (column-major,
 * leading dimension ld) in place by warps over its columns, reflectors below the diagonal,
 * R on and above it. Columns are dealt to the block's warps cyclically; a warp owns its
 * columns for the whole factorization, so each column is updated (dot, butterfly, axpy) by
 * one warp with no barrier, and a step costs one __syncthreads: the owner of column j+1
 * updates it first and forms reflector j+1 (lookahead) while the other warps update the
 * rest. tau is double-buffered in shared memory. */
#ifndef RTK_QR_MEM_CUH
#define RTK_QR_MEM_CUH

#include "rtk_device.cuh"

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

/* M's QR by the whole block (every thread calls it; M in shared or global memory, visible
 * to the block); taub: two float2 of shared memory. Returns after the last step's updates,
 * without a closing barrier. */
__device__ __forceinline__ void mem_factor(float2 *M, size_t ld, int m, int n, float2 *taub)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
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
}

} // namespace rtk

#endif
