/* roc: the adaptive detectors' (cfar.h: AMF, Kelly, ACE) probability of detection against
 * SINR at a fixed pfa, and their false-alarm rate, measured over Monte-Carlo trials of a
 * generated scene beside the theory (stap_detector_pd) — the figure an engineer checks a
 * detector by (`rtstap roc`). The scene: an N-element half-wavelength line array,
 * interference covariance Rc = I + sum_j JNR_j a(u_j) a(u_j)^H (noise and barrage jammers),
 * K training snapshots and the cell under test drawn from CN(0, Rc) independently (the
 * sliding window's condition), a target alpha a(u_t) in the cell with random phase and
 * |alpha|^2 a^H Rc^-1 a = the optimum output SINR. Each trial forms S from the training
 * snapshots, factors it (Cholesky, in double) and computes every detector's statistic
 * (stap_detector_statistic) on the same draws: the arithmetic of the engine's detector
 * (stap/engine/engine_detect.c, checked against a reference by test_detector) without the
 * Doppler stage, which changes nothing of the statistics' laws. Not part of the public API. */
#ifndef STAP_ANALYSIS_ROC_H
#define STAP_ANALYSIS_ROC_H

#include <stdint.h>

#include "cfar.h"
#include "rt_hidden.h"

#define STAP_ROC_MAX_POINTS 64
#define STAP_ROC_MAX_JAMMERS 8

typedef struct stap_roc_config {
    int dof;                 /* N >= 2 (ACE needs 2)                                  */
    int training;            /* K >= N                                                */
    double pfa;              /* the requested false-alarm probability, (0, 1)         */
    long trials;             /* per SINR point, and for the false-alarm rate (>= 1)   */
    int points;              /* SINR points, 1..STAP_ROC_MAX_POINTS                   */
    double sinr_db[STAP_ROC_MAX_POINTS]; /* the optimum output SINR of each point, dB  */
    int jammers;             /* 0..STAP_ROC_MAX_JAMMERS                              */
    double jammer_u[STAP_ROC_MAX_JAMMERS], jammer_jnr_db[STAP_ROC_MAX_JAMMERS];
    double target_u;         /* the target's (and the steering vector's) sine-space angle */
    uint64_t seed;
} stap_roc_config;

typedef struct stap_roc_curve {
    stap_cfar_kind kind;     /* STAP_CFAR_AMF, _KELLY, _ACE                           */
    double threshold;        /* for the requested pfa                                 */
    long false_alarms;       /* over the trials without a target                      */
    double pfa_measured;     /* false_alarms / trials                                 */
    double pd[STAP_ROC_MAX_POINTS], pd_theory[STAP_ROC_MAX_POINTS];
} stap_roc_curve;

typedef struct stap_roc_result {
    stap_roc_curve curve[3]; /* AMF, Kelly, ACE                                       */
} stap_roc_result;

/* Cholesky A = L L^H in place (the lower triangle of row-major n x n, double complex; the
 * strict upper triangle is not read); 0 when A is not positive definite. */
RT_INTERNAL int stap_roc_cholesky(double _Complex *A, int n);
/* y = L^-1 x (forward substitution with stap_roc_cholesky's factor). */
RT_INTERNAL void stap_roc_forward(const double _Complex *L, int n, const double _Complex *x,
                                  double _Complex *y);
/* Checks c (messages name the field: stap_roc_config.dof, ...), runs the trials. */
RT_INTERNAL int stap_roc_run(const stap_roc_config *c, stap_roc_result *r, stap_error *err);
/* The SINR (dB) at which detector k reaches pd in theory (bisection on stap_detector_pd),
 * NAN when pd is not reached within [-10, 30] dB. */
RT_INTERNAL double stap_roc_sinr_at(stap_cfar_kind k, int N, int K, double eta, double pd);
/* The SINR (dB) at which a measured curve crosses pd (linear in dB between the points that
 * straddle it, the points ascending), NAN when it does not. */
RT_INTERNAL double stap_roc_crossing(const double *sinr_db, const double *pd, int points, double level);

#endif
