/* dispatch.cu: the QR dispatch table — data, not code: one row per kernel variant, in
 * order of preference; rtk_qr_select returns the first row whose capacity holds (m, n)
 * (the fallback: the dispatch itself takes the variant the performance model predicts
 * fastest for the batch, kernels/qr_model.cu).
 * The order comes from the measurements in docs/kernels/design.md (per preset size, the fastest
 * variant first); alternatives stay in the table (later rows) so that tests and
 * `stap_la_gpu_force_variant` can exercise and time them. The last two rows (shared memory,
 * global memory) take any m >= n. */
#include "qr_variants.cuh"

#include <cstdlib>
#include <cstring>

namespace {

struct Row {
    rtk_qr_variant info;
    cudaError_t (*res)(int kind, rtk_qr_resources *); /* register rows; 0 otherwise */
    cudaError_t (*resm)(int m, rtk_qr_resources *);   /* cluster rows; 0 otherwise */
    rtk_qr_launcher qr;  /* QR only                   */
    rtk_qr_launcher qrw; /* QR + fused weights, or 0  */
    rtk_qr_launcher qrg; /* QR + fused weights, rows gathered from the Doppler cube, or 0 */
};

/* a register row: capacity, threads and geometry from the instantiation (qr_variants.cuh) */
#define REG(name)                                                                          \
    {{#name, RTK_REGISTERS, name##_geom[0] * name##_geom[2], name##_geom[1] * name##_geom[3], \
      name##_geom[0] * name##_geom[1] * name##_geom[4], name##_geom[4], 1, name##_geom[0],    \
      name##_geom[1], name##_geom[2], name##_geom[3], name##_geom[5], name##_geom[7]},         \
     name##_res, nullptr, name##_qr, name##_qrw, name##_qrg}
/* a cluster row: a tile of TR*RPT x TC*CPT a CTA, up to RTK_CLUSTER_PMAX CTAs a matrix */
#define CL(name)                                                                           \
    {{#name, RTK_CLUSTER, name##_geom[0] * name##_geom[2] * RTK_CLUSTER_PMAX,               \
      name##_geom[1] * name##_geom[3], name##_geom[0] * name##_geom[1], 1, 0, name##_geom[0], \
      name##_geom[1], name##_geom[2], name##_geom[3], name##_geom[5], name##_geom[7]},         \
     nullptr, name##_res, name##_qr, nullptr, nullptr}

const Row table[] = {
    REG(reg8x4_4x2_m4),
    REG(reg8x4_4x3_m4),  /* PERFECT small 32x12 (2026-11-23: added)      */
    REG(flw16x8_4x3),    /* PERFECT medium 64x18, large 64x24            */
    REG(flw16x8_5x2),    /* 80x16x384 */
    REG(flw16x8_6x2),
    REG(flw16x4_8x3),    /* 120x9 x3840 */
    REG(flw16x8_8x4),
    /* tall and narrow (JDL at K = 240, docs/kernels/journal.md "Tall and narrow") */
    REG(flw16x4_15x3),
    REG(flw16x8_15x2),
    REG(flw16x22_15x3),
    REG(flw16x24_12x4),
    /* alternatives (first fit reaches them only where no row above fits) */
    REG(flw16x4_5x4),
    REG(flw16x4_6x4),
    REG(reg8x4_10x4_m2),
    REG(reg8x4_12x4_m2),
    REG(flw16x22_20x3), /* 306x66: re-reads v from shared memory, deferred updates */
    REG(flw32x8_4x4),   /* a whole warp a column slot (docs/kernels/journal.md "Whole-warp column slots") */
    /* taller than one block's registers: the rows over a cluster's CTAs (docs/kernels/journal.md "Clusters") */
    CL(clp16x22_8x3),
    CL(clp16x24_8x4),
    CL(clp16x32_8x4),
    /* any size */
    {{"smem512", RTK_SHARED, 0, 0, RTK_MEM_THREADS, 1, 0, 0, 0, 0, 0, 0, 0}, nullptr, nullptr, rtk_smem_qr, nullptr, nullptr},
    {{"global512", RTK_GLOBAL, 0, 0, RTK_MEM_THREADS, 1, 0, 0, 0, 0, 0, 0, 0}, nullptr, nullptr, rtk_global_qr, nullptr, nullptr},
};
constexpr int NROWS = (int)(sizeof table / sizeof table[0]);

/* bytes of shared memory the RTK_SHARED kernel needs beyond the matrix (static tau) */
constexpr size_t SMEM_RESERVE = 1024;

rtk::QrArgs make_args(int m, int n, int batch, void *A, int lda, long long stride, int subst)
{
    rtk::QrArgs a{};
    a.A = (float2 *)A;
    a.stride = stride;
    a.lda = lda;
    a.m = m;
    a.n = n;
    a.batch = batch;
    a.fused_subst = subst ? 1 : 0; /* the fused weights as before the blocked solve (A/B runs) */
    return a;
}

} // namespace

extern "C" int rtk_qr_guard_launch(int m, int n, int batch, void *A, int lda, long long stride, const int *fail_list,
                                   rtk_factor_flags *flags, int smem_limit, void *stream)
{
    if (batch <= 0) return cudaSuccess;
    rtk::QrArgs a = make_args(m, n, batch, A, lda, stride, 0);
    a.flags = flags;
    a.list = fail_list;
    const bool fits = (size_t)m * n * sizeof(float2) + SMEM_RESERVE <= (size_t)smem_limit;
    return (int)(fits ? rtk_smem_qr(a, (cudaStream_t)stream) : rtk_global_qr(a, (cudaStream_t)stream));
}

extern "C" int rtk_qr_variant_count(void) { return NROWS; }

extern "C" const rtk_qr_variant *rtk_qr_variant_get(int v)
{
    return v >= 0 && v < NROWS ? &table[v].info : nullptr;
}

extern "C" int rtk_qr_fits(int v, int m, int n, int smem_limit)
{
    if (v < 0 || v >= NROWS || n < 1 || m < n) return 0;
    const rtk_qr_variant *r = &table[v].info;
    switch (r->storage) {
    case RTK_REGISTERS:
    case RTK_CLUSTER: return m <= r->max_m && n <= r->max_n;
    case RTK_SHARED: return (size_t)m * n * sizeof(float2) + SMEM_RESERVE <= (size_t)smem_limit;
    default: return 1;
    }
}

extern "C" int rtk_qr_resources_get(int v, int kind, int m, int n, rtk_qr_resources *out)
{
    if (v < 0 || v >= NROWS || !out || kind < 0 || kind > 2) return (int)cudaErrorInvalidValue;
    *out = rtk_qr_resources{};
    const Row &r = table[v];
    switch (r.info.storage) {
    case RTK_REGISTERS: return (int)r.res(kind, out);
    case RTK_CLUSTER: return kind == 0 ? (int)r.resm(m, out) : (int)cudaErrorInvalidValue;
    case RTK_SHARED: return kind == 0 ? (int)rtk_smem_res(m, n, out) : (int)cudaErrorInvalidValue;
    default: return kind == 0 ? (int)rtk_global_res(out) : (int)cudaErrorInvalidValue;
    }
}

extern "C" int rtk_qr_select(int m, int n, int smem_limit)
{
    for (int v = 0; v < NROWS; v++)
        if (rtk_qr_fits(v, m, n, smem_limit)) return v;
    return -1;
}

extern "C" int rtk_qr_launch(int v, int m, int n, int batch, void *A, int lda, long long stride,
                             void *stream)
{
    if (v < 0 || v >= NROWS || batch < 1) return (int)cudaErrorInvalidValue;
    return (int)table[v].qr(make_args(m, n, batch, A, lda, stride, 0), (cudaStream_t)stream);
}

extern "C" int rtk_qr_weights_launch(int v, int m, int n, int batch, void *A, int lda,
                                     long long stride, int nbeams, const void *V,
                                     void *W, rtk_factor_flags *flags, unsigned long long *phase_ns,
                                     int subst, void *stream)
{
    if (v < 0 || v >= NROWS || !table[v].qrw || batch < 1 || nbeams < 1)
        return (int)cudaErrorInvalidValue;
    rtk::QrArgs a = make_args(m, n, batch, A, lda, stride, subst);
    a.nbeams = nbeams;
    a.V = (const float2 *)V;
    a.W = (float2 *)W;
    a.flags = flags;
    a.phase = phase_ns;
    return (int)table[v].qrw(a, (cudaStream_t)stream);
}

extern "C" int rtk_qr_can_gather(int v)
{
    return v >= 0 && v < NROWS && table[v].qrg != nullptr;
}

extern "C" int rtk_qr_weights_gather_launch(int v, const rtk_gather *g, int m, int n, int batch,
                                            int nbeams, const void *V, void *W, rtk_factor_flags *flags,
                                            unsigned long long *phase_ns, int subst, void *stream)
{
    return rtk_qr_weights_gather_keep_launch(v, g, m, n, batch, nbeams, V, W, flags, phase_ns, subst,
                                             nullptr, stream);
}

extern "C" int rtk_qr_weights_gather_keep_launch(int v, const rtk_gather *g, int m, int n, int batch,
                                                 int nbeams, const void *V, void *W,
                                                 rtk_factor_flags *flags, unsigned long long *phase_ns,
                                                 int subst, void *R, void *stream)
{
    if (!rtk_qr_can_gather(v) || !g || !g->X || !g->cells || batch < 1 || nbeams < 1)
        return (int)cudaErrorInvalidValue;
    rtk::QrArgs a = make_args(m, n, batch, nullptr, m, 0, subst);
    a.nbeams = nbeams;
    a.V = (const float2 *)V;
    a.W = (float2 *)W;
    a.flags = flags;
    a.phase = phase_ns;
    a.gX = (const float2 *)g->X;
    a.gC = g->channels;
    a.gQ = g->order;
    a.gD = g->bins;
    a.gW = g->wrap > 0 ? g->wrap : g->bins;
    a.gR = g->range;
    a.gS = g->segments;
    a.gcells = g->cells;
    a.gK = g->training;
    a.gload = g->load;
    a.R = (float2 *)R;
    a.rstride = (long long)n * n;
    return (int)table[v].qrg(a, (cudaStream_t)stream);
}
