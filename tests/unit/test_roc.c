/* test_roc: `rtstap roc`'s measurement (stap/analysis/roc.c) against the theory
 * (stap_detector_pd) at small trial counts.
 *  - Pd of AMF, Kelly and ACE at 6 SINR points, (N, K) = (4, 12) with two jammers and
 *    (6, 10) in noise alone, 4 000 trials a point: every measured Pd within
 *    5 binomial standard errors of the theory (sigma from the theory's Pd) + 0.002 (the
 *    quadrature). A correct detector fails a point with probability < 5.8e-7, the
 *    36 points together < 2.1e-5.
 *  - The false-alarm rate at pfa 1e-2 over 20 000 trials within 5 standard errors.
 *  - A control: the theory 1 dB off fails at least one point (the check can fail).
 *  - stap_detector_pd at SINR 0 is pfa; Pd rises with SINR; the SINR at Pd 0.5 / 0.9
 *    (bisection) gives back those Pd. */
#include <math.h>
#include <stdio.h>

#include "roc.h"
#include "testutil.h"

static void one(int N, int K, int jammers)
{
    stap_roc_config c = {.dof = N, .training = K, .pfa = 1e-2, .trials = 4000, .points = 6,
                         .jammers = jammers, .target_u = 0.05, .seed = 4600 + (uint64_t)N};
    const double ju[2] = {-0.5, 0.3}, jnr[2] = {30, 45};
    for (int j = 0; j < jammers; j++) {
        c.jammer_u[j] = ju[j];
        c.jammer_jnr_db[j] = jnr[j];
    }
    for (int p = 0; p < c.points; p++) c.sinr_db[p] = 4 + 3 * p;
    stap_roc_result r;
    stap_error err;
    if (stap_roc_run(&c, &r, &err)) {
        CHECK(0, "roc N %d K %d: %s", N, K, err.msg);
        return;
    }
    for (int k = 0; k < 3; k++) {
        const stap_roc_curve *cv = &r.curve[k];
        const char *name = stap_cfar_kind_name(cv->kind);
        int off = 0;
        for (int p = 0; p < c.points; p++) {
            const double th = cv->pd_theory[p], se = sqrt(th * (1 - th) / c.trials);
            CHECK(fabs(cv->pd[p] - th) <= 5 * se + 0.002, "%s N %d K %d SINR %g dB: Pd %.4f, theory %.4f",
                  name, N, K, c.sinr_db[p], cv->pd[p], th);
            const double shifted = stap_detector_pd(cv->kind, N, K, cv->threshold,
                                                    pow(10, (c.sinr_db[p] + 1) / 10));
            off += fabs(cv->pd[p] - shifted) > 5 * sqrt(shifted * (1 - shifted) / c.trials) + 0.002;
            if (p) CHECK(th > cv->pd_theory[p - 1], "%s: theory Pd not rising", name);
        }
        CHECK(off > 0, "control: %s theory 1 dB off passes every point", name);
        CHECK(fabs(stap_detector_pd(cv->kind, N, K, cv->threshold, 0) / c.pfa - 1) < 1e-6,
              "%s: Pd at SINR 0 is not pfa", name);
        for (int l = 0; l < 2; l++) {
            const double level = l ? 0.9 : 0.5, s = stap_roc_sinr_at(cv->kind, N, K, cv->threshold, level);
            CHECK(fabs(stap_detector_pd(cv->kind, N, K, cv->threshold, pow(10, s / 10)) - level) < 1e-6,
                  "%s: SINR at Pd %g", name, level);
        }
        printf("roc %-5s N %d K %d: Pd measured - theory at %g..%g dB:", name, N, K, c.sinr_db[0],
               c.sinr_db[c.points - 1]);
        for (int p = 0; p < c.points; p++) printf(" %+.4f", cv->pd[p] - cv->pd_theory[p]);
        printf("\n");
    }
    /* the false-alarm rate, on more trials */
    c.points = 1;
    c.trials = 20000;
    if (stap_roc_run(&c, &r, &err)) {
        CHECK(0, "roc: %s", err.msg);
        return;
    }
    const double se = sqrt(c.pfa * (1 - c.pfa) * c.trials);
    for (int k = 0; k < 3; k++)
        CHECK(fabs(r.curve[k].false_alarms - c.pfa * c.trials) < 5 * se, "%s N %d K %d: %ld false alarms "
              "in %ld trials at pfa %g", stap_cfar_kind_name(r.curve[k].kind), N, K,
              r.curve[k].false_alarms, c.trials, c.pfa);
}

int main(void)
{
    one(4, 12, 2);
    one(6, 10, 0);
    stap_roc_config bad = {.dof = 8, .training = 4, .pfa = 1e-3, .trials = 10, .points = 1};
    stap_roc_result r;
    stap_error err;
    CHECK(stap_roc_run(&bad, &r, &err) == STAP_EINVAL, "K < N accepted");
    if (tc_failures) fprintf(stderr, "test_roc: %d failure(s)\n", tc_failures);
    return tc_failures ? 1 : 0;
}
