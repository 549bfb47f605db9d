/* cmd_plot.c: `rtstap plot` — PNG pictures of a scene and of a run on it: the
 * angle–Doppler spectrum of the input, the SINR loss against Doppler and the
 * range–Doppler map of the output with its detections (stap/plot.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfar.h"
#include "cli_opts.h"
#include "cmd_scene.h"
#include "h5io.h"
#include "plot.h"
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
    "                     below is run)\n",
    NULL};

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
    double taper_db = 70;
    cli_input_opts inopts = {{0}, NULL, NULL, 0}; /* --layout, --strict */
    stap_cfar_config cfar;
    stap_cfar_defaults(&cfar);
    rt_error err;
    rt_clear(&err);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &input, "FILE",
         "the input cube (a scene from 'rtstap gen' or any schema-v1.1\n"
         "file)", .flags = CLI_REQUIRED},
        CLI_OPT_LAYOUT(&inopts),
        CLI_OPT_STRICT(&inopts, "refuse an input without axis labels"),
        CLI_OPT_SCALE(&inopts),
        {"result", 0, CLI_STRING, &result, "FILE", "a result of 'rtstap run' on it"},
        {"sinr", 0, CLI_STRING, &sinr, "FILE", "a table of 'rtstap sinr'"},
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
        {"cfar", 0, CLI_CALL, &cfar.kind, "KIND",
         "ca | os | go | so | ca2d | none: detector when the result\n"
         "has no /detections (default ca)", .parse = cli_parse_cfar_kind},
        {"cfar-pfa", 0, CLI_DOUBLE, &cfar.pfa, "P", "its false-alarm probability (default 1e-6)",
         .lo = 1e-300, .hi = 0.999999},
        {0}};
    int pst = cli_parse(&plot_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    const rt_write_mode mode = cli_write_mode(force);

    stap_input in;
    scene_truth truth;
    stap_run_data run;
    stap_sinr_result sr;
    int have_truth = 0, have_run = 0, have_sinr = 0, status = EXIT_OK;
    memset(&in, 0, sizeof in);
    memset(&run, 0, sizeof run);
    memset(&sr, 0, sizeof sr);
    char path[4096];
    if (stap_input_read_opts(input, &in, &inopts.read, &err)) return cli_fail(&err);
    if ((status = cli_check_layout(input, &in, &inopts))) {
        stap_input_free(&in);
        return status;
    }
    /* /truth is optional: without it there is no SINR loss to compute */
    have_truth = scene_truth_read(input, &truth, &err) == RT_OK;
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
    if (sinr) {
        if (stap_sinr_read(sinr, &sr, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        have_sinr = 1;
    } else if (have_run && have_truth) {
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
out:
    stap_input_free(&in);
    if (have_truth) scene_truth_free(&truth);
    stap_run_free(&run);
    stap_sinr_free(&sr);
    return status;
}
