/* algorithm_stages.h: the CPU engine's stages of a kind of STAP algorithm — the host tables
 * at engine creation, the training formers and the weight solves (algorithm_stages.c). Chosen by
 * the algorithm's traits (stap/config/algorithm.h), so that the engine names no algorithm.
 * Not part of the public API. */
#ifndef STAP_ENGINE_ALGORITHM_STAGES_H
#define STAP_ENGINE_ALGORITHM_STAGES_H

#include "rt_hidden.h"
#include "stap.h"

typedef struct stap_engine stap_engine;

typedef struct stap_algo_stages {
    /* engine creation: the algorithm's own host tables (e->tables: its kind's struct,
     * engine_internal.h) that the stages read; NULL: none */
    int (*prepare)(stap_engine *e, stap_error *err);
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
} stap_algo_stages;

struct stap_algo_tables;
/* Free what prepare made (the tables themselves stay, zeroed). */
RT_INTERNAL void stap_algo_tables_free(struct stap_algo_tables *t);

/* The CPU stages of a validated configuration's algorithm (never NULL). */
RT_INTERNAL const stap_algo_stages *stap_algo_stages_of(const stap_config *c);

#endif
