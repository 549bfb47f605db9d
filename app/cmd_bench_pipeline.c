/* cmd_bench_pipeline.c: `rtstap bench` — the whole CPI on every backend and workload in
 * one run: per-stage medians with one CPI in flight (CUDA events on the GPU, wall clock
 * on the CPU), the host-to-host time of one CPI, and end-to-end CPIs/s with several CPIs
 * in flight, as a table and as JSON. The same distinct cubes go through every backend. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "progress.h"
#include "report.h"
#include "workload.h"

static const cli_command bench_cmd = {
    "bench",
    "For each workload and backend: per-stage median times (copy in, Doppler, training,\n"
    "QR, weights, apply, CFAR, copy out) with one CPI in flight, the host-to-host time of\n"
    "one CPI, and CPIs/s end to end with S CPIs in flight (GPU backends; the CPU engines\n"
    "compute at submit, so their rate is one CPI at a time). Weights and detections come\n"
    "back per CPI; CA-CFAR at Pfa 1e-6. The host-to-host time of one CPI is measured\n"
    "again with the cubes stored as int16 (i, q) scaled to their peak, as digitizers\n"
    "deliver them (column 1 CPI i16). The gpu backend is measured twice: with the\n"
    "apply kernel and (row gpu-gemm) with the apply stage as cuBLAS batched GEMMs.\n"
    "GPU backends also run with the cubes resident in device memory (no copy-in: the\n"
    "rate of device compute alone, column resident).\n"
    "With --devices, each GPU backend's rate is also measured with an engine on every\n"
    "listed GPU at once (a thread each, the same ring, an equal share of N x --cpis).\n",
    NULL};

typedef struct bench_case {
    char workload[64];
    stap_backend be;
    int gemm;           /* gpu with the apply stage as cuBLAS GEMMs */
    int ok;
    char why[512];
    char engine[256];
    stap_stream_stats one;   /* one CPI in flight, direct launches: stage times */
    stap_stream_stats one16; /* the same with int16 cubes: host to host as digitizers deliver */
    stap_stream_stats many;  /* S CPIs in flight, graphs: rate                  */
    stap_stream_stats resident; /* the same with the ring in device memory: compute alone (GPU) */
    double devices_rate; /* --devices: CPIs/s with every device at once (0: not measured) */
    stap_stream_stats dev[STAP_STREAM_MAX_DEVICES]; /* each device's, its number and name */
    int dev_id[STAP_STREAM_MAX_DEVICES];
    char dev_name[STAP_STREAM_MAX_DEVICES][128];
} bench_case;

/* Through a stream of its own engines (one per device, or one: devices NULL), `n` timed CPIs
 * after 2 x slots warm-up ones each, replaying cubes[0..ncubes) (complex64, stored as eo's
 * input takes them, and pinned by the stream); rep filled, desc the first engine's. */
static int measure_stream(const workload *w, const stap_config *cfg, const stap_engine_options *eo,
                          stap_cf32 *const *cubes, int ncubes, long long n, const int *devices,
                          int ndev, stap_stream_report *rep, char *desc, size_t desc_len,
                          stap_error *err)
{
    const size_t len = workload_cube_len(w), bytes = len * stap_sample_bytes(&eo->input);
    char *host = malloc(bytes * (size_t)ncubes);
    void **ring = calloc((size_t)ncubes, sizeof *ring);
    int status = host && ring ? STAP_OK : stap_fail(err, STAP_ENOMEM, "out of memory");
    for (int k = 0; k < ncubes && !status; k++) {
        ring[k] = host + bytes * (size_t)k;
        stap_samples_from_cf32(&eo->input, cubes[k], len, ring[k]);
    }
    const stap_stream_source src = {.kind = STAP_STREAM_RING, .cpis = n, .ring = (const void *const *)ring,
                                    .ring_count = ncubes, .resident = eo->resident};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.warmup = 2LL * eo->slots;
    stap_stream *s = NULL;
    if (!status)
        status = stap_stream_create(&s, cfg, w->steering, w->nbeams, w->steering ? stap_dof(cfg) : 0,
                                    eo, devices, ndev, &src, NULL, &so, err);
    if (!status) {
        status = stap_stream_run(s, rep, err);
        if (desc) snprintf(desc, desc_len, "%s", stap_engine_describe(stap_stream_engine(s, 0)));
    }
    stap_stream_destroy(s);
    free(ring);
    free(host);
    return status;
}

