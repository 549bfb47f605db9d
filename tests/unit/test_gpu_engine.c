/* test_gpu_engine: the GPU engine (every stage on the device) against the double-precision
 * reference of the contract and against the CPU engine, on fresh synthesized cubes of the
 * RT_STAP presets and PERFECT-shaped configurations: weights and output SNR, the
 * distortionless constraint, detections (the synthesized target found by both engines,
 * the lists nearly equal); CUDA graphs against direct launches (bit for bit); the
 * materialized-training path (a forced shared-memory QR variant) against the fused gather;
 * every CFAR kind (CA, OS, GO, SO, CA2D) through the engine: its detections equal the CPU
 * detector's on the engine's own output, bit for bit, and are the same when only detections
 * are kept (the fused apply and detector); and a 1000-CPI stream with 3 slots
 * whose host and device memory do not grow. Exits 77 (skipped) without a usable GPU. RTSTAP_SEED=N repeats a run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "engine.h"
#include "ref_stap.h"
#include "rtk.h"
#include "synth.h"
#include "testutil.h"
#include "la_check.h"

typedef struct gcase {
    const char *name;
    int C, P, R, D, Q, S, K, B;
    double loading;
    stap_window_kind window;
    int Lb, G; /* Lb > 0: sliding training window, blocks of Lb cells, guard G */
    int Na;    /* > 0: JDL with Na angle bins */
    int steer; /* 1: random steering vectors (JDL: a transform and steering per beam) */
    stap_algorithm algo; /* pre-Doppler or ADPCA (Q = pulses of a sub-CPI); else by Na */
} gcase;

/* the engine's defaults with the switches rtstap would hand on from the environment
 * (RTSTAP_DOPPLER_FUSED, RTSTAP_APPLY_CFAR, RTSTAP_CFAR_LINE_THREADS, ...: app/env.c), so
 * that device.sh runs this test on each kernel variant */
static void engine_options(stap_engine_options *o)
{
    stap_error err;
    if (cli_env_engine_defaults(o, &err)) {
        fprintf(stderr, "test_gpu_engine: %s\n", err.msg);
        exit(2);
    }
}

static const gcase cases[] = {
    {"hard preset", 22, 128, 480, 128, 3, 1, 240, 16, 0, STAP_WINDOW_NONE, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"easy preset", 16, 128, 480, 128, 1, 3, 80, 16, 0, STAP_WINDOW_NONE, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    /* K = 306: the model plans the QR alone (flw16x22_20x3), the rows gathered into matrices
     * first and the weight kernel after it, faster than its fused kernel (docs/kernels/design.md* "Fused or not") */
    {"hard preset, K = 306", 22, 128, 480, 128, 3, 1, 306, 16, 0, STAP_WINDOW_NONE, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"medium preset", 32, 128, 384, 128, 3, 1, 192, 16, 0, STAP_WINDOW_NONE, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"PERFECT-small shape", 4, 128, 512, 256, 3, 16, 32, 16, 0, STAP_WINDOW_NONE, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"Q=3, D=40 padded, loading, hann, S=4", 6, 32, 160, 40, 3, 4, 40, 7, 0.05, STAP_WINDOW_HANN, 0, 0, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"sliding, block 1, guard 2, Q=3", 8, 32, 192, 32, 3, 0, 48, 8, 0, STAP_WINDOW_NONE, 1, 2, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"sliding, block 4, guard 3, odd K, loading, hann", 6, 32, 160, 32, 3, 0, 37, 5, 0.05,
     STAP_WINDOW_HANN, 4, 3, 0, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"JDL 3 x 3, hard preset", 22, 128, 480, 128, 3, 1, 240, 16, 0, STAP_WINDOW_NONE, 0, 0, 3, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"JDL 5 x 1, S=4, loading, hann", 8, 32, 160, 32, 1, 4, 24, 5, 0.05, STAP_WINDOW_HANN, 0, 0, 5, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"JDL 3 x 3, sliding, block 4, guard 2", 6, 32, 160, 32, 3, 0, 30, 4, 0, STAP_WINDOW_NONE, 4, 2, 3, 0, STAP_ALGORITHM_POST_DOPPLER},
    {"JDL 3 x 3, user steering (a launch per beam)", 8, 32, 160, 32, 3, 2, 40, 4, 0,
     STAP_WINDOW_NONE, 0, 0, 3, 1, STAP_ALGORITHM_POST_DOPPLER},
    {"pre-Doppler M=3, hard preset", 22, 128, 480, 128, 3, 1, 240, 16, 0, STAP_WINDOW_NONE, 0,
     0, 0, 0, STAP_ALGORITHM_PRE_DOPPLER},
    {"ADPCA 2-pulse, hard preset", 22, 128, 480, 128, 2, 1, 240, 16, 0, STAP_WINDOW_NONE, 0, 0,
     0, 0, STAP_ALGORITHM_ADPCA},
    {"pre-Doppler M=2, D=40 padded, S=4, loading, hann", 6, 32, 160, 40, 2, 4, 40, 5, 0.05,
     STAP_WINDOW_HANN, 0, 0, 0, 0, STAP_ALGORITHM_PRE_DOPPLER},
    {"ADPCA 3-pulse, sliding, block 4, guard 2", 6, 32, 160, 32, 3, 0, 30, 4, 0,
     STAP_WINDOW_NONE, 4, 2, 0, 0, STAP_ALGORITHM_ADPCA},
    {"pre-Doppler M=3, user steering, 2 segments", 8, 32, 160, 32, 3, 2, 40, 4, 0,
     STAP_WINDOW_NONE, 0, 0, 0, 1, STAP_ALGORITHM_PRE_DOPPLER},
    {"DPCA 2-pulse, hard preset", 22, 128, 480, 128, 2, 1, 240, 16, 0, STAP_WINDOW_NONE, 0, 0,
     0, 0, STAP_ALGORITHM_DPCA},
};

static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long a = 0, b = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &a, &b) != 2) b = 0;
        fclose(f);
    }
    return (size_t)b * (size_t)sysconf(_SC_PAGESIZE);
}

