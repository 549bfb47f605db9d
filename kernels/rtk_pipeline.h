/* rtk_pipeline: the CUDA kernels of a whole CPI around the QR (kernels/pipeline.cu,
 * pipeline_doppler.cu, pipeline_apply.cu, cfar.cu) behind a plain C API — window and layout for the Doppler FFT, the
 * training-matrix gather, the weight application y = w^H s, CFAR along range and the
 * per-CPI status block. Sizes, device pointers and streams only (void* for cudaStream_t);
 * launch functions return a cudaError_t value (0 = success), never print, never
 * synchronize. The processing contract they follow is docs/processing.md. */
#ifndef RTK_PIPELINE_H
#define RTK_PIPELINE_H

#include "rtk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the device reports about one CPI, copied back with its results. The engine
 * resets it (rtk_status_reset_launch) before each CPI. */
typedef struct rtk_cpi_status {
    unsigned long long bad_input;  /* lowest flat index (c*P + p)*R + r of a non-finite
                                      input sample; RTK_NO_INDEX when none           */
    unsigned long long bad_weight; /* lowest flat index of a non-finite weight        */
    rtk_factor_flags factor;       /* singular factors and the worst diagonal ratio
                                      min|R_ii| / max|R_ii| of the batch (rtk.h)      */
    unsigned int detections;       /* CFAR hits (may exceed the list's capacity)      */
    unsigned long long phase[3];   /* fused QR kernel: block 0's %globaltimer at start,
                                      QR done, weights done (0 when not fused)        */
} rtk_cpi_status;

#define RTK_NO_INDEX 0xffffffffffffffffULL

int rtk_status_reset_launch(rtk_cpi_status *status, void *stream);

/* How the input cube's samples are stored (stap_sample_format, engine.h): complex64, or
 * (i, q) pairs of signed 8-, 16- or 32-bit integers, either byte order. An integer
 * component v becomes (float)v, or (float)((double)v * scale) when scaled — as the host's
 * conversions give it, bit for bit. */
typedef struct rtk_samples {
    int type;        /* 0 complex64, 1 int8, 2 int16, 3 int32 pairs             */
    int big_endian;  /* integer components stored big-endian                    */
    int scaled;      /* multiply by scale (in double, then round to float)      */
    double scale;
    long long stride[3]; /* samples between neighbours along channel, pulse,
                            range as stored (any order: read transposed)        */
    int P, R;        /* the cube's pulses and range gates                       */
} rtk_samples;

/* Contract step 1, before the FFT: X[p][c][r] = win[p] * x[c][p][r] for p < P and 0 for
 * P <= p < D (zero padding). x: C x P x R samples as fmt says (NULL: complex64), converted
 * as they are read; X: D x C x R (the layout the D-point FFTs along the first axis, the
 * gather and the apply kernel read). A non-finite sample lowers status->bad_input. */
int rtk_doppler_load_launch(const void *x, const rtk_samples *fmt, const float *win, int C,
                            int P, int R, int D, void *X, rtk_cpi_status *status,
                            void *stream);
/* Contract steps 1 and 2 in one kernel: X[d][c][r] = sum_{p < P} win[p] x[c][p][r]
 * exp(-2 pi i d p / D) (cuFFT's forward transform of what rtk_doppler_load_launch writes),
 * each sample read once and X written once. Only where rtk_doppler_fft_fits(C, P, D): D a
 * power of two, 2 <= D <= 4096, P <= D, C <= 65535. A non-finite sample lowers status->bad_input.
 * D = 128 runs with the transforms in registers (15.2 us against 20.1 for the load kernel
 * and cuFFT at the hard preset: the engine's default there); other D in shared memory,
 * measured no faster than the load kernel and cuFFT (kernels/journal.md), so the engine
 * runs those only with RTSTAP_DOPPLER_FUSED=1. tile: D = 128's range cells a block, 0 (the
 * default, 16) or 32 (the earlier blocks, for comparisons); ignored for other D. */
