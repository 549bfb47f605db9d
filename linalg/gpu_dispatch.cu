/* gpu_dispatch.cu: the gpu backend (rtstap's own kernels, kernels/rtk.h) and the cublas
 * backend (cublasCgeqrfBatched + 2 x cublasCtrsmBatched, the vendor baseline) of linalg/:
 * host <-> device copies, device buffers cached in the context, CUDA-event timing.
 * Every CUDA and cuBLAS call is checked; failures become STAP_EDEVICE naming the call,
 * file:line and the CUDA error string. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rtk.h"
#include "la_gpu_check.h"
extern "C" {
#include "la_gpu_module.h"
}

namespace {

/* ---- state ------------------------------------------------------------------------- */
struct dbuf {
    void *p = nullptr;
    size_t cap = 0;
};

struct gpu_state {
    stap_backend backend;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    cudaEvent_t ev[6] = {};
    int smem_limit = 0;
    int forced = -1;
    int forced_sep = 0; /* stap_la_gpu_force_plan: the forced variant's QR, then the weight kernel */
    dbuf a, sets, w, v, r; /* work matrices, bench sets, weights, steering, R (weights) */
    rtk_factor_flags *bad = nullptr; /* bad diagonal, conditioning        */
    unsigned long long *phase = nullptr;
    /* cuBLAS pointer arrays, rebuilt when the key changes */
    dbuf aptr, tptr, wptr, tau;
    const void *key_a = nullptr, *key_w = nullptr;
    int key_m = 0, key_n = 0, key_batch = 0, key_ld = 0, key_nbeams = 0;
    /* the last dispatch choice (kind, m, n, batch, nbeams) -> variant, one per kind (QR
       alone, fused: a QR + weights call that does not fuse asks for both): the model
       queries every row's occupancy, which per call would cost host time */
    int sel_key[2][6] = {{-1, 0, 0, 0, 0, 0}, {-1, 0, 0, 0, 0, 0}}, sel_v[2] = {-1, -1};
    int sel_sep[2] = {0, 0};
    /* CholeskyQR (issue 47): its passes for the next device_qr (0: Householder; 1: cholqr,
       2: cholqr2; stap_la_qr_resolve), its fail list (batch + 1 ints), and the batch of the
       last device_cholqr whose counts are still to be read (0: none) */
    int cq_passes = 0;
    dbuf cq_list;
    int cq_batch = 0;
    const stap_la_tuning *tune = nullptr; /* the context's switches (stap_la_set_tuning) */
};

gpu_state *state(stap_la_ctx *ctx) { return static_cast<gpu_state *>(ctx->gpu); }
int cq_passes_of(stap_qr_method q) { return q == STAP_QR_CHOLQR2 ? 2 : q == STAP_QR_CHOLQR ? 1 : 0; }

int grow(dbuf *b, size_t bytes, const char *what, stap_error *err)
{
    if (b->cap >= bytes) return STAP_OK;
    if (b->p) LA_CU(cudaFree(b->p));
    b->p = nullptr;
    b->cap = 0;
    cudaError_t e = (cudaError_t)rtk_malloc(&b->p, bytes);
    if (e != cudaSuccess) {
        b->p = nullptr;
        return stap_fail(err, e == cudaErrorMemoryAllocation ? STAP_ENOMEM : STAP_EDEVICE,
                         "cudaMalloc of %zu bytes for the %s failed at %s:%d: %s", bytes, what,
                         __FILE__, __LINE__, cudaGetErrorString(e));
    }
    b->cap = bytes;
    return STAP_OK;
}

/* Copy `batch` matrices of rows x n (host: leading dimension hld, stride hstride;
 * device: packed with leading dimension dld, stride dld*n). to_device picks the way. */
int copy_matrices(gpu_state *s, bool to_device, void *host, int hld, ptrdiff_t hstride,
                  void *dev, int dld, int rows, int n, int batch, stap_error *err)
{
    const size_t es = sizeof(float2);
    const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    const bool uniform = batch == 1 || hstride == (ptrdiff_t)hld * n;
    const int groups = uniform ? 1 : batch, height = uniform ? n * batch : n;
    for (int k = 0; k < groups; k++) {
        char *h = (char *)host + (size_t)k * hstride * es;
        char *d = (char *)dev + (size_t)k * dld * n * es;
        if (to_device)
            LA_CU(cudaMemcpy2DAsync(d, dld * es, h, hld * es, rows * es, height, kind, s->stream));
        else
            LA_CU(cudaMemcpy2DAsync(h, hld * es, d, dld * es, rows * es, height, kind, s->stream));
    }
    return STAP_OK;
}

/* The current device's per-block shared-memory limit (opt-in), which decides which QR
 * variants fit (rtk_qr_fits). */
