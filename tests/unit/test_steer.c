/* test_steer: steering in physical units (stap.h: stap_steering_from_looks, stap_looks_sector,
 * stap_doppler_bin; stap/config/steer.c), against formulas written here:
 *  1. the default line: looks at az = asin(u_b) give stap_default_steering's beams (post-Doppler
 *     Q = 3, pre-Doppler M = 3, ADPCA M = 2) to float rounding;
 *  2. a 4 x 4 planar array in the x-z plane (element (m, n) at (m d, 0, n d)): the phase
 *     2 pi d (m cos(el) sin(az) + n sin(el)), written from the array's two direction cosines;
 *     irregular positions against 2 pi p . k with k from a rotation of broadside;
 *  3. calibration: row b is g (.) the uncalibrated row;
 *  4. a target's Doppler: post-Doppler taps against the windowed DFT summed here (Hann, D > P),
 *     which at a bin centre with no window and D = P is the centre tap; pre-Doppler: bin d0's
 *     solve steering (stap_subcpi_steering) is a (x) exp(2 pi i f q), the target's own pulses;
 *  5. refusals: a Doppler with ADPCA or DPCA, angles out of range, a Doppler out of the band,
 *     elements other than the channels, a zero or non-finite gain, a non-finite position. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stap.h"
#include "testutil.h"

static double deg(double r) { return r * 180.0 / M_PI; }

static stap_config shape(int C, int P, int Q, stap_algorithm a)
{
    stap_config c;
    memset(&c, 0, sizeof c);
    stap_config_defaults(&c);
    c.channels = C;
    c.pulses = P;
    c.range_gates = 64;
    c.doppler_order = Q;
    c.algorithm = a;
    c.beams = 5;
    return c;
}

static double maxdiff(const stap_cf32 *a, const double complex *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, cabs((double complex)a[i] - b[i]));
    return m;
}

static void default_line(void)
{
    const stap_algorithm algs[3] = {STAP_ALGORITHM_POST_DOPPLER, STAP_ALGORITHM_PRE_DOPPLER,
                                    STAP_ALGORITHM_ADPCA};
    const int Qs[3] = {3, 3, 2};
    for (int k = 0; k < 3; k++) {
        stap_config c = shape(12, 16, Qs[k], algs[k]);
        const int B = c.beams, N = stap_dof(&c);
        stap_cf32 *V0 = malloc(sizeof *V0 * B * N), *V1 = malloc(sizeof *V1 * B * N);
        stap_look looks[5];
        for (int b = 0; b < B; b++) looks[b] = (stap_look){deg(asin(stap_beam_u(b, B))), 0, NAN};
        stap_default_steering(&c, V0);
        stap_error err;
        CHECK(stap_steering_from_looks(&c, NULL, looks, B, V1, &err) == STAP_OK, "%s", err.msg);
        double m = 0;
        for (int i = 0; i < B * N; i++) m = fmax(m, cabsf(V0[i] - V1[i]));
        CHECK(m < 1e-5, "algorithm %d: the default beams differ by %g", k, m);
        free(V0);
        free(V1);
    }
}

static void planar(void)
{
    const int M = 4, C = M * M;
    const double d = 0.5;
    double pos[3 * 16];
    for (int m = 0; m < M; m++)
        for (int n = 0; n < M; n++) {
            double *p = pos + 3 * (m * M + n);
            p[0] = m * d, p[1] = 0, p[2] = n * d;
        }
    stap_config c = shape(C, 8, 1, STAP_ALGORITHM_POST_DOPPLER);
    const stap_look looks[3] = {{20, 0, NAN}, {-35, 15, NAN}, {60, -40, NAN}};
    stap_cf32 V[3 * 16];
    double complex want[3 * 16];
    stap_array arr = {C, pos, NULL};
    stap_error err;
    CHECK(stap_steering_from_looks(&c, &arr, looks, 3, V, &err) == STAP_OK, "%s", err.msg);
    for (int b = 0; b < 3; b++) {
        const double az = looks[b].az_deg * M_PI / 180, el = looks[b].el_deg * M_PI / 180;
        const double u = cos(el) * sin(az), w = sin(el); /* the x and z direction cosines */
        for (int m = 0; m < M; m++)
            for (int n = 0; n < M; n++) want[b * C + m * M + n] = cexp(2 * M_PI * I * d * (m * u + n * w));
    }
    CHECK(maxdiff(V, want, 3 * C) < 1e-5, "URA: %g from the direction cosines", maxdiff(V, want, 3 * C));

    /* irregular positions: k is broadside (0, 1, 0) turned up by el about x, then by az about z */
    double irr[3 * 16];
    unsigned s = 7;
    for (int i = 0; i < 3 * C; i++) {
        s = s * 1103515245u + 12345u;
        irr[i] = 3.0 * ((s >> 8) & 0xffff) / 65536.0 - 1.5;
    }
    arr.position = irr;
    CHECK(stap_steering_from_looks(&c, &arr, looks, 3, V, &err) == STAP_OK, "%s", err.msg);
    for (int b = 0; b < 3; b++) {
        const double az = looks[b].az_deg * M_PI / 180, el = looks[b].el_deg * M_PI / 180;
        const double k1[3] = {0, cos(el), sin(el)};                 /* about x */
        const double k[3] = {k1[0] * cos(az) + k1[1] * sin(az),     /* about -z: towards +x */
                             -k1[0] * sin(az) + k1[1] * cos(az), k1[2]};
        for (int e = 0; e < C; e++)
            want[b * C + e] = cexp(2 * M_PI * I * (irr[3 * e] * k[0] + irr[3 * e + 1] * k[1] + irr[3 * e + 2] * k[2]));
    }
    CHECK(maxdiff(V, want, 3 * C) < 1e-5, "irregular: %g", maxdiff(V, want, 3 * C));

    /* calibration: g (.) the row */
    stap_cf32 g[16], Vc[3 * 16];
    for (int e = 0; e < C; e++) g[e] = (float)(0.5 + 0.1 * e) * cexpf(I * 0.3f * e);
    arr.calibration = g;
    CHECK(stap_steering_from_looks(&c, &arr, looks, 3, Vc, &err) == STAP_OK, "%s", err.msg);
    for (int b = 0; b < 3; b++)
        for (int e = 0; e < C; e++) want[b * C + e] = (double complex)g[e] * V[b * C + e];
    CHECK(maxdiff(Vc, want, 3 * C) < 1e-5, "calibration: %g", maxdiff(Vc, want, 3 * C));
}

