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

#include "la_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a table, or a type a table passes, changes. */
#define RTSTAP_GPU_ABI 1

/* linalg's GPU entry points (la_internal.h, linalg.h, la_device.h), as the GPU library
 * implements them */
typedef struct la_gpu_api {
    size_t size; /* sizeof(la_gpu_api) */
    int (*probe)(rt_error *err);
    int (*select)(int device, rt_error *err);
    int (*init)(la_ctx *ctx, rt_error *err);
    void (*fini)(la_ctx *ctx);
    int (*qr)(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda, ptrdiff_t stride_a,
              rt_error *err);
    int (*weights)(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const cf32 *V, cf32 *W, rt_error *err);
    int (*adaptive_weights)(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const cf32 *V, cf32 *W,
                            la_timing *timing, rt_error *err);
    int (*bench_qr)(la_ctx *ctx, int m, int n, int batch, const cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const cf32 *V, double *median_us,
                    cf32 *R_out, rt_error *err);
    int (*variant_count)(void);
    int (*variant_query)(int v, int m, int n, int batch, int nbeams, la_gpu_variant *out,
                         rt_error *err);
    int (*variant_choice)(int m, int n, int batch, int nbeams, int *v, int *separate,
                          rt_error *err);
    int (*force_variant)(la_ctx *ctx, int v, rt_error *err);
    int (*force_plan)(la_ctx *ctx, int v, int separate, rt_error *err);
    int (*dev_weights_materializes)(la_backend backend, int variant, int m, int n, int batch,
                                    int nbeams);
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
void *la_gpu_module_symbol(const char *name, rt_error *err);
/* Where the GPU library was loaded from ("" before, or when it was not). */
const char *la_gpu_module_path(void);

#ifdef __cplusplus
}
#endif

#endif
