/* cmd_plot.c: `rtstap plot` — pictures (PNG, SVG or PDF, drawn with cairo) of a scene or a
 * recording's CPI and of a run on it: the
 * angle–Doppler spectrum of the input, the SINR loss against Doppler (of one run, or of
 * several runs' tables on one plot), the range–Doppler map of the output with its
 * detections, and the angle–Doppler response of the adapted weights beside the
 * clairvoyant optimum (stap/plot/plot.h; the response from datasets/scene_response.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "env.h"
#include "cfar.h"
#include "cli_files.h"
#include "cli_opts.h"
#include "report.h"
#include "cli_json.h"
#include "cmd_scene.h"
#include "h5io.h"
#include "plot.h"
#include "result_info.h"
#include "scene_response.h"
#include "scene_sinr.h"

static const cli_command plot_cmd = {
    "plot",
    "Writes pictures into DIR (created if missing; existing pictures are replaced\n"
    "only with -f), PNG unless --format says svg or pdf:\n"
    "  angle_doppler.png  the angle-Doppler spectrum of the input around a range cell\n"
    "  sinr_loss.png      SINR loss against Doppler, optimum and adaptive (needs --sinr,\n"
    "                     or --result with a scene that has /truth)\n"
    "  range_doppler.png  the output of one beam against range and Doppler, detections\n"
    "                     ringed (needs --result; without /detections in it, the CFAR\n"
    "                     below is run)\n"
    "  sinr_compare.png   the SINR loss of every --sinr table on one plot, adaptive solid\n"
    "                     and optimum dashed (needs two or more --sinr)\n"
    "  adapted_response.png\n"
    "                     |w^H s(u, f)|^2 over sine-space angle u and Doppler f of the\n"
    "                     run's weights for one Doppler bin, segment and beam, beside the\n"
    "                     clairvoyant optimum R^-1 v from the scene's true covariance\n"
    "                     (needs --result and a scene with /truth; when a --response-*\n"
    "                     option asks for it, their absence is an error)\n"
    "`rtstap plot RESULT --output-dir DIR` draws a result of 'rtstap run' over the input\n"
    "its /config names (the path as run was given it).\n"
    "A recording's CPI is drawn with --cpi K (its results with it: the result's row of\n"
    "input CPI K). The beam drawn is the one of the strongest detection (else the one\n"
    "nearest the first target, else broadside); range is in km from the first gate when\n"
    "the input has a sample rate, Doppler in Hz when it has a PRF. --xlim and --ylim show a\n"
    "part of the SINR plots (the maps show all of their data).\n",
    NULL};

/* --response-grid NU,NF */
typedef struct {
    int nu, nf;
} response_grid;

static int opt_response_grid(const cli_opt *o, const char *arg)
{
    response_grid *g = o->value;
    char *end;
    long nu = strtol(arg, &end, 10), nf = 0;
    if (*end == ',') nf = strtol(end + 1, &end, 10);
    if (*end || nu < 2 || nu > SCENE_RESPONSE_MAX_POINTS || nf < 1 ||
        nf > SCENE_RESPONSE_MAX_POINTS) {
        cli_error(EXIT_USAGE, "--%s expects NU,NF: 2..%d angles and 1..%d Dopplers (got '%s')",
                  o->name, SCENE_RESPONSE_MAX_POINTS, SCENE_RESPONSE_MAX_POINTS, arg);
        return -1;
    }
    g->nu = (int)nu;
    g->nf = (int)nf;
    return 0;
}

static int make_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return 0;
        return cli_error(EXIT_PROCESSING, "--output-dir '%s' exists and is not a directory", dir);
    }
    if (mkdir(dir, 0777) != 0)
        return cli_error(EXIT_PROCESSING, "cannot create --output-dir '%s': %s", dir, strerror(errno));
    return 0;
}

/* --xlim/--ylim LO,HI */
static int opt_limits(const cli_opt *o, const char *arg)
{
    double *lim = o->value;
    char *end;
    errno = 0;
    const double lo = strtod(arg, &end);
    double hi = NAN;
    if (*end == ',') hi = strtod(end + 1, &end);
    if (*end || errno || !isfinite(lo) || !isfinite(hi) || !(hi > lo)) {
        cli_error(EXIT_USAGE, "--%s expects LO,HI with LO < HI, in the axis' units (got '%s')",
                  o->name, arg);
        return -1;
    }
    lim[0] = lo;
    lim[1] = hi;
    return 0;
}

