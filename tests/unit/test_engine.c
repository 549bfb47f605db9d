/* test_engine: the engine's slot protocol and results on every available backend (cpu and
 * lapack here; gpu and cublas too on the GPU machine): several CPIs in flight give, CPI by
 * CPI and in order, exactly what the one-CPI plan gives for the same cube (weights and
 * output bit for bit, detections equal to the CPU detector's on that output); a failed CPI
 * (non-finite sample, singular training) is reported by its own collect and leaves the
 * others intact; misuse of slots is refused; kept/not-kept results; every CFAR kind (CA,
 * OS, GO, SO, CA2D) through the engine gives the CPU detector's list on the plan's output. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "synth.h"
#include "testutil.h"

typedef struct expect {
    stap_cf32 *W, *Y;
    stap_detection *det;
    size_t ndet;
} expect;

static stap_config small_config(stap_backend be)
{
    stap_config c;
    stap_config_defaults(&c);
    c.channels = 4;
    c.pulses = 16;
    c.range_gates = 120;
    c.doppler_bins = 20; /* zero-padded */
    c.doppler_order = 3;
    c.segments = 2;
    c.training = 30;
    c.beams = 5;
    c.loading = 0.01;
    c.window = STAP_WINDOW_HANN;
    c.backend = be;
    return c;
}

static void make_cube(uint64_t seed, const stap_config *c, stap_cf32 *cube)
{
    synth_params sp;
    stap_synth_defaults(&sp, c->channels, c->pulses, c->range_gates);
    sp.seed = seed;
    sp.target_snr_db = 15; /* a detection to compare */
    stap_error e;
    stap_synth_cube(&sp, cube, &e);
}

