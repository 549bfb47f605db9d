/* workload.c: named CPI shapes and their cube generators for `stream` and `bench`. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perfect.h"
#include "rt_rng.h"
#include "synth.h"

int workload_get(const char *name, workload *w, stap_error *err)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    stap_config_defaults(&w->cfg);
    if (!strncasecmp(name, "perfect-", 8)) {
        perfect_size ps;
        if (stap_perfect_size_parse(name + 8, &ps, err)) return STAP_EINVAL;
        w->perfect = (int)ps + 1;
        stap_perfect_config(ps, &w->cfg);
        const perfect_dims *pd = stap_perfect_get_dims(ps);
        w->nbeams = pd->steering;
        w->steering_len = pd->channels * pd->doppler_order;
        const size_t n = (size_t)w->nbeams * w->steering_len;
        w->steering = malloc(sizeof(stap_cf32) * n);
        if (!w->steering) return stap_fail(err, STAP_ENOMEM, "out of memory for steering vectors");
        rt_rng r;
        rt_rng_seed(&r, 20101, 99); /* the suite's statistics: uniform [0, 1) */
        for (size_t i = 0; i < n; i++) w->steering[i] = (float)rt_uniform(&r) + I * (float)rt_uniform(&r);
        return STAP_OK;
    }
    stap_preset p;
    if (stap_preset_parse(name, &p, err))
        return stap_fail(err, STAP_EINVAL, "unknown workload '%s' (expected easy, medium, hard, "
                         "perfect-small, perfect-medium or perfect-large)", name);
    w->preset = (int)p;
    stap_preset_config(p, &w->cfg);
    return STAP_OK;
}

void workload_free(workload *w) { free(w->steering); w->steering = NULL; }

size_t workload_cube_len(const workload *w)
{
    return (size_t)w->cfg.channels * w->cfg.pulses * w->cfg.range_gates;
}

int workload_cube(const workload *w, int index, stap_cf32 *cube, stap_error *err)
{
    if (w->perfect) {
        rt_rng r;
        rt_rng_seed(&r, 20101 + (uint64_t)index, 7);
        const size_t n = workload_cube_len(w);
        for (size_t i = 0; i < n; i++)
            cube[i] = (float)(1e6 * rt_uniform(&r)) + I * (float)(1e6 * rt_uniform(&r));
        return STAP_OK;
    }
    synth_params sp;
    stap_synth_defaults(&sp, w->cfg.channels, w->cfg.pulses, w->cfg.range_gates);
    sp.seed = 20101 + (uint64_t)index;
    return stap_synth_cube(&sp, cube, err);
}