/* --format png|svg|pdf */
static int opt_format(const cli_opt *o, const char *arg)
{
    static const char *const names[] = {"png", "svg", "pdf"};
    for (int k = 0; k < 3; k++)
        if (!strcasecmp(arg, names[k])) {
            snprintf(o->value, 8, "%s", names[k]);
            return 0;
        }
    cli_error(EXIT_USAGE, "--format expects png, svg or pdf (got '%s')", arg);
    return -1;
}

/* One `rtstap plot`: its options, then what it read. */
typedef struct plot_job {
    const char *input, *result, *dir, *json;
    char run_input[512];   /* the input a result's /config names (plot RESULT) */
    char ext[8];           /* --format: png, svg or pdf */
    int cpi;               /* --cpi: the input's CPI (a recording's)       */
    stap_plot_view view;   /* --xlim, --ylim: the SINR plots' axes          */
    double *range_m;       /* the range of each gate from the first, or NULL */
    char cpi_note[64];     /* "CPI 7" for a recording's titles              */
    const char *beam_from; /* how the beam was chosen, for --json           */
    char written[5][4096]; /* the pictures written, for --json */
    int nwritten;
    stap_plot_held held;   /* the pictures until all are written */
    int rc, half, beam, force, resp_bin, resp_seg, resp_beam, resp_asked;
    response_grid grid;
    double taper_db, resp_floor;
    cli_strings sinrs, labels;
    cli_input_opts inopts; /* --layout, --strict */
    stap_cfar_config cfar;
    stap_write_mode mode;
    stap_input in;
    scene_truth truth;
    stap_run_data run;
    stap_sinr_result sr, more[STAP_PLOT_SINR_MAX_TABLES]; /* more[k]: --sinr number k+2 */
    int have_truth, have_run, have_sinr, nmore;
    int truth_array;                /* the truth's scene was drawn through /array */
    stap_error truth_err;
    double prf, spacing;
} plot_job;