static void doppler(void)
{
    stap_error err;
    /* no window, D = P, a bin's centre: the centre tap, as the default */
    stap_config c = shape(6, 16, 3, STAP_ALGORITHM_POST_DOPPLER);
    const int N = stap_dof(&c);
    stap_look l = {10, 0, 3.0 / 16};
    stap_cf32 V[6 * 3], V0[6 * 3];
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_OK, "%s", err.msg);
    l.doppler = NAN;
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V0, &err) == STAP_OK, "%s", err.msg);
    double m = 0;
    for (int j = 0; j < N; j++) m = fmax(m, cabsf(V[j] - V0[j]));
    CHECK(m < 1e-5, "on a bin's centre: %g from the centre tap", m);

    /* Hann, D = 24 > P: a target at f; taps of bins d0 - 1, d0, d0 + 1 */
    c.window = STAP_WINDOW_HANN;
    c.doppler_bins = 24;
    const double f = -0.31;
    l.doppler = f;
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_OK, "%s", err.msg);
    const int d0 = stap_doppler_bin(f, 24);
    CHECK(d0 == 17, "stap_doppler_bin(-0.31, 24) = %d, want 17 (-7 + 24)", d0);
    double complex want[18];
    double gain = 0;
    for (int p = 0; p < 16; p++) gain += 0.5 - 0.5 * cos(2 * M_PI * p / 15);
    for (int ch = 0; ch < 6; ch++)
        for (int q = 0; q < 3; q++) {
            double complex t = 0;
            for (int p = 0; p < 16; p++) /* what bin d0 - 1 + q holds of exp(2 pi i f p) */
                t += (0.5 - 0.5 * cos(2 * M_PI * p / 15)) * cexp(2 * M_PI * I * (f - (d0 - 24 - 1 + q) / 24.0) * p);
            want[ch * 3 + q] = cexp(2 * M_PI * I * 0.5 * ch * sin(10 * M_PI / 180)) * t / gain;
        }
    CHECK(maxdiff(V, want, 18) < 1e-5, "post-Doppler taps: %g", maxdiff(V, want, 18));

    /* pre-Doppler: bin d0's solve steering is the target's sub-CPI pulses */
    stap_config pc = shape(6, 16, 3, STAP_ALGORITHM_PRE_DOPPLER);
    pc.doppler_bins = 16;
    const double fp = 0.2;
    l.doppler = fp;
    CHECK(stap_steering_from_looks(&pc, NULL, &l, 1, V, &err) == STAP_OK, "%s", err.msg);
    double s[36];
    stap_subcpi_steering(&pc, V, stap_doppler_bin(fp, 16), s);
    m = 0;
    for (int ch = 0; ch < 6; ch++)
        for (int q = 0; q < 3; q++) {
            const double complex w = cexp(2 * M_PI * I * (0.5 * ch * sin(10 * M_PI / 180) + fp * q));
            const int j = ch * 3 + q;
            m = fmax(m, cabs(s[2 * j] + I * s[2 * j + 1] - w));
        }
    CHECK(m < 1e-5, "pre-Doppler: bin d0's steering %g from the target's", m);
}

