/* rtk_math.cuh: the arithmetic every rtk kernel shares — complex float2 operations, the
 * conditioning indicator of a factor, reductions over groups of lanes, and LAPACK's clarfg
 * reflector (part of rtk_device.cuh). */
#ifndef RTK_MATH_CUH
#define RTK_MATH_CUH

#include <cuda_runtime.h>

#include "rtk.h"

namespace rtk {

/* ---- complex float2 ---------------------------------------------------------------- */
__device__ __forceinline__ float2 c0() { return make_float2(0.f, 0.f); }
__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/* conj(a) * b */
__device__ __forceinline__ float2 cjmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
/* acc + conj(a) * b */
__device__ __forceinline__ float2 cjfma(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.x = fmaf(a.y, b.y, acc.x);
    acc.y = fmaf(a.x, b.y, acc.y);
    acc.y = fmaf(-a.y, b.x, acc.y);
    return acc;
}
/* acc - a * b */
__device__ __forceinline__ float2 cfms(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(-a.x, b.x, acc.x);
    acc.x = fmaf(a.y, b.y, acc.x);
    acc.y = fmaf(-a.x, b.y, acc.y);
    acc.y = fmaf(-a.y, b.x, acc.y);
    return acc;
}
/* acc - conj(a) * b */
__device__ __forceinline__ float2 cjfms(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(-a.x, b.x, acc.x);
    acc.x = fmaf(-a.y, b.y, acc.x);
    acc.y = fmaf(-a.x, b.y, acc.y);
    acc.y = fmaf(a.y, b.x, acc.y);
    return acc;
}
__device__ __forceinline__ float2 cconj(float2 a) { return make_float2(a.x, -a.y); }
__device__ __forceinline__ float2 cfma(float2 a, float2 b, float2 acc)
{
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.x = fmaf(-a.y, b.y, acc.x);
    acc.y = fmaf(a.x, b.y, acc.y);
    acc.y = fmaf(a.y, b.x, acc.y);
    return acc;
}
/* 1 / a (0 when a == 0; the callers check the diagonal first) */
__device__ __forceinline__ float2 crecip(float2 a)
{
    float d = a.x * a.x + a.y * a.y;
    float inv = d > 0.f ? 1.0f / d : 0.f;
    return make_float2(a.x * inv, -a.y * inv);
}
__device__ __forceinline__ bool cfinite_nonzero(float2 a)
{
    return isfinite(a.x) && isfinite(a.y) && (a.x != 0.f || a.y != 0.f);
}

/* The conditioning indicator of factor k, min_i |R_ii| / max_i |R_ii|, folded into
 * flags->worst (rtk_factor_flags): all 32 lanes of one warp call it; diag(i) returns
 * R_ii. A cheap lower bound on 1/cond(R): near 0 means numerically rank-deficient
 * training data. */
template <class Diag>
__device__ __forceinline__ void diag_ratio_warp(const Diag &diag, int n, int k,
                                                rtk_factor_flags *flags, int lane)
{
    float lo = INFINITY, hi = 0.f;
    for (int i = lane; i < n; i += 32) {
        const float2 d = diag(i);
        const float a = hypotf(d.x, d.y);
        lo = fminf(lo, a);
        hi = fmaxf(hi, a);
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
    if (lane == 0) {
        const float r = hi > 0.f ? lo / hi : 0.f;
        atomicMin(&flags->worst, ((unsigned long long)__float_as_uint(r) << 32) | (unsigned)k);
    }
}

/* ---- reductions over groups of G consecutive lanes (G a power of two <= 32) --------- */
template <int G>
__device__ __forceinline__ float group_sum(float v, unsigned mask)
{
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o, G);
    return v;
}
template <int G>
__device__ __forceinline__ float2 group_sum2(float2 v, unsigned mask)
{
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) {
        v.x += __shfl_xor_sync(mask, v.x, o, G);
        v.y += __shfl_xor_sync(mask, v.y, o, G);
    }
    return v;
}
/* the lane mask of the group of G lanes that contains the calling lane */
template <int G>
__device__ __forceinline__ unsigned group_mask()
{
    if (G == 32) return 0xffffffffu;
    const unsigned lane = threadIdx.x & 31u;
    return (0xffffffffu >> (32 - G)) << (lane & ~(unsigned)(G - 1));
}
__device__ __forceinline__ float2 shfl2(float2 v, int src, unsigned mask = 0xffffffffu)
{
    return make_float2(__shfl_sync(mask, v.x, src), __shfl_sync(mask, v.y, src));
}

/* ---- LAPACK's clarfg ----------------------------------------------------------------
 * From alpha = x(0) and sigma = sum_{i>0} |x(i)|^2 compute H = I - tau v v^H with
 * v(0) = 1, H^H x = (beta, 0, ..., 0), beta = -sign(Re alpha) ||x|| real. Returns beta
 * in *beta (alpha itself when H = I), tau, and scale = 1 / (alpha - beta) so that
 * v(i) = x(i) * scale for i > 0. Single precision, no rescaling: entries beyond about
 * 1e18 in magnitude overflow the sum of squares (LAPACK's scnrm2 would rescale). */
__device__ __forceinline__ void clarfg(float ar, float ai, float sigma, float2 *beta,
                                       float2 *tau, float2 *scale)
{
    if (sigma == 0.f && ai == 0.f) {
        *beta = make_float2(ar, 0.f);
        *tau = c0();
        *scale = c0();
        return;
    }
    /* IEEE round-to-nearest square root and reciprocals (not the fast approximations):
     * the critical path of every Householder step runs through here */
    const float nrm = __fsqrt_rn(fmaf(ar, ar, fmaf(ai, ai, sigma)));
    const float b = -copysignf(nrm, ar);
    const float ib = __frcp_rn(b);
    *beta = make_float2(b, 0.f);
    *tau = make_float2((b - ar) * ib, -ai * ib);
    const float dr = ar - b, id = __frcp_rn(fmaf(dr, dr, ai * ai)); /* 1 / |alpha - beta|^2 */
    *scale = make_float2(dr * id, -ai * id);
}

} // namespace rtk

#endif
