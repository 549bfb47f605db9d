/* test_gpu_cfar: the GPU CFAR (kernels/cfar.cu) against the CPU detector
 * (stap/detect/cfar.c) on fresh random outputs — noise with per-line levels, targets and
 * clutter-like ridges, short lines where the edge windows dominate, every kind (CA, OS,
 * GO, SO along range; CA2D over range x Doppler, with Doppler windows up to the whole
 * line of bins) with random parameters and shapes, and the hard preset's output shape
 * (16 x 128 x 480), and samples on a coarse grid (equal powers and zeros in the windows:
 * OS's sorted rows meet ties): the detection lists must be identical (every cell, power and SNR
 * estimate, bit for bit). Each case runs the default kernels and, in turn, one of the
 * variants kept for comparisons (stap_cfar_gpu_options: two passes; 32, 64, 128 threads a
 * line), each against the CPU list. Exits 77 (skipped) in builds without CUDA or without a
 * usable GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfar.h"
#include "la_check.h"
#include "rtstap/common.h" /* stap_now_ms */
#ifdef RTSTAP_HAVE_CUDA
#include "testutil.h"
#endif

#ifdef RTSTAP_HAVE_CUDA
static const stap_cfar_gpu_options variants[] = {{1, 0}, {0, 32}, {0, 64}, {0, 128}};
static int ncase;

static void compare(const stap_cfar_config *c, const stap_cf32 *y, int B, int D, int R,
                    const stap_detection *dc, size_t nc, int sc, double cpu_ms,
                    const stap_cfar_gpu_options *go);

static void one_case(tc_rng *rng, const stap_cfar_config *c, int B, int D, int R, int ties)
{
    size_t cells = (size_t)B * D * R;
    stap_cf32 *y = malloc(sizeof(stap_cf32) * cells);
    double level = 1;
    for (size_t i = 0; i < cells; i++) {
        if (i % R == 0) level = exp(6 * tc_uniform(rng));
        double g = level;
        if (tc_uniform(rng) < 0.003) g *= 30;                  /* point targets */
        if ((i / R) % 17 == 3 && (int)(i % R) > R / 2) g *= 8; /* a clutter edge */
        y[i] = (float)sqrt(g) * tc_cnormal(rng);
        /* ties: samples on a coarse grid, so that windows hold many equal powers and zeros */
        if (ties) y[i] = STAP_CMPLXF(roundf(crealf(y[i]) / 2), roundf(cimagf(y[i]) / 2));
    }
    stap_detection *dc = NULL;
    size_t nc = 0;
    stap_error err;
    double t0 = stap_now_ms();
    int sc = stap_cfar_detect(c, y, B, D, R, &dc, &nc, &err);
    const double cpu_ms = stap_now_ms() - t0;
    if (sc) fprintf(stderr, "FAIL: CPU CFAR: %s\n", err.msg);
    compare(c, y, B, D, R, dc, nc, sc, cpu_ms, NULL);
    compare(c, y, B, D, R, dc, nc, sc, cpu_ms, &variants[ncase++ % 4]);
    free(dc);
    free(y);
}