static void expected(const stap_config *c, const stap_cfar_config *cf, const stap_cf32 *cube, expect *x)
{
    stap_plan *p;
    stap_error err;
    memset(x, 0, sizeof *x);
    if (stap_plan_create(&p, c, NULL, 0, 0, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    x->W = tc_xmalloc(sizeof(stap_cf32) * stap_weights_len(p));
    x->Y = tc_xmalloc(sizeof(stap_cf32) * stap_output_len(p));
    CHECK(stap_plan_execute(p, cube, x->W, x->Y, NULL, &err) == STAP_OK, "plan execute: %s", err.msg);
    CHECK(stap_cfar_detect(cf, x->Y, c->beams, c->doppler_bins, c->range_gates, &x->det, &x->ndet,
                           &err) == STAP_OK, "cfar: %s", err.msg);
    stap_plan_destroy(p);
}

static void free_expect(expect *x)
{
    free(x->W);
    free(x->Y);
    free(x->det);
}

static void compare(const char *what, const stap_config *c, const stap_cpi_result *r,
                    const expect *x, int keep_w, int keep_y)
{
    const size_t nw = stap_weights_count(c, c->beams), ny = stap_output_count(c, c->beams);
    if (keep_w) {
        CHECK(r->weights && !memcmp(r->weights, x->W, sizeof(stap_cf32) * nw), "%s: weights differ from the plan's", what);
    } else
        CHECK(!r->weights, "%s: weights returned though not kept", what);
    if (keep_y)
        CHECK(r->output && !memcmp(r->output, x->Y, sizeof(stap_cf32) * ny), "%s: output differs from the plan's", what);
    else
        CHECK(!r->output, "%s: output returned though not kept", what);
    CHECK(r->detection_count == x->ndet, "%s: %zu detections, expected %zu", what, r->detection_count, x->ndet);
    if (r->detection_count == x->ndet && x->ndet)
        CHECK(!memcmp(r->detections, x->det, sizeof(stap_detection) * x->ndet), "%s: detection lists differ", what);
    for (int s = 0; s < STAP_STAGE_COUNT; s++)
        CHECK(!(r->stage_ms[s] < 0), "%s: negative stage time %s", what, stap_stage_names[s]);
    CHECK(r->done_ms >= r->submit_ms, "%s: done before submit", what);
}

static void backend_cases(stap_backend be)
{
    const stap_config c = small_config(be);
    stap_cfar_config cf;
    stap_cfar_defaults(&cf);
    cf.pfa = 1e-3;
    cf.train = 8;
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    enum { RING = 3 };
    stap_cf32 *cube[RING];
    expect x[RING];
    for (int k = 0; k < RING; k++) {
        cube[k] = tc_xmalloc(sizeof(stap_cf32) * n);
        make_cube(1000 + k, &c, cube[k]);
        memset(&x[k], 0, sizeof x[k]);
    }
    stap_cf32 *bad = tc_xmalloc(sizeof(stap_cf32) * n);
    memcpy(bad, cube[0], sizeof(stap_cf32) * n);
    bad[((size_t)3 * c.pulses + 7) * c.range_gates + 42] = INFINITY;
    stap_cf32 *flat = tc_xmalloc(sizeof(stap_cf32) * n);
    for (size_t i = 0; i < n; i++) flat[i] = 1.0f;

    for (int keep = 0; keep < 2; keep++) {
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.slots = 3;
        o.keep_weights = keep;
        o.keep_output = keep;
        o.cfar = cf;
        stap_engine *e;
        stap_error err;
        stap_config cl = c;
        cl.loading = keep ? c.loading : 0; /* flat cube: singular only without loading */
        for (int k = 0; k < RING; k++) {
            free_expect(&x[k]);
            expected(&cl, &cf, cube[k], &x[k]);
        }
        if (stap_engine_create(&e, &cl, NULL, 0, 0, &o, &err)) {
            CHECK(0, "%s: engine: %s", stap_backend_name(be), err.msg);
            continue;
        }
        printf("  %s\n", stap_engine_describe(e));
        char what[96];
        /* three CPIs in flight, collected in order */
        for (int k = 0; k < RING; k++)
            CHECK(stap_engine_submit(e, k, cube[k], &err) == STAP_OK, "submit %d: %s", k, err.msg);
        CHECK(stap_engine_submit(e, 1, cube[0], &err) == STAP_EINVAL, "submit into a busy slot accepted");
        CHECK(stap_engine_submit(e, 3, cube[0], &err) == STAP_EINVAL, "slot 3 of 3 accepted");
        for (int k = 0; k < RING; k++) {
            stap_cpi_result r;
            snprintf(what, sizeof what, "%s keep=%d slot %d", stap_backend_name(be), keep, k);
            CHECK(stap_engine_collect(e, k, &r, &err) == STAP_OK, "%s: %s", what, err.msg);
            CHECK(r.cpi == k, "%s: cpi %lld", what, r.cpi);
            compare(what, &cl, &r, &x[k], keep, keep);
        }
        stap_cpi_result r;
        CHECK(stap_engine_collect(e, 0, &r, &err) == STAP_EINVAL, "collect of an empty slot accepted");
        /* a failed CPI between two good ones */
        CHECK(stap_engine_submit(e, 0, cube[1], &err) == STAP_OK, "submit: %s", err.msg);
        CHECK(stap_engine_submit(e, 1, keep ? bad : flat, &err) == STAP_OK, "submit: %s", err.msg);
        CHECK(stap_engine_submit(e, 2, cube[2], &err) == STAP_OK, "submit: %s", err.msg);
        snprintf(what, sizeof what, "%s keep=%d around a failure", stap_backend_name(be), keep);
        CHECK(stap_engine_collect(e, 0, &r, &err) == STAP_OK, "%s: %s", what, err.msg);
        compare(what, &cl, &r, &x[1], keep, keep);
        int st = stap_engine_collect(e, 1, &r, &err);
        if (keep)
            CHECK(st == STAP_EFORMAT && strstr(err.msg, "channel 3, pulse 7, range 42"),
                  "%s: non-finite sample gave %d (%s)", what, st, err.msg);
        else
            CHECK(st == STAP_ENUMERIC && strstr(err.msg, "Doppler bin"),
                  "%s: singular training gave %d (%s)", what, st, err.msg);
        CHECK(stap_engine_collect(e, 2, &r, &err) == STAP_OK, "%s: %s", what, err.msg);
        compare(what, &cl, &r, &x[2], keep, keep);
        /* round robin: 20 CPIs, 2 at a time in 3 slots, ring of 3 cubes */
        for (int i = 0; i < 20 + 2; i++) {
            if (i >= 2) {
                const int j = i - 2;
                snprintf(what, sizeof what, "%s keep=%d round robin CPI %d", stap_backend_name(be), keep, j);
                CHECK(stap_engine_collect(e, j % 3, &r, &err) == STAP_OK, "%s: %s", what, err.msg);
                compare(what, &cl, &r, &x[j % RING], keep, keep);
            }
            if (i < 20) CHECK(stap_engine_submit(e, i % 3, cube[i % RING], &err) == STAP_OK, "submit: %s", err.msg);
        }
        stap_engine_destroy(e);
    }
    for (int k = 0; k < RING; k++) {
        free(cube[k]);
        free_expect(&x[k]);
    }
    free(bad);
    free(flat);
}

/* The conditioning indicator: rank-1 training (every range cell the same snapshot) is
 * below the limit and named by stap_engine_check_conditioning; a synthesized cube is far
 * above it, and so is the rank-1 cube with diagonal loading. The estimate of the
 * engine's memory covers what it holds. */
/* Every detector kind through the engine (two slots, two CPIs): the results are the plan's,
 * the detections the CPU detector's on the plan's output. */
static void kinds_cases(stap_backend be)
{
    const stap_config c = small_config(be);
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * n);
    make_cube(77, &c, cube);
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++) {
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.slots = 2;
        o.keep_weights = o.keep_output = 1;
        o.cfar.kind = (stap_cfar_kind)kind;
        o.cfar.pfa = 1e-2;
        o.cfar.train = 8;
        o.cfar.guard_doppler = 2;
        o.cfar.train_doppler = 3;
        expect x;
        expected(&c, &o.cfar, cube, &x);
        char what[160], desc[128];
        stap_cfar_describe(&o.cfar, desc, sizeof desc);
        snprintf(what, sizeof what, "%s, %s", stap_backend_name(be), desc);
        stap_engine *e;
        stap_error err;
        if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err)) {
            CHECK(0, "%s: engine: %s", what, err.msg);
            free_expect(&x);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            stap_cpi_result r;
            CHECK(stap_engine_submit(e, k, cube, &err) == STAP_OK, "%s: submit: %s", what, err.msg);
            CHECK(stap_engine_collect(e, k, &r, &err) == STAP_OK, "%s: collect: %s", what, err.msg);
            compare(what, &c, &r, &x, 1, 1);
        }
        printf("  %s: %zu detections, as the CPU detector\n", what, x.ndet);
        stap_engine_destroy(e);
        free_expect(&x);
    }
    free(cube);
}