static int plot_parse(plot_job *j, int argc, char **argv)
{
    j->rc = -1;
    j->half = 16;
    snprintf(j->ext, sizeof j->ext, "png");
    j->beam = j->resp_bin = j->resp_seg = j->resp_beam = -1;
    j->grid = (response_grid){241, 0};
    j->taper_db = 70;
    j->resp_floor = -60;
    stap_cfar_defaults(&j->cfar);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &j->input, "FILE",
         "the input cube (a scene from 'rtstap gen' or any schema-v1.1\n"
         "file); a result of 'rtstap run' instead, without --result:\n"
         "that result, over the input its /config names",
         .flags = CLI_REQUIRED | CLI_INPUT | CLI_POSITIONAL},
        CLI_OPT_LAYOUT(&j->inopts),
        CLI_OPT_DATASET(&j->inopts),
        CLI_OPT_STRICT(&j->inopts, "refuse an input without axis labels"),
        CLI_OPT_SCALE(&j->inopts),
        {"result", 0, CLI_STRING, &j->result, "FILE", "a result of 'rtstap run' on it", .flags = CLI_INPUT},
        {"sinr", 0, CLI_STRINGS, &j->sinrs, "FILE",
         "a table of 'rtstap sinr'; repeated (e.g. the Q = 1 and Q = 3\n"
         "runs on one scene): sinr_loss.png shows the first,\n"
         "sinr_compare.png all of them", .hi = STAP_PLOT_SINR_MAX_TABLES, .flags = CLI_INPUT},
        {"label", 0, CLI_STRINGS, &j->labels, "TEXT",
         "legend of the k-th --sinr table in sinr_compare.png\n"
         "(default: its configuration, e.g. \"Q=3, K=150\")",
         .hi = STAP_PLOT_SINR_MAX_TABLES},
        {"output-dir", 0, CLI_STRING, &j->dir, "DIR", "where the pictures go", .alias = "out-dir",
         .flags = CLI_REQUIRED},
        {"cpi", 0, CLI_INT, &j->cpi, "K",
         "a recording's CPI to draw (default 0), and its results'\n"
         "row (the result's /axes/input_cpi)", .lo = 0, .hi = 1 << 30},
        {"format", 0, CLI_CALL, j->ext, "F",
         "png (default), svg or pdf: one drawing, as pixels or as\n"
         "vectors", .parse = opt_format},
        {"xlim", 0, CLI_CALL, j->view.xlim, "LO,HI",
         "the Doppler shown in the SINR plots (Hz, or cycles per pulse\n"
         "without a PRF)", .parse = opt_limits},
        {"ylim", 0, CLI_CALL, j->view.ylim, "LO,HI",
         "the SINR loss shown in the SINR plots (dB)", .parse = opt_limits},
        CLI_OPT_FORCE(&j->force),
        CLI_OPT_JSON(&j->json),
        {"range-cell", 0, CLI_INT, &j->rc, "R",
         "centre of the angle-Doppler window (default: the first\n"
         "target's cell, else the middle)", .lo = 0, .hi = 1 << 30},
        {"window-cells", 0, CLI_INT, &j->half, "H",
         "average the spectrum over R-H..R+H (default 16)", .lo = 0, .hi = 1 << 20},
        {"taper-db", 0, CLI_DOUBLE, &j->taper_db, "DB",
         "Chebyshev taper of the spectrum (default 70)", .lo = 10, .hi = 300},
        {"beam", 0, CLI_INT, &j->beam, "B",
         "beam of the range-Doppler map and SINR plot (default: the\n"
         "strongest detection's, else nearest the first target, else\n"
         "broadside)", .lo = 0, .hi = 4095},
        CLI_OPTS_CFAR(&j->cfar, NULL), /* the detector when the result has no /detections */
        {"response-bin", 0, CLI_INT, &j->resp_bin, "D",
         "Doppler bin of adapted_response.png (default: the bin\n"
         "nearest the first target's Doppler, else 0)", .lo = 0, .hi = 1 << 20,
         .given = &j->resp_asked},
        {"response-segment", 0, CLI_INT, &j->resp_seg, "S",
         "its range segment, the block whose weights are shown\n"
         "(default: the segment holding --range-cell)", .lo = 0, .hi = 1 << 20,
         .given = &j->resp_asked},
        {"response-beam", 0, CLI_INT, &j->resp_beam, "B", "its beam (default: --beam's)", .lo = 0,
         .hi = 4095, .given = &j->resp_asked},
        {"response-grid", 0, CLI_CALL, &j->grid, "NU,NF",
         "its grid: NU sine-angles over [-1, 1], NF Dopplers over\n"
         "[-1/2, 1/2) (default 241 and a multiple of the bins\n"
         "near 240, so that bin centres lie on it)", .parse = opt_response_grid,
         .given = &j->resp_asked},
        {"response-floor", 0, CLI_DOUBLE, &j->resp_floor, "DB",
         "bottom of its colour scale, dB under each panel's peak\n"
         "(default -60)", .lo = -300, .hi = -1, .given = &j->resp_asked},
        {0}};
    int pst = cli_parse(&plot_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    /* the pictures are outputs: none may be an input (cli_files.h) */
    static const char *const pictures[] = {"angle_doppler", "sinr_loss", "range_doppler",
                                           "sinr_compare", "adapted_response"};
    static char picture_paths[5][4096];
    for (int k = 0; k < 5; k++) {
        snprintf(picture_paths[k], sizeof picture_paths[k], "%s/%s.%s", j->dir, pictures[k], j->ext);
        if ((pst = cli_files_output("--output-dir", picture_paths[k]))) return pst;
    }
    j->mode = cli_write_mode(j->force);
    if ((pst = cli_output_ok(j->json, j->force))) return pst;
    if (j->labels.n > j->sinrs.n)
        return cli_error(EXIT_USAGE, "%d --label for %d --sinr table%s", j->labels.n, j->sinrs.n,
                         j->sinrs.n == 1 ? "" : "s");
    return CLI_GO;
}

