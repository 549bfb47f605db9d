/* cmd_gen.c: `rtstap gen` — draw an airborne scene (datasets/scene.h) and write it as a
 * schema-v1.1 input file (axes labelled) with its /truth. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "report.h" /* cli_json_written */
#include "cli_opts.h"
#include "progress.h"
#include "cmd_scene.h"
#include "h5io.h"
#include "scene.h"

static const cli_command gen_cmd = {
    "gen",
    "Draw one CPI of an airborne scene: a side-looking uniform linear array on a moving\n"
    "platform, ground clutter as a ring of patches (Ward, MIT LL TR-1015), barrage\n"
    "jammers, thermal noise (unit power) and point targets. Writes a schema-v1.1 input\n"
    "file (/data/iq, /radar, /array) plus /truth: every parameter and what is needed\n"
    "to compute the exact clutter-plus-noise covariance (see rtstap sinr).\n",
    NULL};

/* What the options build: the scene, laid over the preset (applied first, wherever
 * --preset stands), and what is resolved after parsing. */
typedef struct gen_opts {
    scene_preset preset;
    scene_config cfg;
    int njam;          /* --jammer given so far: the first replaces the preset's */
    int have_velocity; /* --velocity last, rather than --beta                    */
    double beta;
    double drift[SCENE_MAX_TARGETS];
} gen_opts;

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

static int opt_preset(const cli_opt *o, const char *arg)
{
    gen_opts *g = o->value;
    stap_error err;
    if (stap_scene_preset_parse(arg, &g->preset, &err)) {
        cli_error(EXIT_USAGE, "--preset: %s", err.msg);
        return -1;
    }
    stap_scene_preset_config(g->preset, &g->cfg);
    return 0;
}

static int opt_jammer(const cli_opt *o, const char *arg)
{
    gen_opts *g = o->value;
    double f[2];
    if (parse_fields("--jammer U:JNR_DB", arg, 2, f)) return -1;
    if (g->njam >= SCENE_MAX_JAMMERS)
        return cli_error(EXIT_USAGE, "at most %d --jammer", SCENE_MAX_JAMMERS), -1;
    if (!(fabs(f[0]) <= 1))
        return cli_error(EXIT_USAGE, "--jammer U must be a sine-angle in [-1, 1] (got %g)", f[0]), -1;
    g->cfg.jammers[g->njam++] = (scene_jammer){f[0], f[1]};
    g->cfg.njammers = g->njam;
    return 0;
}

static int opt_no_jammers(const cli_opt *o, const char *arg)
{
    gen_opts *g = o->value;
    g->cfg.njammers = g->njam = 0;
    return 0;
}

static int opt_target(const cli_opt *o, const char *arg)
{
    scene_config *cfg = &((gen_opts *)o->value)->cfg;
    double f[5] = {0, 0, 0, 0, 0};
    int colons = 0;
    for (const char *p = arg; *p; p++) colons += *p == ':';
    if (parse_fields("--target RANGE_CELL:U:DOPPLER_HZ:SNR_DB[:EL_DEG]", arg, colons == 4 ? 5 : 4, f))
        return -1;
    if (!(fabs(f[4]) <= 90))
        return cli_error(EXIT_USAGE, "--target EL_DEG must be an elevation in [-90, 90] (got %g)", f[4]), -1;
    if (cfg->ntargets >= SCENE_MAX_TARGETS)
        return cli_error(EXIT_USAGE, "at most %d --target", SCENE_MAX_TARGETS), -1;
    if (f[0] != floor(f[0]) || f[0] < 0 || f[0] > 1e9)
        return cli_error(EXIT_USAGE, "--target RANGE_CELL must be a cell index (got %g)", f[0]), -1;
    if (!(fabs(f[1]) <= 1))
        return cli_error(EXIT_USAGE, "--target U must be a sine-angle in [-1, 1] (got %g)", f[1]), -1;
    cfg->targets[cfg->ntargets++] = (scene_target){(int)f[0], f[1], f[2], f[3], f[4]};
    return 0;
}

static int opt_drift(const cli_opt *o, const char *arg)
{
    gen_opts *g = o->value;
    double f[2];
    if (parse_fields("--target-drift TARGET:CELLS_PER_CPI", arg, 2, f)) return -1;
    if (f[0] != floor(f[0]) || f[0] < 0 || f[0] >= SCENE_MAX_TARGETS)
        return cli_error(EXIT_USAGE, "--target-drift TARGET must be a target number (got %g)",
                         f[0]), -1;
    g->drift[(int)f[0]] = f[1];
    return 0;
}

static int opt_beta(const cli_opt *o, const char *arg)
{
    gen_opts *g = o->value;
    if (cli_double("--beta", arg, 0, 1e3, &g->beta)) return -1;
    g->have_velocity = 0;
    return 0;
}