static stap_config config_of(const gcase *g, stap_backend be)
{
    stap_config c;
    stap_config_defaults(&c);
    c.channels = g->C; c.pulses = g->P; c.range_gates = g->R; c.doppler_bins = g->D;
    c.doppler_order = g->Q; c.segments = g->S; c.training = g->K; c.beams = g->B;
    c.loading = g->loading; c.window = g->window; c.backend = be;
    if (g->Lb > 0) {
        c.training_window = STAP_TRAINING_SLIDING;
        c.block = g->Lb;
        c.guard = g->G;
        c.segments = g->R / g->Lb; /* as validation sets it: the sizes below use it */
    }
    if (g->Na > 0) {
        c.algorithm = STAP_ALGORITHM_JDL;
        c.angle_bins = g->Na;
    }
    if (g->algo) c.algorithm = g->algo;
    if (g->algo == STAP_ALGORITHM_DPCA) c.dpca_shift = 1; /* as validation resolves 0: the
                                                             reference reads c */
    return c;
}

typedef struct run_out {
    stap_cf32 *W, *Y;
    stap_detection *det;
    size_t ndet;
    float ratio; /* the training's conditioning indicator (engine.h diag_ratio) */
    long long qr_cholesky, qr_guarded; /* the CPI's factors by CholeskyQR, and those its guard
                                          refactored (engine.h) */
    int ok;
} run_out;

static size_t hit_capacity; /* stap_engine_options.hit_capacity of the runs below */
static int detections_only;  /* 1: the runs keep neither output nor weights (the fused apply
                                and detector where it applies) */
static char last_describe[512]; /* the last run's engine description */
static const stap_cf32 *user_V;  /* the runs' steering vectors (B x N), or NULL: the default */

static void run_engine(const stap_config *c, int graphs, int variant, int gemm, const stap_cf32 *cube,
                       const stap_cfar_config *cf, run_out *o, const char *what)
{
    memset(o, 0, sizeof *o);
    stap_engine_options eo;
    engine_options(&eo);
    eo.slots = 2;
    eo.keep_weights = eo.keep_output = !detections_only;
    eo.graphs = graphs;
    eo.qr_variant = variant;
    eo.apply_gemm = gemm;
    eo.cfar = *cf;
    eo.hit_capacity = hit_capacity;
    stap_engine *e;
    stap_error err;
    if (stap_engine_create(&e, c, user_V, user_V ? c->beams : 0, user_V ? stap_dof(c) : 0, &eo,
                           &err)) {
        CHECK(0, "%s: engine: %s", what, err.msg);
        return;
    }
    printf("    %s\n", stap_engine_describe(e));
    snprintf(last_describe, sizeof last_describe, "%s", stap_engine_describe(e));
    stap_cpi_result r;
    /* twice through slot 1 after one CPI in slot 0: state left by earlier CPIs is harmless */
    int st = stap_engine_submit(e, 0, cube, &err);
    if (!st) st = stap_engine_submit(e, 1, cube, &err);
    if (!st) st = stap_engine_collect(e, 0, &r, &err);
    if (!st) st = stap_engine_collect(e, 1, &r, &err);
    CHECK(st == STAP_OK, "%s: %s", what, err.msg);
    if (!st) {
        const size_t nw = stap_weights_count(c, c->beams), ny = stap_output_count(c, c->beams);
        if (!detections_only) {
            o->W = tc_xmalloc(sizeof(stap_cf32) * nw);
            o->Y = tc_xmalloc(sizeof(stap_cf32) * ny);
            memcpy(o->W, r.weights, sizeof(stap_cf32) * nw);
            memcpy(o->Y, r.output, sizeof(stap_cf32) * ny);
        }
        o->ndet = r.detection_count;
        o->ratio = r.diag_ratio;
        o->qr_cholesky = r.qr_cholqr2;
        o->qr_guarded = r.qr_guarded;
        o->det = tc_xmalloc(sizeof(stap_detection) * (o->ndet + 1));
        memcpy(o->det, r.detections, sizeof(stap_detection) * o->ndet);
        o->ok = 1;
        for (int s = 0; s < STAP_STAGE_COUNT; s++)
            printf("      %-9s %8.3f ms\n", stap_stage_names[s], r.stage_ms[s]);
    }
    stap_engine_destroy(e);
}