/* the result: its cube's shape and the beam and response options against it */
static int plot_check_run(plot_job *j)
{
    const stap_run_data *run = &j->run;
    if (run->cfg.channels != j->in.channels || run->cfg.pulses != j->in.pulses ||
        run->cfg.range_gates != j->in.range_gates)
        return cli_error(EXIT_PROCESSING, "%s is a run on a %d x %d x %d cube, %s is %d x %d x "
                         "%d", j->result, run->cfg.channels, run->cfg.pulses,
                         run->cfg.range_gates, j->input, j->in.channels, j->in.pulses,
                         j->in.range_gates);
    if (j->beam >= run->beams)
        return cli_error(EXIT_USAGE, "--beam %d: the run has %d beams", j->beam, run->beams);
    const struct {
        const char *flag, *what;
        int value, count;
    } lim[3] = {{"--response-bin", "Doppler bins", j->resp_bin, run->cfg.doppler_bins},
                {"--response-segment", "segments", j->resp_seg, run->cfg.segments},
                {"--response-beam", "beams", j->resp_beam, run->beams}};
    for (int i = 0; i < 3; i++)
        if (lim[i].value >= lim[i].count)
            return cli_error(EXIT_USAGE, "%s %d: the run has %d %s (0..%d)", lim[i].flag,
                             lim[i].value, lim[i].count, lim[i].what, lim[i].count - 1);
    return EXIT_OK;
}

/* plot RESULT (or --input RESULT) without --result: the result, over the input its /config
 * names */
static int plot_find_input(plot_job *j)
{
    stap_result_info ri;
    stap_error err;
    if (j->result) return EXIT_OK;
    if (stap_result_info_read(j->input, &ri, &err)) return cli_fail_input(j->input, &err);
    if (ri.has_iq || !ri.is_result) return EXIT_OK; /* an input (or its error, later) */
    if (!ri.input[0] || !strncmp(ri.input, "synthetic:", 10))
        return cli_error(EXIT_USAGE, "%s is a result of a run on %s: plot it with the cube it "
                         "ran on, --input CUBE --result %s", j->input,
                         ri.input[0] ? ri.input : "an input it does not name", j->input);
    j->result = j->input;
    snprintf(j->run_input, sizeof j->run_input, "%s", ri.input);
    j->input = j->run_input;
    fprintf(stderr, "rtstap plot: %s is a result of 'rtstap run': drawn over its input %s (its "
            "/config input)\n", j->result, j->input);
    return cli_files_input("the input named by the result's /config", j->input);
}

/* everything read before any picture: a bad table costs no work */
static int plot_load(plot_job *j)
{
    stap_error err;
    int status;
    if ((status = plot_find_input(j))) return status;
    /* one CPI, or CPI --cpi of a recording */
    stap_recording *rec = NULL;
    if (cli_env_reader(&j->inopts.read, &err)) return cli_fail(&err);
    if (stap_recording_open(j->input, &rec, &j->in, &j->inopts.read, &err))
        return cli_fail_input(j->input, &err);
    const long long cpis = stap_recording_cpis(rec);
    const int recording = stap_recording_rank(rec) == 4;
    if (j->cpi >= cpis) {
        stap_recording_close(rec);
        return cli_error(EXIT_USAGE, "--cpi %d: %s holds %s", j->cpi, j->input,
                         recording ? "fewer CPIs" : "one CPI");
    }
    if (recording) snprintf(j->cpi_note, sizeof j->cpi_note, "CPI %d", j->cpi);
    j->in.iq = malloc(sizeof(stap_cf32) * (size_t)j->in.channels * j->in.pulses * j->in.range_gates);
    status = !j->in.iq ? cli_error(EXIT_PROCESSING, "out of memory for the cube")
             : stap_recording_read(rec, j->cpi, j->in.iq, &err) ? cli_fail(&err)
                                                                : cli_check_layout(j->input, &j->in, &j->inopts);
    stap_recording_close(rec);
    if (status) return status;
    if (j->in.meta.has_sample_rate && j->in.meta.sample_rate_hz > 0) { /* range from the first gate */
        j->range_m = malloc(sizeof(double) * (size_t)j->in.range_gates);
        for (int r = 0; j->range_m && r < j->in.range_gates; r++)
            j->range_m[r] = r * 299792458.0 / (2 * j->in.meta.sample_rate_hz);
    }
    /* /truth is optional: without it there is no SINR loss to compute and no optimum */
    j->have_truth = stap_scene_truth_read(j->input, &j->truth, &j->truth_err) == STAP_OK;
    /* gen --array: the SINR loss follows its geometry; the adapted response's grid is the
     * uniform line's sine-angle, which a planar or calibrated array does not have */
    j->truth_array = j->have_truth && (j->truth.cfg.position || j->truth.cfg.calibration);
    if (j->resp_asked && j->truth_array)
        return cli_error(EXIT_PROCESSING, "%s was drawn through an /array geometry or calibration: "
                         "adapted_response.png's grid is the uniform line's sine-angle", j->input);
    if (j->resp_asked && !j->result)
        return cli_error(EXIT_USAGE, "the --response-* options draw adapted_response.png, "
                         "which needs --result (a run's /weights)");
    if (j->resp_asked && !j->have_truth)
        return cli_error(EXIT_PROCESSING, "%s (adapted_response.png needs the scene's truth "
                         "for the clairvoyant optimum)", j->truth_err.msg);
    if (j->result) {
        if (stap_run_read_cpi(j->result, j->cpi, 1, &j->run, NULL, &err)) return cli_fail(&err);
        j->have_run = 1;
        if ((status = plot_check_run(j))) return status;
    }
    for (int k = 0; k < j->sinrs.n; k++) {
        stap_sinr_result *t = k == 0 ? &j->sr : &j->more[k - 1];
        if (stap_sinr_read(j->sinrs.v[k], t, &err)) return cli_fail(&err);
        if (k == 0) j->have_sinr = 1;
        else j->nmore = k;
    }
    if (make_dir(j->dir)) return EXIT_PROCESSING;
    j->prf = j->in.meta.has_prf ? j->in.meta.prf_hz : 0;
    j->spacing = j->in.meta.has_element_spacing ? j->in.meta.element_spacing_wavelengths : 0.5;
    if (j->rc < 0)
        j->rc = j->have_truth && j->truth.cfg.ntargets > 0 ? j->truth.cfg.targets[0].range_cell
                                                           : j->in.range_gates / 2;
    if (j->rc >= j->in.range_gates)
        return cli_error(EXIT_USAGE, "--range-cell %d: the cube has %d range gates", j->rc,
                         j->in.range_gates);
    return EXIT_OK;
}

