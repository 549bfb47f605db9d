/* gpu_bench: tuning driver for the GPU QR kernels (not a CTest test; built by
 * tests/bench/gpu/build_bench.sh). For each size it times, with stap_la_bench_qr (device-resident
 * data, CUDA events, median), cuBLAS, the dispatcher's choice and every row of the
 * dispatch table that fits: QR alone and QR + weights; the table order in
 * kernels/dispatch.cu is set from this output. Also prints stap_la_adaptive_weights' phase
 * split (host in/out) for the dispatcher's choice.
 * usage: gpu_bench [--repeat N] [--beams B] [--sizes MxNxBATCH,...] [--all]
 *        (without --all only the dispatcher's choice and cuBLAS are timed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_random.h"
#include "linalg.h"
#include "la_device.h" /* rtk.h and stap_la_gpu_force_variant */
#include "rtk_model.h"

int rtk_qr_facts_get(int v, int kind, int m, int n, rtk_qr_facts *f); /* qr_model.cu */

/* The model's facts of variant v (QR alone and fused) and its predictions, appended to
 * a timing line for tests/tools/fit_qr_model.c: "| storage tr tc rpt cpt mats nt
 * blocks_qr blocks_qrw local_qr local_qrw sms mhz pred_qr pred_qrw solver" (solver: the
 * fused kernel has a solver warp, rtk_model.h). */
static void print_facts(int v, int m, int n, int batch, int nbeams)
{
    rtk_qr_facts f0, f1;
    if (v < 0 || rtk_qr_facts_get(v, 0, m, n, &f0)) return;
    if (rtk_qr_facts_get(v, 1, m, n, &f1)) f1 = f0, f1.blocks_per_sm = 0;
    double p0 = -1, p1 = -1;
    rtk_qr_predict(v, 0, m, n, batch, 0, &p0);
    if (f1.blocks_per_sm > 0) rtk_qr_predict(v, 1, m, n, batch, nbeams, &p1);
    printf("  | %d %d %d %d %d %d %d %d %d %d %d %d %.0f %.2f %.2f %d", f0.storage, f0.tr, f0.tc,
           f0.rpt, f0.cpt, f0.mats, f0.nt, f0.blocks_per_sm, f1.blocks_per_sm, f0.local_bytes,
           f1.local_bytes, f0.sms, f0.clock_mhz, p0, p1, f1.blocks_per_sm > 0 ? f1.solver : 0);
}

static double qr_flops(int m, int n, int batch)
{
    return batch * (8.0 * m * n * n - 8.0 * n * n * n / 3.0);
}

static int time_row(stap_la_ctx *ctx, int v, const char *name, int m, int n, int batch, const stap_cf32 *sets,
                    int nsets, int repeat, int nbeams, const stap_cf32 *V)
{
    stap_error err = {0};
    double qr = -1, qrw = -1;
    if (stap_la_bench_qr(ctx, m, n, batch, sets, nsets, repeat, 0, 0, NULL, &qr, NULL, &err)) {
        printf("%4dx%-4d x%-5d %-18s error: %s\n", m, n, batch, name, err.msg);
        return 1;
    }
    if (stap_la_bench_qr(ctx, m, n, batch, sets, nsets, repeat, 1, nbeams, V, &qrw, NULL, &err)) {
        printf("%4dx%-4d x%-5d %-18s %10.2f  weights error: %s\n", m, n, batch, name, qr, err.msg);
        return 1;
    }
    printf("%4dx%-4d x%-5d %-18s %10.2f %10.2f %8.1f%% %9.0f", m, n, batch, name, qr, qrw,
           100.0 * (qrw - qr) / qr, qr_flops(m, n, batch) / (qr * 1e3));
    print_facts(v, m, n, batch, nbeams);
    printf("\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *sizes = "80x16x384,96x16x384,240x66x128,192x96x128,240x66x1280,306x66x128,"
                        "288x96x128,512x128x32";
    int repeat = 20, nbeams = 16, all = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--beams") && i + 1 < argc) nbeams = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!strcmp(argv[i], "--all")) all = 1;
        else {
            fprintf(stderr, "usage: gpu_bench [--repeat N] [--beams B] [--sizes MxNxB,...] [--all]\n");
            return 2;
        }
    }
    stap_error err = {0};
    stap_la_ctx *gpu = NULL, *cublas = NULL;
    if (stap_la_ctx_create(&gpu, STAP_BACKEND_GPU, 0, &err) || stap_la_ctx_create(&cublas, STAP_BACKEND_CUBLAS, 0, &err)) {
        fprintf(stderr, "gpu_bench: %s\n", err.msg);
        return 77;
    }
    printf("%-9s %-6s %-18s %10s %10s %9s %9s\n", "size", "batch", "variant", "qr_us",
           "qr+w_us", "weights", "GFLOP/s");
    char *list = strdup(sizes), *save = NULL;
    int bad = 0;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int m, n, batch;
        if (sscanf(tok, "%dx%dx%d", &m, &n, &batch) != 3 || n < 1 || m < n || batch < 1) {
            fprintf(stderr, "gpu_bench: bad size '%s'\n", tok);
            return 2;
        }
        const int nsets = 3;
        const size_t one = (size_t)m * n * batch;
        stap_cf32 *sets = malloc(one * nsets * sizeof *sets), *V = malloc((size_t)nbeams * n * sizeof *V);
        stap_cf32 *W = malloc((size_t)batch * nbeams * n * sizeof *W);
        if (!sets || !V || !W) return 1;
        stap_la_random_batch(1000 + m * 7 + n, m, n, batch * nsets, sets);
        stap_la_random_batch(77 + n, nbeams, n, 1, V);
        bad |= time_row(cublas, -1, "cublas", m, n, batch, sets, nsets, repeat, nbeams, V);
        stap_la_gpu_force_variant(gpu, -1, &err);
        stap_la_timing t;
        if (stap_la_adaptive_weights(gpu, m, n, batch, sets, m, (ptrdiff_t)m * n, nbeams, V, W, &t, &err) == STAP_OK)
            printf("%4dx%-4d x%-5d %-18s adaptive_weights (host in/out): qr %.4f ms, weights %.4f ms, transfer %.4f ms\n",
                   m, n, batch, "dispatch", t.qr_ms, t.weights_ms, t.transfer_ms);
        stap_la_random_batch(1000 + m * 7 + n, m, n, batch, sets); /* restore set 0 */
        char label[64];
        int chosen = -1;
        {
            int smem = 232448;
            chosen = rtk_qr_select(m, n, smem);
            snprintf(label, sizeof label, "*%s", chosen >= 0 ? rtk_qr_variant_get(chosen)->name : "?");
        }
        /* the first-fit row, forced (the dispatcher itself picks by the model now) */
        if (chosen >= 0 && stap_la_gpu_force_variant(gpu, chosen, &err) == STAP_OK)
            bad |= time_row(gpu, chosen, label, m, n, batch, sets, nsets, repeat, nbeams, V);
        for (int v = 0; all && v < rtk_qr_variant_count(); v++) {
            if (v == chosen || !rtk_qr_fits(v, m, n, 232448)) continue;
            if (stap_la_gpu_force_variant(gpu, v, &err)) continue;
            bad |= time_row(gpu, v, rtk_qr_variant_get(v)->name, m, n, batch, sets, nsets, repeat, nbeams, V);
        }
        stap_la_gpu_force_variant(gpu, -1, &err);
        free(sets);
        free(V);
        free(W);
    }
    free(list);
    stap_la_ctx_destroy(gpu);
    stap_la_ctx_destroy(cublas);
    return bad;
}