/* The scene into OUT: one CPI, or a recording of cpis CPIs (fresh noise, clutter and jammer
 * draws per CPI, seed + CPI index; targets moving by their drift; /truth describes CPI 0). */
static int gen_write(scene_truth *truth, stap_input *in, const double *drift, int cpis,
                     const char *out, stap_write_mode mode, progress *pg, stap_error *err)
{
    if (cpis == 1)
        return stap_scene_generate(truth, in->iq, err) ||
               stap_input_write(out, in, stap_scene_truth_write_hook, truth, &(stap_write_options){.mode = mode}, err);
    stap_recording_writer *rw = NULL;
    int failed = stap_recording_create(&rw, out, in, cpis, &(stap_write_options){.mode = mode}, err) != STAP_OK;
    const scene_truth base = *truth;
    for (int c = 0; c < cpis && !failed; c++) {
        truth->cfg.seed = base.cfg.seed + (uint64_t)c;
        for (int k = 0; k < base.cfg.ntargets; k++)
            truth->cfg.targets[k].range_cell =
                (int)lround(base.cfg.targets[k].range_cell + drift[k] * c);
        failed = stap_scene_generate(truth, in->iq, err) || stap_recording_write(rw, c, in->iq, err);
        progress_update(pg, c + 1);
    }
    truth->cfg = base.cfg;
    if (failed) {
        stap_recording_abort(rw);
        return 1;
    }
    return stap_recording_finish(rw, stap_scene_truth_write_hook, truth, err) != STAP_OK;
}

static void gen_summary(const scene_truth *truth, scene_preset preset, int cpis, const char *out)
{
    const scene_config *cfg = &truth->cfg;
    if (cpis > 1) fprintf(stderr, "rtstap gen: a recording of %d CPIs\n", cpis);
    fprintf(stderr,
            "rtstap gen: %s scene, %d channels x %d pulses x %d range gates -> %s\n"
            "  d = %g lambda, carrier %g Hz, PRF %g Hz, v = %.3f m/s, beta = %.4f, "
            "depression %.2f deg\n",
            stap_scene_preset_name(preset), cfg->channels, cfg->pulses, cfg->range_gates, out,
            cfg->element_spacing, cfg->carrier_hz, cfg->prf_hz, cfg->velocity_mps, truth->beta,
            truth->depression_rad * 180 / M_PI);
    if (truth->patches)
        fprintf(stderr, "  clutter: CNR %g dB over %d patches\n", cfg->cnr_db, truth->patches);
    else
        fprintf(stderr, "  clutter: none\n");
    for (int j = 0; j < cfg->njammers; j++)
        fprintf(stderr, "  jammer %d: u = %g, JNR %g dB\n", j, cfg->jammers[j].u,
                cfg->jammers[j].jnr_db);
    for (int k = 0; k < cfg->ntargets; k++) {
        const scene_target *t = &cfg->targets[k];
        double w = t->doppler_hz / cfg->prf_hz;
        fprintf(stderr, "  target %d: range cell %d, u = %g, Doppler %g Hz (%.4f cycles/pulse, "
                "bin %.2f of %d), SNR %g dB per element and pulse\n", k, t->range_cell, t->u,
                t->doppler_hz, w, fmod(fmod(w, 1.0) + 1.0, 1.0) * cfg->pulses, cfg->pulses,
                t->snr_db);
    }
}

/* --json: the file written and its scene (the truth /truth holds) */
static int gen_json(const char *json, stap_write_mode mode, const scene_truth *truth,
                    scene_preset preset, int cpis, const char *out)
{
    const scene_config *c = &truth->cfg;
    cJSON *doc = cli_json_written("gen", out, c->channels, c->pulses, c->range_gates, cpis);
    if (!doc) return cli_error(EXIT_PROCESSING, "out of memory");
    cJSON_AddStringToObject(doc, "scene", stap_scene_preset_name(preset));
    cJSON_AddNumberToObject(doc, "element_spacing_wavelengths", c->element_spacing);
    cJSON_AddNumberToObject(doc, "carrier_frequency_hz", c->carrier_hz);
    cJSON_AddNumberToObject(doc, "prf_hz", c->prf_hz);
    cJSON_AddNumberToObject(doc, "clutter_patches", truth->patches);
    if (truth->patches) cJSON_AddNumberToObject(doc, "cnr_db", c->cnr_db);
    cJSON *jam = cJSON_AddArrayToObject(doc, "jammers");
    for (int k = 0; jam && k < c->njammers; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "u", c->jammers[k].u);
        cJSON_AddNumberToObject(o, "jnr_db", c->jammers[k].jnr_db);
        cJSON_AddItemToArray(jam, o);
    }
    cJSON *tg = cJSON_AddArrayToObject(doc, "targets");
    for (int k = 0; tg && k < c->ntargets; k++) {
        const scene_target *t = &c->targets[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "range_cell", t->range_cell);
        cJSON_AddNumberToObject(o, "u", t->u);
        cJSON_AddNumberToObject(o, "doppler_hz", t->doppler_hz);
        cJSON_AddNumberToObject(o, "snr_db", t->snr_db);
        cJSON_AddItemToArray(tg, o);
    }
    stap_error err;
    const int st = cli_json_write(json, doc, mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return st;
}