int device_smem_limit(int *smem, stap_error *err)
{
    int dev = 0;
    LA_CU(cudaGetDevice(&dev));
    LA_CU(cudaDeviceGetAttribute(smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return STAP_OK;
}

float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.f;
    return cudaEventElapsedTime(&ms, a, b) == cudaSuccess ? ms : 0.f;
}

/* The plan for a batch of m x n on this context: the forced variant, else the one the
 * model predicts fastest (rtk_qr_plan_batch; kind 0 = QR alone, 1 = QR + nbeams weights);
 * *sep = 1: the QR alone with *v, then the weight kernel (not one fused kernel). */
int pick_variant(gpu_state *s, int kind, int m, int n, int batch, int nbeams, int *v, int *sep,
                 stap_error *err)
{
    *sep = 0;
    if (s->forced >= 0) {
        if (!rtk_qr_fits(s->forced, m, n, s->smem_limit))
            return stap_fail(err, STAP_EINVAL, "gpu QR variant %s cannot factor %dx%d",
                             rtk_qr_variant_get(s->forced)->name, m, n);
        *v = s->forced;
        *sep = s->forced_sep;
        return STAP_OK;
    }
    const int key[6] = {kind, m, n, batch, nbeams, s->tune->qr_dispatch}, c = kind ? 1 : 0;
    if (memcmp(key, s->sel_key[c], sizeof key) != 0) {
        s->sel_v[c] = rtk_qr_plan_batch(kind, m, n, batch, nbeams, s->smem_limit, s->tune->qr_dispatch,
                                        &s->sel_sep[c]);
        memcpy(s->sel_key[c], key, sizeof key);
    }
    *v = s->sel_v[c];
    *sep = s->sel_sep[c];
    if (*v < 0) return stap_fail(err, STAP_EINVAL, "no gpu QR variant for %dx%d", m, n);
    return STAP_OK;
}

/* cuBLAS pointer arrays for matrices at base (m x n, ld, packed) and, when w != NULL,
 * the right-hand-side blocks of the weights (n x nbeams each). Built once per shape. */
int cublas_pointers(gpu_state *s, void *base, int m, int n, int ld, int batch, void *w,
                    int nbeams, stap_error *err)
{
    if (s->key_a == base && s->key_m == m && s->key_n == n && s->key_ld == ld &&
        s->key_batch == batch && (!w || (s->key_w == w && s->key_nbeams == nbeams)))
        return STAP_OK;
    const size_t pb = (size_t)batch * sizeof(void *);
    RTK_TRY(grow(&s->aptr, pb, "cuBLAS matrix pointers", err));
    RTK_TRY(grow(&s->tptr, pb, "cuBLAS tau pointers", err));
    RTK_TRY(grow(&s->wptr, pb, "cuBLAS right-hand-side pointers", err));
    RTK_TRY(grow(&s->tau, (size_t)batch * n * sizeof(float2), "cuBLAS tau", err));
    void **h = (void **)malloc(3 * pb);
    if (!h) return stap_fail(err, STAP_ENOMEM, "out of memory for %d cuBLAS pointers", 3 * batch);
    for (int k = 0; k < batch; k++) {
        h[k] = (char *)base + (size_t)k * ld * n * sizeof(float2);
        h[batch + k] = (char *)s->tau.p + (size_t)k * n * sizeof(float2);
        h[2 * batch + k] = w ? (char *)w + (size_t)k * nbeams * n * sizeof(float2) : nullptr;
    }
    cudaError_t e = cudaMemcpyAsync(s->aptr.p, h, pb, cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->tptr.p, h + batch, pb, cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->wptr.p, h + 2 * batch, pb, cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s->stream);
    free(h);
    if (e != cudaSuccess)
        return stap_fail(err, STAP_EDEVICE, "copying cuBLAS pointer arrays failed at %s:%d: %s",
                         __FILE__, __LINE__, cudaGetErrorString(e));
    s->key_a = base;
    s->key_w = w;
    s->key_m = m;
    s->key_n = n;
    s->key_ld = ld;
    s->key_batch = batch;
    s->key_nbeams = nbeams;
    return STAP_OK;
}

/* ---- the computations on device data (packed: ld = m, stride = m*n) ----------------- */

/* CholeskyQR (one or two passes) with its guard, all on the stream: the matrices it leaves
 * (breakdown, a diagonal ratio under STAP_CHOLQR2_MIN_RATIO, or an R past a float's range)
 * are factored by Householder in place by rtk_qr_guard_launch, reading the fail list on the
 * device (no read-back mid-call: the engine's graphs use the same pair). The list's count is
 * read with the call's results (cholesky_counts). */
static int device_cholqr(gpu_state *s, int m, int n, int batch, void *dA, stap_error *err)
{
    RTK_TRY(grow(&s->cq_list, (size_t)(batch + 1) * sizeof(int), "CholeskyQR fail list", err));
    LA_CU(cudaMemsetAsync(s->cq_list.p, 0, sizeof(int), s->stream));
    const long long stride = (long long)m * n;
    LA_LAUNCH(rtk_cholqr2_launch(m, n, batch, dA, m, stride, s->cq_passes, (float)STAP_CHOLQR2_MIN_RATIO,
                                  (int *)s->cq_list.p, s->stream));
    LA_LAUNCH(rtk_qr_guard_launch(m, n, batch, dA, m, stride, (const int *)s->cq_list.p, nullptr,
                                  s->smem_limit, s->stream));
    s->cq_batch = batch;
    return STAP_OK;
}

/* The last device_cholqr's counts into ctx (kept by CholeskyQR, refactored by its guard),
 * once the stream has run it; nothing when the last factor was Householder's. Waits. */
static int cholesky_counts(stap_la_ctx *ctx, gpu_state *s, stap_error *err)
{
    if (!s->cq_batch) return STAP_OK;
    int count = 0;
    LA_CU(cudaMemcpyAsync(&count, s->cq_list.p, sizeof count, cudaMemcpyDeviceToHost, s->stream));
    LA_CU(cudaStreamSynchronize(s->stream));
    ctx->qr_cholqr2 += s->cq_batch - count;
    ctx->qr_guarded += count;
    s->cq_batch = 0;
    return STAP_OK;
}

int device_qr(gpu_state *s, int m, int n, int batch, void *dA, stap_error *err)
{
    s->cq_batch = 0;
    if (s->backend == STAP_BACKEND_GPU && s->cq_passes && rtk_cholqr2_fits(m, n, s->cq_passes, s->smem_limit))
        return device_cholqr(s, m, n, batch, dA, err);
    if (s->backend == STAP_BACKEND_CUBLAS) {
        RTK_TRY(cublas_pointers(s, dA, m, n, m, batch, nullptr, 0, err));
        int info = 0;
        LA_CUBLAS(cublasCgeqrfBatched(s->blas, m, n, (cuComplex **)s->aptr.p, m,
                               (cuComplex **)s->tptr.p, &info, batch));
        if (info != 0)
            return stap_fail(err, STAP_EDEVICE, "cublasCgeqrfBatched rejected parameter %d", -info);
        return STAP_OK;
    }
    int v;
    int sep = 0;
    RTK_TRY(pick_variant(s, 0, m, n, batch, 0, &v, &sep, err));
    LA_LAUNCH(rtk_qr_launch(v, m, n, batch, dA, m, (long long)m * n, s->stream));
    return STAP_OK;
}

/* weights from R (upper n x n of the packed matrices at dR, leading dimension ldr) */
int device_weights(gpu_state *s, int n, int batch, void *dR, int ldr, int nbeams, stap_error *err)
{
    const long long stride = (long long)ldr * n;
    if (s->backend == STAP_BACKEND_CUBLAS) {
        RTK_TRY(cublas_pointers(s, dR, ldr, n, ldr, batch, s->w.p, nbeams, err));
        LA_LAUNCH(rtk_fill_rhs_launch(n, batch, nbeams, s->v.p, s->w.p, s->stream));
        const cuComplex one = make_cuComplex(1.f, 0.f);
        LA_CUBLAS(cublasCtrsmBatched(s->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C,
                              CUBLAS_DIAG_NON_UNIT, n, nbeams, &one,
                              (const cuComplex *const *)s->aptr.p, ldr,
                              (cuComplex *const *)s->wptr.p, n, batch));
        LA_CUBLAS(cublasCtrsmBatched(s->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, n, nbeams, &one,
                              (const cuComplex *const *)s->aptr.p, ldr,
                              (cuComplex *const *)s->wptr.p, n, batch));
        LA_LAUNCH(rtk_normalize_launch(n, batch, dR, ldr, stride, nbeams, s->v.p, s->w.p, s->bad,
                                 s->stream));
        return STAP_OK;
    }
    if (n > RTK_WEIGHTS_MAX_N)
        return stap_fail(err, STAP_EINVAL, "gpu weights: n=%d exceeds the solver's limit %d", n,
                         RTK_WEIGHTS_MAX_N);
    LA_LAUNCH(rtk_weights_launch(n, batch, dR, ldr, stride, nbeams, s->v.p, s->w.p, s->bad, s->stream));
    return STAP_OK;
}

/* QR + weights on the packed matrices in s->a (R is left there only when not fused); *fused
 * says whether one kernel did both.
 * Events ev[e0] (before), ev[e0+1] (QR done, when not fused), ev[e0+2] (after). */
int device_qr_weights(gpu_state *s, int m, int n, int batch, int nbeams, bool *fused, int e0,
                      stap_error *err)
{
    *fused = false;
    if (s->backend == STAP_BACKEND_GPU && !(s->cq_passes && rtk_cholqr2_fits(m, n, s->cq_passes, s->smem_limit))) {
        int v, sep = 0;
        RTK_TRY(pick_variant(s, 1, m, n, batch, nbeams, &v, &sep, err));
        if (rtk_qr_variant_get(v)->fused_weights && !sep) {
            *fused = true;
            LA_CU(cudaEventRecord(s->ev[e0], s->stream));
            LA_LAUNCH(rtk_qr_weights_launch(v, m, n, batch, s->a.p, m, (long long)m * n,
                                      nbeams, s->v.p, s->w.p, s->bad, s->phase, s->tune->fused_subst,
                                      s->stream));
            LA_CU(cudaEventRecord(s->ev[e0 + 1], s->stream));
            LA_CU(cudaEventRecord(s->ev[e0 + 2], s->stream));
            return STAP_OK;
        }
    }
    LA_CU(cudaEventRecord(s->ev[e0], s->stream));
    RTK_TRY(device_qr(s, m, n, batch, s->a.p, err));
    LA_CU(cudaEventRecord(s->ev[e0 + 1], s->stream));
    RTK_TRY(device_weights(s, n, batch, s->a.p, m, nbeams, err));
    LA_CU(cudaEventRecord(s->ev[e0 + 2], s->stream));
    return STAP_OK;
}

int check_bad(gpu_state *s, stap_error *err)
{
    rtk_factor_flags f;
    LA_CU(cudaMemcpyAsync(&f, s->bad, sizeof f, cudaMemcpyDeviceToHost, s->stream));
    LA_CU(cudaStreamSynchronize(s->stream));
    if (f.bad_item != RTK_NO_BAD)
        return stap_fail(err, STAP_ENUMERIC, "singular triangular factor in batch item %d", f.bad_item);
    return STAP_OK;
}

int upload_steering(gpu_state *s, int n, int batch, int nbeams, const stap_cf32 *V, stap_error *err)
{
    RTK_TRY(grow(&s->v, (size_t)nbeams * n * sizeof(float2), "steering vectors", err));
    RTK_TRY(grow(&s->w, (size_t)batch * nbeams * n * sizeof(float2), "weights", err));
    LA_CU(cudaMemcpyAsync(s->v.p, V, (size_t)nbeams * n * sizeof(float2), cudaMemcpyHostToDevice,
                       s->stream));
    LA_CU(cudaMemsetAsync(s->bad, 0x7f, sizeof(rtk_factor_flags), s->stream));
    return STAP_OK;
}

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

} // namespace

