/* cmd_sinr.c: `rtstap sinr` — the SINR loss of a run's adaptive weights against the
 * optimum from the true covariance of a generated scene (stap/analysis/sinr.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cli_opts.h"
#include "cmd_scene.h"
#include "scene_sinr.h"
#include "report.h" /* the JSON report helpers */

static const cli_command sinr_cmd = {
    "sinr",
    "For every Doppler bin d, segment s and beam b of a run on a scene made by\n"
    "'rtstap gen': the optimum SINR loss L_opt = SINR_opt / SNR_0 from the true\n"
    "covariance of the Doppler-domain snapshots (Ward TR-1015), and the adaptive loss\n"
    "rho = SINR(w) / SINR_opt of the run's weights, for a target in the beam's look\n"
    "direction at the bin's centre Doppler. The mean of rho is compared with the\n"
    "Reed-Mallett-Brennan expectation (K+2-N)/(K+1), rho ~ Beta(K+2-N, N-1).\n"
    "Reduced-DOF runs (jdl, pre-doppler, adpca) add the loss of the algorithm's\n"
    "clairvoyant weights; pre-doppler and adpca are evaluated on the staggered\n"
    "snapshots their weights filter, with rho taken in the sub-CPI domain they adapt in.\n",
    "JSON: the configuration, the summary (rmb_* and z are null where the RMB law is\n"
    "undefined, K < N - 1) and the table of the beam shown.\n"};

static double db(double x) { return 10 * log10(x > 1e-300 ? x : 1e-300); }

/* what the report shows: the table, its run, the beam of the per-bin table */
typedef struct sinr_view {
    const char *input, *result, *out;
    const stap_config *c;
    const stap_sinr_result *res;
    int beam, show; /* --beam (-1: all), the beam of the per-bin table */
    const double *u; /* each beam's look direction, or NULL */
} sinr_view;

static void sinr_print(FILE *rep, const sinr_view *v)
{
    const char *input = v->input, *result = v->result, *out = v->out;
    const stap_config *c = v->c;
    const stap_sinr_result res = *v->res;
    const int beam = v->beam, show = v->show;
    const double *u = v->u;
    fprintf(rep, "SINR loss: %s on %s\n", result, input);
    const unsigned traits = stap_algorithm_traits(c);
    const int reduced = traits != 0; /* not plain element-space post-Doppler */
    const int sub = stap_is_subcpi(c);
    fprintf(rep, "  C=%d P=%d D=%d Q=%d N=%d S=%d K=%d B=%d loading %g%s%s; beam %d looks at u = %.3f\n",
           c->channels, c->pulses, c->doppler_bins, c->doppler_order, res.N, res.S, res.K,
           res.B, c->loading, reduced ? "; " : "", reduced ? res.algorithm : "", show,
           u ? u[show] : NAN);
    if (traits & STAP_TRAIT_FIXED)
        fprintf(rep, "  fixed weights (no adaptation: %d channels x %d pulses, %d sub-CPIs); "
                "algorithm(dB): the canceller's loss on the staggered snapshots; rho = "
                "SINR(w) / SINR(canceller)\n", c->channels, c->doppler_order,
                stap_window_len(c));
    else if (reduced && stap_is_subcpi(c))
        fprintf(rep, "  %d DOF adapted (%d channels x %d pulses of a sub-CPI, %d sub-CPIs); "
                "algorithm(dB): its clairvoyant weights R_sub^-1 s on the staggered "
                "snapshots; rho in the sub-CPI domain\n", res.Nt, c->channels,
                c->doppler_order, stap_window_len(c));
    else if (reduced)
        fprintf(rep, "  %d DOF adapted; algorithm(dB): the loss of its clairvoyant weights, rho "
                "against them\n", res.Nt);
    fprintf(rep, "  %4s %12s %12s", "bin", res.prf_hz > 0 ? "Doppler(Hz)" : "Doppler",
            "optimum(dB)");
    if (reduced) fprintf(rep, " %13s", "algorithm(dB)");
    fprintf(rep, " %12s %10s\n", "adaptive(dB)", "rho(dB)");
    for (int d = 0; d < res.D; d++) {
        double lo = res.optimum_loss[(size_t)d * res.B + show];
        double lg = res.algorithm_loss[(size_t)d * res.B + show];
        double rm = stap_sinr_rho_mean(&res, d, show);
        double la = stap_sinr_adaptive_mean(&res, d, show);
        fprintf(rep, "  %4d %12.3f %12.2f", d,
               res.doppler[d] * (res.prf_hz > 0 ? res.prf_hz : 1), db(lo));
        if (reduced) fprintf(rep, " %13.2f", db(lg));
        fprintf(rep, " %12.2f %10.2f\n", db(la), db(rm));
    }
    fprintf(rep, "  mean rho over %zu values (%s): %.4f (%.2f dB)\n", res.count,
           beam < 0 ? "all beams, bins and segments" : "this beam, all bins and segments",
           res.rho_mean, db(res.rho_mean));
    if (traits & STAP_TRAIT_FIXED) {
        fprintf(rep, "  RMB law: not applicable (DPCA trains nothing)\n");
    } else if (isfinite(res.rmb_mean)) {
        fprintf(rep, "  RMB (K+2-N)/(K+1) = %.4f (%.2f dB); rho ~ Beta(%d, %d), sd %.4f; standard "
               "error of the mean %.4f over the %zu independent covariance estimate%s (%s): "
               "z = %.2f\n",
               res.rmb_mean, db(res.rmb_mean), res.K + 2 - res.Nt, res.Nt - 1, res.rmb_sd,
               res.rho_se, res.estimates, res.estimates == 1 ? "" : "s",
               sub ? "a segment's bins and beams share one" : "one per bin and segment, shared by the beams",
               res.z);
        fprintf(rep, "  sample sd of rho %.4f (Beta: %.4f)%s\n", res.rho_sd, res.rmb_sd,
               res.rmb_applicable ? ""
                                  : "; note: the RMB law does not strictly apply to this "
                                    "run (diagonal loading, or steering unlike the target "
                                    "signature)");
    } else {
        fprintf(rep, "  RMB law undefined: K = %d < N - 1 = %d\n", res.K, res.Nt - 1);
    }
    fprintf(rep, "  written: %s\n", out);
}

