/* gpu_entry.cu: the GPU backends' library's stap entry (gpu_module.h) — it keeps the table
 * of librtstap functions the caller passes, and defines those functions here, for the GPU
 * stages of stap/ (engine_gpu.cu, algorithms_gpu.cu, cfar_gpu.cu), as calls through it.
 * The library exports only its entries and the kernels' rtk_ API, so these names stay its
 * own. */
#include <cstring>

extern "C" {
#include "gpu_module.h"
}

extern "C" const stap_engine_ops stap_engine_gpu_ops;
extern "C" int stap_gpu_info(char *name, size_t len, size_t *free_bytes, size_t *total_bytes,
                             stap_error *err);
extern "C" int stap_gpu_link_bandwidth(size_t bytes, int repeat, double *h2d_gbs,
                                       double *d2h_gbs, stap_error *err);
extern "C" int stap_cfar_detect_gpu(const stap_cfar_config *c, const stap_cf32 *y, int beams,
                                    int doppler_bins, int range_gates, const stap_cfar_gpu_options *go,
                                    stap_detection **out, size_t *count, stap_error *err);

static const stap_gpu_host *H = nullptr;

extern "C" const stap_gpu_api *rtstap_gpu_stap_api(int abi, const stap_gpu_host *host)
{
    static const stap_gpu_api api = {sizeof(stap_gpu_api), &stap_engine_gpu_ops, stap_gpu_info,
                                     stap_gpu_link_bandwidth, stap_cfar_detect_gpu};
    if (abi != RTSTAP_GPU_ABI || !host || host->size != sizeof *host ||
        host->engine_size != sizeof(struct stap_engine))
        return nullptr;
    H = host;
    return &api;
}

extern "C" {
const char *stap_backend_name(stap_backend b) { return H->stap_backend_name(b); }
const stap_algorithm_info *stap_algorithm_info_of(stap_algorithm a)
{
    return H->stap_algorithm_info_of(a);
}
unsigned stap_algorithm_traits(const stap_config *c) { return H->stap_algorithm_traits(c); }
int stap_is_subcpi(const stap_config *c) { return H->stap_is_subcpi(c); }
size_t stap_weights_count(const stap_config *cfg, int beams)
{
    return H->stap_weights_count(cfg, beams);
}
size_t stap_output_count(const stap_config *cfg, int beams)
{
    return H->stap_output_count(cfg, beams);
}
const char *stap_cfar_kind_name(stap_cfar_kind k) { return H->stap_cfar_kind_name(k); }
size_t stap_cfar_table_len(const stap_cfar_config *c) { return H->stap_cfar_table_len(c); }
int stap_cfar_plan_create(stap_cfar_plan **p, const stap_cfar_config *c, int beams,
                          int doppler_bins, int range_gates, int threads, stap_error *err)
{
    return H->stap_cfar_plan_create(p, c, beams, doppler_bins, range_gates, threads, err);
}
int stap_cfar_plan_finish(stap_cfar_plan *p, stap_cfar_hit *hits, size_t count,
                          const stap_detection **out, size_t *n_out, stap_error *err)
{
    return H->stap_cfar_plan_finish(p, hits, count, out, n_out, err);
}
const double *stap_cfar_plan_alpha(const stap_cfar_plan *p) { return H->stap_cfar_plan_alpha(p); }
const int *stap_cfar_plan_rank(const stap_cfar_plan *p) { return H->stap_cfar_plan_rank(p); }
void stap_cfar_plan_destroy(stap_cfar_plan *p) { H->stap_cfar_plan_destroy(p); }
size_t stap_engine_hit_capacity(const stap_config *c, int B, const stap_engine_options *o)
{
    return H->stap_engine_hit_capacity(c, B, o);
}
int stap_engine_fail_input(const stap_engine *e, unsigned long long flat, stap_error *err)
{
    return H->stap_engine_fail_input(e, flat, err);
}
int stap_engine_fail_item(const stap_engine *e, int item, stap_error *err)
{
    return H->stap_engine_fail_item(e, item, err);
}
int stap_engine_fail_weight(const stap_engine *e, unsigned long long flat, stap_error *err)
{
    return H->stap_engine_fail_weight(e, flat, err);
}
int stap_detector_threshold(stap_cfar_kind k, int N, int K, double pfa, double *eta, stap_error *err)
{
    return H->stap_detector_threshold(k, N, K, pfa, eta, err);
}
stap_detection stap_cfar_record(size_t flat, int doppler_bins, int range_gates, double power,
                                double noise, double statistic, double threshold)
{
    return H->stap_cfar_record(flat, doppler_bins, range_gates, power, noise, statistic, threshold);
}
}
