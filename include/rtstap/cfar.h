/* cfar: constant-false-alarm-rate detection on the adaptive output — cell-averaging
 * (CA), ordered-statistic (OS), greatest-of (GO) and smallest-of (SO) CFAR along range,
 * and cell-averaging over a range x Doppler rectangle (CA2D), on the square-law power
 * |y|^2.
 *
 * Model: in noise-only cells |y|^2 is exponential with an unknown mean mu. For the
 * cell under test (CUT) r the detector sees n training cells and declares a detection
 * when |y_r|^2 > alpha * Z. Along range (CA, OS, GO, SO) the training cells are train
 * cells on each side of the CUT, separated from it by guard cells on each side:
 *   CA: Z = mean of the n training powers, alpha = n (pfa^(-1/n) - 1)  (exact:
 *       P(|y|^2 > alpha Z) = (1 + alpha/n)^(-n) = pfa);
 *   OS: Z = k-th smallest of the n training powers, alpha solves the exact
 *       OS-CFAR equation pfa = prod_{i=0}^{k-1} (n - i) / (n - i + alpha)
 *       (Rohling 1983);
 *   GO / SO: Z = the larger / smaller of the left and right training means (m = train
 *       cells each side, n = 2m); with T = alpha/m (Weiss 1982, Gandhi & Kassam 1988)
 *         SO: pfa = 2 sum_{k=0}^{m-1}  C(m-1+k, k) (2+T)^-(m+k),
 *         GO: pfa = 2 sum_{k=m}^{inf}  C(m-1+k, k) (2+T)^-(m+k)  (= 2 (1+T)^-m - SO),
 *       exact; alpha is solved from them by bisection to double precision.
 *   CA2D: Z = mean over a rectangle of range cells x Doppler bins around the CUT: range
 *       offsets |dr| <= guard + train and Doppler offsets |dd| <= guard_doppler +
 *       train_doppler, less the guard rectangle |dr| <= guard, |dd| <= guard_doppler
 *       (which holds the CUT). Doppler wraps circularly (the bins are an FFT's), so every
 *       row of the window exists; alpha = n (pfa^(-1/n) - 1) as for CA.
 * Edges: a CUT closer than guard+train cells to either end of the range line uses the
 * training cells that exist (the full window on one side, the part inside the line on
 * the other), with n its actual count and alpha (and, for OS, k scaled to
 * round(k_full * n / (2 train)), at least 1) recomputed for that n, so that the
 * false-alarm probability stays pfa in every cell. GO and SO need both full sides: where
 * a side is partial or missing (n < 2 train) they are CA over the cells that exist, with
 * CA's alpha for that n (exact too). CA2D truncates every row of its rectangle at the
 * range ends the same way; n = 2 train_doppler (hi1 - lo0) + (2 guard_doppler + 1)
 * ((hi0 - lo0) + (hi1 - lo1)) in the terms of stap_cfar_window. The validation requires
 * range_gates >= 2 (guard + train) + 1, so every CUT has at least one full side, and for
 * CA2D doppler_bins >= 2 (guard_doppler + train_doppler) + 1, so that the Doppler window
 * does not wrap onto itself.
 * Estimated SNR: power over the noise-power estimate Z / norm[n], in dB, with norm[n]
 * the mean of Z in units of mu: 1 for CA and CA2D (and GO/SO at the edges),
 * sum_{i=0}^{k-1} 1/(n-i) for OS (the k-th order statistic's mean), and
 * 1 +- C(2m, m) / 4^m for GO / SO (the mean of the larger / smaller of two Gamma(m)
 * means). */
#ifndef RTSTAP_CFAR_H
#define RTSTAP_CFAR_H

#include <stddef.h>

#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    STAP_CFAR_NONE = 0,
    STAP_CFAR_CA,
    STAP_CFAR_OS,
    STAP_CFAR_GO,
    STAP_CFAR_SO,
    STAP_CFAR_CA2D,
    /* the adaptive detectors (below): not CFARs of the output's power but tests of the
     * snapshot against the weights' training; computed by the engine on every backend */
    STAP_CFAR_AMF,
    STAP_CFAR_KELLY,
    STAP_CFAR_ACE
} stap_cfar_kind;

