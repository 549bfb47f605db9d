/* stap: the STAP pipeline of rtstap (Doppler filtering, training matrices, batched QR,
 * MVDR weights, adaptive filtering) as a plan object: create once per CPI shape,
 * execute per CPI, destroy.  The processing contract is README.md's "Processing
 * contract"; each step below cites its number there. */
#ifndef STAP_H
#define STAP_H

#include <stddef.h>

#include "linalg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stap_window_kind {
    STAP_WINDOW_NONE = 0,
    STAP_WINDOW_HANN,      /* w[p] = 0.5 - 0.5 cos(2 pi p / (P-1)), symmetric          */
    STAP_WINDOW_CHEBYSHEV  /* Dolph-Chebyshev, sidelobes `chebyshev_db` below the peak */
} stap_window_kind;

/* Which range cells train the weights of which cells (docs/processing.md 3). */
typedef enum stap_training_window {
    STAP_TRAINING_SEGMENT = 0, /* S segments of R/S cells; K cells spread over each       */
    STAP_TRAINING_SLIDING      /* blocks of `block` cells, each trained on the K cells
                                  nearest to it beyond `guard` cells on either side
                                  (one-sided at the edges); segments = R / block        */
} stap_training_window;

/* Which degrees of freedom the weights adapt (docs/processing.md "Algorithms and detectors"). */
typedef enum stap_algorithm {
    STAP_ALGORITHM_POST_DOPPLER = 0, /* every channel x Q adjacent Doppler bins: factored
                                        post-Doppler (Q = 1) or EFA (Q = 3); N = C*Q      */
    STAP_ALGORITHM_JDL,              /* joint-domain localized (beamspace post-Doppler):
                                        Na beams around each beam's look direction x Q
                                        adjacent Doppler bins; Na*Q per beam            */
    STAP_ALGORITHM_PRE_DOPPLER,      /* element-space pre-Doppler: every channel x the Q
                                        pulses of a sub-CPI (Q = M', sliding over the CPI),
                                        one weight per Doppler bin, Doppler filtering of
                                        the P - Q + 1 adapted sub-CPIs after adaptation;
                                        N = C*Q                                          */
    STAP_ALGORITHM_ADPCA,            /* adaptive DPCA: as pre-Doppler with Q = 2 or 3, one
                                        weight for every Doppler bin, steered to the
                                        binomial canceller (1,-1) or (1,-2,1) x a(u)     */
    STAP_ALGORITHM_DPCA              /* displaced phase centre antenna: the non-adaptive
                                        2- or 3-pulse canceller of subarrays displaced by
                                        dpca_shift channels a pulse (no training)        */
} stap_algorithm;

/* How messages name doppler_order when it holds a sub-CPI's pulses M (pre-Doppler, ADPCA,
 * DPCA), so that a program can show its own name for M (rtstap: --sub-cpi). */
#define STAP_SUBCPI_PARAM "stap_config.doppler_order (the sub-CPI's pulses M)"

