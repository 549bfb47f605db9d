/* cmd_run.c: `rtstap run` — read (or synthesize) a cube, run it through the STAP engine, write the
 * result file atomically and print the stage timing. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "cfar.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "cpi_check.h"
#include "cpi_io.h"
#include "engine.h"
#include "stream_loop.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "rtstap/common.h" /* la_now_ms */
#include "stap.h"
#include "synth.h"

static const cli_command run_cmd = {
    "run",
    "Process a CPI, or every CPI of a recording in order: Doppler filtering, training,\n"
    "batched QR, MVDR weights, adaptive filtering, CFAR. Without --input a fixed-seed\n"
    "cube of the preset's shape is synthesized (noise, two barrage jammers, one target).\n"
    "A recording (/data/iq of rank 4) is read by a reader thread and its results written\n"
    "by a writer thread while the engine keeps several CPIs in flight.\n",
    "A recording stops cleanly on SIGINT or SIGTERM: the CPIs in flight are finished and\n"
    "written, the file is published with /config cpis and stopped (and the JSON report\n"
    "written), and the exit status is 128 + the signal; a second signal ends at once (no\n"
    "file).\n"};

/* --window: value is the stap_config */
static int parse_window(const cli_opt *o, const char *s)
{
    stap_config *cfg = o->value;
    if (!strcmp(s, "none")) cfg->window = STAP_WINDOW_NONE;
    else if (!strcmp(s, "hann")) cfg->window = STAP_WINDOW_HANN;
    else if (!strncmp(s, "chebyshev:", 10)) {
        cfg->window = STAP_WINDOW_CHEBYSHEV;
        if (cli_double("--window chebyshev:DB", s + 10, 1e-3, 399, &cfg->chebyshev_db)) return -1;
    } else {
        cli_error(EXIT_USAGE, "--window expects none, hann or chebyshev:DB (got '%s')", s);
        return -1;
    }
    return 0;
}

static int parse_preset(const cli_opt *o, const char *s)
{
    rt_error err;
    if (stap_preset_parse(s, o->value, &err)) {
        cli_error(EXIT_USAGE, "--preset: %s", err.msg);
        return -1;
    }
    return 0;
}

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

/* The default detector steps aside (with a note) on range lines too short for its window;
 * a detector the user asked for is an error there. */
static int cfar_fit(stap_cfar_config *cfar, const stap_config *cfg, int given, int quiet,
                    const char *input, rt_error *err)
{
    const int D = cfg->doppler_bins > 0 ? cfg->doppler_bins : cfg->pulses; /* 0 = P */
    if (cfar->kind == STAP_CFAR_NONE || !stap_cfar_validate(cfar, D, cfg->range_gates, err))
        return RT_OK;
    if (given) return rt_prefix(err, "%s", input);
    if (!quiet) fprintf(stderr, "rtstap: note: no CFAR detection (%s)\n", cli_flags_in(err));
    cfar->kind = STAP_CFAR_NONE;
    return RT_OK;
}

/* --json: what every run report holds — the files, the engine, its configuration, the
 * detector and the platform; the caller adds what was measured. */
static cJSON *run_json(const char *input, const char *output, const stap_engine *eng,
                       int beams, const stap_cfar_config *cfar, const char *cfar_desc,
                       int threads)
{
    const stap_config *pc = stap_engine_config(eng);
    cJSON *doc = stream_json_report("run");
    cJSON_AddStringToObject(doc, "input", input);
    cJSON_AddStringToObject(doc, "output", output);
    cJSON_AddStringToObject(doc, "backend", la_backend_name(pc->backend));
    cJSON_AddStringToObject(doc, "engine", stap_engine_describe(eng));
    stream_json_config(doc, pc, beams);
    if (cfar->kind != STAP_CFAR_NONE) cJSON_AddStringToObject(doc, "cfar", cfar_desc);
    else cJSON_AddNullToObject(doc, "cfar");
    stream_json_platform(doc, threads);
    return doc;
}