typedef struct stap_cfar_config {
    stap_cfar_kind kind;
    double pfa;   /* false-alarm probability per cell, 0 < pfa < 1 (default 1e-6)          */
    int guard;    /* guard cells each side of the cell under test, >= 0 (default 2)       */
    int train;    /* training cells each side, 1..STAP_CFAR_MAX_TRAIN (default 16)         */
    int os_rank;  /* OS-CFAR: k-th smallest of the 2*train cells, 1..2*train;
                     0 = round(0.75 * 2 * train)                                          */
    int guard_doppler; /* CA2D: guard bins each side of the CUT's Doppler bin,
                          0..STAP_CFAR_MAX_DOPPLER (default 1)                            */
    int train_doppler; /* CA2D: training bins each side beyond the guard bins,
                          0..STAP_CFAR_MAX_DOPPLER (default 2)                            */
} stap_cfar_config;

#define STAP_CFAR_MAX_TRAIN 128
#define STAP_CFAR_MAX_DOPPLER 64
/* CA2D: at most this many training cells in the full rectangle */
#define STAP_CFAR_MAX_CELLS 65536

void stap_cfar_defaults(stap_cfar_config *c);
/* "none" | "ca" | "os" | "go" | "so" | "ca2d" (the adaptive kinds: stap_detector_parse) */
int stap_cfar_parse_kind(const char *s, stap_cfar_kind *k, stap_error *err);
const char *stap_cfar_kind_name(stap_cfar_kind k);
/* Checks every field the kind uses against the output's doppler_bins and range_gates
 * (messages name the field: stap_cfar_config.pfa, .guard, .train, .os_rank,
 * .guard_doppler, .train_doppler). */
int stap_cfar_validate(const stap_cfar_config *c, int doppler_bins, int range_gates,
                       stap_error *err);
/* Entries of the threshold tables (index = training-cell count n, 0 unused): 2 train + 1
 * along range, the full rectangle's count + 1 for CA2D; 1 for kind NONE. For a valid c. */
size_t stap_cfar_table_len(const stap_cfar_config *c);
/* ---- the adaptive detectors (stap/detect/adaptive.c; docs/processing.md "Adaptive
 * detectors") ----------------------------------------------------------------------
 * For the cell under test's snapshot x (N adapted DOF), a beam's steering vector v and the
 * sample covariance S = sum of the K training snapshots' x_k x_k^H = K Rhat (S = R^H R,
 * R the QR factor of the training matrix), with a = |v^H S^-1 x|^2 / (v^H S^-1 v) and
 * b = x^H S^-1 x:
 *   AMF   (Robey, Fuhrmann, Kelly & Nitzberg 1992): K a = |v^H Rhat^-1 x|^2 / (v^H Rhat^-1 v);
 *   Kelly (Kelly 1986, the GLRT): t = a / (1 + b), in [0, 1);
 *   ACE   (Kraut & Scharf 1999; Kraut, Scharf & McWhorter 2001): a / b, in [0, 1].
 * Under Gaussian interference with training independent of x and of the same covariance,
 * with L = K - N + 1 and the loss factor rho ~ Beta(L + 1, N - 1) (density
 * f(rho) = rho^L (1 - rho)^(N-2) / B(L + 1, N - 1)), a rho given rho has P(a rho > y) =
 * (1 + y)^-L, whence for a threshold eta:
 *   Kelly: pfa = (1 - eta)^L                                     (Kelly 1986, eq. 20);
 *   AMF:   pfa = int_0^1 f(rho) (1 + eta rho / K)^-L d rho        (Robey et al. 1992);
 *   ACE:   pfa = int_0^1 f(rho) ((1 - eta) / (1 - eta rho))^L d rho
 *              = (1 - eta)^L 2F1(L, L + 1; K + 1; eta)            (Kraut et al. 2001).
 * The integrals by composite Simpson over rho (graded near its ends), the thresholds by
 * bisection. */
