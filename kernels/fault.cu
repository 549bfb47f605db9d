/* fault.cu: rtk_malloc, cudaMalloc with the allocation-failure test hook, and the device
 * fault test hook (rtk.h), both set by rtk_test_hooks_set. */
#include <atomic>

#include <cuda_runtime.h>

#include "rtk.h"

static std::atomic<long long> alloc_calls{0}, alloc_fail_at{0};
static std::atomic<long long> trap_calls{0}, trap_at{0};

extern "C" void rtk_test_hooks_set(long long fail_alloc_at, long long trap)
{
    alloc_fail_at = fail_alloc_at;
    alloc_calls = 0;
    trap_at = trap;
    trap_calls = 0;
}

extern "C" int rtk_malloc(void **p, size_t bytes)
{
    const long long fail_at = alloc_fail_at.load(std::memory_order_relaxed);
    if (fail_at > 0 && ++alloc_calls == fail_at) {
        *p = nullptr;
        return (int)cudaErrorMemoryAllocation;
    }
    return (int)cudaMalloc(p, bytes);
}

static __global__ void trap_kernel() { __trap(); }

extern "C" int rtk_fault_trap_maybe(void *stream)
{
    const long long at = trap_at.load(std::memory_order_relaxed);
    if (at <= 0 || ++trap_calls != at) return 0;
    trap_kernel<<<1, 1, 0, (cudaStream_t)stream>>>();
    return 1;
}
