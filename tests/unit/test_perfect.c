/* test_perfect: the PERFECT suite's STAP application. The shipped small input
 * (datasets/perfect) and synthesized medium and large inputs of the suite's statistics
 * (uniform [0, 1e6) samples, uniform [0, 1) steering) through the raw-file path, against
 * the double-precision reference at the suite's 80 dB, for the cpu and lapack backends;
 * and the import-perfect path (schema-v1 HDF5) giving the identical output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5io.h"
#include "la_check.h"
#include "perfect_io.h"
#include "ref_stap.h"
#include "testutil.h"

static stap_cf32 *run_plan(const stap_config *cfg, const stap_input *in, stap_error *err)
{
    stap_plan *plan;
    if (stap_plan_create(&plan, cfg, in->steering, in->steering_beams, in->steering_len, err)) return NULL;
    stap_cf32 *W = malloc(sizeof(stap_cf32) * stap_weights_len(plan));
    stap_cf32 *Y = malloc(sizeof(stap_cf32) * stap_output_len(plan));
    if (stap_plan_execute(plan, in->iq, W, Y, NULL, err)) {
        free(Y);
        Y = NULL;
    }
    free(W);
    stap_plan_destroy(plan);
    return Y;
}

static void check_size(perfect_size size, const char *dir, const char *label, int check_import)
{
    stap_error err;
    stap_input in;
    int st = stap_perfect_read_inputs(size, dir, &in, &err);
    CHECK(st == STAP_OK, "%s: %s", label, err.msg);
    if (st) return;
    stap_config cfg;
    stap_perfect_config(size, &cfg);
    int N = cfg.channels * cfg.doppler_order;
    size_t ny = (size_t)16 * cfg.doppler_bins * cfg.range_gates;
    size_t nw = (size_t)cfg.doppler_bins * cfg.segments * 16 * N;
    stap_cf64 *Yr = malloc(sizeof(stap_cf64) * ny), *Wr = malloc(sizeof(stap_cf64) * nw);
    double *win = malloc(sizeof(double) * cfg.pulses);
    for (int p = 0; p < cfg.pulses; p++) win[p] = 1.0;
    CHECK(ref_stap(&cfg, win, 16, in.steering, in.iq, Wr, Yr) == 0, "%s: reference", label);
    stap_cf32 *first = NULL;
    /* every backend available here: cpu and lapack always, gpu and cublas on a GPU machine */
    const stap_backend bes[] = {STAP_BACKEND_CPU, STAP_BACKEND_LAPACK, STAP_BACKEND_GPU, STAP_BACKEND_CUBLAS};
    for (int b = 0; b < 4; b++) {
        stap_error why;
        if (stap_backend_available(bes[b], &why) != STAP_OK) {
            printf("  PERFECT %-28s %-6s not available here: %s\n", label, stap_backend_name(bes[b]), why.msg);
            continue;
        }
        cfg.backend = bes[b];
        stap_cf32 *Y = run_plan(&cfg, &in, &err);
        CHECK(Y != NULL, "%s [%s]: %s", label, stap_backend_name(bes[b]), err.msg);
        if (!Y) continue;
        double snr = ref_snr_db(Yr, Y, ny);
        printf("  PERFECT %-28s %-6s SNR vs double reference %6.1f dB (need 80)\n", label,
               stap_backend_name(bes[b]), snr);
        CHECK(snr >= 80, "%s [%s]: SNR %.1f dB < 80", label, stap_backend_name(bes[b]), snr);
        if (!first) first = Y;
        else free(Y);
    }
    if (check_import && first) {
        /* import-perfect: the same inputs as schema v1, read back, same output */
        char path[4096];
        snprintf(path, sizeof path, "%s/import_%d.h5", dir, (int)size);
        unlink(path);
        st = stap_input_write(path, &in, NULL, NULL, NULL, &err);
        CHECK(st == STAP_OK, "import write: %s", err.msg);
        stap_input back;
        if (!st && (st = stap_input_read(path, &back, NULL, &err)) == STAP_OK) {
            CHECK(back.steering_beams == 16 && back.steering_len == N, "imported /steering shape");
            stap_config c2;
            stap_perfect_config(size, &c2);
            c2.backend = STAP_BACKEND_CPU;
            stap_cf32 *Y2 = run_plan(&c2, &back, &err);
            CHECK(Y2 && memcmp(Y2, first, sizeof(stap_cf32) * ny) == 0,
                  "%s: output through the imported HDF5 file differs", label);
            free(Y2);
            stap_input_free(&back);
        } else {
            CHECK(0, "import read: %s", err.msg);
        }
        unlink(path);
    }
    free(first);
    free(Yr);
    free(Wr);
    free(win);
    stap_input_free(&in);
}

