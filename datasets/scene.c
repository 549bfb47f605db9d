/* scene.c: the airborne scene generator of scene.h (Ward TR-1015 clutter ring, barrage
 * jammers, noise, point targets), its /truth record and its exact covariances. */
#include "scene.h"
#include "rt_rng.h"
#include "h5x.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define C0 299792458.0

/* ---- random numbers (linalg/rt_rng.h); stream: independent streams of one seed
 * (clutter, noise, jammers, targets) ---- */
typedef rt_rng rng_t;
#define rng_seed rt_rng_seed
#define uniform rt_uniform
#define cgauss rt_cgauss
static stap_cf64 cis(double cycles)
{
    double ph = 2 * M_PI * cycles;
    return cos(ph) + I * sin(ph);
}

/* element ch's phase in cycles towards azimuth az (sine u = sin az, front side), elevation el
 * (radians), through the scene's element positions: p_ch . k, k = (cos el sin az, cos el
 * cos az, sin el) (stap.h's frame) */
static double geo_cycles(const scene_config *c, int ch, double u, double el)
{
    const double *p = c->position + 3 * ch;
    return p[0] * cos(el) * u + p[1] * cos(el) * sqrt(fmax(0.0, 1 - u * u)) + p[2] * sin(el);
}

/* clutter patch i's phase at channel ch (cycles): through the positions, or the line's */
static double patch_cycles(const scene_truth *t, int ch, int i)
{
    const double *pp = t->cfg.position ? t->cfg.position + 3 * ch : NULL;
    if (!pp) return ch * t->patch_spatial[i];
    /* a patch at azimuth theta (behind the array where cos theta < 0), depression phi:
     * k = (cos phi sin theta, cos phi cos theta, -sin phi) */
    const double th = t->patch_azimuth[i];
    return pp[0] * cos(t->depression_rad) * sin(th) + pp[1] * cos(t->depression_rad) * cos(th) -
           pp[2] * sin(t->depression_rad);
}

/* The spatial pairs of a covariance: on the line without gains the entry depends on c1 - c2
 * only (2C - 1 pairs, Toeplitz: the model's own form since the first scenes, kept bit for
 * bit); through positions or gains, every (c1, c2) (C^2 pairs). */
typedef struct pairs {
    int C, general, n;
} pairs;
static pairs pairs_of(const scene_config *c)
{
    const int general = c->position || c->calibration;
    return (pairs){c->channels, general, general ? c->channels * c->channels : 2 * c->channels - 1};
}
static int pair_at(const pairs *q, int c1, int c2) { return q->general ? c1 * q->C + c2 : c1 - c2 + q->C - 1; }

/* sp[k] = cis(phase(c1) - phase(c2)) of clutter patch i at every pair k (ph: C of work space) */
static void patch_pairs(const scene_truth *t, const pairs *q, int i, double *ph, stap_cf64 *sp)
{
    const int C = q->C;
    if (!q->general) {
        for (int dc = -(C - 1); dc <= C - 1; dc++) sp[dc + C - 1] = cis(dc * t->patch_spatial[i]);
        return;
    }
    for (int ch = 0; ch < C; ch++) ph[ch] = patch_cycles(t, ch, i);
    for (int c1 = 0; c1 < C; c1++)
        for (int c2 = 0; c2 < C; c2++) sp[c1 * C + c2] = cis(ph[c1] - ph[c2]);
}

/* the noise and the jammers at pair k: sigma^2 delta(c1, c2) + sum_j J_j cis(phase_j(c1) -
 * phase_j(c2)) */
static stap_cf64 white_pair(const scene_config *c, const pairs *q, int k)
{
    const int C = q->C, c1 = q->general ? k / C : 0, c2 = q->general ? k % C : 0, dc = k - (C - 1);
    stap_cf64 s = (q->general ? c1 == c2 : dc == 0) ? c->noise_power : 0;
    for (int j = 0; j < c->njammers; j++) {
        const double J = pow(10.0, c->jammers[j].jnr_db / 10.0) * c->noise_power;
        if (!q->general) {
            s += J * cis(dc * c->element_spacing * c->jammers[j].u);
        } else if (c->position) {
            s += J * cis(geo_cycles(c, c1, c->jammers[j].u, 0) - geo_cycles(c, c2, c->jammers[j].u, 0));
        } else {
            s += J * cis((c1 - c2) * c->element_spacing * c->jammers[j].u);
        }
    }
    return s;
}

/* x times the channels' gains on the entry of (c1, c2): g_c1 conj(g_c2) x (x without
 * calibration, untouched) */
static stap_cf64 gained(const scene_config *c, int c1, int c2, stap_cf64 x)
{
    return c->calibration ? (stap_cf64)c->calibration[c1] * conj((stap_cf64)c->calibration[c2]) * x : x;
}

/* ---- presets ------------------------------------------------------------------- */
static const struct {
    const char *name;
    int C, P, R;
    double cnr_db;
} presets[SCENE_PRESET_COUNT] = {
    {"easy", 16, 128, 480, 40},
    {"medium", 32, 128, 384, 40},
    {"hard", 22, 128, 480, 40},
    {"ward", 18, 18, 300, 47},
};

