/* cmd_bench.c: `rtstap bench-qr` — the timing harness of the linear-algebra core: the
 * batched complex QR of every backend on the same inputs, with median time, GFLOP/s,
 * LAPACK test ratios and speed-ups, as a table and as JSON. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "la_accuracy.h"
#include "la_random.h"
#include "linalg.h"
#include "report.h"

typedef struct {
    int m, n, batch;
} qr_size;

typedef struct {
    qr_size sz;
    stap_backend be;
    stap_qr_method qr;    /* the factor (--qr)   */
    int ok;               /* measured */
    char why[600];        /* when not measured */
    double median_us, gflops, residual, diag, weights_us;
} bench_row;

static const cli_command bench_qr_cmd = {
    "bench-qr",
    "Times the batched complex Householder QR of each backend on the same random\n"
    "inputs (rotated among 3 input sets; data resident where the backend computes),\n"
    "reporting the median, GFLOP/s (8mn^2 - 8n^3/3 per QR), LAPACK's test ratios\n"
    "(residual ||T^H T - R^H R|| / (||T||^2 m eps); diag: the error of |diag R|\n"
    "against LAPACKE_zgeqrf over its first-order bound m eps (||t_i|| + sum |x_ik| ||t_k||);\n"
    "pass < 30) and the speed-up of the gpu backend over the others.\n"
    "With --qr householder,cholqr2,cholqr the cpu and gpu backends are timed with each\n"
    "factor (rows 'cpu/cholqr2', 'gpu/cholqr', ..., guard included; GFLOP/s counts\n"
    "Householder's flops for every factor).\n"
    "With --model, also every gpu kernel variant that fits each size, forced one\n"
    "after the other: measured against the performance model's prediction, the\n"
    "model's choice (what the gpu backend runs) marked '*', the fastest '<'; with\n"
    "--weights, both ways to solve them: fused in the variant's kernel, and its QR\n"
    "alone followed by the weight kernel.\n",
    NULL};

/* One gpu kernel variant at one size (--model). */
typedef struct {
    qr_size sz;
    stap_la_gpu_variant info, info_w;   /* predictions: QR alone, QR + weights (fused; separate) */
    double qr_us, qrw_us, sep_us;  /* measured; < 0 when not. qrw_us: the fused kernel where
                                      the variant fuses, else = sep_us; sep_us: its QR alone,
                                      then the weight kernel */
    int choice, choice_w, choice_sep;
} model_row;

/* One measured time beside its prediction (pred <= 0: none); choice < 0: no marks column
 * (the variant's name carries them), else '*' for the choice and '<' for the fastest. */
static void model_cell(FILE *out, int choice, int fastest, double us, double pred)
{
    if (choice >= 0)
        fprintf(out, "  %c%c%12.2f", choice ? '*' : ' ', fastest ? '<' : ' ', us);
    else
        fprintf(out, " %12.2f", us);
    if (pred > 0)
        fprintf(out, " %12.2f %+7.1f%%", pred, 100 * (pred / us - 1));
    else
        fprintf(out, " %12s %8s", "-", "");
}

/* Time every variant that fits z and put it beside the model's prediction: QR alone, QR +
 * weights fused in its kernel, and its QR alone followed by the weight kernel. */
