/* engine_gpu.cu: the STAP engine on the GPU (backends gpu and cublas). Every stage of a CPI
 * runs on the device: the Doppler filter (window, conversion, FFT and layout in one kernel
 * for D = 128; else a window and layout kernel, then cuFFT), training rows gathered
 * by the QR kernel's load (or materialized for cuBLAS and the fallback kernels), QR + MVDR
 * weights, weight application, CFAR, and a status block with the non-finite and singular
 * flags. Each slot owns a stream, device buffers, a cuFFT plan, pinned host results,
 * events and (by default) a CUDA graph of its launches, so that the copy-in of one CPI,
 * the compute of another and the copy-out of a third overlap. Only what the user keeps
 * (weights, output, detections) comes back. Host code only: the kernels are in kernels/. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "algorithm.h"
#include "engine_gpu.h"

namespace {

using gpu_engine = stap_gpu_engine;
using gpu_slot = stap_gpu_slot;
constexpr int NEV = STAP_GPU_NEV;

gpu_engine *impl(stap_engine *e) { return static_cast<gpu_engine *>(e->impl); }

template <typename T>
int dalloc(gpu_engine *g, T **p, size_t bytes, const char *what, stap_error *err)
{
    return stap_gpu_dalloc(g, p, bytes, what, err);
}

template <typename T>
int halloc(gpu_engine *g, T **p, size_t bytes, const char *what, stap_error *err)
{
    cudaError_t e = cudaHostAlloc((void **)p, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        *p = nullptr;
        (void)cudaGetLastError();
        return stap_fail(err, STAP_ENOMEM, "GPU engine: cudaHostAlloc of %zu bytes for the %s "
                         "failed: %s", bytes, what, cudaGetErrorString(e));
    }
    g->host_bytes += bytes;
    return STAP_OK;
}

/* The Doppler filter's path: window, conversion, FFT and layout in one kernel where D = 128
 * (the transforms in registers: 15.2 against 20.1 us for the load kernel and cuFFT, hard,
 * kernels/journal.md); elsewhere the load kernel and cuFFT, the one-kernel radix-2 filter
 * measuring no faster. The tuning's doppler_one_kernel = 1 takes the one kernel wherever D
 * is a power of two, -1 never. Sub-CPI algorithms load their own way and run cuFFT. */
static bool doppler_one_kernel(const stap_engine *e)
{
    const stap_config *c = &e->cfg;
    const int one = e->opt.tuning.doppler_one_kernel;
    return !stap_is_subcpi(c) && (one == 1 || (one == 0 && c->doppler_bins == 128)) &&
           rtk_doppler_fft_fits(c->channels, c->pulses, c->doppler_bins);
}

/* The apply kernel: 0 as dispatched (the tensor cores for N > 16, the row kernel
 * otherwise); for comparisons (the tuning's apply_kernel) 1 the row kernel for every N, 2
 * the FP32 register-tiled kernel */
static int apply_kind(const stap_engine *e) { return e->opt.tuning.apply_kernel; }

/* The apply and the detector in one kernel (rtk_apply_cfar_launch) where only detections
 * are kept, the apply runs on the tensor cores and the detector would run as the one-pass
 * line kernel (CA, GO, SO; one segment, R <= 512); the tuning's apply_cfar_apart keeps them
 * apart, for comparisons (as do its apply_kernel and cfar.two_pass) */
static bool fused_detect(const stap_engine *e, const gpu_slot *s)
{
    const bool off = e->opt.tuning.apply_cfar_apart || e->opt.tuning.cfar.two_pass;
    const int kind = (int)e->opt.cfar.kind;
    return !off && !e->opt.apply_gemm && apply_kind(e) == 0 && !e->opt.keep_output &&
           rtk_cfar_line_fits(kind, e->cfg.range_gates) && rtk_apply_cfar_fits(&s->g, kind);
}
static rtk_cfar_window line_window(const stap_engine *e)
{
    const stap_cfar_config *cf = &e->opt.cfar;
    return rtk_cfar_window{(int)cf->kind, cf->guard, cf->train, cf->guard_doppler, cf->train_doppler,
                           e->cfg.doppler_bins};
}

/* The adaptive detectors (AMF, Kelly, ACE) instead of a CFAR of the output: from the R
 * factors the weight solve kept (stap_gpu_algo's keep_factors and detect). */
static bool adaptive(const stap_engine *e) { return stap_cfar_is_adaptive(e->opt.cfar.kind) != 0; }

/* Everything of a CPI after its copy-in, on the slot's stream: captured once as a graph,
 * or launched directly per CPI. */