int stap_scene_preset_parse(const char *name, scene_preset *p, stap_error *err)
{
    for (int i = 0; i < SCENE_PRESET_COUNT; i++)
        if (name && !strcmp(name, presets[i].name)) {
            *p = (scene_preset)i;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown scene preset '%s' (expected easy, medium, hard "
                     "or ward)", name ? name : "");
}

const char *stap_scene_preset_name(scene_preset p)
{
    return (p >= 0 && p < SCENE_PRESET_COUNT) ? presets[p].name : "invalid";
}

double stap_scene_velocity_for_beta(const scene_config *c, double beta)
{
    double d = c->element_spacing * C0 / c->carrier_hz;
    return beta * d * c->prf_hz / 2.0; /* beta = 2 v T_r / d */
}

void stap_scene_preset_config(scene_preset p, scene_config *c)
{
    memset(c, 0, sizeof *c);
    c->channels = presets[p].C;
    c->pulses = presets[p].P;
    c->range_gates = presets[p].R;
    c->element_spacing = 0.5;
    c->carrier_hz = 450e6; /* UHF, TR-1015's example radar */
    c->prf_hz = 300;
    c->altitude_m = 9000;
    c->slant_range_m = 100e3;
    c->clutter = 1;
    c->cnr_db = presets[p].cnr_db;
    c->patches = 0;
    c->backlobe_db = -30;
    c->transmit_u = 0;
    c->noise_power = 1;
    c->njammers = 2;
    c->jammers[0] = (scene_jammer){-0.3, 35};
    c->jammers[1] = (scene_jammer){0.5, 35};
    c->ntargets = 0;
    c->seed = 1;
    c->velocity_mps = stap_scene_velocity_for_beta(c, 1.0); /* beta = 1 */
}

static int default_patches(const scene_config *c)
{
    /* Enough patches that neighbours are closer than a Doppler or angle resolution
     * cell: at least 360 (1 degree), and 8 per unit of C + P. */
    int n = 8 * (c->channels + c->pulses);
    return n < 360 ? 360 : n;
}

/* Check every field; messages name the field (scene_config.prf_hz, scene_config.jammers[2]). */
static int scene_config_validate(const scene_config *c, stap_error *err)
{
    if (c->channels < 1 || c->pulses < 1 || c->range_gates < 1)
        return stap_fail(err, STAP_EINVAL, "scene_config.channels, scene_config.pulses and "
                         "scene_config.range_gates must be >= 1 (got %d, %d, %d)", c->channels,
                         c->pulses, c->range_gates);
    if ((double)c->channels * c->pulses * c->range_gates > 1.0e9)
        return stap_fail(err, STAP_EINVAL, "the cube %d x %d x %d is too large (over 1e9 samples)",
                         c->channels, c->pulses, c->range_gates);
    if (!(c->element_spacing > 0 && c->element_spacing < 100))
        return stap_fail(err, STAP_EINVAL,
                         "scene_config.element_spacing must be between 0 and 100 wavelengths");
    if (!(c->carrier_hz > 0 && isfinite(c->carrier_hz)))
        return stap_fail(err, STAP_EINVAL,
                         "scene_config.carrier_hz must be a positive frequency in Hz");
    if (!(c->prf_hz > 0 && isfinite(c->prf_hz)))
        return stap_fail(err, STAP_EINVAL, "scene_config.prf_hz must be a positive frequency in Hz");
    if (!(c->velocity_mps >= 0 && c->velocity_mps < 1e5))
        return stap_fail(err, STAP_EINVAL, "scene_config.velocity_mps must be between 0 and 1e5 m/s");
    if (!(c->altitude_m > 0 && isfinite(c->altitude_m)))
        return stap_fail(err, STAP_EINVAL, "scene_config.altitude_m must be positive (m)");
    if (!(c->slant_range_m > c->altitude_m && isfinite(c->slant_range_m)))
        return stap_fail(err, STAP_EINVAL,
                         "scene_config.slant_range_m (%g m) must exceed the altitude (%g m)",
                         c->slant_range_m, c->altitude_m);
    if (c->clutter && !(c->cnr_db > -200 && c->cnr_db < 200))
        return stap_fail(err, STAP_EINVAL, "scene_config.cnr_db must be between -200 and 200 dB");
    if (c->patches < 0 || c->patches > 1000000)
        return stap_fail(err, STAP_EINVAL, "scene_config.patches must be between 1 and 1000000");
    if (!(c->backlobe_db <= 0 && c->backlobe_db > -400))
        return stap_fail(err, STAP_EINVAL, "scene_config.backlobe_db must be between -400 and 0 dB");
    if (!(fabs(c->transmit_u) <= 1))
        return stap_fail(err, STAP_EINVAL, "scene_config.transmit_u must be a sine-angle in [-1, 1]");
    if (!(c->noise_power > 0 && isfinite(c->noise_power)))
        return stap_fail(err, STAP_EINVAL, "scene_config.noise_power must be positive");
    if (c->njammers < 0 || c->njammers > SCENE_MAX_JAMMERS)
        return stap_fail(err, STAP_EINVAL, "at most %d scene_config.jammers", SCENE_MAX_JAMMERS);
    for (int j = 0; j < c->njammers; j++)
        if (!(fabs(c->jammers[j].u) <= 1) || !(fabs(c->jammers[j].jnr_db) < 200))
            return stap_fail(err, STAP_EINVAL, "scene_config.jammers[%d]: u must be in [-1, 1] "
                             "and jnr_db within +-200 dB (got %g:%g)", j, c->jammers[j].u,
                             c->jammers[j].jnr_db);
    if (c->ntargets < 0 || c->ntargets > SCENE_MAX_TARGETS)
        return stap_fail(err, STAP_EINVAL, "at most %d scene_config.targets", SCENE_MAX_TARGETS);
    for (int k = 0; k < c->ntargets; k++) {
        const scene_target *t = &c->targets[k];
        if (t->range_cell < 0 || t->range_cell >= c->range_gates)
            return stap_fail(err, STAP_EINVAL, "scene_config.targets[%d]: range cell %d outside "
                             "0..%d", k, t->range_cell, c->range_gates - 1);
        if (!(fabs(t->u) <= 1) || !isfinite(t->doppler_hz) || !(fabs(t->snr_db) < 200))
            return stap_fail(err, STAP_EINVAL, "scene_config.targets[%d]: u must be in [-1, 1], "
                             "doppler_hz finite and snr_db within +-200 dB", k);
    }
    return STAP_OK;
}

/* ---- the model ---------------------------------------------------------------- */
void stap_scene_truth_free(scene_truth *t)
{
    if (!t) return;
    free(t->patch_azimuth);
    free(t->patch_spatial);
    free(t->patch_doppler);
    free(t->patch_cnr);
    t->patch_azimuth = t->patch_spatial = t->patch_doppler = t->patch_cnr = NULL;
    t->patches = 0;
    if (t->own_position && t->cfg.position == t->own_position) t->cfg.position = NULL;
    if (t->own_calibration && t->cfg.calibration == t->own_calibration) t->cfg.calibration = NULL;
    free(t->own_position);
    free(t->own_calibration);
    t->own_position = NULL;
    t->own_calibration = NULL;
}

static int alloc_patches(scene_truth *t, int n, stap_error *err)
{
    t->patches = n;
    if (n == 0) return STAP_OK;
    t->patch_azimuth = malloc(sizeof(double) * n);
    t->patch_spatial = malloc(sizeof(double) * n);
    t->patch_doppler = malloc(sizeof(double) * n);
    t->patch_cnr = malloc(sizeof(double) * n);
    if (!t->patch_azimuth || !t->patch_spatial || !t->patch_doppler || !t->patch_cnr) {
        stap_scene_truth_free(t);
        return stap_fail(err, STAP_ENOMEM, "out of memory for %d clutter patches", n);
    }
    return STAP_OK;
}

static void derive_geometry(scene_truth *t)
{
    const scene_config *c = &t->cfg;
    t->wavelength_m = C0 / c->carrier_hz;
    double d = c->element_spacing * t->wavelength_m;
    t->beta = 2.0 * c->velocity_mps / (c->prf_hz * d);
    t->depression_rad = asin(c->altitude_m / c->slant_range_m);
    t->grazing_rad = t->depression_rad; /* flat earth */
}

int stap_scene_truth_build(const scene_config *cfg, scene_truth *t, stap_error *err)
{
    memset(t, 0, sizeof *t);
    int st = scene_config_validate(cfg, err);
    if (st) return st;
    t->cfg = *cfg;
    if (t->cfg.patches == 0) t->cfg.patches = default_patches(cfg);
    derive_geometry(t);
    const scene_config *c = &t->cfg;
    int Nc = c->clutter ? c->patches : 0;
    if ((st = alloc_patches(t, Nc, err))) return st;
    double cosphi = cos(t->depression_rad), back = pow(10.0, c->backlobe_db / 10.0);
    double sum = 0;
    for (int i = 0; i < Nc; i++) {
        double th = -M_PI + 2.0 * M_PI * (i + 0.5) / Nc;
        double vt = c->element_spacing * cosphi * sin(th);
        /* element power pattern: cos^2 in front, attenuated by the backlobe level behind */
        double g = cos(th) * cos(th) * (fabs(th) <= M_PI / 2 ? 1.0 : back);
        /* transmit array factor, uniform weights, steered to transmit_u, peak 1 */
        double x = vt - c->element_spacing * c->transmit_u;
        stap_cf64 af = 0;
        for (int e = 0; e < c->channels; e++) af += cis(e * x);
        double AF = creal(af * conj(af)) / ((double)c->channels * c->channels);
        t->patch_azimuth[i] = th;
        t->patch_spatial[i] = vt;
        t->patch_doppler[i] = t->beta * vt;
        /* transmit (element x array) x receive element x constant-gamma sigma (equal on
         * the ring) */
        t->patch_cnr[i] = g * AF * g;
        sum += t->patch_cnr[i];
    }
    double cnr = pow(10.0, c->cnr_db / 10.0);
    for (int i = 0; i < Nc; i++) t->patch_cnr[i] = sum > 0 ? t->patch_cnr[i] * cnr / sum : 0;
    rng_t r;
    rng_seed(&r, c->seed, 3);
    for (int k = 0; k < c->ntargets; k++) t->target_phase[k] = 2 * M_PI * uniform(&r);
    return STAP_OK;
}

void stap_scene_radar_meta(const scene_truth *t, stap_radar_meta *m)
{
    memset(m, 0, sizeof *m);
    m->has_prf = 1;
    m->prf_hz = t->cfg.prf_hz;
    m->has_carrier = 1;
    m->carrier_frequency_hz = t->cfg.carrier_hz;
    m->has_element_spacing = !t->cfg.position; /* positions say it (/array/position) */
    m->element_spacing_wavelengths = t->cfg.element_spacing;
}

/* ---- drawing a CPI ------------------------------------------------------------ */
int stap_scene_generate(const scene_truth *t, stap_cf32 *cube, stap_error *err)
{
    const scene_config *c = &t->cfg;
    const int C = c->channels, P = c->pulses, R = c->range_gates, Nc = t->patches;
    const size_t CP = (size_t)C * P;
    const double sd = sqrt(c->noise_power);
    stap_cf64 *Z = calloc(CP * R, sizeof(stap_cf64)); /* (c*P+p) x r, row-major = the cube's order */
    if (!Z) return stap_fail(err, STAP_ENOMEM, "out of memory for a %d x %d x %d scene", C, P, R);

    /* Clutter: Z = V A with V[(c,p), i] = exp(2 pi i (c vt_i + p w_i)) and
     * A[i, r] ~ CN(0, xi_i sigma^2), in blocks of patches (one zgemm each). */
    if (Nc > 0) {
        const int blk = 256;
        stap_cf64 *V = malloc(sizeof(stap_cf64) * CP * blk);
        stap_cf64 *A = malloc(sizeof(stap_cf64) * (size_t)blk * R);
        if (!V || !A) {
            free(V);
            free(A);
            free(Z);
            return stap_fail(err, STAP_ENOMEM, "out of memory for the clutter patches");
        }
        rng_t rc;
        rng_seed(&rc, c->seed, 0);
        for (int i0 = 0; i0 < Nc; i0 += blk) {
            int nb = Nc - i0 < blk ? Nc - i0 : blk;
            for (int ii = 0; ii < nb; ii++) {
                int i = i0 + ii;
                for (int ch = 0; ch < C; ch++) {
                    const double sc = patch_cycles(t, ch, i);
                    for (int p = 0; p < P; p++) V[((size_t)ch * P + p) * nb + ii] = cis(sc + p * t->patch_doppler[i]);
                }
                double amp = sqrt(t->patch_cnr[i] * c->noise_power);
                for (int r = 0; r < R; r++) A[(size_t)ii * R + r] = amp * cgauss(&rc);
            }
            const stap_cf64 one = 1.0;
            cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)CP, R, nb, &one, V, nb,
                        A, R, &one, Z, R);
        }
        free(V);
        free(A);
    }
    /* Barrage jammers: waveform CN(0, JNR sigma^2) per (pulse, range), plane wave
     * across the array. */
    rng_t rj;
    rng_seed(&rj, c->seed, 1);
    for (int j = 0; j < c->njammers; j++) {
        double amp = sqrt(pow(10.0, c->jammers[j].jnr_db / 10.0) * c->noise_power);
        double vt = c->element_spacing * c->jammers[j].u;
        for (int p = 0; p < P; p++)
            for (int r = 0; r < R; r++) {
                stap_cf64 s = amp * cgauss(&rj);
                for (int ch = 0; ch < C; ch++)
                    Z[((size_t)ch * P + p) * R + r] +=
                        s * (c->position ? cis(geo_cycles(c, ch, c->jammers[j].u, 0)) : cis(ch * vt));
            }
    }
    /* Targets */
    for (int k = 0; k < c->ntargets; k++) {
        const scene_target *tg = &c->targets[k];
        double amp = sqrt(pow(10.0, tg->snr_db / 10.0) * c->noise_power);
        const double el = tg->el_deg * M_PI / 180;
        /* the line sees cos(el) u; el = 0 as it always was */
        double vt = c->element_spacing * (tg->el_deg != 0 ? cos(el) * tg->u : tg->u);
        double w = tg->doppler_hz / c->prf_hz;
        stap_cf64 a0 = amp * (cos(t->target_phase[k]) + I * sin(t->target_phase[k]));
        for (int ch = 0; ch < C; ch++)
            for (int p = 0; p < P; p++)
                Z[((size_t)ch * P + p) * R + tg->range_cell] +=
                    a0 * (c->position ? cis(geo_cycles(c, ch, tg->u, el) + p * w) : cis(ch * vt + p * w));
    }
    /* Thermal noise, and the conversion to single precision */
    rng_t rn;
    rng_seed(&rn, c->seed, 2);
    if (c->calibration) /* the channel's gain on everything it receives */
        for (size_t i = 0; i < CP * R; i++)
            cube[i] = (stap_cf32)((stap_cf64)c->calibration[i / ((size_t)P * R)] * (Z[i] + sd * cgauss(&rn)));
    else
        for (size_t i = 0; i < CP * R; i++) cube[i] = (stap_cf32)(Z[i] + sd * cgauss(&rn));
    free(Z);
    return STAP_OK;
}