static int model_rows(qr_size z, const stap_cf32 *sets, int nsets, int repeat, int nbeams,
                      const stap_cf32 *V, model_row **rows, int *nrows, FILE *out, stap_error *err)
{
    stap_la_ctx *ctx = NULL;
    if (stap_la_ctx_create(&ctx, STAP_BACKEND_GPU, 0, err)) return -1;
    int choice = -1, choice_w = -1, sep = 0;
    stap_engine_tuning tune;
    if (cli_env_tuning(&tune, err) || stap_la_set_tuning(ctx, &tune.la, err) ||
        stap_la_gpu_variant_choice(z.m, z.n, z.batch, 0, &tune.la, &choice, NULL, err) ||
        (nbeams && stap_la_gpu_variant_choice(z.m, z.n, z.batch, nbeams, &tune.la, &choice_w, &sep, err))) {
        stap_la_ctx_destroy(ctx);
        return -1;
    }
    const int first = *nrows;
    for (int v = 0; v < stap_la_gpu_variant_count(); v++) {
        model_row r = {.sz = z, .qr_us = -1, .qrw_us = -1, .sep_us = -1};
        if (stap_la_gpu_variant_query(v, z.m, z.n, z.batch, 0, &r.info, err) ||
            (nbeams && stap_la_gpu_variant_query(v, z.m, z.n, z.batch, nbeams, &r.info_w, err)))
            break;
        if (!r.info.fits) continue;
        if (stap_la_gpu_force_variant(ctx, v, err) ||
            stap_la_bench_qr(ctx, z.m, z.n, z.batch, sets, nsets, repeat, 0, 0, NULL, &r.qr_us, NULL, err) ||
            (nbeams && stap_la_bench_qr(ctx, z.m, z.n, z.batch, sets, nsets, repeat, 1, nbeams, V,
                                        &r.qrw_us, NULL, err)))
            break;
        if (nbeams && !r.info_w.fused)
            r.sep_us = r.qrw_us;
        else if (nbeams && (stap_la_gpu_force_plan(ctx, v, 1, err) ||
                            stap_la_bench_qr(ctx, z.m, z.n, z.batch, sets, nsets, repeat, 1, nbeams, V,
                                             &r.sep_us, NULL, err)))
            break;
        r.choice = v == choice;
        r.choice_w = v == choice_w && !sep;
        r.choice_sep = v == choice_w && sep;
        model_row *g = realloc(*rows, sizeof **rows * (*nrows + 1));
        if (!g) break;
        *rows = g;
        (*rows)[(*nrows)++] = r;
    }
    stap_la_ctx_destroy(ctx);
    if (err->code) return -1;
    /* the fastest measured, for the '<' marks (QR + weights: fused or separate) */
    double best = 0, best_w = 0;
    for (int i = first; i < *nrows; i++) {
        const model_row *r = &(*rows)[i];
        if (!best || r->qr_us < best) best = r->qr_us;
        if (nbeams && r->info_w.fused && (!best_w || r->qrw_us < best_w)) best_w = r->qrw_us;
        if (nbeams && (!best_w || r->sep_us < best_w)) best_w = r->sep_us;
    }
    fprintf(out, "  %-16s %12s %12s %8s", "variant", "measured_us", "model_us", "error");
    if (nbeams)
        fprintf(out, "  %14s %12s %8s  %14s %12s %8s", "fused_qr+w_us", "model_us", "error",
                "qr,then_w_us", "model_us", "error");
    fputc('\n', out);
    for (int i = first; i < *nrows; i++) {
        const model_row *r = &(*rows)[i];
        fprintf(out, "  %c%c%-14s", r->choice ? '*' : ' ', r->qr_us == best ? '<' : ' ', r->info.name);
        model_cell(out, -1, 0, r->qr_us, r->info.predicted_us);
        if (nbeams) {
            if (r->info_w.fused)
                model_cell(out, r->choice_w, r->qrw_us == best_w, r->qrw_us, r->info_w.predicted_us);
            else
                fprintf(out, "  %14s %12s %8s", "- (not fused)", "", "");
            model_cell(out, r->choice_sep, r->sep_us == best_w, r->sep_us, r->info_w.separate_us);
        }
        fputc('\n', out);
    }
    return 0;
}

static int parse_sizes(const char *s, qr_size **out, int *count)
{
    int cap = 8, n = 0;
    qr_size *v = malloc(sizeof *v * cap);
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        qr_size z;
        char extra;
        if (sscanf(tok, "%dx%dx%d%c", &z.m, &z.n, &z.batch, &extra) != 3 || z.n < 1 ||
            z.m < z.n || z.batch < 1 || (double)z.m * z.n * z.batch > 2e9) {
            cli_error(EXIT_USAGE, "--sizes: '%s' is not MxNxBATCH with M >= N >= 1, BATCH >= 1", tok);
            free(copy);
            free(v);
            return -1;
        }
        if (n == cap) v = realloc(v, sizeof *v * (cap *= 2));
        v[n++] = z;
    }
    free(copy);
    if (!n) {
        free(v);
        cli_error(EXIT_USAGE, "--sizes is empty");
        return -1;
    }
    *out = v;
    *count = n;
    return 0;
}

static int parse_backends(const char *s, stap_backend *out, int *count)
{
    char *copy = strdup(s), *save = NULL;
    int n = 0;
    stap_error err;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        stap_backend b;
        if (stap_backend_parse(tok, &b, &err) || b == STAP_BACKEND_AUTO || n == STAP_BACKEND_COUNT) {
            cli_error(EXIT_USAGE, "--backends: '%s' is not one of cpu, lapack, gpu, cublas", tok);
            free(copy);
            return -1;
        }
        out[n++] = b;
    }
    free(copy);
    *count = n;
    return n ? 0 : (cli_error(EXIT_USAGE, "--backends is empty"), -1);
}

