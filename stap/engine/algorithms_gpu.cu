/* algorithms_gpu.cu: each algorithm's GPU stages for the GPU engine (engine_gpu.cu) —
 * the training, QR and weight stages of contract steps 2-7 and the device tables they
 * read. The descriptors are stap/config/algorithms.c; the kernels are in kernels/. */
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine_gpu.h"

namespace {

/* ---- post-Doppler: the QR kernel gathers the training rows from the Doppler cube ---- */

/* The solvers factor by e->cfg.qr as asked: cuBLAS refused cholqr and cholqr2 at creation and
 * factors auto by Householder; on the gpu backend auto is cholqr where the fused cholqr kernel
 * takes the shape and was measured the faster (la_dev_weights_create). */
int doppler_slot(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    const stap_config *c = &e->cfg;
    RTK_TRY(la_dev_weights_create(&s->qr, c->backend, e->opt.qr_variant, &e->opt.tuning.la, c->qr, &s->g,
                                  e->M, e->N,
                                  e->batch, e->B, g->d_V, s->d_W, &s->d_status->factor,
                                  s->d_status->phase, s->stream, err));
    g->dev_bytes += la_dev_weights_device_bytes(s->qr);
    return STAP_OK;
}

int doppler_enqueue(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    return la_dev_weights_enqueue(s->qr, s->ev[STAP_STAGE_QR], s->ev[STAP_STAGE_WEIGHTS], err);
}

void doppler_describe(const stap_engine *e, const stap_gpu_engine *g, char *buf, size_t len)
{
    snprintf(buf, len, "%s", la_dev_weights_describe(g->slot[0].qr));
}

/* The detector's arguments common to every algorithm (adaptive.c's threshold, the output). */
rtk_adaptive adaptive_args(const stap_engine *e, const stap_gpu_engine *g, const stap_gpu_slot *s)
{
    rtk_adaptive a{};
    a.kind = (int)e->opt.cfar.kind;
    a.K = e->cfg.training;
    a.eta = g->eta;
    a.n = e->Nt;
    a.out_bins = e->cfg.doppler_bins;
    a.Y = s->d_Y;
    return a;
}

int factors_of(const la_dev_weights *w, rtk_adaptive *a, stap_error *err)
{
    if (!la_dev_weights_factors(w, &a->R, &a->ldr, &a->rstride))
        return stap_fail(err, STAP_EINVAL, "GPU engine: the weight solver kept no R factors");
    return STAP_OK;
}

int doppler_keep(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    return la_dev_weights_keep_factors(s->qr, err);
}

/* element space: matrix k = d*S + s tests every beam */
int doppler_detect(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, rtk_detect_hit *hits,
                   unsigned capacity, rtk_cpi_status *status, stap_error *err)
{
    rtk_adaptive a = adaptive_args(e, g, s);
    RTK_TRY(factors_of(s->qr, &a, err));
    a.mats = e->batch;
    a.V = g->d_V;
    a.vld = e->N;
    a.nbeams = e->B;
    LA_LAUNCH(rtk_adaptive_detect_launch(&s->g, &a, hits, capacity, status, s->stream));
    return STAP_OK;
}

/* ---- JDL: beamspace cubes, a QR and solve per beam (or one over the beams), expand ---- */

int jdl_create(stap_engine *e, stap_gpu_engine *g, stap_error *err)
{
    const stap_config *c = &e->cfg;
    const size_t na = (size_t)e->B * c->angle_bins * c->channels, nt = (size_t)e->B * e->Nt;
    RTK_TRY(stap_gpu_dalloc(g, &g->bs.d_A, sizeof(float2) * na, "JDL transforms", err));
    RTK_TRY(stap_gpu_dalloc(g, &g->bs.d_Vt, sizeof(float2) * nt, "JDL steering", err));
    LA_CU(cudaMemcpy(g->bs.d_A, e->tables.beamspace.A, sizeof(float2) * na, cudaMemcpyHostToDevice));
    LA_CU(cudaMemcpy(g->bs.d_Vt, e->tables.beamspace.Vt, sizeof(float2) * nt, cudaMemcpyHostToDevice));
    /* the same to float precision (the default beams' differ by rounding only) */
    double top = 0, diff = 0;
    const stap_cf32 *vt = e->tables.beamspace.Vt;
    for (int i = 0; i < e->Nt; i++) top = std::fmax(top, std::hypot(vt[i].re, vt[i].im));
    for (int b = 1; b < e->B; b++)
        for (int i = 0; i < e->Nt; i++) {
            const stap_cf32 x = vt[(size_t)b * e->Nt + i];
            diff = std::fmax(diff, std::hypot(x.re - vt[i].re, x.im - vt[i].im));
        }
    g->bs.shared = diff <= 1e-6 * top;
    return STAP_OK;
}

/* Solver b's gather (and the detector's snapshots): beam b's beamspace cube, Na "channels";
 * with shared steering one over every beam, the beams' cubes stacked as B groups of D bins
 * whose taps wrap within each group. */
rtk_gather jdl_gather(const stap_engine *e, const stap_gpu_engine *g, const stap_gpu_slot *s, int b)
{
    const size_t D = e->cfg.doppler_bins, R = e->cfg.range_gates;
    const int Na = e->cfg.angle_bins;
    rtk_gather gb = s->g;
    gb.X = s->bs.d_Xb + (size_t)b * D * Na * R;
    gb.channels = Na;
    if (g->bs.shared) {
        gb.bins = (int)(e->B * D);
        gb.wrap = (int)D;
    }
    return gb;
}

int jdl_slot(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    /* beam b: the gather reads its beamspace cube (Na "channels"), one steering vector */
    const stap_config *c = &e->cfg;
    const size_t D = c->doppler_bins, R = c->range_gates;
    const int Na = c->angle_bins;
    RTK_TRY(stap_gpu_dalloc(g, &s->bs.d_Xb, sizeof(float2) * e->B * D * Na * R,
                            "JDL beamspace cubes", err));
    RTK_TRY(stap_gpu_dalloc(g, &s->bs.d_Wt, sizeof(float2) * (size_t)e->B * e->batch * e->Nt,
                            "JDL beamspace weights", err));
    /* one launch over every beam's D*S problems when they share the beamspace
     * steering (the default beams: T_b^H v_b = sqrt(C) e_centre for every b), the
     * beams' cubes stacked as B groups of D bins whose taps wrap within each group */
    const int groups = g->bs.shared ? 1 : e->B;
    s->bs.jqr = (la_dev_weights **)calloc((size_t)groups, sizeof *s->bs.jqr);
    if (!s->bs.jqr) return stap_fail(err, STAP_ENOMEM, "out of memory for the JDL solvers");
    s->bs.njqr = groups;
    for (int b = 0; b < groups; b++) {
        const rtk_gather gb = jdl_gather(e, g, s, b);
        RTK_TRY(la_dev_weights_create(&s->bs.jqr[b], c->backend, e->opt.qr_variant, &e->opt.tuning.la, e->cfg.qr,
                                      &gb, e->M, e->Nt,
                                      e->batch * (g->bs.shared ? e->B : 1), 1,
                                      g->bs.d_Vt + (size_t)b * e->Nt,
                                      s->bs.d_Wt + (size_t)b * e->batch * e->Nt,
                                      &s->d_status->factor, nullptr, s->stream, err));
        g->dev_bytes += la_dev_weights_device_bytes(s->bs.jqr[b]);
    }
    return STAP_OK;
}

/* training = the beamspace transform, qr = every beam's QR and solves, weights = back to
 * element space */
int jdl_enqueue(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    const stap_config *c = &e->cfg;
    const int Na = c->angle_bins;
    cudaStream_t st = s->stream;
    LA_LAUNCH(rtk_beamspace_launch(s->d_X, c->channels, c->doppler_bins,
                                             c->range_gates, g->bs.d_A, e->B, Na, s->bs.d_Xb, st));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_QR], st));
    for (int b = 0; b < s->bs.njqr; b++)
        RTK_TRY(la_dev_weights_enqueue(s->bs.jqr[b], nullptr, nullptr, err));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_WEIGHTS], st));
    LA_LAUNCH(rtk_jdl_expand_launch(s->bs.d_Wt, g->bs.d_A, e->batch, e->B, c->channels,
                                              c->doppler_order, Na, s->d_W, st));
    return STAP_OK;
}