int rtk_doppler_fft_fits(int C, int P, int D);
int rtk_doppler_fft_launch(const void *x, const rtk_samples *fmt, const float *win, int C,
                           int P, int R, int D, int tile, void *X, rtk_cpi_status *status,
                           void *stream);
/* n = C x P x R samples stored as fmt says, to complex64 (y, channel, pulse, range); a
 * non-finite result lowers status->bad_input (the sample's index in (channel, pulse, range)). */
int rtk_samples_convert_launch(const void *x, const rtk_samples *fmt, long long n, void *y,
                               rtk_cpi_status *status, void *stream);

/* Contract step 8: Y[b][d][r] = sum_j conj(W[((d*S + s)*B + b)*N + j]) * snapshot_j(d, r),
 * s = r / L (g describes X, C, Q, D, R, S, L as for the gather; N = C*Q). For 16 < N <= 512
 * a GEMM per bin and segment on the tensor cores (mma.sync TF32 with 3xTF32 splitting:
 * FP32-accurate products, each k step's sum added in FP32; kernels/pipeline_apply.cu
 * apply_mma_kernel); otherwise the row kernel below. A non-finite weight lowers
 * status->bad_weight. */
int rtk_apply_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                     rtk_cpi_status *status, void *stream);
/* The same with the FP32 register-tiled GEMM for N > 16 (the sum over j = c*Q + q in order;
 * the default before the tensor-core kernel, kept for comparisons: RTSTAP_APPLY_FP32=1). */
int rtk_apply_fp32_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                          rtk_cpi_status *status, void *stream);
/* The kernel each launcher runs for g, in words: which 0 rtk_apply_launch, 1
 * rtk_apply_fp32_launch, 2 rtk_apply_rows_launch (the first two fall back to the row
 * kernel for N <= 16, N > 512 or a cube beyond 2^31 elements). A static string. */
const char *rtk_apply_describe(const rtk_gather *g, int which);
/* The same with the earlier kernel (a thread per cell and 4 beams, the snapshot read from
 * the cube per warp; the sums over q, then c): kept for comparisons (RTSTAP_APPLY_ROWS=1). */
int rtk_apply_rows_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                          rtk_cpi_status *status, void *stream);
/* For the weight application as GEMMs (cuBLAS): Wc[((k*Q + q)*B + b)*C + c] =
 * conj(W[(k*B + b)*N + c*Q + q]), k = d*S + s (one C x B column-major block per batch
 * item and tap); a non-finite weight lowers status->bad_weight. */
int rtk_weights_by_tap_launch(const void *W, int batch, int beams, int channels, int order,
                              void *Wc, rtk_cpi_status *status, void *stream);

/* ---- JDL (joint-domain localized, docs/processing.md) ----------------------
 * A: B x Na x C, beam b's C x Na transform column-major (column j at A + (b*Na + j)*C).
 * Beamspace cubes, one per beam in the gather's layout (bins x Na x range):
 * Xb[((b*D + d)*Na + j)*R + r] = sum_c conj(A[(b*Na + j)*C + c]) X[(d*C + c)*R + r]. */
int rtk_beamspace_launch(const void *X, int C, int D, int R, const void *A, int B, int Na,
                         void *Xb, void *stream);
/* Element-space weights from beamspace ones (Wt: B x batch x Na*Q):
 * W[(k*B + b)*N + c*Q + q] = sum_j A[(b*Na + j)*C + c] Wt[(b*batch + k)*Na*Q + j*Q + q],
 * N = C*Q. */
int rtk_jdl_expand_launch(const void *Wt, const void *A, int batch, int B, int C, int Q,
                          int Na, void *W, void *stream);

/* ---- pre-Doppler and ADPCA (sub-CPIs of Q pulses, docs/processing.md) -------
 * Xs (D x C*Q x R, the layout of a C*Q-channel Doppler cube before its FFT):
 * Xs[d][c*Q + q][r] = u[d] x[c][d + q][r] for d < P - Q + 1, 0 for the rest (zero padding);
 * u: P - Q + 1 window coefficients. A non-finite sample lowers status->bad_input. */
