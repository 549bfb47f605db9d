/* qr_variants.cuh: the register-resident QR instantiations, as X-macro lists
 * X(name, TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW): thread grid TR x TC per matrix, RPT x CPT
 * complex registers per thread (capacity TR*RPT x TC*CPT), MATS matrices per block;
 * VREG: v held in registers (else re-read from shared memory); MINB: the blocks per SM the
 * compiler must leave registers for (__launch_bounds__; 1 = no limit below 255); FLOW: how
 * the column steps synchronize (qr_reg.cuh): 0 = a barrier per column (__syncwarp for the
 * one-warp matrices, MATS > 1), bit 1 = dataflow (every reflector in shared memory behind
 * its own mbarrier), + 2 = deferred updates, + 16 = a warp's column slots strided by the
 * warps of the matrix (the `flw` rows; docs/kernels/journal.md "Dataflow"), + 2048 = fused with a
 * solver warp (qr_reg.cuh; docs/kernels/journal.md "A solver warp"), + 32 = the rows over the
 * CTAs of a thread-block cluster (the `cl` rows, their own list; docs/kernels/journal.md "Clusters"). Split
 * in lists so that translation units compile them in parallel; the order of preference (the
 * dispatch table) is in dispatch.cu. */
#ifndef RTK_QR_VARIANTS_CUH
#define RTK_QR_VARIANTS_CUH

#include "rtk_device.cuh"

/* small matrices: one warp per matrix (several per block, warp-synchronous) or small blocks */
#define RTK_SMALL_VARIANTS(X)                                                                    \
    X(reg8x4_4x2_m4, 8, 4, 4, 2, 4, true, 1, 0)    /* 32 x 8, 4 one-warp matrices per block      */ \
    X(reg8x4_4x3_m4, 8, 4, 4, 3, 4, true, 1, 0)    /* 32 x 12 (PERFECT small), 4 per block       */ \
    X(reg8x4_10x4_m2, 8, 4, 10, 4, 2, true, 1, 0)  /* 80 x 16, 2 one-warp matrices per block     */ \
    X(reg8x4_12x4_m2, 8, 4, 12, 4, 2, true, 1, 0)  /* 96 x 16                                    */ \
    X(flw16x8_4x3, 16, 8, 4, 3, 1, true, 1, 17)    /* 64 x 24 (PERFECT medium, large)            */ \
    X(flw16x4_5x4, 16, 4, 5, 4, 1, true, 1, 17)    /* 80 x 16, 64 threads                        */ \
    X(flw16x4_6x4, 16, 4, 6, 4, 1, true, 1, 17)    /* 96 x 16, 64 threads                        */ \
    X(flw16x8_5x2, 16, 8, 5, 2, 1, true, 1, 17)    /* 80 x 16, 128 threads                       */ \
    X(flw16x8_6x2, 16, 8, 6, 2, 1, true, 1, 17)    /* 96 x 16, 128 threads                       */ \
    X(flw16x8_8x4, 16, 8, 8, 4, 1, true, 1, 17)    /* 128 x 32, 128 threads                      */ \
    X(flw16x4_15x3, 16, 4, 15, 3, 1, true, 1, 17)  /* 240 x 12 (JDL 3 x 3 at K = 240), 64 threads */ \
    X(flw16x8_15x2, 16, 8, 15, 2, 1, true, 1, 17)  /* 240 x 16, 128 threads                      */ \
    X(flw16x4_8x3, 16, 4, 8, 3, 1, true, 1, 17)    /* 128 x 12, 64 threads                       */ \
    X(flw32x8_4x4, 32, 8, 4, 4, 1, true, 1, 17)    /* 128 x 32, 256 threads                      */

/* one matrix per block, the whole SM's register file */
#define RTK_ONCHIP_VARIANTS(X)                                                                   \
    X(flw16x22_15x3, 16, 22, 15, 3, 1, true, 1, 2065) /* 240 x 66, 352 threads (+ the solver warp)  */ \
    X(flw16x24_12x4, 16, 24, 12, 4, 1, true, 1, 17)  /* 192 x 96, 384 threads                     */ \
    X(flw16x22_20x3, 16, 22, 20, 3, 1, false, 1, 19) /* 320 x 66 (306 x 66), deferred updates     */

/* one matrix per thread-block cluster (sm_90; FLOW & 32): each CTA holds a TR*RPT-row tile of
 * it, up to 16 CTAs (docs/kernels/journal.md "Clusters"); QR alone */