/* ---- covariances --------------------------------------------------------------- */
int stap_scene_covariance_spacetime(const scene_truth *t, stap_cf64 *Rst, stap_error *err)
{
    const scene_config *c = &t->cfg;
    const int C = c->channels, P = c->pulses, N = C * P;
    /* per spatial pair and p - p' (the pulses always Toeplitz) */
    const pairs q = pairs_of(c);
    const int np = 2 * P - 1;
    stap_cf64 *r = calloc((size_t)q.n * np, sizeof(stap_cf64));
    stap_cf64 *sp = malloc(sizeof(stap_cf64) * q.n);
    double *ph = malloc(sizeof(double) * C);
    if (!r || !sp || !ph) {
        free(r);
        free(sp);
        free(ph);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the space-time covariance");
    }
    for (int i = 0; i < t->patches; i++) {
        patch_pairs(t, &q, i, ph, sp);
        for (int k = 0; k < q.n; k++) {
            stap_cf64 s = t->patch_cnr[i] * c->noise_power * sp[k];
            for (int dp = -(P - 1); dp <= P - 1; dp++)
                r[(size_t)k * np + dp + P - 1] += s * cis(dp * t->patch_doppler[i]);
        }
    }
    for (int k = 0; k < q.n; k++) r[(size_t)k * np + P - 1] += white_pair(c, &q, k);
    for (int c2 = 0; c2 < C; c2++)
        for (int p2 = 0; p2 < P; p2++)
            for (int c1 = 0; c1 < C; c1++)
                for (int p1 = 0; p1 < P; p1++)
                    Rst[(size_t)(c2 * P + p2) * N + c1 * P + p1] =
                        gained(c, c1, c2, r[(size_t)pair_at(&q, c1, c2) * np + p1 - p2 + P - 1]);
    free(r);
    free(sp);
    free(ph);
    return STAP_OK;
}

