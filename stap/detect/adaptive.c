/* adaptive.c: the adaptive detectors' thresholds — AMF, Kelly's GLRT and ACE — from the
 * closed forms of their false-alarm probability under Gaussian interference (see cfar.h,
 * and docs/processing.md "Adaptive detectors"), and where they are defined. The engine
 * computes the statistics (stap/engine/engine_detect.c). */
#include <math.h>
#include <strings.h>

#include "cfar.h"

int stap_detector_parse(const char *s, stap_cfar_kind *k, stap_error *err)
{
    for (int i = STAP_CFAR_AMF; i <= STAP_CFAR_ACE; i++)
        if (s && !strcasecmp(s, stap_cfar_kind_name((stap_cfar_kind)i))) {
            *k = (stap_cfar_kind)i;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown detector '%s' (expected amf, kelly or ace)",
                     s ? s : "");
}

/* P(|n + mu|^2 > c G) for n ~ CN(0, 1), |mu|^2 = lambda and G ~ Gamma(L, 1) independent:
 * |n + mu|^2 is a Poisson(lambda) mixture of Gamma(m + 1), and E[e^(-cG) (cG)^j / j!] =
 * C(L + j - 1, j) c^j / (1 + c)^(L + j), so P = sum_m Pois(m; lambda) sum_{j <= m} those
 * (positive terms; lambda = 0: (1 + c)^-L). */
static double cond_detect(double lambda, double c, int L)
{
    const double q = c / (1 + c);
    double tj = exp(-L * log1p(c)), cum = tj, lpm = -lambda, sum = exp(lpm) * cum;
    if (lambda <= 0) return cum;
    /* the Poisson weights in logs (exp(-lambda) underflows past 745); past the mode plus
     * 12 standard deviations they are below 1e-30 */
    const int mmax = (int)(lambda + 12 * sqrt(lambda) + 40);
    for (int m = 1; m <= mmax; m++) {
        tj *= (L + m - 1.0) / m * q;
        cum += tj;
        lpm += log(lambda / m);
        if (lpm > -745) sum += exp(lpm) * (cum < 1 ? cum : 1);
    }
    return sum;
}

/* The integrand f(rho) P(detect | rho) at rho = 1 - s (both given: rho exact near 0, s near
 * 1). Given rho, a rho = |n + mu|^2 / G (cond_detect) with |mu|^2 = rho sinr, and the
 * detectors test a rho > c: AMF c = t rho (t = eta / K), Kelly c = t / (1 - t) (t = eta),
 * ACE c = s (1 - t) / t (t = 1 - eta). Under H0 (sinr = 0) P = (1 + c)^-L, in logs: the
 * density and the probability may both be tiny. */
static double integrand(stap_cfar_kind k, int N, int L, double lbeta, double t, double sinr,
                        double rho, double s)
{
    if (rho <= 0 || s < 0) return 0; /* rho^L = 0 (L >= 1) */
    if (s == 0 && N > 2) return 0;   /* (1 - rho)^(N-2) = 0 */
    const double lf = L * log(rho) + (N > 2 ? (N - 2) * log(s) : 0) - lbeta;
    if (sinr > 0) {
        const double c = k == STAP_CFAR_AMF ? t * rho : k == STAP_CFAR_KELLY ? t / (1 - t)
                                                                          : s * (1 - t) / t;
        return exp(lf) * cond_detect(rho * sinr, c, L);
    }
    const double lc = k == STAP_CFAR_AMF     ? -L * log1p(t * rho)
                      : k == STAP_CFAR_KELLY ? L * log1p(-t)
                                             : L * (log(t) - log(s + t * rho));
    return exp(lf + lc);
}

enum { PANELS = 16, UNIFORM = 256 }; /* Simpson panels an interval; uniform intervals a half */

/* One half of [0, 1]: x in [0, 1/2] is rho (right = 0) or s = 1 - rho (right = 1), on
 * intervals growing geometrically from `scale` x 1e-6 (where the integrand changes on a
 * scale that small: ACE's near rho = 1 is t, AMF's near rho = 0 is 1/t) to 1/512, then
 * uniform to 1/2: each by Simpson. */
static double half(stap_cfar_kind k, int N, int L, double lbeta, double t, double sinr, int right,
                   double scale)
{
    double x0 = scale * 1e-6, sum = 0, a = 0;
    const double edge = 0.5 / UNIFORM;
    if (!(x0 > 1e-300)) x0 = 1e-300;
    if (x0 > edge) x0 = edge;
    for (double b = x0;; b = b < edge ? (2 * b < edge ? 2 * b : edge) : b + edge) {
        const double h = (b - a) / PANELS;
        double s = 0;
        for (int i = 0; i <= PANELS; i++) {
            const double x = i == PANELS ? b : a + i * h, w = (i == 0 || i == PANELS) ? 1 : (i % 2 ? 4 : 2);
            s += w * (right ? integrand(k, N, L, lbeta, t, sinr, 1 - x, x)
                            : integrand(k, N, L, lbeta, t, sinr, x, 1 - x));
        }
        sum += s * h / 3;
        a = b;
        if (b >= 0.5 - 1e-12) break;
    }
    return sum;
}

/* E over rho ~ Beta(L + 1, N - 1) of the conditional probability of detection at output
 * SINR sinr (0: false alarm); N = 1: rho = 1. */