static void conditioning_and_memory(stap_backend be)
{
    stap_config c = small_config(be);
    c.loading = 0;
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * n), *flat = tc_xmalloc(sizeof(stap_cf32) * n);
    make_cube(11, &c, cube);
    for (size_t i = 0; i < n; i++) flat[i] = cube[i - i % c.range_gates];
    for (int loaded = 0; loaded < 2; loaded++) {
        c.loading = loaded ? 1e-3 : 0;
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        o.slots = 2;
        stap_engine *e;
        stap_error err;
        if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err)) {
            CHECK(0, "engine: %s", err.msg);
            continue;
        }
        const double limit = stap_engine_conditioning_limit(e);
        CHECK(fabs(limit - 10 * 1.1920929e-7 * c.channels * c.doppler_order) < 1e-12,
              "limit %g is not 10 eps N", limit);
        stap_cpi_result r[2];
        int st = stap_engine_submit(e, 0, cube, &err) || stap_engine_submit(e, 1, flat, &err) ||
                 stap_engine_collect(e, 0, &r[0], &err);
        CHECK(!st, "%s: %s", stap_backend_name(be), err.msg);
        /* rank-1 data may also fail outright (a zero pivot, v^H z = 0): that is reported too */
        stap_error err1;
        const int st1 = stap_engine_collect(e, 1, &r[1], &err1);
        if (st1) {
            printf("  %s loading %g: rank-1 CPI failed: %s\n", stap_backend_name(be), c.loading, err1.msg);
            CHECK(!loaded && st1 == STAP_ENUMERIC, "rank-1 training: %s", err1.msg);
            r[1].diag_ratio = 0;
        }
        if (!st) {
            printf("  %s loading %g: diag ratio %.3g (synthesized), %.3g (rank 1, item %d); limit "
                   "%.2g\n", stap_backend_name(be), c.loading, r[0].diag_ratio, r[1].diag_ratio,
                   r[1].diag_ratio_item, limit);
            CHECK(r[0].diag_ratio > 100 * limit && r[0].diag_ratio <= 1,
                  "synthesized cube: ratio %g", r[0].diag_ratio);
            CHECK(stap_engine_check_conditioning(e, &r[0], &err) == STAP_OK, "synthesized: %s", err.msg);
            if (!loaded && !st1) {
                CHECK(r[1].diag_ratio < limit, "rank-1 training: ratio %g not below %g",
                      r[1].diag_ratio, limit);
                CHECK(stap_engine_check_conditioning(e, &r[1], &err) == STAP_ENUMERIC &&
                          strstr(err.msg, "ill-conditioned training data at Doppler bin"),
                      "rank-1 training not reported: %s", err.msg);
            } else if (loaded) {
                CHECK(r[1].diag_ratio > 10 * limit, "rank-1 training with loading: ratio %g",
                      r[1].diag_ratio);
            }
        }
        size_t host = 0, dev = 0;
        CHECK(stap_engine_estimate(&c, 0, 0, &o, &host, &dev, &err) == STAP_OK, "estimate: %s", err.msg);
        const size_t held = stap_engine_memory_bytes(e);
        printf("  %s: engine holds %.2f MB; estimate host %.2f MB, device %.2f MB\n",
               stap_backend_name(be), held / 1e6, host / 1e6, dev / 1e6);
        const size_t est = (be == STAP_BACKEND_GPU || be == STAP_BACKEND_CUBLAS) ? dev : host;
        CHECK(est >= held && est <= 4 * held + (1 << 20),
              "%s: estimate %zu bytes for an engine holding %zu", stap_backend_name(be), est, held);
        stap_engine_destroy(e);
    }
    free(cube);
    free(flat);
}