static inline int tap_bin(int d, int q, int Q, int D)
{
    int b = (d - (Q - 1) / 2 + q) % D;
    return b < 0 ? b + D : b;
}

/* g[q] = sum_p win[p] exp(2 pi i w p) exp(-2 pi i b_q p / D) */
static void temporal_response(int P, double w, const double *win, int D, int Q, int d,
                              stap_cf64 *g)
{
    for (int q = 0; q < Q; q++) {
        double f = w - (double)tap_bin(d, q, Q, D) / D;
        stap_cf64 s = 0;
        for (int p = 0; p < P; p++) s += win[p] * cis(f * p);
        g[q] = s;
    }
}

void stap_scene_doppler_signature(int C, int P, const stap_cf64 *a, double w, const double *win, int D,
                             int Q, int d, stap_cf64 *s)
{
    for (int q = 0; q < Q; q++) {
        double f = w - (double)tap_bin(d, q, Q, D) / D;
        stap_cf64 g = 0;
        for (int p = 0; p < P; p++) g += win[p] * cis(f * p);
        for (int ch = 0; ch < C; ch++) s[ch * Q + q] = a[ch] * g;
    }
}

int stap_scene_covariance_doppler(const scene_truth *t, const double *win, int D, int Q, int d,
                             stap_cf64 *Rd, stap_error *err)
{
    const scene_config *c = &t->cfg;
    const int C = c->channels, P = c->pulses, N = C * Q;
    if (D < P || Q < 1 || Q % 2 == 0 || Q > D || d < 0 || d >= D)
        return stap_fail(err, STAP_EINVAL, "Doppler covariance: need D >= P, odd Q <= D and "
                         "0 <= d < D (got D=%d Q=%d d=%d, P=%d)", D, Q, d, P);
    /* per (spatial pair, q, q'): clutter sum_i xi_i cis(pair phase) g_i[q] conj(g_i[q']) */
    const pairs pq = pairs_of(c);
    stap_cf64 *cl = calloc((size_t)pq.n * Q * Q, sizeof(stap_cf64));
    stap_cf64 *gg = calloc((size_t)Q * Q, sizeof(stap_cf64));
    stap_cf64 *g = malloc(sizeof(stap_cf64) * Q);
    stap_cf64 *sp = malloc(sizeof(stap_cf64) * pq.n);
    double *ph = malloc(sizeof(double) * C);
    if (!cl || !gg || !g || !sp || !ph) {
        free(cl);
        free(gg);
        free(g);
        free(sp);
        free(ph);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the Doppler-domain covariance");
    }
    for (int i = 0; i < t->patches; i++) {
        temporal_response(P, t->patch_doppler[i], win, D, Q, d, g);
        double xi = t->patch_cnr[i] * c->noise_power;
        patch_pairs(t, &pq, i, ph, sp);
        for (int k = 0; k < pq.n; k++) {
            stap_cf64 s = xi * sp[k];
            stap_cf64 *blk = cl + (size_t)k * Q * Q;
            for (int q = 0; q < Q; q++)
                for (int q2 = 0; q2 < Q; q2++) blk[q * Q + q2] += s * g[q] * conj(g[q2]);
        }
    }
    /* noise and jammers: (sigma^2 delta + sum_j J_j cis(pair phase)) (G G^H)[q, q'] */
    for (int q = 0; q < Q; q++)
        for (int q2 = 0; q2 < Q; q2++) {
            double f = (double)(tap_bin(d, q2, Q, D) - tap_bin(d, q, Q, D)) / D;
            stap_cf64 s = 0;
            for (int p = 0; p < P; p++) s += win[p] * win[p] * cis(f * p);
            gg[q * Q + q2] = s;
        }
    for (int k = 0; k < pq.n; k++) {
        stap_cf64 s = white_pair(c, &pq, k);
        stap_cf64 *blk = cl + (size_t)k * Q * Q;
        for (int m = 0; m < Q * Q; m++) blk[m] += s * gg[m];
    }
    for (int c2 = 0; c2 < C; c2++)
        for (int q2 = 0; q2 < Q; q2++)
            for (int c1 = 0; c1 < C; c1++)
                for (int q1 = 0; q1 < Q; q1++)
                    Rd[(size_t)(c2 * Q + q2) * N + c1 * Q + q1] =
                        gained(c, c1, c2, cl[((size_t)pair_at(&pq, c1, c2) * Q + q1) * Q + q2]);
    free(cl);
    free(gg);
    free(g);
    free(sp);
    free(ph);
    return STAP_OK;
}