static void free_out(run_out *o)
{
    free(o->W);
    free(o->Y);
    free(o->det);
}

static int has_cell(const run_out *o, int b, int d, int r)
{
    for (size_t i = 0; i < o->ndet; i++)
        if (o->det[i].beam == b && o->det[i].doppler_bin == d && o->det[i].range_cell == r) return 1;
    return 0;
}

/* A synthesized cube of the case's shape (a 10 dB target; its parameters in *sp). */
static stap_cf32 *case_cube(const gcase *g, uint64_t seed, synth_params *sp)
{
    stap_cf32 *cube = tc_xmalloc(sizeof(stap_cf32) * (size_t)g->C * g->P * g->R);
    stap_synth_defaults(sp, g->C, g->P, g->R);
    sp->seed = seed;
    sp->target_snr_db = 10;
    stap_error err;
    CHECK(stap_synth_cube(sp, cube, &err) == STAP_OK, "%s: synth: %s", g->name, err.msg);
    return cube;
}

static void one_case(const gcase *g, stap_backend be, uint64_t seed)
{
    stap_config c = config_of(g, be), ccpu = config_of(g, STAP_BACKEND_CPU);
    synth_params sp;
    stap_cf32 *cube = case_cube(g, seed, &sp);
    stap_error err;
    stap_cfar_config cf;
    stap_cfar_defaults(&cf);
    if (g->R < 2 * (cf.guard + cf.train) + 1) cf.train = (g->R - 1) / 2 - cf.guard;
    char what[160];
    snprintf(what, sizeof what, "%s [%s]", g->name, stap_backend_name(be));
    printf("  %s\n", what);
    stap_cf32 *V = tc_xmalloc(sizeof(stap_cf32) * (size_t)g->B * g->C * g->Q);
    stap_default_steering(&c, V);
    if (g->steer) {
        tc_rng r;
        tc_rng_seed(&r, seed ^ 0x5eedULL);
        for (int i = 0; i < g->B * g->C * g->Q; i++) V[i] = tc_cnormal(&r);
        user_V = V;
    }
    run_out gpu, gpu_direct, cpu;
    stap_cf64 *Yref = NULL; /* the double reference's output, kept for the GEMM apply below */
    double cpu_y = 0;  /* the CPU engine's output against it, dB */
    run_engine(&c, 1, -1, 0, cube, &cf, &gpu, what);
    run_engine(&c, 0, -1, 0, cube, &cf, &gpu_direct, what);
    run_engine(&ccpu, 1, -1, 0, cube, &cf, &cpu, what);
    if (gpu.ok && cpu.ok && gpu_direct.ok) {
        const size_t nw = stap_weights_count(&c, c.beams), ny = stap_output_count(&c, c.beams);
        CHECK(!memcmp(gpu.W, gpu_direct.W, sizeof(stap_cf32) * nw) &&
              !memcmp(gpu.Y, gpu_direct.Y, sizeof(stap_cf32) * ny),
              "%s: CUDA graph and direct launches differ", what);
        /* against the double-precision reference, beside the CPU engine's agreement */
        float *winf = tc_xmalloc(sizeof(float) * g->P);
        double *win = tc_xmalloc(sizeof(double) * g->P);
        stap_window(&c, winf, &err);
        for (int p = 0; p < g->P; p++) win[p] = winf[p];
        stap_cf64 *Wr = tc_xmalloc(sizeof(stap_cf64) * nw), *Yr = tc_xmalloc(sizeof(stap_cf64) * ny);
        CHECK(ref_stap(&c, win, g->B, V, cube, Wr, Yr) == 0, "%s: reference failed", what);
        const double gw = ref_snr_db(Wr, gpu.W, nw), gy = ref_snr_db(Yr, gpu.Y, ny);
        const double cw = ref_snr_db(Wr, cpu.W, nw), cy = ref_snr_db(Yr, cpu.Y, ny);
        printf("    vs double reference: gpu weights %.1f dB output %.1f dB; cpu %.1f / %.1f dB\n",
               gw, gy, cw, cy);
        /* the CPU pipeline's tests ask 90 dB of jammed cubes; the GPU may round differently
         * but must be as good as the CPU engine within 6 dB and never under 80 dB */
        CHECK(gw >= fmin(90, cw - 6) && gw >= 80, "%s: GPU weights %.1f dB (cpu %.1f)", what, gw, cw);
        CHECK(gy >= fmin(90, cy - 6) && gy >= 80, "%s: GPU output %.1f dB (cpu %.1f)", what, gy, cy);
        /* detections: the target's cell in both lists (beam looking nearest u_t, its bin) */
        const int N = g->C * g->Q;
        int bt = 0;
        double best = -1;
        for (int b = 0; b < g->B; b++) {
            double u = stap_look_direction(V + (size_t)b * N, g->C, g->Q, c.element_spacing);
            if (best < 0 || fabs(u - sp.target_u) < best) {
                best = fabs(u - sp.target_u);
                bt = b;
            }
        }
        const int dt = (int)lround(sp.target_doppler * g->D) % g->D;
        printf("    detections: gpu %zu, cpu %zu; target (beam %d, bin %d, cell %d): gpu %d cpu %d\n",
               gpu.ndet, cpu.ndet, bt, dt, sp.target_range, has_cell(&gpu, bt, dt, sp.target_range),
               has_cell(&cpu, bt, dt, sp.target_range));
        CHECK(has_cell(&cpu, bt, dt, sp.target_range) == has_cell(&gpu, bt, dt, sp.target_range),
              "%s: the target is detected by one engine only", what);
        size_t common = 0;
        for (size_t i = 0; i < gpu.ndet; i++)
            common += has_cell(&cpu, gpu.det[i].beam, gpu.det[i].doppler_bin, gpu.det[i].range_cell);
        const size_t differ = gpu.ndet + cpu.ndet - 2 * common;
        CHECK(differ <= 2 + (gpu.ndet + cpu.ndet) / 50, "%s: detection lists differ in %zu cells",
              what, differ);
        free(winf); free(win); free(Wr);
        Yref = Yr;
        cpu_y = cy;
        /* the conditioning indicator: the device's (a warp reduction in the weight solver)
         * is the CPU engine's within float rounding of R's diagonal */
        printf("    min|R_ii|/max|R_ii|: gpu %.6g, cpu %.6g\n", gpu.ratio, cpu.ratio);
        CHECK(fabs(gpu.ratio - cpu.ratio) <= 1e-3 * cpu.ratio && gpu.ratio == gpu_direct.ratio,
              "%s: diag ratio %g on the GPU, %g on the CPU", what, gpu.ratio, cpu.ratio);
    }
#ifdef RTSTAP_HAVE_CUDA /* the dispatch table (kernels/) is linked only with CUDA */
    /* the materialized-training path (shared-memory QR, separate weights kernel) */
    if (be == STAP_BACKEND_GPU) {
        int smem = -1;
        for (int v = 0; v < rtk_qr_variant_count(); v++)
            if (rtk_qr_variant_get(v)->storage == RTK_SHARED) smem = v;
        run_out mat;
        run_engine(&c, 1, smem, 0, cube, &cf, &mat, what);
        if (mat.ok && gpu.ok) {
            const size_t nw = stap_weights_count(&c, c.beams);
            stap_cf64 *ref = tc_xmalloc(sizeof(stap_cf64) * nw);
            for (size_t i = 0; i < nw; i++) ref[i] = gpu.W[i];
            const double s = ref_snr_db(ref, mat.W, nw);
            printf("    materialized training (smem QR) vs fused gather: weights %.1f dB, ratio "
                   "%.6g vs %.6g\n", s, mat.ratio, gpu.ratio);
            CHECK(s >= 80, "%s: materialized path differs from the gather: %.1f dB", what, s);
            CHECK(fabs(mat.ratio - gpu.ratio) <= 1e-3 * gpu.ratio,
                  "%s: diag ratio %g (materialized) vs %g (fused)", what, mat.ratio, gpu.ratio);
            free(ref);
        }
        free_out(&mat);
    }
#endif
    /* the apply stage as cuBLAS GEMMs against the apply kernel */
    if (be == STAP_BACKEND_GPU) {
        run_out gemm;
        run_engine(&c, 1, -1, 1, cube, &cf, &gemm, what);
        if (gemm.ok && gpu.ok && Yref) {
            /* the two applies sum in different orders: each against the double reference
             * by the criterion the kernel's output meets above (their difference alone
             * is relative to |y|, which cancellation makes small: ~100 dB on jammed,
             * loaded cubes was measured, too close to any fixed bar) */
            const size_t ny = stap_output_count(&c, c.beams);
            stap_cf64 *ref = tc_xmalloc(sizeof(stap_cf64) * ny);
            for (size_t i = 0; i < ny; i++) ref[i] = gpu.Y[i];
            const double s = ref_snr_db(ref, gemm.Y, ny), gy = ref_snr_db(Yref, gemm.Y, ny);
            printf("    apply as cuBLAS GEMMs: vs the apply kernel %.1f dB, vs double reference "
                   "%.1f dB (cpu %.1f)\n", s, gy, cpu_y);
            CHECK(gy >= fmin(90, cpu_y - 6) && gy >= 80, "%s: GEMM apply output %.1f dB from the "
                  "reference (cpu %.1f)", what, gy, cpu_y);
            CHECK(s >= 90, "%s: GEMM apply differs from the kernel: %.1f dB", what, s);
            free(ref);
        }
        free_out(&gemm);
    }
    free_out(&gpu);
    free_out(&gpu_direct);
    free_out(&cpu);
    free(cube);
    free(V);
    free(Yref);
    user_V = NULL;
}

