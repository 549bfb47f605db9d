/* fault.cu: rtk_malloc, cudaMalloc with the allocation-failure test hook, and the device
 * fault test hook (rtk.h). */
#include <atomic>
#include <cstdlib>

#include <cuda_runtime.h>

#include "rtk.h"

static std::atomic<long long> alloc_calls{0};

extern "C" int rtk_malloc(void **p, size_t bytes)
{
    static const long long fail_at = [] {
        const char *s = std::getenv("RTSTAP_TEST_FAIL_DEVICE_ALLOC");
        return s ? std::atoll(s) : 0LL;
    }();
    const long long n = ++alloc_calls;
    if (fail_at > 0 && n == fail_at) {
        *p = nullptr;
        return (int)cudaErrorMemoryAllocation;
    }
    return (int)cudaMalloc(p, bytes);
}

static __global__ void trap_kernel() { __trap(); }

extern "C" int rtk_fault_trap_maybe(void *stream)
{
    static const long long at = [] {
        const char *s = std::getenv("RTSTAP_TEST_DEVICE_TRAP");
        return s ? std::atoll(s) : 0LL;
    }();
    static std::atomic<long long> calls{0};
    if (at <= 0 || ++calls != at) return 0;
    trap_kernel<<<1, 1, 0, (cudaStream_t)stream>>>();
    return 1;
}
