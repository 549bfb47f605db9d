/* cfar: constant-false-alarm-rate detection on the adaptive output — cell-averaging
 * (CA) and ordered-statistic (OS) CFAR along range on the square-law power |y|^2.
 *
 * Model: in noise-only cells |y|^2 is exponential with an unknown mean mu. For the
 * cell under test (CUT) r the detector sees n training cells (train on each side of
 * the CUT, separated from it by guard cells on each side) and declares a detection
 * when |y_r|^2 > alpha * Z, where
 *   CA: Z = mean of the n training powers, alpha = n (pfa^(-1/n) - 1)  (exact:
 *       P(|y|^2 > alpha Z) = (1 + alpha/n)^(-n) = pfa);
 *   OS: Z = k-th smallest of the n training powers, alpha solves the exact
 *       OS-CFAR equation pfa = prod_{i=0}^{k-1} (n - i) / (n - i + alpha)
 *       (Rohling 1983).
 * Edges: a CUT closer than guard+train cells to either end of the range line uses the
 * training cells that exist (the full window on one side, the part inside the line on
 * the other), with n its actual count and alpha (and, for OS, k scaled to
 * round(k_full * n / (2 train)), at least 1) recomputed for that n, so that the
 * false-alarm probability stays pfa in every cell. The validation requires
 * range_gates >= 2 (guard + train) + 1, so every CUT has at least one full side.
 * Estimated SNR: power over the noise-power estimate, Z for CA and
 * Z / sum_{i=0}^{k-1} 1/(n-i) for OS (the k-th order statistic's mean is mu times
 * that sum), in dB. */
#ifndef CFAR_H
#define CFAR_H

#include <stddef.h>

#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { STAP_CFAR_NONE = 0, STAP_CFAR_CA, STAP_CFAR_OS } stap_cfar_kind;

typedef struct stap_cfar_config {
    stap_cfar_kind kind;
    double pfa;   /* false-alarm probability per cell, 0 < pfa < 1 (default 1e-6)          */
    int guard;    /* guard cells each side of the cell under test, >= 0 (default 2)       */
    int train;    /* training cells each side, 1..STAP_CFAR_MAX_TRAIN (default 16)         */
    int os_rank;  /* OS-CFAR: k-th smallest of the 2*train cells, 1..2*train;
                     0 = round(0.75 * 2 * train)                                          */
} stap_cfar_config;

#define STAP_CFAR_MAX_TRAIN 128

void stap_cfar_defaults(stap_cfar_config *c);
/* "none" | "ca" | "os" */
int stap_cfar_parse_kind(const char *s, stap_cfar_kind *k, rt_error *err);
const char *stap_cfar_kind_name(stap_cfar_kind k);
/* Checks every field against range_gates (messages name the field: stap_cfar_config.pfa,
 * .guard, .train, .os_rank). */
int stap_cfar_validate(const stap_cfar_config *c, int range_gates, rt_error *err);

/* Square-law detection along range of |y|^2, y: beams x doppler x range (row-major).
 * Returns the detections sorted by (beam, doppler_bin, range_cell), malloc'd (free
 * with free(); *out is NULL when *count is 0). kind NONE returns no detections. */
int stap_cfar_detect(const stap_cfar_config *c, const cf32 *y, int beams, int doppler_bins,
                     int range_gates, stap_detection **out, size_t *count, rt_error *err);

/* The detector as a plan for one output shape (B x D x R) and thread count: tables and
 * work space made once, executed per CPI without allocating (the detection array grows
 * only when a CPI detects more than any before). CA costs O(R) per line (prefix sums),
 * OS O(R * train). The detections of execute/finish stay valid until the next call. */
typedef struct stap_cfar_plan stap_cfar_plan;
/* A cell that detected: flat index (b*D + d)*R + r, window statistic z and its power
 * (the layout of the GPU detector's rtk_cfar_hit). */
typedef struct stap_cfar_hit {
    unsigned long long flat;
    double z, power;
} stap_cfar_hit;
int stap_cfar_plan_create(stap_cfar_plan **p, const stap_cfar_config *c, int beams,
                          int doppler_bins, int range_gates, int threads, rt_error *err);
int stap_cfar_plan_execute(stap_cfar_plan *p, const cf32 *y, const stap_detection **out,
                           size_t *count, rt_error *err);
/* Detections from hits found elsewhere (the GPU): sorts hits, forms the records. */
int stap_cfar_plan_finish(stap_cfar_plan *p, stap_cfar_hit *hits, size_t count,
                          const stap_detection **out, size_t *n_out, rt_error *err);
/* The threshold tables (2*train + 1 entries) for a GPU detector to copy. */
const double *stap_cfar_plan_alpha(const stap_cfar_plan *p);
const int *stap_cfar_plan_rank(const stap_cfar_plan *p);
void stap_cfar_plan_destroy(stap_cfar_plan *p);

/* The same detector on the GPU (stap/cfar_gpu.cu, builds with CUDA only): copies y up,
 * runs the rtk CFAR kernels, returns a malloc'd sorted list as stap_cfar_detect does.
 * For tests and one-off use; engines keep their buffers (stap/engine_gpu.cu). */
int stap_cfar_detect_gpu(const stap_cfar_config *c, const cf32 *y, int beams, int doppler_bins,
                         int range_gates, stap_detection **out, size_t *count, rt_error *err);

/* e.g. "ca pfa=1e-06 guard=2 train=16", "os pfa=0.001 guard=2 train=16 rank=24" */
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

/* Per training-cell count n = 1..2*train: the threshold factor alpha[n] and, for OS,
 * the rank k[n] (1-based) and the noise-estimate divisor norm[n] (Z / norm[n] is the
 * noise-power estimate; 1 for CA). Arrays of 2*train + 1 entries (index 0 unused).
 * Returns RT_OK or RT_ENUMERIC when the OS equation has no solution. */
int stap_cfar_tables(const stap_cfar_config *c, double *alpha, int *rank, double *norm,
                     rt_error *err);

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
                                double noise);

#ifdef __cplusplus
}
#endif

#endif