int enqueue_compute(stap_engine *e, gpu_engine *g, gpu_slot *s, stap_error *err)
{
    const stap_config *c = &e->cfg;
    cudaStream_t st = s->stream;
    LA_LAUNCH(rtk_status_reset_launch(s->d_status, st));
    const int sub = stap_is_subcpi(c);
    /* integer input, converted as it is read: by the Doppler load itself, or (sub-CPI
     * algorithms, whose training reads the time-domain cube again) into d_in first */
    const stap_sample_format *in = &e->opt.input;
    rtk_samples fmt = {(int)in->type, in->big_endian, in->scale != 0.0 && in->scale != 1.0,
                       in->scale, {0, 0, 0}, c->pulses, c->range_gates};
    stap_engine_input_strides(e, fmt.stride);
    if (s->d_raw && sub)
        LA_LAUNCH(rtk_samples_convert_launch(s->d_raw, &fmt,
                                              (long long)c->channels * c->pulses * c->range_gates,
                                              s->d_in, s->d_status, st));
    if (sub)
        LA_LAUNCH(rtk_subcpi_load_launch(s->d_in, g->d_win, c->channels, c->pulses, c->range_gates,
                                          c->doppler_bins, c->doppler_order, s->d_X, s->d_status, st));
    /* the tuning's doppler_tile = 32: the D = 128 kernel's earlier 32-cell blocks, for comparisons */
    const int tile = e->opt.tuning.doppler_tile;
    if (doppler_one_kernel(e)) {
        LA_LAUNCH(rtk_doppler_fft_launch(s->d_raw ? s->d_raw : s->d_in, s->d_raw ? &fmt : nullptr,
                                          g->d_win, c->channels, c->pulses, c->range_gates,
                                          c->doppler_bins, tile, s->d_X, s->d_status, st));
    } else {
        if (!sub)
            LA_LAUNCH(rtk_doppler_load_launch(s->d_raw ? s->d_raw : s->d_in, s->d_raw ? &fmt : nullptr,
                                               g->d_win, c->channels, c->pulses, c->range_gates,
                                               c->doppler_bins, s->d_X, s->d_status, st));
        LA_CUFFT(cufftExecC2C(s->fft, (cufftComplex *)s->d_X, (cufftComplex *)s->d_X, CUFFT_FORWARD));
    }
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_TRAINING], st));
    RTK_TRY(stap_gpu_algo_of(c)->enqueue(e, g, s, err));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_APPLY], st));
    if (e->opt.apply_gemm) {
        /* Y_ds (L x B, ld D*R) += X_tap (L x C, ld R) * conj(W_ds,tap) (C x B), per tap
         * (sub-CPI: C*Q channels, one tap) */
        const int Q = s->g.order, n = e->batch, Ce = s->g.channels;
        LA_LAUNCH(rtk_weights_by_tap_launch(s->d_W, n, e->B, Ce, Q, s->d_Wc, s->d_status, st));
        const cuComplex one = make_cuComplex(1.f, 0.f), zero = make_cuComplex(0.f, 0.f);
        for (int q = 0; q < Q; q++) {
            void **p = s->d_ptr + (size_t)3 * q * n;
            cublasStatus_t bs = cublasCgemmBatched(
                s->blas, CUBLAS_OP_N, CUBLAS_OP_N, e->L, e->B, Ce, &one,
                (const cuComplex *const *)p, c->range_gates, (const cuComplex *const *)(p + n),
                Ce, q ? &one : &zero, (cuComplex *const *)(p + 2 * n),
                c->doppler_bins * c->range_gates, n);
            if (bs != CUBLAS_STATUS_SUCCESS)
                return stap_fail(err, STAP_EDEVICE, "GPU engine: cublasCgemmBatched failed: %s",
                                 cublasGetStatusString(bs));
        }
    } else if (fused_detect(e, s)) { /* the detect stage is inside the apply's */
        const rtk_cfar_window lw = line_window(e);
        LA_LAUNCH(rtk_apply_cfar_launch(&s->g, e->B, s->d_W, &lw, g->d_alpha, s->d_hits, g->hit_cap,
                                         s->d_status, st));
    } else {
        const int kind = apply_kind(e);
        LA_LAUNCH((kind == 1   ? rtk_apply_rows_launch
                    : kind == 2 ? rtk_apply_fp32_launch
                                : rtk_apply_launch)(&s->g, e->B, s->d_W, s->d_Y, s->d_status, st));
    }
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_DETECT], st));
    const stap_cfar_config *cf = &e->opt.cfar;
    if (adaptive(e))
        RTK_TRY(stap_gpu_algo_of(c)->detect(e, g, s, (rtk_detect_hit *)s->d_hits, g->hit_cap,
                                            s->d_status, err));
    else if (cf->kind != STAP_CFAR_NONE && !fused_detect(e, s))
        LA_LAUNCH(stap_cfar_enqueue(cf, e->B, c->doppler_bins, c->range_gates, s->d_Y, s->d_prefix, 1,
                              g->d_alpha, g->d_rank, s->d_hits, g->hit_cap, s->d_status,
                              e->opt.tuning.cfar.two_pass, e->opt.tuning.cfar.line_threads, st));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_COPY_OUT], st));
    LA_CU(cudaMemcpyAsync(s->h_status, s->d_status, sizeof(rtk_cpi_status), cudaMemcpyDeviceToHost, st));
    if (cf->kind != STAP_CFAR_NONE)
        LA_CU(cudaMemcpyAsync(s->h_hits, s->d_hits, sizeof(rtk_cfar_hit) * g->hit_chunk,
                           cudaMemcpyDeviceToHost, st));
    if (e->opt.keep_weights)
        LA_CU(cudaMemcpyAsync(s->h_W, s->d_W, sizeof(stap_cf32) * stap_weights_count(c, e->B),
                           cudaMemcpyDeviceToHost, st));
    if (e->opt.keep_output)
        LA_CU(cudaMemcpyAsync(s->h_Y, s->d_Y, sizeof(stap_cf32) * stap_output_count(c, e->B),
                           cudaMemcpyDeviceToHost, st));
    LA_LAUNCH(rtk_event_record(s->ev[NEV - 1], st));
    return STAP_OK;
}

