/* cfar_gpu.cu: stap_cfar_detect_gpu — the CFAR detector of rtstap/cfar.h run by the rtk
 * CFAR kernels on a host output (copies in, detects, copies the hits back, sorts them).
 * A one-off helper for tests and tools: it allocates per call; the GPU engine keeps its
 * buffers instead (engine_gpu.cu). */
#include <cuda_runtime.h>

#include <cstdlib>

#include "cfar_gpu.h"
#include "la_gpu_check.h"

static_assert((int)STAP_CFAR_CA == RTK_CFAR_CA && (int)STAP_CFAR_OS == RTK_CFAR_OS &&
                  (int)STAP_CFAR_GO == RTK_CFAR_GO && (int)STAP_CFAR_SO == RTK_CFAR_SO &&
                  (int)STAP_CFAR_CA2D == RTK_CFAR_CA2D,
              "stap_cfar_kind and the rtk kinds differ");

extern "C" int stap_cfar_enqueue(const stap_cfar_config *c, int B, int D, int R, const void *y,
                                 double *prefix, int make_prefix, const double *alpha,
                                 const int *rank, rtk_cfar_hit *hits, unsigned int capacity,
                                 rtk_cpi_status *status, int two_pass, int line_threads,
                                 void *stream)
{
    const long long lines = (long long)B * D;
    const rtk_cfar_window lw = {(int)c->kind, c->guard, c->train, c->guard_doppler,
                                c->train_doppler, D};
    /* CA, GO, SO: one pass, each power read once (two_pass: the prefix pass and the test
     * pass, for comparisons); line_threads: 0 (= 128), 32, 64 or 128 threads a line */
    const int tpl = line_threads == 32 || line_threads == 64 || line_threads == 128 ? line_threads : 0;
    if (!two_pass && rtk_cfar_line_fits((int)c->kind, R))
        return rtk_cfar_line_launch(y, lines, R, &lw, alpha, hits, capacity, tpl, status, stream);
    if (make_prefix && stap_cfar_uses_prefix(c->kind)) {
        int e = rtk_cfar_prefix_launch(y, lines, R, prefix, stream);
        if (e) return e;
    }
    const rtk_cfar_window w = {(int)c->kind, c->guard, c->train, c->guard_doppler,
                               c->train_doppler, D};
    return rtk_cfar_test_launch(y, prefix, lines, R, &w, alpha, rank, hits, capacity, status,
                                stream);
}

extern "C" int stap_cfar_detect_gpu(const stap_cfar_config *c, const stap_cf32 *y_host, int B, int D,
                                    int R, const stap_cfar_gpu_options *go, stap_detection **out,
                                    size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    stap_cfar_plan *plan = NULL;
    int st = stap_cfar_plan_create(&plan, c, B, D, R, 1, err);
    if (st) return st;
    if (c->kind == STAP_CFAR_NONE) {
        stap_cfar_plan_destroy(plan);
        return STAP_OK;
    }
    const long long lines = (long long)B * D;
    const size_t cells = (size_t)lines * R;
    const size_t nt = stap_cfar_table_len(c);
    float2 *dy = NULL;
    double *dprefix = NULL, *dalpha = NULL;
    int *drank = NULL;
    rtk_cfar_hit *dhits = NULL;
    rtk_cpi_status *dst = NULL, hst;
    stap_cfar_hit *hits = NULL;
    const stap_detection *det = NULL;
    size_t n = 0;
    LA_CU_GOTO(cudaMalloc((void **)&dy, sizeof(float2) * cells), st, done);
    LA_CU_GOTO(cudaMalloc((void **)&dprefix, sizeof(double) * (size_t)lines * (R + 1)), st, done);
    LA_CU_GOTO(cudaMalloc((void **)&dalpha, sizeof(double) * nt), st, done);
    LA_CU_GOTO(cudaMalloc((void **)&drank, sizeof(int) * nt), st, done);
    LA_CU_GOTO(cudaMalloc((void **)&dhits, sizeof(rtk_cfar_hit) * cells), st, done); /* every cell could detect */
    LA_CU_GOTO(cudaMalloc((void **)&dst, sizeof(rtk_cpi_status)), st, done);
    LA_CU_GOTO(cudaMemcpy(dy, y_host, sizeof(float2) * cells, cudaMemcpyHostToDevice), st, done);
    LA_CU_GOTO(cudaMemcpy(dalpha, stap_cfar_plan_alpha(plan), sizeof(double) * nt,
                  cudaMemcpyHostToDevice), st, done);
    LA_CU_GOTO(cudaMemcpy(drank, stap_cfar_plan_rank(plan), sizeof(int) * nt, cudaMemcpyHostToDevice), st, done);
    LA_CU_GOTO((cudaError_t)rtk_status_reset_launch(dst, 0), st, done);
    LA_CU_GOTO((cudaError_t)stap_cfar_enqueue(c, B, D, R, dy, dprefix, 1, dalpha, drank, dhits,
                                      (unsigned)cells, dst, go ? go->two_pass : 0,
                                      go ? go->line_threads : 0, 0), st, done);
    LA_CU_GOTO(cudaMemcpy(&hst, dst, sizeof hst, cudaMemcpyDeviceToHost), st, done);
    if (hst.detections) {
        hits = (stap_cfar_hit *)malloc(sizeof(stap_cfar_hit) * hst.detections);
        if (!hits) {
            st = stap_fail(err, STAP_ENOMEM, "GPU CFAR: out of memory for %u detections",
                           hst.detections);
            goto done;
        }
        static_assert(sizeof(stap_cfar_hit) == sizeof(rtk_cfar_hit), "hit layouts differ");
        LA_CU_GOTO(cudaMemcpy(hits, dhits, sizeof(rtk_cfar_hit) * hst.detections, cudaMemcpyDeviceToHost), st, done);
    }
    if ((st = stap_cfar_plan_finish(plan, hits, hst.detections, &det, &n, err))) goto done;
    if (n) {
        *out = (stap_detection *)malloc(sizeof(stap_detection) * n);
        if (!*out) {
            st = stap_fail(err, STAP_ENOMEM, "GPU CFAR: out of memory for %zu detections", n);
            goto done;
        }
        for (size_t i = 0; i < n; i++) (*out)[i] = det[i];
        *count = n;
    }
done:
    free(hits);
    cudaFree(dy);
    cudaFree(dprefix);
    cudaFree(dalpha);
    cudaFree(drank);
    cudaFree(dhits);
    cudaFree(dst);
    stap_cfar_plan_destroy(plan);
    return st;
}