/* h[p'] = win[p'] exp(-2 pi i d p' / D): z[c*Q + q] = sum_p' h[p'] x[c, p' + q]. For a
 * clutter patch (spatial vt, Doppler w) z = a(vt) (x) exp(2 pi i w q) H(w), H(w) = sum_p'
 * h[p'] exp(2 pi i w p'); for white noise and jammers E[z_q conj(z_q')] picks p2' = p' + q
 * - q': M[q - q'] = sum_p' h[p'] conj(h[p' + q - q']). */
int stap_scene_covariance_staggered(const scene_truth *t, const double *win, int Pw, int D, int Q,
                               int d, stap_cf64 *Rz, stap_error *err)
{
    const scene_config *c = &t->cfg;
    const int C = c->channels, P = c->pulses, N = C * Q, nq = 2 * Q - 1;
    if (Pw < 1 || Q < 1 || Pw + Q - 1 > P || D < 1 || d < 0 || d >= D)
        return stap_fail(err, STAP_EINVAL, "staggered covariance: need Pw, Q >= 1, Pw + Q - 1 <= P "
                         "and 0 <= d < D (got Pw=%d Q=%d P=%d D=%d d=%d)", Pw, Q, P, D, d);
    /* per (spatial pair, q - q') */
    const pairs pq = pairs_of(c);
    stap_cf64 *cl = calloc((size_t)pq.n * nq, sizeof(stap_cf64));
    stap_cf64 *h = malloc(sizeof(stap_cf64) * Pw), *m = malloc(sizeof(stap_cf64) * nq);
    stap_cf64 *sp = malloc(sizeof(stap_cf64) * pq.n);
    double *ph = malloc(sizeof(double) * C);
    if (!cl || !h || !m || !sp || !ph) {
        free(cl);
        free(h);
        free(m);
        free(sp);
        free(ph);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the staggered covariance");
    }
    for (int p = 0; p < Pw; p++) h[p] = win[p] * cis(-(double)(((long long)d * p) % D) / D);
    for (int i = 0; i < t->patches; i++) {
        const double w = t->patch_doppler[i];
        stap_cf64 H = 0;
        for (int p = 0; p < Pw; p++) H += h[p] * cis(w * p);
        const double xi = t->patch_cnr[i] * c->noise_power * creal(H * conj(H));
        patch_pairs(t, &pq, i, ph, sp);
        for (int k = 0; k < pq.n; k++) {
            const stap_cf64 s = xi * sp[k];
            stap_cf64 *row = cl + (size_t)k * nq;
            for (int dq = -(Q - 1); dq <= Q - 1; dq++) row[dq + Q - 1] += s * cis(dq * w);
        }
    }
    for (int dq = -(Q - 1); dq <= Q - 1; dq++) {
        stap_cf64 s = 0;
        for (int p = 0; p < Pw; p++)
            if (p + dq >= 0 && p + dq < Pw) s += h[p] * conj(h[p + dq]);
        m[dq + Q - 1] = s;
    }
    for (int k = 0; k < pq.n; k++) {
        stap_cf64 s = white_pair(c, &pq, k);
        stap_cf64 *row = cl + (size_t)k * nq;
        for (int j = 0; j < nq; j++) row[j] += s * m[j];
    }
    for (int c2 = 0; c2 < C; c2++)
        for (int q2 = 0; q2 < Q; q2++)
            for (int c1 = 0; c1 < C; c1++)
                for (int q1 = 0; q1 < Q; q1++)
                    Rz[(size_t)(c2 * Q + q2) * N + c1 * Q + q1] =
                        gained(c, c1, c2, cl[(size_t)pair_at(&pq, c1, c2) * nq + q1 - q2 + Q - 1]);
    free(cl);
    free(h);
    free(m);
    free(sp);
    free(ph);
    return STAP_OK;
}

