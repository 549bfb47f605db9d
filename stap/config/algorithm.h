/* algorithm.h: the descriptor of a STAP algorithm — what it is (stap_algorithm_info), how a
 * configuration of it is checked, sized and labelled, its steering. One descriptor per
 * algorithm, in one table (stap/config/algorithms.c), below the configuration that reads it
 * and the engines: the CPU engine's stages follow the traits (stap/engine/algorithm_stages.h),
 * the GPU stages have their own table beside the GPU engine (algorithms_gpu.cu). Code outside
 * those two tables and the enum (stap.h) never names an algorithm: it asks the descriptor.
 * Not part of the public API. */
#ifndef STAP_CONFIG_ALGORITHM_H
#define STAP_CONFIG_ALGORITHM_H

#include "rt_hidden.h"
#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    /* the Q temporal taps t (re, im pairs) of a target delta Doppler bins from the bin
     * nearest it (|delta| <= 1/2), the Doppler window win (stap_window_len coefficients):
     * the steering of stap_steering_from_looks with a target Doppler; NULL: the weights do
     * not depend on a target Doppler (one weight for every bin, or fixed) */
    void (*doppler_taps)(const stap_config *c, const float *win, double delta, double *t);
    /* fixed weights for steering vector v (STAP_TRAIT_FIXED) */
    void (*fixed_weights)(const stap_config *c, const stap_cf32 *v, stap_cf32 *w);
    /* the label's own part after the name (" NA=3"), "" for none */
    void (*label)(const stap_config *c, char *buf, size_t len);
} stap_algo;

/* The descriptor of c's algorithm; NULL when it is not one. */
RT_INTERNAL const stap_algo *stap_algo_of(const stap_config *c);

#ifdef __cplusplus
}
#endif

#endif