/* the beam to show: the strongest detection's; else the run's beam that looks nearest the
 * first target (or broadside) */
static void plot_choose_beam(plot_job *j)
{
    if (!j->have_run || j->beam >= 0) {
        j->beam_from = "--beam";
        return;
    }
    const stap_run_data *run = &j->run;
    float strongest = -INFINITY;
    for (size_t k = 0; k < run->detection_count; k++)
        if (run->detections[k].snr_db > strongest) {
            strongest = run->detections[k].snr_db;
            j->beam = run->detections[k].beam;
        }
    if (j->beam >= 0) {
        j->beam_from = "the strongest detection";
        return;
    }
    j->beam_from = j->have_truth && j->truth.cfg.ntargets > 0 ? "the first target" : "broadside";
    double want = j->have_truth && j->truth.cfg.ntargets > 0 ? j->truth.cfg.targets[0].u : 0;
    double best = 9;
    for (int b = 0; b < run->beams; b++) {
        double u = stap_look_direction(run->steering + (size_t)b * stap_dof(&run->cfg),
                                       run->cfg.channels, run->cfg.doppler_order,
                                       run->cfg.element_spacing);
        if (fabs(u - want) < best) {
            best = fabs(u - want);
            j->beam = b;
        }
    }
}

static int plot_done(plot_job *j, const char *path)
{
    /* listed once every picture is written and published (plot_pictures) */
    if (j->nwritten < 5) snprintf(j->written[j->nwritten++], sizeof j->written[0], "%s", path);
    return EXIT_OK;
}

/* "az 20°, el 0°": beam b's direction, from the run's /steering attributes */
static void beam_direction(const stap_run_data *run, int b, char *buf, size_t len)
{
    snprintf(buf, len, "az %g\u00b0, el %g\u00b0", run->look_az[b], run->look_el[b]);
}

/* 2: SINR loss, of the first table or computed from the run and the truth */
static int picture_sinr(plot_job *j, char *path, size_t len)
{
    stap_error err;
    if (!j->have_sinr && j->have_run && j->have_truth) {
        if (stap_sinr_compute(&j->truth, &j->run.cfg, j->run.steering, j->run.beams,
                              j->run.weights, -1, &j->sr, &err))
            return cli_fail(&err);
        j->have_sinr = 1;
    }
    if (!j->have_sinr && j->have_run && j->truth_err.code == STAP_EUNSUPPORTED) {
        fprintf(stderr, "rtstap plot: no SINR-loss picture: %s\n", j->truth_err.msg);
        return EXIT_OK;
    }
    if (!j->have_sinr) {
        fprintf(stderr, "rtstap plot: no SINR-loss picture (needs --sinr, or --result and a scene "
                        "with /truth)\n");
        return EXIT_OK;
    }
    int b = j->beam >= 0 && j->beam < j->sr.B ? j->beam : j->sr.B / 2;
    snprintf(path, len, "%s/sinr_loss.%s", j->dir, j->ext);
    char note[64];
    const int looks = j->have_run && j->run.look_az && b < j->run.beams;
    if (looks) beam_direction(&j->run, b, note, sizeof note);
    if (stap_plot_sinr(path, &j->sr, b, looks ? note : NULL, &j->view, j->mode, &err)) return cli_fail(&err);
    return plot_done(j, path);
}