int rtk_subcpi_load_launch(const void *x, const float *u, int C, int P, int R, int D, int Q,
                           void *Xs, rtk_cpi_status *status, void *stream);
/* Training matrices from the time-domain cube x (C x P x R): T_s = T + s*m*n (m x n,
 * column-major, n = C*Q), row i < K, column c*Q + q: conj(x[c][q][cells[s*K + i]]); with
 * m = K + n the loading rows load * I. */
int rtk_subcpi_training_launch(const void *x, const int *cells, int C, int P, int R, int Q,
                               int S, int K, float load, int m, void *T, void *stream);

/* ---- CFAR on |y|^2 (the detectors of rtstap/cfar.h, same arithmetic) ------------------ */
typedef struct rtk_cfar_hit {
    unsigned long long flat; /* (b*D + d)*R + r                                          */
    double z;                /* the window statistic (CA/CA2D mean, OS order statistic,
                                GO/SO larger/smaller side mean)                          */
    double power;            /* |y|^2 of the cell under test                             */
} rtk_cfar_hit;

/* Per line of R cells (lines = B*D): prefix[line*(R+1) + r] = the sum of |y|^2 over cells
 * 0..r-1 in double, in a fixed blocked order (so that the CPU detector, stap/detect/cfar.c, can
 * follow it exactly): cells in blocks of 32; within a block a running sum from 0, left to
 * right; block offsets chained left to right (off_0 = 0, off_{i+1} = off_i + sum of block
 * i); prefix[32 i + j + 1] = off_i + (running sum of block i through cell j). Every kind
 * but OS needs it. */
int rtk_cfar_prefix_launch(const void *y, long long lines, int R, double *prefix, void *stream);

/* The detector kinds (the values of rtstap/cfar.h's stap_cfar_kind) and the window. */
enum { RTK_CFAR_CA = 1, RTK_CFAR_OS = 2, RTK_CFAR_GO = 3, RTK_CFAR_SO = 4, RTK_CFAR_CA2D = 5 };
typedef struct rtk_cfar_window {
    int kind;                         /* RTK_CFAR_*                                      */
    int guard, train;                 /* range cells each side of the cell under test    */
    int guard_doppler, train_doppler; /* CA2D: Doppler bins each side (circular)         */
    int bins;                         /* CA2D: Doppler bins D of a beam (line = b*D + d) */
} rtk_cfar_window;

/* Test every cell r of every line against alpha[n] * z, n the window's cell count
 * (training cells [lo0, hi0) and [lo1, hi1) as in stap_cfar_window; CA2D:
 * n = 2 train_doppler (hi1 - lo0) + (2 guard_doppler + 1) n1, n1 = (hi0-lo0) + (hi1-lo1)):
 *   CA: z = ((prefix[hi0]-prefix[lo0]) + (prefix[hi1]-prefix[lo1])) / n;
 *   OS: z = the rank[n]-th smallest power of the window;
 *   GO/SO, n = 2 train: z = max/min(prefix[hi0]-prefix[lo0], prefix[hi1]-prefix[lo1]) /
 *       train; n < 2 train (edges): as CA;
 *   CA2D: s = 0, then for o = -(guard_doppler + train_doppler) .. +(...) in order, on the
 *       line of bin (d + o) mod D of the same beam: s += the CA window sum for |o| <=
 *       guard_doppler, s += prefix[hi1] - prefix[lo0] otherwise; z = s / n.
 * A detection when power > alpha[n] * z. Hits go to hits[slot] for slot < capacity, in no
 * particular order; status->detections counts all of them. alpha, rank: device tables
 * indexed by n (stap_cfar_table_len entries). prefix: from rtk_cfar_prefix_launch (unused
 * for OS). */
/* CA, GO and SO in one pass (no prefix array, y read once): whether it takes R range cells
 * (its shared memory), and the launch — the same hits as prefix + test. threads_per_line:
 * 32, 64 or 128 (0: the default, 128); other values are invalid. */