/* ---- linalg's GPU entry points ------------------------------------------------------ */

/* Why CUDA cannot be used, in plain words first and CUDA's own words in parentheses
 * (e.g. on a machine without an NVIDIA driver CUDA says "CUDA driver version is
 * insufficient for CUDA runtime version"). */
static int cuda_unusable(cudaError_t e, stap_error *err)
{
    const char *detail = cudaGetErrorString(e);
    if (e == cudaErrorInsufficientDriver) {
        int drv = 0, rtv = 0;
        cudaDriverGetVersion(&drv); /* 0 when no driver is installed */
        cudaRuntimeGetVersion(&rtv);
        if (drv == 0) return stap_fail(err, STAP_EDEVICE, "no CUDA driver (%s)", detail);
        return stap_fail(err, STAP_EDEVICE, "CUDA driver too old: it supports CUDA %d.%d, rtstap "
                         "was built for %d.%d (%s)", drv / 1000, drv % 1000 / 10, rtv / 1000,
                         rtv % 1000 / 10, detail);
    }
    if (e == cudaErrorNoDevice) return stap_fail(err, STAP_EDEVICE, "no CUDA device (%s)", detail);
    return stap_fail(err, STAP_EDEVICE, "CUDA not usable (%s)", detail);
}

/* How many devices CUDA sees, or an error saying why none can be used. */
static int device_count(int *count, stap_error *err)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *count = 0;
        return cuda_unusable(e, err);
    }
    if (*count < 1) return cuda_unusable(cudaErrorNoDevice, err);
    return STAP_OK;
}

extern "C" int stap_la_gpu_probe(stap_error *err)
{
    int count;
    return device_count(&count, err);
}

extern "C" int stap_la_gpu_count(int *devices, stap_error *err) { return device_count(devices, err); }

extern "C" int stap_la_gpu_select(int device, stap_error *err)
{
    int count;
    int st = device_count(&count, err);
    if (st) return st;
    if (device < 0 || device >= count) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        return stap_fail(err, STAP_EINVAL, "GPU device %d does not exist: CUDA sees %d device%s "
                         "(0..%d)%s%s", device, count, count == 1 ? "" : "s", count - 1,
                         vis ? " with CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "");
    }
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return stap_fail(err, STAP_EDEVICE, "cannot use GPU device %d: %s", device,
                         cudaGetErrorString(e));
    }
    return STAP_OK;
}

extern "C" void stap_la_gpu_fini(stap_la_ctx *ctx)
{
    gpu_state *s = state(ctx);
    if (!s) return;
    if (s->stream) cudaStreamSynchronize(s->stream);
    dbuf *bufs[] = {&s->a, &s->sets, &s->w, &s->v, &s->r, &s->aptr, &s->tptr, &s->wptr, &s->tau, &s->cq_list};
    for (dbuf *b : bufs)
        if (b->p) cudaFree(b->p);
    if (s->bad) cudaFree(s->bad);
    if (s->phase) cudaFree(s->phase);
    for (cudaEvent_t e : s->ev)
        if (e) cudaEventDestroy(e);
    if (s->blas) cublasDestroy(s->blas);
    if (s->stream) cudaStreamDestroy(s->stream);
    delete s;
    ctx->gpu = nullptr;
}