/* Every algorithm's engine: the memory estimate covers what the engine holds (within 4x),
 * and a CPI runs through it (the results themselves are test_pipeline's business). */
static void algorithm_memory(stap_backend be)
{
    const struct {
        stap_algorithm a;
        int Q;
    } algs[] = {{STAP_ALGORITHM_POST_DOPPLER, 3}, {STAP_ALGORITHM_JDL, 3},
                {STAP_ALGORITHM_PRE_DOPPLER, 3}, {STAP_ALGORITHM_ADPCA, 2},
                {STAP_ALGORITHM_DPCA, 3}};
    for (size_t i = 0; i < sizeof algs / sizeof *algs; i++) {
        stap_config c = small_config(be);
        c.algorithm = algs[i].a;
        c.doppler_order = algs[i].Q;
        const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
        stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * n);
        make_cube(11 + i, &c, cube);
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        stap_engine *e;
        stap_error err;
        if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err)) {
            CHECK(0, "%s %s: engine: %s", stap_backend_name(be), stap_algorithm_name(c.algorithm),
                  err.msg);
            free(cube);
            continue;
        }
        stap_cpi_result r;
        CHECK(stap_engine_submit(e, 0, cube, &err) == STAP_OK && stap_engine_collect(e, 0, &r, &err) == STAP_OK,
              "%s %s: CPI: %s", stap_backend_name(be), stap_algorithm_name(c.algorithm), err.msg);
        size_t host = 0, dev = 0;
        CHECK(stap_engine_estimate(&c, 0, 0, &o, &host, &dev, &err) == STAP_OK, "estimate: %s", err.msg);
        const size_t held = stap_engine_memory_bytes(e);
        const size_t est = (be == STAP_BACKEND_GPU || be == STAP_BACKEND_CUBLAS) ? dev : host;
        printf("  %s %s: engine holds %.3f MB, estimate %.3f MB\n", stap_backend_name(be),
               stap_algorithm_name(c.algorithm), held / 1e6, est / 1e6);
        CHECK(est >= held && est <= 4 * held + (1 << 20),
              "%s %s: estimate %zu bytes for an engine holding %zu", stap_backend_name(be),
              stap_algorithm_name(c.algorithm), est, held);
        stap_engine_destroy(e);
        free(cube);
    }
}

