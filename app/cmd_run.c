/* cmd_run.c: `rtstap run` — read (or synthesize) a cube, run it through the STAP engine, write the
 * result file atomically and print the stage timing; a recording goes to run_recording.c. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "env.h"
#include "signals.h"
#include "cfar.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "progress.h"
#include "cpi_check.h"
#include "rtstap/stream.h"
#include "engine.h"
#include "report.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "stap.h"
#include "synth.h"
#include "run_job.h"
#include "par.h"

static const cli_command run_cmd = {
    "run",
    "Process a CPI, or every CPI of a recording in order: Doppler filtering, training,\n"
    "batched QR, MVDR weights, adaptive filtering, CFAR. Without --input a fixed-seed\n"
    "cube of the preset's shape is synthesized (noise, two barrage jammers, one target).\n"
    "A recording (/data/iq of rank 4) is read by reader threads (--readers) and its results\n"
    "written by a writer thread while the engine keeps several CPIs in flight.\n",
    "A recording stops cleanly on SIGINT or SIGTERM: the CPIs in flight are finished and\n"
    "written, the file is published with /config cpis and stopped (and the JSON report\n"
    "written), and the exit status is 128 + the signal; a second signal ends at once (no\n"
    "file).\n"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over n runs (rows of STAP_STAGE_COUNT) of stage i. */
static double median_stage(const double *rows, int n, int i)
{
    double v[n];
    for (int k = 0; k < n; k++) v[k] = rows[(size_t)k * STAP_STAGE_COUNT + i];
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int run_parse(run_job *j, int argc, char **argv)
{
    j->preset = STAP_PRESET_HARD;
    j->repeat = 1;
    j->device = -1;
    stap_config_defaults(&j->cfg);
    stap_cfar_defaults(&j->cfar);
    j->cfar.kind = STAP_CFAR_CA; /* the default detector steps aside on cubes too short for it */
    cli_training_defaults(&j->tw);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &j->input, "FILE",
         "schema-v1.1 HDF5 cube (/data/iq: channels x pulses x range,\n"
         "or CPIs x channels x pulses x range: a recording; any\n"
         "order of the three when its axes are labelled; complex64,\n"
         "or {r,i}/{real,imag} of float64, int8, int16, int32, or\n"
         "those interleaved along a last axis of length 2)", .flags = CLI_INPUT},
        CLI_OPT_LAYOUT(&j->inopts),
        CLI_OPT_DATASET(&j->inopts),
        CLI_OPT_SCALE(&j->inopts),
        CLI_OPT_READERS(&j->readers),
        CLI_OPT_HOST_DECODE(&j->host_decode),
        CLI_OPT_PROGRESS(&j->progress),
        {"devices", 0, CLI_STRING, &j->devices_s, "LIST|all",
         "a recording on several GPUs: one engine per device (e.g. 0,1\n"
         "or all), CPI g on device g mod N, the results written in CPI\n"
         "order as one device writes them (not with --device)"},
        {"output", 'o', CLI_STRING, &j->output, "FILE",
         "result file (written atomically; an existing file is refused\n"
         "without -f)", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&j->force),
        {"preset", 0, CLI_CALL, &j->preset, "NAME",
         "easy | medium | hard (default hard); options override it", .parse = cli_parse_preset},
        CLI_OPTS_PROCESSING(&j->proc),
        CLI_OPTS_LOOK(&j->look),
        CLI_OPT_TRAINING(&j->tw),
        CLI_OPT_BACKEND(&j->cfg.backend),
        CLI_OPT_QR(&j->cfg.qr),
        CLI_OPT_DEVICE(&j->device),
        CLI_OPT_THREADS(&j->threads),
        CLI_OPTS_CFAR(&j->cfar, &j->cfar_given),
        {"keep", 0, CLI_CALL, &j->keep, "LIST",
         "what the result file keeps, comma-separated: detections,\n"
         "weights, output (default: all three for one CPI;\n"
         "detections,weights for a recording: about 1 MB of weights\n"
         "per hard CPI, a few kB of detections)", .parse = cli_parse_keep},
        {"keep-output", 0, CLI_FLAG, &j->keep_output, NULL,
         "recordings: also write /output/iq for every CPI (adds output\n"
         "to --keep)"},
        {"repeat", 0, CLI_INT, &j->repeat, "N",
         "process the CPI N times through one engine; the table\n"
         "gives the median of runs 2..N (default 1)", .lo = 1, .hi = 100000},
        CLI_OPT_STRICT(&j->inopts,
                       "errors instead of warnings: an input without axis labels\n"
                       "is refused (default: read as channel, pulse, range), and\n"
                       "ill-conditioned training (min|R_ii|/max|R_ii| below\n"
                       "10 eps N) stops the run"),
        {"check", 0, CLI_FLAG, &j->check, NULL,
         "recordings: verify that every output sample is finite,\n"
         "also those not written (what is written is always checked:\n"
         "exit 1 naming the first weight, sample or detection that\n"
         "is not finite)"},
        CLI_OPT_JSON(&j->json),
        {"quiet", 0, CLI_FLAG, &j->quiet, NULL, "no timing table"},
        {0}};
    int pst = cli_parse(&run_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (par_size() > 1) { /* rtstap-mpi: one GPU per rank (--devices: the host's to share) */
        if ((pst = cli_rank_device(j->devices_s, j->cfg.backend, &j->device))) return pst;
        j->devices_s = NULL;
    }
    if (j->devices_s) {
        if (j->device >= 0) return cli_error(EXIT_USAGE, "--devices: not with --device");
        if ((pst = cli_devices(j->devices_s, j->cfg.backend, j->devices, 16, &j->ndevices))) return pst;
        /* the first device is the current one: one CPI, and the main thread's engine */
        if (j->ndevices && j->devices[0] >= 0 && (pst = cli_select_device(j->devices[0]))) return pst;
    }
    if (cli_input_opts_need_input(&j->inopts, j->input)) return EXIT_USAGE;
    if ((pst = cli_look_check(&j->look, j->proc.beams > 0))) return pst;
    if ((pst = cli_training_apply(&j->tw, j->proc.seg > 0, &j->cfg)) ||
        (pst = cli_training_order(&j->tw, &j->proc.dorder)))
        return pst;
    if ((pst = cli_select_device(j->device))) return pst;
    j->mode = cli_write_mode(j->force);
    if ((pst = cli_output_ok(j->json, j->force))) return pst;
    /* fail before computing when the output cannot be written */
    stap_error err;
    if (stap_output_check_mode(j->output, j->mode, &err)) return cli_fail(&err);
    return CLI_GO;
}