extern "C" int stap_la_gpu_init(stap_la_ctx *ctx, stap_error *err)
{
    gpu_state *s = new (std::nothrow) gpu_state;
    if (!s) return stap_fail(err, STAP_ENOMEM, "out of memory for the GPU backend state");
    s->backend = ctx->backend;
    s->tune = &ctx->tune;
    ctx->gpu = s;
    int st = [&]() -> int {
        RTK_TRY(device_smem_limit(&s->smem_limit, err));
        LA_CU(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
        for (cudaEvent_t &e : s->ev) LA_CU(cudaEventCreate(&e));
        LA_CU((cudaError_t)rtk_malloc((void **)&s->bad, sizeof(rtk_factor_flags)));
        LA_CU((cudaError_t)rtk_malloc((void **)&s->phase, 3 * sizeof(unsigned long long)));
        if (s->backend == STAP_BACKEND_CUBLAS) {
            LA_CUBLAS(cublasCreate(&s->blas));
            LA_CUBLAS(cublasSetStream(s->blas, s->stream));
        }
        return STAP_OK;
    }();
    if (st) stap_la_gpu_fini(ctx);
    return st;
}

extern "C" int stap_la_gpu_variant_count(void) { return rtk_qr_variant_count(); }

extern "C" int stap_la_gpu_variant_query(int v, int m, int n, int batch, int nbeams, stap_la_gpu_variant *out,
                                         stap_error *err)
{
    const rtk_qr_variant *info = rtk_qr_variant_get(v);
    if (!info || !out || m < n || n < 1 || batch < 1 || nbeams < 0)
        return stap_fail(err, STAP_EINVAL, "gpu variant query: bad variant %d or shape %dx%dx%d", v,
                         m, n, batch);
    int smem = 0;
    RTK_TRY(device_smem_limit(&smem, err));
    *out = stap_la_gpu_variant{};
    snprintf(out->name, sizeof out->name, "%s", info->name);
    out->fits = rtk_qr_fits(v, m, n, smem);
    out->fused = info->fused_weights;
    out->predicted_us = -1;
    out->separate_us = -1;
    double us = 0;
    const int kind = nbeams > 0 && info->fused_weights ? 1 : 0;
    if (out->fits && (kind || nbeams == 0) && rtk_qr_predict(v, kind, m, n, batch, nbeams, &us) == 0)
        out->predicted_us = us;
    if (out->fits && nbeams > 0 && rtk_qr_predict_separate(v, 1, m, n, batch, nbeams, &us) == 0)
        out->separate_us = us;
    (void)cudaGetLastError();
    return STAP_OK;
}

extern "C" int stap_la_gpu_variant_choice(int m, int n, int batch, int nbeams, const stap_la_tuning *t,
                                          int *v, int *separate, stap_error *err)
{
    if (m < n || n < 1 || batch < 1 || nbeams < 0)
        return stap_fail(err, STAP_EINVAL, "gpu variant choice: bad shape %dx%dx%d", m, n, batch);
    int smem = 0, sep = 0;
    RTK_TRY(device_smem_limit(&smem, err));
    *v = rtk_qr_plan_batch(nbeams > 0 ? 1 : 0, m, n, batch, nbeams, smem, t ? t->qr_dispatch : 0, &sep);
    if (separate) *separate = sep;
    return STAP_OK;
}

extern "C" int stap_la_gpu_force_plan(stap_la_ctx *ctx, int v, int separate, stap_error *err)
{
    if (!ctx || ctx->backend != STAP_BACKEND_GPU || !ctx->gpu)
        return stap_fail(err, STAP_EINVAL, "forcing a QR variant needs a gpu-backend context");
    if (v < -1 || v >= rtk_qr_variant_count())
        return stap_fail(err, STAP_EINVAL, "QR variant %d out of range (0..%d)", v,
                         rtk_qr_variant_count() - 1);
    state(ctx)->forced = v;
    state(ctx)->forced_sep = v >= 0 && separate;
    return STAP_OK;
}

extern "C" int stap_la_gpu_force_variant(stap_la_ctx *ctx, int v, stap_error *err)
{
    return stap_la_gpu_force_plan(ctx, v, 0, err);
}

extern "C" int stap_la_gpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                         ptrdiff_t stride_a, stap_error *err)
{
    gpu_state *s = state(ctx);
    RTK_TRY(grow(&s->a, (size_t)m * n * batch * sizeof(float2), "QR matrices", err));
    RTK_TRY(copy_matrices(s, true, A, lda, stride_a, s->a.p, m, m, n, batch, err));
    s->cq_passes = cq_passes_of(ctx->qr == STAP_QR_AUTO ? la_qr_auto_gpu(m, n) : ctx->qr);
    RTK_TRY(device_qr(s, m, n, batch, s->a.p, err));
    RTK_TRY(copy_matrices(s, false, A, lda, stride_a, s->a.p, m, n, n, batch, err));
    LA_CU(cudaStreamSynchronize(s->stream));
    return cholesky_counts(ctx, s, err);
}

extern "C" int stap_la_gpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr,
                              ptrdiff_t stride_r, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                              stap_error *err)
{
    gpu_state *s = state(ctx);
    RTK_TRY(grow(&s->r, (size_t)n * n * batch * sizeof(float2), "triangular factors", err));
    RTK_TRY(upload_steering(s, n, batch, nbeams, V, err));
    RTK_TRY(copy_matrices(s, true, (void *)R, ldr, stride_r, s->r.p, n, n, n, batch, err));
    RTK_TRY(device_weights(s, n, batch, s->r.p, n, nbeams, err));
    RTK_TRY(check_bad(s, err));
    LA_CU(cudaMemcpyAsync(W, s->w.p, (size_t)batch * nbeams * n * sizeof(float2),
                       cudaMemcpyDeviceToHost, s->stream));
    LA_CU(cudaStreamSynchronize(s->stream));
    return STAP_OK;
}

/* Timing: transfer_ms = host->device + device->host copies; qr_ms and weights_ms from
 * events around the kernels. When one fused kernel does both (gpu backend, register
 * variants), its time is split by block 0's %globaltimer readings at the start, at the
 * end of the factorization and at the end of the solves. */