/* --qr cholqr2 and cholqr on the cpu backend: every algorithm that trains factors each of its
 * training matrices by CholeskyQR (well-conditioned random training: none guarded), and the
 * CPI's counts say so; the lapack and cublas backends named with either are refused (the gpu
 * backend runs them: test_gpu_engine). */
static void cholqr2_counts(void)
{
    static const stap_qr_method qs[] = {STAP_QR_CHOLQR2, STAP_QR_CHOLQR};
    for (int qi = 0; qi < 2; qi++) {
        const char *qn = stap_qr_method_name(qs[qi]);
        const stap_algorithm algs[] = {STAP_ALGORITHM_POST_DOPPLER, STAP_ALGORITHM_JDL, STAP_ALGORITHM_PRE_DOPPLER,
                                       STAP_ALGORITHM_ADPCA, STAP_ALGORITHM_DPCA};
        for (size_t i = 0; i < sizeof algs / sizeof *algs; i++) {
            stap_config c = small_config(STAP_BACKEND_CPU);
            c.algorithm = algs[i];
            c.doppler_order = algs[i] == STAP_ALGORITHM_ADPCA ? 2 : 3;
            c.qr = qs[qi];
            stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * c.channels * c.pulses * c.range_gates);
            make_cube(31 + i, &c, cube);
            stap_engine_options o;
            stap_engine_options_defaults(&o);
            stap_engine *e;
            stap_error err;
            stap_cpi_result r;
            if (stap_engine_create(&e, &c, NULL, 0, 0, &o, &err)) {
                CHECK(0, "%s %s: engine: %s", qn, stap_algorithm_name(c.algorithm), err.msg);
                free(cube);
                continue;
            }
            const int ok = stap_engine_submit(e, 0, cube, &err) == STAP_OK && stap_engine_collect(e, 0, &r, &err) == STAP_OK;
            CHECK(ok, "%s %s: CPI: %s", qn, stap_algorithm_name(c.algorithm), err.msg);
            const long long mats = stap_training_matrices(stap_engine_config(e));
            if (ok) {
                printf("  cpu/%s %s: %lld of %lld factors by %s, %lld guarded\n", qn,
                       stap_algorithm_name(c.algorithm), r.qr_cholqr2, mats, qn, r.qr_guarded);
                CHECK(r.qr_cholqr2 == mats && r.qr_guarded == 0, "%s %s: %lld by %s and %lld guarded of %lld", qn,
                      stap_algorithm_name(c.algorithm), r.qr_cholqr2, qn, r.qr_guarded, mats);
            }
            stap_engine_destroy(e);
            free(cube);
        }
        stap_config c = small_config(STAP_BACKEND_LAPACK);
        c.qr = qs[qi];
        stap_engine *e = NULL;
        stap_error err;
        stap_engine_options o;
        stap_engine_options_defaults(&o);
        const int st = stap_engine_create(&e, &c, NULL, 0, 0, &o, &err);
        CHECK(st == STAP_EUNSUPPORTED && strstr(err.msg, "cpu and gpu backends only") && strstr(err.msg, qn),
              "lapack with %s: status %d (%s)",
              qn, st, st ? err.msg : "accepted");
        if (!st) stap_engine_destroy(e);
    }
}

/* The test's own conversion of stored integer pairs (stap_sample_format): the bytes of each
 * component assembled in the stated order, then (float)v or (float)((double)v * scale). */
static void reference_convert(const stap_sample_format *f, const unsigned char *src, size_t n,
                              stap_cf32 *dst)
{
    const size_t w = f->type == STAP_SAMPLES_CI8 ? 1 : f->type == STAP_SAMPLES_CI16 ? 2 : 4;
    const int scaled = f->scale != 0 && f->scale != 1;
    float *y = (float *)dst;
    for (size_t i = 0; i < 2 * n; i++) {
        uint32_t u = 0;
        for (size_t b = 0; b < w; b++) {
            const unsigned byte = src[i * w + (f->big_endian ? b : w - 1 - b)];
            u = (u << 8) | byte;
        }
        long long v = (long long)u;
        if (u >> (8 * w - 1)) v -= (long long)1 << (8 * w); /* two's complement */
        y[i] = scaled ? (float)((double)v * f->scale) : (float)v;
    }
}