void stap_scene_staggered_signature(int C, const stap_cf64 *a, double w, const double *win, int Pw,
                               int D, int Q, int d, stap_cf64 *s)
{
    stap_cf64 H = 0;
    for (int p = 0; p < Pw; p++)
        H += win[p] * cis(w * p - (double)(((long long)d * p) % D) / D);
    for (int q = 0; q < Q; q++) {
        const stap_cf64 g = H * cis(w * q);
        for (int ch = 0; ch < C; ch++) s[ch * Q + q] = a[ch] * g;
    }
}

/* ---- /truth in HDF5 (through the I/O module: stap/io/h5x.h) -------------------------- */

int stap_scene_truth_write(stap_h5_file *f, const scene_truth *t, stap_error *err)
{
    const scene_config *c = &t->cfg;
    const char *g = "/truth";
    stap_h5x_group(f, g);
    stap_h5x_put_fixed_string(f, g, "model", "Ward TR-1015 side-looking ULA: flat earth, "
                         "range-homogeneous clutter ring (constant gamma, cos^2 element, "
                         "uniform transmit array), barrage jammers, thermal noise, point targets");
    stap_h5x_put_fixed_string(f, g, "covariance_index", "space-time vector index c*P + p");
    stap_h5x_put_llong(f, g, "channels", c->channels);
    stap_h5x_put_llong(f, g, "pulses", c->pulses);
    stap_h5x_put_llong(f, g, "range_gates", c->range_gates);
    stap_h5x_put_double(f, g, "element_spacing_wavelengths", c->element_spacing);
    stap_h5x_put_double(f, g, "carrier_frequency_hz", c->carrier_hz);
    stap_h5x_put_double(f, g, "wavelength_m", t->wavelength_m);
    stap_h5x_put_double(f, g, "prf_hz", c->prf_hz);
    stap_h5x_put_double(f, g, "velocity_mps", c->velocity_mps);
    stap_h5x_put_double(f, g, "beta", t->beta);
    stap_h5x_put_double(f, g, "altitude_m", c->altitude_m);
    stap_h5x_put_double(f, g, "slant_range_m", c->slant_range_m);
    stap_h5x_put_double(f, g, "depression_rad", t->depression_rad);
    stap_h5x_put_double(f, g, "grazing_rad", t->grazing_rad);
    stap_h5x_put_llong(f, g, "clutter", c->clutter);
    stap_h5x_put_double(f, g, "cnr_db", c->cnr_db);
    stap_h5x_put_llong(f, g, "patches", t->patches);
    stap_h5x_put_double(f, g, "backlobe_db", c->backlobe_db);
    stap_h5x_put_double(f, g, "transmit_u", c->transmit_u);
    stap_h5x_put_double(f, g, "noise_power", c->noise_power);
    stap_h5x_put_llong(f, g, "seed", (long long)c->seed);
    stap_h5x_put_llong(f, g, "jammer_count", c->njammers);
    stap_h5x_put_llong(f, g, "target_count", c->ntargets);
    if (t->patches > 0) {
        const size_t n = (size_t)t->patches;
        stap_h5x_group(f, "/truth/clutter");
        stap_h5x_put_doubles(f, "/truth/clutter/azimuth_rad", 1, &n, t->patch_azimuth);
        stap_h5x_put_doubles(f, "/truth/clutter/spatial_frequency", 1, &n, t->patch_spatial);
        stap_h5x_put_doubles(f, "/truth/clutter/normalized_doppler", 1, &n, t->patch_doppler);
        stap_h5x_put_doubles(f, "/truth/clutter/cnr", 1, &n, t->patch_cnr);
    }
    if (c->njammers > 0) {
        double u[SCENE_MAX_JAMMERS], jnr[SCENE_MAX_JAMMERS], vt[SCENE_MAX_JAMMERS];
        for (int j = 0; j < c->njammers; j++) {
            u[j] = c->jammers[j].u;
            jnr[j] = c->jammers[j].jnr_db;
            vt[j] = c->element_spacing * u[j];
        }
        const size_t n = (size_t)c->njammers;
        stap_h5x_group(f, "/truth/jammers");
        stap_h5x_put_doubles(f, "/truth/jammers/u", 1, &n, u);
        stap_h5x_put_doubles(f, "/truth/jammers/jnr_db", 1, &n, jnr);
        stap_h5x_put_doubles(f, "/truth/jammers/spatial_frequency", 1, &n, vt);
    }
    if (c->ntargets > 0) {
        int rc[SCENE_MAX_TARGETS];
        double u[SCENE_MAX_TARGETS], fd[SCENE_MAX_TARGETS], snr[SCENE_MAX_TARGETS];
        double vt[SCENE_MAX_TARGETS], w[SCENE_MAX_TARGETS];
        const size_t n = (size_t)c->ntargets;
        for (size_t k = 0; k < n; k++) {
            rc[k] = c->targets[k].range_cell;
            u[k] = c->targets[k].u;
            fd[k] = c->targets[k].doppler_hz;
            snr[k] = c->targets[k].snr_db;
            vt[k] = c->element_spacing * u[k];
            w[k] = fd[k] / c->prf_hz;
        }
        stap_h5x_group(f, "/truth/targets");
        stap_h5x_put_ints(f, "/truth/targets/range_cell", n, rc);
        stap_h5x_put_doubles(f, "/truth/targets/u", 1, &n, u);
        stap_h5x_put_doubles(f, "/truth/targets/doppler_hz", 1, &n, fd);
        stap_h5x_put_doubles(f, "/truth/targets/snr_db", 1, &n, snr);
        stap_h5x_put_doubles(f, "/truth/targets/spatial_frequency", 1, &n, vt);
        stap_h5x_put_doubles(f, "/truth/targets/normalized_doppler", 1, &n, w);
        stap_h5x_put_doubles(f, "/truth/targets/phase_rad", 1, &n, t->target_phase);
        double el[SCENE_MAX_TARGETS];
        int any_el = 0;
        for (int k = 0; k < c->ntargets; k++) any_el |= (el[k] = c->targets[k].el_deg) != 0;
        if (any_el) stap_h5x_put_doubles(f, "/truth/targets/el_deg", 1, &n, el);
    }
    return stap_h5x_status(f, err);
}

