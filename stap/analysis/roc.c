/* roc.c: Monte-Carlo detection and false-alarm rates of the adaptive detectors beside their
 * theory (roc.h). */
#include "roc.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_rng.h"

static const stap_cfar_kind KINDS[3] = {STAP_CFAR_AMF, STAP_CFAR_KELLY, STAP_CFAR_ACE};

static int check(const stap_roc_config *c, stap_error *err)
{
    if (c->dof < 2 || c->dof > 256)
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.dof %d must be between 2 and 256", c->dof);
    if (c->training < c->dof || c->training > 100000)
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.training %d must be between "
                         "stap_roc_config.dof %d and 100000", c->training, c->dof);
    if (!(c->pfa > 0 && c->pfa < 1))
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.pfa %g must be between 0 and 1 "
                         "(exclusive)", c->pfa);
    if (c->trials < 1)
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.trials %ld must be at least 1", c->trials);
    if (c->points < 1 || c->points > STAP_ROC_MAX_POINTS)
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.points %d must be between 1 and %d",
                         c->points, STAP_ROC_MAX_POINTS);
    if (c->jammers < 0 || c->jammers > STAP_ROC_MAX_JAMMERS)
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.jammers %d must be between 0 and %d",
                         c->jammers, STAP_ROC_MAX_JAMMERS);
    for (int j = 0; j < c->jammers; j++)
        if (!(fabs(c->jammer_u[j]) <= 1) || !(fabs(c->jammer_jnr_db[j]) <= 100))
            return stap_fail(err, STAP_EINVAL, "stap_roc_config.jammer_u[%d] %g must be in [-1, 1] "
                             "and .jammer_jnr_db %g within +-100 dB", j, c->jammer_u[j],
                             c->jammer_jnr_db[j]);
    if (!(fabs(c->target_u) <= 1))
        return stap_fail(err, STAP_EINVAL, "stap_roc_config.target_u %g must be in [-1, 1]", c->target_u);
    for (int p = 0; p < c->points; p++)
        if (!(fabs(c->sinr_db[p]) <= 100))
            return stap_fail(err, STAP_EINVAL, "stap_roc_config.sinr_db[%d] %g must be within +-100 dB",
                             p, c->sinr_db[p]);
    return STAP_OK;
}

int stap_roc_cholesky(double _Complex *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = creal(A[j * n + j]);
        for (int k = 0; k < j; k++) d -= creal(A[j * n + k] * conj(A[j * n + k]));
        if (!(d > 0)) return 0;
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double complex s = A[i * n + j];
            for (int k = 0; k < j; k++) s -= A[i * n + k] * conj(A[j * n + k]);
            A[i * n + j] = s / d;
        }
    }
    return 1;
}

void stap_roc_forward(const double _Complex *L, int n, const double _Complex *x, double _Complex *y)
{
    for (int i = 0; i < n; i++) {
        double complex s = x[i];
        for (int k = 0; k < i; k++) s -= L[i * n + k] * y[k];
        y[i] = s / L[i * n + i];
    }
}

static void steer(int n, double u, double complex *a)
{
    for (int i = 0; i < n; i++) a[i] = cexp(I * M_PI * i * u); /* d = lambda / 2 */
}

typedef struct work {
    int N, K;
    double complex *G, *S, *v, *x, *z, *wv, *wx;
} work;

/* One trial: training and CUT from CN(0, Rc) (G: Rc's factor), the CUT plus alpha v; the
 * three statistics into st. 0 when S is singular (K = N and a degenerate draw). */
static int trial(work *w, rt_rng *rng, double complex alpha, double st[3])
{
    const int N = w->N;
    memset(w->S, 0, sizeof *w->S * N * N);
    for (int k = 0; k <= w->K; k++) {
        for (int i = 0; i < N; i++) w->z[i] = rt_cgauss(rng);
        double complex *y = k < w->K ? w->wx : w->x; /* G z */
        for (int i = 0; i < N; i++) {
            double complex s = 0;
            for (int j = 0; j <= i; j++) s += w->G[i * N + j] * w->z[j];
            y[i] = s;
        }
        if (k < w->K)
            for (int i = 0; i < N; i++)
                for (int j = 0; j <= i; j++) w->S[i * N + j] += y[i] * conj(y[j]);
    }
    for (int i = 0; i < N; i++) w->x[i] += alpha * w->v[i];
    if (!stap_roc_cholesky(w->S, N)) return 0;
    stap_roc_forward(w->S, N, w->v, w->wv);
    stap_roc_forward(w->S, N, w->x, w->wx);
    double vv = 0, xx = 0;
    double complex vx = 0;
    for (int i = 0; i < N; i++) {
        vv += creal(w->wv[i] * conj(w->wv[i]));
        xx += creal(w->wx[i] * conj(w->wx[i]));
        vx += conj(w->wv[i]) * w->wx[i];
    }
    const double a = creal(vx * conj(vx)) / vv;
    for (int k = 0; k < 3; k++) st[k] = stap_detector_statistic(KINDS[k], w->K, a, xx);
    return 1;
}

