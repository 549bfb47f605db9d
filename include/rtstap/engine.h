/* engine: the STAP processing engine — one object per CPI shape and backend that owns
 * every buffer, FFT plan, stream, event, graph and pinned host buffer it needs, created
 * once, fed CPIs through `slots` (several CPIs in flight on the GPU: copy-in of one,
 * compute of another and copy-out of a third overlap), destroyed. Nothing is allocated
 * per CPI. Two implementations behind one table of functions: engine_cpu.c (backends
 * cpu and lapack: FFTW, the linalg CPU QR, cblas_cgemm, CFAR with prefix sums) and
 * engine_gpu.cu (gpu and cublas: every stage on the device). The backend is chosen
 * once, at create; nothing above the engine branches on it.
 *
 * Use: create; for each CPI: submit(slot, cube) then, before that slot is used again,
 * collect(slot) — results stay valid until the slot's next submit; destroy.
 * Threads: the calls on one engine must not overlap (its slots share work buffers: serialize
 * them); distinct engines may submit and collect at once, but stap_engine_create and
 * stap_engine_destroy must not overlap each other's calls, whatever the engine (they plan and
 * free FFTW transforms: FFTW's planner is not thread-safe).
 * The stages are README's processing contract, steps 1-8, then CFAR. */
#ifndef STAP_ENGINE_H
#define STAP_ENGINE_H

#include <stddef.h>

#include "cfar.h"
#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STAP_ENGINE_MAX_SLOTS 8

/* The GPU engine's tuning switches: all 0 = what the dispatch chooses, the defaults every
 * measured table uses. The others exist for comparisons (A/B runs of a kernel against the
 * one it replaced, docs/kernels/journal.md); each changes speed, and where it changes the
 * arithmetic (the apply kernels, the fused solver) the results stay within the accuracy
 * contract. The CPU engine ignores them. rtstap sets them from RTSTAP_* variables
 * (docs/usage.md "Environment"). */
typedef struct stap_engine_tuning {
    int doppler_one_kernel; /* the Doppler filter as one kernel (window, conversion, FFT and
                               layout in registers): 0 where D = 128 (measured faster there),
                               1 wherever D is a power of two, -1 never (the load kernel and
                               cuFFT)                                                       */
    int doppler_tile;       /* that kernel's cell blocks: 0 as dispatched, 32 the earlier
                               32-cell blocks                                               */
    int apply_kernel;       /* the weight application: 0 as dispatched (the tensor cores for
                               N > 16, the row kernel otherwise), 1 the row kernel for every N,
                               2 the FP32 register-tiled kernel                             */
    int apply_cfar_apart;   /* 1: the apply and the CFAR as two kernels where they would run
                               as one (detections only, CA/GO/SO, R <= 512)                 */
    stap_cfar_gpu_options cfar; /* the CFAR's kernels (cfar.h); two_pass also keeps the apply
                               and the CFAR apart                                          */
    stap_la_tuning la;      /* the QR dispatch and the fused solver (linalg.h)              */
} stap_engine_tuning;

typedef struct stap_engine_options {
    int slots;            /* CPIs in flight, 1..STAP_ENGINE_MAX_SLOTS (CPU: each slot
                             keeps its own results; computing happens at submit)       */
    int keep_weights;     /* return the weights (D x S x B x N) of each CPI            */
    int keep_output;      /* return the adaptive output (B x D x R) of each CPI        */
    stap_cfar_config cfar;/* detector; kind STAP_CFAR_NONE = no detection stage         */
    int graphs;           /* GPU: replay each slot's launches as a CUDA graph          */
    int qr_variant;       /* GPU: force a QR kernel variant (-1 = dispatch table)      */
    int apply_gemm;       /* GPU: weight application as cuBLAS batched GEMMs (one per
                             Doppler tap) instead of the apply kernel                  */
    size_t host_reserve;  /* host memory the caller needs besides the engine (its cubes,
                             queues), bytes: counted in the memory check at create     */
    stap_sample_format input; /* how the submitted cubes store their samples (stap.h):
                             complex64 by default; integer pairs cross the host link as
                             stored and are converted by the GPU's first kernel (the CPU
                             engine converts them on the host)                         */
    int resident;         /* GPU: a slot's input stays in device memory: after a slot's
                             first submit, stap_engine_submit with a NULL cube runs the
                             same cube again with no copy-in — device compute alone (for
                             measurements: `stream --resident`); no move to the CPU    */
    size_t hit_capacity;  /* GPU: CFAR hits the device list of a slot holds (0 = 16x
                             the expected false alarms, at least 65536, at most every
                             cell); a CPI that detects more is tested again into a list
                             of every cell, so no hit is lost either way               */
    int detection_copies; /* copies of a CPI's detections the caller holds at once (its
                             writer's queue), counted in the memory check at the hit
                             capacity above (the CPU engine's too): 0 = none           */
    size_t host_limit;    /* host memory the run may plan to use, bytes, when lower than
                             what is available (stap_memory_available); 0 = no limit   */
    size_t device_limit;  /* GPU: device memory likewise, against its free memory     */
    const char *host_limit_name, *device_limit_name; /* how errors name the two limits
                             (NULL: "the engine options' host_limit"...); rtstap names
                             its RTSTAP_MEMORY_LIMIT and RTSTAP_DEVICE_MEMORY_LIMIT     */
    stap_engine_tuning tuning; /* GPU: the switches above (zero: the defaults)          */
} stap_engine_options;

