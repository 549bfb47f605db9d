/* cmd_plot.c: `rtstap plot` — PNG pictures of a scene and of a run on it: the
 * angle–Doppler spectrum of the input, the SINR loss against Doppler (of one run, or of
 * several runs' tables on one plot), the range–Doppler map of the output with its
 * detections, and the angle–Doppler response of the adapted weights beside the
 * clairvoyant optimum (stap/plot.h; the response from datasets/scene_response.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfar.h"
#include "cli_files.h"
#include "cli_opts.h"
#include "cmd_scene.h"
#include "h5io.h"
#include "plot.h"
#include "scene_response.h"
#include "scene_sinr.h"

static const cli_command plot_cmd = {
    "plot",
    "Writes PNG pictures into DIR (created if missing; existing pictures are replaced\n"
    "only with -f):\n"
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
    "                     option asks for it, their absence is an error)\n",
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

int cmd_plot(int argc, char **argv)
{
    const char *input = NULL, *result = NULL, *sinr = NULL, *dir = NULL;
    int rc = -1, half = 16, beam = -1, force = 0;
    int resp_bin = -1, resp_seg = -1, resp_beam = -1, resp_asked = 0;
    response_grid grid = {241, 0};
    double taper_db = 70, resp_floor = -60;
    cli_strings sinrs = {{0}, 0}, labels = {{0}, 0};
    cli_input_opts inopts = {{0}, NULL, NULL, 0}; /* --layout, --strict */
    stap_cfar_config cfar;
    stap_cfar_defaults(&cfar);
    rt_error err;
    rt_clear(&err);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &input, "FILE",
         "the input cube (a scene from 'rtstap gen' or any schema-v1.1\n"
         "file)", .flags = CLI_REQUIRED | CLI_INPUT},
        CLI_OPT_LAYOUT(&inopts),
        CLI_OPT_STRICT(&inopts, "refuse an input without axis labels"),
        CLI_OPT_SCALE(&inopts),
        {"result", 0, CLI_STRING, &result, "FILE", "a result of 'rtstap run' on it", .flags = CLI_INPUT},
        {"sinr", 0, CLI_STRINGS, &sinrs, "FILE",
         "a table of 'rtstap sinr'; repeated (e.g. the Q = 1 and Q = 3\n"
         "runs on one scene): sinr_loss.png shows the first,\n"
         "sinr_compare.png all of them", .hi = STAP_PLOT_SINR_MAX_TABLES, .flags = CLI_INPUT},
        {"label", 0, CLI_STRINGS, &labels, "TEXT",
         "legend of the k-th --sinr table in sinr_compare.png\n"
         "(default: its configuration, e.g. \"Q=3, K=150\")",
         .hi = STAP_PLOT_SINR_MAX_TABLES},
        {"output-dir", 0, CLI_STRING, &dir, "DIR", "where the pictures go", .alias = "out-dir",
         .flags = CLI_REQUIRED},
        CLI_OPT_FORCE(&force),
        {"range-cell", 0, CLI_INT, &rc, "R",
         "centre of the angle-Doppler window (default: the first\n"
         "target's cell, else the middle)", .lo = 0, .hi = 1 << 30},
        {"window-cells", 0, CLI_INT, &half, "H",
         "average the spectrum over R-H..R+H (default 16)", .lo = 0, .hi = 1 << 20},
        {"taper-db", 0, CLI_DOUBLE, &taper_db, "DB",
         "Chebyshev taper of the spectrum (default 70)", .lo = 10, .hi = 300},
        {"beam", 0, CLI_INT, &beam, "B",
         "beam of the range-Doppler map and SINR plot (default: the\n"
         "beam nearest the first target, else nearest broadside)", .lo = 0, .hi = 4095},
        CLI_OPTS_CFAR(&cfar, NULL), /* the detector when the result has no /detections */
        {"response-bin", 0, CLI_INT, &resp_bin, "D",
         "Doppler bin of adapted_response.png (default: the bin\n"
         "nearest the first target's Doppler, else 0)", .lo = 0, .hi = 1 << 20,
         .given = &resp_asked},
        {"response-segment", 0, CLI_INT, &resp_seg, "S",
         "its range segment, the block whose weights are shown\n"
         "(default: the segment holding --range-cell)", .lo = 0, .hi = 1 << 20,
         .given = &resp_asked},
        {"response-beam", 0, CLI_INT, &resp_beam, "B", "its beam (default: --beam's)", .lo = 0,
         .hi = 4095, .given = &resp_asked},
        {"response-grid", 0, CLI_CALL, &grid, "NU,NF",
         "its grid: NU sine-angles over [-1, 1], NF Dopplers over\n"
         "[-1/2, 1/2) (default 241 and a multiple of the bins\n"
         "near 240, so that bin centres lie on it)", .parse = opt_response_grid,
         .given = &resp_asked},
        {"response-floor", 0, CLI_DOUBLE, &resp_floor, "DB",
         "bottom of its colour scale, dB under each panel's peak\n"
         "(default -60)", .lo = -300, .hi = -1, .given = &resp_asked},
        {0}};
    int pst = cli_parse(&plot_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    /* the pictures are outputs: none may be an input (cli_files.h) */
    static const char *const pictures[] = {"angle_doppler.png", "sinr_loss.png", "range_doppler.png",
                                           "sinr_compare.png", "adapted_response.png"};
    static char picture_paths[5][4096];
    for (int k = 0; k < 5; k++) {
        snprintf(picture_paths[k], sizeof picture_paths[k], "%s/%s", dir, pictures[k]);
        if ((pst = cli_files_output("--output-dir", picture_paths[k]))) return pst;
    }
    const rt_write_mode mode = cli_write_mode(force);
    if (labels.n > sinrs.n)
        return cli_error(EXIT_USAGE, "%d --label for %d --sinr table%s", labels.n, sinrs.n,
                         sinrs.n == 1 ? "" : "s");
    sinr = sinrs.n ? sinrs.v[0] : NULL;

    stap_input in;
    scene_truth truth;
    stap_run_data run;
    stap_sinr_result sr, more[STAP_PLOT_SINR_MAX_TABLES]; /* more[k]: --sinr number k+1 */
    int have_truth = 0, have_run = 0, have_sinr = 0, nmore = 0, status = EXIT_OK;
    rt_error truth_err;
    memset(&in, 0, sizeof in);
    memset(&run, 0, sizeof run);
    memset(&sr, 0, sizeof sr);
    char path[4096];
    if (stap_input_read_opts(input, &in, &inopts.read, &err)) return cli_fail(&err);
    if ((status = cli_check_layout(input, &in, &inopts))) {
        stap_input_free(&in);
        return status;
    }
    /* /truth is optional: without it there is no SINR loss to compute and no optimum */
    have_truth = scene_truth_read(input, &truth, &truth_err) == RT_OK;
    if (resp_asked && !result) {
        status = cli_error(EXIT_USAGE, "the --response-* options draw adapted_response.png, "
                           "which needs --result (a run's /weights)");
        goto out;
    }
    if (resp_asked && !have_truth) {
        status = cli_error(EXIT_PROCESSING, "%s (adapted_response.png needs the scene's truth "
                           "for the clairvoyant optimum)", truth_err.msg);
        goto out;
    }
    if (result) {
        if (stap_run_read(result, 1, &run, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        have_run = 1;
        if (run.cfg.channels != in.channels || run.cfg.pulses != in.pulses ||
            run.cfg.range_gates != in.range_gates) {
            status = cli_error(EXIT_PROCESSING, "%s is a run on a %d x %d x %d cube, %s is %d x "
                               "%d x %d", result, run.cfg.channels, run.cfg.pulses,
                               run.cfg.range_gates, input, in.channels, in.pulses, in.range_gates);
            goto out;
        }
        if (beam >= run.beams) {
            status = cli_error(EXIT_USAGE, "--beam %d: the run has %d beams", beam, run.beams);
            goto out;
        }
        const struct {
            const char *flag, *what;
            int value, count;
        } lim[3] = {{"--response-bin", "Doppler bins", resp_bin, run.cfg.doppler_bins},
                    {"--response-segment", "segments", resp_seg, run.cfg.segments},
                    {"--response-beam", "beams", resp_beam, run.beams}};
        for (int i = 0; i < 3; i++)
            if (lim[i].value >= lim[i].count) {
                status = cli_error(EXIT_USAGE, "%s %d: the run has %d %s (0..%d)", lim[i].flag,
                                   lim[i].value, lim[i].count, lim[i].what, lim[i].count - 1);
                goto out;
            }
    }
    /* every table before any picture: a bad one costs no work */
    for (int k = 0; k < sinrs.n; k++) {
        stap_sinr_result *t = k == 0 ? &sr : &more[k - 1];
        if (stap_sinr_read(sinrs.v[k], t, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        if (k == 0) have_sinr = 1;
        else nmore = k;
    }
    if (make_dir(dir)) {
        status = EXIT_PROCESSING;
        goto out;
    }
    double prf = in.meta.has_prf ? in.meta.prf_hz : 0;
    double spacing = in.meta.has_element_spacing ? in.meta.element_spacing_wavelengths : 0.5;
    if (rc < 0) rc = have_truth && truth.cfg.ntargets > 0 ? truth.cfg.targets[0].range_cell
                                                          : in.range_gates / 2;
    if (rc >= in.range_gates) {
        status = cli_error(EXIT_USAGE, "--range-cell %d: the cube has %d range gates", rc,
                           in.range_gates);
        goto out;
    }

    /* 1: angle-Doppler spectrum */
    snprintf(path, sizeof path, "%s/angle_doppler.png", dir);
    if (stap_plot_angle_doppler(path, in.iq, in.channels, in.pulses, in.range_gates, rc, half,
                                spacing, prf, taper_db, mode, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    printf("%s\n", path);

    /* the beam to show */
    if (have_run && beam < 0) {
        double want = have_truth && truth.cfg.ntargets > 0 ? truth.cfg.targets[0].u : 0, best = 9;
        for (int b = 0; b < run.beams; b++) {
            double u = stap_look_direction(run.steering + (size_t)b * stap_dof(&run.cfg),
                                      run.cfg.channels, run.cfg.doppler_order,
                                      run.cfg.element_spacing);
            if (fabs(u - want) < best) {
                best = fabs(u - want);
                beam = b;
            }
        }
    }

    /* 2: SINR loss */
    if (!sinr && have_run && have_truth) {
        if (stap_sinr_compute(&truth, &run.cfg, run.steering, run.beams, run.weights, -1, &sr,
                              &err)) {
            status = cli_fail(&err);
            goto out;
        }
        have_sinr = 1;
    }
    if (have_sinr) {
        int b = beam >= 0 && beam < sr.B ? beam : sr.B / 2;
        snprintf(path, sizeof path, "%s/sinr_loss.png", dir);
        if (stap_plot_sinr(path, &sr, b, mode, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        printf("%s\n", path);
    } else {
        fprintf(stderr, "rtstap plot: no SINR-loss picture (needs --sinr, or --result and a scene "
                        "with /truth)\n");
    }

    /* 3: range-Doppler map */
    if (have_run) {
        stap_detection *det = run.detections;
        size_t ndet = run.detection_count;
        int own = 0;
        if (!run.have_detections && cfar.kind != STAP_CFAR_NONE) {
            if (stap_cfar_detect(&cfar, run.output, run.beams, run.cfg.doppler_bins,
                                 run.cfg.range_gates, &det, &ndet, &err)) {
                status = cli_fail(&err);
                goto out;
            }
            own = 1;
        }
        snprintf(path, sizeof path, "%s/range_doppler.png", dir);
        int st = stap_plot_range_doppler(path, run.output, run.beams, run.cfg.doppler_bins,
                                         run.cfg.range_gates, beam, det, ndet,
                                         run.has_prf ? run.prf_hz : prf, mode, &err);
        if (own) free(det);
        if (st) {
            status = cli_fail(&err);
            goto out;
        }
        printf("%s\n", path);
    }

    /* 4: the SINR loss of several tables */
    if (nmore > 0) {
        const stap_sinr_result *tabs[STAP_PLOT_SINR_MAX_TABLES];
        int beams[STAP_PLOT_SINR_MAX_TABLES];
        char deflab[STAP_PLOT_SINR_MAX_TABLES][96], optlab[STAP_PLOT_SINR_MAX_TABLES][96];
        const char *labs[STAP_PLOT_SINR_MAX_TABLES], *optlabs[STAP_PLOT_SINR_MAX_TABLES];
        for (int k = 0; k < sinrs.n; k++) {
            const stap_sinr_result *t = tabs[k] = k == 0 ? &sr : &more[k - 1];
            beams[k] = beam >= 0 ? beam : t->B / 2;
            if (beams[k] >= t->B) {
                status = cli_error(EXIT_PROCESSING, "--sinr %s has %d beams, no beam %d to "
                                   "compare", sinrs.v[k], t->B, beams[k]);
                goto out;
            }
            /* "[jdl NA=3, ]Q=3, K=150[, S=3][, chebyshev:60]"; its optimum "optimum Q=3[, window]" (the
             * optimum does not depend on K or S) */
            char segs[48] = "", win[40] = "";
            if (!strncmp(t->training, "sliding", 7)) snprintf(segs, sizeof segs, ", %s", t->training);
            else if (t->S > 1) snprintf(segs, sizeof segs, ", S=%d", t->S);
            if (t->window[0] && strcmp(t->window, "none"))
                snprintf(win, sizeof win, ", %s", t->window);
            char alg[40] = ""; /* "jdl NA=3, " for a reduced-DOF table */
            if (t->algorithm[0] && strcmp(t->algorithm, "post-doppler"))
                snprintf(alg, sizeof alg, "%s, ", t->algorithm);
            /* the sub-CPI algorithms name their M' in the algorithm ("pre-doppler M=3"), and
             * their optimum (on the staggered snapshots) is their own */
            const int sub = stap_sinr_is_subcpi(t);
            if (stap_sinr_traits(t) & STAP_TRAIT_FIXED) { /* trains nothing: no K */
                snprintf(deflab[k], sizeof deflab[k], "%s%s", t->algorithm, win);
                snprintf(optlab[k], sizeof optlab[k], "optimum %s%s", t->algorithm, win);
            } else if (sub) {
                snprintf(deflab[k], sizeof deflab[k], "%sK=%d%s%s", alg, t->K, segs, win);
                snprintf(optlab[k], sizeof optlab[k], "optimum %s%s", t->algorithm, win);
            } else {
                snprintf(deflab[k], sizeof deflab[k], "%sQ=%d, K=%d%s%s", alg, t->Q, t->K, segs,
                         win);
                snprintf(optlab[k], sizeof optlab[k], "optimum Q=%d%s", t->Q, win);
            }
            labs[k] = k < labels.n ? labels.v[k] : deflab[k];
            optlabs[k] = k < labels.n ? NULL : optlab[k];
        }
        snprintf(path, sizeof path, "%s/sinr_compare.png", dir);
        if (stap_plot_sinr_compare(path, tabs, beams, labs, optlabs, sinrs.n, mode, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        printf("%s\n", path);
    }

    /* 5: the angle-Doppler response of the adapted weights and of the optimum (sub-CPI
     * algorithms: on the staggered snapshot, beside their own clairvoyant weights; DPCA's
     * fixed weights alone) */
    if (have_run && have_truth) {
        const stap_config *c = &run.cfg;
        const int D = c->doppler_bins;
        if (resp_bin < 0) {
            /* the bin nearest the first target's normalized Doppler */
            double f = truth.cfg.ntargets > 0 ? truth.cfg.targets[0].doppler_hz / truth.cfg.prf_hz
                                              : 0;
            resp_bin = (int)(((long)lround(f * D) % D + D) % D);
        }
        if (resp_seg < 0) resp_seg = rc / (c->range_gates / c->segments);
        if (resp_beam < 0) resp_beam = beam;
        if (grid.nf == 0) /* bin centres on the grid: a multiple of D near 240 */
            grid.nf = D >= 240 ? D : D * ((240 + D - 1) / D);
        if (grid.nf > SCENE_RESPONSE_MAX_POINTS) grid.nf = SCENE_RESPONSE_MAX_POINTS;
        scene_response r;
        if (scene_response_compute(&truth, c, run.steering, run.beams, run.weights, resp_bin,
                                   resp_seg, resp_beam, grid.nu, grid.nf, &r, &err)) {
            rt_prefix(&err, "%s vs %s", result, input);
            status = cli_fail(&err);
            goto out;
        }
        double ju[SCENE_MAX_JAMMERS];
        for (int j = 0; j < truth.cfg.njammers; j++) ju[j] = truth.cfg.jammers[j].u;
        char title[200], t0[96];
        snprintf(title, sizeof title, "Response |w^H s(u,f)|^2: Doppler bin %d (f = %.3f), "
                 "segment %d, beam %d (u = %.3f)", resp_bin, r.bin_doppler, resp_seg, resp_beam,
                 r.look_u);
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
            .floor_db = resp_floor,
            .jammer_u = ju,
            .njammers = truth.cfg.njammers,
            /* patches at u = cos(phi) sin(theta) have Doppler beta (d/lambda) u */
            .ridge_slope = truth.patches > 0 ? truth.beta * truth.cfg.element_spacing : NAN};
        snprintf(path, sizeof path, "%s/adapted_response.png", dir);
        int st = stap_plot_response(path, &pic, mode, &err);
        scene_response_free(&r);
        if (st) {
            status = cli_fail(&err);
            goto out;
        }
        printf("%s\n", path);
    } else if (have_run) {
        fprintf(stderr, "rtstap plot: no adapted_response.png: %s\n", truth_err.msg);
    }
out:
    stap_input_free(&in);
    if (have_truth) scene_truth_free(&truth);
    stap_run_free(&run);
    stap_sinr_free(&sr);
    for (int k = 0; k < nmore; k++) stap_sinr_free(&more[k]);
    return status;
}