void destroy_slot(gpu_slot *s)
{
    if (s->stream) cudaStreamSynchronize(s->stream);
    if (s->graph) cudaGraphExecDestroy(s->graph);
    if (s->fft_made) cufftDestroy(s->fft);
    la_dev_weights_destroy(s->qr);
    for (int b = 0; s->bs.jqr && b < s->bs.njqr; b++) la_dev_weights_destroy(s->bs.jqr[b]);
    free(s->bs.jqr);
    if (s->blas) cublasDestroy(s->blas);
    void *dev[] = {s->d_in, s->d_X, s->d_W, s->d_Y, s->d_prefix, s->d_hits, s->d_status,
                   s->d_Wc, s->d_ptr, s->bs.d_Xb, s->bs.d_Wt, s->d_raw};
    for (void *p : dev)
        if (p) cudaFree(p);
    void *host[] = {s->h_status, s->h_hits, s->h_W, s->h_Y};
    for (void *p : host)
        if (p) cudaFreeHost(p);
    for (cudaEvent_t ev : s->ev)
        if (ev) cudaEventDestroy(ev);
    if (s->stream) cudaStreamDestroy(s->stream);
    stap_cfar_plan_destroy(s->cfar);
    free(s->det);
}

int create_slot(stap_engine *e, gpu_engine *g, gpu_slot *s, stap_error *err)
{
    const stap_config *c = &e->cfg;
    const int sub = stap_is_subcpi(c);
    /* the cube's channels: C, or the C*Q staggered sequences of the sub-CPI algorithms */
    const size_t C = (size_t)c->channels * (sub ? c->doppler_order : 1);
    const size_t P = c->pulses, R = c->range_gates, D = c->doppler_bins;
    const size_t nw = stap_weights_count(c, e->B), ny = stap_output_count(c, e->B);
    LA_CU(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    for (cudaEvent_t &ev : s->ev) LA_CU(cudaEventCreate(&ev));
    RTK_TRY(dalloc(g, &s->d_in, sizeof(float2) * c->channels * P * R, "input cube", err));
    if (stap_engine_input_as_stored(e))
        RTK_TRY(dalloc(g, &s->d_raw, stap_engine_input_bytes(e), "input cube as stored", err));
    RTK_TRY(dalloc(g, &s->d_X, sizeof(float2) * D * C * R, "Doppler cube", err));
    RTK_TRY(dalloc(g, &s->d_W, sizeof(float2) * nw, "weights", err));
    RTK_TRY(dalloc(g, &s->d_Y, sizeof(float2) * ny, "adaptive output", err));
    RTK_TRY(dalloc(g, &s->d_status, sizeof(rtk_cpi_status), "status block", err));
    RTK_TRY(halloc(g, &s->h_status, sizeof(rtk_cpi_status), "status block", err));
    if (e->opt.keep_weights) RTK_TRY(halloc(g, &s->h_W, sizeof(stap_cf32) * nw, "weights", err));
    if (e->opt.keep_output) RTK_TRY(halloc(g, &s->h_Y, sizeof(stap_cf32) * ny, "adaptive output", err));
    const stap_cfar_config *cf = &e->opt.cfar;
    if (cf->kind != STAP_CFAR_NONE) {
        if (stap_cfar_uses_prefix(cf->kind))
            RTK_TRY(dalloc(g, &s->d_prefix, sizeof(double) * (size_t)e->B * D * (R + 1),
                       "CFAR prefix sums", err));
        RTK_TRY(dalloc(g, &s->d_hits, sizeof(rtk_cfar_hit) * g->hit_cap, "CFAR hit list", err));
        RTK_TRY(halloc(g, &s->h_hits, sizeof(rtk_cfar_hit) * g->hit_cap, "CFAR hit list", err));
        if (adaptive(e)) {
            s->det = (stap_detection *)malloc(sizeof(stap_detection) * (g->hit_cap ? g->hit_cap : 1));
            if (!s->det) return stap_fail(err, STAP_ENOMEM, "out of memory for the detection records");
        } else {
            RTK_TRY(stap_cfar_plan_create(&s->cfar, cf, e->B, (int)D, (int)R, 1, err));
        }
    }
    /* D-point transforms along the first axis of X (D x C x R): C*R of them, element
     * stride C*R, neighbours 1 apart — one plan, one launch per CPI (none where the
     * Doppler filter runs in one kernel) */
    if (!doppler_one_kernel(e)) {
        int n[1] = {(int)D}, embed[1] = {(int)D};
        LA_CUFFT(cufftPlanMany(&s->fft, 1, n, embed, (int)(C * R), 1, embed, (int)(C * R), 1,
                                CUFFT_C2C, (int)(C * R)));
        s->fft_made = true;
        LA_CUFFT(cufftSetStream(s->fft, s->stream));
        size_t fft_work = 0;
        if (cufftGetSize(s->fft, &fft_work) == CUFFT_SUCCESS) g->dev_bytes += fft_work;
    }

    rtk_gather &gt = s->g;
    gt.X = s->d_X;
    gt.cells = g->d_cells;
    gt.channels = (int)C;
    gt.order = sub ? 1 : c->doppler_order;
    gt.bins = c->doppler_bins;
    gt.range = c->range_gates;
    gt.segments = c->segments;
    gt.seg_len = e->L;
    gt.training = c->training;
    gt.load = c->loading > 0 ? (float)std::sqrt(c->training * c->loading) : 0.f;
    if (e->opt.apply_gemm) {
        const int Q = gt.order, n = e->batch, S = c->segments;
        RTK_TRY(dalloc(g, &s->d_Wc, sizeof(float2) * nw, "weights by tap", err));
        RTK_TRY(dalloc(g, &s->d_ptr, sizeof(void *) * 3 * Q * (size_t)n, "GEMM pointer arrays", err));
        void **h = (void **)malloc(sizeof(void *) * 3 * Q * (size_t)n);
        if (!h) return stap_fail(err, STAP_ENOMEM, "out of memory for GEMM pointers");
        for (int q = 0; q < Q; q++)
            for (int k = 0; k < n; k++) {
                const int d = k / S, sg = k % S;
                const int tap = stap_tap_bin(d, q, Q, (int)D);
                void **p = h + (size_t)3 * q * n;
                p[k] = s->d_X + ((size_t)tap * C * R + (size_t)sg * e->L);
                p[n + k] = s->d_Wc + ((size_t)k * Q + q) * e->B * C;
                p[2 * n + k] = s->d_Y + ((size_t)d * R + (size_t)sg * e->L);
            }
        cudaError_t ce = cudaMemcpy(s->d_ptr, h, sizeof(void *) * 3 * Q * (size_t)n,
                                    cudaMemcpyHostToDevice);
        free(h);
        LA_CU(ce);
        if (cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS ||
            cublasSetStream(s->blas, s->stream) != CUBLAS_STATUS_SUCCESS)
            return stap_fail(err, STAP_EDEVICE, "GPU engine: cuBLAS could not be set up");
    }
    RTK_TRY(stap_gpu_algo_of(c)->create_slot(e, g, s, err));
    if (adaptive(e)) RTK_TRY(stap_gpu_algo_of(c)->keep_factors(e, g, s, err));

    /* one direct run on a zero cube: module loading and kernel attributes happen here, not
     * in the first CPI or inside a capture (its status, a singular factor, is ignored) */
    LA_CU(cudaMemsetAsync(s->d_in, 0, sizeof(float2) * c->channels * P * R, s->stream));
    if (s->d_raw) LA_CU(cudaMemsetAsync(s->d_raw, 0, stap_engine_input_bytes(e), s->stream));
    RTK_TRY(enqueue_compute(e, g, s, err));
    LA_CU(cudaStreamSynchronize(s->stream));
    return STAP_OK;
}

/* Capture each slot's enqueue_compute as a graph; on any failure the engine launches
 * directly and says why in its description. */
void make_graphs(stap_engine *e, gpu_engine *g)
{
    g->graphs = true;
    for (int i = 0; i < e->opt.slots && g->graphs; i++) {
        gpu_slot *s = &g->slot[i];
        cudaGraph_t graph = nullptr;
        stap_error err;
        cudaError_t ce = cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeRelaxed);
        int st = ce == cudaSuccess ? enqueue_compute(e, g, s, &err) : STAP_EDEVICE;
        cudaError_t ee = cudaStreamEndCapture(s->stream, &graph);
        if (ce == cudaSuccess && !st && ee == cudaSuccess)
            ee = cudaGraphInstantiate(&s->graph, graph, 0);
        if (graph) cudaGraphDestroy(graph);
        if (ce != cudaSuccess || st || ee != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(g->graph_note, sizeof g->graph_note, "graph capture failed (%s), direct launches",
                     st ? err.msg : cudaGetErrorString(ce != cudaSuccess ? ce : ee));
            g->graphs = false;
        }
    }
    if (!g->graphs)
        for (int i = 0; i < e->opt.slots; i++)
            if (g->slot[i].graph) {
                cudaGraphExecDestroy(g->slot[i].graph);
                g->slot[i].graph = nullptr;
            }
}

