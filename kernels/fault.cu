/* fault.cu: rtk_malloc, cudaMalloc with the allocation-failure test hook (rtk.h). */
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
