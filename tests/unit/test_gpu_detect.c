/* test_gpu_detect: the adaptive detectors (AMF, Kelly's GLRT, ACE) of the GPU engine against
 * the CPU engine's (stap/engine/engine_detect.c, in double) on the same cubes: post-Doppler
 * through the fused gather + QR + weights kernel (which then writes R out), through a forced
 * shared-memory QR variant (R in the materialized matrices) and through cuBLAS; the 240 x 66
 * shape of the hard preset (the fused kernel with the solver warp); an ill-conditioned
 * training (jammers 70 and 65 dB over the noise); JDL with one launch over the beams and with
 * a launch per beam (user steering). For each detector: the same detection cells except
 * cells whose statistic lies within the case's relative margin of the threshold, the
 * statistics of the common cells within that relative tolerance, the same threshold, the
 * lists sorted by (beam, Doppler bin, range cell); and, on one case, the same list bit for
 * bit from direct launches as from the CUDA graph and from the overflow path (a hit list of
 * 50 entries). Exits 77 (skipped) without a usable GPU. RTSTAP_SEED=N repeats a run. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rtk.h"
#include "synth.h"
#include "la_check.h"
#include "testutil.h"

typedef struct dcase {
    const char *name;
    int C, P, R, D, Q, K, B, Lb, G;
    int Na;      /* > 0: JDL with Na angle bins */
    int steer;   /* 1: random steering vectors (JDL: a launch per beam) */
    double jnr;  /* > 0: both jammers this strong (dB; the second 5 dB below): ill-conditioned */
    double tol;  /* relative tolerance of the statistics, and the margin around the threshold */
} dcase;

static const dcase cases[] = {
    {"post-Doppler Q=3, C=8 (N=24), K=48, sliding block 4 guard 2", 8, 32, 384, 32, 3, 48, 8, 4, 2, 0, 0, 0, 2e-3},
    {"hard shape 240 x 66 (C=22, Q=3), sliding block 16 guard 2", 22, 64, 512, 64, 3, 240, 16, 16, 2, 0, 0, 0, 2e-3},
    {"ill-conditioned: jammers 70/65 dB, N=24, K=48", 8, 32, 384, 32, 3, 48, 8, 4, 2, 0, 0, 70, 5e-2},
    {"JDL 3 x 3 (one launch over the beams), C=8, K=30", 8, 32, 384, 32, 3, 30, 6, 4, 2, 3, 0, 0, 2e-3},
    {"JDL 3 x 3, user steering (a launch per beam)", 8, 32, 384, 32, 3, 30, 4, 4, 2, 3, 1, 0, 2e-3},
};

static const stap_cfar_kind KINDS[3] = {STAP_CFAR_AMF, STAP_CFAR_KELLY, STAP_CFAR_ACE};

static stap_config config_of(const dcase *g, stap_backend be)
{
    stap_config c;
    stap_config_defaults(&c);
    c.channels = g->C;
    c.pulses = g->P;
    c.range_gates = g->R;
    c.doppler_bins = g->D;
    c.doppler_order = g->Q;
    c.training = g->K;
    c.beams = g->B;
    c.training_window = STAP_TRAINING_SLIDING;
    c.block = g->Lb;
    c.guard = g->G;
    c.backend = be;
    if (g->Na > 0) {
        c.algorithm = STAP_ALGORITHM_JDL;
        c.angle_bins = g->Na;
    }
    return c;
}

typedef struct run_out {
    stap_detection *det;
    size_t n;
    char describe[512];
    int ok;
} run_out;

static void run(const stap_config *c, const stap_cf32 *V, const stap_cf32 *cube, stap_cfar_kind kind,
                int variant, int graphs, size_t cap, run_out *o)
{
    memset(o, 0, sizeof *o);
    stap_engine_options eo;
    stap_engine_options_defaults(&eo);
    eo.slots = 2;
    eo.keep_weights = 0;
    eo.keep_output = 0;
    eo.graphs = graphs;
    eo.qr_variant = variant;
    eo.hit_capacity = cap;
    eo.cfar.kind = kind;
    eo.cfar.pfa = 1e-3;
    stap_engine *e;
    stap_error err;
    if (stap_engine_create(&e, c, V, V ? c->beams : 0, V ? stap_dof(c) : 0, &eo, &err)) {
        CHECK(0, "%s engine (%s): %s", stap_cfar_kind_name(kind), stap_backend_name(c->backend), err.msg);
        return;
    }
    snprintf(o->describe, sizeof o->describe, "%s", stap_engine_describe(e));
    stap_cpi_result r;
    /* one CPI in each slot, the second collected after the first was submitted again: what
     * an earlier CPI left in a slot does not reach the next */
    int st = stap_engine_submit(e, 0, cube, &err);
    if (!st) st = stap_engine_submit(e, 1, cube, &err);
    if (!st) st = stap_engine_collect(e, 0, &r, &err);
    if (!st) st = stap_engine_submit(e, 0, cube, &err);
    if (!st) st = stap_engine_collect(e, 1, &r, &err);
    if (!st) st = stap_engine_collect(e, 0, &r, &err);
    CHECK(st == STAP_OK, "%s (%s): %s", stap_cfar_kind_name(kind), stap_backend_name(c->backend), err.msg);
    if (!st) {
        o->n = r.detection_count;
        o->det = tc_xmalloc(sizeof(stap_detection) * (o->n + 1));
        if (o->n) memcpy(o->det, r.detections, sizeof(stap_detection) * o->n);
        o->ok = 1;
    }
    stap_engine_destroy(e);
}