/* --devices: the case's engines on every device at once, S CPIs in flight each */
static int measure_devices(const workload *w, bench_case *c, int threads, int slots,
                           stap_cf32 *const *cubes, int ncubes, long long cpis, const int *devices,
                           int n, stap_error *err)
{
    stap_config cfg = w->cfg;
    cfg.backend = c->be;
    cfg.threads = threads;
    stap_engine_options eo;
    int est = cli_env_engine_defaults(&eo, err);
    if (est) return est;
    eo.slots = slots;
    eo.apply_gemm = c->gemm;
    stap_stream_report rep;
    const int st = measure_stream(w, &cfg, &eo, cubes, ncubes, cpis * n, devices, n, &rep, NULL, 0, err);
    long long total = 0;
    for (int k = 0; !st && k < n; k++) {
        total += rep.device[k].cpis;
        c->dev[k] = rep.device[k];
        c->dev_id[k] = devices[k];
        c->dev_name[k][0] = '\0';
        stap_error ignore;
        if (devices[k] >= 0 && !stap_la_gpu_select(devices[k], &ignore))
            stap_gpu_info(c->dev_name[k], sizeof c->dev_name[k], NULL, NULL, &ignore);
    }
    stap_error ignore;
    if (n > 0 && devices[0] >= 0) stap_la_gpu_select(devices[0], &ignore);
    c->devices_rate = !st && rep.wall_s > 0 ? total / rep.wall_s : 0;
    return st;
}

/* One engine, `n` CPIs from the ring (copied to the engine's pinned memory). */
static int measure(const workload *w, stap_backend be, int gemm, int threads, int slots, int graphs,
                   int resident, const stap_sample_format *input, stap_cf32 *const *cubes,
                   int ncubes, long long n, stap_stream_stats *st, char *desc, size_t desc_len,
                   stap_error *err)
{
    stap_config cfg = w->cfg;
    cfg.backend = be;
    cfg.threads = threads;
    stap_engine_options eo;
    int est = cli_env_engine_defaults(&eo, err);
    if (est) return est;
    eo.slots = slots;
    eo.graphs = graphs;
    eo.apply_gemm = gemm;
    eo.resident = resident;
    if (input) eo.input = *input; /* NULL: complex64 */
    stap_stream_report rep;
    const int status = measure_stream(w, &cfg, &eo, cubes, ncubes, n, NULL, 0, &rep, desc, desc_len, err);
    *st = rep.all;
    return status;
}

/* what every case of a run measures with */
typedef struct bench_run {
    int threads, slots, cpis, cpu_cpis, ndev;
    const int *devices;
} bench_run;

/* one case (a workload on a backend): one CPI in flight, complex64 then int16 cubes; for the
 * GPU, the rate with the slots in flight, the resident rate and the devices' rate */
static void measure_case(const workload *w, bench_case *c, const bench_run *r,
                         const stap_sample_format *i16, stap_cf32 *const *cubes, int ncubes,
                         const stap_cf32 *ring)
{
    const int gpu = c->be == STAP_BACKEND_GPU || c->be == STAP_BACKEND_CUBLAS;
    stap_error e2;
    int st = measure(w, c->be, c->gemm, r->threads, 1, 0, 0, NULL, cubes, ncubes,
                     gpu ? r->cpis : r->cpu_cpis, &c->one, c->engine, sizeof c->engine, &e2);
    if (!st) /* one CPI host to host with int16 cubes */
        st = measure(w, c->be, c->gemm, r->threads, 1, 0, 0, i16, cubes, ncubes,
                     gpu ? r->cpis : r->cpu_cpis, &c->one16, NULL, 0, &e2);
    if (!st && gpu)
        st = measure(w, c->be, c->gemm, r->threads, r->slots, 1, 0, NULL, cubes, ncubes, r->cpis,
                     &c->many, c->engine, sizeof c->engine, &e2);
    if (!st && gpu) /* the rate of device compute alone: no copy-in */
        st = measure(w, c->be, c->gemm, r->threads, r->slots, 1, 1, NULL, cubes, ncubes, r->cpis,
                     &c->resident, NULL, 0, &e2);
    else if (!st)
        c->many = c->one;
    if (!st && gpu && r->ndev > 0)
        st = measure_devices(w, c, r->threads, r->slots, cubes, ncubes, r->cpis, r->devices, r->ndev, &e2);
    if (st) snprintf(c->why, sizeof c->why, "%s", e2.msg);
    else c->ok = 1;
}

