/* rtk_model.h: the predictive performance model of the batched QR kernels (issue 11
 * item 5, after the RT_STAP seed paper's model): a few device parameters, fitted from
 * timings of the kernel variants on the GPU (tests/tools/fit_qr_model.c), predict each
 * variant's time from its geometry, its occupancy and (m, n, batch, beams). Plain C with
 * no CUDA types: the dispatch (kernels/qr_model.cu) and the fitting tool share it.
 *
 * Register variants (kernels/qr_reg.cuh), per block and per column step j < n-1:
 *   chain   L_j = l0 + l_row*RPT + l_upd*RPT*A_j + spill*local_bytes
 *                 (the owner warp's dependent reflector chain, ~RPT rows a lane, then its
 *                 own share of the update: A_j active column slots of CPT; spills)
 *   shuffle H   = u_shfl * c * warps * log2(TR) * 2 * CPT
 *                 (the update's butterflies run over every slot, and the SM's shuffle
 *                 unit is shared by the warps of all c resident blocks)
 *   step    t_j = (L_j^s + H^s)^(1/s)   (s fitted: s = 1 is a plain sum)
 * block:  T_b(c) = sum_j t_j + io0 + io_elem*c*m*n*MATS + weights
 *   weights (fused): w0 + w_lane*n*NCAP*passes (NCAP <= 16, a beam per lane)
 *                    or w0 + w_warp*n*passes (the blocked substitutions, 16 beams a pass:
 *                    phases and rows a thread both grow with n); with a solver warp
 *                    (facts.solver) less RTK_SOLVER_PASS_SAVED*w_warp*n, plus
 *                    RTK_SOLVER_FEED_CYCLES*n
 * batch:  k blocks on the busiest SM, r resident at most (occupancy), c = min(k, r):
 *         T = launch + floor(k/c) T_b(c) + T_b(k mod c)
 * Shared- and global-memory rows (one 512-thread block per matrix):
 *         T_b = m0 + sum_j (m_col + m_elem*(m-j)*(n-j)) per storage kind.
 * Cluster rows (one matrix over P CTAs, each a register tile of TR*RPT rows): a CTA's
 *         block time as a register row's at c = 1 with its tile's rows, plus per column
 *         step cl_col + cl_cta*P when P > 1 (the exchanges of partial sums: the owner's two
 *         hops and the trailing dots' DSMEM messages, P/2 a column and CTA; a one-CTA
 *         cluster exchanges nothing), and cl_warp*warps at every P: an empirical cost a
 *         warp and column that the register terms miss in the cluster code (the one-CTA
 *         cluster rows were under-predicted by 10-24 % without it, and at 192x30 x 2336 the
 *         16-warp tile took 1.8x the 11-warp tile's time for the same rows; its cause is not
 *         profiled);
 *         the batch runs in waves of the clusters the device holds at once (facts.sms).
 * Cycles are at the device's maximum SM clock; the result is in microseconds. */
#ifndef RTK_MODEL_H
#define RTK_MODEL_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RTK_MODEL_NPARAM = 19 };

/* The parameters, in cycles (launch in microseconds), in this order. */
typedef struct rtk_qr_model {
    double l0, l_row, l_upd, spill;                /* chain                         */
    double u_shfl, soft;                           /* shuffles; soft-max exponent   */
    double io0, io_elem;                           /* load and store                */
    double w0, w_lane, w_warp;                     /* fused weights                 */
    double launch;                                 /* microseconds                  */
    double smem_col, smem_elem, glob_col, glob_elem; /* RTK_SHARED / RTK_GLOBAL rows */
    double cl_col, cl_cta, cl_warp;                /* RTK_CLUSTER rows              */
} rtk_qr_model;