static long long key(const stap_detection *d, const stap_config *c)
{
    return ((long long)d->beam * c->doppler_bins + d->doppler_bin) * c->range_gates + d->range_cell;
}

/* The GPU list g against the CPU list p (both sorted): counts into the report. */
static void compare(const dcase *dc, const stap_config *c, stap_cfar_kind kind, const char *how,
                    const run_out *p, const run_out *g)
{
    const char *name = stap_cfar_kind_name(kind);
    for (size_t i = 1; i < g->n; i++)
        CHECK(key(&g->det[i - 1], c) < key(&g->det[i], c), "%s %s: detections %zu, %zu out of order",
              name, how, i - 1, i);
    size_t i = 0, j = 0, common = 0, only_cpu = 0, only_gpu = 0, near = 0, bad = 0;
    double worst = 0, worst_power = 0, worst_snr = 0;
    while (i < p->n || j < g->n) {
        const long long kp = i < p->n ? key(&p->det[i], c) : -1, kg = j < g->n ? key(&g->det[j], c) : -1;
        if (i < p->n && j < g->n && kp == kg) {
            const stap_detection *a = &p->det[i++], *b = &g->det[j++];
            common++;
            const double rel = fabs((double)b->statistic / a->statistic - 1);
            if (rel > worst) worst = rel;
            const double rp = fabs((double)b->power / a->power - 1);
            if (rp > worst_power) worst_power = rp;
            const double ds = fabs((double)b->snr_db - a->snr_db);
            if (ds > worst_snr) worst_snr = ds;
            CHECK(a->threshold == b->threshold, "%s %s: thresholds %.9g (cpu), %.9g (gpu)", name, how,
                  a->threshold, b->threshold);
            if (rel > dc->tol && bad++ < 5)
                CHECK(0, "%s %s: cell (%d, %d, %d): statistic %.8g (cpu), %.8g (gpu), relative %.2g > %.2g",
                      name, how, a->beam, a->doppler_bin, a->range_cell, a->statistic, b->statistic, rel, dc->tol);
            continue;
        }
        /* in one list only: allowed where that statistic is within the margin of the threshold */
        const int cpu_side = j >= g->n || (i < p->n && kp < kg);
        const stap_detection *a = cpu_side ? &p->det[i++] : &g->det[j++];
        if (cpu_side) only_cpu++;
        else only_gpu++;
        const double m = fabs((double)a->statistic / a->threshold - 1);
        if (m <= dc->tol) {
            near++;
            continue;
        }
        if (bad++ < 5)
            CHECK(0, "%s %s: cell (%d, %d, %d) detected by the %s only: statistic %.8g, threshold %.8g",
                  name, how, a->beam, a->doppler_bin, a->range_cell, cpu_side ? "cpu" : "gpu",
                  a->statistic, a->threshold);
    }
    CHECK(common > 20, "%s %s: only %zu common detections", name, how, common);
    printf("  %-5s %-8s cpu %5zu  gpu %5zu  common %5zu  cpu-only %zu  gpu-only %zu (all within %.0e "
           "of the threshold: %zu)  max |rel stat diff| %.2e  power %.2e  snr_db %.2e dB\n",
           name, how, p->n, g->n, common, only_cpu, only_gpu, dc->tol, near, worst, worst_power, worst_snr);
}

static int same_list(const run_out *a, const run_out *b)
{
    return a->ok && b->ok && a->n == b->n && (!a->n || !memcmp(a->det, b->det, sizeof *a->det * a->n));
}

/* the shared-memory QR variant (materialized training), or -1: the dispatch table (kernels/)
 * is linked only with CUDA (a build without it compiles this test, which then skips) */
static int shared_variant(void)
{
#ifdef RTSTAP_HAVE_CUDA
    for (int v = 0; v < rtk_qr_variant_count(); v++)
        if (rtk_qr_variant_get(v)->storage == RTK_SHARED) return v;
#endif
    return -1;
}