static int split_list(const char *s, char items[][32], int max)
{
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        snprintf(items[n++], 32, "%s", t);
    free(copy);
    return n;
}

static void json_stage_row(cJSON *o, const char *key, const stap_stream_stats *st)
{
    cJSON *r = cJSON_AddObjectToObject(o, key);
    stream_json_stats(r, st);
}

/* the table: a row a case, the stage medians, the latencies and the rates (its heading only
 * without cases) */
static void print_table(FILE *out, const workload *ws, int nw, char rname[][32], const bench_case *cases,
                        int nb, int ndev)
{
    fprintf(out, "%-15s %-8s", "workload", "backend");
    for (int s = 0; s < STAP_STAGE_COUNT; s++) fprintf(out, " %8s", stap_stage_names[s]);
    fprintf(out, " %9s %10s %10s %8s %9s %10s", "1 CPI ms", "1 CPI i16", "CPIs/s", "p99 ms", "gpu x",
            "resident");
    if (ndev > 0) fprintf(out, " %8s %13s", "GPUs", "CPIs/s (x 1)");
    fputc('\n', out);
    for (int i = 0; i < nw && cases; i++) {
        const bench_case *g = NULL;
        for (int b = 0; b < nb; b++)
            if (cases[i * nb + b].be == STAP_BACKEND_GPU && !cases[i * nb + b].gemm && cases[i * nb + b].ok)
                g = &cases[i * nb + b];
        for (int b = 0; b < nb; b++) {
            const bench_case *c = &cases[i * nb + b];
            fprintf(out, "%-15s %-8s", ws[i].name, rname[b]);
            if (!c->ok) {
                fprintf(out, " not measured: %s\n", c->why);
                continue;
            }
            for (int s = 0; s < STAP_STAGE_COUNT; s++) fprintf(out, " %8.3f", c->one.stage_median[s]);
            fprintf(out, " %9.3f %10.3f %10.1f %8.3f", c->one.lat_p50, c->one16.lat_p50, c->many.cpis_per_s,
                    c->many.lat_p99);
            if (g) fprintf(out, " %9.1f", g->many.cpis_per_s / c->many.cpis_per_s);
            else fprintf(out, " %9s", "");
            if (c->resident.cpis_per_s > 0) fprintf(out, " %10.1f", c->resident.cpis_per_s);
            else if (ndev > 0) fprintf(out, " %10s", "-");
            if (c->devices_rate > 0)
                fprintf(out, " %8d %8.1f (%.2f)", ndev, c->devices_rate, c->devices_rate / c->many.cpis_per_s);
            fputc('\n', out);
        }
    }
}

