/* cmd_perfect.c: `rtstap perfect` (run the PERFECT suite's STAP application on its raw
 * files, optionally scoring against a gold output) and `rtstap import-perfect` (the same
 * inputs as a schema-v1.1 HDF5 file). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "h5io.h"
#include "h5io_extra.h"
#include "rtstap/common.h" /* la_now_ms */
#include "perfect.h"

static void perfect_usage(FILE *f)
{
    fprintf(f,
        "usage: rtstap perfect --size small|medium|large --input-dir DIR --output FILE\n"
        "                      [--gold FILE] [--min-snr DB] [--backend B] [--threads T] [--quiet]\n"
        "\n"
        "Runs the PERFECT suite's STAP application (third-order Doppler-factored STAP:\n"
        "P = 128 pulses, D = 256 Doppler bins, Q = 3, 16 steering vectors, training blocks of\n"
        "N_R cells) on DIR/<size>_app_input.bin and DIR/<size>_app_steering_vectors.bin and\n"
        "writes FILE in the suite's layout ([steering vector][Doppler bin][range cell],\n"
        "interleaved float32). With --gold, prints the suite's SNR against that file and\n"
        "exits 1 when it is under --min-snr (default 80 dB, the suite's criterion).\n");
}

int cmd_perfect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"size", required_argument, 0, 's'}, {"input-dir", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'}, {"gold", required_argument, 0, 'g'},
        {"min-snr", required_argument, 0, 'm'}, {"backend", required_argument, 0, 'b'},
        {"threads", required_argument, 0, 't'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *size_s = NULL, *dir = NULL, *output = NULL, *gold = NULL;
    double min_snr = 80;
    int threads = 0, quiet = 0;
    la_backend backend = LA_BACKEND_AUTO;
    rt_error err;
    rt_clear(&err);
    optind = 0; /* glibc: 0 starts afresh (1 kept an earlier parse's place in "-xy") */
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case 's': size_s = optarg; break;
        case 'i': dir = optarg; break;
        case 'o': output = optarg; break;
        case 'g': gold = optarg; break;
        case 'm': if (cli_double("--min-snr", optarg, -1e3, 1e3, &min_snr)) return EXIT_USAGE; break;
        case 'b':
            if (la_backend_parse(optarg, &backend, &err)) return cli_error(EXIT_USAGE, "--backend: %s", err.msg);
            break;
        case 't': if (cli_int("--threads", optarg, 0, 4096, &threads)) return EXIT_USAGE; break;
        case 'q': quiet = 1; break;
        case 'h': perfect_usage(stdout); return EXIT_OK;
        case ':': return cli_error(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
        default: return cli_unknown_option("perfect", argc, argv);
        }
    }
    if (optind < argc) return cli_error(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!size_s || !dir || !output)
        return cli_error(EXIT_USAGE, "perfect needs --size, --input-dir and --output");
    perfect_size size;
    if (perfect_size_parse(size_s, &size, &err)) return cli_error(EXIT_USAGE, "--size: %s", err.msg);
    if (stap_output_check(output, &err)) return cli_fail(&err);

    double t0 = la_now_ms();
    stap_input in;
    if (perfect_read_inputs(size, dir, &in, &err)) return cli_fail(&err);
    double read_ms = la_now_ms() - t0;
    stap_config cfg;
    perfect_config(size, &cfg);
    cfg.backend = backend;
    cfg.threads = threads;
    int status = EXIT_OK;
    stap_plan *plan = NULL;
    cf32 *W = NULL, *Y = NULL, *G = NULL;
    if (stap_plan_create(&plan, &cfg, in.steering, in.steering_beams, in.steering_len, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    size_t ny = stap_output_len(plan);
    W = malloc(sizeof(cf32) * stap_weights_len(plan));
    Y = malloc(sizeof(cf32) * ny);
    if (!W || !Y) {
        status = cli_error(EXIT_PROCESSING, "out of memory");
        goto out;
    }
    double timing[STAP_STAGE_COUNT];
    if (stap_plan_execute(plan, in.iq, W, Y, timing, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    double tw = la_now_ms();
    if (perfect_write_raw(output, Y, ny, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    double write_ms = la_now_ms() - tw;
    char name[64];
    snprintf(name, sizeof name, "PERFECT STAP %s", size_s);
    if (!quiet) cli_print_timing(stap_plan_config(plan), name, timing, read_ms, write_ms, la_now_ms() - t0);
    if (gold) {
        G = malloc(sizeof(cf32) * ny);
        if (!G) {
            status = cli_error(EXIT_PROCESSING, "out of memory");
            goto out;
        }
        if (perfect_read_raw(gold, ny, G, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        double snr = perfect_snr_db(G, Y, ny);
        printf("SNR against %s: %.1f dB (criterion %.0f dB): %s\n", gold, snr, min_snr,
               snr >= min_snr ? "pass" : "FAIL");
        if (!(snr >= min_snr))
            status = cli_error(EXIT_PROCESSING, "output agrees with '%s' at only %.1f dB (< %.0f dB)",
                               gold, snr, min_snr);
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
    static const struct option opts[] = {
        {"size", required_argument, 0, 's'}, {"input-dir", required_argument, 0, 'i'},
        {"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"cpis", required_argument, 0, 'n'}, {0, 0, 0, 0}};
    const char *size_s = NULL, *dir = NULL, *out = NULL;
    int cpis = 1;
    rt_error err;
    optind = 0; /* glibc: 0 starts afresh (1 kept an earlier parse's place in "-xy") */
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case 's': size_s = optarg; break;
        case 'i': dir = optarg; break;
        case 'o': out = optarg; break;
        case 'n': if (cli_int("--cpis", optarg, 1, 1000000, &cpis)) return EXIT_USAGE; break;
        case 'h':
            printf("usage: rtstap import-perfect --size small|medium|large --input-dir DIR --out FILE.h5\n"
                   "                             [--cpis N]\n\n"
                   "Writes the PERFECT STAP inputs as a schema-v1.1 file (with /steering); `rtstap run`\n"
                   "on it with the flags this command prints gives the output of `rtstap perfect`.\n"
                   "--cpis N writes a recording of N CPIs (the suite ships one CPI: it is repeated),\n"
                   "to time the whole chain from disk with `rtstap run` or `rtstap stream --input`.\n");
            return EXIT_OK;
        case ':': return cli_error(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
        default: return cli_unknown_option("import-perfect", argc, argv);
        }
    }
    if (optind < argc) return cli_error(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!size_s || !dir || !out)
        return cli_error(EXIT_USAGE, "import-perfect needs --size, --input-dir and --out");
    perfect_size size;
    if (perfect_size_parse(size_s, &size, &err)) return cli_error(EXIT_USAGE, "--size: %s", err.msg);
    stap_input in;
    if (perfect_read_inputs(size, dir, &in, &err)) return cli_fail(&err);
    int st;
    if (cpis == 1) {
        st = stap_input_write(out, &in, NULL, NULL, &err);
    } else {
        stap_recording_writer *rw = NULL;
        st = stap_recording_create(&rw, out, &in, cpis, &err);
        for (int c = 0; c < cpis && !st; c++) st = stap_recording_write(rw, c, in.iq, &err);
        if (st && rw) stap_recording_abort(rw);
        else if (!st) st = stap_recording_finish(rw, NULL, NULL, &err);
    }
    stap_input_free(&in);
    if (st) return cli_fail(&err);
    stap_config c;
    perfect_config(size, &c);
    printf("wrote %s; process it with:\n  rtstap run --input %s --output OUT.h5 --doppler-bins %d "
           "--doppler-order %d --segments %d --training %d\n",
           out, out, c.doppler_bins, c.doppler_order, c.segments, c.training);
    return EXIT_OK;
}