/* Store x (float components) as f says: v = round(x / scale), clamped to the type. */
static void store_as(const stap_sample_format *f, const stap_cf32 *x, size_t n, unsigned char *dst)
{
    const size_t w = f->type == STAP_SAMPLES_CI8 ? 1 : f->type == STAP_SAMPLES_CI16 ? 2 : 4;
    const double s = f->scale != 0 ? f->scale : 1, top = ldexp(1.0, (int)(8 * w) - 1) - 1;
    const float *xf = (const float *)x;
    for (size_t i = 0; i < 2 * n; i++) {
        double v = nearbyint(xf[i] / s);
        v = v > top ? top : v < -top - 1 ? -top - 1 : v;
        const uint32_t u = (uint32_t)(int32_t)v;
        for (size_t b = 0; b < w; b++) {
            const unsigned char byte = (unsigned char)(u >> (8 * b));
            dst[i * w + (f->big_endian ? w - 1 - b : b)] = byte;
        }
    }
}

/* src (channel, pulse, range), w bytes a sample, into dst in f's stored axis order (the
 * test's own transposition) */
static void permute(const stap_sample_format *f, const unsigned char *src, int C, int P, int R,
                    size_t w, unsigned char *dst)
{
    const unsigned char *a = f->order.axis;
    const int zero = !a[0] && !a[1] && !a[2];
    const size_t ext[3] = {(size_t)C, (size_t)P, (size_t)R};
    size_t st[3]; /* the stored stride of channel, pulse, range */
    const int o[3] = {zero ? 0 : a[0], zero ? 1 : a[1], zero ? 2 : a[2]};
    st[o[2]] = 1;
    st[o[1]] = ext[o[2]];
    st[o[0]] = ext[o[2]] * ext[o[1]];
    for (size_t c = 0; c < ext[0]; c++)
        for (size_t p = 0; p < ext[1]; p++)
            for (size_t r = 0; r < ext[2]; r++)
                memcpy(dst + w * (c * st[0] + p * st[1] + r * st[2]), src + w * ((c * ext[1] + p) * ext[2] + r), w);
}

/* Integer cubes taken as stored (issue 31): the engine given int8/int16/int32 pairs, either
 * byte order, scaled or not, gives bit for bit what it gives for the same samples converted
 * to complex64 first — on the GPU, the first kernel's conversion against the host's — for a
 * Doppler-domain algorithm (conversion fused in the Doppler load) and a sub-CPI one
 * (converted first); stap_samples_to_cf32 equals the test's own conversion. */