static inline int stap_cfar_is_adaptive(stap_cfar_kind k)
{
    return k == STAP_CFAR_AMF || k == STAP_CFAR_KELLY || k == STAP_CFAR_ACE;
}
/* "amf" | "kelly" | "ace" */
int stap_detector_parse(const char *s, stap_cfar_kind *k, stap_error *err);
/* The false-alarm probability of adaptive detector k at threshold eta, for N adapted DOF
 * and K training snapshots (K >= N, N >= 2 for ACE). */
double stap_detector_pfa(stap_cfar_kind k, int N, int K, double eta);
/* The probability of detection at threshold eta of a target of optimum output SINR sinr
 * (|alpha|^2 v^H R^-1 v, linear; 0: pfa): given rho, a rho = |n + mu|^2 / G with n ~ CN(0, 1),
 * |mu|^2 = rho sinr, G ~ Gamma(L, 1) (Kelly 1986; Robey et al. 1992 for the AMF), averaged
 * over rho ~ Beta(L + 1, N - 1): the Kelly and AMF Pd curves, and ACE's by the same route. */
double stap_detector_pd(stap_cfar_kind k, int N, int K, double eta, double sinr);
/* The threshold that gives pfa: STAP_EINVAL for N, K or pfa out of range. */
int stap_detector_threshold(stap_cfar_kind k, int N, int K, double pfa, double *eta,
                            stap_error *err);
/* The statistic from a = |v^H S^-1 x|^2 / (v^H S^-1 v) and b = x^H S^-1 x (above). */
static inline double stap_detector_statistic(stap_cfar_kind k, int K, double a, double b)
{
    if (k == STAP_CFAR_AMF) return K * a;
    if (k == STAP_CFAR_KELLY) return a / (1.0 + b);
    return b > 0 ? a / b : 0.0;
}
/* Whether the adaptive detectors are defined for configuration c (validated): adapted
 * weights of one snapshot per cell (post-Doppler, and JDL in each beam's beamspace; not the
 * sub-CPI or fixed-weight algorithms), no
 * diagonal loading, and training that leaves out the cell under test (the sliding window);
 * STAP_EINVAL naming what is not. */
int stap_detector_check(const stap_cfar_config *d, const stap_config *c, stap_error *err);

/* Whether the kind takes window sums from per-line prefix sums (all but OS and NONE). */
static inline int stap_cfar_uses_prefix(stap_cfar_kind k)
{
    return k == STAP_CFAR_CA || k == STAP_CFAR_GO || k == STAP_CFAR_SO || k == STAP_CFAR_CA2D;
}

/* Square-law detection along range of |y|^2, y: beams x doppler x range (row-major).
 * Returns the detections sorted by (beam, doppler_bin, range_cell), malloc'd (free
 * with free(); *out is NULL when *count is 0). kind NONE returns no detections. */
int stap_cfar_detect(const stap_cfar_config *c, const stap_cf32 *y, int beams, int doppler_bins,
                     int range_gates, stap_detection **out, size_t *count, stap_error *err);

/* The detector as a plan for one output shape (B x D x R) and thread count: tables and
 * work space made once, executed per CPI without allocating (the detection array grows
 * only when a CPI detects more than any before). CA, GO and SO cost O(R) per line
 * (prefix sums), OS O(R * train), CA2D O(R * (2 (guard_doppler + train_doppler) + 1))
 * (prefix sums of every line, kept for the CPI: B x D x (R + 1) doubles). The detections
 * of execute/finish stay valid until the next call. */
typedef struct stap_cfar_plan stap_cfar_plan;
/* A cell that detected: flat index (b*D + d)*R + r, window statistic z and its power
 * (the layout of the GPU detector's rtk_cfar_hit). */
typedef struct stap_cfar_hit {
    unsigned long long flat;
    double z, power;
} stap_cfar_hit;
int stap_cfar_plan_create(stap_cfar_plan **p, const stap_cfar_config *c, int beams,
                          int doppler_bins, int range_gates, int threads, stap_error *err);
int stap_cfar_plan_execute(stap_cfar_plan *p, const stap_cf32 *y, const stap_detection **out,
                           size_t *count, stap_error *err);
/* Detections from hits found elsewhere (the GPU): sorts hits, forms the records. */
int stap_cfar_plan_finish(stap_cfar_plan *p, stap_cfar_hit *hits, size_t count,
                          const stap_detection **out, size_t *n_out, stap_error *err);