/* Rc = I + sum_j JNR_j a_j a_j^H into G, factored; returns v^H Rc^-1 v (0: failed). */
static double interference(const stap_roc_config *c, work *w)
{
    const int N = w->N;
    memset(w->G, 0, sizeof *w->G * N * N);
    for (int i = 0; i < N; i++) w->G[i * N + i] = 1;
    for (int j = 0; j < c->jammers; j++) {
        steer(N, c->jammer_u[j], w->z);
        const double p = pow(10.0, c->jammer_jnr_db[j] / 10);
        for (int i = 0; i < N; i++)
            for (int k = 0; k <= i; k++) w->G[i * N + k] += p * w->z[i] * conj(w->z[k]);
    }
    if (!stap_roc_cholesky(w->G, N)) return 0;
    stap_roc_forward(w->G, N, w->v, w->wv);
    double q = 0;
    for (int i = 0; i < N; i++) q += creal(w->wv[i] * conj(w->wv[i]));
    return q;
}

int stap_roc_run(const stap_roc_config *c, stap_roc_result *r, stap_error *err)
{
    int st = check(c, err);
    if (st) return st;
    memset(r, 0, sizeof *r);
    const int N = c->dof;
    work w = {N, c->training, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    w.G = malloc(sizeof(double complex) * (size_t)N * N * 2 + sizeof(double complex) * 5 * N);
    if (!w.G) return stap_fail(err, STAP_ENOMEM, "roc: out of memory for N = %d", N);
    w.S = w.G + (size_t)N * N;
    w.v = w.S + (size_t)N * N;
    w.x = w.v + N;
    w.z = w.x + N;
    w.wv = w.z + N;
    w.wx = w.wv + N;
    steer(N, c->target_u, w.v);
    const double vrv = interference(c, &w);
    for (int k = 0; k < 3 && !st; k++) {
        r->curve[k].kind = KINDS[k];
        st = stap_detector_threshold(KINDS[k], N, c->training, c->pfa, &r->curve[k].threshold, err);
    }
    if (!st && !(vrv > 0))
        st = stap_fail(err, STAP_ENUMERIC, "roc: the interference covariance is not positive definite");
    rt_rng rng;
    rt_rng_seed(&rng, c->seed, 46);
    for (int p = -1; p < c->points && !st; p++) { /* p = -1: no target */
        const double sinr = p < 0 ? 0 : pow(10.0, c->sinr_db[p] / 10);
        const double amp = sqrt(sinr / vrv);
        long hits[3] = {0}, done = 0;
        for (long t = 0; t < c->trials; t++) {
            double s[3];
            if (!trial(&w, &rng, amp * cexp(2 * M_PI * I * rt_uniform(&rng)), s)) continue;
            done++;
            for (int k = 0; k < 3; k++) hits[k] += s[k] > r->curve[k].threshold;
        }
        if (done < c->trials)
            st = stap_fail(err, STAP_ENUMERIC, "roc: %ld of %ld sample covariances singular",
                           c->trials - done, c->trials);
        for (int k = 0; k < 3 && !st; k++) {
            stap_roc_curve *cv = &r->curve[k];
            if (p < 0) {
                cv->false_alarms = hits[k];
                cv->pfa_measured = (double)hits[k] / (double)c->trials;
            } else {
                cv->pd[p] = (double)hits[k] / (double)c->trials;
                cv->pd_theory[p] = stap_detector_pd(KINDS[k], N, c->training, cv->threshold, sinr);
            }
        }
    }
    free(w.G);
    return st;
}

double stap_roc_sinr_at(stap_cfar_kind k, int N, int K, double eta, double pd)
{
    double lo = -10, hi = 30;
    if (stap_detector_pd(k, N, K, eta, pow(10, hi / 10)) < pd ||
        stap_detector_pd(k, N, K, eta, pow(10, lo / 10)) > pd)
        return NAN;
    for (int it = 0; it < 60; it++) {
        const double mid = 0.5 * (lo + hi);
        if (stap_detector_pd(k, N, K, eta, pow(10, mid / 10)) < pd) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

double stap_roc_crossing(const double *x, const double *y, int n, double level)
{
    for (int i = 0; i + 1 < n; i++)
        if (y[i] < level && y[i + 1] >= level)
            return x[i] + (level - y[i]) * (x[i + 1] - x[i]) / (y[i + 1] - y[i]);
    return NAN;
}