/* What the model needs to know of a variant and the device. */
typedef struct rtk_qr_facts {
    int storage;                      /* rtk_storage                               */
    int tr, tc, rpt, cpt, mats, nt;   /* geometry (nt = threads per matrix)        */
    int blocks_per_sm, local_bytes;   /* occupancy and spills of the kernel timed  */
    int sms;                          /* streaming multiprocessors (RTK_CLUSTER: the
                                         clusters resident at once)                */
    double clock_mhz;                 /* maximum SM clock                          */
    int solver;                       /* fused with a solver warp (FLOW & 2048, n > 16):
                                         the first pass's forward half runs during the
                                         factorization (docs/kernels/journal.md "A solver warp") */
} rtk_qr_facts;

/* The solver warp's terms (not fitted by fit_qr_model: its logs predate the solver warp;
 * measured at 240x66 x 128 and 200x50 x 128, H100, 2026-11-26, qr_bounds --fused): the first
 * pass's blocked solve loses this share of its w_warp*n (the forward half, less what the
 * solver warp still leaves at the end), and every column costs the factorization this many
 * cycles (the owners' store of R's column and its barrier, the extra warp). */
#define RTK_SOLVER_PASS_SAVED 0.35
#define RTK_SOLVER_FEED_CYCLES 70.0

/* Fitted on NVIDIA H100 80GB HBM3 (132 SMs, 1980 MHz), every parameter at once, to every
 * timing of tests/data (2026-11-26: qr_model_h100_fit.log, _cluster.log and _check.log, the
 * code of bdca72e: 592 variant rows, 866 predictions; `fit_qr_model` over the three logs).
 * Earlier fits were piecewise (the register terms on the calibration set, the cluster and
 * the weights terms alone afterwards), because a full refit picked worse; with cl_warp it
 * picks the same variant as those parameters at every logged shape. Out of sample: a
 * leave-one-shape-out cross-validation (`fit_qr_model --cv`, docs/kernels/journal.md "The model,
 * one fit") predicts 854 of 866 timings within 25 % and picks within 10 % of the fastest in
 * 121 of 124 cases (the form without cl_warp: 110 of 124). The fit drives l0 to zero and s
 * towards a geometric mean of chain and shuffle load: the form written for the barrier
 * kernels describes the dataflow ones as an empirical power law.
 * Other devices use the same cycle counts with their own SM count, clock and occupancy. */
static const rtk_qr_model rtk_qr_model_h100 = {
    /* l0, l_row, l_upd, spill */ 9.758e-39, 0.3356, 0.2185, 0.08293,
    /* u_shfl, soft */ 5.303e-05, 0.08651,
    /* io0, io_elem */ 6495, 1.234,
    /* w0, w_lane, w_warp */ 6133, 21.92, 318.4,
    /* launch */ 3.87,
    /* smem_col, smem_elem, glob_col, glob_elem */ 1931, 0.588, 1893, 0.6946,
    /* cl_col, cl_cta, cl_warp */ 2282, 138.4, 25.73,
};

static inline double rtk_model_block(const rtk_qr_model *p, const rtk_qr_facts *f, int m, int n,
                                     int nbeams, int c)
{
    int P = 1;
    if (f->storage == 3) { /* a cluster: one CTA's rows, the exchanges below */
        const int tile = f->tr * f->rpt;
        P = (m + tile - 1) / tile;
        m = m < tile ? m : tile;
    }
    if (f->storage == 1 || f->storage == 2) { /* shared or global memory: one block per matrix */
        const double col = f->storage == 1 ? p->smem_col : p->glob_col;
        const double elem = f->storage == 1 ? p->smem_elem : p->glob_elem;
        double t = p->io0;
        for (int j = 0; j < n; j++) t += col + elem * (double)(m - j) * (double)(n - j) * c;
        return t;
    }
    const int warps = f->nt * f->mats / 32;
    const double chain = p->l0 + p->l_row * f->rpt + p->spill * f->local_bytes;
    /* the update's butterflies shuffle every slot (SM-wide shuffle throughput) */
    const double sh = p->u_shfl * c * warps * log2((double)f->tr) * 2.0 * f->cpt;
    double t = p->io0 + p->io_elem * (double)c * m * n * f->mats;
    for (int j = 0; j + 1 < n; j++) {
        const int left = n - j - 2; /* columns right of j+1 */
        int act = (left + f->tc - 1) / f->tc;
        if (act > f->cpt) act = f->cpt;
        const double ch = chain + p->l_upd * f->rpt * act; /* + the owner warp's own update */
        t += pow(pow(ch, p->soft) + pow(sh, p->soft), 1.0 / p->soft);
        if (f->storage == 3 && P > 1) t += p->cl_col + p->cl_cta * P; /* one CTA sends nothing */
        if (f->storage == 3) t += p->cl_warp * warps; /* every warp's exchange overhead */
    }
    if (nbeams > 0) {
        const int ncap = f->tc * f->cpt;
        if (ncap <= 16) {
            const int passes = (nbeams + f->nt - 1) / f->nt;
            t += p->w0 + p->w_lane * (double)n * ncap * passes;
        } else { /* blocked substitutions, 16 beams a pass (rtk_device.cuh) */
            const int passes = (nbeams + 15) / 16;
            t += p->w0 + p->w_warp * (double)n * passes;
            if (f->solver) t += -RTK_SOLVER_PASS_SAVED * p->w_warp * n + RTK_SOLVER_FEED_CYCLES * n;
        }
    }
    return t;
}

