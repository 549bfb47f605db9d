/* cmd_gen.c: `rtstap gen` — draw an airborne scene (datasets/scene.h) and write it as a
 * schema-v1.1 input file (axes labelled) with its /truth. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_scene.h"
#include "h5io.h"
#include "scene.h"

static void gen_usage(FILE *f)
{
    fprintf(f,
        "usage: rtstap gen [--preset easy|medium|hard|ward] --out FILE [options]\n"
        "\n"
        "Draw one CPI of an airborne scene: a side-looking uniform linear array on a moving\n"
        "platform, ground clutter as a ring of patches (Ward, MIT LL TR-1015), barrage\n"
        "jammers, thermal noise (unit power) and point targets. Writes a schema-v1.1 input\n"
        "file (/data/iq, /radar, /array) plus /truth: every parameter and what is needed\n"
        "to compute the exact clutter-plus-noise covariance (see rtstap sinr).\n"
        "\n"
        "  --preset NAME          ward (default): 18 elements at lambda/2, 18 pulses,\n"
        "                         beta = 1, CNR 47 dB, jammers at u = -0.3 and 0.5 (35 dB),\n"
        "                         300 range gates; easy | medium | hard: the cube shapes of\n"
        "                         the run presets, CNR 40 dB, the same jammers\n"
        "  --out FILE             output file (must not exist; written atomically)\n"
        "  --cpis N               a recording of N CPIs (/data/iq: N x C x P x R; fresh noise,\n"
        "                         clutter and jammer draws per CPI; /truth describes CPI 0)\n"
        "  --target-drift T:CELLS targets move: target T (0-based, in --target order) moves\n"
        "                         CELLS range cells per CPI (fractions round)\n"
        "  --seed N               random seed (default 1)\n"
        "  --cnr DB               total clutter-to-noise ratio per element and pulse\n"
        "  --no-clutter           no ground clutter\n"
        "  --jammer U:JNR_DB      a barrage jammer at sine-angle U; repeatable; the first\n"
        "                         one replaces the preset's jammers\n"
        "  --no-jammers           no jammers\n"
        "  --target R:U:FD:SNR    a point target in range cell R at sine-angle U, Doppler\n"
        "                         FD Hz, SNR dB per element and pulse; repeatable\n"
        "  --velocity MPS         platform speed (default: the one giving beta = 1,\n"
        "                         beta = 2 v / (PRF d))\n"
        "  --beta B               set the velocity from beta instead\n"
        "  --prf HZ               pulse repetition frequency (default 300)\n"
        "  --carrier HZ           carrier frequency (default 450e6)\n"
        "  --spacing D            element spacing in wavelengths (default 0.5)\n"
        "  --channels C --pulses P --range-gates R   cube shape\n"
        "  --patches NC           clutter patches on the ring (default max(360, 8 (C + P)))\n"
        "  --altitude M           platform altitude (default 9000)\n"
        "  --slant-range M        slant range of the clutter ring (default 100e3)\n"
        "  --quiet                no summary on stderr\n"
        "  --help                 this text\n");
}

/* "a:b[:c...]": exactly n numbers */
static int parse_fields(const char *flag, const char *s, int n, double *v)
{
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        if (end == p || errno || !isfinite(v[i]) || (i < n - 1 ? *end != ':' : *end != '\0')) {
            cli_error(EXIT_USAGE, "%s expects %d numbers separated by ':' (got '%s')", flag, n, s);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

int cmd_gen(int argc, char **argv)
{
    enum { O_PRESET = 256, O_OUT, O_SEED, O_CNR, O_NOCLUT, O_JAM, O_NOJAM, O_TGT, O_VEL, O_BETA,
           O_PRF, O_CARRIER, O_SPACING, O_CH, O_PU, O_RG, O_PATCH, O_ALT, O_SLANT, O_QUIET,
           O_HELP, O_CPIS, O_DRIFT };
    static const struct option opts[] = {
        {"preset", required_argument, 0, O_PRESET},   {"out", required_argument, 0, O_OUT},
        {"seed", required_argument, 0, O_SEED},       {"cnr", required_argument, 0, O_CNR},
        {"no-clutter", no_argument, 0, O_NOCLUT},     {"jammer", required_argument, 0, O_JAM},
        {"no-jammers", no_argument, 0, O_NOJAM},      {"target", required_argument, 0, O_TGT},
        {"velocity", required_argument, 0, O_VEL},    {"beta", required_argument, 0, O_BETA},
        {"prf", required_argument, 0, O_PRF},         {"carrier", required_argument, 0, O_CARRIER},
        {"spacing", required_argument, 0, O_SPACING}, {"channels", required_argument, 0, O_CH},
        {"pulses", required_argument, 0, O_PU},       {"range-gates", required_argument, 0, O_RG},
        {"patches", required_argument, 0, O_PATCH},   {"altitude", required_argument, 0, O_ALT},
        {"slant-range", required_argument, 0, O_SLANT}, {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP},             {"cpis", required_argument, 0, O_CPIS},
        {"target-drift", required_argument, 0, O_DRIFT}, {0, 0, 0, 0}};

    /* First pass: the preset, so that the flags override it whatever their order. */
    scene_preset preset = SCENE_PRESET_WARD;
    int cpis = 1;
    double drift[SCENE_MAX_TARGETS] = {0};
    rt_error err;
    rt_clear(&err);
    optind = 0; /* glibc: 0 starts afresh (1 kept an earlier parse's place in "-xy") */
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (o == O_HELP) {
            gen_usage(stdout);
            return EXIT_OK;
        }
        if (o == O_PRESET && scene_preset_parse(optarg, &preset, &err))
            return cli_error(EXIT_USAGE, "--preset: %s", err.msg);
        if (o == ':') return cli_error(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
        if (o == '?')
            return cli_unknown_option("gen", argc, argv);
    }
    if (optind < argc) return cli_error(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);

    scene_config cfg;
    scene_preset_config(preset, &cfg);
    const char *out = NULL;
    int quiet = 0, njam = 0, have_velocity = 0;
    double beta = 1.0;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case O_PRESET: break;
        case O_OUT: out = optarg; break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || optarg[0] == '-')
                return cli_error(EXIT_USAGE, "--seed expects a non-negative integer (got '%s')",
                                 optarg);
            cfg.seed = s;
            break;
        }
        case O_CNR:
            if (cli_double("--cnr", optarg, -150, 150, &cfg.cnr_db)) return EXIT_USAGE;
            cfg.clutter = 1;
            break;
        case O_NOCLUT: cfg.clutter = 0; break;
        case O_JAM: {
            double f[2];
            if (parse_fields("--jammer U:JNR_DB", optarg, 2, f)) return EXIT_USAGE;
            if (njam >= SCENE_MAX_JAMMERS)
                return cli_error(EXIT_USAGE, "at most %d --jammer", SCENE_MAX_JAMMERS);
            if (!(fabs(f[0]) <= 1))
                return cli_error(EXIT_USAGE, "--jammer U must be a sine-angle in [-1, 1] (got %g)", f[0]);
            cfg.jammers[njam++] = (scene_jammer){f[0], f[1]};
            cfg.njammers = njam;
            break;
        }
        case O_NOJAM: cfg.njammers = 0; njam = 0; break;
        case O_TGT: {
            double f[4];
            if (parse_fields("--target RANGE_CELL:U:DOPPLER_HZ:SNR_DB", optarg, 4, f))
                return EXIT_USAGE;
            if (cfg.ntargets >= SCENE_MAX_TARGETS)
                return cli_error(EXIT_USAGE, "at most %d --target", SCENE_MAX_TARGETS);
            if (f[0] != floor(f[0]) || f[0] < 0 || f[0] > 1e9)
                return cli_error(EXIT_USAGE, "--target RANGE_CELL must be a cell index (got %g)", f[0]);
            if (!(fabs(f[1]) <= 1))
                return cli_error(EXIT_USAGE, "--target U must be a sine-angle in [-1, 1] (got %g)", f[1]);
            cfg.targets[cfg.ntargets++] = (scene_target){(int)f[0], f[1], f[2], f[3]};
            break;
        }
        case O_CPIS: if (cli_int("--cpis", optarg, 1, 1000000, &cpis)) return EXIT_USAGE; break;
        case O_DRIFT: {
            double f[2];
            if (parse_fields("--target-drift TARGET:CELLS_PER_CPI", optarg, 2, f)) return EXIT_USAGE;
            if (f[0] != floor(f[0]) || f[0] < 0 || f[0] >= SCENE_MAX_TARGETS)
                return cli_error(EXIT_USAGE, "--target-drift TARGET must be a target number (got %g)", f[0]);
            drift[(int)f[0]] = f[1];
            break;
        }
        case O_VEL:
            if (cli_double("--velocity", optarg, 0, 1e5, &cfg.velocity_mps)) return EXIT_USAGE;
            have_velocity = 1;
            break;
        case O_BETA:
            if (cli_double("--beta", optarg, 0, 1e3, &beta)) return EXIT_USAGE;
            have_velocity = 0;
            break;
        case O_PRF: if (cli_double("--prf", optarg, 1e-3, 1e9, &cfg.prf_hz)) return EXIT_USAGE; break;
        case O_CARRIER: if (cli_double("--carrier", optarg, 1, 1e13, &cfg.carrier_hz)) return EXIT_USAGE; break;
        case O_SPACING: if (cli_double("--spacing", optarg, 1e-3, 100, &cfg.element_spacing)) return EXIT_USAGE; break;
        case O_CH: if (cli_int("--channels", optarg, 1, 4096, &cfg.channels)) return EXIT_USAGE; break;
        case O_PU: if (cli_int("--pulses", optarg, 1, 1 << 20, &cfg.pulses)) return EXIT_USAGE; break;
        case O_RG: if (cli_int("--range-gates", optarg, 1, 1 << 24, &cfg.range_gates)) return EXIT_USAGE; break;
        case O_PATCH: if (cli_int("--patches", optarg, 1, 1000000, &cfg.patches)) return EXIT_USAGE; break;
        case O_ALT: if (cli_double("--altitude", optarg, 1e-3, 1e9, &cfg.altitude_m)) return EXIT_USAGE; break;
        case O_SLANT: if (cli_double("--slant-range", optarg, 1e-3, 1e10, &cfg.slant_range_m)) return EXIT_USAGE; break;
        case O_QUIET: quiet = 1; break;
        default: break; /* reported in the first pass */
        }
    }
    if (!out) return cli_error(EXIT_USAGE, "gen needs --out FILE (see rtstap gen --help)");
    if (!have_velocity) cfg.velocity_mps = scene_velocity_for_beta(&cfg, beta);

    scene_truth truth;
    if (scene_truth_build(&cfg, &truth, &err)) return cli_error(EXIT_USAGE, "%s", err.msg);
    stap_input in;
    memset(&in, 0, sizeof in);
    in.channels = cfg.channels;
    in.pulses = cfg.pulses;
    in.range_gates = cfg.range_gates;
    in.iq = malloc(sizeof(cf32) * (size_t)cfg.channels * cfg.pulses * cfg.range_gates);
    if (!in.iq) {
        scene_truth_free(&truth);
        return cli_error(EXIT_PROCESSING, "out of memory for a %d x %d x %d cube", cfg.channels,
                         cfg.pulses, cfg.range_gates);
    }
    scene_radar_meta(&truth, &in.meta);
    int status = EXIT_OK;
    for (int k = 0; k < cfg.ntargets && cpis > 1; k++) {
        const double last = cfg.targets[k].range_cell + drift[k] * (cpis - 1);
        if (lround(last) < 0 || lround(last) >= cfg.range_gates) {
            free(in.iq);
            scene_truth_free(&truth);
            return cli_error(EXIT_USAGE, "target %d drifts to range cell %.0f by CPI %d, outside "
                             "0..%d", k, last, cpis - 1, cfg.range_gates - 1);
        }
    }
    int failed;
    if (cpis == 1) {
        failed = scene_generate(&truth, in.iq, &err) ||
                 stap_input_write(out, &in, scene_truth_write_hook, &truth, &err);
    } else {
        /* a recording: fresh noise, clutter and jammer draws per CPI (seed + CPI index),
         * targets moving by their drift; /truth describes CPI 0 */
        stap_recording_writer *rw = NULL;
        failed = stap_recording_create(&rw, out, &in, cpis, &err) != RT_OK;
        const scene_truth base = truth;
        for (int c = 0; c < cpis && !failed; c++) {
            truth.cfg.seed = base.cfg.seed + (uint64_t)c;
            for (int k = 0; k < cfg.ntargets; k++)
                truth.cfg.targets[k].range_cell =
                    (int)lround(base.cfg.targets[k].range_cell + drift[k] * c);
            failed = scene_generate(&truth, in.iq, &err) || stap_recording_write(rw, c, in.iq, &err);
        }
        truth.cfg = base.cfg;
        if (failed) stap_recording_abort(rw);
        else failed = stap_recording_finish(rw, scene_truth_write_hook, &truth, &err) != RT_OK;
    }
    if (failed) {
        status = cli_fail(&err);
    } else if (!quiet) {
        if (cpis > 1) fprintf(stderr, "rtstap gen: a recording of %d CPIs\n", cpis);
        fprintf(stderr,
                "rtstap gen: %s scene, %d channels x %d pulses x %d range gates -> %s\n"
                "  d = %g lambda, carrier %g Hz, PRF %g Hz, v = %.3f m/s, beta = %.4f, "
                "depression %.2f deg\n",
                scene_preset_name(preset), cfg.channels, cfg.pulses, cfg.range_gates, out,
                cfg.element_spacing, cfg.carrier_hz, cfg.prf_hz, cfg.velocity_mps, truth.beta,
                truth.depression_rad * 180 / M_PI);
        if (truth.patches)
            fprintf(stderr, "  clutter: CNR %g dB over %d patches\n", cfg.cnr_db, truth.patches);
        else
            fprintf(stderr, "  clutter: none\n");
        for (int j = 0; j < cfg.njammers; j++)
            fprintf(stderr, "  jammer %d: u = %g, JNR %g dB\n", j, cfg.jammers[j].u,
                    cfg.jammers[j].jnr_db);
        for (int k = 0; k < cfg.ntargets; k++) {
            const scene_target *t = &cfg.targets[k];
            double w = t->doppler_hz / cfg.prf_hz;
            fprintf(stderr, "  target %d: range cell %d, u = %g, Doppler %g Hz (%.4f cycles/pulse, "
                    "bin %.2f of %d), SNR %g dB per element and pulse\n", k, t->range_cell, t->u,
                    t->doppler_hz, w, fmod(fmod(w, 1.0) + 1.0, 1.0) * cfg.pulses, cfg.pulses,
                    t->snr_db);
        }
    }
    free(in.iq);
    scene_truth_free(&truth);
    return status;
}
