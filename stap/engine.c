/* engine.c: what every STAP engine shares (engine.h) — configuration, window and
 * steering, slot bookkeeping and the choice of implementation, made once at create. */
#include "engine_internal.h"

#include <stdlib.h>
#include <string.h>

#include "la_internal.h" /* la_now_ms */

void stap_engine_options_defaults(stap_engine_options *o)
{
    memset(o, 0, sizeof *o);
    o->slots = 2;
    o->keep_weights = 1;
    o->keep_output = 0;
    stap_cfar_defaults(&o->cfar);
    o->graphs = 1;
    o->qr_variant = -1;
}

size_t stap_weights_count(const stap_config *c, int beams)
{
    return (size_t)c->doppler_bins * c->segments * beams * stap_dof(c);
}
size_t stap_output_count(const stap_config *c, int beams)
{
    return (size_t)beams * c->doppler_bins * c->range_gates;
}

void stap_engine_destroy(stap_engine *e)
{
    if (!e) return;
    if (e->ops && e->impl) e->ops->destroy(e);
    free(e->win);
    free(e->V);
    free(e);
}

int stap_engine_create(stap_engine **out, const stap_config *cfg_in, const cf32 *steering,
                       int nbeams, int steering_len, const stap_engine_options *opt, rt_error *err)
{
    *out = NULL;
    stap_config cfg = *cfg_in;
    /* the caller's array width, not the width the configuration expects: a narrower array
     * would be read past its end (issue 10) */
    int st = stap_config_validate(&cfg, steering != NULL, nbeams, steering ? steering_len : 0, err);
    if (st) return st;
    if (opt->slots < 1 || opt->slots > STAP_ENGINE_MAX_SLOTS)
        return rt_fail(err, RT_EINVAL, "slots %d must be between 1 and %d", opt->slots,
                       STAP_ENGINE_MAX_SLOTS);
    if (opt->cfar.kind != STAP_CFAR_NONE && (st = stap_cfar_validate(&opt->cfar, cfg.range_gates, err)))
        return st;
    if (cfg.backend == LA_BACKEND_AUTO) {
        rt_error probe;
        cfg.backend = la_backend_available(LA_BACKEND_GPU, &probe) == RT_OK ? LA_BACKEND_GPU
                                                                            : LA_BACKEND_CPU;
    }
    if ((st = la_backend_available(cfg.backend, err))) return st;

    stap_engine *e = calloc(1, sizeof *e);
    if (!e) return rt_fail(err, RT_ENOMEM, "out of memory creating the STAP engine");
    e->cfg = cfg;
    e->opt = *opt;
    e->N = stap_dof(&cfg);
    e->M = stap_training_rows(&cfg);
    e->L = cfg.range_gates / cfg.segments;
    e->B = cfg.beams;
    e->batch = cfg.doppler_bins * cfg.segments;
    e->win = malloc(sizeof(float) * cfg.pulses);
    e->V = malloc(sizeof(cf32) * (size_t)e->B * e->N);
    if (!e->win || !e->V) {
        stap_engine_destroy(e);
        return rt_fail(err, RT_ENOMEM, "out of memory for the window and steering vectors");
    }
    if ((st = stap_window(&cfg, e->win, err))) {
        stap_engine_destroy(e);
        return st;
    }
    if (steering) memcpy(e->V, steering, sizeof(cf32) * (size_t)e->B * e->N);
    else stap_default_steering(&cfg, e->V);

    switch (cfg.backend) {
    case LA_BACKEND_CPU:
    case LA_BACKEND_LAPACK: e->ops = &stap_engine_cpu_ops; break;
#ifdef RTSTAP_HAVE_CUDA
    case LA_BACKEND_GPU:
    case LA_BACKEND_CUBLAS: e->ops = &stap_engine_gpu_ops; break;
#endif
    default:
        stap_engine_destroy(e);
        return rt_fail(err, RT_EUNSUPPORTED, "no engine for backend %s",
                       la_backend_name(cfg.backend));
    }
    if ((st = e->ops->create(e, err))) {
        stap_engine_destroy(e);
        return st;
    }
    *out = e;
    return RT_OK;
}