/* The threshold tables (stap_cfar_table_len entries) for a GPU detector to copy. */
const double *stap_cfar_plan_alpha(const stap_cfar_plan *p);
const int *stap_cfar_plan_rank(const stap_cfar_plan *p);
void stap_cfar_plan_destroy(stap_cfar_plan *p);

/* The GPU detector's kernels, for comparisons (all 0: the defaults; stap_engine_tuning.cfar
 * for an engine): CA, GO and SO run as one pass over each range line where it fits (each
 * power read once). */
typedef struct stap_cfar_gpu_options {
    int two_pass;     /* 1: the prefix-sum pass and the test pass there instead            */
    int line_threads; /* the one-pass kernel's threads a line: 0 (= 128), 32, 64 or 128    */
} stap_cfar_gpu_options;

/* The same detector on the GPU (stap/detect/cfar_gpu.cu, builds with CUDA only): copies y up,
 * runs the rtk CFAR kernels (go: NULL for the defaults), returns a malloc'd sorted list as
 * stap_cfar_detect does. For tests and one-off use; engines keep their buffers
 * (stap/engine/engine_gpu.cu). */
int stap_cfar_detect_gpu(const stap_cfar_config *c, const stap_cf32 *y, int beams, int doppler_bins,
                         int range_gates, const stap_cfar_gpu_options *go, stap_detection **out,
                         size_t *count, stap_error *err);

/* e.g. "ca pfa=1e-06 guard=2 train=16", "os pfa=0.001 guard=2 train=16 rank=24",
 * "go pfa=1e-06 guard=2 train=16",
 * "ca2d pfa=1e-06 guard=2 train=16 guard_doppler=1 train_doppler=2" */
void stap_cfar_describe(const stap_cfar_config *c, char *buf, size_t len);

/* ---- building blocks shared with the GPU detector (kernels/cfar.cu) --------------
 * The window of cell r on a line of R cells: training cells [lo0, hi0) on the left and
 * [lo1, hi1) on the right; n = (hi0 - lo0) + (hi1 - lo1). */
static inline void stap_cfar_window(int r, int R, int guard, int train, int *lo0, int *hi0,
                                    int *lo1, int *hi1)
{
    int a = r - guard - train, b = r - guard;
    *lo0 = a < 0 ? 0 : a;
    *hi0 = b < 0 ? 0 : b;
    int c0 = r + guard + 1, d = r + guard + 1 + train;
    *lo1 = c0 > R ? R : c0;
    *hi1 = d > R ? R : d;
}

/* The training-cell count of the window of stap_cfar_window (see the edge rule above). */
static inline int stap_cfar_count(const stap_cfar_config *c, int lo0, int hi0, int lo1,
                                  int hi1)
{
    const int n1 = (hi0 - lo0) + (hi1 - lo1);
    if (c->kind != STAP_CFAR_CA2D) return n1;
    return 2 * c->train_doppler * (hi1 - lo0) + (2 * c->guard_doppler + 1) * n1;
}

/* Per training-cell count n = 1..stap_cfar_table_len(c) - 1: the threshold factor
 * alpha[n] and, for OS, the rank k[n] (1-based), and the noise-estimate divisor norm[n]
 * (Z / norm[n] is the noise-power estimate). Arrays of stap_cfar_table_len(c) entries
 * (index 0 unused). Returns STAP_OK or STAP_ENUMERIC when an equation has no solution. */
int stap_cfar_tables(const stap_cfar_config *c, double *alpha, int *rank, double *norm,
                     stap_error *err);

/* Square-law power exactly as both detectors compute it: (double)re^2 + (double)im^2
 * (the float products are exact in double, so contraction cannot change it). */
static inline double stap_cfar_power(float re, float im)
{
    double a = (double)re * (double)re, b = (double)im * (double)im;
    return a + b;
}

/* A detection record from a flat cell index (b*D + d)*R + r, its power and noise
 * estimate (shared so that CPU and GPU produce identical records). */
stap_detection stap_cfar_record(size_t flat, int doppler_bins, int range_gates, double power,
                                double noise, double statistic, double threshold);

#ifdef __cplusplus
}
#endif

#endif