/* Predicted time in microseconds of `batch` m x n factorizations (+ nbeams fused weight
 * solves when nbeams > 0) with the variant described by f. */
static inline double rtk_model_predict(const rtk_qr_model *p, const rtk_qr_facts *f, int m, int n,
                                       int batch, int nbeams)
{
    const int mats = f->mats > 0 ? f->mats : 1;
    const long long blocks = (batch + mats - 1) / mats;
    const long long k = (blocks + f->sms - 1) / f->sms;
    const int r = f->blocks_per_sm > 0 ? f->blocks_per_sm : 1;
    const int c = k < r ? (int)k : r;
    const long long full = k / c;
    const int rest = (int)(k % c);
    double cyc = (double)full * rtk_model_block(p, f, m, n, nbeams, c);
    if (rest) cyc += rtk_model_block(p, f, m, n, nbeams, rest);
    return p->launch + cyc / f->clock_mhz;
}

/* QR alone, then the weight kernel (kernels/weights.cu), against a fused kernel: the
 * dispatch of QR + weights compares both (docs/kernels/journal.md "Fused or not"). Where a fused
 * kernel spills (the 320-row flw16x22_20x3 with its solver: 1 040 bytes) or is oversized for
 * the shape, QR alone + the weight kernel measured 10-59 % faster. The weight kernel: one
 * block a matrix, R staged in shared memory, a warp per NB beams (rtk_weights_launch_shape).
 * With k = ceil(batch / SMs) blocks on the busiest SM and r resident at once:
 *     T = launch + ceil(k / min(k, r)) (wave + wave_n n) + k (blk_n n passes + blk_n2 n^2)
 * (a wave's latency; then every block's substitutions and its staging of R, which share
 * the SM's issue and shared-memory bandwidth). When the training rows must be gathered
 * into matrices first (the engine; a fused gathering kernel reads them from the Doppler
 * cube itself): T_gather = tr_launch + tr_elem m n batch. */
typedef struct rtk_weights_model {
    double launch, wave, wave_n, blk_n, blk_n2; /* us; cycles                          */
    double tr_launch, tr_elem;                  /* us; us per 10^6 gathered elements   */
} rtk_weights_model;

/* Fitted on the H100 (1980 MHz, 132 SMs): the weight kernel's five parameters by weighted
 * least squares to 92 shapes' (QR + weights) - QR of the non-fusing rows (clp, smem512,
 * global512) in tests/bench/data/qr_model_h100_*.log, 16 beams (`fit_qr_model --separate`: 91 of
 * 92 within 15 %, the worst -28.6 %); the gather's two to `rtstap bench`'s training stage of
 * the cublas backend at the six presets (`fit_qr_model --gather tests/bench/data/gather_h100.txt`:
 * within 2.5 %; 2026-11-26, 40ca649). */