/* the input: a file's shape and metadata (a recording is handed on), or the synthesized cube */
static int run_open_input(run_job *j)
{
    stap_error err;
    int st;
    stap_preset_config(j->preset, &j->cfg);
    if (!j->input) {
        j->in.channels = j->cfg.channels;
        j->in.pulses = j->cfg.pulses;
        j->in.range_gates = j->cfg.range_gates;
        j->in.iq = malloc(sizeof(stap_cf32) * (size_t)j->in.channels * j->in.pulses * j->in.range_gates);
        if (!j->in.iq) return cli_error(EXIT_PROCESSING, "out of memory for the synthetic cube");
        synth_params sp;
        stap_synth_defaults(&sp, j->in.channels, j->in.pulses, j->in.range_gates);
        if (stap_synth_cube(&sp, j->in.iq, &err)) return cli_fail(&err);
        snprintf(j->input_name, sizeof j->input_name, "synthetic:%s", stap_preset_name(j->preset));
        return EXIT_OK;
    }
    if (cli_env_reader(&j->inopts.read, &err)) return cli_fail(&err);
    if (stap_recording_open(j->input, &j->rec, &j->in, &j->inopts.read, &err))
        return cli_fail_input(j->input, &err);
    if ((st = cli_check_layout(j->input, &j->in, &j->inopts))) return st;
    if (stap_recording_rank(j->rec) == 4 && (st = cli_check_unwritten(j->input, j->rec, j->inopts.strict, 0)))
        return st;
    /* one CPI: its samples are read once the configuration is known to fit (a small file
     * declaring a huge dataset made run read gigabytes of fill values first) */
    snprintf(j->input_name, sizeof j->input_name, "%s", j->input);
    return EXIT_OK;
}

/* One CPI: the engine, the cube read (a file's), --repeat runs, the checks; the stage times
 * (the median of runs 2..N) into timing */