/* 3: range-Doppler map of the run's output, its detections (or the CFAR's) ringed */
static int picture_range_doppler(plot_job *j, char *path, size_t len)
{
    stap_error err;
    stap_run_data *run = &j->run;
    stap_detection *det = run->detections;
    size_t ndet = run->detection_count;
    int own = 0;
    if (!run->have_detections && j->cfar.kind != STAP_CFAR_NONE) {
        if (stap_cfar_detect(&j->cfar, run->output, run->beams, run->cfg.doppler_bins,
                             run->cfg.range_gates, &det, &ndet, &err))
            return cli_fail(&err);
        own = 1;
    }
    snprintf(path, len, "%s/range_doppler.%s", j->dir, j->ext);
    char note[128] = "";
    if (run->look_az && j->beam >= 0 && j->beam < run->beams) beam_direction(run, j->beam, note, sizeof note);
    if (j->cpi_note[0])
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s%s", note[0] ? ", " : "", j->cpi_note);
    int st = stap_plot_range_doppler(path, run->output, run->beams, run->cfg.doppler_bins,
                                     run->cfg.range_gates, j->beam, det, ndet,
                                     run->has_prf ? run->prf_hz : j->prf, j->range_m,
                                     note[0] ? note : NULL, NULL, j->mode, &err);
    if (own) free(det);
    return st ? cli_fail(&err) : plot_done(j, path);
}

/* a table's legend, "[jdl NA=3, ]Q=3, K=150[, S=3][, chebyshev:60]", and its optimum's,
 * "optimum Q=3[, window]" (the optimum does not depend on K or S); the sub-CPI algorithms
 * name their M in the algorithm ("pre-doppler M=3"), and their optimum is their own */
static void compare_labels(const stap_sinr_result *t, char *lab, char *optlab, size_t len)
{
    char segs[48] = "", win[40] = "", alg[40] = "";
    if (!strncmp(t->training, "sliding", 7)) snprintf(segs, sizeof segs, ", %s", t->training);
    else if (t->S > 1) snprintf(segs, sizeof segs, ", S=%d", t->S);
    if (t->window[0] && strcmp(t->window, "none")) snprintf(win, sizeof win, ", %s", t->window);
    if (t->algorithm[0] && strcmp(t->algorithm, "post-doppler"))
        snprintf(alg, sizeof alg, "%s, ", t->algorithm);
    if (stap_sinr_traits(t) & STAP_TRAIT_FIXED) { /* trains nothing: no K */
        snprintf(lab, len, "%s%s", t->algorithm, win);
        snprintf(optlab, len, "optimum %s%s", t->algorithm, win);
    } else if (stap_sinr_is_subcpi(t)) {
        snprintf(lab, len, "%sK=%d%s%s", alg, t->K, segs, win);
        snprintf(optlab, len, "optimum %s%s", t->algorithm, win);
    } else {
        snprintf(lab, len, "%sQ=%d, K=%d%s%s", alg, t->Q, t->K, segs, win);
        snprintf(optlab, len, "optimum Q=%d%s", t->Q, win);
    }
}