#define RTK_CLUSTER_VARIANTS(X)                                                                  \
    X(clp16x32_8x4, 16, 32, 8, 4, 1, true, 1, 49) /* 128 x 128 a CTA: m <= 2048, n <= 128      */ \
    X(clp16x24_8x4, 16, 24, 8, 4, 1, true, 1, 49) /* 128 x 96 a CTA: m <= 2048, n <= 96        */ \
    X(clp16x22_8x3, 16, 22, 8, 3, 1, true, 1, 49) /* 128 x 66 a CTA: m <= 2048, n <= 66        */

#define RTK_DECLARE_REG(name, TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW)                         \
    constexpr int name##_geom[8] = {TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW};                  \
    cudaError_t name##_res(int, rtk_qr_resources *);                                      \
    cudaError_t name##_qr(const rtk::QrArgs &, cudaStream_t);                             \
    cudaError_t name##_qrw(const rtk::QrArgs &, cudaStream_t);                            \
    cudaError_t name##_qrg(const rtk::QrArgs &, cudaStream_t);
#define RTK_DEFINE_REG(name, TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW)                          \
    cudaError_t name##_res(int kind, rtk_qr_resources *r)                                 \
    {                                                                                     \
        return kind == 0   ? rtk::qr_reg_resources<TR, TC, RPT, CPT, MATS, VREG, false, false, MINB, FLOW>(r)      \
               : kind == 1 ? rtk::qr_reg_resources<TR, TC, RPT, CPT, MATS, VREG, true, false, MINB, FLOW>(r)       \
                           : rtk::qr_reg_resources<TR, TC, RPT, CPT, MATS, VREG, true, true, MINB, FLOW>(r); \
    }                                                                                     \
    cudaError_t name##_qr(const rtk::QrArgs &a, cudaStream_t s)                           \
    {                                                                                     \
        return rtk::qr_reg_launch<TR, TC, RPT, CPT, MATS, VREG, false, false, MINB, FLOW>(a, s);                   \
    }                                                                                     \
    cudaError_t name##_qrw(const rtk::QrArgs &a, cudaStream_t s)                          \
    {                                                                                     \
        return rtk::qr_reg_launch<TR, TC, RPT, CPT, MATS, VREG, true, false, MINB, FLOW>(a, s);                    \
    }                                                                                     \
    cudaError_t name##_qrg(const rtk::QrArgs &a, cudaStream_t s)                          \
    {                                                                                     \
        return rtk::qr_reg_launch<TR, TC, RPT, CPT, MATS, VREG, true, true, MINB, FLOW>(a, s);              \
    }

#define RTK_DECLARE_CL(name, TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW)                          \
    constexpr int name##_geom[8] = {TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW};                  \
    cudaError_t name##_res(int, rtk_qr_resources *);                                      \
    cudaError_t name##_qr(const rtk::QrArgs &, cudaStream_t);
#define RTK_DEFINE_CL(name, TR, TC, RPT, CPT, MATS, VREG, MINB, FLOW)                           \
    cudaError_t name##_res(int m, rtk_qr_resources *r)                                    \
    {                                                                                     \
        return rtk::qr_reg_resources<TR, TC, RPT, CPT, MATS, VREG, false, false, MINB, FLOW>(r, m); \
    }                                                                                     \
    cudaError_t name##_qr(const rtk::QrArgs &a, cudaStream_t s)                           \
    {                                                                                     \
        return rtk::qr_reg_launch<TR, TC, RPT, CPT, MATS, VREG, false, false, MINB, FLOW>(a, s); \
    }
#define RTK_CLUSTER_PMAX 16 /* RegShape::PMAX */

RTK_SMALL_VARIANTS(RTK_DECLARE_REG)
RTK_ONCHIP_VARIANTS(RTK_DECLARE_REG)
RTK_CLUSTER_VARIANTS(RTK_DECLARE_CL)

/* qr_generic.cu */
cudaError_t rtk_smem_qr(const rtk::QrArgs &, cudaStream_t);
cudaError_t rtk_smem_res(int m, int n, rtk_qr_resources *);
cudaError_t rtk_global_res(rtk_qr_resources *);
cudaError_t rtk_global_qr(const rtk::QrArgs &, cudaStream_t);
#define RTK_MEM_THREADS 512

#endif