/* Every parameter of a run. Shape fields come from the input cube. */
typedef struct stap_config {
    int channels;        /* C  >= 1                                                */
    int pulses;          /* P  >= 1                                                */
    int range_gates;     /* R  >= 1                                                */
    int doppler_bins;    /* D  >= P (zero-padded FFT); 0 = P                       */
    int doppler_order;   /* Q  taps: odd, 1 <= Q <= D adjacent Doppler bins (post-Doppler,
                            JDL); 1 <= Q <= P pulses of a sub-CPI (pre-Doppler; ADPCA:
                            2 or 3). N = C*Q degrees of freedom                    */
    int segments;        /* S  >= 1, divides R (sliding: set to R / block)         */
    int training;        /* K  1 <= K <= R/S (sliding: <= the cells outside any block
                            and its guards); K >= N unless loading > 0            */
    int beams;           /* B  >= 1 (ignored when steering vectors are given)       */
    double loading;      /* delta >= 0: diagonal loading, R^H R = K (Rhat + delta I) */
    stap_window_kind window;
    double chebyshev_db; /* sidelobe level in dB (> 0) for STAP_WINDOW_CHEBYSHEV    */
    double element_spacing; /* d / lambda, default 0.5                             */
    stap_backend backend;
    int threads;         /* CPU threads, 0 = all                                    */
    stap_training_window training_window; /* default STAP_TRAINING_SEGMENT          */
    int block;           /* Lb, sliding: cells per block (divides R); 0 = 1          */
    int guard;           /* G >= 0, sliding: cells left out on each side of a block  */
    stap_algorithm algorithm; /* default STAP_ALGORITHM_POST_DOPPLER                 */
    int angle_bins;      /* Na, JDL: odd, 1 <= Na <= C; 0 = 3 (1 when C < 3)          */
    int dpca_shift;      /* DPCA: channels the phase centre moves in one PRI, beta =
                            2 v T / d (a whole number, sign = direction of flight along
                            the channel index); (Q-1)|shift| < C; 0 = 1            */
    stap_qr_method qr;   /* the factor of the weights (linalg.h): householder (default,
                            0), cholqr2, cholqr (backends cpu and gpu), auto       */
} stap_config;

typedef enum stap_preset { STAP_PRESET_EASY = 0, STAP_PRESET_MEDIUM, STAP_PRESET_HARD,
                           STAP_PRESET_COUNT } stap_preset;

/* Fill cfg with a preset's values (docs/processing.md "Presets"); returns STAP_EINVAL for a bad name. */
int stap_preset_parse(const char *name, stap_preset *out, stap_error *err);
const char *stap_preset_name(stap_preset p);
void stap_preset_config(stap_preset p, stap_config *cfg);
/* Defaults that are not part of a preset (window none, loading 0, spacing 0.5, auto). */
void stap_config_defaults(stap_config *cfg);

/* Resolve defaults (doppler_bins = 0 -> pulses) and check every constraint above;
 * the message names the parameter by its field (e.g. "stap_config.training 40 must be
 * ..."; the command line shows its flag instead). */
int stap_config_validate(stap_config *cfg, int have_steering, int steering_beams,
                         int steering_len, stap_error *err);

/* N = C*Q: the length of a snapshot, a steering vector and a weight vector. */
static inline int stap_dof(const stap_config *c) { return c->channels * c->doppler_order; }
/* The degrees of freedom adapted: the columns of a training matrix (N, or Na*Q for JDL). */
int stap_adaptive_dof(const stap_config *c);
/* Pre-Doppler, ADPCA and DPCA: the taps are the pulses of a sub-CPI (docs/processing.md "Algorithms and detectors"). */
int stap_is_subcpi(const stap_config *c);
/* Training matrices per CPI: D*S, times B for JDL (each beam its own transform); S for
 * the sub-CPI algorithms (time-domain snapshots do not depend on the Doppler bin); 0 for
 * fixed weights (DPCA). */
long long stap_training_matrices(const stap_config *c);
/* Coefficients of the Doppler window: P, or P - Q + 1 for the sub-CPI algorithms (their
 * Doppler filter runs over the adapted sub-CPIs). */
int stap_window_len(const stap_config *c);
/* Rows of one training matrix: K, plus one loading row per adapted DOF when loading > 0. */
static inline int stap_training_rows(const stap_config *c)
{
    return c->training + (c->loading > 0 ? stap_adaptive_dof(c) : 0);
}

/* Window coefficients win[0..stap_window_len(cfg)-1] for the configured window. */
int stap_window(const stap_config *cfg, float *win, stap_error *err);
/* Contract step 3: the K training cells of segment (or sliding block) s of a validated
 * configuration, ascending, into cells[0..K-1]. */
void stap_training_cells(const stap_config *cfg, int s, int *cells);
/* "post-doppler", "jdl", "pre-doppler", "adpca" or "dpca" */
const char *stap_algorithm_name(stap_algorithm a);
int stap_algorithm_parse(const char *name, stap_algorithm *out, stap_error *err);
/* What an algorithm is, for code that must not name one (docs/processing.md "Algorithms and detectors"; each
 * algorithm is one descriptor in stap/config/algorithms.c). */