/* 4: the SINR loss of several tables on one plot */
static int picture_compare(plot_job *j, char *path, size_t len)
{
    stap_error err;
    const stap_sinr_result *tabs[STAP_PLOT_SINR_MAX_TABLES];
    int beams[STAP_PLOT_SINR_MAX_TABLES];
    char deflab[STAP_PLOT_SINR_MAX_TABLES][96], optlab[STAP_PLOT_SINR_MAX_TABLES][96];
    const char *labs[STAP_PLOT_SINR_MAX_TABLES], *optlabs[STAP_PLOT_SINR_MAX_TABLES];
    for (int k = 0; k < j->sinrs.n; k++) {
        const stap_sinr_result *t = tabs[k] = k == 0 ? &j->sr : &j->more[k - 1];
        beams[k] = j->beam >= 0 ? j->beam : t->B / 2;
        if (beams[k] >= t->B)
            return cli_error(EXIT_PROCESSING, "--sinr %s has %d beams, no beam %d to compare",
                             j->sinrs.v[k], t->B, beams[k]);
        compare_labels(t, deflab[k], optlab[k], sizeof deflab[k]);
        labs[k] = k < j->labels.n ? j->labels.v[k] : deflab[k];
        optlabs[k] = k < j->labels.n ? NULL : optlab[k];
    }
    snprintf(path, len, "%s/sinr_compare.%s", j->dir, j->ext);
    if (stap_plot_sinr_compare(path, tabs, beams, labs, optlabs, j->sinrs.n, &j->view, j->mode, &err))
        return cli_fail(&err);
    return plot_done(j, path);
}

/* 5: the angle-Doppler response of the adapted weights and of the optimum (sub-CPI
 * algorithms: on the staggered snapshot, beside their own clairvoyant weights; fixed
 * weights alone) */
static int picture_response(plot_job *j, char *path, size_t len)
{
    stap_error err;
    const stap_config *c = &j->run.cfg;
    const int D = c->doppler_bins;
    const scene_truth *tr = &j->truth;
    if (j->resp_bin < 0) { /* the bin nearest the first target's normalized Doppler */
        double f = tr->cfg.ntargets > 0 ? tr->cfg.targets[0].doppler_hz / tr->cfg.prf_hz : 0;
        j->resp_bin = (int)(((long)lround(f * D) % D + D) % D);
    }
    if (j->resp_seg < 0) j->resp_seg = j->rc / (c->range_gates / c->segments);
    if (j->resp_beam < 0) j->resp_beam = j->beam;
    if (j->grid.nf == 0) /* bin centres on the grid: a multiple of D near 240 */
        j->grid.nf = D >= 240 ? D : D * ((240 + D - 1) / D);
    if (j->grid.nf > SCENE_RESPONSE_MAX_POINTS) j->grid.nf = SCENE_RESPONSE_MAX_POINTS;
    scene_response r;
    if (stap_scene_response_compute(tr, c, j->run.steering, j->run.beams, j->run.weights, j->resp_bin,
                               j->resp_seg, j->resp_beam, j->grid.nu, j->grid.nf, &r, &err)) {
        stap_error_prefix(&err, "%s vs %s", j->result, j->input);
        return cli_fail(&err);
    }
    double ju[SCENE_MAX_JAMMERS];
    for (int k = 0; k < tr->cfg.njammers; k++) ju[k] = tr->cfg.jammers[k].u;
    char title[200], t0[96];
    snprintf(title, sizeof title, "Response |w^H s(u,f)|^2: Doppler bin %d (f = %.3f), "
             "segment %d, beam %d (u = %.3f)", j->resp_bin, r.bin_doppler, j->resp_seg,
             j->resp_beam, r.look_u);
    const int sub = stap_is_subcpi(c), fixed = (stap_algorithm_traits(c) & STAP_TRAIT_FIXED) != 0;
    if (fixed)
        snprintf(t0, sizeof t0, "DPCA fixed weights, M=%d shift %d", c->doppler_order,
                 c->dpca_shift);
    else
        snprintf(t0, sizeof t0, "%s%s, %s=%d K=%d", sub ? stap_algorithm_name(c->algorithm)
                                                         : "adapted weights",
                 sub ? " weights" : "", sub ? "M" : "Q", c->doppler_order, c->training);
    stap_response_picture pic = {
        .title = title,
        .npanels = fixed ? 1 : 2,
        .panel = {r.adapted, r.optimum},
        .panel_title = {t0, sub ? "clairvoyant R_sub^-1 s" : "clairvoyant optimum R^-1 v"},
        .nu = r.nu,
        .nf = r.nf,
        .look_u = r.look_u,
        .look_f = r.bin_doppler,
        .floor_db = j->resp_floor,
        .jammer_u = ju,
        .njammers = tr->cfg.njammers,
        /* patches at u = cos(phi) sin(theta) have Doppler beta (d/lambda) u */
        .ridge_slope = tr->patches > 0 ? tr->beta * tr->cfg.element_spacing : NAN};
    snprintf(path, len, "%s/adapted_response.%s", j->dir, j->ext);
    int st = stap_plot_response(path, &pic, NULL, j->mode, &err);
    stap_scene_response_free(&r);
    return st ? cli_fail(&err) : plot_done(j, path);
}