extern "C" int stap_la_gpu_adaptive_weights(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                                       ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                                       stap_la_timing *timing, stap_error *err)
{
    gpu_state *s = state(ctx);
    if (s->backend == STAP_BACKEND_GPU && n > RTK_WEIGHTS_MAX_N)
        return stap_fail(err, STAP_EINVAL, "gpu weights: n=%d exceeds the solver's limit %d", n,
                         RTK_WEIGHTS_MAX_N);
    RTK_TRY(grow(&s->a, (size_t)m * n * batch * sizeof(float2), "QR matrices", err));
    s->cq_passes = cq_passes_of(ctx->qr == STAP_QR_AUTO ? la_qr_auto_gpu(m, n) : ctx->qr);
    LA_CU(cudaEventRecord(s->ev[0], s->stream));
    RTK_TRY(upload_steering(s, n, batch, nbeams, V, err));
    RTK_TRY(copy_matrices(s, true, A, lda, stride_a, s->a.p, m, m, n, batch, err));
    LA_CU(cudaMemsetAsync(s->phase, 0, 3 * sizeof(unsigned long long), s->stream));
    bool fused;
    RTK_TRY(device_qr_weights(s, m, n, batch, nbeams, &fused, 1, err));
    LA_CU(cudaMemcpyAsync(W, s->w.p, (size_t)batch * nbeams * n * sizeof(float2),
                       cudaMemcpyDeviceToHost, s->stream));
    LA_CU(cudaEventRecord(s->ev[4], s->stream));
    unsigned long long ph[3] = {0, 0, 0};
    LA_CU(cudaMemcpyAsync(ph, s->phase, sizeof ph, cudaMemcpyDeviceToHost, s->stream));
    RTK_TRY(check_bad(s, err)); /* synchronizes */
    RTK_TRY(cholesky_counts(ctx, s, err));
    if (timing) {
        const double up = elapsed(s->ev[0], s->ev[1]), down = elapsed(s->ev[3], s->ev[4]);
        const double qr = elapsed(s->ev[1], s->ev[2]), wt = elapsed(s->ev[2], s->ev[3]);
        timing->transfer_ms = up + down;
        if (fused) {
            const double total = qr + wt;
            double f = 0.0;
            if (ph[2] > ph[1] && ph[1] > ph[0]) f = (double)(ph[2] - ph[1]) / (double)(ph[2] - ph[0]);
            timing->qr_ms = total * (1.0 - f);
            timing->weights_ms = total * f;
        } else {
            timing->qr_ms = qr;
            timing->weights_ms = wt;
        }
    }
    return STAP_OK;
}

/* stap_la_bench_qr on the device: the nsets input sets are uploaded once; each run copies
 * one set into the work buffer (device to device) outside the timed region, then CUDA
 * events bracket the factorization (or factorization + weights). A spin kernel queued
 * first keeps the GPU busy while the host queues the copy, the events and the launches,
 * so the host's launch latency is not timed. One warm-up run, then the median. */
extern "C" int stap_la_gpu_bench_qr(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                               int repeat, int with_weights, int nbeams, const stap_cf32 *V,
                               double *median_us, stap_cf32 *R_out, stap_error *err)
{
    gpu_state *s = state(ctx);
    const size_t one = (size_t)m * n * batch * sizeof(float2);
    s->cq_passes = cq_passes_of(ctx->qr == STAP_QR_AUTO ? la_qr_auto_gpu(m, n) : ctx->qr);
    RTK_TRY(grow(&s->sets, one * nsets, "benchmark input sets", err));
    RTK_TRY(grow(&s->a, one, "QR matrices", err));
    LA_CU(cudaMemcpyAsync(s->sets.p, sets, one * nsets, cudaMemcpyHostToDevice, s->stream));
    if (with_weights) RTK_TRY(upload_steering(s, n, batch, nbeams, V, err));
    double *times = (double *)malloc((size_t)repeat * sizeof(double));
    if (!times) return stap_fail(err, STAP_ENOMEM, "bench: out of memory");
    int st = STAP_OK;
    for (int r = -1; r < repeat && !st; r++) { /* r = -1: warm-up, not timed */
        st = [&]() -> int {
            const int set = (r + nsets) % nsets;
            LA_LAUNCH(rtk_spin_launch(200, s->stream));
            LA_CU(cudaMemcpyAsync(s->a.p, (char *)s->sets.p + one * set, one,
                                 cudaMemcpyDeviceToDevice, s->stream));
            bool fused;
            if (with_weights) {
                LA_CU(cudaMemsetAsync(s->bad, 0x7f, sizeof(rtk_factor_flags), s->stream));
                RTK_TRY(device_qr_weights(s, m, n, batch, nbeams, &fused, 0, err));
                RTK_TRY(check_bad(s, err));
                if (r >= 0) times[r] = 1e3 * elapsed(s->ev[0], s->ev[2]);
            } else {
                LA_CU(cudaEventRecord(s->ev[0], s->stream));
                RTK_TRY(device_qr(s, m, n, batch, s->a.p, err));
                LA_CU(cudaEventRecord(s->ev[1], s->stream));
                LA_CU(cudaEventSynchronize(s->ev[1]));
                if (r >= 0) times[r] = 1e3 * elapsed(s->ev[0], s->ev[1]);
            }
            return STAP_OK;
        }();
    }
    if (!st && R_out) { /* R of set 0, from a plain factorization */
        st = [&]() -> int {
            LA_CU(cudaMemcpyAsync(s->a.p, s->sets.p, one, cudaMemcpyDeviceToDevice, s->stream));
            RTK_TRY(device_qr(s, m, n, batch, s->a.p, err));
            LA_CU(cudaMemcpyAsync(R_out, s->a.p, one, cudaMemcpyDeviceToHost, s->stream));
            LA_CU(cudaStreamSynchronize(s->stream));
            return STAP_OK;
        }();
    }
    if (!st) {
        qsort(times, (size_t)repeat, sizeof *times, cmp_double);
        *median_us = repeat % 2 ? times[repeat / 2]
                                : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    }
    free(times);
    return st;
}

/* ---- la_device.h: QR + weights on device data, on the caller's stream ----------------- */
#include "la_device.h"

struct la_dev_weights {
    stap_backend backend;
    int variant = -1; /* gpu */
    bool fused = false;
    rtk_gather g;
    int m = 0, n = 0, batch = 0, nbeams = 0;
    int groups = 0;         /* factors in T: batch, or la_dev_weights_create_grouped's */
    long long vstride = 0;  /* steering vectors' stride between groups of items          */
    bool caller_matrices = false; /* grouped: the caller writes T before each enqueue */
    const void *dV = nullptr;
    void *dW = nullptr;
    rtk_factor_flags *dbad = nullptr;
    unsigned long long *dphase = nullptr;
    stap_la_tuning tune = {0, 0};
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    dbuf T, aptr, tptr, wptr, tau; /* materialized matrices; cuBLAS arrays */
    dbuf fptr;                     /* grouped cuBLAS: batch pointers to the factors */
    dbuf Rk;                       /* fused, factors kept: batch x n x n (la_dev_weights_keep_factors) */
    bool keep = false, cq_fused = false; /* cq_fused: plain cholqr in one kernel (cholqr_fused_enqueue) */
    int cq_passes = 0;             /* gpu: CholeskyQR (1: cholqr, 2: cholqr2) guarded; 0: Householder */
    int smem_limit = 0;
    dbuf cq_list;                  /* the CholeskyQR fail list: groups + 1 ints */
    char desc[128] = {0};
};

extern "C" void la_dev_weights_destroy(la_dev_weights *w)
{
    if (!w) return;
    dbuf *bufs[] = {&w->T, &w->aptr, &w->tptr, &w->wptr, &w->tau, &w->fptr, &w->Rk, &w->cq_list};
    for (dbuf *b : bufs)
        if (b->p) cudaFree(b->p);
    if (w->blas) cublasDestroy(w->blas);
    delete w;
}