static void refusals(void)
{
    stap_error err;
    stap_cf32 V[64];
    stap_config c = shape(4, 8, 2, STAP_ALGORITHM_ADPCA);
    stap_look l = {0, 0, 0.1};
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_EINVAL &&
          strstr(err.msg, "stap_look.doppler"), "ADPCA with a Doppler: %s", err.msg);
    c.algorithm = STAP_ALGORITHM_DPCA;
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_EINVAL, "DPCA with a Doppler");
    l.doppler = NAN;
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_OK, "DPCA without: %s", err.msg);
    c = shape(4, 8, 1, STAP_ALGORITHM_POST_DOPPLER);
    l = (stap_look){181, 0, NAN};
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_EINVAL && strstr(err.msg, "az_deg"),
          "az 181: %s", err.msg);
    l = (stap_look){0, -91, NAN};
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_EINVAL && strstr(err.msg, "el_deg"),
          "el -91: %s", err.msg);
    l = (stap_look){0, 0, 0.6};
    CHECK(stap_steering_from_looks(&c, NULL, &l, 1, V, &err) == STAP_EINVAL, "Doppler 0.6");
    l.doppler = NAN;
    double pos[12] = {0};
    stap_array a = {3, pos, NULL};
    CHECK(stap_steering_from_looks(&c, &a, &l, 1, V, &err) == STAP_EINVAL && strstr(err.msg, "elements"),
          "3 elements for 4 channels: %s", err.msg);
    a.elements = 4;
    pos[7] = NAN;
    CHECK(stap_steering_from_looks(&c, &a, &l, 1, V, &err) == STAP_EINVAL && strstr(err.msg, "element 2"),
          "a NaN position: %s", err.msg);
    pos[7] = 0;
    stap_cf32 g[4] = {1, 1, 0, 1};
    a.calibration = g;
    CHECK(stap_steering_from_looks(&c, &a, &l, 1, V, &err) == STAP_EINVAL && strstr(err.msg, "channel 2"),
          "a zero gain: %s", err.msg);
}

static void sector(void)
{
    stap_look l[5];
    stap_looks_sector(-40, 40, 5, 5, l);
    for (int b = 0; b < 5; b++)
        CHECK(l[b].az_deg == -40 + 20 * b && l[b].el_deg == 5 && isnan(l[b].doppler), "sector beam %d: %g", b,
              l[b].az_deg);
    stap_looks_sector(10, 30, 0, 1, l);
    CHECK(l[0].az_deg == 20, "one beam: the centre, %g", l[0].az_deg);
    CHECK(stap_doppler_bin(0.2, 18) == 4 && stap_doppler_bin(-0.5, 18) == 9 && stap_doppler_bin(0, 7) == 0,
          "stap_doppler_bin");
}

int main(void)
{
    default_line();
    planar();
    doppler();
    refusals();
    sector();
    if (tc_failures) fprintf(stderr, "test_steer: %d failure(s)\n", tc_failures);
    return tc_failures ? 1 : 0;
}