/* --qr cholqr and cholqr2 in the GPU engine (issue 47): materialized training, the
 * CholeskyQR kernel, its guard's Householder on the device, the weight kernel. Graphs and
 * direct launches bit for bit; weights and output against the double reference as the CPU
 * engine with the same factor (the same bar as one_case); every factor counted (none
 * guarded on these well-conditioned cubes); and for cholqr, without diagonal loading (whose
 * rows keep R_ii up), a cube with channel 0 scaled by
 * 1e-5 (min|R_ii| / max|R_ii| far under the guard's 5e-4), whose every factor the guard must
 * hand to Householder on the device: the count says all, as the CPU engine's, and the
 * weights are as close to the double reference as the CPU engine's Householder ones
 * (within 6 dB: a guard that left the matrices unfactored would be far off). */
static void cholesky_case(const gcase *g, stap_qr_method q, uint64_t seed)
{
    stap_config c = config_of(g, STAP_BACKEND_GPU), ccpu = config_of(g, STAP_BACKEND_CPU);
    c.qr = ccpu.qr = q;
    synth_params sp;
    stap_cf32 *cube = case_cube(g, seed, &sp);
    stap_cfar_config cf;
    stap_cfar_defaults(&cf);
    if (g->R < 2 * (cf.guard + cf.train) + 1) cf.train = (g->R - 1) / 2 - cf.guard;
    stap_cf32 *V = tc_xmalloc(sizeof(stap_cf32) * (size_t)g->B * g->C * g->Q);
    stap_default_steering(&c, V);
    const size_t nw = stap_weights_count(&c, c.beams), ny = stap_output_count(&c, c.beams);
    float *winf = tc_xmalloc(sizeof(float) * g->P);
    double *win = tc_xmalloc(sizeof(double) * g->P);
    stap_cf64 *Wr = tc_xmalloc(sizeof(stap_cf64) * nw), *Yr = tc_xmalloc(sizeof(stap_cf64) * ny);
    stap_error err;
    stap_window(&c, winf, &err);
    for (int p = 0; p < g->P; p++) win[p] = winf[p];
    const long long mats = stap_training_matrices(&c);
    for (int bad = 0; bad < (q == STAP_QR_CHOLQR && g->loading == 0 && g->Na == 0 ? 2 : 1); bad++) {
        if (bad) /* channel 0 (the cube's first P x R samples) 1e5 times weaker */
            for (size_t i = 0; i < (size_t)g->P * g->R; i++) cube[i] *= 1e-5f;
        char what[200];
        snprintf(what, sizeof what, "%s [gpu, --qr %s%s]", g->name, stap_qr_method_name(q),
                 bad ? ", channel 0 at 1e-5: every factor guarded" : "");
        printf("  %s\n", what);
        run_out gpu, direct, cpu;
        run_engine(&c, 1, -1, 0, cube, &cf, &gpu, what);
        CHECK(!gpu.ok || strstr(last_describe, "CholeskyQR"), "%s: the engine does not factor by CholeskyQR: %s",
              what, last_describe);
        run_engine(&c, 0, -1, 0, cube, &cf, &direct, what);
        run_engine(&ccpu, 1, -1, 0, cube, &cf, &cpu, what);
        if (gpu.ok && direct.ok && cpu.ok) {
            CHECK(!memcmp(gpu.W, direct.W, sizeof(stap_cf32) * nw) && !memcmp(gpu.Y, direct.Y, sizeof(stap_cf32) * ny),
                  "%s: CUDA graph and direct launches differ", what);
            printf("    factors: gpu %lld by CholeskyQR + %lld guarded, cpu %lld + %lld, of %lld\n", gpu.qr_cholesky,
                   gpu.qr_guarded, cpu.qr_cholesky, cpu.qr_guarded, mats);
            CHECK(gpu.qr_cholesky + gpu.qr_guarded == mats && (bad ? gpu.qr_guarded == mats : gpu.qr_guarded <= mats / 100) &&
                      direct.qr_guarded == gpu.qr_guarded,
                  "%s: %lld by CholeskyQR and %lld guarded of %lld (direct: %lld guarded)", what, gpu.qr_cholesky,
                  gpu.qr_guarded, mats, direct.qr_guarded);
            /* cholqr: the CPU engine's own algorithm (test_gpu_qr: the same R to the bit), on inputs that
             * differ by the Doppler filters' rounding: the same guard decisions away from 5e-4 */
            CHECK(q != STAP_QR_CHOLQR || cpu.qr_guarded == gpu.qr_guarded, "%s: the CPU engine guarded %lld, the GPU %lld",
                  what, cpu.qr_guarded, gpu.qr_guarded);
            CHECK(ref_stap(&c, win, g->B, V, cube, Wr, Yr) == 0, "%s: reference failed", what);
            const double gw = ref_snr_db(Wr, gpu.W, nw), gy = ref_snr_db(Yr, gpu.Y, ny);
            const double cw = ref_snr_db(Wr, cpu.W, nw), cy = ref_snr_db(Yr, cpu.Y, ny);
            printf("    vs double reference: gpu weights %.1f dB output %.1f dB; cpu %.1f / %.1f dB\n", gw, gy, cw,
                   cy);
            const double floor_db = bad ? 0 : 80; /* the guarded case: as good as the CPU's Householder */
            CHECK(gw >= fmin(90, cw - 6) && gw >= floor_db, "%s: GPU weights %.1f dB (cpu %.1f)", what, gw, cw);
            CHECK(gy >= fmin(90, cy - 6) && gy >= floor_db, "%s: GPU output %.1f dB (cpu %.1f)", what, gy, cy);
            CHECK(fabs(gpu.ratio - cpu.ratio) <= 1e-3 * cpu.ratio + (bad ? 1e-6 : 0),
                  "%s: diag ratio %g on the GPU, %g on the CPU", what, gpu.ratio, cpu.ratio);
        }
        free_out(&gpu);
        free_out(&direct);
        free_out(&cpu);
    }
    free(winf); free(win); free(Wr); free(Yr); free(V); free(cube);
}

