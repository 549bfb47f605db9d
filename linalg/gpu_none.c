/* gpu_none.c: the GPU backend entry points of a build without CUDA. Each says why the
 * backend is missing; nothing is computed here. */
#include "la_internal.h"

static int no_cuda(rt_error *err)
{
    return rt_fail(err, RT_EUNSUPPORTED,
                   "rtstap was built without CUDA support");
}

int la_gpu_probe(rt_error *err) { return no_cuda(err); }
int la_gpu_select(int device, rt_error *err) { (void)device; return no_cuda(err); }
int la_gpu_init(la_ctx *ctx, rt_error *err) { return no_cuda(err); }
void la_gpu_fini(la_ctx *ctx) { (void)ctx; }
int la_gpu_qr(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda, ptrdiff_t stride_a,
              rt_error *err) { return no_cuda(err); }
int la_gpu_weights(la_ctx *ctx, int n, int batch, const cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const cf32 *V, cf32 *W, rt_error *err) { return no_cuda(err); }
int la_gpu_adaptive_weights(la_ctx *ctx, int m, int n, int batch, cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const cf32 *V, cf32 *W,
                            la_timing *timing, rt_error *err) { return no_cuda(err); }
int la_gpu_bench_qr(la_ctx *ctx, int m, int n, int batch, const cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const cf32 *V,
                    double *median_us, cf32 *R_out, rt_error *err) { return no_cuda(err); }

int la_gpu_variant_count(void) { return 0; }
int la_gpu_variant_query(int v, int m, int n, int batch, int nbeams, la_gpu_variant *out,
                         rt_error *err) { return no_cuda(err); }
int la_gpu_variant_choice(int m, int n, int batch, int nbeams, int *v, int *separate,
                         rt_error *err)
{
    return no_cuda(err);
}
int la_gpu_force_variant(la_ctx *ctx, int v, rt_error *err) { return no_cuda(err); }
int la_gpu_force_plan(la_ctx *ctx, int v, int separate, rt_error *err) { return no_cuda(err); }

#include "la_device.h"
int la_dev_weights_create(la_dev_weights **out, la_backend backend, int variant,
                          const rtk_gather *g, int m, int n, int batch, int nbeams,
                          const void *dV, void *dW, rtk_factor_flags *dbad,
                          unsigned long long *dphase, void *stream, rt_error *err)
{
    *out = NULL;
    return no_cuda(err);
}
int la_dev_weights_enqueue(la_dev_weights *w, void *ev_training, void *ev_qr, rt_error *err)
{
    return no_cuda(err);
}
int la_dev_weights_create_grouped(la_dev_weights **out, la_backend backend, int variant,
                                  int m, int n, int groups, int batch, int nbeams,
                                  const void *dV, long long vstride, void *dW,
                                  rtk_factor_flags *dbad, void *stream, rt_error *err)
{
    *out = NULL;
    return no_cuda(err);
}
void *la_dev_weights_matrices(la_dev_weights *w) { return NULL; }
int la_dev_weights_fused(const la_dev_weights *w) { return 0; }
int la_dev_weights_materializes(la_backend backend, int variant, int m, int n, int batch, int nbeams)
{
    return 1;
}
const char *la_dev_weights_describe(const la_dev_weights *w) { return "none"; }
size_t la_dev_weights_device_bytes(const la_dev_weights *w) { return 0; }
void la_dev_weights_destroy(la_dev_weights *w) { (void)w; }
