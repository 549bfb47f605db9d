/* sinr: how good are a run's adaptive weights? For each Doppler bin d, segment s and
 * beam b, the signal-to-interference-plus-noise ratio of the weights against the
 * optimum from the true covariance of the Doppler-domain snapshots of a generated
 * scene (datasets/scene.h; computed by datasets/scene_sinr.h), after Ward TR-1015 and
 * Reed, Mallett & Brennan (1974).
 *
 *   R_d          true covariance of the snapshot s(d, .) (stap_scene_covariance_doppler)
 *   t_{d,b}      Doppler-domain signature of a target in beam b's look direction at
 *                the centre frequency of bin d: spatial response = the centre tap of
 *                the steering vector v_b, Doppler = d / D cycles per pulse
 *   SINR_opt     = xi t^H R_d^{-1} t                 (xi: target power per element/pulse)
 *   SNR_0        = xi ||a||^2 P / sigma^2            (noise-only, full-DOF matched filter)
 *   L_opt(d, b)  = SINR_opt / SNR_0                  Ward's clutter SINR loss (<= 1)
 *   SINR(w)      = xi |w^H t|^2 / (w^H R_d w)
 *   rho(d, s, b) = SINR(w) / SINR_opt                the adaptive loss, in (0, 1]
 *   L_adapt      = L_opt rho
 * A reduced-DOF algorithm adapts T^H s (T: N x Nt; JDL's beamspace transform): its best
 * weights give SINR_alg = xi t~^H (T^H R_d T)^{-1} t~, t~ = T^H t, and then rho =
 * SINR(w) / SINR_alg, L_alg = SINR_alg / SNR_0, L_adapt = L_alg rho.
 * With K independent training snapshots of covariance R_d, no loading and w
 * proportional to R_hat^{-1} t, rho ~ Beta(K + 2 - Nt, Nt - 1), mean (K+2-Nt)/(K+1)
 * (the RMB law); rmb_applicable says whether the run met those conditions.
 * The sub-CPI algorithms (pre-Doppler, ADPCA; Q = M' pulses of a sub-CPI, P' = P - Q + 1
 * sub-CPIs, window u[0..P'-1]) adapt in one domain and filter in another: the weights
 * w = R_hat^{-1} s come from the sub-CPI snapshots x[c, q] (covariance R_sub) and are
 * applied to the staggered snapshot z_d[c*Q + q] = sum_p' u[p'] exp(-2 pi i d p'/D)
 * x[c, p' + q] (covariance R_z(d), target signature t_d). Then
 *   L_opt(d, b)  = sigma^2 t_d^H R_z^{-1} t_d / (||a||^2 P)   (the best weights on z_d)
 *   L_alg(d, b)  = SINR_z(R_sub^{-1} s_{d,b}) / SNR_0           (Ward's pre-Doppler / ADPCA
 *                  loss: the clairvoyant weights of the algorithm evaluated on z_d)
 *   rho(d, s, b) = |w^H s|^2 / ((w^H R_sub w)(s^H R_sub^{-1} s))  (the adaptive stage's
 *                  loss in the sub-CPI domain, where RMB holds for any fixed s, Nt = N)
 *   adaptive_loss = SINR_z(w) / SNR_0, which is not L_alg rho here (for post-Doppler and
 *                  JDL it is exactly L_alg rho). */
#ifndef SINR_H
#define SINR_H

#include <stddef.h>

#include "stap.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

/* What stap_sinr_compute needs from a run (the result file of `rtstap run`). */
typedef struct stap_run_data {
    stap_config cfg;            /* from /config (validated, D resolved)                    */
    int beams;                  /* B                                                        */
    stap_cf32 *steering;             /* B x N                                                    */
    stap_cf32 *weights;              /* D x S x B x N                                            */
    stap_cf32 *output;               /* B x D x R, or NULL when not asked for                     */
    int have_detections;        /* /detections present                                      */
    size_t detection_count;
    stap_detection *detections; /* sorted as written                                        */
    int has_prf;
    double prf_hz;              /* /radar/prf_hz when present                               */
    double *look_az, *look_el;  /* B: /steering's az_deg and el_deg (the beams' directions,
                                   degrees) when it has them, else NULL                     */
} stap_run_data;

/* Read a result file of `rtstap run` (/config, /steering, /weights; /output/iq when
 * want_output; /detections and /radar/prf_hz when present). */
RT_INTERNAL int stap_run_read(const char *path, int want_output, stap_run_data *rd, stap_error *err);
/* The same for a recording's results (/weights of CPIs x D x S x B x N): the row of the
 * input's CPI `cpi` (by /axes/input_cpi) of /weights and /output/iq, and that CPI's
 * detections; *rows (or NULL) gets the rows in the file. A one-CPI result with cpi 0 is
 * read as stap_run_read does. */
