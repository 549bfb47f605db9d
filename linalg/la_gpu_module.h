/* la_gpu_module.h: the boundary between librtstap and its GPU backends' library,
 * librtstap_gpu.so (kernels/, linalg/gpu_dispatch.cu and the GPU stages of stap/), which
 * librtstap loads with dlopen the first time a GPU backend is asked for (gpu_loader.c). So
 * librtstap, and every program that uses only its CPU backends, needs no CUDA library to
 * link or to run.
 *
 * The GPU library exports one entry per layer: rtstap_gpu_linalg_api (here) and
 * rtstap_gpu_stap_api (stap/engine/gpu_module.h), each taking the ABI number both sides
 * were built with and returning a table of its functions (NULL for another ABI). Not part
 * of the public API. */
#ifndef LA_GPU_MODULE_H
#define LA_GPU_MODULE_H

#include "rt_hidden.h"
#include "la_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a table, or a type a table passes, changes. */
#define RTSTAP_GPU_ABI 6 /* 3: the engine's submit takes NULL (resident); 4: tuning switches and test
                             hooks handed on, not read from the environment; 5: the adaptive
                             detectors' threshold and records in stap's host table; 6: the
                             context's factor may be STAP_QR_CHOLQR */

/* linalg's GPU entry points (la_internal.h, linalg.h, la_device.h), as the GPU library
 * implements them */
typedef struct la_gpu_api {
    size_t size; /* sizeof(la_gpu_api) */
    int (*probe)(stap_error *err);
    int (*select)(int device, stap_error *err);
    int (*init)(stap_la_ctx *ctx, stap_error *err);
    void (*fini)(stap_la_ctx *ctx);
    int (*qr)(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err);
    int (*weights)(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err);
    int (*adaptive_weights)(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                            stap_la_timing *timing, stap_error *err);
    int (*bench_qr)(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const stap_cf32 *V, double *median_us,
                    stap_cf32 *R_out, stap_error *err);
    int (*variant_count)(void);
    int (*variant_query)(int v, int m, int n, int batch, int nbeams, stap_la_gpu_variant *out,
                         stap_error *err);
    int (*variant_choice)(int m, int n, int batch, int nbeams, const stap_la_tuning *t, int *v,
                          int *separate, stap_error *err);
    int (*force_variant)(stap_la_ctx *ctx, int v, stap_error *err);
    int (*force_plan)(stap_la_ctx *ctx, int v, int separate, stap_error *err);
    int (*dev_weights_materializes)(stap_backend backend, int variant, const stap_la_tuning *tune,
                                    int m, int n, int batch, int nbeams);
    int (*count)(int *devices, stap_error *err);
    void (*test_hooks)(long long fail_alloc_at, long long trap_at); /* rtk_test_hooks_set */
} la_gpu_api;

#define LA_GPU_LINALG_ENTRY "rtstap_gpu_linalg_api"
typedef const la_gpu_api *(*la_gpu_linalg_entry)(int abi);

/* The GPU library's symbol `name`, the library loaded on the first call (once per
 * process); NULL with the reason in err (built without CUDA, the library not found or not
 * loadable, another ABI). Where it is looked for: $RTSTAP_GPU_LIBRARY (a path) when set,
 * and nowhere else; else beside the object that holds librtstap's code (librtstap.so, or
 * the program linked with librtstap.a), or in the library folder next to that program's
 * (bin/../lib); else by the dynamic loader's own search; else in the library folder rtstap
 * was installed to. */
RT_INTERNAL void *stap_la_gpu_module_symbol(const char *name, stap_error *err);
/* Where the GPU library was loaded from ("" before, or when it was not). */
RT_INTERNAL const char *stap_la_gpu_module_path(void);
/* The GPU library's test hooks (rtk_test_hooks_set), handed on now or when it is loaded
 * (stap_test_hooks_set). */
RT_INTERNAL void stap_la_gpu_test_hooks(long long fail_alloc_at, long long trap_at);

#ifdef __cplusplus
}
#endif

#endif
