/* algorithm.h: the descriptor of a STAP algorithm — what it is (stap_algorithm_info), how a
 * configuration of it is checked and labelled, and its hooks into the engine's host
 * tables and CPU stages. One descriptor per algorithm, in one table (algorithms.c); the
 * GPU stages have their own table beside the GPU engine (algorithms_gpu.cu). Code outside
 * those two files and the enum (stap.h) never names an algorithm: it asks the descriptor.
 * Not part of the public API. */
#ifndef STAP_ENGINE_ALGORITHM_H
#define STAP_ENGINE_ALGORITHM_H

#include "rt_hidden.h"
#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stap_engine stap_engine;

typedef struct stap_algo {
    stap_algorithm_info info;
    /* stap_config_validate's part for this algorithm: defaults and ranges of its own
     * parameter (angle bins, DPCA shift); NULL: nothing of its own */
    int (*validate)(stap_config *c, stap_error *err);
    /* N = C*Q adapted DOF (default) or fewer: the columns of a training matrix */
    int (*adapted_dof)(const stap_config *c);
    /* tap q of the default steering's Q taps h of a beam: v = a(u) (x) h */
    float (*steering_tap)(int Q, int q);
    /* the solves' steering vector for Doppler bin d (sub-CPI), in double (re, im) pairs */
    void (*bin_steering)(const stap_config *c, const stap_cf32 *v, int d, double *s);
    /* fixed weights for steering vector v (STAP_TRAIT_FIXED) */
    void (*fixed_weights)(const stap_config *c, const stap_cf32 *v, stap_cf32 *w);
    /* the label's own part after the name (" NA=3"), "" for none */
    void (*label)(const stap_config *c, char *buf, size_t len);
    /* engine creation: the host tables the stages read (e->A, e->Vt, e->Vs, e->nvs) */
    int (*prepare)(stap_engine *e, stap_error *err);

    /* ---- CPU engine (engine_cpu.c) */
    /* contract steps 2-4: the training matrices T (stap_training_matrices of M x Nt,
     * column-major) from the Doppler cube X or, sub-CPI, the input cube x; NULL: none */
    void (*cpu_training)(const stap_engine *e, const stap_cf32 *X, const stap_cf32 *x, stap_cf32 *T,
                         int threads);
    /* steps 5-7: the weights W (D x S x B x N) from T (factored in place), with Wt the
     * work of B x D x S x Nt; the QR time into lt->qr_ms */
    int (*cpu_weights)(const stap_engine *e, stap_la_ctx *la, stap_cf32 *T, stap_cf32 *Wt, stap_cf32 *W,
                       stap_la_timing *lt, stap_error *err);
    /* the engine's description of the algorithm ("JDL 3 beams x 3 bins, "), "" for none */
    void (*cpu_describe)(const stap_config *c, char *buf, size_t len);
} stap_algo;

/* The descriptor of c's algorithm; NULL when it is not one. */
RT_INTERNAL const stap_algo *stap_algo_of(const stap_config *c);

#ifdef __cplusplus
}
#endif

#endif