enum {
    STAP_TRAIT_SUBCPI = 1u << 0,    /* the taps are the Q pulses of a sub-CPI, Doppler
                                       filtering after adaptation (stap_is_subcpi)       */
    STAP_TRAIT_BEAMSPACE = 1u << 1, /* adapts in each beam's own reduced space: B x D x S
                                       training matrices of Nt < N columns              */
    STAP_TRAIT_FIXED = 1u << 2,     /* non-adaptive: fixed weights, nothing trained     */
    STAP_TRAIT_STEER_PER_BIN = 1u << 3 /* the solves steer each Doppler bin on its own
                                       (sub-CPI: D x B steering vectors, not B)          */
};
typedef struct stap_algorithm_info {
    const char *name;   /* "jdl": the command line's and the files' name               */
    const char *label;  /* "JDL": messages and descriptions                             */
    unsigned traits;    /* STAP_TRAIT_*                                                 */
    int taps_min, taps_max; /* the sub-CPI's pulses a canceller takes (ADPCA, DPCA: 2..3);
                               0, 0: any the shape allows                               */
    int taps_default;   /* the sub-CPI's pulses when none are asked (0: the preset's Q) */
    const char *param;  /* the stap_config field only this algorithm reads ("angle_bins",
                           "dpca_shift"), or NULL                                      */
    const char *dof;    /* what the adapted DOF are ("channels x Doppler order")        */
} stap_algorithm_info;
/* The descriptor of algorithm a, or NULL when a is not one. */
const stap_algorithm_info *stap_algorithm_info_of(stap_algorithm a);
/* The traits of c's algorithm (0 when it is not one). */
unsigned stap_algorithm_traits(const stap_config *c);
/* The algorithm's own parameter (stap_algorithm_info.param) of c: its name, and its value
 * in *value; NULL when the algorithm has none. */
const char *stap_algorithm_param(const stap_config *c, int *value);
/* Set it: STAP_EINVAL naming both when c's algorithm has no parameter `name`. */
int stap_algorithm_set_param(stap_config *c, const char *name, int value, stap_error *err);
/* A short label of the algorithm and its own sizes, as results name it: "post-doppler",
 * "jdl NA=3", "pre-doppler M=3", "adpca M=2", "dpca M=2 shift=1". Returns buf. */
const char *stap_algorithm_label(const stap_config *c, char *buf, size_t len);
/* The algorithm a label (or a name) starts with. */
int stap_algorithm_of_label(const char *label, stap_algorithm *out, stap_error *err);
/* A fixed-weight algorithm's weight for steering vector v (STAP_TRAIT_FIXED; N = C*Q):
 * STAP_EINVAL for an adaptive one. */
int stap_fixed_weights(const stap_config *cfg, const stap_cf32 *v, stap_cf32 *w, stap_error *err);
/* JDL's transform for a beam with steering vector v (N = C*Q): T = I_Q (x) A, A the C x Na
 * matrix (column-major, A[j*C + c]) of the beam's own spatial response — v's centre tap
 * v[c*Q + (Q-1)/2], unit norm — and its shifts by j - (Na-1)/2 spatial DFT bins (1/C
 * cycles per element: the adjacent beams of a C-element array), in double as (re, im)
 * pairs: A[2*(j*C + c)] and A[2*(j*C + c) + 1]. Beamspace DOF j*Q + q is
 * sum_c conj(A[j*C + c]) x[c*Q + q]. STAP_EINVAL when the centre tap is zero. */
int stap_jdl_beams(const stap_config *cfg, const stap_cf32 *v, double *A, stap_error *err);
/* Sub-CPI algorithms: the steering vector of Doppler bin d for steering vector v (N = C*Q,
 * the zero-Doppler sub-CPI steering): pre-Doppler s[c*Q + q] = v[c*Q + q] exp(2 pi i d q / D)
 * (a target at the bin's centre frequency d / D, sub-CPI pulse q); ADPCA s = v (one weight
 * for every bin). In double, (re, im) pairs: s[2 j], s[2 j + 1]. */
