/* sinr_file.c: the files of the SINR analysis (sinr.h) — a run's result file read back
 * (stap_run_read) and the SINR table's own file — through the I/O module's plain API
 * (h5x.h). */
#include "sinr.h"
#include "h5x.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stap_run_free(stap_run_data *rd)
{
    if (!rd) return;
    free(rd->steering);
    free(rd->look_az);
    free(rd->look_el);
    free(rd->weights);
    free(rd->output);
    free(rd->detections);
    memset(rd, 0, sizeof *rd);
}

static int parse_window_string(const char *s, stap_config *c)
{
    if (!strcmp(s, "none")) c->window = STAP_WINDOW_NONE;
    else if (!strcmp(s, "hann")) c->window = STAP_WINDOW_HANN;
    else if (!strncmp(s, "chebyshev:", 10)) {
        char *end;
        c->window = STAP_WINDOW_CHEBYSHEV;
        c->chebyshev_db = strtod(s + 10, &end);
        if (*end || !(c->chebyshev_db > 0)) return -1;
    } else return -1;
    return 0;
}

/* /config of a result file into rd->cfg (validated as a run's configuration) */
static int run_config(h5x *f, stap_run_data *rd, stap_error *err)
{
    const char *path = stap_h5x_path(f), *g = "/config";
    stap_config *c = &rd->cfg;
    stap_config_defaults(c);
    static const char *const inames[] = {"channels", "pulses", "range_gates", "doppler_bins",
                                         "doppler_order", "segments", "training", "beams"};
    int *idst[] = {&c->channels, &c->pulses, &c->range_gates, &c->doppler_bins,
                   &c->doppler_order, &c->segments, &c->training, &c->beams};
    int st = STAP_OK;
    long long v;
    for (int i = 0; i < 8 && !st; i++)
        if (!(st = stap_h5x_get_count(f, g, inames[i], 0, 1000000000, &v, err))) *idst[i] = (int)v;
    if (st || (st = stap_h5x_get_double(f, g, "loading", &c->loading, err)) ||
        (st = stap_h5x_get_double(f, g, "element_spacing_wavelengths", &c->element_spacing, err)))
        return st;
    char win[128];
    if ((st = stap_h5x_get_string(f, g, "window", win, sizeof win, err))) return st;
    if (parse_window_string(win, c))
        return stap_fail(err, STAP_EFORMAT, "%s: /config window '%s' is not none, hann or "
                         "chebyshev:DB", path, win);
    /* v1.1 files before the sliding window have no training_window: segments */
    if (stap_h5x_has_attr(f, g, "training_window")) {
        char tw[32];
        if ((st = stap_h5x_get_string(f, g, "training_window", tw, sizeof tw, err))) return st;
        if (stap_training_window_parse(tw, &c->training_window, err)) {
            stap_error_prefix(err, "%s: /config training_window", path);
            return STAP_EFORMAT;
        }
        if (c->training_window == STAP_TRAINING_SLIDING) {
            long long b, gd;
            if ((st = stap_h5x_get_count(f, g, "block", 1, 1000000000, &b, err)) ||
                (st = stap_h5x_get_count(f, g, "guard", 0, 1000000000, &gd, err)))
                return st;
            c->block = (int)b;
            c->guard = (int)gd;
        }
    }
    /* files before JDL have no algorithm: post-Doppler */
    if (stap_h5x_has_attr(f, g, "algorithm")) {
        char al[32];
        if ((st = stap_h5x_get_string(f, g, "algorithm", al, sizeof al, err))) return st;
        if (stap_algorithm_parse(al, &c->algorithm, err)) {
            stap_error_prefix(err, "%s: /config algorithm", path);
            return STAP_EFORMAT;
        }
        /* its own parameter, if it has one (0, the library's "default", is not a value) */
        const char *pn = stap_algorithm_info_of(c->algorithm)->param;
        if (pn) {
            if ((st = stap_h5x_get_count(f, g, pn, -1000000, 1000000, &v, err))) return st;
            if (v == 0)
                return stap_fail(err, STAP_EFORMAT, "%s: /config %s is 0; expected a nonzero "
                                 "whole number", path, pn);
            if ((st = stap_algorithm_set_param(c, pn, (int)v, err))) return st;
        }
    }
    c->backend = STAP_BACKEND_CPU;
    rd->beams = c->beams;
    stap_config chk = *c;
    if ((st = stap_config_validate(&chk, 1, rd->beams, stap_dof(c), err))) {
        stap_error_prefix(err, "%s: /config", path);
        return st;
    }
    if (chk.segments != c->segments) /* sliding: the blocks give the segments */
        return stap_fail(err, STAP_EFORMAT, "%s: /config segments %d, but %d range gates in "
                         "sliding blocks of %d make %d", path, c->segments, c->range_gates,
                         c->block, chk.segments);
    return STAP_OK;
}

