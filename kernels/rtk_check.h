/* rtk_check.h: what a failed CUDA runtime, cuBLAS or cuFFT call was, as kernels/ says it
 * without calling any layer above it: an rtk_fault, the status it maps to (out of memory is
 * STAP_ENOMEM, every other failure STAP_EDEVICE) and its message naming the call, its file
 * and line and the library's reason. The runtime's last-error state is cleared, so that the
 * kernels' launch checks (cudaGetLastError) do not see an older failure.
 *
 * The host code of the CUDA backends (linalg/gpu_dispatch.cu, the GPU engine, the GPU CFAR)
 * checks its calls with linalg/la_gpu_check.h, which turns a fault into a stap_error.
 * RTK_TRY returns any nonzero status of a call of ours; RTK_CU_EXIT is for programs (tests,
 * tools): the fault's message on stderr, exit(1). */
#ifndef RTK_CHECK_H
#define RTK_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

typedef struct rtk_fault {
    int code;      /* STAP_ENOMEM or STAP_EDEVICE                  */
    char msg[512]; /* "CALL failed (FILE:LINE): REASON" (stap_error's size) */
} rtk_fault;

static inline rtk_fault rtk_fault_make(int code, const char *call, const char *file, int line,
                                       const char *reason)
{
    rtk_fault f;
    const char *base = strrchr(file, '/');
    f.code = code;
    snprintf(f.msg, sizeof f.msg, "%s failed (%s:%d): %s", call, base ? base + 1 : file, line,
             reason);
    return f;
}

static inline rtk_fault rtk_cuda_fault(cudaError_t e, const char *call, const char *file, int line)
{
    (void)cudaGetLastError();
    return rtk_fault_make(e == cudaErrorMemoryAllocation ? STAP_ENOMEM : STAP_EDEVICE, call, file,
                          line, cudaGetErrorString(e));
}

static inline rtk_fault rtk_cublas_fault(cublasStatus_t s, const char *call, const char *file,
                                         int line)
{
    return rtk_fault_make(s == CUBLAS_STATUS_ALLOC_FAILED ? STAP_ENOMEM : STAP_EDEVICE, call, file,
                          line, cublasGetStatusString(s));
}

static inline rtk_fault rtk_cufft_fault(cufftResult r, const char *call, const char *file, int line)
{
    char reason[32];
    snprintf(reason, sizeof reason, "cuFFT status %d", (int)r);
    return rtk_fault_make(r == CUFFT_ALLOC_FAILED ? STAP_ENOMEM : STAP_EDEVICE, call, file, line,
                          reason);
}

/* programs only (tests, tools; no library needed): the same message on stderr, exit(1) */
#define RTK_CU_EXIT(call)                                                                  \
    do {                                                                                   \
        cudaError_t rtk_e_ = (call);                                                       \
        if (rtk_e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s\n", rtk_cuda_fault(rtk_e_, #call, __FILE__, __LINE__).msg); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define RTK_TRY(expr)                                                                      \
    do {                                                                                   \
        int rtk_st_ = (expr);                                                              \
        if (rtk_st_) return rtk_st_;                                                       \
    } while (0)

#endif