static int gen_scene(gen_opts *gp, const char *out, const char *json, stap_write_mode mode,
                     int cpis, int quiet, int progress_mode);

int cmd_gen(int argc, char **argv)
{
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.preset = SCENE_PRESET_WARD;
    stap_scene_preset_config(g.preset, &g.cfg);
    g.beta = 1.0;
    scene_config *c = &g.cfg;
    const char *out = NULL, *json = NULL, *array_file = NULL;
    int quiet = 0, cpis = 1, force = 0, seed_given = 0, progress_mode = PROGRESS_AUTO, channels_given = 0;
    unsigned long long seed = 0;
    stap_error err;
    stap_error_clear(&err);
    cli_opt opts[] = {
        {"preset", 0, CLI_CALL, &g, "NAME",
         "ward (default): 18 elements at lambda/2, 18 pulses,\n"
         "beta = 1, CNR 47 dB, jammers at u = -0.3 and 0.5 (35 dB),\n"
         "300 range gates; easy | medium | hard: the cube shapes of\n"
         "the run presets, CNR 40 dB, the same jammers; the other\n"
         "options override it, wherever it stands",
         .parse = opt_preset, .flags = CLI_EARLY},
        {"output", 'o', CLI_STRING, &out, "FILE",
         "output file (written atomically; an existing file is refused\n"
         "without -f)", .alias = "out", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        CLI_OPT_JSON(&json),
        {"cpis", 0, CLI_INT, &cpis, "N",
         "a recording of N CPIs (/data/iq: N x C x P x R; fresh noise,\n"
         "clutter and jammer draws per CPI; /truth describes CPI 0)", .lo = 1, .hi = 1000000},
        {"target-drift", 0, CLI_CALL, &g, "T:CELLS",
         "targets move: target T (0-based, in --target order) moves\n"
         "CELLS range cells per CPI (fractions round)", .parse = opt_drift},
        {"seed", 0, CLI_U64, &seed, "N", "random seed (default 1)", .given = &seed_given},
        /* --cnr turns the clutter on (given), --no-clutter off: the last one holds */
        {"cnr", 0, CLI_DOUBLE, &c->cnr_db, "DB",
         "total clutter-to-noise ratio per element and pulse", .lo = -150, .hi = 150,
         .given = &c->clutter},
        {"no-clutter", 0, CLI_CLEAR, &c->clutter, NULL, "no ground clutter"},
        {"jammer", 0, CLI_CALL, &g, "U:JNR_DB",
         "a barrage jammer at sine-angle U; repeatable; the first\n"
         "one replaces the preset's jammers", .parse = opt_jammer},
        {"no-jammers", 0, CLI_CALL, &g, NULL, "no jammers", .parse = opt_no_jammers},
        {"target", 0, CLI_CALL, &g, "R:U:FD:SNR[:EL]",
         "a point target in range cell R at sine-angle U (the sine\n"
         "of its azimuth), Doppler FD Hz, SNR dB per element and\n"
         "pulse, elevation EL degrees (default 0); repeatable", .parse = opt_target},
        {"array", 0, CLI_STRING, &array_file, "FILE",
         "the array of FILE's /array (element positions, calibration;\n"
         "docs/file-format.md): clutter, jammers and targets through\n"
         "its geometry, the data times its gains; written to the\n"
         "output's /array (the channels are its elements)", .flags = CLI_INPUT},
        {"velocity", 0, CLI_DOUBLE, &c->velocity_mps, "MPS",
         "platform speed (default: the one giving beta = 1,\n"
         "beta = 2 v / (PRF d))", .lo = 0, .hi = 1e5, .given = &g.have_velocity},
        {"beta", 0, CLI_CALL, &g, "B", "set the velocity from beta instead", .parse = opt_beta},
        {"prf", 0, CLI_DOUBLE, &c->prf_hz, "HZ", "pulse repetition frequency (default 300)",
         .lo = 1e-3, .hi = 1e9},
        {"carrier", 0, CLI_DOUBLE, &c->carrier_hz, "HZ", "carrier frequency (default 450e6)",
         .lo = 1, .hi = 1e13},
        {"spacing", 0, CLI_DOUBLE, &c->element_spacing, "D",
         "element spacing in wavelengths (default 0.5)", .lo = 1e-3, .hi = 100},
        {"channels", 0, CLI_INT, &c->channels, "C", "cube shape: channels", .lo = 1, .hi = 4096,
         .given = &channels_given},
        {"pulses", 0, CLI_INT, &c->pulses, "P", "pulses", .lo = 1, .hi = 1 << 20},
        {"range-gates", 0, CLI_INT, &c->range_gates, "R", "range gates", .lo = 1, .hi = 1 << 24},
        {"patches", 0, CLI_INT, &c->patches, "NC",
         "clutter patches on the ring (default max(360, 8 (C + P)))", .lo = 1, .hi = 1000000},
        {"altitude", 0, CLI_DOUBLE, &c->altitude_m, "M", "platform altitude (default 9000)",
         .lo = 1e-3, .hi = 1e9},
        {"slant-range", 0, CLI_DOUBLE, &c->slant_range_m, "M",
         "slant range of the clutter ring (default 100e3)", .lo = 1e-3, .hi = 1e10},
        {"quiet", 0, CLI_FLAG, &quiet, NULL, "no summary on stderr"},
        CLI_OPT_PROGRESS(&progress_mode),
        {0}};
    int pst = cli_parse(&gen_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if ((pst = cli_output_ok(out, force)) || (pst = cli_output_ok(json, force))) return pst;
    const stap_write_mode mode = cli_write_mode(force);
    if (seed_given) c->seed = seed;
    double *position = NULL;
    stap_cf32 *calibration = NULL;
    if (array_file) { /* the geometry: its elements are the channels */
        int n = 0;
        if (stap_array_read(array_file, c->carrier_hz, &n, &position, &calibration, &err))
            return cli_fail(&err);
        if (channels_given && n != c->channels) {
            free(position);
            free(calibration);
            return cli_error(EXIT_USAGE, "--channels %d, but --array %s has %d elements", c->channels,
                             array_file, n);
        }
        c->channels = n;
        c->position = position;
        c->calibration = calibration;
    }
    const int status = gen_scene(&g, out, json, mode, cpis, quiet, progress_mode);
    free(position);
    free(calibration);
    return status;
}

/* the scene of g's options into out (and its report) */
static int gen_scene(gen_opts *gp, const char *out, const char *json, stap_write_mode mode,
                     int cpis, int quiet, int progress_mode)
{
    const gen_opts g = *gp;
    stap_error err;
    stap_error_clear(&err);
    scene_config cfg = g.cfg;
    const scene_preset preset = g.preset;
    const double *drift = g.drift;
    const int have_velocity = g.have_velocity;
    const double beta = g.beta;
    if (!have_velocity) cfg.velocity_mps = stap_scene_velocity_for_beta(&cfg, beta);

    scene_truth truth;
    if (stap_scene_truth_build(&cfg, &truth, &err)) return cli_error(EXIT_USAGE, "%s", err.msg);
    stap_input in;
    memset(&in, 0, sizeof in);
    in.channels = cfg.channels;
    in.pulses = cfg.pulses;
    in.range_gates = cfg.range_gates;
    in.iq = malloc(sizeof(stap_cf32) * (size_t)cfg.channels * cfg.pulses * cfg.range_gates);
    if (!in.iq) {
        stap_scene_truth_free(&truth);
        return cli_error(EXIT_PROCESSING, "out of memory for a %d x %d x %d cube", cfg.channels,
                         cfg.pulses, cfg.range_gates);
    }
    stap_scene_radar_meta(&truth, &in.meta);
    in.array_position = (double *)cfg.position; /* written to /array; freed by cmd_gen */
    in.array_calibration = (stap_cf32 *)cfg.calibration;
    int status = EXIT_OK;
    for (int k = 0; k < cfg.ntargets && cpis > 1; k++) {
        const double last = cfg.targets[k].range_cell + drift[k] * (cpis - 1);
        if (lround(last) < 0 || lround(last) >= cfg.range_gates) {
            free(in.iq);
            stap_scene_truth_free(&truth);
            return cli_error(EXIT_USAGE, "target %d drifts to range cell %.0f by CPI %d, outside "
                             "0..%d", k, last, cpis - 1, cfg.range_gates - 1);
        }
    }
    progress pg;
    progress_begin(&pg, cpis > 1 ? progress_mode : PROGRESS_NONE, quiet, "gen", "CPIs", cpis);
    const int failed = gen_write(&truth, &in, drift, cpis, out, mode, &pg, &err);
    progress_end(&pg);
    if (failed) status = cli_fail(&err);
    else if (!quiet) gen_summary(&truth, preset, cpis, out);
    if (!failed && json) status = gen_json(json, mode, &truth, preset, cpis, out);
    free(in.iq);
    stap_scene_truth_free(&truth);
    return status;
}