void stap_subcpi_steering(const stap_config *cfg, const stap_cf32 *v, int d, double *s);
/* DPCA's fixed weight for steering vector v (N = C*Q): tap q of channel c + (Q-1-q)*shift
 * gets v[c*Q + q] / Cs for the Cs = C - (Q-1)|shift| channels c of the subarray (c from
 * max(0, -(Q-1)*shift)), every other entry 0 — with the default v = a (x) h the pulses'
 * subarrays see the same clutter when shift = beta, and the binomial taps h cancel it. */
void stap_dpca_weights(const stap_config *cfg, const stap_cf32 *v, stap_cf32 *w);
/* "segment" or "sliding" */
const char *stap_training_window_name(stap_training_window w);
int stap_training_window_parse(const char *name, stap_training_window *out, stap_error *err);

/* Default steering (contract step 6): V is B x N row-major; beam b's spatial response
 * a_b(c) = exp(2 pi i spacing c u_b) on the centre tap (post-Doppler, JDL), on every pulse
 * of the sub-CPI (pre-Doppler: a_b (x) 1_Q), or times the binomial canceller (ADPCA,
 * DPCA: a_b (x) (1, -1) or a_b (x) (1, -2, 1)). */
void stap_default_steering(const stap_config *cfg, stap_cf32 *V);
/* The sine-space angle of default beam b of B: u_b = -1 + (2b + 1) / B. */
double stap_beam_u(int b, int B);
/* The sine-space angle u in [-1, 1] a steering vector looks at: the peak over a fine grid
 * of |a(u)^H v_centre|, v_centre = the centre-tap entries v[c*Q + (Q-1)/2]. */
double stap_look_direction(const stap_cf32 *v, int channels, int doppler_order, double spacing);

/* ---- steering in physical units (docs/processing.md "Steering and array geometry") ----
 * Directions are azimuth az from broadside, positive towards +x, and elevation el above the
 * array's plane: the unit vector k = (cos el sin az, cos el cos az, sin el) in the array's
 * frame — x along the array axis (the default uniform line, the platform's velocity), y
 * broadside, z up. Element c at p_c (wavelengths) sees exp(+2 pi i p_c . k): for the default
 * line p_c = (c d, 0, 0), exp(2 pi i d c u) with u = cos el sin az, stap_default_steering's
 * convention (Ward, TR-1015, section 2.2). */
typedef struct stap_look {
    double az_deg;   /* azimuth, degrees, -180..180                                         */
    double el_deg;   /* elevation, degrees, -90..90                                         */
    double doppler;  /* the target's Doppler, cycles per pulse (f_D / PRF), -1/2..1/2, or NAN:
                        none (the algorithm's default taps, stap_default_steering)          */
} stap_look;

/* An array: the positions and complex gains of its channels. */
typedef struct stap_array {
    int elements;                 /* C, the cube's channels                                */
    const double *position;       /* C x 3 (x, y, z), wavelengths; NULL: the uniform line
                                     along x at stap_config.element_spacing                */
    const stap_cf32 *calibration; /* C complex gains g_c (the channel's response to a unit
                                     signal: the data are g_c times the ideal), or NULL: 1  */
} stap_array;

/* The steering vectors of nbeams looks (V: nbeams x N, N = C*Q, row-major) for cfg's shape
 * and algorithm (cfg->channels, pulses, doppler_order, doppler_bins (0: P), window): row b is
 * g (.) a(k_b) (x) t_b — a(k)_c = exp(2 pi i p_c . k); t_b the algorithm's default taps
 * (stap_default_steering), or, when looks[b].doppler is a number, the response of a target at
 * that Doppler in the taps of the bin nearest it (post-Doppler, JDL: the windowed DFT's, sum_p
 * win[p] exp(2 pi i (delta - j) p / D) / sum_p win[p] for tap offset j; pre-Doppler: exp(2 pi i
 * delta q / D); delta = D f - the nearest bin). array may be NULL (the uniform line, no
 * calibration). STAP_EINVAL naming the field: an angle or Doppler out of range, a Doppler with
 * an algorithm whose weights do not depend on it (adpca, dpca), array->elements other than
 * cfg->channels, a non-finite position or a zero or non-finite gain. */