void gpu_destroy(stap_engine *e)
{
    gpu_engine *g = impl(e);
    if (!g) return;
    for (gpu_slot &s : g->slot) destroy_slot(&s);
    void *dev[] = {g->d_win, g->d_V, g->bs.d_A, g->bs.d_Vt, g->d_Vs, g->d_cells, g->d_alpha, g->d_rank, g->d_big,
                   g->d_big_status};
    for (void *p : dev)
        if (p) cudaFree(p);
    free(g->h_big);
    free(g->big_det);
    delete g;
    e->impl = nullptr;
}

int gpu_create(stap_engine *e, stap_error *err)
{
    gpu_engine *g = new (std::nothrow) gpu_engine;
    if (!g) return stap_fail(err, STAP_ENOMEM, "out of memory creating the GPU engine");
    e->impl = g;
    const stap_config *c = &e->cfg;
    RTK_TRY(dalloc(g, &g->d_win, sizeof(float) * c->pulses, "window", err));
    RTK_TRY(dalloc(g, &g->d_V, sizeof(float2) * (size_t)e->B * e->N, "steering vectors", err));
    LA_CU(cudaMemcpy(g->d_win, e->win, sizeof(float) * c->pulses, cudaMemcpyHostToDevice));
    LA_CU(cudaMemcpy(g->d_V, e->V, sizeof(float2) * (size_t)e->B * e->N, cudaMemcpyHostToDevice));
    if (stap_is_subcpi(c)) {
        const size_t nv = (size_t)e->tables.subcpi.nvs * e->N;
        RTK_TRY(dalloc(g, &g->d_Vs, sizeof(float2) * nv, "sub-CPI steering", err));
        LA_CU(cudaMemcpy(g->d_Vs, e->tables.subcpi.Vs, sizeof(float2) * nv, cudaMemcpyHostToDevice));
    }
    const stap_gpu_algo *al = stap_gpu_algo_of(c);
    if (al->create) RTK_TRY(al->create(e, g, err));
    const size_t ncells = (size_t)c->segments * c->training;
    RTK_TRY(dalloc(g, &g->d_cells, sizeof(int) * ncells, "training-cell table", err));
    LA_CU(cudaMemcpy(g->d_cells, e->cells, sizeof(int) * ncells, cudaMemcpyHostToDevice));
    const stap_cfar_config *cf = &e->opt.cfar;
    if (adaptive(e)) {
        /* the threshold on the host (adaptive.c), the statistics on the device */
        if (!al->detect)
            return stap_fail(err, STAP_EUNSUPPORTED, "the %s detector is not defined for this "
                             "algorithm", stap_cfar_kind_name(cf->kind));
        RTK_TRY(stap_detector_threshold(cf->kind, e->Nt, c->training, cf->pfa, &g->eta, err));
        int dev = 0, smem = 0;
        LA_CU(cudaGetDevice(&dev));
        LA_CU(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        const int beams = (stap_algorithm_traits(c) & STAP_TRAIT_BEAMSPACE) ? 1 : e->B;
        if (!rtk_adaptive_detect_threads(e->Nt, beams, smem))
            return stap_fail(err, STAP_EUNSUPPORTED, "the %s detector's GPU kernel holds R (%d x %d), "
                             "the %d beams' R^-H v and 32 snapshots in shared memory: more than the "
                             "device's %d bytes a block (use the cpu backend)",
                             stap_cfar_kind_name(cf->kind), e->Nt, e->Nt, beams, smem);
        g->hit_cap = (unsigned)std::fmin((double)stap_engine_hit_capacity(c, e->B, &e->opt), 4.0e9);
        g->hit_chunk = g->hit_cap < 1024 ? g->hit_cap : 1024;
    } else if (cf->kind != STAP_CFAR_NONE) {
        stap_cfar_plan *tables = nullptr;
        RTK_TRY(stap_cfar_plan_create(&tables, cf, e->B, c->doppler_bins, c->range_gates, 1, err));
        const size_t nt = stap_cfar_table_len(cf);
        int st = dalloc(g, &g->d_alpha, sizeof(double) * nt, "CFAR thresholds", err);
        if (!st) st = dalloc(g, &g->d_rank, sizeof(int) * nt, "CFAR ranks", err);
        cudaError_t ce = cudaSuccess;
        if (!st) ce = cudaMemcpy(g->d_alpha, stap_cfar_plan_alpha(tables), sizeof(double) * nt,
                                 cudaMemcpyHostToDevice);
        if (!st && ce == cudaSuccess)
            ce = cudaMemcpy(g->d_rank, stap_cfar_plan_rank(tables), sizeof(int) * nt,
                            cudaMemcpyHostToDevice);
        stap_cfar_plan_destroy(tables);
        if (st) return st;
        LA_CU(ce);
        /* a CPI that detects more than the device list holds is re-tested into a list of
         * every cell (collect) */
        g->hit_cap = (unsigned)std::fmin((double)stap_engine_hit_capacity(c, e->B, &e->opt), 4.0e9);
        g->hit_chunk = g->hit_cap < 1024 ? g->hit_cap : 1024;
    }
    for (int i = 0; i < e->opt.slots; i++) RTK_TRY(create_slot(e, g, &g->slot[i], err));
    if (e->opt.graphs) make_graphs(e, g);
    char qr[160];
    al->describe(e, g, qr, sizeof qr);
    snprintf(e->describe, sizeof e->describe,
             "%s: %s, %s, %s, %s %s, %s, %d slot%s", stap_backend_name(c->backend),
             doppler_one_kernel(e) ? "Doppler filter in one kernel" : "cuFFT Doppler", qr,
             e->opt.apply_gemm                ? "apply as cublasCgemmBatched per tap"
             : fused_detect(e, &g->slot[0]) ? "apply on the tensor cores (3xTF32) and detection in one kernel"
                                            : rtk_apply_describe(&g->slot[0].g, apply_kind(e) == 1   ? 2
                                                                                : apply_kind(e) == 2 ? 1
                                                                                                    : 0),
             stap_cfar_kind_name(cf->kind),
             adaptive(e) ? "detector kernel (from the kept R factors)" : "CFAR kernels",
             g->graphs ? "CUDA graphs" : (g->graph_note[0] ? g->graph_note : "direct launches"),
             e->opt.slots, e->opt.slots > 1 ? "s" : "");
    return STAP_OK;
}

int gpu_submit(stap_engine *e, int slot, const void *cube, stap_error *err)
{
    gpu_engine *g = impl(e);
    gpu_slot *s = &g->slot[slot];
    s->submit_ms = stap_now_ms();
    s->done_ms = 0;
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_COPY_IN], s->stream));
    /* the cube crosses the link as stored (integer pairs: a quarter to a half of complex64);
     * resident (NULL): the slot's input still holds its last cube (the pipeline only reads it) */
    if (cube)
        LA_CU(cudaMemcpyAsync(s->d_raw ? s->d_raw : (void *)s->d_in, cube, stap_engine_input_bytes(e),
                               cudaMemcpyHostToDevice, s->stream));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_DOPPLER], s->stream));
    rtk_fault_trap_maybe(s->stream); /* test hook: a device fault (stap_test_hooks.device_trap) */
    if (s->graph) LA_CU(cudaGraphLaunch(s->graph, s->stream));
    else RTK_TRY(enqueue_compute(e, g, s, err));
    return STAP_OK;
}