static int sinr_json(const char *json, stap_write_mode mode, const sinr_view *v)
{
    stap_error err;
    int status = EXIT_OK;
    const char *input = v->input, *result = v->result, *out = v->out;
    const stap_config *c = v->c;
    const stap_sinr_result res = *v->res;
    const int beam = v->beam, show = v->show;
    const double *u = v->u;
    cJSON *doc = stream_json_report("sinr");
    cJSON_AddStringToObject(doc, "input", input);
    cJSON_AddStringToObject(doc, "result", result);
    cJSON_AddStringToObject(doc, "output", out);
    cJSON *cj = cJSON_AddObjectToObject(doc, "config");
    cJSON_AddNumberToObject(cj, "channels", c->channels);
    cJSON_AddNumberToObject(cj, "pulses", c->pulses);
    cJSON_AddNumberToObject(cj, "doppler_bins", res.D);
    cJSON_AddNumberToObject(cj, "doppler_order", c->doppler_order);
    cJSON_AddNumberToObject(cj, "dof", res.N);
    cJSON_AddNumberToObject(cj, "adapted_dof", res.Nt);
    cJSON_AddStringToObject(cj, "algorithm", res.algorithm);
    cJSON_AddNumberToObject(cj, "segments", res.S);
    cJSON_AddNumberToObject(cj, "training", res.K);
    cJSON_AddNumberToObject(cj, "beams", res.B);
    cJSON_AddNumberToObject(cj, "loading", c->loading);
    if (res.prf_hz > 0) cJSON_AddNumberToObject(cj, "prf_hz", res.prf_hz);
    cJSON *sm = cJSON_AddObjectToObject(doc, "summary");
    if (beam >= 0) cJSON_AddNumberToObject(sm, "beam", beam);
    else cJSON_AddStringToObject(sm, "beam", "all");
    cJSON_AddNumberToObject(sm, "count", (double)res.count);
    cJSON_AddNumberToObject(sm, "rho_mean", res.rho_mean);
    cJSON_AddNumberToObject(sm, "rho_sd", res.rho_sd);
    cJSON_AddNumberToObject(sm, "rmb_mean", res.rmb_mean); /* NaN (null) when K < N - 1 */
    cJSON_AddNumberToObject(sm, "rmb_sd", res.rmb_sd);
    cJSON_AddNumberToObject(sm, "rho_se", res.rho_se);
    cJSON_AddNumberToObject(sm, "estimates", (double)res.estimates);
    cJSON_AddNumberToObject(sm, "z", res.z);
    cJSON_AddBoolToObject(sm, "rmb_applicable", res.rmb_applicable);
    cJSON *tb = cJSON_AddObjectToObject(doc, "table");
    cJSON_AddNumberToObject(tb, "beam", show);
    cJSON_AddNumberToObject(tb, "look_u", u ? u[show] : NAN);
    cJSON *rows = cJSON_AddArrayToObject(tb, "bins");
    for (int d = 0; d < res.D; d++) {
        double lo = res.optimum_loss[(size_t)d * res.B + show];
        double lg = res.algorithm_loss[(size_t)d * res.B + show];
        double rm = stap_sinr_rho_mean(&res, d, show);
        double la = stap_sinr_adaptive_mean(&res, d, show);
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "bin", d);
        cJSON_AddNumberToObject(r, "doppler", res.doppler[d]);
        if (res.prf_hz > 0) cJSON_AddNumberToObject(r, "doppler_hz", res.doppler[d] * res.prf_hz);
        cJSON_AddNumberToObject(r, "optimum_db", db(lo));
        cJSON_AddNumberToObject(r, "algorithm_db", db(lg));
        cJSON_AddNumberToObject(r, "adaptive_db", db(la));
        cJSON_AddNumberToObject(r, "rho_db", db(rm));
        cJSON_AddItemToArray(rows, r);
    }
    if (cli_json_write(json, doc, mode, &err)) status = cli_fail(&err);
    cJSON_Delete(doc);
    return status;
}

