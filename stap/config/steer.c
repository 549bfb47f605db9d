/* steer.c: steering vectors in physical units — looks (azimuth, elevation, a target's Doppler)
 * through an array's geometry and calibration into the engine's B x N steering matrix
 * (stap.h, docs/processing.md "Steering and array geometry"; Ward, TR-1015, section 2.2). */
#include "algorithm.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>

static double rad(double deg) { return deg * (M_PI / 180.0); }

int stap_doppler_bin(double f, int D)
{
    double k = floor(f * D + 0.5);
    long long d = (long long)k % D;
    return (int)(d < 0 ? d + D : d);
}

void stap_looks_sector(double az1, double az2, double el, int nbeams, stap_look *looks)
{
    for (int b = 0; b < nbeams; b++) {
        looks[b].az_deg = nbeams == 1 ? 0.5 * (az1 + az2) : az1 + (az2 - az1) * b / (nbeams - 1);
        looks[b].el_deg = el;
        looks[b].doppler = NAN;
    }
}

static int check_looks(const stap_config *cfg, const stap_look *looks, int nbeams,
                       stap_error *err)
{
    if (nbeams < 1) return stap_fail(err, STAP_EINVAL, "stap_steering_from_looks: nbeams %d must be >= 1", nbeams);
    const stap_algo *al = stap_algo_of(cfg);
    for (int b = 0; b < nbeams; b++) {
        const stap_look *l = &looks[b];
        if (!(fabs(l->az_deg) <= 180))
            return stap_fail(err, STAP_EINVAL, "stap_look.az_deg %g (beam %d) must be between -180 and 180 degrees",
                             l->az_deg, b);
        if (!(fabs(l->el_deg) <= 90))
            return stap_fail(err, STAP_EINVAL, "stap_look.el_deg %g (beam %d) must be between -90 and 90 degrees",
                             l->el_deg, b);
        if (isnan(l->doppler)) continue;
        if (!(fabs(l->doppler) <= 0.5))
            return stap_fail(err, STAP_EINVAL, "stap_look.doppler %g (beam %d) must be between -0.5 and 0.5 "
                             "cycles per pulse (the PRF's band)", l->doppler, b);
        if (!al || !al->doppler_taps)
            return stap_fail(err, STAP_EINVAL, "stap_look.doppler: the %s weights do not depend on a "
                             "target's Doppler (one weight for every Doppler bin, or fixed weights)",
                             al ? al->info.label : "algorithm's");
    }
    return STAP_OK;
}

static int check_array(const stap_config *cfg, const stap_array *a, stap_error *err)
{
    if (!a) return STAP_OK;
    if (a->elements != cfg->channels)
        return stap_fail(err, STAP_EINVAL, "stap_array.elements %d must equal the cube's %d channels",
                         a->elements, cfg->channels);
    for (int c = 0; a->position && c < 3 * a->elements; c++)
        if (!isfinite(a->position[c]))
            return stap_fail(err, STAP_EINVAL, "stap_array.position of element %d is not finite", c / 3);
    for (int c = 0; a->calibration && c < a->elements; c++) {
        const stap_cf32 g = a->calibration[c];
        if (!isfinite(crealf(g)) || !isfinite(cimagf(g)) || g == 0)
            return stap_fail(err, STAP_EINVAL, "stap_array.calibration of channel %d must be finite and "
                             "not zero", c);
    }
    return STAP_OK;
}

/* the temporal taps of look l into t (Q re, im pairs) */
static void look_taps(const stap_config *cfg, const stap_algo *al, const float *win,
                      const stap_look *l, double *t)
{
    const int Q = cfg->doppler_order, D = cfg->doppler_bins > 0 ? cfg->doppler_bins : cfg->pulses;
    if (isnan(l->doppler)) {
        for (int q = 0; q < Q; q++) {
            t[2 * q] = al ? al->steering_tap(Q, q) : q == (Q - 1) / 2;
            t[2 * q + 1] = 0;
        }
        return;
    }
    const double delta = l->doppler * D - floor(l->doppler * D + 0.5);
    al->doppler_taps(cfg, win, delta, t);
}

int stap_steering_from_looks(const stap_config *cfg, const stap_array *array,
                             const stap_look *looks, int nbeams, stap_cf32 *V, stap_error *err)
{
    int st;
    if ((st = check_looks(cfg, looks, nbeams, err)) || (st = check_array(cfg, array, err))) return st;
    const int C = cfg->channels, Q = cfg->doppler_order, N = C * Q;
    if (C < 1 || Q < 1 || cfg->pulses < 1)
        return stap_fail(err, STAP_EINVAL, "stap_steering_from_looks: channels %d, doppler_order %d "
                         "and pulses %d must be >= 1", C, Q, cfg->pulses);
    const stap_algo *al = stap_algo_of(cfg);
    const int W = stap_window_len(cfg);
    float *win = malloc(sizeof(float) * (W > 0 ? W : 1));
    double *t = malloc(sizeof(double) * 2 * Q);
    if (!win || !t) {
        free(win);
        free(t);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the steering vectors");
    }
    st = W > 0 ? stap_window(cfg, win, err) : STAP_OK;
    for (int b = 0; !st && b < nbeams; b++) {
        const double az = rad(looks[b].az_deg), el = rad(looks[b].el_deg);
        const double k[3] = {cos(el) * sin(az), cos(el) * cos(az), sin(el)};
        look_taps(cfg, al, win, &looks[b], t);
        for (int c = 0; c < C; c++) {
            double ph;
            if (array && array->position) {
                const double *p = array->position + 3 * c;
                ph = 2.0 * M_PI * (p[0] * k[0] + p[1] * k[1] + p[2] * k[2]);
            } else {
                ph = 2.0 * M_PI * cfg->element_spacing * c * k[0];
            }
            double complex a = cos(ph) + I * sin(ph);
            if (array && array->calibration) a *= array->calibration[c];
            for (int q = 0; q < Q; q++) {
                const double complex v = a * (t[2 * q] + I * t[2 * q + 1]);
                V[(size_t)b * N + c * Q + q] = (float)creal(v) + I * (float)cimag(v);
            }
        }
    }
    free(win);
    free(t);
    return st;
}