int jdl_keep(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    for (int b = 0; b < s->bs.njqr; b++) RTK_TRY(la_dev_weights_keep_factors(s->bs.jqr[b], err));
    return STAP_OK;
}

/* each beam in its beamspace: the solvers' matrices (all beams stacked as B groups of D bins,
 * or one solver a beam), the snapshots from the beamspace cubes as their gathers read them */
int jdl_detect(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, rtk_detect_hit *hits,
               unsigned capacity, rtk_cpi_status *status, stap_error *err)
{
    for (int b = 0; b < s->bs.njqr; b++) {
        rtk_adaptive a = adaptive_args(e, g, s);
        RTK_TRY(factors_of(s->bs.jqr[b], &a, err));
        const rtk_gather gb = jdl_gather(e, g, s, b);
        a.mats = e->batch * (g->bs.shared ? e->B : 1);
        a.V = g->bs.d_Vt + (size_t)b * e->Nt;
        a.vld = e->Nt;
        a.vgroup = e->Nt;
        a.nbeams = 1;
        a.beam0 = b;
        LA_LAUNCH(rtk_adaptive_detect_launch(&gb, &a, hits, capacity, status, s->stream));
    }
    return STAP_OK;
}

void jdl_describe(const stap_engine *e, const stap_gpu_engine *g, char *buf, size_t len)
{
    snprintf(buf, len, "JDL %d beams x %d bins: beamspace kernel, %s%s, expand kernel",
             e->cfg.angle_bins, e->cfg.doppler_order,
             g->bs.shared ? "one launch over the beams: " : "one launch per beam: ",
             la_dev_weights_describe(g->slot[0].bs.jqr[0]));
}