int stap_scene_truth_write_hook(stap_h5_file *f, void *user, stap_error *err)
{
    return stap_scene_truth_write(f, (const scene_truth *)user, err);
}

/* The /truth attributes: counts (whole numbers) and numbers, by name */
typedef struct truth_count { const char *name; long long lo, hi; int *dst; } truth_count;
typedef struct truth_number { const char *name; double *dst; } truth_number;

int stap_scene_truth_read(const char *path, scene_truth *t, stap_error *err)
{
    memset(t, 0, sizeof *t);
    h5x *f = NULL;
    int st = stap_h5x_open(&f, path, err);
    if (st) return st;
    scene_config *c = &t->cfg;
    const char *g = "/truth";
    if (!stap_h5x_exists(f, g)) {
        stap_h5x_close(f);
        return stap_fail(err, STAP_EFORMAT, "%s: no /truth group (not a file of 'rtstap gen')", path);
    }
    const truth_count counts[] = {
        {"channels", 1, 1 << 20, &c->channels}, {"pulses", 1, 1 << 24, &c->pulses},
        {"range_gates", 1, 1 << 28, &c->range_gates}, {"clutter", 0, 1, &c->clutter},
        {"patches", 0, 1 << 24, &c->patches}, {"jammer_count", 0, SCENE_MAX_JAMMERS, &c->njammers},
        {"target_count", 0, SCENE_MAX_TARGETS, &c->ntargets}};
    const truth_number numbers[] = {
        {"element_spacing_wavelengths", &c->element_spacing}, {"carrier_frequency_hz", &c->carrier_hz},
        {"prf_hz", &c->prf_hz}, {"velocity_mps", &c->velocity_mps}, {"altitude_m", &c->altitude_m},
        {"slant_range_m", &c->slant_range_m}, {"cnr_db", &c->cnr_db}, {"backlobe_db", &c->backlobe_db},
        {"transmit_u", &c->transmit_u}, {"noise_power", &c->noise_power},
        {"wavelength_m", &t->wavelength_m}, {"beta", &t->beta},
        {"depression_rad", &t->depression_rad}, {"grazing_rad", &t->grazing_rad}};
    for (size_t i = 0; !st && i < sizeof counts / sizeof *counts; i++) {
        long long v;
        if (!(st = stap_h5x_get_count(f, g, counts[i].name, counts[i].lo, counts[i].hi, &v, err)))
            *counts[i].dst = (int)v;
    }
    for (size_t i = 0; !st && i < sizeof numbers / sizeof *numbers; i++)
        st = stap_h5x_get_double(f, g, numbers[i].name, numbers[i].dst, err);
    long long seed = 0; /* written as int64: every bit of the uint64 seed */
    if (!st && !(st = stap_h5x_get_llong(f, g, "seed", &seed, err))) c->seed = (uint64_t)seed;
    const int Nc = c->clutter ? c->patches : 0;
    if (!st) st = alloc_patches(t, Nc, err);
    if (!st && Nc > 0) {
        const size_t n = (size_t)Nc;
        if (!(st = stap_h5x_get_doubles(f, "/truth/clutter/azimuth_rad", 1, &n, t->patch_azimuth, err)) &&
            !(st = stap_h5x_get_doubles(f, "/truth/clutter/spatial_frequency", 1, &n, t->patch_spatial, err)) &&
            !(st = stap_h5x_get_doubles(f, "/truth/clutter/normalized_doppler", 1, &n, t->patch_doppler, err)))
            st = stap_h5x_get_doubles(f, "/truth/clutter/cnr", 1, &n, t->patch_cnr, err);
    }
    if (!st && c->njammers > 0) {
        double u[SCENE_MAX_JAMMERS], jnr[SCENE_MAX_JAMMERS];
        const size_t n = (size_t)c->njammers;
        if (!(st = stap_h5x_get_doubles(f, "/truth/jammers/u", 1, &n, u, err)))
            st = stap_h5x_get_doubles(f, "/truth/jammers/jnr_db", 1, &n, jnr, err);
        for (int j = 0; !st && j < c->njammers; j++) c->jammers[j] = (scene_jammer){u[j], jnr[j]};
    }
    if (!st && c->ntargets > 0) {
        int rc[SCENE_MAX_TARGETS];
        double u[SCENE_MAX_TARGETS], fd[SCENE_MAX_TARGETS], snr[SCENE_MAX_TARGETS];
        const size_t n = (size_t)c->ntargets;
        if (!(st = stap_h5x_get_ints(f, "/truth/targets/range_cell", n, rc, err)) &&
            !(st = stap_h5x_get_doubles(f, "/truth/targets/u", 1, &n, u, err)) &&
            !(st = stap_h5x_get_doubles(f, "/truth/targets/doppler_hz", 1, &n, fd, err)) &&
            !(st = stap_h5x_get_doubles(f, "/truth/targets/snr_db", 1, &n, snr, err)))
            st = stap_h5x_get_doubles(f, "/truth/targets/phase_rad", 1, &n, t->target_phase, err);
        for (size_t k = 0; !st && k < n; k++) c->targets[k] = (scene_target){rc[k], u[k], fd[k], snr[k], 0};
        double el[SCENE_MAX_TARGETS];
        if (!st && stap_h5x_exists(f, "/truth/targets/el_deg") &&
            !(st = stap_h5x_get_doubles(f, "/truth/targets/el_deg", 1, &n, el, err)))
            for (size_t k = 0; k < n; k++) c->targets[k].el_deg = el[k];
    }
    const int array = stap_h5x_exists(f, "/array/position") || stap_h5x_exists(f, "/array/calibration");
    stap_h5x_close(f);
    if (!st && array) { /* drawn through it (gen --array): its covariance follows it */
        int n = 0;
        st = stap_array_read(path, c->carrier_hz, &n, &t->own_position, &t->own_calibration, err);
        if (!st && n != c->channels)
            st = stap_fail(err, STAP_EFORMAT, "%s: /array has %d elements, /truth %d channels", path, n,
                           c->channels);
        c->position = t->own_position;
        c->calibration = t->own_calibration;
    }
    if (st) stap_scene_truth_free(t);
    return st;
}