static void synthesize(perfect_size size, const char *dir, tc_rng *rng)
{
    const perfect_dims *d = stap_perfect_get_dims(size);
    size_t n = (size_t)d->channels * d->pulses * d->range_cells;
    size_t nv = (size_t)d->steering * d->channels * d->doppler_order;
    stap_cf32 *x = malloc(sizeof(stap_cf32) * n), *v = malloc(sizeof(stap_cf32) * nv);
    for (size_t i = 0; i < n; i++) x[i] = (float)(1e6 * tc_uniform(rng)) + I * (float)(1e6 * tc_uniform(rng));
    for (size_t i = 0; i < nv; i++) v[i] = (float)tc_uniform(rng) + I * (float)tc_uniform(rng);
    char path[4096];
    stap_error err;
    snprintf(path, sizeof path, "%s/%s_app_input.bin", dir, d->name);
    CHECK(stap_perfect_write_raw(path, x, n, STAP_WRITE_NEW, &err) == STAP_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/%s_app_steering_vectors.bin", dir, d->name);
    CHECK(stap_perfect_write_raw(path, v, nv, STAP_WRITE_NEW, &err) == STAP_OK, "%s", err.msg);
    /* writing again must be refused: never overwrite */
    CHECK(stap_perfect_write_raw(path, v, nv, STAP_WRITE_NEW, &err) == STAP_EIO, "overwrite not refused");
    /* ... unless asked to replace it (-f): the same contents again */
    CHECK(stap_perfect_write_raw(path, v, nv, STAP_WRITE_REPLACE, &err) == STAP_OK, "replace: %s",
          err.msg);
    free(x);
    free(v);
}

int main(void)
{
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(TC_FIXED_SEED));
    const char *src = getenv("RTSTAP_SOURCE_DIR");
    char shipped[4096];
    snprintf(shipped, sizeof shipped, "%s/datasets/perfect", src ? src : ".");
    check_size(PERFECT_SMALL, shipped, "small (shipped input)", 1);

    char tmpl[] = "/tmp/rtstap_perfect_XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL, "mkdtemp");
    if (dir) {
        synthesize(PERFECT_MEDIUM, dir, &rng);
        synthesize(PERFECT_LARGE, dir, &rng);
        check_size(PERFECT_MEDIUM, dir, "medium (synthesized)", 0);
        check_size(PERFECT_LARGE, dir, "large (synthesized)", 0);
        /* a truncated input is refused with its size */
        char path[4200];
        snprintf(path, sizeof path, "%s/small_app_input.bin", dir);
        FILE *f = fopen(path, "wb");
        fwrite("abcdefgh", 1, 8, f);
        fclose(f);
        stap_input in;
        stap_error err;
        CHECK(stap_perfect_read_inputs(PERFECT_SMALL, dir, &in, &err) == STAP_EFORMAT &&
                  strstr(err.msg, "holds 8 bytes"), "truncated input: %s", err.msg);
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    if (tc_failures) {
        fprintf(stderr, "test_perfect: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_perfect: all passed\n");
    return 0;
}