/* --json: the report (stap_error set and non-zero when it cannot be written) */
static int write_json(const char *json, int force, const char *device, int slots, int threads,
                      const bench_case *cases, int ncases, int ndev, stap_error *err)
{
    cJSON *doc = stream_json_report("bench");
    cJSON_AddStringToObject(doc, "device", device);
    cJSON_AddNumberToObject(doc, "slots", slots);
    stream_json_platform(doc, threads);
    cJSON *rows = cJSON_AddArrayToObject(doc, "results");
    for (int k = 0; k < ncases; k++) {
        const bench_case *c = &cases[k];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "workload", c->workload);
        cJSON_AddStringToObject(r, "backend", stap_backend_name(c->be));
        cJSON_AddStringToObject(r, "apply", c->gemm ? "cublasCgemmBatched" : "engine");
        cJSON_AddBoolToObject(r, "measured", c->ok);
        if (!c->ok) cJSON_AddStringToObject(r, "why", c->why);
        else {
            cJSON_AddStringToObject(r, "engine", c->engine);
            json_stage_row(r, "one_in_flight", &c->one);
            json_stage_row(r, "one_in_flight_int16", &c->one16);
            json_stage_row(r, "in_flight", &c->many);
            if (c->resident.cpis_per_s > 0) json_stage_row(r, "resident", &c->resident);
            if (c->devices_rate > 0) { /* --devices */
                cJSON *d = cJSON_AddObjectToObject(r, "devices_in_flight");
                cJSON_AddNumberToObject(d, "cpis_per_s", c->devices_rate);
                cJSON *arr = cJSON_AddArrayToObject(d, "devices");
                for (int k = 0; k < ndev; k++) {
                    cJSON *o = cJSON_CreateObject();
                    cJSON_AddNumberToObject(o, "device", c->dev_id[k]);
                    cJSON_AddStringToObject(o, "name", c->dev_name[k]);
                    stream_json_stats(o, &c->dev[k]);
                    cJSON_AddItemToArray(arr, o);
                }
            }
        }
        cJSON_AddItemToArray(rows, r);
    }
    const int st = cli_json_write(json, doc, cli_write_mode(force), err);
    cJSON_Delete(doc);
    return st;
}