RT_INTERNAL int stap_run_read_cpi(const char *path, long long cpi, int want_output, stap_run_data *rd,
                      long long *rows, stap_error *err);
RT_INTERNAL void stap_run_free(stap_run_data *rd);

typedef struct stap_sinr_result {
    int D, S, B, N, K, C, P;     /* N = C*Q: the weights' length                          */
    int Nt;                      /* the adapted DOF: N, or Na*Q for JDL (the RMB law's N)  */
    char algorithm[32];          /* "post-doppler", "jdl NA=3", "pre-doppler M=3" or
                                    "adpca M=2"; "" for tables that did not record it
                                    (post-Doppler)                                         */
    int Q;                       /* Doppler order (N / C for tables that did not record it) */
    char window[32];             /* the run's window: "none", "hann", "chebyshev:DB"; ""
                                    for tables that did not record it                      */
    char training[32];           /* "segment", or "sliding LB=4 G=2"; "" for tables that
                                    did not record it (segments)                           */
    int beam;                    /* the beam the summary covers, -1 = all beams          */
    double prf_hz;               /* 0 when unknown                                        */
    double *doppler;             /* D: bin centre, cycles per pulse, wrapped to [-1/2, 1/2) */
    double *optimum_loss;        /* D x B (row-major): L_opt, linear                      */
    double *algorithm_loss;      /* D x B: the algorithm's clairvoyant loss L_alg = the
                                    SINR of its best weights (T (T^H R_d T)^-1 T^H t for
                                    JDL's transform T; = L_opt for post-Doppler) / SNR_0  */
    double *rho;                 /* D x S x B: SINR(w) / SINR_alg (the adaptive loss; for
                                    post-Doppler SINR_alg = SINR_opt); sub-CPI: the ratio
                                    in the sub-CPI domain (above)                          */
    double *adaptive_loss;       /* D x S x B: SINR(w) / SNR_0 of the run's weights, linear
                                    (L_alg rho but for the sub-CPI algorithms)             */
    /* Summary over the summarized beams, all bins and segments. */
    size_t count;                /* number of rho values                                  */
    size_t estimates;            /* the independent covariance estimates among them: a
                                    segment's bins (and beams) share one for the sub-CPI
                                    algorithms (S), each bin has its own otherwise (D S)  */
    double rho_mean, rho_sd;     /* sample mean and standard deviation                    */
    double rmb_mean, rmb_sd;     /* Beta(K+2-N, N-1) mean and standard deviation          */
    double rho_se;               /* rmb_sd / sqrt(estimates): the standard error of rho_mean
                                    counting the independent estimates only (values that
                                    share one are correlated: counting each would make
                                    it too small, and z too large)                         */
    double z;                    /* (rho_mean - rmb_mean) / rho_se                        */
    int rmb_applicable;          /* loading 0, K >= N, steering = target signature        */
} stap_sinr_result;

/* The table is computed against a generated scene's truth by stap_sinr_compute
 * (datasets/scene_sinr.h: the scene generator is a layer above stap/). */
RT_INTERNAL void stap_sinr_free(stap_sinr_result *res);

/* Mean of rho over segments for (d, b). */
RT_INTERNAL double stap_sinr_rho_mean(const stap_sinr_result *res, int d, int b);
/* Mean of the adaptive loss (linear) over segments for (d, b). */
RT_INTERNAL double stap_sinr_adaptive_mean(const stap_sinr_result *res, int d, int b);
/* The traits (STAP_TRAIT_*) of the table's algorithm, from its label; 0 for a label that
 * names no algorithm. */
RT_INTERNAL unsigned stap_sinr_traits(const stap_sinr_result *res);
/* Whether the table's algorithm adapts in the sub-CPI domain (pre-Doppler, ADPCA, DPCA). */
RT_INTERNAL int stap_sinr_is_subcpi(const stap_sinr_result *res);

/* Write the table to path atomically (wo: NULL or STAP_WRITE_NEW never overwrites;
 * STAP_WRITE_REPLACE replaces an existing file, h5io.h): /sinr/doppler_normalized (D),
 * /sinr/doppler_hz (D, when the PRF is known), /sinr/optimum_loss_db (D x B),
 * /sinr/algorithm_loss_db (D x B), /sinr/rho (D x S x B), /sinr/adaptive_loss_db
 * (D x S x B) and the summary as attributes of /sinr, plus the names of the scene and run
 * files, the run's Doppler order and window. */
RT_INTERNAL int stap_sinr_write(const char *path, const stap_sinr_result *res, const char *scene_name,
                    const char *run_name, const stap_write_options *wo, stap_error *err);
/* Read a file written by stap_sinr_write (tables without algorithm_loss_db: L_alg = L_opt;
 * without adaptive_loss_db: L_alg rho). */
RT_INTERNAL int stap_sinr_read(const char *path, stap_sinr_result *res, stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
