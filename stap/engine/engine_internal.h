/* engine_internal: the table of functions behind stap_engine (engine.h) and the state
 * every implementation shares. Not part of the public API. */
#ifndef STAP_ENGINE_INTERNAL_H
#define STAP_ENGINE_INTERNAL_H

#include "engine.h"
#include "sample_order.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct stap_engine_ops {
    const char *name;
    int (*create)(stap_engine *e, stap_error *err); /* sets e->impl and e->describe     */
    void (*destroy)(stap_engine *e);
    /* cube: complex64 for the CPU engine; as stored (e->opt.input) for the GPU's */
    int (*submit)(stap_engine *e, int slot, const void *cube, stap_error *err);
    int (*collect)(stap_engine *e, int slot, stap_cpi_result *res, stap_error *err);
    void *(*host_alloc)(stap_engine *e, size_t bytes);
    void (*host_free)(stap_engine *e, void *p);
    int (*doppler)(stap_engine *e, int slot, stap_cf32 *X, stap_error *err);
    size_t (*memory_bytes)(const stap_engine *e);
} stap_engine_ops;

/* An algorithm's own host tables, made by its stages' prepare when the engine is created
 * (algorithm_stages.c) and freed with it; read only by its stages (the CPU ones, the GPU
 * ones of algorithms_gpu.cu and the adaptive detectors' engine_detect.c). One kind's struct
 * is set, the others stay zero. */
typedef struct stap_beamspace_tables { /* STAP_TRAIT_BEAMSPACE (JDL)                        */
    stap_cf32 *A;  /* B x (C x Na) beam transforms (stap_jdl_beams)                        */
    stap_cf32 *Vt; /* B x Nt beamspace steering, T_b^H v_b                                 */
} stap_beamspace_tables;
typedef struct stap_subcpi_tables {    /* STAP_TRAIT_SUBCPI, STAP_TRAIT_FIXED               */
    stap_cf32 *Vs; /* nvs x N solve steering (stap_subcpi_steering): pre-Doppler D x B
                      (bin-major), ADPCA B (= V); DPCA: the B fixed weights                */
    int nvs;       /* D*B or B                                                             */
} stap_subcpi_tables;
typedef struct stap_algo_tables {
    stap_beamspace_tables beamspace;
    stap_subcpi_tables subcpi;
} stap_algo_tables;

struct stap_engine {
    stap_config cfg;          /* validated, backend resolved              */
    stap_engine_options opt;
    int N, M, L, B, batch;    /* DOF, training rows, cells per segment, beams, D*S */
    int Nt;                   /* adapted DOF (training columns): N, or Na*Q for JDL */
    float *win;               /* P window coefficients                    */
    stap_cf32 *V;                  /* B x N steering                           */
    stap_algo_tables tables;  /* the algorithm's own: its stages' (algorithm_stages.c)  */
    int *cells;               /* S x K training cells (stap_training_cells) */
    const stap_engine_ops *ops;
    const stap_engine_ops *host_ops; /* who allocated the caller's host buffers: the first
                                        implementation's, even after a move to the CPU   */
    void *impl;
    int busy[STAP_ENGINE_MAX_SLOTS];
    long long slot_cpi[STAP_ENGINE_MAX_SLOTS];
    const void *slot_cube[STAP_ENGINE_MAX_SLOTS]; /* the caller's cube, valid until collect */
    int slot_loaded[STAP_ENGINE_MAX_SLOTS];       /* resident: the slot's device input holds a cube */
    stap_cf32 *conv;          /* integer input: the CPU engine's complex64 cube (else NULL) */
    int fallback;             /* AUTO asked: a device fault moves the engine to the CPU   */
    long long moved_at;       /* the CPI from which it ran on the CPU (-1: it did not)     */
    long long next_cpi;
    char describe[256];
    char note[512];           /* why AUTO runs on the CPU, or ""   */
    int threads;              /* CPU threads computing (set by the CPU engine; 0 on a GPU) */
    int custom_steering;      /* the caller's steering vectors, not the default beams     */
    char device[128];         /* the GPU's name, or the CPU model                         */
};

RT_INTERNAL extern const stap_engine_ops stap_engine_cpu_ops;
/* the GPU engine's table is the GPU backends' library's (gpu_module.h) */

/* The submitted cube's stride (in samples) along channel, pulse and range, from the input's
 * stored order ({0, 0, 0}: channel, pulse, range); 1 when that is (channel, pulse, range)
 * (inline for the GPU library, which calls librtstap through its table only) */
static inline int stap_engine_input_strides(const stap_engine *e, long long st[3])
{
    int axis[3];
    stap_sample_order(&e->opt.input.order, axis); /* validated at create */
    return stap_sample_strides(axis, e->cfg.channels, e->cfg.pulses, e->cfg.range_gates, st);
}

/* The cube is taken as stored: not complex64 in (channel, pulse, range) order. */
static inline int stap_engine_input_as_stored(const stap_engine *e)
{
    long long st[3];
    return e->opt.input.type != STAP_SAMPLES_CF32 || !stap_engine_input_strides(e, st);
}

/* Bytes of one submitted cube (stap_engine_cube_bytes; inline for the GPU library, which
 * calls librtstap through its table only) */
static inline size_t stap_engine_input_bytes(const stap_engine *e)
{
    const size_t each = e->opt.input.type == STAP_SAMPLES_CI8 ? 2 : e->opt.input.type == STAP_SAMPLES_CI16 ? 4 : 8;
    return (size_t)e->cfg.channels * e->cfg.pulses * e->cfg.range_gates * each;
}

/* Doppler bin of tap q for centre bin d (contract step 2). */
static inline int stap_tap_bin(int d, int q, int Q, int D)
{
    int b = (d - (Q - 1) / 2 + q) % D;
    return b < 0 ? b + D : b;
}

/* The CPU engine's work Wt of B x D x S x Nt: weights solved somewhere else than W (a
 * beamspace, or the sub-CPI solves' order) */
static inline int stap_engine_needs_wt(const stap_config *c)
{
    const unsigned t = stap_algorithm_traits(c);
    return (t & (STAP_TRAIT_BEAMSPACE | STAP_TRAIT_SUBCPI)) && !(t & STAP_TRAIT_FIXED);
}

/* The messages of a failed CPI, shared by both implementations. */
/* CFAR hits a GPU slot's device list holds (stap_engine_options.hit_capacity; 0 without
 * a detector) */
RT_INTERNAL size_t stap_engine_hit_capacity(const stap_config *c, int B, const stap_engine_options *o);
RT_INTERNAL int stap_engine_fail_input(const stap_engine *e, unsigned long long flat, stap_error *err);
RT_INTERNAL int stap_engine_fail_item(const stap_engine *e, int item, stap_error *err);
RT_INTERNAL int stap_engine_fail_weight(const stap_engine *e, unsigned long long flat, stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
