/* engine_gpu.h: the GPU engine's state (engine_gpu.cu) and the table of each algorithm's
 * GPU stages (stap/engine/algorithms_gpu.cu), which fill and use it. C++, host code;
 * not part of the public API. */
#ifndef STAP_ENGINE_GPU_H
#define STAP_ENGINE_GPU_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include "cfar_gpu.h"
#include "la_device.h"
#include "la_gpu_check.h"
#include "rtk_pipeline.h"
extern "C" {
#include "engine_internal.h"
}

/* events of a slot: ev[i] .. ev[i+1] brackets stage i of STAP_STAGE_* */
constexpr int STAP_GPU_NEV = STAP_STAGE_COUNT + 1;

/* The beamspace algorithms' (JDL) own GPU state, made and read by their stages alone
 * (algorithms_gpu.cu): the engine's device tables, and each slot's solvers and buffers. */
struct stap_gpu_beamspace {
    float2 *d_A = nullptr;  /* B x Na x C transforms (e->tables.beamspace.A)        */
    float2 *d_Vt = nullptr; /* B x Na*Q beamspace steering (e->tables.beamspace.Vt) */
    bool shared = false;    /* every beam's beamspace steering the same             */
};
struct stap_gpu_beamspace_slot {
    la_dev_weights **jqr = nullptr; /* one for all beams (B*D*S items) when they share the
                                       beamspace steering, else one per beam (D*S each) */
    int njqr = 0;
    float2 *d_Xb = nullptr;         /* beamspace cubes, B x D x Na x R                   */
    float2 *d_Wt = nullptr;         /* beamspace weights, B x D*S x Na*Q                 */
};

struct stap_gpu_slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t ev[STAP_GPU_NEV] = {};
    cudaGraphExec_t graph = nullptr;
    cufftHandle fft = 0;
    bool fft_made = false;
    la_dev_weights *qr = nullptr;     /* post-Doppler: the batch of D*S; sub-CPI: the
                                         grouped solver (S factors, D*S items)         */
    stap_gpu_beamspace_slot bs;       /* beamspace (JDL): its own, algorithms_gpu.cu */
    rtk_gather g{};
    float2 *d_in = nullptr, *d_X = nullptr, *d_W = nullptr, *d_Y = nullptr;
    void *d_raw = nullptr;            /* integer input: the cube as stored (else NULL) */
    double *d_prefix = nullptr;
    /* apply as GEMMs (apply_gemm): weights by tap, pointer arrays (Q x batch each) */
    cublasHandle_t blas = nullptr;
    float2 *d_Wc = nullptr;
    void **d_ptr = nullptr;
    rtk_cfar_hit *d_hits = nullptr;
    rtk_cpi_status *d_status = nullptr;
    rtk_cpi_status *h_status = nullptr; /* pinned */
    rtk_cfar_hit *h_hits = nullptr;     /* pinned, hit_cap entries */
    stap_cf32 *h_W = nullptr, *h_Y = nullptr; /* pinned, when kept */
    stap_cfar_plan *cfar = nullptr;      /* records from hits */
    stap_detection *det = nullptr;       /* adaptive detectors: the records, hit_cap of them */
    double submit_ms = 0;
    double done_ms = 0;
};

struct stap_gpu_engine {
    size_t dev_bytes = 0, host_bytes = 0;
    float *d_win = nullptr;
    float2 *d_V = nullptr;
    stap_gpu_beamspace bs;  /* beamspace (JDL): its own device tables (algorithms_gpu.cu) */
    float2 *d_Vs = nullptr; /* sub-CPI, fixed weights: e->tables.subcpi.Vs on the device */
    int *d_cells = nullptr; /* S x K training cells, read by the gather */
    double *d_alpha = nullptr;
    int *d_rank = nullptr;
    unsigned hit_cap = 0;   /* device hit list per slot            */
    unsigned hit_chunk = 0; /* entries copied back with every CPI  */
    rtk_cfar_hit *d_big = nullptr; /* overflow path: every cell    */
    rtk_cpi_status *d_big_status = nullptr;
    stap_cfar_hit *h_big = nullptr;
    stap_detection *big_det = nullptr; /* adaptive detectors, overflow path: every cell's record */
    double eta = 0;         /* adaptive detectors: the threshold (stap_detector_threshold) */
    bool graphs = false;
    char graph_note[96] = {0};
    stap_gpu_slot slot[STAP_ENGINE_MAX_SLOTS];
};

/* Device memory for the engine, counted in dev_bytes; the message names `what`. */
template <typename T>
int stap_gpu_dalloc(stap_gpu_engine *g, T **p, size_t bytes, const char *what, stap_error *err)
{
    cudaError_t e = (cudaError_t)rtk_malloc((void **)p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = nullptr;
        (void)cudaGetLastError();
        return stap_fail(err, e == cudaErrorMemoryAllocation ? STAP_ENOMEM : STAP_EDEVICE,
                         "GPU engine: cudaMalloc of %zu bytes for the %s failed: %s", bytes, what,
                         cudaGetErrorString(e));
    }
    g->dev_bytes += bytes;
    return STAP_OK;
}

/* An algorithm's GPU stages (algorithms_gpu.cu). */
struct stap_gpu_algo {
    /* engine creation: the algorithm's device tables from the host ones (NULL: none) */
    int (*create)(stap_engine *e, stap_gpu_engine *g, stap_error *err);
    /* slot creation: its solvers and buffers (s->g, the gather of the Doppler cube, set) */
    int (*create_slot)(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err);
    /* a CPI's training, QR and weights on the slot's stream, into s->d_W; records
     * ev[STAP_STAGE_QR] and ev[STAP_STAGE_WEIGHTS] (the training stage starts before) */
    int (*enqueue)(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err);
    /* the engine's description of the QR and weight stages */
    void (*describe)(const stap_engine *e, const stap_gpu_engine *g, char *buf, size_t len);
    /* the adaptive detectors (NULL where stap_detector_check refuses the algorithm):
     * keep_factors at slot creation (the solvers keep their R factors), detect per CPI after
     * the apply (rtk_adaptive_detect_launch over every training matrix, hits appended to
     * hits, counted in status->detections) */
    int (*keep_factors)(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err);
    int (*detect)(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, rtk_detect_hit *hits,
                  unsigned capacity, rtk_cpi_status *status, stap_error *err);
};

const stap_gpu_algo *stap_gpu_algo_of(const stap_config *c);

#endif