/* More hits than the device list holds: test again into a list of every cell. Allocates
 * (once per engine) on this exceptional path only. */
int retest_all(stap_engine *e, gpu_engine *g, gpu_slot *s, unsigned count, stap_error *err)
{
    const stap_config *c = &e->cfg;
    const size_t cells = stap_output_count(c, e->B);
    if (!g->d_big) {
        RTK_TRY(dalloc(g, &g->d_big, sizeof(rtk_cfar_hit) * cells, "full CFAR hit list", err));
        RTK_TRY(dalloc(g, &g->d_big_status, sizeof(rtk_cpi_status), "status block", err));
        g->h_big = (stap_cfar_hit *)malloc(sizeof(stap_cfar_hit) * cells);
        if (!g->h_big) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu CFAR hits", cells);
    }
    const stap_cfar_config *cf = &e->opt.cfar;
    LA_LAUNCH(rtk_status_reset_launch(g->d_big_status, s->stream));
    if (adaptive(e)) { /* the CPI's X, Y and factors are still the slot's */
        if (!g->big_det) {
            g->big_det = (stap_detection *)malloc(sizeof(stap_detection) * cells);
            if (!g->big_det) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", cells);
        }
        RTK_TRY(stap_gpu_algo_of(c)->detect(e, g, s, (rtk_detect_hit *)g->d_big, (unsigned)cells,
                                            g->d_big_status, err));
    } else if (fused_detect(e, s)) { /* no Y in device memory: the fused kernel again (X and W are the CPI's) */
        const rtk_cfar_window lw = line_window(e);
        LA_LAUNCH(rtk_apply_cfar_launch(&s->g, e->B, s->d_W, &lw, g->d_alpha, g->d_big, (unsigned)cells,
                                         g->d_big_status, s->stream));
    } else {
        LA_LAUNCH(stap_cfar_enqueue(cf, e->B, c->doppler_bins, c->range_gates, s->d_Y, s->d_prefix, 0,
                                     g->d_alpha, g->d_rank, g->d_big, (unsigned)cells, g->d_big_status,
                                     e->opt.tuning.cfar.two_pass, e->opt.tuning.cfar.line_threads,
                                     s->stream));
    }
    LA_CU(cudaMemcpyAsync(g->h_big, g->d_big, sizeof(rtk_cfar_hit) * count, cudaMemcpyDeviceToHost,
                       s->stream));
    LA_CU(cudaStreamSynchronize(s->stream));
    return STAP_OK;
}