static void one_case(const dcase *dc, uint64_t seed, int extra)
{
    printf("%s\n", dc->name);
    const stap_config cpu = config_of(dc, STAP_BACKEND_CPU), gpu = config_of(dc, STAP_BACKEND_GPU),
                      cub = config_of(dc, STAP_BACKEND_CUBLAS);
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * (size_t)dc->C * dc->P * dc->R);
    synth_params sp;
    stap_synth_defaults(&sp, dc->C, dc->P, dc->R);
    sp.seed = seed;
    sp.target_snr_db = 10;
    if (dc->jnr > 0) {
        sp.jammer_jnr_db[0] = dc->jnr;
        sp.jammer_jnr_db[1] = dc->jnr - 5;
    }
    stap_error err;
    CHECK(stap_synth_cube(&sp, cube, &err) == STAP_OK, "synth: %s", err.msg);
    stap_cf32 *V = NULL;
    if (dc->steer) {
        tc_rng rng;
        tc_rng_seed(&rng, seed ^ 0x5eed);
        const int N = stap_dof(&cpu);
        V = tc_xmalloc(sizeof(stap_cf32) * (size_t)dc->B * N);
        for (int i = 0; i < dc->B * N; i++) {
            const float re = (float)tc_normal(&rng), im = (float)tc_normal(&rng);
            V[i] = re + im * I;
        }
    }
    for (int k = 0; k < 3; k++) {
        run_out p, g;
        run(&cpu, V, cube, KINDS[k], -1, 1, 0, &p);
        run(&gpu, V, cube, KINDS[k], -1, 1, 0, &g);
        if (k == 0) printf("    %s\n    %s\n", p.describe, g.describe);
        if (p.ok && g.ok) compare(dc, &cpu, KINDS[k], "gpu", &p, &g);
        { /* --qr cholqr: the factors the detector reads kept by the fused cholqr kernel (its guard's
             Householder R where the jammers make T ill-conditioned) */
            stap_config gq = gpu;
            gq.qr = STAP_QR_CHOLQR;
            run_out q;
            run(&gq, V, cube, KINDS[k], -1, 1, 0, &q);
            if (k == 0) printf("    %s\n", q.describe);
            if (p.ok && q.ok) compare(dc, &cpu, KINDS[k], "gpu cholqr", &p, &q);
            free(q.det);
        }
        if (extra) {
            run_out x;
            run(&cub, V, cube, KINDS[k], -1, 1, 0, &x);
            if (k == 0) printf("    %s\n", x.describe);
            if (p.ok && x.ok) compare(dc, &cpu, KINDS[k], "cublas", &p, &x);
            free(x.det);
            const int sv = shared_variant();
            if (sv >= 0) {
                run(&gpu, V, cube, KINDS[k], sv, 1, 0, &x);
                if (k == 0) printf("    %s\n", x.describe);
                if (p.ok && x.ok) compare(dc, &cpu, KINDS[k], "smem QR", &p, &x);
                free(x.det);
            }
            run(&gpu, V, cube, KINDS[k], -1, 0, 0, &x);
            CHECK(same_list(&g, &x), "%s: direct launches differ from the graph (%zu, %zu detections)",
                  stap_cfar_kind_name(KINDS[k]), g.n, x.n);
            free(x.det);
            run(&gpu, V, cube, KINDS[k], -1, 1, 50, &x);
            CHECK(g.n > 50, "%s: %zu detections do not overflow a list of 50", stap_cfar_kind_name(KINDS[k]), g.n);
            CHECK(same_list(&g, &x), "%s: the overflow path differs (%zu, %zu detections)",
                  stap_cfar_kind_name(KINDS[k]), g.n, x.n);
            free(x.det);
            printf("  %-5s graph = direct launches = overflow path (50 entries): %s\n",
                   stap_cfar_kind_name(KINDS[k]), tc_failures ? "see failures" : "bit for bit");
        }
        free(p.det);
        free(g.det);
    }
    free(cube);
    free(V);
}

/* argv: the cases to run (indices into cases[]; the first's extra runs only when it is
 * case 0), for a shorter run under compute-sanitizer; none: every case */
int main(int argc, char **argv)
{
    stap_error why;
    if (stap_backend_available(STAP_BACKEND_GPU, &why) != STAP_OK) {
        printf("test_gpu_detect: skipped (%s)\n", why.msg);
        return 77;
    }
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    const int ncases = (int)(sizeof cases / sizeof *cases);
    for (int i = 0; i < ncases; i++) {
        const uint64_t seed = (uint64_t)(tc_uniform(&rng) * 1e15);
        int pick = argc < 2;
        for (int a = 1; a < argc; a++) pick |= atoi(argv[a]) == i;
        if (pick) one_case(&cases[i], seed, i == 0);
    }
    if (tc_failures) {
        fprintf(stderr, "test_gpu_detect: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_gpu_detect: all passed\n");
    return 0;
}