/* slots 2, weights kept, output not, CA-CFAR at its defaults, graphs on, no memory limit,
 * the tuning's defaults (all 0) */
void stap_engine_options_defaults(stap_engine_options *o);
/* STAP_OK when every switch of t is in range, else STAP_EINVAL naming it (stap_engine_create
 * checks too). */
int stap_engine_tuning_check(const stap_engine_tuning *t, stap_error *err);

typedef struct stap_cpi_result {
    long long cpi;                      /* submit sequence number, from 0               */
    const stap_cf32 *weights;                /* D x S x B x N, or NULL when not kept         */
    const stap_cf32 *output;                 /* B x D x R, or NULL when not kept             */
    const stap_detection *detections;   /* sorted by (beam, Doppler bin, range cell)    */
    size_t detection_count;
    double stage_ms[STAP_STAGE_COUNT];  /* CUDA-event (GPU) or wall-clock (CPU) times   */
    double submit_ms, done_ms;          /* host monotonic clock (ms): submit entered,
                                           results complete in host memory              */
    float diag_ratio;                   /* the training's conditioning: the smallest
                                           min_i |R_ii| / max_i |R_ii| of the CPI's
                                           factors (1 = perfectly conditioned, near 0 =
                                           numerically rank-deficient)                  */
    int diag_ratio_item;                /* its batch item: Doppler bin item / S, segment
                                           item % S                                     */
    long long qr_cholqr2, qr_guarded;   /* the CPI's factors by CholeskyQR2 or cholqr,
                                           and those their guard refactored by
                                           Householder (stap_config.qr; both 0 where
                                           Householder alone ran)                       */
} stap_cpi_result;

typedef struct stap_engine stap_engine;

/* Create an engine: validates cfg (copied; backend AUTO resolves to gpu when a CUDA
 * device is usable, else cpu) and opt, and checks the working set against the memory
 * available (stap_engine_check_memory) before allocating anything. With AUTO, a GPU
 * engine that cannot be made (device memory short, an allocation or CUDA call failing)
 * falls back to the CPU engine, and stap_engine_note says why. steering: nbeams x steering_len row-major, as the
 * caller has it (steering_len must equal N = C*Q and nbeams is capped like cfg->beams, or the
 * call fails naming /steering), or NULL for the default beams (cfg->beams). */
int stap_engine_create(stap_engine **e, const stap_config *cfg, const stap_cf32 *steering, int nbeams,
                       int steering_len, const stap_engine_options *opt, stap_error *err);
void stap_engine_destroy(stap_engine *e);
/* "" or, after a fallback, why the engine runs on the CPU although AUTO asked for the GPU:
 * made there (the GPU engine could not be made), or moved there in the middle of a run. An
 * engine made with AUTO that meets a device error (STAP_EDEVICE) at submit or collect moves
 * to the CPU engine and submits every CPI in flight again, in order, from the caller's
 * cubes: no CPI is lost, repeated or reordered, and the call goes on. An engine made for a
 * named backend returns the error. */
const char *stap_engine_note(const stap_engine *e);
/* The CPI (submit sequence number) from which the engine ran on the CPU after a device
 * fault, or -1. */
long long stap_engine_moved_to_cpu(const stap_engine *e);

/* The memory an engine of this configuration would hold (cfg validated on a copy; its
 * backend must be resolved or AUTO, which counts the GPU engine when a device is usable):
 * host bytes (pinned for the GPU engine) and device bytes, from the buffer sizes the
 * implementations allocate (an upper estimate: the GPU count includes materialized
 * training matrices and a cuFFT work area the size of the Doppler cube). */
int stap_engine_estimate(const stap_config *cfg, int nbeams, int steering_len,
                         const stap_engine_options *opt, size_t *host_bytes,
                         size_t *device_bytes, stap_error *err);
/* The host memory a run may plan to use: MemAvailable (/proc/meminfo), lowered by a cgroup
 * v2 limit (memory.max - memory.current). STAP_OK with what was found; src names where the
 * figure came from. (The engine's check lowers it, and the device's free memory, by the
 * options' host_limit and device_limit.) */
