/* cmd_perfect.c: `rtstap perfect` (run the PERFECT suite's STAP application on its raw
 * files, optionally scoring against a gold output) and `rtstap import-perfect` (the same
 * inputs as a schema-v1.1 HDF5 file). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cli_files.h"
#include "cli_opts.h"
#include "progress.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "perfect_io.h"
#include "report.h" /* the JSON report helpers */

/* --size and --input-dir: the suite's input files, of perfect and import-perfect */
#define PERFECT_INPUT_OPTIONS(size_s, dir)                                                  \
    {"size", 0, CLI_STRING, (size_s), "SIZE", "small | medium | large",                    \
     .flags = CLI_REQUIRED},                                                                \
    {"input-dir", 0, CLI_STRING, (dir), "DIR",                                              \
     "where <size>_app_input.bin and <size>_app_steering_vectors.bin are",                  \
     .flags = CLI_REQUIRED}

static const cli_command perfect_cmd = {
    "perfect",
    "Runs the PERFECT suite's STAP application (third-order Doppler-factored STAP:\n"
    "P = 128 pulses, D = 256 Doppler bins, Q = 3, 16 steering vectors, training blocks of\n"
    "N_R cells) on DIR/<size>_app_input.bin and DIR/<size>_app_steering_vectors.bin and\n"
    "writes FILE in the suite's layout ([steering vector][Doppler bin][range cell],\n"
    "interleaved float32). With --gold, prints the suite's SNR against that file and\n"
    "exits 1 when it is under --min-snr (default 80 dB, the suite's criterion).\n",
    NULL};

static const cli_command import_perfect_cmd = {
    "import-perfect",
    "Writes the PERFECT STAP inputs as a schema-v1.1 file (with /steering); `rtstap run`\n"
    "on it with the flags this command prints gives the output of `rtstap perfect`.\n"
    "--cpis N writes a recording of N CPIs (the suite ships one CPI: it is repeated),\n"
    "to time the whole chain from disk with `rtstap run` or `rtstap stream --input`.\n",
    NULL};

/* The two files of --input-dir are inputs: no output may be one of them (cli_files.h). */
static int perfect_files(perfect_size size, const char *dir)
{
    static char paths[2][4096];
    int st = EXIT_OK;
    for (int k = 0; k < 2 && !st; k++)
        st = cli_files_input("--input-dir", stap_perfect_input_path(size, dir, k, paths[k], sizeof paths[k]));
    return st;
}