/* ---- pre-Doppler, ADPCA: training from the time-domain cube, S factors, grouped solves */

int subcpi_slot(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    /* per-bin steering (pre-Doppler): item k = d*S + s solves factor s for bin d's
     * steering set; else (ADPCA) the S items of bin 0 (one steering set), broadcast to
     * the other bins after */
    const stap_config *c = &e->cfg;
    const int per_bin = (stap_algorithm_traits(c) & STAP_TRAIT_STEER_PER_BIN) != 0;
    RTK_TRY(la_dev_weights_create_grouped(&s->qr, c->backend, e->opt.qr_variant, &e->opt.tuning.la, e->cfg.qr,
                                          e->M, e->N,
                                          c->segments, per_bin ? e->batch : c->segments, e->B,
                                          g->d_Vs, per_bin ? (long long)e->B * e->N : 0, s->d_W,
                                          &s->d_status->factor, s->stream, err));
    g->dev_bytes += la_dev_weights_device_bytes(s->qr);
    return STAP_OK;
}

int subcpi_enqueue(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    const stap_config *c = &e->cfg;
    cudaStream_t st = s->stream;
    LA_LAUNCH(rtk_subcpi_training_launch(s->d_in, g->d_cells, c->channels, c->pulses,
                                                   c->range_gates, c->doppler_order,
                                                   c->segments, c->training, s->g.load, e->M,
                                                   la_dev_weights_matrices(s->qr), st));
    RTK_TRY(la_dev_weights_enqueue(s->qr, s->ev[STAP_STAGE_QR], s->ev[STAP_STAGE_WEIGHTS], err));
    if (!(stap_algorithm_traits(c) & STAP_TRAIT_STEER_PER_BIN) && c->doppler_bins > 1) {
        /* bins 1..D-1 = bin 0's S x B weights (one block of S*B*N per bin) */
        const size_t slice = (size_t)c->segments * e->B * e->N;
        LA_LAUNCH(rtk_fill_rhs_launch(e->N, c->doppler_bins - 1, c->segments * e->B,
                                                s->d_W, s->d_W + slice, st));
    }
    return STAP_OK;
}

void subcpi_describe(const stap_engine *e, const stap_gpu_engine *g, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d-pulse sub-CPIs: training kernel, %s",
             stap_algorithm_info_of(e->cfg.algorithm)->label, e->cfg.doppler_order,
             la_dev_weights_describe(g->slot[0].qr));
}

/* ---- DPCA: fixed weights, written into d_W when the slot is made ---- */

int fixed_slot(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    /* every (bin, segment) gets the beams' fixed weights, once, on the slot's stream */
    LA_LAUNCH(rtk_fill_rhs_launch(e->N, e->batch, e->B, g->d_Vs, s->d_W, s->stream));
    return STAP_OK;
}

/* no training, no solves */
int fixed_enqueue(stap_engine *e, stap_gpu_engine *g, stap_gpu_slot *s, stap_error *err)
{
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_QR], s->stream));
    LA_LAUNCH(rtk_event_record(s->ev[STAP_STAGE_WEIGHTS], s->stream));
    return STAP_OK;
}

void dpca_describe(const stap_engine *e, const stap_gpu_engine *g, char *buf, size_t len)
{
    snprintf(buf, len, "DPCA %d-pulse, shift %d: fixed weights", e->cfg.doppler_order,
             e->cfg.dpca_shift);
}

const stap_gpu_algo post_doppler = {nullptr, doppler_slot, doppler_enqueue, doppler_describe,
                                    doppler_keep, doppler_detect};
const stap_gpu_algo jdl = {jdl_create, jdl_slot, jdl_enqueue, jdl_describe, jdl_keep, jdl_detect};
/* the adaptive detectors are not defined for these (stap_detector_check) */
const stap_gpu_algo subcpi = {nullptr, subcpi_slot, subcpi_enqueue, subcpi_describe, nullptr, nullptr};
const stap_gpu_algo dpca = {nullptr, fixed_slot, fixed_enqueue, dpca_describe, nullptr, nullptr};

} // namespace

const stap_gpu_algo *stap_gpu_algo_of(const stap_config *c)
{
    switch (c->algorithm) {
    case STAP_ALGORITHM_POST_DOPPLER: return &post_doppler;
    case STAP_ALGORITHM_JDL: return &jdl;
    case STAP_ALGORITHM_PRE_DOPPLER:
    case STAP_ALGORITHM_ADPCA: return &subcpi;
    case STAP_ALGORITHM_DPCA: return &dpca;
    }
    return nullptr;
}