int stap_steering_from_looks(const stap_config *cfg, const stap_array *array,
                             const stap_look *looks, int nbeams, stap_cf32 *V, stap_error *err);
/* nbeams looks spread over the sector az1..az2 (degrees) at elevation el, both ends included
 * (az_b = az1 + (az2 - az1) b / (nbeams - 1); one beam: the sector's centre), no Doppler. */
void stap_looks_sector(double az1_deg, double az2_deg, double el_deg, int nbeams, stap_look *looks);
/* The Doppler bin nearest a Doppler of f cycles per pulse among D bins (0..D-1, bin order as
 * the engine's: d / D in [-1/2, 1/2) modulo 1). */
int stap_doppler_bin(double f, int D);

/* The axes of a cube (a recording's cpi axis, an interleaved cube's iq axis too). */
typedef enum stap_axis { STAP_AXIS_CHANNEL = 0, STAP_AXIS_PULSE, STAP_AXIS_RANGE,
                         STAP_AXIS_CPI, STAP_AXIS_IQ } stap_axis;

/* axis[k]: the axis stored at position k of the cube (after a recording's cpi axis);
 * (channel, pulse, range) = {0, 1, 2}. */
typedef struct stap_layout {
    unsigned char axis[3];
} stap_layout;

/* How a cube's samples are stored, as the engine takes them (stap_engine_options.input)
 * and recordings hold them: complex64, or (i, q) pairs of signed 8-, 16- or 32-bit
 * integers (an interleaved iq axis, or a packed {r, i} / {real, imag} compound), either
 * byte order. An integer component v is the sample (float)v, or (float)((double)v * scale)
 * with a scale other than 0 and 1 — the conversion every path of the library makes, so
 * that a cube gives the same result bit for bit whichever converts it. */
typedef enum stap_sample_type {
    STAP_SAMPLES_CF32 = 0, /* float32 (re, im) pairs in the machine's byte order: 8 bytes */
    STAP_SAMPLES_CI8 = 1,  /* int8 (i, q): 2 bytes                                         */
    STAP_SAMPLES_CI16 = 2, /* int16 (i, q): 4 bytes                                        */
    STAP_SAMPLES_CI32 = 3  /* int32 (i, q): 8 bytes                                        */
} stap_sample_type;

typedef struct stap_sample_format {
    stap_sample_type type;
    int big_endian;        /* integer components stored big-endian (else little)        */
    double scale;          /* integers: the factor (0 or 1: none; else finite, > 0)      */
    stap_layout order;     /* the stored order of the cube's three axes, slowest first
                              ({0, 0, 0}, as zeroed: channel, pulse, range). The GPU
                              engine reads any order as it converts (no host transpose) */
} stap_sample_format;

/* Bytes of one stored sample (8, 2, 4, 8), or 0 for an unknown type. */
size_t stap_sample_bytes(const stap_sample_format *f);
/* STAP_OK, or STAP_EINVAL naming what is wrong (type, byte order of complex64, scale). */
int stap_sample_format_validate(const stap_sample_format *f, stap_error *err);
/* "complex64", "int16 (i, q), scale 0.001", "int16 big-endian (i, q)": for reports. */
void stap_sample_format_describe(const stap_sample_format *f, char *buf, size_t len);
/* n samples stored as f says (src) to complex64 (dst), in the order they are stored (f's
 * order is not applied): the conversion of the engine's GPU kernels and of the readers,
 * bit for bit. */
void stap_samples_to_cf32(const stap_sample_format *f, const void *src, size_t n,
                          stap_cf32 *dst);
/* A C x P x R cube stored as f says (any order) to complex64 (channel, pulse, range). */
void stap_cube_to_cf32(const stap_sample_format *f, const void *src, int channels, int pulses,
                       int range_gates, stap_cf32 *dst);