static int check_slot(const stap_engine *e, int slot, rt_error *err)
{
    if (slot < 0 || slot >= e->opt.slots)
        return rt_fail(err, RT_EINVAL, "slot %d out of range (engine has %d)", slot, e->opt.slots);
    return RT_OK;
}

int stap_engine_submit(stap_engine *e, int slot, const cf32 *cube, rt_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    if (e->busy[slot])
        return rt_fail(err, RT_EINVAL, "slot %d still holds CPI %lld: collect it first", slot,
                       e->slot_cpi[slot]);
    if (!cube) return rt_fail(err, RT_EINVAL, "null cube");
    e->slot_cpi[slot] = e->next_cpi++;
    if ((st = e->ops->submit(e, slot, cube, err))) return st;
    e->busy[slot] = 1;
    return RT_OK;
}

int stap_engine_collect(stap_engine *e, int slot, stap_cpi_result *res, rt_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    if (!e->busy[slot]) return rt_fail(err, RT_EINVAL, "slot %d has no CPI to collect", slot);
    memset(res, 0, sizeof *res);
    res->cpi = e->slot_cpi[slot];
    st = e->ops->collect(e, slot, res, err);
    e->busy[slot] = 0;
    return st;
}

void *stap_engine_host_alloc(stap_engine *e, size_t bytes) { return e->ops->host_alloc(e, bytes); }
void stap_engine_host_free(stap_engine *e, void *p)
{
    if (p) e->ops->host_free(e, p);
}
const stap_config *stap_engine_config(const stap_engine *e) { return &e->cfg; }
int stap_engine_slots(const stap_engine *e) { return e->opt.slots; }
int stap_engine_beams(const stap_engine *e) { return e->B; }
const cf32 *stap_engine_steering(const stap_engine *e) { return e->V; }
const stap_engine_options *stap_engine_options_of(const stap_engine *e) { return &e->opt; }
const char *stap_engine_describe(const stap_engine *e) { return e->describe; }
size_t stap_engine_memory_bytes(const stap_engine *e) { return e->ops->memory_bytes(e); }

int stap_engine_doppler(stap_engine *e, int slot, cf32 *X, rt_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    return e->ops->doppler(e, slot, X, err);
}

int stap_engine_fail_input(const stap_engine *e, unsigned long long flat, rt_error *err)
{
    const unsigned long long R = e->cfg.range_gates, P = e->cfg.pulses;
    return rt_fail(err, RT_EFORMAT, "non-finite input sample at (channel %llu, pulse %llu, "
                   "range %llu)", flat / (P * R), (flat / R) % P, flat % R);
}

int stap_engine_fail_item(const stap_engine *e, int item, rt_error *err)
{
    return rt_fail(err, RT_ENUMERIC, "singular training data at Doppler bin %d, segment %d "
                   "(a zero or non-finite diagonal of R: rank-deficient training, K < N "
                   "without loading?)", item / e->cfg.segments, item % e->cfg.segments);
}

int stap_engine_fail_weight(const stap_engine *e, unsigned long long flat, rt_error *err)
{
    const unsigned long long k = flat / ((unsigned long long)e->B * e->N);
    return rt_fail(err, RT_ENUMERIC, "non-finite adaptive weight at Doppler bin %llu, segment "
                   "%llu, beam %llu", k / e->cfg.segments, k % e->cfg.segments,
                   (flat / e->N) % e->B);
}

#ifndef RTSTAP_HAVE_CUDA
int stap_gpu_info(char *name, size_t len, size_t *free_bytes, size_t *total_bytes, rt_error *err)
{
    return rt_fail(err, RT_EUNSUPPORTED, "built without CUDA support");
}
int stap_gpu_link_bandwidth(size_t bytes, int repeat, double *h2d_gbs, double *d2h_gbs,
                            rt_error *err)
{
    return rt_fail(err, RT_EUNSUPPORTED, "built without CUDA support");
}
#endif