static void compare(const stap_cfar_config *c, const stap_cf32 *y, int B, int D, int R,
                    const stap_detection *dc, size_t nc, int sc, double cpu_ms,
                    const stap_cfar_gpu_options *go)
{
    stap_detection *dg = NULL;
    size_t ng = 0;
    stap_error err;
    double t1 = stap_now_ms();
    int sg = stap_cfar_detect_gpu(c, y, B, D, R, go, &dg, &ng, &err);
    double t2 = stap_now_ms();
    if (sg) fprintf(stderr, "FAIL: GPU CFAR: %s\n", err.msg);
    char desc[160];
    stap_cfar_describe(c, desc, sizeof desc);
    if (go) {
        const size_t l = strlen(desc);
        snprintf(desc + l, sizeof desc - l, go->two_pass ? " [two passes]" : " [%d threads a line]",
                 go->line_threads);
    }
    int same = !sc && !sg && nc == ng;
    size_t first = 0;
    for (size_t i = 0; same && i < nc; i++) {
        same = dc[i].beam == dg[i].beam && dc[i].doppler_bin == dg[i].doppler_bin &&
               dc[i].range_cell == dg[i].range_cell &&
               !memcmp(&dc[i].power, &dg[i].power, sizeof(float)) &&
               !memcmp(&dc[i].snr_db, &dg[i].snr_db, sizeof(float));
        first = i;
    }
    fprintf(stderr, "  %-58s %3d x %3d x %4d: CPU %6zu detections (%.1f ms), GPU %6zu (%.1f ms)%s\n",
            desc, B, D, R, nc, cpu_ms, ng, t2 - t1, same ? "  identical" : "");
    if (!same) {
        tc_failures++;
        fprintf(stderr, "FAIL: %s: CPU and GPU lists differ", desc);
        if (nc == ng && nc > 0)
            fprintf(stderr, " at entry %zu: CPU (%d,%d,%d,%.9g,%.9g) GPU (%d,%d,%d,%.9g,%.9g)",
                    first, dc[first].beam, dc[first].doppler_bin, dc[first].range_cell,
                    dc[first].power, dc[first].snr_db, dg[first].beam, dg[first].doppler_bin,
                    dg[first].range_cell, dg[first].power, dg[first].snr_db);
        fputc('\n', stderr);
    }
    free(dg);
}
#endif

int main(void)
{
#ifndef RTSTAP_HAVE_CUDA
    fprintf(stderr, "test_gpu_cfar: built without CUDA: skipped\n");
    return 77;
#else
    stap_error err;
    if (stap_backend_available(STAP_BACKEND_GPU, &err) != STAP_OK) {
        fprintf(stderr, "test_gpu_cfar: no GPU (%s): skipped\n", err.msg);
        return 77;
    }
    uint64_t seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    for (int kind = STAP_CFAR_CA; kind <= STAP_CFAR_CA2D; kind++) {
        stap_cfar_config c;
        stap_cfar_defaults(&c);
        c.kind = (stap_cfar_kind)kind;
        c.pfa = 1e-4;
        one_case(&rng, &c, 16, 128, 480, 0); /* the hard preset's output */
        for (int rep = 0; rep < 8; rep++) {
            c.pfa = pow(10, -1 - 5 * tc_uniform(&rng));
            c.guard = (int)(tc_uniform(&rng) * 5);
            c.train = 1 + (int)(tc_uniform(&rng) * (rep == 5 ? STAP_CFAR_MAX_TRAIN : 24));
            c.os_rank = rep % 2 ? 1 + (int)(tc_uniform(&rng) * 2 * c.train) : 0;
            c.guard_doppler = (int)(tc_uniform(&rng) * (rep == 6 ? 10 : 3));
            c.train_doppler = rep == 7 ? 0 : (int)(tc_uniform(&rng) * (rep == 6 ? 20 : 5));
            int minR = 2 * (c.guard + c.train) + 1;
            int minD = kind == STAP_CFAR_CA2D ? 2 * (c.guard_doppler + c.train_doppler) + 1 : 1;
            int R = rep < 2 ? minR + (int)(tc_uniform(&rng) * 4) /* edge windows everywhere */
                            : minR + (int)(tc_uniform(&rng) * 600);
            /* rep 4: the Doppler window spans every bin (the circular wrap at both ends) */
            int D = rep == 4 ? minD : minD + (int)(tc_uniform(&rng) * 64);
            one_case(&rng, &c, 1 + (int)(tc_uniform(&rng) * 8), D, R, rep == 3);
        }
        /* pfa near 1: almost every cell detects */
        c.pfa = 0.9;
        c.guard = 1;
        c.train = 4;
        c.os_rank = 0;
        c.guard_doppler = 1;
        c.train_doppler = 1;
        one_case(&rng, &c, 4, 32, 200, 0);
    }
    if (tc_failures) {
        fprintf(stderr, "test_gpu_cfar: %d failure(s) (seed %llu)\n", tc_failures,
                (unsigned long long)seed);
        return 1;
    }
    fprintf(stderr, "test_gpu_cfar: all passed\n");
    return 0;
#endif
}
