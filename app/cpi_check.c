/* cpi_check.c: conditioning and finiteness checks of collected CPIs (cpi_check.h). */
#include "cpi_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void cpi_checks_init(cpi_checks *c, const char *input, int strict, int finite, int recording)
{
    c->input = input;
    c->strict = strict;
    c->finite = finite;
    c->recording = recording;
    c->ill_cpis = 0;
    c->worst_ratio = 1.0f;
    c->checked = 0;
}

static int finite_c(stap_cf32 v) { return isfinite(crealf(v)) && isfinite(cimagf(v)); }

static int check_finite(const stap_engine *e, const stap_cpi_result *r, stap_error *err)
{
    const stap_config *cfg = stap_engine_config(e);
    const int B = stap_engine_beams(e);
    const size_t D = (size_t)cfg->doppler_bins, R = (size_t)cfg->range_gates;
    if (r->weights) {
        const size_t n = stap_weights_count(cfg, B), N = n / ((size_t)D * cfg->segments * B);
        for (size_t i = 0; i < n; i++)
            if (!finite_c(r->weights[i])) {
                const size_t k = i / (B * N);
                return stap_fail(err, STAP_ENUMERIC, "check: adaptive weight not finite at Doppler "
                                 "bin %zu, segment %zu, beam %zu", k / cfg->segments,
                                 k % cfg->segments, (i / N) % B);
            }
    }
    if (r->output) {
        const size_t n = stap_output_count(cfg, B);
        for (size_t i = 0; i < n; i++)
            if (!finite_c(r->output[i]))
                return stap_fail(err, STAP_ENUMERIC, "check: adaptive output not finite at beam %zu, "
                                 "Doppler bin %zu, range cell %zu (input samples near float's "
                                 "range overflow the Doppler filter)", i / (D * R), (i / R) % D,
                                 i % R);
    }
    for (size_t i = 0; i < r->detection_count; i++) {
        const stap_detection *d = &r->detections[i];
        if (!isfinite(d->power) || !isfinite(d->snr_db))
            return stap_fail(err, STAP_ENUMERIC, "check: detection at beam %d, Doppler bin %d, range "
                             "cell %d has a non-finite power or SNR", d->beam, d->doppler_bin,
                             d->range_cell);
    }
    return STAP_OK;
}

static long long cpi_name(const cpi_checks *c, long long cpi)
{
    return c->name_cpi ? c->name_cpi(c->name_user, cpi) : cpi;
}

int cpi_check(cpi_checks *c, const stap_engine *e, const stap_cpi_result *r, stap_error *err)
{
    c->checked++;
    if (r->diag_ratio < c->worst_ratio) c->worst_ratio = r->diag_ratio;
    stap_error why;
    if (stap_engine_check_conditioning(e, r, &why)) {
        c->ill_cpis++;
        if (c->strict) {
            *err = why;
            const size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l, " (--loading DELTA, e.g. 1e-3, regularizes it)");
            if (c->recording) stap_error_prefix(err, "CPI %lld", cpi_name(c, r->cpi));
            return stap_error_prefix(err, "%s", c->input);
        }
        if (c->ill_cpis == 1) {
            if (c->recording)
                fprintf(stderr, "rtstap: warning: %s: CPI %lld: %s; --loading DELTA (e.g. 1e-3) "
                        "regularizes it, --strict makes this an error\n", c->input,
                        cpi_name(c, r->cpi), why.msg);
            else
                fprintf(stderr, "rtstap: warning: %s: %s; --loading DELTA (e.g. 1e-3) "
                        "regularizes it, --strict makes this an error\n", c->input, why.msg);
        }
    }
    if (c->finite && check_finite(e, r, err)) {
        if (c->recording) stap_error_prefix(err, "CPI %lld", cpi_name(c, r->cpi));
        return stap_error_prefix(err, "%s", c->input);
    }
    return STAP_OK;
}

void cpi_checks_report(const cpi_checks *c)
{
    if (c->ill_cpis > 1)
        fprintf(stderr, "rtstap: warning: %s: %lld of %lld CPIs had ill-conditioned training "
                "(smallest min|R_ii|/max|R_ii| %.2g)\n", c->input, c->ill_cpis, c->checked,
                (double)c->worst_ratio);
}
