/* pipeline.c: stap_plan, the one-CPI convenience of the STAP chain (stap.h) on top of the
 * engine (engine.h): one slot, weights and output kept, no detection stage; execute is a
 * submit and a collect. Not a second engine: it runs no stage of its own. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct stap_plan {
    stap_engine *e;
    stap_cf32 *X; /* the Doppler cube for stap_plan_doppler, made on first use */
};

void stap_plan_destroy(stap_plan *p)
{
    if (!p) return;
    stap_engine_destroy(p->e);
    free(p->X);
    free(p);
}

int stap_plan_create(stap_plan **out, const stap_config *cfg, const stap_cf32 *steering, int nbeams,
                     int steering_len, stap_error *err)
{
    *out = NULL;
    stap_plan *p = calloc(1, sizeof *p);
    if (!p) return stap_fail(err, STAP_ENOMEM, "out of memory creating the STAP plan");
    stap_engine_options o;
    stap_engine_options_defaults(&o);
    o.slots = 1;
    o.keep_weights = 1;
    o.keep_output = 1;
    o.cfar.kind = STAP_CFAR_NONE;
    o.graphs = 0;
    int st = stap_engine_create(&p->e, cfg, steering, nbeams, steering_len, &o, err);
    if (st) {
        free(p);
        return st;
    }
    *out = p;
    return STAP_OK;
}

const stap_config *stap_plan_config(const stap_plan *p) { return stap_engine_config(p->e); }
int stap_plan_beams(const stap_plan *p) { return stap_engine_beams(p->e); }
const stap_cf32 *stap_plan_steering(const stap_plan *p) { return stap_engine_steering(p->e); }
stap_backend stap_plan_backend(const stap_plan *p) { return stap_engine_config(p->e)->backend; }
size_t stap_weights_len(const stap_plan *p)
{
    return stap_weights_count(stap_engine_config(p->e), stap_engine_beams(p->e));
}
size_t stap_output_len(const stap_plan *p)
{
    return stap_output_count(stap_engine_config(p->e), stap_engine_beams(p->e));
}

const stap_cf32 *stap_plan_doppler(stap_plan *p)
{
    const stap_config *c = stap_engine_config(p->e);
    if (!p->X) p->X = malloc(sizeof(stap_cf32) * (size_t)c->channels * c->doppler_bins * c->range_gates);
    stap_error err;
    if (!p->X || stap_engine_doppler(p->e, 0, p->X, &err)) return NULL;
    return p->X;
}

int stap_plan_execute(stap_plan *p, const stap_cf32 *cube, stap_cf32 *W, stap_cf32 *Y, double *timing,
                      stap_error *err)
{
    int st = stap_engine_submit(p->e, 0, cube, err);
    if (st) return st;
    stap_cpi_result r;
    st = stap_engine_collect(p->e, 0, &r, err);
    if (st) return st;
    memcpy(W, r.weights, sizeof(stap_cf32) * stap_weights_len(p));
    memcpy(Y, r.output, sizeof(stap_cf32) * stap_output_len(p));
    if (timing) memcpy(timing, r.stage_ms, sizeof r.stage_ms);
    return STAP_OK;
}