/* 1: the angle-Doppler spectrum, then the others that what was read allows */
static int plot_draw(plot_job *j)
{
    stap_error err;
    char path[4096];
    int st;
    snprintf(path, sizeof path, "%s/angle_doppler.%s", j->dir, j->ext);
    if (j->in.array_position) { /* its angle axis is the line's sine-angle */
        fprintf(stderr, "rtstap plot: no angle_doppler.png: %s has /array positions, and the "
                        "picture's angle axis is the uniform line's\n", j->input);
    } else {
        if (stap_plot_angle_doppler(path, j->in.iq, j->in.channels, j->in.pulses, j->in.range_gates,
                                    j->rc, j->half, j->spacing, j->prf, j->taper_db, NULL, j->mode, &err))
            return cli_fail(&err);
        plot_done(j, path);
    }
    plot_choose_beam(j);
    if ((st = picture_sinr(j, path, sizeof path))) return st;
    if (j->have_run && (st = picture_range_doppler(j, path, sizeof path))) return st;
    if (j->nmore > 0 && (st = picture_compare(j, path, sizeof path))) return st;
    if (j->have_run && j->have_truth && !j->truth_array) return picture_response(j, path, sizeof path);
    if (j->have_run && j->truth_array)
        fprintf(stderr, "rtstap plot: no adapted_response.png: %s was drawn through an /array geometry or "
                        "calibration, and the picture's grid is the uniform line's sine-angle\n", j->input);
    else if (j->have_run) fprintf(stderr, "rtstap plot: no adapted_response.png: %s\n", j->truth_err.msg);
    return EXIT_OK;
}

/* The pictures, published together once all are written: one that fails (a full disk)
 * publishes none of them. Then each picture's path on stdout (stderr with --json -,
 * whose JSON lists them). */
static int plot_pictures(plot_job *j)
{
    stap_error err;
    stap_plot_hold(&j->held);
    int st = plot_draw(j);
    if (st != EXIT_OK) stap_plot_discard(&j->held);
    else if (stap_plot_publish(&j->held, &err)) st = cli_fail(&err);
    for (int k = 0; st == EXIT_OK && k < j->nwritten; k++)
        fprintf(j->json && !strcmp(j->json, "-") ? stderr : stdout, "%s\n", j->written[k]);
    return st;
}

/* --json: the pictures written and the beam drawn */
static int plot_json(const plot_job *j)
{
    cJSON *doc = stream_json_report("plot");
    if (!doc) return cli_error(EXIT_PROCESSING, "out of memory");
    cJSON_AddStringToObject(doc, "input", j->input);
    if (j->result) cJSON_AddStringToObject(doc, "result", j->result);
    cJSON_AddStringToObject(doc, "output_dir", j->dir);
    if (j->have_run) cJSON_AddNumberToObject(doc, "beam", j->beam);
    if (j->have_run && j->beam_from) cJSON_AddStringToObject(doc, "beam_from", j->beam_from);
    cJSON_AddNumberToObject(doc, "cpi", j->cpi);
    cJSON_AddStringToObject(doc, "format", j->ext);
    cJSON *arr = cJSON_AddArrayToObject(doc, "pictures");
    for (int k = 0; arr && k < j->nwritten; k++) cJSON_AddItemToArray(arr, cJSON_CreateString(j->written[k]));
    stap_error err;
    const int st = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return st;
}

int cmd_plot(int argc, char **argv)
{
    plot_job *j = calloc(1, sizeof *j);
    if (!j) return cli_error(EXIT_PROCESSING, "out of memory");
    int status = plot_parse(j, argc, argv);
    if (status == CLI_GO && (status = plot_load(j)) == EXIT_OK) status = plot_pictures(j);
    if (status == EXIT_OK && j->json) status = plot_json(j);
    stap_input_free(&j->in);
    if (j->have_truth) stap_scene_truth_free(&j->truth);
    stap_run_free(&j->run);
    stap_sinr_free(&j->sr);
    for (int k = 0; k < j->nmore; k++) stap_sinr_free(&j->more[k]);
    free(j->range_m);
    free(j);
    return status;
}