int cmd_bench_pipeline(int argc, char **argv)
{
    const char *wl = "easy,medium,hard,perfect-small,perfect-medium,perfect-large";
    const char *bl = "gpu,cublas,cpu,lapack", *json = NULL;
    int cpis = 500, cpu_cpis = 8, slots = 3, threads = 0, force = 0, device_n = -1;
    int progress_mode = PROGRESS_AUTO;
    const char *devices_s = NULL;
    int devices[STAP_STREAM_MAX_DEVICES], ndev = 0;
    stap_error err;
    stap_error_clear(&err);
    cli_opt opts[] = {
        {"workloads", 0, CLI_STRING, &wl, "LIST",
         "default easy,medium,hard,perfect-small,perfect-medium,\n"
         "perfect-large"},
        {"backends", 0, CLI_STRING, &bl, "LIST",
         "default gpu,cublas,cpu,lapack (unavailable ones are reported)"},
        {"cpis", 0, CLI_INT, &cpis, "N", "CPIs per GPU measurement (default 500)", .lo = 1,
         .hi = 10000000},
        {"cpu-cpis", 0, CLI_INT, &cpu_cpis, "N", "CPIs per CPU measurement (default 8)", .lo = 1,
         .hi = 100000},
        {"slots", 0, CLI_INT, &slots, "S", "CPIs in flight for the GPU rate (default 3)", .lo = 1,
         .hi = STAP_ENGINE_MAX_SLOTS},
        CLI_OPT_DEVICE(&device_n),
        {"devices", 0, CLI_STRING, &devices_s, "LIST|all",
         "GPU backends: also the rate with an engine on each listed\n"
         "GPU at once (e.g. 0,1 or all; not with --device)"},
        CLI_OPT_THREADS(&threads),
        CLI_OPT_JSON(&json),
        CLI_OPT_FORCE(&force),
        CLI_OPT_PROGRESS(&progress_mode),
        {0}};
    int pst = cli_parse(&bench_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (devices_s && device_n >= 0) return cli_error(EXIT_USAGE, "--devices: not with --device");
    if (devices_s && (pst = cli_devices(devices_s, STAP_BACKEND_AUTO, devices, STAP_STREAM_MAX_DEVICES, &ndev)))
        return pst;
    if (ndev > 0 && devices[0] < 0) ndev = 0; /* (RTSTAP_TEST_DEVICES_CPU: no GPU to spread over) */
    if ((pst = cli_select_device(device_n)) || (pst = cli_output_ok(json, force))) return pst;
    FILE *out = json && !strcmp(json, "-") ? stderr : stdout; /* stdout: the JSON only */
    char wnames[16][32], bnames[8][32];
    const int nw = split_list(wl, wnames, 16);
    int nb = split_list(bl, bnames, 8);
    stap_backend bes[8];
    for (int b = 0; b < nb; b++)
        if (stap_backend_parse(bnames[b], &bes[b], &err) || bes[b] == STAP_BACKEND_AUTO)
            return cli_error(EXIT_USAGE, "--backends: '%s' is not cpu, lapack, gpu or cublas", bnames[b]);
    workload ws[16];
    for (int i = 0; i < nw; i++)
        if (workload_get(wnames[i], &ws[i], &err)) {
            for (int k = 0; k < i; k++) workload_free(&ws[k]);
            return cli_error(EXIT_USAGE, "--workloads: %s", err.msg);
        }

    /* the gpu backend twice: the apply kernel, and the apply stage as cuBLAS batched GEMMs */
    stap_backend rb[9];
    int rg[9], nr = 0;
    char rname[9][32];
    for (int b = 0; b < nb; b++) {
        rb[nr] = bes[b];
        rg[nr] = 0;
        snprintf(rname[nr++], 32, "%.31s", bnames[b]);
        if (bes[b] == STAP_BACKEND_GPU) {
            rb[nr] = bes[b];
            rg[nr] = 1;
            snprintf(rname[nr++], 32, "gpu-gemm");
        }
    }
    nb = nr;
    bench_case *cases = calloc((size_t)nw * nb, sizeof *cases);
    char device[256] = "none";
    stap_gpu_info(device, sizeof device, NULL, NULL, &err);
    int status = EXIT_OK;
    enum { NCUBES = 4 };
    const bench_run run = {threads, slots, cpis, cpu_cpis, ndev, devices};
    progress pg; /* over the cases; without it (stderr not a terminal), a line a case */
    progress_begin(&pg, progress_mode, 0, "bench", "cases", (long long)nw * nb);
    for (int i = 0; i < nw && cases; i++) {
        const size_t len = workload_cube_len(&ws[i]);
        stap_cf32 *cubes[NCUBES] = {0}, *ring = malloc(sizeof(stap_cf32) * len * NCUBES);
        int ok = ring != NULL;
        if (!ok) stap_fail(&err, STAP_ENOMEM, "out of memory for %s's cubes", ws[i].name);
        for (int k = 0; k < NCUBES && ok; k++) {
            cubes[k] = ring + (size_t)k * len;
            ok = workload_cube(&ws[i], k, cubes[k], &err) == STAP_OK;
        }
        /* int16 (i, q), the cubes' peak at 32767 */
        const stap_sample_format i16 = {
            .type = STAP_SAMPLES_CI16,
            .scale = ok ? stream_peak_scale(STAP_SAMPLES_CI16, ring, len * NCUBES) : 1.0};
        for (int b = 0; b < nb && ok; b++) {
            bench_case *c = &cases[i * nb + b];
            snprintf(c->workload, sizeof c->workload, "%.31s", ws[i].name);
            c->be = rb[b];
            c->gemm = rg[b];
            stap_error e2;
            if (stap_backend_available(rb[b], &e2)) {
                snprintf(c->why, sizeof c->why, "%s", e2.msg);
                continue;
            }
            progress_update(&pg, (long long)i * nb + b);
            if (pg.mode == PROGRESS_NONE) fprintf(stderr, "bench: %s on %s ...\n", ws[i].name, rname[b]);
            measure_case(&ws[i], c, &run, &i16, cubes, NCUBES, ring);
        }
        if (!ok) status = cli_fail(&err);
        free(ring);
    }
    pg.done = (long long)nw * nb;
    progress_end(&pg);
    if (!cases) status = cli_error(EXIT_PROCESSING, "out of memory");

    fprintf(out, "rtstap bench: device %s, commit %s; stage medians with one CPI in flight (ms),\n"
           "one CPI host to host (p50 ms; complex64, then int16 cubes), rate with %d CPIs in\n"
           "flight (GPU)\n\n", device,
           RTSTAP_COMMIT, slots);
    stream_print_platform(out, threads);
    print_table(out, ws, nw, rname, cases, nb, ndev);
    if (json && cases && write_json(json, force, device, slots, threads, cases, nw * nb, ndev, &err))
        status = cli_fail(&err);
    free(cases);
    for (int i = 0; i < nw; i++) workload_free(&ws[i]);
    return status;
}