static const rtk_weights_model rtk_weights_model_h100 = {
    /* launch, wave, wave_n, blk_n, blk_n2 */ 2.871, 5264, 293.0, 89.35, 2.104,
    /* tr_launch, tr_elem */ 3.704, 9.196,
};

/* The weight kernel's launch (kernels/weights.cu follows it): the solver's capacity NC, NB
 * beams a warp, threads, dynamic shared memory and whether R is staged. */
typedef struct rtk_weights_shape {
    int nc, nb, threads, staged;
    long long smem;
} rtk_weights_shape;

static inline rtk_weights_shape rtk_weights_launch_shape(int n, int nbeams)
{
    rtk_weights_shape w;
    w.nc = n <= 32 ? 32 : n <= 64 ? 64 : n <= 96 ? 96 : n <= 128 ? 128 : n <= 256 ? 256 : 512;
    const int rr = (w.nc + 31) / 32;
    w.nb = rr == 1 ? 4 : (rr <= 4 ? 2 : 1);
    int warps = (nbeams + w.nb - 1) / w.nb;
    warps = warps < 1 ? 1 : warps > 8 ? 8 : warps;
    w.threads = 32 * warps;
    const long long staged_bytes = ((long long)n * (n | 1) + n + 1) * 8;
    w.staged = w.nc <= 256 && staged_bytes <= 160 * 1024; /* NC = 512 reads R in place */
    w.smem = w.staged ? staged_bytes : ((long long)n + 1) * 8;
    return w;
}

/* Resident weight-kernel blocks an H100 SM holds (2 048 threads, 32 blocks; 233 472 bytes of
 * shared memory, allocated in 128-byte units with 1 024 reserved a block; 65 536 registers
 * in four 16 384-register quarters, a warp's share rounded up to 256), with the registers a
 * thread ptxas gave each NC at 40ca649 (CUDA 13.0, sm_90). For the fit, which has no device;
 * the dispatch asks the device (rtk_weights_occupancy), and test_gpu_weights checks that
 * the two agree. */
static inline int rtk_weights_blocks_per_sm_h100(int n, int nbeams)
{
    const rtk_weights_shape w = rtk_weights_launch_shape(n, nbeams);
    const int regs = w.nc == 32 ? 53 : w.nc == 64 ? 40 : w.nc == 96 ? 46 : w.nc == 128 ? 58
                   : w.nc == 256 ? 56 : 89;
    const int warps = w.threads / 32, per_warp = (regs * 32 + 255) / 256 * 256;
    int r = 2048 / w.threads;
    if (r > 32) r = 32;
    const int by_smem = (int)(233472 / ((w.smem + 127) / 128 * 128 + 1024));
    const int by_regs = 4 * (16384 / per_warp) / warps;
    if (by_smem < r) r = by_smem;
    if (by_regs < r) r = by_regs;
    return r;
}

/* Predicted microseconds of the weight kernel for `batch` factors of order n and nbeams
 * beams, r = its resident blocks an SM (passes: the beams a warp takes in turn beyond NB;
 * the fit saw 16 beams, one pass, only). */
static inline double rtk_model_weights(const rtk_weights_model *p, int n, int batch, int nbeams,
                                       int r, int sms, double clock_mhz)
{
    const rtk_weights_shape w = rtk_weights_launch_shape(n, nbeams);
    const long long k = (batch + sms - 1) / sms;
    const long long c = k < r ? k : (r > 0 ? r : 1);
    const long long waves = (k + c - 1) / c;
    const int passes = (nbeams + w.nb * (w.threads / 32) - 1) / (w.nb * (w.threads / 32));
    const double cyc = (double)waves * (p->wave + p->wave_n * n) +
                       (double)k * (p->blk_n * n * passes + p->blk_n2 * (double)n * n);
    return p->launch + cyc / clock_mhz;
}

/* Predicted microseconds of gathering `batch` m x n training matrices (rtk_training_launch) */
static inline double rtk_model_gather(const rtk_weights_model *p, int m, int n, int batch)
{
    return p->tr_launch + p->tr_elem * 1e-6 * (double)m * n * batch;
}

#ifdef __cplusplus
}
#endif

#endif