int cmd_perfect(int argc, char **argv)
{
    const char *size_s = NULL, *dir = NULL, *output = NULL, *gold = NULL, *json = NULL;
    double min_snr = 80;
    int threads = 0, quiet = 0, force = 0, device = -1;
    stap_backend backend = STAP_BACKEND_AUTO;
    stap_error err;
    stap_error_clear(&err);
    cli_opt opts[] = {
        PERFECT_INPUT_OPTIONS(&size_s, &dir),
        {"output", 'o', CLI_STRING, &output, "FILE",
         "the output in the suite's raw layout (written atomically; an\n"
         "existing file is refused without -f)", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        {"gold", 0, CLI_STRING, &gold, "FILE", "the suite's output to compare with (SNR)", .flags = CLI_INPUT},
        {"min-snr", 0, CLI_DOUBLE, &min_snr, "DB",
         "the SNR against --gold under which perfect fails (default 80)", .lo = -1e3,
         .hi = 1e3},
        CLI_OPT_BACKEND(&backend),
        CLI_OPT_DEVICE(&device),
        CLI_OPT_THREADS(&threads),
        CLI_OPT_JSON(&json),
        {"quiet", 0, CLI_FLAG, &quiet, NULL, "no timing table"},
        {0}};
    int pst = cli_parse(&perfect_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    perfect_size size;
    if (stap_perfect_size_parse(size_s, &size, &err)) return cli_error(EXIT_USAGE, "--size: %s", err.msg);
    if ((pst = perfect_files(size, dir))) return pst;
    if ((pst = cli_select_device(device))) return pst;
    const stap_write_mode mode = cli_write_mode(force);
    if ((pst = cli_output_ok(json, force))) return pst;
    if (stap_output_check_mode(output, mode, &err)) return cli_fail(&err);
    FILE *out = json && !strcmp(json, "-") ? stderr : stdout; /* stdout: the JSON only */

    double t0 = stap_now_ms();
    stap_input in;
    if (stap_perfect_read_inputs(size, dir, &in, &err)) return cli_fail(&err);
    double read_ms = stap_now_ms() - t0;
    stap_config cfg;
    stap_perfect_config(size, &cfg);
    cfg.backend = backend;
    cfg.threads = threads;
    int status = EXIT_OK;
    stap_plan *plan = NULL;
    stap_cf32 *W = NULL, *Y = NULL, *G = NULL;
    if (stap_plan_create(&plan, &cfg, in.steering, in.steering_beams, in.steering_len, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    size_t ny = stap_output_len(plan);
    W = malloc(sizeof(stap_cf32) * stap_weights_len(plan));
    Y = malloc(sizeof(stap_cf32) * ny);
    if (!W || !Y) {
        status = cli_error(EXIT_PROCESSING, "out of memory");
        goto out;
    }
    double timing[STAP_STAGE_COUNT];
    if (stap_plan_execute(plan, in.iq, W, Y, timing, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    double tw = stap_now_ms();
    if (stap_perfect_write_raw(output, Y, ny, mode, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    double write_ms = stap_now_ms() - tw;
    char name[64];
    snprintf(name, sizeof name, "PERFECT STAP %s", size_s);
    if (!quiet) cli_print_timing(stap_plan_config(plan), name, timing, read_ms, write_ms, stap_now_ms() - t0);
    double snr = NAN;
    if (gold) {
        G = malloc(sizeof(stap_cf32) * ny);
        if (!G) {
            status = cli_error(EXIT_PROCESSING, "out of memory");
            goto out;
        }
        if (stap_perfect_read_raw(gold, ny, G, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        snr = stap_perfect_snr_db(G, Y, ny);
        fprintf(out, "SNR against %s: %.1f dB (criterion %.0f dB): %s\n", gold, snr, min_snr,
                snr >= min_snr ? "pass" : "FAIL");
        if (!(snr >= min_snr))
            status = cli_error(EXIT_PROCESSING, "output agrees with '%s' at only %.1f dB (< %.0f dB)",
                               gold, snr, min_snr);
    }
    if (json) {
        const stap_config *pc = stap_plan_config(plan);
        cJSON *doc = stream_json_report("perfect");
        cJSON_AddStringToObject(doc, "size", size_s);
        cJSON_AddStringToObject(doc, "input_dir", dir);
        cJSON_AddStringToObject(doc, "output", output);
        cJSON_AddStringToObject(doc, "backend", stap_backend_name(pc->backend));
        stream_json_config(doc, pc, in.steering_beams);
        cJSON *t = cJSON_AddObjectToObject(doc, "stage_ms");
        for (int i = 0; i < STAP_STAGE_COUNT; i++)
            cJSON_AddNumberToObject(t, stap_stage_names[i], timing[i]);
        cJSON_AddNumberToObject(doc, "read_ms", read_ms);
        cJSON_AddNumberToObject(doc, "write_ms", write_ms);
        cJSON_AddNumberToObject(doc, "total_ms", stap_now_ms() - t0);
        if (gold) {
            cJSON *g = cJSON_AddObjectToObject(doc, "gold");
            cJSON_AddStringToObject(g, "file", gold);
            cJSON_AddNumberToObject(g, "snr_db", snr); /* identical outputs: infinite, null */
            cJSON_AddNumberToObject(g, "min_snr_db", min_snr);
            cJSON_AddBoolToObject(g, "pass", snr >= min_snr);
        }
        stream_json_platform(doc, threads);
        if (cli_json_write(json, doc, mode, &err)) status = cli_fail(&err);
        cJSON_Delete(doc);
    }
out:
    free(W);
    free(Y);
    free(G);
    stap_plan_destroy(plan);
    stap_input_free(&in);
    return status;
}

int cmd_import_perfect(int argc, char **argv)
{
    const char *size_s = NULL, *dir = NULL, *out = NULL, *json = NULL;
    int cpis = 1, force = 0, progress_mode = PROGRESS_AUTO;
    stap_error err;
    cli_opt opts[] = {
        PERFECT_INPUT_OPTIONS(&size_s, &dir),
        {"output", 'o', CLI_STRING, &out, "FILE",
         "the schema-v1.1 file (written atomically; an existing file is\n"
         "refused without -f)", .alias = "out", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        {"cpis", 0, CLI_INT, &cpis, "N", "a recording of N CPIs (default 1)", .lo = 1,
         .hi = 1000000},
        CLI_OPT_PROGRESS(&progress_mode),
        CLI_OPT_JSON(&json),
        {0}};
    int pst = cli_parse(&import_perfect_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    const stap_write_mode mode = cli_write_mode(force);
    perfect_size size;
    if (stap_perfect_size_parse(size_s, &size, &err)) return cli_error(EXIT_USAGE, "--size: %s", err.msg);
    if ((pst = perfect_files(size, dir))) return pst;
    if ((pst = cli_output_ok(out, force)) || (pst = cli_output_ok(json, force))) return pst;
    stap_input in;
    if (stap_perfect_read_inputs(size, dir, &in, &err)) return cli_fail(&err);
    int st;
    if (cpis == 1) {
        st = stap_input_write(out, &in, NULL, NULL, &(stap_write_options){.mode = mode}, &err);
    } else {
        stap_recording_writer *rw = NULL;
        st = stap_recording_create(&rw, out, &in, cpis, &(stap_write_options){.mode = mode}, &err);
        progress pg;
        progress_begin(&pg, progress_mode, 0, "import-perfect", "CPIs", cpis);
        for (int c = 0; c < cpis && !st; c++) {
            st = stap_recording_write(rw, c, in.iq, &err);
            progress_update(&pg, c + 1);
        }
        progress_end(&pg);
        if (st && rw) stap_recording_abort(rw);
        else if (!st) st = stap_recording_finish(rw, NULL, NULL, &err);
    }
    const int C = in.channels, P = in.pulses, R = in.range_gates;
    stap_input_free(&in);
    if (st) return cli_fail(&err);
    stap_config c;
    stap_perfect_config(size, &c);
    if (json) {
        cJSON *doc = cli_json_written("import-perfect", out, C, P, R, cpis);
        if (!doc) return cli_error(EXIT_PROCESSING, "out of memory");
        cJSON_AddStringToObject(doc, "size", size_s);
        cJSON_AddNumberToObject(doc, "doppler_bins", c.doppler_bins);
        cJSON_AddNumberToObject(doc, "doppler_order", c.doppler_order);
        cJSON_AddNumberToObject(doc, "segments", c.segments);
        cJSON_AddNumberToObject(doc, "training", c.training);
        st = cli_json_write(json, doc, mode, &err) ? cli_fail(&err) : EXIT_OK;
        cJSON_Delete(doc);
        if (st) return st;
    }
    fprintf(json && !strcmp(json, "-") ? stderr : stdout, /* --json -: the JSON alone on stdout */
            "wrote %s; process it with:\n  rtstap run --input %s --output OUT.h5 --doppler-bins %d "
            "--doppler-order %d --segments %d --training %d\n",
            out, out, c.doppler_bins, c.doppler_order, c.segments, c.training);
    return EXIT_OK;
}