/* The cuBLAS baseline's handle and pointer arrays: G matrices in T (aptr, tptr: geqrf), and
 * for the batch's items the factor each solves (fptr = factor k % G) and its right-hand
 * sides in dW (wptr). */
static int cublas_setup(la_dev_weights *w, int G, stap_error *err)
{
    const int m = w->m, n = w->n, batch = w->batch;
    LA_CUBLAS(cublasCreate(&w->blas));
    LA_CUBLAS(cublasSetStream(w->blas, w->stream));
    const size_t pg = (size_t)G * sizeof(void *), pb = (size_t)batch * sizeof(void *);
    RTK_TRY(grow(&w->aptr, pg, "cuBLAS matrix pointers", err));
    RTK_TRY(grow(&w->tptr, pg, "cuBLAS tau pointers", err));
    RTK_TRY(grow(&w->fptr, pb, "cuBLAS factor pointers", err));
    RTK_TRY(grow(&w->wptr, pb, "cuBLAS right-hand-side pointers", err));
    RTK_TRY(grow(&w->tau, (size_t)G * n * sizeof(float2), "cuBLAS tau", err));
    void **h = (void **)malloc(2 * pg + 2 * pb);
    if (!h) return stap_fail(err, STAP_ENOMEM, "out of memory for cuBLAS pointers");
    void **ha = h, **ht = h + G, **hf = h + 2 * G, **hw = hf + batch;
    for (int k = 0; k < G; k++) {
        ha[k] = (char *)w->T.p + (size_t)k * m * n * sizeof(float2);
        ht[k] = (char *)w->tau.p + (size_t)k * n * sizeof(float2);
    }
    for (int k = 0; k < batch; k++) {
        hf[k] = ha[k % G];
        hw[k] = (char *)w->dW + (size_t)k * w->nbeams * n * sizeof(float2);
    }
    cudaError_t e = cudaMemcpy(w->aptr.p, ha, pg, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(w->tptr.p, ht, pg, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(w->fptr.p, hf, pb, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(w->wptr.p, hw, pb, cudaMemcpyHostToDevice);
    free(h);
    LA_CU(e);
    return STAP_OK;
}

/* The QR variant for a batch of m x n: the forced one when it fits (*sep = 0: it gathers and
 * solves when it can), else the model's plan for the kernel kind (rtk_qr_plan_batch; *sep =
 * 1: the QR alone, the rows gathered into matrices first and the weights after it). */
static int pick_variant(int variant, int kind, int m, int n, int batch, int nbeams,
                        const stap_la_tuning *tune, int *out, int *sep, stap_error *err)
{
    int smem = 0;
    *sep = 0;
    RTK_TRY(device_smem_limit(&smem, err));
    if (variant >= 0 && !rtk_qr_fits(variant, m, n, smem))
        return stap_fail(err, STAP_EINVAL, "gpu QR variant %d cannot factor %dx%d", variant, m, n);
    *out = variant >= 0 ? variant
                         : rtk_qr_plan_batch(kind, m, n, batch, nbeams, smem, tune ? tune->qr_dispatch : 0, sep);
    if (*out < 0) return stap_fail(err, STAP_EINVAL, "no gpu QR variant for %dx%d", m, n);
    return STAP_OK;
}

/* The CholeskyQR factor q asks of an object of m x n matrices, groups of them, on backend
 * (gpu only; a shape the kernel does not take is Householder's): its passes (0: Householder),
 * with the fail list allocated, and whether one kernel gathers, factors and solves (plain
 * cholqr objects whose shape it takes). auto: cholqr where that fused kernel takes the shape
 * and STAP_CHOLQR_GPU_AUTO_MIN_N <= n <= _MAX_N (la_qr_auto_gpu), else Householder. */
static int cholesky_setup(la_dev_weights *w, stap_backend backend, stap_qr_method q, int m, int n,
                          int groups, bool plain, stap_error *err)
{
    if (backend != STAP_BACKEND_GPU) return STAP_OK;
    RTK_TRY(device_smem_limit(&w->smem_limit, err));
    const bool fusable = plain && rtk_cholqr1_gather_fits(m, n, w->smem_limit);
    if (q == STAP_QR_AUTO) q = fusable ? la_qr_auto_gpu(m, n) : STAP_QR_HOUSEHOLDER;
    const int passes = q == STAP_QR_CHOLQR ? 1 : q == STAP_QR_CHOLQR2 ? 2 : 0;
    if (!passes || !rtk_cholqr2_fits(m, n, passes, w->smem_limit)) return STAP_OK;
    if (n > RTK_WEIGHTS_MAX_N)
        return stap_fail(err, STAP_EINVAL, "gpu weights: n=%d exceeds the solver's limit %d", n, RTK_WEIGHTS_MAX_N);
    RTK_TRY(grow(&w->cq_list, (size_t)(groups + 1) * sizeof(int), "CholeskyQR fail list", err));
    w->cq_passes = passes;
    w->cq_fused = passes == 1 && fusable;
    return STAP_OK;
}

static void cholesky_describe(la_dev_weights *w, const char *how)
{
    if (w->cq_fused) return (void)snprintf(w->desc, sizeof w->desc, "CholeskyQR, one pass, FP64 Gram (gathered + "
                                           "weights fused; its guard's Householder in the same kernel)");
    snprintf(w->desc, sizeof w->desc, "%s (materialized training; Householder guard on the device), then the weight "
             "kernel%s", w->cq_passes == 1 ? "CholeskyQR, one pass, FP64 Gram" : "CholeskyQR2, 3xTF32 Grams", how);
}

extern "C" int la_dev_weights_create(la_dev_weights **out, stap_backend backend, int variant,
                                     const stap_la_tuning *tune, stap_qr_method qr, const rtk_gather *g, int m, int n,
                                     int batch, int nbeams, const void *dV, void *dW, rtk_factor_flags *dbad,
                                     unsigned long long *dphase, void *stream, stap_error *err)
{
    *out = nullptr;
    if (backend != STAP_BACKEND_GPU && backend != STAP_BACKEND_CUBLAS)
        return stap_fail(err, STAP_EINVAL, "device weights need the gpu or cublas backend");
    if (!g || m < n || n < 1 || batch < 1 || nbeams < 1)
        return stap_fail(err, STAP_EINVAL, "device weights: bad shape %dx%d, batch %d, %d beams", m,
                         n, batch, nbeams);
    la_dev_weights *w = new (std::nothrow) la_dev_weights;
    if (!w) return stap_fail(err, STAP_ENOMEM, "out of memory for the device weights object");
    w->backend = backend;
    if (tune) w->tune = *tune;
    w->g = *g;
    w->m = m;
    w->n = n;
    w->groups = batch;
    w->batch = batch;
    w->nbeams = nbeams;
    w->dV = dV;
    w->dW = dW;
    w->dbad = dbad;
    w->dphase = dphase;
    w->stream = (cudaStream_t)stream;
    int st = [&]() -> int {
        RTK_TRY(cholesky_setup(w, backend, qr, m, n, batch, true, err));
        if (w->cq_passes) {
            cholesky_describe(w, "");
            if (w->cq_fused) return STAP_OK; /* nothing materialized */
        } else if (backend == STAP_BACKEND_GPU) {
            int sep = 0;
            RTK_TRY(pick_variant(variant, 2, m, n, batch, nbeams, tune, &w->variant, &sep, err));
            w->fused = rtk_qr_can_gather(w->variant) != 0 && !sep;
            if (!w->fused && n > RTK_WEIGHTS_MAX_N)
                return stap_fail(err, STAP_EINVAL, "gpu weights: n=%d exceeds the solver's limit %d",
                                 n, RTK_WEIGHTS_MAX_N);
            snprintf(w->desc, sizeof w->desc, "%s%s", rtk_qr_variant_get(w->variant)->name,
                     w->fused ? " (gather + QR + weights fused)"
                     : sep    ? " (materialized training; QR, then the weight kernel: the model's plan)"
                              : " (materialized training)");
            if (w->fused) return STAP_OK;
        } else {
            snprintf(w->desc, sizeof w->desc, "cublasCgeqrfBatched + 2 cublasCtrsmBatched");
        }
        RTK_TRY(grow(&w->T, (size_t)m * n * batch * sizeof(float2), "training matrices", err));
        if (backend == STAP_BACKEND_CUBLAS) RTK_TRY(cublas_setup(w, batch, err));
        return STAP_OK;
    }();
    if (st) {
        la_dev_weights_destroy(w);
        return st;
    }
    *out = w;
    return STAP_OK;
}

static int grouped_enqueue(la_dev_weights *w, void *ev_qr, stap_error *err);

/* cq_fused: one kernel, its guard's Householder included (the fail list filled, never read back) */
static int cholqr_fused_enqueue(la_dev_weights *w, void *ev_training, void *ev_qr, stap_error *err)
{
    cudaStream_t s = w->stream;
    int *list = (int *)w->cq_list.p;
    if (ev_training) LA_LAUNCH(rtk_event_record(ev_training, s));
    LA_CU(cudaMemsetAsync(list, 0, sizeof(int), s));
    LA_LAUNCH(rtk_cholqr1_gather_weights_launch(&w->g, w->m, w->n, w->batch, w->nbeams, w->dV, w->dW, w->dbad,
                                                STAP_CHOLQR2_MIN_RATIO, list, w->keep ? w->Rk.p : nullptr,
                                                w->tune.fused_subst, s));
    if (ev_qr) LA_LAUNCH(rtk_event_record(ev_qr, s));
    return STAP_OK;
}

extern "C" int la_dev_weights_enqueue(la_dev_weights *w, void *ev_training, void *ev_qr,
                                      stap_error *err)
{
    cudaStream_t s = w->stream;
    const int m = w->m, n = w->n, batch = w->batch, nb = w->nbeams;
    if (w->cq_fused) return cholqr_fused_enqueue(w, ev_training, ev_qr, err);
    if (w->fused) {
        if (ev_training) LA_LAUNCH(rtk_event_record(ev_training, s));
        if (ev_qr) LA_LAUNCH(rtk_event_record(ev_qr, s));
        LA_LAUNCH(rtk_qr_weights_gather_keep_launch(w->variant, &w->g, m, n, batch, nb, w->dV, w->dW,
                                                    w->dbad, w->dphase, w->tune.fused_subst,
                                                    w->keep ? w->Rk.p : nullptr, s));
        return STAP_OK;
    }
    /* materialized: the gather's matrices (grouped: the caller wrote them), then factor and
     * solve — the plain object is the grouped one with a factor per item */
    if (!w->caller_matrices)
        LA_LAUNCH(rtk_training_launch(&w->g, m, n, batch, w->T.p, m, (long long)m * n, s));
    if (ev_training) LA_LAUNCH(rtk_event_record(ev_training, s));
    return grouped_enqueue(w, ev_qr, err);
}

extern "C" int la_dev_weights_create_grouped(la_dev_weights **out, stap_backend backend,
                                             int variant, const stap_la_tuning *tune, stap_qr_method qr, int m, int n,
                                             int groups, int batch,
                                             int nbeams, const void *dV, long long vstride,
                                             void *dW, rtk_factor_flags *dbad, void *stream,
                                             stap_error *err)
{
    *out = nullptr;
    if (backend != STAP_BACKEND_GPU && backend != STAP_BACKEND_CUBLAS)
        return stap_fail(err, STAP_EINVAL, "device weights need the gpu or cublas backend");
    if (m < n || n < 1 || groups < 1 || batch < 1 || nbeams < 1 || vstride < 0)
        return stap_fail(err, STAP_EINVAL, "grouped device weights: bad shape %dx%d, %d factors, "
                         "batch %d, %d beams", m, n, groups, batch, nbeams);
    if (backend == STAP_BACKEND_GPU && n > RTK_WEIGHTS_MAX_N) /* cuBLAS's trsm has no limit */
        return stap_fail(err, STAP_EINVAL, "gpu weights: n=%d exceeds the solver's limit %d", n,
                         RTK_WEIGHTS_MAX_N);
    la_dev_weights *w = new (std::nothrow) la_dev_weights;
    if (!w) return stap_fail(err, STAP_ENOMEM, "out of memory for the device weights object");
    w->backend = backend;
    w->g = rtk_gather{};
    w->m = m;
    w->n = n;
    w->groups = groups;
    w->caller_matrices = true;
    w->batch = batch;
    w->nbeams = nbeams;
    w->dV = dV;
    w->vstride = vstride;
    w->dW = dW;
    w->dbad = dbad;
    w->stream = (cudaStream_t)stream;
    int st = [&]() -> int {
        RTK_TRY(cholesky_setup(w, backend, qr, m, n, groups, false, err));
        if (w->cq_passes) {
            char how[32];
            snprintf(how, sizeof how, " (%d factors, grouped)", groups);
            cholesky_describe(w, how);
        } else if (backend == STAP_BACKEND_GPU) {
            int sep = 0;
            RTK_TRY(pick_variant(variant, 0, m, n, groups, 0, tune, &w->variant, &sep, err));
            snprintf(w->desc, sizeof w->desc, "%s QR of %d + grouped weights",
                     rtk_qr_variant_get(w->variant)->name, groups);
        } else {
            snprintf(w->desc, sizeof w->desc, "cublasCgeqrfBatched of %d + 2 cublasCtrsmBatched",
                     groups);
        }
        RTK_TRY(grow(&w->T, (size_t)m * n * groups * sizeof(float2), "training matrices", err));
        if (backend == STAP_BACKEND_CUBLAS) RTK_TRY(cublas_setup(w, groups, err));
        return STAP_OK;
    }();
    if (st) {
        la_dev_weights_destroy(w);
        return st;
    }
    *out = w;
    return STAP_OK;
}

extern "C" void *la_dev_weights_matrices(la_dev_weights *w) { return w ? w->T.p : nullptr; }

static int grouped_enqueue(la_dev_weights *w, void *ev_qr, stap_error *err)
{
    cudaStream_t s = w->stream;
    const int m = w->m, n = w->n, G = w->groups, batch = w->batch, nb = w->nbeams;
    const long long stride = (long long)m * n;
    if (w->backend == STAP_BACKEND_GPU && w->cq_passes) {
        /* CholeskyQR, then Householder for what its guard refused, on the device: the list's
         * count is never read back (a graph may hold this) */
        LA_CU(cudaMemsetAsync(w->cq_list.p, 0, sizeof(int), s));
        LA_LAUNCH(rtk_cholqr2_launch(m, n, G, w->T.p, m, stride, w->cq_passes, (float)STAP_CHOLQR2_MIN_RATIO,
                                     (int *)w->cq_list.p, s));
        LA_LAUNCH(rtk_qr_guard_launch(m, n, G, w->T.p, m, stride, (const int *)w->cq_list.p, w->dbad,
                                      w->smem_limit, s));
        if (ev_qr) LA_LAUNCH(rtk_event_record(ev_qr, s));
        LA_LAUNCH(rtk_weights_grouped_launch(n, batch, G, w->T.p, m, stride, nb, w->dV, w->vstride,
                                       w->dW, w->dbad, s));
        return STAP_OK;
    }
    if (w->backend == STAP_BACKEND_GPU) {
        LA_LAUNCH(rtk_qr_launch(w->variant, m, n, G, w->T.p, m, stride, s));
        if (ev_qr) LA_LAUNCH(rtk_event_record(ev_qr, s));
        LA_LAUNCH(rtk_weights_grouped_launch(n, batch, G, w->T.p, m, stride, nb, w->dV, w->vstride,
                                       w->dW, w->dbad, s));
        return STAP_OK;
    }
    int info = 0;
    LA_CUBLAS(cublasCgeqrfBatched(w->blas, m, n, (cuComplex **)w->aptr.p, m, (cuComplex **)w->tptr.p,
                           &info, G));
    if (info != 0) return stap_fail(err, STAP_EDEVICE, "cublasCgeqrfBatched rejected parameter %d", -info);
    if (ev_qr) LA_LAUNCH(rtk_event_record(ev_qr, s));
    LA_LAUNCH(rtk_fill_rhs_grouped_launch(n, batch, G, nb, w->dV, w->vstride, w->dW, s));
    const cuComplex one = make_cuComplex(1.f, 0.f);
    LA_CUBLAS(cublasCtrsmBatched(w->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C,
                          CUBLAS_DIAG_NON_UNIT, n, nb, &one, (const cuComplex *const *)w->fptr.p,
                          m, (cuComplex *const *)w->wptr.p, n, batch));
    LA_CUBLAS(cublasCtrsmBatched(w->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                          CUBLAS_DIAG_NON_UNIT, n, nb, &one, (const cuComplex *const *)w->fptr.p,
                          m, (cuComplex *const *)w->wptr.p, n, batch));
    LA_LAUNCH(rtk_normalize_grouped_launch(n, batch, G, w->T.p, m, stride, nb, w->dV, w->vstride,
                                     w->dW, w->dbad, s));
    return STAP_OK;
}

extern "C" int la_dev_weights_keep_factors(la_dev_weights *w, stap_error *err)
{
    if (!(w->fused || w->cq_fused) || w->keep) return STAP_OK; /* materialized: R stays in T */
    const size_t bytes = (size_t)w->batch * w->n * w->n * sizeof(float2);
    RTK_TRY(grow(&w->Rk, bytes, "kept R factors", err));
    /* zeros until the first enqueue (and where a singular item's R is not written) */
    LA_CU(cudaMemsetAsync(w->Rk.p, 0, bytes, w->stream));
    w->keep = true;
    return STAP_OK;
}

extern "C" int la_dev_weights_factors(const la_dev_weights *w, const void **R, int *ldr,
                                      long long *stride)
{
    if (w->caller_matrices) return 0; /* grouped: factors are not per item */
    if (w->fused || w->cq_fused) {
        if (!w->keep) return 0;
        *R = w->Rk.p;
        *ldr = w->n;
        *stride = (long long)w->n * w->n;
        return 1;
    }
    *R = w->T.p;
    *ldr = w->m;
    *stride = (long long)w->m * w->n;
    return 1;
}

extern "C" int la_dev_weights_fused(const la_dev_weights *w) { return w && w->fused; }
extern "C" int la_dev_weights_cholesky(const la_dev_weights *w) { return w ? w->cq_passes : 0; }
extern "C" int la_dev_weights_groups(const la_dev_weights *w) { return w ? w->groups : 0; }
extern "C" const char *la_dev_weights_describe(const la_dev_weights *w) { return w ? w->desc : ""; }
extern "C" int stap_la_dev_weights_materializes(stap_backend backend, int variant,
                                                const stap_la_tuning *tune, int m, int n, int batch,
                                                int nbeams)
{
    if (backend != STAP_BACKEND_GPU) return 1;
    /* the plan la_dev_weights_create makes (a variant that cannot be had: materialized) */
    stap_error err = {};
    int v = -1, sep = 0;
    if (pick_variant(variant, 2, m, n, batch, nbeams, tune, &v, &sep, &err) != STAP_OK) {
        (void)cudaGetLastError();
        return 1;
    }
    return sep || !rtk_qr_can_gather(v);
}

extern "C" size_t la_dev_weights_device_bytes(const la_dev_weights *w)
{
    return w ? w->T.cap + w->aptr.cap + w->tptr.cap + w->wptr.cap + w->tau.cap + w->fptr.cap + w->Rk.cap +
                   w->cq_list.cap
             : 0;
}

/* ---- the GPU library's linalg entry (la_gpu_module.h) ------------------------------- */
extern "C" const la_gpu_api *rtstap_gpu_linalg_api(int abi)
{
    static const la_gpu_api api = {
        sizeof(la_gpu_api),      stap_la_gpu_probe,         stap_la_gpu_select,
        stap_la_gpu_init,             stap_la_gpu_fini,          stap_la_gpu_qr,
        stap_la_gpu_weights,          stap_la_gpu_adaptive_weights, stap_la_gpu_bench_qr,
        stap_la_gpu_variant_count,    stap_la_gpu_variant_query, stap_la_gpu_variant_choice,
        stap_la_gpu_force_variant,    stap_la_gpu_force_plan,    stap_la_dev_weights_materializes,
        stap_la_gpu_count,            rtk_test_hooks_set,
    };
    return abi == RTSTAP_GPU_ABI ? &api : nullptr;
}
