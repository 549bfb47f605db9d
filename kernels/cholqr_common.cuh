/* cholqr_common.cuh: what the two CholeskyQR kernels share (kernels/cholqr.cu: CholeskyQR2;
 * kernels/cholqr1.cu: the one-pass cholqr in FP64): the block size and the phase stamps of
 * tests/experiments/cq_phases.cu (which compiles both files as one translation unit). */
#ifndef RTK_CHOLQR_COMMON_CUH
#define RTK_CHOLQR_COMMON_CUH

namespace rtk {

constexpr int CQ_THREADS = 512, CQ_WARPS = CQ_THREADS / 32;

/* RTK_CQ_STAMPS (tests/experiments/cq_phases.cu, never in the library): thread 0 of each
 * block writes clock64() after each phase's barrier to cq_stamps[block][CQ_NSTAMP], and the
 * Cholesky's sub-phase cycles (A, C, E) summed; the library's build has none of it. */
#ifdef RTK_CQ_STAMPS
constexpr int CQ_NSTAMP = 16;
__device__ long long *cq_stamps;
#define CQ_STAMP(i)                                                                                 \
    do {                                                                                            \
        if (threadIdx.x == 0) cq_stamps[(size_t)blockIdx.x * CQ_NSTAMP + (i)] = clock64();          \
    } while (0)
#define CQ_SUB(v, i)                                                                                \
    do {                                                                                            \
        if (threadIdx.x == 0) {                                                                     \
            const long long t_ = clock64();                                                         \
            cq_stamps[(size_t)blockIdx.x * CQ_NSTAMP + (i)] += t_ - (v);                            \
            (v) = t_;                                                                               \
        }                                                                                           \
    } while (0)
#else
#define CQ_STAMP(i) ((void)0)
#define CQ_SUB(v, i) ((void)0)
#endif

} // namespace rtk

#endif