/* Every detector kind through the GPU engine: the list equals stap_cfar_detect (the CPU
 * plan) on the output the engine kept, field by field; and the engine keeping detections
 * only (for CA, GO and SO at one segment and R <= 512: the apply and the detector in one
 * kernel, rtk_apply_cfar_launch) gives the same list. cap > 0: a device hit list of cap
 * entries, which every kind's CPI overflows (its re-test into a list of every cell; the
 * fused kernel again where it ran). */
static void kinds_case(const gcase *g, uint64_t seed, size_t cap)
{
    hit_capacity = cap;
    stap_config c = config_of(g, STAP_BACKEND_GPU);
    synth_params sp;
    stap_cf32 *cube = case_cube(g, seed, &sp);
    stap_error err;
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++) {
        stap_cfar_config cf;
        stap_cfar_defaults(&cf);
        cf.kind = (stap_cfar_kind)kind;
        cf.pfa = 1e-3;
        if (g->R < 2 * (cf.guard + cf.train) + 1) cf.train = (g->R - 1) / 2 - cf.guard;
        char what[160], desc[128];
        stap_cfar_describe(&cf, desc, sizeof desc);
        snprintf(what, sizeof what, "%s [gpu, %s, hit list %s]", g->name, desc,
                 cap ? "overflowing" : "automatic");
        printf("  %s\n", what);
        run_out o;
        run_engine(&c, 1, -1, 0, cube, &cf, &o, what);
        if (o.ok) {
            stap_detection *det = NULL;
            size_t nd = 0;
            CHECK(stap_cfar_detect(&cf, o.Y, g->B, g->D, g->R, &det, &nd, &err) == STAP_OK,
                  "%s: CPU detector: %s", what, err.msg);
            printf("    detections: engine %zu, CPU detector on its output %zu\n", o.ndet, nd);
            CHECK(nd == o.ndet && (!nd || !memcmp(det, o.det, sizeof(stap_detection) * nd)),
                  "%s: the engine's detections differ from the CPU detector's", what);
            CHECK(!cap || o.ndet > cap, "%s: %zu detections did not overflow the %zu-entry list",
                  what, o.ndet, cap);
            free(det);
            run_out f;
            detections_only = 1;
            run_engine(&c, 1, -1, 0, cube, &cf, &f, what);
            detections_only = 0;
            if (f.ok) {
                /* the fused kernel where it applies (CA, GO, SO; one segment of <= 512 cells) */
                stap_engine_options tu; /* the A/B switches handed on may keep them apart */
                engine_options(&tu);
                const int fusable = (kind == STAP_CFAR_CA || kind == STAP_CFAR_GO || kind == STAP_CFAR_SO) &&
                                    g->S == 1 && g->R <= 512 && g->C * g->Q > 16 &&
                                    tu.tuning.apply_kernel == 0 && !tu.tuning.apply_cfar_apart &&
                                    !tu.tuning.cfar.two_pass;
                const int fused = strstr(last_describe, "detection in one kernel") != NULL;
                CHECK(fused == fusable, "%s: the apply and detector %s in one kernel", what,
                      fused ? "ran" : "did not run");
                printf("    detections only (%s): %zu\n", fused ? "apply and detection in one kernel" : "apart",
                       f.ndet);
                CHECK(f.ndet == o.ndet && (!f.ndet || !memcmp(f.det, o.det, sizeof(stap_detection) * f.ndet)),
                      "%s: detections differ when only detections are kept (%zu against %zu)", what, f.ndet,
                      o.ndet);
            }
            free_out(&f);
        }
        free_out(&o);
    }
    free(cube);
    hit_capacity = 0;
}

