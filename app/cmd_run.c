/* cmd_run.c: `rtstap run` — read (or synthesize) a cube, run it through the STAP engine, write the
 * result file atomically and print the stage timing. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfar.h"
#include "cli.h"
#include "cpi_check.h"
#include "cpi_io.h"
#include "engine.h"
#include "stream_loop.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "la_internal.h" /* la_now_ms */
#include "stap.h"
#include "synth.h"

static void run_usage(FILE *f)
{
    fprintf(f,
        "usage: rtstap run [--input FILE] --output FILE [options]\n"
        "\n"
        "Process a CPI, or every CPI of a recording in order: Doppler filtering, training,\n"
        "batched QR, MVDR weights, adaptive filtering, CFAR. Without --input a fixed-seed\n"
        "cube of the preset's shape is synthesized (noise, two barrage jammers, one target).\n"
        "A recording (/data/iq of rank 4) is read by a reader thread and its results written\n"
        "by a writer thread while the engine keeps several CPIs in flight.\n"
        "\n"
        "  --input FILE           schema-v1.1 HDF5 cube (/data/iq: channels x pulses x range,\n"
        "                         or CPIs x channels x pulses x range: a recording; any\n"
        "                         order of the three when its axes are labelled; complex64,\n"
        "                         or {r,i}/{real,imag} of float64, int8, int16, int32, or\n"
        "                         those interleaved along a last axis of length 2)\n"
        "  --layout ORDER         the input's stored axis order, e.g. P,C,R or\n"
        "                         pulse,channel,range (after a recording's cpi axis);\n"
        "                         overrides the file's axis labels\n"
        "  --scale S              multiply the stored samples by S (> 0) instead of the\n"
        "                         `scale` attribute of /data/iq (default 1)\n"
        "  --output FILE          result file (must not exist; written atomically)\n"
        "  --preset NAME          easy | medium | hard (default hard); flags override it\n"
        "  --doppler-bins D       Doppler bins, D >= pulses (zero-padded FFT)\n"
        "  --doppler-order Q      odd: 1 = post-Doppler, 3 = third-order Doppler-factored\n"
        "  --segments S           range segments (S divides the range gates)\n"
        "  --training K           training cells per segment\n"
        "  --beams B              beams (ignored when the input has /steering)\n"
        "  --loading DELTA        diagonal loading, R^H R = K (Rhat + DELTA I) (default 0)\n"
        "  --window W             none | hann | chebyshev:DB (default none)\n"
        "  --backend B            auto | cpu | lapack | gpu | cublas (default auto)\n"
        "  --threads T            CPU threads (default: all)\n"
        "  --cfar KIND            none | ca | os: CFAR detection along range (default ca)\n"
        "  --cfar-pfa P           false-alarm probability per cell (default 1e-6)\n"
        "  --cfar-guard G         guard cells each side (default 2)\n"
        "  --cfar-train N         training cells each side (default 16)\n"
        "  --cfar-rank K          OS-CFAR order statistic (default 0.75 x 2N)\n"
        "  --keep-output          recordings: also write /output/iq for every CPI (a single\n"
        "                         CPI always has it)\n"
        "  --repeat N             process the CPI N times through one engine; the table\n"
        "                         gives the median of runs 2..N (default 1)\n"
        "  --strict               errors instead of warnings: an input without axis labels\n"
        "                         is refused (default: read as channel, pulse, range), and\n"
        "                         ill-conditioned training (min|R_ii|/max|R_ii| below\n"
        "                         10 eps N) stops the run\n"
        "  --check                recordings: verify that every output sample is finite,\n"
        "                         also those not written (what is written is always checked:\n"
        "                         exit 1 naming the first weight, sample or detection that\n"
        "                         is not finite)\n"
        "  --quiet                no timing table\n"
        "\n"
        "A recording stops cleanly on SIGINT or SIGTERM: the CPIs in flight are finished and\n"
        "written, the file is published with /config cpis and stopped, and the exit status\n"
        "is 128 + the signal; a second signal ends at once (no file).\n"
        "  --help                 this text\n");
}