static int cmp_hit(const void *pa, const void *pb)
{
    const unsigned long long a = ((const rtk_detect_hit *)pa)->flat, b = ((const rtk_detect_hit *)pb)->flat;
    return (a > b) - (a < b);
}

/* The adaptive detector's records from its hits, sorted by (beam, Doppler bin, range cell)
 * (the flat index's order) as the CPU engine's: the same stap_cfar_record, the estimated
 * SINR K a in dB (engine_detect.c). */
static void adaptive_records(const stap_engine *e, const gpu_engine *g, rtk_detect_hit *hits,
                             size_t n, stap_detection *det, const stap_detection **out, size_t *count)
{
    static_assert(sizeof(rtk_detect_hit) == sizeof(rtk_cfar_hit), "hit sizes differ");
    if (n > 1) qsort(hits, n, sizeof *hits, cmp_hit);
    for (size_t i = 0; i < n; i++) {
        det[i] = stap_cfar_record(hits[i].flat, e->cfg.doppler_bins, e->cfg.range_gates,
                                  hits[i].power, 1.0, hits[i].statistic, g->eta);
        det[i].snr_db = (float)(10.0 * log10((double)hits[i].ka));
    }
    *out = n ? det : nullptr;
    *count = n;
}

/* The CholeskyQR passes the slot's solvers factor with (0: Householder), and how many
 * matrices they factor a CPI */
