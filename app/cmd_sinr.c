/* cmd_sinr.c: `rtstap sinr` — the SINR loss of a run's adaptive weights against the
 * optimum from the true covariance of a generated scene (stap/sinr.h). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_scene.h"
#include "scene_sinr.h"

static void sinr_usage(FILE *f)
{
    fprintf(f,
        "usage: rtstap sinr --input SCENE.h5 --result RUN.h5 --out OUT.h5 [--beam B]\n"
        "\n"
        "For every Doppler bin d, segment s and beam b of a run on a scene made by\n"
        "'rtstap gen': the optimum SINR loss L_opt = SINR_opt / SNR_0 from the true\n"
        "covariance of the Doppler-domain snapshots (Ward TR-1015), and the adaptive loss\n"
        "rho = SINR(w) / SINR_opt of the run's weights, for a target in the beam's look\n"
        "direction at the bin's centre Doppler. The mean of rho is compared with the\n"
        "Reed-Mallett-Brennan expectation (K+2-N)/(K+1), rho ~ Beta(K+2-N, N-1).\n"
        "\n"
        "  --input FILE    the scene (needs /truth)\n"
        "  --result FILE   the output of 'rtstap run --input SCENE.h5'\n"
        "  --out FILE      where to write the table (must not exist; written atomically)\n"
        "  --beam B        summarize and print beam B only (default: summary over all\n"
        "                  beams, table of the beam nearest broadside)\n"
        "  --quiet         print nothing\n"
        "  --help          this text\n");
}

static double db(double x) { return 10 * log10(x > 1e-300 ? x : 1e-300); }

int cmd_sinr(int argc, char **argv)
{
    enum { O_INPUT = 256, O_RESULT, O_OUT, O_BEAM, O_QUIET, O_HELP };
    static const struct option opts[] = {
        {"input", required_argument, 0, O_INPUT}, {"result", required_argument, 0, O_RESULT},
        {"out", required_argument, 0, O_OUT},     {"beam", required_argument, 0, O_BEAM},
        {"quiet", no_argument, 0, O_QUIET},       {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    const char *input = NULL, *result = NULL, *out = NULL;
    int beam = -1, quiet = 0;
    optind = 0; /* glibc: 0 starts afresh (1 kept an earlier parse's place in "-xy") */
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case O_INPUT: input = optarg; break;
        case O_RESULT: result = optarg; break;
        case O_OUT: out = optarg; break;
        case O_BEAM: if (cli_int("--beam", optarg, 0, 4095, &beam)) return EXIT_USAGE; break;
        case O_QUIET: quiet = 1; break;
        case O_HELP: sinr_usage(stdout); return EXIT_OK;
        case ':': return cli_error(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
        default:
            return cli_unknown_option("sinr", argc, argv);
        }
    }
    if (optind < argc) return cli_error(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!input || !result || !out)
        return cli_error(EXIT_USAGE, "sinr needs --input SCENE.h5, --result RUN.h5 and --out "
                         "FILE (see rtstap sinr --help)");

    rt_error err;
    rt_clear(&err);
    scene_truth truth;
    stap_run_data run;
    stap_sinr_result res;
    if (scene_truth_read(input, &truth, &err)) return cli_fail(&err);
    if (stap_run_read(result, 0, &run, &err)) {
        scene_truth_free(&truth);
        return cli_fail(&err);
    }
    int status = EXIT_OK;
    if (beam >= run.beams) {
        status = cli_error(EXIT_USAGE, "--beam %d: the run has %d beams (0..%d)", beam, run.beams,
                           run.beams - 1);
        goto out;
    }
    if (stap_sinr_compute(&truth, &run.cfg, run.steering, run.beams, run.weights, beam, &res,
                          &err)) {
        rt_prefix(&err, "%s vs %s", result, input);
        status = cli_fail(&err);
        goto out;
    }
    if (stap_sinr_write(out, &res, input, result, &err)) {
        status = cli_fail(&err);
        stap_sinr_free(&res);
        goto out;
    }
    if (!quiet) {
        const stap_config *c = &run.cfg;
        int show = beam;
        double best = 2;
        double *u = malloc(sizeof(double) * run.beams);
        for (int b = 0; u && b < run.beams; b++) {
            u[b] = stap_look_direction(run.steering + (size_t)b * res.N, c->channels,
                                  c->doppler_order, c->element_spacing);
            if (beam < 0 && fabs(u[b]) < best) {
                best = fabs(u[b]);
                show = b;
            }
        }
        if (show < 0) show = 0;
        printf("SINR loss: %s on %s\n", result, input);
        printf("  C=%d P=%d D=%d Q=%d N=%d S=%d K=%d B=%d loading %g; beam %d looks at u = %.3f\n",
               c->channels, c->pulses, c->doppler_bins, c->doppler_order, res.N, res.S, res.K,
               res.B, c->loading, show, u ? u[show] : NAN);
        printf("  %4s %12s %12s %12s %10s\n", "bin", res.prf_hz > 0 ? "Doppler(Hz)" : "Doppler",
               "optimum(dB)", "adaptive(dB)", "rho(dB)");
        for (int d = 0; d < res.D; d++) {
            double lo = res.optimum_loss[(size_t)d * res.B + show];
            double rm = stap_sinr_rho_mean(&res, d, show);
            printf("  %4d %12.3f %12.2f %12.2f %10.2f\n", d,
                   res.doppler[d] * (res.prf_hz > 0 ? res.prf_hz : 1), db(lo), db(lo * rm), db(rm));
        }
        printf("  mean rho over %zu values (%s): %.4f (%.2f dB)\n", res.count,
               beam < 0 ? "all beams, bins and segments" : "this beam, all bins and segments",
               res.rho_mean, db(res.rho_mean));
        if (isfinite(res.rmb_mean)) {
            printf("  RMB (K+2-N)/(K+1) = %.4f (%.2f dB); rho ~ Beta(%d, %d), sd %.4f; standard "
                   "error of the mean %.4f if the values were independent: z = %.2f\n",
                   res.rmb_mean, db(res.rmb_mean), res.K + 2 - res.N, res.N - 1, res.rmb_sd,
                   res.rho_se, res.z);
            printf("  sample sd of rho %.4f (Beta: %.4f)%s\n", res.rho_sd, res.rmb_sd,
                   res.rmb_applicable ? ""
                                      : "; note: the RMB law does not strictly apply to this "
                                        "run (diagonal loading, or steering unlike the target "
                                        "signature)");
        } else {
            printf("  RMB law undefined: K = %d < N - 1 = %d\n", res.K, res.N - 1);
        }
        printf("  written: %s\n", out);
        free(u);
    }
    stap_sinr_free(&res);
out:
    stap_run_free(&run);
    scene_truth_free(&truth);
    return status;
}