int rtk_cfar_line_fits(int kind, int R);
int rtk_cfar_line_launch(const void *y, long long lines, int R, const rtk_cfar_window *w,
                         const double *alpha, rtk_cfar_hit *hits, unsigned int capacity,
                         int threads_per_line, rtk_cpi_status *status, void *stream);
int rtk_cfar_test_launch(const void *y, const double *prefix, long long lines, int R,
                         const rtk_cfar_window *w, const double *alpha, const int *rank,
                         rtk_cfar_hit *hits, unsigned int capacity, rtk_cpi_status *status,
                         void *stream);
/* The weight application fused with the CA/GO/SO detector, when only detections are kept:
 * the hits of rtk_apply_launch followed by rtk_cfar_line_launch on its Y (the same y bit for
 * bit, the same doubles), without Y in global memory. It takes one segment (S = 1, L = R),
 * R <= 512 and 16 < N <= 512 (rtk_apply_cfar_fits); a block a bin and 16 beams. A
 * non-finite weight lowers status->bad_weight as rtk_apply_launch does. */
int rtk_apply_cfar_fits(const rtk_gather *g, int kind);
int rtk_apply_cfar_launch(const rtk_gather *g, int beams, const void *W, const rtk_cfar_window *w,
                          const double *alpha, rtk_cfar_hit *hits, unsigned int capacity,
                          rtk_cpi_status *status, void *stream);

/* ---- the adaptive detectors (AMF, Kelly's GLRT, ACE: rtstap/cfar.h) -------------------- */
typedef struct rtk_detect_hit {
    unsigned long long flat; /* (b*D + d)*R + r                                          */
    double statistic;        /* the detector's statistic in the cell                     */
    float power;             /* |y|^2 of the output cell (in double, rounded)            */
    float ka;                /* K a = the AMF statistic (the estimated output SINR)      */
} rtk_detect_hit;

/* What one launch tests: `mats` training matrices k = d'*S + s (S = g->segments, d' a bin
 * of the gather g, which describes the snapshots as it does the training rows: cell r of
 * matrix k is x[j] = X[bin tap(d', j)][j / Q][r], j = c*Q + q < n = channels * order, for
 * the cells r of segment s), each with its factor R_k (upper n x n of R + k*rstride,
 * leading dimension ldr, column-major: S_k = R_k^H R_k) and the steering vectors of its
 * beam group group = d' / out_bins: nbeams vectors V + group*vgroup + b*vld (n each).
 * Output cell of beam b: flat ((beam0 + group + b)*out_bins + d' % out_bins)*range + r;
 * element space tests every beam (group 0, beam0 0); JDL each beam in its beamspace (one
 * beam a group, the groups stacked as g's bins, or one launch per beam with beam0). */
typedef struct rtk_adaptive {
    int kind;        /* 6 AMF, 7 Kelly, 8 ACE (stap_cfar_kind's values)               */
    int K;           /* training snapshots                                            */
    double eta;      /* the threshold: statistic > eta detects                        */
    int n, mats;
    const void *R;
    int ldr;
    long long rstride;
    const void *V;
    int vld, nbeams;
    long long vgroup;
    int out_bins, beam0;
    const void *Y;   /* the output (beams x out_bins x range): the hits' power           */
} rtk_adaptive;

/* The block size the detector kernel runs n DOF and nbeams beams with (R, the beams' zv
 * and a tile of one column of n per thread in shared memory): 128, 64 or 32, or 0 when even
 * 32 threads do not fit smem_limit bytes (cudaDevAttrMaxSharedMemoryPerBlockOptin). */
int rtk_adaptive_detect_threads(int n, int nbeams, int smem_limit);
/* Every cell's statistic (the forward substitutions in FP32; a, b and the statistic in
 * double); hits above the threshold are appended to hits (atomic count in
 * status->detections, which may exceed capacity) in no particular order. */
int rtk_adaptive_detect_launch(const rtk_gather *g, const rtk_adaptive *a, rtk_detect_hit *hits,
                               unsigned int capacity, rtk_cpi_status *status, void *stream);

#ifdef __cplusplus
}
#endif

#endif