int cmd_sinr(int argc, char **argv)
{
    const char *input = NULL, *result = NULL, *out = NULL, *json = NULL;
    int beam = -1, quiet = 0, force = 0;
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &input, "FILE", "the scene (needs /truth)", .flags = CLI_REQUIRED | CLI_INPUT},
        {"result", 0, CLI_STRING, &result, "FILE", "the output of 'rtstap run --input SCENE.h5'",
         .flags = CLI_REQUIRED | CLI_INPUT},
        {"output", 'o', CLI_STRING, &out, "FILE",
         "where to write the table (written atomically; an existing\n"
         "file is refused without -f)", .alias = "out", .flags = CLI_REQUIRED | CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        {"beam", 0, CLI_INT, &beam, "B",
         "summarize and print beam B only (default: summary over all\n"
         "beams, table of the beam nearest broadside)", .lo = 0, .hi = 4095},
        CLI_OPT_JSON(&json),
        {"quiet", 0, CLI_FLAG, &quiet, NULL, "print nothing"},
        {0}};
    int pst = cli_parse(&sinr_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    const stap_write_mode mode = cli_write_mode(force);
    if ((pst = cli_output_ok(out, force)) || (pst = cli_output_ok(json, force))) return pst;
    FILE *rep = json && !strcmp(json, "-") ? stderr : stdout; /* stdout: the JSON only */

    stap_error err;
    stap_error_clear(&err);
    scene_truth truth;
    stap_run_data run;
    stap_sinr_result res;
    if (stap_scene_truth_read(input, &truth, &err)) return cli_fail(&err);
    if (stap_run_read(result, 0, &run, &err)) {
        stap_scene_truth_free(&truth);
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
        stap_error_prefix(&err, "%s vs %s", result, input);
        status = cli_fail(&err);
        goto out;
    }
    if (stap_sinr_write(out, &res, input, result, &(stap_write_options){.mode = mode}, &err)) {
        status = cli_fail(&err);
        stap_sinr_free(&res);
        goto out;
    }
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
    sinr_view v = {input, result, out, c, &res, beam, show, u};
    if (!quiet) sinr_print(rep, &v);
    if (json) {
        int js = sinr_json(json, mode, &v);
        if (js) status = js;
    }
    free(u);
    stap_sinr_free(&res);
out:
    stap_run_free(&run);
    stap_scene_truth_free(&truth);
    return status;
}