int stap_run_read(const char *path, int want_output, stap_run_data *rd, stap_error *err)
{
    return stap_run_read_cpi(path, -1, want_output, rd, NULL, err);
}

int stap_run_read_cpi(const char *path, long long cpi, int want_output, stap_run_data *rd,
                      long long *rows, stap_error *err)
{
    memset(rd, 0, sizeof *rd);
    if (rows) *rows = 1;
    h5x *f = NULL;
    int st = stap_h5x_open(&f, path, err);
    if (st) return st;
    if (!stap_h5x_exists(f, "/config")) {
        stap_h5x_close(f);
        return stap_fail(err, STAP_EFORMAT, "%s: no /config group (not a result of 'rtstap run')",
                         path);
    }
    if ((st = run_config(f, rd, err))) goto out;
    const stap_config *c = &rd->cfg;
    const size_t N = (size_t)stap_dof(c), B = (size_t)rd->beams, D = (size_t)c->doppler_bins;
    const size_t sd[2] = {B, N}, wd[4] = {D, (size_t)c->segments, B, N};
    const size_t od[3] = {B, D, (size_t)c->range_gates};
    rd->steering = malloc(sizeof(stap_cf32) * B * N);
    rd->weights = malloc(sizeof(stap_cf32) * D * c->segments * B * N);
    rd->output = want_output ? malloc(sizeof(stap_cf32) * B * D * c->range_gates) : NULL;
    if (!rd->steering || !rd->weights || (want_output && !rd->output)) {
        st = stap_fail(err, STAP_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    long long n = 0, row = cpi;
    const int recording = stap_h5x_dataset_rank(f, "/weights", &n) == 5;
    if (rows && recording) *rows = n;
    if (!recording && cpi > 0) {
        st = stap_fail(err, STAP_EINVAL, "CPI %lld: %s holds one CPI's results", cpi, path);
        goto out;
    }
    if (recording && cpi < 0) {
        st = stap_fail(err, STAP_EINVAL, "%s holds the results of %lld CPIs: say which (a CPI "
                       "index)", path, n);
        goto out;
    }
    if (recording && stap_h5x_exists(f, "/axes/input_cpi")) { /* the row of the input's CPI */
        double *icd = malloc(sizeof *icd * (size_t)(n > 0 ? n : 1));
        const size_t nd[1] = {(size_t)n};
        if (!icd) {
            st = stap_fail(err, STAP_ENOMEM, "%s: out of memory", path);
            goto out;
        }
        if ((st = stap_h5x_get_doubles(f, "/axes/input_cpi", 1, nd, icd, err))) {
            free(icd);
            goto out;
        }
        row = -1;
        for (long long r = 0; r < n && row < 0; r++)
            if ((long long)icd[r] == cpi) row = r;
        free(icd);
        if (row < 0) {
            st = stap_fail(err, STAP_EINVAL, "CPI %lld: %s has no results of it (/axes/input_cpi)",
                           cpi, path);
            goto out;
        }
    }
    if ((st = stap_h5x_get_cf32(f, "/steering", 2, sd, rd->steering, err)) ||
        (st = recording ? stap_h5x_get_cf32_row(f, "/weights", row, 4, wd, rd->weights, NULL, err)
                        : stap_h5x_get_cf32(f, "/weights", 4, wd, rd->weights, err)) ||
        (want_output && (st = recording ? stap_h5x_get_cf32_row(f, "/output/iq", row, 3, od, rd->output, NULL, err)
                                        : stap_h5x_get_cf32(f, "/output/iq", 3, od, rd->output, err))))
        goto out;
    const long long input_cpi = cpi;
    if (stap_h5x_has_attr(f, "/steering", "az_deg") && stap_h5x_has_attr(f, "/steering", "el_deg")) {
        rd->look_az = malloc(sizeof(double) * B);
        rd->look_el = malloc(sizeof(double) * B);
        if (!rd->look_az || !rd->look_el) {
            st = stap_fail(err, STAP_ENOMEM, "%s: out of memory", path);
            goto out;
        }
        if ((st = stap_h5x_get_attr_doubles(f, "/steering", "az_deg", B, rd->look_az, err)) ||
            (st = stap_h5x_get_attr_doubles(f, "/steering", "el_deg", B, rd->look_el, err)))
            goto out;
    }
    stap_error ignore;
    if (stap_h5x_has_attr(f, "/radar", "prf_hz") &&
        stap_h5x_get_double(f, "/radar", "prf_hz", &rd->prf_hz, &ignore) == STAP_OK && rd->prf_hz > 0)
        rd->has_prf = 1;
    if (stap_h5x_exists(f, "/detections")) {
        if ((st = recording ? stap_h5x_get_detections_of(f, "/detections", input_cpi, &rd->detections,
                                                    &rd->detection_count, err)
                            : stap_h5x_get_detections(f, "/detections", &rd->detections, &rd->detection_count, err)))
            goto out;
        rd->have_detections = 1;
        for (size_t i = 0; i < rd->detection_count; i++) {
            const stap_detection *d = &rd->detections[i];
            if (d->beam < 0 || d->beam >= rd->beams || d->doppler_bin < 0 ||
                d->doppler_bin >= c->doppler_bins || d->range_cell < 0 ||
                d->range_cell >= c->range_gates) {
                st = stap_fail(err, STAP_EFORMAT, "%s: /detections row %zu lies outside the output",
                               path, i);
                goto out;
            }
        }
    }
out:
    stap_h5x_close(f);
    if (st) stap_run_free(rd);
    return st;
}

/* ---- the SINR file ------------------------------------------------------------------ */

static double to_db(double x) { return 10.0 * log10(x > 1e-300 ? x : 1e-300); }

int stap_sinr_write(const char *path, const stap_sinr_result *r, const char *scene_name,
                    const char *run_name, const stap_write_options *wo, stap_error *err)
{
    const stap_write_mode mode = wo ? wo->mode : STAP_WRITE_NEW;
    const size_t DB = (size_t)r->D * r->B, DSB = DB * r->S;
    double *hz = malloc(sizeof(double) * r->D), *lo = malloc(sizeof(double) * DB);
    double *lg = malloc(sizeof(double) * DB), *la = malloc(sizeof(double) * DSB);
    h5x *f = NULL;
    int st = STAP_OK;
    if (!hz || !lo || !lg || !la) st = stap_fail(err, STAP_ENOMEM, "out of memory writing '%s'", path);
    else st = stap_h5x_create(&f, path, mode, err);
    if (!st) {
        for (int d = 0; d < r->D; d++) hz[d] = r->doppler[d] * r->prf_hz;
        for (size_t i = 0; i < DB; i++) lo[i] = to_db(r->optimum_loss[i]);
        for (size_t i = 0; i < DB; i++) lg[i] = to_db(r->algorithm_loss[i]);
        for (size_t i = 0; i < DSB; i++) la[i] = to_db(r->adaptive_loss[i]);
        const char *g = "/sinr";
        const size_t d1[1] = {(size_t)r->D}, d2[2] = {(size_t)r->D, (size_t)r->B};
        const size_t d3[3] = {(size_t)r->D, (size_t)r->S, (size_t)r->B};
        stap_h5x_group(f, g);
        stap_h5x_put_doubles(f, "/sinr/doppler_normalized", 1, d1, r->doppler);
        if (r->prf_hz > 0) stap_h5x_put_doubles(f, "/sinr/doppler_hz", 1, d1, hz);
        stap_h5x_put_doubles(f, "/sinr/optimum_loss_db", 2, d2, lo);
        stap_h5x_put_doubles(f, "/sinr/algorithm_loss_db", 2, d2, lg);
        stap_h5x_put_doubles(f, "/sinr/rho", 3, d3, r->rho);
        stap_h5x_put_doubles(f, "/sinr/adaptive_loss_db", 3, d3, la);
        stap_h5x_put_string(f, g, "scene", scene_name ? scene_name : "");
        stap_h5x_put_string(f, g, "run", run_name ? run_name : "");
        stap_h5x_put_string(f, g, "definition",
                       "optimum_loss = SINR_opt / SNR_0 (Ward TR-1015), algorithm_loss = "
                       "SINR_alg / SNR_0 (the algorithm's best weights: T (T^H R T)^-1 T^H t), "
                       "rho = SINR(w) / SINR_alg, adaptive_loss = SINR(w) / SNR_0 (= "
                       "algorithm_loss * rho); target in the beam's look direction "
                       "at the bin's centre Doppler; true covariance of the Doppler-domain "
                       "snapshots from /truth of the scene. Pre-Doppler and ADPCA: SINR on the "
                       "staggered snapshot z_d, algorithm_loss of R_sub^-1 s (R_sub: one "
                       "sub-CPI), rho = |w^H s|^2 / (w^H R_sub w s^H R_sub^-1 s) in the "
                       "sub-CPI domain, adaptive_loss = SINR_z(w) / SNR_0");
        stap_h5x_put_llong(f, g, "doppler_bins", r->D);
        stap_h5x_put_llong(f, g, "segments", r->S);
        stap_h5x_put_llong(f, g, "beams", r->B);
        stap_h5x_put_llong(f, g, "dof", r->N);
        stap_h5x_put_llong(f, g, "adapted_dof", r->Nt);
        stap_h5x_put_string(f, g, "algorithm", r->algorithm);
        stap_h5x_put_llong(f, g, "training", r->K);
        stap_h5x_put_llong(f, g, "channels", r->C);
        stap_h5x_put_llong(f, g, "pulses", r->P);
        stap_h5x_put_llong(f, g, "doppler_order", r->Q);
        stap_h5x_put_string(f, g, "window", r->window);
        stap_h5x_put_string(f, g, "training_window", r->training);
        stap_h5x_put_llong(f, g, "summary_beam", r->beam);
        stap_h5x_put_double(f, g, "prf_hz", r->prf_hz);
        stap_h5x_put_llong(f, g, "rho_count", (long long)r->count);
        stap_h5x_put_llong(f, g, "rho_estimates", (long long)r->estimates);
        stap_h5x_put_double(f, g, "rho_mean", r->rho_mean);
        stap_h5x_put_double(f, g, "rho_sd", r->rho_sd);
        stap_h5x_put_double(f, g, "rmb_mean", r->rmb_mean);
        stap_h5x_put_double(f, g, "rmb_sd", r->rmb_sd);
        stap_h5x_put_double(f, g, "rho_se", r->rho_se);
        stap_h5x_put_double(f, g, "z", r->z);
        stap_h5x_put_llong(f, g, "rmb_applicable", r->rmb_applicable);
        st = stap_h5x_finish(f, err);
    }
    free(hz);
    free(lo);
    free(lg);
    free(la);
    return st;
}

int stap_sinr_read(const char *path, stap_sinr_result *r, stap_error *err)
{
    memset(r, 0, sizeof *r);
    h5x *f = NULL;
    int st = stap_h5x_open(&f, path, err);
    if (st) return st;
    const char *g = "/sinr";
    if (!stap_h5x_exists(f, g)) {
        stap_h5x_close(f);
        return stap_fail(err, STAP_EFORMAT, "%s: no /sinr group (not a file of 'rtstap sinr')", path);
    }
    static const char *const names[] = {"doppler_bins", "segments", "beams", "dof", "training",
                                        "channels", "pulses"};
    int *dst[] = {&r->D, &r->S, &r->B, &r->N, &r->K, &r->C, &r->P};
    long long v;
    for (int i = 0; i < 7 && !st; i++)
        if (!(st = stap_h5x_get_count(f, g, names[i], 1, 100000000, &v, err))) *dst[i] = (int)v;
    if (st) goto out;
    /* recorded since the tables were compared on one plot; older tables: Q from N / C */
    r->Q = r->N % r->C == 0 ? r->N / r->C : 0;
    if (stap_h5x_has_attr(f, g, "doppler_order")) {
        if ((st = stap_h5x_get_count(f, g, "doppler_order", 1, 100000000, &v, err))) goto out;
        if (v != r->N / r->C || r->N % r->C) {
            st = stap_fail(err, STAP_EFORMAT, "%s: /sinr doppler_order %lld does not divide dof %d "
                           "into channels %d", path, v, r->N, r->C);
            goto out;
        }
        r->Q = (int)v;
    }
    if (stap_h5x_has_attr(f, g, "window") &&
        (st = stap_h5x_get_string(f, g, "window", r->window, sizeof r->window, err)))
        goto out;
    /* recorded since JDL; older tables are post-Doppler's, adapting every DOF */
    r->Nt = r->N;
    if (stap_h5x_has_attr(f, g, "adapted_dof")) {
        if ((st = stap_h5x_get_count(f, g, "adapted_dof", 1, r->N, &v, err))) goto out;
        r->Nt = (int)v;
    }
    if ((stap_h5x_has_attr(f, g, "algorithm") &&
         (st = stap_h5x_get_string(f, g, "algorithm", r->algorithm, sizeof r->algorithm, err))) ||
        (stap_h5x_has_attr(f, g, "training_window") &&
         (st = stap_h5x_get_string(f, g, "training_window", r->training, sizeof r->training, err))))
        goto out;
    double x;
    if ((st = stap_h5x_get_double(f, g, "summary_beam", &x, err))) goto out;
    r->beam = (int)x;
    if ((st = stap_h5x_get_double(f, g, "prf_hz", &r->prf_hz, err)) ||
        (st = stap_h5x_get_double(f, g, "rho_count", &x, err)))
        goto out;
    r->count = (size_t)x;
    if ((st = stap_h5x_get_double(f, g, "rho_mean", &r->rho_mean, err)) ||
        (st = stap_h5x_get_double(f, g, "rho_sd", &r->rho_sd, err)) ||
        (st = stap_h5x_get_double(f, g, "rho_se", &r->rho_se, err)) ||
        (st = stap_h5x_get_double(f, g, "z", &r->z, err)) ||
        (st = stap_h5x_get_double(f, g, "rmb_applicable", &x, err)))
        goto out;
    r->rmb_applicable = (int)x;
    /* rmb_mean / rmb_sd are NaN when the law does not apply: read them leniently */
    stap_error ignore;
    r->estimates = r->count; /* (tables before rho_estimates counted every value) */
    if (stap_h5x_get_double(f, g, "rho_estimates", &x, &ignore) == STAP_OK && x >= 1) r->estimates = (size_t)x;
    if (stap_h5x_get_double(f, g, "rmb_mean", &r->rmb_mean, &ignore)) r->rmb_mean = NAN;
    if (stap_h5x_get_double(f, g, "rmb_sd", &r->rmb_sd, &ignore)) r->rmb_sd = NAN;
    const size_t DB = (size_t)r->D * r->B;
    r->doppler = malloc(sizeof(double) * r->D);
    r->optimum_loss = malloc(sizeof(double) * DB);
    r->algorithm_loss = malloc(sizeof(double) * DB);
    r->rho = malloc(sizeof(double) * DB * r->S);
    r->adaptive_loss = malloc(sizeof(double) * DB * r->S);
    if (!r->doppler || !r->optimum_loss || !r->algorithm_loss || !r->rho || !r->adaptive_loss) {
        st = stap_fail(err, STAP_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const size_t d1[1] = {(size_t)r->D}, d2[2] = {(size_t)r->D, (size_t)r->B};
    const size_t d3[3] = {(size_t)r->D, (size_t)r->S, (size_t)r->B};
    if ((st = stap_h5x_get_doubles(f, "/sinr/doppler_normalized", 1, d1, r->doppler, err)) ||
        (st = stap_h5x_get_doubles(f, "/sinr/optimum_loss_db", 2, d2, r->optimum_loss, err)) ||
        (st = stap_h5x_get_doubles(f, "/sinr/rho", 3, d3, r->rho, err)))
        goto out;
    if (stap_h5x_exists(f, "/sinr/algorithm_loss_db")) {
        if ((st = stap_h5x_get_doubles(f, "/sinr/algorithm_loss_db", 2, d2, r->algorithm_loss, err)))
            goto out;
    } else {
        memcpy(r->algorithm_loss, r->optimum_loss, sizeof(double) * DB);
    }
    for (size_t i = 0; i < DB; i++) r->optimum_loss[i] = pow(10.0, r->optimum_loss[i] / 10.0);
    for (size_t i = 0; i < DB; i++) r->algorithm_loss[i] = pow(10.0, r->algorithm_loss[i] / 10.0);
    /* written by every version; absent only from hand-made tables: L_alg rho */
    if (stap_h5x_exists(f, "/sinr/adaptive_loss_db")) {
        if ((st = stap_h5x_get_doubles(f, "/sinr/adaptive_loss_db", 3, d3, r->adaptive_loss, err)))
            goto out;
        for (size_t i = 0; i < DB * r->S; i++)
            r->adaptive_loss[i] = pow(10.0, r->adaptive_loss[i] / 10.0);
    } else {
        for (int d = 0; d < r->D; d++)
            for (int s = 0; s < r->S; s++)
                for (int b = 0; b < r->B; b++) {
                    const size_t k = ((size_t)d * r->S + s) * r->B + b;
                    r->adaptive_loss[k] = r->algorithm_loss[(size_t)d * r->B + b] * r->rho[k];
                }
    }
out:
    stap_h5x_close(f);
    if (st) stap_sinr_free(r);
    return st;
}