int stap_memory_available(size_t *host_bytes, const char **src, stap_error *err);
/* The estimate plus opt->host_reserve against what is available: STAP_ENOMEM naming the
 * need, the estimate's parts and what is available (backend AUTO: only the host is
 * checked). */
int stap_engine_check_memory(const stap_config *cfg, int nbeams, int steering_len,
                             const stap_engine_options *opt, stap_error *err);

/* Start a CPI (cube: C x P x R row-major samples stored as opt->input says, host memory;
 * from stap_engine_host_alloc for full copy speed on the GPU) in a free slot. The cube may
 * be reused once the slot is collected. STAP_EINVAL when the slot is out of range or not
 * collected yet. With opt->resident, a NULL cube runs the slot's last cube again from
 * device memory (STAP_EINVAL before the slot's first cube). */
int stap_engine_submit(stap_engine *e, int slot, const void *cube, stap_error *err);
/* Bytes of one submitted cube: C * P * R * stap_sample_bytes(&opt->input). */
size_t stap_engine_cube_bytes(const stap_engine *e);
/* Wait for the slot's CPI and return its results. A CPI whose input has a non-finite
 * sample, whose training data is singular or whose weights are not finite fails here
 * (STAP_EFORMAT / STAP_ENUMERIC, naming the sample or the Doppler bin and segment); the slot
 * is free again either way. */
int stap_engine_collect(stap_engine *e, int slot, stap_cpi_result *res, stap_error *err);

/* The conditioning limit: a CPI whose diag_ratio is below 10 * FLT_EPSILON * N (N the
 * degrees of freedom) has training data that is rank-deficient to working precision —
 * its weights are dominated by rounding. stap_engine_check_conditioning returns
 * STAP_ENUMERIC naming the Doppler bin, segment, ratio and limit in that case, else STAP_OK
 * (the caller decides whether that is a warning or an error). */
double stap_engine_conditioning_limit(const stap_engine *e);
int stap_engine_check_conditioning(const stap_engine *e, const stap_cpi_result *r, stap_error *err);

/* Host memory for cubes: pinned (page-locked) for the GPU engine, plain for the CPU one. */
void *stap_engine_host_alloc(stap_engine *e, size_t bytes);
void stap_engine_host_free(stap_engine *e, void *p);

const stap_config *stap_engine_config(const stap_engine *e); /* backend resolved       */
int stap_engine_slots(const stap_engine *e);
int stap_engine_beams(const stap_engine *e);
const stap_cf32 *stap_engine_steering(const stap_engine *e); /* B x N                        */
const stap_engine_options *stap_engine_options_of(const stap_engine *e);
/* One line on how the stages run, e.g. "gpu: cuFFT, flw16x22_15x3 (gather + QR + weights
 * fused), apply kernel, CA-CFAR kernels, CUDA graphs, 2 slots". */
const char *stap_engine_describe(const stap_engine *e);
/* What a result records of the run (docs/file-format.md: /config threads, device, engine):
 * the CPU threads the engine computes with (0 for a GPU engine: the device computes), the
 * device that computes (the GPU's name, else the CPU model), and whether the steering
 * vectors came from the caller (else they are the default beams, at stap_beam_u). */
int stap_engine_threads(const stap_engine *e);
const char *stap_engine_device(const stap_engine *e);
int stap_engine_custom_steering(const stap_engine *e);
/* Device memory (GPU) or work memory (CPU) the engine holds, bytes. */
size_t stap_engine_memory_bytes(const stap_engine *e);
size_t stap_weights_count(const stap_config *cfg, int beams); /* D * S * B * N */
size_t stap_output_count(const stap_config *cfg, int beams);  /* B * D * R     */

/* The Doppler cube of the slot's last CPI, C x D x R (copied from the device by the GPU
 * engine): for tests and tools. Sub-CPI algorithms: the staggered cube of each channel's
 * sub-CPI pulse 0 (README step 1', q = 0). */
int stap_engine_doppler(stap_engine *e, int slot, stap_cf32 *X, stap_error *err);

/* GPU facts for reports and memory checks (builds with CUDA and a usable device;
 * otherwise STAP_EUNSUPPORTED or STAP_EDEVICE). name: the device's name. */
int stap_gpu_info(char *name, size_t len, size_t *free_bytes, size_t *total_bytes,
                  stap_error *err);
/* The host link measured with pinned buffers of `bytes`: median GB/s of `repeat` copies
 * each way. */
int stap_gpu_link_bandwidth(size_t bytes, int repeat, double *h2d_gbs, double *d2h_gbs,
                            stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