/* "conditioning": the smallest min|R_ii|/max|R_ii| of the run's factors and its limit */
static void run_json_conditioning(cJSON *doc, double ratio, const stap_engine *eng)
{
    cJSON *c = cJSON_AddObjectToObject(doc, "conditioning");
    cJSON_AddNumberToObject(c, "min_ratio", ratio);
    cJSON_AddNumberToObject(c, "limit", stap_engine_conditioning_limit(eng));
}

/* The writer's sink behind the checks of cpi_check.h. */
typedef struct checked_sink {
    cpi_checks checks;
    const stap_engine *eng;
    cpi_writer *writer;
    const cpi_reader *reader; /* the input's CPI of each result */
} checked_sink;

static int checked_put(void *user, const stap_cpi_result *r, rt_error *err)
{
    checked_sink *cs = user;
    int st = cpi_check(&cs->checks, cs->eng, r, err);
    return st ? st : cpi_writer_put(cs->writer, r, cpi_reader_input_cpi(cs->reader, r->cpi), err);
}

/* Every CPI of a rank-4 recording through one engine: a reader thread, S CPIs in flight, a
 * writer thread; per-CPI results in the extensible datasets of stap_result_writer. */
static int run_recording(stap_recording *rec, stap_input *in, const char *input,
                         const char *output, stap_config *cfg, int dbins, int dorder, int seg,
                         int train, int beams, double loading, int threads,
                         stap_cfar_config *cfar, int cfar_given, int keep_output, int quiet,
                         int strict, int check, double t_start, const char *json,
                         rt_write_mode mode)
{
    rt_error err;
    int status = EXIT_OK;
    const long long in_file = stap_recording_cpis(rec), cpis = stap_recording_written(rec);
    cfg->channels = in->channels;
    cfg->pulses = in->pulses;
    cfg->range_gates = in->range_gates;
    cfg->doppler_bins = dbins > 0 ? dbins : 0;
    if (dorder > 0) cfg->doppler_order = dorder;
    if (seg > 0) cfg->segments = seg;
    if (train > 0) cfg->training = train;
    if (beams > 0) cfg->beams = beams;
    cfg->loading = loading;
    cfg->threads = threads;
    if (in->meta.has_element_spacing) cfg->element_spacing = in->meta.element_spacing_wavelengths;
    stap_engine *eng = NULL;
    stap_result_writer *rw = NULL;
    cpi_reader *reader = NULL;
    cpi_writer *writer = NULL;
    if (cfar_fit(cfar, cfg, cfar_given, quiet, input, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    stap_engine_options eo;
    stap_engine_options_defaults(&eo);
    eo.slots = cpis < 3 ? (int)cpis : 3;
    eo.keep_weights = 1;
    eo.keep_output = keep_output || check; /* --check looks at every output sample */
    eo.cfar = *cfar;
    {   /* the reader's cubes and the writer's queue, beside the engine */
        stap_config vc = *cfg;
        rt_error ignore;
        if (!stap_config_validate(&vc, in->steering != NULL, in->steering_beams,
                                  in->steering ? in->steering_len : 0, &ignore)) {
            const int B = in->steering ? in->steering_beams : vc.beams;
            eo.host_reserve = sizeof(cf32) * ((size_t)(eo.slots + 2) * in->channels * in->pulses *
                                                  in->range_gates +
                                              4 * (stap_weights_count(&vc, B) +
                                                   (keep_output ? stap_output_count(&vc, B) : 0)));
        }
    }
    if (stap_engine_create(&eng, cfg, in->steering, in->steering_beams, in->steering_len, &eo, &err)) {
        /* say how the file was read: a rank-4 cube written in another layout fails here */
        rt_prefix(&err, "%s: '/data/iq' of rank 4 read as a recording of %lld CPIs of %d "
                  "channels x %d pulses x %d range gates", input, cpis, in->channels, in->pulses,
                  in->range_gates);
        status = cli_fail(&err);
        goto out;
    }
    if (*stap_engine_note(eng)) /* warnings are not silenced by --quiet */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(eng));
    const stap_config *pc = stap_engine_config(eng);
    char cfar_desc[128];
    stap_cfar_describe(cfar, cfar_desc, sizeof cfar_desc);
    stap_result hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.cfg = pc;
    hdr.input_name = input;
    hdr.backend_name = la_backend_name(pc->backend);
    hdr.beams = stap_engine_beams(eng);
    hdr.steering = stap_engine_steering(eng);
    hdr.meta = &in->meta;
    hdr.have_detections = cfar->kind != STAP_CFAR_NONE;
    hdr.cfar_description = cfar_desc;
    hdr.engine = eng;
    hdr.input_samples = in->samples;
    const size_t wlen = stap_weights_count(pc, hdr.beams), ylen = stap_output_count(pc, hdr.beams);
    /* from here SIGINT/SIGTERM finish the CPIs in flight and publish what ran (a signal
     * before the first CPI publishes a file of none) */
    cli_graceful_begin();
    if (stap_result_writer_open_mode(&rw, output, &hdr, keep_output, mode, &err) ||
        cpi_writer_start(&writer, rw, wlen, keep_output ? ylen : 0, 4, &err) ||
        cpi_reader_start(&reader, rec, eng, cpis, eo.slots + 2, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    stream_stats st;
    double t0 = la_now_ms();
    checked_sink cs = {{0}, eng, writer, reader};
    /* what is written is always checked finite; --check also the output not written */
    cpi_checks_init(&cs.checks, input, strict, check || keep_output, 1);
    int rst = stream_run(eng, 0, cpis, cpi_reader_get_fn, cpi_reader_release_fn, reader,
                         checked_put, &cs, 0, !quiet && isatty(2), &st, &err);
    cli_graceful_end();
    char stopped[640] = "";
    rt_error fault;
    rt_clear(&fault);
    if (rst && err.code == RT_EDEVICE) {
        /* a device fault with a named backend (auto moves to the CPU instead): the CPIs
         * before it are published, marked stopped, and the run fails naming the CPI */
        fault = err;
        snprintf(stopped, sizeof stopped, "by a device fault at input CPI %lld, after %lld of "
                 "the %lld written CPIs: %.400s", cpi_reader_input_cpi(reader, st.cpis_done),
                 st.cpis_done, cpis, err.msg);
        st.cpis_run = st.cpis_done;
        status = EXIT_PROCESSING;
    } else if (rst) {
        if (!strstr(err.msg, input)) rt_prefix(&err, "%s", input);
        status = cli_fail(&err);
        goto out;
    }
    cpi_checks_report(&cs.checks);
    if (st.stopped_by) {
        snprintf(stopped, sizeof stopped, "by %s after %lld of the %lld written CPIs",
                 st.stopped_by == SIGINT ? "SIGINT" : st.stopped_by == SIGTERM ? "SIGTERM" : "a signal",
                 st.cpis_run, cpis);
        status = 128 + st.stopped_by;
    }
    if (stap_engine_moved_to_cpu(eng) >= 0) /* said once, as it ends */
        fprintf(stderr, "rtstap: warning: %s: %s (input CPI %lld)\n", input, stap_engine_note(eng),
                cpi_reader_input_cpi(reader, stap_engine_moved_to_cpu(eng)));
    double write_s = 0, read_s = 0, wait_s = 0;
    cpi_reader_times(reader, &read_s, &wait_s);
    cpi_reader_stop(reader);
    reader = NULL;
    int wst = cpi_writer_finish(writer, &write_s, &err);
    writer = NULL;
    if (wst) {
        status = cli_fail(&err);
        goto out;
    }
    const double wall = la_now_ms() - t0;
    stap_result sum;
    memset(&sum, 0, sizeof sum);
    sum.timing_ms = st.stage_median;
    sum.read_ms = read_s * 1e3;
    sum.total_ms = la_now_ms() - t_start;
    sum.backend_name = hdr.backend_name;
    sum.stopped = stopped[0] ? stopped : NULL;
    sum.cpis_unwritten = in_file - cpis;
    sum.engine_note = stap_engine_note(eng);
    int cst = stap_result_writer_close(rw, &sum, &err);
    rw = NULL;
    if (cst) {
        status = cli_fail(&err);
        goto out;
    }
    if (fault.code)
        cli_error(EXIT_PROCESSING, "%s: %s; the %lld CPIs before it are in %s (/config stopped)",
                  input, fault.msg, st.cpis_done, output);
    else if (stopped[0])
        fprintf(stderr, "rtstap: stopped %s; %s holds them (/config stopped)\n", stopped, output);
    if (!quiet) {
        fprintf(stderr, "rtstap: %s, %lld CPIs, backend %s\n  engine: %s\n", input, st.cpis_run,
                hdr.backend_name, stap_engine_describe(eng));
        char wb[64], ab[48];
        fprintf(stderr, "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d%s B=%d%s\n", pc->channels, pc->pulses,
                pc->range_gates, pc->doppler_bins, pc->doppler_order, pc->segments, pc->training,
                cli_window_str(pc, wb, sizeof wb), hdr.beams, cli_algorithm_str(pc, ab, sizeof ab));
        fprintf(stderr, "  stage medians ms:");
        for (int s = 0; s < STAP_STAGE_COUNT; s++)
            fprintf(stderr, " %s %.3f", stap_stage_names[s], st.stage_median[s]);
        fprintf(stderr, "\n  %.1f CPIs/s over %.3f s; latency p50 %.3f ms, p99 %.3f ms\n",
                st.cpis_run / (wall * 1e-3), wall * 1e-3, st.lat_p50, st.lat_p99);
        fprintf(stderr, "  reader: %.3f s reading, writer: %.3f s writing (%s limits the run)\n",
                read_s, write_s, read_s > 0.8 * wall * 1e-3 ? "reading" :
                write_s > 0.8 * wall * 1e-3 ? "writing" : "compute");
        if (hdr.have_detections)
            fprintf(stderr, "  detections: %.2f per CPI (%s)\n", st.detections_per_cpi, cfar_desc);
        fprintf(stderr, "  training conditioning: min|R_ii|/max|R_ii| >= %.3g (limit %.2g)\n",
                (double)cs.checks.worst_ratio, stap_engine_conditioning_limit(eng));
    }
    if (json) {
        cJSON *doc = run_json(input, output, eng, hdr.beams, cfar, cfar_desc, threads);
        cJSON_AddNumberToObject(doc, "cpis_in_file", (double)in_file);
        cJSON_AddNumberToObject(doc, "cpis_unwritten", (double)(in_file - cpis));
        cJSON_AddNumberToObject(doc, "cpis_run", (double)st.cpis_run);
        if (st.stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", st.stopped_by);
        stream_json_stats(doc, &st);
        cJSON_AddNumberToObject(doc, "reader_s", read_s);
        cJSON_AddNumberToObject(doc, "writer_s", write_s);
        cJSON_AddNumberToObject(doc, "total_ms", la_now_ms() - t_start);
        run_json_conditioning(doc, cs.checks.worst_ratio, eng);
        if (cli_json_write(json, doc, mode, &err)) status = cli_fail(&err);
        cJSON_Delete(doc);
    }
out:
    cli_graceful_end();
    cpi_reader_stop(reader);
    if (writer) cpi_writer_finish(writer, NULL, &err);
    stap_result_writer_abort(rw);
    stap_engine_destroy(eng);
    stap_recording_close(rec);
    stap_input_free(in);
    return status;
}

int cmd_run(int argc, char **argv)
{
    const char *input = NULL, *output = NULL, *json = NULL;
    stap_preset preset = STAP_PRESET_HARD;
    int quiet = 0, repeat = 1, keep_output = 0, check = 0, force = 0, device = -1;
    /* flags first collected, then laid over the preset */
    int dbins = -1, dorder = -1, seg = -1, train = -1, beams = -1, threads = 0;
    double loading = 0;
    stap_config cfg;
    stap_config_defaults(&cfg);
    stap_cfar_config cfar;
    stap_cfar_defaults(&cfar);
    cfar.kind = STAP_CFAR_CA;
    int cfar_given = 0; /* the default detector steps aside on cubes too short for it */
    cli_input_opts inopts = {{0}, NULL, NULL, 0}; /* --layout, --strict */
    cli_training tw;
    cli_training_defaults(&tw);
    rt_error err;
    rt_clear(&err);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &input, "FILE",
         "schema-v1.1 HDF5 cube (/data/iq: channels x pulses x range,\n"
         "or CPIs x channels x pulses x range: a recording; any\n"
         "order of the three when its axes are labelled; complex64,\n"
         "or {r,i}/{real,imag} of float64, int8, int16, int32, or\n"
         "those interleaved along a last axis of length 2)", .flags = CLI_INPUT},
        CLI_OPT_LAYOUT(&inopts),
        CLI_OPT_SCALE(&inopts),
        {"output", 'o', CLI_STRING, &output, "FILE",
         "result file (written atomically; an existing file is refused\n"
         "without -f)", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        {"preset", 0, CLI_CALL, &preset, "NAME",
         "easy | medium | hard (default hard); options override it", .parse = parse_preset},
        {"doppler-bins", 0, CLI_INT, &dbins, "D", "Doppler bins, D >= pulses (zero-padded FFT)",
         .lo = 1, .hi = 1 << 20},
        {"doppler-order", 0, CLI_CALL, &dorder, "Q",
         "odd: 1 = post-Doppler, 3 = third-order Doppler-factored",
         .parse = cli_parse_doppler_order},
        {"segments", 0, CLI_INT, &seg, "S", "range segments (S divides the range gates)",
         .lo = 1, .hi = 1 << 24},
        {"training", 0, CLI_INT, &train, "K", "training cells per segment (or sliding block)",
         .lo = 1, .hi = 1 << 24},
        CLI_OPT_TRAINING(&tw),
        {"beams", 0, CLI_INT, &beams, "B", "beams (ignored when the input has /steering)",
         .lo = 1, .hi = 4096},
        {"loading", 0, CLI_DOUBLE, &loading, "DELTA",
         "diagonal loading, R^H R = K (Rhat + DELTA I) (default 0)", .lo = 0, .hi = 1e30},
        {"window", 0, CLI_CALL, &cfg, "W", "none | hann | chebyshev:DB (default none)",
         .parse = parse_window},
        CLI_OPT_BACKEND(&cfg.backend),
        CLI_OPT_DEVICE(&device),
        CLI_OPT_THREADS(&threads),
        CLI_OPTS_CFAR(&cfar, &cfar_given),
        {"keep-output", 0, CLI_FLAG, &keep_output, NULL,
         "recordings: also write /output/iq for every CPI (a single\n"
         "CPI always has it)"},
        {"repeat", 0, CLI_INT, &repeat, "N",
         "process the CPI N times through one engine; the table\n"
         "gives the median of runs 2..N (default 1)", .lo = 1, .hi = 100000},
        CLI_OPT_STRICT(&inopts,
                       "errors instead of warnings: an input without axis labels\n"
                       "is refused (default: read as channel, pulse, range), and\n"
                       "ill-conditioned training (min|R_ii|/max|R_ii| below\n"
                       "10 eps N) stops the run"),
        {"check", 0, CLI_FLAG, &check, NULL,
         "recordings: verify that every output sample is finite,\n"
         "also those not written (what is written is always checked:\n"
         "exit 1 naming the first weight, sample or detection that\n"
         "is not finite)"},
        CLI_OPT_JSON(&json),
        {"quiet", 0, CLI_FLAG, &quiet, NULL, "no timing table"},
        {0}};
    int pst = cli_parse(&run_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (cli_input_opts_need_input(&inopts, input)) return EXIT_USAGE;
    if ((pst = cli_training_apply(&tw, seg > 0, &cfg)) || (pst = cli_training_order(&tw, &dorder)))
        return pst;
    if ((pst = cli_select_device(device))) return pst;
    const rt_write_mode mode = cli_write_mode(force);
    if ((pst = cli_output_ok(json, force))) return pst;

    /* Fail before computing when the output cannot be written. */
    if (stap_output_check_mode(output, mode, &err)) return cli_fail(&err);

    double t_start = la_now_ms();
    stap_recording *one_cpi = NULL; /* a one-CPI file, read after validation */
    stap_input in;
    memset(&in, 0, sizeof in);
    char input_name[1024];
    stap_preset_config(preset, &cfg);
    if (input) {
        /* a rank-4 file is a recording of many CPIs: its own path (run_recording) */
        stap_recording *rec;
        if (stap_recording_open_opts(input, &rec, &in, &inopts.read, &err)) return cli_fail(&err);
        int lst = cli_check_layout(input, &in, &inopts);
        if (lst) {
            stap_recording_close(rec);
            stap_input_free(&in);
            return lst;
        }
        if (stap_recording_rank(rec) == 4 &&
            (lst = cli_check_unwritten(input, rec, inopts.strict))) {
            stap_recording_close(rec);
            stap_input_free(&in);
            return lst;
        }
        if (stap_recording_rank(rec) == 4)
            return run_recording(rec, &in, input, output, &cfg, dbins, dorder, seg, train, beams,
                                 loading, threads, &cfar, cfar_given, keep_output, quiet,
                                 inopts.strict, check, t_start, json, mode);
        /* one CPI: its samples are read once the configuration is known to fit (a small
         * file declaring a huge dataset made run read gigabytes of fill values first) */
        one_cpi = rec;
        snprintf(input_name, sizeof input_name, "%s", input);
    } else {
        in.channels = cfg.channels;
        in.pulses = cfg.pulses;
        in.range_gates = cfg.range_gates;
        in.iq = malloc(sizeof(cf32) * (size_t)in.channels * in.pulses * in.range_gates);
        if (!in.iq) return cli_error(EXIT_PROCESSING, "out of memory for the synthetic cube");
        synth_params sp;
        synth_defaults(&sp, in.channels, in.pulses, in.range_gates);
        if (synth_cube(&sp, in.iq, &err)) {
            stap_input_free(&in);
            return cli_fail(&err);
        }
        snprintf(input_name, sizeof input_name, "synthetic:%s", stap_preset_name(preset));
    }
    double read_ms = la_now_ms() - t_start;

    cfg.channels = in.channels;
    cfg.pulses = in.pulses;
    cfg.range_gates = in.range_gates;
    if (input) cfg.doppler_bins = 0; /* default D = P of the file unless given */
    if (dbins > 0) cfg.doppler_bins = dbins;
    if (dorder > 0) cfg.doppler_order = dorder;
    if (seg > 0) cfg.segments = seg;
    if (train > 0) cfg.training = train;
    if (beams > 0) cfg.beams = beams;
    cfg.loading = loading;
    cfg.threads = threads;
    if (in.meta.has_element_spacing) cfg.element_spacing = in.meta.element_spacing_wavelengths;

    int status = EXIT_OK;
    stap_engine *eng = NULL;
    double *reps = NULL;
    stap_cpi_result r;
    memset(&r, 0, sizeof r);
    if (cfar_fit(&cfar, &cfg, cfar_given, quiet, input_name, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    stap_engine_options eo;
    stap_engine_options_defaults(&eo);
    eo.slots = 1;
    eo.keep_weights = 1;
    eo.keep_output = 1;
    eo.cfar = cfar;
    eo.host_reserve = sizeof(cf32) * (size_t)in.channels * in.pulses * in.range_gates;
    if (stap_engine_create(&eng, &cfg, in.steering, in.steering_beams, in.steering_len, &eo, &err)) {
        rt_prefix(&err, "%s", input_name);
        status = cli_fail(&err);
        goto out;
    }
    if (*stap_engine_note(eng)) /* warnings are not silenced by --quiet */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(eng));
    if (one_cpi) {
        double t0 = la_now_ms();
        in.iq = malloc(sizeof(cf32) * (size_t)in.channels * in.pulses * in.range_gates);
        if (!in.iq) {
            status = cli_error(EXIT_PROCESSING, "out of memory for the %d x %d x %d cube",
                               in.channels, in.pulses, in.range_gates);
            goto out;
        }
        if (stap_recording_read(one_cpi, 0, in.iq, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        read_ms += la_now_ms() - t0;
    }
    double timing[STAP_STAGE_COUNT];
    reps = calloc((size_t)repeat * STAP_STAGE_COUNT, sizeof *reps);
    if (!reps) {
        status = cli_error(EXIT_PROCESSING, "out of memory");
        goto out;
    }
    /* --repeat N: the same CPI N times through the one engine; the first run is the
     * warm-up and the table reports the median of the others, the steady state of a
     * real-time loop (rtstap stream measures CPIs in flight). */
    for (int rep = 0; rep < repeat; rep++) {
        if (stap_engine_submit(eng, 0, in.iq, &err) || stap_engine_collect(eng, 0, &r, &err)) {
            rt_prefix(&err, "%s", input_name);
            status = cli_fail(&err);
            goto out;
        }
        memcpy(reps + (size_t)rep * STAP_STAGE_COUNT, r.stage_ms, sizeof r.stage_ms);
    }
    cpi_checks checks;
    cpi_checks_init(&checks, input_name, inopts.strict, 1, 0); /* everything is written: checked */
    if (cpi_check(&checks, eng, &r, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    for (int i = 0; i < STAP_STAGE_COUNT; i++)
        timing[i] = repeat == 1 ? reps[i] : median_stage(reps + STAP_STAGE_COUNT, repeat - 1, i);
    char cfar_desc[128];
    stap_cfar_describe(&cfar, cfar_desc, sizeof cfar_desc);
    double total_ms = la_now_ms() - t_start;
    const stap_config *pc = stap_engine_config(eng);
    stap_result res;
    memset(&res, 0, sizeof res);
    res.cfg = pc;
    res.input_name = input_name;
    res.backend_name = la_backend_name(pc->backend);
    res.beams = stap_engine_beams(eng);
    res.steering = stap_engine_steering(eng);
    res.weights = r.weights;
    res.output = r.output;
    res.timing_ms = timing;
    res.read_ms = read_ms;
    res.total_ms = total_ms;
    res.meta = &in.meta;
    res.have_detections = cfar.kind != STAP_CFAR_NONE;
    res.detections = r.detections;
    res.detection_count = r.detection_count;
    res.cfar_description = cfar_desc;
    res.engine = eng;
    res.input_samples = input ? in.samples : NULL;
    double t_w = la_now_ms();
    if (stap_result_write_mode(output, &res, mode, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    double write_ms = la_now_ms() - t_w;
    if (!quiet) {
        cli_print_timing(pc, input_name, timing, read_ms, write_ms, la_now_ms() - t_start);
        if (repeat > 1) {
            double c = 0;
            for (int i = 0; i < STAP_STAGE_COUNT; i++) c += timing[i];
            fprintf(stderr, "  stage times: median of %d CPIs after one warm-up; %.1f CPIs/s\n",
                    repeat - 1, 1e3 / c);
        }
        if (cfar.kind != STAP_CFAR_NONE)
            fprintf(stderr, "  detections: %zu (%s)\n", r.detection_count, cfar_desc);
        fprintf(stderr, "  engine: %s\n", stap_engine_describe(eng));
        fprintf(stderr, "  training conditioning: min|R_ii|/max|R_ii| >= %.3g (limit %.2g)\n",
                (double)r.diag_ratio, stap_engine_conditioning_limit(eng));
    }
    if (json) {
        cJSON *doc = run_json(input_name, output, eng, res.beams, &cfar, cfar_desc, threads);
        cJSON *t = cJSON_AddObjectToObject(doc, "stage_ms");
        for (int i = 0; i < STAP_STAGE_COUNT; i++)
            cJSON_AddNumberToObject(t, stap_stage_names[i], timing[i]);
        cJSON_AddStringToObject(doc, "stage_ms_statistic",
                                repeat == 1 ? "one CPI" : "median of runs 2..repeat");
        cJSON_AddNumberToObject(doc, "repeat", repeat);
        cJSON_AddNumberToObject(doc, "read_ms", read_ms);
        cJSON_AddNumberToObject(doc, "write_ms", write_ms);
        cJSON_AddNumberToObject(doc, "total_ms", la_now_ms() - t_start);
        if (cfar.kind != STAP_CFAR_NONE)
            cJSON_AddNumberToObject(doc, "detections", (double)r.detection_count);
        run_json_conditioning(doc, r.diag_ratio, eng);
        if (cli_json_write(json, doc, mode, &err)) status = cli_fail(&err);
        cJSON_Delete(doc);
    }
out:
    free(reps);
    stap_engine_destroy(eng);
    stap_recording_close(one_cpi);
    stap_input_free(&in);
    return status;
}
