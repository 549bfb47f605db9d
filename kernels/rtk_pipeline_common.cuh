/* rtk_pipeline_common.cuh: what the CPI-stage kernels (pipeline.cu, pipeline_doppler.cu,
 * pipeline_apply.cu) share: the finiteness test of a sample or weight and the grid of a
 * grid-stride launch. Each file's copy has internal linkage (anonymous namespace). */
#ifndef RTK_PIPELINE_COMMON_CUH
#define RTK_PIPELINE_COMMON_CUH

#include <cuda_runtime.h>

namespace {

__device__ __forceinline__ bool finite2(float2 v) { return isfinite(v.x) && isfinite(v.y); }

unsigned grid_for(long long total, int threads)
{
    long long b = (total + threads - 1) / threads;
    return (unsigned)(b < 65536LL * 16 ? (b > 0 ? b : 1) : 65536LL * 16);
}

} // namespace

#endif
