/* rtk_mma.cuh: FP32-accurate products on the tensor cores (sm_80+): TF32 splits and
 * mma.sync m16n8k8 with 3xTF32 compensation, a k step's MMAs from zero and added to the
 * accumulator by a rounded FP32 add (docs/kernels/journal.md "The apply stage on the tensor
 * cores"). Used by the apply kernel (pipeline_apply.cu) and the round-3 QR experiment
 * (tests/experiments/qr_la.cuh). Listed in rtk_device.cuh, included where used. */
#ifndef RTK_MMA_CUH
#define RTK_MMA_CUH

#include <cuda_runtime.h>

namespace rtk {

/* a rounded to TF32 (10 fraction bits; ties away from zero) by an integer add and mask, as
 * CUTLASS's round_half_ulp_truncate: cvt.rna.tf32 is about 12 instructions on sm_90
 * (docs/kernels/journal.md "Tensor cores"). |a| <= TF32_SAFE (a larger finite a would round
 * to infinity). */
__device__ __forceinline__ unsigned tf32_of(float a)
{
    return (__float_as_uint(a) + 0x1000u) & 0xffffe000u;
}
/* a = big + small, both TF32. big rounds a clamped to +-TF32_SAFE (0x7f7fefff, the largest
 * float that does not round up to infinity), so that the split of a finite a stays finite:
 * a - big is exact and small takes the difference (a NaN stays NaN through small). The clamp
 * costs 1.4 us of 22.6 at hard; truncating big instead (one instruction, no overflow)
 * measured 21.1 us but took the engine's output to 5.4 dB under the CPU engine's against
 * the double reference (rounded: 3.8; the test allows 6), so big is rounded. */
__device__ __forceinline__ void tf32_split(float a, unsigned &big, unsigned &small)
{
    const float TF32_SAFE = __uint_as_float(0x7f7fefffu); /* 3.4019927e38 */
    big = tf32_of(fminf(fmaxf(a, -TF32_SAFE), TF32_SAFE));
    small = tf32_of(a - __uint_as_float(big));
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* t += a b for one k step without the final add (3xTF32: small*big, big*small, big*big),
 * for sums of several real products inside one k step before one rounded add */
__device__ __forceinline__ void mma3(float (&t)[4], const unsigned (&ab)[4], const unsigned (&as)[4],
                                     const unsigned (&bb)[2], const unsigned (&bs)[2])
{
    mma_tf32(t, as, bb);
    mma_tf32(t, ab, bs);
    mma_tf32(t, ab, bb);
}
/* acc += a b for one k step, 3xTF32: the three MMAs from zero, then one rounded FP32 add a
 * fragment element. The tensor cores truncate their sums; chained on the running
 * accumulator that costs a truncation of the whole sum per MMA (51 at N = 66), which
 * measured 13 dB under the FP32 kernel (test_gpu_apply) and 17 dB in the engine's output */
__device__ __forceinline__ void mma3_add(float (&acc)[4], const unsigned (&ab)[4], const unsigned (&as)[4],
                                         const unsigned (&bb)[2], const unsigned (&bs)[2])
{
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    mma3(t, ab, as, bb, bs);
#pragma unroll
    for (int i = 0; i < 4; i++) acc[i] = __fadd_rn(acc[i], t[i]);
}

} // namespace rtk

#endif