static int one_compute(run_job *j, stap_engine **eng, stap_cpi_result *r, double *timing,
                       double *read_ms)
{
    stap_error err;
    int fit = run_apply_options(j);
    if (fit) return fit;
    fit = run_cfar_fit(&j->cfar, &j->cfg, j->cfar_given, j->quiet, j->input_name);
    if (fit) return fit;
    stap_engine_options eo;
    if (cli_env_engine_defaults(&eo, &err)) return cli_fail(&err);
    eo.slots = 1;
    eo.keep_weights = 1;
    eo.keep_output = 1;
    eo.cfar = j->cfar;
    const size_t n = (size_t)j->in.channels * j->in.pulses * j->in.range_gates;
    eo.host_reserve = sizeof(stap_cf32) * n;
    if (stap_engine_create(eng, &j->cfg, j->in.steering, j->in.steering_beams, j->in.steering_len,
                           &eo, &err)) {
        stap_error_prefix(&err, "%s", j->input_name);
        return cli_fail(&err);
    }
    if (*stap_engine_note(*eng)) /* warnings are not silenced by --quiet */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(*eng));
    if (j->rec) {
        double t0 = stap_now_ms();
        j->in.iq = malloc(sizeof(stap_cf32) * n);
        if (!j->in.iq)
            return cli_error(EXIT_PROCESSING, "out of memory for the %d x %d x %d cube",
                             j->in.channels, j->in.pulses, j->in.range_gates);
        if (stap_recording_read(j->rec, 0, j->in.iq, &err)) return cli_fail(&err);
        *read_ms += stap_now_ms() - t0;
    }
    double *reps = calloc((size_t)j->repeat * STAP_STAGE_COUNT, sizeof *reps);
    if (!reps) return cli_error(EXIT_PROCESSING, "out of memory");
    /* --repeat N: the same CPI N times through the one engine; the first run is the warm-up
     * and the table reports the median of the others, the steady state of a real-time loop
     * (rtstap stream measures CPIs in flight) */
    for (int rep = 0; rep < j->repeat; rep++) {
        if (stap_engine_submit(*eng, 0, j->in.iq, &err) || stap_engine_collect(*eng, 0, r, &err)) {
            free(reps);
            stap_error_prefix(&err, "%s", j->input_name);
            return cli_fail(&err);
        }
        memcpy(reps + (size_t)rep * STAP_STAGE_COUNT, r->stage_ms, sizeof r->stage_ms);
    }
    for (int i = 0; i < STAP_STAGE_COUNT; i++)
        timing[i] = j->repeat == 1 ? reps[i] : median_stage(reps + STAP_STAGE_COUNT, j->repeat - 1, i);
    free(reps);
    cpi_checks checks;
    cpi_checks_init(&checks, j->input_name, j->inopts.strict, 1, 0); /* all written: checked */
    if (cpi_check(&checks, *eng, r, &err)) return cli_fail(&err);
    return EXIT_OK;
}

static void one_report(const run_job *j, const stap_engine *eng, const stap_cpi_result *r,
                       const double *timing, double read_ms, double write_ms,
                       const char *cfar_desc)
{
    const stap_config *pc = stap_engine_config(eng);
    cli_print_timing(pc, j->input_name, timing, read_ms, write_ms, stap_now_ms() - j->t_start);
    if (j->repeat > 1) {
        double c = 0;
        for (int i = 0; i < STAP_STAGE_COUNT; i++) c += timing[i];
        fprintf(stderr, "  stage times: median of %d CPIs after one warm-up; %.1f CPIs/s\n",
                j->repeat - 1, 1e3 / c);
    }
    if (j->cfar.kind != STAP_CFAR_NONE)
        fprintf(stderr, "  detections: %zu (%s)\n", r->detection_count, cfar_desc);
    fprintf(stderr, "  engine: %s\n", stap_engine_describe(eng));
    fprintf(stderr, "  training conditioning: min|R_ii|/max|R_ii| >= %.3g (limit %.2g)\n",
            (double)r->diag_ratio, stap_engine_conditioning_limit(eng));
    if (pc->qr != STAP_QR_HOUSEHOLDER)
        fprintf(stderr, "  QR factor %s: %lld matrices by CholeskyQR, %lld refactored by Householder (guard)\n",
                stap_qr_method_name(pc->qr), r->qr_cholqr2, r->qr_guarded);
}