/* --qr: a comma-separated list of factors (householder, cholqr2, cholqr; auto as the cpu
 * backend resolves it per size) */
static int parse_qrs(const char *s, stap_qr_method *out, int *count)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        stap_error err;
        if (stap_qr_method_parse(tok, &out[n], &err) || n == STAP_QR_COUNT) {
            cli_error(EXIT_USAGE, "--qr: '%s' is not one of householder, cholqr2, cholqr, auto", tok);
            return -1;
        }
        n++;
    }
    *count = n;
    return n ? 0 : (cli_error(EXIT_USAGE, "--qr is empty"), -1);
}

static double qr_flops(qr_size z)
{
    return z.batch * (8.0 * z.m * z.n * z.n - 8.0 * z.n * z.n * z.n / 3.0);
}

/* a result object with its size's m, n, batch */
static cJSON *json_sized(qr_size z)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "m", z.m);
    cJSON_AddNumberToObject(o, "n", z.n);
    cJSON_AddNumberToObject(o, "batch", z.batch);
    return o;
}

static int write_json(const char *path, const bench_row *rows, int nrows, const model_row *mrows,
                      int nmrows, int repeat, unsigned long long seed, int threads,
                      stap_write_mode mode, stap_error *err)
{
    cJSON *doc = stream_json_report("bench-qr");
    cJSON_AddNumberToObject(doc, "repeat", repeat);
    cJSON_AddNumberToObject(doc, "seed", (double)seed);
    stream_json_platform(doc, threads);
    cJSON *res = cJSON_AddArrayToObject(doc, "results");
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        cJSON *o = json_sized(r->sz);
        cJSON_AddStringToObject(o, "backend", stap_backend_name(r->be));
        cJSON_AddStringToObject(o, "qr", stap_qr_method_name(r->qr));
        if (r->ok) {
            cJSON_AddNumberToObject(o, "median_us", r->median_us);
            cJSON_AddNumberToObject(o, "gflops", r->gflops);
            cJSON *a = cJSON_AddObjectToObject(o, "accuracy");
            cJSON_AddNumberToObject(a, "residual", r->residual);
            cJSON_AddNumberToObject(a, "diag", r->diag);
            cJSON_AddNumberToObject(a, "threshold", 30);
            cJSON_AddBoolToObject(a, "pass", r->residual < 30 && r->diag < 30);
            if (r->weights_us > 0) cJSON_AddNumberToObject(o, "qr_weights_us", r->weights_us);
        } else {
            cJSON_AddNullToObject(o, "median_us");
            cJSON_AddStringToObject(o, "skipped", r->why);
        }
        cJSON_AddItemToArray(res, o);
    }
    if (nmrows) {
        cJSON *mo = cJSON_AddArrayToObject(doc, "model");
        for (int i = 0; i < nmrows; i++) {
            const model_row *r = &mrows[i];
            cJSON *o = json_sized(r->sz);
            cJSON_AddStringToObject(o, "variant", r->info.name);
            cJSON_AddNumberToObject(o, "median_us", r->qr_us);
            if (r->info.predicted_us > 0) cJSON_AddNumberToObject(o, "predicted_us", r->info.predicted_us);
            cJSON_AddBoolToObject(o, "choice", r->choice);
            if (r->qrw_us > 0 && r->info_w.fused) {
                cJSON_AddNumberToObject(o, "qr_weights_us", r->qrw_us);
                if (r->info_w.predicted_us > 0)
                    cJSON_AddNumberToObject(o, "predicted_weights_us", r->info_w.predicted_us);
                cJSON_AddBoolToObject(o, "choice_weights", r->choice_w);
            }
            if (r->sep_us > 0) { /* the QR alone, then the weight kernel */
                cJSON_AddNumberToObject(o, "qr_then_weights_us", r->sep_us);
                if (r->info_w.separate_us > 0)
                    cJSON_AddNumberToObject(o, "predicted_then_weights_us", r->info_w.separate_us);
                cJSON_AddBoolToObject(o, "choice_then_weights", r->choice_sep);
            }
            cJSON_AddItemToArray(mo, o);
        }
    }
    int st = cli_json_write(path, doc, mode, err);
    cJSON_Delete(doc);
    return st;
}