/* 1000 CPIs through 3 slots: device free memory and host RSS sampled at CPI 100 and 1000 */
static void soak(void)
{
    stap_config c = config_of(&cases[0], STAP_BACKEND_GPU);
    stap_engine_options eo;
    engine_options(&eo);
    eo.slots = 3;
    stap_engine *e;
    stap_error err;
    if (stap_engine_create(&e, &c, NULL, 0, 0, &eo, &err)) {
        CHECK(0, "soak: engine: %s", err.msg);
        return;
    }
    const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
    stap_cf32 *cube[2];
    for (int k = 0; k < 2; k++) {
        cube[k] = stap_engine_host_alloc(e, sizeof(stap_cf32) * n);
        synth_params sp;
        stap_synth_defaults(&sp, c.channels, c.pulses, c.range_gates);
        sp.seed = 77 + k;
        stap_synth_cube(&sp, cube[k], &err);
    }
    size_t free100 = 0, free1000 = 0, rss100 = 0, rss1000 = 0, total = 0;
    size_t ndet[2] = {0, 0};
    for (int i = 0; i < 1000 + 3; i++) {
        if (i >= 3) {
            const int j = i - 3;
            stap_cpi_result r;
            if (stap_engine_collect(e, j % 3, &r, &err)) {
                CHECK(0, "soak CPI %d: %s", j, err.msg);
                break;
            }
            CHECK(r.cpi == j, "soak: CPI %lld came back as %d", r.cpi, j);
            if (j < 2) ndet[j] = r.detection_count;
            else CHECK(r.detection_count == ndet[j % 2], "soak CPI %d: %zu detections, first pass %zu",
                       j, r.detection_count, ndet[j % 2]);
            if (j == 100) {
                stap_gpu_info(NULL, 0, &free100, &total, &err);
                rss100 = rss_bytes();
            }
        }
        if (i < 1000) {
            if (stap_engine_submit(e, i % 3, cube[i % 2], &err)) {
                CHECK(0, "soak submit %d: %s", i, err.msg);
                break;
            }
        }
    }
    stap_gpu_info(NULL, 0, &free1000, &total, &err);
    rss1000 = rss_bytes();
    printf("  soak: 1000 CPIs, 3 slots: device free %.1f -> %.1f MB, host RSS %.1f -> %.1f MB\n",
           free100 / 1e6, free1000 / 1e6, rss100 / 1e6, rss1000 / 1e6);
    CHECK(free1000 == free100, "soak: device memory changed by %lld bytes",
          (long long)free100 - (long long)free1000);
    CHECK(rss1000 <= rss100 + (1 << 20), "soak: host RSS grew by %zu bytes", rss1000 - rss100);
    for (int k = 0; k < 2; k++) stap_engine_host_free(e, cube[k]);
    stap_engine_destroy(e);
}

