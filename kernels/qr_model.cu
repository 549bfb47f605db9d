/* qr_model.cu: the dispatch by prediction (issue 11 item 5): the device facts each
 * variant's prediction needs (occupancy, spills, SM count, clock) and the choice of the
 * variant predicted fastest for (m, n, batch, beams). The model itself is rtk_model.h;
 * its parameters were fitted on an H100 (tests/tools/fit_qr_model.c; provenance below
 * and in docs/kernels/design.md). */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "rtk.h"
#include "rtk_model.h"

extern "C" const rtk_qr_model *rtk_qr_model_default(void) { return &rtk_qr_model_h100; }

/* the current device's SM count and maximum SM clock (MHz) */
static cudaError_t device_sms_clock(int *sms, double *mhz)
{
    int dev = 0, khz = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
    *mhz = khz / 1000.0;
    return ce;
}

extern "C" int rtk_qr_facts_get(int v, int kind, int m, int n, rtk_qr_facts *f)
{
    const rtk_qr_variant *info = rtk_qr_variant_get(v);
    if (!info || !f) return (int)cudaErrorInvalidValue;
    rtk_qr_resources res;
    int e = rtk_qr_resources_get(v, info->storage == RTK_REGISTERS ? kind : 0, m, n, &res);
    if (e) return e;
    int sms = 0;
    double mhz = 0;
    const cudaError_t ce = device_sms_clock(&sms, &mhz);
    if (ce != cudaSuccess) return (int)ce;
    *f = rtk_qr_facts{};
    f->storage = (int)info->storage;
    f->tr = info->tr;
    f->tc = info->tc;
    f->rpt = info->rpt;
    f->cpt = info->cpt;
    f->mats = info->mats_per_block;
    f->nt = info->threads / info->mats_per_block;
    f->blocks_per_sm = res.blocks_per_sm;
    f->local_bytes = res.local_bytes;
    f->sms = sms;
    if (info->storage == RTK_CLUSTER) { /* waves of resident clusters, one CTA an SM's share */
        f->sms = res.clusters;
        f->blocks_per_sm = res.clusters > 0 ? 1 : 0;
    }
    f->clock_mhz = mhz;
    f->solver = kind > 0 && info->storage == RTK_REGISTERS && (info->flow & 2048) &&
                info->tc * info->cpt > 16; /* qr_variants.cuh: FLOW & 2048 */
    return 0;
}

extern "C" int rtk_qr_predict(int v, int kind, int m, int n, int batch, int nbeams, double *us)
{
    rtk_qr_facts f;
    int e = rtk_qr_facts_get(v, kind, m, n, &f);
    if (e) return e;
    if (f.blocks_per_sm < 1) return (int)cudaErrorInvalidConfiguration; /* cannot run */
    *us = rtk_model_predict(&rtk_qr_model_h100, &f, m, n, batch, kind ? nbeams : 0);
    return 0;
}

extern "C" int rtk_qr_predict_separate(int v, int kind, int m, int n, int batch, int nbeams,
                                       double *us)
{
    if (n > RTK_WEIGHTS_MAX_N || nbeams < 1) return (int)cudaErrorInvalidValue;
    double tq = 0;
    int e = rtk_qr_predict(v, 0, m, n, batch, 0, &tq);
    if (e) return e;
    int r = 0, sms = 0;
    double mhz = 0;
    e = rtk_weights_occupancy(n, nbeams, &r);
    if (e) return e;
    const cudaError_t ce = device_sms_clock(&sms, &mhz);
    if (ce != cudaSuccess) return (int)ce;
    if (r < 1) return (int)cudaErrorInvalidConfiguration;
    const rtk_weights_model *p = &rtk_weights_model_h100;
    *us = tq + rtk_model_weights(p, n, batch, nbeams, r, sms, mhz) +
          (kind == 2 ? rtk_model_gather(p, m, n, batch) : 0.0);
    return 0;
}

extern "C" int rtk_qr_plan_batch(int kind, int m, int n, int batch, int nbeams, int smem_limit,
                                 int dispatch, int *separate)
{
    int v = rtk_qr_select_batch(kind, m, n, batch, nbeams, smem_limit, dispatch), sep = 0;
    if (kind && v >= 0) {
        const bool fuses = kind == 1 ? rtk_qr_variant_get(v)->fused_weights != 0 : rtk_qr_can_gather(v) != 0;
        const bool fused_only = dispatch == RTK_DISPATCH_FUSED || dispatch == RTK_DISPATCH_TABLE;
        const bool sep_only = dispatch == RTK_DISPATCH_SEPARATE && n <= RTK_WEIGHTS_MAX_N;
        double tf = 0, ts = 0;
        const int q = fuses && !fused_only ? rtk_qr_select_batch(0, m, n, batch, 0, smem_limit, dispatch) : -1;
        if (!fuses)
            sep = 1; /* nothing fuses the shape: QR alone, then the weights */
        else if (q >= 0 && sep_only) { /* RTK_DISPATCH_SEPARATE, for A/B runs */
            v = q;
            sep = 1;
        } else if (q >= 0 && !rtk_qr_predict(v, kind, m, n, batch, nbeams, &tf) &&
                 !rtk_qr_predict_separate(q, kind, m, n, batch, nbeams, &ts) && ts < tf) {
            v = q;
            sep = 1;
        }
        (void)cudaGetLastError(); /* a failed query is not the caller's error */
    }
    if (separate) *separate = sep;
    return v;
}

extern "C" int rtk_qr_select_batch(int kind, int m, int n, int batch, int nbeams, int smem_limit,
                                   int dispatch)
{
    /* RTK_DISPATCH_TABLE: the table's first fit (the pre-model dispatch, for A/B runs) */
    if (dispatch == RTK_DISPATCH_TABLE) return rtk_qr_select(m, n, smem_limit);
    int best = -1;
    double tbest = 0;
    for (int v = 0; v < rtk_qr_variant_count(); v++) {
        if (!rtk_qr_fits(v, m, n, smem_limit)) continue;
        if (kind == 2 && !rtk_qr_can_gather(v)) continue;
        if (kind == 1 && !rtk_qr_variant_get(v)->fused_weights) continue;
        double t = 0;
        if (rtk_qr_predict(v, kind, m, n, batch, nbeams, &t)) continue;
        if (best < 0 || t < tbest) {
            best = v;
            tbest = t;
        }
    }
    (void)cudaGetLastError(); /* a failed occupancy query is not the caller's error */
    if (best < 0 && kind) /* nothing fuses or gathers this shape: the fastest QR alone */
        return rtk_qr_select_batch(0, m, n, batch, 0, smem_limit, dispatch);
    return best >= 0 ? best : rtk_qr_select(m, n, smem_limit);
}