/* 1 when f's cube is complex64 in (channel, pulse, range) order: what the engine computes
 * from, with no conversion. */
int stap_sample_format_is_native(const stap_sample_format *f);

/* n complex64 samples (src) stored as f says (dst): each component v / scale (scale 0: 1)
 * rounded to the nearest integer, ties to even, and clamped to the type's range. Returns
 * how many components were clamped (0 for complex64, copied as they are). */
size_t stap_samples_from_cf32(const stap_sample_format *f, const stap_cf32 *src, size_t n,
                              void *dst);
/* "cf32", "ci8", "ci16", "ci32" (SigMF's names; little-endian, unscaled) into f. */
int stap_sample_type_parse(const char *s, stap_sample_format *f, stap_error *err);

/* One detection of the CFAR or adaptive detector (cfar.h), as written to /detections. */
typedef struct stap_detection {
    int beam, doppler_bin, range_cell;
    float power;     /* |y|^2 in the cell under test                              */
    float snr_db;    /* power over the CFAR noise estimate, in dB; the adaptive
                        detectors: the AMF statistic |v^H Rhat^-1 x|^2 / (v^H Rhat^-1 v),
                        the estimated output SINR, in dB                           */
    float statistic; /* the detector's test statistic in the cell: CFAR |y|^2 / Z
                        (Z the window statistic), AMF, Kelly or ACE (cfar.h)       */
    float threshold; /* the threshold it exceeded: CFAR alpha[n], the adaptive
                        detectors' threshold for the requested pfa             */
} stap_detection;

/* Stage timing, milliseconds: copy_in / copy_out are host<->device copies (0 on the CPU);
 * training is 0 where the QR kernel gathers its rows itself (GPU). */
enum { STAP_STAGE_COPY_IN = 0, STAP_STAGE_DOPPLER, STAP_STAGE_TRAINING, STAP_STAGE_QR,
       STAP_STAGE_WEIGHTS, STAP_STAGE_APPLY, STAP_STAGE_DETECT, STAP_STAGE_COPY_OUT,
       STAP_STAGE_COUNT };
extern const char *const stap_stage_names[STAP_STAGE_COUNT];

/* The one-CPI convenience on top of the engine (engine.h): one slot, weights and output
 * kept, no detection stage. Not a second engine: one stap_engine and a submit and collect
 * per stap_plan_execute (stap/engine/pipeline.c), for a caller of one CPI. */
typedef struct stap_plan stap_plan;

/* Create a plan: validates cfg (copied) and creates the engine of its backend.
 * steering: nbeams x steering_len row-major (steering_len must be N = C*Q), or NULL for
 * the default beams (cfg->beams). */
int stap_plan_create(stap_plan **plan, const stap_config *cfg, const stap_cf32 *steering,
                     int nbeams, int steering_len, stap_error *err);
void stap_plan_destroy(stap_plan *plan);
const stap_config *stap_plan_config(const stap_plan *plan);
int stap_plan_beams(const stap_plan *plan);
const stap_cf32 *stap_plan_steering(const stap_plan *plan);   /* B x N */
stap_backend stap_plan_backend(const stap_plan *plan);      /* resolved backend */

/* Sizes of the outputs, in complex elements. */
size_t stap_weights_len(const stap_plan *plan); /* D * S * B * N */
size_t stap_output_len(const stap_plan *plan);  /* B * D * R     */

/* Run one CPI. cube: C x P x R row-major. weights: D x S x B x N; output: B x D x R
 * (y = w^H s). timing_ms[STAP_STAGE_COUNT] may be NULL. Non-finite input samples are
 * rejected (STAP_EFORMAT) naming the first offending index. */
int stap_plan_execute(stap_plan *plan, const stap_cf32 *cube, stap_cf32 *weights, stap_cf32 *output,
                      double *timing_ms, stap_error *err);

/* The Doppler cube of the last CPI, C x D x R (for tests and tools; sub-CPI algorithms:
 * the staggered cube of pulse 0, stap_engine_doppler). */
const stap_cf32 *stap_plan_doppler(stap_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