/* stap_engine_options.resident (issue 34): each slot's first cube copied in, then run
 * again from device memory (NULL cube) — bit for bit the results of a run that copies it
 * each time, on fresh cubes in slots 0 and 1 (complex64 and int16 input); NULL before a
 * slot's first cube, and resident on the CPU backend, are refused */
static void resident_case(const gcase *g, uint64_t seed)
{
    for (int fmt = 0; fmt < 2; fmt++) {
        stap_config c = config_of(g, STAP_BACKEND_GPU);
        stap_engine_options eo;
        engine_options(&eo);
        eo.slots = 2;
        eo.keep_weights = eo.keep_output = 1;
        if (fmt) {
            eo.input.type = STAP_SAMPLES_CI16;
            eo.input.scale = 1.0 / 512;
        }
        stap_engine *plain, *res;
        stap_error err;
        if (stap_engine_create(&plain, &c, NULL, 0, 0, &eo, &err)) {
            CHECK(0, "resident: engine: %s", err.msg);
            return;
        }
        eo.resident = 1;
        if (stap_engine_create(&res, &c, NULL, 0, 0, &eo, &err)) {
            CHECK(0, "resident: resident engine: %s", err.msg);
            stap_engine_destroy(plain);
            return;
        }
        stap_cpi_result r;
        CHECK(stap_engine_submit(res, 0, NULL, &err) == STAP_EINVAL && strstr(err.msg, "holds no cube"),
              "resident: NULL before the slot's first cube: %s", err.msg);
        const size_t n = (size_t)c.channels * c.pulses * c.range_gates;
        void *cube[2];
        for (int k = 0; k < 2; k++) {
            synth_params sp;
            stap_cf32 *x = case_cube(g, seed + (uint64_t)k, &sp);
            cube[k] = stap_engine_host_alloc(res, stap_engine_cube_bytes(res));
            stap_samples_from_cf32(&eo.input, x, n, cube[k]);
            free(x);
        }
        const size_t nw = stap_weights_count(&c, c.beams), ny = stap_output_count(&c, c.beams);
        stap_cf32 *W[2] = {NULL, NULL}, *Y[2] = {NULL, NULL};
        size_t nd[2] = {0, 0};
        int st = STAP_OK;
        for (int k = 0; k < 2 && !st; k++) { /* the plain engine's results of each cube */
            st = stap_engine_submit(plain, 0, cube[k], &err);
            if (!st) st = stap_engine_collect(plain, 0, &r, &err);
            if (st) break;
            W[k] = tc_xmalloc(sizeof(stap_cf32) * nw);
            Y[k] = tc_xmalloc(sizeof(stap_cf32) * ny);
            memcpy(W[k], r.weights, sizeof(stap_cf32) * nw);
            memcpy(Y[k], r.output, sizeof(stap_cf32) * ny);
            nd[k] = r.detection_count;
        }
        CHECK(st == STAP_OK, "resident: plain run: %s", err.msg);
        /* slot k holds cube k: copied once, then 3 more times from device memory */
        for (int pass = 0; pass < 4 && !st; pass++)
            for (int k = 0; k < 2 && !st; k++) {
                st = stap_engine_submit(res, k, pass ? NULL : cube[k], &err);
                if (st) break;
                if (k == 1)
                    for (int q = 0; q < 2 && !st; q++) {
                        if ((st = stap_engine_collect(res, q, &r, &err))) break;
                        CHECK(!memcmp(r.weights, W[q], sizeof(stap_cf32) * nw) &&
                                  !memcmp(r.output, Y[q], sizeof(stap_cf32) * ny) &&
                                  r.detection_count == nd[q],
                              "resident %s: pass %d slot %d differs from the copied run",
                              fmt ? "int16" : "complex64", pass, q);
                    }
            }
        CHECK(st == STAP_OK, "resident: %s", err.msg);
        printf("  resident (%s): 4 passes of 2 slots equal the copied run\n", fmt ? "int16" : "complex64");
        for (int k = 0; k < 2; k++) {
            stap_engine_host_free(res, cube[k]);
            free(W[k]);
            free(Y[k]);
        }
        stap_engine_destroy(res);
        stap_engine_destroy(plain);
    }
    stap_config cpu = config_of(g, STAP_BACKEND_CPU);
    stap_engine_options eo;
    engine_options(&eo);
    eo.resident = 1;
    stap_engine *e = NULL;
    stap_error err;
    CHECK(stap_engine_create(&e, &cpu, NULL, 0, 0, &eo, &err) == STAP_EINVAL && !e,
          "resident on the CPU backend was not refused");
}

