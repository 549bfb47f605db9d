/* qr_small.cu: register-resident QR for small matrices (80x16, 96x16 and the like):
 * one warp per matrix with several matrices per block (no __syncthreads, only
 * __syncwarp and shuffles), or blocks of 64/128 threads. See qr_reg.cuh. */
#include "qr_reg.cuh"
#include "qr_variants.cuh"

RTK_SMALL_VARIANTS(RTK_DEFINE_REG)