static void sample_format_cases(stap_backend be)
{
    enum { C_ = STAP_AXIS_CHANNEL, P_ = STAP_AXIS_PULSE, R_ = STAP_AXIS_RANGE };
    static const stap_sample_format fmts[] = {
        {STAP_SAMPLES_CI16, 0, 0.0, {{0, 0, 0}}},
        {STAP_SAMPLES_CI16, 1, 1.0 / 4096, {{C_, P_, R_}}},
        {STAP_SAMPLES_CI8, 0, 0.02, {{0, 0, 0}}},
        {STAP_SAMPLES_CI32, 1, 3e-7, {{0, 0, 0}}},
        {STAP_SAMPLES_CI32, 0, 0.0, {{0, 0, 0}}},
        /* stored in another axis order: transposed as the GPU reads it */
        {STAP_SAMPLES_CI16, 0, 1.0 / 512, {{P_, R_, C_}}},
        {STAP_SAMPLES_CF32, 0, 0.0, {{R_, C_, P_}}},
        {STAP_SAMPLES_CI8, 1, 0.5, {{C_, R_, P_}}}};
    const stap_algorithm algs[] = {STAP_ALGORITHM_POST_DOPPLER, STAP_ALGORITHM_ADPCA};
    for (size_t a = 0; a < sizeof algs / sizeof *algs; a++) {
        stap_config c = small_config(be);
        c.algorithm = algs[a];
        if (a) c.doppler_bins = c.pulses; /* sub-CPI: no zero padding */
        const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
        stap_cf32 *x = tc_xmalloc(sizeof(stap_cf32) * n), *conv = tc_xmalloc(sizeof(stap_cf32) * n),
                  *lib = tc_xmalloc(sizeof(stap_cf32) * n);
        unsigned char *raw = tc_xmalloc(8 * n), *native = tc_xmalloc(8 * n);
        for (size_t k = 0; k < sizeof fmts / sizeof *fmts; k++) {
            const stap_sample_format *f = &fmts[k];
            char what[200], desc[96];
            stap_sample_format_describe(f, desc, sizeof desc);
            snprintf(what, sizeof what, "%s, %s, %s", stap_backend_name(be),
                     stap_algorithm_name(c.algorithm), desc);
            make_cube(500 + k, &c, x);
            /* the synthetic cube has noise power 1: spread it over the integer range */
            const double unit = (f->scale != 0 ? f->scale : 1) *
                                (f->type == STAP_SAMPLES_CI8 ? 20.0 : f->type == STAP_SAMPLES_CI16 ? 2000.0 : 1e6);
            for (size_t i = 0; i < n; i++) x[i] *= (float)unit;
            /* the samples in (channel, pulse, range), then moved to the stored order */
            const size_t w = stap_sample_bytes(f);
            if (f->type == STAP_SAMPLES_CF32) memcpy(native, x, sizeof(stap_cf32) * n);
            else store_as(f, x, n, native);
            if (f->type == STAP_SAMPLES_CF32) memcpy(conv, native, sizeof(stap_cf32) * n);
            else reference_convert(f, native, n, conv);
            permute(f, native, c.channels, c.pulses, c.range_gates, w, raw);
            stap_cube_to_cf32(f, raw, c.channels, c.pulses, c.range_gates, lib);
            CHECK(!memcmp(conv, lib, sizeof(stap_cf32) * n), "%s: stap_cube_to_cf32 differs from "
                  "the test's conversion", what);
            stap_engine_options o;
            stap_engine_options_defaults(&o);
            o.slots = 2;
            o.keep_weights = o.keep_output = 1;
            o.cfar.pfa = 1e-3;
            o.cfar.train = 8;
            stap_engine *ef = NULL, *ei = NULL;
            stap_error err;
            if (stap_engine_create(&ef, &c, NULL, 0, 0, &o, &err)) {
                CHECK(0, "%s: complex64 engine: %s", what, err.msg);
                continue;
            }
            o.input = *f;
            if (stap_engine_create(&ei, &c, NULL, 0, 0, &o, &err)) {
                CHECK(0, "%s: engine: %s", what, err.msg);
                stap_engine_destroy(ef);
                continue;
            }
            CHECK(stap_engine_cube_bytes(ei) == n * stap_sample_bytes(f), "%s: cube bytes", what);
            stap_cpi_result rf, ri;
            CHECK(stap_engine_submit(ef, 0, conv, &err) == STAP_OK &&
                      stap_engine_collect(ef, 0, &rf, &err) == STAP_OK,
                  "%s: complex64 CPI: %s", what, err.msg);
            for (int slot = 0; slot < 2 && !tc_failures; slot++) {
                CHECK(stap_engine_submit(ei, slot, raw, &err) == STAP_OK &&
                          stap_engine_collect(ei, slot, &ri, &err) == STAP_OK,
                      "%s: CPI: %s", what, err.msg);
                if (tc_failures) break;
                const size_t nw = stap_weights_count(&c, c.beams), ny = stap_output_count(&c, c.beams);
                CHECK(!memcmp(rf.weights, ri.weights, sizeof(stap_cf32) * nw) &&
                          !memcmp(rf.output, ri.output, sizeof(stap_cf32) * ny),
                      "%s: weights or output differ from the complex64 cube's", what);
                CHECK(rf.detection_count == ri.detection_count &&
                          (!rf.detection_count ||
                           !memcmp(rf.detections, ri.detections, sizeof(stap_detection) * rf.detection_count)),
                      "%s: %zu detections against %zu of the complex64 cube", what,
                      ri.detection_count, rf.detection_count);
            }
            printf("  %s: as its complex64 conversion, bit for bit (%zu detections)\n", what,
                   rf.detection_count);
            stap_engine_destroy(ei);
            stap_engine_destroy(ef);
        }
        free(x);
        free(conv);
        free(lib);
        free(raw);
        free(native);
    }
    /* formats refused */
    stap_config c = small_config(be);
    stap_engine_options o;
    stap_engine_options_defaults(&o);
    stap_engine *e;
    stap_error err;
    const stap_sample_format bad[] = {{(stap_sample_type)9, 0, 0, {{0, 0, 0}}},
                                      {STAP_SAMPLES_CF32, 1, 0, {{0, 0, 0}}},
                                      {STAP_SAMPLES_CF32, 0, 2.0, {{0, 0, 0}}},
                                      {STAP_SAMPLES_CI16, 0, -1, {{0, 0, 0}}},
                                      {STAP_SAMPLES_CI16, 0, NAN, {{0, 0, 0}}},
                                      {STAP_SAMPLES_CI16, 0, 0, {{1, 1, 2}}},
                                      {STAP_SAMPLES_CI16, 0, 0, {{0, 1, 3}}}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        o.input = bad[k];
        CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL &&
                  strstr(err.msg, "input format"),
              "%s: bad sample format %zu accepted: %s", stap_backend_name(be), k, err.msg);
    }
}

