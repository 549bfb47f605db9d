/* gpu_module.h: stap's half of the boundary with the GPU backends' library (linalg's
 * la_gpu_module.h has the other half and the loader). The library's entry
 * rtstap_gpu_stap_api takes the ABI number and the table of librtstap functions its GPU
 * stages call (stap_gpu_host: it links none of librtstap, so that one library serves a
 * program linked with librtstap.so or librtstap.a alike), and returns the GPU engine and
 * the other GPU entry points of stap/. Not part of the public API. */
#ifndef STAP_GPU_MODULE_H
#define STAP_GPU_MODULE_H

#include "cfar.h"
#include "engine_internal.h"
#include "la_gpu_module.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct stap_gpu_host {
    size_t size;        /* sizeof(stap_gpu_host) */
    size_t engine_size; /* sizeof(struct stap_engine): both sides see one layout */
    const char *(*stap_backend_name)(stap_backend b);
    const stap_algorithm_info *(*stap_algorithm_info_of)(stap_algorithm a);
    unsigned (*stap_algorithm_traits)(const stap_config *c);
    int (*stap_is_subcpi)(const stap_config *c);
    size_t (*stap_weights_count)(const stap_config *cfg, int beams);
    size_t (*stap_output_count)(const stap_config *cfg, int beams);
    const char *(*stap_cfar_kind_name)(stap_cfar_kind k);
    size_t (*stap_cfar_table_len)(const stap_cfar_config *c);
    int (*stap_cfar_plan_create)(stap_cfar_plan **p, const stap_cfar_config *c, int beams,
                                 int doppler_bins, int range_gates, int threads, stap_error *err);
    int (*stap_cfar_plan_finish)(stap_cfar_plan *p, stap_cfar_hit *hits, size_t count,
                                 const stap_detection **out, size_t *n_out, stap_error *err);
    const double *(*stap_cfar_plan_alpha)(const stap_cfar_plan *p);
    const int *(*stap_cfar_plan_rank)(const stap_cfar_plan *p);
    void (*stap_cfar_plan_destroy)(stap_cfar_plan *p);
    size_t (*stap_engine_hit_capacity)(const stap_config *c, int B, const stap_engine_options *o);
    int (*stap_engine_fail_input)(const stap_engine *e, unsigned long long flat, stap_error *err);
    int (*stap_engine_fail_item)(const stap_engine *e, int item, stap_error *err);
    int (*stap_engine_fail_weight)(const stap_engine *e, unsigned long long flat, stap_error *err);
    int (*stap_detector_threshold)(stap_cfar_kind k, int N, int K, double pfa, double *eta,
                                   stap_error *err);
    stap_detection (*stap_cfar_record)(size_t flat, int doppler_bins, int range_gates, double power,
                                       double noise, double statistic, double threshold);
} stap_gpu_host;

typedef struct stap_gpu_api {
    size_t size; /* sizeof(stap_gpu_api) */
    const stap_engine_ops *engine;
    int (*gpu_info)(char *name, size_t len, size_t *free_bytes, size_t *total_bytes,
                    stap_error *err);
    int (*link_bandwidth)(size_t bytes, int repeat, double *h2d_gbs, double *d2h_gbs,
                          stap_error *err);
    int (*cfar_detect)(const stap_cfar_config *c, const stap_cf32 *y, int beams, int doppler_bins,
                       int range_gates, const stap_cfar_gpu_options *go, stap_detection **out,
                       size_t *count, stap_error *err);
} stap_gpu_api;

#define STAP_GPU_STAP_ENTRY "rtstap_gpu_stap_api"
typedef const stap_gpu_api *(*stap_gpu_stap_entry)(int abi, const stap_gpu_host *host);

/* The GPU library's stap table (loaded on first use), or NULL with the reason in err. */
RT_INTERNAL const stap_gpu_api *stap_gpu_api_get(stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
