/* rtk_sync.cuh: synchronization the rtk kernels share — one-shot shared-memory barriers
 * (mbarrier), thread-block clusters (sm_90: ranks, distributed shared memory, st.async),
 * and the global timer (part of rtk_device.cuh). */
#ifndef RTK_SYNC_CUH
#define RTK_SYNC_CUH

#include <cuda_runtime.h>

namespace rtk {

/* ---- one-shot shared-memory barriers (mbarrier): a producer's stores released to the
 * consumers that wait on the barrier's first phase (parity 0), no block-wide barrier ---- */
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(unsigned long long *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count) : "memory");
}
/* release: this thread's earlier shared-memory stores are visible to whoever waits */
__device__ __forceinline__ void mbar_arrive(unsigned long long *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}
/* acquire: returns once the barrier's first phase has completed (try_wait may suspend the
 * thread until then; polling with test_wait measured 1 % slower, docs/kernels/design.md) */
__device__ __forceinline__ void mbar_wait0(unsigned long long *b)
{
    unsigned done;
    do {
#if __CUDA_ARCH__ >= 900
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(smem_addr(b))
                     : "memory");
#else
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(smem_addr(b))
                     : "memory");
#endif
    } while (!done);
}

/* ---- thread-block clusters (sm_90): one matrix's rows over the CTAs of a cluster ------
 * A CTA sends its partial sums into every CTA's shared memory with st.async, an
 * asynchronous store that completes bytes on the destination's mbarrier (complete_tx); the
 * destination announces the bytes it expects (arrive.expect_tx, the barrier's one arrival a
 * phase) and waits. No release/acquire at cluster scope (an L2 round trip each) on the way. */
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r = 0;
#if __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
    return r;
}
__device__ __forceinline__ unsigned cluster_size()
{
    unsigned r = 1;
#if __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
#endif
    return r;
}
/* the shared::cluster address of CTA `rank`'s copy of this CTA's shared variable p */
__device__ __forceinline__ unsigned cluster_addr(const void *p, unsigned rank)
{
    unsigned r = 0;
#if __CUDA_ARCH__ >= 900
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
#endif
    return r;
}
/* store v at a cluster address, completing its bytes on the barrier at cluster address bar */
__device__ __forceinline__ void st_async(unsigned addr, float2 v, unsigned bar)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(addr),
                 "f"(v.x), "f"(v.y), "r"(bar)
                 : "memory");
#endif
}
__device__ __forceinline__ void st_async(unsigned addr, float4 v, unsigned bar)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
                 "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(bar)
                 : "memory");
#endif
}
/* this phase of a local barrier completes when `bytes` more have arrived */
__device__ __forceinline__ void mbar_expect_tx(unsigned long long *b, unsigned bytes)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(b)), "r"(bytes) : "memory");
#endif
}
/* returns once the phase of the given parity has completed: polls with test_wait, never
 * suspending (a thread suspended in try_wait was measured 1.4-1.8x slower to notice bytes
 * completed by another SM; docs/kernels/journal.md "Clusters") */
__device__ __forceinline__ void mbar_wait_parity(unsigned long long *b, unsigned parity)
{
#if __CUDA_ARCH__ >= 900
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(smem_addr(b)), "r"(parity)
                     : "memory");
    } while (!done);
#endif
}
/* every thread of every CTA of the cluster (release / acquire) */
__device__ __forceinline__ void cluster_sync()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

} // namespace rtk

#endif