static int one_json(const run_job *j, const stap_engine *eng, const stap_cpi_result *r,
                    const double *timing, double read_ms, double write_ms, const char *cfar_desc)
{
    stap_error err;
    cJSON *doc = run_json(j->input_name, j->output, eng, stap_engine_beams(eng), &j->cfar,
                          cfar_desc, j->threads);
    cJSON *t = cJSON_AddObjectToObject(doc, "stage_ms");
    for (int i = 0; i < STAP_STAGE_COUNT; i++) cJSON_AddNumberToObject(t, stap_stage_names[i], timing[i]);
    cJSON_AddStringToObject(doc, "stage_ms_statistic",
                            j->repeat == 1 ? "one CPI" : "median of runs 2..repeat");
    cJSON_AddNumberToObject(doc, "repeat", j->repeat);
    cJSON_AddNumberToObject(doc, "read_ms", read_ms);
    cJSON_AddNumberToObject(doc, "write_ms", write_ms);
    cJSON_AddNumberToObject(doc, "total_ms", stap_now_ms() - j->t_start);
    if (j->cfar.kind != STAP_CFAR_NONE) {
        cJSON_AddNumberToObject(doc, "detections", (double)r->detection_count);
        /* the detections themselves (the result file's /detections), the first 10 000 */
        enum { LISTED = 10000 };
        cJSON *list = cJSON_AddArrayToObject(doc, "detection_list");
        for (size_t k = 0; list && k < r->detection_count && k < LISTED; k++) {
            const stap_detection *d = &r->detections[k];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "beam", d->beam);
            cJSON_AddNumberToObject(o, "doppler_bin", d->doppler_bin);
            cJSON_AddNumberToObject(o, "range_cell", d->range_cell);
            cJSON_AddNumberToObject(o, "power", d->power);
            cJSON_AddNumberToObject(o, "snr_db", d->snr_db);
            cJSON_AddNumberToObject(o, "statistic", d->statistic);
            cJSON_AddNumberToObject(o, "threshold", d->threshold);
            cJSON_AddItemToArray(list, o);
        }
        if (r->detection_count > LISTED) cJSON_AddBoolToObject(doc, "detection_list_truncated", 1);
    }
    run_json_conditioning(doc, r->diag_ratio, eng);
    cJSON *q = cJSON_AddObjectToObject(doc, "qr");
    cJSON_AddStringToObject(q, "factor", stap_qr_method_name(stap_engine_config(eng)->qr));
    cJSON_AddNumberToObject(q, "cholesky", (double)r->qr_cholqr2); /* by cholqr2 or cholqr */
    cJSON_AddNumberToObject(q, "cholqr2", (double)r->qr_cholqr2);  /* the same, its first name */
    cJSON_AddNumberToObject(q, "guarded", (double)r->qr_guarded);
    int status = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return status;
}

/* One CPI: compute, write the result file, report */
static int run_one(run_job *j, double read_ms)
{
    stap_error err;
    stap_engine *eng = NULL;
    stap_cpi_result r;
    memset(&r, 0, sizeof r);
    double timing[STAP_STAGE_COUNT];
    int status = one_compute(j, &eng, &r, timing, &read_ms);
    if (status) {
        stap_engine_destroy(eng);
        return status;
    }
    char cfar_desc[128];
    stap_cfar_describe(&j->cfar, cfar_desc, sizeof cfar_desc);
    const stap_config *pc = stap_engine_config(eng);
    stap_result res;
    memset(&res, 0, sizeof res);
    res.cfg = pc;
    res.input_name = j->input_name;
    res.backend_name = stap_backend_name(pc->backend);
    res.beams = stap_engine_beams(eng);
    res.steering = stap_engine_steering(eng);
    res.looks = j->in.looks;
    res.weights = r.weights;
    res.output = r.output;
    res.timing_ms = timing;
    res.read_ms = read_ms;
    res.total_ms = stap_now_ms() - j->t_start;
    res.meta = &j->in.meta;
    res.have_detections = j->cfar.kind != STAP_CFAR_NONE;
    res.detections = r.detections;
    res.detection_count = r.detection_count;
    res.cfar_description = cfar_desc;
    res.engine = eng;
    res.input_samples = j->input ? j->in.samples : NULL;
    res.qr_counted = 1; /* the (last) CPI's factors */
    res.qr_cholqr2 = r.qr_cholqr2;
    res.qr_guarded = r.qr_guarded;
    double t_w = stap_now_ms();
    const stap_write_options wo = {j->mode, j->keep ? j->keep | (j->keep_output ? STAP_KEEP_OUTPUT : 0u) : 0u};
    if (stap_result_write(j->output, &res, &wo, &err)) status = cli_fail(&err);
    double write_ms = stap_now_ms() - t_w;
    if (!status && !j->quiet) one_report(j, eng, &r, timing, read_ms, write_ms, cfar_desc);
    if (!status && j->json) status = one_json(j, eng, &r, timing, read_ms, write_ms, cfar_desc);
    stap_engine_destroy(eng);
    return status;
}

int cmd_run(int argc, char **argv)
{
    run_job *j = calloc(1, sizeof *j);
    if (!j) return cli_error(EXIT_PROCESSING, "out of memory");
    int status = run_parse(j, argc, argv);
    if (status == CLI_GO) {
        j->t_start = stap_now_ms();
        status = run_open_input(j);
        if (par_size() > 1) status = run_agree(j, status); /* one input, one configuration */
        if (!status) {
            if (j->rec && stap_recording_rank(j->rec) == 4) {
                status = run_recording(j);
            } else if (par_size() > 1) { /* one CPI: rtstap-mpi's rank 0 runs it alone */
                if (par_rank() == 0 && !j->quiet) fprintf(stderr, "rtstap-mpi: one CPI: rank 0 runs it alone\n");
                status = par_check(par_rank() == 0 ? run_one(j, stap_now_ms() - j->t_start) : EXIT_OK);
            } else {
                status = run_one(j, stap_now_ms() - j->t_start);
            }
        }
    }
    stap_recording_close(j->rec);
    stap_input_free(&j->in);
    free(j);
    return status;
}