static int slot_cholesky(const gpu_slot *s)
{
    if (s->qr) return la_dev_weights_cholesky(s->qr);
    return s->bs.njqr > 0 ? la_dev_weights_cholesky(s->bs.jqr[0]) : 0;
}
static long long slot_factors(const gpu_slot *s)
{
    if (s->qr) return la_dev_weights_groups(s->qr);
    long long t = 0;
    for (int b = 0; b < s->bs.njqr; b++) t += la_dev_weights_groups(s->bs.jqr[b]);
    return t;
}

int gpu_collect(stap_engine *e, int slot, stap_cpi_result *res, stap_error *err)
{
    gpu_engine *g = impl(e);
    gpu_slot *s = &g->slot[slot];
    /* the host learns of the last copy here: latency ends when the results are usable (an
     * event wait, not a host-function stamp, which would block the stream behind the
     * driver's callback thread) */
    LA_CU(cudaEventSynchronize(s->ev[NEV - 1]));
    s->done_ms = stap_now_ms();
    const rtk_cpi_status *h = s->h_status;
    if (h->bad_input != RTK_NO_INDEX) return stap_engine_fail_input(e, h->bad_input, err);
    if (h->factor.bad_item != RTK_NO_BAD) return stap_engine_fail_item(e, h->factor.bad_item, err);
    if (h->bad_weight != RTK_NO_INDEX) return stap_engine_fail_weight(e, h->bad_weight, err);
    for (int i = 0; i < STAP_STAGE_COUNT; i++) {
        float ms = 0;
        res->stage_ms[i] = cudaEventElapsedTime(&ms, s->ev[i], s->ev[i + 1]) == cudaSuccess
                               ? ms
                               : NAN;
    }
    (void)cudaGetLastError();
    /* one fused kernel did QR and weights: split its time at block 0's timestamps */
    if (s->qr && la_dev_weights_fused(s->qr)) {
        const unsigned long long *ph = h->phase;
        const double total = res->stage_ms[STAP_STAGE_WEIGHTS];
        double f = 0;
        if (ph[2] > ph[1] && ph[1] > ph[0]) f = (double)(ph[2] - ph[1]) / (double)(ph[2] - ph[0]);
        res->stage_ms[STAP_STAGE_QR] = total * (1 - f);
        res->stage_ms[STAP_STAGE_WEIGHTS] = total * f;
    }
    if (e->opt.cfar.kind != STAP_CFAR_NONE) {
        const unsigned n = h->detections;
        stap_cfar_hit *hits = (stap_cfar_hit *)s->h_hits;
        if (n > g->hit_cap) {
            RTK_TRY(retest_all(e, g, s, n, err));
            hits = g->h_big;
        } else if (n > g->hit_chunk) {
            LA_CU(cudaMemcpy(s->h_hits + g->hit_chunk, s->d_hits + g->hit_chunk,
                          sizeof(rtk_cfar_hit) * (n - g->hit_chunk), cudaMemcpyDeviceToHost));
        }
        static_assert(sizeof(stap_cfar_hit) == sizeof(rtk_cfar_hit), "hit layouts differ");
        if (adaptive(e))
            adaptive_records(e, g, (rtk_detect_hit *)hits, n, n > g->hit_cap ? g->big_det : s->det,
                             &res->detections, &res->detection_count);
        else
            RTK_TRY(stap_cfar_plan_finish(s->cfar, hits, n, &res->detections, &res->detection_count, err));
    }
    if (stap_algorithm_traits(&e->cfg) & STAP_TRAIT_FIXED) { /* no factors: nothing ill-conditioned */
        res->diag_ratio = 1.0f;
        res->diag_ratio_item = 0;
    } else {
        if (h->factor.worst == RTK_NO_WORST) /* every solver path reports every factor */
            return stap_fail(err, STAP_EDEVICE, "the weight solver reported no factor conditioning");
        const unsigned ratio_bits = (unsigned)(h->factor.worst >> 32);
        memcpy(&res->diag_ratio, &ratio_bits, sizeof ratio_bits);
        res->diag_ratio_item = (int)(h->factor.worst & 0xffffffffu);
    }
    if (slot_cholesky(s)) { /* CholeskyQR: its guard's count came back with the status */
        res->qr_guarded = h->factor.guarded;
        res->qr_cholqr2 = slot_factors(s) - h->factor.guarded;
    }
    res->weights = e->opt.keep_weights ? s->h_W : nullptr;
    res->output = e->opt.keep_output ? s->h_Y : nullptr;
    res->submit_ms = s->submit_ms;
    res->done_ms = s->done_ms;
    return STAP_OK;
}