static double mean_over_rho(stap_cfar_kind k, int N, int K, double t, double sinr)
{
    const int L = K - N + 1;
    if (N == 1) {
        if (sinr > 0) return cond_detect(sinr, k == STAP_CFAR_AMF ? t : t / (1 - t), L);
        return k == STAP_CFAR_AMF ? exp(-L * log1p(t)) : exp(L * log1p(-t));
    }
    const double lbeta = lgamma(L + 1.0) + lgamma(N - 1.0) - lgamma(K + 1.0);
    const double left = k == STAP_CFAR_AMF && t > 1 ? 1 / t : 1, right = k == STAP_CFAR_ACE ? t : 1;
    return half(k, N, L, lbeta, t, sinr, 0, left) + half(k, N, L, lbeta, t, sinr, 1, right);
}

double stap_detector_pd(stap_cfar_kind k, int N, int K, double eta, double sinr)
{
    if (!(sinr > 0)) return stap_detector_pfa(k, N, K, eta);
    if (N < 1 || K < N || (k == STAP_CFAR_ACE && N < 2) || !stap_cfar_is_adaptive(k)) return NAN;
    if (eta <= 0) return 1;
    if (k != STAP_CFAR_AMF && eta >= 1) return 0;
    return mean_over_rho(k, N, K, k == STAP_CFAR_AMF ? eta / K : k == STAP_CFAR_KELLY ? eta : 1 - eta,
                         sinr);
}

double stap_detector_pfa(stap_cfar_kind k, int N, int K, double eta)
{
    const int L = K - N + 1;
    if (N < 1 || L < 1) return NAN;
    switch (k) {
    case STAP_CFAR_KELLY:
        return eta <= 0 ? 1 : eta >= 1 ? 0 : exp(L * log1p(-eta));
    case STAP_CFAR_AMF:
        return eta <= 0 ? 1 : mean_over_rho(k, N, K, eta / K, 0);
    case STAP_CFAR_ACE:
        if (N < 2) return NAN;
        return eta <= 0 ? 1 : eta >= 1 ? 0 : mean_over_rho(k, N, K, 1.0 - eta, 0);
    default:
        return NAN;
    }
}

int stap_detector_threshold(stap_cfar_kind k, int N, int K, double pfa, double *eta,
                            stap_error *err)
{
    if (!stap_cfar_is_adaptive(k))
        return stap_fail(err, STAP_EINVAL, "detector kind %d is not an adaptive detector", (int)k);
    if (!(pfa > 0 && pfa < 1))
        return stap_fail(err, STAP_EINVAL, "the %s detector's pfa %g must be between 0 and 1 "
                         "(exclusive)", stap_cfar_kind_name(k), pfa);
    if (N < (k == STAP_CFAR_ACE ? 2 : 1) || K < N)
        return stap_fail(err, STAP_EINVAL, "the %s detector needs %s and training snapshots "
                         "K >= adapted DOF N (N = %d, K = %d)", stap_cfar_kind_name(k),
                         k == STAP_CFAR_ACE ? "N >= 2 (with one DOF ACE is 1 in every cell)"
                                            : "N >= 1", N, K);
    const int L = K - N + 1;
    if (k == STAP_CFAR_KELLY) {
        *eta = -expm1(log(pfa) / L);
        return STAP_OK;
    }
    /* bisection on u: AMF eta = u (pfa falls as u grows, u in (0, inf)); ACE u = 1 - eta
     * (pfa rises with u, u in (0, 1)), in log u */
    const double target = log(pfa);
    double lo = log(1e-300), hi = 0.0;
    if (k == STAP_CFAR_AMF) {
        lo = log(1e-12);
        while (log(stap_detector_pfa(k, N, K, exp(hi))) > target) {
            lo = hi;
            hi += 1;
            if (hi > 700) return stap_fail(err, STAP_ENUMERIC, "AMF: no threshold reaches pfa %g", pfa);
        }
    }
    for (int it = 0; it < 200 && hi - lo > 1e-14 * (1 + fabs(lo)); it++) {
        const double mid = 0.5 * (lo + hi), u = exp(mid);
        const double lp = k == STAP_CFAR_AMF ? log(stap_detector_pfa(k, N, K, u))
                                             : log(mean_over_rho(k, N, K, u, 0));
        if (k == STAP_CFAR_AMF ? lp > target : lp < target) lo = mid;
        else hi = mid;
    }
    const double u = exp(0.5 * (lo + hi));
    *eta = k == STAP_CFAR_AMF ? u : 1.0 - u;
    return STAP_OK;
}

int stap_detector_check(const stap_cfar_config *d, const stap_config *c, stap_error *err)
{
    const char *name = stap_cfar_kind_name(d->kind);
    const unsigned t = stap_algorithm_traits(c);
    char label[64];
    if (t & (STAP_TRAIT_SUBCPI | STAP_TRAIT_FIXED))
        return stap_fail(err, STAP_EINVAL,
                         "the %s detector is not defined for %s: its output in a cell is not "
                         "w^H x of one snapshot x of the training's distribution (%s)", name,
                         stap_algorithm_label(c, label, sizeof label),
                         t & STAP_TRAIT_FIXED ? "fixed weights: nothing is trained"
                                              : "the sub-CPI outputs are Doppler filtered after "
                                                "adaptation");
    if (c->loading > 0)
        return stap_fail(err, STAP_EINVAL, "the %s detector needs stap_config.loading 0: its "
                         "false-alarm probability is that of the sample covariance (loading %g "
                         "changes it)", name, c->loading);
    if (c->training_window != STAP_TRAINING_SLIDING)
        return stap_fail(err, STAP_EINVAL, "the %s detector needs training that leaves out the cell "
                         "under test: stap_config.training_window sliding (the segment window "
                         "may train on the cell itself)", name);
    double eta;
    return stap_detector_threshold(d->kind, stap_adaptive_dof(c), c->training, d->pfa, &eta, err);
}