int main(void)
{
    stap_error why;
    if (stap_backend_available(STAP_BACKEND_GPU, &why) != STAP_OK) {
        printf("test_gpu_engine: skipped (%s)\n", why.msg);
        return 77;
    }
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    /* RTSTAP_ENGINE_CASES=cholesky: the CholeskyQR cases alone; =cholesky-small (for
     * compute-sanitizer): their two small ones; =resident-soak: the resident case and the soak */
    const char *only = getenv("RTSTAP_ENGINE_CASES");
    const int cholesky_only = only && !strncmp(only, "cholesky", 8);
    const int small_only = only && !strcmp(only, "cholesky-small");
    const int tail_only = only && !strcmp(only, "resident-soak");
    for (size_t i = 0; i < sizeof cases / sizeof *cases && !cholesky_only && !tail_only; i++) {
        const uint64_t seed = (uint64_t)(tc_uniform(&rng) * 1e15);
        one_case(&cases[i], STAP_BACKEND_GPU, seed);
        if (i == 0 || i == 3 || i == 6 || i == 8 || i == 11 || i == 14 || i == 15 || i == 16)
            one_case(&cases[i], STAP_BACKEND_CUBLAS, seed);
        if (i == 0 || i == 4) kinds_case(&cases[i], seed, 0);
        if (i == 0) kinds_case(&cases[i], seed, 100);
    }
    /* the CholeskyQR factors: post-Doppler (hard, medium; sliding), JDL, pre-Doppler
     * (grouped; with loading) */
    static const int cq_cases[] = {0, 3, 8, 12, 6, 14};
    for (size_t i = small_only ? 4 : 0; i < sizeof cq_cases / sizeof *cq_cases && !tail_only; i++) {
        const uint64_t seed = (uint64_t)(tc_uniform(&rng) * 1e15);
        cholesky_case(&cases[cq_cases[i]], STAP_QR_CHOLQR, seed);
        if (i == 0 || i == 4) cholesky_case(&cases[cq_cases[i]], STAP_QR_CHOLQR2, seed);
    }
    if (!cholesky_only) {
        resident_case(&cases[0], (uint64_t)(tc_uniform(&rng) * 1e15));
        soak();
    }
    if (tc_failures) {
        fprintf(stderr, "test_gpu_engine: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_gpu_engine: all passed\n");
    return 0;
}