void *gpu_host_alloc(stap_engine *e, size_t bytes)
{
    void *p = nullptr;
    if (cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return p;
}
void gpu_host_free(stap_engine *e, void *p) { cudaFreeHost(p); }

int gpu_doppler(stap_engine *e, int slot, stap_cf32 *X, stap_error *err)
{
    gpu_engine *g = impl(e);
    gpu_slot *s = &g->slot[slot];
    const stap_config *c = &e->cfg;
    const size_t C = c->channels, D = c->doppler_bins, R = c->range_gates;
    /* sub-CPI: the staggered cube of pulse 0 of each channel (row c*Q of C*Q) */
    const size_t Q = stap_is_subcpi(c) ? (size_t)c->doppler_order : 1;
    float2 *tmp = (float2 *)malloc(sizeof(float2) * C * Q * D * R);
    if (!tmp) return stap_fail(err, STAP_ENOMEM, "out of memory for the Doppler cube");
    cudaError_t ce = cudaStreamSynchronize(s->stream);
    if (ce == cudaSuccess)
        ce = cudaMemcpy(tmp, s->d_X, sizeof(float2) * C * Q * D * R, cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        free(tmp);
        return stap_fail(err, STAP_EDEVICE, "GPU engine: copying the Doppler cube failed: %s",
                         cudaGetErrorString(ce));
    }
    for (size_t d = 0; d < D; d++) /* D x C x R -> C x D x R */
        for (size_t ch = 0; ch < C; ch++)
            memcpy(&X[(ch * D + d) * R], &tmp[(d * C * Q + ch * Q) * R], sizeof(float2) * R);
    free(tmp);
    return STAP_OK;
}

size_t gpu_memory_bytes(const stap_engine *e)
{
    return static_cast<const gpu_engine *>(e->impl)->dev_bytes;
}

} // namespace

extern "C" const stap_engine_ops stap_engine_gpu_ops = {
    "gpu", gpu_create, gpu_destroy, gpu_submit, gpu_collect, gpu_host_alloc, gpu_host_free,
    gpu_doppler, gpu_memory_bytes,
};

extern "C" int stap_gpu_info(char *name, size_t len, size_t *free_bytes, size_t *total_bytes,
                             stap_error *err)
{
    int dev = 0;
    LA_CU(cudaGetDevice(&dev));
    if (name && len) {
        cudaDeviceProp prop;
        LA_CU(cudaGetDeviceProperties(&prop, dev));
        snprintf(name, len, "%s", prop.name);
    }
    size_t f = 0, t = 0;
    LA_CU(cudaMemGetInfo(&f, &t));
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return STAP_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" int stap_gpu_link_bandwidth(size_t bytes, int repeat, double *h2d_gbs,
                                       double *d2h_gbs, stap_error *err)
{
    void *h = nullptr, *d = nullptr;
    cudaStream_t s = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    double *t = (double *)malloc(sizeof(double) * 2 * (repeat > 0 ? repeat : 1));
    int st = [&]() -> int {
        if (!t || repeat < 1) return stap_fail(err, STAP_EINVAL, "link bandwidth: bad repeat %d", repeat);
        LA_CU(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
        LA_CU(cudaMalloc(&d, bytes));
        LA_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        LA_CU(cudaEventCreate(&a));
        LA_CU(cudaEventCreate(&b));
        memset(h, 1, bytes);
        for (int dir = 0; dir < 2; dir++)
            for (int r = -1; r < repeat; r++) {
                LA_CU(cudaEventRecord(a, s));
                if (dir == 0) LA_CU(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
                else LA_CU(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
                LA_CU(cudaEventRecord(b, s));
                LA_CU(cudaEventSynchronize(b));
                float ms = 0;
                LA_CU(cudaEventElapsedTime(&ms, a, b));
                if (r >= 0) t[dir * repeat + r] = bytes / (ms * 1e-3) / 1e9;
            }
        qsort(t, (size_t)repeat, sizeof *t, cmp_d);
        qsort(t + repeat, (size_t)repeat, sizeof *t, cmp_d);
        *h2d_gbs = t[repeat / 2];
        *d2h_gbs = t[repeat + repeat / 2];
        return STAP_OK;
    }();
    free(t);
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    if (s) cudaStreamDestroy(s);
    if (d) cudaFree(d);
    if (h) cudaFreeHost(h);
    return st;
}
