/* engine_gpu_loader.c: stap's GPU entry points in librtstap — the GPU engine's function table
 * and stap_gpu_info, stap_gpu_link_bandwidth and stap_cfar_detect_gpu — from the GPU
 * backends' library (gpu_module.h), which gets the librtstap functions it calls from
 * here. Without the library each says why. */
#include "gpu_module.h"

#include <pthread.h>
#include <stdio.h>

static const stap_gpu_host host = {
    sizeof(stap_gpu_host),
    sizeof(struct stap_engine),
    stap_backend_name,
    stap_algorithm_info_of,
    stap_algorithm_traits,
    stap_is_subcpi,
    stap_weights_count,
    stap_output_count,
    stap_cfar_kind_name,
    stap_cfar_table_len,
    stap_cfar_plan_create,
    stap_cfar_plan_finish,
    stap_cfar_plan_alpha,
    stap_cfar_plan_rank,
    stap_cfar_plan_destroy,
    stap_engine_hit_capacity,
    stap_engine_fail_input,
    stap_engine_fail_item,
    stap_engine_fail_weight,
    stap_detector_threshold,
    stap_cfar_record,
};

static struct {
    pthread_once_t once;
    const stap_gpu_api *api;
    stap_error why;
} mod = {PTHREAD_ONCE_INIT, NULL, {0}};

static void load(void)
{
    stap_gpu_stap_entry entry =
        (stap_gpu_stap_entry)stap_la_gpu_module_symbol(STAP_GPU_STAP_ENTRY, &mod.why);
    if (!entry) return;
    const stap_gpu_api *a = entry(RTSTAP_GPU_ABI, &host);
    if (!a || a->size != sizeof *a) {
        stap_fail(&mod.why, STAP_EUNSUPPORTED, "%s is not the GPU library of this build of rtstap "
                  "(another ABI)", stap_la_gpu_module_path());
        return;
    }
    mod.api = a;
}

const stap_gpu_api *stap_gpu_api_get(stap_error *err)
{
    pthread_once(&mod.once, load);
    if (!mod.api && err) *err = mod.why;
    return mod.api;
}

int stap_gpu_info(char *name, size_t len, size_t *free_bytes, size_t *total_bytes, stap_error *err)
{
    const stap_gpu_api *a = stap_gpu_api_get(err);
    return a ? a->gpu_info(name, len, free_bytes, total_bytes, err) : STAP_EUNSUPPORTED;
}

int stap_gpu_link_bandwidth(size_t bytes, int repeat, double *h2d_gbs, double *d2h_gbs,
                            stap_error *err)
{
    const stap_gpu_api *a = stap_gpu_api_get(err);
    return a ? a->link_bandwidth(bytes, repeat, h2d_gbs, d2h_gbs, err) : STAP_EUNSUPPORTED;
}

int stap_cfar_detect_gpu(const stap_cfar_config *c, const stap_cf32 *y, int beams, int doppler_bins,
                         int range_gates, const stap_cfar_gpu_options *go, stap_detection **out,
                         size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    const stap_gpu_api *a = stap_gpu_api_get(err);
    return a ? a->cfar_detect(c, y, beams, doppler_bins, range_gates, go, out, count, err)
             : STAP_EUNSUPPORTED;
}