static int parse_window(const char *s, stap_config *cfg)
{
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
static int cfar_fit(stap_cfar_config *cfar, int range_gates, int given, int quiet,
                    const char *input, rt_error *err)
{
    if (cfar->kind == STAP_CFAR_NONE || !stap_cfar_validate(cfar, range_gates, err)) return RT_OK;
    if (given) return rt_prefix(err, "%s", input);
    if (!quiet) fprintf(stderr, "rtstap: note: no CFAR detection (%s)\n", err->msg);
    cfar->kind = STAP_CFAR_NONE;
    return RT_OK;
}

/* The writer's sink behind the checks of cpi_check.h. */
typedef struct checked_sink {
    cpi_checks checks;
    const stap_engine *eng;
    cpi_writer *writer;
} checked_sink;

static int checked_put(void *user, const stap_cpi_result *r, rt_error *err)
{
    checked_sink *cs = user;
    int st = cpi_check(&cs->checks, cs->eng, r, err);
    return st ? st : cpi_writer_put_fn(cs->writer, r, err);
}

/* Every CPI of a rank-4 recording through one engine: a reader thread, S CPIs in flight, a
 * writer thread; per-CPI results in the extensible datasets of stap_result_writer. */
static int run_recording(stap_recording *rec, stap_input *in, const char *input,
                         const char *output, stap_config *cfg, int dbins, int dorder, int seg,
                         int train, int beams, double loading, int threads,
                         stap_cfar_config *cfar, int cfar_given, int keep_output, int quiet,
                         int strict, int check, double t_start)
{
    rt_error err;
    int status = EXIT_OK;
    const long long cpis = stap_recording_cpis(rec);
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
    if (cfar_fit(cfar, cfg->range_gates, cfar_given, quiet, input, &err)) {
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
    if (stap_result_writer_open(&rw, output, &hdr, keep_output, &err) ||
        cpi_writer_start(&writer, rw, wlen, keep_output ? ylen : 0, 4, &err) ||
        cpi_reader_start(&reader, rec, eng, cpis, eo.slots + 2, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    stream_stats st;
    double t0 = la_now_ms();
    checked_sink cs = {{0}, eng, writer};
    /* what is written is always checked finite; --check also the output not written */
    cpi_checks_init(&cs.checks, input, strict, check || keep_output, 1);
    rt_graceful_begin(); /* SIGINT/SIGTERM: finish the CPIs in flight, publish what ran */
    int rst = stream_run(eng, 0, cpis, cpi_reader_get_fn, cpi_reader_release_fn, reader,
                         checked_put, &cs, 0, !quiet && isatty(2), &st, &err);
    rt_graceful_end();
    if (rst) {
        if (!strstr(err.msg, input)) rt_prefix(&err, "%s", input);
        status = cli_fail(&err);
        goto out;
    }
    cpi_checks_report(&cs.checks);
    char stopped[160] = "";
    if (st.stopped_by) {
        snprintf(stopped, sizeof stopped, "by %s after %lld of %lld CPIs",
                 st.stopped_by == SIGINT ? "SIGINT" : st.stopped_by == SIGTERM ? "SIGTERM" : "a signal",
                 st.cpis_run, cpis);
        status = 128 + st.stopped_by;
    }
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
    int cst = stap_result_writer_close(rw, &sum, &err);
    rw = NULL;
    if (cst) {
        status = cli_fail(&err);
        goto out;
    }
    if (stopped[0])
        fprintf(stderr, "rtstap: stopped %s; %s holds them (/config stopped)\n", stopped, output);
    if (!quiet) {
        fprintf(stderr, "rtstap: %s, %lld CPIs, backend %s\n  engine: %s\n", input, st.cpis_run,
                hdr.backend_name, stap_engine_describe(eng));
        fprintf(stderr, "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d B=%d\n", pc->channels, pc->pulses,
                pc->range_gates, pc->doppler_bins, pc->doppler_order, pc->segments, pc->training,
                hdr.beams);
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
out:
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
    enum { O_INPUT = 256, O_OUTPUT, O_PRESET, O_DBINS, O_DORDER, O_SEG, O_TRAIN, O_BEAMS,
           O_LOAD, O_WIN, O_BACKEND, O_THREADS, O_QUIET, O_HELP, O_CFAR, O_PFA, O_GUARD,
           O_CTRAIN, O_RANK, O_REPEAT, O_KEEPOUT, O_LAYOUT, O_STRICT, O_SCALE, O_CHECK };
    static const struct option opts[] = {
        {"input", required_argument, 0, O_INPUT},     {"output", required_argument, 0, O_OUTPUT},
        {"preset", required_argument, 0, O_PRESET},   {"doppler-bins", required_argument, 0, O_DBINS},
        {"doppler-order", required_argument, 0, O_DORDER},
        {"segments", required_argument, 0, O_SEG},    {"training", required_argument, 0, O_TRAIN},
        {"beams", required_argument, 0, O_BEAMS},     {"loading", required_argument, 0, O_LOAD},
        {"window", required_argument, 0, O_WIN},      {"backend", required_argument, 0, O_BACKEND},
        {"threads", required_argument, 0, O_THREADS}, {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP},             {"cfar", required_argument, 0, O_CFAR},
        {"cfar-pfa", required_argument, 0, O_PFA},    {"cfar-guard", required_argument, 0, O_GUARD},
        {"cfar-train", required_argument, 0, O_CTRAIN}, {"cfar-rank", required_argument, 0, O_RANK},
        {"repeat", required_argument, 0, O_REPEAT}, {"keep-output", no_argument, 0, O_KEEPOUT},
        {"check", no_argument, 0, O_CHECK},
        CLI_INPUT_OPTIONS(O_LAYOUT, O_STRICT, O_SCALE),         {0, 0, 0, 0}};
    const char *input = NULL, *output = NULL;
    stap_preset preset = STAP_PRESET_HARD;
    int quiet = 0, repeat = 1, keep_output = 0, check = 0;
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
    rt_error err;
    rt_clear(&err);

    optind = 1;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case O_INPUT: input = optarg; break;
        case O_OUTPUT: output = optarg; break;
        case O_PRESET:
            if (stap_preset_parse(optarg, &preset, &err)) return cli_error(EXIT_USAGE, "--preset: %s", err.msg);
            break;
        case O_DBINS: if (cli_int("--doppler-bins", optarg, 1, 1 << 20, &dbins)) return EXIT_USAGE; break;
        case O_DORDER:
            if (cli_int("--doppler-order", optarg, 1, 1 << 20, &dorder)) return EXIT_USAGE;
            if (dorder % 2 == 0) return cli_error(EXIT_USAGE, "--doppler-order must be odd (got %d)", dorder);
            break;
        case O_SEG: if (cli_int("--segments", optarg, 1, 1 << 24, &seg)) return EXIT_USAGE; break;
        case O_TRAIN: if (cli_int("--training", optarg, 1, 1 << 24, &train)) return EXIT_USAGE; break;
        case O_BEAMS: if (cli_int("--beams", optarg, 1, 4096, &beams)) return EXIT_USAGE; break;
        case O_LOAD: if (cli_double("--loading", optarg, 0, 1e30, &loading)) return EXIT_USAGE; break;
        case O_WIN: if (parse_window(optarg, &cfg)) return EXIT_USAGE; break;
        case O_BACKEND:
            if (la_backend_parse(optarg, &cfg.backend, &err)) return cli_error(EXIT_USAGE, "--backend: %s", err.msg);
            break;
        case O_THREADS: if (cli_int("--threads", optarg, 0, 4096, &threads)) return EXIT_USAGE; break;
        case O_QUIET: quiet = 1; break;
        case O_KEEPOUT: keep_output = 1; break;
        case O_LAYOUT: if (cli_parse_layout(optarg, &inopts)) return EXIT_USAGE; break;
        case O_STRICT: inopts.strict = 1; break;
        case O_SCALE: if (cli_parse_scale(optarg, &inopts)) return EXIT_USAGE; break;
        case O_CHECK: check = 1; break;
        case O_REPEAT: if (cli_int("--repeat", optarg, 1, 100000, &repeat)) return EXIT_USAGE; break;
        case O_CFAR:
            if (stap_cfar_parse_kind(optarg, &cfar.kind, &err)) return cli_error(EXIT_USAGE, "--cfar: %s", err.msg);
            cfar_given = 1;
            break;
        case O_PFA: cfar_given = 1; if (cli_double("--cfar-pfa", optarg, 1e-300, 0.5, &cfar.pfa)) return EXIT_USAGE; break;
        case O_GUARD: cfar_given = 1; if (cli_int("--cfar-guard", optarg, 0, 1 << 20, &cfar.guard)) return EXIT_USAGE; break;
        case O_CTRAIN: cfar_given = 1; if (cli_int("--cfar-train", optarg, 1, STAP_CFAR_MAX_TRAIN, &cfar.train)) return EXIT_USAGE; break;
        case O_RANK: cfar_given = 1; if (cli_int("--cfar-rank", optarg, 0, 2 * STAP_CFAR_MAX_TRAIN, &cfar.os_rank)) return EXIT_USAGE; break;
        case O_HELP: run_usage(stdout); return EXIT_OK;
        case ':': return cli_error(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
        default: return cli_error(EXIT_USAGE, "unknown option '%s' (see rtstap run --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_error(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!output) return cli_error(EXIT_USAGE, "run needs --output FILE (see rtstap run --help)");
    if (cli_input_opts_need_input(&inopts, input)) return EXIT_USAGE;

    /* Fail before computing when the output cannot be written. */
    if (stap_output_check(output, &err)) return cli_fail(&err);

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
        if (stap_recording_rank(rec) == 4)
            return run_recording(rec, &in, input, output, &cfg, dbins, dorder, seg, train, beams,
                                 loading, threads, &cfar, cfar_given, keep_output, quiet,
                                 inopts.strict, check, t_start);
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
    if (cfar_fit(&cfar, cfg.range_gates, cfar_given, quiet, input_name, &err)) {
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
    if (stap_result_write(output, &res, &err)) {
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
out:
    free(reps);
    stap_engine_destroy(eng);
    stap_recording_close(one_cpi);
    stap_input_free(&in);
    return status;
}
