/* test_gpu_devices: every GPU of a host in one process (issue 32) — one thread per device,
 * each selecting its device (stap_la_gpu_select) and making its own engine, gives for the
 * same CPIs exactly what one engine on device 0 gives: weights, output and detections bit
 * for bit, an int16 cube too (its conversion on each device). With one device, two threads
 * share it. Exits 77 (skipped) without a usable GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "synth.h"
#include "testutil.h"

enum { CPIS = 4, MAXDEV = 8 };

typedef struct result {
    stap_cf32 *W, *Y;
    stap_detection *det;
    size_t ndet;
} result;

typedef struct job {
    int device;
    const stap_config *cfg;
    const stap_engine_options *eo;
    const void *cubes[CPIS];
    result r[CPIS];
    int status;
    stap_error err;
} job;

static void *run(void *arg)
{
    job *j = arg;
    stap_engine *e = NULL;
    const size_t nw = stap_weights_count(j->cfg, j->cfg->beams), ny = stap_output_count(j->cfg, j->cfg->beams);
    if ((j->status = stap_la_gpu_select(j->device, &j->err)) ||
        (j->status = stap_engine_create(&e, j->cfg, NULL, 0, 0, j->eo, &j->err)))
        return NULL;
    for (int k = 0; k < CPIS && !j->status; k++) {
        stap_cpi_result r;
        const int slot = k % j->eo->slots;
        if ((j->status = stap_engine_submit(e, slot, j->cubes[k], &j->err)) ||
            (j->status = stap_engine_collect(e, slot, &r, &j->err)))
            break;
        j->r[k].W = tc_xmalloc(sizeof(stap_cf32) * nw);
        j->r[k].Y = tc_xmalloc(sizeof(stap_cf32) * ny);
        j->r[k].det = tc_xmalloc(sizeof(stap_detection) * (r.detection_count + 1));
        memcpy(j->r[k].W, r.weights, sizeof(stap_cf32) * nw);
        memcpy(j->r[k].Y, r.output, sizeof(stap_cf32) * ny);
        memcpy(j->r[k].det, r.detections, sizeof(stap_detection) * r.detection_count);
        j->r[k].ndet = r.detection_count;
    }
    stap_engine_destroy(e);
    return NULL;
}

static void free_job(job *j)
{
    for (int k = 0; k < CPIS; k++) {
        free(j->r[k].W);
        free(j->r[k].Y);
        free(j->r[k].det);
    }
}

int main(void)
{
    int count = 0;
    stap_error why;
    if (stap_la_gpu_count(&count, &why) != STAP_OK) {
        printf("test_gpu_devices: skipped (%s)\n", why.msg);
        return 77;
    }
    stap_config c;
    stap_config_defaults(&c);
    stap_preset_config(STAP_PRESET_EASY, &c);
    c.backend = STAP_BACKEND_GPU;
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    stap_cf32 *cf[CPIS];
    short *i16[CPIS];
    stap_sample_format f16 = {STAP_SAMPLES_CI16, 0, 1.0 / 4096, {{0, 0, 0}}};
    for (int k = 0; k < CPIS; k++) {
        cf[k] = tc_xmalloc(sizeof(stap_cf32) * n);
        i16[k] = tc_xmalloc(4 * n);
        synth_params sp;
        stap_synth_defaults(&sp, c.channels, c.pulses, c.range_gates);
        sp.seed = 900 + (uint64_t)k;
        sp.target_snr_db = 15;
        CHECK(stap_synth_cube(&sp, cf[k], &why) == STAP_OK, "synth: %s", why.msg);
        stap_samples_from_cf32(&f16, cf[k], n, i16[k]);
    }
    const int ndev = count < MAXDEV ? count : MAXDEV;
    const int nthreads = ndev > 1 ? ndev : 2;
    for (int form = 0; form < 2; form++) {
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.keep_weights = o.keep_output = 1;
        o.slots = 2;
        if (form) o.input = f16;
        job ref = {0, &c, &o, {0}, {{0}}, 0, {0, ""}}, jobs[MAXDEV];
        for (int k = 0; k < CPIS; k++) ref.cubes[k] = form ? (const void *)i16[k] : (const void *)cf[k];
        run(&ref);
        CHECK(!ref.status, "one engine on device 0: %s", ref.err.msg);
        pthread_t th[MAXDEV];
        for (int t = 0; t < nthreads; t++) {
            jobs[t] = ref;
            memset(jobs[t].r, 0, sizeof jobs[t].r);
            jobs[t].device = ndev > 1 ? t : 0;
            pthread_create(&th[t], NULL, run, &jobs[t]);
        }
        for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
        const size_t nw = stap_weights_count(&c, c.beams), ny = stap_output_count(&c, c.beams);
        for (int t = 0; t < nthreads && !ref.status; t++) {
            CHECK(!jobs[t].status, "thread %d on device %d: %s", t, jobs[t].device, jobs[t].err.msg);
            for (int k = 0; k < CPIS && !jobs[t].status; k++) {
                const result *a = &ref.r[k], *b = &jobs[t].r[k];
                CHECK(!memcmp(a->W, b->W, sizeof(stap_cf32) * nw) && !memcmp(a->Y, b->Y, sizeof(stap_cf32) * ny) &&
                          a->ndet == b->ndet && !memcmp(a->det, b->det, sizeof(stap_detection) * a->ndet),
                      "%s CPI %d on device %d (thread %d) differs from device 0's one engine",
                      form ? "int16" : "complex64", k, jobs[t].device, t);
            }
            free_job(&jobs[t]);
        }
        printf("  %s: %d threads on %d device%s, %d CPIs each: as one engine on device 0, bit for bit\n",
               form ? "int16" : "complex64", nthreads, ndev, ndev > 1 ? "s" : "", CPIS);
        free_job(&ref);
    }
    for (int k = 0; k < CPIS; k++) {
        free(cf[k]);
        free(i16[k]);
    }
    if (tc_failures) {
        fprintf(stderr, "test_gpu_devices: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_gpu_devices: all passed\n");
    return 0;
}