int main(void)
{
    const stap_backend backends[] = {STAP_BACKEND_CPU, STAP_BACKEND_LAPACK, STAP_BACKEND_GPU,
                                   STAP_BACKEND_CUBLAS};
    for (int b = 0; b < 4; b++) {
        stap_error why;
        if (stap_backend_available(backends[b], &why) != STAP_OK) {
            printf("  backend %s not available here: %s\n", stap_backend_name(backends[b]), why.msg);
            continue;
        }
        backend_cases(backends[b]);
        kinds_cases(backends[b]);
        conditioning_and_memory(backends[b]);
        algorithm_memory(backends[b]);
        sample_format_cases(backends[b]);
        if (backends[b] == STAP_BACKEND_CPU) cholqr2_counts();
    }
    /* bad options */
    stap_config c = small_config(STAP_BACKEND_CPU);
    stap_engine_options o;
    stap_engine_options_defaults(&o);
    stap_engine *e;
    stap_error err;
    o.slots = 0;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL && strstr(err.msg, "slots"),
          "0 slots accepted");
    o.slots = 2;
    o.cfar.train = 100; /* window longer than 120 cells */
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL, "CFAR window > R accepted");
    o.cfar.train = 16;
    o.cfar.kind = STAP_CFAR_CA2D;
    o.cfar.guard_doppler = o.cfar.train_doppler = 5; /* 21 bins of 20 */
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL &&
              strstr(err.msg, "the 20 Doppler bins"),
          "CFAR Doppler window > D accepted: %s", err.msg);
    stap_cfar_defaults(&o.cfar);
    /* the memory check: refused before allocating, naming need and availability */
    o.cfar.train = 16;
    o.host_limit = 64 << 10;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_ENOMEM &&
              strstr(err.msg, "host memory") && strstr(err.msg, "the engine options' host_limit"),
          "64 kB of memory: %s", err.msg);
    o.host_limit_name = "MY_LIMIT";
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_ENOMEM && strstr(err.msg, "(MY_LIMIT)"),
          "64 kB of memory, the limit named: %s", err.msg);
    o.host_limit = (size_t)1e12;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_OK, "1 TB of memory: %s", err.msg);
    if (!tc_failures) stap_engine_destroy(e);
    o.host_limit = 0;
    /* the tuning switches are checked */
    o.tuning.apply_kernel = 3;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL && strstr(err.msg, "apply_kernel"),
          "apply_kernel 3 accepted: %s", err.msg);
    o.tuning.apply_kernel = 0;
    o.tuning.la.qr_dispatch = 7;
    CHECK(stap_engine_create(&e, &c, NULL, 0, 0, &o, &err) == STAP_EINVAL && strstr(err.msg, "QR dispatch"),
          "QR dispatch 7 accepted: %s", err.msg);
    o.tuning.la.qr_dispatch = 0;
    if (tc_failures) {
        fprintf(stderr, "test_engine: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_engine: all passed\n");
    return 0;
}