/* the rows of one size, with the gpu backend's speed-up over each */
static void print_size_rows(FILE *out, qr_size z, const bench_row *rows, int n, int nbeams)
{
    double gpu_us = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].be == STAP_BACKEND_GPU && rows[i].ok) gpu_us = rows[i].median_us;
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        char name[32];
        snprintf(name, sizeof name, "%s%s%s", stap_backend_name(r->be), r->qr ? "/" : "",
                 r->qr ? stap_qr_method_name(r->qr) : "");
        fprintf(out, "%6d %4d %6d  %-11s ", z.m, z.n, z.batch, name);
        if (!r->ok) {
            fprintf(out, "not measured: %s\n", r->why);
            continue;
        }
        fprintf(out, "%12.2f %10.2f %9.3f %7.3f", r->median_us, r->gflops, r->residual, r->diag);
        if (nbeams) fprintf(out, " %14.2f", r->weights_us);
        if (gpu_us > 0 && r->be != STAP_BACKEND_GPU) fprintf(out, "  %.1fx", r->median_us / gpu_us);
        if (r->residual >= 30 || r->diag >= 30) fprintf(out, "  ACCURACY FAIL");
        fputc('\n', out);
    }
}

int cmd_bench_qr(int argc, char **argv)
{
    const char *sizes_s = "80x16x384,240x66x128,192x96x128,240x66x1280";
    const char *backends_s = "cpu,lapack,gpu,cublas", *qrs_s = "householder";
    const char *json = NULL;
    int repeat = 20, nbeams = 0, threads = 0, force = 0, device_n = -1, model = 0;
    unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    cli_opt opts[] = {
        {"sizes", 0, CLI_STRING, &sizes_s, "LIST",
         "MxNxBATCH,... (default 80x16x384,240x66x128,192x96x128,\n"
         "240x66x1280)"},
        {"backends", 0, CLI_STRING, &backends_s, "LIST",
         "default cpu,lapack,gpu,cublas (unavailable ones are reported)"},
        {"qr", 0, CLI_STRING, &qrs_s, "LIST",
         "factors of the cpu and gpu backends to time: householder,\n"
         "cholqr2, cholqr, auto (default householder; other backends:\n"
         "householder)"},
        {"repeat", 0, CLI_INT, &repeat, "N", "timed runs per size and backend (default 20)",
         .lo = 1, .hi = 100000},
        {"weights", 0, CLI_INT, &nbeams, "B",
         "also time QR + weights for B beams (two triangular solves)", .lo = 1, .hi = 1024},
        {"model", 0, CLI_FLAG, &model, NULL,
         "also time every gpu kernel variant that fits, beside the\n"
         "performance model's prediction (needs the gpu backend)"},
        CLI_OPT_JSON(&json),
        CLI_OPT_FORCE(&force),
        {"seed", 0, CLI_U64, &seed, "S", "seed of the random inputs (default: from the clock,\n"
         "printed)"},
        CLI_OPT_DEVICE(&device_n),
        {"threads", 0, CLI_INT, &threads, "T",
         "CPU threads of the cpu and lapack backends, >= 1 (default:\n"
         "all)", .lo = 1, .hi = 4096},
        {0}};
    int pst = cli_parse(&bench_qr_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if ((pst = cli_select_device(device_n)) || (pst = cli_output_ok(json, force))) return pst;
    FILE *out = json && !strcmp(json, "-") ? stderr : stdout; /* stdout: the JSON only */
    qr_size *sizes;
    int nsizes, nback;
    stap_backend backends[STAP_BACKEND_COUNT];
    stap_qr_method qrs[STAP_QR_COUNT];
    int nqr;
    if (parse_sizes(sizes_s, &sizes, &nsizes)) return EXIT_USAGE;
    if (parse_backends(backends_s, backends, &nback) || parse_qrs(qrs_s, qrs, &nqr)) {
        free(sizes);
        return EXIT_USAGE;
    }
    stap_error err;

    bench_row *rows = calloc((size_t)nsizes * nback * nqr, sizeof *rows);
    model_row *mrows = NULL;
    int nrows = 0, nmrows = 0, status = EXIT_OK;
    const int nsets = 3;
    fprintf(stderr, "bench-qr: seed %llu, %d timed runs per row, %d input sets\n", seed, repeat, nsets);
    fprintf(stderr, "bench-qr: ");
    stream_print_platform(stderr, threads);
    fprintf(out, "%6s %4s %6s  %-11s %12s %10s %9s %7s", "m", "n", "batch", "backend", "median_us",
           "GFLOP/s", "residual", "diag");
    if (nbeams) fprintf(out, " %14s", "qr+weights_us");
    fprintf(out, "  speed-up of gpu\n");
    for (int si = 0; si < nsizes && status == EXIT_OK; si++) {
        qr_size z = sizes[si];
        size_t one = (size_t)z.m * z.n * z.batch;
        stap_cf32 *sets = malloc(sizeof(stap_cf32) * one * nsets);
        stap_cf32 *R = malloc(sizeof(stap_cf32) * one);
        stap_cf32 *V = nbeams ? malloc(sizeof(stap_cf32) * (size_t)nbeams * z.n) : NULL;
        if (!sets || !R || (nbeams && !V)) {
            status = cli_error(EXIT_PROCESSING, "out of memory for %dx%dx%d", z.m, z.n, z.batch);
            free(sets); free(R); free(V);
            break;
        }
        stap_la_random_batch(seed + si, z.m, z.n, z.batch * nsets, sets);
        if (V) stap_la_random_batch(seed + 1000 + si, nbeams, z.n, 1, V);
        int first_row = nrows;
        for (int bq = 0; bq < nback * nqr; bq++) {
            const int bi = bq / nqr;
            if (qrs[bq % nqr] != STAP_QR_HOUSEHOLDER && backends[bi] != STAP_BACKEND_CPU &&
                backends[bi] != STAP_BACKEND_GPU)
                continue;
            bench_row *r = &rows[nrows++];
            r->sz = z;
            r->be = backends[bi];
            r->qr = qrs[bq % nqr];
            stap_la_ctx *ctx = NULL;
            stap_engine_tuning tune;
            if (stap_la_ctx_create(&ctx, r->be, threads, &err) || stap_la_set_qr(ctx, r->qr, &err) ||
                cli_env_tuning(&tune, &err) || stap_la_set_tuning(ctx, &tune.la, &err)) {
                snprintf(r->why, sizeof r->why, "%s", err.msg);
                stap_la_ctx_destroy(ctx);
                continue;
            }
            if (stap_la_bench_qr(ctx, z.m, z.n, z.batch, sets, nsets, repeat, 0, 0, NULL,
                                 &r->median_us, R, &err)) {
                snprintf(r->why, sizeof r->why, "%s", err.msg);
                stap_la_ctx_destroy(ctx);
                continue;
            }
            if (nbeams && stap_la_bench_qr(ctx, z.m, z.n, z.batch, sets, nsets, repeat, 1, nbeams,
                                           V, &r->weights_us, NULL, &err)) {
                snprintf(r->why, sizeof r->why, "weights: %s", err.msg);
                stap_la_ctx_destroy(ctx);
                continue;
            }
            stap_la_ctx_destroy(ctx);
            la_qr_accuracy acc;
            if (stap_la_qr_check(z.m, z.n, z.batch, sets, R, 1, &acc, &err)) {
                snprintf(r->why, sizeof r->why, "accuracy check: %s", err.msg);
                continue;
            }
            r->ok = 1;
            r->residual = acc.residual;
            r->diag = acc.diag;
            r->gflops = qr_flops(z) / (r->median_us * 1e3);
        }
        print_size_rows(out, z, rows + first_row, nrows - first_row, nbeams);
        if (model && status == EXIT_OK) {
            err.code = 0;
            if (model_rows(z, sets, nsets, repeat, nbeams, V, &mrows, &nmrows, out, &err))
                status = cli_fail(&err);
        }
        fflush(out);
        free(sets);
        free(R);
        free(V);
    }
    int inaccurate = 0;
    for (int i = 0; i < nrows; i++)
        if (rows[i].ok && (rows[i].residual >= 30 || rows[i].diag >= 30)) inaccurate = 1;
    if (inaccurate) status = cli_error(EXIT_PROCESSING, "accuracy ratio over the threshold 30");
    if (json && write_json(json, rows, nrows, mrows, nmrows, repeat, seed, threads, cli_write_mode(force), &err))
        status = cli_fail(&err);
    free(rows);
    free(mrows);
    free(sizes);
    return status;
}
