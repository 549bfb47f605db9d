/* la_gpu_check.h: the one way host code of the CUDA backends (linalg/gpu_dispatch.cu, the GPU
 * engine, the GPU CFAR) checks a CUDA runtime, cuBLAS or cuFFT call. kernels/rtk_check.h says
 * what a failed call was (an rtk_fault: STAP_ENOMEM for out of memory, else STAP_EDEVICE, and
 * a message naming the call, its file and line and the library's reason); this header makes
 * it the caller's stap_error.
 *
 * Each macro needs `stap_error *err` in scope. LA_CU / LA_CUBLAS / LA_CUFFT return the status
 * from the enclosing function; LA_CU_GOTO stores it and jumps (functions with a cleanup
 * label); LA_LAUNCH checks a launch function of kernels/ (which returns its cudaError_t as an
 * int). RTK_TRY (rtk_check.h) returns any nonzero status of a call of ours. */
#ifndef LA_GPU_CHECK_H
#define LA_GPU_CHECK_H

#include "common.h"
#include "rtk_check.h"

static inline int la_gpu_fail(stap_error *err, rtk_fault f)
{
    return stap_fail(err, f.code, "%s", f.msg);
}

/* a call whose result of type T is ok when it equals OK; text: the call as written */
#define LA_CHECKED(T, OK, fault, call, text)                                               \
    do {                                                                                   \
        T la_v_ = (call);                                                                  \
        if (la_v_ != (OK)) return la_gpu_fail(err, fault(la_v_, text, __FILE__, __LINE__)); \
    } while (0)
#define LA_CU(call) LA_CHECKED(cudaError_t, cudaSuccess, rtk_cuda_fault, call, #call)
#define LA_CUBLAS(call) \
    LA_CHECKED(cublasStatus_t, CUBLAS_STATUS_SUCCESS, rtk_cublas_fault, call, #call)
#define LA_CUFFT(call) LA_CHECKED(cufftResult, CUFFT_SUCCESS, rtk_cufft_fault, call, #call)
/* a launch function of kernels/ (its cudaError_t as an int) */
#define LA_LAUNCH(call) \
    LA_CHECKED(cudaError_t, cudaSuccess, rtk_cuda_fault, (cudaError_t)(call), #call)
#define LA_CU_GOTO(call, st, label)                                                        \
    do {                                                                                   \
        cudaError_t la_e_ = (call);                                                        \
        if (la_e_ != cudaSuccess) {                                                        \
            (st) = la_gpu_fail(err, rtk_cuda_fault(la_e_, #call, __FILE__, __LINE__));     \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

#endif
