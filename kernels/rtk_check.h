/* rtk_check.h: the one way host code of the CUDA backends (linalg/gpu_dispatch.cu, the GPU
 * engine, the GPU CFAR) checks a CUDA runtime, cuBLAS or cuFFT call. A failed call becomes
 * a stap_error naming the call, its file and line and the library's reason; out of memory
 * is STAP_ENOMEM, every other failure STAP_EDEVICE. The runtime's last-error state is cleared,
 * so that the kernels' launch checks (cudaGetLastError) do not see an older failure.
 *
 * Each macro needs `stap_error *err` in scope. RTK_CU / RTK_CUBLAS / RTK_CUFFT return the
 * status from the enclosing function; RTK_CU_GOTO stores it and jumps (functions with a
 * cleanup label); RTK_TRY returns any nonzero status of a call of ours; RTK_LAUNCH checks a
 * launch function of kernels/ (which returns its cudaError_t as an int). */
#ifndef RTK_CHECK_H
#define RTK_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static inline const char *rtk_check_file(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static inline int rtk_cuda_fail(stap_error *err, cudaError_t e, const char *call, const char *file,
                                int line)
{
    (void)cudaGetLastError();
    return stap_fail(err, e == cudaErrorMemoryAllocation ? STAP_ENOMEM : STAP_EDEVICE,
                     "%s failed (%s:%d): %s", call, rtk_check_file(file), line,
                     cudaGetErrorString(e));
}

static inline int rtk_cublas_fail(stap_error *err, cublasStatus_t s, const char *call,
                                  const char *file, int line)
{
    return stap_fail(err, s == CUBLAS_STATUS_ALLOC_FAILED ? STAP_ENOMEM : STAP_EDEVICE,
                     "%s failed (%s:%d): %s", call, rtk_check_file(file), line,
                     cublasGetStatusString(s));
}

static inline int rtk_cufft_fail(stap_error *err, cufftResult r, const char *call,
                                 const char *file, int line)
{
    return stap_fail(err, r == CUFFT_ALLOC_FAILED ? STAP_ENOMEM : STAP_EDEVICE,
                     "%s failed (%s:%d): cuFFT status %d", call, rtk_check_file(file), line,
                     (int)r);
}

#define RTK_CU(call)                                                                       \
    do {                                                                                   \
        cudaError_t rtk_e_ = (call);                                                       \
        if (rtk_e_ != cudaSuccess) return rtk_cuda_fail(err, rtk_e_, #call, __FILE__, __LINE__); \
    } while (0)
/* a launch function of kernels/ (its cudaError_t as an int) */
#define RTK_LAUNCH(call) RTK_CU((cudaError_t)(call))
#define RTK_CU_GOTO(call, st, label)                                                       \
    do {                                                                                   \
        cudaError_t rtk_e_ = (call);                                                       \
        if (rtk_e_ != cudaSuccess) {                                                       \
            (st) = rtk_cuda_fail(err, rtk_e_, #call, __FILE__, __LINE__);                  \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)
#define RTK_CUBLAS(call)                                                                   \
    do {                                                                                   \
        cublasStatus_t rtk_s_ = (call);                                                    \
        if (rtk_s_ != CUBLAS_STATUS_SUCCESS)                                               \
            return rtk_cublas_fail(err, rtk_s_, #call, __FILE__, __LINE__);                \
    } while (0)
#define RTK_CUFFT(call)                                                                    \
    do {                                                                                   \
        cufftResult rtk_r_ = (call);                                                       \
        if (rtk_r_ != CUFFT_SUCCESS) return rtk_cufft_fail(err, rtk_r_, #call, __FILE__, __LINE__); \
    } while (0)
/* programs only (tests, tools; no library needed): the same message on stderr, exit(1) */
#define RTK_CU_EXIT(call)                                                                  \
    do {                                                                                   \
        cudaError_t rtk_e_ = (call);                                                       \
        if (rtk_e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s failed (%s:%d): %s\n", #call, rtk_check_file(__FILE__),     \
                    __LINE__, cudaGetErrorString(rtk_e_));                                 \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define RTK_TRY(expr)                                                                      \
    do {                                                                                   \
        int rtk_st_ = (expr);                                                              \
        if (rtk_st_) return rtk_st_;                                                       \
    } while (0)

#endif
